"""`complex-to-real`: complex tensors become real pairs, so complex programs compile.

The native code has no complex arithmetic.  This `pd`-to-`pd` pass rewrites every
complex64/complex128 tensor `T` of shape `S` into a float32/float64 tensor of shape
`S + [2]` (numpy's interleaved layout: a complex array and its
`.view(float32).reshape(*S, 2)` are the same bytes), and every op on complex values
into real ops on those pairs.  Its parts are read as `S + [1]` slices of the pair
axis (so they broadcast against each other as the complex operands did) and joined
back by a `concat` on that axis:

* add, sub, `pd.sum`, `scale` without bias, `sgd`, and the shape and indexing ops
  (reshape, transpose, slice, strided_slice, set_value, concat, split, squeeze,
  unsqueeze, expand, pad, gather, gather_nd, index_add, scatter, scatter_nd_add,
  reductions `sum`/`mean`/`cumsum`) work on the pairs as they are, the pair axis
  kept last (axes normalized against the complex rank, so a negative axis never
  names it); `tril`/`triu` work part by part;
* `equal`/`not_equal`: both parts equal / either part differs;
* mul `(ac - bd, ad + bc)`, div (`x conj(y) / |y|^2`, scaled), `square`, `sqrt`, `exp`
  (`e^a (cos b, sin b)`), `log` (`(log|z|, arg z)`), `conj`, `abs`
  (hypot's scaled `sqrt(a^2 + b^2)`), `angle` (atan2 built of `atan` and `where`:
  the lowering has no atan2), `real`/`imag` (slices), `complex` (concat),
  `as_real`/`as_complex` (the identity on the pair layout) and casts (Paddle's rules, as the interpreter's
  `_cast`: a complex-to-real cast keeps the real part);
* `matmul` of complex operands: four real products `(AC - BD, AD + BC)` (two when one
  operand is real), each going to BLAS through the existing lowering (not Gauss's
  three-product form: it loses accuracy to cancellation);
* `fill_constant`/`fill_any_like` of complex values, `where` with complex branches.

The backward regions of complex programs are ordinary `pd` ops (the complex VJP
rules emit `conj`, `real`, `imag`, `complex`, `cast` and the arithmetic above), so
they are rewritten too.  Feeds (`pd.data`), parameters (`pd.parameter`) and
`pd.backward` results are retyped in place of the complex ones; `complex_to_real`
returns each retyped feed's and parameter's complex type, which the lowering keeps
in the ABI (`lowering/convert_pd_to_linalg.py`): the caller hands in and gets back
complex arrays, whose buffers are the pair buffers the native code reads and writes
(no copy, no view needed).

An op on complex values with no rule here (fft, complex linear algebra, control
flow, comparisons...) raises `LoweringError` naming it: the compiled backends then
run the whole program on the host interpreter, with a warning, never a silently
wrong result.  Every rewritten value is checked to have the pair shape and dtype
of the complex value it replaces.

Division scales the divisor by `max(|c|, |d|)` before squaring it and `abs` (with
`log`'s `log|z|`) is scaled as hypot is, so neither overflows nor underflows where
numpy's kernels do not.  A known difference: `angle`/`log` of a negative zero real
part (`-0 + 0j`) give 0, not pi (the atan2 built of `atan` and `where` does not see
the sign of zero).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ComplexType, ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from pullback.dialects import pd
from pullback.dialects.pd.base import DTYPE_BY_ELEM, dtype_name, is_complex, result_names, set_result_names, shape_of
from pullback.lowering.abi import LoweringError

_RETYPED = (pd.DataOp, pd.ParameterOp, pd.BackwardOp)
"""Structural ops: rebuilt with the pair types (operands already replaced)."""


def _complex_elem(t: Attribute) -> ComplexType | None:
    if isinstance(t, TensorType) and is_complex(t.get_element_type()):
        elem = t.get_element_type()
        assert isinstance(elem, ComplexType)
        return elem
    return None


def pair_type(t: TensorType) -> TensorType:
    """The real pair type of complex tensor type `t`: `S + [2]` of its parts' dtype."""
    elem = _complex_elem(t)
    assert elem is not None
    return TensorType(elem.element_type, [*t.get_shape(), 2])


def touches_complex(op: Operation) -> bool:
    """Whether `op` reads or makes a complex tensor."""
    return any(_complex_elem(v.type) is not None for v in (*op.operands, *op.results))


def needs_rewrite(module: ModuleOp) -> bool:
    """Whether any op of `module` (region bodies included) touches a complex tensor."""
    return any(touches_complex(op) for op in module.walk())


