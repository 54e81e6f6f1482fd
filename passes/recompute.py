"""`recompute`: activation checkpointing of filled `pd.backward` regions.

A backward region reads forward values directly, so every forward value a gradient
rule needs stays alive from its definition until its last backward use: the whole
forward pass is resident at the start of the backward sweep.  This pass keeps only the
*checkpoints* (and feeds, parameters, results of ops with side effects or regions,
values of earlier backward ops) and rewrites every other forward value the region
reads into a clone of its forward computation, inserted inside the region right before
its first backward use (Paddle's `_append_backward_ops_with_checkpoints_`).  Ops after
the last checkpoint are not replayed (their values are the first the backward needs).  The
backward sweep visits segments last to first, so each segment is replayed just before
its gradient ops, and the original forward values die after their last forward use.

The clones are bit-identical replays: ops are pure functions of their operands and
properties, and `pd.dropout`'s mask is a hash of its `seed` property and the element
index (`dialects/pd/nn.py`), so a replayed dropout draws the same mask.  Clones are
named `<name>@RECOMPUTE`.

Which values are checkpoints:

* `checkpoints=a,b,c`: those Paddle variable names (an unknown name is an error);
* `budget=auto` (the default when no checkpoints are given): a search -- among the
  cost model's checkpoints and Chen's greedy ones for halving budgets, those of least
  estimated peak memory (`estimate_peak`: liveness of the `pd` values, the backward
  region spliced in) whose replays add at most one forward pass of expensive ops;
* `budget=cost`: a cost model -- outputs of ops that are not pointwise (matmul, convolution, reductions, ...) are kept, the
  cheap pointwise chains between them (bias adds, activations, dropout) are replayed:
  replaying them costs one pass over memory, keeping them a buffer each;
* `budget=<bytes>`: Chen et al.'s greedy segmentation (arXiv:1604.06174) -- walking
  the forward values in program order, a value becomes a checkpoint once the bytes of
  the values since the previous checkpoint exceed the budget (dynamic dimensions count
  as `dim`, default 1: the budget is then per example).

```
pullback-opt prog.mlir -p 'autodiff,recompute{checkpoints=fc_0.tmp_2,fc_2.tmp_2}'
pullback-opt prog.mlir -p 'autodiff,recompute{budget=auto}'
```
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
from pullback.dialects import pd
from pullback.passes.gc_pause import cyclic_gc_paused
from pullback.dialects.pd.base import elem_of, set_value_name, shape_of, value_name
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import is_side_effect_free
from xdsl.utils.exceptions import DiagnosticException

SUFFIX = "@RECOMPUTE"
"""Appended to the Paddle name of a replayed value."""


class RecomputeError(DiagnosticException):
    """Bad checkpoints or budget."""


def _forward_ops(bw: pd.BackwardOp) -> list[Operation]:
    parent = bw.parent_block()
    assert parent is not None
    out = []
    for op in parent.ops:
        if op is bw:
            break
        out.append(op)
    return out


def _pinned(op: Operation) -> bool:
    """Ops never replayed: inputs, other backward ops, ops with regions or effects."""
    return (
        isinstance(op, (pd.DataOp, pd.ParameterOp, pd.BackwardOp))
        or bool(op.regions)
        or not is_side_effect_free(op)
        or getattr(op, "HOST_ONLY", None) is not None
    )


def _outer_reads(bw: pd.BackwardOp, forward: set[Operation]) -> list[SSAValue]:
    """Forward values the region reads, in forward program order (unique)."""
    seen: set[SSAValue] = set()
    for inner in bw.body.walk():
        for v in inner.operands:
            if isinstance(v.owner, Operation) and v.owner in forward:
                seen.add(v)
    order = {op: i for i, op in enumerate(_forward_ops(bw))}
    return sorted(seen, key=lambda v: (order[v.owner], getattr(v, "index", 0)))  # type: ignore[index]


def _cheap(op: Operation) -> bool:
    """Whether replaying `op` costs O(size of its result): pointwise ops (elementwise,
    activations, casts, fills: `POINTWISE` on the op class) and ops whose operands
    all have the result's shape (dropout, softmax).  Contractions,
    convolutions, reductions and the like are not, and the cost model keeps them."""
    if getattr(op, "POINTWISE", False):
        return True
    # Shape-preserving ops (dropout, softmax, ...): work linear in the result.
    shapes = {tuple(shape_of(v.type)) for v in (*op.operands, *op.results)}
    return len(op.results) == 1 and len(shapes) == 1


def _nbytes(v: SSAValue, dim: int) -> int:
    n = int(np.prod([d if d >= 0 else dim for d in shape_of(v.type)], dtype=np.int64))
    width = getattr(elem_of(v.type), "bitwidth", 32)
    return n * max(1, (int(width) + 7) // 8)


def _greedy(forward: list[Operation], limit: int, dim: int) -> set[SSAValue]:
    """Chen et al.'s greedy segmentation: a checkpoint each time the bytes of the
    values since the previous one exceed `limit`."""
    keep: set[SSAValue] = set()
    acc = 0
    for op in forward:
        if _pinned(op):
            continue
        for v in op.results:
            acc += _nbytes(v, dim)
            if acc > limit:
                keep.add(v)
                acc = 0
    return keep


def auto_checkpoints(bw: pd.BackwardOp, budget: str = "cost", dim: int = 1) -> set[SSAValue]:
    """Checkpoints chosen by the cost model (`budget="cost"`) or by greedy
    segmentation under a per-segment byte budget (see the module docstring)."""
    forward = _forward_ops(bw)
    if budget == "cost":
        return {r for op in forward if not _cheap(op) for r in op.results}
    try:
        limit = int(float(budget))
    except ValueError:
        raise RecomputeError(
            f"recompute: budget must be 'auto', 'cost' or a number of bytes, got '{budget}'"
        ) from None
    if limit <= 0:
        raise RecomputeError(f"recompute: budget must be positive, got {limit}")
    return _greedy(forward, limit, dim)


def estimate_peak(block: Block, dim: int = 1) -> int:
    """Peak bytes of live `pd` values of `block` run in order (backward regions
    spliced in), each value live from its definition to its last use; feeds,
    parameters and yielded gradients (output buffers) are not counted.  A model of the lowering's buffers that ignores
    fusion, good enough to compare rewrites of one program."""
    seq: list[Operation] = []

    def flat(b: Block) -> None:
        for op in b.ops:
            if isinstance(op, pd.BackwardOp) and op.is_filled:
                flat(op.body.block)
            seq.append(op)

    flat(block)
    last_use: dict[SSAValue, int] = {}
    users: dict[SSAValue, list[Operation]] = {}
    for i, op in enumerate(seq):
        for v in op.operands:
            last_use[v] = i
            users.setdefault(v, []).append(op)

    def materialized(r: SSAValue) -> bool:
        # The lowering fuses a pointwise value into its pointwise readers (no buffer)
        # when it has one reader; model that, or the estimate favours replaying
        # values that never had a buffer.
        us = users.get(r, [])
        if any(isinstance(u, pd.YieldOp) for u in us):
            return False  # a gradient the caller gets: an output buffer, not a temporary
        if not getattr(r.owner, "POINTWISE", False):
            return True
        return len(us) != 1 or not getattr(us[0], "POINTWISE", False)
    frees: dict[int, int] = {}
    live = peak = 0
    for i, op in enumerate(seq):
        if not isinstance(op, (pd.DataOp, pd.ParameterOp, pd.BackwardOp)):
            for r in op.results:
                if r in last_use and materialized(r):
                    n = _nbytes(r, dim)
                    live += n
                    frees[last_use[r]] = frees.get(last_use[r], 0) + n
        peak = max(peak, live)
        live -= frees.pop(i, 0)
    return peak


def search_checkpoints(bw: pd.BackwardOp, dim: int = 1) -> set[SSAValue]:
    """`budget=auto`: the checkpoints of least estimated peak memory among the cost
    model's and Chen's greedy ones for budgets total/2, total/4, ... (total: bytes of
    every forward value), replaying at most one forward pass's worth of expensive
    (not pointwise) ops, so the step costs at most about 4/3 of the baseline's.

    Cost: O(n log total) for n ops, not linear: each of the at most
    log2(total bytes) + 1 <= 24 candidates is tried on a clone of the module."""
    module = bw.parent_op()
    block = bw.parent_block()
    assert isinstance(module, ModuleOp) and block is not None
    index = list(block.ops).index(bw)
    forward = _forward_ops(bw)
    movable = [op for op in forward if not _pinned(op)]
    total = sum(_nbytes(r, dim) for op in movable for r in op.results)
    n_expensive = sum(1 for op in movable if not _cheap(op))
    candidates = [auto_checkpoints(bw, "cost", dim)]
    limit = total // 2
    while limit >= 1 and len(candidates) < 24:
        keep = _greedy(forward, limit, dim)
        if keep == candidates[-1] and len(candidates) > 1:
            break  # below the smallest value's size every value is kept: no new ones
        candidates.append(keep)
        limit //= 2
    best: tuple[int, int] | None = None
    chosen: set[SSAValue] = candidates[0]
    for keep in candidates:
        mapping: dict[SSAValue, SSAValue] = {}
        trial = module.clone(value_mapper=mapping)
        trial_bw = list(trial.body.block.ops)[index]
        assert isinstance(trial_bw, pd.BackwardOp)
        cloned = _rewrite(trial_bw, {mapping[v] for v in keep})
        replayed = sum(1 for op in cloned if not _cheap(op))
        if replayed > n_expensive:
            continue
        score = (estimate_peak(trial.body.block, dim), replayed)
        if best is None or score < best:
            best, chosen = score, keep
    return chosen


def recompute_backward(bw: pd.BackwardOp, keep: Callable[[SSAValue], bool]) -> list[Operation]:
    """Rewrite one filled backward region so that forward values `keep` rejects are
    replayed inside it before their first use; returns the cloned ops."""
    if not bw.is_filled:
        raise RecomputeError("recompute: 'pd.backward' has an empty region: run autodiff first")
    forward = set(_forward_ops(bw))
    block: Block = bw.body.block
    clones: dict[SSAValue, SSAValue] = {}
    cloned: list[Operation] = []

    def replayed(v: SSAValue) -> bool:
        owner = v.owner
        return isinstance(owner, Operation) and owner in forward and not _pinned(owner) and not keep(v)

    def replay(v: SSAValue, before: Operation) -> SSAValue:
        # Iterative post-order (a chain of thousands of ops would overflow Python's
        # stack): clone an op once all the operands it replays are cloned.
        if v in clones or not replayed(v):
            return clones.get(v, v)
        stack: list[Operation] = [v.owner]  # type: ignore[list-item]
        while stack:
            owner = stack[-1]
            if owner.results[0] in clones:
                stack.pop()
                continue
            pending = [x.owner for x in owner.operands if x not in clones and replayed(x)]
            if pending:
                stack.extend(pending)  # type: ignore[arg-type]
                continue
            stack.pop()
            new = owner.clone()
            for i, x in enumerate(owner.operands):
                new.operands[i] = clones.get(x, x)
            block.insert_op_before(new, before)
            cloned.append(new)
            for old, res in zip(owner.results, new.results):
                name = value_name(old)
                if name is not None:
                    set_value_name(res, name + SUFFIX)
                clones[old] = res
        return clones[v]

    for op in list(block.ops):
        top = op
        for inner in list(op.walk()):
            for i, v in enumerate(inner.operands):
                if isinstance(v.owner, Operation) and v.owner in forward:
                    inner.operands[i] = replay(v, top)
    return cloned


def checkpoint_values(bw: pd.BackwardOp, names: Iterable[str]) -> set[SSAValue]:
    """The forward values named `names` (the last definition of each name before `bw`)."""
    wanted = [n for n in names if n]
    latest: dict[str, SSAValue] = {}
    for op in _forward_ops(bw):
        for r in op.results:
            n = value_name(r)
            if n is not None:
                latest[n] = r
    missing = [n for n in wanted if n not in latest]
    if missing:
        raise RecomputeError(
            "recompute: no variable named "
            + ", ".join(repr(m) for m in missing)
            + " before the backward op (checkpoints must be forward variables)"
        )
    return {latest[n] for n in wanted}


def _rewrite(bw: pd.BackwardOp, keep: set[SSAValue]) -> list[Operation]:
    """Replay everything before the last checkpoint that `keep` does not hold."""
    # The tail after the last checkpoint is not replayed (as in Paddle): its values
    # are the first the backward sweep needs, so they are still live anyway.
    order = {op: i for i, op in enumerate(_forward_ops(bw))}
    # Scalars (the loss) do not delimit segments: they are tiny and come last.
    last = max(
        (order[v.owner] for v in keep if v.owner in order and shape_of(v.type)),  # type: ignore[index]
        default=-1,
    )
    return recompute_backward(
        bw, lambda v: v in keep or order.get(v.owner, -1) > last  # type: ignore[arg-type]
    )


def apply_recompute(
    bw: pd.BackwardOp, checkpoints: Iterable[str] = (), budget: str = "auto", dim: int = 1
) -> int:
    """Recompute one backward op with named checkpoints, or automatically when none
    are named; returns the number of cloned ops."""
    names = [c for c in checkpoints if c]
    if not bw.is_filled:
        raise RecomputeError("recompute: 'pd.backward' has an empty region: run autodiff first")
    with cyclic_gc_paused():
        if names:
            keep = checkpoint_values(bw, names)
        elif budget == "auto":
            keep = search_checkpoints(bw, dim)
        else:
            keep = auto_checkpoints(bw, budget, dim)
        return len(_rewrite(bw, keep))


@dataclass(frozen=True)
class RecomputePass(ModulePass):
    """Replay non-checkpoint forward values inside backward regions (module docstring)."""

    name = "recompute"

    checkpoints: str = ""
    """Comma-separated Paddle names of the values to keep; empty: automatic."""
    budget: str | int = "auto"
    """`auto` (search), `cost` (cost model) or bytes per segment (greedy); used when
    no checkpoints are named."""
    dim: int = 1
    """What a dynamic dimension counts as when sizing values against `budget`."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        names = [c.strip() for c in self.checkpoints.split(",") if c.strip()]
        for bw in list(op.body.block.ops):
            if isinstance(bw, pd.BackwardOp):
                apply_recompute(bw, names, str(self.budget), self.dim)


__all__ = [
    "SUFFIX",
    "RecomputeError",
    "RecomputePass",
    "apply_recompute",
    "auto_checkpoints",
    "checkpoint_values",
    "recompute_backward",
]
