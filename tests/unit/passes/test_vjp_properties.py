"""Property tests (hypothesis): VJP rules and whole random programs against float64
finite differences, over shapes and structures nobody wrote down by hand."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp

from pullback.dialects import pd
from pullback.passes.autodiff import differentiate
from pullback.runtime.interpreter import run_module
from pullback.testing import check_vjp, fd_grad

SETTINGS = settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

BINARY = [pd.ElementwiseAddOp, pd.ElementwiseSubOp, pd.ElementwiseMulOp, pd.ElementwiseDivOp]


@st.composite
def broadcast_pair(draw):
    """Shapes (x, y) that broadcast numpy-style: y is a suffix of x with some 1s."""
    x = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    k = draw(st.integers(1, len(x)))
    y = [1 if draw(st.booleans()) else d for d in x[len(x) - k :]]
    if draw(st.booleans()):
        x, y = y, x  # broadcasting works either way round
    return x, y


@SETTINGS
@given(op=st.sampled_from(BINARY), shapes=broadcast_pair(), seed=st.integers(0, 2**16))
def test_binary_vjp_under_random_broadcasting(op, shapes, seed):
    rng = np.random.default_rng(seed)
    xs, ys = shapes
    x = rng.standard_normal(xs)
    y = rng.standard_normal(ys)
    if op is pd.ElementwiseDivOp:
        y = np.sign(y) * (np.abs(y) + 0.5)  # keep away from the pole
    check_vjp(op, [x, y], rtol=1e-4, atol=1e-6)


@st.composite
def reduction_case(draw):
    shape = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    axes = draw(st.lists(st.integers(-len(shape), len(shape) - 1), max_size=len(shape), unique_by=lambda a: a % len(shape)))
    return shape, axes, draw(st.booleans())


@SETTINGS
@given(
    op=st.sampled_from([pd.ReduceSumOp, pd.ReduceMeanOp]),
    case=reduction_case(),
    dynamic=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_reduction_vjp_under_random_axes(op, case, dynamic, seed):
    shape, axes, keepdim = case
    x = np.random.default_rng(seed).standard_normal(shape)
    check_vjp(op, [x], props={"axis": axes, "keepdim": keepdim}, dynamic_batch=dynamic, order=2)


UNARY = [pd.TanhOp, pd.SigmoidOp, pd.SquareOp]


@SETTINGS
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["unary", "mul", "add"]), st.integers(0, 10), st.integers(0, 2)),
        min_size=1,
        max_size=8,
    ),
    seed=st.integers(0, 2**16),
)
def test_random_programs_match_finite_differences(steps, seed):
    """Random DAGs over two inputs (values reused: fan-out and accumulation)."""
    rng = np.random.default_rng(seed)
    ops = [pd.DataOp.make("a", [3], "float64"), pd.DataOp.make("b", [3], "float64")]
    values = [ops[0].out, ops[1].out]
    for kind, pick, which in steps:
        u = values[pick % len(values)]
        v = values[(pick + 1) % len(values)]
        if kind == "unary":
            op = UNARY[which % len(UNARY)].make(u)
        elif kind == "mul":
            op = pd.ElementwiseMulOp.make(u, v)
        else:
            op = pd.ElementwiseAddOp.make(u, v)
        ops.append(op)
        values.append(op.results[0])
    loss = pd.ReduceSumOp.make(values[-1])
    ops.append(loss)
    module = ModuleOp(ops)
    bw = pd.BackwardOp.make([loss.out], [ops[0].out, ops[1].out])
    module.body.block.add_op(bw)
    bw = differentiate(bw)
    module.verify()

    feeds = {"a": rng.standard_normal(3) * 0.7, "b": rng.standard_normal(3) * 0.7}
    env = run_module(module, feeds, {})
    grads = dict(zip(bw.wrt, bw.grads))
    for name, data in (("a", ops[0]), ("b", ops[1])):
        numeric = fd_grad(lambda x, name=name: float(run_module(module, {**feeds, name: x}, {})[loss.out]), feeds[name])
        analytic = env[grads[data.out]] if data.out in grads else np.zeros(3)
        np.testing.assert_allclose(analytic, numeric, rtol=1e-5, atol=1e-6)
