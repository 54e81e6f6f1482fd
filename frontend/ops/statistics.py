"""Paddle's reductions beyond sum/mean/max: `min`, `amax`/`amin`, `prod`, `logsumexp`,
`var`, `std`, `cumsum`, `cumprod` (`norm` is in the `linalg` family).

`min`/`amax`/`amin` (`pd.reduce_min`/`pd.reduce_max`) split the gradient evenly
among ties (as Paddle's `amax`/`amin`; Paddle's `max`/`min` give every tied entry
the whole gradient).  `logsumexp`, `var` and `std` are composites:
`logsumexp = m + log(sum(exp(x - m)))` with `m` the maximum (its gradient cancels
exactly, and the sum is >= 1); `var` divides by `n - 1` when `unbiased`.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from typing import Any

from pullback.dialects.pd.dtypes import to_dtype_name
from pullback.dialects import pd
from pullback.frontend.core import apply
from pullback.frontend.ops.elementwise import (
    cast,
    check_float_tensor,
    check_tensor,
    exp,
    log,
    scale,
    sqrt,
    square,
)
from pullback.frontend.ops.reduction import Axis, check_axes, mean, sum
from pullback.frontend.ops.reduction import max as reduce_max
from pullback.frontend.ops.shape import reshape


def _reduce(op_cls: type[pd.PdOp], prefix: str, x: Any, axis: Axis, keepdim: bool,
            name: str | None) -> Any:
    check_tensor(prefix, "x", x)
    axes = check_axes(prefix, x, axis)
    return apply(op_cls, [x], prefix=prefix, name=name, axis=axes, keepdim=bool(keepdim))


def min(x: Any, axis: Axis = None, keepdim: bool = False, name: str | None = None) -> Any:
    """`paddle.min`: the minimum over `axis` (all when None)."""
    return _reduce(pd.ReduceMinOp, "reduce_min", x, axis, keepdim, name)


def amax(x: Any, axis: Axis = None, keepdim: bool = False, name: str | None = None) -> Any:
    """`paddle.amax`: the maximum, the gradient split evenly among ties."""
    return _reduce(pd.ReduceMaxOp, "reduce_amax", x, axis, keepdim, name)


def amin(x: Any, axis: Axis = None, keepdim: bool = False, name: str | None = None) -> Any:
    """`paddle.amin`: the minimum, the gradient split evenly among ties."""
    return _reduce(pd.ReduceMinOp, "reduce_amin", x, axis, keepdim, name)


def prod(x: Any, axis: Axis = None, keepdim: bool = False, dtype: Any = None,
         name: str | None = None) -> Any:
    """`paddle.prod`: the product over `axis` (all when None); `dtype` casts first."""
    check_tensor("prod", "x", x)
    if dtype is not None:
        x = cast(x, to_dtype_name(dtype, "prod"))
    check_float_tensor("prod", "x", x)
    return _reduce(pd.ReduceProdOp, "reduce_prod", x, axis, keepdim, name)


def logsumexp(x: Any, axis: Axis = None, keepdim: bool = False, name: str | None = None) -> Any:
    """`paddle.logsumexp`: `log(sum(exp(x)))` over `axis`, computed stably as
    `m + log(sum(exp(x - m)))` with `m` the maximum (whose gradient cancels exactly)."""
    check_float_tensor("logsumexp", "x", x)
    red = check_axes("logsumexp", x, axis) or None
    m = reduce_max(x, axis=red, keepdim=True)
    s = log(sum(exp(x - m), axis=red, keepdim=keepdim))
    return s + (m if keepdim else reduce_max(x, axis=red, keepdim=False))


def _count(fn: str, x: Any, axes: list[int]) -> int:
    rank = len(x.shape)
    red = [a % builtins.max(rank, 1) for a in axes] if axes else list(range(rank))
    dims = [x.shape[a] for a in red] if rank else [1]
    if any(d < 0 for d in dims):
        raise ValueError(f"{fn}: the reduced dimensions of {list(x.shape)} must be static")
    return math.prod(dims)


def var(x: Any, axis: Axis = None, unbiased: bool = True, keepdim: bool = False,
        name: str | None = None) -> Any:
    """`paddle.var`: the variance over `axis`, divided by `n - 1` when `unbiased`."""
    check_float_tensor("var", "x", x)
    axes = check_axes("var", x, axis)
    n = _count("var", x, axes)
    dev = square(x - mean(x, axis=axes or None, keepdim=True))
    total = sum(dev, axis=axes or None, keepdim=keepdim)
    denom = n - 1 if unbiased else n
    return scale(total, 1.0 / denom if denom > 0 else float("nan"), name=name)


def std(x: Any, axis: Axis = None, unbiased: bool = True, keepdim: bool = False,
        name: str | None = None) -> Any:
    """`paddle.std`: the square root of `var`."""
    return sqrt(var(x, axis, unbiased, keepdim), name=name)


def _scan(op_cls: type[pd.PdOp], fn: str, prefix: str, x: Any, axis: Any, dtype: Any,
          name: str | None) -> Any:
    check_tensor(fn, "x", x)
    if dtype is not None:
        x = cast(x, to_dtype_name(dtype, fn))
    if axis is None:
        x = reshape(x, [-1])
        axis = 0
    rank = builtins.max(len(x.shape), 1)
    if isinstance(axis, bool) or not isinstance(axis, int) or not -rank <= axis < rank:
        raise ValueError(f"{fn}: axis {axis!r} is out of range for a {len(x.shape)}-D input")
    return apply(op_cls, [x], prefix=prefix, name=name, axis=int(axis))


def cumsum(x: Any, axis: int | None = None, dtype: Any = None, name: str | None = None) -> Any:
    """`paddle.cumsum`: the running sum along `axis` (of the flattened x when None)."""
    return _scan(pd.CumsumOp, "cumsum", "cumsum", x, axis, dtype, name)


def cumprod(x: Any, dim: int | None = None, dtype: Any = None, name: str | None = None) -> Any:
    """`paddle.cumprod`: the running product along `dim` (of the flattened x when
    None).  Its gradient divides by x, so an exact zero in x gives NaN or inf there."""
    if x is not None and dtype is None:
        check_float_tensor("cumprod", "x", x)
    return _scan(pd.CumprodOp, "cumprod", "cumprod", x, dim, dtype, name)


PADDLE: list[Callable[..., Any]] = [min, amax, amin, prod, logsumexp, var, std, cumsum, cumprod]
FUNCTIONAL: list[Callable[..., Any]] = []
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {"cumsum": cumsum}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {f.__name__: f for f in PADDLE}
