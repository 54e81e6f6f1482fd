"""`finalize-memref-to-llvm`: memrefs become bare `!llvm.ptr`s.

A memref lowers to the pointer to its first element (MLIR's bare-pointer calling
convention); the layout is always the identity (row-major, contiguous), so an
element's address is one `getelementptr inbounds` over the row-major linear index.
Sizes are never stored: `memref.dim` resolves to the value that defined the size
(an operand of `memref.alloc` or `memref.reinterpret_cast`), which is why the entry
function views its dynamically shaped arguments through a `reinterpret_cast`.

`memref.alloc`/`dealloc` become calls to `malloc`/`free`; a `reinterpret_cast` is
its source pointer, advanced by its offset (views of rows, `parallelize-loops`; the
offset counts elements from the source, whose own offset is always 0 here).

Why not xDSL's `convert-memref-to-ptr` + `convert-ptr-to-llvm`: the latter computes
addresses with `ptrtoint`/`add`/`inttoptr`, which hides the pointer's provenance from
LLVM; measured on a plain `c[i] = a[i] + b[i]` loop at O3, the inttoptr form stays
scalar while the `getelementptr` form vectorizes (see docs/lowering.md).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, llvm, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import DiagnosticException

from pullback.dialects.pd.base import DTYPE_BY_ELEM
from pullback.lowering.llvm_common import retype_values

def element_bytes(elem: Attribute) -> int:
    """Storage size of one element: the dtype table's (an `i1` takes one byte, as
    numpy's bool), or the width of another whole-byte integer type (`i8`, `i16`)."""
    info = DTYPE_BY_ELEM.get(elem)
    if info is not None:
        return info.size
    if isinstance(elem, IntegerType) and elem.width.data % 8 == 0:
        return elem.width.data // 8
    raise DiagnosticException(f"finalize-memref-to-llvm: unsupported element type {elem}")


def resolve_dim(mem: SSAValue, k: int, rewriter: PatternRewriter | None = None) -> SSAValue | int:
    """The size of dimension `k` of `mem`: a constant, or the value defining it."""
    t = mem.type
    assert isinstance(t, MemRefType)
    shape = t.get_shape()
    if shape[k] != DYNAMIC_INDEX:
        return shape[k]
    owner = mem.owner
    if isinstance(owner, memref.AllocOp):
        return owner.dynamic_sizes[sum(1 for d in shape[:k] if d == DYNAMIC_INDEX)]
    if isinstance(owner, memref.ReinterpretCastOp):
        static = owner.static_sizes.get_values()
        if static[k] != DYNAMIC_INDEX:
            return static[k]
        return owner.sizes[sum(1 for d in static[:k] if d == DYNAMIC_INDEX)]
    raise DiagnosticException(
        "finalize-memref-to-llvm: cannot tell the size of a dynamic dimension of "
        f"{mem} (only memref.alloc and memref.reinterpret_cast define sizes)"
    )


def _index_const(n: int, rewriter: PatternRewriter) -> SSAValue:
    c = arith.ConstantOp.from_int_and_width(n, IndexType())
    rewriter.insert(c)
    return c.result


def element_pointer(mem: SSAValue, indices: list[SSAValue], rewriter: PatternRewriter) -> SSAValue:
    """`getelementptr inbounds` to element `indices` of row-major `mem`."""
    t = mem.type
    assert isinstance(t, MemRefType)
    linear: SSAValue | None = None
    for k, idx in enumerate(indices):
        if linear is None:
            linear = idx
            continue
        size = resolve_dim(mem, k, rewriter)
        size_v = _index_const(size, rewriter) if isinstance(size, int) else size
        mul = arith.MuliOp(linear, size_v)
        add = arith.AddiOp(mul.result, idx)
        rewriter.insert([mul, add])
        linear = add.result
    if linear is None:
        linear = _index_const(0, rewriter)
    as_i64 = arith.IndexCastOp(linear, i64)
    rewriter.insert(as_i64)
    gep = llvm.GEPOp(
        mem, [llvm.GEP_USE_SSA_VAL], t.get_element_type(), ssa_indices=[as_i64.result], inbounds=True
    )
    rewriter.insert(gep)
    return gep.result


class LowerDim(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.DimOp, rewriter: PatternRewriter) -> None:
        idx = op.index.owner
        if not isinstance(idx, arith.ConstantOp):
            raise DiagnosticException("finalize-memref-to-llvm: memref.dim needs a constant index")
        k = idx.value.value.data  # type: ignore[attr-defined]
        size = resolve_dim(op.source, k, rewriter)
        if isinstance(size, int):
            rewriter.replace(op, arith.ConstantOp.from_int_and_width(size, IndexType()))
        else:
            rewriter.replace(op, [], [size])


