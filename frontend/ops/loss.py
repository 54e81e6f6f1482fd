"""Paddle's losses: cross_entropy (2.x: logits, reduced; fluid: probabilities, per row),
softmax_with_cross_entropy, square_error_cost and one_hot.

Classes are always the last dimension; `axis` arguments must name it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pullback.dialects import pd
from pullback.frontend import unique_name
from pullback.frontend.core import apply
from pullback.frontend.ops.elementwise import (
    cast,
    check_float_tensor,
    check_tensor,
    divide,
    equal,
    full_like,
    maximum,
    not_equal,
    scale,
    where,
)
from pullback.frontend.ops.indexing import gather
from pullback.frontend.ops.reduction import mean, sum
from pullback.frontend.ops.shape import reshape, transpose, unsqueeze

_REDUCTIONS = ("mean", "sum", "none")


def _check_class_axis(fn: str, x: Any, axis: int) -> None:
    if axis not in (-1, len(x.shape) - 1):
        raise NotImplementedError(
            f"{fn}: only the last axis can hold the classes (axis=-1), got axis={axis}"
        )


def _check_label(fn: str, label: Any, soft_label: bool) -> None:
    check_tensor(fn, "label", label)
    if not soft_label and label.dtype != "int64":
        raise TypeError(f"{fn}: hard labels must be int64, got {label.dtype}")


def _classification_loss(
    fn: str, op_cls: type[pd.PdOp], x: Any, label: Any, soft_label: bool,
    ignore_index: int, name: str | None, **props: Any,
) -> list[Any]:
    """Validate and add a cross-entropy op; returns all of its results."""
    check_float_tensor(fn, "input", x)
    _check_label(fn, label, soft_label)
    if not isinstance(ignore_index, int) or isinstance(ignore_index, bool):
        raise TypeError(f"{fn}: ignore_index must be an int, got {ignore_index!r}")
    out = apply(op_cls, [x, label], prefix=op_cls.name.removeprefix("pd."), name=name,
                soft_label=bool(soft_label), ignore_index=ignore_index, **props)
    return out if isinstance(out, list) else [out]


def squeeze_last(x: Any) -> Any:
    """Drop a trailing dimension of size 1 (a sum over it: exact, and ours)."""
    return sum(x, axis=-1)


def cross_entropy(
    input: Any, label: Any, weight: Any = None, ignore_index: int = -100,
    reduction: str = "mean", soft_label: bool = False, axis: int = -1,
    use_softmax: bool = True, label_smoothing: float = 0.0, name: str | None = None,
) -> Any:
    """`paddle.nn.functional.cross_entropy`: softmax cross entropy of LOGITS (or of
    probabilities when `use_softmax=False`), reduced by `reduction`.

    Classes lie along `axis` (moved last internally).  Hard labels are int64 `[N..]`
    or `[N.., 1]`; `label_smoothing > 0` turns them into `(1 - e) * one_hot + e / C`
    soft labels.  `weight` (one per class) scales each sample's loss by the weight of
    its label (soft labels: `label . weight`), and `'mean'` then divides by the sum of
    those weights over the samples not ignored.  With `reduction='none'` the loss has
    the label's shape (`[N.., 1]` for soft labels).  With `'mean'`, no weight and a
    hard label, a non-negative `ignore_index` divides by the number of labels not
    ignored (Paddle's rule; a negative one takes the plain mean).
    """
    fn = "cross_entropy"
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{fn}: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    check_float_tensor(fn, "input", input)
    rank = len(input.shape)
    if isinstance(axis, bool) or not isinstance(axis, int) or not -rank <= axis < rank:
        raise ValueError(f"{fn}: axis {axis!r} is out of range for a {rank}-D input")
    a = axis % rank
    if a != rank - 1:
        perm = [i for i in range(rank) if i != a] + [a]
        input = transpose(input, perm)
        if soft_label or len(label.shape) == rank:
            label = transpose(label, perm)
    if not isinstance(label_smoothing, (int, float)) or not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"{fn}: label_smoothing must be in [0, 1], got {label_smoothing!r}")
    hard_rank = len(label.shape)
    if label_smoothing > 0.0:
        if not soft_label:
            check_tensor(fn, "label", label)
            ids = sum(label, axis=-1) if len(label.shape) == rank else label
            label = one_hot(ids, input.shape[-1])
        label = label_smooth(cast(label, input.dtype), epsilon=float(label_smoothing))
        soft_label = True
    if use_softmax:
        _, loss = _classification_loss(
            fn, pd.SoftmaxWithCrossEntropyOp, input, label, soft_label, ignore_index, None,
        )
    else:
        (loss,) = _classification_loss(fn, pd.CrossEntropyOp, input, label, soft_label,
                                       ignore_index, None)
    w = None
    if weight is not None:
        check_float_tensor(fn, "weight", weight)
        if list(weight.shape) != [input.shape[-1]] and input.shape[-1] >= 0:
            raise ValueError(f"{fn}: weight must have shape [{input.shape[-1]}], got {list(weight.shape)}")
        if soft_label:
            w = sum(label * weight, axis=-1, keepdim=True)
        else:
            ids = label if len(label.shape) == rank else unsqueeze(label, [-1])
            ignored = equal(ids, full_like(ids, ignore_index))
            safe = where(ignored, full_like(ids, 0), ids)
            picked = reshape(gather(weight, reshape(safe, [-1])), [d if d >= 0 else -1 for d in ids.shape])
            w = where(ignored, full_like(picked, 0.0), picked)
        loss = loss * w
    if reduction == "sum":
        return sum(loss, name=name)
    if reduction == "mean":
        if w is not None:
            total = sum(w)
            return divide(sum(loss), total + cast(equal(total, full_like(total, 0.0)), total.dtype), name=name)
        if soft_label or ignore_index < 0:
            return mean(loss, name=name)
        valid = sum(cast(not_equal(label, full_like(label, ignore_index)), loss.dtype))
        return divide(sum(loss), maximum(valid, full_like(valid, 1.0)), name=name)
    if not soft_label and hard_rank == rank - 1:
        return squeeze_last(loss)
    if label_smoothing > 0.0 and hard_rank == rank - 1:
        return squeeze_last(loss)
    return loss


def label_smooth(label: Any, prior_dist: Any = None, epsilon: float = 0.1,
                 name: str | None = None) -> Any:
    """`paddle.nn.functional.label_smooth`: `(1 - epsilon) * label + epsilon * prior`,
    the prior uniform (`1 / C`) unless `prior_dist` (`[1, C]`) is given."""
    check_float_tensor("label_smooth", "label", label)
    if not isinstance(epsilon, (int, float)) or not 0.0 <= epsilon <= 1.0:
        raise ValueError(f"label_smooth: epsilon must be in [0, 1], got {epsilon!r}")
    if prior_dist is None:
        c = label.shape[-1]
        if c < 0:
            raise ValueError("label_smooth: the class dimension must be static")
        return scale(label, 1.0 - epsilon, epsilon / c, name=name)
    check_float_tensor("label_smooth", "prior_dist", prior_dist)
    return scale(label, 1.0 - epsilon) + scale(prior_dist, epsilon)


def softmax_with_cross_entropy(
    logits: Any, label: Any, soft_label: bool = False, ignore_index: int = -100,
    numeric_stable_mode: bool = True, return_softmax: bool = False, axis: int = -1,
) -> Any:
    """`paddle.nn.functional.softmax_with_cross_entropy`: the per-row loss `[N.., 1]`
    (and the softmax too when `return_softmax`)."""
    check_float_tensor("softmax_with_cross_entropy", "logits", logits)
    _check_class_axis("softmax_with_cross_entropy", logits, axis)
    softmax, loss = _classification_loss(
        "softmax_with_cross_entropy", pd.SoftmaxWithCrossEntropyOp, logits, label,
        soft_label, ignore_index, None,
    )
    return (loss, softmax) if return_softmax else loss


def fluid_cross_entropy(input: Any, label: Any, soft_label: bool = False,
                        ignore_index: int = -100) -> Any:
    """`fluid.layers.cross_entropy`: per-row cross entropy `[N.., 1]` of PROBABILITIES."""
    (loss,) = _classification_loss(
        "cross_entropy", pd.CrossEntropyOp, input, label, soft_label, ignore_index, None
    )
    return loss


def square_error_cost(input: Any, label: Any) -> Any:  # noqa: A002
    """`paddle.nn.functional.square_error_cost`: `(input - label) ** 2`, elementwise
    (with broadcasting), built as Paddle builds it: `elementwise_sub` then `square`,
    named `square_error_cost_<n>.tmp_0/1`, so gradient operators (and
    `append_backward` callbacks) are Paddle's `square_grad` and `elementwise_sub_grad`."""
    check_float_tensor("square_error_cost", "input", input)
    check_float_tensor("square_error_cost", "label", label)
    base = unique_name.generate("square_error_cost")
    minus = apply(pd.ElementwiseSubOp, [input, label], prefix="elementwise_sub", name=base)
    return apply(pd.SquareOp, [minus], prefix="square", name=base)


def one_hot(x: Any, num_classes: int, name: str | None = None) -> Any:
    """`paddle.nn.functional.one_hot`: int ids `[N..]` -> float32 `[N.., num_classes]`
    (a new last dimension is appended)."""
    check_tensor("one_hot", "x", x)
    if x.dtype not in ("int32", "int64"):
        raise TypeError(f"one_hot: x must be int32 or int64, got {x.dtype}")
    if not isinstance(num_classes, int) or isinstance(num_classes, bool) or num_classes < 1:
        raise ValueError(f"one_hot: num_classes must be a positive int, got {num_classes!r}")
    return apply(pd.OneHotOp, [x], prefix="one_hot_v2", name=name, op_type="one_hot_v2",
                 depth=num_classes)


def fluid_one_hot(input: Any, depth: int, allow_out_of_range: bool = False) -> Any:
    """`fluid.layers.one_hot`: the legacy form, ids `[N.., 1]` -> `[N.., depth]` (the
    trailing 1 is replaced)."""
    check_tensor("one_hot", "input", input)
    if not input.shape or input.shape[-1] != 1:
        raise ValueError(
            f"one_hot: fluid.layers.one_hot needs ids shaped [..., 1], got {input.shape}"
        )
    if not isinstance(depth, int) or isinstance(depth, bool) or depth < 1:
        raise ValueError(f"one_hot: depth must be a positive int, got {depth!r}")
    out = apply(pd.OneHotOp, [input], prefix="one_hot", depth=depth,
                allow_out_of_range=bool(allow_out_of_range))
    return sum(out, axis=-2)


PADDLE: list[Callable[..., Any]] = []
FUNCTIONAL = [cross_entropy, softmax_with_cross_entropy, square_error_cost, one_hot, label_smooth]
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {
    "cross_entropy": fluid_cross_entropy,
    "softmax_with_cross_entropy": softmax_with_cross_entropy,
    "square_error_cost": square_error_cost,
    "one_hot": fluid_one_hot,
    "label_smooth": label_smooth,
}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {}
