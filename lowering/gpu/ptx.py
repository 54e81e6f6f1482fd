"""The `ptx` target: a `gpu.module` (after `convert-gpu-to-nvvm`) -> PTX text.

Kernels are translated straight to LLVM IR with llvmlite (xDSL's `llvm` dialect has
no `ptx_kernel` calling convention, no atomics and maps math to intrinsics NVPTX
cannot lower, so going through it would only add a detour), then:

1. if the module calls libdevice (`__nv_*`), `libdevice.10.bc` is linked in, its
   functions made internal and global DCE drops the hundreds that are not called;
2. LLVM's O3 pipeline for the NVPTX target machine (`sm_90`, `+ptx80`: the PTX ISA
   the CUDA 13.0 driver JIT accepts) optimizes;
3. the target machine prints PTX.

Kernel ABI (shared with the runtime through `param_kinds`): a memref argument is
passed as its base pointer followed by one `i64` per dynamic dimension (buffers are
dense row-major, so the strides follow); `index` and integers as `i64`/their width,
floats as themselves.  Workgroup memrefs (`memref.alloca` in memory space 3) become
`addrspace(3)` globals.  `i1` elements are stored as bytes, as numpy stores bools.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import llvmlite.binding as llvm
import llvmlite.ir as ir
from xdsl.dialects import arith, func, gpu, memref, scf
from xdsl.dialects import llvm as xllvm
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.context import Context
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.target import Target

from pullback.lowering.llvm_scalar import SCALAR_EMITTERS, Emitter
from pullback.lowering.gpu.build import GpuLoweringError
from pullback.lowering.gpu.nvvm import KERNEL_ATTR
from pullback.lowering.llvm_opcodes import (
    BINARY_INTRINSICS,
    CASTS,
    FLOAT_BINARY,
    FLOAT_TO_INT,
    INT_BINARY,
    MATH_INTRINSICS,
    NVPTX_NATIVE_INTRINSICS,
    UNSIGNED_TO_FLOAT,
    check_unsigned_to_float,
    intrinsic_name,
)

TRIPLE = "nvptx64-nvidia-cuda"
CPU = "sm_90"
FEATURES = "+ptx80"
LIBDEVICE_ENV = "PULLBACK_LIBDEVICE"

I64 = ir.IntType(64)
I8 = ir.IntType(8)


# ------------------------------------------------------------------ target machine


@functools.cache
def target_machine() -> Any:
    """The NVPTX target machine (initializes LLVM's targets once)."""
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    target = llvm.Target.from_triple(TRIPLE)
    return target.create_target_machine(cpu=CPU, features=FEATURES, opt=3)


def libdevice_path() -> Path:
    """`libdevice.10.bc` of the CUDA toolkit (`PULLBACK_LIBDEVICE` overrides)."""
    env = os.environ.get(LIBDEVICE_ENV)
    candidates = [Path(env)] if env else []
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root:
            candidates.append(Path(root) / "nvvm" / "libdevice" / "libdevice.10.bc")
    for c in candidates:
        if c.is_file():
            return c
    raise GpuLoweringError(
        "libdevice.10.bc not found (set PULLBACK_LIBDEVICE or CUDA_HOME): "
        "kernels calling __nv_* math functions need it"
    )


@functools.cache
def _libdevice_bitcode() -> bytes:
    return libdevice_path().read_bytes()


# ------------------------------------------------------------------------- types


def llvm_type(t: Attribute) -> ir.Type:
    """The LLVM type of a scalar (`index` is 64-bit)."""
    if isinstance(t, IndexType):
        return I64
    if isinstance(t, IntegerType):
        return ir.IntType(t.width.data)
    if isinstance(t, Float32Type):
        return ir.FloatType()
    if isinstance(t, Float64Type):
        return ir.DoubleType()
    raise GpuLoweringError(f"no LLVM type for {t} in a kernel")


def storage_type(t: Attribute) -> ir.Type:
    """The in-memory LLVM type of an element (`i1` is a byte)."""
    lt = llvm_type(t)
    return I8 if lt == ir.IntType(1) else lt


def param_kinds(types: Sequence[Attribute]) -> list[str]:
    """The kernel parameters a list of argument types expands to: `ptr`, `i64`,
    `i32`, `f32`, `f64`, ... (a memref is its pointer and its dynamic sizes)."""
    kinds: list[str] = []
    for t in types:
        if isinstance(t, MemRefType):
            kinds.append("ptr")
            kinds += ["i64"] * sum(1 for d in t.get_shape() if d < 0)
        elif isinstance(t, IndexType):
            kinds.append("i64")
        elif isinstance(t, IntegerType):
            kinds.append(f"i{t.width.data}")
        elif isinstance(t, Float32Type):
            kinds.append("f32")
        elif isinstance(t, Float64Type):
            kinds.append("f64")
        else:
            raise GpuLoweringError(f"cannot pass {t} to a kernel")
    return kinds


@dataclass
class MemRef:
    """A memref in a kernel: base pointer, element type and sizes."""

    ptr: ir.Value
    elem: Attribute
    sizes: list[ir.Value]


# ------------------------------------------------------------------ translation

_BUILDER_METHOD = {"and": "and_", "or": "or_"}
"""llvmlite's `IRBuilder` method of an LLVM instruction, where it is not the
instruction's own name (Python keywords)."""



def _emit(b: ir.IRBuilder, opcode: str) -> Callable[..., Any]:
    """The builder method emitting LLVM instruction `opcode`."""
    return getattr(b, _BUILDER_METHOD.get(opcode, opcode))


_ATOMIC_KIND = {0: "fadd", 1: "add"}


class KernelTranslator:
    """Translates the functions of one `gpu.module` into an llvmlite module."""

    def __init__(self, name: str) -> None:
        self.module = ir.Module(name)
        self.module.triple = TRIPLE
        self.module.data_layout = str(target_machine().target_data)
        self.functions: dict[str, ir.Function] = {}
        self._shared = 0

    # -- declarations -----------------------------------------------------------

    def declare(self, name: str, ret: ir.Type, args: Sequence[ir.Type]) -> ir.Function:
        """A function declaration (created once, with its full signature: llvmlite's
        `declare_intrinsic` gets some of them wrong, which crashes LLVM)."""
        fn = self.functions.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(ret, list(args)), name)
            self.functions[name] = fn
        return fn

    def intrinsic(self, base: str, t: ir.Type, arity: int) -> ir.Function:
        """An intrinsic overloaded on its one scalar type `t` (`llvm.maximum.f32`,
        `llvm.smax.i64`), taking `arity` operands of that type."""
        if isinstance(t, ir.IntType):
            suffix = f"i{t.width}"
        else:
            suffix = "f32" if t == ir.FloatType() else "f64"
        return self.declare(f"{base}.{suffix}", t, [t] * arity)

    # -- functions ----------------------------------------------------------------

    def translate(self, mod: gpu.ModuleOp) -> ir.Module:
        """Translate every function of the `gpu.module`."""
        for op in mod.body.block.ops:
            if isinstance(op, xllvm.FuncOp):
                ft = op.function_type
                ret = ir.VoidType() if ft.output is None or str(ft.output) == "!llvm.void" else llvm_type(ft.output)
                self.declare(op.sym_name.data, ret, [llvm_type(t) for t in ft.inputs])
        for op in mod.body.block.ops:
            if isinstance(op, func.FuncOp):
                self.function(op)
            elif isinstance(op, gpu.FuncOp):
                raise GpuLoweringError(
                    f"gpu.func @{op.sym_name.data}: run convert-gpu-to-nvvm before the ptx target"
                )
        return self.module

    def function(self, fn: func.FuncOp) -> None:
        """One kernel (or device function) with the memref ABI of `param_kinds`."""
        inputs = list(fn.function_type.inputs)
        if fn.function_type.outputs.data:
            raise GpuLoweringError(f"@{fn.sym_name.data}: kernels return nothing")
        params: list[ir.Type] = []
        for kind in param_kinds(inputs):
            params.append(ir.PointerType() if kind == "ptr" else {
                "f32": ir.FloatType(), "f64": ir.DoubleType()}.get(kind, ir.IntType(int(kind[1:])) if kind[0] == "i" else I64))
        lf = ir.Function(self.module, ir.FunctionType(ir.VoidType(), params), fn.sym_name.data)
        if KERNEL_ATTR in fn.attributes:
            lf.calling_convention = "ptx_kernel"
        entry = lf.append_basic_block("entry")
        b = ir.IRBuilder(entry)
        vals: dict[SSAValue, Any] = {}
        it = iter(lf.args)
        for arg, t in zip(fn.body.block.args, inputs):
            if isinstance(t, MemRefType):
                ptr = next(it)
                sizes = [ir.Constant(I64, d) if d >= 0 else next(it) for d in t.get_shape()]
                vals[arg] = MemRef(ptr, t.get_element_type(), sizes)
            else:
                vals[arg] = next(it)
        self.block(fn.body.block, b, vals)

    # -- blocks and ops -----------------------------------------------------------

    def block(self, block: Block, b: ir.IRBuilder, vals: dict[SSAValue, Any]) -> list[Any]:
        """Translate a block's ops; returns the values its `scf.yield` yields."""
        for op in block.ops:
            if isinstance(op, scf.YieldOp):
                return [vals[v] for v in op.operands]
            if isinstance(op, func.ReturnOp):
                b.ret_void()
                return []
            self.op(op, b, vals)
        return []

    def op(self, op: Operation, b: ir.IRBuilder, vals: dict[SSAValue, Any]) -> None:
        """Translate one op into `b`, binding its results in `vals`."""
        handler = _HANDLERS.get(type(op))
        if handler is not None:
            handler(self, op, b, vals)
            return
        t = type(op)
        if t in INT_BINARY:
            lhs, rhs = (vals[v] for v in op.operands)
            vals[op.results[0]] = _emit(b, INT_BINARY[t])(lhs, rhs)
        elif t in FLOAT_BINARY:
            lhs, rhs = (vals[v] for v in op.operands)
            vals[op.results[0]] = _emit(b, FLOAT_BINARY[t])(lhs, rhs, flags=_fastmath(op))
        elif t in BINARY_INTRINSICS:
            lhs, rhs = (vals[v] for v in op.operands)
            vals[op.results[0]] = b.call(self.intrinsic(BINARY_INTRINSICS[t], lhs.type, 2), [lhs, rhs])
        elif t in CASTS:
            x = vals[op.operands[0]]
            vals[op.results[0]] = _emit(b, CASTS[t])(x, llvm_type(op.results[0].type))
        elif t is UNSIGNED_TO_FLOAT:
            check_unsigned_to_float(op.operands[0].type)
            wide = b.zext(vals[op.operands[0]], I64)
            vals[op.results[0]] = b.sitofp(wide, llvm_type(op.results[0].type))
        elif t in FLOAT_TO_INT:
            x, rt = vals[op.operands[0]], op.results[0].type
            name = intrinsic_name(FLOAT_TO_INT[t], rt, op.operands[0].type)
            vals[op.results[0]] = b.call(self.declare(name, llvm_type(rt), [x.type]), [x])
        elif t in MATH_INTRINSICS and MATH_INTRINSICS[t] in NVPTX_NATIVE_INTRINSICS:
            args = [vals[v] for v in op.operands]
            fn = self.intrinsic(MATH_INTRINSICS[t], args[0].type, len(args))
            vals[op.results[0]] = b.call(fn, args)
        elif isinstance(op, xmath.Exp2Op) and isinstance(op.results[0].type, Float32Type):
            x = vals[op.operands[0]]
            # NVPTX has `ex2.approx.f32`: the one intrinsic native on f32 only.
            vals[op.results[0]] = b.call(self.intrinsic(MATH_INTRINSICS[xmath.Exp2Op], x.type, 1), [x])
        elif op.name.startswith("math."):
            raise GpuLoweringError(
                f"'{op.name}' cannot be lowered natively on NVPTX (it would abort LLVM): "
                "run convert-gpu-to-nvvm to call libdevice"
            )
        else:
            raise GpuLoweringError(f"the ptx target cannot translate '{op.name}'")

    # -- memory -------------------------------------------------------------------

    def address(self, b: ir.IRBuilder, m: MemRef, indices: Sequence[ir.Value]) -> ir.Value:
        """The element pointer of `m[indices]` (row-major)."""
        offset: ir.Value = ir.Constant(I64, 0)
        for i, (idx, size) in enumerate(zip(indices, m.sizes)):
            offset = idx if i == 0 else b.add(b.mul(offset, size), idx)
        return b.gep(m.ptr, [offset], inbounds=True, source_etype=storage_type(m.elem))

    def shared(self, t: MemRefType) -> MemRef:
        """A workgroup (shared memory) buffer for a static `memref.alloca`."""
        shape = list(t.get_shape())
        if any(d < 0 for d in shape):
            raise GpuLoweringError("workgroup memory must have a static shape")
        n = 1
        for d in shape:
            n *= d
        arr = ir.ArrayType(storage_type(t.get_element_type()), n)
        g = ir.GlobalVariable(self.module, arr, f"__shared_{self._shared}", addrspace=3)
        self._shared += 1
        g.initializer = ir.Constant(arr, ir.Undefined)
        g.align = 16
        g.linkage = "internal"
        # llvmlite types globals with typed pointers; GEPs below need the opaque one.
        g.type = ir.PointerType(addrspace=3)
        return MemRef(g, t.get_element_type(), [ir.Constant(I64, d) for d in shape])


