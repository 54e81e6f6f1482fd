"""VJP rules of the elementwise ops.

Binary rules compute the full-shaped gradient of each operand with the op's own
`axis` (so a lower-rank operand aligned at `axis` broadcasts the same way as in the
forward op), then sum it back to the operand's shape with `b.unbroadcast`.  Every
rule is made of differentiable `pd` ops, so second derivatives come for free; masks
come from comparisons, which carry no gradient.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue

from pullback.dialects import pd
from pullback.dialects.pd.base import INT_TYPES, dtype_name, elem_of, is_complex
from pullback.passes.vjp import VJP_RULES, VjpRule, complex_aware, non_differentiable, vjp
from pullback.passes.vjp.builder import VjpBuilder

Grads = list["SSAValue | None"]

non_differentiable(
    pd.BitwiseAndOp,
    pd.BitwiseOrOp,
    pd.BitwiseXorOp,
    pd.GreaterThanOp,
    pd.GreaterEqualOp,
    pd.LessThanOp,
    pd.LessEqualOp,
    pd.EqualOp,
    pd.NotEqualOp,
    pd.SignOp,
    # Piecewise constant: Paddle's gradient is zero everywhere.
    pd.FloorOp,
    pd.CeilOp,
    pd.RoundOp,
)


# --------------------------------------------------------------------- helpers


def binary(b: VjpBuilder, op_cls: type[pd.PdOp], x: SSAValue, y: SSAValue, axis: int) -> SSAValue:
    """`op_cls(x, y)` with the forward op's `axis` alignment."""
    return b.emit(op_cls, x, y, axis=axis)


def select(b: VjpBuilder, mask: SSAValue, g: SSAValue) -> tuple[SSAValue, SSAValue]:
    """`(where(mask, g, 0), where(mask, 0, g))`: g routed by a bool mask."""
    zeros = b.full_like(g, 0.0)
    return b.emit(pd.WhereOp, mask, g, zeros), b.emit(pd.WhereOp, mask, zeros, g)


def _bin_operands(op: Operation) -> tuple[SSAValue, SSAValue, SSAValue, int]:
    """`(x, y, out, axis)` of a binary elementwise op."""
    assert isinstance(op, pd.ElementwiseBinaryOp)
    return op.x, op.y, op.out, op.prop("axis")


# ----------------------------------------------------------------- binary ops


@vjp(pd.ElementwiseAddOp)
def add_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """d(x + y) = (g, g), each summed back to its operand's shape."""
    x, y, _, axis = _bin_operands(op)
    (g,) = grads
    assert g is not None
    return [b.unbroadcast(g, x, axis), b.unbroadcast(g, y, axis)]


@vjp(pd.ElementwiseSubOp)
def sub_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """d(x - y) = (g, -g)."""
    x, y, _, axis = _bin_operands(op)
    (g,) = grads
    assert g is not None
    return [b.unbroadcast(g, x, axis), b.unbroadcast(b.neg(g), y, axis)]


@vjp(pd.ElementwiseMulOp)
def mul_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """d(x * y) = (g * y, g * x)."""
    x, y, _, axis = _bin_operands(op)
    (g,) = grads
    assert g is not None
    dx = binary(b, pd.ElementwiseMulOp, g, y, axis)
    dy = binary(b, pd.ElementwiseMulOp, g, x, axis)
    return [b.unbroadcast(dx, x, axis), b.unbroadcast(dy, y, axis)]


@vjp(pd.ElementwiseDivOp)
def div_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """d(x / y) = (g / y, -g * out / y)."""
    x, y, out, axis = _bin_operands(op)
    (g,) = grads
    assert g is not None
    dx = binary(b, pd.ElementwiseDivOp, g, y, axis)
    dy = b.neg(binary(b, pd.ElementwiseDivOp, b.mul(g, out), y, axis))
    return [b.unbroadcast(dx, x, axis), b.unbroadcast(dy, y, axis)]


