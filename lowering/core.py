"""The core of `convert-pd-to-linalg`: the `Lowerer`, the IR-building helpers and the
one registry of op lowerings, keyed by op class.

Each op family's lowering lives in `lowering/<family>.py` and registers itself here
with one of three decorators, all writing into `LOWERINGS[OpClass]`:

* `@pointwise(pd.FooOp, maps=...)`: the op computes each result element from
  operand elements at indices given by projection maps (`DimMap`), and its
  `body(s, op, args)` builds that scalar computation.  The core materializes it
  as a `linalg.generic`, or inlines it into each reader (fusion).
* `@lowers(pd.FooOp, fusible=...)`: the op has a rule `rule(low, op)` that emits
  its IR; `fusible(op)` lists the operands it reads through `Lowerer.generic` over
  their own full shape, into which elementwise producers may be inlined.
* `@result_sizes(pd.FooOp)`: how a dynamic dimension of a result is found from the
  operands' sizes (pointwise ops get theirs from their maps).

Rules receive the typed op and read its properties with `op.prop(name)` (the
declared default when absent).  Facts the lowering needs about an op class beyond
its rule are declared on the class in the dialect (`PdOp.HOST_ONLY`, `EXPENSIVE`,
`VIEW`, `WRITES_PERSISTABLE`).

Fusion: pointwise ops are not given buffers of their own when every reader can
recompute them: their scalar code is inlined into the `linalg.generic` of each
reader.  This is producer-into-consumer fusion as XLA does it, decided once for the
program (`Lowerer._plan`) and bounded by a cost budget (`RECOMPUTE_BUDGET`).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from xdsl.builder import Builder
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    TensorType,
    i1,
    i64,
)
from xdsl.dialects.linalg import attrs as linalg_attrs
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineExpr, AffineMap
from xdsl.rewriter import InsertPoint

from pullback.dialects.pd.base import DTYPE_BY_ELEM, DYN, PdOp, result_names, shape_of
from pullback.dialects.pd.program import STRUCTURAL_OPS
from pullback.lowering.abi import Abi, LoweringError, Program
from pullback.lowering.build import aligned_alloc, cmpf, cmpi, constant, fill_op, generic_op, make
from pullback.lowering.views import memref_type, reinterpret_cast

Size = int | SSAValue
"""A dimension size: a constant, or an `index` value computed at run time."""

DimMap = tuple[int | None, ...]
"""For each dimension of an operand, the loop dimension indexing it (None: index 0,
i.e. the operand is broadcast along that loop)."""

FAST = arith.FastMathFlagsAttr(["contract"])
"""Elementwise float math may contract `a*b+c` into an FMA, as XLA and MLIR do."""

APPROX = arith.FastMathFlagsAttr(["afn", "contract"])
"""A math function whose user needs it accurate only in part of its range (see
`math_polynomial_approximation.approximate`): `sigmoid`'s exp."""

REASSOC = arith.FastMathFlagsAttr(["reassoc", "contract"])
"""Reductions may be reassociated: that is what lets LLVM vectorize them."""

_FAST_PROPS: dict[str, Attribute] = {"fastmath": FAST}
"""The properties of a `FAST` float op (`make` copies them)."""

RECOMPUTE_BUDGET = 256
"""A pointwise value is recomputed in each reader while `cost * (readers - 1)`
stays within this budget (cost: weighted op count of its fused expression)."""


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


# ------------------------------------------------------------------- registry

Rule = Callable[["Lowerer", Any], None]
"""`rule(low, op)`: emit the IR of one op (typed: each rule names its op classes)."""
Body = Callable[["Scalar", Any, list[SSAValue]], list[SSAValue]]
"""`body(s, op, args)`: one scalar per result from the loaded operand scalars."""
Maps = Callable[[Any], Sequence["DimMap | None"]]
"""`maps(op)`: per operand, its `DimMap` onto the loop (None: only its shape is used)."""
Fusible = Callable[[Any], Sequence[int]]
"""`fusible(op)`: operand positions a rule reads through `Lowerer.generic` over the
operand's own full shape."""
SizeRule = Callable[["Lowerer", Any, SSAValue, int], "Size | None"]
"""`sizes(low, op, result, k)`: dynamic dimension `k` of `result` (None: not known)."""
Check = Callable[["Lowerer", Any], None]
"""`check(low, op)`: emit the run-time range check of an op's integer operand."""


@dataclass
class Fold:
    """A reduction of every element of one operand into one value, as a step of a
    loop that may compute other things too (`lowering/fusion.py`): the result
    buffer is filled with `init`, each element is combined in with `combine(s, acc,
    x)`, then `finish(low, op, out)` (if any) runs on the result (a mean's division)."""

    operand: int
    init: float
    combine: Callable[[Scalar, SSAValue, SSAValue], SSAValue]
    finish: Callable[[Lowerer, Any, SSAValue], None] | None = None


