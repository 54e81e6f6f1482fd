"""Kernels of the elementwise ops."""

from __future__ import annotations

import math
from typing import Any
from collections.abc import Callable, Sequence

import numpy as np
from numpy.polynomial import Chebyshev

from pullback.dialects import pd
from pullback.runtime.interpreter import kernel


def align(op: pd.PdOp, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Apply Paddle's `axis` alignment so that numpy broadcasting does the rest."""
    axis = op.prop("axis")
    shapes = (x.shape, y.shape)
    if axis == -1 or x.ndim == y.ndim:
        offsets = None  # numpy's right alignment
    elif x.ndim > y.ndim:
        y = y.reshape((1,) * axis + y.shape + (1,) * (x.ndim - y.ndim - axis))
        offsets = (0, axis)
    else:
        x = x.reshape((1,) * axis + x.shape + (1,) * (y.ndim - x.ndim - axis))
        offsets = (axis, 0)
    check_dynamic_dims_agree(op, np.broadcast_shapes(x.shape, y.shape), shapes, offsets)
    return x, y


def check_dynamic_dims_agree(
    op: pd.PdOp,
    out: tuple[int, ...],
    shapes: Sequence[tuple[int, ...]],
    offsets: Sequence[int] | None = None,
) -> None:
    """Refuse to broadcast a dimension declared dynamic (`pd.dynamic_broadcast_error`,
    the rule the compiled backends check too).  `shapes` are the operands' run-time
    shapes, placed into the result's dimensions from `offsets` (default: right-aligned,
    as numpy broadcasts)."""
    for i, (v, shape) in enumerate(zip(op.operands, shapes)):
        offset = len(out) - len(shape) if offsets is None else offsets[i]
        error = pd.dynamic_broadcast_error(
            op.name, pd.shape_of(v.type), shape, out, [offset + j for j in range(len(shape))]
        )
        if error is not None:
            raise ValueError(error)


BINARY_NUMPY: dict[type[pd.PdOp], Callable[..., np.ndarray]] = {
    pd.ElementwiseAddOp: np.add,
    pd.ElementwiseSubOp: np.subtract,
    pd.ElementwiseMulOp: np.multiply,
    pd.ElementwiseDivOp: np.divide,
    pd.ElementwisePowOp: np.power,
    pd.ElementwiseMaxOp: np.maximum,
    pd.ElementwiseMinOp: np.minimum,
    pd.BitwiseAndOp: np.bitwise_and,
    pd.BitwiseOrOp: np.bitwise_or,
    pd.BitwiseXorOp: np.bitwise_xor,
    pd.GreaterThanOp: np.greater,
    pd.GreaterEqualOp: np.greater_equal,
    pd.LessThanOp: np.less,
    pd.LessEqualOp: np.less_equal,
    pd.EqualOp: np.equal,
    pd.NotEqualOp: np.not_equal,
}


"""The numpy function of each binary op (on floats, and on integers but for `/` and
`**`): the kernel below applies it after Paddle's axis alignment, and eager mode's
fast path (`frontend/eager.py`) calls it directly."""


@kernel(*BINARY_NUMPY)
def binary(op: pd.PdOp, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Broadcasting binary arithmetic and comparisons."""
    x, y = align(op, x, y)
    if isinstance(op, pd.ElementwiseDivOp) and np.issubdtype(x.dtype, np.integer):
        # Paddle divides integers as C++ does: truncating toward zero.
        q = np.abs(x) // np.abs(y)
        return np.where((x < 0) != (y < 0), -q, q)
    if isinstance(op, pd.ElementwisePowOp) and np.issubdtype(x.dtype, np.integer):
        return int_power(x, y)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return BINARY_NUMPY[type(op)](x, y)


@kernel(pd.WhereOp)
def where(op: pd.WhereOp, c: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`c ? x : y` with broadcasting."""
    check_dynamic_dims_agree(op, np.broadcast_shapes(c.shape, x.shape, y.shape), (c.shape, x.shape, y.shape))
    return np.where(c, x, y)


def _chebyshev(f: Callable[[float], float], lo: float, hi: float, deg: int) -> Chebyshev:
    """The degree-`deg` interpolant of `f` at Chebyshev points of [lo, hi]: within a
    few ulps of the best polynomial approximation for the smooth functions below."""
    return Chebyshev.interpolate(lambda t: np.array([f(float(v)) for v in t]), deg, domain=[lo, hi])


def _clenshaw(series: Chebyshev, x: np.ndarray) -> np.ndarray:
    """`series(x)` by Clenshaw's recurrence with in-place updates (numpy's own
    evaluation allocates several temporaries per term)."""
    lo, hi = series.domain
    y = x * (2.0 / (hi - lo))
    y -= (hi + lo) / (hi - lo)
    y2 = y * 2.0
    c = series.coef
    b1, b2 = np.zeros_like(y), np.zeros_like(y)
    for ck in c[:0:-1]:
        b0 = y2 * b1
        b0 -= b2
        b0 += ck
        b1, b2 = b0, b1
    b1 *= y
    b1 -= b2
    b1 += c[0]
    return b1


# erf, vectorized: two interpolants of libm's own erf/erfc, fitted once at import,
#   |x| < 1:      erf(x) = x * E(x^2), E(t) = erf(sqrt t) / sqrt t (even, entire);
#   1 <= |x| < c: erf(x) = 1 - exp(-x^2) * R(1/|x|), R(u) = erfc(1/u) exp(1/u^2)
#                 (the scaled erfc: smooth, about u / sqrt(pi));
#   |x| >= c:     erf(x) = sign(x), c chosen so that erfc(c) is below half an ulp of 1.
# Both branches run on the whole array (cheaper than gathering the elements of
# each), clamped into their domains, and `where` picks.  Per precision: degrees and
# cutoff, and the worst relative error against libm measured on a dense grid
# (tests/unit/ops/elementwise/test_elementwise_ops.py checks it).
def _erf_fits(small_deg: int, mid_deg: int, cutoff: float) -> tuple[Chebyshev, Chebyshev, float]:
    small = _chebyshev(
        lambda t: math.erf(math.sqrt(t)) / math.sqrt(t) if t > 0 else 2 / math.sqrt(math.pi),
        0.0, 1.0, small_deg,
    )
    mid = _chebyshev(lambda u: math.erfc(1 / u) * math.exp(1 / (u * u)), 1 / cutoff, 1.0, mid_deg)
    return small, mid, cutoff


_ERF_FITS = {
    np.dtype(np.float64): _erf_fits(10, 20, 6.0),  # ~2e-15 relative
    np.dtype(np.float32): _erf_fits(6, 8, 4.0),  # ~4e-9 relative, well below float32's ulp
}


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, elementwise, in the input's dtype (computed in float64 to
    the input precision's accuracy; NaN stays NaN, erf(+-inf) = +-1, erf(-0) = -0)."""
    dtype = np.asarray(x).dtype
    small, mid, cutoff = _ERF_FITS.get(dtype, _ERF_FITS[np.dtype(np.float64)])
    a = np.asarray(x, dtype=np.float64)
    ax = np.abs(a)
    s = np.minimum(ax, 1.0)
    near = s * _clenshaw(small, s * s)
    m = np.clip(ax, 1.0, cutoff)  # NaN stays NaN
    far = 1.0 - np.exp(-m * m) * _clenshaw(mid, 1.0 / m)
    return np.copysign(np.where(ax < 1.0, near, far), a).astype(dtype, copy=False)


def _gelu(op: pd.PdOp, x: np.ndarray) -> np.ndarray:
    if op.prop("approximate"):
        c = math.sqrt(2.0 / math.pi)
        return 0.5 * x * (1.0 + np.tanh(c * (x + 0.044715 * x**3)))
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def _scale(op: pd.PdOp, x: np.ndarray) -> np.ndarray:
    s, b = op.prop("scale"), op.prop("bias")
    return s * x + b if op.prop("bias_after_scale") else s * (x + b)


def _cast(op: pd.PdOp, x: np.ndarray) -> np.ndarray:
    row = pd.DTYPE_BY_ELEM[pd.elem_of(op.results[0].type)]
    out = row.numpy
    if x.dtype.kind == "c" and row.kind != "c":
        x = x.real  # Paddle's complex -> real cast keeps the real part (numpy's too, with a warning)
    if x.dtype.kind == "f" and row.kind in "iu":  # (not bfloat16's uint16 storage)
        if out.itemsize < 4:
            # Paddle (C++ static_cast through int) and the compiled code: truncated,
            # saturated into int32, then wrapped (-3.7 -> uint8 253, 300.0 -> 44).
            return to_int_saturating(x, np.dtype(np.int32)).astype(out)
        return to_int_saturating(x, out)
    return x  # the interpreter casts every result to its type


def int_power(x: np.ndarray, y: np.ndarray | np.float64) -> np.ndarray:
    """`x ** y` for an integer x (Paddle's int pow kernels): the power in double,
    truncated toward zero and saturated as the compiled code's conversion does (NaN
    is 0, out-of-range values the dtype's extremes)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        r = np.power(x.astype(np.float64), np.asarray(y, dtype=np.float64))
    return to_int_saturating(r, x.dtype)


def to_int_saturating(r: np.ndarray, dtype: np.dtype[Any]) -> np.ndarray:
    """Float values converted to the integer `dtype` as the compiled code converts
    them (`llvm.fptosi.sat`): truncated toward zero, NaN is 0, out-of-range values
    the dtype's extremes (numpy's own cast leaves those undefined)."""
    info = np.iinfo(dtype)
    out = np.zeros(r.shape, dtype)
    inside = (r > info.min) & (r < info.max)
    out[inside] = r[inside].astype(dtype)
    out[r >= info.max] = info.max
    out[r <= info.min] = info.min
    return out


def _pow(op: pd.PdOp, x: np.ndarray) -> np.ndarray:
    factor = op.prop("factor")
    if x.dtype.kind == "i":
        if factor in (1.0, 2.0):
            return x * x if factor == 2.0 else x  # wrapping, as the compiled product
        return int_power(x, np.float64(factor))
    return np.power(x, factor)


def relu(x: np.ndarray) -> np.ndarray:
    """`pd.relu`'s numpy function (eager mode's fast path calls it directly)."""
    return np.maximum(x, 0)


_UNARY = {
    pd.ReluOp: lambda op, x: relu(x),
    pd.SigmoidOp: lambda op, x: 1.0 / (1.0 + np.exp(-x)),
    pd.TanhOp: lambda op, x: np.tanh(x),
    pd.ExpOp: lambda op, x: np.exp(x),
    pd.LogOp: lambda op, x: np.log(x),
    pd.SqrtOp: lambda op, x: np.sqrt(x),
    pd.SquareOp: lambda op, x: x * x,
    pd.AbsOp: lambda op, x: np.abs(x),  # |INT_MIN| wraps to INT_MIN, as in C++
    pd.SignOp: lambda op, x: np.sign(x),
    pd.ErfOp: lambda op, x: erf(x),
    pd.SinOp: lambda op, x: np.sin(x),
    pd.CosOp: lambda op, x: np.cos(x),
    pd.TanOp: lambda op, x: np.tan(x),
    pd.AsinOp: lambda op, x: np.arcsin(x),
    pd.AcosOp: lambda op, x: np.arccos(x),
    pd.AtanOp: lambda op, x: np.arctan(x),
    pd.SinhOp: lambda op, x: np.sinh(x),
    pd.CoshOp: lambda op, x: np.cosh(x),
    pd.Log1pOp: lambda op, x: np.log1p(x),
    pd.Expm1Op: lambda op, x: np.expm1(x),
    pd.FloorOp: lambda op, x: np.floor(x),
    pd.CeilOp: lambda op, x: np.ceil(x),
    # Halves away from zero (C's round), not numpy's round-half-to-even.
    pd.RoundOp: lambda op, x: np.copysign(np.floor(np.abs(x) + 0.5), x),
    pd.GeluOp: _gelu,
    pd.ScaleOp: _scale,
    pd.PowOp: lambda op, x: _pow(op, x),
    pd.ClipOp: lambda op, x: np.clip(x, *op.bounds()),
    pd.CastOp: lambda op, x: _cast(op, x),
}


@kernel(*_UNARY)
def unary(op: pd.PdOp, x: np.ndarray) -> np.ndarray:
    """Activations and other one-operand elementwise ops.  An integer x of an op
    whose result is float (its `INT_INPUT` is "float32") is converted first, so the
    op computes in the result's precision as Paddle's autocast does."""
    out = pd.DTYPE_BY_ELEM[pd.elem_of(op.results[0].type)].compute
    if x.dtype.kind in "iu" and out.kind == "f":
        x = x.astype(out)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _UNARY[type(op)](op, x)
