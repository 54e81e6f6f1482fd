"""`data-parallel`: make a training program run on `nranks` ranks that each see a
shard of the batch, the way Paddle's raw program optimizer
(`fleet.meta_optimizers.RawProgramOptimizer`) rewrites it:

1. the loss gradient is scaled by `1/nranks` (Paddle's `scale` after the
   `loss@GRAD` fill), so the summed gradients are those of the mean over the full
   batch;
2. each parameter gradient is all-reduced (`pd.allreduce`, sum) right after the op
   of the backward region that produces it, or, with `fuse-mb=M`, gradients are
   packed into buckets of about M MiB (in the order the backward produces them) and
   each bucket is all-reduced in one message right after its last gradient, so
   few large messages are sent instead of many small ones;
3. every random initializer (`pd.uniform_random`, `pd.gaussian_random`: the start-up
   values that differ between ranks) is followed by a `pd.broadcast` from rank 0 of
   the same name, so all ranks start from rank 0's parameters.

The pass fills the `pd.backward` regions that are still empty (`autodiff` before
it changes nothing), and leaves regions that already all-reduce alone:

```
pullback-opt train.mlir -p 'data-parallel{nranks=4 fuse-mb=32}' -p prune
```
"""

from __future__ import annotations

from dataclasses import dataclass

from pullback.dialects import pd
from pullback.dialects.pd.base import elem_of, shape_of, value_name
from pullback.passes.autodiff import differentiate
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

RANDOM_INITIALIZERS = (pd.UniformRandomOp, pd.GaussianRandomOp)
"""Start-up ops whose values differ between ranks (fills and constants agree)."""

_MIB = 1 << 20


class DataParallelError(DiagnosticException):
    """The program cannot be made data-parallel (bad options, a filled backward)."""


def _nbytes(v: SSAValue) -> int:
    """Bytes of a statically shaped tensor value (0 when a dimension is dynamic)."""
    shape = shape_of(v.type)
    if any(d < 0 for d in shape):
        return 0
    n = 1
    for d in shape:
        n *= d
    return n * elem_of(v.type).bitwidth // 8  # type: ignore[attr-defined]


def gradient_buckets(grads: list[SSAValue], fuse_bytes: int) -> list[list[SSAValue]]:
    """Group gradients (in production order) into buckets of one dtype holding up to
    `fuse_bytes` (0: one bucket per gradient); a bucket closes once it reaches the
    limit, so no message is much larger than asked."""
    if fuse_bytes <= 0:
        return [[g] for g in grads]
    open_buckets: dict[object, list[SSAValue]] = {}
    sizes: dict[object, int] = {}
    done: list[list[SSAValue]] = []
    for g in grads:
        key = elem_of(g.type)
        bucket = open_buckets.setdefault(key, [])
        bucket.append(g)
        sizes[key] = sizes.get(key, 0) + _nbytes(g)
        if sizes[key] >= fuse_bytes:
            done.append(open_buckets.pop(key))
            sizes[key] = 0
    done.extend(b for b in open_buckets.values() if b)
    return done


def _scale_seeds(bw: pd.BackwardOp, nranks: int) -> int:
    """Scale the loss gradients of a filled region by `1/nranks` (a `pd.scale` named
    like the seed, as Paddle's `loss@GRAD` scale): a given seed where the region
    reads it, the ones the region fills for an unseeded target right after that
    fill.  Returns how many seeds were scaled."""
    body = bw.body.block
    count = 0
    for i, t in enumerate(bw.targets):
        seed = bw.seed_for(i)
        anchor: Operation | None = None
        if seed is None:
            # autodiff seeds an unseeded target with `pd.fill_any_like(t, 1.0)`.
            fill = next(
                (
                    o
                    for o in body.ops
                    if isinstance(o, pd.FillAnyLikeOp) and o.x is t and o.prop("value") == 1.0
                ),
                None,
            )
            if fill is None:
                continue  # the target does not depend on the inputs: no gradient flows
            seed, anchor = fill.out, fill
        scale = pd.ScaleOp.make(seed, scale=1.0 / nranks, name=value_name(seed))
        _insert_after(body, scale, anchor)
        seed.replace_uses_with_if(
            scale.out,
            lambda use, s=scale: use.operation is not s and use.operation.parent_block() is body,
        )
        count += 1
    return count


