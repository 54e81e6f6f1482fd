"""`paddle.metric`: the `accuracy` function (the `pd.top_k` and `pd.accuracy` ops,
eager and static; also `paddle.static.accuracy` and `fluid.layers.accuracy`) and
the stateful metric classes `Accuracy`, `Precision`, `Recall` and `Auc`
(`update` / `accumulate` / `reset`), which count in numpy as Paddle's do.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from typing import Any

import numpy as np
from pullback.dialects import pd
from pullback.frontend import core
from pullback.frontend.ops.elementwise import (
    cast,
    check_float_tensor,
    check_tensor,
    equal,
)
from pullback.frontend.ops.reduction import argmax, topk
from pullback.frontend.ops.shape import reshape


def _labels_2d(fn: str, label: Any) -> Any:
    """Labels as int64 `[N, 1]` (a 1-D label is accepted and reshaped)."""
    check_tensor(fn, "label", label)
    if label.dtype not in ("int32", "int64"):
        raise TypeError(f"{fn}: label must be int32 or int64 class ids, got {label.dtype}")
    if label.dtype == "int32":
        label = cast(label, "int64")
    if len(label.shape) == 1:
        label = reshape(label, [-1, 1])
    return label


def accuracy(input: Any, label: Any, k: int = 1, correct: Any = None, total: Any = None,
             name: str | None = None) -> Any:
    """`paddle.metric.accuracy`: the fraction of rows of `input` (`[N, C]` scores)
    whose `label` (`[N, 1]` int64) is among their `k` highest scores, a float32
    0-D tensor.  `correct` / `total`, when given, receive the counts (eager
    Tensors are updated in place; static Variables are ignored)."""
    fn = "accuracy"
    check_float_tensor(fn, "input", input)
    if len(input.shape) != 2:
        raise ValueError(f"{fn}: input must be 2-D [N, C] scores, got shape {list(input.shape)}")
    lab = _labels_2d(fn, label)
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(f"{fn}: k must be a positive int, got {k!r}")
    values, indices = topk(input, k)
    acc, n_correct, n_total = core.apply(pd.AccuracyOp, [values, indices, lab], prefix="accuracy",
                                         name=name)
    if core.in_dynamic_mode():
        for target, value in ((correct, n_correct), (total, n_total)):
            if target is not None and hasattr(target, "set_value"):
                target.set_value(value.numpy().reshape(target.shape).astype(target.numpy().dtype))
    return acc


def static_accuracy(input: Any, label: Any, k: int = 1, correct: Any = None, total: Any = None) -> Any:
    """`paddle.static.accuracy` / `fluid.layers.accuracy`: `paddle.metric.accuracy`
    in a static program."""
    return accuracy(input, label, k, correct, total)


# ----------------------------------------------------------------------- classes


def _numpy(x: Any) -> np.ndarray:
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


class Metric(abc.ABC):
    """Base of the stateful metrics (`paddle.metric.Metric`): `compute` (optional,
    on tensors) prepares what `update` accumulates; `accumulate` gives the value."""

    @abc.abstractmethod
    def reset(self) -> None:
        """Clear the accumulated state."""

    @abc.abstractmethod
    def update(self, *args: Any) -> Any:
        """Accumulate one batch."""

    @abc.abstractmethod
    def accumulate(self) -> Any:
        """The metric over everything accumulated since the last reset."""

    @abc.abstractmethod
    def name(self) -> Any:
        """The metric's name(s)."""

    def compute(self, *args: Any) -> Any:
        """Preprocess the model outputs and labels on tensors (identity here)."""
        return args


class Accuracy(Metric):
    """Top-k accuracy for each k in `topk`, accumulated over batches."""

    def __init__(self, topk: Sequence[int] | int = (1,), name: str | None = None, *args: Any,
                 **kwargs: Any) -> None:
        super().__init__()
        self.topk = (topk,) if isinstance(topk, int) else tuple(topk)
        self.maxk = max(self.topk)
        self._init_name(name)
        self.reset()

    def compute(self, pred: Any, label: Any, *args: Any) -> Any:
        """`[N, maxk]` float32 flags: whether each of the top `maxk` predictions is the
        label (one-hot labels are turned into ids first)."""
        if len(label.shape) == 1 or (len(label.shape) == 2 and label.shape[-1] == 1):
            label = reshape(label, [-1, 1])
        elif label.shape[-1] != 1:
            label = argmax(label, axis=-1, keepdim=True)
        if label.dtype != "int64":
            label = cast(label, "int64")
        _, indices = topk(pred, self.maxk)
        return cast(equal(indices, label), "float32")

    def update(self, correct: Any, *args: Any) -> Any:
        """Add one batch of `compute` flags; returns this batch's accuracy (a list
        for several k)."""
        c = _numpy(correct)
        num_samples = int(np.prod(np.array(c.shape[:-1])))
        accs = []
        for i, k in enumerate(self.topk):
            num_corrects = float(c[..., :k].sum())
            accs.append(num_corrects / num_samples if num_samples else 0.0)
            self.total[i] += num_corrects
            self.count[i] += num_samples
        return accs[0] if len(self.topk) == 1 else accs

    def reset(self) -> None:
        """Zero the counts."""
        self.total = [0.0] * len(self.topk)
        self.count = [0] * len(self.topk)

    def accumulate(self) -> Any:
        """Correct / seen for each k (a float for one k)."""
        res = [float(t) / c if c > 0 else 0.0 for t, c in zip(self.total, self.count)]
        return res[0] if len(self.topk) == 1 else res

    def _init_name(self, name: str | None) -> None:
        name = name or "acc"
        self._name = [f"{name}_top{k}" for k in self.topk] if self.maxk != 1 else [name]

    def name(self) -> list[str]:
        """`['acc']`, or `['acc_top1', 'acc_top5']` for several k."""
        return self._name