def _fastmath(op: Operation) -> list[str]:
    fm = getattr(op, "fastmath", None)
    if fm is None:
        return []
    return [f.value if hasattr(f, "value") else str(f) for f in fm.data]


Handler = Callable[[KernelTranslator, Any, ir.IRBuilder, dict[SSAValue, Any]], None]
_HANDLERS: dict[type[Operation], Handler] = {}


def handles(*types: type[Operation]) -> Callable[[Handler], Handler]:
    """Register the translation of op types that need more than a table entry."""

    def register(fn: Handler) -> Handler:
        for t in types:
            _HANDLERS[t] = fn
        return fn

    return register


@handles(arith.ConstantOp)
def _constant(tr: KernelTranslator, op: arith.ConstantOp, b: ir.IRBuilder, vals: dict) -> None:
    attr = op.value
    t = llvm_type(op.result.type)
    if isinstance(attr, FloatAttr):
        vals[op.result] = ir.Constant(t, float(attr.value.data))
    elif isinstance(attr, IntegerAttr):
        v = int(attr.value.data)
        vals[op.result] = ir.Constant(t, v & 1 if t == ir.IntType(1) else v)
    else:
        raise GpuLoweringError(f"arith.constant {attr} in a kernel")


def _scalar(emit: Emitter) -> Handler:
    """A handler running one of the shared scalar emitters (`llvm_scalar.py`)."""

    def handler(tr: KernelTranslator, op: Operation, b: ir.IRBuilder, vals: dict[SSAValue, Any]) -> None:
        emit(op, b, vals)

    return handler


