"""Scalar `arith` ops as llvmlite instructions, shared by the CPU translator
(`translate_to_llvmlite.py`) and the GPU kernel translator (`gpu/ptx.py`).

Each emitter takes the op, the builder and the value map (SSA value -> llvmlite
value) and binds the op's result; nothing here depends on how either translator
represents memrefs or functions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import llvmlite.ir as ir
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerType
from xdsl.ir import Attribute, Operation, SSAValue

CMP_PRED = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
"""llvmlite's spelling of `icmp`/`fcmp` predicates (without the sign or order prefix)."""

Vals = dict[SSAValue, Any]
Emitter = Callable[[Any, ir.IRBuilder, Vals], None]


def _int_type(t: Attribute) -> ir.IntType:
    return ir.IntType(64 if isinstance(t, IndexType) else t.width.data if isinstance(t, IntegerType) else 64)


def index_cast(op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
    """`arith.index_cast`: truncate or sign-extend between index and integers."""
    x = vals[op.operands[0]]
    to = _int_type(op.results[0].type)
    if x.type.width == to.width:
        vals[op.results[0]] = x
    elif x.type.width > to.width:
        vals[op.results[0]] = b.trunc(x, to)
    else:
        vals[op.results[0]] = b.sext(x, to)


def ceildivui(op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
    """`arith.ceildivui`: `(a + d - 1) / d`, unsigned."""
    a, d = (vals[v] for v in op.operands)
    one = ir.Constant(a.type, 1)
    vals[op.results[0]] = b.udiv(b.sub(b.add(a, d), one), d)


def signed_div(op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
    """`arith.floordivsi` / `arith.ceildivsi`: the truncating quotient, moved one
    down (floor) or up (ceil) when inexact and the exact quotient is negative
    (floor) or positive (ceil)."""
    a, d = (vals[v] for v in op.operands)
    zero, one = ir.Constant(a.type, 0), ir.Constant(a.type, 1)
    q, r = b.sdiv(a, d), b.srem(a, d)
    inexact = b.icmp_signed("!=", r, zero)
    opposite = b.icmp_signed("<", b.xor(r, d), zero)  # r and d of opposite signs
    if isinstance(op, arith.FloorDivSIOp):
        vals[op.results[0]] = b.select(b.and_(inexact, opposite), b.sub(q, one), q)
    else:
        vals[op.results[0]] = b.select(b.and_(inexact, b.not_(opposite)), b.add(q, one), q)


def cmpi(op: arith.CmpiOp, b: ir.IRBuilder, vals: Vals) -> None:
    """`arith.cmpi` as `icmp`, signed or unsigned."""
    pred = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
    lhs, rhs = vals[op.lhs], vals[op.rhs]
    cmp = b.icmp_unsigned if pred.startswith("u") else b.icmp_signed
    vals[op.result] = cmp(CMP_PRED[pred.removeprefix("u").removeprefix("s")], lhs, rhs)


def cmpf(op: arith.CmpfOp, b: ir.IRBuilder, vals: Vals) -> None:
    """`arith.cmpf` as `fcmp`, ordered or unordered (`true`/`false` fold)."""
    pred = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
    lhs, rhs = vals[op.lhs], vals[op.rhs]
    if pred in ("false", "true"):
        vals[op.result] = ir.Constant(ir.IntType(1), int(pred == "true"))
    elif pred == "ord":
        vals[op.result] = b.fcmp_ordered("ord", lhs, rhs)
    elif pred == "uno":
        vals[op.result] = b.fcmp_unordered("uno", lhs, rhs)
    elif pred[0] == "o":
        vals[op.result] = b.fcmp_ordered(CMP_PRED[pred[1:]], lhs, rhs)
    else:
        vals[op.result] = b.fcmp_unordered(CMP_PRED[pred[1:]], lhs, rhs)


SCALAR_EMITTERS: dict[type[Operation], Emitter] = {
    arith.IndexCastOp: index_cast,
    arith.CeilDivUIOp: ceildivui,
    arith.FloorDivSIOp: signed_div,
    arith.CeilDivSIOp: signed_div,
    arith.CmpiOp: cmpi,
    arith.CmpfOp: cmpf,
}
"""The scalar ops both translators emit the same way."""

__all__ = ["CMP_PRED", "SCALAR_EMITTERS", "ceildivui", "cmpf", "cmpi", "index_cast", "signed_div"]
