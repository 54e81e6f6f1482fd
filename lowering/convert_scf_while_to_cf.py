"""`convert-scf-while-to-cf`: `scf.while` becomes branches between blocks.

xDSL's `convert-scf-to-cf` lowers `scf.if`, `scf.for` and `scf.index_switch` but
not `scf.while`, which `pd.while` lowers to (`lowering/control.py`).  This is MLIR's
`WhileLowering` (SCFToControlFlow.cpp): the `before` region becomes the loop
header, its `scf.condition` a conditional branch to the `after` region or out of the
loop, and the `after` region's `scf.yield` a branch back to the header.

```mlir
%r = scf.while (%a = %init) : (i64) -> i64 {
  %c = ... ; scf.condition(%c) %a : i64
} do {
^bb0(%a: i64):
  ... ; scf.yield %next : i64
}
```
becomes `cf.br ^before(%init)`, `^before(%a): ... cf.cond_br %c, ^after(%a),
^exit(%a)`, `^after(%a): ... cf.br ^before(%next)`, `^exit(%r):` and what followed
the loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.cf import BranchOp, ConditionalBranchOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import BlockInsertPoint, InsertPoint


class WhileLowering(RewritePattern):
    """One `scf.while` to a header block, a body and an exit block."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.WhileOp, rewriter: PatternRewriter, /) -> None:
        """Rewrite `op` in place (see the module docstring)."""
        init_block = op.parent_block()
        parent = init_block.parent_region() if init_block is not None else None
        if init_block is None or parent is None:
            return
        # The ops after the loop move to the exit block, which receives its results.
        exit_block = init_block.split_before(op)
        for i, t in enumerate(op.result_types):
            exit_block.insert_arg(t, i)

        before_first, before_last = op.before_region.first_block, op.before_region.last_block
        after_first, after_last = op.after_region.first_block, op.after_region.last_block
        assert before_first is not None and before_last is not None
        assert after_first is not None and after_last is not None

        condition = before_last.last_op
        assert isinstance(condition, scf.ConditionOp)
        rewriter.replace(
            condition,
            ConditionalBranchOp(
                condition.condition, after_first, list(condition.args), exit_block, list(condition.args)
            ),
        )
        yielded = after_last.last_op
        assert isinstance(yielded, scf.YieldOp)
        rewriter.replace(yielded, BranchOp(before_first, *yielded.arguments))

        rewriter.inline_region(op.before_region, BlockInsertPoint.before(exit_block))
        rewriter.inline_region(op.after_region, BlockInsertPoint.before(exit_block))
        rewriter.insert(BranchOp(before_first, *op.arguments), InsertPoint.at_end(init_block))
        rewriter.replace(op, [], list(exit_block.args))


@dataclass(frozen=True)
class ConvertScfWhileToCfPass(ModulePass):
    """Lower every `scf.while` to `cf` branches (run before `convert-scf-to-cf`)."""

    name = "convert-scf-while-to-cf"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        """Rewrite every `scf.while` of `op`, nested ones included."""
        PatternRewriteWalker(WhileLowering()).rewrite_module(op)


__all__ = ["ConvertScfWhileToCfPass", "WhileLowering"]
