"""Memory: `memref` ops on `MemRef`s (bare pointers with known sizes and strides),
the `llvm` pointer ops the lowering makes, and casts between memrefs and pointers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import llvmlite.ir as ir
from xdsl.dialects import arith, memref
from xdsl.dialects import llvm as xllvm
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerAttr, MemRefType, UnrealizedConversionCastOp
from xdsl.ir import Attribute, Operation, SSAValue

from pullback.lowering.llvm.base import EmitterBase, Vals, handles, has_strided_layout
from pullback.lowering.llvm.types import I8, I64, PTR
from pullback.lowering.llvm.values import MemRef, add, mul, ptr_of, static_sizes


class MemoryHandlers(EmitterBase):
    """Handlers of memory ops."""

    def memref_of(self, vals: Vals, v: SSAValue, what: str) -> MemRef:
        """The `MemRef` bound to `v`."""
        m = vals[v]
        if not isinstance(m, MemRef):
            raise self.fail(f"{what}: operand is not a memref")
        return m

    def address(self, b: ir.IRBuilder, m: MemRef, indices: Sequence[ir.Value], what: str) -> ir.Value:
        """`getelementptr inbounds` to element `indices` of `m`."""
        linear: ir.Value | None = None
        if m.strides is None:
            for k, idx in enumerate(indices):
                if linear is None:
                    linear = idx
                    continue
                size = m.sizes[k]
                if size is None:
                    raise self.fail(
                        f"{what}: cannot tell the size of dimension {k} of a dynamically shaped memref "
                        "(only memref.alloc, reinterpret_cast and subview define sizes)"
                    )
                linear = b.add(b.mul(linear, size), idx)
        else:
            for idx, stride in zip(indices, m.strides):
                term = idx if isinstance(stride, ir.Constant) and stride.constant == 1 else b.mul(idx, stride)
                linear = term if linear is None else b.add(linear, term)
        if linear is None:
            linear = ir.Constant(I64, 0)
        return b.gep(m.ptr, [linear], inbounds=True, source_etype=m.elem)

    def load_element(self, b: ir.IRBuilder, m: MemRef, ptr: ir.Value, t: Attribute) -> ir.Value:
        """Load an element of type `t` (narrowed from its storage type)."""
        v = b.load(ptr, typ=m.elem)
        want = self.llvm_type(t)
        return v if v.type == want else b.trunc(v, want)

    def store_element(self, b: ir.IRBuilder, m: MemRef, ptr: ir.Value, v: ir.Value) -> None:
        """Store an element (widened to its storage type)."""
        b.store(v if v.type == m.elem else b.zext(v, m.elem), ptr)

    @handles(memref.LoadOp)
    def load(self, op: memref.LoadOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`memref.load`."""
        m = self.memref_of(vals, op.memref, "memref.load")
        ptr = self.address(b, m, [vals[i] for i in op.indices], "memref.load")
        vals[op.res] = self.load_element(b, m, ptr, op.res.type)

    @handles(memref.StoreOp)
    def store(self, op: memref.StoreOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`memref.store`."""
        m = self.memref_of(vals, op.memref, "memref.store")
        ptr = self.address(b, m, [vals[i] for i in op.indices], "memref.store")
        self.store_element(b, m, ptr, vals[op.value])

    _ATOMIC_KINDS: ClassVar[dict[int, str]] = {0: "fadd", 1: "add"}
    """`memref.atomic_rmw` kinds (xDSL's numbering: `addf`, `addi`) and their operation."""

    @handles(memref.AtomicRMWOp)
    def atomic(self, op: memref.AtomicRMWOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`memref.atomic_rmw` (`addf`, `addi`), as the target's `atomic_rmw` does it."""
        kind = self._ATOMIC_KINDS.get(op.kind.value.data)
        if kind is None:
            raise self.fail(f"memref.atomic_rmw kind {op.kind.value.data} is not supported")
        m = self.memref_of(vals, op.memref, "memref.atomic_rmw")
        ptr = self.address(b, m, [vals[i] for i in op.indices], "memref.atomic_rmw")
        vals[op.result] = self.atomic_rmw(b, kind, m, ptr, vals[op.value])

    def atomic_rmw(self, b: ir.IRBuilder, kind: str, m: MemRef, ptr: ir.Value, value: ir.Value) -> ir.Value:
        """Add `value` at `ptr`; returns the old value.  By default a plain
        read-modify-write (one thread runs the code, and the loop stays vectorizable)."""
        old = b.load(ptr, typ=m.elem)
        b.store(b.fadd(old, value) if kind == "fadd" else b.add(old, value), ptr)
        return old

    @handles(memref.AllocOp)
    def alloc(self, op: memref.AllocOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`memref.alloc` (targets that allocate on the heap override this)."""
        raise self.fail("memref.alloc is not supported on this target")

    @handles(memref.DeallocOp)
    def dealloc(self, op: memref.DeallocOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`memref.dealloc` (targets that allocate on the heap override this)."""
        raise self.fail("memref.dealloc is not supported on this target")

    @handles(memref.AllocaOp)
    def alloca(self, op: memref.AllocaOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`memref.alloca`: a stack buffer (static ones in the entry block, where LLVM
        promotes them)."""
        t = op.memref.type
        assert isinstance(t, MemRefType)
        sizes: list[ir.Value | None] = []
        dyn = iter(op.dynamic_sizes)
        total: ir.Value = ir.Constant(I64, 1)
        for d in t.get_shape():
            s = vals[next(dyn)] if d == DYNAMIC_INDEX else ir.Constant(I64, d)
            sizes.append(s)
            total = mul(b, total, s)
        elem = self.elem(t)
        if not op.dynamic_sizes:
            entry = b.function.entry_basic_block
            eb = ir.IRBuilder(entry)
            eb.position_at_start(entry)
            ptr = eb.alloca(elem, size=total)
        else:
            ptr = b.alloca(elem, size=total)
        vals[op.memref] = MemRef(ptr, elem, sizes)

    @handles(memref.DimOp)
    def dim(self, op: memref.DimOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`memref.dim` of a constant dimension whose size is known."""
        idx = op.index.owner
        if not (isinstance(idx, arith.ConstantOp) and isinstance(idx.value, IntegerAttr)):
            raise self.fail("memref.dim needs a constant index")
        k = int(idx.value.value.data)
        size = self.memref_of(vals, op.source, "memref.dim").sizes[k]
        if size is None:
            raise self.fail(
                f"memref.dim: the size of dimension {k} of {op.source.type} is not known "
                "(only memref.alloc, reinterpret_cast and subview define sizes)"
            )
        vals[op.result] = size

    @handles(memref.ReinterpretCastOp)
    def reinterpret(self, op: memref.ReinterpretCastOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`memref.reinterpret_cast`: offset, sizes and (strided layouts) strides."""
        src = self.memref_of(vals, op.source, "memref.reinterpret_cast")
        offset = _static_or(op.static_offsets.get_values(), op.offsets, vals)[0]
        sizes: list[ir.Value | None] = list(_static_or(op.static_sizes.get_values(), op.sizes, vals))
        ptr = src.ptr
        if not (isinstance(offset, ir.Constant) and offset.constant == 0):
            ptr = b.gep(ptr, [offset], inbounds=True, source_etype=src.elem)
        strides = None
        if has_strided_layout(op.result.type):
            strides = _static_or(op.static_strides.get_values(), op.strides, vals)
        vals[op.result] = MemRef(ptr, self.elem(op.result.type), sizes, strides)

    @handles(memref.CastOp)
    def memref_cast(self, op: memref.CastOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`memref.cast`: the same buffer, static sizes where the new type has them."""
        src = self.memref_of(vals, op.source, "memref.cast")
        t = op.dest.type
        assert isinstance(t, MemRefType)
        sizes = [s if s is not None else old for s, old in zip(static_sizes(t), src.sizes)]
        vals[op.dest] = MemRef(src.ptr, src.elem, sizes, src.strides)

    @handles(memref.SubviewOp)
    def subview(self, op: memref.SubviewOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`memref.subview` (rank-reducing ones drop unit dimensions)."""
        src = self.memref_of(vals, op.source, "memref.subview")
        offsets = _static_or(op.static_offsets.get_values(), op.offsets, vals)
        sizes = _static_or(op.static_sizes.get_values(), op.sizes, vals)
        steps = _static_or(op.static_strides.get_values(), op.strides, vals)
        base = src.strides or self.row_major_strides(b, src.sizes, "memref.subview")
        linear: ir.Value = ir.Constant(I64, 0)
        for off, st in zip(offsets, base):
            linear = add(b, linear, mul(b, off, st))
        ptr = src.ptr
        if not (isinstance(linear, ir.Constant) and linear.constant == 0):
            ptr = b.gep(ptr, [linear], inbounds=True, source_etype=src.elem)
        strides = [mul(b, st, step) for st, step in zip(base, steps)]
        result = op.result.type
        assert isinstance(result, MemRefType)
        keep = list(range(len(sizes)))
        # A rank-reducing subview drops unit dimensions (the first ones that are 1).
        while len(keep) > result.get_num_dims():
            unit = next((k for k in keep if isinstance(sizes[k], ir.Constant) and sizes[k].constant == 1), None)
            if unit is None:
                raise self.fail(f"memref.subview to {result}: cannot tell the dropped dimensions")
            keep.remove(unit)
        vals[op.result] = MemRef(ptr, src.elem, [sizes[k] for k in keep], [strides[k] for k in keep])

    def row_major_strides(self, b: ir.IRBuilder, sizes: Sequence[ir.Value | None], what: str) -> list[ir.Value]:
        """The strides of a dense row-major buffer of `sizes`."""
        strides: list[ir.Value] = []
        acc: ir.Value = ir.Constant(I64, 1)
        for k in range(len(sizes) - 1, -1, -1):
            strides.insert(0, acc)
            if k:
                size = sizes[k]
                if size is None:
                    raise self.fail(f"{what}: a dynamic size is unknown")
                acc = mul(b, acc, size)
        return strides

    @handles(memref.ExtractAlignedPointerAsIndexOp)
    def aligned_pointer(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """`memref.extract_aligned_pointer_as_index`."""
        vals[op.results[0]] = b.ptrtoint(ptr_of(vals[op.operands[0]]), I64)

    # -- llvm pointers --------------------------------------------------------------

    @handles(xllvm.GEPOp)
    def gep(self, op: xllvm.GEPOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`llvm.getelementptr` (BLAS operands)."""
        raw = op.rawConstantIndices.get_values()
        dynamic = iter(op.ssa_indices)
        indices = [vals[next(dynamic)] if i == xllvm.GEP_USE_SSA_VAL else ir.Constant(ir.IntType(32), i) for i in raw]
        elem = self.llvm_type(op.elem_type) if op.elem_type is not None else I8
        vals[op.result] = b.gep(ptr_of(vals[op.ptr]), indices, inbounds=op.inbounds is not None, source_etype=elem)

    @handles(xllvm.LoadOp)
    def llvm_load(self, op: xllvm.LoadOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`llvm.load`."""
        t = self.llvm_type(op.dereferenced_value.type)
        vals[op.dereferenced_value] = b.load(ptr_of(vals[op.ptr]), typ=t)

    @handles(xllvm.StoreOp)
    def llvm_store(self, op: xllvm.StoreOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`llvm.store`."""
        b.store(ptr_of(vals[op.value]), ptr_of(vals[op.ptr]))

    @handles(xllvm.ZeroOp)
    def llvm_zero(self, op: xllvm.ZeroOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`llvm.mlir.zero`."""
        vals[op.res] = ir.Constant(self.llvm_type(op.res.type), None)

    @handles(xllvm.PtrToIntOp, xllvm.IntToPtrOp)
    def ptr_int(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """`llvm.ptrtoint` / `llvm.inttoptr`."""
        x = ptr_of(vals[op.operands[0]])
        to = self.llvm_type(op.results[0].type)
        vals[op.results[0]] = b.ptrtoint(x, to) if isinstance(op, xllvm.PtrToIntOp) else b.inttoptr(x, to)

    @handles(UnrealizedConversionCastOp)
    def unrealized_cast(self, op: UnrealizedConversionCastOp, b: ir.IRBuilder, vals: Vals) -> None:
        """Casts between memrefs and `!llvm.ptr` (and no-op casts)."""
        for src, res in zip(op.inputs, op.outputs, strict=True):
            x = vals[src]
            if isinstance(res.type, MemRefType):
                ptr = ptr_of(x)
                if ptr.type != PTR:
                    raise self.fail(f"unrealized cast of {src.type} to {res.type}")
                vals[res] = MemRef(ptr, self.elem(res.type), static_sizes(res.type))
            elif isinstance(res.type, xllvm.LLVMPointerType):
                vals[res] = ptr_of(x)
            elif self.llvm_type(res.type) == x.type:
                vals[res] = x
            else:
                raise self.fail(f"unrealized cast of {src.type} to {res.type}")


def _static_or(values: Sequence[int], dynamic: Sequence[SSAValue], vals: Vals) -> list[ir.Value]:
    """Mixed static/dynamic operands (`static_sizes` with `DYNAMIC_INDEX` holes)."""
    it = iter(dynamic)
    return [vals[next(it)] if v == DYNAMIC_INDEX else ir.Constant(I64, v) for v in values]


__all__ = ["MemoryHandlers"]
