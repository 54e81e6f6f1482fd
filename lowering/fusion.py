"""Multi-output loop fusion: pointwise ops over one iteration space computed in ONE
`linalg.generic` with several outputs (XLA's sibling and producer-consumer
multi-output fusion), planned after the producer-into-consumer inlining of
`FusionPlan.plan_inlining` (`lowering/lowerer/fusion_plan.py`).

Why: inlining (`fusion_plan.RECOMPUTE_BUDGET`) gives a pointwise value with many readers
either a recomputation in each reader or a buffer of its own.  A program with
fan-out (a residual `h = f(h) + x`, whose gradient sums one contribution per reuse)
then lowered to one loop per materialized value plus one for the `pd.sum` of the
contributions, each loop recomputing the forward values it needs.  Here the ops that
stay materialized are grouped: a group's members are emitted together, at the
position of its last member, as one `linalg.generic` whose body computes each member
in program order, so that

* a member read by later members of its group is a register, not a buffer: when
  nothing outside the group reads it (and it is not fetched), it is *internal* and
  gets no buffer at all (gradient contributions accumulate in registers);
* the inlined expressions several members read (forward values the backward needs)
  are computed once per element (one memo per body, `Lowerer.generic`), not once
  per reader;
* a sum or mean of every element of a value over the same iteration space (a loss;
  the reduction registers its `Fold` with `registry.folds`) may be a member too: it
  accumulates into its scalar output in the same loop, so the forward values it and
  the backward read are computed once (`Lowerer.fold_reductions`; off for the GPU).

The output stays ordinary `linalg.generic` on memrefs: parallel iterators and
identity output maps, except that a group holding a folded reduction iterates as a
reduction (its scalar output is indexed by no loop dimension), so a parallelizing
pass must split it into partial sums or leave it sequential.

Legality (`plan_groups`), in program order over the materialized pointwise ops
(and foldable reductions):

* members have the same iteration space: the same static shape, or one reads the
  other through an identity map (dynamic dimensions then agree at run time);
* a member reads earlier members only through identity maps, directly or through
  inlined expressions (a broadcast read needs the buffer before the loop);
* a group is emitted at its last member: no op reading a member's buffer (directly
  or through an inlined expression) may come before that point, and no barrier
  (an op with regions, an in-place persistable update, an op with side effects)
  may lie between members;
* a folded reduction's result is read only after its loop (never by a member);
* ops with a run-time range check, several results, or a destination that is a
  persistable updated in place stay alone; so do the ops of a loop body whose
  carried buffers an op may take over in place.

What stays recomputed: a value read in loops that cannot be one (across a matmul,
a partial reduction, a softmax) is recomputed in each while within
`fusion_plan.RECOMPUTE_BUDGET`, stored otherwise (measured in benchmarks/RESULTS.md,
"Fan-out fusion").
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from xdsl.ir import Operation, SSAValue
from xdsl.traits import Pure

from pullback.dialects.pd.base import DYN, PdOp, shape_of
from pullback.dialects.pd.program import STRUCTURAL_OPS, ParameterOp
from pullback.lowering.abi import FlatOp
from pullback.lowering.lowerer import Lowerer
from pullback.lowering.lowerer.emit import BodyReads
from pullback.lowering.lowerer.fusion_plan import MULTI_OUTPUT, MultiOutputFusion
from pullback.lowering.registry import LOWERINGS, Fold, fusible_operands, shape_only
from pullback.lowering.scalar import DimMap, Scalar, identity_map


@dataclass(eq=False)
class Group:
    """Pointwise ops emitted as one multi-output `linalg.generic` (program order)."""

    domain: SSAValue
    """A value whose shape is the loop's iteration space."""
    members: list[Operation] = field(default_factory=list)
    internal: set[SSAValue] = field(default_factory=set)
    """Member results computed in registers only (no buffer: nothing else reads them)."""
    closed: bool = False

    @property
    def last(self) -> Operation:
        """The member at whose position the group is emitted."""
        return self.members[-1]


def is_barrier(op: Operation) -> bool:
    """Whether a group may not extend across `op`: control flow (its regions read
    and write buffers the planner does not follow), in-place persistable updates,
    and ops with side effects (collectives, checked losses, stacks, random state)."""
    if op.regions:
        return True
    if isinstance(op, PdOp):
        if op.WRITES_PERSISTABLE:
            return True
        return not isinstance(op, STRUCTURAL_OPS) and not op.has_trait(Pure)
    return True


