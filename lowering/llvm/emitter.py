"""`Emitter`: loop-level IR to LLVM IR with llvmlite, one handler per op, both targets.

MLIR's `mlir-translate` idea, one level higher: instead of rewriting every op into
the `llvm` dialect first, ONE walk builds the LLVM IR with llvmlite's `IRBuilder`
(measured in benchmarks/RESULTS.md, "Compile time").

What it translates: `func` (definitions, declarations, calls, returns), `scf`
(`for`, `if`, `while`, `parallel` without reductions, `index_switch`), `cf` branches
between the blocks of a function body, `arith` and `math` (which LLVM instruction,
intrinsic or library function each op becomes is `opcodes.py`'s table), `memref`
(`alloca`, `load`/`store`, `dim`, `reinterpret_cast`, `cast`, `subview`,
`atomic_rmw`, `extract_aligned_pointer_as_index`), `affine.apply`, linalg
structured ops on memrefs (as loop nests), `builtin.unrealized_conversion_cast`
between memrefs and `!llvm.ptr`, and the few `llvm` ops the lowering makes itself
(`getelementptr` for BLAS operands, calls, loads, stores, constants).  Any other op
raises the target's `LoweringError` naming it: nothing is dropped silently.

Memrefs are bare pointers addressed with `getelementptr inbounds` over the
row-major linear index (LLVM keeps the pointer's provenance and vectorizes), or
over explicit strides for strided views.  A memref is a `MemRef`: its base pointer,
the element's storage type, the sizes the translation knows (static ones, and
dynamic ones where an `alloc`, `reinterpret_cast`, `subview` or the kernel ABI gave
them) and, for strided views, its strides.

A target (`cpu.py`, `nvptx.py`) subclasses `Emitter` and overrides only what
differs: `signature`/`bind_arguments`/`finish_function` (how a function's arguments
arrive and what surrounds it), `storage_type`, `alloca`, `atomic_rmw`,
`math_callee`, `alloc`/`dealloc`.  Handlers are methods registered with `@handles`;
a subclass overriding one keeps its registration.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar

import llvmlite.ir as ir
from xdsl.dialects import affine, arith, cf, func, memref, scf
from xdsl.dialects import llvm as xllvm
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FloatAttr,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StridedLayoutAttr,
    UnrealizedConversionCastOp,
)
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)

from pullback.lowering.abi import LoweringError
from pullback.lowering.llvm.opcodes import (
    BINARY_INTRINSICS,
    CASTS,
    FLOAT_BINARY,
    FLOAT_TO_INT,
    INT_BINARY,
    MATH,
    UNSIGNED_TO_FLOAT,
    MathFunction,
    check_unsigned_to_float,
    intrinsic_name,
)
from pullback.lowering.llvm.loops import emit_structured
from pullback.lowering.llvm.types import I1, I8, I64, PTR, llvm_type, result_type, type_suffix
from pullback.lowering.llvm.values import MemRef, add, close_loop, mul, open_loop, ptr_of, static_sizes

Vals = dict[SSAValue, Any]
"""SSA value -> llvmlite value (or `MemRef`) of the function being translated."""

CMP_PRED = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
"""llvmlite's spelling of `icmp`/`fcmp` predicates (without the sign or order prefix)."""

_BUILDER_METHOD = {"and": "and_", "or": "or_"}
"""llvmlite's `IRBuilder` method of an instruction whose name is a Python keyword."""

_HANDLERS: dict[type[Operation], str] = {}
"""Op type -> the name of the `Emitter` method translating it."""


