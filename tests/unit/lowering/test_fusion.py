"""Multi-output loop fusion (`lowering/fusion.py`): programs with fan-out lower to
fewer loops and buffers, and compute what the interpreter computes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from xdsl.dialects import arith, memref
from xdsl.dialects.linalg import ops as linalg

import pullback as paddle
from pullback.benchmarks.programs import ProgramBuilder, fanout_chain
from pullback.dialects import pd
from pullback.lowering import fusion
from pullback.lowering.lowerer import fusion_plan
from pullback.lowering.convert_pd_to_linalg import build_entry
from pullback.runtime.native.backend import CompiledBackend
from pullback.runtime.interpreter import run_module

TOL = {"float32": dict(rtol=2e-4, atol=2e-5), "float64": dict(rtol=1e-10, atol=1e-12)}


def loops_and_buffers(module, monkeypatch, enabled: bool, fold: bool = True) -> tuple[int, int, int]:  # type: ignore[no-untyped-def]
    """`(linalg.generic count, memref.alloc count, loops over the data)` of the
    lowered entry (a loop over the data reads or writes a 1-d buffer), with
    multi-output fusion on or off."""
    monkeypatch.setattr(fusion, "ENABLED", enabled)
    fn, _ = build_entry(module, fold_reductions=fold)
    ops = list(fn.walk())
    generics = [o for o in ops if isinstance(o, linalg.GenericOp)]
    big = [g for g in generics if any(len(v.type.get_shape()) == 1 for v in g.operands)]  # type: ignore[attr-defined]
    return len(generics), sum(isinstance(o, memref.AllocOp) for o in ops), len(big)


@pytest.mark.parametrize("ops,every", [(20, 4), (40, 2)])
def test_fanout_chain_is_one_loop(monkeypatch, ops: int, every: int) -> None:
    built = fanout_chain(256, ops, every)
    before = loops_and_buffers(built.module, monkeypatch, False)
    after = loops_and_buffers(built.module, monkeypatch, True)
    # Unfused: the loss loop, one loop per materialized gradient contribution, and
    # one for their sum, each recomputing the forward values it reads.
    assert before[2] >= 3
    assert after[0] < before[0] and after[1] < before[1]
    # Fused: ONE loop over the data computes the forward values once, sums the
    # loss and accumulates x's gradient contributions in registers (no buffer but
    # the outputs and the scalar seed of the backward).
    assert after[2] == 1
    assert after[1] <= 1


def test_without_folded_reductions_the_loss_keeps_its_loop(monkeypatch) -> None:
    """The GPU backend lowers with `fold_reductions=False` (its reductions run
    sequentially): the loss is its own loop, the gradient one loop, and the forward
    values both read one loop of their own: every chain value has two readers, and
    a shared value is not recomputed inside another shared one (`FusionPlan.plan_inlining`),
    so alternate links are stored, by one multi-output loop."""
    built = fanout_chain(256, 20, 4)
    assert loops_and_buffers(built.module, monkeypatch, True, fold=False)[2] == 3


def test_shared_values_are_not_recomputed_inside_each_other(monkeypatch, static_programs) -> None:
    """A residual network's gradient is a chain of sums, each read by the next sum
    and by its layer: recomputing each inside the next made the code (and the work
    per element) grow with the square of the depth.  Now each op is copied into at
    most one shared expression: the code grows linearly."""

    def adds(depth: int) -> int:
        main = paddle.static.Program()
        with paddle.static.program_guard(main, paddle.static.Program()), paddle.utils.unique_name.guard():
            x = paddle.static.data("x", [None, 8], "float32")
            h = x
            for _ in range(depth):
                h = paddle.add(h, paddle.nn.functional.relu(paddle.static.nn.fc(h, size=8)))
            paddle.static.append_backward(paddle.mean(h))
        monkeypatch.setattr(fusion, "ENABLED", True)
        fn, _ = build_entry(main.module)
        return sum(isinstance(o, arith.AddfOp) for o in fn.walk())

    small, large = adds(5), adds(30)
    assert large <= 7 * small, (small, large)


def run_both(b: ProgramBuilder, fetch, feeds, scope=None):  # type: ignore[no-untyped-def]
    """(interpreter, compiled) values of `fetch`, and the scope the compiled run
    updated in place."""
    scope = scope or {}
    env = run_module(b.module, feeds, {k: v.copy() for k, v in scope.items()})
    s_cmp = {k: v.copy() for k, v in scope.items()}
    got = CompiledBackend().run(b.module, feeds, s_cmp, fetch)
    return [env[v] for v in fetch], got, s_cmp


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fanout_chain_agrees_with_interpreter(dtype: str) -> None:
    built = fanout_chain(1000, 20, 3, dtype)  # (1000: not a multiple of the vector width)
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal(1000).astype(dtype), "y": rng.uniform(0.5, 1, 1000).astype(dtype)}
    env = run_module(built.module, feeds, {})
    got = CompiledBackend().run(built.module, feeds, {}, built.fetch)
    for v, g in zip(built.fetch, got):
        np.testing.assert_allclose(g, env[v], **TOL[dtype])


def test_residual_gradient_known_value() -> None:
    """`loss = sum(tanh(tanh(x) + x) + x)`: x reaches the loss three ways, and
    dx = (1 - t2^2) * (1 - t1^2 + 1) + 1 with t1 = tanh(x), t2 = tanh(t1 + x)."""
    b = ProgramBuilder()
    x = b.data("x", [-1, 3], "float64")
    h = b.add(pd.ElementwiseAddOp, b.add(pd.TanhOp, x), x)
    h = b.add(pd.ElementwiseAddOp, b.add(pd.TanhOp, h), x)
    loss = b.add(pd.ReduceSumOp, h)
    (gx,) = b.backward(loss, [x])
    xv = np.random.default_rng(3).standard_normal((4, 3))
    t1 = np.tanh(xv)
    t2 = np.tanh(t1 + xv)
    want = (1 - t2**2) * (1 - t1**2 + 1) + 1
    (got,) = CompiledBackend().run(b.module, {"x": xv}, {}, [gx])
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("loss", ["mean", "reduce_mean_keepdim", "reduce_sum_axes"])
def test_folded_losses_agree(loss: str) -> None:
    """Means and keepdim sums folded into the gradient's loop; a partial sum
    (over one axis) is not folded but must still agree."""
    b = ProgramBuilder()
    x = b.data("x", [-1, 5], "float64")
    h = b.add(pd.ElementwiseAddOp, b.add(pd.TanhOp, b.add(pd.SigmoidOp, x)), x)
    h = b.add(pd.ElementwiseMulOp, b.add(pd.TanhOp, h), x)
    if loss == "mean":
        out = b.add(pd.MeanOp, h)
    elif loss == "reduce_mean_keepdim":
        out = b.add(pd.ReduceMeanOp, h, axis=[0, 1], keepdim=True)
    else:
        out = b.add(pd.ReduceSumOp, b.add(pd.ReduceSumOp, h, axis=[1]))
    (gx,) = b.backward(out, [x])
    rng = np.random.default_rng(5)
    for batch in (1, 7):
        want, got, _ = run_both(b, [out, gx], {"x": rng.standard_normal((batch, 5))})
        for w, g in zip(want, got):
            assert g.shape == np.shape(w)
            np.testing.assert_allclose(g, w, **TOL["float64"])


@pytest.mark.parametrize("shape", [[], [1]])
def test_a_reduction_is_read_only_after_its_loop(shape: list[int]) -> None:
    """Over a one-element domain a reduction's result has the domain's shape, yet
    a reader of it must not join its loop (the sum is complete only after it);
    found by the differential fuzzer (seed 0)."""
    b = ProgramBuilder()
    x = b.data("x", [2], "float64")
    s = b.data("s", shape, "float64")
    sx = b.add(pd.ReduceSumOp, b.add(pd.ElementwiseMulOp, x, x))
    ss = b.add(pd.ReduceSumOp, b.add(pd.ElementwiseMulOp, s, s), keepdim=True)
    total = b.add(pd.SumOp, b.add(pd.ReshapeOp, sx, shape=shape), ss)
    gx, gs = b.backward(total, [x, s])
    feeds = {"x": np.array([0.3, -0.7]), "s": np.full(shape, 0.9)}
    want, got, _ = run_both(b, [total, gx, gs], feeds)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, **TOL["float64"])


STEP = st.tuples(
    st.sampled_from(["tanh", "sigmoid", "square", "scale", "add", "mul", "sub", "bias", "matmul", "rowsum"]),
    st.integers(0, 20),
    st.integers(0, 20),
)


# Each example compiles a program (about a second): few examples, and no shrinking
# (it would compile hundreds); a failure prints the unshrunk example.
@settings(max_examples=8, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(steps=st.lists(STEP, min_size=2, max_size=10), budget=st.sampled_from([0, 4, 256]),
       fetch_mid=st.booleans(), seed=st.integers(0, 2**16))
def test_random_fanout_programs_agree(monkeypatch, steps, budget: int, fetch_mid: bool, seed: int) -> None:
    """Random DAGs with fan-out (values reused), broadcasts, matmuls and row sums
    between pointwise ops, their gradients and an SGD update; a small recompute
    budget materializes many values, so many multi-output groups form."""
    monkeypatch.setattr(fusion_plan, "RECOMPUTE_BUDGET", budget)
    b = ProgramBuilder()
    a = b.data("a", [-1, 4], "float64")
    v = b.data("v", [4], "float64")
    w = b.param("w", [4, 4], "float64")
    values = [a, b.add(pd.TanhOp, b.add(pd.MatmulOp, a, w))]  # w always reaches the loss
    for kind, i, j in steps:
        u, t = values[i % len(values)], values[j % len(values)]
        if kind in ("tanh", "sigmoid", "square"):
            cls = {"tanh": pd.TanhOp, "sigmoid": pd.SigmoidOp, "square": pd.SquareOp}[kind]
            r = b.add(cls, u)
        elif kind == "scale":
            r = b.add(pd.ScaleOp, u, scale=0.5, bias=0.25)
        elif kind in ("add", "mul", "sub"):
            cls = {"add": pd.ElementwiseAddOp, "mul": pd.ElementwiseMulOp, "sub": pd.ElementwiseSubOp}[kind]
            r = b.add(cls, u, t)
        elif kind == "bias":
            r = b.add(pd.ElementwiseMulOp, u, v)  # a broadcast read
        elif kind == "matmul":
            r = b.add(pd.TanhOp, b.add(pd.MatmulOp, u, w))
        else:
            r = b.add(pd.ElementwiseAddOp, u, b.add(pd.ReduceSumOp, u, axis=[1], keepdim=True))
        values.append(r)
    loss = b.add(pd.MeanOp, b.add(pd.ElementwiseAddOp, values[-1], values[1]))
    ga, gw = b.backward(loss, [a, w])
    new_w = b.add(pd.SgdOp, w, gw, b.param("lr", [1], "float64"), name="w")
    fetch = [loss, ga, gw] + ([values[len(values) // 2]] if fetch_mid else [])
    rng = np.random.default_rng(seed)
    feeds = {"a": rng.standard_normal((3, 4)) * 0.5, "v": rng.standard_normal(4)}
    scope = {"w": rng.standard_normal((4, 4)) * 0.5, "lr": np.array([0.1])}
    want, got, s_cmp = run_both(b, [*fetch, new_w], feeds, scope)
    for x, y in zip(want, got):
        np.testing.assert_allclose(y, x, **TOL["float64"])
    np.testing.assert_allclose(s_cmp["w"], want[-1], **TOL["float64"])  # updated in place
