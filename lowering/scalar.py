"""Scalar code and index maps: what a `@pointwise` body is written with.

`Scalar` builds the scalar computation of one element at one insertion point (the
body of a `linalg.generic`, or a loop nest's innermost block), caching constants and
loop indices; every pointwise body (`lowering/registry.py`, `@pointwise`) is written
with its helpers, so that the same body serves a materialized loop and each reader
the op is inlined into.  `DimMap` says at which loop indices an operand is read; the
helpers below build the maps of the common cases (identity, numpy broadcasting).
The fast-math flags the lowering's float ops carry are defined here too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    AnyFloat,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    Signedness,
    TensorType,
    bf16,
    f16,
    f32,
    i1,
    i16,
    i32,
)
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.utils import FastMathFlag
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from pullback.dialects.pd.base import DTYPE_BY_ELEM, shape_of
from pullback.lowering.build import cmpf, cmpi, constant, make

DimMap = tuple[int | None, ...]
"""For each dimension of an operand, the loop dimension indexing it (None: index 0,
i.e. the operand is broadcast along that loop)."""

FAST = arith.FastMathFlagsAttr([FastMathFlag.ALLOW_CONTRACT])
"""Elementwise float math may contract `a*b+c` into an FMA, as XLA and MLIR do."""

APPROX = arith.FastMathFlagsAttr([FastMathFlag.APPROX_FUNC, FastMathFlag.ALLOW_CONTRACT])
"""A math function whose user needs it accurate only in part of its range (see
`math_polynomial_approximation.approximate`): `sigmoid`'s exp."""

REASSOC = arith.FastMathFlagsAttr([FastMathFlag.REASSOC, FastMathFlag.ALLOW_CONTRACT])
"""Reductions may be reassociated: that is what lets LLVM vectorize them."""

_FAST_PROPS: dict[str, Attribute] = {"fastmath": FAST}
"""The properties of a `FAST` float op (`make` copies them)."""


# ------------------------------------------------------------------ scalar code


def as_float_of(value: float, elem: Attribute) -> float:
    """`value` rounded to the float type `elem` as numpy rounds it (to +-inf past
    the type's range); a Python float that packs into `elem` exactly."""
    with np.errstate(over="ignore", under="ignore"):
        return float(DTYPE_BY_ELEM[elem].numpy.type(value))


_CONST_ATTRS: dict[tuple[str, Attribute], FloatAttr | IntegerAttr] = {}
"""`Scalar.const`'s value attributes by (repr of the value, element type), shared by
every body (attributes are immutable; a `FloatAttr` costs 15 us to build and the
same few constants recur in every loop)."""


_CONST_ATTRS_MAX = 4096


def _const_attr(key: tuple[str, Attribute], value: float | bool, elem: Attribute) -> FloatAttr | IntegerAttr:
    """The attribute of constant `value` of element type `elem` (`Scalar.const`)."""
    attr = _CONST_ATTRS.get(key)
    if attr is None:
        if len(_CONST_ATTRS) >= _CONST_ATTRS_MAX:
            _CONST_ATTRS.clear()  # bounded in a long process compiling many programs
        if isinstance(elem, AnyFloat):
            attr = FloatAttr(as_float_of(value, elem), elem)
        else:
            assert isinstance(elem, (IntegerType, IndexType))
            attr = IntegerAttr(int(value), elem)
        _CONST_ATTRS[key] = attr
    return attr