FoldRule = Callable[[Any], "Fold | None"]
"""`fold(op)`: the `Fold` of an op that reduces a whole operand (None: this one does not)."""


@dataclass
class OpLowering:
    """Everything the lowering knows about one op class (one entry of `LOWERINGS`)."""

    rule: Rule | None = None
    body: Body | None = None
    maps: Maps | None = None
    fusible: Fusible | None = None
    sizes: SizeRule | None = None
    check: Check | None = None
    """Run before the op (inlined or not): checks the ids/labels it indexes with."""
    checked_operand: int = -1
    """The operand `check` reads: it always gets a buffer of its own."""
    fold: FoldRule | None = None
    """When the op reduces every element of an operand into one value (a loss):
    how, so that multi-output fusion may compute it in a loop with others."""

    @property
    def is_pointwise(self) -> bool:
        """Lowered from its scalar body (and fusible into readers), not by a rule."""
        return self.body is not None and self.rule is None


LOWERINGS: dict[type[Operation], OpLowering] = {}
"""The lowering of every op class the pass knows (filled by the family modules)."""


def _entry(op_type: type[Operation]) -> OpLowering:
    return LOWERINGS.setdefault(op_type, OpLowering())


def lowers(*op_types: type[Operation], fusible: Fusible | None = None) -> Callable[[Rule], Rule]:
    """Register the rule lowering one or more op classes (and which of their
    operands elementwise producers may be fused into)."""

    def register(fn: Rule) -> Rule:
        for t in op_types:
            entry = _entry(t)
            entry.rule = fn
            entry.fusible = fusible
        return fn

    return register


def pointwise(*op_types: type[PdOp], maps: Maps = numpy_maps) -> Callable[[Body], Body]:
    """Register the scalar body of one or more pointwise op classes and how their
    operands are indexed (`maps`)."""

    def register(fn: Body) -> Body:
        for t in op_types:
            if not t.POINTWISE:
                raise TypeError(f"@pointwise for {t.__name__}, which does not declare POINTWISE = True")
            entry = _entry(t)
            entry.body = fn
            entry.maps = maps
        return fn

    return register


def folds(*op_types: type[PdOp]) -> Callable[[FoldRule], FoldRule]:
    """Register how one or more reduction op classes reduce a whole operand (`Fold`),
    for multi-output fusion; the op keeps its own rule for every other case."""

    def register(fn: FoldRule) -> FoldRule:
        for t in op_types:
            _entry(t).fold = fn
        return fn

    return register


def range_check(*op_types: type[PdOp], operand: int) -> Callable[[Check], Check]:
    """Register the run-time range check of one or more op classes, reading their
    integer operand `operand` (`loop_nest.check_range` does the work): an id or
    label out of range is reported as the interpreter raises it."""

    def register(fn: Check) -> Check:
        for t in op_types:
            entry = _entry(t)
            entry.check, entry.checked_operand = fn, operand
        return fn

    return register


def result_sizes(*op_types: type[PdOp]) -> Callable[[SizeRule], SizeRule]:
    """Register how dynamic result dimensions of one or more op classes are found."""

    def register(fn: SizeRule) -> SizeRule:
        for t in op_types:
            _entry(t).sizes = fn
        return fn

    return register


def lowering_of(op: Operation) -> OpLowering | None:
    """The registered lowering of `op`'s class (None: the pass cannot lower it)."""
    return LOWERINGS.get(type(op))


def fusible_operands(op: Operation) -> Sequence[int]:
    """Operand positions of `op` that can read an inlined pointwise expression."""
    entry = LOWERINGS.get(type(op))
    if entry is None:
        return ()
    if entry.is_pointwise:
        assert entry.maps is not None
        rank = len(result_shape(op))
        return [
            i for i, m in enumerate(entry.maps(op))
            if is_identity_map(m, rank) and shape_of(op.operands[i].type) == result_shape(op)
        ]
    return entry.fusible(op) if entry.fusible else ()


def fuse_first_operand(op: Operation) -> Sequence[int]:
    """A `fusible` rule: the first operand is read over its own full shape."""
    return (0,)


def sizes_of_first(low: Lowerer, op: Operation, r: SSAValue, k: int) -> Size | None:
    """A size rule: dimension `k` is the first operand's (the leading dimensions of a
    loss, all of them for shape-preserving ops)."""
    return low.sizes_of(op.operands[0])[k]


def shape_only(op: Operation, i: int) -> bool:
    """True when `op` reads only the shape of its operand `i` (fill_any_like)."""
    entry = LOWERINGS.get(type(op))
    if entry is None or not entry.is_pointwise:
        return False
    assert entry.maps is not None
    maps = entry.maps(op)
    return i < len(maps) and maps[i] is None


# ------------------------------------------------------------- small helpers


def elem_of_buffer(mem: SSAValue | Attribute) -> Attribute:
    """The element type of a memref or tensor value (or type)."""
    t = mem.type if isinstance(mem, SSAValue) else mem
    if isinstance(t, (MemRefType, TensorType)):
        return t.get_element_type()
    return t


