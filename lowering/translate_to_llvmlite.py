"""`translate-to-llvmlite`: a loop-level module straight to an `llvmlite.ir.Module`.

MLIR's `mlir-translate` idea, one level higher: instead of four xDSL rewrite passes
(`convert-scf-to-cf`, `finalize-memref-to-llvm`, `convert-{math,arith,cf,func}-to-llvm`,
`reconcile-unrealized-casts`) that rewrite every arith/memref op one at a time and a
last walk (`xdsl.backend.llvm.convert`) to llvmlite, ONE walk over the module after
`convert-linalg-to-loops` / `convert-parallel-loops-to-sequential` / `lower-affine` /
`math-polynomial-approximation` builds the LLVM IR with llvmlite's `IRBuilder`
(measured in benchmarks/RESULTS.md, "Compile time").

What it translates: `func` (definitions, external declarations, calls, returns),
`scf` (`for`, `if`, `while`, `parallel` without reductions, `index_switch`), `cf`
branches between the blocks of a function body, `arith` and `math` (which LLVM
instruction or intrinsic each op becomes is `lowering/llvm_opcodes.py`'s table,
shared with the xDSL route and the GPU one), `memref` (`alloc`/`dealloc` as
`malloc`/`free`, `alloca`, `load`/`store`, `dim`, `reinterpret_cast`, `cast`,
`subview`, `atomic_rmw` as a plain read-modify-write, `extract_aligned_pointer_as_index`),
`builtin.unrealized_conversion_cast` between memrefs and `!llvm.ptr`, and the few
`llvm` ops the lowering emits itself (`getelementptr` for BLAS operands, calls, loads,
stores, constants).  Any other op raises `LoweringError` naming it: nothing is
dropped silently.

The facts the xDSL route gives LLVM are kept: memrefs are bare pointers addressed
with `getelementptr inbounds` over the row-major linear index (so LLVM keeps the
pointer's provenance and vectorizes, see `finalize_memref_to_llvm`); fast-math flags
(`contract`, `reassoc`) carry over; the entry's pointer arguments are `noalias`, and
so are the outlined segments' arguments their `arg_attrs` mark; segments are
`noinline`; a `llvm.emit_c_interface` function gets the packed wrapper
`_pullback_packed_<name>(ptr slots)` (`convert_func_to_llvm.packed_wrapper`'s ABI).

A memref is a `MemRef`: its base pointer, the sizes the translation knows (static
ones, and dynamic ones where an `alloc`, `reinterpret_cast` or `subview` gave them)
and, for strided views (`subview`, a strided `reinterpret_cast`), its strides.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import llvmlite.ir as ir
from xdsl.dialects import affine, arith, cf, func, memref, scf
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.dialects.linalg.ops import IndexOp as LinalgIndexOp
from xdsl.dialects.linalg.ops import YieldOp as LinalgYieldOp
from xdsl.dialects import llvm as xllvm
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StridedLayoutAttr,
    UnrealizedConversionCastOp,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)

from pullback.lowering.llvm_scalar import SCALAR_EMITTERS, Emitter
from pullback.lowering.abi import LoweringError
from pullback.lowering.convert_func_to_llvm import PACKED_PREFIX
from pullback.lowering.finalize_memref_to_llvm import element_bytes
from pullback.lowering.llvm_opcodes import (
    BINARY_INTRINSICS,
    CASTS,
    FLOAT_BINARY,
    FLOAT_TO_INT,
    INT_BINARY,
    LIBM,
    MATH_INTRINSICS,
    UNSIGNED_TO_FLOAT,
    check_unsigned_to_float,
    intrinsic_name,
)
from pullback.lowering.outline_segments import SEGMENT_INFIX

TRANSLATOR_VERSION = 1
"""Bumped whenever the translation changes the code it emits (part of the disk-cache
key, `runtime/compiled.py`)."""

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I64 = ir.IntType(64)
PTR = ir.PointerType()


# ------------------------------------------------------------------------- types


def llvm_type(t: Attribute) -> ir.Type:
    """The LLVM type of a value's type (`index` is `i64`, a memref or `!llvm.ptr` a
    pointer)."""
    if isinstance(t, IndexType):
        return I64
    if isinstance(t, IntegerType):
        return ir.IntType(t.width.data)
    if isinstance(t, Float32Type):
        return ir.FloatType()
    if isinstance(t, Float64Type):
        return ir.DoubleType()
    if isinstance(t, Float16Type):
        return ir.HalfType()
    if isinstance(t, (MemRefType, xllvm.LLVMPointerType)):
        return PTR
    raise LoweringError(f"translate-to-llvmlite: no LLVM type for {t}")


def _result_type(t: Attribute | None) -> ir.Type:
    if t is None or isinstance(t, xllvm.LLVMVoidType):
        return ir.VoidType()
    return llvm_type(t)


@dataclass
class MemRef:
    """A memref during translation: base pointer (offset applied), element type,
    sizes (None where the translation cannot know a dynamic one) and strides (None:
    dense row-major, addressed by the row-major linear index)."""

    ptr: ir.Value
    elem: ir.Type
    sizes: list[ir.Value | None]
    strides: list[ir.Value] | None = None


def _static_sizes(t: MemRefType) -> list[ir.Value | None]:
    return [None if d == DYNAMIC_INDEX else ir.Constant(I64, d) for d in t.get_shape()]


def _has_strided_layout(t: Attribute) -> bool:
    return isinstance(t, MemRefType) and isinstance(t.layout, StridedLayoutAttr)


def _fastmath(op: Operation) -> list[str]:
    fm = op.properties.get("fastmath")
    if not isinstance(fm, arith.FastMathFlagsAttr):
        return []
    return sorted(getattr(f, "value", str(f)) for f in fm.data)


_BUILDER_METHOD = {"and": "and_", "or": "or_"}
"""llvmlite's `IRBuilder` method of an instruction whose name is a Python keyword."""



