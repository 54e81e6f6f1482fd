"""Kernels of the elementwise ops."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

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
    check_dynamic_dims_agree(op, np.broadcast_shapes(c.shape, x.shape, y.shape), (c.shape, x.shape, y.shape))
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
