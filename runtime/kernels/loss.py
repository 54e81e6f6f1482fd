"""Kernels of the loss ops."""

from __future__ import annotations

import numpy as np
from pullback.dialects import pd
from pullback.runtime.interpreter import InterpreterError, kernel
from pullback.runtime.kernels.reduction import log_softmax


@kernel(pd.OneHotOp)
def one_hot(op: pd.OneHotOp, ids: np.ndarray) -> np.ndarray:
    """Append a one-hot dimension of size `depth` (zero rows for allowed bad ids)."""
    depth = op.prop("depth")
    bad = (ids < 0) | (ids >= depth)
    if bad.any() and not op.prop("allow_out_of_range"):
        raise InterpreterError(
            f"'pd.one_hot': id {ids[bad].flat[0]} is out of range [0, {depth})"
        )
    return ids[..., None] == np.arange(depth)


def nll(op: pd.PdOp, logp: np.ndarray, label: np.ndarray) -> np.ndarray:
    """`-sum(label * logp)` (soft) or `-logp[label]` (hard), per row, shaped `[N.., 1]`.

    Hard rows whose label is `ignore_index` get 0; other out-of-range labels raise.
    """
    if op.prop("soft_label"):
        return -np.sum(label * logp, axis=-1, keepdims=True)
    ids = label.reshape(logp.shape[:-1])
    valid = ids != op.prop("ignore_index")
    classes = logp.shape[-1]
    bad = valid & ((ids < 0) | (ids >= classes))
    if bad.any():
        raise InterpreterError(
            f"'{op.name}': label {ids[bad].flat[0]} is out of range [0, {classes})"
        )
    picked = np.take_along_axis(logp, np.where(valid, ids, 0)[..., None], axis=-1)
    return np.where(valid[..., None], -picked, 0)


@kernel(pd.CrossEntropyOp)
def cross_entropy(op: pd.CrossEntropyOp, x: np.ndarray, label: np.ndarray) -> np.ndarray:
    """Cross entropy of probabilities `x`."""
    with np.errstate(divide="ignore"):
        return nll(op, np.log(x), label)


@kernel(pd.SoftmaxWithCrossEntropyOp)
def softmax_with_cross_entropy(
    op: pd.SoftmaxWithCrossEntropyOp, logits: np.ndarray, label: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """`(softmax(logits), cross entropy of logits)`, over the last axis."""
    logp = log_softmax(logits, -1)
    return np.exp(logp), nll(op, logp, label)


@kernel(pd.SquareErrorCostOp)
def square_error_cost(op: pd.SquareErrorCostOp, x: np.ndarray, label: np.ndarray) -> np.ndarray:
    """`(x - label) ** 2`."""
    return np.square(x - label)


@kernel(pd.AccuracyOp)
def accuracy(op: pd.AccuracyOp, out: np.ndarray, indices: np.ndarray, label: np.ndarray):
    """Rows whose label is among their top-k indices, over all rows."""
    n = indices.shape[0]
    correct = int((indices == label.reshape(-1, 1)).any(axis=1).sum())
    acc = correct / n if n else 0.0
    return np.float32(acc), np.int32(correct), np.int32(n)