def handles(*types: type[Operation]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register an `Emitter` method as the translation of op types (a subclass
    overriding the method by name keeps the registration)."""

    def register(fn: Callable[..., None]) -> Callable[..., None]:
        for t in types:
            _HANDLERS[t] = fn.__name__
        return fn

    return register


def _has_strided_layout(t: Attribute) -> bool:
    return isinstance(t, MemRefType) and isinstance(t.layout, StridedLayoutAttr)


def fastmath(op: Operation) -> list[str]:
    """An op's fast-math flags, sorted (llvmlite prints them in the given order)."""
    fm = op.properties.get("fastmath")
    if not isinstance(fm, arith.FastMathFlagsAttr):
        return []
    return sorted(getattr(f, "value", str(f)) for f in fm.data)


def _emit(b: ir.IRBuilder, opcode: str) -> Callable[..., Any]:
    """The builder method emitting LLVM instruction `opcode`."""
    return getattr(b, _BUILDER_METHOD.get(opcode, opcode))


class Emitter:
    """Translates loop-level functions into one llvmlite module (see the module doc)."""

    what: ClassVar[str] = "translate-to-llvmlite"
    """How errors name this translation."""

    error: ClassVar[type[LoweringError]] = LoweringError
    """The exception this target raises for what it cannot translate."""

    def __init__(self, name: str = "pullback") -> None:
        self.module = ir.Module(name)
        self.functions: dict[str, ir.Function] = {}
        self.bbs: dict[Block, ir.Block] = {}
        """The basic block of each block of the function being translated (`cf`
        branch targets)."""
        self.loop_ids = 0
        """Loop IDs made so far (`loops.loop_interleave`)."""
        self._dispatch = {t: getattr(self, name) for t, name in _HANDLERS.items()}

    def fail(self, message: str) -> LoweringError:
        """The target's error for `message` (raise it)."""
        return self.error(f"{self.what}: {message}")

    # -- target hooks ---------------------------------------------------------------

    def storage_type(self, t: Attribute) -> ir.Type:
        """The in-memory LLVM type of an element of type `t`."""
        return self.llvm_type(t)

    def llvm_type(self, t: Attribute) -> ir.Type:
        """`types.llvm_type`, failing with this target's error."""
        try:
            return llvm_type(t)
        except LoweringError as e:
            raise self.fail(str(e)) from None

    def signature(self, fn: func.FuncOp) -> ir.FunctionType:
        """The LLVM type of a function."""
        ft = fn.function_type
        outs = list(ft.outputs.data)
        if len(outs) > 1:
            raise self.fail(f"@{fn.sym_name.data} returns several values")
        ret = self.llvm_type(outs[0]) if outs else ir.VoidType()
        return ir.FunctionType(ret, [self.llvm_type(t) for t in ft.inputs.data])

    def bind_arguments(self, fn: func.FuncOp, lf: ir.Function, vals: Vals) -> None:
        """Bind the entry block's arguments of `fn` to those of `lf`."""
        first = fn.body.blocks.first
        assert first is not None
        for arg, v in zip(first.args, lf.args):
            t = arg.type
            vals[arg] = MemRef(v, self.elem(t), static_sizes(t)) if isinstance(t, MemRefType) else v

    def prepare_function(self, fn: func.FuncOp, lf: ir.Function) -> None:
        """Attributes of a function about to be defined (none by default)."""

    def finish_function(self, fn: func.FuncOp, lf: ir.Function) -> None:
        """What follows a function's definition (nothing by default)."""

    def math_callee(self, op: Operation, how: MathFunction, t: ir.Type) -> ir.Function | None:
        """The intrinsic or library function computing `math` op `op` on type `t`,
        or None when this target has neither."""
        return None

    # -- declarations ---------------------------------------------------------------

    def declare(self, name: str, ret: ir.Type, args: Sequence[ir.Type]) -> ir.Function:
        """The function `name` (declared with this signature on first use, in full:
        llvmlite's `declare_intrinsic` gets some signatures wrong, which crashes LLVM)."""
        fn = self.functions.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(ret, list(args)), name)
            self.functions[name] = fn
        return fn

    def intrinsic(self, base: str, t: ir.Type, arity: int) -> ir.Function:
        """An intrinsic overloaded on its one scalar type (`llvm.maximum.f32`)."""
        return self.declare(f"{base}.{type_suffix(t)}", t, [t] * arity)

    def declare_ops(self, ops: Iterable[Operation]) -> list[func.FuncOp]:
        """Declare the functions among module-level `ops` not declared yet; returns
        those with a body, in order (a module that grows, `pipeline.translate_streamed`,
        declares only what it added: walking the whole module for each function would
        make translating a program quadratic in its number of functions)."""
        funcs = []
        for op in ops:
            if isinstance(op, func.FuncOp):
                if not op.is_declaration:
                    funcs.append(op)
                if op.sym_name.data not in self.functions:
                    self.functions[op.sym_name.data] = ir.Function(self.module, self.signature(op), op.sym_name.data)
            elif isinstance(op, xllvm.FuncOp):
                if op.body.blocks:
                    raise self.fail(f"llvm.func @{op.sym_name.data} with a body")
                if op.sym_name.data not in self.functions:
                    lft = op.function_type
                    self.declare(op.sym_name.data, result_type(lft.output), [self.llvm_type(t) for t in lft.inputs.data])
            else:
                self.unknown_module_op(op)
        return funcs

    def unknown_module_op(self, op: Operation) -> None:
        """A module-level op that is not a function."""
        raise self.fail(f"cannot translate '{op.name}' at module level")

    # -- functions ------------------------------------------------------------------

    def define(self, fn: func.FuncOp) -> None:
        """Define a declared function: its body's blocks (`cf` branches between them:
        block arguments become phis)."""
        lf = self.functions[fn.sym_name.data]
        self.prepare_function(fn, lf)
        vals: Vals = {}
        self.bind_arguments(fn, lf, vals)
        blocks = list(fn.body.blocks)
        self.bbs = bbs = {blk: lf.append_basic_block(self.block_name(k)) for k, blk in enumerate(blocks)}
        for blk in blocks[1:]:
            b = ir.IRBuilder(bbs[blk])
            for a in blk.args:
                vals[a] = self.rewrap(a.type, b.phi(self.llvm_type(a.type)))
        for blk in blocks:
            self.block(blk, ir.IRBuilder(bbs[blk]), vals)
        self.finish_function(fn, lf)

    def block_name(self, k: int) -> str:
        """The name of a function body's `k`-th basic block (none by default)."""
        return ""

    def block(self, block: Block, b: ir.IRBuilder, vals: Vals) -> list[Any]:
        """Translate a block's ops; returns what its `scf.yield`/`scf.condition`
        passes on (the condition first for the latter)."""
        for op in block.ops:
            t = type(op)
            if t is scf.YieldOp or t is scf.ConditionOp:
                return [vals[v] for v in op.operands]
            if t is scf.ReduceOp:
                if op.operands:
                    raise self.fail("scf.parallel reductions are not supported")
                return []
            self.op(op, b, vals)
        return []

    def op(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """Translate one op into `b`, binding its results in `vals`."""
        handler = self._dispatch.get(type(op))
        if handler is not None:
            handler(op, b, vals)
        elif isinstance(op, LinalgStructuredOperation):
            self.structured(op, b, vals)
        else:
            raise self.fail(f"cannot translate '{op.name}'")

    # -- arith and math ---------------------------------------------------------------

    def float_binary(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """`FLOAT_BINARY` ops, fast-math flags carried over."""
        lhs, rhs = (vals[v] for v in op.operands)
        vals[op.results[0]] = _emit(b, FLOAT_BINARY[type(op)])(lhs, rhs, flags=fastmath(op))

    def int_binary(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """`INT_BINARY` ops."""
        lhs, rhs = (vals[v] for v in op.operands)
        vals[op.results[0]] = _emit(b, INT_BINARY[type(op)])(lhs, rhs)

    def binary_intrinsic(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """Minimum and maximum (`BINARY_INTRINSICS`)."""
        lhs, rhs = (vals[v] for v in op.operands)
        vals[op.results[0]] = b.call(self.intrinsic(BINARY_INTRINSICS[type(op)], lhs.type, 2), [lhs, rhs])

    def cast(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """One-instruction conversions (`CASTS`); a same-type cast is the value."""
        x = vals[op.operands[0]]
        to = self.llvm_type(op.results[0].type)
        vals[op.results[0]] = x if x.type == to else _emit(b, CASTS[type(op)])(x, to)

    @handles(UNSIGNED_TO_FLOAT)
    def unsigned_to_float(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """`arith.uitofp`: zero-extend to `i64`, then `sitofp` (`opcodes.py`)."""
        try:
            check_unsigned_to_float(op.operands[0].type)
        except ValueError as e:
            raise self.fail(str(e)) from None
        x = vals[op.operands[0]]
        wide = x if x.type == I64 else b.zext(x, I64)
        vals[op.results[0]] = b.sitofp(wide, self.llvm_type(op.results[0].type))

    def float_to_int(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """Float -> integer through the saturating intrinsics (`FLOAT_TO_INT`)."""
        x, rt = vals[op.operands[0]], op.results[0].type
        name = intrinsic_name(FLOAT_TO_INT[type(op)], rt, op.operands[0].type)
        vals[op.results[0]] = b.call(self.declare(name, self.llvm_type(rt), [x.type]), [x])

    def math(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """A `math` op: the intrinsic or library function `math_callee` picks."""
        args = [vals[v] for v in op.operands]
        callee = self.math_callee(op, MATH[type(op)], args[0].type)
        if callee is None:
            raise self.fail(f"'{op.name}' on {op.results[0].type} has no intrinsic or library function here")
        vals[op.results[0]] = b.call(callee, args)

    @handles(arith.ConstantOp, xllvm.ConstantOp)
    def constant(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """A scalar constant (`arith.constant`, `llvm.mlir.constant`)."""
        attr = op.properties.get("value")
        t = self.llvm_type(op.results[0].type)
        if isinstance(attr, FloatAttr):
            vals[op.results[0]] = ir.Constant(t, float(attr.value.data))
        elif isinstance(attr, IntegerAttr):
            v = int(attr.value.data)
            vals[op.results[0]] = ir.Constant(t, v & 1 if t == I1 else v)
        else:
            raise self.fail(f"{op.name} {attr} (only scalars)")

    @handles(arith.NegfOp)
    def negf(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """`arith.negf` as `fneg`."""
        vals[op.results[0]] = b.fneg(vals[op.operands[0]], flags=fastmath(op))

    @handles(arith.SelectOp)
    def select(self, op: arith.SelectOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`arith.select` (of scalars or memrefs' pointers)."""
        vals[op.result] = b.select(vals[op.cond], ptr_of(vals[op.lhs]), ptr_of(vals[op.rhs]))

    @handles(arith.IndexCastOp)
    def index_cast(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """`arith.index_cast`: truncate or sign-extend between index and integers."""
        x = vals[op.operands[0]]
        to = self.llvm_type(op.results[0].type)
        if x.type.width == to.width:
            vals[op.results[0]] = x
        elif x.type.width > to.width:
            vals[op.results[0]] = b.trunc(x, to)
        else:
            vals[op.results[0]] = b.sext(x, to)

    @handles(arith.CeilDivUIOp)
    def ceildivui(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """`arith.ceildivui`: `(a + d - 1) / d`, unsigned."""
        a, d = (vals[v] for v in op.operands)
        one = ir.Constant(a.type, 1)
        vals[op.results[0]] = b.udiv(b.sub(b.add(a, d), one), d)

    @handles(arith.FloorDivSIOp, arith.CeilDivSIOp)
    def signed_div(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """`arith.floordivsi` / `arith.ceildivsi`: the truncating quotient, moved one
        down (floor) or up (ceil) when inexact and the exact quotient is negative
        (floor) or positive (ceil)."""
        a, d = (vals[v] for v in op.operands)
        vals[op.results[0]] = rounded_div(b, a, d, floor=isinstance(op, arith.FloorDivSIOp))

    @handles(arith.CmpiOp)
    def cmpi(self, op: arith.CmpiOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`arith.cmpi` as `icmp`, signed or unsigned."""
        pred = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
        cmp = b.icmp_unsigned if pred.startswith("u") else b.icmp_signed
        vals[op.result] = cmp(CMP_PRED[pred.removeprefix("u").removeprefix("s")], vals[op.lhs], vals[op.rhs])

    @handles(arith.CmpfOp)
    def cmpf(self, op: arith.CmpfOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`arith.cmpf` as `fcmp`, ordered or unordered (`true`/`false` fold)."""
        pred = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
        lhs, rhs = vals[op.lhs], vals[op.rhs]
        if pred in ("false", "true"):
            vals[op.result] = ir.Constant(I1, int(pred == "true"))
        elif pred == "ord":
            vals[op.result] = b.fcmp_ordered("ord", lhs, rhs)
        elif pred == "uno":
            vals[op.result] = b.fcmp_unordered("uno", lhs, rhs)
        elif pred[0] == "o":
            vals[op.result] = b.fcmp_ordered(CMP_PRED[pred[1:]], lhs, rhs)
        else:
            vals[op.result] = b.fcmp_unordered(CMP_PRED[pred[1:]], lhs, rhs)

    # -- func and llvm ----------------------------------------------------------------

    @handles(func.CallOp, xllvm.CallOp)
    def call(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """A call of a declared function."""
        callee = op.callee  # type: ignore[attr-defined]
        name = callee.string_value() if hasattr(callee, "string_value") else callee.root_reference.data
        fn = self.functions.get(name)
        if fn is None:
            raise self.fail(f"call of undeclared @{name}")
        res = b.call(fn, [ptr_of(vals[v]) for v in op.operands])
        if op.results:
            vals[op.results[0]] = res

    @handles(func.ReturnOp, xllvm.ReturnOp)
    def ret(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """`return`, with its one value or none."""
        if op.operands:
            b.ret(ptr_of(vals[op.operands[0]]))
        else:
            b.ret_void()

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

    # -- memref ---------------------------------------------------------------------

    def elem(self, t: Attribute) -> ir.Type:
        """The element storage type of memref type `t`."""
        assert isinstance(t, MemRefType)
        return self.storage_type(t.get_element_type())

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
        if _has_strided_layout(op.result.type):
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

    # -- scf and cf ---------------------------------------------------------------------

    def rewrap(self, t: Attribute, v: ir.Value) -> Any:
        """A value carried through a phi (loop or branch): a memref keeps its static
        sizes; a dynamic one is unknown until a `reinterpret_cast` views it (as the
        lowering does for buffers crossing region boundaries)."""
        if isinstance(t, MemRefType):
            if _has_strided_layout(t):
                raise self.fail(f"a strided {t} carried through a loop or branch")
            return MemRef(v, self.elem(t), static_sizes(t))
        return v

    @handles(scf.ForOp)
    def for_(self, op: scf.ForOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`scf.for` with loop-carried values (phis)."""
        loop = open_loop(b, vals[op.lb], vals[op.ub], "for", [ptr_of(vals[v]) for v in op.iter_args])
        inner = op.body.block
        vals[inner.args[0]] = loop.iv
        for a, phi in zip(inner.args[1:], loop.carried):
            vals[a] = self.rewrap(a.type, phi)
        nxt = self.block(inner, b, vals)
        close_loop(b, loop, vals[op.step], [ptr_of(v) for v in nxt])
        for r, phi in zip(op.results, loop.carried):
            vals[r] = self.rewrap(r.type, phi)

    @handles(scf.ParallelOp)
    def parallel(self, op: scf.ParallelOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`scf.parallel` (no reductions) as sequential loops, one per dimension."""
        if op.initVals:
            raise self.fail("scf.parallel with reductions")
        inner = op.body.block
        loops = []
        for k, (lo, hi, st) in enumerate(zip(op.lowerBound, op.upperBound, op.step)):
            loop = open_loop(b, vals[lo], vals[hi], "par")
            vals[inner.args[k]] = loop.iv
            loops.append((loop, vals[st]))
        self.block(inner, b, vals)
        for loop, st in reversed(loops):
            close_loop(b, loop, st)

    @handles(scf.IfOp)
    def if_(self, op: scf.IfOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`scf.if`; an `else` that is empty and yields nothing gets no block."""
        fn = b.function
        then = fn.append_basic_block("if.then")
        has_else = bool(op.false_region.blocks) and bool(list(op.false_region.block.ops))
        other = fn.append_basic_block("if.else") if has_else or op.output else None
        merge = fn.append_basic_block("if.end")
        b.cbranch(vals[op.cond], then, other or merge)
        regions = [(blk, region) for blk, region in ((then, op.true_region), (other, op.false_region)) if blk is not None]
        self.join_regions(regions, merge, op.output, b, vals)

    def join_regions(self, regions: list[tuple[ir.Block, Any]], merge: ir.Block,
                     results: Sequence[SSAValue], b: ir.IRBuilder, vals: Vals) -> None:
        """Translate each region into its block, branch to `merge`, and give `results`
        the yielded values through phis (`scf.if` and `scf.index_switch`)."""
        outs = []
        for blk, region in regions:
            b.position_at_end(blk)
            got = self.block(region.block, b, vals) if region.blocks else []
            outs.append((got, b.block))
            b.branch(merge)
        b.position_at_end(merge)
        for i, r in enumerate(results):
            phi = b.phi(self.llvm_type(r.type))
            for got, blk in outs:
                phi.add_incoming(ptr_of(got[i]), blk)
            vals[r] = self.rewrap(r.type, phi)

    @handles(scf.WhileOp)
    def while_(self, op: scf.WhileOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`scf.while`: the `before` region in the loop header, `after` in its body."""
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
            x = ptr_of(vals[init])
            phi = b.phi(x.type)
            phi.add_incoming(x, pre)
            phis.append(phi)
            vals[a] = self.rewrap(a.type, phi)
        cond, *passed = self.block(before, b, vals)
        b.cbranch(cond, body, exit_)
        b.position_at_end(body)
        after = op.after_region.block
        for a, v in zip(after.args, passed):
            vals[a] = v
        nxt = self.block(after, b, vals)
        for phi, v in zip(phis, nxt):
            phi.add_incoming(ptr_of(v), b.block)
        b.branch(header)
        b.position_at_end(exit_)
        for r, v in zip(op.results, passed):
            vals[r] = v

    @handles(scf.IndexSwitchOp)
    def switch(self, op: scf.IndexSwitchOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`scf.index_switch` as LLVM's `switch`."""
        fn = b.function
        merge = fn.append_basic_block("switch.end")
        default = fn.append_basic_block("switch.default")
        sw = b.switch(vals[op.arg], default)
        regions = [(default, op.default_region)]
        for value, region in zip(op.cases.get_values(), op.case_regions):
            bb = fn.append_basic_block("switch.case")
            sw.add_case(ir.Constant(I64, value), bb)
            regions.append((bb, region))
        self.join_regions(regions, merge, op.output, b, vals)

    @handles(cf.BranchOp)
    def br(self, op: cf.BranchOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`cf.br`: block arguments through the target's phis."""
        self.pass_args(op.successor, op.arguments, b, vals)
        b.branch(self.bbs[op.successor])

    @handles(cf.ConditionalBranchOp)
    def cond_br(self, op: cf.ConditionalBranchOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`cf.cond_br`."""
        self.pass_args(op.then_block, op.then_arguments, b, vals)
        self.pass_args(op.else_block, op.else_arguments, b, vals)
        b.cbranch(vals[op.cond], self.bbs[op.then_block], self.bbs[op.else_block])

    def pass_args(self, target: Block, args: Sequence[SSAValue], b: ir.IRBuilder, vals: Vals) -> None:
        """Add this block's values as incoming to `target`'s argument phis."""
        for a, v in zip(target.args, args):
            ptr_of(vals[a]).add_incoming(ptr_of(vals[v]), b.block)

    # -- affine and linalg ------------------------------------------------------------

    @handles(affine.ApplyOp)
    def affine_apply(self, op: affine.ApplyOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`affine.apply` of a map without symbols."""
        amap = op.map.data
        if amap.num_symbols:
            raise self.fail(f"affine.apply of {amap} with symbols")
        (vals[op.result],) = self.map_indices(b, amap, [vals[v] for v in op.mapOperands])

    def map_indices(self, b: ir.IRBuilder, amap: AffineMap, dims: Sequence[ir.Value]) -> list[ir.Value]:
        """The results of an affine map (without symbols) of the indices `dims`."""
        if amap.num_symbols:
            raise self.fail(f"affine map {amap} with symbols")
        return [self.affine_value(b, e, dims) for e in amap.results]

    def affine_value(self, b: ir.IRBuilder, expr: AffineExpr, dims: Sequence[ir.Value]) -> ir.Value:
        """An affine expression of the loop indices `dims` (`lower-affine`'s semantics:
        `floordiv`/`ceildiv` round toward minus/plus infinity, `mod` is never negative)."""
        if isinstance(expr, AffineDimExpr):
            return dims[expr.position]
        if isinstance(expr, AffineConstantExpr):
            return ir.Constant(I64, expr.value)
        if not isinstance(expr, AffineBinaryOpExpr):
            raise self.fail(f"affine expression {expr} (symbols are not supported)")
        lhs, rhs = self.affine_value(b, expr.lhs, dims), self.affine_value(b, expr.rhs, dims)
        if expr.kind == AffineBinaryOpKind.Add:
            return add(b, lhs, rhs)
        if expr.kind == AffineBinaryOpKind.Mul:
            return mul(b, lhs, rhs)
        if expr.kind == AffineBinaryOpKind.Mod:
            r = b.srem(lhs, rhs)
            return b.select(b.icmp_signed("<", r, ir.Constant(I64, 0)), b.add(r, rhs), r)
        return rounded_div(b, lhs, rhs, floor=expr.kind == AffineBinaryOpKind.FloorDiv)

    def structured(self, op: LinalgStructuredOperation, b: ir.IRBuilder, vals: Vals) -> None:
        """A linalg structured op on memrefs as a loop nest (`lowering/llvm/loops.py`)."""
        emit_structured(self, op, b, vals)


def rounded_div(b: ir.IRBuilder, a: ir.Value, d: ir.Value, floor: bool) -> ir.Value:
    """`a / d` rounded toward minus infinity (`floor`) or plus infinity: the
    truncating quotient, moved by one when inexact and the exact quotient is
    negative (floor) or positive (ceil)."""
    zero, one = ir.Constant(a.type, 0), ir.Constant(a.type, 1)
    q, r = b.sdiv(a, d), b.srem(a, d)
    inexact = b.icmp_signed("!=", r, zero)
    opposite = b.icmp_signed("<", b.xor(r, d), zero)  # r and d of opposite signs
    if floor:
        return b.select(b.and_(inexact, opposite), b.sub(q, one), q)
    return b.select(b.and_(inexact, b.not_(opposite)), b.add(q, one), q)


def _static_or(values: Sequence[int], dynamic: Sequence[SSAValue], vals: Vals) -> list[ir.Value]:
    """Mixed static/dynamic operands (`static_sizes` with `DYNAMIC_INDEX` holes)."""
    it = iter(dynamic)
    return [vals[next(it)] if v == DYNAMIC_INDEX else ir.Constant(I64, v) for v in values]


_HANDLERS.update({t: "float_binary" for t in FLOAT_BINARY})
_HANDLERS.update({t: "int_binary" for t in INT_BINARY})
_HANDLERS.update({t: "binary_intrinsic" for t in BINARY_INTRINSICS})
_HANDLERS.update({t: "cast" for t in CASTS})
_HANDLERS.update({t: "float_to_int" for t in FLOAT_TO_INT})
_HANDLERS.update({t: "math" for t in MATH})


def translate_functions(emitter: Emitter, module: ModuleOp | Any) -> ir.Module:
    """Declare every function of `module` (a `builtin.module` or `gpu.module`) on
    `emitter`, then define those with a body; returns the llvmlite module."""
    for fn in emitter.declare_ops(module.body.block.ops):
        emitter.define(fn)
    return emitter.module


__all__ = [
    "CMP_PRED",
    "Emitter",
    "MemRef",
    "Vals",
    "add",
    "fastmath",
    "handles",
    "mul",
    "ptr_of",
    "rounded_div",
    "static_sizes",
    "translate_functions",
]
