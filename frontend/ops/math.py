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

import numpy as np

from pullback.dialects import pd
from pullback.frontend.core import apply
from pullback.frontend.ops.elementwise import (
    _unary_api,
    abs,
    cast,
    promote,
    check_float_tensor,
    check_float_or_int_tensor,
    check_tensor,
    check_unary_input,
    int_to_float32,
    clip,
    constant_like,
    divide,
    equal,
    full_like,
    greater_equal,
    greater_than,
    is_scalar,
    less_than,
    log,
    multiply,
    not_equal,
    pow,
    scale,
    sign,
    sqrt,
    subtract,
    where,
)
from pullback.frontend.ops.logic import FLOAT_DTYPES, isnan, logical_and
from pullback.frontend.ops.reduction import sum as reduce_sum

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
    check_unary_input(pd.LogOp, "log2", x)
    return scale(log(x), 1.0 / math.log(2.0), name=name)


def log10(x: Any, name: str | None = None) -> Any:
    """`paddle.log10`: `log(x) / ln 10`."""
    check_unary_input(pd.LogOp, "log10", x)
    return scale(log(x), 1.0 / math.log(10.0), name=name)


def rsqrt(x: Any, name: str | None = None) -> Any:
    """`paddle.rsqrt`: `1 / sqrt(x)` (as `x ** -0.5`); an integer x is autocast to
    float32 (Paddle 3.x)."""
    check_float_or_int_tensor("rsqrt", "x", x)
    return pow(int_to_float32(x), -0.5, name=name)


def reciprocal(x: Any, name: str | None = None) -> Any:
    """`paddle.reciprocal`: `1 / x`; an integer x is autocast to float32 (Paddle 3.x)."""
    check_float_or_int_tensor("reciprocal", "x", x)
    x = int_to_float32(x)
    return apply(pd.ElementwiseDivOp, [full_like(x, 1.0), x], prefix="reciprocal", name=name)


# ------------------------------------------------------- division and rounding


def _binary_operands(fn: str, x: Any, y: Any) -> tuple[Any, Any]:
    """Two tensors of one dtype from x and y, a Python scalar becoming a constant
    shaped like the other operand."""
    if is_scalar(x) and is_scalar(y):
        raise TypeError(f"{fn}: at least one of x and y must be a Tensor")
    # Paddle's rule for a Python float with an integer tensor: compute in float32.
    if isinstance(y, float) and not is_scalar(x) and getattr(x, "dtype", None) not in FLOAT_DTYPES:
        check_tensor(fn, "x", x)
        x = cast(x, "float32")
    if isinstance(x, float) and not is_scalar(y) and getattr(y, "dtype", None) not in FLOAT_DTYPES:
        check_tensor(fn, "y", y)
        y = cast(y, "float32")
    if is_scalar(y):
        check_tensor(fn, "x", x)
        y = constant_like(x, y)
    elif is_scalar(x):
        check_tensor(fn, "y", y)
        x = constant_like(y, x)
    check_tensor(fn, "x", x)
    check_tensor(fn, "y", y)
    if x.dtype != y.dtype:
        return promote(fn, x, y)
    return x, y


def _int_floor_fix(x: Any, y: Any) -> tuple[Any, Any]:
    """For integer x, y: the truncated quotient q (Paddle's integer `/`) and the mask
    where the floored quotient is q - 1 (a nonzero remainder whose sign differs from
    the divisor's)."""
    q = divide(x, y)
    r = subtract(x, multiply(q, y))
    zero = constant_like(r, 0)
    fix = logical_and(not_equal(r, zero), not_equal(less_than(r, zero), less_than(y, zero)))
    return q, fix


def floor_divide(x: Any, y: Any, name: str | None = None) -> Any:
    """`paddle.floor_divide`: `x // y` rounded toward -inf (Python's `//`) for
    integer and float tensors; no gradient (the result is piecewise constant)."""
    x, y = _binary_operands("floor_divide", x, y)
    if x.dtype in FLOAT_DTYPES:
        return floor(divide(x, y), name=name)
    q, fix = _int_floor_fix(x, y)
    return where(fix, subtract(q, constant_like(q, 1)), q, name=name)


def remainder(x: Any, y: Any, name: str | None = None) -> Any:
    """`paddle.remainder` (also `mod`, `floor_mod`): `x - floor(x / y) * y`, the
    remainder with the divisor's sign, as Python's `%`.  Gradients (floats) are
    Paddle's: `dout` for x and `-floor(x / y) * dout` for y."""
    x, y = _binary_operands("remainder", x, y)
    if x.dtype in FLOAT_DTYPES:
        return subtract(x, multiply(floor(divide(x, y)), y), name=name)
    q, fix = _int_floor_fix(x, y)
    r = subtract(x, multiply(q, y))
    return where(fix, r + y, r, name=name)