for _op_type, _scalar_emitter in SCALAR_EMITTERS.items():
    handles(_op_type)(_scalar(_scalar_emitter))


@handles(arith.NegfOp)
def _negf(tr: KernelTranslator, op: Operation, b: ir.IRBuilder, vals: dict) -> None:
    vals[op.results[0]] = b.fneg(vals[op.operands[0]])


@handles(arith.SelectOp)
def _select(tr: KernelTranslator, op: arith.SelectOp, b: ir.IRBuilder, vals: dict) -> None:
    vals[op.result] = b.select(vals[op.cond], vals[op.lhs], vals[op.rhs])


@handles(xllvm.CallOp)
def _call(tr: KernelTranslator, op: xllvm.CallOp, b: ir.IRBuilder, vals: dict) -> None:
    name = op.callee.root_reference.data
    fn = tr.functions.get(name)
    if fn is None:
        raise GpuLoweringError(f"llvm.call of undeclared @{name}")
    res = b.call(fn, [vals[v] for v in op.operands])
    if op.results:
        vals[op.results[0]] = res


@handles(memref.LoadOp)
def _load(tr: KernelTranslator, op: memref.LoadOp, b: ir.IRBuilder, vals: dict) -> None:
    m: MemRef = vals[op.memref]
    ptr = tr.address(b, m, [vals[i] for i in op.indices])
    v = b.load(ptr, typ=storage_type(m.elem))
    vals[op.res] = b.trunc(v, ir.IntType(1)) if llvm_type(m.elem) == ir.IntType(1) else v


