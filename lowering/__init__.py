"""Lowering of `pd` programs to native code: linalg, loops, LLVM IR.

`LOWERING_PASSES` and `LOWERING_TARGETS` map command-line names to (lazily imported)
pass and target classes; `pullback-opt` registers them.  The CPU pipeline the
compiled backend runs is the named pipeline `lower-to-loops` followed by the CPU
emitter (`lowering/llvm/`, `-t llvm`); docs/lowering.md describes each step.
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
    "math-polynomial-approximation": _pass("math_polynomial_approximation", "MathPolynomialApproximationPass"),
    "lower-to-loops": _pass("pipeline", "LowerToLoopsPass"),
    "memory-report": _pass("memory", "MemoryReportPass"),
    "parallelize-loops": _pass("parallelize_loops", "ParallelizeLoopsPass"),
}
"""Our passes by command-line name.  `lower-to-loops` is the named pipeline the
compiled backend runs (`pipeline.translate_passes` holds its order)."""

PIPELINES = ("lower-to-loops",)
"""Passes of `PASSES` that are named pipelines (listed apart in `--help`)."""


def _llvm_target() -> type[Target]:
    from pullback.lowering.llvm.cpu import LLVMTarget

    return LLVMTarget


LOWERING_TARGETS: dict[str, Callable[[], type[Target]]] = {"llvm": _llvm_target}
"""Output targets by `-t` name."""

__all__ = ["LOWERING_PASSES", "LOWERING_TARGETS", "PASSES", "TARGETS"]
PASSES = LOWERING_PASSES
"""The registry name the pass driver (universe.py) reads."""
TARGETS = LOWERING_TARGETS
"""The registry name the driver reads for output targets."""