def _unhandled(op: Operation, why: str = "") -> LoweringError:
    dts = sorted({dtype_name(e) for v in (*op.operands, *op.results) if (e := _complex_elem(v.type)) is not None})
    return LoweringError(
        f"cannot lower '{op.name}' to native code: {', '.join(dts)} values are computed by the host "
        f"interpreter only (complex-to-real has no rule for it{': ' + why if why else ''})"
    )


@dataclass
class _Emit:
    """Builds real ops before the op being rewritten; `orig` maps each pair value
    made so far to the complex type it stands for."""

    at: Operation
    orig: dict[SSAValue, TensorType]
    made: set[Operation] = field(default_factory=set)
    """The ops inserted for `at` (only they may take its results' names)."""

    def op(self, cls: type[pd.PdOp], *operands: SSAValue, **props: Any) -> SSAValue:
        """Insert `cls.make(*operands, **props)` before the op rewritten; its result."""
        return self.ops(cls, *operands, **props)[0]

    def ops(self, cls: type[pd.PdOp], *operands: SSAValue, **props: Any) -> list[SSAValue]:
        """As `op`, for an op of several results."""
        new = cls.make(*operands, **props)
        Rewriter.insert_op(new, InsertPoint.before(self.at))
        self.made.add(new)
        return list(new.results)

    def same_kind(self, src: SSAValue, new: SSAValue) -> SSAValue:
        """`new`, a reshaped `src`, marked as a pair when `src` is one."""
        if src in self.orig:
            elem = self.orig[src].get_element_type()
            self.orig[new] = TensorType(elem, shape_of(new.type)[:-1])
        return new

    # -------------------------------------------------------------- pair views

    def is_pair(self, v: SSAValue) -> bool:
        """Whether `v` stands for a complex value."""
        return v in self.orig

    def rank(self, v: SSAValue) -> int:
        """The complex rank of a pair `v` (its pair axis is this index)."""
        return len(shape_of(v.type)) - 1

    def part_dtype(self, v: SSAValue) -> str:
        """The float dtype name of a pair's parts."""
        return dtype_name(v.type.get_element_type())  # type: ignore[attr-defined]

    def re(self, p: SSAValue) -> SSAValue:
        """The real part of pair `p`, shape `S + [1]`."""
        r = self.rank(p)
        return self.op(pd.SliceOp, p, axes=[r], starts=[0], ends=[1])

    def im(self, p: SSAValue) -> SSAValue:
        """The imaginary part of pair `p`, shape `S + [1]`."""
        r = self.rank(p)
        return self.op(pd.SliceOp, p, axes=[r], starts=[1], ends=[2])

    def drop(self, part: SSAValue) -> SSAValue:
        """A part `S + [1]` as a tensor of shape `S`."""
        return self.op(pd.SqueezeOp, part, axes=[len(shape_of(part.type)) - 1])

    def lift(self, t: SSAValue) -> SSAValue:
        """A real tensor of shape `S` as a part `S + [1]`."""
        return self.op(pd.UnsqueezeOp, t, axes=[len(shape_of(t.type))])

    def join(self, re: SSAValue, im: SSAValue) -> SSAValue:
        """The pair of two parts `S + [1]` (broadcast against each other first when
        their shapes differ: adding a zero of the other's shape)."""
        if shape_of(re.type) != shape_of(im.type):
            re, im = (
                self.op(pd.ElementwiseAddOp, re, self.op(pd.FillAnyLikeOp, im, value=0.0)),
                self.op(pd.ElementwiseAddOp, im, self.op(pd.FillAnyLikeOp, re, value=0.0)),
            )
        return self.op(pd.ConcatOp, re, im, axis=len(shape_of(re.type)) - 1)

    def pair(self, v: SSAValue, part: str) -> SSAValue:
        """`v` as a pair: itself when it is one, else a real tensor cast to the part
        dtype `part` with a zero imaginary part."""
        if self.is_pair(v):
            if self.part_dtype(v) != part:
                return self.op(pd.CastOp, v, dtype=part)
            return v
        x = v if dtype_name(v.type.get_element_type()) == part else self.op(pd.CastOp, v, dtype=part)  # type: ignore[attr-defined]
        re = self.lift(x)
        return self.op(pd.ConcatOp, re, self.op(pd.FillAnyLikeOp, re, value=0.0), axis=len(shape_of(re.type)) - 1)

    def parts(self, v: SSAValue, part: str) -> tuple[SSAValue, SSAValue | None]:
        """The parts of `v` as `S + [1]` tensors; the imaginary one None for a real `v`
        (so products skip it)."""
        if self.is_pair(v):
            p = self.pair(v, part)
            return self.re(p), self.im(p)
        x = v if dtype_name(v.type.get_element_type()) == part else self.op(pd.CastOp, v, dtype=part)  # type: ignore[attr-defined]
        return self.lift(x), None

    def axis(self, a: int, rank: int) -> int:
        """A complex axis made non-negative (so that it never names the pair axis)."""
        return a + rank if a < 0 else a


