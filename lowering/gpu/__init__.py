"""The GPU path: loop nests from `convert-pd-to-linalg` -> CUDA kernels as PTX.

Passes (MLIR's names where MLIR has the pass), in pipeline order:

    convert-pd-to-linalg              (shared with the CPU path, lowering/)
    [gpu-gemm-to-library]             products -> host cuBLAS calls (when there is cuBLAS)
    gpu-tile-gemm                     gemm generics -> shared-memory tiles
    convert-linalg-to-parallel-loops  generics -> scf.parallel / scf.for / atomics
    gpu-map-parallel-loops            (xDSL's) loops -> blocks / threads
    convert-parallel-loops-to-gpu     mapped loops -> gpu.launch (grid-stride or tiled)
    gpu-kernel-outlining              gpu.launch -> gpu.module kernels + gpu.launch_func
    convert-gpu-to-nvvm               sreg intrinsics, barriers, libdevice, kernel marks

The named pipeline `lower-to-ptx` (`pipeline.LowerToPtxPass`) runs all of them;
`GPU_PIPELINE` spells the passes after `convert-pd-to-linalg`; the `ptx` target
(`GPU_TARGETS`) prints the PTX of the resulting `gpu.module`s:

    pullback-opt prog.mlir -p autodiff,lower-to-ptx -t ptx

See docs/gpu.md for the design and what is shared with the CPU path.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass
from xdsl.utils.target import Target


def _tile_gemm() -> type[ModulePass]:
    from pullback.lowering.gpu.loops import GpuTileGemmPass

    return GpuTileGemmPass


def _linalg_to_loops() -> type[ModulePass]:
    from pullback.lowering.gpu.loops import ConvertLinalgToParallelLoopsPass

    return ConvertLinalgToParallelLoopsPass


def _map_loops() -> type[ModulePass]:
    from xdsl.transforms.gpu_map_parallel_loops import GpuMapParallelLoopsPass

    return GpuMapParallelLoopsPass


def _loops_to_gpu() -> type[ModulePass]:
    from pullback.lowering.gpu.parallel_to_gpu import ConvertParallelLoopsToGpuPass

    return ConvertParallelLoopsToGpuPass


def _outlining() -> type[ModulePass]:
    from pullback.lowering.gpu.outlining import GpuKernelOutliningPass

    return GpuKernelOutliningPass


def _to_nvvm() -> type[ModulePass]:
    from pullback.lowering.gpu.nvvm import ConvertGpuToNvvmPass

    return ConvertGpuToNvvmPass


GPU_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "gpu-tile-gemm": _tile_gemm,
    "convert-linalg-to-parallel-loops": _linalg_to_loops,
    "gpu-map-parallel-loops": _map_loops,
    "convert-parallel-loops-to-gpu": _loops_to_gpu,
    "gpu-kernel-outlining": _outlining,
    "convert-gpu-to-nvvm": _to_nvvm,
}
"""Pass factories by command-line name.  `gpu-map-parallel-loops` is xDSL's own
(listed so the pipeline is complete; drivers that already know it keep theirs)."""

GPU_PIPELINE = ",".join(GPU_PASSES)
"""Everything after `convert-pd-to-linalg`, in order."""


def _gemm_to_library() -> type[ModulePass]:
    from pullback.lowering.gpu.library import GpuGemmToLibraryPass

    return GpuGemmToLibraryPass


def _lower_to_ptx() -> type[ModulePass]:
    from pullback.lowering.gpu.pipeline import LowerToPtxPass

    return LowerToPtxPass


PIPELINES = ("lower-to-ptx",)
"""Named pipelines (in `PASSES`, listed apart in `--help`)."""


def _ptx_target() -> type[Target]:
    from pullback.lowering.llvm.nvptx import PtxTarget

    return PtxTarget


GPU_TARGETS: dict[str, Callable[[], type[Target]]] = {"ptx": _ptx_target}
"""xDSL targets for `pullback-opt -t`: `ptx` prints the PTX of each gpu.module
(`ptx{llvm=true}`: the LLVM IR before optimization)."""

__all__ = ["GPU_PASSES", "GPU_PIPELINE", "GPU_TARGETS"]

PASSES = {**GPU_PASSES, "gpu-gemm-to-library": _gemm_to_library, "lower-to-ptx": _lower_to_ptx}
"""Read by `pullback.universe` (every pass registry is called `PASSES`): the
passes, `gpu-gemm-to-library` (products as host cuBLAS calls: run before
`gpu-tile-gemm` when the runtime has cuBLAS, `library.py`) and the named pipeline
`lower-to-ptx`."""
TARGETS = GPU_TARGETS
"""Alias read by `pullback.universe` (every target registry is called `TARGETS`)."""
