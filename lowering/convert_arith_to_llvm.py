"""`convert-arith-to-llvm`: `arith` ops become `llvm` ops; `index` becomes `i64`.

Fast-math flags carry over (`contract` lets LLVM form FMAs, `reassoc` lets it
vectorize reductions).  NaN-propagating `maximumf`/`minimumf` become the
`llvm.maximum`/`llvm.minimum` intrinsics; conversions xDSL's `llvm` dialect lacks
(`fptosi`, `uitofp`) go through the saturating intrinsic and `zext` + `sitofp`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import AnyFloat, IndexType, IntegerAttr, IntegerType, ModuleOp, i32, i64
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from pullback.lowering.llvm_common import call_intrinsic, lower_index_types

_INT_BINARY: dict[type[Operation], type[Operation]] = {
    arith.AddiOp: llvm.AddOp,
    arith.SubiOp: llvm.SubOp,
    arith.MuliOp: llvm.MulOp,
    arith.DivSIOp: llvm.SDivOp,
    arith.DivUIOp: llvm.UDivOp,
    arith.RemSIOp: llvm.SRemOp,
    arith.RemUIOp: llvm.URemOp,
    arith.AndIOp: llvm.AndOp,
    arith.OrIOp: llvm.OrOp,
    arith.XOrIOp: llvm.XOrOp,
    arith.ShLIOp: llvm.ShlOp,
    arith.ShRUIOp: llvm.LShrOp,
    arith.ShRSIOp: llvm.AShrOp,
}
_FLOAT_BINARY: dict[type[Operation], type[Operation]] = {
    arith.AddfOp: llvm.FAddOp,
    arith.SubfOp: llvm.FSubOp,
    arith.MulfOp: llvm.FMulOp,
    arith.DivfOp: llvm.FDivOp,
}
_MINMAX = {
    arith.MaximumfOp: "llvm.maximum",
    arith.MinimumfOp: "llvm.minimum",
    arith.MaxnumfOp: "llvm.maxnum",
    arith.MinnumfOp: "llvm.minnum",
    arith.MaxSIOp: "llvm.smax",
    arith.MinSIOp: "llvm.smin",
    arith.MaxUIOp: "llvm.umax",
    arith.MinUIOp: "llvm.umin",
}
_ICMP = {"eq": 0, "ne": 1, "slt": 2, "sle": 3, "sgt": 4, "sge": 5, "ult": 6, "ule": 7, "ugt": 8, "uge": 9}


def _fastmath(op: Operation) -> llvm.FastMathAttr:
    flags = op.properties.get("fastmath")
    names = [getattr(f, "value", f) for f in flags.data] if flags is not None else []  # type: ignore[attr-defined]
    return llvm.FastMathAttr([llvm.FastMathFlag(n) for n in sorted(names)] or None)


def _width(t: Attribute) -> int:
    return 64 if isinstance(t, IndexType) else t.width.data  # type: ignore[attr-defined]


def _int_cast(v: SSAValue, src: Attribute, dst: Attribute, signed: bool = True) -> list[Operation]:
    ws, wd = _width(src), _width(dst)
    if ws == wd:
        return []
    if ws > wd:
        return [llvm.TruncOp(v, dst)]  # type: ignore[arg-type]
    return [(llvm.SExtOp if signed else llvm.ZExtOp)(v, dst)]  # type: ignore[arg-type]


class LowerArith(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        t = type(op)
        if isinstance(op, arith.ConstantOp):
            value = op.value
            if isinstance(value, IntegerAttr) and isinstance(value.type, IndexType):
                value = IntegerAttr(value.value.data, i64)
            rewriter.replace(op, llvm.ConstantOp(value, op.result.type))
        elif t in _INT_BINARY:
            rewriter.replace(op, _INT_BINARY[t].create(operands=list(op.operands), result_types=[op.results[0].type]))
        elif t in _FLOAT_BINARY:
            rewriter.replace(op, _FLOAT_BINARY[t](op.operands[0], op.operands[1], _fastmath(op)))  # type: ignore[call-arg]
        elif t in _MINMAX:
            rewriter.replace(op, call_intrinsic(_MINMAX[t], list(op.operands), op.results[0].type))
        elif isinstance(op, arith.CmpfOp):
            pred = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
            rewriter.replace(op, llvm.FCmpOp(op.lhs, op.rhs, pred))
        elif isinstance(op, arith.CmpiOp):
            pred = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
            rewriter.replace(op, llvm.ICmpOp(op.lhs, op.rhs, IntegerAttr(_ICMP[pred], i64)))
        elif isinstance(op, arith.SelectOp):
            rewriter.replace(op, llvm.SelectOp(op.cond, op.lhs, op.rhs))
        elif isinstance(op, arith.IndexCastOp):
            ops = _int_cast(op.input, op.input.type, op.result.type)
            rewriter.replace(op, ops, None if ops else [op.input])
        elif isinstance(op, (arith.ExtSIOp, arith.ExtUIOp, arith.TruncIOp)):
            ops = _int_cast(op.input, op.input.type, op.result.type, not isinstance(op, arith.ExtUIOp))
            rewriter.replace(op, ops, None if ops else [op.input])
        elif isinstance(op, arith.SIToFPOp):
            rewriter.replace(op, llvm.SIToFPOp(op.input, op.result.type))
        elif isinstance(op, arith.UIToFPOp):
            wide = llvm.ZExtOp(op.input, i64 if _width(op.input.type) < 64 else op.input.type)  # type: ignore[arg-type]
            rewriter.replace(op, [wide, llvm.SIToFPOp(wide.results[0], op.result.type)])
        elif isinstance(op, arith.FPToSIOp):
            rt, it = op.result.type, op.input.type
            name = f"llvm.fptosi.sat.{rt}.{it}"
            rewriter.replace(op, llvm.CallIntrinsicOp(name, [op.input], [rt]))
        elif isinstance(op, arith.ExtFOp):
            rewriter.replace(op, llvm.FPExtOp(op.input, op.result.type))
        elif isinstance(op, arith.TruncFOp):
            rewriter.replace(op, llvm.FPTruncOp(op.input, op.result.type))
        elif isinstance(op, arith.BitcastOp):
            rewriter.replace(op, llvm.BitcastOp(op.input, op.result.type))
        elif isinstance(op, arith.NegfOp):
            rewriter.replace(op, llvm.FNegOp(op.operand))
        elif isinstance(op, arith.FloorDivSIOp):
            # Floor division: truncating quotient, minus one when the remainder is
            # non-zero and its sign differs from the divisor's.
            a, b = op.lhs, op.rhs
            ty = op.result.type
            q = llvm.SDivOp(a, b)
            r = llvm.SRemOp(a, b)
            zero = llvm.ConstantOp(IntegerAttr(0, ty), ty)  # type: ignore[arg-type]
            one = llvm.ConstantOp(IntegerAttr(1, ty), ty)  # type: ignore[arg-type]
            nz = llvm.ICmpOp(r.res, zero.result, IntegerAttr(_ICMP["ne"], i64))
            x = llvm.XOrOp(r.res, b)
            neg = llvm.ICmpOp(x.res, zero.result, IntegerAttr(_ICMP["slt"], i64))
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


_ = (AnyFloat, IntegerType, i32)