@handles(memref.StoreOp)
def _store(tr: KernelTranslator, op: memref.StoreOp, b: ir.IRBuilder, vals: dict) -> None:
    m: MemRef = vals[op.memref]
    ptr = tr.address(b, m, [vals[i] for i in op.indices])
    v = vals[op.value]
    if llvm_type(m.elem) == ir.IntType(1):
        v = b.zext(v, I8)
    b.store(v, ptr)


@handles(memref.AtomicRMWOp)
def _atomic(tr: KernelTranslator, op: memref.AtomicRMWOp, b: ir.IRBuilder, vals: dict) -> None:
    m: MemRef = vals[op.memref]
    kind = _ATOMIC_KIND.get(op.kind.value.data)
    if kind is None:
        raise GpuLoweringError(f"memref.atomic_rmw kind {op.kind.value.data} is not supported")
    ptr = tr.address(b, m, [vals[i] for i in op.indices])
    vals[op.result] = b.atomic_rmw(kind, ptr, vals[op.value], "monotonic")


@handles(memref.AllocaOp)
def _alloca(tr: KernelTranslator, op: memref.AllocaOp, b: ir.IRBuilder, vals: dict) -> None:
    t = op.memref.type
    space = t.memory_space
    if not (isinstance(space, IntegerAttr) and space.value.data == 3):
        raise GpuLoweringError("memref.alloca in a kernel must be workgroup memory (space 3)")
    vals[op.memref] = tr.shared(t)


