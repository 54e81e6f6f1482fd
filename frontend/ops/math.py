"""Paddle's elementwise math functions beyond the basic activations: trigonometric and
hyperbolic functions, `log1p`/`expm1`, `log2`/`log10`, `rsqrt`, `reciprocal` and the
rounding functions.

Functions with an op of their own (`pd.sin`, `pd.log1p`, `pd.floor`, ...) map to it;
`log2`, `log10`, `rsqrt` and `reciprocal` are composites of existing ops (a scaled
`log`, `pow(x, -0.5)`, `1 / x`) whose values agree with Paddle's kernels to rounding
and whose gradients (Paddle's: `1 / (x ln 2)`, `-0.5 x^-1.5`, `-1 / x^2`) come from
the ops' VJP rules.  `floor`, `ceil` and `round` have a zero gradient, as in Paddle.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from pullback.dialects import pd
from pullback.frontend.core import apply
from pullback.frontend.ops.elementwise import (
    _unary_api,
    check_float_tensor,
    full_like,
    log,
    pow,
    scale,
)

sin = _unary_api(pd.SinOp, "sin")
cos = _unary_api(pd.CosOp, "cos")
tan = _unary_api(pd.TanOp, "tan")
asin = _unary_api(pd.AsinOp, "asin")
acos = _unary_api(pd.AcosOp, "acos")
atan = _unary_api(pd.AtanOp, "atan")
sinh = _unary_api(pd.SinhOp, "sinh")
cosh = _unary_api(pd.CoshOp, "cosh")
log1p = _unary_api(pd.Log1pOp, "log1p")
expm1 = _unary_api(pd.Expm1Op, "expm1")
floor = _unary_api(pd.FloorOp, "floor")
ceil = _unary_api(pd.CeilOp, "ceil")


def round(x: Any, decimals: int = 0, name: str | None = None) -> Any:
    """`paddle.round`: to the nearest integer, halves away from zero (`round(-0.5)`
    is -1); `decimals` rounds to that many decimal places (`round(x * 10**d) / 10**d`).
    The gradient is zero."""
    check_float_tensor("round", "x", x)
    if isinstance(decimals, bool) or not isinstance(decimals, int):
        raise TypeError(f"round: decimals must be an int, got {decimals!r}")
    if decimals == 0:
        return apply(pd.RoundOp, [x], prefix="round", name=name)
    f = 10.0 ** decimals
    return scale(apply(pd.RoundOp, [scale(x, f)], prefix="round"), 1.0 / f, name=name)


def log2(x: Any, name: str | None = None) -> Any:
    """`paddle.log2`: `log(x) / ln 2`."""
    check_float_tensor("log2", "x", x)
    return scale(log(x), 1.0 / math.log(2.0), name=name)


def log10(x: Any, name: str | None = None) -> Any:
    """`paddle.log10`: `log(x) / ln 10`."""
    check_float_tensor("log10", "x", x)
    return scale(log(x), 1.0 / math.log(10.0), name=name)


def rsqrt(x: Any, name: str | None = None) -> Any:
    """`paddle.rsqrt`: `1 / sqrt(x)` (as `x ** -0.5`)."""
    check_float_tensor("rsqrt", "x", x)
    return pow(x, -0.5, name=name)


def reciprocal(x: Any, name: str | None = None) -> Any:
    """`paddle.reciprocal`: `1 / x`."""
    check_float_tensor("reciprocal", "x", x)
    return apply(pd.ElementwiseDivOp, [full_like(x, 1.0), x], prefix="reciprocal", name=name)


_ALL = [sin, cos, tan, asin, acos, atan, sinh, cosh, log1p, expm1, floor, ceil, round,
        log2, log10, rsqrt, reciprocal]

PADDLE: list[Callable[..., Any]] = list(_ALL)
FUNCTIONAL: list[Callable[..., Any]] = []
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {f.__name__: f for f in _ALL}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {f.__name__: f for f in _ALL}
