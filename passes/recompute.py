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
* `budget=auto` (the default when no checkpoints are given): a cost model -- outputs
  of ops that are not pointwise (matmul, convolution, reductions, ...) are kept, the
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
    """Whether replaying `op` costs O(size of its result): ops the CPU lowering emits
    as pointwise loops (elementwise, activations, casts, fills) and ops whose operands
    all have the result's shape (dropout, softmax).  Contractions,
    convolutions, reductions and the like are not, and the cost model keeps them."""
    import pullback.lowering.convert_pd_to_linalg  # noqa: F401  (registers the rules)
    from pullback.lowering.core import lowering_of

    entry = lowering_of(op)
    if entry is not None and entry.is_pointwise:
        return True
    # Shape-preserving ops (dropout, softmax, ...): work linear in the result.
    shapes = {tuple(shape_of(v.type)) for v in (*op.operands, *op.results)}
    return len(op.results) == 1 and len(shapes) == 1


def _nbytes(v: SSAValue, dim: int) -> int:
    n = int(np.prod([d if d >= 0 else dim for d in shape_of(v.type)], dtype=np.int64))
    width = getattr(elem_of(v.type), "bitwidth", 32)
    return n * max(1, (int(width) + 7) // 8)


def auto_checkpoints(bw: pd.BackwardOp, budget: str = "auto", dim: int = 1) -> set[SSAValue]:
    """Checkpoints chosen by the cost model (`budget="auto"`) or by greedy
    segmentation under a per-segment byte budget (see the module docstring)."""
    forward = _forward_ops(bw)
    if budget == "auto":
        return {r for op in forward if not _cheap(op) for r in op.results}
    try:
        limit = int(float(budget))
    except ValueError:
        raise RecomputeError(f"recompute: budget must be 'auto' or a number of bytes, got '{budget}'") from None
    if limit <= 0:
        raise RecomputeError(f"recompute: budget must be positive, got {limit}")
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


def recompute_backward(bw: pd.BackwardOp, keep: Callable[[SSAValue], bool]) -> int:
    """Rewrite one filled backward region so that forward values `keep` rejects are
    replayed inside it before their first use; returns how many ops were cloned."""
    if not bw.is_filled:
        raise RecomputeError("recompute: 'pd.backward' has an empty region: run autodiff first")
    forward = set(_forward_ops(bw))
    block: Block = bw.body.block
    clones: dict[SSAValue, SSAValue] = {}
    count = 0

    def replay(v: SSAValue, before: Operation) -> SSAValue:
        nonlocal count
        owner = v.owner
        if v in clones:
            return clones[v]
        if not isinstance(owner, Operation) or owner not in forward or _pinned(owner) or keep(v):
            return v
        operands = [replay(x, before) for x in owner.operands]
        new = owner.clone()
        for i, x in enumerate(operands):
            new.operands[i] = x
        block.insert_op_before(new, before)
        count += 1
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
    return count


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


def apply_recompute(
    bw: pd.BackwardOp, checkpoints: Iterable[str] = (), budget: str = "auto", dim: int = 1
) -> int:
    """Recompute one backward op with named checkpoints, or automatically when none
    are named; returns the number of cloned ops."""
    names = [c for c in checkpoints if c]
    keep = checkpoint_values(bw, names) if names else auto_checkpoints(bw, budget, dim)
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


@dataclass(frozen=True)
class RecomputePass(ModulePass):
    """Replay non-checkpoint forward values inside backward regions (module docstring)."""

    name = "recompute"

    checkpoints: str = ""
    """Comma-separated Paddle names of the values to keep; empty: automatic."""
    budget: str | int = "auto"
    """`auto` (cost model) or bytes per segment (greedy), used without checkpoints."""
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