_Rule = Callable[[_Emit, Operation], Sequence[SSAValue]]
RULES: dict[type[Operation], _Rule] = {}
"""The rewrite of each op class: given the emitter and the op (its operands already
pairs where complex), the values replacing its results (pairs for complex ones)."""


def _rule(*classes: type[Operation]) -> Callable[[_Rule], _Rule]:
    def register(fn: _Rule) -> _Rule:
        for c in classes:
            RULES[c] = fn
        return fn

    return register


def _out_part(op: Operation, i: int = 0) -> str:
    """The part dtype of `op`'s complex result `i`."""
    elem = _complex_elem(op.results[i].type)
    assert elem is not None
    return dtype_name(elem.element_type)


def _binary_axis(e: _Emit, op: Operation) -> tuple[SSAValue, SSAValue]:
    """The operands of a binary op with Paddle's mid-axis broadcasting (`axis` not
    -1: the smaller operand's dimensions line up with the larger's from `axis`)
    turned into the trailing alignment the pair axis needs: the smaller operand
    gets unit dimensions after its own (before its pair axis)."""
    x, y = op.operands
    axis = op.prop("axis")  # type: ignore[attr-defined]
    if axis == -1:
        return x, y
    rx, ry = (len(shape_of(v.type)) - e.is_pair(v) for v in (x, y))
    big, small = max(rx, ry), min(rx, ry)
    k = big - axis - small
    if k < 0:
        raise _unhandled(op, f"broadcasting at axis {axis}")
    if k == 0:
        return x, y
    ones = list(range(small, small + k))
    if ry < rx:
        return x, e.same_kind(y, e.op(pd.UnsqueezeOp, y, axes=ones))
    return e.same_kind(x, e.op(pd.UnsqueezeOp, x, axes=ones)), y