@handles(memref.DimOp)
def _dim(tr: KernelTranslator, op: memref.DimOp, b: ir.IRBuilder, vals: dict) -> None:
    k = op.index.owner.value.value.data  # type: ignore[union-attr]
    vals[op.result] = vals[op.source].sizes[k]


@handles(scf.ForOp)
def _for(tr: KernelTranslator, op: scf.ForOp, b: ir.IRBuilder, vals: dict) -> None:
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
        phi = b.phi(vals[init].type)
        phi.add_incoming(vals[init], pre)
        carried.append(phi)
    b.cbranch(b.icmp_signed("<", iv, ub), body, exit_)
    b.position_at_end(body)
    inner = op.body.block
    vals[inner.args[0]] = iv
    for a, phi in zip(inner.args[1:], carried):
        vals[a] = phi
    nxt = tr.block(inner, b, vals)
    latch = b.block
    iv.add_incoming(b.add(iv, step), latch)
    for phi, v in zip(carried, nxt):
        phi.add_incoming(v, latch)
    b.branch(header)
    b.position_at_end(exit_)
    for r, phi in zip(op.results, carried):
        vals[r] = phi


@handles(scf.IfOp)
def _if(tr: KernelTranslator, op: scf.IfOp, b: ir.IRBuilder, vals: dict) -> None:
    fn = b.function
    then = fn.append_basic_block("if.then")
    other = fn.append_basic_block("if.else")
    merge = fn.append_basic_block("if.end")
    b.cbranch(vals[op.cond], then, other)
    outs = []
    for blk, region in ((then, op.true_region), (other, op.false_region)):
        b.position_at_end(blk)
        got = tr.block(region.block, b, vals) if region.blocks else []
        outs.append((got, b.block))
        b.branch(merge)
    b.position_at_end(merge)
    for i, r in enumerate(op.output):
        phi = b.phi(llvm_type(r.type))
        for got, blk in outs:
            phi.add_incoming(got[i], blk)
        vals[r] = phi


