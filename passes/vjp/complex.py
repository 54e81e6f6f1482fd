"""VJP rules of the complex-number ops, in Paddle's convention: the gradient of a
real loss L with respect to a complex z is `dL/d re(z) + i dL/d im(z)` (see
`passes/vjp/__init__.py`).  None of these ops is holomorphic, so each rule is
written for complex values itself (`complex_aware`)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue

from pullback.dialects import pd
from pullback.dialects.pd.base import elem_of, is_complex
from pullback.passes.vjp import complex_aware, vjp
from pullback.passes.vjp.builder import VjpBuilder

Grads = list["SSAValue | None"]

complex_aware(*pd.COMPLEX_OPS)


def _one(grads: Grads) -> SSAValue:
    (g,) = grads
    assert g is not None
    return g


@vjp(pd.RealOp)
def real_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """L depends on re(x) only: g + 0i."""
    return [b.cast_like(_one(grads), op.operands[0])]


@vjp(pd.ImagOp)
def imag_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """L depends on im(x) only: 0 + g i."""
    g = _one(grads)
    return [b.emit(pd.ComplexOp, b.full_like(g, 0.0), g)]


@vjp(pd.ConjOp)
def conj_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """conj(g) (g itself for a real x)."""
    return [b.conj(_one(grads))]


@vjp(pd.AngleOp)
def angle_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """d atan2(im, re) = (-im, re) / |x|^2: g * i x / |x|^2, 0 at x = 0; of a real x,
    zeros (Paddle's: its angle is piecewise constant)."""
    g = _one(grads)
    x = op.operands[0]
    if not is_complex(elem_of(x.type)):
        return [b.full_like(x, 0.0)]
    ix = b.emit(pd.ComplexOp, b.neg(b.emit(pd.ImagOp, x)), b.emit(pd.RealOp, x))
    r2 = b.emit(pd.SquareOp, b.emit(pd.AbsOp, x))
    zero = b.emit(pd.EqualOp, r2, b.full_like(r2, 0.0))
    safe = b.emit(pd.WhereOp, zero, b.full_like(r2, 1.0), r2)
    return [b.mul(b.cast_like(g, x), b.div(ix, b.cast_like(safe, x)))]


@vjp(pd.ComplexOp)
def complex_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """(re(g), im(g)), each summed back to its operand's shape."""
    g = _one(grads)
    re, im = op.operands
    return [b.unbroadcast(b.emit(pd.RealOp, g), re), b.unbroadcast(b.emit(pd.ImagOp, g), im)]


@vjp(pd.AsComplexOp)
def as_complex_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """The gradient's parts on the last axis."""
    return [b.emit(pd.AsRealOp, _one(grads))]


@vjp(pd.AsRealOp)
def as_real_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """The last axis's pairs as complex gradients."""
    return [b.emit(pd.AsComplexOp, _one(grads))]
