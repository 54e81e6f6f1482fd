"""The whole GPU lowering as one call (what the runtime and the tests use)."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from pullback.lowering.gpu import GPU_PASSES


def lower_to_gpu(module: ModuleOp, entry: str = "main") -> ModuleOp:
    """Lower a `pd` program (backward regions filled) in place: `convert-pd-to-linalg`
    (the CPU path's), then every pass of `GPU_PASSES`.  The result holds the host
    function `@entry` (allocations and `gpu.launch_func`s) and its `gpu.module`.

    Raises the CPU lowering's `LoweringError` (naming the op) for ops it cannot
    lower, and `GpuLoweringError` for constructs the GPU passes cannot map.
    """
    from pullback.lowering.convert_pd_to_linalg import ConvertPdToLinalgPass

    ctx = Context(allow_unregistered=True)
    ConvertPdToLinalgPass(entry=entry).apply(ctx, module)
    for factory in GPU_PASSES.values():
        factory()().apply(ctx, module)
    return module


__all__ = ["lower_to_gpu"]