class _Planner:
    """The state of one planning walk (see `plan_groups`)."""

    def __init__(self, low: Lowerer) -> None:
        self.low = low
        self.prog = low.prog
        self.group_of: dict[SSAValue, Group] = {}
        self._readers: dict[SSAValue, set[FlatOp]] = {}
        self._domain: dict[SSAValue, SSAValue] = {}
        self.param_buffers = {
            low.buf[op.results[0]] for op in self.prog.ops
            if isinstance(op, ParameterOp) and op.results[0] in low.buf
        }
        """Buffers of persistables read with `pd.parameter` (in-place destinations)."""

    # ---------------------------------------------------------- value facts

    def _root(self, v: SSAValue) -> SSAValue:
        """Union-find root of `v`'s iteration-space class."""
        while self._domain.get(v, v) is not v:
            v = self._domain[v]
        return v

    def _union(self, a: SSAValue, b: SSAValue) -> None:
        ra, rb = self._root(a), self._root(b)
        if ra is not rb:
            self._domain[ra] = rb

    def same_domain(self, a: SSAValue, b: SSAValue) -> bool:
        """Whether `a` and `b` have the same sizes at run time."""
        sa, sb = shape_of(a.type), shape_of(b.type)
        if sa != sb:
            return False
        return DYN not in sa or self._root(a) is self._root(b)

    def readers(self, v: SSAValue) -> set[FlatOp]:
        """The ops that read `v`'s buffer: its readers, through inlined readers to
        where their expressions are emitted (shape-only readers do not count)."""
        v = self.prog.resolve(v)
        if v in self._readers:
            return self._readers[v]
        out: set[FlatOp] = set()
        self._readers[v] = out
        for u, j in self.prog.uses.get(v, []):
            if j >= 0 and shape_only(u, j):
                continue
            if len(u.results) == 1 and self.prog.resolve(u.results[0]) in self.low.inline:
                out |= self.readers(u.results[0])
            else:
                out.add(u)
        return out

    def reads(self, op: Operation) -> list[tuple[SSAValue, bool]]:
        """The materialized values pointwise `op` reads, each with whether through
        identity maps only (through its inlined operands' expressions too)."""
        out: list[tuple[SSAValue, bool]] = []

        fold = self.fold_of(op)
        if fold is not None:
            x = self.prog.resolve(op.operands[fold.operand])
            if x not in self.low.inline:
                return [(x, True)]
            owner = x.owner
            assert isinstance(owner, Operation)
            op = owner

        def walk(o: Operation, identity: bool) -> None:
            fus = set(fusible_operands(o))
            entry = LOWERINGS[type(o)]
            assert entry.maps is not None
            for i, m in enumerate(entry.maps(o)):
                if m is None:
                    continue
                v = self.prog.resolve(o.operands[i])
                ident = identity and i in fus
                if i in fus and v in self.low.inline:
                    owner = v.owner
                    assert isinstance(owner, Operation)
                    walk(owner, ident)
                else:
                    out.append((v, ident))

        walk(op, True)
        return out

    # ---------------------------------------------------------- candidates

    def fold_of(self, op: Operation) -> Fold | None:
        """How `op` reduces a whole operand, when it does and may join a group."""
        entry = LOWERINGS.get(type(op))
        if entry is None or entry.fold is None or not self.low.fold_reductions:
            return None
        return entry.fold(op)

    def domain_of(self, op: Operation) -> SSAValue:
        """The value whose shape is `op`'s iteration space."""
        fold = self.fold_of(op)
        return op.results[0] if fold is None else self.prog.resolve(op.operands[fold.operand])

    def candidate(self, op: Operation) -> bool:
        """Whether a pointwise op the lowering materializes, or a whole-operand
        reduction, may join a group."""
        low = self.low
        entry = LOWERINGS.get(type(op))
        if entry is None or len(op.results) != 1:
            return False
        if not entry.is_pointwise and self.fold_of(op) is None:
            return False
        if entry.check is not None or is_barrier(op):
            return False
        v = op.results[0]
        if v in low.inline or not low.needed(v):
            return False
        if any(v is c for c, _ in low.copy_back):
            return False
        dest = low.dest.get(v)
        return dest is None or dest not in self.param_buffers

    # ---------------------------------------------------------- the walk

    def plan(self) -> list[Group]:
        """Group the materialized pointwise ops; mark internal results."""
        prog = self.prog
        groups: list[Group] = []
        open_groups: list[Group] = []
        for op in prog.ops:
            if is_barrier(op) and not self.candidate(op):
                for g in open_groups:
                    g.closed = True
                open_groups = []
            entry = LOWERINGS.get(type(op))
            if entry is not None and entry.is_pointwise and len(op.results) == 1:
                for i in fusible_operands(op):
                    self._union(op.results[0], prog.resolve(op.operands[i]))
            if not self.candidate(op):
                continue
            v = op.results[0]
            pos = prog.pos[op]
            reads = self.reads(op)
            # Producers in other open groups are emitted first: close them.
            target: Group | None = None
            for g in open_groups:
                members: set[SSAValue] = {m.results[0] for m in g.members}
                if not any(r in members for r, _ in reads):
                    continue
                if self._can_join(g, v, pos, reads, members) and target is None:
                    target = g
                else:
                    g.closed = True
            if target is None:
                for g in open_groups:
                    if g.closed:
                        continue
                    members = {m.results[0] for m in g.members}
                    if self._can_join(g, v, pos, reads, members):
                        target = g
                        break
            if target is None:
                target = Group(self.domain_of(op))
                groups.append(target)
            target.members.append(op)
            self.group_of[v] = target
            open_groups = [g for g in open_groups if not g.closed]
            if target not in open_groups:
                open_groups.append(target)
        for g in groups:
            self._mark_internal(g)
        return [g for g in groups if len(g.members) > 1]

    def _can_join(
        self, g: Group, v: SSAValue, pos: int, reads: list[tuple[SSAValue, bool]], members: set[SSAValue]
    ) -> bool:
        """Whether `v` (at `pos`) may join `g`, moving its emission to `pos`."""
        owner = v.owner
        assert isinstance(owner, Operation)
        if g.closed or not self.same_domain(self.domain_of(owner), g.domain):
            return False
        if any(r in members and not ident for r, ident in reads):
            return False
        # A reduction's result is complete only after the loop: its readers come after.
        if any(r in members and self.fold_of(r.owner) is not None for r, _ in reads):  # type: ignore[arg-type]
            return False
        for m in g.members:
            for reader in self.readers(m.results[0]):
                if reader is v.owner or self._group(reader) is g:
                    continue
                if self.prog.pos[reader] < pos:
                    return False
        return True

    def _group(self, op: Operation) -> Group | None:
        """The group of `op` (None: in none)."""
        return self.group_of.get(op.results[0]) if len(op.results) == 1 else None

    def _mark_internal(self, g: Group) -> None:
        """Members nothing outside the group reads, and not kept, need no buffer."""
        if len(g.members) < 2:
            return
        low = self.low
        for m in g.members[:-1]:
            v = m.results[0]
            if v in low.dest or v in self.prog.fetches or self.fold_of(m) is not None:
                continue
            rs = self.readers(v)
            if rs and all(self._group(r) is g for r in rs):
                g.internal.add(v)


