"""Explicit loop nests at the shared level, for ops linalg's indexing cannot express.

`linalg.generic` reads and writes through projection maps (`(d0, d1) -> (d1, 0)`);
the GPU path relies on that (`lowering/gpu/build.py:map_indices`).  Ops whose
indices are computed (a slice's offset, a convolution window, a pooling window, an
embedding row) or whose writes collide (scatter-adds) are lowered by
`convert-pd-to-linalg` to loops instead:

* `scf.parallel` over the independent iterations (lower bound 0, step 1: what
  `gpu-map-parallel-loops` and `convert-parallel-loops-to-gpu` expect), one level
  deep;
* inside it, `scf.for`/`scf.if` and plain `arith` index arithmetic;
* `memref.load`/`memref.store`, and `memref.atomic_rmw addf` for additions into a
  location other iterations may also add to (embedding and max-pool gradients).

On the GPU each parallel iteration is a thread and the atomics are `atom.global.add`;
on the CPU `convert-parallel-loops-to-sequential` turns the nest into `scf.for`
loops and the atomics into plain read-modify-writes (one thread runs them all).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import AnyFloat, IndexType, IntegerAttr, i64
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from pullback.dialects.pd.base import PdOp
from pullback.lowering.build import make, segment_sizes
from pullback.lowering.lowerer import Lowerer
from pullback.lowering.lowerer.sizes import Size
from pullback.lowering.scalar import Scalar

ATOMIC_ADDF = 0
ATOMIC_ADDI = 1
"""`memref.atomic_rmw` kinds (MLIR's `AtomicRMWKind` numbering)."""


def _scalar_at_end(block: Block) -> Scalar:
    return Scalar(Builder(InsertPoint.at_end(block)))


def parallel(
    low: Lowerer, sizes: Sequence[Size], body: Callable[[Scalar, list[SSAValue]], None]
) -> scf.ParallelOp:
    """`scf.parallel` over `[0, size)` per dimension at the lowering's insertion
    point; `body(s, ivs)` fills it (a rank-0 domain runs the body once)."""
    bounds = [low.as_value(n) for n in sizes] or [low.index(1)]
    block = Block(arg_types=[IndexType()] * len(bounds))
    zero, one = low.index(0), low.index(1)
    # `scf.ParallelOp([zero] * n, bounds, [one] * n, Region(block))` and its
    # `scf.reduce` terminator, built by `make` (lowering/build.py).
    n = len(bounds)
    op = make(
        scf.ParallelOp, [*[zero] * n, *bounds, *[one] * n], (),
        {"operandSegmentSizes": segment_sizes(n, n, n, 0)}, regions=(Region(block),),
    )
    low.emit(op)
    body(_scalar_at_end(block), list(block.args)[: len(sizes)])
    block.add_op(make(scf.ReduceOp))
    return op


def for_range(
    s: Scalar,
    lb: SSAValue,
    ub: SSAValue,
    inits: Sequence[SSAValue],
    body: Callable[[Scalar, SSAValue, list[SSAValue]], list[SSAValue]],
) -> list[SSAValue]:
    """`scf.for iv in [lb, ub)` carrying `inits`; `body(s, iv, carried)` returns the
    next carried values (the loop's results)."""
    block = Block(arg_types=[IndexType(), *[v.type for v in inits]])
    inner = _scalar_at_end(block)
    nxt = body(inner, block.args[0], list(block.args[1:]))
    block.add_op(make(scf.YieldOp, nxt))
    loop = make(scf.ForOp, (lb, ub, s.const(1, IndexType()), *inits), [v.type for v in inits], regions=(Region(block),))
    s.b.insert(loop)
    return list(loop.results)


def if_then(s: Scalar, cond: SSAValue, body: Callable[[Scalar], None]) -> None:
    """`scf.if cond { body }` without results."""
    block = Block()
    body(_scalar_at_end(block))
    block.add_op(scf.YieldOp())
    s.b.insert(scf.IfOp(cond, [], Region(block)))


def load(s: Scalar, mem: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
    """`mem[indices]`."""
    return s.emit(memref.LoadOp.get(mem, list(indices)))


def store(s: Scalar, value: SSAValue, mem: SSAValue, indices: Sequence[SSAValue]) -> None:
    """`mem[indices] = value`."""
    s.b.insert(memref.StoreOp.get(value, mem, list(indices)))


def atomic_add(s: Scalar, value: SSAValue, mem: SSAValue, indices: Sequence[SSAValue]) -> None:
    """`mem[indices] += value`, atomically (other iterations may add there too)."""
    kind = ATOMIC_ADDF if isinstance(value.type, AnyFloat) else ATOMIC_ADDI
    s.b.insert(
        memref.AtomicRMWOp.create(
            operands=[value, mem, *indices],
            result_types=[value.type],
            properties={"kind": IntegerAttr(kind, i64)},
        )
    )


def clamp(s: Scalar, i: SSAValue, size: SSAValue) -> SSAValue:
    """`i` clamped into `[0, size - 1]` (a safe index for a load whose value a
    `select` may discard)."""
    zero = s.const(0, IndexType())
    return s.max(s.min(i, s.sub(size, s.const(1, IndexType()))), zero)


def in_range(s: Scalar, i: SSAValue, size: SSAValue) -> SSAValue:
    """`0 <= i < size` (signed indices)."""
    ge = s.cmp("ge", i, s.const(0, IndexType()))
    return s.emit(arith.AndIOp(ge, s.cmp("lt", i, size)))


def all_of(s: Scalar, conds: Sequence[SSAValue]) -> SSAValue | None:
    """The conjunction of `conds` (None when there are none)."""
    acc: SSAValue | None = None
    for c in conds:
        acc = c if acc is None else s.emit(arith.AndIOp(acc, c))
    return acc


def to_index(s: Scalar, v: SSAValue) -> SSAValue:
    """An integer scalar as an `index`."""
    return v if isinstance(v.type, IndexType) else s.emit(arith.IndexCastOp(v, IndexType()))


def to_float(s: Scalar, i: SSAValue, elem: Attribute) -> SSAValue:
    """An `index` as a float of type `elem`."""
    as_int = s.emit(arith.IndexCastOp(i, i64))
    return s.emit(arith.SIToFPOp(as_int, elem))


def copy_window(
    low: Lowerer,
    src: SSAValue,
    dst: SSAValue,
    sizes: Sequence[Size],
    src_offsets: Sequence[Size] = (),
    dst_offsets: Sequence[Size] = (),
) -> None:
    """`dst[i + dst_offsets] = src[i + src_offsets]` for `i` in `sizes` (buffers), one
    `scf.parallel` copy, innermost dimension contiguous in both buffers."""
    low.note_read(src)
    low.note_read(dst)
    rank = len(sizes)
    src_off = list(src_offsets) or [0] * rank
    dst_off = list(dst_offsets) or [0] * rank

    def shifted(s: Scalar, ivs: list[SSAValue], offsets: Sequence[Size]) -> list[SSAValue]:
        # Offsets are index values of the entry function, or constants.
        return [
            iv if off == 0 else s.add(iv, off if isinstance(off, SSAValue) else s.const(off, IndexType()))
            for iv, off in zip(ivs, offsets)
        ]

    def body(s: Scalar, ivs: list[SSAValue]) -> None:
        store(s, load(s, src, shifted(s, ivs, src_off)), dst, shifted(s, ivs, dst_off))

    parallel(low, sizes, body)




def check_range(
    low: Lowerer, op: PdOp, what: str, ids: SSAValue, limit: Size, skip: int | None = None,
    column: int | None = None,
) -> None:
    """Check at run time that every element of the integer value `ids` (a buffer) lies
    in `[0, limit)`, elements equal to `skip` excepted (`ignore_index`).  The first
    one that does not, in row-major order, is stored in the status buffer
    (`Lowerer.check_slot`) as `[code, value, limit]`; the runtime then raises what
    the interpreter raises.  One pass over the ids, a compare per element: nothing
    next to the gather or the loss it guards.  With `column`, only the elements whose
    last index is `column` are checked (`gather_nd`'s coordinates: one range per
    column, one check each)."""
    slot = low.check_slot(op, what)
    if slot is None:
        return
    status, code = slot
    mem = low.read(ids)
    lim = low.emit(arith.IndexCastOp(low.as_value(limit), i64)).results[0]

    def body(s: Scalar, ivs: list[SSAValue]) -> None:
        v = load(s, mem, ivs)
        if v.type != i64:
            v = s.emit(arith.ExtSIOp(v, i64))
        zero = s.const(0, i64)
        bad = s.emit(arith.OrIOp(s.cmp("lt", v, zero), s.cmp("ge", v, lim)))
        if skip is not None:
            bad = s.emit(arith.AndIOp(bad, s.cmp("ne", v, s.const(skip, i64))))
        if column is not None:
            bad = s.emit(arith.AndIOp(bad, s.cmp("eq", ivs[-1], s.const(column, IndexType()))))
        c0 = s.const(0, IndexType())

        def report(s1: Scalar) -> None:
            first = s1.cmp("eq", load(s1, status, [c0]), s1.const(0, i64))

            def record(s2: Scalar) -> None:
                for k, x in enumerate((s2.const(code, i64), v, lim)):
                    store(s2, x, status, [s2.const(k, IndexType())])

            if_then(s1, first, record)

        if_then(s, bad, report)

    parallel(low, low.sizes_of(ids), body)


__all__ = [
    "all_of",
    "atomic_add",
    "check_range",
    "clamp",
    "copy_window",
    "for_range",
    "if_then",
    "in_range",
    "load",
    "parallel",
    "store",
    "to_float",
    "to_index",
]