def mod(x: Any, y: Any, name: str | None = None) -> Any:
    """`paddle.mod`: the same as `paddle.remainder`."""
    return remainder(x, y, name=name)


def floor_mod(x: Any, y: Any, name: str | None = None) -> Any:
    """`paddle.floor_mod`: the same as `paddle.remainder`."""
    return remainder(x, y, name=name)


def trunc(input: Any, name: str | None = None) -> Any:  # noqa: A002 (Paddle's name)
    """`paddle.trunc`: round toward zero (integers unchanged); zero gradient."""
    check_tensor("trunc", "input", input)
    if input.dtype not in FLOAT_DTYPES:
        return scale(input, 1.0, name=name)
    return where(greater_equal(input, constant_like(input, 0.0)), floor(input), ceil(input),
                 name=name)


def frac(x: Any, name: str | None = None) -> Any:
    """`paddle.frac`: `x - trunc(x)`, the fractional part with x's sign (gradient 1)."""
    check_tensor("frac", "x", x)
    return subtract(x, trunc(x), name=name)


def neg(x: Any, name: str | None = None) -> Any:
    """`paddle.neg`: `-x`."""
    check_tensor("neg", "x", x)
    return scale(x, -1.0, name=name)


def _float_operand(x: Any) -> Any:
    # Paddle computes atan2 of integers in float64.
    return x if x.dtype in FLOAT_DTYPES else cast(x, "float64")


def atan2(x: Any, y: Any, name: str | None = None) -> Any:
    """`paddle.atan2`: the angle of the point `(y, x)` in `[-pi, pi]` (numpy's
    `arctan2(x, y)`); integer inputs give float64.  Built from `atan` of whichever of
    `x / y` and `y / x` is at most 1 in size, so every selected branch has a finite
    gradient equal to Paddle's (`y / (x^2 + y^2)`, `-x / (x^2 + y^2)`)."""
    check_tensor("atan2", "x", x)
    check_tensor("atan2", "y", y)
    if x.dtype != y.dtype:
        raise TypeError(f"atan2: x ({x.dtype}) and y ({y.dtype}) must have the same dtype")
    x, y = _float_operand(x), _float_operand(y)
    zero, one = constant_like(x, 0.0), constant_like(x, 1.0)
    ax, ay = abs(x), abs(y)
    use_y = greater_equal(ay, ax)  # |x / y| <= 1: atan(x / y) plus the quadrant
    safe_y = where(equal(y, constant_like(y, 0.0)), constant_like(y, 1.0), y)
    safe_x = where(equal(x, zero), one, x)
    quadrant = where(less_than(y, constant_like(y, 0.0)),
                     where(greater_equal(x, zero), constant_like(x, math.pi),
                           constant_like(x, -math.pi)),
                     zero)
    near_axis = atan(divide(x, safe_y)) + quadrant
    off_axis = subtract(scale(sign(x), math.pi / 2), atan(divide(y, safe_x)))
    return where(use_y, near_axis, off_axis, name=name)


def hypot(x: Any, y: Any, name: str | None = None) -> Any:
    """`paddle.hypot`: `sqrt(x^2 + y^2)`."""
    x, y = _binary_operands("hypot", x, y)
    x, y = _float_operand(x), _float_operand(y)
    return sqrt(multiply(x, x) + multiply(y, y), name=name)


def logit(x: Any, eps: float | None = None, name: str | None = None) -> Any:
    """`paddle.logit`: `log(x / (1 - x))`, x first clipped to `[eps, 1 - eps]` when
    `eps` is given (then the gradient is zero outside that range)."""
    check_float_tensor("logit", "x", x)
    if eps is not None:
        x = clip(x, float(eps), 1.0 - float(eps))
    return log(divide(x, scale(x, -1.0, 1.0)), name=name)


def signbit(x: Any, name: str | None = None) -> Any:
    """`paddle.signbit`: True where x's sign bit is set (negative numbers and -0.0)."""
    check_tensor("signbit", "x", x)
    zero = constant_like(x, 0)
    if x.dtype not in FLOAT_DTYPES:
        return less_than(x, zero, name=name)
    # -0.0 == 0, but 1 / -0.0 is -inf
    at_zero = less_than(divide(constant_like(x, 1.0), x), zero)
    return where(equal(x, zero), at_zero, less_than(x, zero), name=name)


