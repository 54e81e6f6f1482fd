"""Linalg structured ops on memrefs as LLVM loop nests (both targets' emitter).

A `linalg.generic`/`linalg.fill`/... becomes a perfect loop nest over its iteration
dimensions in order, loading the operands its body reads and storing what it yields:
what `convert-linalg-to-loops` and `lower-affine` would build, without the detour
through `scf`/`affine` ops.  Dimensions that walk contiguous memory in every operand
fold into one loop (`merged_dims`), and a long dependent chain in the body asks LLVM
to interleave vector iterations (`INTERLEAVE_MIN_DEPTH`).

(The GPU path maps linalg onto threads before it reaches the emitter:
`lowering/gpu/loops.py` makes `scf.parallel` nests of one thread per output
element, with atomics for small reductions; that is parallelization, not this
sequential emission.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import llvmlite.ir as ir
from xdsl.dialects.builtin import DYNAMIC_INDEX
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.dialects.linalg.ops import IndexOp as LinalgIndexOp
from xdsl.dialects.linalg.ops import YieldOp as LinalgYieldOp
from xdsl.ir import Block, SSAValue
from xdsl.ir.affine import AffineBinaryOpExpr, AffineDimExpr, AffineExpr, AffineMap

from pullback.lowering.llvm.types import I64
from pullback.lowering.llvm.values import MemRef, close_loop, mul, open_loop

if TYPE_CHECKING:
    from pullback.lowering.llvm.emitter import Emitter, Vals

INTERLEAVE_MIN_DEPTH = 48
"""Dependent operations in one iteration of a loop body (`chain_depth`) from which
its innermost loop asks LLVM to interleave vector iterations.  A fused chain of
transcendental functions (the fan-out chain: 10 of them in sequence per element,
~400 instructions an iteration) is latency-bound: one iteration's chain is longer
than the out-of-order window, so the next iteration cannot start alongside it, and
LLVM's cost model picks no interleaving for a body that large (register pressure).
Two iterations in flight cut its CPU time 40 -> 29 ms (benchmarks/RESULTS.md,
"Fan-out fusion").  Short bodies are left to LLVM's own choice."""

INTERLEAVE_COUNT = 2
"""Vector iterations interleaved in such a loop (4 gained little more: 29 -> 28 ms,
at twice the code)."""


def emit_structured(em: Emitter, op: LinalgStructuredOperation, b: ir.IRBuilder, vals: Vals) -> None:
    """Emit `op` (on memrefs) as a loop nest into `b` (see the module doc)."""
    if op.results:
        raise em.fail(f"{op.name} on tensors (bufferize first)")
    maps = [m.data for m in op.get_indexing_maps().data]
    bounds: list[ir.Value] = []
    try:
        sources = op.get_loop_bound_sources()
    except NotImplementedError:
        raise em.fail(
            f"{op.name}: its loop bounds cannot be read off its operands' shapes (the indexing maps are not invertible)"
        ) from None
    for operand, k, size in sources:
        if size != DYNAMIC_INDEX:
            bounds.append(ir.Constant(I64, size))
            continue
        known = em.memref_of(vals, operand, op.name).sizes[k]
        if known is None:
            raise em.fail(f"{op.name}: the size of dimension {k} of {operand.type} is not known")
        bounds.append(known)
    block = op.body.block
    merged = merged_dims(maps, [vals[v] for v in op.operands], bounds, block)
    ivs: list[ir.Value] = []
    loops = []
    for d, ub in enumerate(bounds):
        if d + 1 < len(bounds) and merged[d + 1]:
            ivs.append(ir.Constant(I64, 0))  # folded into the next dimension's loop
            continue
        first = d
        while first > 0 and merged[first]:
            first -= 1
        for k in range(first, d):
            ub = mul(b, bounds[k], ub)
        loop = open_loop(b, ir.Constant(I64, 0), ub, "linalg")
        ivs.append(loop.iv)
        loops.append(loop)
    n_in = len(op.inputs)
    for i, (arg, operand) in enumerate(zip(block.args, op.operands)):
        if not arg.uses:
            continue
        x = vals[operand]
        if isinstance(x, MemRef):
            ptr = em.address(b, x, em.map_indices(b, maps[i], ivs), op.name)
            vals[arg] = em.load_element(b, x, ptr, arg.type)
        else:
            vals[arg] = x
    for inner in block.ops:
        if isinstance(inner, LinalgYieldOp):
            for k, v in enumerate(inner.operands):
                out = em.memref_of(vals, op.outputs[k], op.name)
                ptr = em.address(b, out, em.map_indices(b, maps[n_in + k], ivs), op.name)
                em.store_element(b, out, ptr, vals[v])
            break
        if isinstance(inner, LinalgIndexOp):
            vals[inner.result] = ivs[inner.dim.value.data]
            continue
        em.op(inner, b, vals)
    interleave = INTERLEAVE_COUNT if chain_depth(block) >= INTERLEAVE_MIN_DEPTH else 0
    for loop in reversed(loops):
        latch = close_loop(b, loop, ir.Constant(I64, 1))
        if interleave and loop is loops[-1]:
            latch.set_metadata("llvm.loop", loop_interleave(em, interleave))


