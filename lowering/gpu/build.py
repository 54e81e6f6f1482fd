"""Small IR-building helpers shared by the GPU passes (loops, indices, body cloning).

Everything here builds `scf`/`arith`/`memref` ops at a `Builder`'s insertion point.
`Emitter` caches index constants per insertion block, so generated loop nests do not
repeat `arith.constant 0 : index` at every use.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap
from xdsl.rewriter import InsertPoint

from pullback.lowering.abi import GpuLoweringError


@dataclass
class Emitter:
    """Inserts ops at one point and hands out (cached) index constants."""

    b: Builder
    _consts: dict[tuple[int, Block | None], SSAValue] = field(default_factory=dict)

    @staticmethod
    def before(op: Operation) -> Emitter:
        """An emitter inserting right before `op`."""
        return Emitter(Builder(InsertPoint.before(op)))

    @staticmethod
    def at_end(block: Block) -> Emitter:
        """An emitter appending to `block`."""
        return Emitter(Builder(InsertPoint.at_end(block)))

    def emit(self, op: Operation) -> SSAValue:
        """Insert `op`; return its first result (ops without results return None)."""
        self.b.insert(op)
        return op.results[0] if op.results else None  # type: ignore[return-value]

    def index(self, n: int) -> SSAValue:
        """An `index` constant."""
        key = (n, self.b.insertion_point.block)
        if key not in self._consts:
            self._consts[key] = self.emit(arith.ConstantOp(IntegerAttr(n, IndexType())))
        return self._consts[key]

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """`a + b` on indices."""
        return self.emit(arith.AddiOp(a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """`a * b` on indices."""
        return self.emit(arith.MuliOp(a, b))

    def ceildiv(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """`ceil(a / b)` on non-negative indices."""
        return self.emit(arith.CeilDivUIOp(a, b))

    def min(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """`min(a, b)` on non-negative indices."""
        return self.emit(arith.MinUIOp(a, b))

    def lt(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """`a < b` on indices (an `i1`)."""
        return self.emit(arith.CmpiOp(a, b, "ult"))

    def product(self, sizes: Sequence[SSAValue]) -> SSAValue:
        """The product of index values (1 for none)."""
        acc = self.index(1)
        for s in sizes:
            acc = s if acc is self.index(1) else self.mul(acc, s)
        return acc

    def delinearize(self, flat: SSAValue, sizes: Sequence[SSAValue]) -> list[SSAValue]:
        """Row-major multi-index of a flat index over `sizes`."""
        out: list[SSAValue] = []
        rest = flat
        for i in range(len(sizes) - 1, -1, -1):
            if i == 0:
                out.append(rest)
            else:
                out.append(self.emit(arith.RemUIOp(rest, sizes[i])))
                rest = self.emit(arith.DivUIOp(rest, sizes[i]))
        return out[::-1]

    def dim(self, mem: SSAValue, k: int) -> SSAValue:
        """Size `k` of a memref (a constant when static)."""
        t = mem.type
        assert isinstance(t, MemRefType)
        d = t.get_shape()[k]
        if d >= 0:
            return self.index(d)
        return self.emit(memref.DimOp(mem, self.index(k)))


# ---------------------------------------------------------------------- loops

BodyFn = Callable[[Emitter, list[SSAValue]], None]


def parallel(e: Emitter, bounds: Sequence[SSAValue], body: BodyFn) -> scf.ParallelOp:
    """`scf.parallel` over `[0, bound)` per dimension; `body(e, ivs)` fills it."""
    block = Block(arg_types=[IndexType()] * len(bounds))
    zero, one = e.index(0), e.index(1)
    op = scf.ParallelOp([zero] * len(bounds), list(bounds), [one] * len(bounds), Region(block))
    e.b.insert(op)
    inner = Emitter.at_end(block)
    body(inner, list(block.args))
    block.add_op(scf.ReduceOp())
    return op


ForBody = Callable[[Emitter, SSAValue, list[SSAValue]], list[SSAValue]]


def for_loop(
    e: Emitter,
    lb: SSAValue,
    ub: SSAValue,
    step: SSAValue,
    inits: Sequence[SSAValue],
    body: ForBody,
) -> list[SSAValue]:
    """`scf.for` with loop-carried values; `body(e, iv, carried)` returns the next ones."""
    block = Block(arg_types=[IndexType(), *[v.type for v in inits]])
    inner = Emitter.at_end(block)
    nxt = body(inner, block.args[0], list(block.args[1:]))
    block.add_op(scf.YieldOp(*nxt))
    op = scf.ForOp(lb, ub, step, list(inits), Region(block))
    e.b.insert(op)
    return list(op.results)


def for_nest(
    e: Emitter,
    bounds: Sequence[SSAValue],
    inits: Sequence[SSAValue],
    body: Callable[[Emitter, list[SSAValue], list[SSAValue]], list[SSAValue]],
) -> list[SSAValue]:
    """Nested `scf.for` over `[0, bound)` per dimension, carrying `inits` through."""

    def level(em: Emitter, depth: int, ivs: list[SSAValue], carried: list[SSAValue]) -> list[SSAValue]:
        if depth == len(bounds):
            return body(em, ivs, carried)
        return for_loop(
            em, em.index(0), bounds[depth], em.index(1), carried,
            lambda inner, iv, c: level(inner, depth + 1, [*ivs, iv], c),
        )

    return level(e, 0, [], list(inits))


# ----------------------------------------------------------------- maps, bodies


def map_indices(e: Emitter, m: AffineMap, ivs: Sequence[SSAValue]) -> list[SSAValue]:
    """The indices an indexing map gives for loop indices `ivs` (projections and
    constants only, which is all `convert-pd-to-linalg` produces)."""
    out: list[SSAValue] = []
    for r in m.results:
        if isinstance(r, AffineDimExpr):
            out.append(ivs[r.position])
        elif isinstance(r, AffineConstantExpr):
            out.append(e.index(r.value))
        else:
            raise GpuLoweringError(f"indexing map {m} is not a projection")
    return out


def load(e: Emitter, value: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
    """Read a memref element (a scalar input is its own value)."""
    if not isinstance(value.type, MemRefType):
        return value
    return e.emit(memref.LoadOp.get(value, list(indices)))


def store(e: Emitter, value: SSAValue, mem: SSAValue, indices: Sequence[SSAValue]) -> None:
    """Write a memref element."""
    e.emit(memref.StoreOp.get(value, mem, list(indices)))


def clone_body(
    e: Emitter,
    body: Block,
    args: Sequence[SSAValue],
    ivs: Sequence[SSAValue],
    skip: Operation | None = None,
) -> tuple[list[SSAValue], dict[SSAValue, SSAValue]]:
    """Clone a `linalg` body at `e`: block arguments become `args`, `linalg.index d`
    becomes `ivs[d]`; returns the values the `linalg.yield` yields (mapped) and the
    value map.  `skip` (an op of the body) is not cloned."""
    vmap: dict[SSAValue, SSAValue] = dict(zip(body.args, args))
    for op in body.ops:
        if isinstance(op, linalg.YieldOp):
            return [vmap.get(v, v) for v in op.operands], vmap
        if op is skip:
            continue
        if isinstance(op, linalg.IndexOp):
            vmap[op.result] = ivs[op.dim.value.data]
            continue
        new = op.clone(value_mapper=vmap)
        e.b.insert(new)
    raise GpuLoweringError("linalg body without linalg.yield")


def elem_type(v: SSAValue | Attribute) -> Attribute:
    """The element type of a memref (or the type of a scalar)."""
    t = v.type if isinstance(v, SSAValue) else v
    return t.get_element_type() if isinstance(t, MemRefType) else t


__all__ = [
    "Emitter",
    "GpuLoweringError",
    "clone_body",
    "elem_type",
    "for_loop",
    "for_nest",
    "load",
    "map_indices",
    "parallel",
    "store",
]
