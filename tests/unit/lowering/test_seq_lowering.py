"""Native lowering of issue 13's ops: compiled results agree with the numpy
interpreter (no fallback), forward and backward, float32 and float64, with one
compiled program serving several batch sizes.  The math ops, min/prod reductions
and scans, ranges, eye, constants, triangles, and every gather and scatter."""

from __future__ import annotations

import numpy as np
import pytest
from pullback.benchmarks.programs import ProgramBuilder
from pullback.dialects import pd
from pullback.dialects.pd.base import f64_attr, is_float
from pullback.passes.autodiff import differentiate
from pullback.runtime.native.backend import CompiledBackend
from pullback.runtime.interpreter import run_module
from pullback.testing import input_range
from xdsl.dialects.builtin import ArrayAttr
from xdsl.ir import SSAValue

TOL = {"float32": {"rtol": 2e-5, "atol": 2e-6}, "float64": {"rtol": 1e-10, "atol": 1e-12}}
BATCHES = (2, 5)
E = pd.STRIDED_END_NEG


def agree(build, feeds, dtype: str) -> None:  # type: ignore[no-untyped-def]
    """Compile once without fallback, run every batch size, compare everything
    (outputs and the gradients of sum(out**2) w.r.t. every float input)."""
    b = ProgramBuilder()
    inputs, outs = build(b, dtype)
    targets = [b.add(pd.SquareOp, o) for o in outs if is_float(pd.elem_of(o.type))]
    wrt = [v for v in inputs if is_float(pd.elem_of(v.type))]
    fetch: list[SSAValue] = list(outs)
    if targets and wrt:
        bw = pd.BackwardOp.make(targets, wrt)
        b.block.add_op(bw)
        fetch += list(differentiate(bw).grads)
    backend = CompiledBackend(fallback=False)
    for n in BATCHES:
        feed = feeds(np.random.default_rng(n), n, dtype)
        env = run_module(b.module, feed, {})
        got = backend.run(b.module, feed, {}, fetch)
        for v, g in zip(fetch, got):
            want = env[v]
            assert g.shape == want.shape and g.dtype == want.dtype, (v.owner, g.shape, want.shape)
            np.testing.assert_allclose(g, want, **TOL[dtype], err_msg=f"{v.owner.name} (batch {n})")
    assert backend.compiles == 1