def buffer_shape(mem: SSAValue) -> tuple[int, ...]:
    """The static shape of a memref value (DYN for `?`)."""
    t = mem.type
    assert isinstance(t, MemRefType)
    return tuple(t.get_shape())


def affine(rank: int, m: DimMap) -> AffineMap:
    """A `DimMap` as an affine map over `rank` loop dimensions."""
    return AffineMap(
        rank, 0, tuple(AffineExpr.constant(0) if d is None else AffineExpr.dimension(d) for d in m)
    )


def _dims_of(m: AffineMap) -> set[int]:
    return {e.position for e in m.results if isinstance(e, AffineDimExpr)}


def root_buffer(mem: SSAValue) -> SSAValue:
    """The allocation (or argument, or region boundary value) a buffer views, through
    reinterpret casts: what is freed, and what liveness is tracked on."""
    return _root(mem)


def _root(mem: SSAValue) -> SSAValue:
    """The allocation a buffer views (through reinterpret casts)."""
    while isinstance(mem.owner, memref.ReinterpretCastOp):
        mem = mem.owner.source
    return mem


def _hint(v: SSAValue) -> str | None:
    if isinstance(v, OpResult):
        name = result_names(v.op)[v.index]
        if name:
            cleaned = re.sub(r"[^A-Za-z0-9_.$-]", "_", name)
            return cleaned if cleaned[:1].isalpha() or cleaned[:1] == "_" else None
    return None


# ----------------------------------------------------------------- the lowerer


@dataclass
class BodyReads:
    """How a lazily built `linalg.generic` body reads `pd` values
    (`Lowerer.generic(lazy=...)`): `load` expands inlined values (each computed
    once per body and map) and reads the others from their buffers; `define` makes
    a value computed in the body a register for the later reads of the body."""

    scalar: Scalar
    """The body's scalar builder."""
    outs: list[SSAValue]
    """The outputs' current values (block arguments), in `outs` order."""
    load: Callable[[SSAValue, DimMap, bool], SSAValue]
    """`load(v, map, fusible)`: the scalar of `v` at `map`."""
    define: Callable[[SSAValue, DimMap, SSAValue], None]
    """`define(v, map, scalar)`: later loads of `v` at `map` give `scalar`."""


@dataclass
class MultiOutputFusion:
    """The multi-output fusion planner (`lowering/fusion.py` registers it): `plan`
    maps each grouped op's result to its group; `emit` lowers a group at its last
    member; `last` names that member."""

    plan: Callable[[Lowerer], dict[SSAValue, Any]]
    emit: Callable[[Lowerer, Any], None]
    last: Callable[[Any], Operation]


MULTI_OUTPUT: list[MultiOutputFusion] = []
"""The registered multi-output fusion (empty: every materialized pointwise op is a
loop of its own).  One home for the planner, outside the op-rule registry."""


_ZERO_I64 = IntegerAttr(0, i64)


