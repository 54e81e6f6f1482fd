"""Lowering of the graph ops (`dialects/pd/geometric.py`): message passing as explicit
loop nests (`lowering/loop_nest.py`), since its rows are computed from index tensors.

`pd.send_recv` is one scatter-reduce:

1. the result is filled with the reduction's identity (0, or -inf/+inf for max/min;
   the integer extremes for integers);
2. one loop over edges x features loads `x[src[e], f]` (and `y[e, f]`, features
   broadcast right-aligned), makes the message and combines it into
   `out[dst[e], f]`: `atomic_add` for sum/mean, a load-max/min-store otherwise (the
   CPU runs these loops sequentially, `loop_nest`'s docstring);
3. for mean/max/min, a loop over edges counts the messages per row into a
   temporary, and a last loop over the result divides by the count (mean) or sets
   rows without messages to 0 (Paddle's convention), one select per element.

`src` and `dst` are range-checked before the loops (`loop_nest.check_range`, the
interpreter's `IndexOutOfRange`); the loops clamp too, so nothing is read or written
out of bounds before the check is reported.

`pd.segment_pool` is the same scatter-reduce with row `e` as edge `e`'s message.
Its number of rows, `segment_ids[-1] + 1`, is read from the ids in the entry
function, so only the run knows it: the result may feed other compiled ops (a loss,
its gradient), but a fetch of it is refused (`Lowerer.control_sizes`: the caller
allocates outputs before the call), and such a program runs on the interpreter
with a warning saying why.  Every id is checked to lie in `[0, rows)`; sortedness,
which the loops do not need, only by the interpreter.  The sampling and reindexing
ops are `HOST_ONLY`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects import scf
from xdsl.dialects.builtin import AnyFloat, IndexType, i64
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from pullback.dialects import pd
from pullback.dialects.pd.base import shape_of
from pullback.lowering.build import cmpi, make
from pullback.lowering.lowerer import Lowerer
from pullback.lowering.lowerer.sizes import Size
from pullback.lowering.loop_nest import (
    atomic_add,
    check_range,
    clamp,
    load,
    parallel,
    store,
    to_index,
)
from pullback.lowering.registry import range_check, lowers, result_sizes
from pullback.lowering.scalar import Scalar
from pullback.lowering.views import elem_of_buffer


def _rows(low: Lowerer, op: pd.SendRecvOp) -> Size:
    """The result's rows: `out_size`, else x's."""
    size = op.prop("out_size")
    return size if size > 0 else low.sizes_of(op.x)[0]


@range_check(pd.SendRecvOp, operand=2)
def _check_edges(low: Lowerer, op: pd.SendRecvOp) -> None:
    """`src_index` in `[0, rows of x)` and `dst_index` in `[0, rows of out)`, in the
    interpreter's order."""
    check_range(low, op, "src_index", op.src_index, low.sizes_of(op.x)[0])
    check_range(low, op, "dst_index", op.dst_index, _rows(low, op))


@result_sizes(pd.SendRecvOp)
def _send_recv_sizes(low: Lowerer, op: pd.SendRecvOp, r: SSAValue, k: int) -> Size | None:
    if k == 0:
        return _rows(low, op)
    rank = len(shape_of(r.type))
    for v in (op.x, op.y):  # the feature dimension from an operand that has it (not broadcast)
        if v is None:
            continue
        vs = shape_of(v.type)
        j = k - rank + len(vs)
        if j >= 1 and vs[j] != 1:
            return low.sizes_of(v)[j]
    return 1


def _feature_indices(s: Scalar, operand_shape: Sequence[int], out_rank: int,
                     ivs: Sequence[SSAValue]) -> list[SSAValue]:
    """The indices into an operand's feature dimensions (its dimensions 1..) for the
    result's feature indices `ivs`, aligned right; a broadcast size-1 dimension
    reads index 0 (a dynamic one is never broadcast, `pd.dynamic_broadcast_error`)."""
    feats = list(operand_shape[1:])
    lead = (out_rank - 1) - len(feats)
    zero = s.const(0, IndexType())
    return [zero if d == 1 else ivs[lead + j] for j, d in enumerate(feats)]


def _identity(reduce: str, elem: object) -> float | int:
    """The value the result starts from before messages are combined in."""
    if reduce in ("sum", "mean"):
        return 0
    if isinstance(elem, AnyFloat):
        return -np.inf if reduce == "max" else np.inf
    info = np.iinfo(np.int64 if elem == i64 else np.int32)
    return int(info.min if reduce == "max" else info.max)


Message = Callable[[Scalar, SSAValue, list[SSAValue]], SSAValue]
"""`message(s, e, feats)`: the value edge (or row) `e` sends at result feature
indices `feats`."""