U_RANGE = input_range(pd.AsinOp, pd.AcosOp, pd.Log1pOp)
"""Where the inputs of asin, acos and log1p are drawn from: (-0.9, 0.9)."""


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_math_reductions_and_scans(dtype: str) -> None:
    def build(b: ProgramBuilder, dt: str) -> tuple[list[SSAValue], list[SSAValue]]:
        x = b.data("x", [-1, 4], dt)
        u = b.data("u", [-1, 4], dt)  # inside the domains of asin, acos and log1p
        ops = [pd.SinOp, pd.CosOp, pd.TanOp, pd.AtanOp, pd.SinhOp, pd.CoshOp, pd.Expm1Op,
               pd.FloorOp, pd.CeilOp, pd.RoundOp]
        outs = [b.add(c, x) for c in ops] + [b.add(c, u) for c in (pd.AsinOp, pd.AcosOp, pd.Log1pOp)]
        outs += [b.add(pd.ReduceMinOp, x, axis=[1]), b.add(pd.ReduceMinOp, x, axis=[0], keepdim=True),
                 b.add(pd.ReduceProdOp, x, axis=[1]), b.add(pd.CumsumOp, x, axis=1),
                 b.add(pd.CumsumOp, x, axis=0, reverse=True, exclusive=True),
                 b.add(pd.CumprodOp, x, axis=1), b.add(pd.CumprodOp, x, axis=1, exclusive=True, reverse=True)]
        return [x, u], outs

    def feeds(rng: np.random.Generator, n: int, dt: str) -> dict[str, np.ndarray]:
        x = rng.uniform(0.3, 1.4, (n, 4)) * np.where(rng.standard_normal((n, 4)) > 0, 1, -1)
        x[0, :2] = [2.5, -0.5]  # halves round away from zero
        return {"x": x.astype(dt), "u": rng.uniform(*U_RANGE, (n, 4)).astype(dt)}

    agree(build, feeds, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_creation_and_triangles(dtype: str) -> None:
    def build(b: ProgramBuilder, dt: str) -> tuple[list[SSAValue], list[SSAValue]]:
        x = b.data("x", [-1, 3, 4], dt)
        r = b.add(pd.ArangeOp, start=0.5, end=4.5, step=1.0, dtype=dt)
        e = b.add(pd.EyeOp, num_rows=3, num_columns=4, dtype=dt)
        c = b.add(pd.AssignValueOp, shape=[3, 4], dtype=dt,
                  values=ArrayAttr([f64_attr(v) for v in np.linspace(-1, 1, 12)]))
        lin = b.add(pd.LinspaceOp, start=-1.0, stop=2.0, num=4, dtype=dt)
        ids = b.add(pd.ArangeOp, start=5.0, end=-1.0, step=-2.0, dtype="int64")
        outs = [b.add(pd.TrilTriuOp, x, diagonal=1), b.add(pd.TrilTriuOp, x, diagonal=-1, lower=False),
                b.add(pd.ElementwiseMulOp, x, b.add(pd.ElementwiseAddOp, e, c)),
                b.add(pd.ElementwiseAddOp, x, b.add(pd.ElementwiseMulOp, r, lin)), ids]
        return [x], outs

    agree(build, lambda rng, n, dt: {"x": rng.standard_normal((n, 3, 4)).astype(dt)}, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gathers_and_scatters(dtype: str) -> None:
    def build(b: ProgramBuilder, dt: str) -> tuple[list[SSAValue], list[SSAValue]]:
        x = b.data("x", [-1, 4], dt)
        w = b.data("w", [3, 4], dt)
        i = b.data("i", [3], "int64")
        j = b.data("j", [-1, 2], "int64")
        nd = b.data("nd", [2, 2], "int64")
        u = b.data("u", [2], dt)
        v = b.data("v", [-1, 2], dt)
        s = b.data("s", [3, 2], dt)
        outs = [
            b.add(pd.GatherOp, x, i, axis=1), b.add(pd.GatherOp, w, i, axis=0),
            b.add(pd.GatherNdOp, w, nd), b.add(pd.TakeAlongAxisOp, x, j, axis=1),
            b.add(pd.IndexAddOp, w, i, b.add(pd.ScaleOp, w, scale=2.0), axis=0),
            b.add(pd.ScatterNdAddOp, w, nd, u),
            b.add(pd.ScatterOp, w, b.add(pd.SliceOp, i, axes=[0], starts=[0], ends=[2]),
                  b.add(pd.SliceOp, w, axes=[0], starts=[1], ends=[3]), overwrite=False),
            b.add(pd.PutAlongAxisOp, x, j, v, axis=1, reduce="add"),
            b.add(pd.PutAlongAxisOp, x, j, v, axis=1),
            b.add(pd.StridedSliceOp, x, axes=[1], starts=[-1], ends=[E], strides=[-2]),
            b.add(pd.StridedSliceOp, w, axes=[0, 1], starts=[0, 1], ends=[3, 4], strides=[2, 2]),
            b.add(pd.SetValueOp, w, s, axes=[1], starts=[3], ends=[E], strides=[-2]),
        ]
        return [x, w, i, j, nd, u, v, s], outs

    def feeds(rng: np.random.Generator, n: int, dt: str) -> dict[str, np.ndarray]:
        return {
            "x": rng.standard_normal((n, 4)).astype(dt), "w": rng.standard_normal((3, 4)).astype(dt),
            "i": np.array([2, 0, 2]), "j": np.stack([rng.permutation(4)[:2] for _ in range(n)]),
            "nd": np.array([[0, 1], [2, 3]]), "u": rng.standard_normal(2).astype(dt),
            "v": rng.standard_normal((n, 2)).astype(dt), "s": rng.standard_normal((3, 2)).astype(dt),
        }

    agree(build, feeds, dtype)


