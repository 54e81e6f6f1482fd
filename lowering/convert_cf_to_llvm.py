"""`convert-cf-to-llvm`: `cf.br`/`cf.cond_br` become `llvm.br`/`llvm.cond_br`."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import cf, llvm
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
)


class LowerBranches(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, cf.BranchOp):
            rewriter.replace(op, llvm.BrOp(op.successor, *op.arguments))
        elif isinstance(op, cf.ConditionalBranchOp):
            rewriter.replace(
                op,
                llvm.CondBrOp(op.cond, op.then_block, list(op.then_arguments), op.else_block, list(op.else_arguments)),
            )


@dataclass(frozen=True)
class ConvertCfToLLVMPass(ModulePass):
    """Lower unstructured control flow to LLVM branches."""

    name = "convert-cf-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(GreedyRewritePatternApplier([LowerBranches()]), apply_recursively=False).rewrite_module(op)
