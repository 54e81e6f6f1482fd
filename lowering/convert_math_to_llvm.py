"""`convert-math-to-llvm`: `math` ops become LLVM intrinsics (or libm calls).

What `math-polynomial-approximation` did not expand (every f64 op, and `erf`, `sqrt`,
`pow`... on f32) maps 1:1 onto the LLVM intrinsic `lowering/llvm_opcodes.py` names
(the table the GPU path uses too) or, for `erf`, a call to libm's `erf`/`erff`,
which the JIT resolves in the running process.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import llvm
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
from pullback.lowering.llvm_opcodes import LIBM, MATH_INTRINSICS


@dataclass
class LowerMath(RewritePattern):
    used: dict[str, Operation]

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        t = type(op)
        if t in MATH_INTRINSICS:
            rewriter.replace(op, call_intrinsic(MATH_INTRINSICS[t], list(op.operands), op.results[0].type))
        elif t in LIBM:
            ty = op.results[0].type
            name = LIBM[t] + ("f" if isinstance(ty, Float32Type) else "")
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
