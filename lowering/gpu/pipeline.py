"""The whole GPU lowering as one pass (`lower-to-ptx`) and one call (`lower_to_gpu`,
what the runtime and the tests use)."""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from pullback.lowering.gpu import GPU_PASSES


@dataclass(frozen=True)
class LowerToPtxPass(ModulePass):
    """The GPU pipeline: a `pd` program (backward regions filled) to a host function
    launching CUDA kernels and their `gpu.module`; `-t ptx` prints the kernels' PTX."""

    name = "lower-to-ptx"

    entry: str = "main"
    """The name of the host function."""

    def passes(self) -> list[ModulePass]:
        """The passes this pipeline runs, in order: `convert-pd-to-linalg` (the CPU
        path's), then every pass of `GPU_PASSES`."""
        from pullback.lowering.convert_pd_to_linalg import ConvertPdToLinalgPass

        return [ConvertPdToLinalgPass(entry=self.entry), *(f()() for f in GPU_PASSES.values())]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        """Run every pass of the pipeline on `op`.  Control flow (`pd.if`,
        `pd.while`, their stacks) stays on the host: the CPU lowering's
        `scf.if`/`scf.while` around the launches, their predicates read from device
        memory by the GPU runtime (`runtime/gpu/backend.py:HostRun`)."""
        for p in self.passes():
            p.apply(ctx, op)


def lower_to_gpu(module: ModuleOp, entry: str = "main") -> ModuleOp:
    """Lower a `pd` program (backward regions filled) in place with `lower-to-ptx`.
    The result holds the host function `@entry` (allocations and
    `gpu.launch_func`s) and its `gpu.module`.

    Raises the CPU lowering's `LoweringError` (naming the op) for ops it cannot
    lower, and `GpuLoweringError` for constructs the GPU passes cannot map.
    """
    LowerToPtxPass(entry=entry).apply(Context(allow_unregistered=True), module)
    return module


__all__ = ["LowerToPtxPass", "lower_to_gpu"]