# ------------------------------------------------------------------------ PTX


def _needs_libdevice(mod: ir.Module) -> bool:
    return any(f.name.startswith("__nv_") for f in mod.functions)


def compile_ptx(mod: ir.Module) -> str:
    """Verify, link libdevice when used, optimize at O3 and print PTX."""
    tm = target_machine()
    ref = llvm.parse_assembly(str(mod))
    ref.verify()
    if _needs_libdevice(mod):
        lib = llvm.parse_bitcode(_libdevice_bitcode())
        lib.triple = ref.triple
        lib.data_layout = ref.data_layout
        ref.link_in(lib)
        for fn in ref.functions:
            if fn.name.startswith("__nv_") and not fn.is_declaration:
                fn.linkage = "internal"
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    pb = llvm.create_pass_builder(tm, pto)
    dce = llvm.create_new_module_pass_manager()
    dce.add_global_dead_code_eliminate_pass()
    dce.run(ref, pb)
    pb.getModulePassManager().run(ref, pb)
    return tm.emit_assembly(ref)


def gpu_modules(module: ModuleOp) -> list[gpu.ModuleOp]:
    """The `gpu.module`s of a module."""
    return [op for op in module.walk() if isinstance(op, gpu.ModuleOp)]


def module_to_ptx(mod: gpu.ModuleOp) -> str:
    """PTX for one `gpu.module` (after `convert-gpu-to-nvvm`)."""
    return compile_ptx(KernelTranslator(mod.sym_name.data).translate(mod))


def module_to_llvm_ir(mod: gpu.ModuleOp) -> str:
    """The (unoptimized) LLVM IR of one `gpu.module`, for inspection."""
    return str(KernelTranslator(mod.sym_name.data).translate(mod))


def print_ptx(module: ModuleOp, output: IO[str], llvm_ir: bool = False) -> None:
    """PTX (or, with `llvm_ir`, unoptimized LLVM IR) of every `gpu.module`."""
    mods = gpu_modules(module)
    if not mods:
        raise GpuLoweringError(
            "no gpu.module to emit: lower the program with convert-pd-to-linalg and "
            "the GPU pipeline first (see docs/gpu.md)"
        )
    for mod in mods:
        output.write(f"// gpu.module @{mod.sym_name.data}\n")
        output.write(module_to_llvm_ir(mod) if llvm_ir else module_to_ptx(mod))


@dataclass(frozen=True)
class PtxTarget(Target):
    """`-t ptx`: the PTX of each `gpu.module`; `-t ptx{llvm=true}` its LLVM IR."""

    name = "ptx"

    llvm: bool = False

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        """Write the module's kernels to `output`."""
        print_ptx(module, output, llvm_ir=self.llvm)


__all__ = [
    "CPU",
    "FEATURES",
    "TRIPLE",
    "KernelTranslator",
    "PtxTarget",
    "compile_ptx",
    "gpu_modules",
    "libdevice_path",
    "module_to_llvm_ir",
    "module_to_ptx",
    "param_kinds",
    "print_ptx",
    "target_machine",
]
