"""Kernels of the loss ops."""

from __future__ import annotations

import numpy as np
from pullback.dialects import pd
from pullback.runtime.interpreter import kernel, out_of_range
from pullback.runtime.kernels.reduction import log_softmax


@kernel(pd.OneHotOp)
def one_hot(op: pd.OneHotOp, ids: np.ndarray) -> np.ndarray:
    """Append a one-hot dimension of size `depth` (zero rows for allowed bad ids)."""
    depth = op.prop("depth")
    bad = (ids < 0) | (ids >= depth)
    if bad.any() and not op.prop("allow_out_of_range"):
        raise out_of_range(op.name, "id", ids[bad].flat[0], depth)
    return ids[..., None] == np.arange(depth)


def nll(op: pd.PdOp, logp: np.ndarray, label: np.ndarray) -> np.ndarray:
    """`-sum(label * logp)` (soft) or `-logp[label]` (hard) over the class axis,
    kept as a 1 there (the op's `axis`).

    Hard positions whose label is `ignore_index` get 0; other out-of-range labels raise.
    """
    a = op.prop("axis") % logp.ndim
    if op.prop("soft_label"):
        return -np.sum(label * logp, axis=a, keepdims=True)
    # Classes last: a label with the input's rank has its 1 at the class axis.
    logp = np.moveaxis(logp, a, -1)
    if label.ndim == logp.ndim:
        label = np.moveaxis(label, a, -1)
    return np.moveaxis(_nll_last(op, logp, label), -1, a)


def _nll_last(op: pd.PdOp, logp: np.ndarray, label: np.ndarray) -> np.ndarray:
    """`nll` of hard labels with the classes in the last dimension."""
    ids = label.reshape(logp.shape[:-1])
    valid = ids != op.prop("ignore_index")
    classes = logp.shape[-1]
    bad = valid & ((ids < 0) | (ids >= classes))
    if bad.any():
        raise out_of_range(op.name, "label", ids[bad].flat[0], classes)
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
    """`(softmax(logits), cross entropy of logits)`, over the class axis."""
    logp = log_softmax(logits, op.prop("axis"))
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
