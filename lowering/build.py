"""Building xDSL ops cheaply: `make` calls `Operation.create` directly.

An IRDL op's constructor (`IRDLOperation.__init__`, `irdl_op_init`) normalizes its
arguments for every op it builds: it wraps each operand, result type, region and
successor group, checks each against the op definition's variadic/optional
declarations (`irdl_build_arg_list`), drops `None` properties and derives segment
sizes (`operandSegmentSizes`, a fresh `DenseArrayBase` each time).  The lowering
knows the exact operands, result types and properties of the ops it builds, and
they are well typed (the module is verified by our checks and by LLVM anyway), so
that work is pure overhead: compiling the ResNet-18 step built about 11,000 ops
this way, at about 30 us each against 12 us through `create`.

`create` runs `Operation.__init__`, whose `IRDLOperation.__post_init__` still fills
in the properties and attributes an op definition declares with a default (arith's
`fastmath = #arith.fastmath<none>`, `overflowFlags = #arith.overflow<none>`), so
an op made here is the op the IRDL constructor makes, as long as the caller passes
what that constructor would: the same properties in the same order (printing
follows the dict's order), `None` ones left out, and for ops with
`AttrSizedOperandSegments` the `operandSegmentSizes` property (`segment_sizes`)
last, after the op's own properties.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TypeVar

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    StringAttr,
    i1,
    i32,
    i64,
)
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

OpT = TypeVar("OpT", bound=Operation)

_NONE: Mapping[str, Attribute] = MappingProxyType({})
"""No properties or attributes (`create` copies what it is given)."""


def make(
    op_cls: type[OpT],
    operands: Sequence[SSAValue] = (),
    result_types: Sequence[Attribute] = (),
    properties: Mapping[str, Attribute] = _NONE,
    attributes: Mapping[str, Attribute] = _NONE,
    regions: Sequence[Region] = (),
    successors: Sequence[Block] = (),
) -> OpT:
    """`op_cls` with exactly these operands, result types, properties, attributes,
    regions and successors, built by `Operation.create` without IRDL's argument
    checking (see the module docstring for what the caller must pass).  Declared
    default properties and attributes are filled in as by the IRDL constructor; the
    property and attribute mappings are copied."""
    return op_cls.create(
        operands=operands,
        result_types=result_types,
        properties=properties,
        attributes=attributes,
        regions=regions,
        successors=successors,
    )


@functools.lru_cache(maxsize=4096)
def dense_array(elem: IntegerType, values: tuple[int, ...]) -> DenseArrayBase:
    """`array<elem: values...>`, made once per element type and values (attributes
    are immutable, so one is shared: `DenseArrayBase.from_list` costs ~100 us under
    the profiler, and the same few lists recur in every loop and view)."""
    return DenseArrayBase.from_list(elem, values)


def segment_sizes(*sizes: int) -> DenseArrayBase:
    """The `operandSegmentSizes` property (`array<i32: ...>`) of an op with
    `AttrSizedOperandSegments`: one size per operand definition, in declaration
    order, 1 for a single operand."""
    return dense_array(i32, sizes)


ALIGN_64 = IntegerAttr(64, i64)
"""`alignment = 64 : i64`, the alignment of every buffer the lowering allocates."""


def constant(value: IntegerAttr | FloatAttr) -> arith.ConstantOp:
    """`arith.ConstantOp(value)`: an `arith.constant` of `value`'s type."""
    return make(arith.ConstantOp, (), (value.type,), {"value": value})


CMPF_PREDICATES = {
    name: IntegerAttr(i, 64)
    for i, name in enumerate(
        ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
         "ueq", "ugt", "uge", "ult", "ule", "une", "uno", "true")
    )
}
"""`arith.cmpf`'s predicate attributes by mnemonic (MLIR's `CmpFPredicate`)."""

CMPI_PREDICATES = {
    name: IntegerAttr(i, 64)
    for i, name in enumerate(("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"))
}
"""`arith.cmpi`'s predicate attributes by mnemonic (MLIR's `CmpIPredicate`)."""

_NO_FASTMATH = arith.FastMathFlagsAttr("none")


def cmpf(pred: str, a: SSAValue, b: SSAValue) -> arith.CmpfOp:
    """`arith.CmpfOp(a, b, pred)` (operands of one float type; no fast-math flags)."""
    return make(arith.CmpfOp, (a, b), (i1,), {"predicate": CMPF_PREDICATES[pred], "fastmath": _NO_FASTMATH})


def cmpi(pred: str, a: SSAValue, b: SSAValue) -> arith.CmpiOp:
    """`arith.CmpiOp(a, b, pred)` (operands of one integer or index type)."""
    return make(arith.CmpiOp, (a, b), (i1,), {"predicate": CMPI_PREDICATES[pred]})


def aligned_alloc(dyn: Sequence[SSAValue], t: MemRefType[Attribute]) -> memref.AllocOp:
    """`memref.AllocOp(dyn, [], t, alignment=IntegerAttr(64, i64))`: a 64-byte aligned
    buffer of type `t` with dynamic sizes `dyn` (no symbol operands)."""
    return make(memref.AllocOp, dyn, (t,), {"alignment": ALIGN_64, "operandSegmentSizes": segment_sizes(len(dyn), 0)})


def generic_op(
    inputs: Sequence[SSAValue],
    outputs: Sequence[SSAValue],
    body: Region,
    indexing_maps: Iterable[AffineMapAttr],
    iterator_types: Iterable[Attribute],
    library_call: StringAttr | None = None,
) -> linalg.GenericOp:
    """`linalg.GenericOp(inputs, outputs, body, indexing_maps, iterator_types,
    library_call=library_call)` on memrefs (no results, no `doc`)."""
    props: dict[str, Attribute] = {
        "indexing_maps": ArrayAttr(indexing_maps),
        "iterator_types": ArrayAttr(iterator_types),
    }
    if library_call is not None:
        props["library_call"] = library_call
    props["operandSegmentSizes"] = segment_sizes(len(inputs), len(outputs))
    return make(linalg.GenericOp, [*inputs, *outputs], (), props, regions=(body,))


def fill_op(value: SSAValue, mem: SSAValue) -> linalg.FillOp:
    """`linalg.FillOp([value], [mem], res=())`: set every element of memref `mem` to
    scalar `value` (of its element type).  Its hidden body, `linalg.yield` of the
    value, is built directly (the IRDL constructor builds it through an implicit
    `Builder` region, slower still)."""
    t = mem.type
    assert isinstance(t, MemRefType)
    body = Block(arg_types=(value.type, t.get_element_type()))
    body.add_op(make(linalg.YieldOp, (body.args[0],)))
    return make(linalg.FillOp, (value, mem), (), {"operandSegmentSizes": segment_sizes(1, 1)}, regions=(Region(body),))


__all__ = [
    "ALIGN_64", "CMPF_PREDICATES", "CMPI_PREDICATES", "aligned_alloc", "cmpf", "cmpi", "constant", "dense_array",
    "fill_op",
    "generic_op", "make", "segment_sizes",
]
