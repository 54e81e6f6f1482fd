"""`convert-parallel-loops-to-gpu` (MLIR's name): mapped `scf.parallel` -> `gpu.launch`.

It reads the `mapping` that `gpu-map-parallel-loops` puts on each parallel loop
(outermost loop -> blocks, a nested loop -> threads) and chooses one of two launch
shapes:

* **blocks and threads** (an outer loop whose body holds a thread-mapped loop, e.g.
  the tiled matrix product): the grid is the outer loop's trip counts, the block the
  inner loop's (static) trip counts; block and thread ids replace the induction
  variables one for one, so no thread is ever idle and barriers are safe;
* **grid-stride** (a loop mapped to blocks only: elementwise work, fills,
  reductions with one thread per output, atomic scatters): the iteration space is
  flattened and covered by `BLOCK` threads per block and at most `MAX_BLOCKS`
  blocks, each thread striding by the grid size.  Correct for any grid size, and a
  bounded grid keeps launches cheap for huge tensors.

The induction variables are rebuilt from the flat index (`arith.remui/divui`),
innermost dimension fastest, so consecutive threads touch consecutive elements.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import gpu, scf
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass

from pullback.lowering.gpu.build import Emitter, GpuLoweringError, for_loop

BLOCK = 256
"""Threads per block of a grid-stride launch."""

MAX_BLOCKS = 65536
"""At most this many blocks in a grid-stride launch (threads then stride)."""

_AXES = "xyz"


def _processors(op: scf.ParallelOp) -> list[str]:
    """`block_x`, `thread_y`, `sequential`, ... per dimension of a mapped loop."""
    mapping = op.attributes.get("mapping")
    if mapping is None:
        raise GpuLoweringError("scf.parallel without a mapping: run gpu-map-parallel-loops first")
    return [str(m.processor.data) for m in mapping.data]  # type: ignore[attr-defined]


def _thread_loop(op: scf.ParallelOp) -> scf.ParallelOp | None:
    """The thread-mapped loop directly in `op`'s body, if there is one."""
    inner = [o for o in op.body.block.ops if isinstance(o, scf.ParallelOp)]
    if not inner:
        return None
    if len(inner) > 1:
        raise GpuLoweringError("a block-mapped loop with several thread-mapped loops")
    if not all(p.startswith("thread") for p in _processors(inner[0])):
        raise GpuLoweringError("a nested parallel loop must map to threads")
    return inner[0]


def _constant(v: SSAValue) -> int | None:
    from xdsl.dialects import arith

    owner = v.owner
    if isinstance(owner, arith.ConstantOp):
        return owner.value.value.data  # type: ignore[attr-defined]
    return None


def _check_unit_steps(op: scf.ParallelOp) -> None:
    if any(_constant(v) != 0 for v in op.lowerBound) or any(_constant(v) != 1 for v in op.step):
        raise GpuLoweringError("parallel loops must start at 0 with step 1 (as generated)")


def _move_body(src: Block, dst: Emitter, ivs: Sequence[SSAValue]) -> None:
    """Move `src`'s ops (not its terminator) to `dst`, its arguments becoming `ivs`."""
    for arg, v in zip(src.args, ivs):
        arg.replace_all_uses_with(v)
    for o in list(src.ops):
        if isinstance(o, scf.ReduceOp):
            continue
        o.detach()
        dst.b.insert(o)


def _launch(host: Emitter, grid: Sequence[SSAValue], block: Sequence[SSAValue]) -> tuple[gpu.LaunchOp, Emitter, list[SSAValue]]:
    """An empty `gpu.launch`; returns it, an emitter into its body and its 12
    arguments (block ids, thread ids, grid sizes, block sizes)."""
    body = Block(arg_types=[IndexType()] * 12)
    one = host.index(1)
    launch = gpu.LaunchOp(
        Region(body),
        [*grid, *[one] * (3 - len(grid))],
        [*block, *[one] * (3 - len(block))],
    )
    host.b.insert(launch)
    body.add_op(gpu.TerminatorOp())
    return launch, Emitter.before(body.last_op), list(body.args)  # type: ignore[arg-type]


def _axis_of(processor: str) -> int:
    return _AXES.index(processor[-1])


def convert_two_level(op: scf.ParallelOp, inner: scf.ParallelOp) -> None:
    """Outer loop -> blocks, inner loop -> threads (one id per induction variable)."""
    _check_unit_steps(op)
    _check_unit_steps(inner)
    host = Emitter.before(op)
    outer_p, inner_p = _processors(op), _processors(inner)
    if "sequential" in outer_p or "sequential" in inner_p:
        raise GpuLoweringError("a two-level parallel loop with more than 3 dimensions per level")
    grid: list[SSAValue] = [host.index(1)] * 3
    block: list[SSAValue] = [host.index(1)] * 3
    for p, ub in zip(outer_p, op.upperBound):
        grid[_axis_of(p)] = ub
    for p, ub in zip(inner_p, inner.upperBound):
        if _constant(ub) is None:
            raise GpuLoweringError("a thread-mapped loop needs a static trip count")
        block[_axis_of(p)] = ub
    _, body, args = _launch(host, grid, block)
    bids, tids = args[0:3], args[3:6]
    _move_body(op.body.block, body, [bids[_axis_of(p)] for p in outer_p])
    # The thread loop's body replaces it in place (ops after it stay after it).
    _move_body(inner.body.block, Emitter.before(inner), [tids[_axis_of(p)] for p in inner_p])
    inner.detach()
    inner.erase()
    op.detach()
    op.erase()


def convert_grid_stride(op: scf.ParallelOp) -> None:
    """A block-mapped loop -> a flattened grid-stride loop over its iteration space."""
    _check_unit_steps(op)
    host = Emitter.before(op)
    bounds = list(op.upperBound)
    total = host.product(bounds)
    threads = host.index(BLOCK)
    blocks = host.min(host.ceildiv(total, threads), host.index(MAX_BLOCKS))
    _, body, args = _launch(host, [blocks], [threads])
    bx, tx, gx, bdx = args[0], args[3], args[6], args[9]
    first = body.add(body.mul(bx, bdx), tx)
    stride = body.mul(gx, bdx)

    def step(e: Emitter, flat: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
        ivs = e.delinearize(flat, bounds)
        _move_body(op.body.block, e, ivs)
        return []

    for_loop(body, first, total, stride, [], step)
    op.detach()
    op.erase()


@dataclass(frozen=True)
class ConvertParallelLoopsToGpuPass(ModulePass):
    """Every outermost mapped `scf.parallel` becomes a `gpu.launch` (module doc)."""

    name = "convert-parallel-loops-to-gpu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        outermost = [
            p for p in op.walk()
            if isinstance(p, scf.ParallelOp) and not _inside_parallel_or_launch(p)
        ]
        for p in outermost:
            inner = _thread_loop(p)
            if inner is not None:
                convert_two_level(p, inner)
            else:
                convert_grid_stride(p)


def _inside_parallel_or_launch(op: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, (scf.ParallelOp, gpu.LaunchOp)):
            return True
        parent = parent.parent_op()
    return False


__all__ = ["BLOCK", "MAX_BLOCKS", "ConvertParallelLoopsToGpuPass"]
