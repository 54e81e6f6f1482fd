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
        """Run every pass of the pipeline on `op` (after `reject_racy_combines`).
        Control flow (`pd.if`, `pd.while`, their stacks) stays on the host: the CPU
        lowering's `scf.if`/`scf.while` around the launches, their predicates read
        from device memory by the GPU runtime (`runtime/gpu/backend.py:HostRun`)."""
        reject_racy_combines(op)
        for p in self.passes():
            p.apply(ctx, op)


def reject_racy_combines(module: ModuleOp) -> None:
    """Raise `LoweringError` naming a `pd.send_recv` or `pd.segment_pool` the GPU
    cannot run.

    Their `max`/`min` combine each message into its row with a load, max and store
    (`lowering/geometric.py`): correct on the CPU, whose loop runs sequentially, a
    race between GPU threads (the emitters have atomic adds only).  And
    `pd.segment_pool`'s row count is read from its ids by the host function, which
    on the GPU would read device memory."""
    from pullback.dialects import pd
    from pullback.lowering.abi import LoweringError

    for inner in module.walk():
        if isinstance(inner, pd.SegmentPoolOp):
            raise LoweringError(
                f"cannot lower '{inner.name}' to the GPU: its number of rows is read from the "
                "ids by host code; run this program on CPUPlace"
            )
        if isinstance(inner, pd.SendRecvOp) and inner.prop("reduce_op") in ("max", "min"):
            raise LoweringError(
                f"cannot lower '{inner.name}' with reduce_op {inner.prop('reduce_op')!r} to the GPU: "
                "its combine is not atomic there; run this program on CPUPlace"
            )


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