def loop_interleave(em: Emitter, count: int) -> ir.MDValue:
    """A fresh loop ID (`!llvm.loop`) asking the vectorizer to interleave `count`
    vector iterations.  Loop IDs are self-referential and one per loop."""
    module = em.module
    hint = module.add_metadata([ir.MetaDataString(module, "llvm.loop.interleave.count"),
                                ir.Constant(ir.IntType(32), count)])
    em.loop_ids += 1
    # Unique operands first (the module dedupes metadata by operands), then the
    # self-reference in place of the placeholder.
    loop_id = module.add_metadata([ir.MetaDataString(module, f"pb.loop.{em.loop_ids}"), hint])
    loop_id.operands = (loop_id, hint)
    return loop_id


def merged_dims(maps: Sequence[AffineMap], operands: Sequence[Any], bounds: Sequence[ir.Value], body: Block) -> list[bool]:
    """For each iteration dimension `d > 0`, whether its loop folds into the loop
    of `d - 1`: one loop over both, `d - 1`'s index 0 and `d`'s index running
    over the product of their sizes (a row-major walk visits the same elements in
    the same order).  It does when every operand either ignores both dimensions or
    indexes them as consecutive results `k, k + 1` of its map (no other result
    mentioning them) over memory contiguous across the two (dense row-major, or
    strides with `stride[k] == size[k + 1] * stride[k + 1]`), and the body reads
    neither with `linalg.index`.  An elementwise op over NCHW maps becomes one
    loop; a batch-norm backward written channel-major keeps its `n, c` loops over
    one loop of `h * w` (tiny static inner loops fully unrolled then vectorized cost
    LLVM's loop-load elimination up to half a second per function: issue 18)."""
    n = len(bounds)
    ok = [False] + [True] * (n - 1)
    for sub in body.ops:
        if isinstance(sub, LinalgIndexOp):
            d = sub.dim.value.data
            ok[d] = False
            if d + 1 < n:
                ok[d + 1] = False
    for amap, x in zip(maps, operands):
        results = list(amap.results)
        dim_at = {e.position: k for k, e in enumerate(results) if isinstance(e, AffineDimExpr)}
        compound = set().union(*(_dims_of(e) for e in results if not isinstance(e, AffineDimExpr)))
        for d in range(1, n):
            if not ok[d]:
                continue
            a, c = dim_at.get(d - 1), dim_at.get(d)
            if a is None and c is None and not {d - 1, d} & compound:
                continue  # neither dimension indexes this operand
            if a is None or c is None or c != a + 1 or {d - 1, d} & compound or not isinstance(x, MemRef):
                ok[d] = False
            elif x.strides is not None:
                size, inner, outer = x.sizes[c], x.strides[c], x.strides[a]
                if not (isinstance(size, ir.Constant) and isinstance(inner, ir.Constant)
                        and isinstance(outer, ir.Constant) and outer.constant == size.constant * inner.constant):
                    ok[d] = False
    return ok


def _dims_of(expr: AffineExpr) -> set[int]:
    """The dimensions an affine expression mentions."""
    if isinstance(expr, AffineDimExpr):
        return {expr.position}
    if isinstance(expr, AffineBinaryOpExpr):
        return _dims_of(expr.lhs) | _dims_of(expr.rhs)
    return set()


def chain_depth(block: Block) -> int:
    """The longest chain of dependent operations in `block` (a loop body): what an
    iteration's latency grows with.  Values from outside the block count 0."""
    depth: dict[SSAValue, int] = {}
    longest = 0
    for op in block.ops:
        if not op.results:  # the yield
            continue
        d = 1 + max((depth.get(v, 0) for v in op.operands), default=0)
        for r in op.results:
            depth[r] = d
        longest = max(longest, d)
    return longest


__all__ = ["INTERLEAVE_COUNT", "INTERLEAVE_MIN_DEPTH", "chain_depth", "emit_structured", "loop_interleave", "merged_dims"]