@_rule(pd.ElementwiseAddOp, pd.ElementwiseSubOp)
def _add_sub(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    x, y = _binary_axis(e, op)
    part = _out_part(op)
    return [e.op(type(op), e.pair(x, part), e.pair(y, part))]  # type: ignore[arg-type]


def _mul_parts(
    e: _Emit, a: SSAValue, b: SSAValue | None, c: SSAValue, d: SSAValue | None
) -> tuple[SSAValue, SSAValue]:
    """`(a + ib)(c + id)` as parts, skipping the products of absent (zero) parts."""
    mul, sub, add = pd.ElementwiseMulOp, pd.ElementwiseSubOp, pd.ElementwiseAddOp
    ac = e.op(mul, a, c)
    re = ac if b is None or d is None else e.op(sub, ac, e.op(mul, b, d))
    if b is None:
        assert d is not None
        return re, e.op(mul, a, d)
    if d is None:
        return re, e.op(mul, b, c)
    return re, e.op(add, e.op(mul, a, d), e.op(mul, b, c))


@_rule(pd.ElementwiseMulOp)
def _mul(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    x, y = _binary_axis(e, op)
    part = _out_part(op)
    a, b = e.parts(x, part)
    c, d = e.parts(y, part)
    return [e.join(*_mul_parts(e, a, b, c, d))]


@_rule(pd.ElementwiseDivOp)
def _div(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    x, y = _binary_axis(e, op)
    part = _out_part(op)
    a, b = e.parts(x, part)
    c, d = e.parts(y, part)
    if d is None:  # a real divisor: each part divided
        div = pd.ElementwiseDivOp
        return [e.join(e.op(div, a, c), e.op(div, b, c) if b is not None else e.op(pd.FillAnyLikeOp, a, value=0.0))]
    # x / y = x conj(y) / |y|^2, with y scaled by s = max(|c|, |d|) first so that
    # |y|^2 neither overflows nor underflows: x conj(y/s) / |y/s|^2 / s.
    mul, add, div = pd.ElementwiseMulOp, pd.ElementwiseAddOp, pd.ElementwiseDivOp
    s = e.op(pd.ElementwiseMaxOp, e.op(pd.AbsOp, c), e.op(pd.AbsOp, d))
    c, d = e.op(div, c, s), e.op(div, d, s)
    den = e.op(mul, e.op(add, e.op(mul, c, c), e.op(mul, d, d)), s)
    re, im = _mul_parts(e, a, b, c, e.op(pd.ScaleOp, d, scale=-1.0))
    return [e.join(e.op(div, re, den), e.op(div, im, den))]


@_rule(pd.SquareOp)
def _square(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    p = op.operands[0]
    a, b = e.re(p), e.im(p)
    return [e.join(*_mul_parts(e, a, b, a, b))]


@_rule(pd.ScaleOp)
def _scale(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    p = op.operands[0]
    s, bias, after = op.prop("scale"), op.prop("bias"), op.prop("bias_after_scale")  # type: ignore[attr-defined]
    if bias == 0.0:
        return [e.op(pd.ScaleOp, p, scale=s)]
    # A real bias moves the real part only (the interpreter's `s * x + b` on complex x).
    re = e.op(pd.ScaleOp, e.re(p), scale=s, bias=bias, bias_after_scale=after)
    return [e.join(re, e.op(pd.ScaleOp, e.im(p), scale=s))]


@_rule(pd.ConjOp)
def _conj(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    p = op.operands[0]
    return [e.join(e.re(p), e.op(pd.ScaleOp, e.im(p), scale=-1.0))]


@_rule(pd.RealOp)
def _real(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    return [e.drop(e.re(op.operands[0]))]


@_rule(pd.ImagOp)
def _imag(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    return [e.drop(e.im(op.operands[0]))]


@_rule(pd.ComplexOp)
def _complex(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    re, im = op.operands
    return [e.join(e.lift(re), e.lift(im))]


@_rule(pd.AsRealOp, pd.AsComplexOp)
def _identity(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    # The same bytes, the same pair layout: a reshape keeping every dimension (a
    # view in the lowering), so that the pair and the real tensor are two values
    # (one stands for a complex value, the other does not).
    x = op.operands[0]
    return [e.op(pd.ReshapeOp, x, shape=[0] * len(shape_of(x.type)))]


def _abs_part(e: _Emit, a: SSAValue, b: SSAValue) -> SSAValue:
    """`|a + ib|` as numpy's hypot computes it, without overflow or underflow of the
    squares: `m sqrt((a/m)^2 + (b/m)^2)` for `m = max(|a|, |b|)` (0 where m is 0)."""
    mul, add, div = pd.ElementwiseMulOp, pd.ElementwiseAddOp, pd.ElementwiseDivOp
    m = e.op(pd.ElementwiseMaxOp, e.op(pd.AbsOp, a), e.op(pd.AbsOp, b))
    zero = e.op(pd.FillAnyLikeOp, m, value=0.0)
    is_zero = e.op(pd.EqualOp, m, zero)
    safe = e.op(pd.WhereOp, is_zero, e.op(pd.FillAnyLikeOp, m, value=1.0), m)
    u, v = e.op(div, a, safe), e.op(div, b, safe)
    return e.op(mul, safe, e.op(pd.SqrtOp, e.op(add, e.op(mul, u, u), e.op(mul, v, v))))


def _atan2(e: _Emit, y: SSAValue, x: SSAValue) -> SSAValue:
    """`atan2(y, x)` of two real tensors of one shape: `atan(y / x)` (+-pi/2 for a
    zero x), moved by +-pi for a negative x, 0 where both are 0."""
    zero = e.op(pd.FillAnyLikeOp, x, value=0.0)
    t = e.op(pd.AtanOp, e.op(pd.ElementwiseDivOp, y, x))
    turn = e.op(
        pd.WhereOp,
        e.op(pd.GreaterEqualOp, y, zero),
        e.op(pd.FillAnyLikeOp, x, value=math.pi),
        e.op(pd.FillAnyLikeOp, x, value=-math.pi),
    )
    t = e.op(pd.WhereOp, e.op(pd.LessThanOp, x, zero), e.op(pd.ElementwiseAddOp, t, turn), t)
    both_zero = e.op(pd.EqualOp, e.op(pd.ElementwiseAddOp, e.op(pd.AbsOp, x), e.op(pd.AbsOp, y)), zero)
    return e.op(pd.WhereOp, both_zero, zero, t)


@_rule(pd.AbsOp)
def _abs(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    p = op.operands[0]
    return [e.drop(_abs_part(e, e.re(p), e.im(p)))]


@_rule(pd.AngleOp)
def _angle(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    p = op.operands[0]
    return [e.drop(_atan2(e, e.im(p), e.re(p)))]


@_rule(pd.ExpOp)
def _exp(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    p = op.operands[0]
    ea, b = e.op(pd.ExpOp, e.re(p)), e.im(p)
    mul = pd.ElementwiseMulOp
    return [e.join(e.op(mul, ea, e.op(pd.CosOp, b)), e.op(mul, ea, e.op(pd.SinOp, b)))]


@_rule(pd.LogOp)
def _log(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    p = op.operands[0]
    a, b = e.re(p), e.im(p)
    return [e.join(e.op(pd.LogOp, _abs_part(e, a, b)), _atan2(e, b, a))]


@_rule(pd.SqrtOp)
def _sqrt(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    """The principal root, without cancellation: `t = sqrt((|z| + |a|) / 2)`; for
    `a >= 0` it is `(t, b / 2t)`, else `(|b| / 2t, t with b's sign)`; 0 at 0."""
    p = op.operands[0]
    a, b = e.re(p), e.im(p)
    div, where = pd.ElementwiseDivOp, pd.WhereOp
    t = e.op(pd.SqrtOp, e.op(pd.ScaleOp, e.op(pd.ElementwiseAddOp, _abs_part(e, a, b), e.op(pd.AbsOp, a)), scale=0.5))
    zero = e.op(pd.FillAnyLikeOp, t, value=0.0)
    two_t = e.op(where, e.op(pd.EqualOp, t, zero), e.op(pd.FillAnyLikeOp, t, value=1.0), e.op(pd.ScaleOp, t, scale=2.0))
    right = e.op(pd.GreaterEqualOp, a, e.op(pd.FillAnyLikeOp, a, value=0.0))
    re = e.op(where, right, t, e.op(div, e.op(pd.AbsOp, b), two_t))
    signed_t = e.op(where, e.op(pd.LessThanOp, b, e.op(pd.FillAnyLikeOp, b, value=0.0)), e.op(pd.ScaleOp, t, scale=-1.0), t)
    im = e.op(where, right, e.op(div, b, two_t), signed_t)
    return [e.join(re, im)]


@_rule(pd.CastOp)
def _cast(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    x = op.operands[0]
    out = op.results[0].type
    target = DTYPE_BY_ELEM[out.get_element_type()].name  # type: ignore[attr-defined]
    if _complex_elem(out) is not None:
        return [e.pair(x, _out_part(op))]
    # complex -> real: the real part (Paddle's and the interpreter's rule), then cast.
    re = e.drop(e.re(x))
    return [re if dtype_name(re.type.get_element_type()) == target else e.op(pd.CastOp, re, dtype=target)]  # type: ignore[attr-defined]


@_rule(pd.SumOp)
def _sum(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    part = _out_part(op)
    return [e.op(pd.SumOp, *[e.pair(v, part) for v in op.operands])]


def _all_axes(e: _Emit, p: SSAValue, axes: Sequence[int]) -> list[int]:
    r = e.rank(p)
    return [e.axis(a, r) for a in axes] if axes else list(range(r))


@_rule(pd.ReduceSumOp, pd.ReduceMeanOp)
def _reduce(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    p = op.operands[0]
    axes = _all_axes(e, p, op.prop("axis"))  # type: ignore[attr-defined]
    if not axes:  # a 0-d complex value: nothing to reduce
        return [e.op(pd.ScaleOp, p, scale=1.0)]
    return [e.op(type(op), p, axis=axes, keepdim=op.prop("keepdim"))]  # type: ignore[attr-defined, arg-type]


@_rule(pd.MeanOp)
def _mean(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    p = op.operands[0]
    axes = _all_axes(e, p, [])
    return [e.op(pd.ReduceMeanOp, p, axis=axes) if axes else e.op(pd.ScaleOp, p, scale=1.0)]


@_rule(pd.CumsumOp)
def _cumsum(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    p = op.operands[0]
    return [e.op(pd.CumsumOp, p, axis=e.axis(op.prop("axis"), e.rank(p)),  # type: ignore[attr-defined]
                 exclusive=op.prop("exclusive"), reverse=op.prop("reverse"))]  # type: ignore[attr-defined]


@_rule(pd.MatmulOp)
def _matmul(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    x, y = op.operands
    part = _out_part(op)
    a, b = e.parts(x, part)
    c, d = e.parts(y, part)
    flags = {"transpose_x": op.prop("transpose_x"), "transpose_y": op.prop("transpose_y")}  # type: ignore[attr-defined]

    def mm(u: SSAValue, v: SSAValue) -> SSAValue:
        return e.lift(e.op(pd.MatmulOp, e.drop(u), e.drop(v), **flags))

    sub, add = pd.ElementwiseSubOp, pd.ElementwiseAddOp
    ac = mm(a, c)
    if b is None:
        assert d is not None
        return [e.join(ac, mm(a, d))]
    if d is None:
        return [e.join(ac, mm(b, c))]
    return [e.join(e.op(sub, ac, mm(b, d)), e.op(add, mm(a, d), mm(b, c)))]


@_rule(pd.ReshapeOp)
def _reshape(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    return [e.op(pd.ReshapeOp, op.operands[0], shape=[*op.prop("shape"), 2])]  # type: ignore[attr-defined]


@_rule(pd.ReshapeAsOp, pd.ExpandAsOp)
def _like(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    x, like = op.operands
    if not e.is_pair(like):
        raise _unhandled(op, "a real shape operand")
    return [e.op(type(op), e.pair(x, _out_part(op)), like)]  # type: ignore[arg-type]


@_rule(pd.TransposeOp)
def _transpose(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    p = op.operands[0]
    r = e.rank(p)
    return [e.op(pd.TransposeOp, p, perm=[*(e.axis(a, r) for a in op.prop("perm")), r])]  # type: ignore[attr-defined]


@_rule(pd.ConcatOp)
def _concat(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    part = _out_part(op)
    ps = [e.pair(v, part) for v in op.operands]
    return [e.op(pd.ConcatOp, *ps, axis=e.axis(op.prop("axis"), e.rank(ps[0])))]  # type: ignore[attr-defined]


@_rule(pd.SplitOp)
def _split(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    p = op.operands[0]
    return e.ops(pd.SplitOp, p, num=op.prop("num"), sections=op.prop("sections"),  # type: ignore[attr-defined]
                 axis=e.axis(op.prop("axis"), e.rank(p)))  # type: ignore[attr-defined]


@_rule(pd.SliceOp)
def _slice(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    p = op.operands[0]
    r = e.rank(p)
    return [e.op(pd.SliceOp, p, axes=[e.axis(a, r) for a in op.prop("axes")],  # type: ignore[attr-defined]
                 starts=op.prop("starts"), ends=op.prop("ends"))]  # type: ignore[attr-defined]


@_rule(pd.SqueezeOp)
def _squeeze(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    p = op.operands[0]
    r = e.rank(p)
    # No axes: every size-1 axis, which the pair axis (size 2) never is.
    return [e.op(pd.SqueezeOp, p, axes=[e.axis(a, r) for a in op.prop("axes")])]  # type: ignore[attr-defined]


@_rule(pd.UnsqueezeOp)
def _unsqueeze(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    p = op.operands[0]
    cur, axes = e.rank(p), []
    for a in op.prop("axes"):  # type: ignore[attr-defined]
        axes.append(a + cur + 1 if a < 0 else a)  # each inserted in turn, as Paddle does
        cur += 1
    return [e.op(pd.UnsqueezeOp, p, axes=axes)]


@_rule(pd.ExpandOp)
def _expand(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    return [e.op(pd.ExpandOp, op.operands[0], shape=[*op.prop("shape"), 2])]  # type: ignore[attr-defined]


@_rule(pd.GatherOp)
def _gather(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    p, index = op.operands
    return [e.op(pd.GatherOp, p, index, axis=e.axis(op.prop("axis"), e.rank(p)))]  # type: ignore[attr-defined]


@_rule(pd.StridedSliceOp)
def _strided_slice(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    p = op.operands[0]
    r = e.rank(p)
    return [e.op(pd.StridedSliceOp, p, axes=[e.axis(a, r) for a in op.prop("axes")],  # type: ignore[attr-defined]
                 starts=op.prop("starts"), ends=op.prop("ends"), strides=op.prop("strides"))]  # type: ignore[attr-defined]


@_rule(pd.SetValueOp)
def _set_value(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    x, value = op.operands
    part = _out_part(op)
    px = e.pair(x, part)
    r = e.rank(px)
    return [e.op(pd.SetValueOp, px, e.pair(value, part), axes=[e.axis(a, r) for a in op.prop("axes")],  # type: ignore[attr-defined]
                 starts=op.prop("starts"), ends=op.prop("ends"), strides=op.prop("strides"))]  # type: ignore[attr-defined]


@_rule(pd.GatherNdOp)
def _gather_nd(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    # The index's last axis picks leading axes of x: the pair axis stays trailing.
    return [e.op(pd.GatherNdOp, *op.operands)]


@_rule(pd.ScatterNdAddOp, pd.ScatterOp)
def _scatter(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    x, index, updates = op.operands
    part = _out_part(op)
    props = {"overwrite": op.prop("overwrite")} if isinstance(op, pd.ScatterOp) else {}  # type: ignore[attr-defined]
    return [e.op(type(op), e.pair(x, part), index, e.pair(updates, part), **props)]  # type: ignore[arg-type]


@_rule(pd.TrilTriuOp)
def _tril_triu(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    # On the last two complex axes: each part on its own.
    p = op.operands[0]
    props = {"diagonal": op.prop("diagonal"), "lower": op.prop("lower")}  # type: ignore[attr-defined]
    return [e.join(*(e.lift(e.op(pd.TrilTriuOp, e.drop(part), **props)) for part in (e.re(p), e.im(p))))]


@_rule(pd.EqualOp, pd.NotEqualOp)
def _equal(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    """Equal: both parts equal; not equal: either part differs."""
    x, y = _binary_axis(e, op)
    part = e.part_dtype(x if e.is_pair(x) else y)
    a, b = e.parts(x, part)
    c, d = e.parts(y, part)
    zero = e.op(pd.FillAnyLikeOp, a, value=0.0)
    cmp = pd.EqualOp if isinstance(op, pd.EqualOp) else pd.NotEqualOp
    both = pd.BitwiseAndOp if isinstance(op, pd.EqualOp) else pd.BitwiseOrOp
    return [e.drop(e.op(both, e.op(cmp, a, c), e.op(cmp, b if b is not None else zero, d if d is not None else zero)))]


@_rule(pd.IndexAddOp)
def _index_add(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    x, index, updates = op.operands
    part = _out_part(op)
    px = e.pair(x, part)
    return [e.op(pd.IndexAddOp, px, index, e.pair(updates, part), axis=e.axis(op.prop("axis"), e.rank(px)))]  # type: ignore[attr-defined]


@_rule(pd.PadOp)
def _pad(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    if op.prop("value") != 0.0:  # type: ignore[attr-defined]
        raise _unhandled(op, "a nonzero padding value")  # (it would pad both parts)
    return [e.op(pd.PadOp, op.operands[0], paddings=[*op.prop("paddings"), 0, 0])]  # type: ignore[attr-defined]


@_rule(pd.WhereOp)
def _where(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    cond, x, y = op.operands
    part = _out_part(op)
    px, py = e.pair(x, part), e.pair(y, part)
    c = e.lift(cond)
    return [e.join(e.op(pd.WhereOp, c, e.re(px), e.re(py)), e.op(pd.WhereOp, c, e.im(px), e.im(py)))]


@_rule(pd.FillConstantOp)
def _fill_constant(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    part = _out_part(op)
    shape = [*op.prop("shape"), 1]  # type: ignore[attr-defined]
    re = e.op(pd.FillConstantOp, shape=shape, value=op.prop("value"), dtype=part)  # type: ignore[attr-defined]
    return [e.join(re, e.op(pd.FillConstantOp, shape=shape, value=0.0, dtype=part))]


@_rule(pd.FillAnyLikeOp)
def _fill_any_like(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    x = op.operands[0]
    like = e.re(x) if e.is_pair(x) else e.lift(x)
    value, imag = op.prop("value"), op.prop("imag")  # type: ignore[attr-defined]
    if _complex_elem(op.results[0].type) is None:  # a real result shaped like complex x
        out = dtype_name(op.results[0].type.get_element_type())  # type: ignore[attr-defined]
        return [e.drop(e.op(pd.FillAnyLikeOp, like, value=value, dtype=out))]
    part = _out_part(op)
    return [e.join(e.op(pd.FillAnyLikeOp, like, value=value, dtype=part),
                   e.op(pd.FillAnyLikeOp, like, value=imag, dtype=part))]


@_rule(pd.SgdOp)
def _sgd(e: _Emit, op: Operation) -> Sequence[SSAValue]:
    param, grad, lr = op.operands
    return [e.op(pd.SgdOp, param, grad, lr)]  # param - lr * grad, part by part


# ------------------------------------------------------------------- the rewrite


def _retype(op: Operation, orig: dict[SSAValue, TensorType], replaced: dict[SSAValue, SSAValue]) -> Operation:
    """A structural op rebuilt with pair result types (its region moved over)."""
    regions = [op.detach_region(r) for r in list(op.regions)]
    types = [pair_type(r.type) if _complex_elem(r.type) else r.type for r in op.results]  # type: ignore[arg-type]
    new = type(op).create(
        operands=list(op.operands), result_types=types, properties=dict(op.properties),
        attributes=dict(op.attributes), regions=regions,
    )
    Rewriter.insert_op(new, InsertPoint.before(op))
    for old, res in zip(op.results, new.results):
        res.name_hint = old.name_hint
        if _complex_elem(old.type) is not None:
            orig[res] = old.type  # type: ignore[assignment]
        old.replace_all_uses_with(res)
        replaced[old] = res
    op.detach()
    op.erase()
    return new


def _check(op: Operation, old: SSAValue, new: SSAValue) -> None:
    """Raise naming `op` unless `new` has the pair type of `old` (or `old`'s own type
    for a real result): a rule's slip is refused, never computed."""
    want = pair_type(old.type) if _complex_elem(old.type) else old.type  # type: ignore[arg-type]
    got = new.type
    if not (isinstance(got, TensorType) and isinstance(want, TensorType)
            and got.get_element_type() == want.get_element_type() and shape_of(got) == shape_of(want)):
        raise _unhandled(op, f"its rewrite gave {got}, expected {want}")


def _rewrite_op(op: Operation, orig: dict[SSAValue, TensorType], replaced: dict[SSAValue, SSAValue]) -> None:
    rule = RULES.get(type(op))
    if rule is None:
        raise _unhandled(op)
    emit = _Emit(op, orig)
    news = list(rule(emit, op))
    if len(news) != len(op.results):
        raise _unhandled(op, "its rewrite gave the wrong number of results")
    names = result_names(op)
    for old, new, name in zip(op.results, news, names):
        _check(op, old, new)
        owner = new.owner
        # The op a rule just made for this result takes its Paddle name (persistable
        # updates and gradients are found by name).
        if (name is not None and isinstance(owner, Operation) and owner in emit.made and len(owner.results) == 1
                and result_names(owner) == [None]):
            set_result_names(owner, [name])
        if _complex_elem(old.type) is not None:
            orig[new] = old.type  # type: ignore[assignment]
        new.name_hint = new.name_hint or old.name_hint
        old.replace_all_uses_with(new)
        replaced[old] = new
    op.detach()
    op.erase()


def rewrite_in_place(
    module: ModuleOp, replaced: dict[SSAValue, SSAValue] | None = None
) -> dict[SSAValue, TensorType]:
    """Rewrite `module`'s complex values into real pairs, in place (the module
    docstring).  Returns the complex type of each pair value the module now holds
    where a complex one was (feeds', parameters' and results' alike).  Raises
    `LoweringError` naming the first complex op it has no rule for (the module is
    then half rewritten: `complex_to_real` works on a copy).  `replaced`, when
    given, receives each replaced value's replacement."""
    orig: dict[SSAValue, TensorType] = {}
    done = {} if replaced is None else replaced
    for op in list(module.walk()):  # (pre-order: a region op before its body)
        if isinstance(op, (pd.YieldOp, pd.FetchOp)):
            continue  # (their operands are replaced already)
        if not touches_complex(op) and not any(v in orig for v in op.operands):
            continue
        if isinstance(op, _RETYPED):
            _retype(op, orig, done)
        elif op.regions:
            raise _unhandled(op)
        else:
            _rewrite_op(op, orig, done)
    return orig


def complex_to_real(
    module: ModuleOp, fetches: Sequence[SSAValue] = ()
) -> tuple[ModuleOp, list[SSAValue], dict[SSAValue, TensorType]]:
    """`module` with complex values as real pairs, `fetches` in it, and the complex
    type of each pair value (`rewrite_in_place`): `module` itself when it holds no
    complex value (no copy), else a rewritten copy (`module` is left unchanged)."""
    if not needs_rewrite(module):
        return module, list(fetches), {}
    mapping: dict[SSAValue, SSAValue] = {}
    copy = module.clone(value_mapper=mapping)
    replaced: dict[SSAValue, SSAValue] = {}
    orig = rewrite_in_place(copy, replaced)
    new_fetches = []
    for v in fetches:
        v = mapping.get(v, v)
        while v in replaced:  # (a feed's value is replaced once, by its retyped op)
            v = replaced[v]
        new_fetches.append(v)
    return copy, new_fetches, orig


@dataclass(frozen=True)
class ComplexToRealPass(ModulePass):
    """Rewrite complex64/complex128 tensors into float32/float64 pairs `S + [2]` and
    the ops on them into real ops (`complex_to_real`), in place."""

    name = "complex-to-real"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        rewrite_in_place(op)


__all__ = [
    "RULES",
    "ComplexToRealPass",
    "complex_to_real",
    "needs_rewrite",
    "pair_type",
    "rewrite_in_place",
    "touches_complex",
]
