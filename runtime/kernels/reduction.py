"""Kernels of reductions, add_n, softmax and log_softmax."""

import numpy as np

from pullback.dialects import pd
from pullback.runtime.interpreter import kernel


def axes_of(op, x: np.ndarray) -> tuple[int, ...]:
    """The reduced axes of a reduction op (all when its `axis` is empty)."""
    axes = op.prop("axis")
    return tuple(a % max(x.ndim, 1) for a in axes) if axes else tuple(range(x.ndim))


@kernel(pd.MeanOp)
def mean(op, x: np.ndarray) -> np.ndarray:
    return np.mean(x)


_REDUCE = {pd.ReduceSumOp: np.sum, pd.ReduceMeanOp: np.mean, pd.ReduceMaxOp: np.max}


@kernel(*_REDUCE)
def reduce(op, x: np.ndarray) -> np.ndarray:
    return _REDUCE[type(op)](x, axis=axes_of(op, x), keepdims=op.prop("keepdim"))


@kernel(pd.SumOp)
def add_n(op, *xs: np.ndarray) -> np.ndarray:
    out = xs[0].copy()
    for x in xs[1:]:
        out = out + x
    return out
