"""Lowering of the reduction family (`dialects/pd/reduction.py`): `mean`,
`reduce_sum`/`reduce_mean`/`reduce_max`, `sum` (add_n), `softmax`, `log_softmax`,
and the index searches `arg_max`/`arg_min`/`top_k` (loops: a parallel loop over the
rows, `scf.for` along the searched axis).

Each rule reads its operand through `Lowerer.generic`, so elementwise producers of a
reduction or a softmax are fused into it.  Iteration domains follow the input's
memory order (reduced dimensions stay where they are), which keeps the innermost
loop contiguous and vectorizable, e.g. a bias gradient (sum over the batch) runs
`out[j] += g[i, j]` with `j` innermost.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pullback.dialects import pd
from pullback.dialects.pd.base import shape_of
from pullback.lowering.lowerer import Lowerer
from pullback.lowering.lowerer.sizes import Size
from pullback.lowering.registry import (
    Fold,
    folds,
    fuse_first_operand,
    lowers,
    pointwise,
    result_sizes,
    sizes_of_first,
)
from pullback.lowering.scalar import (
    REASSOC,
    DimMap,
    Scalar,
    elem_of_result,
    identity_map,
    numpy_maps,
)
from pullback.lowering.views import elem_of_buffer
from pullback.lowering.loop_nest import for_range, load, parallel, store
from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import AnyFloat, IndexType, i1
from xdsl.ir import SSAValue

_INIT = {"sum": 0.0, "max": -math.inf, "min": math.inf, "prod": 1.0}
_INT_INIT = {"sum": 0, "max": -(2**62), "min": 2**62, "prod": 1}


def reduce_into(
    low: Lowerer,
    x: SSAValue,
    out: SSAValue,
    axes: Sequence[int],
    keepdim: bool,
    kind: str,
) -> None:
    """`out = reduce(x)` over `axes` (`kind` is sum, max, min or prod); x's producers
    fuse in."""
    rank = len(shape_of(x.type))
    out_map: DimMap = tuple(
        (None if d in axes else d) for d in range(rank) if keepdim or d not in axes
    )
    elem = elem_of_buffer(out)
    init = _INIT[kind] if isinstance(elem, AnyFloat) else _INT_INIT[kind]
    low.fill(out, init)

    def body(s: Scalar, args: list[SSAValue], outs: list[SSAValue]) -> list[SSAValue]:
        if kind == "sum":
            if isinstance(elem, AnyFloat):
                return [s.emit(arith.AddfOp(outs[0], args[0], REASSOC))]
            return [s.add(outs[0], args[0])]
        if kind == "prod":
            return [s.mul(outs[0], args[0])]
        if kind == "min":
            return [s.min(outs[0], args[0])]
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


_KINDS = {pd.ReduceMaxOp: "max", pd.ReduceMinOp: "min", pd.ReduceProdOp: "prod"}


@lowers(pd.ReduceSumOp, pd.ReduceMeanOp, pd.ReduceMaxOp, pd.ReduceMinOp, pd.ReduceProdOp, pd.MeanOp,
        fusible=fuse_first_operand)
def _reduce(low: Lowerer, op: ReduceLike) -> None:
    x, r = op.operands[0], op.results[0]
    axes, keepdim = _reduced_axes(op)
    out = low.out(r)
    kind = _KINDS.get(type(op), "sum")
    reduce_into(low, x, out, axes, keepdim, kind)
    if isinstance(op, (pd.ReduceMeanOp, pd.MeanOp)):
        xs = low.sizes_of(x)
        scale_by_count(low, out, low.sizes[r], [xs[a] for a in axes])


def _sum_step(s: Scalar, acc: SSAValue, x: SSAValue) -> SSAValue:
    if isinstance(acc.type, AnyFloat):
        return s.emit(arith.AddfOp(acc, x, REASSOC))
    return s.add(acc, x)


def _mean_finish(low: Lowerer, op: ReduceLike, out: SSAValue) -> None:
    xs = low.sizes_of(op.operands[0])
    scale_by_count(low, out, low.sizes[op.results[0]], xs)


@folds(pd.ReduceSumOp, pd.ReduceMeanOp, pd.MeanOp)
def _fold(op: ReduceLike) -> Fold | None:
    # Only the float sums and means of every element (a loss): what a fused loop
    # computes alongside the elementwise work that reads the same values.
    axes, _ = _reduced_axes(op)
    if len(axes) != len(shape_of(op.operands[0].type)) or not isinstance(elem_of_result(op), AnyFloat):
        return None
    mean = isinstance(op, (pd.ReduceMeanOp, pd.MeanOp))
    return Fold(0, 0.0, _sum_step, _mean_finish if mean else None)


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


@result_sizes(pd.ReduceSumOp, pd.ReduceMeanOp, pd.ReduceMaxOp, pd.ReduceMinOp, pd.ReduceProdOp, pd.MeanOp)
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


# ------------------------------------------------------------- index searches


def precedes(s: Scalar, a: SSAValue, ia: SSAValue, b: SSAValue, ib: SSAValue, largest: bool,
             nan_first: bool = False) -> SSAValue:
    """Whether element `(a, ia)` comes before `(b, ib)` in the order the kernels
    give: by value (descending for `largest`), then by index; NaNs last, as a
    stable sort places them (`top_k`), or first with `nan_first`, as numpy's
    `argmax`/`argmin` pick the first NaN; among themselves by index."""
    if not isinstance(a.type, AnyFloat):
        better = s.cmp("gt" if largest else "lt", a, b)
        tie = s.emit(arith.AndIOp(s.cmp("eq", a, b), s.cmp("lt", ia, ib)))
        return s.emit(arith.OrIOp(better, tie))
    a_nan = s.emit(arith.CmpfOp(a, a, "uno"))
    b_nan = s.emit(arith.CmpfOp(b, b, "uno"))
    better = s.cmp("gt" if largest else "lt", a, b)  # ordered: false with a NaN
    earlier = s.cmp("lt", ia, ib)
    tie = s.emit(arith.AndIOp(s.cmp("eq", a, b), earlier))
    numbers = s.emit(arith.OrIOp(better, tie))
    # Two NaNs by index; otherwise the NaN goes last (or first).
    both = s.emit(arith.AndIOp(b_nan, earlier))
    if nan_first:
        nan_order = s.select(a_nan, s.select(b_nan, both, s.const(1, i1)), s.const(0, i1))
    else:
        nan_order = s.select(a_nan, both, b_nan)
    either_nan = s.emit(arith.OrIOp(a_nan, b_nan))
    return s.select(either_nan, nan_order, numbers)


def _row_loop(low: Lowerer, x: SSAValue, axis: int) -> tuple[list[Size], int]:
    """The sizes of the rows (every dimension but `axis`) and the searched size."""
    sizes = low.sizes_of(x)
    return [n for d, n in enumerate(sizes) if d != axis], axis


@lowers(pd.ArgMaxOp, pd.ArgMinOp)
def _arg_search(low: Lowerer, op: pd.ArgOp) -> None:
    x, r = op.operands[0], op.results[0]
    xm, out = low.read(x), low.out(r)
    low.note_read(out)
    largest = isinstance(op, pd.ArgMaxOp)
    sizes = low.sizes_of(x)
    rank = len(sizes)
    out_elem = elem_of_buffer(out)
    if op.prop("flatten") or rank == 0:
        # One search over every element, in row-major order.
        def whole(s: Scalar, _ivs: list[SSAValue]) -> None:
            def walk(d: int, s1: Scalar, idx: list[SSAValue], c: list[SSAValue]) -> list[SSAValue]:
                if d == rank:
                    v = load(s1, xm, idx)
                    take = precedes(s1, v, c[2], c[0], c[1], largest, nan_first=True)
                    first = s1.emit(arith.XOrIOp(c[3], s1.const(1, i1)))
                    take = s1.emit(arith.OrIOp(take, first))
                    nxt = s1.add(c[2], s1.const(1, IndexType()))
                    return [s1.select(take, v, c[0]), s1.select(take, c[2], c[1]), nxt, s1.const(1, i1)]
                return for_range(s1, s1.const(0, IndexType()), low.as_value(sizes[d]), c,
                                 lambda s2, iv, c2: walk(d + 1, s2, [*idx, iv], c2))

            zero = s.const(0, IndexType())
            init = [s.const(0.0 if isinstance(elem_of_buffer(xm), AnyFloat) else 0, elem_of_buffer(xm)),
                    zero, zero, s.const(0, i1)]
            _, best, _, _ = walk(0, s, [], init)
            where = [zero] * len(low.sizes[r])
            store(s, s.emit(arith.IndexCastOp(best, out_elem)), out, where)

        parallel(low, [], whole)
        return
    axis = op.prop("axis") % rank
    rows, _ = _row_loop(low, x, axis)
    keep = bool(op.prop("keepdim"))

    def body(s: Scalar, ivs: list[SSAValue]) -> None:
        def at(i: SSAValue) -> list[SSAValue]:
            return [*ivs[:axis], i, *ivs[axis:]]

        zero = s.const(0, IndexType())
        first = load(s, xm, at(zero))

        def step(s1: Scalar, i: SSAValue, c: list[SSAValue]) -> list[SSAValue]:
            v = load(s1, xm, at(i))
            take = precedes(s1, v, i, c[0], c[1], largest, nan_first=True)
            return [s1.select(take, v, c[0]), s1.select(take, i, c[1])]

        _, best = for_range(s, s.const(1, IndexType()), low.as_value(sizes[axis]), [first, zero], step)
        where = at(zero) if keep else ivs
        store(s, s.emit(arith.IndexCastOp(best, out_elem)), out, where)

    parallel(low, rows, body)


@result_sizes(pd.ArgMaxOp, pd.ArgMinOp)
def _arg_sizes(low: Lowerer, op: pd.ArgOp, r: SSAValue, k: int) -> Size | None:
    sizes = low.sizes_of(op.operands[0])
    if op.prop("flatten"):
        return None
    axis = op.prop("axis") % max(len(sizes), 1)
    kept = [d for d in range(len(sizes)) if op.prop("keepdim") or d != axis]
    return sizes[kept[k]]


@lowers(pd.TopKOp)
def _top_k(low: Lowerer, op: pd.TopKOp) -> None:
    """Slot j of a row takes the first element, in the sort order, that comes after
    slot j-1's: k passes over the row (k is small in practice), no sorting buffer."""
    x = op.operands[0]
    values, indices = op.results
    xm = low.read(x)
    vm, im = low.out(values), low.out(indices)
    low.note_read(vm)
    low.note_read(im)
    sizes = low.sizes_of(x)
    rank = len(sizes)
    k, largest = op.prop("k"), bool(op.prop("largest"))
    if rank == 0:
        def scalar(s: Scalar, _ivs: list[SSAValue]) -> None:
            store(s, load(s, xm, []), vm, [])
            store(s, s.const(0, elem_of_buffer(im)), im, [])

        parallel(low, [], scalar)
        return
    axis = op.prop("axis") % rank
    rows, _ = _row_loop(low, x, axis)
    elem = elem_of_buffer(xm)
    idx_elem = elem_of_buffer(im)

    def body(s: Scalar, ivs: list[SSAValue]) -> None:
        def at(i: SSAValue) -> list[SSAValue]:
            return [*ivs[:axis], i, *ivs[axis:]]

        index = IndexType()
        n = low.as_value(sizes[axis])

        def slot(s1: Scalar, j: SSAValue, prev: list[SSAValue]) -> list[SSAValue]:
            pv, pi, have_prev = prev

            def scan(s2: Scalar, i: SSAValue, c: list[SSAValue]) -> list[SSAValue]:
                v = load(s2, xm, at(i))
                after_prev = s2.emit(arith.OrIOp(
                    s2.emit(arith.XOrIOp(have_prev, s2.const(1, i1))),
                    precedes(s2, pv, pi, v, i, largest)))
                better = s2.emit(arith.OrIOp(s2.emit(arith.XOrIOp(c[2], s2.const(1, i1))),
                                             precedes(s2, v, i, c[0], c[1], largest)))
                take = s2.emit(arith.AndIOp(after_prev, better))
                found = s2.emit(arith.OrIOp(c[2], take))
                return [s2.select(take, v, c[0]), s2.select(take, i, c[1]), found]

            init = [s1.const(0.0 if isinstance(elem, AnyFloat) else 0, elem), s1.const(0, index), s1.const(0, i1)]
            bv, bi, _ = for_range(s1, s1.const(0, index), n, init, scan)
            store(s1, bv, vm, at(j))
            store(s1, s1.emit(arith.IndexCastOp(bi, idx_elem)), im, at(j))
            return [bv, bi, s1.const(1, i1)]

        init = [s.const(0.0 if isinstance(elem, AnyFloat) else 0, elem), s.const(0, index), s.const(0, i1)]
        for_range(s, s.const(0, index), s.const(k, index), init, slot)

    parallel(low, rows, body)


