"""Scalar semantics of the elementwise `pd` ops, as `arith`/`math` ops in a loop body.

`convert-pd-to-linalg` fuses chains of elementwise ops into one `linalg.generic`: the
body of that generic is built here, op by op, from scalar operands.  One table
(`ELEMENTWISE`) says for every fusible op how its operands are indexed (broadcasting)
and how one output element is computed; fusion, reductions and the optimizer updates
all use it, so each op's arithmetic is written exactly once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    AnyFloat,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    TensorType,
    f32,
    f64,
    i1,
)
from xdsl.ir import Attribute, Operation, SSAValue

from pullback.dialects.pd.base import DYN, from_attr, shape_of
from pullback.dialects.pd.shape import permutation

DimMap = tuple[int | None, ...]
"""For each dimension of an operand, the loop dimension indexing it (None: index 0,
i.e. the operand is broadcast along that loop)."""

FAST = arith.FastMathFlagsAttr(["contract"])
"""Elementwise float math may contract `a*b+c` into an FMA, as XLA and MLIR do."""

REASSOC = arith.FastMathFlagsAttr(["reassoc", "contract"])
"""Reductions may be reassociated: that is what lets LLVM vectorize them."""


def prop(op: Operation, key: str, default: object = None) -> object:
    """A `pd` property as a Python value (works for any op, declared or not)."""
    getter = getattr(op, "prop", None)
    if getter is not None:
        value = getter(key)
        return default if value is None else value
    attr = op.properties.get(key) or op.attributes.get(key)
    return default if attr is None else from_attr(attr)


@dataclass
class Scalar:
    """Builds scalar code at one insertion point, caching constants and loop indices."""

    b: Builder
    _consts: dict[tuple[str, str], SSAValue] = field(default_factory=dict)
    _indices: dict[int, SSAValue] = field(default_factory=dict)

    def emit(self, op: Operation) -> SSAValue:
        """Insert `op`; return its only result."""
        self.b.insert(op)
        return op.results[0]

    def const(self, value: float | int | bool, elem: Attribute) -> SSAValue:
        """A constant of element type `elem` (cached per body)."""
        key = (repr(value), str(elem))
        if key not in self._consts:
            if isinstance(elem, AnyFloat):
                attr: Attribute = FloatAttr(float(value), elem)
            else:
                assert isinstance(elem, (IntegerType, IndexType))
                attr = IntegerAttr(int(value), elem)
            self._consts[key] = self.emit(arith.ConstantOp(attr))
        return self._consts[key]

    def index(self, dim: int) -> SSAValue:
        """The current iteration index of loop dimension `dim` (`linalg.index`)."""
        if dim not in self._indices:
            self._indices[dim] = self.emit(linalg.IndexOp(dim))
        return self._indices[dim]

    # Float helpers: every elementwise rule is written with these.
    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """`a + b` (float or integer)."""
        if isinstance(a.type, AnyFloat):
            return self.emit(arith.AddfOp(a, b, FAST))
        return self.emit(arith.AddiOp(a, b))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """`a - b`."""
        if isinstance(a.type, AnyFloat):
            return self.emit(arith.SubfOp(a, b, FAST))
        return self.emit(arith.SubiOp(a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """`a * b`."""
        if isinstance(a.type, AnyFloat):
            return self.emit(arith.MulfOp(a, b, FAST))
        return self.emit(arith.MuliOp(a, b))

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """`a / b`; integers divide as Paddle's C++ kernel does, truncating toward zero.

        Native division traps on `x / 0` and `MIN / -1` (x86 `idiv`), and compiled code
        cannot raise: a zero divisor gives 0 (what the interpreter's numpy gives) and
        `-1` negates with wrap-around (the interpreter's result for `MIN / -1` too).
        """
        if isinstance(a.type, AnyFloat):
            return self.emit(arith.DivfOp(a, b, FAST))
        zero, one, minus_one = (self.const(v, a.type) for v in (0, 1, -1))
        by_zero, by_minus_one = self.cmp("eq", b, zero), self.cmp("eq", b, minus_one)
        special = self.emit(arith.OrIOp(by_zero, by_minus_one))
        q = self.emit(arith.DivSIOp(a, self.select(special, one, b)))
        return self.select(by_zero, zero, self.select(by_minus_one, self.sub(zero, a), q))

    def max(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """`maximum(a, b)`, NaN-propagating like numpy."""
        if isinstance(a.type, AnyFloat):
            return self.emit(arith.MaximumfOp(a, b))
        return self.emit(arith.MaxSIOp(a, b))

    def min(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """`minimum(a, b)`, NaN-propagating like numpy."""
        if isinstance(a.type, AnyFloat):
            return self.emit(arith.MinimumfOp(a, b))
        return self.emit(arith.MinSIOp(a, b))

    def cmp(self, pred: str, a: SSAValue, b: SSAValue) -> SSAValue:
        """A comparison; `pred` is one of gt/ge/lt/le/eq/ne."""
        if isinstance(a.type, AnyFloat):
            # Ordered predicates (false on NaN) except `ne`, matching numpy.
            fpred = {"ne": "une"}.get(pred, "o" + pred)
            return self.emit(arith.CmpfOp(a, b, fpred))
        ipred = {"gt": "sgt", "ge": "sge", "lt": "slt", "le": "sle"}.get(pred, pred)
        return self.emit(arith.CmpiOp(a, b, ipred))

    def select(self, c: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        """`c ? a : b`."""
        return self.emit(arith.SelectOp(c, a, b))

    def math(self, cls: type[Operation], a: SSAValue) -> SSAValue:
        """A unary `math` op (exp, log, tanh, sqrt, erf, absf)."""
        return self.emit(cls(a, FAST))  # type: ignore[call-arg]

    def convert(self, a: SSAValue, elem: Attribute) -> SSAValue:
        """Convert a scalar to another element type (Paddle's `cast`)."""
        src = a.type
        if src == elem:
            return a
        if isinstance(src, AnyFloat) and isinstance(elem, AnyFloat):
            wider = src.bitwidth < elem.bitwidth
            return self.emit((arith.ExtFOp if wider else arith.TruncFOp)(a, elem))
        if isinstance(src, AnyFloat):
            assert isinstance(elem, IntegerType)
            if elem == i1:
                return self.cmp("ne", a, self.const(0.0, src))
            return self.emit(arith.FPToSIOp(a, elem))
        assert isinstance(src, IntegerType)
        if isinstance(elem, AnyFloat):
            if src == i1:
                return self.emit(arith.UIToFPOp(a, elem))
            return self.emit(arith.SIToFPOp(a, elem))
        assert isinstance(elem, IntegerType)
        if elem == i1:
            return self.cmp("ne", a, self.const(0, src))
        if src.bitwidth < elem.bitwidth:
            ext = arith.ExtUIOp if src == i1 else arith.ExtSIOp
            return self.emit(ext(a, elem))
        return self.emit(arith.TruncIOp(a, elem))


# ----------------------------------------------------------------- broadcasting


def result_shape(op: Operation, i: int = 0) -> tuple[int, ...]:
    """Static shape of an op's result (DYN for `?`)."""
    return shape_of(op.results[i].type)


def aligned_map(operand_shape: Sequence[int], out_shape: Sequence[int], offset: int) -> DimMap:
    """Map operand dims onto loop dims starting at `offset`; static 1s broadcast."""
    dims: list[int | None] = []
    for j, d in enumerate(operand_shape):
        k = offset + j
        dims.append(None if d == 1 and out_shape[k] != 1 else k)
    return tuple(dims)


def numpy_maps(op: Operation) -> list[DimMap]:
    """Operand maps under numpy (right-aligned) broadcasting."""
    out = result_shape(op)
    return [
        aligned_map(shape_of(v.type), out, len(out) - len(shape_of(v.type)))
        for v in op.operands
    ]


def paddle_maps(op: Operation) -> list[DimMap]:
    """Operand maps under Paddle's `axis` broadcasting of the binary elementwise ops."""
    axis = int(prop(op, "axis", -1))  # type: ignore[arg-type]
    out = result_shape(op)
    sx, sy = (shape_of(v.type) for v in op.operands)
    if axis == -1 or len(sx) == len(sy):
        return numpy_maps(op)
    if len(sx) < len(sy):
        return [aligned_map(sx, out, axis), aligned_map(sy, out, 0)]
    return [aligned_map(sx, out, 0), aligned_map(sy, out, axis)]


def identity_maps(op: Operation) -> list[DimMap]:
    """Every operand has the result's shape."""
    return [tuple(range(len(shape_of(v.type)))) for v in op.operands]


def shape_only_first(op: Operation) -> list[DimMap | None]:
    """The first operand gives only the shape (fill_any_like)."""
    return [None]


def one_hot_maps(op: Operation) -> list[DimMap | None]:
    """`one_hot` reads its id at every position of the appended class dimension."""
    rank = len(shape_of(op.operands[0].type))
    return [tuple(range(rank))]


# ------------------------------------------------------------------ the table

Body = Callable[[Scalar, Operation, list[SSAValue]], list[SSAValue]]
Maps = Callable[[Operation], Sequence[DimMap | None]]


@dataclass(frozen=True)
class Elementwise:
    """How to compute one output element of a fusible op.

    `maps(op)` gives, per operand, its `DimMap` onto the loop (the result's dims) or
    None when the operand's values are not read (only its shape matters).
    `body(s, op, args)` returns one scalar per result; `args` hold the loaded
    operands (None-mapped operands are absent).
    """

    body: Body
    maps: Maps = paddle_maps


ELEMENTWISE: dict[str, Elementwise] = {}


def elementwise(*names: str, maps: Maps = paddle_maps) -> Callable[[Body], Body]:
    """Register the scalar body of one or more elementwise ops."""

    def register(fn: Body) -> Body:
        for n in names:
            ELEMENTWISE[n] = Elementwise(fn, maps)
        return fn

    return register


def elem_of_result(op: Operation, i: int = 0) -> Attribute:
    """Element type of an op's result."""
    t = op.results[i].type
    assert isinstance(t, TensorType)
    return t.get_element_type()


_BINARY: dict[str, Callable[[Scalar, SSAValue, SSAValue], SSAValue]] = {
    "pd.elementwise_add": Scalar.add,
    "pd.elementwise_sub": Scalar.sub,
    "pd.elementwise_mul": Scalar.mul,
    "pd.elementwise_div": Scalar.div,
    "pd.elementwise_max": Scalar.max,
    "pd.elementwise_min": Scalar.min,
    "pd.elementwise_pow": lambda s, a, b: s.emit(xmath.PowFOp(a, b, FAST)),
}


@elementwise(*_BINARY)
def _binary(s: Scalar, op: Operation, args: list[SSAValue]) -> list[SSAValue]:
    return [_BINARY[op.name](s, args[0], args[1])]


_COMPARE = {
    "pd.greater_than": "gt",
    "pd.greater_equal": "ge",
    "pd.less_than": "lt",
    "pd.less_equal": "le",
    "pd.equal": "eq",
    "pd.not_equal": "ne",
}


@elementwise(*_COMPARE)
def _compare(s: Scalar, op: Operation, args: list[SSAValue]) -> list[SSAValue]:
    return [s.cmp(_COMPARE[op.name], args[0], args[1])]


@elementwise("pd.where", maps=numpy_maps)
def _where(s: Scalar, op: Operation, args: list[SSAValue]) -> list[SSAValue]:
    return [s.select(*args)]


def _sigmoid(s: Scalar, x: SSAValue) -> SSAValue:
    one = s.const(1.0, x.type)
    return s.div(one, s.add(one, s.math(xmath.ExpOp, s.sub(s.const(0.0, x.type), x))))


def _gelu(s: Scalar, op: Operation, x: SSAValue) -> SSAValue:
    t = x.type
    half = s.const(0.5, t)
    one = s.const(1.0, t)
    if prop(op, "approximate", False):
        cube = s.mul(s.mul(x, x), x)
        inner = s.mul(s.const(math.sqrt(2.0 / math.pi), t), s.add(x, s.mul(s.const(0.044715, t), cube)))
        return s.mul(s.mul(half, x), s.add(one, s.math(xmath.TanhOp, inner)))
    erf = s.math(xmath.ErfOp, s.mul(x, s.const(1.0 / math.sqrt(2.0), t)))
    return s.mul(s.mul(half, x), s.add(one, erf))


def _scale(s: Scalar, op: Operation, x: SSAValue) -> SSAValue:
    t = x.type
    scale = s.const(float(prop(op, "scale", 1.0)), t)  # type: ignore[arg-type]
    bias = s.const(float(prop(op, "bias", 0.0)), t)  # type: ignore[arg-type]
    if prop(op, "bias_after_scale", True):
        return s.add(s.mul(scale, x), bias)
    return s.mul(scale, s.add(x, bias))


def _sign(s: Scalar, x: SSAValue) -> SSAValue:
    zero, one = s.const(0.0, x.type), s.const(1.0, x.type)
    neg = s.select(s.cmp("lt", x, zero), s.const(-1.0, x.type), zero)
    return s.select(s.cmp("gt", x, zero), one, neg)


def _clip(s: Scalar, op: Operation, x: SSAValue) -> SSAValue:
    lo = s.const(float(prop(op, "min")), x.type)  # type: ignore[arg-type]
    hi = s.const(float(prop(op, "max")), x.type)  # type: ignore[arg-type]
    return s.min(s.max(x, lo), hi)


def _pow(s: Scalar, op: Operation, x: SSAValue) -> SSAValue:
    factor = float(prop(op, "factor", 1.0))  # type: ignore[arg-type]
    if factor == 2.0:
        return s.mul(x, x)
    if factor == 1.0:
        return x
    return s.emit(xmath.PowFOp(x, s.const(factor, x.type), FAST))


_UNARY: dict[str, Callable[[Scalar, Operation, SSAValue], SSAValue]] = {
    "pd.relu": lambda s, op, x: s.max(x, s.const(0.0, x.type)),
    "pd.sigmoid": lambda s, op, x: _sigmoid(s, x),
    "pd.tanh": lambda s, op, x: s.math(xmath.TanhOp, x),
    "pd.exp": lambda s, op, x: s.math(xmath.ExpOp, x),
    "pd.log": lambda s, op, x: s.math(xmath.LogOp, x),
    "pd.sqrt": lambda s, op, x: s.math(xmath.SqrtOp, x),
    "pd.square": lambda s, op, x: s.mul(x, x),
    "pd.abs": lambda s, op, x: s.math(xmath.AbsFOp, x),
    "pd.sign": lambda s, op, x: _sign(s, x),
    "pd.erf": lambda s, op, x: s.math(xmath.ErfOp, x),
    "pd.gelu": _gelu,
    "pd.scale": _scale,
    "pd.pow": _pow,
    "pd.clip": _clip,
    "pd.cast": lambda s, op, x: s.convert(x, elem_of_result(op)),
}


@elementwise(*_UNARY, maps=identity_maps)
def _unary(s: Scalar, op: Operation, args: list[SSAValue]) -> list[SSAValue]:
    return [_UNARY[op.name](s, op, args[0])]


def transpose_maps(op: Operation) -> list[DimMap | None]:
    """`transpose` reads input dimension `perm[k]` at result index `k`."""
    perm = permutation(list(prop(op, "perm")), len(shape_of(op.operands[0].type)))  # type: ignore[arg-type]
    return [tuple(perm.index(j) for j in range(len(perm)))]


def expand_maps(op: Operation) -> list[DimMap | None]:
    """`expand`/`expand_as` read their input right-aligned, static 1s broadcast; the
    `like` operand of `expand_as` gives only the shape."""
    x = shape_of(op.operands[0].type)
    out = result_shape(op)
    return [aligned_map(x, out, len(out) - len(x))] + [None] * (len(op.operands) - 1)


# Shape ops that only re-index their operand through a projection: one output element
# is one input element, so they fuse into their readers like arithmetic does.
@elementwise("pd.transpose", maps=transpose_maps)
@elementwise("pd.expand", "pd.expand_as", maps=expand_maps)
def _reindex(s: Scalar, op: Operation, args: list[SSAValue]) -> list[SSAValue]:
    return [args[0]]


@elementwise("pd.fill_any_like", maps=shape_only_first)
def _fill_any_like(s: Scalar, op: Operation, args: list[SSAValue]) -> list[SSAValue]:
    return [s.const(float(prop(op, "value")), elem_of_result(op))]  # type: ignore[arg-type]


@elementwise("pd.fill_constant", maps=lambda op: [])
def _fill_constant(s: Scalar, op: Operation, args: list[SSAValue]) -> list[SSAValue]:
    return [s.const(float(prop(op, "value")), elem_of_result(op))]  # type: ignore[arg-type]


@elementwise("pd.square_error_cost", maps=identity_maps)
def _square_error_cost(s: Scalar, op: Operation, args: list[SSAValue]) -> list[SSAValue]:
    d = s.sub(args[0], args[1])
    return [s.mul(d, d)]


@elementwise("pd.one_hot", maps=one_hot_maps)
def _one_hot(s: Scalar, op: Operation, args: list[SSAValue]) -> list[SSAValue]:
    # Out-of-range ids give an all-zero row (the interpreter raises unless
    # allow_out_of_range; compiled code cannot raise, so it never reads out of bounds).
    cls_dim = len(result_shape(op)) - 1
    idx = s.emit(arith.IndexCastOp(s.index(cls_dim), args[0].type))
    hit = s.cmp("eq", args[0], idx)
    elem = elem_of_result(op)
    return [s.select(hit, s.const(1.0, elem), s.const(0.0, elem))]


@elementwise("pd.sum", maps=numpy_maps)
def _add_n(s: Scalar, op: Operation, args: list[SSAValue]) -> list[SSAValue]:
    acc = args[0]
    for a in args[1:]:
        acc = s.add(acc, a)
    return [acc]


# Optimizer updates are elementwise over the parameter: they fuse with the gradient
# computation that feeds them and write the parameter (and its state) in place.


def _lr(s: Scalar, op: Operation, args: list[SSAValue], t: Attribute) -> SSAValue:
    return s.const(float(prop(op, "learning_rate", 0.001)), t)  # type: ignore[arg-type]


@elementwise("pd.sgd", maps=identity_maps)
def _sgd(s: Scalar, op: Operation, args: list[SSAValue]) -> list[SSAValue]:
    p, g = args[0], args[1]
    return [s.sub(p, s.mul(_lr(s, op, args, p.type), g))]


@elementwise("pd.momentum", maps=identity_maps)
def _momentum(s: Scalar, op: Operation, args: list[SSAValue]) -> list[SSAValue]:
    # Paddle: v' = mu*v + g; p' = p - lr*(g + mu*v') if nesterov else p - lr*v'.
    p, g, v = args[0], args[1], args[2]
    t = p.type
    mu = s.const(float(prop(op, "mu", 0.9)), t)  # type: ignore[arg-type]
    lr = _lr(s, op, args, t)
    v_new = s.add(s.mul(mu, v), g)
    if prop(op, "use_nesterov", False):
        step = s.add(g, s.mul(mu, v_new))
    else:
        step = v_new
    return [s.sub(p, s.mul(lr, step)), v_new]


def adam_body(s: Scalar, op: Operation, args: list[SSAValue]) -> list[SSAValue]:
    # Operands: param, grad, moment1, moment2, beta1_pow, beta2_pow (the pows are
    # 1-element tensors read at index 0; identity maps index them with the loop's
    # dims, so they are remapped in `adam_maps`).
    p, g, m1, m2, b1p, b2p = args
    t = p.type
    one = s.const(1.0, t)
    b1 = s.const(float(prop(op, "beta1", 0.9)), t)  # type: ignore[arg-type]
    b2 = s.const(float(prop(op, "beta2", 0.999)), t)  # type: ignore[arg-type]
    eps = s.const(float(prop(op, "epsilon", 1e-8)), t)  # type: ignore[arg-type]
    lr = _lr(s, op, args, t)
    m1n = s.add(s.mul(b1, m1), s.mul(s.sub(one, b1), g))
    m2n = s.add(s.mul(b2, m2), s.mul(s.mul(s.sub(one, b2), g), g))
    # Paddle: lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t);
    #         p' = p - lr_t * m1' / (sqrt(m2') + eps * sqrt(1 - beta2^t)).
    c2 = s.math(xmath.SqrtOp, s.sub(one, b2p))
    lr_t = s.div(s.mul(lr, c2), s.sub(one, b1p))
    denom = s.add(s.math(xmath.SqrtOp, m2n), s.mul(eps, c2))
    p_new = s.sub(p, s.div(s.mul(lr_t, m1n), denom))
    return [p_new, m1n, m2n, s.mul(b1p, b1), s.mul(b2p, b2)]


def float_types() -> tuple[Attribute, ...]:
    """The float element types the lowering computes in."""
    return (f32, f64)


__all__ = [
    "DYN",
    "DimMap",
    "ELEMENTWISE",
    "Elementwise",
    "FAST",
    "REASSOC",
    "Scalar",
    "elementwise",
    "prop",
]