@dataclass
class Lowerer:
    """State of one lowering: the entry function under construction and the
    buffer, size and fusion bookkeeping of every `pd` value."""

    prog: Program
    b: Builder
    abi: Abi
    buf: dict[SSAValue, SSAValue] = field(default_factory=dict)
    sizes: dict[SSAValue, list[Size]] = field(default_factory=dict)
    inline: set[SSAValue] = field(default_factory=set)
    cost: dict[SSAValue, int] = field(default_factory=dict)
    duplicated: set[SSAValue] = field(default_factory=set)
    """Inlined values whose code is copied into several readers (theirs or an
    inlined reader's): `_plan` inlines no shared value containing one."""
    dest: dict[SSAValue, SSAValue] = field(default_factory=dict)
    temps: dict[SSAValue, int] = field(default_factory=dict)
    """Allocated temporaries (memrefs) -> position of their last reader."""
    last_read: dict[SSAValue, int] = field(default_factory=dict)
    copy_back: list[tuple[SSAValue, SSAValue]] = field(default_factory=list)
    anchors: list[Operation | None] = field(default_factory=list)
    _consts: dict[int, SSAValue] = field(default_factory=dict)
    current: int = -1
    range_checks: bool = True
    """Whether rules emit run-time range checks (`check_slot`); off for the GPU,
    whose host code cannot read a device status buffer."""
    status: SSAValue | None = None
    """`memref<3xi64>` entry argument `[check code, bad value, limit]` (code 0: no
    error), added by the first range check; the runtime raises from it."""
    _guard: Operation | None = None
    control_sizes: set[SSAValue] = field(default_factory=set)
    """Sizes known only once control flow ran (a loop's growing stack, an `if`
    whose branches differ): a fetched value cannot have them, since the caller
    allocates outputs from shapes planned before the call (`lowering/shapes.py`)."""
    consumable: set[SSAValue] = field(default_factory=set)
    """`pd` values whose buffers this lowerer owns outright (a loop's carried values
    in its body): an op that reads one last may reuse its memory (a stack push
    grows it in place)."""
    consumed: set[SSAValue] = field(default_factory=set)
    """Buffers of `consumable` values an op took over (their owner must not free
    them again)."""
    fold_reductions: bool = True
    """Whether multi-output fusion may compute a whole-operand reduction (a loss) in
    the loop of the elementwise work reading the same values: its loop then
    iterates as a reduction (off for the GPU, whose reductions run sequentially)."""
    groups: dict[SSAValue, Any] = field(default_factory=dict)
    """Results of pointwise ops fused into multi-output loops -> their group
    (`MULTI_OUTPUT`); a group is emitted at its last member."""
    parent: Lowerer | None = None
    """The lowerer of the enclosing program when this one lowers a region of a
    control-flow op (`sub`): constants and the status buffer are the entry
    function's, kept by the outermost lowerer."""
    derived: dict[tuple[str, SSAValue, Block], SSAValue] = field(default_factory=dict)
    """Temporaries derived from a `pd` value and shared by its later readers in the
    same block (`shared`): (how, value, block) -> buffer."""

    def sub(self, prog: Program, block: Block) -> Lowerer:
        """A lowerer for a region's program (`Program.of_block`) emitting at the end
        of `block`: it shares the buffers and sizes of outer values and keeps its own
        temporaries, freed inside the region (`lower_ops`, then `free_temps`)."""
        return Lowerer(
            prog, Builder(InsertPoint.at_end(block)), self.abi, buf=self.buf, sizes=self.sizes,
            range_checks=self.range_checks, status=self.status, parent=self,
            control_sizes=self.control_sizes, fold_reductions=self.fold_reductions,
        )

    @property
    def entry_block(self) -> Block:
        """The entry function's body (top level, whatever the insertion point)."""
        op = self._guard
        return op.parent_block() if op is not None else self.b.insertion_point.block  # type: ignore[return-value]

    def check_slot(self, op: Operation, what: str) -> tuple[SSAValue, int] | None:
        """Register a run-time range check of `op`'s `what` (`id`, `label`): the
        status buffer (an entry argument added on first use) and the check's code,
        1-based; None when checks are off.  The ABI lists `[op name, what]` per code."""
        if not self.range_checks:
            return None
        if self.parent is not None:
            slot = self.parent.check_slot(op, what)
            self.status = self.parent.status
            return slot
        if self.status is None:
            block = self.entry_block
            self.status = block.insert_arg(MemRefType(i64, [3]), len(block.args))
            self.status.name_hint = "status"
        self.abi.checks.append([op.name, what])
        return self.status, len(self.abi.checks)

    @contextlib.contextmanager
    def unless_failed(self) -> Iterator[None]:
        """Emit into `scf.if status[0] == 0 { ... }` once a range check exists, so
        that a failed check leaves persistables untouched (the interpreter raises
        before any later op runs).  Temporaries allocated inside are hoisted."""
        if self.status is None or self._guard is not None:
            yield
            return
        flag = self.emit(memref.LoadOp.get(self.status, [self.index(0)])).results[0]
        zero = self.emit(constant(_ZERO_I64)).results[0]
        ok = self.emit(cmpi("eq", flag, zero)).results[0]
        block = Block()
        guard = self.emit(make(scf.IfOp, (ok,), (), regions=(Region(block), Region())))
        outer = self.b
        self.b, self._guard = Builder(InsertPoint.at_end(block)), guard
        try:
            yield
        finally:
            block.add_op(make(scf.YieldOp))
            self.b, self._guard = outer, None

    def _emit_alloc(self, op: Operation) -> None:
        """Insert an allocation at the top level (before an open guard)."""
        if self._guard is not None:
            self.entry_block.insert_op_before(op, self._guard)
        else:
            self.emit(op)

    # ------------------------------------------------------------ small helpers

    def emit(self, op: Operation) -> Operation:
        """Insert an op at the current point of the entry function."""
        self.b.insert(op)
        return op

    def index(self, n: int) -> SSAValue:
        """An `index` constant (one per value, at the start of the function)."""
        if self.parent is not None:
            return self.parent.index(n)
        if n not in self._consts:
            c = arith.ConstantOp.from_int_and_width(n, IndexType())
            c.result.name_hint = f"c{n}"
            block = self.entry_block
            first = block.first_op
            if first is None:
                block.add_op(c)
            else:
                block.insert_op_before(c, first)
            self._consts[n] = c.result
        return self._consts[n]

    def as_value(self, s: Size) -> SSAValue:
        """A size as an `index` value."""
        return self.index(s) if isinstance(s, int) else s

    def mul_sizes(self, sizes: Sequence[Size]) -> Size:
        """The product of sizes, folded where static."""
        static = 1
        dyn: list[SSAValue] = []
        for s in sizes:
            if isinstance(s, int):
                static *= s
            else:
                dyn.append(s)
        acc: Size = static
        for d in dyn:
            if acc == 1:
                acc = d
            else:
                lhs = self.as_value(acc)
                acc = self.emit(make(arith.MuliOp, (lhs, d), (lhs.type,))).results[0]
        return acc

    def memref_type(self, v: SSAValue) -> MemRefType[Attribute]:
        """The buffer type of a tensor value."""
        t = v.type
        assert isinstance(t, TensorType)
        return memref_type(t.get_element_type(), t.get_shape())

    def alloc(self, v: SSAValue) -> SSAValue:
        """A fresh temporary for `v`, freed after its last reader."""
        dyn = [s for s in self.sizes[v] if not isinstance(s, int)]
        op = aligned_alloc(dyn, self.memref_type(v))
        self._emit_alloc(op)
        name = _hint(v)
        if name:
            op.memref.name_hint = name
        self.temps[op.memref] = self.current
        return op.memref

    def temp(self, elem: Attribute, sizes: Sequence[Size]) -> SSAValue:
        """A temporary buffer of the given sizes, freed after its last reader."""
        shape = [s if isinstance(s, int) else DYN for s in sizes]
        dyn = [s for s in sizes if not isinstance(s, int)]
        op = aligned_alloc(dyn, memref_type(elem, shape))
        self._emit_alloc(op)
        self.temps[op.memref] = self.current
        return op.memref

    def out(self, v: SSAValue) -> SSAValue:
        """The buffer an op should write `v` into (its destination, or a temporary)."""
        if v in self.dest:
            self._check_planned(v)
            mem = self.dest[v]
            if DYN in buffer_shape(mem) and isinstance(mem, BlockArgument):
                mem = self.dest[v] = self.shape_view(mem, self.sizes[v])
        else:
            mem = self.alloc(v)
        self.buf[v] = mem
        return mem

    def _check_planned(self, v: SSAValue) -> None:
        """An output's sizes must not depend on control flow (`control_sizes`)."""
        todo = [s for s in self.sizes.get(v, []) if isinstance(s, SSAValue)]
        seen: set[SSAValue] = set()
        while todo:
            s = todo.pop()
            if s in seen:
                continue
            seen.add(s)
            if s in self.control_sizes:
                raise LoweringError(
                    f"cannot lower a fetch of '{_hint(v) or v.type}' to native code: its "
                    "shape is known only once control flow ran (a loop-grown stack, or "
                    "branches of different shapes), and the caller allocates outputs first"
                )
            if isinstance(s, OpResult):
                todo += list(s.op.operands)

    def read(self, v: SSAValue) -> SSAValue:
        """The buffer holding `v`, noting that it is read here."""
        v = self.prog.resolve(v)
        if v not in self.buf:
            op = v.owner
            raise LoweringError(
                f"internal: no buffer for a result of '{getattr(op, 'name', op)}'"
            )
        mem = self.buf[v]
        self.note_read(mem)
        return mem

    def buffer_read(self, mem: SSAValue, m: DimMap) -> tuple[SSAValue, DimMap, bool]:
        """A `generic` read of a raw buffer (a temporary or a view), not a `pd`
        value: it is registered as a pseudo-value holding itself."""
        self.buf[mem] = mem
        return (mem, m, False)

    def shared(self, how: str, v: SSAValue, make: Callable[[], SSAValue]) -> SSAValue:
        """A temporary derived from `pd` value `v` (`how` names the derivation:
        `channel_major`), made by `make()` for its first reader and shared by later
        readers in the same block, which count as reads of it (it is freed after
        the last).  A ResNet's batch-norm backward feeds two convolution gradients
        that both want it channel-major: one transposed copy, not two (the
        elementwise expression fused into the copy computed once)."""
        key = (how, self.prog.resolve(v), self.b.insertion_point.block)
        mem = self.derived.get(key)
        if mem is None:
            mem = self.derived[key] = make()
        else:
            self.note_read(mem)
        return mem

    def note_read(self, mem: SSAValue) -> None:
        """Record that buffer `mem` (or what it views) is read at the current op."""
        root = _root(mem)
        self.last_read[root] = max(self.last_read.get(root, -1), self.current)

    def sizes_of(self, v: SSAValue) -> list[Size]:
        """The sizes of a `pd` value."""
        return self.sizes[self.prog.resolve(v)]

    def count_as_float(self, sizes: Sequence[Size], elem: Attribute) -> SSAValue:
        """The product of sizes converted to a float scalar (for means)."""
        n = self.as_value(self.mul_sizes(sizes))
        as_int = self.emit(make(arith.IndexCastOp, (n,), (i64,))).results[0]
        return self.emit(arith.SIToFPOp(as_int, elem)).results[0]

    # ------------------------------------------------------------- generic ops

    def generic(
        self,
        domain: Sequence[Size],
        reads: Sequence[tuple[SSAValue, DimMap, bool]],
        outs: Sequence[tuple[SSAValue, DimMap]],
        body: Callable[[Scalar, list[SSAValue], list[SSAValue]], list[SSAValue]],
        reductions: Sequence[int] = (),
        library_call: str | None = None,
        scalars: Sequence[SSAValue] = (),
        lazy: Callable[[BodyReads], list[SSAValue]] | None = None,
    ) -> linalg.GenericOp:
        """Emit a `linalg.generic` over `domain`.

        `reads` are `(pd value, map, fusible)`: a fusible read of an inlined value
        expands into its scalar expression, its leaves read from buffers.  `outs` are
        `(memref, map)`.  `scalars` are loop-invariant scalar inputs.  `body(s, reads,
        outs)` gets the read scalars and the current output values and returns the
        values to store.  With `lazy`, `reads` and `body` are unused: `lazy(reads)`
        loads what it needs as it goes (`BodyReads`) and returns the values to store
        (a multi-output fused loop, `lowering/fusion.py`).
        """
        rank = len(domain)
        block = Block()
        inputs: list[SSAValue] = []
        in_maps: list[AffineMap] = []
        leaf: dict[tuple[SSAValue, DimMap], SSAValue] = {}
        s = Scalar(Builder(InsertPoint.at_end(block)))
        out_args = [block.insert_arg(elem_of_buffer(m), len(block.args)) for m, _ in outs]

        def add_input(value: SSAValue, m: AffineMap, elem: Attribute) -> SSAValue:
            inputs.append(value)
            in_maps.append(m)
            return block.insert_arg(elem, len(inputs) - 1)

        for sc in scalars:
            add_input(sc, AffineMap(rank, 0, ()), sc.type)
        scalar_args = list(block.args[: len(scalars)])

        def load(v: SSAValue, m: DimMap, fuse: bool, memo: dict[SSAValue, SSAValue]) -> SSAValue:
            v = self.prog.resolve(v)
            if fuse and v in memo:  # computed earlier in this body (inlined or grouped)
                return memo[v]
            if fuse and v in self.inline:
                if v not in memo:
                    producer = v.owner
                    assert isinstance(producer, Operation)
                    memo[v] = self._inline_expr(s, producer, m, load, memo)
                return memo[v]
            key = (v, m)
            if key not in leaf:
                mem = self.read(v)
                leaf[key] = add_input(mem, affine(rank, m), elem_of_buffer(mem))
            return leaf[key]

        memo_by_map: dict[DimMap, dict[SSAValue, SSAValue]] = {}
        if lazy is not None:
            reader = BodyReads(
                s,
                list(out_args),
                lambda v, m, fuse: load(v, m, fuse, memo_by_map.setdefault(m, {})),
                lambda v, m, x: memo_by_map.setdefault(m, {}).__setitem__(self.prog.resolve(v), x),
            )
            results = lazy(reader)
        else:
            args = [load(v, m, fuse, memo_by_map.setdefault(m, {})) for v, m, fuse in reads]
            results = body(s, scalar_args + args, list(out_args))
        s.b.insert(make(linalg.YieldOp, results))
        covered = {d for m in in_maps for d in _dims_of(m)} | {
            d for _, m in outs for d in m if d is not None
        }
        if len(covered) < rank:
            # Loop bounds come from operand shapes (as in MLIR); when fusion left a
            # loop dimension in no operand, a view of the domain's shape carries it.
            # Its block argument is unused, so the loops never load from it.
            carrier = self.shape_view(outs[0][0], domain)
            add_input(carrier, affine(rank, identity_map(rank)), elem_of_buffer(carrier))
        iterators = [
            linalg_attrs.IteratorTypeAttr.reduction() if d in reductions else linalg_attrs.IteratorTypeAttr.parallel()
            for d in range(rank)
        ]
        out_mems = [m for m, _ in outs]
        for mem in out_mems:
            self.note_read(mem)
        op = generic_op(
            inputs,
            out_mems,
            Region(block),
            [AffineMapAttr(m) for m in in_maps] + [AffineMapAttr(affine(rank, m)) for _, m in outs],
            iterators,
            StringAttr(library_call) if library_call else None,
        )
        self.emit(op)
        return op

    def _inline_expr(
        self,
        s: Scalar,
        op: Operation,
        m: DimMap,
        load: Callable[[SSAValue, DimMap, bool, dict[SSAValue, SSAValue]], SSAValue],
        memo: dict[SSAValue, SSAValue],
    ) -> SSAValue:
        """Scalar code of pointwise `op` read through loop map `m` (an op with an
        identity view of its own result shape)."""
        entry = LOWERINGS[type(op)]
        assert entry.body is not None and entry.maps is not None
        fus = set(fusible_operands(op))
        args: list[SSAValue] = []
        for i, om in enumerate(entry.maps(op)):
            if om is None:
                continue
            composed = tuple(None if d is None else m[d] for d in om)
            args.append(load(op.operands[i], composed, i in fus, memo))
        with s.viewed_through(m):
            return entry.body(s, op, args)[0]

    def shape_view(self, mem: SSAValue, sizes: Sequence[Size]) -> SSAValue:
        """A view of `mem`'s data with the given sizes (a reshape, no copy)."""
        shape = [d if isinstance(d, int) else DYN for d in sizes]
        strides: list[Size] = []
        acc: Size = 1
        for i, d in enumerate(reversed(sizes)):
            strides.insert(0, acc)
            if i < len(sizes) - 1:
                acc = self.mul_sizes([acc, d])
        op = reinterpret_cast(
            mem, [0], list(sizes), strides, memref_type(elem_of_buffer(mem), shape)
        )
        self.emit(op)
        return op.result

    def fill(self, mem: SSAValue, value: float) -> None:
        """Set every element of `mem` to `value` (`linalg.fill`)."""
        elem = elem_of_buffer(mem)
        c = Scalar(self.b).const(value, elem)
        self.emit(fill_op(c, mem))

    def pointwise_generic(self, op: Operation) -> None:
        """Materialize a pointwise op (with its fused producers) into its buffers."""
        entry = LOWERINGS[type(op)]
        body, maps = entry.body, entry.maps
        assert body is not None and maps is not None
        rank = len(result_shape(op))
        fus = set(fusible_operands(op))
        reads = [
            (v, m, i in fus) for i, (v, m) in enumerate(zip(op.operands, maps(op))) if m is not None
        ]
        outs = [(self.out(r), identity_map(rank)) for r in op.results]
        self.generic(
            self.sizes[op.results[0]],
            reads,
            outs,
            lambda s, args, _outs: body(s, op, args),
        )

    # -------------------------------------------------------------- the driver

    def lower(self) -> None:
        """Plan fusion and buffers, then emit every op, then free temporaries."""
        self.lower_ops()
        self._finish()

    def lower_ops(self) -> None:
        """Plan fusion and buffers and emit every op (temporaries stay allocated)."""
        self._plan()
        if MULTI_OUTPUT:
            self.groups = MULTI_OUTPUT[0].plan(self)
        for i, op in enumerate(self.prog.ops):
            self.current = i
            self._sizes_for(op)
            entry = LOWERINGS.get(type(op))
            if entry is not None and entry.check is not None and self.range_checks:
                entry.check(self, op)
            if isinstance(op, STRUCTURAL_OPS):
                pass  # feeds and parameters: entry-function arguments, bound already
            elif entry is None or (entry.rule is None and entry.body is None):
                raise LoweringError(
                    f"cannot lower '{op.name}' to native code yet "
                    "(no rule in convert-pd-to-linalg)"
                )
            elif op.results and op.results[0] in self.groups:
                fusion = MULTI_OUTPUT[0]
                group = self.groups[op.results[0]]
                if fusion.last(group) is op:
                    fusion.emit(self, group)
            elif entry.rule is not None:
                if any(self.needed(r) for r in op.results) or op.WRITES_PERSISTABLE:
                    with self.unless_failed() if op.WRITES_PERSISTABLE else contextlib.nullcontext():
                        entry.rule(self, op)
            elif not all(self.prog.resolve(r) in self.inline or not self.needed(r) for r in op.results):
                with self.unless_failed() if op.WRITES_PERSISTABLE else contextlib.nullcontext():
                    self.pointwise_generic(op)
            self.anchors.append(self.b.insertion_point.block.last_op)
        self.current = len(self.prog.ops)

    def needed(self, v: SSAValue) -> bool:
        """Whether `v` is read later, fetched or persisted (else it need not be computed)."""
        v = self.prog.resolve(v)
        return (
            bool(self.prog.uses.get(v)) or v in self.dest or v in self.prog.fetches
            or any(v is c for c, _ in self.copy_back)
        )

    def _plan(self) -> None:
        """Decide which pointwise values are inlined into their readers."""
        prog = self.prog
        forced = set(self.dest) | set(prog.fetches)
        if self.range_checks:  # checked ids/labels are read from a buffer
            for op in prog.ops:
                entry = LOWERINGS.get(type(op))
                if entry is not None and entry.check is not None:
                    forced.add(prog.resolve(op.operands[entry.checked_operand]))
        for op in prog.ops:
            entry = LOWERINGS.get(type(op))
            if entry is None or not entry.is_pointwise or len(op.results) != 1:
                continue
            v = op.results[0]
            if v in forced or op.WRITES_PERSISTABLE:
                continue
            all_uses = prog.uses.get(v, [])
            if not all_uses:
                continue
            # Shape-only readers (fill_any_like) need no data: they do not count.
            uses = [(u, j) for u, j in all_uses if not shape_only(u, j)]
            fus = set(fusible_operands(op))
            inlined = [u for u in (prog.resolve(op.operands[i]) for i in fus) if u in self.inline]
            cost = (4 if op.EXPENSIVE else 1) + sum(self.cost.get(u, 0) for u in inlined)
            self.cost[v] = cost
            # A value recomputed by several readers must not itself contain one: in a
            # chain of such values (a residual network's gradient sums) each would
            # recompute all those before it, O(n^2) code and work up to the budget.
            # With this rule an op is copied into at most one shared expression.
            nested = any(u in self.duplicated for u in inlined)
            if len(uses) > 1 and nested:
                continue
            if all(j in fusible_operands(user) for user, j in uses) and cost * (len(uses) - 1) <= RECOMPUTE_BUDGET:
                self.inline.add(v)
                if len(uses) > 1 or nested:
                    self.duplicated.add(v)

    def _sizes_for(self, op: Operation) -> None:
        """Compute the sizes of `op`'s results (static or derived from operands).
        A control-flow op's rule sets its results' sizes itself (they come out of
        its regions)."""
        if op.regions:
            return
        for r in op.results:
            if r in self.sizes:
                continue
            shape = shape_of(r.type)
            if DYN not in shape:
                self.sizes[r] = list(shape)
                continue
            self.sizes[r] = [d if d != DYN else self._dyn_dim(op, r, k) for k, d in enumerate(shape)]

    def _dyn_dim(self, op: Operation, r: SSAValue, k: int) -> Size:
        """A dynamic dimension `k` of result `r`, found in the operand it comes from."""
        entry = LOWERINGS.get(type(op))
        if entry is not None and entry.sizes is not None:
            got = entry.sizes(self, op, r, k)
            if got is not None:
                return got
        if entry is not None and entry.maps is not None:
            for v, m in zip(op.operands, entry.maps(op)):
                if m is None:
                    # A shape-only operand (fill_any_like) has the result's shape.
                    return self.sizes_of(v)[k]
                for j, d in enumerate(m):
                    if d == k and shape_of(v.type)[j] == DYN:
                        return self.sizes_of(v)[j]
        raise LoweringError(f"'{op.name}': cannot tell dynamic dimension {k} of its result")

    def _finish(self) -> None:
        """Copy back unsafe in-place updates, free temporaries, and return."""
        if self.copy_back:
            with self.unless_failed():
                for v, dst in self.copy_back:
                    self.copy_value(v, dst)
        self.free_temps()
        self.emit(func.ReturnOp())

    def free_temps(self, keep: Collection[SSAValue] = ()) -> None:
        """Free every temporary but those in `keep` right after its last reader (at
        the insertion point when it is read there or never)."""
        for mem, _ in list(self.temps.items()):
            if mem in keep:
                continue
            last = self.last_read.get(mem, self.temps[mem])
            anchor = self.anchors[min(last, len(self.anchors) - 1)] if last >= 0 else None
            dealloc = make(memref.DeallocOp, (mem,))
            parent = anchor.parent_block() if anchor is not None else None
            if last >= len(self.anchors) or anchor is None or parent is None:
                self.emit(dealloc)
            else:
                parent.insert_op_after(dealloc, anchor)

    def copy_buffer(self, src: SSAValue, dst: SSAValue) -> None:
        """Copy one buffer into another of the same shape."""
        rank = len(buffer_shape(dst))
        self.note_read(src)
        block = Block(arg_types=[elem_of_buffer(src), elem_of_buffer(dst)])
        block.add_op(make(linalg.YieldOp, (block.args[0],)))
        self.emit(
            generic_op(
                [src], [dst], Region(block),
                [AffineMapAttr(affine(rank, identity_map(rank)))] * 2,
                [linalg_attrs.IteratorTypeAttr.parallel()] * rank,
            )
        )

    def copy_value(self, v: SSAValue, dst: SSAValue) -> None:
        """Copy the buffer of `pd` value `v` into `dst`."""
        if DYN in buffer_shape(dst) and isinstance(dst, BlockArgument):
            dst = self.shape_view(dst, self.sizes_of(v))
        self.copy_buffer(self.read(v), dst)


