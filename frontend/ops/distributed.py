"""The collectives as ops of a program (static mode) or computed at once (eager):
the building blocks of `paddle.distributed.all_reduce` and friends, which add the
in-place semantics Paddle's API has (`pullback/distributed/collective.py`).

Nothing is exported to `paddle.X`: Paddle publishes these under
`paddle.distributed` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pullback.dialects import pd
from pullback.dialects.pd.distributed import REDUCE_OPS
from pullback.frontend.core import apply


def allreduce(xs: Sequence[Any], reduce_op: str = "sum", out_names: Sequence[str] | None = None) -> list[Any]:
    """Each of `xs` reduced over all ranks (one message for all of them); static
    results are called `out_names` when given (Paddle's in-place outputs)."""
    if reduce_op not in REDUCE_OPS:
        raise ValueError(f"all_reduce: op must be one of {', '.join(REDUCE_OPS)}, got {reduce_op!r}")
    if not xs:
        raise ValueError("all_reduce: needs at least one tensor")
    out = apply(
        pd.AllReduceOp, list(xs), prefix="c_allreduce_" + reduce_op, out_names=out_names,
        reduce_op=reduce_op,
    )
    return list(out) if isinstance(out, list) else [out]


def broadcast(x: Any, root: int, out_name: str | None = None) -> Any:
    """Rank `root`'s `x` on every rank."""
    return apply(
        pd.BroadcastOp, [x], prefix="c_broadcast", out_names=[out_name] if out_name else None,
        root=int(root),
    )


def reduce(x: Any, root: int, reduce_op: str = "sum") -> Any:
    """The reduction over ranks of `x` on rank `root` (zeros on the others)."""
    return apply(pd.ReduceToRootOp, [x], prefix="c_reduce_" + reduce_op, root=int(root), reduce_op=reduce_op)


def allgather(x: Any, nranks: int) -> Any:
    """Every rank's `x`, concatenated along axis 0 in rank order."""
    return apply(pd.AllGatherOp, [x], prefix="c_allgather", nranks=int(nranks))


def reduce_scatter(x: Any, nranks: int) -> Any:
    """This rank's chunk (axis 0) of the sum over ranks of `x`."""
    return apply(pd.ReduceScatterOp, [x], prefix="c_reducescatter", nranks=int(nranks))


def barrier(x: Any, out_name: str | None = None) -> Any:
    """`x`, once every rank got here."""
    return apply(pd.BarrierOp, [x], prefix="barrier", out_names=[out_name] if out_name else None)


PADDLE: list[Any] = []
