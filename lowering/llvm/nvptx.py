"""The NVPTX target: kernels of a `gpu.module` (after `convert-gpu-to-nvvm`) as PTX.

`NvptxEmitter` overrides only what a kernel differs in (`emitter.py` does the rest):

* the kernel ABI (shared with the runtime through `param_kinds`): a memref argument
  is passed as its base pointer followed by one `i64` per dynamic dimension
  (buffers are dense row-major, so the strides follow); `index` and integers as
  `i64`/their width, floats as themselves; a kernel entry (`nvvm.kernel`) has the
  `ptx_kernel` calling convention;
* workgroup memrefs (`memref.alloca` in memory space 3) are `addrspace(3)` globals;
  `memref.atomic_rmw` is a real atomic (`atomicrmw ... monotonic`);
* `i1` elements are stored as bytes, as numpy stores bools;
* math: the intrinsic where NVPTX has an instruction for it (`opcodes.MATH`'s
  `nvptx_native`), else libdevice's `__nv_*` function (LLVM's NVPTX back end aborts
  on the other intrinsics).

Then `compile_ptx`: if the module calls libdevice, `libdevice.10.bc` is linked in,
its functions made internal and global DCE drops the hundreds not called; LLVM's O3
pipeline for the NVPTX target machine (`sm_90`, `+ptx80`: the PTX ISA the CUDA 13.0
driver JIT accepts) optimizes; the target machine prints PTX.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import llvmlite.binding as llvm
import llvmlite.ir as ir
from xdsl.context import Context
from xdsl.dialects import func, gpu, memref
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
)
from xdsl.ir import Attribute, Operation
from xdsl.utils.target import Target

from pullback.lowering.abi import GpuLoweringError
from pullback.lowering.llvm.emitter import Emitter, Vals, translate_functions
from pullback.lowering.llvm.opcodes import MathFunction, c_name
from pullback.lowering.llvm.types import I1, I8, I64, PTR, type_suffix
from pullback.lowering.llvm.values import MemRef

TRIPLE = "nvptx64-nvidia-cuda"
CPU = "sm_90"
FEATURES = "+ptx80"
LIBDEVICE_ENV = "PULLBACK_LIBDEVICE"

KERNEL_ATTR = "nvvm.kernel"
"""The unit attribute marking a kernel entry point (as MLIR's NVVM lowering;
`convert-gpu-to-nvvm` sets it)."""

WORKGROUP_SPACE = 3
"""NVPTX's address space of workgroup (shared) memory."""


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
        elif isinstance(t, (Float16Type, Float32Type, Float64Type)):
            kinds.append(f"f{t.bitwidth}")
        else:
            raise GpuLoweringError(f"cannot pass {t} to a kernel")
    return kinds


_PARAM_TYPES: dict[str, ir.Type] = {"ptr": PTR, "f16": ir.HalfType(), "f32": ir.FloatType(), "f64": ir.DoubleType()}


def _param_type(kind: str) -> ir.Type:
    return _PARAM_TYPES.get(kind) or ir.IntType(int(kind[1:]))


