"""`convert-arith-to-llvm`: `arith` ops become `llvm` ops; `index` becomes `i64`.

Which LLVM instruction or intrinsic each op becomes is `lowering/llvm_opcodes.py`'s
table, shared with the GPU path (conversions included: float -> integer saturates,
unsigned -> float is `zext` + `sitofp`).  Fast-math flags carry over (`contract`
lets LLVM form FMAs, `reassoc` lets it vectorize reductions).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import IndexType, IntegerAttr, IntegerType, ModuleOp, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from pullback.lowering.llvm_common import call_intrinsic, llvm_type, lower_index_types
from pullback.lowering.llvm_opcodes import (
    BINARY_INTRINSICS,
    CASTS,
    FLOAT_BINARY,
    FLOAT_TO_INT,
    ICMP_PREDICATES,
    INT_BINARY,
    UNSIGNED_TO_FLOAT,
    check_unsigned_to_float,
    int_width,
    intrinsic_name,
)

_LLVM_OPS: dict[str, type[Operation]] = {
    cls.name.removeprefix("llvm."): cls for cls in llvm.LLVM.operations
}
"""xDSL's `llvm` dialect op of each LLVM instruction (`fadd` -> `llvm.FAddOp`)."""


def _llvm_op(opcode: str) -> type[Operation]:
    return _LLVM_OPS[opcode]


def _fastmath(op: Operation) -> llvm.FastMathAttr:
    flags = op.properties.get("fastmath")
    names = [getattr(f, "value", f) for f in flags.data] if isinstance(flags, arith.FastMathFlagsAttr) else []
    return llvm.FastMathAttr([llvm.FastMathFlag(n) for n in sorted(names)] or None)


def _int_cast(v: SSAValue, src: Attribute, dst: Attribute, signed: bool = True) -> list[Operation]:
    ws, wd = int_width(src), int_width(dst)
    if ws == wd:
        return []
    opcode = "trunc" if ws > wd else "sext" if signed else "zext"
    return [_llvm_op(opcode).create(operands=[v], result_types=[llvm_type(dst)])]


class LowerArith(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        t = type(op)
        if isinstance(op, arith.ConstantOp):
            value = op.value
            if isinstance(value, IntegerAttr) and isinstance(value.type, IndexType):
                value = IntegerAttr(value.value.data, i64)
            rewriter.replace(op, llvm.ConstantOp(value, op.result.type))
        elif t in INT_BINARY:
            rewriter.replace(op, _llvm_op(INT_BINARY[t]).create(operands=list(op.operands), result_types=[op.results[0].type]))
        elif t in FLOAT_BINARY:
            rewriter.replace(op, _llvm_op(FLOAT_BINARY[t]).create(
                operands=list(op.operands), result_types=[op.results[0].type],
                properties={"fastmathFlags": _fastmath(op)},
            ))
        elif t in BINARY_INTRINSICS:
            rewriter.replace(op, call_intrinsic(BINARY_INTRINSICS[t], list(op.operands), op.results[0].type))
        elif isinstance(op, arith.CmpfOp):
            pred = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
            rewriter.replace(op, llvm.FCmpOp(op.lhs, op.rhs, pred))
        elif isinstance(op, arith.CmpiOp):
            pred = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
            rewriter.replace(op, llvm.ICmpOp(op.lhs, op.rhs, IntegerAttr(ICMP_PREDICATES.index(pred), i64)))
        elif isinstance(op, arith.SelectOp):
            rewriter.replace(op, llvm.SelectOp(op.cond, op.lhs, op.rhs))
        elif isinstance(op, arith.IndexCastOp):
            ops = _int_cast(op.input, op.input.type, op.result.type)
            rewriter.replace(op, ops, None if ops else [op.input])
        elif isinstance(op, (arith.ExtSIOp, arith.ExtUIOp, arith.TruncIOp)):
            ops = _int_cast(op.input, op.input.type, op.result.type, not isinstance(op, arith.ExtUIOp))
            rewriter.replace(op, ops, None if ops else [op.input])
        elif isinstance(op, UNSIGNED_TO_FLOAT):
            check_unsigned_to_float(op.input.type)
            wide = _int_cast(op.input, op.input.type, i64, signed=False)
            wide_value = wide[-1].results[0] if wide else op.input
            rewriter.replace(op, [*wide, llvm.SIToFPOp(wide_value, op.result.type)])
        elif t in FLOAT_TO_INT:
            rt, it = op.results[0].type, op.operands[0].type
            rewriter.replace(op, llvm.CallIntrinsicOp(intrinsic_name(FLOAT_TO_INT[t], rt, it), list(op.operands), [rt]))
        elif t in CASTS:  # the integer casts were handled above, with index types
            rewriter.replace(op, _llvm_op(CASTS[t]).create(operands=list(op.operands), result_types=[op.results[0].type]))
        elif isinstance(op, arith.NegfOp):
            rewriter.replace(op, llvm.FNegOp(op.operand))
        elif isinstance(op, arith.FloorDivSIOp):
            # Floor division: truncating quotient, minus one when the remainder is
            # non-zero and its sign differs from the divisor's.
            a, b = op.lhs, op.rhs
            ty = op.result.type
            q = llvm.SDivOp(a, b)
            r = llvm.SRemOp(a, b)
            assert isinstance(ty, IntegerType)
            zero = llvm.ConstantOp(IntegerAttr(0, ty), ty)
            one = llvm.ConstantOp(IntegerAttr(1, ty), ty)
            nz = llvm.ICmpOp(r.res, zero.result, IntegerAttr(ICMP_PREDICATES.index("ne"), i64))
            x = llvm.XOrOp(r.res, b)
            neg = llvm.ICmpOp(x.res, zero.result, IntegerAttr(ICMP_PREDICATES.index("slt"), i64))
            both = llvm.AndOp(nz.res, neg.res)
            qm = llvm.SubOp(q.res, one.result)
            sel = llvm.SelectOp(both.res, qm.res, q.res)
            rewriter.replace(op, [q, r, zero, one, nz, x, neg, both, qm, sel])


@dataclass(frozen=True)
class ConvertArithToLLVMPass(ModulePass):
    """Lower `arith` to `llvm`, retyping `index` as `i64` everywhere."""

    name = "convert-arith-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        lower_index_types(op)
        PatternRewriteWalker(GreedyRewritePatternApplier([LowerArith()]), apply_recursively=False).rewrite_module(op)

