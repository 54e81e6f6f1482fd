"""Kernels of reductions, add_n, softmax and log_softmax."""

from __future__ import annotations

import numpy as np
from pullback.dialects import pd
from pullback.runtime.interpreter import kernel


def axes_of(op: pd.PdOp, x: np.ndarray) -> tuple[int, ...]:
    """The reduced axes of a reduction op (all when its `axis` is empty).  A 0-d x
    has none: axis 0 or -1 names the value itself, as in Paddle (numpy would raise
    AxisError; softmax's gradient on a 0-d value reduces it so, found by the fuzzer)."""
    axes = op.prop("axis")
    if x.ndim == 0:
        return ()
    return tuple(a % x.ndim for a in axes) if axes else tuple(range(x.ndim))


@kernel(pd.MeanOp)
def mean(op: pd.MeanOp, x: np.ndarray) -> np.ndarray:
    """The mean of all elements."""
    return np.mean(x)


_REDUCE = {pd.ReduceSumOp: np.sum, pd.ReduceMeanOp: np.mean, pd.ReduceMaxOp: np.max,
           pd.ReduceMinOp: np.min, pd.ReduceProdOp: np.prod}


@kernel(*_REDUCE)
def reduce(op: pd.PdOp, x: np.ndarray) -> np.ndarray:
    """reduce_sum / mean / max / min / prod over the op's axes."""
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


# ------------------------------------------------------------------- index searches


@kernel(pd.ArgMaxOp, pd.ArgMinOp)
def arg_search(op: pd.ArgOp, x: np.ndarray) -> np.ndarray:
    """`np.argmax`/`np.argmin` (first index on ties) along the axis or flattened."""
    fn = np.argmax if isinstance(op, pd.ArgMaxOp) else np.argmin
    if x.size == 0:
        raise ValueError(f"'{op.name}': cannot search an empty tensor of shape {list(x.shape)}")
    if op.prop("flatten") or x.ndim == 0:
        idx = np.asarray(fn(x))
        return idx.reshape([1] * x.ndim) if op.prop("keepdim") else idx
    return fn(x, axis=op.prop("axis"), keepdims=op.prop("keepdim"))


@kernel(pd.TopKOp)
def top_k(op: pd.TopKOp, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The k largest (or smallest) along the axis, sorted; ties keep the lower index
    first (a stable sort of the negated values for `largest`)."""
    k = op.prop("k")
    if x.ndim == 0:
        return x, np.zeros((), np.int64)
    axis = op.prop("axis") % x.ndim
    if k > x.shape[axis]:
        raise ValueError(f"'{op.name}': k ({k}) is larger than dimension {axis} of x {list(x.shape)}")
    key = -x if op.prop("largest") else x
    order = np.argsort(key, axis=axis, kind="stable")
    idx = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, idx, axis=axis), idx.astype(np.int64)
@kernel(pd.CumsumOp, pd.CumprodOp)
def scan(op: pd.PdOp, x: np.ndarray) -> np.ndarray:
    """Running sum/product along the axis: reversed for `reverse`, shifted by one
    (starting from the identity) for `exclusive`."""
    if x.ndim == 0:
        x = x.reshape(1)
    axis = op.prop("axis") % x.ndim
    y = np.flip(x, axis) if op.prop("reverse") else x
    fn = np.cumsum if isinstance(op, pd.CumsumOp) else np.cumprod
    out = fn(y, axis=axis)
    if op.prop("exclusive"):
        ident = 0 if isinstance(op, pd.CumsumOp) else 1
        head = np.full_like(np.take(out, [0], axis=axis), ident)
        out = np.concatenate([head, np.delete(out, -1, axis=axis)], axis=axis)
    return np.flip(out, axis) if op.prop("reverse") else out


@kernel(pd.SquaredL2NormOp)
def squared_l2_norm(op: pd.SquaredL2NormOp, x: np.ndarray) -> np.ndarray:
    """`sum(x * x)` as a 0-D array."""
    return np.asarray(np.sum(x * x), dtype=x.dtype)
