"""Scalar ops: `arith` and `math` (what each becomes is `opcodes.py`'s table),
function calls and returns."""

from __future__ import annotations

import llvmlite.ir as ir
import numpy as np
from xdsl.dialects import arith, func
from xdsl.dialects import llvm as xllvm
from xdsl.dialects.builtin import BFloat16Type, FloatAttr, IntegerAttr
from xdsl.ir import Operation

from pullback.dialects.bfloat16 import f32_to_bf16
from pullback.lowering.llvm.base import CMP_PRED, EmitterBase, Vals, emit, fastmath, handles, register_table
from pullback.lowering.llvm.opcodes import (
    BINARY_INTRINSICS,
    CASTS,
    FLOAT_BINARY,
    FLOAT_TO_INT,
    INT_BINARY,
    MATH,
    UNSIGNED_TO_FLOAT,
    check_unsigned_to_float,
    intrinsic_name,
)
from pullback.lowering.llvm.types import I1, I64
from pullback.lowering.llvm.values import ptr_of


class ScalarHandlers(EmitterBase):
    """Handlers of scalar ops, calls and returns."""


    def float_binary(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """`FLOAT_BINARY` ops, fast-math flags carried over."""
        lhs, rhs = (vals[v] for v in op.operands)
        vals[op.results[0]] = emit(b, FLOAT_BINARY[type(op)])(lhs, rhs, flags=fastmath(op))

    def int_binary(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """`INT_BINARY` ops."""
        lhs, rhs = (vals[v] for v in op.operands)
        vals[op.results[0]] = emit(b, INT_BINARY[type(op)])(lhs, rhs)

    def binary_intrinsic(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """Minimum and maximum (`BINARY_INTRINSICS`)."""
        lhs, rhs = (vals[v] for v in op.operands)
        vals[op.results[0]] = b.call(self.intrinsic(BINARY_INTRINSICS[type(op)], lhs.type, 2), [lhs, rhs])

    def cast(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """One-instruction conversions (`CASTS`); a same-type cast is the value."""
        x = vals[op.operands[0]]
        to = self.llvm_type(op.results[0].type)
        vals[op.results[0]] = x if x.type == to else emit(b, CASTS[type(op)])(x, to)

    @handles(UNSIGNED_TO_FLOAT)
    def unsigned_to_float(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """`arith.uitofp`: zero-extend to `i64`, then `sitofp` (`opcodes.py`)."""
        try:
            check_unsigned_to_float(op.operands[0].type)
        except ValueError as e:
            raise self.fail(str(e)) from None
        x = vals[op.operands[0]]
        wide = x if x.type == I64 else b.zext(x, I64)
        vals[op.results[0]] = b.sitofp(wide, self.llvm_type(op.results[0].type))

    def float_to_int(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """Float -> integer through the saturating intrinsics (`FLOAT_TO_INT`)."""
        x, rt = vals[op.operands[0]], op.results[0].type
        name = intrinsic_name(FLOAT_TO_INT[type(op)], rt, op.operands[0].type)
        vals[op.results[0]] = b.call(self.declare(name, self.llvm_type(rt), [x.type]), [x])

    def math(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """A `math` op: the intrinsic or library function `math_callee` picks."""
        args = [vals[v] for v in op.operands]
        callee = self.math_callee(op, MATH[type(op)], args[0].type)
        if callee is None:
            raise self.fail(f"'{op.name}' on {op.results[0].type} has no intrinsic or library function here")
        vals[op.results[0]] = b.call(callee, args)

    @handles(arith.ConstantOp, xllvm.ConstantOp)
    def constant(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """A scalar constant (`arith.constant`, `llvm.mlir.constant`)."""
        attr = op.properties.get("value")
        t = self.llvm_type(op.results[0].type)
        if isinstance(attr, FloatAttr) and isinstance(attr.type, BFloat16Type):
            # (a bfloat16 is held as its bits in an i16, `types.py`: rounded to nearest even)
            vals[op.results[0]] = ir.Constant(t, int(f32_to_bf16(np.float32(attr.value.data))))
        elif isinstance(attr, FloatAttr):
            vals[op.results[0]] = ir.Constant(t, float(attr.value.data))
        elif isinstance(attr, IntegerAttr):
            v = int(attr.value.data)
            vals[op.results[0]] = ir.Constant(t, v & 1 if t == I1 else v)
        else:
            raise self.fail(f"{op.name} {attr} (only scalars)")

    @handles(arith.NegfOp)
    def negf(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """`arith.negf` as `fneg`."""
        vals[op.results[0]] = b.fneg(vals[op.operands[0]], flags=fastmath(op))

    @handles(arith.SelectOp)
    def select(self, op: arith.SelectOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`arith.select` (of scalars or memrefs' pointers)."""
        vals[op.result] = b.select(vals[op.cond], ptr_of(vals[op.lhs]), ptr_of(vals[op.rhs]))

    @handles(arith.IndexCastOp)
    def index_cast(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """`arith.index_cast`: truncate or sign-extend between index and integers."""
        x = vals[op.operands[0]]
        to = self.llvm_type(op.results[0].type)
        if x.type.width == to.width:
            vals[op.results[0]] = x
        elif x.type.width > to.width:
            vals[op.results[0]] = b.trunc(x, to)
        else:
            vals[op.results[0]] = b.sext(x, to)

    @handles(arith.CeilDivUIOp)
    def ceildivui(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """`arith.ceildivui`: `(a + d - 1) / d`, unsigned."""
        a, d = (vals[v] for v in op.operands)
        one = ir.Constant(a.type, 1)
        vals[op.results[0]] = b.udiv(b.sub(b.add(a, d), one), d)

    @handles(arith.FloorDivSIOp, arith.CeilDivSIOp)
    def signed_div(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """`arith.floordivsi` / `arith.ceildivsi`: the truncating quotient, moved one
        down (floor) or up (ceil) when inexact and the exact quotient is negative
        (floor) or positive (ceil)."""
        a, d = (vals[v] for v in op.operands)
        vals[op.results[0]] = rounded_div(b, a, d, floor=isinstance(op, arith.FloorDivSIOp))

    @handles(arith.CmpiOp)
    def cmpi(self, op: arith.CmpiOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`arith.cmpi` as `icmp`, signed or unsigned."""
        pred = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
        cmp = b.icmp_unsigned if pred.startswith("u") else b.icmp_signed
        vals[op.result] = cmp(CMP_PRED[pred.removeprefix("u").removeprefix("s")], vals[op.lhs], vals[op.rhs])

    @handles(arith.CmpfOp)
    def cmpf(self, op: arith.CmpfOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`arith.cmpf` as `fcmp`, ordered or unordered (`true`/`false` fold)."""
        pred = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
        lhs, rhs = vals[op.lhs], vals[op.rhs]
        if pred in ("false", "true"):
            vals[op.result] = ir.Constant(I1, int(pred == "true"))
        elif pred == "ord":
            vals[op.result] = b.fcmp_ordered("ord", lhs, rhs)
        elif pred == "uno":
            vals[op.result] = b.fcmp_unordered("uno", lhs, rhs)
        elif pred[0] == "o":
            vals[op.result] = b.fcmp_ordered(CMP_PRED[pred[1:]], lhs, rhs)
        else:
            vals[op.result] = b.fcmp_unordered(CMP_PRED[pred[1:]], lhs, rhs)

    # -- calls ----------------------------------------------------------------------

    @handles(func.CallOp, xllvm.CallOp)
    def call(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """A call of a declared function."""
        callee = op.callee  # type: ignore[attr-defined]
        name = callee.string_value() if hasattr(callee, "string_value") else callee.root_reference.data
        fn = self.functions.get(name)
        if fn is None:
            raise self.fail(f"call of undeclared @{name}")
        res = b.call(fn, [ptr_of(vals[v]) for v in op.operands])
        if op.results:
            vals[op.results[0]] = res

    @handles(func.ReturnOp, xllvm.ReturnOp)
    def ret(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """`return`, with its one value or none."""
        if op.operands:
            b.ret(ptr_of(vals[op.operands[0]]))
        else:
            b.ret_void()


def rounded_div(b: ir.IRBuilder, a: ir.Value, d: ir.Value, floor: bool) -> ir.Value:
    """`a / d` rounded toward minus infinity (`floor`) or plus infinity: the
    truncating quotient, moved by one when inexact and the exact quotient is
    negative (floor) or positive (ceil)."""
    zero, one = ir.Constant(a.type, 0), ir.Constant(a.type, 1)
    q, r = b.sdiv(a, d), b.srem(a, d)
    inexact = b.icmp_signed("!=", r, zero)
    opposite = b.icmp_signed("<", b.xor(r, d), zero)  # r and d of opposite signs
    if floor:
        return b.select(b.and_(inexact, opposite), b.sub(q, one), q)
    return b.select(b.and_(inexact, b.not_(opposite)), b.add(q, one), q)


register_table(FLOAT_BINARY, "float_binary")
register_table(INT_BINARY, "int_binary")
register_table(BINARY_INTRINSICS, "binary_intrinsic")
register_table(CASTS, "cast")
register_table(FLOAT_TO_INT, "float_to_int")
register_table(MATH, "math")


__all__ = ["ScalarHandlers", "rounded_div"]
