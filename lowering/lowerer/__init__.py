"""The `Lowerer`: the state of one `convert-pd-to-linalg` lowering, and its walk.

The lowerer is built in layers, one concern each, every layer using only those
below it (its methods are what the op rules of `lowering/<family>.py` call,
`low.out(v)`, `low.generic(...)`, `low.sizes_of(v)`, ...):

| layer | module | owns |
|---|---|---|
| `LowererBase` | `base.py` | the entry function under construction: builder, index constants, the range checks' status buffer and guard |
| `Sizes` | `sizes.py` | every value's sizes (`Size`), dynamic dimensions, shape-carrying views |
| `Buffers` | `buffers.py` | every value's buffer: allocation, liveness and freeing, in-place destinations, copies |
| `FusionPlan` | `fusion_plan.py` | which pointwise values are inlined into their readers (`RECOMPUTE_BUDGET`), the multi-output hook |
| `Emission` | `emit.py` | `linalg.generic` loops whose reads expand inlined values |
| `Lowerer` | here | the walk: plan, then lower every op by its registered rule, then free and return |
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import func
from xdsl.ir import Block
from xdsl.rewriter import InsertPoint

from pullback.dialects.pd.program import STRUCTURAL_OPS
from pullback.lowering.abi import LoweringError, Program
from pullback.lowering.lowerer.emit import Emission
from pullback.lowering.lowerer.fusion_plan import MULTI_OUTPUT
from pullback.lowering.registry import LOWERINGS


@dataclass
class Lowerer(Emission):
    """State of one lowering: the entry function under construction and the
    buffer, size and fusion bookkeeping of every `pd` value (see the layers)."""

    def sub(self, prog: Program, block: Block) -> Lowerer:
        """A lowerer for a region's program (`Program.of_block`) emitting at the end
        of `block`: it shares the buffers and sizes of outer values and keeps its own
        temporaries, freed inside the region (`lower_ops`, then `free_temps`)."""
        return Lowerer(
            prog, Builder(InsertPoint.at_end(block)), self.abi, buf=self.buf, sizes=self.sizes,
            range_checks=self.range_checks, status=self.status, parent=self,
            control_sizes=self.control_sizes, fold_reductions=self.fold_reductions,
        )

    def lower(self) -> None:
        """Plan fusion and buffers, then emit every op, then free temporaries."""
        self.lower_ops()
        self._finish()

    def lower_ops(self) -> None:
        """Plan fusion and buffers and emit every op (temporaries stay allocated)."""
        self.plan_fusion()
        for i, op in enumerate(self.prog.ops):
            self.current = i
            if i == self.commit_at:
                self.commit_point()
            self.sizes_for(op)
            entry = LOWERINGS.get(type(op))
            if entry is not None and entry.check is not None and self.range_checks:
                entry.check(self, op)
            if isinstance(op, STRUCTURAL_OPS):
                pass  # feeds and parameters: entry-function arguments, bound already
            elif entry is None or (entry.rule is None and entry.body is None):
                raise LoweringError(
                    f"cannot lower '{op.name}' to native code yet "
                    "(no rule in convert-pd-to-linalg)"
                )
            elif op.results and op.results[0] in self.groups:
                fusion = MULTI_OUTPUT[0]
                group = self.groups[op.results[0]]
                if fusion.last(group) is op:
                    fusion.emit(self, group)
            elif entry.rule is not None:
                if any(self.needed(r) for r in op.results) or op.WRITES_PERSISTABLE:
                    with self.unless_failed() if op.WRITES_PERSISTABLE else contextlib.nullcontext():
                        entry.rule(self, op)
            elif not all(self.prog.resolve(r) in self.inline or not self.needed(r) for r in op.results):
                with self.unless_failed() if op.WRITES_PERSISTABLE else contextlib.nullcontext():
                    self.pointwise_generic(op)
            self.anchors.append(self.b.insertion_point.block.last_op)
        self.current = len(self.prog.ops)

    def _finish(self) -> None:
        """Copy back unsafe in-place updates, free temporaries, and return."""
        if self.copy_back:
            self.commit_point()
            with self.unless_failed():
                for v, dst in self.copy_back:
                    self.copy_value(v, dst)
        self.free_temps()
        self.emit(func.ReturnOp())


__all__ = ["Lowerer"]
