"""`convert-math-to-llvm`: `math` ops become LLVM intrinsics (or libm calls).

What `math-polynomial-approximation` did not expand (every f64 op, and `erf`, `sqrt`,
`pow`... on f32) maps 1:1 onto an `llvm.intr.*` op or, for `erf`, a call to libm's
`erf`/`erff`, which the JIT resolves in the running process.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import Float32Type, ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)

from pullback.lowering.finalize_memref_to_llvm import declare_llvm_function
from pullback.lowering.llvm_common import call_intrinsic

_UNARY = {
    xmath.ExpOp: llvm.FExpOp,
    xmath.LogOp: llvm.FLogOp,
    xmath.SqrtOp: llvm.FSqrtOp,
    xmath.AbsFOp: llvm.FAbsOp,
    xmath.FloorOp: llvm.FFloorOp,
    xmath.CeilOp: llvm.FCeilOp,
    xmath.Exp2Op: llvm.FExp2Op,
    xmath.Log2Op: llvm.FLog2Op,
    xmath.SinOp: llvm.FSinOp,
    xmath.CosOp: llvm.FCosOp,
}
_INTRINSIC = {xmath.TanhOp: "llvm.tanh"}
_BINARY = {xmath.PowFOp: llvm.FPowOp, xmath.CopySignOp: llvm.FCopySignOp}
_LIBM = {xmath.ErfOp: ("erf", "erff")}


@dataclass
class LowerMath(RewritePattern):
    used: dict[str, Operation]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        t = type(op)
        if t in _UNARY:
            rewriter.replace(op, _UNARY[t].create(operands=list(op.operands), result_types=[op.results[0].type]))  # type: ignore[index]
        elif t in _BINARY:
            rewriter.replace(op, _BINARY[t].create(operands=list(op.operands), result_types=[op.results[0].type]))  # type: ignore[index]
        elif t in _INTRINSIC:
            rewriter.replace(op, call_intrinsic(_INTRINSIC[t], list(op.operands), op.results[0].type))  # type: ignore[index]
        elif t in _LIBM:
            ty = op.results[0].type
            name = _LIBM[t][1 if isinstance(ty, Float32Type) else 0]  # type: ignore[index]
            self.used[name] = op
            rewriter.replace(op, llvm.CallOp(name, *op.operands, return_type=ty))


@dataclass(frozen=True)
class ConvertMathToLLVMPass(ModulePass):
    """Lower `math` ops to LLVM intrinsics and libm calls."""

    name = "convert-math-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        used: dict[str, Operation] = {}
        PatternRewriteWalker(GreedyRewritePatternApplier([LowerMath(used)]), apply_recursively=False).rewrite_module(op)
        for name, src in sorted(used.items()):
            ty = src.results[0].type
            declare_llvm_function(op, name, [ty], ty)