def _scatter_reduce(low: Lowerer, r: SSAValue, reduce: str, edges: Size, dm: SSAValue,
                    n_out: SSAValue, message: Message) -> None:
    """Fill result `r` with the reduction's identity, combine every edge's message
    into row `dst[e]` (`dm`, clamped into `[0, n_out)`), then (mean/max/min) count the
    messages per row and divide by the count or zero the empty rows."""
    out = low.out(r)
    elem = elem_of_buffer(out)
    low.fill(out, _identity(reduce, elem))
    low.note_read(out)

    def combine(s: Scalar, ivs: list[SSAValue]) -> None:
        e, feats = ivs[0], ivs[1:]
        d = clamp(s, to_index(s, load(s, dm, [e])), n_out)
        v = message(s, e, feats)
        at = [d, *feats]
        if reduce in ("sum", "mean"):
            atomic_add(s, v, out, at)
        else:
            cur = load(s, out, at)
            store(s, s.max(cur, v) if reduce == "max" else s.min(cur, v), out, at)

    parallel(low, [edges, *low.sizes[r][1:]], combine)
    if reduce == "sum":
        return
    count = low.temp(i64, [low.sizes[r][0]])
    low.fill(count, 0)

    def tally(s: Scalar, ivs: list[SSAValue]) -> None:
        d = clamp(s, to_index(s, load(s, dm, ivs)), n_out)
        atomic_add(s, s.const(1, i64), count, [d])

    parallel(low, [edges], tally)
    low.note_read(count)

    def finish(s: Scalar, ivs: list[SSAValue]) -> None:
        c = load(s, count, ivs[:1])
        v = load(s, out, ivs)
        zero = s.const(0, elem)
        empty = s.cmp("eq", c, s.const(0, i64))
        if reduce == "mean":
            v = s.div(v, s.select(empty, s.const(1, elem), s.convert(c, elem)))
        store(s, s.select(empty, zero, v), out, ivs)

    parallel(low, low.sizes[r], finish)


@lowers(pd.SendRecvOp)
def _send_recv(low: Lowerer, op: pd.SendRecvOp) -> None:
    x, src, dst, y = op.x, op.src_index, op.dst_index, op.y
    r = op.results[0]
    rank = len(shape_of(r.type))
    kind = op.prop("message_op")
    xm, sm, dm = low.read(x), low.read(src), low.read(dst)
    ym = low.read(y) if y is not None else None
    n_x = low.as_value(low.sizes_of(x)[0])
    x_shape = shape_of(x.type)
    y_shape = shape_of(y.type) if y is not None else ()

    def message(s: Scalar, e: SSAValue, feats: list[SSAValue]) -> SSAValue:
        i = clamp(s, to_index(s, load(s, sm, [e])), n_x)
        v = load(s, xm, [i, *_feature_indices(s, x_shape, rank, feats)])
        if ym is None:
            return v
        w = load(s, ym, [e, *_feature_indices(s, y_shape, rank, feats)])
        return {"add": s.add, "sub": s.sub, "mul": s.mul, "div": s.div}[kind](v, w)

    _scatter_reduce(low, r, op.prop("reduce_op"), low.sizes_of(src)[0], dm,
                    low.as_value(_rows(low, op)), message)


# ------------------------------------------------------------------ segments


@result_sizes(pd.SegmentPoolOp)
def _segment_sizes(low: Lowerer, op: pd.SegmentPoolOp, r: SSAValue, k: int) -> Size | None:
    """Rows: `max(segment_ids[-1] + 1, 0)` (0 for no ids), read from the ids in the
    entry function.  Only the run knows it, so a fetch of the result is refused
    (`Lowerer.control_sizes`): the caller allocates outputs before the call."""
    if k != 0:
        return low.sizes_of(op.x)[k]
    ids = low.read(op.segment_ids)
    n = low.as_value(low.sizes_of(op.segment_ids)[0])
    zero = low.index(0)
    nonempty = low.emit(cmpi("sgt", n, zero)).results[0]
    then, other = Block(), Block()
    s = Scalar(Builder(InsertPoint.at_end(then)))
    last = s.sub(n, s.const(1, IndexType()))
    v = to_index(s, load(s, ids, [last]))
    rows = s.max(s.add(v, s.const(1, IndexType())), s.const(0, IndexType()))
    then.add_op(make(scf.YieldOp, (rows,)))
    other.add_op(make(scf.YieldOp, (zero,)))
    got = low.emit(scf.IfOp(nonempty, [IndexType()], Region(then), Region(other))).results[0]
    low.control_sizes.add(got)
    return got


@range_check(pd.SegmentPoolOp, operand=1)
def _check_segments(low: Lowerer, op: pd.SegmentPoolOp) -> None:
    """Every id in `[0, segment_ids[-1] + 1)` (sortedness is the interpreter's check
    only: the loops do not need it)."""
    check_range(low, op, "segment_ids", op.segment_ids, low.sizes_of(op.results[0])[0])


@lowers(pd.SegmentPoolOp)
def _segment_pool(low: Lowerer, op: pd.SegmentPoolOp) -> None:
    x, ids = op.x, op.segment_ids
    r = op.results[0]
    xm, im = low.read(x), low.read(ids)

    def message(s: Scalar, e: SSAValue, feats: list[SSAValue]) -> SSAValue:
        return load(s, xm, [e, *feats])

    _scatter_reduce(low, r, op.prop("pooltype"), low.sizes_of(x)[0], im,
                    low.as_value(low.sizes[r][0]), message)


__all__: list[str] = []
