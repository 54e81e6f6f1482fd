"""Lowering of the reduction family (`dialects/pd/reduction.py`): `mean`,
`reduce_sum`/`reduce_mean`/`reduce_max`, `sum` (add_n), `softmax`, `log_softmax`.

Each rule reads its operand through `Lowerer.generic`, so elementwise producers of a
reduction or a softmax are fused into it.  Iteration domains follow the input's
memory order (reduced dimensions stay where they are), which keeps the innermost
loop contiguous and vectorizable, e.g. a bias gradient (sum over the batch) runs
`out[j] += g[i, j]` with `j` innermost.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import AnyFloat
from xdsl.ir import SSAValue

from pullback.dialects import pd
from pullback.dialects.pd.base import shape_of
from pullback.lowering.core import (
    REASSOC,
    DimMap,
    Lowerer,
    Scalar,
    Size,
    elem_of_buffer,
    fuse_first_operand,
    identity_map,
    lowers,
    numpy_maps,
    pointwise,
    result_sizes,
    sizes_of_first,
)

_INIT = {"sum": 0.0, "max": -math.inf}


def reduce_into(
    low: Lowerer,
    x: SSAValue,
    out: SSAValue,
    axes: Sequence[int],
    keepdim: bool,
    kind: str,
) -> None:
    """`out = reduce(x)` over `axes` (`kind` is sum or max); x's producers fuse in."""
    rank = len(shape_of(x.type))
    out_map: DimMap = tuple(
        (None if d in axes else d) for d in range(rank) if keepdim or d not in axes
    )
    elem = elem_of_buffer(out)
    init = _INIT[kind] if isinstance(elem, AnyFloat) else (0 if kind == "sum" else -(2**62))
    low.fill(out, init)

    def body(s: Scalar, args: list[SSAValue], outs: list[SSAValue]) -> list[SSAValue]:
        if kind == "sum":
            if isinstance(elem, AnyFloat):
                return [s.emit(arith.AddfOp(outs[0], args[0], REASSOC))]
            return [s.add(outs[0], args[0])]
        return [s.max(outs[0], args[0])]

    low.generic(low.sizes_of(x), [(x, identity_map(rank), True)], [(out, out_map)], body, reductions=axes)


def scale_by_count(low: Lowerer, out: SSAValue, sizes: Sequence[Size], reduced: Sequence[Size]) -> None:
    """`out /= prod(reduced)` in place (turns a sum into a mean)."""
    n = low.count_as_float(reduced, elem_of_buffer(out))
    low.generic(
        sizes, [], [(out, identity_map(len(sizes)))],
        lambda s, args, outs: [s.div(outs[0], args[0])],
        scalars=[n],
    )


ReduceLike = pd.ReduceOp | pd.MeanOp


def _reduced_axes(op: ReduceLike) -> tuple[list[int], bool]:
    """`(reduced axes, keepdim)`: `mean` reduces everything to a scalar."""
    rank = len(shape_of(op.operands[0].type))
    if isinstance(op, pd.MeanOp):
        return list(range(rank)), False
    axes = op.prop("axis")
    reduced = sorted({a % max(rank, 1) for a in axes}) if axes else list(range(rank))
    return reduced, bool(op.prop("keepdim"))


@lowers(pd.ReduceSumOp, pd.ReduceMeanOp, pd.ReduceMaxOp, pd.MeanOp, fusible=fuse_first_operand)
def _reduce(low: Lowerer, op: ReduceLike) -> None:
    x, r = op.operands[0], op.results[0]
    axes, keepdim = _reduced_axes(op)
    out = low.out(r)
    kind = "max" if isinstance(op, pd.ReduceMaxOp) else "sum"
    reduce_into(low, x, out, axes, keepdim, kind)
    if isinstance(op, (pd.ReduceMeanOp, pd.MeanOp)):
        xs = low.sizes_of(x)
        scale_by_count(low, out, low.sizes[r], [xs[a] for a in axes])