@vjp(pd.ElementwisePowOp)
def pow_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """d(x ** y) = (g * y * x ** (y - 1), g * out * log(x)), with the limits at the
    points where those products are 0 * inf: `dx = 0` where `y == 0` (x ** 0 is
    constant), `dy = 0` where `x == 0` and `y >= 0` (0 ** y is 0 for every y > 0).

    Paddle's `elementwise_pow_grad` evaluates the raw products there and gives NaN
    (and -inf for dy at x = y = 0; PaddlePaddle/Paddle#45054); we give the limits,
    as PyTorch does.  Elsewhere (x < 0: NaN for dy; 0 < y < 1 at x = 0: +inf for dx)
    the values are Paddle's.

    Integer operands get no gradient here (Paddle's int `elementwise_pow_grad` mixes
    int and double arithmetic in a way no pd op spells; eager mode stops gradients
    at integer tensors anyway)."""
    x, y, out, axis = _bin_operands(op)
    if elem_of(x.type) in INT_TYPES:
        return [None, None]
    (g,) = grads
    assert g is not None
    zeros = b.full_like(out, 0.0)
    zeros_x, zeros_y = b.full_like(x, 0.0), b.full_like(y, 0.0)
    y_is_0 = binary(b, pd.EqualOp, zeros_x, y, axis)  # full shape, as every mask here
    x_is_0 = binary(b, pd.EqualOp, x, zeros_y, axis)
    y_nonneg = binary(b, pd.LessEqualOp, zeros_x, y, axis)
    x_pow = binary(b, pd.ElementwisePowOp, x, b.scale(y, 1.0, -1.0), axis)
    dx = binary(b, pd.ElementwiseMulOp, x_pow, y, axis)
    dx = b.mul(g, b.emit(pd.WhereOp, y_is_0, zeros, dx))
    dy = binary(b, pd.ElementwiseMulOp, b.mul(g, out), b.emit(pd.LogOp, x), axis)
    dy = b.emit(pd.WhereOp, x_is_0, b.emit(pd.WhereOp, y_nonneg, zeros, dy), dy)
    return [b.unbroadcast(dx, x, axis), b.unbroadcast(dy, y, axis)]


@vjp(pd.ElementwiseMaxOp, pd.ElementwiseMinOp)
def max_min_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """Paddle's rule: max gives g to x where x > y, else to y (min: where x < y)."""
    x, y, _, axis = _bin_operands(op)
    (g,) = grads
    assert g is not None
    cmp = pd.GreaterThanOp if isinstance(op, pd.ElementwiseMaxOp) else pd.LessThanOp
    dx, dy = select(b, binary(b, cmp, x, y, axis), g)
    return [b.unbroadcast(dx, x, axis), b.unbroadcast(dy, y, axis)]


@vjp(pd.WhereOp)
def where_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """d where(c, x, y) = (none, g where c, g where not c)."""
    assert isinstance(op, pd.WhereOp)
    (g,) = grads
    assert g is not None
    dx, dy = select(b, op.condition, g)
    return [None, b.unbroadcast(dx, op.x), b.unbroadcast(dy, op.y)]


# ------------------------------------------------------------------ unary ops


def _unary(op: Operation, grads: Grads) -> tuple[SSAValue, SSAValue, SSAValue]:
    """`(x, out, g)` of a one-operand op."""
    (g,) = grads
    assert g is not None and len(op.operands) == 1
    return op.operands[0], op.results[0], g


@vjp(pd.ReluOp)
def relu_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """g where x > 0: `g * sign(relu(x))`, two ops reusing the forward result
    (sign(relu(x)) is 1 where x > 0 and 0 elsewhere; sign has a zero derivative,
    so second derivatives stay right)."""
    _, out, g = _unary(op, grads)
    return [b.mul(g, b.emit(pd.SignOp, out))]


@vjp(pd.SigmoidOp)
def sigmoid_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """g * out * (1 - out)."""
    _, out, g = _unary(op, grads)
    return [b.mul(g, b.mul(out, b.scale(out, -1.0, 1.0)))]


@vjp(pd.TanhOp)
def tanh_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """g * (1 - out ** 2)."""
    _, out, g = _unary(op, grads)
    return [b.mul(g, b.scale(b.emit(pd.SquareOp, out), -1.0, 1.0))]