class LowerLoad(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.LoadOp, rewriter: PatternRewriter) -> None:
        ptr = element_pointer(op.memref, list(op.indices), rewriter)
        rewriter.replace(op, llvm.LoadOp(ptr, op.res.type))


class LowerStore(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.StoreOp, rewriter: PatternRewriter) -> None:
        ptr = element_pointer(op.memref, list(op.indices), rewriter)
        rewriter.replace(op, llvm.StoreOp(op.value, ptr))


@dataclass
class LowerAlloc(RewritePattern):
    used: set[str]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.AllocOp, rewriter: PatternRewriter) -> None:
        t = op.memref.type
        assert isinstance(t, MemRefType)
        static = element_bytes(t.get_element_type())
        for d in t.get_shape():
            if d != DYNAMIC_INDEX:
                static *= max(d, 1)
        size: SSAValue = _index_const(static, rewriter)
        for dyn in op.dynamic_sizes:
            mul = arith.MuliOp(size, dyn)
            rewriter.insert(mul)
            size = mul.result
        as_i64 = arith.IndexCastOp(size, i64)
        rewriter.insert(as_i64)
        self.used.add("malloc")
        call = llvm.CallOp("malloc", as_i64.result, return_type=llvm.LLVMPointerType())
        rewriter.replace(op, call)


@dataclass
class LowerDealloc(RewritePattern):
    used: set[str]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.DeallocOp, rewriter: PatternRewriter) -> None:
        self.used.add("free")
        rewriter.replace(op, llvm.CallOp("free", op.memref))


class LowerReinterpretCast(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.ReinterpretCastOp, rewriter: PatternRewriter) -> None:
        static = op.static_offsets.get_values()
        if not op.offsets and all(o == 0 for o in static):
            rewriter.replace(op, [], [op.source])
            return
        # An offset view (a chunk's rows, `parallelize-loops`): its first element.
        offset = op.offsets[0] if op.offsets else _index_const(static[0], rewriter)
        as_i64 = arith.IndexCastOp(offset, i64)
        rewriter.insert(as_i64)
        t = op.source.type
        assert isinstance(t, MemRefType)
        gep = llvm.GEPOp(
            op.source, [llvm.GEP_USE_SSA_VAL], t.get_element_type(), ssa_indices=[as_i64.result], inbounds=True
        )
        rewriter.replace(op, gep)


_RUNTIME_DECLS = {
    "malloc": ([i64], llvm.LLVMPointerType()),
    "free": ([llvm.LLVMPointerType()], llvm.LLVMVoidType()),
}


def declare_llvm_function(module: ModuleOp, name: str, inputs: list[Attribute], output: Attribute) -> None:
    """Add an external `llvm.func` declaration unless the module has the symbol."""
    for op in module.body.block.ops:
        sym = getattr(op, "sym_name", None)
        if sym is not None and sym.data == name:
            return
    module.body.block.add_op(
        llvm.FuncOp(name, llvm.LLVMFunctionType(inputs, output), linkage=llvm.LinkageAttr("external"))
    )


def retype_memrefs(module: ModuleOp) -> None:
    """Give every remaining memref-typed value the type `!llvm.ptr`."""
    ptr = llvm.LLVMPointerType()
    retype_values(module, lambda t: ptr if isinstance(t, MemRefType) else t)


@dataclass(frozen=True)
class FinalizeMemRefToLLVMPass(ModulePass):
    """Lower memref accesses, allocations and views to `llvm` pointer operations."""

    name = "finalize-memref-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        used: set[str] = set()
        # Accesses first, while every allocation and view still says its sizes.
        PatternRewriteWalker(
            GreedyRewritePatternApplier([LowerDim(), LowerLoad(), LowerStore()]),
            apply_recursively=False,
        ).rewrite_module(op)
        PatternRewriteWalker(
            GreedyRewritePatternApplier([LowerAlloc(used), LowerDealloc(used), LowerReinterpretCast()]),
            apply_recursively=False,
        ).rewrite_module(op)
        retype_memrefs(op)
        for name in sorted(used):
            inputs, output = _RUNTIME_DECLS[name]
            declare_llvm_function(op, name, inputs, output)


_ = (IntegerAttr, Operation)
