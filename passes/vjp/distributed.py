"""VJP rules of the collectives.  Every rank differentiates the same program, so
the backward collectives below are issued by all ranks in the same order.

* `allreduce` sum (avg): every rank's result is the sum (mean) of all `x`, so the
  gradient of one rank's `x` is the sum (mean) over ranks of the results' gradients,
  an all-reduce of the cotangents;
* `allgather` and `reduce_scatter` are each other's transposes;
* `barrier` passes gradients through.

* `broadcast` from root and `reduce` (sum) to root are each other's transposes:
  the root's `x` feeds every rank's result, so its gradient is the sum of all
  ranks' cotangents (zero on the other ranks, whose `x` is unused).  Paddle's
  `c_broadcast` has no gradient at all (backward silently stops there); ours is
  the true one.

`allreduce`/`reduce` max/min/prod have no rule: differentiating through them is an
error naming the op, never a silently wrong gradient.
"""

from __future__ import annotations

from collections.abc import Sequence

from pullback.dialects import pd
from pullback.passes.autodiff import AutodiffError
from pullback.passes.vjp import vjp
from pullback.passes.vjp.builder import VjpBuilder
from xdsl.ir import Operation, SSAValue

Grads = list["SSAValue | None"]


@vjp(pd.AllReduceOp)
def allreduce_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """All-reduce (same reduction) of the incoming gradients, in one message."""
    assert isinstance(op, pd.AllReduceOp)
    red = op.prop("reduce_op")
    if red not in ("sum", "avg"):
        raise AutodiffError(
            f"'pd.allreduce' with reduce_op '{red}' has no gradient (only sum and avg do)", op
        )
    given = [g for g in grads if g is not None]
    reduced = iter(b.emit_multi(pd.AllReduceOp, *given, reduce_op=red))
    return [next(reduced) if g is not None else None for g in grads]


@vjp(pd.BroadcastOp)
def broadcast_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """The cotangents of every rank, summed on the root (zeros elsewhere)."""
    (g,) = grads
    assert g is not None and isinstance(op, pd.BroadcastOp)
    return [b.emit(pd.ReduceToRootOp, g, root=op.prop("root"), reduce_op="sum")]


@vjp(pd.ReduceToRootOp)
def reduce_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """Every rank's `x` fed the root's sum: the root's cotangent, broadcast."""
    (g,) = grads
    assert g is not None and isinstance(op, pd.ReduceToRootOp)
    if op.prop("reduce_op") != "sum":
        raise AutodiffError(
            f"'pd.reduce' with reduce_op '{op.prop('reduce_op')}' has no gradient (only sum has)", op
        )
    return [b.emit(pd.BroadcastOp, g, root=op.prop("root"))]


@vjp(pd.AllGatherOp)
def allgather_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """This rank's chunk of the sum over ranks of the gathered gradient."""
    (g,) = grads
    assert g is not None and isinstance(op, pd.AllGatherOp)
    return [b.emit(pd.ReduceScatterOp, g, nranks=op.prop("nranks"))]


@vjp(pd.ReduceScatterOp)
def reduce_scatter_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """Every rank's chunk gradient, gathered: each `x` fed every chunk's sum."""
    (g,) = grads
    assert g is not None and isinstance(op, pd.ReduceScatterOp)
    return [b.emit(pd.AllGatherOp, g, nranks=op.prop("nranks"))]


@vjp(pd.BarrierOp)
def barrier_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """The barrier is the identity on values."""
    return [grads[0]]
