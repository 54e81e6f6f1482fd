"""`gpu-gemm-to-library`: matrix products as host calls to a GPU BLAS (cuBLAS).

The CPU path's `convert-linalg-to-blas` decides how a tagged contraction
(`library_call = "gemm"` or `"batch_gemm"`) maps onto CBLAS row-major `gemm` calls
(`plan_gemm`, batch loops, pointer offsets, a zero fill folded into `beta = 0`).
The GPU path reuses that rewrite unchanged: the calls it emits stay in the *host*
function, where the GPU runtime (`runtime/gpu/backend.py`) executes
`func.call @pullback_sgemm/_dgemm` with cuBLAS on device pointers, and turns a batch
loop around one call into one strided-batched call.  So the layout decision has one
home, and the GPU gets every product the CPU sends to BLAS, batched ones included.

Only float32/float64 products are rewritten (cuBLAS's S/D routines); the others,
and every product when this pass does not run (no cuBLAS: the runtime leaves it
out and says why), go to `gpu-tile-gemm` / `convert-linalg-to-parallel-loops`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import Float32Type, Float64Type, ModuleOp
from xdsl.dialects.linalg import ops as linalg
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, op_type_rewrite_pattern

from pullback.lowering.convert_linalg_to_blas import GemmToCall, declare_gemms


@dataclass
class _FloatGemmToCall(GemmToCall):
    """`GemmToCall` for float32/float64 products only (cuBLAS's S/D routines)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: linalg.GenericOp, rewriter: PatternRewriter) -> None:
        elem = op.outputs[0].type.get_element_type() if op.outputs else None  # type: ignore[attr-defined]
        if isinstance(elem, (Float32Type, Float64Type)):
            super().match_and_rewrite(op, rewriter)


@dataclass(frozen=True)
class GpuGemmToLibraryPass(ModulePass):
    """Tagged float contractions -> host `func.call`s of CBLAS-signature gemms."""

    name = "gpu-gemm-to-library"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        """Rewrite every function of `op`; declare the gemm symbols used."""
        used: set[str] = set()
        walker = PatternRewriteWalker(_FloatGemmToCall(used), apply_recursively=False)
        for region in op.regions:
            walker.rewrite_region(region)
        declare_gemms(op, used)


__all__ = ["GpuGemmToLibraryPass"]
