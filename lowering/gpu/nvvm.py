"""`convert-gpu-to-nvvm` (MLIR's name): the NVIDIA-specific rewriting of kernels.

Inside every `gpu.module`:

* `gpu.thread_id x` (and `block_id`, `block_dim`, `grid_dim`) become calls of the
  special-register intrinsics `llvm.nvvm.read.ptx.sreg.{tid,ctaid,ntid,nctaid}.x`
  (an `i32`, widened to `index` before any arithmetic, so offsets never overflow);
* `gpu.barrier` becomes `llvm.nvvm.barrier.cta.sync.aligned.all(0)`;
* transcendental `math` ops become calls of libdevice's `__nv_*` functions (as
  MLIR's lowering does).  This is not an optimization: LLVM's NVPTX back end has
  no lowering for `llvm.exp`/`llvm.log`/`llvm.pow`/... and aborts the process on
  them.  `sqrt`, `absf`, `fma`, `floor`, `ceil` stay: NVPTX has instructions;
* a `gpu.func ... kernel` becomes a `func.func` marked `nvvm.kernel` (a kernel
  entry, `.entry` in PTX; `ptx_kernel` calling convention in LLVM IR).

Intrinsics and libdevice functions are declared in the `gpu.module` with
`llvm.func`; the `ptx` target links libdevice only when some `__nv_*` is declared.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, gpu, llvm
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    ModuleOp,
    UnitAttr,
    i32,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.builder import Builder

from pullback.lowering.llvm.nvptx import KERNEL_ATTR
from pullback.lowering.llvm.opcodes import MATH, libdevice_name


SREG: dict[type[Operation], str] = {
    gpu.ThreadIdOp: "tid",
    gpu.BlockIdOp: "ctaid",
    gpu.BlockDimOp: "ntid",
    gpu.GridDimOp: "nctaid",
}
"""PTX special register of each id/size op."""

BARRIER = "llvm.nvvm.barrier.cta.sync.aligned.all"

@dataclass
class _Declarations:
    """The `llvm.func` declarations of a `gpu.module`, created on first use."""

    module: gpu.ModuleOp
    names: set[str]

    def declare(self, name: str, args: list[Attribute], result: Attribute | None) -> None:
        if name in self.names:
            return
        ftype = llvm.LLVMFunctionType(args, result)
        decl = llvm.FuncOp(name, ftype, linkage=llvm.LinkageAttr("external"))
        self.module.body.block.add_op(decl)
        self.names.add(name)


def _call(b: Builder, name: str, args: list[SSAValue], result: Attribute | None) -> SSAValue | None:
    call = llvm.CallOp(name, *args, return_type=result)
    b.insert(call)
    return call.results[0] if call.results else None


def _on_libdevice(op: Operation) -> bool:
    """Whether a `math` op becomes a libdevice call on NVPTX (`opcodes.MATH`): it has
    a libdevice function and no intrinsic NVPTX has natively for its type."""
    how = MATH.get(type(op))
    if how is None or how.libdevice is None:
        return False
    t = op.results[0].type
    native = "f32" if isinstance(t, Float32Type) else "f64" if isinstance(t, Float64Type) else None
    return not (how.intrinsic is not None and native in how.nvptx_native)


def convert_module(mod: gpu.ModuleOp) -> None:
    """Apply the rewriting (module doc) to one `gpu.module`."""
    decls = _Declarations(mod, {o.sym_name.data for o in mod.body.block.ops if isinstance(o, llvm.FuncOp)})
    rw = Rewriter()
    for op in list(mod.walk()):
        b = Builder(InsertPoint.before(op))
        if type(op) in SREG:
            axis = op.dimension.data  # type: ignore[attr-defined]
            name = f"llvm.nvvm.read.ptx.sreg.{SREG[type(op)]}.{axis}"
            decls.declare(name, [], i32)
            raw = _call(b, name, [], i32)
            assert raw is not None  # the register read returns its i32
            cast = arith.IndexCastOp(raw, IndexType())
            b.insert(cast)
            op.results[0].replace_all_uses_with(cast.result)
            rw.erase_op(op)
        elif isinstance(op, gpu.BarrierOp):
            decls.declare(BARRIER, [i32], None)
            zero = arith.ConstantOp(IntegerAttr(0, i32))
            b.insert(zero)
            _call(b, BARRIER, [zero.result], None)
            rw.erase_op(op)
        elif _on_libdevice(op):
            name = libdevice_name(op)
            t = op.results[0].type
            decls.declare(name, [t] * len(op.operands), t)
            res = _call(b, name, list(op.operands), t)
            op.results[0].replace_all_uses_with(res)  # type: ignore[arg-type]
            rw.erase_op(op)
    for kernel in [o for o in mod.body.block.ops if isinstance(o, gpu.FuncOp)]:
        _to_func(kernel)


def _to_func(kernel: gpu.FuncOp) -> None:
    """`gpu.func` -> `func.func` (marked `nvvm.kernel` when it is a kernel)."""
    for ret in [o for o in kernel.walk() if isinstance(o, gpu.ReturnOp)]:
        Builder(InsertPoint.before(ret)).insert(func.ReturnOp(*ret.operands))
        ret.detach()
        ret.erase()
    region = kernel.body.clone()
    fn = func.FuncOp(kernel.sym_name.data, kernel.function_type, region)
    if kernel.kernel is not None:
        fn.attributes[KERNEL_ATTR] = UnitAttr()
    parent = kernel.parent_block()
    assert parent is not None
    parent.insert_op_before(fn, kernel)
    kernel.detach()
    kernel.erase()


@dataclass(frozen=True)
class ConvertGpuToNvvmPass(ModulePass):
    """Rewrite every `gpu.module` for NVPTX (see the module doc)."""

    name = "convert-gpu-to-nvvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for mod in [o for o in op.walk() if isinstance(o, gpu.ModuleOp)]:
            convert_module(mod)


__all__ = ["BARRIER", "KERNEL_ATTR", "SREG", "ConvertGpuToNvvmPass"]