def _insert_allreduces(bw: pd.BackwardOp, fuse_bytes: int) -> int:
    """All-reduce the parameter gradients a filled region yields, each bucket right
    after the op producing its last gradient; returns the number of collectives."""
    body = bw.body.block
    term = body.last_op
    assert isinstance(term, pd.YieldOp)
    position = {op: i for i, op in enumerate(body.ops)}

    def produced_at(v: SSAValue) -> int:
        owner = v.owner
        return position.get(owner, -1) if isinstance(owner, Operation) else -1

    params = [
        (i, g)
        for i, (w, g) in enumerate(zip(bw.wrt, term.values))
        if isinstance(w.owner, pd.ParameterOp)
    ]
    params.sort(key=lambda ig: produced_at(ig[1]))
    index_of = {id(g): i for i, g in params}
    new_operands = list(term.values)
    count = 0
    for bucket in gradient_buckets([g for _, g in params], fuse_bytes):
        names = [value_name(g) for g in bucket]
        op = pd.AllReduceOp.make(*bucket, reduce_op="sum", name=names)
        last = max(bucket, key=produced_at)
        anchor = last.owner if produced_at(last) >= 0 else None
        _insert_after(body, op, anchor)  # type: ignore[arg-type]
        for g, r in zip(bucket, op.results):
            new_operands[index_of[id(g)]] = r
        count += 1
    term.operands = new_operands
    return count


def _insert_after(block: Block, op: Operation, anchor: Operation | None) -> None:
    """Insert `op` after `anchor`, or first in the block when there is none."""
    if anchor is None:
        first = block.first_op
        if first is None:
            block.add_op(op)
        else:
            block.insert_op_before(op, first)
    else:
        block.insert_op_after(op, anchor)


def _is_data_parallel(bw: pd.BackwardOp) -> bool:
    """True when the region already all-reduces its gradients."""
    return bw.is_filled and any(isinstance(o, pd.AllReduceOp) for o in bw.body.block.ops)


def broadcast_initializers(block: Block, root: int = 0) -> int:
    """Follow every named random initializer of `block` by a `pd.broadcast` from
    `root` of the same name, used by everything after it; returns how many."""
    count = 0
    for op in list(block.ops):
        if not isinstance(op, RANDOM_INITIALIZERS) or any(
            isinstance(u.operation, pd.BroadcastOp) for u in op.out.uses
        ):
            continue
        name = value_name(op.out)
        bcast = pd.BroadcastOp.make(op.out, root=root, name=name)
        block.insert_op_after(bcast, op)
        op.out.replace_uses_with_if(bcast.out, lambda use, b=bcast: use.operation is not b)
        count += 1
    return count


@dataclass(frozen=True)
class DataParallelPass(ModulePass):
    """Scale the loss gradient, all-reduce the parameter gradients (optionally in
    buckets) and broadcast the initial parameters (see the module docstring)."""

    name = "data-parallel"

    nranks: int = 1
    """Number of ranks the program runs on (the loss gradient is scaled by 1/nranks)."""

    fuse_mb: int = 0
    """Bucket size in MiB for fused gradient all-reduces; 0: one per gradient."""

    broadcast: bool = True
    """Broadcast the random initializers' results from rank 0 (start-up programs)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.nranks < 1:
            raise DataParallelError(f"data-parallel: nranks must be >= 1, got {self.nranks}")
        if self.fuse_mb < 0:
            raise DataParallelError(f"data-parallel: fuse-mb must be >= 0, got {self.fuse_mb}")
        block = op.body.block
        for bw in [o for o in block.ops if isinstance(o, pd.BackwardOp)]:
            if _is_data_parallel(bw):
                continue  # already rewritten (the pass is idempotent)
            filled = differentiate(bw)
            _scale_seeds(filled, self.nranks)
            _insert_allreduces(filled, int(self.fuse_mb * _MIB))
        if self.broadcast:
            broadcast_initializers(block)


__all__ = [
    "RANDOM_INITIALIZERS",
    "DataParallelError",
    "DataParallelPass",
    "broadcast_initializers",
    "gradient_buckets",
]
