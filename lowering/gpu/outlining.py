"""`gpu-kernel-outlining` (MLIR's name): each `gpu.launch` body becomes a kernel.

The kernels of a host function `@f` go to one `gpu.module @f_kernels` (one PTX
module to load per program) as `gpu.func @f_kernel_<n> kernel`, and each launch
becomes a `gpu.launch_func` passing the values the body used from the host as
kernel operands.  Constants are not passed: they are cloned into the kernel (as
MLIR sinks them), so the generated code sees them and folds them.  Inside the
kernel, the launch's block/thread ids and sizes become `gpu.block_id`,
`gpu.thread_id`, `gpu.grid_dim` and `gpu.block_dim` ops.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, gpu
from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr, UnitAttr
from xdsl.ir import Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint
from xdsl.builder import Builder

_ID_OPS = (gpu.BlockIdOp, gpu.ThreadIdOp, gpu.GridDimOp, gpu.BlockDimOp)
"""What the launch body's 12 arguments (in groups of x, y, z) stand for."""


def _defined_inside(v: SSAValue, region: Region) -> bool:
    owner = v.owner
    block = owner if isinstance(owner, Block) else owner.parent_block()
    while block is not None:
        if block.parent_region() is region:
            return True
        parent = block.parent_op()
        block = parent.parent_block() if parent is not None else None
    return False


def captured_values(launch: gpu.LaunchOp) -> list[SSAValue]:
    """Values used in the launch body and defined outside it, in first-use order."""
    seen: dict[SSAValue, None] = {}
    for op in launch.body.walk():
        for v in op.operands:
            if v not in seen and not _defined_inside(v, launch.body):
                seen[v] = None
    return list(seen)


def _sinkable(v: SSAValue) -> bool:
    return isinstance(v.owner, arith.ConstantOp)


def outline(launch: gpu.LaunchOp, kernels: gpu.ModuleOp, name: str) -> gpu.LaunchFuncOp:
    """Move `launch`'s body into a new kernel `name` in `kernels`; return the launch."""
    captured = captured_values(launch)
    args = [v for v in captured if not _sinkable(v)]
    kernel = gpu.FuncOp(name, ([v.type for v in args], []), kernel=True)
    entry = kernel.body.block
    b = Builder(InsertPoint.at_end(entry))
    remap: dict[SSAValue, SSAValue] = dict(zip(args, entry.args))
    for v in captured:
        if _sinkable(v):
            c = v.owner.clone()  # type: ignore[union-attr]
            b.insert(c)
            remap[v] = c.results[0]
    body = launch.body.block
    for i, arg in enumerate(body.args):
        if arg.uses:
            id_op = _ID_OPS[i // 3](gpu.DimensionAttr(gpu.DimensionEnum("xyz"[i % 3])))
            b.insert(id_op)
            remap[arg] = id_op.results[0]
    for op in list(body.ops):
        if isinstance(op, gpu.TerminatorOp):
            continue
        op.detach()
        b.insert(op)
    for op in entry.walk():
        if any(v in remap for v in op.operands):
            op.operands = [remap.get(v, v) for v in op.operands]
    b.insert(gpu.ReturnOp([]))
    kernels.body.block.add_op(kernel)
    ref = SymbolRefAttr(kernels.sym_name.data, [name])
    call = gpu.LaunchFuncOp(
        ref,
        [launch.gridSizeX, launch.gridSizeY, launch.gridSizeZ],
        [launch.blockSizeX, launch.blockSizeY, launch.blockSizeZ],
        kernelOperands=args,
    )
    Builder(InsertPoint.before(launch)).insert(call)
    launch.detach()
    launch.erase()
    return call


@dataclass(frozen=True)
class GpuKernelOutliningPass(ModulePass):
    """Outline every `gpu.launch` of every host function (see the module doc)."""

    name = "gpu-kernel-outlining"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in [f for f in op.body.block.ops if isinstance(f, func.FuncOp)]:
            launches = [o for o in fn.walk() if isinstance(o, gpu.LaunchOp)]
            if not launches:
                continue
            module_name = f"{fn.sym_name.data}_kernels"
            kernels = gpu.ModuleOp(SymbolRefAttr(module_name).root_reference, Region(Block()))
            op.body.block.insert_op_after(kernels, fn)
            for n, launch in enumerate(launches):
                outline(launch, kernels, f"{fn.sym_name.data}_kernel_{n}")
            op.attributes["gpu.container_module"] = UnitAttr()


__all__ = ["GpuKernelOutliningPass", "captured_values", "outline"]

