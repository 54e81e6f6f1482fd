"""Kernels of the collectives: each calls MPI through the job's communicator
(`runtime/communicator.py`).  In a process started without `mpiexec` the job has
one rank and every collective returns its input."""

from __future__ import annotations

import numpy as np
from pullback.dialects import pd
from pullback.runtime.communicator import world
from pullback.runtime.interpreter import kernel


@kernel(pd.AllReduceOp)
def allreduce(op: pd.AllReduceOp, *xs: np.ndarray) -> tuple[np.ndarray, ...]:
    """Each operand reduced over all ranks with the op's `reduce_op`, in one message."""
    return tuple(world().allreduce(list(xs), op.prop("reduce_op")))


@kernel(pd.BroadcastOp)
def broadcast(op: pd.BroadcastOp, x: np.ndarray) -> np.ndarray:
    """Rank `root`'s `x`."""
    return world().broadcast(x, op.prop("root"))


@kernel(pd.ReduceToRootOp)
def reduce(op: pd.ReduceToRootOp, x: np.ndarray) -> np.ndarray:
    """The reduction over ranks on rank `root`, zeros on the others."""
    return world().reduce(x, op.prop("root"), op.prop("reduce_op"))


@kernel(pd.AllGatherOp)
def allgather(op: pd.AllGatherOp, x: np.ndarray) -> np.ndarray:
    """Every rank's `x`, concatenated along axis 0 in rank order."""
    return world().allgather(x, op.prop("nranks"))


@kernel(pd.ReduceScatterOp)
def reduce_scatter(op: pd.ReduceScatterOp, x: np.ndarray) -> np.ndarray:
    """This rank's chunk (axis 0) of the sum of `x` over all ranks."""
    return world().reduce_scatter(x, op.prop("nranks"))


@kernel(pd.BarrierOp)
def barrier(op: pd.BarrierOp, x: np.ndarray) -> np.ndarray:
    """`x`, once every rank got here."""
    world().barrier()
    return x