@lowers(pd.SquaredL2NormOp, fusible=fuse_first_operand)
def _squared_l2_norm(low: Lowerer, op: pd.SquaredL2NormOp) -> None:
    # `sum(x * x)` into a 0-d buffer; x's producers fuse into the reduction.
    x = op.operands[0]
    rank = len(shape_of(x.type))
    out = low.out(op.results[0])
    low.fill(out, 0.0)
    low.generic(
        low.sizes_of(x), [(x, identity_map(rank), True)], [(out, ())],
        lambda s, a, o: [s.emit(arith.AddfOp(o[0], s.mul(a[0], a[0]), REASSOC))],
        reductions=list(range(rank)),
    )


@result_sizes(pd.ReduceSumOp, pd.ReduceMeanOp, pd.ReduceMaxOp, pd.MeanOp)
def _reduce_sizes(low: Lowerer, op: ReduceLike, r: SSAValue, k: int) -> Size | None:
    x = op.operands[0]
    axes, keepdim = _reduced_axes(op)
    kept = [d for d in range(len(shape_of(x.type))) if keepdim or d not in axes]
    return low.sizes_of(x)[kept[k]]


@pointwise(pd.SumOp, maps=numpy_maps)
def _add_n(s: Scalar, op: pd.SumOp, args: list[SSAValue]) -> list[SSAValue]:
    acc = args[0]
    for a in args[1:]:
        acc = s.add(acc, a)
    return [acc]


# ------------------------------------------------------------------- softmax


def row_stats(low: Lowerer, x: SSAValue, axis: int) -> tuple[SSAValue, SSAValue, DimMap]:
    """Per-row max `m` and `sum(exp(x - m))` along `axis`, as keep-dim temporaries."""
    rank = len(shape_of(x.type))
    sizes = low.sizes_of(x)
    kept = [1 if d == axis else s for d, s in enumerate(sizes)]
    elem = elem_of_buffer(x)
    m = low.temp(elem, kept)
    total = low.temp(elem, kept)
    reduce_into(low, x, m, [axis], True, "max")
    row: DimMap = tuple(None if d == axis else d for d in range(rank))
    low.fill(total, 0.0)
    ident = identity_map(rank)

    def body(s: Scalar, args: list[SSAValue], outs: list[SSAValue]) -> list[SSAValue]:
        e = s.math(xmath.ExpOp, s.sub(args[0], args[1]))
        return [s.emit(arith.AddfOp(outs[0], e, REASSOC))]

    low.note_read(m)
    low.generic(sizes, [(x, ident, True), low.buffer_read(m, row)], [(total, row)], body, reductions=[axis])
    return m, total, row


@lowers(pd.SoftmaxOp, pd.LogSoftmaxOp, fusible=fuse_first_operand)
def _softmax(low: Lowerer, op: pd.SoftmaxLikeOp) -> None:
    x, r = op.operands[0], op.results[0]
    rank = len(shape_of(x.type))
    axis = op.prop("axis") % max(rank, 1)
    m, total, row = row_stats(low, x, axis)
    out = low.out(r)
    log = isinstance(op, pd.LogSoftmaxOp)

    def body(s: Scalar, args: list[SSAValue], outs: list[SSAValue]) -> list[SSAValue]:
        d = s.sub(args[0], args[1])
        if log:
            return [s.sub(d, s.math(xmath.LogOp, args[2]))]
        return [s.div(s.math(xmath.ExpOp, d), args[2])]

    reads = [(x, identity_map(rank), True), low.buffer_read(m, row), low.buffer_read(total, row)]
    low.generic(low.sizes_of(x), reads, [(out, identity_map(rank))], body)


result_sizes(pd.SoftmaxOp, pd.LogSoftmaxOp)(sizes_of_first)

__all__ = ["reduce_into", "row_stats", "scale_by_count"]