def declare_callees(module: Any) -> None:
    """Declare, as external functions of `module`, the callees of `func.call`s it
    does not define (C functions a lowering calls, e.g. MPI's), with the calls'
    types."""
    defined = {o.sym_name.data for o in module.body.block.ops if isinstance(o, func.FuncOp)}
    for op in list(module.walk()):
        if isinstance(op, func.CallOp) and op.callee.string_value() not in defined:
            name = op.callee.string_value()
            module.body.block.add_op(
                func.FuncOp.external(name, [a.type for a in op.arguments], [r.type for r in op.res])
            )
            defined.add(name)


__all__ = [
    "FAST",
    "LOWERINGS",
    "MULTI_OUTPUT",
    "REASSOC",
    "RECOMPUTE_BUDGET",
    "BodyReads",
    "DimMap",
    "Fold",
    "FoldRule",
    "Lowerer",
    "LoweringError",
    "MultiOutputFusion",
    "OpLowering",
    "Scalar",
    "Size",
    "aligned_map",
    "declare_callees",
    "elem_of_result",
    "folds",
    "fuse_first_operand",
    "fusible_operands",
    "identity_map",
    "identity_maps",
    "lowering_of",
    "lowers",
    "numpy_maps",
    "pointwise",
    "range_check",
    "result_sizes",
    "root_buffer",
    "sizes_of_first",
]
