"""Lowering of the elementwise family (`dialects/pd/elementwise.py`): binary
arithmetic with Paddle's broadcasting, comparisons, `where`, unary activations and
`cast`.

Every op here is pointwise: its scalar body (arith/math ops on loaded operand
elements) is written once and serves both a materialized `linalg.generic` and the
inlining of the op into each of its readers (fusion, `lowering/lowerer/fusion_plan.py`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloat, IntegerType
from xdsl.dialects import math as xmath
from xdsl.ir import Operation, SSAValue

from pullback.dialects import pd
from pullback.dialects.pd.base import f64, shape_of
from pullback.lowering.registry import pointwise
from pullback.lowering.scalar import (
    APPROX,
    FAST,
    DimMap,
    Scalar,
    aligned_map,
    elem_of_result,
    identity_maps,
    numpy_maps,
    result_shape,
)


def paddle_maps(op: pd.ElementwiseBinaryOp) -> list[DimMap | None]:
    """Operand maps under Paddle's `axis` broadcasting of the binary elementwise ops."""
    axis = op.prop("axis")
    out = result_shape(op)
    sx, sy = (shape_of(v.type) for v in op.operands)
    if axis == -1 or len(sx) == len(sy):
        return numpy_maps(op)
    if len(sx) < len(sy):
        return [aligned_map(sx, out, axis), aligned_map(sy, out, 0)]
    return [aligned_map(sx, out, 0), aligned_map(sy, out, axis)]


# ---------------------------------------------------------------- binary ops


def _powf(s: Scalar, a: SSAValue, b: SSAValue) -> SSAValue:
    """`a ** b`; integers as Paddle's int pow kernels compute them: the power in
    double, converted back (truncating, saturating)."""
    if isinstance(a.type, IntegerType):
        t = a.type
        r = s.emit(xmath.PowFOp(s.convert(a, f64), s.convert(b, f64), FAST))
        return s.convert(r, t)
    return s.emit(xmath.PowFOp(a, b, FAST))


_BINARY: dict[type[Operation], Callable[[Scalar, SSAValue, SSAValue], SSAValue]] = {
    pd.ElementwiseAddOp: Scalar.add,
    pd.ElementwiseSubOp: Scalar.sub,
    pd.ElementwiseMulOp: Scalar.mul,
    pd.ElementwiseDivOp: Scalar.div,
    pd.ElementwiseMaxOp: Scalar.max,
    pd.ElementwiseMinOp: Scalar.min,
    pd.BitwiseAndOp: lambda s, a, b: s.emit(arith.AndIOp(a, b)),
    pd.BitwiseOrOp: lambda s, a, b: s.emit(arith.OrIOp(a, b)),
    pd.BitwiseXorOp: lambda s, a, b: s.emit(arith.XOrIOp(a, b)),
    pd.ElementwisePowOp: lambda s, a, b: _powf(s, a, b),
}


@pointwise(*_BINARY, maps=paddle_maps)
def _binary(s: Scalar, op: pd.ElementwiseBinaryOp, args: list[SSAValue]) -> list[SSAValue]:
    return [_BINARY[type(op)](s, args[0], args[1])]


_COMPARE: dict[type[Operation], str] = {
    pd.GreaterThanOp: "gt",
    pd.GreaterEqualOp: "ge",
    pd.LessThanOp: "lt",
    pd.LessEqualOp: "le",
    pd.EqualOp: "eq",
    pd.NotEqualOp: "ne",
}


@pointwise(*_COMPARE, maps=paddle_maps)
def _compare(s: Scalar, op: pd.CompareOp, args: list[SSAValue]) -> list[SSAValue]:
    return [s.cmp(_COMPARE[type(op)], args[0], args[1])]


@pointwise(pd.WhereOp, maps=numpy_maps)
def _where(s: Scalar, op: pd.WhereOp, args: list[SSAValue]) -> list[SSAValue]:
    return [s.select(*args)]


# ----------------------------------------------------------------- unary ops


def sigmoid(s: Scalar, x: SSAValue) -> SSAValue:
    """`1 / (1 + exp(-x))`.  The exp is marked `afn`: this quotient needs it only in
    the normal range (a tiny exp adds nothing to 1, a huge one only has to give a
    huge quotient's reciprocal), which lets `math-polynomial-approximation` use its
    cheaper f32 exp (`expand_exp_afn`); f64 keeps libm's."""
    one = s.const(1.0, x.type)
    e = s.emit(xmath.ExpOp(s.sub(s.const(0.0, x.type), x), APPROX))
    return s.div(one, s.add(one, e))


def _gelu(s: Scalar, op: pd.GeluOp, x: SSAValue) -> SSAValue:
    t = x.type
    half = s.const(0.5, t)
    one = s.const(1.0, t)
    if op.prop("approximate"):
        cube = s.mul(s.mul(x, x), x)
        inner = s.mul(s.const(math.sqrt(2.0 / math.pi), t), s.add(x, s.mul(s.const(0.044715, t), cube)))
        return s.mul(s.mul(half, x), s.add(one, s.math(xmath.TanhOp, inner)))
    erf = s.math(xmath.ErfOp, s.mul(x, s.const(1.0 / math.sqrt(2.0), t)))
    return s.mul(s.mul(half, x), s.add(one, erf))