class _BinaryCounts(Metric):
    """Shared update of `Precision` and `Recall`: predictions are probabilities of
    the positive class, rounded at 0.5."""

    _default_name = ""

    def __init__(self, name: str | None = None, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        self.tp = self.fp = self.fn = 0
        self._name = name or self._default_name

    def update(self, preds: Any, labels: Any) -> None:
        """Count true/false positives and false negatives of one batch."""
        p = _numpy(preds)
        lab = _numpy(labels)
        if p.size != lab.size:
            raise ValueError(
                f"{type(self).__name__}: preds ({list(p.shape)}) and labels ({list(lab.shape)}) "
                "must have one element per sample"
            )
        pred = np.floor(p.reshape(-1) + 0.5).astype(np.int32)
        lab = lab.reshape(-1)
        self.tp += int(((pred == 1) & (lab == 1)).sum())
        self.fp += int(((pred == 1) & (lab != 1)).sum())
        self.fn += int(((pred != 1) & (lab == 1)).sum())

    def reset(self) -> None:
        """Zero the counts."""
        self.tp = self.fp = self.fn = 0

    def name(self) -> str:
        """The metric's name."""
        return self._name


class Precision(_BinaryCounts):
    """Binary precision `tp / (tp + fp)` (0 when nothing was predicted positive)."""

    _default_name = "precision"

    def accumulate(self) -> float:
        """The precision so far."""
        ap = self.tp + self.fp
        return float(self.tp) / ap if ap != 0 else 0.0


class Recall(_BinaryCounts):
    """Binary recall `tp / (tp + fn)` (0 when there was no positive label)."""

    _default_name = "recall"

    def accumulate(self) -> float:
        """The recall so far."""
        recall = self.tp + self.fn
        return float(self.tp) / recall if recall != 0 else 0.0


class Auc(Metric):
    """Area under the ROC curve from `[N, 2]` class probabilities (column 1 is the
    positive class), bucketed into `num_thresholds + 1` bins as Paddle does."""

    def __init__(self, curve: str = "ROC", num_thresholds: int = 4095, name: str = "auc", *args: Any,
                 **kwargs: Any) -> None:
        super().__init__()
        if curve != "ROC":
            raise ValueError(f"Auc: only curve='ROC' is supported, got {curve!r}")
        self._curve, self._num_thresholds, self._name = curve, int(num_thresholds), name
        self.reset()

    def update(self, preds: Any, labels: Any) -> None:
        """Add one batch to the positive/negative histograms."""
        p = _numpy(preds)
        lab = _numpy(labels).reshape(-1)
        if p.ndim != 2 or p.shape[1] < 2:
            raise ValueError(f"Auc: preds must be [N, 2] probabilities, got shape {list(p.shape)}")
        bins = (p[:, 1] * self._num_thresholds).astype(np.int64)
        bins = np.clip(bins, 0, self._num_thresholds)
        np.add.at(self._stat_pos, bins[lab != 0], 1)
        np.add.at(self._stat_neg, bins[lab == 0], 1)

    def accumulate(self) -> float:
        """The trapezoidal area under the curve (0 without both classes)."""
        tot_pos = tot_neg = auc = 0.0
        for idx in range(self._num_thresholds, -1, -1):
            pos_prev, neg_prev = tot_pos, tot_neg
            tot_pos += float(self._stat_pos[idx])
            tot_neg += float(self._stat_neg[idx])
            auc += abs(tot_neg - neg_prev) * (tot_pos + pos_prev) / 2.0
        return auc / tot_pos / tot_neg if tot_pos > 0.0 and tot_neg > 0.0 else 0.0

    def reset(self) -> None:
        """Clear the histograms."""
        self._stat_pos = np.zeros(self._num_thresholds + 1, np.int64)
        self._stat_neg = np.zeros(self._num_thresholds + 1, np.int64)

    def name(self) -> str:
        """The metric's name."""
        return self._name


__all__ = ["Accuracy", "Auc", "Metric", "Precision", "Recall", "accuracy"]