def heaviside(x: Any, y: Any, name: str | None = None) -> Any:
    """`paddle.heaviside`: 0 where x < 0, `y` where x == 0, 1 where x > 0 (the
    gradient reaches y where x == 0, as in Paddle)."""
    x, y = _binary_operands("heaviside", x, y)
    zero = constant_like(x, 0)
    step = cast(greater_than(x, zero), x.dtype)
    return where(equal(x, zero), y, step, name=name)


def nan_to_num(x: Any, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None, name: str | None = None) -> Any:
    """`paddle.nan_to_num`: NaN -> `nan`, +inf -> `posinf` (default the dtype's
    largest finite value), -inf -> `neginf` (default its lowest); the gradient
    passes where x is finite and is zero elsewhere."""
    check_float_tensor("nan_to_num", "x", x)
    info = np.finfo(x.dtype)
    hi = float(info.max) if posinf is None else float(posinf)
    lo = float(info.min) if neginf is None else float(neginf)
    inf = constant_like(x, math.inf)
    out = where(equal(x, inf), constant_like(x, hi), x)
    out = where(equal(x, scale(inf, -1.0)), constant_like(x, lo), out)
    return where(isnan(x), constant_like(x, float(nan)), out, name=name)


# ---------------------------------------------------------- NaN-aware reductions


def nansum(x: Any, axis: Any = None, dtype: Any = None, keepdim: bool = False,
           name: str | None = None) -> Any:
    """`paddle.nansum`: `sum` treating NaN as zero (NaN entries get zero gradient)."""
    check_tensor("nansum", "x", x)
    clean = where(isnan(x), constant_like(x, 0.0), x)
    return reduce_sum(clean, axis=axis, dtype=dtype, keepdim=keepdim, name=name)


def nanmean(x: Any, axis: Any = None, keepdim: bool = False, name: str | None = None) -> Any:
    """`paddle.nanmean`: the mean of the non-NaN elements over `axis` (NaN where all
    are NaN)."""
    check_float_tensor("nanmean", "x", x)
    total = nansum(x, axis=axis, keepdim=keepdim)
    count = reduce_sum(cast(_not_nan(x), x.dtype), axis=axis, keepdim=keepdim)
    return divide(total, count, name=name)


def _not_nan(x: Any) -> Any:
    """True where x is not NaN."""
    return equal(x, x)


def count_nonzero(x: Any, axis: Any = None, keepdim: bool = False, name: str | None = None) -> Any:
    """`paddle.count_nonzero`: the int64 number of nonzero elements over `axis`."""
    check_tensor("count_nonzero", "x", x)
    nz = cast(not_equal(x, constant_like(x, 0)), "int64")
    return reduce_sum(nz, axis=axis, keepdim=keepdim, name=name)


# ------------------------------------------------------------------ operators


def _mod_op(self: Any, other: Any) -> Any:
    return remainder(self, other)


def _rmod_op(self: Any, other: Any) -> Any:
    return remainder(other, self)


def _floordiv_op(self: Any, other: Any) -> Any:
    return floor_divide(self, other)


def _rfloordiv_op(self: Any, other: Any) -> Any:
    return floor_divide(other, self)


OPERATORS: dict[str, Callable[..., Any]] = {
    "__mod__": _mod_op, "__rmod__": _rmod_op,
    "__floordiv__": _floordiv_op, "__rfloordiv__": _rfloordiv_op,
}
"""`%` and `//` of Variables/Tensors (and their reflected forms)."""


def install_operators(cls: type) -> None:
    """Attach `%` and `//` (`OPERATORS`) to a Variable/Tensor class."""
    for dunder, fn in OPERATORS.items():
        setattr(cls, dunder, fn)


_ALL: list[Callable[..., Any]] = [sin, cos, tan, asin, acos, atan, sinh, cosh, log1p, expm1, floor, ceil, round,
                               log2, log10, rsqrt, reciprocal]
_NEW: list[Callable[..., Any]] = [floor_divide, remainder, mod, floor_mod, trunc, frac, neg, atan2, hypot, logit,
        signbit, heaviside, nan_to_num, nansum, nanmean, count_nonzero]

PADDLE: list[Callable[..., Any]] = [*_ALL, *_NEW]
FUNCTIONAL: list[Callable[..., Any]] = []
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {f.__name__: f for f in _ALL}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {f.__name__: f for f in [*_ALL, *_NEW]}
