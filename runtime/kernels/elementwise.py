"""Kernels of the elementwise ops."""

from __future__ import annotations

import math

import numpy as np

from pullback.dialects import pd
from pullback.runtime.interpreter import kernel


def align(op: pd.PdOp, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Apply Paddle's `axis` alignment so that numpy broadcasting does the rest."""
    axis = op.prop("axis")
    if axis == -1 or x.ndim == y.ndim:
        pass
    elif x.ndim > y.ndim:
        y = y.reshape((1,) * axis + y.shape + (1,) * (x.ndim - y.ndim - axis))
    else:
        x = x.reshape((1,) * axis + x.shape + (1,) * (y.ndim - x.ndim - axis))
    check_dynamic_dims_agree(op, x, y)
    return x, y


def check_dynamic_dims_agree(op: pd.PdOp, x: np.ndarray, y: np.ndarray) -> None:
    """Refuse to broadcast a dimension that is dynamic (`?`) in both operand types.

    The typing rule (and so every VJP rule) takes two `?` facing each other to be
    equal; letting numpy broadcast a run-time 1 against n there would make the
    gradient silently wrong.  Declare such a size-1 dimension statically instead.
    """
    tx, ty = (pd.shape_of(v.type) for v in op.operands[:2])
    rank = max(x.ndim, y.ndim)
    sx = (1,) * (rank - len(tx)) + tuple(tx) if len(tx) == x.ndim else None
    sy = (1,) * (rank - len(ty)) + tuple(ty) if len(ty) == y.ndim else None
    if sx is None or sy is None:
        return  # axis-aligned operand: its padded type dims are static 1s anyway
    xs = (1,) * (rank - x.ndim) + x.shape
    ys = (1,) * (rank - y.ndim) + y.shape
    for d, (a, b, n, m) in enumerate(zip(sx, sy, xs, ys)):
        if a == pd.DYN and b == pd.DYN and n != m:
            raise ValueError(
                f"'{op.name}': dimension {d} is dynamic in both operands but has sizes "
                f"{n} and {m} at run time; pullback does not broadcast dimensions that "
                "are unknown on both sides (declare the size-1 dimension statically)"
            )


_BINARY = {
    pd.ElementwiseAddOp: np.add,
    pd.ElementwiseSubOp: np.subtract,
    pd.ElementwiseMulOp: np.multiply,
    pd.ElementwiseDivOp: np.divide,
    pd.ElementwisePowOp: np.power,
    pd.ElementwiseMaxOp: np.maximum,
    pd.ElementwiseMinOp: np.minimum,
    pd.GreaterThanOp: np.greater,
    pd.GreaterEqualOp: np.greater_equal,
    pd.LessThanOp: np.less,
    pd.LessEqualOp: np.less_equal,
    pd.EqualOp: np.equal,
    pd.NotEqualOp: np.not_equal,
}


@kernel(*_BINARY)
def binary(op: pd.PdOp, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Broadcasting binary arithmetic and comparisons."""
    x, y = align(op, x, y)
    if isinstance(op, pd.ElementwiseDivOp) and np.issubdtype(x.dtype, np.integer):
        # Paddle divides integers as C++ does: truncating toward zero.
        q = np.abs(x) // np.abs(y)
        return np.where((x < 0) != (y < 0), -q, q)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _BINARY[type(op)](x, y)


@kernel(pd.WhereOp)
def where(op: pd.WhereOp, c: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`c ? x : y` with broadcasting."""
    return np.where(c, x, y)


_erf = np.vectorize(math.erf, otypes=[np.float64])


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, elementwise, in the input's dtype."""
    return _erf(x).astype(x.dtype)


def _gelu(op: pd.PdOp, x: np.ndarray) -> np.ndarray:
    if op.prop("approximate"):
        c = math.sqrt(2.0 / math.pi)
        return 0.5 * x * (1.0 + np.tanh(c * (x + 0.044715 * x**3)))
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def _scale(op: pd.PdOp, x: np.ndarray) -> np.ndarray:
    s, b = op.prop("scale"), op.prop("bias")
    return s * x + b if op.prop("bias_after_scale") else s * (x + b)


_UNARY = {
    pd.ReluOp: lambda op, x: np.maximum(x, 0),
    pd.SigmoidOp: lambda op, x: 1.0 / (1.0 + np.exp(-x)),
    pd.TanhOp: lambda op, x: np.tanh(x),
    pd.ExpOp: lambda op, x: np.exp(x),
    pd.LogOp: lambda op, x: np.log(x),
    pd.SqrtOp: lambda op, x: np.sqrt(x),
    pd.SquareOp: lambda op, x: x * x,
    pd.AbsOp: lambda op, x: np.abs(x),
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
    pd.PowOp: lambda op, x: np.power(x, op.prop("factor")),
    pd.ClipOp: lambda op, x: np.clip(x, op.prop("min"), op.prop("max")),
    pd.CastOp: lambda op, x: x,  # the interpreter casts every result to its type
}


@kernel(*_UNARY)
def unary(op: pd.PdOp, x: np.ndarray) -> np.ndarray:
    """Activations and other one-operand elementwise ops."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return _UNARY[type(op)](op, x)
