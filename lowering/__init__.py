"""Lowering of `pd` programs to native code: linalg, loops, the `llvm` dialect, LLVM IR.

`LOWERING_PASSES` and `LOWERING_TARGETS` map command-line names to (lazily imported)
pass and target classes; `pullback-opt` registers them.  The CPU pipeline the
compiled backend runs is the named pipeline `lower-to-loops` followed by the
`translate-to-llvmlite` translation (`-t llvm`); `lower-to-llvm`
(`pipeline.LowerToLLVMPass`, spelled out as `pipeline.CPU_PIPELINE`) is the xDSL
route through the `llvm` dialect; docs/lowering.md describes each step.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.passes import ModulePass
from xdsl.utils.target import Target


def _pass(module: str, cls: str) -> Callable[[], type[ModulePass]]:
    def load() -> type[ModulePass]:
        import importlib

        return getattr(importlib.import_module(f"pullback.lowering.{module}"), cls)

    return load


LOWERING_PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "convert-pd-to-linalg": _pass("convert_pd_to_linalg", "ConvertPdToLinalgPass"),
    "outline-segments": _pass("outline_segments", "OutlineSegmentsPass"),
    "convert-linalg-to-blas": _pass("convert_linalg_to_blas", "ConvertLinalgToBlasPass"),
    "convert-parallel-loops-to-sequential": _pass(
        "convert_parallel_loops_to_sequential", "ConvertParallelLoopsToSequentialPass"
    ),
    "math-polynomial-approximation": _pass("math_polynomial_approximation", "MathPolynomialApproximationPass"),
    "convert-scf-while-to-cf": _pass("convert_scf_while_to_cf", "ConvertScfWhileToCfPass"),
    "finalize-memref-to-llvm": _pass("finalize_memref_to_llvm", "FinalizeMemRefToLLVMPass"),
    "convert-math-to-llvm": _pass("convert_math_to_llvm", "ConvertMathToLLVMPass"),
    "convert-arith-to-llvm": _pass("convert_arith_to_llvm", "ConvertArithToLLVMPass"),
    "convert-cf-to-llvm": _pass("convert_cf_to_llvm", "ConvertCfToLLVMPass"),
    "convert-func-to-llvm": _pass("convert_func_to_llvm", "ConvertFuncToLLVMPass"),
    "lower-to-llvm": _pass("pipeline", "LowerToLLVMPass"),
    "lower-to-loops": _pass("pipeline", "LowerToLoopsPass"),
    "memory-report": _pass("memory", "MemoryReportPass"),
    "parallelize-loops": _pass("parallelize_loops", "ParallelizeLoopsPass"),
}
"""Our passes by command-line name (xDSL provides convert-linalg-to-loops,
convert-scf-to-cf and reconcile-unrealized-casts).  `lower-to-llvm` is the named
pipeline running all of them (`pipeline.cpu_passes`)."""

PIPELINES = ("lower-to-llvm", "lower-to-loops")
"""Passes of `PASSES` that are named pipelines (listed apart in `--help`)."""


def _llvm_target() -> type[Target]:
    from pullback.lowering.llvm_target import LLVMTarget

    return LLVMTarget


LOWERING_TARGETS: dict[str, Callable[[], type[Target]]] = {"llvm": _llvm_target}
"""Output targets by `-t` name."""

__all__ = ["LOWERING_PASSES", "LOWERING_TARGETS", "PASSES", "TARGETS"]
PASSES = LOWERING_PASSES
"""The registry name the pass driver (universe.py) reads."""
TARGETS = LOWERING_TARGETS
"""The registry name the driver reads for output targets."""
