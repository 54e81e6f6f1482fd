"""Paddle's losses: cross_entropy (2.x: logits, reduced; fluid: probabilities, per row),
softmax_with_cross_entropy, square_error_cost and one_hot.

The class dimension is the last by default; `axis` arguments name any other.
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
    full_like,
    maximum,
    not_equal,
)
from pullback.frontend.ops.reduction import mean, sum

_REDUCTIONS = ("mean", "sum", "none")


def _check_class_axis(fn: str, x: Any, axis: Any) -> int:
    """`axis` as an int naming a dimension of x (the class dimension)."""
    rank = len(x.shape)
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise TypeError(f"{fn}: axis must be an int, got {axis!r}")
    if not -rank <= axis < rank:
        raise ValueError(f"{fn}: axis {axis} is out of range for a {rank}-D input")
    return axis


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


def squeeze_axis(x: Any, axis: int) -> Any:
    """Drop the dimension of size 1 at `axis` (a sum over it: exact, and ours)."""
    return sum(x, axis=axis)


def cross_entropy(
    input: Any, label: Any, weight: Any = None, ignore_index: int = -100,  # noqa: A002
    reduction: str = "mean", soft_label: bool = False, axis: int = -1,
    use_softmax: bool = True, name: str | None = None,
) -> Any:
    """`paddle.nn.functional.cross_entropy`: softmax cross entropy of LOGITS (or of
    probabilities when `use_softmax=False`), reduced by `reduction`.

    The classes lie along `axis` (any dimension, negative counts from the end).  Hard
    labels are int64, the input's shape with a 1 at `axis`, or without that
    dimension.  With `reduction='none'` the loss has the label's shape (the input's
    with a 1 at `axis` for soft labels).  With `'mean'` and a hard label, a
    non-negative `ignore_index` divides by the number of labels not ignored (Paddle's
    rule; a negative one ignores nothing and takes the plain mean).
    """
    if weight is not None:
        raise NotImplementedError("cross_entropy: 'weight' is not supported")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"cross_entropy: reduction must be one of {_REDUCTIONS}, got {reduction!r}")
    check_float_tensor("cross_entropy", "input", input)
    axis = _check_class_axis("cross_entropy", input, axis)
    if use_softmax:
        _, loss = _classification_loss(
            "cross_entropy", pd.SoftmaxWithCrossEntropyOp, input, label, soft_label,
            ignore_index, None, axis=axis,
        )
    else:
        (loss,) = _classification_loss(
            "cross_entropy", pd.CrossEntropyOp, input, label, soft_label, ignore_index, None,
            axis=axis,
        )
    if reduction == "sum":
        return sum(loss, name=name)
    if reduction == "mean":
        if soft_label or ignore_index < 0:
            return mean(loss, name=name)
        valid = sum(cast(not_equal(label, full_like(label, ignore_index)), loss.dtype))
        return divide(sum(loss), maximum(valid, full_like(valid, 1.0)), name=name)
    if not soft_label and len(label.shape) == len(input.shape) - 1:
        return squeeze_axis(loss, axis)
    return loss


def softmax_with_cross_entropy(
    logits: Any, label: Any, soft_label: bool = False, ignore_index: int = -100,
    numeric_stable_mode: bool = True, return_softmax: bool = False, axis: int = -1,
) -> Any:
    """`paddle.nn.functional.softmax_with_cross_entropy`: the loss, shaped like the
    logits with a 1 at the class axis `axis` (and the softmax too when
    `return_softmax`)."""
    check_float_tensor("softmax_with_cross_entropy", "logits", logits)
    axis = _check_class_axis("softmax_with_cross_entropy", logits, axis)
    softmax, loss = _classification_loss(
        "softmax_with_cross_entropy", pd.SoftmaxWithCrossEntropyOp, logits, label,
        soft_label, ignore_index, None, axis=axis,
    )
    return (loss, softmax) if return_softmax else loss


def fluid_cross_entropy(input: Any, label: Any, soft_label: bool = False,  # noqa: A002
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


def fluid_one_hot(input: Any, depth: int, allow_out_of_range: bool = False) -> Any:  # noqa: A002
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
FUNCTIONAL = [cross_entropy, softmax_with_cross_entropy, square_error_cost, one_hot]
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {
    "cross_entropy": fluid_cross_entropy,
    "softmax_with_cross_entropy": softmax_with_cross_entropy,
    "square_error_cost": square_error_cost,
    "one_hot": fluid_one_hot,
}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {}