def _scale(s: Scalar, op: pd.ScaleOp, x: SSAValue) -> SSAValue:
    t = x.type
    scale = s.const(op.prop("scale"), t)
    bias = s.const(op.prop("bias"), t)
    if op.prop("bias_after_scale"):
        return s.add(s.mul(scale, x), bias)
    return s.mul(scale, s.add(x, bias))


def _abs(s: Scalar, x: SSAValue) -> SSAValue:
    """`|x|`: `fabs` for floats; `x < 0 ? 0 - x : x` for integers (the subtraction
    wraps, so |INT_MIN| is INT_MIN, as numpy's and Paddle's C++ kernels give)."""
    if isinstance(x.type, IntegerType):
        zero = s.const(0, x.type)
        return s.select(s.cmp("lt", x, zero), s.sub(zero, x), x)
    return s.math(xmath.AbsFOp, x)


def _sign(s: Scalar, x: SSAValue) -> SSAValue:
    zero, one = s.const(0.0, x.type), s.const(1.0, x.type)
    neg = s.select(s.cmp("lt", x, zero), s.const(-1.0, x.type), zero)
    return s.select(s.cmp("gt", x, zero), one, neg)


def _clip(s: Scalar, op: pd.ClipOp, x: SSAValue) -> SSAValue:
    lo_v, hi_v = op.bounds()
    lo, hi = s.const(lo_v, x.type), s.const(hi_v, x.type)
    return s.min(s.max(x, lo), hi)


def _pow(s: Scalar, op: pd.PowOp, x: SSAValue) -> SSAValue:
    factor = op.prop("factor")
    if factor == 2.0:
        return s.mul(x, x)
    if factor == 1.0:
        return x
    if isinstance(x.type, IntegerType):
        return _powf(s, x, s.const(factor, f64))
    return _powf(s, x, s.const(factor, x.type))


_UNARY: dict[type[Operation], Callable[[Scalar, Any, SSAValue], SSAValue]] = {
    pd.ReluOp: lambda s, op, x: s.max(x, s.const(0.0, x.type)),
    pd.SigmoidOp: lambda s, op, x: sigmoid(s, x),
    pd.TanhOp: lambda s, op, x: s.math(xmath.TanhOp, x),
    pd.ExpOp: lambda s, op, x: s.math(xmath.ExpOp, x),
    pd.LogOp: lambda s, op, x: s.math(xmath.LogOp, x),
    pd.SqrtOp: lambda s, op, x: s.math(xmath.SqrtOp, x),
    pd.SquareOp: lambda s, op, x: s.mul(x, x),
    pd.AbsOp: lambda s, op, x: _abs(s, x),
    pd.SignOp: lambda s, op, x: _sign(s, x),
    pd.ErfOp: lambda s, op, x: s.math(xmath.ErfOp, x),
    pd.SinOp: lambda s, op, x: s.math(xmath.SinOp, x),
    pd.CosOp: lambda s, op, x: s.math(xmath.CosOp, x),
    pd.TanOp: lambda s, op, x: s.math(xmath.TanOp, x),
    pd.AsinOp: lambda s, op, x: s.math(xmath.AsinOp, x),
    pd.AcosOp: lambda s, op, x: s.math(xmath.AcosOp, x),
    pd.AtanOp: lambda s, op, x: s.math(xmath.AtanOp, x),
    pd.SinhOp: lambda s, op, x: s.math(xmath.SinhOp, x),
    pd.CoshOp: lambda s, op, x: s.math(xmath.CoshOp, x),
    pd.Log1pOp: lambda s, op, x: s.math(xmath.Log1pOp, x),
    pd.Expm1Op: lambda s, op, x: s.math(xmath.ExpM1Op, x),
    pd.FloorOp: lambda s, op, x: s.math(xmath.FloorOp, x),
    pd.CeilOp: lambda s, op, x: s.math(xmath.CeilOp, x),
    # math.round (C's round) rounds halves away from zero, as Paddle does.
    pd.RoundOp: lambda s, op, x: s.math(xmath.RoundOp, x),
    pd.GeluOp: _gelu,
    pd.ScaleOp: _scale,
    pd.PowOp: _pow,
    pd.ClipOp: _clip,
    pd.CastOp: lambda s, op, x: s.convert(x, elem_of_result(op)),
}


@pointwise(*_UNARY, maps=identity_maps)
def _unary(s: Scalar, op: Operation, args: list[SSAValue]) -> list[SSAValue]:
    x = args[0]
    out = elem_of_result(op)
    if isinstance(x.type, IntegerType) and isinstance(out, AnyFloat) and not isinstance(op, pd.CastOp):
        # An integer input autocast to float (the op's `INT_INPUT` is "float32").
        x = s.convert(x, out)
    return [_UNARY[type(op)](s, op, x)]


__all__ = ["paddle_maps", "sigmoid"]