def _emit(b: ir.IRBuilder, opcode: str) -> Callable[..., Any]:
    return getattr(b, _BUILDER_METHOD.get(opcode, opcode))


Vals = dict[SSAValue, Any]
Handler = Callable[["Translator", Any, ir.IRBuilder, Vals], None]
_HANDLERS: dict[type[Operation], Handler] = {}


def handles(*types: type[Operation]) -> Callable[[Handler], Handler]:
    """Register the translation of op types that need more than a table entry."""

    def register(fn: Handler) -> Handler:
        for t in types:
            _HANDLERS[t] = fn
        return fn

    return register


# ------------------------------------------------------------------- translator


class Translator:
    """Translates one loop-level `builtin.module` into an llvmlite module."""

    def __init__(self, name: str = "pullback") -> None:
        self.module = ir.Module(name)
        self.functions: dict[str, ir.Function] = {}
        self.bbs: dict[Block, ir.Block] = {}
        """The basic block of each block of the function being translated (`cf`
        branch targets)."""
        self._loop_ids = 0
        """Loop IDs made so far (`loop_interleave`)."""

    # -- declarations -----------------------------------------------------------

    def declare(self, name: str, ret: ir.Type, args: Sequence[ir.Type]) -> ir.Function:
        """The function `name` (declared with this signature on first use)."""
        fn = self.functions.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(ret, list(args)), name)
            self.functions[name] = fn
        return fn

    def intrinsic(self, base: str, t: ir.Type, arity: int) -> ir.Function:
        """An intrinsic overloaded on its one scalar type (`llvm.maximum.f32`)."""
        if isinstance(t, ir.IntType):
            suffix = f"i{t.width}"
        elif isinstance(t, ir.HalfType):
            suffix = "f16"
        else:
            suffix = "f32" if isinstance(t, ir.FloatType) else "f64"
        return self.declare(f"{base}.{suffix}", t, [t] * arity)

    def loop_interleave(self, count: int) -> ir.MDValue:
        """A fresh loop ID (`!llvm.loop`) asking the vectorizer to interleave `count`
        vector iterations.  Loop IDs are self-referential and one per loop."""
        hint = self.module.add_metadata([ir.MetaDataString(self.module, "llvm.loop.interleave.count"),
                                         ir.Constant(ir.IntType(32), count)])
        self._loop_ids += 1
        # Unique operands first (the module dedupes metadata by operands), then the
        # self-reference in place of the placeholder.
        loop_id = self.module.add_metadata([ir.MetaDataString(self.module, f"pb.loop.{self._loop_ids}"), hint])
        loop_id.operands = (loop_id, hint)
        return loop_id

    # -- module and functions -------------------------------------------------------

    def translate(self, module: ModuleOp) -> ir.Module:
        """Translate every function of `module` (declarations first, so calls can
        refer to functions defined later)."""
        for fn in self.declare_module(module):
            self.function(fn)
        return self.module

    def declare_module(self, module: ModuleOp) -> list[func.FuncOp]:
        """Declare every function of `module` not declared yet (a module that grows,
        `lowering/pipeline.py`'s `translate_streamed`, is declared again); returns
        the functions with a body, in order."""
        return self.declare_ops(module.body.block.ops)

    def declare_ops(self, ops: Iterable[Operation]) -> list[func.FuncOp]:
        """`declare_module` for some module-level ops only (those a streamed
        translation has just added: walking the whole module for each function
        would make translating a program quadratic in its number of functions)."""
        funcs = []
        for op in ops:
            if isinstance(op, func.FuncOp):
                if not op.is_declaration:
                    funcs.append(op)
                if op.sym_name.data in self.functions:
                    continue
                ft = op.function_type
                outs = list(ft.outputs.data)
                if len(outs) > 1:
                    raise LoweringError(f"translate-to-llvmlite: @{op.sym_name.data} returns several values")
                ret = llvm_type(outs[0]) if outs else ir.VoidType()
                self.declare(op.sym_name.data, ret, [llvm_type(t) for t in ft.inputs.data])
            elif isinstance(op, xllvm.FuncOp):
                if op.body.blocks:
                    raise LoweringError(f"translate-to-llvmlite: llvm.func @{op.sym_name.data} with a body")
                if op.sym_name.data in self.functions:
                    continue
                lft = op.function_type
                self.declare(
                    op.sym_name.data, _result_type(lft.output), [llvm_type(t) for t in lft.inputs.data]
                )
            else:
                raise LoweringError(f"translate-to-llvmlite: cannot translate '{op.name}' at module level")
        return funcs

    def written_function(self, fn: func.FuncOp) -> list[ir.Function]:
        """Translate `fn` (declared); returns what that defined: the function, and
        an entry's packed wrapper."""
        before = len(self.module.globals)
        self.function(fn)
        new = list(self.module.globals.values())[before:]  # intrinsics declared, a wrapper defined
        return [self.functions[fn.sym_name.data],
                *(g for g in new if isinstance(g, ir.Function) and not g.is_declaration)]

    def function(self, fn: func.FuncOp) -> None:
        """One function definition (see the module docstring for its attributes)."""
        name = fn.sym_name.data
        lf = self.functions[name]
        entry = "llvm.emit_c_interface" in fn.attributes
        attrs = fn.arg_attrs.data if isinstance(fn.arg_attrs, ArrayAttr) else ()
        for k, (arg, t) in enumerate(zip(lf.args, fn.function_type.inputs.data)):
            marked = k < len(attrs) and isinstance(attrs[k], DictionaryAttr) and "llvm.noalias" in attrs[k].data
            # Entry functions: the runtime passes distinct buffers (compiled.execute).
            if (entry and isinstance(t, MemRefType)) or marked:
                arg.add_attribute("noalias")
        if SEGMENT_INFIX in name:
            lf.attributes.add("noinline")
        vals: Vals = {}
        first = fn.body.blocks.first
        assert first is not None
        for arg, v in zip(first.args, lf.args):
            t = arg.type
            vals[arg] = MemRef(v, _elem(t), _static_sizes(t)) if isinstance(t, MemRefType) else v
        self.region_blocks(list(fn.body.blocks), lf, vals)
        if entry:
            self.packed_wrapper(lf, name)

    def region_blocks(self, blocks: list[Block], lf: ir.Function, vals: Vals) -> None:
        """A function body of one or more blocks (`cf` branches between them: block
        arguments become phis)."""
        self.bbs = bbs = {blk: lf.append_basic_block() for blk in blocks}
        for blk in blocks[1:]:
            b = ir.IRBuilder(bbs[blk])
            for a in blk.args:
                vals[a] = _rewrap(a.type, b.phi(llvm_type(a.type)))
        for blk in blocks:
            self.block(blk, ir.IRBuilder(bbs[blk]), vals)

    def packed_wrapper(self, lf: ir.Function, name: str) -> None:
        """`void _pullback_packed_<name>(ptr slots)` calling `lf` with its i-th
        argument read from the i-th 8-byte slot."""
        w = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [PTR]), PACKED_PREFIX + name)
        b = ir.IRBuilder(w.append_basic_block())
        args = []
        for i, a in enumerate(lf.args):
            slot = b.gep(w.args[0], [ir.Constant(I64, i)], source_etype=I64)
            args.append(b.load(slot, typ=a.type))
        b.call(lf, args)
        b.ret_void()

    # -- blocks and ops -----------------------------------------------------------

    def block(self, block: Block, b: ir.IRBuilder, vals: Vals) -> list[Any]:
        """Translate a block's ops; returns what its `scf.yield`/`scf.condition`
        passes on (the condition first for the latter)."""
        for op in block.ops:
            t = type(op)
            if t is scf.YieldOp:
                return [vals[v] for v in op.operands]
            if t is scf.ConditionOp:
                return [vals[v] for v in op.operands]
            if t is scf.ReduceOp:
                if op.operands:
                    raise LoweringError("translate-to-llvmlite: scf.parallel reductions are not supported")
                return []
            self.op(op, b, vals)
        return []

    def op(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """Translate one op into `b`, binding its results in `vals`."""
        t = type(op)
        handler = _HANDLERS.get(t)
        if handler is not None:
            handler(self, op, b, vals)
        elif isinstance(op, LinalgStructuredOperation):
            _structured(self, op, b, vals)
        elif t in FLOAT_BINARY:
            lhs, rhs = (vals[v] for v in op.operands)
            vals[op.results[0]] = _emit(b, FLOAT_BINARY[t])(lhs, rhs, flags=_fastmath(op))
        elif t in INT_BINARY:
            lhs, rhs = (vals[v] for v in op.operands)
            vals[op.results[0]] = _emit(b, INT_BINARY[t])(lhs, rhs)
        elif t in BINARY_INTRINSICS:
            lhs, rhs = (vals[v] for v in op.operands)
            vals[op.results[0]] = b.call(self.intrinsic(BINARY_INTRINSICS[t], lhs.type, 2), [lhs, rhs])
        elif t in CASTS:
            x = vals[op.operands[0]]
            to = llvm_type(op.results[0].type)
            vals[op.results[0]] = x if x.type == to else _emit(b, CASTS[t])(x, to)
        elif t is UNSIGNED_TO_FLOAT:
            check_unsigned_to_float(op.operands[0].type)
            x = vals[op.operands[0]]
            wide = x if x.type == I64 else b.zext(x, I64)
            vals[op.results[0]] = b.sitofp(wide, llvm_type(op.results[0].type))
        elif t in FLOAT_TO_INT:
            x, rt = vals[op.operands[0]], op.results[0].type
            name = intrinsic_name(FLOAT_TO_INT[t], rt, op.operands[0].type)
            vals[op.results[0]] = b.call(self.declare(name, llvm_type(rt), [x.type]), [x])
        elif t in MATH_INTRINSICS:
            args = [vals[v] for v in op.operands]
            fn = self.intrinsic(MATH_INTRINSICS[t], args[0].type, len(args))
            vals[op.results[0]] = b.call(fn, args)
        elif t in LIBM:
            x = vals[op.operands[0]]
            name = LIBM[t] + ("f" if isinstance(x.type, ir.FloatType) else "")
            vals[op.results[0]] = b.call(self.declare(name, x.type, [x.type]), [x])
        else:
            raise LoweringError(f"translate-to-llvmlite: cannot translate '{op.name}'")

    # -- memory -------------------------------------------------------------------

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
                    raise LoweringError(
                        f"translate-to-llvmlite: {what}: cannot tell the size of dimension {k} of a "
                        "dynamically shaped memref (only memref.alloc, reinterpret_cast and subview "
                        "define sizes)"
                    )
                linear = b.add(b.mul(linear, size), idx)
        else:
            for idx, stride in zip(indices, m.strides):
                term = idx if isinstance(stride, ir.Constant) and stride.constant == 1 else b.mul(idx, stride)
                linear = term if linear is None else b.add(linear, term)
        if linear is None:
            linear = ir.Constant(I64, 0)
        return b.gep(m.ptr, [linear], inbounds=True, source_etype=m.elem)


def _elem(t: Attribute) -> ir.Type:
    assert isinstance(t, MemRefType)
    return llvm_type(t.get_element_type())


def _static_or(values: Sequence[int], dynamic: Sequence[SSAValue], vals: Vals) -> list[ir.Value]:
    """Mixed static/dynamic operands (`static_sizes` with `DYNAMIC_INDEX` holes)."""
    it = iter(dynamic)
    return [vals[next(it)] if v == DYNAMIC_INDEX else ir.Constant(I64, v) for v in values]


def _mul(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    if isinstance(x, ir.Constant) and isinstance(y, ir.Constant):
        return ir.Constant(I64, x.constant * y.constant)
    if isinstance(x, ir.Constant) and x.constant == 1:
        return y
    if isinstance(y, ir.Constant) and y.constant == 1:
        return x
    return b.mul(x, y)


def _add(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    if isinstance(x, ir.Constant) and isinstance(y, ir.Constant):
        return ir.Constant(I64, x.constant + y.constant)
    if isinstance(x, ir.Constant) and x.constant == 0:
        return y
    if isinstance(y, ir.Constant) and y.constant == 0:
        return x
    return b.add(x, y)


def _row_major_strides(b: ir.IRBuilder, sizes: Sequence[ir.Value | None], what: str) -> list[ir.Value]:
    strides: list[ir.Value] = []
    acc: ir.Value = ir.Constant(I64, 1)
    for k in range(len(sizes) - 1, -1, -1):
        strides.insert(0, acc)
        if k:
            size = sizes[k]
            if size is None:
                raise LoweringError(f"translate-to-llvmlite: {what}: a dynamic size is unknown")
            acc = _mul(b, acc, size)
    return strides


def _memref(vals: Vals, v: SSAValue, what: str) -> MemRef:
    m = vals[v]
    if not isinstance(m, MemRef):
        raise LoweringError(f"translate-to-llvmlite: {what}: operand is not a memref")
    return m


def _ptr(x: Any) -> ir.Value:
    return x.ptr if isinstance(x, MemRef) else x


# -------------------------------------------------------------------- handlers


@handles(arith.ConstantOp)
def _constant(tr: Translator, op: arith.ConstantOp, b: ir.IRBuilder, vals: Vals) -> None:
    attr = op.value
    t = llvm_type(op.result.type)
    if isinstance(attr, FloatAttr):
        vals[op.result] = ir.Constant(t, float(attr.value.data))
    elif isinstance(attr, IntegerAttr):
        v = int(attr.value.data)
        vals[op.result] = ir.Constant(t, v & 1 if t == I1 else v)
    else:
        raise LoweringError(f"translate-to-llvmlite: arith.constant {attr} (only scalars)")


def _scalar(emit: Emitter) -> Handler:
    """A handler running one of the shared scalar emitters (`llvm_scalar.py`)."""

    def handler(tr: Translator, op: Operation, b: ir.IRBuilder, vals: dict[SSAValue, Any]) -> None:
        emit(op, b, vals)

    return handler


for _op_type, _scalar_emitter in SCALAR_EMITTERS.items():
    handles(_op_type)(_scalar(_scalar_emitter))


@handles(arith.NegfOp)
def _negf(tr: Translator, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
    vals[op.results[0]] = b.fneg(vals[op.operands[0]], flags=_fastmath(op))


@handles(arith.SelectOp)
def _select(tr: Translator, op: arith.SelectOp, b: ir.IRBuilder, vals: Vals) -> None:
    vals[op.result] = b.select(vals[op.cond], _ptr(vals[op.lhs]), _ptr(vals[op.rhs]))


# -- func and llvm ---------------------------------------------------------------


@handles(func.CallOp, xllvm.CallOp)
def _call(tr: Translator, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
    callee = op.callee  # type: ignore[attr-defined]
    name = callee.string_value() if hasattr(callee, "string_value") else callee.root_reference.data
    fn = tr.functions.get(name)
    if fn is None:
        raise LoweringError(f"translate-to-llvmlite: call of undeclared @{name}")
    res = b.call(fn, [_ptr(vals[v]) for v in op.operands])
    if op.results:
        vals[op.results[0]] = res


@handles(func.ReturnOp, xllvm.ReturnOp)
def _return(tr: Translator, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
    if op.operands:
        b.ret(_ptr(vals[op.operands[0]]))
    else:
        b.ret_void()


@handles(xllvm.GEPOp)
def _gep(tr: Translator, op: xllvm.GEPOp, b: ir.IRBuilder, vals: Vals) -> None:
    raw = op.rawConstantIndices.get_values()
    dynamic = iter(op.ssa_indices)
    indices = [vals[next(dynamic)] if i == xllvm.GEP_USE_SSA_VAL else ir.Constant(ir.IntType(32), i) for i in raw]
    elem = llvm_type(op.elem_type) if op.elem_type is not None else I8
    vals[op.result] = b.gep(_ptr(vals[op.ptr]), indices, inbounds=op.inbounds is not None, source_etype=elem)


@handles(xllvm.LoadOp)
def _llvm_load(tr: Translator, op: xllvm.LoadOp, b: ir.IRBuilder, vals: Vals) -> None:
    vals[op.dereferenced_value] = b.load(_ptr(vals[op.ptr]), typ=llvm_type(op.dereferenced_value.type))


@handles(xllvm.StoreOp)
def _llvm_store(tr: Translator, op: xllvm.StoreOp, b: ir.IRBuilder, vals: Vals) -> None:
    b.store(_ptr(vals[op.value]), _ptr(vals[op.ptr]))


@handles(xllvm.ConstantOp)
def _llvm_constant(tr: Translator, op: xllvm.ConstantOp, b: ir.IRBuilder, vals: Vals) -> None:
    attr = op.value
    t = llvm_type(op.result.type)
    if isinstance(attr, FloatAttr):
        vals[op.result] = ir.Constant(t, float(attr.value.data))
    elif isinstance(attr, IntegerAttr):
        vals[op.result] = ir.Constant(t, int(attr.value.data))
    else:
        raise LoweringError(f"translate-to-llvmlite: llvm.mlir.constant {attr}")


@handles(xllvm.ZeroOp)
def _llvm_zero(tr: Translator, op: xllvm.ZeroOp, b: ir.IRBuilder, vals: Vals) -> None:
    vals[op.res] = ir.Constant(llvm_type(op.res.type), None)


@handles(xllvm.PtrToIntOp, xllvm.IntToPtrOp)
def _ptr_int(tr: Translator, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
    x = _ptr(vals[op.operands[0]])
    to = llvm_type(op.results[0].type)
    vals[op.results[0]] = b.ptrtoint(x, to) if isinstance(op, xllvm.PtrToIntOp) else b.inttoptr(x, to)


@handles(UnrealizedConversionCastOp)
def _cast(tr: Translator, op: UnrealizedConversionCastOp, b: ir.IRBuilder, vals: Vals) -> None:
    for src, res in zip(op.inputs, op.outputs, strict=True):
        x = vals[src]
        if isinstance(res.type, MemRefType):
            ptr = _ptr(x)
            if ptr.type != PTR:
                raise LoweringError(f"translate-to-llvmlite: unrealized cast of {src.type} to {res.type}")
            vals[res] = MemRef(ptr, _elem(res.type), _static_sizes(res.type))
        elif isinstance(res.type, xllvm.LLVMPointerType):
            vals[res] = _ptr(x)
        elif llvm_type(res.type) == x.type:
            vals[res] = x
        else:
            raise LoweringError(f"translate-to-llvmlite: unrealized cast of {src.type} to {res.type}")


# -- memref ------------------------------------------------------------------------


@handles(memref.AllocOp)
def _alloc(tr: Translator, op: memref.AllocOp, b: ir.IRBuilder, vals: Vals) -> None:
    t = op.memref.type
    assert isinstance(t, MemRefType)
    nbytes = element_bytes(t.get_element_type())
    sizes: list[ir.Value | None] = []
    dyn = iter(op.dynamic_sizes)
    total: ir.Value = ir.Constant(I64, 1)
    for d in t.get_shape():
        if d == DYNAMIC_INDEX:
            s = vals[next(dyn)]
            sizes.append(s)
            total = _mul(b, total, s)
        else:
            sizes.append(ir.Constant(I64, d))
            nbytes *= max(d, 1)
    size = _mul(b, ir.Constant(I64, nbytes), total)
    malloc = tr.declare("malloc", PTR, [I64])
    vals[op.memref] = MemRef(b.call(malloc, [size]), _elem(t), sizes)


@handles(memref.AllocaOp)
def _alloca(tr: Translator, op: memref.AllocaOp, b: ir.IRBuilder, vals: Vals) -> None:
    t = op.memref.type
    assert isinstance(t, MemRefType)
    sizes: list[ir.Value | None] = []
    dyn = iter(op.dynamic_sizes)
    total: ir.Value = ir.Constant(I64, 1)
    for d in t.get_shape():
        s = vals[next(dyn)] if d == DYNAMIC_INDEX else ir.Constant(I64, d)
        sizes.append(s)
        total = _mul(b, total, s)
    elem = _elem(t)
    if not op.dynamic_sizes:
        # Static allocas go to the entry block, where LLVM promotes them.
        entry = b.function.entry_basic_block
        eb = ir.IRBuilder(entry)
        eb.position_at_start(entry)
        ptr = eb.alloca(elem, size=total)
    else:
        ptr = b.alloca(elem, size=total)
    vals[op.memref] = MemRef(ptr, elem, sizes)


@handles(memref.DeallocOp)
def _dealloc(tr: Translator, op: memref.DeallocOp, b: ir.IRBuilder, vals: Vals) -> None:
    b.call(tr.declare("free", ir.VoidType(), [PTR]), [_ptr(vals[op.memref])])


@handles(memref.LoadOp)
def _load(tr: Translator, op: memref.LoadOp, b: ir.IRBuilder, vals: Vals) -> None:
    m = _memref(vals, op.memref, "memref.load")
    ptr = tr.address(b, m, [vals[i] for i in op.indices], "memref.load")
    vals[op.res] = b.load(ptr, typ=m.elem)


@handles(memref.StoreOp)
def _store(tr: Translator, op: memref.StoreOp, b: ir.IRBuilder, vals: Vals) -> None:
    m = _memref(vals, op.memref, "memref.store")
    ptr = tr.address(b, m, [vals[i] for i in op.indices], "memref.store")
    b.store(vals[op.value], ptr)


_ATOMIC_KINDS = {0: "fadd", 1: "add"}
"""`memref.atomic_rmw` kinds (xDSL's numbering: `addf`, `addi`) and their operation."""


@handles(memref.AtomicRMWOp)
def _atomic(tr: Translator, op: memref.AtomicRMWOp, b: ir.IRBuilder, vals: Vals) -> None:
    # The CPU code runs on one thread here: a plain read-modify-write, which keeps
    # the loop vectorizable (as convert-parallel-loops-to-sequential does).
    kind = _ATOMIC_KINDS.get(op.kind.value.data)
    if kind is None:
        raise LoweringError(f"translate-to-llvmlite: memref.atomic_rmw kind {op.kind.value.data}")
    m = _memref(vals, op.memref, "memref.atomic_rmw")
    ptr = tr.address(b, m, [vals[i] for i in op.indices], "memref.atomic_rmw")
    old = b.load(ptr, typ=m.elem)
    new = b.fadd(old, vals[op.value]) if kind == "fadd" else b.add(old, vals[op.value])
    b.store(new, ptr)
    vals[op.result] = old


@handles(memref.DimOp)
def _dim(tr: Translator, op: memref.DimOp, b: ir.IRBuilder, vals: Vals) -> None:
    idx = op.index.owner
    if not (isinstance(idx, arith.ConstantOp) and isinstance(idx.value, IntegerAttr)):
        raise LoweringError("translate-to-llvmlite: memref.dim needs a constant index")
    k = int(idx.value.value.data)
    size = _memref(vals, op.source, "memref.dim").sizes[k]
    if size is None:
        raise LoweringError(
            f"translate-to-llvmlite: memref.dim: the size of dimension {k} of {op.source.type} is not known "
            "(only memref.alloc, reinterpret_cast and subview define sizes)"
        )
    vals[op.result] = size


@handles(memref.ReinterpretCastOp)
def _reinterpret(tr: Translator, op: memref.ReinterpretCastOp, b: ir.IRBuilder, vals: Vals) -> None:
    src = _memref(vals, op.source, "memref.reinterpret_cast")
    offset = _static_or(op.static_offsets.get_values(), op.offsets, vals)[0]
    sizes: list[ir.Value | None] = list(_static_or(op.static_sizes.get_values(), op.sizes, vals))
    ptr = src.ptr
    if not (isinstance(offset, ir.Constant) and offset.constant == 0):
        ptr = b.gep(ptr, [offset], inbounds=True, source_etype=src.elem)
    strides = None
    if _has_strided_layout(op.result.type):
        strides = _static_or(op.static_strides.get_values(), op.strides, vals)
    vals[op.result] = MemRef(ptr, _elem(op.result.type), sizes, strides)


@handles(memref.CastOp)
def _memref_cast(tr: Translator, op: memref.CastOp, b: ir.IRBuilder, vals: Vals) -> None:
    src = _memref(vals, op.source, "memref.cast")
    t = op.dest.type
    assert isinstance(t, MemRefType)
    sizes = [s if s is not None else old for s, old in zip(_static_sizes(t), src.sizes)]
    vals[op.dest] = MemRef(src.ptr, src.elem, sizes, src.strides)


@handles(memref.SubviewOp)
def _subview(tr: Translator, op: memref.SubviewOp, b: ir.IRBuilder, vals: Vals) -> None:
    src = _memref(vals, op.source, "memref.subview")
    offsets = _static_or(op.static_offsets.get_values(), op.offsets, vals)
    sizes = _static_or(op.static_sizes.get_values(), op.sizes, vals)
    steps = _static_or(op.static_strides.get_values(), op.strides, vals)
    base = src.strides or _row_major_strides(b, src.sizes, "memref.subview")
    linear: ir.Value = ir.Constant(I64, 0)
    for off, st in zip(offsets, base):
        linear = _add(b, linear, _mul(b, off, st))
    ptr = src.ptr
    if not (isinstance(linear, ir.Constant) and linear.constant == 0):
        ptr = b.gep(ptr, [linear], inbounds=True, source_etype=src.elem)
    strides = [_mul(b, st, step) for st, step in zip(base, steps)]
    result = op.result.type
    assert isinstance(result, MemRefType)
    keep = list(range(len(sizes)))
    # A rank-reducing subview drops unit dimensions (the first ones that are 1).
    while len(keep) > result.get_num_dims():
        unit = next(
            (k for k in keep if isinstance(sizes[k], ir.Constant) and sizes[k].constant == 1), None
        )
        if unit is None:
            raise LoweringError(f"translate-to-llvmlite: memref.subview to {result}: cannot tell the dropped dimensions")
        keep.remove(unit)
    vals[op.result] = MemRef(ptr, src.elem, [sizes[k] for k in keep], [strides[k] for k in keep])


@handles(memref.ExtractAlignedPointerAsIndexOp)
def _aligned_pointer(tr: Translator, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
    vals[op.results[0]] = b.ptrtoint(_ptr(vals[op.operands[0]]), I64)


# -- scf and cf --------------------------------------------------------------------


@handles(scf.ForOp)
def _for(tr: Translator, op: scf.ForOp, b: ir.IRBuilder, vals: Vals) -> None:
    fn = b.function
    pre = b.block
    header = fn.append_basic_block("for.header")
    body = fn.append_basic_block("for.body")
    exit_ = fn.append_basic_block("for.exit")
    lb, ub, step = vals[op.lb], vals[op.ub], vals[op.step]
    b.branch(header)
    b.position_at_end(header)
    iv = b.phi(lb.type)
    iv.add_incoming(lb, pre)
    carried = []
    for init in op.iter_args:
        x = _ptr(vals[init])
        phi = b.phi(x.type)
        phi.add_incoming(x, pre)
        carried.append(phi)
    b.cbranch(b.icmp_signed("<", iv, ub), body, exit_)
    b.position_at_end(body)
    inner = op.body.block
    vals[inner.args[0]] = iv
    for a, phi in zip(inner.args[1:], carried):
        vals[a] = _rewrap(a.type, phi)
    nxt = tr.block(inner, b, vals)
    latch = b.block
    iv.add_incoming(b.add(iv, step), latch)
    for phi, v in zip(carried, nxt):
        phi.add_incoming(_ptr(v), latch)
    b.branch(header)
    b.position_at_end(exit_)
    for r, phi in zip(op.results, carried):
        vals[r] = _rewrap(r.type, phi)


def _rewrap(t: Attribute, v: ir.Value) -> Any:
    """A value carried through a phi (loop or branch): a memref keeps its static
    sizes; a dynamic one is unknown until a `reinterpret_cast` views it (as the
    lowering does for buffers crossing region boundaries)."""
    if isinstance(t, MemRefType):
        if _has_strided_layout(t):
            raise LoweringError(f"translate-to-llvmlite: a strided {t} carried through a loop or branch")
        return MemRef(v, _elem(t), _static_sizes(t))
    return v


@handles(scf.ParallelOp)
def _parallel(tr: Translator, op: scf.ParallelOp, b: ir.IRBuilder, vals: Vals) -> None:
    if op.initVals:
        raise LoweringError("translate-to-llvmlite: scf.parallel with reductions")
    fn = b.function
    inner = op.body.block
    exits = []
    for k, (lo, hi, st) in enumerate(zip(op.lowerBound, op.upperBound, op.step)):
        pre = b.block
        header = fn.append_basic_block("par.header")
        body = fn.append_basic_block("par.body")
        exit_ = fn.append_basic_block("par.exit")
        b.branch(header)
        b.position_at_end(header)
        iv = b.phi(I64)
        iv.add_incoming(vals[lo], pre)
        b.cbranch(b.icmp_signed("<", iv, vals[hi]), body, exit_)
        b.position_at_end(body)
        vals[inner.args[k]] = iv
        exits.append((header, exit_, iv, vals[st]))
    tr.block(inner, b, vals)
    for header, exit_, iv, st in reversed(exits):
        iv.add_incoming(b.add(iv, st), b.block)
        b.branch(header)
        b.position_at_end(exit_)


@handles(scf.IfOp)
def _if(tr: Translator, op: scf.IfOp, b: ir.IRBuilder, vals: Vals) -> None:
    fn = b.function
    then = fn.append_basic_block("if.then")
    has_else = bool(op.false_region.blocks) and bool(list(op.false_region.block.ops))
    other = fn.append_basic_block("if.else") if has_else or op.output else None
    merge = fn.append_basic_block("if.end")
    b.cbranch(vals[op.cond], then, other or merge)
    regions = [(blk, region) for blk, region in ((then, op.true_region), (other, op.false_region)) if blk is not None]
    _join_regions(tr, regions, merge, op.output, b, vals)


def _join_regions(tr: Translator, regions: list[tuple[ir.Block, Any]], merge: ir.Block,
                  results: Sequence[SSAValue], b: ir.IRBuilder, vals: Vals) -> None:
    """Translate each region into its block, branch to `merge`, and give `results`
    the yielded values through phis (`scf.if` and `scf.index_switch`)."""
    outs = []
    for blk, region in regions:
        b.position_at_end(blk)
        got = tr.block(region.block, b, vals) if region.blocks else []
        outs.append((got, b.block))
        b.branch(merge)
    b.position_at_end(merge)
    for i, r in enumerate(results):
        phi = b.phi(llvm_type(r.type))
        for got, blk in outs:
            phi.add_incoming(_ptr(got[i]), blk)
        vals[r] = _rewrap(r.type, phi)


@handles(scf.WhileOp)
def _while(tr: Translator, op: scf.WhileOp, b: ir.IRBuilder, vals: Vals) -> None:
    fn = b.function
    pre = b.block
    header = fn.append_basic_block("while.cond")
    body = fn.append_basic_block("while.body")
    exit_ = fn.append_basic_block("while.exit")
    b.branch(header)
    b.position_at_end(header)
    before = op.before_region.block
    phis = []
    for a, init in zip(before.args, op.arguments):
        x = _ptr(vals[init])
        phi = b.phi(x.type)
        phi.add_incoming(x, pre)
        phis.append(phi)
        vals[a] = _rewrap(a.type, phi)
    cond, *passed = tr.block(before, b, vals)
    b.cbranch(cond, body, exit_)
    b.position_at_end(body)
    after = op.after_region.block
    for a, v in zip(after.args, passed):
        vals[a] = v
    nxt = tr.block(after, b, vals)
    for phi, v in zip(phis, nxt):
        phi.add_incoming(_ptr(v), b.block)
    b.branch(header)
    b.position_at_end(exit_)
    for r, v in zip(op.results, passed):
        vals[r] = v


@handles(scf.IndexSwitchOp)
def _switch(tr: Translator, op: scf.IndexSwitchOp, b: ir.IRBuilder, vals: Vals) -> None:
    fn = b.function
    merge = fn.append_basic_block("switch.end")
    default = fn.append_basic_block("switch.default")
    sw = b.switch(vals[op.arg], default)
    regions = [(default, op.default_region)]
    for value, region in zip(op.cases.get_values(), op.case_regions):
        bb = fn.append_basic_block("switch.case")
        sw.add_case(ir.Constant(I64, value), bb)
        regions.append((bb, region))
    _join_regions(tr, regions, merge, op.output, b, vals)


@handles(cf.BranchOp)
def _br(tr: Translator, op: cf.BranchOp, b: ir.IRBuilder, vals: Vals) -> None:
    _pass_args(tr, op.successor, op.arguments, b, vals)
    b.branch(tr.bbs[op.successor])


@handles(cf.ConditionalBranchOp)
def _cond_br(tr: Translator, op: cf.ConditionalBranchOp, b: ir.IRBuilder, vals: Vals) -> None:
    _pass_args(tr, op.then_block, op.then_arguments, b, vals)
    _pass_args(tr, op.else_block, op.else_arguments, b, vals)
    b.cbranch(vals[op.cond], tr.bbs[op.then_block], tr.bbs[op.else_block])


def _pass_args(tr: Translator, target: Block, args: Sequence[SSAValue], b: ir.IRBuilder, vals: Vals) -> None:
    for a, v in zip(target.args, args):
        _ptr(vals[a]).add_incoming(_ptr(vals[v]), b.block)


# -- linalg and affine ------------------------------------------------------------


def affine_value(b: ir.IRBuilder, expr: AffineExpr, dims: Sequence[ir.Value]) -> ir.Value:
    """An affine expression of the loop indices `dims` (`lower-affine`'s semantics:
    `floordiv`/`ceildiv` round toward minus/plus infinity, `mod` is never negative)."""
    if isinstance(expr, AffineDimExpr):
        return dims[expr.position]
    if isinstance(expr, AffineConstantExpr):
        return ir.Constant(I64, expr.value)
    if not isinstance(expr, AffineBinaryOpExpr):
        raise LoweringError(f"translate-to-llvmlite: affine expression {expr} (symbols are not supported)")
    lhs, rhs = affine_value(b, expr.lhs, dims), affine_value(b, expr.rhs, dims)
    if expr.kind == AffineBinaryOpKind.Add:
        return _add(b, lhs, rhs)
    if expr.kind == AffineBinaryOpKind.Mul:
        return _mul(b, lhs, rhs)
    zero, one = ir.Constant(I64, 0), ir.Constant(I64, 1)
    q, r = b.sdiv(lhs, rhs), b.srem(lhs, rhs)
    if expr.kind == AffineBinaryOpKind.Mod:
        return b.select(b.icmp_signed("<", r, zero), b.add(r, rhs), r)
    inexact = b.icmp_signed("!=", r, zero)
    opposite = b.icmp_signed("<", b.xor(r, rhs), zero)
    if expr.kind == AffineBinaryOpKind.FloorDiv:
        return b.select(b.and_(inexact, opposite), b.sub(q, one), q)
    return b.select(b.and_(inexact, b.not_(opposite)), b.add(q, one), q)


def _map_indices(b: ir.IRBuilder, amap: AffineMap, dims: Sequence[ir.Value]) -> list[ir.Value]:
    if amap.num_symbols:
        raise LoweringError(f"translate-to-llvmlite: affine map {amap} with symbols")
    return [affine_value(b, e, dims) for e in amap.results]


@handles(affine.ApplyOp)
def _affine_apply(tr: Translator, op: affine.ApplyOp, b: ir.IRBuilder, vals: Vals) -> None:
    amap = op.map.data
    operands = [vals[v] for v in op.mapOperands]
    if amap.num_symbols:
        raise LoweringError(f"translate-to-llvmlite: affine.apply of {amap} with symbols")
    (vals[op.result],) = _map_indices(b, amap, operands)


def _structured(tr: Translator, op: LinalgStructuredOperation, b: ir.IRBuilder, vals: Vals) -> None:
    """A linalg structured op (`linalg.generic`, `linalg.fill`, ...) on memrefs as a
    perfect loop nest over its iteration dimensions in order, loading the operands
    its body reads and storing what it yields (what `convert-linalg-to-loops` and
    `lower-affine` would build, without the detour through `scf`/`affine` ops)."""
    if op.results:
        raise LoweringError(f"translate-to-llvmlite: {op.name} on tensors (bufferize first)")
    maps = [m.data for m in op.get_indexing_maps().data]
    bounds: list[ir.Value] = []
    try:
        sources = op.get_loop_bound_sources()
    except NotImplementedError:
        raise LoweringError(
            f"translate-to-llvmlite: {op.name}: its loop bounds cannot be read off its operands' "
            "shapes (the indexing maps are not invertible)"
        ) from None
    for operand, k, size in sources:
        if size != DYNAMIC_INDEX:
            bounds.append(ir.Constant(I64, size))
            continue
        known = _memref(vals, operand, op.name).sizes[k]
        if known is None:
            raise LoweringError(
                f"translate-to-llvmlite: {op.name}: the size of dimension {k} of {operand.type} is not known"
            )
        bounds.append(known)
    fn = b.function
    block = op.body.block
    merged = _merged_dims(maps, [vals[v] for v in op.operands], bounds, block)
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
            ub = _mul(b, bounds[k], ub)
        pre = b.block
        header = fn.append_basic_block("linalg.header")
        body = fn.append_basic_block("linalg.body")
        exit_ = fn.append_basic_block("linalg.exit")
        b.branch(header)
        b.position_at_end(header)
        iv = b.phi(I64)
        iv.add_incoming(ir.Constant(I64, 0), pre)
        b.cbranch(b.icmp_signed("<", iv, ub), body, exit_)
        b.position_at_end(body)
        ivs.append(iv)
        loops.append((header, exit_, iv))
    n_in = len(op.inputs)
    for i, (arg, operand) in enumerate(zip(block.args, op.operands)):
        if not arg.uses:
            continue
        x = vals[operand]
        if isinstance(x, MemRef):
            ptr = tr.address(b, x, _map_indices(b, maps[i], ivs), op.name)
            vals[arg] = b.load(ptr, typ=x.elem)
        else:
            vals[arg] = x
    for inner in block.ops:
        if isinstance(inner, LinalgYieldOp):
            for k, v in enumerate(inner.operands):
                out = _memref(vals, op.outputs[k], op.name)
                ptr = tr.address(b, out, _map_indices(b, maps[n_in + k], ivs), op.name)
                b.store(vals[v], ptr)
            break
        if isinstance(inner, LinalgIndexOp):
            vals[inner.result] = ivs[inner.dim.value.data]
            continue
        tr.op(inner, b, vals)
    interleave = INTERLEAVE_COUNT if chain_depth(block) >= INTERLEAVE_MIN_DEPTH else 0
    for header, exit_, iv in reversed(loops):
        iv.add_incoming(b.add(iv, ir.Constant(I64, 1)), b.block)
        latch = b.branch(header)
        if interleave and iv is loops[-1][2]:
            latch.set_metadata("llvm.loop", tr.loop_interleave(interleave))
        b.position_at_end(exit_)


def _merged_dims(maps: Sequence[AffineMap], operands: Sequence[Any], bounds: Sequence[ir.Value], body: Block) -> list[bool]:
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


def translate_module(module: ModuleOp, name: str = "pullback") -> ir.Module:
    """The llvmlite module of a loop-level `module` (see the module docstring)."""
    return Translator(name).translate(module)


__all__ = ["TRANSLATOR_VERSION", "MemRef", "Translator", "affine_value", "llvm_type", "translate_module"]
