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
from xdsl.dialects import math as xmath
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

from pullback.lowering.gpu.build import GpuLoweringError

KERNEL_ATTR = "nvvm.kernel"
"""The unit attribute marking a kernel entry point (as MLIR's NVVM lowering)."""

SREG = {
    gpu.ThreadIdOp: "tid",
    gpu.BlockIdOp: "ctaid",
    gpu.BlockDimOp: "ntid",
    gpu.GridDimOp: "nctaid",
}
"""PTX special register of each id/size op."""

BARRIER = "llvm.nvvm.barrier.cta.sync.aligned.all"

LIBDEVICE: dict[type[Operation], str] = {
    xmath.ExpOp: "exp",
    xmath.Exp2Op: "exp2",
    xmath.ExpM1Op: "expm1",
    xmath.LogOp: "log",
    xmath.Log2Op: "log2",
    xmath.Log10Op: "log10",
    xmath.Log1pOp: "log1p",
    xmath.TanhOp: "tanh",
    xmath.SinhOp: "sinh",
    xmath.CoshOp: "cosh",
    xmath.ErfOp: "erf",
    xmath.SinOp: "sin",
    xmath.CosOp: "cos",
    xmath.TanOp: "tan",
    xmath.AsinOp: "asin",
    xmath.AcosOp: "acos",
    xmath.AtanOp: "atan",
    xmath.Atan2Op: "atan2",
    xmath.CbrtOp: "cbrt",
    xmath.RsqrtOp: "rsqrt",
    xmath.PowFOp: "pow",
    xmath.RoundOp: "round",
}
"""libdevice base names (`__nv_exp` for f64, `__nv_expf` for f32)."""


def libdevice_name(op: Operation) -> str:
    """The `__nv_*` function computing a `math` op on its element type."""
    base = LIBDEVICE[type(op)]
    t = op.results[0].type
    if isinstance(t, Float32Type):
        return f"__nv_{base}f"
    if isinstance(t, Float64Type):
        return f"__nv_{base}"
    raise GpuLoweringError(f"'{op.name}' on {t} has no libdevice function")


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
        elif type(op) in LIBDEVICE:
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


__all__ = ["BARRIER", "KERNEL_ATTR", "LIBDEVICE", "SREG", "ConvertGpuToNvvmPass", "libdevice_name"]
