"""VJP rules of the graph ops, made of `pd.gather`, `pd.index_add` and elementwise ops
(so second derivatives come for free).  Index operands get no gradient; the
sampling and reindexing ops have none.

Paddle's conventions, checked against Paddle 3.3.1 (tests/unit/ops/geometric):

* `sum`: each edge (or row) receives its destination's gradient;
* `mean`: the same divided by the number of messages the destination received;
* `max`/`min`: every message equal to its destination's result receives the whole
  gradient (ties are not split: two tied messages both receive it, as Paddle's CPU
  kernels do).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue

from pullback.dialects import pd
from pullback.dialects.pd.base import shape_of
from pullback.passes.vjp import non_differentiable, vjp
from pullback.passes.vjp.builder import VjpBuilder

Grads = list["SSAValue | None"]

non_differentiable(pd.ReindexGraphOp, pd.SampleNeighborsOp, pd.WeightedSampleNeighborsOp)


def _reduce_grad(b: VjpBuilder, reduce: str, g: SSAValue, out: SSAValue, msg: SSAValue,
                 dst: SSAValue) -> SSAValue:
    """The gradient of the per-edge messages `msg` (`[E, ...]`) of a scatter-reduce
    into the rows `dst` of `out`, given out's gradient `g`."""
    if reduce == "mean":
        ones = b.full_like(msg, 1.0)
        count = b.emit(pd.IndexAddOp, b.full_like(out, 0.0), dst, ones, axis=0)
        # (a row nobody sends to is never gathered; the max keeps its quotient finite)
        count = b.emit(pd.ElementwiseMaxOp, count, b.full_like(out, 1.0))
        g = b.div(g, count)
    gm = b.emit(pd.GatherOp, g, dst, axis=0)
    if reduce in ("max", "min"):
        hit = b.emit(pd.EqualOp, msg, b.emit(pd.GatherOp, out, dst, axis=0))
        gm = b.mul(gm, b.cast_like(hit, gm))
    return gm


def _lift(b: VjpBuilder, v: SSAValue, rank: int) -> SSAValue:
    """`v` (`[E, f...]`) with size-1 axes inserted after the edge axis up to `rank`,
    so its features align right-aligned with the message's."""
    k = rank - len(shape_of(v.type))
    return v if k == 0 else b.emit(pd.UnsqueezeOp, v, axes=list(range(1, 1 + k)))


def _lower(b: VjpBuilder, g: SSAValue, like: SSAValue, lifted: SSAValue) -> SSAValue:
    """`g` (message-shaped) summed back to `lifted`'s shape, then the axes `_lift`
    inserted removed again (to `like`'s shape)."""
    g = b.unbroadcast(g, lifted)
    k = len(shape_of(lifted.type)) - len(shape_of(like.type))
    return g if k == 0 else b.emit(pd.SqueezeOp, g, axes=list(range(1, 1 + k)))


@vjp(pd.SendRecvOp)
def send_recv_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """dmsg from the reduction, then `dx = index_add(0, src, dmsg')` with dmsg' the
    message's derivative in `x[src]`, and `dy` the one in `y` (broadcast summed)."""
    assert isinstance(op, pd.SendRecvOp)
    g = grads[0]
    if g is None:
        return [None] * len(op.operands)
    x, src, dst = op.x, op.src_index, op.dst_index
    out = op.results[0]
    xs = b.emit(pd.GatherOp, x, src, axis=0)
    reduce = op.prop("reduce_op")
    if op.y is None:
        gm = _reduce_grad(b, reduce, g, out, xs, dst)
        return [b.emit(pd.IndexAddOp, b.full_like(x, 0.0), src, gm, axis=0), None, None]
    y = op.y
    rank = len(shape_of(out.type))
    xu, yu = _lift(b, xs, rank), _lift(b, y, rank)
    kind = op.prop("message_op")
    msg = {"add": b.add, "sub": b.sub, "mul": b.mul, "div": b.div}[kind](xu, yu)
    gm = _reduce_grad(b, reduce, g, out, msg, dst)
    if kind in ("add", "sub"):
        gx, gy = gm, (gm if kind == "add" else b.neg(gm))
    elif kind == "mul":
        gx, gy = b.mul(gm, yu), b.mul(gm, xu)
    else:
        gx = b.div(gm, yu)
        gy = b.neg(b.div(b.mul(gm, msg), yu))
    dxs = _lower(b, gx, xs, xu)
    dx = b.emit(pd.IndexAddOp, b.full_like(x, 0.0), src, dxs, axis=0)
    return [dx, None, None, _lower(b, gy, y, yu)]


@vjp(pd.SegmentPoolOp)
def segment_pool_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """Each row gets its segment's gradient (`mean`: divided by the segment's size;
    `max`/`min`: only rows equal to the result)."""
    assert isinstance(op, pd.SegmentPoolOp)
    g = grads[0]
    if g is None:
        return [None, None]
    return [_reduce_grad(b, op.prop("pooltype"), g, op.results[0], op.x, op.segment_ids), None]