@dataclass
class Scalar:
    """Builds scalar code at one insertion point, caching constants and loop indices."""

    b: Builder
    _consts: dict[tuple[str, Attribute], SSAValue] = field(default_factory=dict)
    _indices: dict[int, SSAValue] = field(default_factory=dict)
    _views: list[DimMap] = field(default_factory=list)
    """The loop maps of the producers being inlined, innermost last (`viewed_through`)."""

    @contextlib.contextmanager
    def viewed_through(self, m: DimMap) -> Iterator[None]:
        """Inside, `index(d)` is the index of a producer's dimension `d` read through
        the loop map `m` (dimension `d` of its result is loop dimension `m[d]`), not of
        loop dimension `d`: a fused producer whose value depends on its indices
        (`tril`, seeded dropout) read by a consumer that does not read it at its own
        indices (a scan's `x[.., j, ..]`, a transpose) must see the element it
        computes.  `m` is absolute (maps of nested producers are composed)."""
        self._views.append(m)
        try:
            yield
        finally:
            self._views.pop()

    def emit(self, op: Operation) -> SSAValue:
        """Insert `op`; return its only result."""
        self.b.insert(op)
        return op.results[0]

    def const(self, value: float | bool, elem: Attribute) -> SSAValue:
        """A constant of element type `elem` (cached per body).

        A float is first rounded to `elem` as numpy rounds it, so every attribute
        value lowers for every dtype and means what the interpreter computes with:
        a bound beyond float32's range (`clip`'s missing bound is +-DBL_MAX) becomes
        +-inf in f32, a tiny scale a denormal or zero."""
        key = (repr(value), elem)  # (attributes hash by value; printing one is slow)
        if key not in self._consts:
            self._consts[key] = self.emit(constant(_const_attr(key, value, elem)))
        return self._consts[key]

    def index(self, dim: int) -> SSAValue:
        """The current iteration index of loop dimension `dim` (`linalg.index`), or,
        inside `viewed_through(m)`, of the producer's dimension `dim`."""
        if self._views:
            loop = self._views[-1][dim]
            if loop is None:  # a dimension the reader broadcasts: size 1, index 0
                return self.const(0, IndexType())
            dim = loop
        if dim not in self._indices:
            self._indices[dim] = self.emit(linalg.IndexOp(dim))
        return self._indices[dim]

    def binary(self, op_cls: type[Operation], a: SSAValue, b: SSAValue, props: dict[str, Attribute]) -> SSAValue:
        """`op_cls(a, b)`, an `arith` op whose result has `a`'s type, with properties
        `props` (`{}` for integer ops: their `overflowFlags` default is filled in),
        built by `make` (lowering/build.py: pointwise bodies are most of the ops
        the lowering builds)."""
        return self.emit(make(op_cls, (a, b), (a.type,), props))

    # Float helpers: every pointwise body is written with these.
    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """`a + b` (float or integer)."""
        if isinstance(a.type, AnyFloat):
            return self.binary(arith.AddfOp, a, b, _FAST_PROPS)
        return self.binary(arith.AddiOp, a, b, {})

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """`a - b`."""
        if isinstance(a.type, AnyFloat):
            return self.binary(arith.SubfOp, a, b, _FAST_PROPS)
        return self.binary(arith.SubiOp, a, b, {})

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """`a * b`."""
        if isinstance(a.type, AnyFloat):
            return self.binary(arith.MulfOp, a, b, _FAST_PROPS)
        return self.binary(arith.MuliOp, a, b, {})

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """`a / b`; integers divide as Paddle's C++ kernel does, truncating toward zero.

        Native division traps on `x / 0` and `MIN / -1` (x86 `idiv`), and compiled code
        cannot raise: a zero divisor gives 0 (what the interpreter's numpy gives) and
        `-1` negates with wrap-around (the interpreter's result for `MIN / -1` too).
        """
        if isinstance(a.type, AnyFloat):
            return self.binary(arith.DivfOp, a, b, _FAST_PROPS)
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
            return self.emit(cmpf(fpred, a, b))
        ipred = {"gt": "sgt", "ge": "sge", "lt": "slt", "le": "sle"}.get(pred, pred)
        return self.emit(cmpi(ipred, a, b))

    def select(self, c: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        """`c ? a : b`."""
        return self.emit(make(arith.SelectOp, (c, a, b), (a.type,)))

    def math(self, cls: Callable[..., Operation], a: SSAValue) -> SSAValue:
        """A unary `math` op (exp, log, tanh, sqrt, erf, absf)."""
        return self.emit(cls(a, FAST))

    def convert(self, a: SSAValue, elem: Attribute) -> SSAValue:
        """Convert a scalar to another element type (Paddle's `cast`).

        Float to integer truncates and saturates (into int32 first for the integers
        narrower than that, then wraps, as Paddle's C++ casts do: -3.7 -> uint8 253);
        16-bit floats convert through float32 (`bf16_from_f32`, `f32_from_bf16` for
        bfloat16, done on its bits); uint8 (`ui8`) converts as unsigned."""
        src = a.type
        if src == elem:
            return a
        if src == bf16:
            return self.convert(self.f32_from_bf16(a), elem)
        if elem == bf16:
            return self.bf16_from_f32(self.convert(a, f32))
        if (src == f16 and elem != f32) or (elem == f16 and src != f32):
            return self.convert(self.convert(a, f32), elem)  # half <-> other via float32
        if isinstance(src, AnyFloat) and isinstance(elem, AnyFloat):
            wider = src.bitwidth < elem.bitwidth
            return self.emit((arith.ExtFOp if wider else arith.TruncFOp)(a, elem))
        if isinstance(src, AnyFloat):
            assert isinstance(elem, IntegerType)
            if elem == i1:
                return self.cmp("ne", a, self.const(0.0, src))
            if elem.bitwidth < 32:
                return self.emit(arith.TruncIOp(self.emit(arith.FPToSIOp(a, i32)), elem))
            return self.emit(arith.FPToSIOp(a, elem))
        assert isinstance(src, IntegerType)
        unsigned = src == i1 or src.signedness.data == Signedness.UNSIGNED
        if isinstance(elem, AnyFloat):
            return self.emit((arith.UIToFPOp if unsigned else arith.SIToFPOp)(a, elem))
        assert isinstance(elem, IntegerType)
        if elem == i1:
            return self.cmp("ne", a, self.const(0, src))
        if src.bitwidth < elem.bitwidth:
            return self.emit((arith.ExtUIOp if unsigned else arith.ExtSIOp)(a, elem))
        if src.bitwidth == elem.bitwidth:  # int8 <-> uint8: the same bits
            return self.emit(arith.BitcastOp(a, elem))
        return self.emit(arith.TruncIOp(a, elem))

    def f32_from_bf16(self, a: SSAValue) -> SSAValue:
        """The float32 value of a bfloat16 (exact: its bits are float32's upper half)."""
        bits = self.emit(arith.ExtUIOp(self.emit(arith.BitcastOp(a, i16)), i32))
        return self.emit(arith.BitcastOp(self.emit(arith.ShLIOp(bits, self.const(16, i32))), f32))

    def bf16_from_f32(self, f: SSAValue) -> SSAValue:
        """A float32 rounded to bfloat16, to nearest even, on its bits (as
        `dialects/bfloat16.py` does, and LLVM's `fptrunc` to `bfloat` would: done by
        hand, so that no target needs a bfloat16 conversion instruction or libcall);
        a NaN stays a quiet NaN."""
        u = self.emit(arith.BitcastOp(f, i32))
        hi = self.emit(arith.ShRUIOp(u, self.const(16, i32)))
        bias = self.emit(arith.AddiOp(self.emit(arith.AndIOp(hi, self.const(1, i32))), self.const(0x7FFF, i32)))
        rounded = self.emit(arith.ShRUIOp(self.emit(arith.AddiOp(u, bias)), self.const(16, i32)))
        nan = self.emit(cmpf("uno", f, f))
        bits = self.select(nan, self.emit(arith.OrIOp(hi, self.const(0x40, i32))), rounded)
        return self.emit(arith.BitcastOp(self.emit(arith.TruncIOp(bits, i16)), bf16))


# ----------------------------------------------------------------- index maps


def result_shape(op: Operation, i: int = 0) -> tuple[int, ...]:
    """Static shape of an op's result (DYN for `?`)."""
    return shape_of(op.results[i].type)


def elem_of_result(op: Operation, i: int = 0) -> Attribute:
    """Element type of an op's result."""
    t = op.results[i].type
    assert isinstance(t, TensorType)
    return t.get_element_type()


def identity_map(rank: int) -> DimMap:
    """The map of an operand read at exactly the loop's indices."""
    return tuple(range(rank))


def aligned_map(operand_shape: Sequence[int], out_shape: Sequence[int], offset: int) -> DimMap:
    """Map operand dims onto loop dims starting at `offset`; static 1s broadcast."""
    dims: list[int | None] = []
    for j, d in enumerate(operand_shape):
        k = offset + j
        dims.append(None if d == 1 and out_shape[k] != 1 else k)
    return tuple(dims)


def numpy_maps(op: Operation) -> list[DimMap | None]:
    """Operand maps under numpy (right-aligned) broadcasting."""
    out = result_shape(op)
    return [
        aligned_map(shape_of(v.type), out, len(out) - len(shape_of(v.type)))
        for v in op.operands
    ]


def identity_maps(op: Operation) -> list[DimMap | None]:
    """Every operand has the result's shape."""
    return [identity_map(len(shape_of(v.type))) for v in op.operands]


def is_identity_map(m: DimMap | None, rank: int) -> bool:
    """True when an operand is read at exactly the loop's indices (no broadcast)."""
    return m is not None and len(m) == rank and all(d == i for i, d in enumerate(m))


def affine(rank: int, m: DimMap) -> AffineMap:
    """A `DimMap` as an affine map over `rank` loop dimensions."""
    return AffineMap(
        rank, 0, tuple(AffineExpr.constant(0) if d is None else AffineExpr.dimension(d) for d in m)
    )


__all__ = [
    "APPROX",
    "FAST",
    "REASSOC",
    "DimMap",
    "Scalar",
    "affine",
    "aligned_map",
    "as_float_of",
    "elem_of_result",
    "identity_map",
    "identity_maps",
    "is_identity_map",
    "numpy_maps",
    "result_shape",
]
