"""The fusion-planning layer of the `Lowerer`: which values get no buffer.

Pointwise ops are not given buffers of their own when every reader can recompute
them: their scalar code is inlined into the `linalg.generic` of each reader.  This
is producer-into-consumer fusion as XLA does it, decided once for the program
before any IR is emitted (`plan_inlining`) and bounded by a cost budget
(`RECOMPUTE_BUDGET`).  Its result is `inline` (the values inlined into their
readers, which `Lowerer.generic` expands) and `duplicated` (those copied into
several).

The second level, multi-output fusion of the pointwise ops left materialized
(`lowering/fusion.py`), registers itself in `MULTI_OUTPUT`: it plans with the
`Lowerer` and emits through it, so the lowerer reaches it through this hook rather
than by importing it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from xdsl.ir import Operation, SSAValue

from pullback.lowering.lowerer.buffers import Buffers
from pullback.lowering.registry import LOWERINGS, fusible_operands, shape_only

if TYPE_CHECKING:
    from pullback.lowering.lowerer import Lowerer

RECOMPUTE_BUDGET = 256
"""A pointwise value is recomputed in each reader while `cost * (readers - 1)`
stays within this budget (cost: weighted op count of its fused expression)."""


@dataclass
class MultiOutputFusion:
    """The multi-output fusion planner (`lowering/fusion.py` registers it): `plan`
    maps each grouped op's result to its group; `emit` lowers a group at its last
    member; `last` names that member."""

    plan: Callable[[Lowerer], dict[SSAValue, Any]]
    emit: Callable[[Lowerer, Any], None]
    last: Callable[[Any], Operation]


MULTI_OUTPUT: list[MultiOutputFusion] = []
"""The registered multi-output fusion (empty: every materialized pointwise op is a
loop of its own).  One home for the planner, outside the op-rule registry."""


@dataclass
class FusionPlan(Buffers):
    """Which pointwise values are inlined into their readers, and which are grouped
    into multi-output loops."""

    inline: set[SSAValue] = field(default_factory=set)
    cost: dict[SSAValue, int] = field(default_factory=dict)
    """Weighted op count of each planned pointwise value's fused expression."""
    duplicated: set[SSAValue] = field(default_factory=set)
    """Inlined values whose code is copied into several readers (theirs or an
    inlined reader's): `plan_inlining` inlines no shared value containing one."""
    fold_reductions: bool = True
    """Whether multi-output fusion may compute a whole-operand reduction (a loss) in
    the loop of the elementwise work reading the same values: its loop then
    iterates as a reduction (off for the GPU, whose reductions run sequentially)."""
    groups: dict[SSAValue, Any] = field(default_factory=dict)
    """Results of pointwise ops fused into multi-output loops -> their group
    (`MULTI_OUTPUT`); a group is emitted at its last member."""

    def plan_fusion(self) -> None:
        """Plan both levels before any IR is emitted: inlining, then the grouping of
        what stays materialized (`MULTI_OUTPUT`, when registered)."""
        self.plan_inlining()
        if MULTI_OUTPUT:
            # The planner takes the whole `Lowerer`, of which this is a layer.
            self.groups = MULTI_OUTPUT[0].plan(cast("Lowerer", self))

    def plan_inlining(self) -> None:
        """Decide which pointwise values are inlined into their readers."""
        prog = self.prog
        forced = set(self.dest) | set(prog.fetches)
        if self.range_checks:  # checked ids/labels are read from a buffer
            for op in prog.ops:
                entry = LOWERINGS.get(type(op))
                if entry is not None and entry.check is not None:
                    forced.add(prog.resolve(op.operands[entry.checked_operand]))
        for op in prog.ops:
            entry = LOWERINGS.get(type(op))
            if entry is None or not entry.is_pointwise or len(op.results) != 1:
                continue
            v = op.results[0]
            if v in forced or op.WRITES_PERSISTABLE:
                continue
            all_uses = prog.uses.get(v, [])
            if not all_uses:
                continue
            # Shape-only readers (fill_any_like) need no data: they do not count.
            uses = [(u, j) for u, j in all_uses if not shape_only(u, j)]
            fus = set(fusible_operands(op))
            inlined = [u for u in (prog.resolve(op.operands[i]) for i in fus) if u in self.inline]
            cost = (4 if op.EXPENSIVE else 1) + sum(self.cost.get(u, 0) for u in inlined)
            self.cost[v] = cost
            # A value recomputed by several readers must not itself contain one: in a
            # chain of such values (a residual network's gradient sums) each would
            # recompute all those before it, O(n^2) code and work up to the budget.
            # With this rule an op is copied into at most one shared expression.
            nested = any(u in self.duplicated for u in inlined)
            if len(uses) > 1 and nested:
                continue
            if all(j in fusible_operands(user) for user, j in uses) and cost * (len(uses) - 1) <= RECOMPUTE_BUDGET:
                self.inline.add(v)
                if len(uses) > 1 or nested:
                    self.duplicated.add(v)


__all__ = ["MULTI_OUTPUT", "RECOMPUTE_BUDGET", "FusionPlan", "MultiOutputFusion"]
