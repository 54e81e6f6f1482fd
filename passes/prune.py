"""`prune`: drop ops that do not lead to the program's outputs (Paddle's
`Program._prune`), inside backward regions too.

Outputs ("anchors") are, unless `targets` names them explicitly: the operands of
`pd.fetch`, every `pd.backward` op (its targets, seeds, inputs and whatever its
region reads), and ops with side effects (the optimizer updates).  Every other op of
block 0 that none of them needs is removed, feeds and parameters included.  Inside a
backward region, ops that no yielded gradient needs are removed as well, and inside
the regions of `pd.if`/`pd.while` ops that their terminator does not need.

```
pullback-opt prog.mlir -p 'prune{targets=mean_0.tmp_0}'
```
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator, is_side_effect_free
from xdsl.utils.exceptions import DiagnosticException

from pullback.dialects import pd
from pullback.dialects.pd.base import value_name


def prune_block(block: Block, anchors: set[Operation]) -> int:
    """Remove ops of `block` that no anchor needs; returns how many were removed.

    The regions of the ops kept (`pd.if`, `pd.while`) are pruned as well, each block
    keeping what its terminator and its side-effecting ops need."""
    # One walk from the end: an op is needed when it is an anchor or something still
    # uses one of its results.  Users come after their operands' definitions (in
    # this block or in regions of later ops), so every op a dead one used is judged
    # after the dead one is gone: reading the use lists is all it takes, no sets.
    live: list[Operation] = []
    removed = 0
    op = block.last_op
    while op is not None:
        prev = op.prev_op
        if op in anchors or any(r.first_use is not None for r in op.results):
            live.append(op)
        else:
            block.erase_op(op)
            removed += 1
        op = prev
    for op in live:
        if isinstance(op, pd.BackwardOp):
            continue  # its region is pruned by prune_backward_region, once filled
        for region in op.regions:
            for inner in region.blocks:
                term = inner.last_op
                if term is None or not term.has_trait(IsTerminator):
                    continue
                removed += prune_block(
                    inner, {term, *(o for o in inner.ops if not is_side_effect_free(o))}
                )
    return removed


def prune_backward_region(bw: pd.BackwardOp) -> int:
    """Remove ops of a filled backward region that no yielded gradient needs."""
    if not bw.is_filled:
        return 0
    term = bw.body.block.last_op
    assert term is not None
    return prune_block(bw.body.block, {term})


@dataclass(frozen=True)
class PrunePass(ModulePass):
    """Keep only ops on a path to the program's outputs (see the module docstring)."""

    name = "prune"

    targets: str = ""
    """Comma-separated variable names to keep; empty: fetches, backward ops and
    side-effecting ops."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        block = op.body.block
        if self.targets:
            wanted = [t.strip() for t in self.targets.split(",") if t.strip()]
            latest: dict[str, Operation] = {}
            for o in block.ops:
                for r in o.results:
                    n = value_name(r)
                    if n is not None:
                        latest[n] = o
            missing = [t for t in wanted if t not in latest]
            if missing:
                raise DiagnosticException(
                    f"prune: no variable named {', '.join(repr(m) for m in missing)} in the program"
                )
            anchors = {latest[t] for t in wanted}
        else:
            anchors = {
                o
                for o in block.ops
                if isinstance(o, (pd.FetchOp, pd.BackwardOp))
                or not (is_side_effect_free(o) or isinstance(o, (pd.DataOp, pd.ParameterOp)))
            }
        prune_block(block, anchors)
        for bw in block.ops:
            if isinstance(bw, pd.BackwardOp):
                prune_backward_region(bw)