@vjp(pd.ExpOp)
def exp_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """g * out."""
    _, out, g = _unary(op, grads)
    return [b.mul(g, out)]


@vjp(pd.LogOp)
def log_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """g / x."""
    x, _, g = _unary(op, grads)
    return [b.div(g, x)]


@vjp(pd.SqrtOp)
def sqrt_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """g / (2 * out)."""
    _, out, g = _unary(op, grads)
    return [b.scale(b.div(g, out), 0.5)]


@vjp(pd.SquareOp)
def square_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """2 * x * g."""
    x, _, g = _unary(op, grads)
    return [b.mul(g, b.scale(x, 2.0))]


@vjp(pd.AbsOp)
def abs_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """g * sign(x) (0 at x = 0, as in Paddle).  Of a complex x: g * x / |x| (the
    gradient `d|x|/d re + i d|x|/d im`; 0 at x = 0, as Paddle's)."""
    x, out, g = _unary(op, grads)
    if is_complex(elem_of(x.type)):
        zero = b.emit(pd.EqualOp, out, b.full_like(out, 0.0))
        safe = b.emit(pd.WhereOp, zero, b.full_like(out, 1.0), out)
        return [b.mul(b.cast_like(g, x), b.div(x, b.cast_like(safe, x)))]
    return [b.mul(g, b.emit(pd.SignOp, x))]


def erf_derivative(b: VjpBuilder, x: SSAValue) -> SSAValue:
    """`erf'(x) = 2 / sqrt(pi) * exp(-x ** 2)`."""
    return b.scale(b.emit(pd.ExpOp, b.scale(b.emit(pd.SquareOp, x), -1.0)), 2.0 / math.sqrt(math.pi))


@vjp(pd.ErfOp)
def erf_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """g * 2 / sqrt(pi) * exp(-x ** 2)."""
    x, _, g = _unary(op, grads)
    return [b.mul(g, erf_derivative(b, x))]


@vjp(pd.SinOp)
def sin_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """g * cos(x)."""
    x, _, g = _unary(op, grads)
    return [b.mul(g, b.emit(pd.CosOp, x))]


@vjp(pd.CosOp)
def cos_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """-g * sin(x)."""
    x, _, g = _unary(op, grads)
    return [b.mul(g, b.neg(b.emit(pd.SinOp, x)))]


@vjp(pd.TanOp)
def tan_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """g * (1 + out ** 2)."""
    _, out, g = _unary(op, grads)
    return [b.mul(g, b.scale(b.emit(pd.SquareOp, out), 1.0, 1.0))]


@vjp(pd.AsinOp, pd.AcosOp)
def asin_acos_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """asin: g / sqrt(1 - x ** 2); acos: its negation."""
    x, _, g = _unary(op, grads)
    d = b.div(g, b.emit(pd.SqrtOp, b.scale(b.emit(pd.SquareOp, x), -1.0, 1.0)))
    return [d if isinstance(op, pd.AsinOp) else b.neg(d)]


@vjp(pd.AtanOp)
def atan_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """g / (1 + x ** 2)."""
    x, _, g = _unary(op, grads)
    return [b.div(g, b.scale(b.emit(pd.SquareOp, x), 1.0, 1.0))]


@vjp(pd.SinhOp)
def sinh_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """g * cosh(x)."""
    x, _, g = _unary(op, grads)
    return [b.mul(g, b.emit(pd.CoshOp, x))]


@vjp(pd.CoshOp)
def cosh_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """g * sinh(x)."""
    x, _, g = _unary(op, grads)
    return [b.mul(g, b.emit(pd.SinhOp, x))]


@vjp(pd.Log1pOp)
def log1p_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """g / (1 + x)."""
    x, _, g = _unary(op, grads)
    return [b.div(g, b.scale(x, 1.0, 1.0))]


@vjp(pd.Expm1Op)
def expm1_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """g * (out + 1) (= g * exp(x))."""
    _, out, g = _unary(op, grads)
    return [b.mul(g, b.scale(out, 1.0, 1.0))]


_GELU_C = math.sqrt(2.0 / math.pi)
_GELU_K = 0.044715


