"""Kernels of reductions, add_n, softmax and log_softmax."""

from __future__ import annotations

import numpy as np

from pullback.dialects import pd
from pullback.runtime.interpreter import kernel


def axes_of(op: pd.PdOp, x: np.ndarray) -> tuple[int, ...]:
    """The reduced axes of a reduction op (all when its `axis` is empty)."""
    axes = op.prop("axis")
    return tuple(a % max(x.ndim, 1) for a in axes) if axes else tuple(range(x.ndim))


@kernel(pd.MeanOp)
def mean(op: pd.MeanOp, x: np.ndarray) -> np.ndarray:
    """The mean of all elements."""
    return np.mean(x)


_REDUCE = {pd.ReduceSumOp: np.sum, pd.ReduceMeanOp: np.mean, pd.ReduceMaxOp: np.max}


@kernel(*_REDUCE)
def reduce(op: pd.PdOp, x: np.ndarray) -> np.ndarray:
    """reduce_sum / reduce_mean / reduce_max over the op's axes."""
    return _REDUCE[type(op)](x, axis=axes_of(op, x), keepdims=op.prop("keepdim"))


@kernel(pd.SumOp)
def add_n(op: pd.SumOp, *xs: np.ndarray) -> np.ndarray:
    """The elementwise sum of all operands."""
    out = xs[0].copy()
    for x in xs[1:]:
        out = out + x
    return out


def log_softmax(x: np.ndarray, axis: int) -> np.ndarray:
    """`x - logsumexp(x, axis)`, computed stably (shared with the loss kernels)."""
    shifted = x - np.max(x, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))


@kernel(pd.SoftmaxOp)
def softmax(op: pd.SoftmaxOp, x: np.ndarray) -> np.ndarray:
    """`exp(log_softmax(x))`."""
    return np.exp(log_softmax(x, op.prop("axis")))


@kernel(pd.LogSoftmaxOp)
def log_softmax_kernel(op: pd.LogSoftmaxOp, x: np.ndarray) -> np.ndarray:
    """`x - logsumexp(x, axis)`."""
    return log_softmax(x, op.prop("axis"))


@kernel(pd.SquaredL2NormOp)
def squared_l2_norm(op: pd.SquaredL2NormOp, x: np.ndarray) -> np.ndarray:
    """`sum(x * x)` as a 0-D array."""
    return np.asarray(np.sum(x * x), dtype=x.dtype)