def plan_groups(low: Lowerer) -> dict[SSAValue, Group]:
    """Group the pointwise ops `low` materializes (after its inlining plan) into
    multi-output loops; returns each grouped member's result -> its group (only
    groups of two or more members)."""
    if low.consumable:
        # In a loop body an op may take over a carried buffer in place: moving a
        # reader of it past that op is not safe, and loop bodies are small.
        return {}
    groups = _Planner(low).plan()
    return {m.results[0]: g for g in groups for m in g.members}


def emit_group(low: Lowerer, g: Group) -> None:
    """Emit group `g` as one `linalg.generic` (at the current insertion point, the
    position of its last member): members computed in order, each a register for
    the members after it; results not internal stored to their buffers, whole-operand
    reductions accumulated into theirs (the loop then iterates as a reduction)."""
    rank = len(shape_of(g.domain.type))
    idm = identity_map(rank)
    folds: dict[Operation, Fold] = {}
    for m in g.members:
        entry = LOWERINGS[type(m)]
        fold = entry.fold(m) if entry.fold is not None and not entry.is_pointwise else None
        if fold is not None:
            folds[m] = fold
    stored = [m for m in g.members if m.results[0] not in g.internal]
    outs: list[tuple[SSAValue, DimMap]] = []
    for m in stored:
        mem = low.out(m.results[0])
        if m in folds:
            low.fill(mem, folds[m].init)
            outs.append((mem, tuple(None for _ in shape_of(m.results[0].type))))
        else:
            outs.append((mem, idm))

    def body(reads: BodyReads) -> list[SSAValue]:
        scalars: dict[SSAValue, SSAValue] = {}
        for m in g.members:
            entry = LOWERINGS[type(m)]
            if m in folds:
                fold = folds[m]
                x = reads.load(m.operands[fold.operand], idm, True)
                acc = reads.outs[stored.index(m)]
                scalars[m.results[0]] = fold.combine(reads.scalar, acc, x)
                continue
            assert entry.body is not None and entry.maps is not None
            fus = set(fusible_operands(m))
            args = [
                reads.load(v, mm, i in fus)
                for i, (v, mm) in enumerate(zip(m.operands, entry.maps(m))) if mm is not None
            ]
            r = entry.body(reads.scalar, m, args)[0]
            reads.define(m.results[0], idm, r)
            scalars[m.results[0]] = r
        return [scalars[m.results[0]] for m in stored]

    low.generic(low.sizes_of(g.domain), [], outs, _no_body, lazy=body,
                reductions=list(range(rank)) if folds else ())
    for m, fold in folds.items():
        if fold.finish is not None:
            fold.finish(low, m, low.buf[m.results[0]])


def _no_body(s: Scalar, reads: list[SSAValue], outs: list[SSAValue]) -> list[SSAValue]:
    raise AssertionError("a lazily built body is built by `lazy`")


ENABLED = os.environ.get("PULLBACK_MO_FUSION", "1").strip().lower() not in ("0", "false", "off", "no")
"""Multi-output fusion on; `PULLBACK_MO_FUSION=0` turns it off (to compare: the
compile cache's key records the setting; tests switch it to count loops)."""


def _plan(low: Lowerer) -> dict[SSAValue, Any]:
    return plan_groups(low) if ENABLED else {}


MULTI_OUTPUT.append(MultiOutputFusion(_plan, emit_group, lambda g: g.last))


__all__ = ["ENABLED", "Group", "emit_group", "is_barrier", "plan_groups"]