@vjp(pd.GeluOp)
def gelu_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """Exact: `Phi(x) + x * phi(x)`.  Approximate (`0.5 x (1 + tanh(u))`,
    `u = c (x + k x^3)`): `0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 k x^2)`."""
    x, _, g = _unary(op, grads)
    x2 = b.emit(pd.SquareOp, x)
    if op.prop("approximate"):  # type: ignore[attr-defined]
        u = b.scale(b.add(x, b.scale(b.mul(x2, x), _GELU_K)), _GELU_C)
        t = b.emit(pd.TanhOp, u)
        du = b.scale(x2, 3.0 * _GELU_K * _GELU_C, _GELU_C)
        dt = b.mul(b.scale(b.emit(pd.SquareOp, t), -0.5, 0.5), du)
        d = b.add(b.scale(t, 0.5, 0.5), b.mul(x, dt))
    else:
        cdf = b.scale(b.emit(pd.ErfOp, b.scale(x, 1.0 / math.sqrt(2.0))), 0.5, 0.5)
        pdf = b.scale(b.emit(pd.ExpOp, b.scale(x2, -0.5)), 1.0 / math.sqrt(2.0 * math.pi))
        d = b.add(cdf, b.mul(x, pdf))
    return [b.mul(g, d)]


@vjp(pd.ScaleOp)
def scale_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """scale * g (the bias adds a constant, whichever side of the scale)."""
    _, _, g = _unary(op, grads)
    return [b.scale(g, op.prop("scale"))]  # type: ignore[attr-defined]


@vjp(pd.PowOp)
def pow_factor_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """g * factor * x ** (factor - 1); zero for factor 0 (x ** 0 is constant; the
    product would be 0 * inf = NaN at x = 0, which Paddle's pow_grad gives)."""
    x, _, g = _unary(op, grads)
    factor = op.prop("factor")  # type: ignore[attr-defined]
    if factor == 0.0:
        return [b.full_like(g, 0.0)]
    return [b.mul(g, b.scale(b.emit(pd.PowOp, x, factor=factor - 1.0), factor))]


@vjp(pd.ClipOp)
def clip_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """g where min <= x <= max, i.e. where the clip left x unchanged (bounds included)."""
    x, out, g = _unary(op, grads)
    return [select(b, b.emit(pd.EqualOp, out, x), g)[0]]


@vjp(pd.CastOp)
def cast_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """g cast back to x's dtype, integer x included (Paddle's cast_grad); no
    gradient for a bool x."""
    x, _, g = _unary(op, grads)
    if pd.elem_of(x.type) == pd.i1:
        return [None]
    return [b.cast_like(g, x)]


# abs has a complex rule of its own; a cast's gradient cast back is right both ways
# (float -> complex: the real part of g; complex -> float: g + 0i).
complex_aware(pd.AbsOp, pd.CastOp)


# ------------------------------------------------- integer inputs autocast to float


def _through_float(rule: VjpRule) -> VjpRule:
    """Wrap the rule of an op whose `INT_INPUT` is "float32": for an integer x it
    differentiates the float op on `cast(x, float32)` (recomputed here; the rule
    may read x and the result) and casts the gradient back to x's dtype, as the
    gradient of the cast Paddle's autocast inserts does (truncating)."""

    def wrapped(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
        (x,) = op.operands
        elem = elem_of(x.type)
        if elem not in INT_TYPES:
            return rule(b, op, grads)
        assert isinstance(op, pd.ElementwiseUnaryOp)
        xf = b.emit(pd.CastOp, x, dtype="float32")
        out = b.emit(type(op), xf)
        owner = out.owner
        assert isinstance(owner, Operation)
        (gx,) = rule(b, owner, grads)
        return [None if gx is None else b.emit(pd.CastOp, gx, dtype=dtype_name(elem))]

    wrapped.__name__ = getattr(rule, "__name__", "vjp")
    wrapped.__doc__ = rule.__doc__
    return wrapped


for _op_cls in pd.ELEMENTWISE_OPS:
    if getattr(_op_cls, "INT_INPUT", None) == "float32" and _op_cls in VJP_RULES:
        VJP_RULES[_op_cls] = _through_float(VJP_RULES[_op_cls])
