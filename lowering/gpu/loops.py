"""From `linalg` to parallel loop nests: the seam between the CPU and GPU paths.

`convert-pd-to-linalg` (shared with the CPU path) leaves one function on memrefs
whose computations are `linalg.generic`/`linalg.fill`.  Two passes turn those into
`scf.parallel` nests that `gpu-map-parallel-loops` can map to blocks and threads:

* `gpu-tile-gemm`: a `linalg.generic` tagged `library_call = "gemm"` becomes the
  classic shared-memory tiled matrix product: an outer parallel loop over 16x16
  output tiles (blocks), an inner one over the tile's elements (threads), tiles of
  both operands staged in workgroup memory (`memref.alloca` in memory space 3)
  between `gpu.barrier`s.
* `convert-linalg-to-parallel-loops` (MLIR's name): every other generic becomes an
  `scf.parallel` over its parallel dimensions with `scf.for` loops over its
  reduction dimensions inside (one thread per output element).  A sum whose
  outputs are few (a loss, a bias gradient: at most `ATOMIC_MAX_OUTPUTS` outputs,
  known statically) would leave the GPU idle that way, so it becomes a parallel
  loop over *all* dimensions adding into its (pre-filled) output with
  `memref.atomic_rmw addf` instead: the reduction tree is the memory system's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, gpu, memref, scf
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.builtin import (
    AnyFloat,
    FloatAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    i64,
)
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.passes import ModulePass

from pullback.lowering.gpu.build import (
    Emitter,
    GpuLoweringError,
    clone_body,
    elem_type,
    for_loop,
    for_nest,
    load,
    map_indices,
    parallel,
    store,
)

ATOMIC_MAX_OUTPUTS = 4096
"""A sum with at most this many outputs (statically) reduces with atomics."""

ATOMIC_MIN_REDUCED = 64
"""...provided it adds at least this many terms per output (or an unknown number)."""

TILE = 16
"""Edge of the square output tile of the tiled matrix product (TILE*TILE threads)."""

ATOMIC_ADDF = 0
ATOMIC_ADDI = 1
"""`memref.atomic_rmw` kinds (MLIR's `AtomicRMWKind` numbering)."""

WORKGROUP = IntegerAttr(3, i64)
"""The memory space of workgroup (shared) memory, as NVPTX numbers it."""


def _generics(module: ModuleOp) -> list[Operation]:
    return [op for op in module.walk() if isinstance(op, (linalg.GenericOp, linalg.FillOp))]


def loop_bounds(e: Emitter, op: linalg.GenericOp) -> list[SSAValue]:
    """The trip count of each loop of a generic, read off the operand it indexes."""
    maps = [m.data for m in op.indexing_maps]
    operands = [*op.inputs, *op.outputs]
    n = maps[0].num_dims
    bounds: list[SSAValue | None] = [None] * n
    for v, m in zip(operands, maps):
        if not isinstance(v.type, MemRefType):
            continue
        for k, r in enumerate(m.results):
            if isinstance(r, AffineDimExpr) and bounds[r.position] is None:
                bounds[r.position] = e.dim(v, k)
    if any(b is None for b in bounds):
        raise GpuLoweringError("linalg.generic: a loop dimension is indexed by no operand")
    return bounds  # type: ignore[return-value]


def _is_parallel(op: linalg.GenericOp) -> list[bool]:
    return [t.data == linalg.IteratorType.PARALLEL for t in op.iterator_types]


def _static_size(op: linalg.GenericOp, dims: list[int]) -> int | None:
    """The static product of loop sizes `dims` (None if any is dynamic)."""
    maps = [m.data for m in op.indexing_maps]
    sizes: dict[int, int] = {}
    for v, m in zip([*op.inputs, *op.outputs], maps):
        if isinstance(v.type, MemRefType):
            shape = v.type.get_shape()
            for k, r in enumerate(m.results):
                if isinstance(r, AffineDimExpr) and shape[k] >= 0:
                    sizes[r.position] = shape[k]
    if any(d not in sizes for d in dims):
        return None
    return math.prod(sizes[d] for d in dims)


def _atomic_combiner(op: linalg.GenericOp) -> tuple[Operation, SSAValue] | None:
    """For `out = out + x` bodies (one output, read only there): the add and `x`."""
    if len(op.outputs) != 1:
        return None
    block = op.body.block
    out_arg = block.args[len(op.inputs)]
    term = block.last_op
    if not isinstance(term, linalg.YieldOp) or len(term.operands) != 1:
        return None
    add = term.operands[0].owner
    if not isinstance(add, (arith.AddfOp, arith.AddiOp)):
        return None
    if len(list(out_arg.uses)) != 1:
        return None
    if add.lhs is out_arg:
        return add, add.rhs
    if add.rhs is out_arg:
        return add, add.lhs
    return None


def use_atomics(op: linalg.GenericOp) -> bool:
    """Whether a reduction should add into its output atomically (see module doc)."""
    par = _is_parallel(op)
    red = [d for d, p in enumerate(par) if not p]
    if not red or _atomic_combiner(op) is None:
        return False
    outputs = _static_size(op, [d for d, p in enumerate(par) if p])
    reduced = _static_size(op, red)
    return outputs is not None and outputs <= ATOMIC_MAX_OUTPUTS and (
        reduced is None or reduced >= ATOMIC_MIN_REDUCED
    )


# ------------------------------------------------------------------ generic ops


def lower_fill(op: linalg.FillOp) -> None:
    """`linalg.fill` -> a parallel loop storing the value everywhere."""
    e = Emitter.before(op)
    (value,), (out,) = op.inputs, op.outputs
    rank = len(out.type.get_shape())  # type: ignore[attr-defined]
    bounds = [e.dim(out, k) for k in range(rank)] or [e.index(1)]

    def body(inner: Emitter, ivs: list[SSAValue]) -> None:
        store(inner, value, out, ivs[:rank])

    parallel(e, bounds, body)
    op.detach()
    op.erase()


def lower_generic(op: linalg.GenericOp, atomics: bool) -> None:
    """A generic -> `scf.parallel` (parallel dims) around `scf.for` (reductions), or
    an atomic scatter over all dimensions (see `use_atomics`)."""
    e = Emitter.before(op)
    bounds = loop_bounds(e, op)
    maps = [m.data for m in op.indexing_maps]
    in_maps, out_maps = maps[: len(op.inputs)], maps[len(op.inputs):]
    par = _is_parallel(op)
    block = op.body.block

    def read_inputs(em: Emitter, ivs: list[SSAValue]) -> list[SSAValue]:
        return [load(em, v, map_indices(em, m, ivs)) for v, m in zip(op.inputs, in_maps)]

    if atomics and use_atomics(op):
        add, x = _atomic_combiner(op)  # type: ignore[misc]
        (out,), (omap,) = op.outputs, out_maps
        kind = ATOMIC_ADDF if isinstance(elem_type(out), AnyFloat) else ATOMIC_ADDI

        def scatter(em: Emitter, ivs: list[SSAValue]) -> None:
            args = read_inputs(em, ivs)
            # The output block argument is only read by the skipped add.
            _, vmap = clone_body(em, block, [*args, out], ivs, skip=add)
            term = vmap.get(x, x)
            em.emit(
                memref.AtomicRMWOp.create(
                    operands=[term, out, *map_indices(em, omap, ivs)],
                    result_types=[term.type],
                    properties={"kind": IntegerAttr(kind, i64)},
                )
            )

        parallel(e, bounds, scatter)
    else:
        pdims = [d for d, p in enumerate(par) if p]
        rdims = [d for d, p in enumerate(par) if not p]

        def per_output(em: Emitter, pivs: list[SSAValue]) -> None:
            full: list[SSAValue] = [em.index(0)] * len(bounds)
            for d, iv in zip(pdims, pivs):
                full[d] = iv
            if not pdims:
                full = [em.index(0)] * len(bounds)
            out_idx = [map_indices(em, m, full) for m in out_maps]
            if not rdims:
                args = read_inputs(em, full)
                outs = [load(em, v, ix) for v, ix in zip(op.outputs, out_idx)]
                vals, _ = clone_body(em, block, [*args, *outs], full)
            else:
                init = [load(em, v, ix) for v, ix in zip(op.outputs, out_idx)]

                def step(inner: Emitter, rivs: list[SSAValue], acc: list[SSAValue]) -> list[SSAValue]:
                    ivs = list(full)
                    for d, iv in zip(rdims, rivs):
                        ivs[d] = iv
                    args = read_inputs(inner, ivs)
                    return clone_body(inner, block, [*args, *acc], ivs)[0]

                vals = for_nest(em, [bounds[d] for d in rdims], init, step)
            for v, mem, ix in zip(vals, op.outputs, out_idx):
                store(em, v, mem, ix)

        parallel(e, [bounds[d] for d in pdims] or [e.index(1)], per_output)
    op.detach()
    op.erase()


@dataclass(frozen=True)
class ConvertLinalgToParallelLoopsPass(ModulePass):
    """`linalg.generic`/`linalg.fill` -> `scf.parallel` nests (see the module doc).

    `atomics=false` keeps every reduction sequential within one thread per output.
    """

    name = "convert-linalg-to-parallel-loops"

    atomics: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for g in _generics(op):
            if isinstance(g, linalg.FillOp):
                lower_fill(g)
            else:
                lower_generic(g, self.atomics)


# -------------------------------------------------------------------- tiled gemm


def _gemm_dims(op: linalg.GenericOp) -> tuple[int, int, int]:
    """`(m, n, k)` loop dimensions of a two-operand contraction."""
    par = _is_parallel(op)
    maps = [m.data for m in op.indexing_maps]
    if len(op.inputs) != 2 or len(op.outputs) != 1 or len(par) != 3 or sum(par) != 2:
        raise GpuLoweringError("gpu-tile-gemm: a gemm is a 3-loop, 2-input contraction")
    (k,) = [d for d, p in enumerate(par) if not p]

    def dims(m: AffineMap) -> set[int]:
        return {r.position for r in m.results if isinstance(r, AffineDimExpr)}

    a, b = dims(maps[0]), dims(maps[1])
    (mdim,) = a - {k}
    (ndim,) = b - {k}
    return mdim, ndim, k


def tile_gemm(op: linalg.GenericOp) -> None:
    """Rewrite one gemm-tagged generic into the shared-memory tiled form."""
    mdim, ndim, kdim = _gemm_dims(op)
    e = Emitter.before(op)
    bounds = loop_bounds(e, op)
    sizes = {"m": bounds[mdim], "n": bounds[ndim], "k": bounds[kdim]}
    maps = [m.data for m in op.indexing_maps]
    (amem, bmem), (cmem,) = op.inputs, op.outputs
    elem = elem_type(cmem)
    block = op.body.block
    t = e.index(TILE)
    grid = [e.ceildiv(sizes["m"], t), e.ceildiv(sizes["n"], t)]

    def clamp(em: Emitter, i: SSAValue, size: SSAValue) -> SSAValue:
        # Out-of-range threads read a valid element and discard it (select below).
        return em.min(i, em.emit(arith.SubiOp(size, em.index(1))))

    def guarded_load(em: Emitter, mem: SSAValue, m: AffineMap, at: dict[int, SSAValue]) -> SSAValue:
        ok = None
        ivs = [em.index(0)] * 3
        for d, v in at.items():
            size = bounds[d]
            inside = em.lt(v, size)
            ok = inside if ok is None else em.emit(arith.AndIOp(ok, inside))
            ivs[d] = clamp(em, v, size)
        val = load(em, mem, map_indices(em, m, ivs))
        zero_attr = FloatAttr(0.0, elem) if isinstance(elem, AnyFloat) else IntegerAttr(0, elem)
        zero = em.emit(arith.ConstantOp(zero_attr))  # type: ignore[arg-type]
        return em.emit(arith.SelectOp(ok, val, zero))

    def per_tile(eb: Emitter, tiles: list[SSAValue]) -> None:
        ti, tj = tiles
        shared = MemRefType(elem, [TILE, TILE], memory_space=WORKGROUP)
        a_tile = eb.emit(memref.AllocaOp.get(elem, shape=[TILE, TILE], memory_space=WORKGROUP))
        b_tile = eb.emit(memref.AllocaOp.get(elem, shape=[TILE, TILE], memory_space=WORKGROUP))
        assert a_tile.type == shared

        def per_thread(et: Emitter, threads: list[SSAValue]) -> None:
            ty, tx = threads
            i = et.add(et.mul(ti, t), ty)
            j = et.add(et.mul(tj, t), tx)
            acc0 = guarded_load(et, cmem, maps[2], {mdim: i, ndim: j})

            def k_tile(ek: Emitter, kt: SSAValue, acc: list[SSAValue]) -> list[SSAValue]:
                a = guarded_load(ek, amem, maps[0], {mdim: i, kdim: ek.add(kt, tx)})
                b = guarded_load(ek, bmem, maps[1], {kdim: ek.add(kt, ty), ndim: j})
                store(ek, a, a_tile, [ty, tx])
                store(ek, b, b_tile, [ty, tx])
                ek.emit(gpu.BarrierOp())

                def inner(ei: Emitter, kk: SSAValue, c: list[SSAValue]) -> list[SSAValue]:
                    av = load(ei, a_tile, [ty, kk])
                    bv = load(ei, b_tile, [kk, tx])
                    return clone_body(ei, block, [av, bv, *c], [i, j, ei.add(kt, kk)])[0]

                out = for_loop(ek, ek.index(0), t, ek.index(1), acc, inner)
                # Nobody may overwrite the tiles before everyone has read them.
                ek.emit(gpu.BarrierOp())
                return out

            (acc,) = for_loop(et, et.index(0), sizes["k"], t, [acc0], k_tile)
            inside = et.emit(arith.AndIOp(et.lt(i, sizes["m"]), et.lt(j, sizes["n"])))
            guard = scf.IfOp(inside, [], [scf.YieldOp()])
            et.b.insert(guard)
            then = Emitter.before(guard.true_region.block.last_op)  # type: ignore[arg-type]
            store(then, acc, cmem, map_indices(then, maps[2], [i, j, then.index(0)]))

        parallel(eb, [t, t], per_thread)

    tiled = parallel(e, grid, per_tile)
    tiled.attributes["pullback.schedule"] = StringAttr("tiled-gemm")
    op.detach()
    op.erase()


@dataclass(frozen=True)
class GpuTileGemmPass(ModulePass):
    """Tile `library_call = "gemm"` generics for the GPU (shared-memory tiles)."""

    name = "gpu-tile-gemm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for g in _generics(op):
            if isinstance(g, linalg.GenericOp) and g.library_call is not None and g.library_call.data == "gemm":
                tile_gemm(g)


__all__ = [
    "ATOMIC_MAX_OUTPUTS",
    "ConvertLinalgToParallelLoopsPass",
    "GpuTileGemmPass",
    "TILE",
    "loop_bounds",
    "use_atomics",
]

