"""`convert-parallel-loops-to-sequential`: the CPU's counterpart of
`convert-parallel-loops-to-gpu`.

`convert-pd-to-linalg` emits `scf.parallel` nests for the ops linalg cannot express
(`lowering/loop_nest.py`).  The CPU code runs on one thread, so each nest becomes
`scf.for` loops in the same order (the last dimension innermost, where the lowering
puts the contiguous one), and `memref.atomic_rmw` (`addf`/`addi`) becomes a plain
load, add and store: nothing else can touch the location meanwhile, and plain
accesses keep the loop vectorizable, which LLVM's atomic instructions would not.
xDSL's `convert-scf-to-cf` lowers only `scf.for`/`scf.if`, hence this pass.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IndexType, ModuleOp
from xdsl.ir import Block, Region
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import DiagnosticException

from pullback.lowering.loop_nest import ATOMIC_ADDF, ATOMIC_ADDI


def parallel_to_for(op: scf.ParallelOp) -> scf.ForOp:
    """Replace `scf.parallel` (without reductions) by a perfect `scf.for` nest."""
    if op.initVals:
        raise DiagnosticException(
            "convert-parallel-loops-to-sequential: scf.parallel with reductions is not supported"
        )
    body = op.body.block
    blocks = [Block(arg_types=[IndexType()]) for _ in op.lowerBound]
    for arg, blk in zip(body.args, blocks):
        arg.replace_all_uses_with(blk.args[0])
    for o in list(body.ops):
        o.detach()
        if isinstance(o, scf.ReduceOp):
            o.erase()
        else:
            blocks[-1].add_op(o)
    # Built inside out: each loop is the last op of the body around it.
    loop: scf.ForOp | None = None
    for k in reversed(range(len(blocks))):
        if loop is not None:
            blocks[k].add_op(loop)
        blocks[k].add_op(scf.YieldOp())
        loop = scf.ForOp(op.lowerBound[k], op.upperBound[k], op.step[k], [], Region(blocks[k]))
    assert loop is not None
    Rewriter.replace_op(op, loop, [])
    return loop


def atomic_to_plain(op: memref.AtomicRMWOp) -> None:
    """Replace `memref.atomic_rmw addf/addi` by load, add, store (its result, the old
    value, by the load)."""
    kind = op.kind.value.data
    if kind not in (ATOMIC_ADDF, ATOMIC_ADDI):
        raise DiagnosticException(
            f"convert-parallel-loops-to-sequential: atomic_rmw kind {kind} is not supported"
        )
    indices = list(op.indices)
    old = memref.LoadOp.get(op.memref, indices)
    add = (arith.AddfOp if kind == ATOMIC_ADDF else arith.AddiOp)(old.res, op.value)
    new = memref.StoreOp.get(add.result, op.memref, indices)
    Rewriter.replace_op(op, [old, add, new], [old.res])


@dataclass(frozen=True)
class ConvertParallelLoopsToSequentialPass(ModulePass):
    """Run `scf.parallel` nests sequentially on the CPU (see the module doc)."""

    name = "convert-parallel-loops-to-sequential"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for par in [o for o in op.walk() if isinstance(o, scf.ParallelOp)]:
            parallel_to_for(par)
        for atomic in [o for o in op.walk() if isinstance(o, memref.AtomicRMWOp)]:
            atomic_to_plain(atomic)


__all__ = ["ConvertParallelLoopsToSequentialPass"]