class NvptxEmitter(Emitter):
    """Translates the functions of one `gpu.module` into an llvmlite module for NVPTX."""

    what = "ptx"
    error = GpuLoweringError

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.module.triple = TRIPLE
        self.module.data_layout = str(target_machine().target_data)
        self._shared = 0

    def translate(self, mod: gpu.ModuleOp) -> ir.Module:
        """Translate every function of the `gpu.module`."""
        return translate_functions(self, mod)

    def unknown_module_op(self, op: Operation) -> None:
        """A `gpu.func` left means `convert-gpu-to-nvvm` did not run."""
        if isinstance(op, gpu.FuncOp):
            raise self.fail(f"gpu.func @{op.sym_name.data}: run convert-gpu-to-nvvm before the ptx target")
        super().unknown_module_op(op)

    def storage_type(self, t: Attribute) -> ir.Type:
        """`i1` elements are bytes."""
        lt = self.llvm_type(t)
        return I8 if lt == I1 else lt

    def signature(self, fn: func.FuncOp) -> ir.FunctionType:
        """The kernel ABI (`param_kinds`); kernels return nothing."""
        if fn.function_type.outputs.data:
            raise self.fail(f"@{fn.sym_name.data}: kernels return nothing")
        return ir.FunctionType(ir.VoidType(), [_param_type(k) for k in param_kinds(list(fn.function_type.inputs))])

    def prepare_function(self, fn: func.FuncOp, lf: ir.Function) -> None:
        """A kernel entry has the `ptx_kernel` calling convention."""
        if KERNEL_ATTR in fn.attributes:
            lf.calling_convention = "ptx_kernel"

    def block_name(self, k: int) -> str:
        """The entry block is `entry`."""
        return "entry" if k == 0 else ""

    def bind_arguments(self, fn: func.FuncOp, lf: ir.Function, vals: Vals) -> None:
        """A memref is its pointer followed by its dynamic sizes (`param_kinds`)."""
        it = iter(lf.args)
        for arg, t in zip(fn.body.block.args, fn.function_type.inputs):
            if isinstance(t, MemRefType):
                ptr = next(it)
                sizes: list[ir.Value | None] = [ir.Constant(I64, d) if d >= 0 else next(it) for d in t.get_shape()]
                vals[arg] = MemRef(ptr, self.elem(t), sizes)
            else:
                vals[arg] = next(it)

    def math_callee(self, op: Operation, how: MathFunction, t: ir.Type) -> ir.Function | None:
        """The intrinsic where NVPTX has it natively, else libdevice's function."""
        arity = len(op.operands)
        if how.intrinsic is not None and type_suffix(t) in how.nvptx_native:
            return self.intrinsic(how.intrinsic, t, arity)
        if how.libdevice is not None and isinstance(op.results[0].type, (Float32Type, Float64Type)):
            return self.declare("__nv_" + c_name(how.libdevice, op.results[0].type), t, [t] * arity)
        return None

    def atomic_rmw(self, b: ir.IRBuilder, kind: str, m: MemRef, ptr: ir.Value, value: ir.Value) -> ir.Value:
        """A real atomic add (`atom.global.add`)."""
        return b.atomic_rmw(kind, ptr, value, "monotonic")

    def alloca(self, op: memref.AllocaOp, b: ir.IRBuilder, vals: Vals) -> None:
        """Workgroup memory: an `addrspace(3)` global of the static shape."""
        t = op.memref.type
        assert isinstance(t, MemRefType)
        space = t.memory_space
        if not (isinstance(space, IntegerAttr) and space.value.data == WORKGROUP_SPACE):
            raise self.fail("memref.alloca in a kernel must be workgroup memory (space 3)")
        shape = list(t.get_shape())
        if any(d < 0 for d in shape):
            raise self.fail("workgroup memory must have a static shape")
        n = 1
        for d in shape:
            n *= d
        elem = self.elem(t)
        arr = ir.ArrayType(elem, n)
        g = ir.GlobalVariable(self.module, arr, f"__shared_{self._shared}", addrspace=WORKGROUP_SPACE)
        self._shared += 1
        g.initializer = ir.Constant(arr, ir.Undefined)
        g.align = 16
        g.linkage = "internal"
        # llvmlite types globals with typed pointers; the GEPs need the opaque one.
        g.type = ir.PointerType(addrspace=WORKGROUP_SPACE)
        vals[op.memref] = MemRef(g, elem, [ir.Constant(I64, d) for d in shape])


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


def module_to_llvm(mod: gpu.ModuleOp) -> ir.Module:
    """The (unoptimized) llvmlite module of one `gpu.module`."""
    return NvptxEmitter(mod.sym_name.data).translate(mod)


def module_to_ptx(mod: gpu.ModuleOp) -> str:
    """PTX for one `gpu.module` (after `convert-gpu-to-nvvm`)."""
    return compile_ptx(module_to_llvm(mod))


def module_to_llvm_ir(mod: gpu.ModuleOp) -> str:
    """The (unoptimized) LLVM IR of one `gpu.module`, for inspection."""
    return str(module_to_llvm(mod))


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
    "KERNEL_ATTR",
    "TRIPLE",
    "NvptxEmitter",
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