@result_sizes(pd.TopKOp)
def _top_k_sizes(low: Lowerer, op: pd.TopKOp, r: SSAValue, k: int) -> Size | None:
    return low.sizes_of(op.operands[0])[k]


__all__ = ["precedes", "reduce_into", "row_stats", "scale_by_count"]
__all__ = ["reduce_into", "row_stats", "scale_by_count"]


# ----------------------------------------------------------------- scans


@lowers(pd.CumsumOp, pd.CumprodOp, fusible=fuse_first_operand)
def _scan(low: Lowerer, op: pd.ScanOp) -> None:
    """`out[.., i, ..] = reduce(x[.., j, ..] for j before i)`: a reduction over an extra
    loop dimension `j` of the scanned axis, masked by comparing `j` with `i`
    (inclusive or `exclusive`, forward or `reverse`).  Quadratic in the axis length,
    and as fusible and vectorizable as any reduction."""
    x, r = op.operands[0], op.results[0]
    rank = len(shape_of(x.type))
    if rank == 0:
        low.copy_value(x, low.out(r))
        return
    axis = op.prop("axis") % rank
    sizes = low.sizes_of(x)
    out = low.out(r)
    prod = isinstance(op, pd.CumprodOp)
    elem = elem_of_buffer(out)
    low.fill(out, 1.0 if prod else 0.0)
    x_map: DimMap = tuple(rank if d == axis else d for d in range(rank))
    pred = {(False, False): "le", (True, False): "lt", (False, True): "ge", (True, True): "gt"}[
        (bool(op.prop("exclusive")), bool(op.prop("reverse")))]

    def body(s: Scalar, args: list[SSAValue], outs: list[SSAValue]) -> list[SSAValue]:
        take = s.cmp(pred, s.index(rank), s.index(axis))
        ident = s.const(1.0 if prod else 0.0, elem)
        v = s.select(take, args[0], ident)
        return [s.mul(outs[0], v) if prod else s.add(outs[0], v)]

    low.generic([*sizes, sizes[axis]], [(x, x_map, True)], [(out, identity_map(rank))], body,
                reductions=[rank])


@result_sizes(pd.CumsumOp, pd.CumprodOp)
def _scan_sizes(low: Lowerer, op: pd.ScanOp, r: SSAValue, k: int) -> Size | None:
    return low.sizes_of(op.operands[0])[k]
