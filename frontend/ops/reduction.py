"""Paddle's reductions and normalizations: mean, sum, max, add_n, softmax, log_softmax
(2.x spellings and the fluid `reduce_*(input, dim, keep_dim)` ones)."""

from __future__ import annotations

import builtins  # `sum` and `max` below are Paddle's
from collections.abc import Callable, Sequence
from typing import Any

from pullback.dialects.pd.dtypes import COMPLEX_NAMES, to_dtype_name
from pullback.dialects import pd
from pullback.frontend.core import apply
from pullback.frontend.ops.elementwise import (
    cast,
    check_float_tensor,
    check_tensor,
)

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
    if getattr(x, "dtype", None) not in COMPLEX_NAMES:  # (complex means are Paddle's too)
        check_float_tensor("mean", "x", x)
    if axis is None and not keepdim:  # Paddle's `reduce_mean` with reduce_all
        return apply(pd.MeanOp, [x], prefix="mean", name=name, op_type="reduce_mean")
    return _reduce(pd.ReduceMeanOp, "reduce_mean", x, axis, keepdim, name)


def sum(x: Any, axis: Axis = None, dtype: Any = None, keepdim: bool = False,
        name: str | None = None) -> Any:
    """`paddle.sum`: the sum over `axis` (all when None).  `dtype` casts first; bool
    and int32 inputs sum in int64, as in Paddle."""
    check_tensor("sum", "x", x)
    if dtype is not None:
        x = cast(x, to_dtype_name(dtype, "sum"))
    elif x.dtype in ("bool", "int32"):
        x = cast(x, "int64")
    return _reduce(pd.ReduceSumOp, "reduce_sum", x, axis, keepdim, name)


def max(x: Any, axis: Axis = None, keepdim: bool = False, name: str | None = None) -> Any:
    """`paddle.max`: the maximum over `axis` (all when None)."""
    return _reduce(pd.ReduceMaxOp, "reduce_max", x, axis, keepdim, name)


def _fluid_reduce(fn: Callable[..., Any], fluid_name: str) -> Callable[..., Any]:
    """`fluid.layers.reduce_*(input, dim=None, keep_dim=False, name=None)`."""

    def f(input: Any, dim: Axis = None, keep_dim: bool = False, name: str | None = None) -> Any:
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
        x = cast(x, to_dtype_name(dtype, prefix))
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


def fluid_softmax(input: Any, use_cudnn: bool = False, name: str | None = None,
                  axis: int = -1) -> Any:
    """`fluid.layers.softmax(input, use_cudnn, name, axis)`."""
    return softmax(input, axis=axis, name=name)


# ------------------------------------------------------------------- index searches


def _int_arg(fn: str, arg: str, v: Any) -> int:
    """An int argument (a one-element integer Tensor is read as its value)."""
    if hasattr(v, "numpy") and not isinstance(v, (int, bool)):
        arr = v.numpy()
        if arr.size == 1 and arr.dtype.kind in "iu":
            return int(arr.reshape(-1)[0])
    if not isinstance(v, int) or isinstance(v, bool):
        raise TypeError(f"{fn}: '{arg}' must be an int, got {type(v).__name__}")
    return int(v)


def _arg_search(op_cls: type[pd.PdOp], fn: str, x: Any, axis: Any, keepdim: bool, dtype: Any,
                name: str | None) -> Any:
    check_tensor(fn, "x", x)
    dt = to_dtype_name(dtype, fn)
    if dt not in ("int32", "int64"):
        raise TypeError(f"{fn}: the type of 'dtype' must be int32 or int64, got {dt}")
    props: dict[str, Any] = {"keepdim": bool(keepdim), "dtype": dt}
    if axis is None:
        props["flatten"] = True
    else:
        ax = _int_arg(fn, "axis", axis)
        rank = builtins.max(len(x.shape), 1)
        if not -rank <= ax < rank:
            raise ValueError(f"{fn}: axis {ax} is out of range for a {len(x.shape)}-D input")
        props["axis"] = ax
    return apply(op_cls, [x], prefix=fn.replace("arg", "arg_"), name=name, **props)


def argmax(x: Any, axis: int | None = None, keepdim: bool = False, dtype: Any = "int64",
           name: str | None = None) -> Any:
    """`paddle.argmax`: the index of the largest element along `axis` (of the
    flattened tensor when None, a 0-D result); the first one on ties; no gradient."""
    return _arg_search(pd.ArgMaxOp, "argmax", x, axis, keepdim, dtype, name)


def argmin(x: Any, axis: int | None = None, keepdim: bool = False, dtype: Any = "int64",
           name: str | None = None) -> Any:
    """`paddle.argmin`: the index of the smallest element along `axis` (see argmax)."""
    return _arg_search(pd.ArgMinOp, "argmin", x, axis, keepdim, dtype, name)


def topk(x: Any, k: int, axis: int | None = None, largest: bool = True, sorted: bool = True,
         name: str | None = None) -> list[Any]:
    """`paddle.topk`: `(values, indices)` of the k largest (`largest`) or smallest
    elements along `axis` (default the last); indices are int64 and get no gradient."""
    check_tensor("topk", "x", x)
    kk = _int_arg("topk", "k", k)
    rank = len(x.shape)
    ax = -1 if axis is None else _int_arg("topk", "axis", axis)
    if rank and not -rank <= ax < rank:
        raise ValueError(f"topk: axis {ax} is out of range for a {rank}-D input")
    if kk < 1 or (rank and x.shape[ax] >= 0 and kk > x.shape[ax]):
        raise ValueError(f"topk: k must be in [1, {x.shape[ax] if rank else 1}] for x of shape {list(x.shape)}, got {kk}")
    values, indices = apply(pd.TopKOp, [x], prefix="top_k_v2", name=name, k=kk, axis=ax,
                            largest=bool(largest), sorted=bool(sorted))
    return [values, indices]


def fluid_argmax(x: Any, axis: int = 0) -> Any:
    """`fluid.layers.argmax` (axis defaults to 0)."""
    return argmax(x, axis)


def fluid_argmin(x: Any, axis: int = 0) -> Any:
    """`fluid.layers.argmin` (axis defaults to 0)."""
    return argmin(x, axis)


def fluid_topk(input: Any, k: int, name: str | None = None) -> list[Any]:
    """`fluid.layers.topk`: the k largest along the last axis."""
    return topk(input, k, name=name)


PADDLE = [mean, sum, max, add_n, argmax, argmin, topk]
FUNCTIONAL = [softmax, log_softmax]
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {
    "reduce_sum": reduce_sum,
    "reduce_mean": reduce_mean,
    "reduce_max": reduce_max,
    "mean": fluid_mean,
    "sums": add_n,
    "softmax": fluid_softmax,
    "argmax": fluid_argmax,
    "argmin": fluid_argmin,
    "topk": fluid_topk,
}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "mean": mean, "sum": sum, "max": max, "argmax": argmax, "argmin": argmin, "topk": topk,
    "softmax": softmax, "log_softmax": log_softmax,
}
