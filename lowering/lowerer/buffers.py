"""The buffers layer of the `Lowerer`: where each `pd` value lives, and for how long.

Every value that is not inlined into its readers has a buffer (a memref): an entry
argument (feeds, persistables), a caller-allocated output (`dest`: fetched values
are computed straight into it, persistables updated in place when nothing reads the
old value later, else copied back at the end, `copy_back`), a region's carried
buffer, or a temporary allocated here.  Reads are recorded per root allocation
(`note_read`, through views), so that each temporary is freed right after its last
reader (`free_temps`).  A loop body may take over a carried buffer in place
(`consumable`, `consumed`), and a copy derived alike by several readers is made once
(`shared`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from xdsl.dialects import memref
from xdsl.dialects.builtin import AffineMapAttr, MemRefType, TensorType
from xdsl.dialects.linalg import attrs as linalg_attrs
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue

from pullback.dialects.pd.base import DYN
from pullback.lowering.abi import LoweringError
from pullback.lowering.build import aligned_alloc, generic_op, make
from pullback.lowering.lowerer.base import name_hint_of
from pullback.lowering.lowerer.sizes import Size, Sizes
from pullback.lowering.scalar import DimMap, affine, identity_map
from pullback.lowering.views import buffer_shape, elem_of_buffer, memref_type, root_buffer


@dataclass
class Buffers(Sizes):
    """The buffer of every `pd` value, temporaries and their lifetimes, in-place
    destinations and copies."""

    buf: dict[SSAValue, SSAValue] = field(default_factory=dict)
    dest: dict[SSAValue, SSAValue] = field(default_factory=dict)
    """`pd` values computed straight into a given buffer (an output, a persistable
    updated in place) -> that buffer."""
    temps: dict[SSAValue, int] = field(default_factory=dict)
    """Allocated temporaries (memrefs) -> position of their last reader."""
    last_read: dict[SSAValue, int] = field(default_factory=dict)
    copy_back: list[tuple[SSAValue, SSAValue]] = field(default_factory=list)
    """Persistables updated out of place (the old value is read later): (new value,
    the persistable's buffer), copied at the end."""
    anchors: list[Operation | None] = field(default_factory=list)
    """Per lowered op, the last op emitted for it: a temporary is freed after the
    anchor of its last reader."""
    consumable: set[SSAValue] = field(default_factory=set)
    """`pd` values whose buffers this lowerer owns outright (a loop's carried values
    in its body): an op that reads one last may reuse its memory (a stack push
    grows it in place)."""
    consumed: set[SSAValue] = field(default_factory=set)
    """Buffers of `consumable` values an op took over (their owner must not free
    them again)."""
    derived: dict[tuple[str, SSAValue, Block], SSAValue] = field(default_factory=dict)
    """Temporaries derived from a `pd` value and shared by its later readers in the
    same block (`shared`): (how, value, block) -> buffer."""

    def needed(self, v: SSAValue) -> bool:
        """Whether `v` is read later, fetched or persisted (else it need not be computed)."""
        v = self.prog.resolve(v)
        return (
            bool(self.prog.uses.get(v)) or v in self.dest or v in self.prog.fetches
            or any(v is c for c, _ in self.copy_back)
        )

    # -------------------------------------------------------------- allocation

    def memref_type(self, v: SSAValue) -> MemRefType[Attribute]:
        """The buffer type of a tensor value."""
        t = v.type
        assert isinstance(t, TensorType)
        return memref_type(t.get_element_type(), t.get_shape())

    def alloc(self, v: SSAValue) -> SSAValue:
        """A fresh temporary for `v`, freed after its last reader."""
        dyn = [s for s in self.sizes[v] if not isinstance(s, int)]
        op = aligned_alloc(dyn, self.memref_type(v))
        self.emit_at_top(op)
        name = name_hint_of(v)
        if name:
            op.memref.name_hint = name
        self.temps[op.memref] = self.current
        return op.memref

    def temp(self, elem: Attribute, sizes: Sequence[Size]) -> SSAValue:
        """A temporary buffer of the given sizes, freed after its last reader."""
        shape = [s if isinstance(s, int) else DYN for s in sizes]
        dyn = [s for s in sizes if not isinstance(s, int)]
        op = aligned_alloc(dyn, memref_type(elem, shape))
        self.emit_at_top(op)
        self.temps[op.memref] = self.current
        return op.memref

    def out(self, v: SSAValue) -> SSAValue:
        """The buffer an op should write `v` into (its destination, or a temporary)."""
        if v in self.dest:
            self.check_planned(v)
            mem = self.dest[v]
            if DYN in buffer_shape(mem) and isinstance(mem, BlockArgument):
                mem = self.dest[v] = self.shape_view(mem, self.sizes[v])
        else:
            mem = self.alloc(v)
        self.buf[v] = mem
        return mem

    def shared(self, how: str, v: SSAValue, make: Callable[[], SSAValue]) -> SSAValue:
        """A temporary derived from `pd` value `v` (`how` names the derivation:
        `channel_major`), made by `make()` for its first reader and shared by later
        readers in the same block, which count as reads of it (it is freed after
        the last).  A ResNet's batch-norm backward feeds two convolution gradients
        that both want it channel-major: one transposed copy, not two (the
        elementwise expression fused into the copy computed once)."""
        key = (how, self.prog.resolve(v), self.b.insertion_point.block)
        mem = self.derived.get(key)
        if mem is None:
            mem = self.derived[key] = make()
        else:
            self.note_read(mem)
        return mem

    # ------------------------------------------------------------------- reads

    def read(self, v: SSAValue) -> SSAValue:
        """The buffer holding `v`, noting that it is read here."""
        v = self.prog.resolve(v)
        if v not in self.buf:
            op = v.owner
            raise LoweringError(
                f"internal: no buffer for a result of '{getattr(op, 'name', op)}'"
            )
        mem = self.buf[v]
        self.note_read(mem)
        return mem

    def buffer_read(self, mem: SSAValue, m: DimMap) -> tuple[SSAValue, DimMap, bool]:
        """A `generic` read of a raw buffer (a temporary or a view), not a `pd`
        value: it is registered as a pseudo-value holding itself."""
        self.buf[mem] = mem
        return (mem, m, False)

    def note_read(self, mem: SSAValue) -> None:
        """Record that buffer `mem` (or what it views) is read at the current op."""
        root = root_buffer(mem)
        self.last_read[root] = max(self.last_read.get(root, -1), self.current)

    # ---------------------------------------------------------- freeing, copies

    def free_temps(self, keep: Collection[SSAValue] = ()) -> None:
        """Free every temporary but those in `keep` right after its last reader (at
        the insertion point when it is read there or never)."""
        for mem, _ in list(self.temps.items()):
            if mem in keep:
                continue
            last = self.last_read.get(mem, self.temps[mem])
            anchor = self.anchors[min(last, len(self.anchors) - 1)] if last >= 0 else None
            dealloc = make(memref.DeallocOp, (mem,))
            parent = anchor.parent_block() if anchor is not None else None
            if last >= len(self.anchors) or anchor is None or parent is None:
                self.emit(dealloc)
            else:
                parent.insert_op_after(dealloc, anchor)

    def copy_buffer(self, src: SSAValue, dst: SSAValue) -> None:
        """Copy one buffer into another of the same shape."""
        rank = len(buffer_shape(dst))
        self.note_read(src)
        block = Block(arg_types=[elem_of_buffer(src), elem_of_buffer(dst)])
        block.add_op(make(linalg.YieldOp, (block.args[0],)))
        self.emit(
            generic_op(
                [src], [dst], Region(block),
                [AffineMapAttr(affine(rank, identity_map(rank)))] * 2,
                [linalg_attrs.IteratorTypeAttr.parallel()] * rank,
            )
        )

    def copy_value(self, v: SSAValue, dst: SSAValue) -> None:
        """Copy the buffer of `pd` value `v` into `dst`."""
        if DYN in buffer_shape(dst) and isinstance(dst, BlockArgument):
            dst = self.shape_view(dst, self.sizes_of(v))
        self.copy_buffer(self.read(v), dst)


__all__ = ["Buffers"]
