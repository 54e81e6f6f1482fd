"""Paddle's logic functions (`paddle.tensor.logic`): `isnan`/`isinf`/`isfinite`, the
`logical_*` family, `any`/`all`, `isclose`/`allclose`/`equal_all`, and the
type predicates `is_tensor`/`is_floating_point`.

All are composites of existing `pd` ops, so they work in eager and static mode and on
every backend; their results are bool and carry no gradient:

* `isnan(x)` is `x != x`; `isfinite(x)` is `x - x == 0` (NaN for inf and NaN);
  `isinf(x)` is "not finite and not NaN".  Integer and bool inputs are always finite.
* `logical_and(x, y)` is `where(x, y, False)`, `logical_or` `where(x, True, y)`,
  `logical_xor` `x != y`, `logical_not` `x == False`, on operands first made bool
  (nonzero is true), as Paddle accepts any dtype.
* `any`/`all` reduce a float 0/1 copy with `max`/`min`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pullback.dialects.pd.dtypes import PADDLE_FLOAT_NAMES as FLOAT_DTYPES
from pullback.frontend.eager import Tensor
from pullback.frontend.framework import Variable
from pullback.frontend.ops.elementwise import (
    abs,
    cast,
    check_tensor,
    constant_like,
    equal,
    is_scalar,
    less_equal,
    not_equal,
    scale,
    subtract,
    where,
)
from pullback.frontend.ops.reduction import check_axes
from pullback.frontend.ops.reduction import max as reduce_max
from pullback.frontend.ops.statistics import min as reduce_min



def _bool(x: Any) -> Any:
    """x as a bool tensor (nonzero is true)."""
    return x if x.dtype == "bool" else cast(x, "bool")


def _operand(fn: str, arg: str, x: Any, like: Any) -> Any:
    """A logical operand: a tensor made bool, or a Python scalar shaped like `like`."""
    if is_scalar(x) or isinstance(x, bool):
        return constant_like(_bool(like), int(bool(x)))
    check_tensor(fn, arg, x)
    return _bool(x)


def isnan(x: Any, name: str | None = None) -> Any:
    """`paddle.isnan`: True where x is NaN (never for integer or bool x)."""
    check_tensor("isnan", "x", x)
    if x.dtype not in FLOAT_DTYPES:
        return constant_like(_bool(x), 0)
    return not_equal(x, x, name=name)


def isfinite(x: Any, name: str | None = None) -> Any:
    """`paddle.isfinite`: True where x is neither NaN nor +-inf."""
    check_tensor("isfinite", "x", x)
    if x.dtype not in FLOAT_DTYPES:
        return constant_like(_bool(x), 1)
    return equal(subtract(x, x), constant_like(x, 0.0), name=name)


def isinf(x: Any, name: str | None = None) -> Any:
    """`paddle.isinf`: True where x is +inf or -inf."""
    check_tensor("isinf", "x", x)
    if x.dtype not in FLOAT_DTYPES:
        return constant_like(_bool(x), 0)
    return logical_and(logical_not(isfinite(x)), logical_not(isnan(x)), name=name)


def logical_and(x: Any, y: Any, out: Any = None, name: str | None = None) -> Any:
    """`paddle.logical_and`: elementwise `x and y` (nonzero is true), broadcasting."""
    if out is not None:
        raise NotImplementedError("logical_and: 'out' is not supported")
    bx = _operand("logical_and", "x", x, y)
    by = _operand("logical_and", "y", y, x)
    return where(bx, by, constant_like(by, 0), name=name)


def logical_or(x: Any, y: Any, out: Any = None, name: str | None = None) -> Any:
    """`paddle.logical_or`: elementwise `x or y` (nonzero is true), broadcasting."""
    if out is not None:
        raise NotImplementedError("logical_or: 'out' is not supported")
    bx = _operand("logical_or", "x", x, y)
    by = _operand("logical_or", "y", y, x)
    return where(bx, constant_like(by, 1), by, name=name)


def logical_xor(x: Any, y: Any, out: Any = None, name: str | None = None) -> Any:
    """`paddle.logical_xor`: elementwise `x xor y` (nonzero is true), broadcasting."""
    if out is not None:
        raise NotImplementedError("logical_xor: 'out' is not supported")
    bx = _operand("logical_xor", "x", x, y)
    by = _operand("logical_xor", "y", y, x)
    return not_equal(bx, by, name=name)


def logical_not(x: Any, out: Any = None, name: str | None = None) -> Any:
    """`paddle.logical_not`: elementwise `not x` (nonzero is true)."""
    if out is not None:
        raise NotImplementedError("logical_not: 'out' is not supported")
    check_tensor("logical_not", "x", x)
    bx = _bool(x)
    return equal(bx, constant_like(bx, 0), name=name)


def _bool_reduce(fn: str, x: Any, axis: Any, keepdim: bool, use_max: bool) -> Any:
    """`any` (`use_max`) or `all` of x over `axis`, as a bool tensor."""
    check_tensor(fn, "x", x)
    check_axes(fn, x, axis)
    as_float = cast(_bool(x), "float32")
    reduced = (reduce_max if use_max else reduce_min)(as_float, axis=axis, keepdim=keepdim)
    return cast(reduced, "bool")


def any(x: Any, axis: Any = None, keepdim: bool = False, name: str | None = None) -> Any:  # noqa: A001
    """`paddle.any`: whether any element over `axis` (all axes when None) is true."""
    return _bool_reduce("any", x, axis, keepdim, True)


def all(x: Any, axis: Any = None, keepdim: bool = False, name: str | None = None) -> Any:  # noqa: A001
    """`paddle.all`: whether every element over `axis` (all axes when None) is true."""
    return _bool_reduce("all", x, axis, keepdim, False)


def isclose(x: Any, y: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False,
            name: str | None = None) -> Any:
    """`paddle.isclose`: `|x - y| <= atol + rtol * |y|` elementwise (equal values,
    infinities included, are close; NaNs are close to each other only with
    `equal_nan`)."""
    check_tensor("isclose", "x", x)
    check_tensor("isclose", "y", y)
    if x.dtype != y.dtype:
        raise TypeError(f"isclose: x ({x.dtype}) and y ({y.dtype}) must have the same dtype")
    for arg, v in (("rtol", rtol), ("atol", atol)):
        if not is_scalar(v):
            raise TypeError(f"isclose: {arg} must be a float, got {type(v).__name__}")
    if x.dtype not in FLOAT_DTYPES:
        x, y = cast(x, "float64"), cast(y, "float64")
    bound = scale(abs(y), float(rtol), float(atol))
    close = logical_or(equal(x, y), less_equal(abs(subtract(x, y)), bound))
    if equal_nan:
        close = logical_or(close, logical_and(isnan(x), isnan(y)))
    return close


def allclose(x: Any, y: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False,
             name: str | None = None) -> Any:
    """`paddle.allclose`: a 0-D bool tensor, whether `isclose` holds everywhere."""
    return all(isclose(x, y, rtol, atol, equal_nan))


def equal_all(x: Any, y: Any, name: str | None = None) -> Any:
    """`paddle.equal_all`: a 0-D bool tensor, True when x and y have the same shape
    and equal elements."""
    check_tensor("equal_all", "x", x)
    check_tensor("equal_all", "y", y)
    if list(x.shape) != list(y.shape):
        return all(constant_like(reduce_max(cast(x, "float32")), 0.0))
    return all(equal(x, y))


def is_tensor(x: Any) -> bool:
    """`paddle.is_tensor`: whether x is a Tensor (an eager Tensor, or in static mode
    a Variable)."""
    return isinstance(x, (Tensor, Variable))


def is_floating_point(x: Any) -> bool:
    """`paddle.is_floating_point`: whether x has a floating-point dtype."""
    check_tensor("is_floating_point", "x", x)
    return x.dtype in FLOAT_DTYPES


_ALL: list[Callable[..., Any]] = [
    isnan, isinf, isfinite, logical_and, logical_or, logical_xor, logical_not, any, all,
    isclose, allclose, equal_all, is_tensor, is_floating_point,
]

PADDLE: list[Callable[..., Any]] = list(_ALL)
FUNCTIONAL: list[Callable[..., Any]] = []
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in (isnan, isinf, isfinite, logical_and, logical_or, logical_xor,
                            logical_not)
}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in _ALL if f is not is_tensor
}
