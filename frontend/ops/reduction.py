"""Paddle's reductions and normalizations: mean, sum, max, add_n, softmax, log_softmax
(2.x spellings and the fluid `reduce_*(input, dim, keep_dim)` ones)."""

from __future__ import annotations

import builtins  # `sum` and `max` below are Paddle's

from collections.abc import Callable, Sequence
from typing import Any

from pullback.dialects import pd
from pullback.frontend.core import apply
from pullback.frontend.ops.elementwise import cast, check_dtype, check_float_tensor, check_tensor

Axis = int | Sequence[int] | None


def check_axes(fn: str, x: Any, axis: Axis) -> list[int]:
    """Normalize an `axis` argument (None, int, list/tuple of ints) to a list, checking
    that every axis is in range for x and none repeats; [] means all axes."""
    if axis is None:
        return []
    axes = [axis] if isinstance(axis, int) and not isinstance(axis, bool) else axis
    if not isinstance(axes, (list, tuple)) or not all(
        isinstance(a, int) and not isinstance(a, bool) for a in axes
    ):
        raise TypeError(f"{fn}: axis must be an int or a list of ints, got {axis!r}")
    # A 0-D tensor accepts axis 0/-1, as in Paddle.
    bound = builtins.max(len(x.shape), 1)
    for a in axes:
        if not -bound <= a < bound:
            raise ValueError(f"{fn}: axis {a} is out of range for a {len(x.shape)}-D input")
    if len({a % bound for a in axes}) != len(axes):
        raise ValueError(f"{fn}: repeated axis in {list(axes)}")
    return [int(a) for a in axes]


def _reduce(op_cls: type[pd.PdOp], prefix: str, x: Any, axis: Axis, keepdim: bool,
            name: str | None) -> Any:
    """Add one `pd.reduce_*` op after validating the arguments."""
    check_tensor(prefix, "x", x)
    axes = check_axes(prefix, x, axis)
    return apply(op_cls, [x], prefix=prefix, name=name, axis=axes, keepdim=bool(keepdim))


def mean(x: Any, axis: Axis = None, keepdim: bool = False, name: str | None = None) -> Any:
    """`paddle.mean`: the mean over `axis` (all elements when None; then a 0-D `pd.mean`
    unless keepdim)."""
    check_float_tensor("mean", "x", x)
    if axis is None and not keepdim:  # Paddle's `reduce_mean` with reduce_all
        return apply(pd.MeanOp, [x], prefix="mean", name=name, op_type="reduce_mean")
    return _reduce(pd.ReduceMeanOp, "reduce_mean", x, axis, keepdim, name)


def sum(x: Any, axis: Axis = None, dtype: Any = None, keepdim: bool = False,  # noqa: A001
        name: str | None = None) -> Any:
    """`paddle.sum`: the sum over `axis` (all when None).  `dtype` casts first; bool
    and int32 inputs sum in int64, as in Paddle."""
    check_tensor("sum", "x", x)
    if dtype is not None:
        x = cast(x, check_dtype("sum", dtype))
    elif x.dtype in ("bool", "int32"):
        x = cast(x, "int64")
    return _reduce(pd.ReduceSumOp, "reduce_sum", x, axis, keepdim, name)


def max(x: Any, axis: Axis = None, keepdim: bool = False, name: str | None = None) -> Any:  # noqa: A001
    """`paddle.max`: the maximum over `axis` (all when None)."""
    return _reduce(pd.ReduceMaxOp, "reduce_max", x, axis, keepdim, name)


def _fluid_reduce(fn: Callable[..., Any], fluid_name: str) -> Callable[..., Any]:
    """`fluid.layers.reduce_*(input, dim=None, keep_dim=False, name=None)`."""

    def f(input: Any, dim: Axis = None, keep_dim: bool = False, name: str | None = None) -> Any:  # noqa: A002
        return fn(input, axis=dim, keepdim=keep_dim, name=name)

    f.__name__ = f.__qualname__ = fluid_name
    f.__doc__ = f"`fluid.layers.{fluid_name}`: {fn.__name__} over `dim`."
    return f


reduce_sum = _fluid_reduce(sum, "reduce_sum")
reduce_mean = _fluid_reduce(mean, "reduce_mean")
reduce_max = _fluid_reduce(max, "reduce_max")


def fluid_mean(x: Any, name: str | None = None) -> Any:
    """`fluid.layers.mean`: the mean of all elements (`pd.mean`)."""
    check_float_tensor("mean", "x", x)
    return apply(pd.MeanOp, [x], prefix="mean", name=name)


def add_n(inputs: Any, name: str | None = None) -> Any:
    """`paddle.add_n`: the elementwise sum of same-shaped tensors (Paddle's `sum` op)."""
    xs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if not xs:
        raise ValueError("add_n: inputs must not be empty")
    for i, x in enumerate(xs):
        check_tensor("add_n", f"inputs[{i}]", x)
    return apply(pd.SumOp, xs, prefix="sum", name=name)


def _softmax_like(op_cls: type[pd.PdOp], prefix: str, x: Any, axis: int, dtype: Any,
                  name: str | None) -> Any:
    """Add a softmax-style op, casting to `dtype` first when given."""
    if dtype is not None:
        check_tensor(prefix, "x", x)
        x = cast(x, check_dtype(prefix, dtype))
    check_float_tensor(prefix, "x", x)
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise TypeError(f"{prefix}: axis must be an int, got {axis!r}")
    check_axes(prefix, x, axis)
    return apply(op_cls, [x], prefix=prefix, name=name, axis=axis)


def softmax(x: Any, axis: int = -1, dtype: Any = None, name: str | None = None) -> Any:
    """`paddle.nn.functional.softmax` along `axis`."""
    return _softmax_like(pd.SoftmaxOp, "softmax", x, axis, dtype, name)


def log_softmax(x: Any, axis: int = -1, dtype: Any = None, name: str | None = None) -> Any:
    """`paddle.nn.functional.log_softmax` along `axis`."""
    return _softmax_like(pd.LogSoftmaxOp, "log_softmax", x, axis, dtype, name)


def fluid_softmax(input: Any, use_cudnn: bool = False, name: str | None = None,  # noqa: A002
                  axis: int = -1) -> Any:
    """`fluid.layers.softmax(input, use_cudnn, name, axis)`."""
    return softmax(input, axis=axis, name=name)


PADDLE = [mean, sum, max, add_n]
FUNCTIONAL = [softmax, log_softmax]
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {
    "reduce_sum": reduce_sum,
    "reduce_mean": reduce_mean,
    "reduce_max": reduce_max,
    "mean": fluid_mean,
    "sums": add_n,
    "softmax": fluid_softmax,
}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {"mean": mean, "sum": sum, "max": max}
