"""Passes over the `pd` dialect, registered by their command-line names.

`dce`, `cse` and `canonicalize` are xDSL's own: `pd` ops are `Pure` where they have
no side effects, so xDSL's passes apply to them unchanged.
"""

from collections.abc import Callable

from xdsl.passes import ModulePass


def _autodiff() -> type[ModulePass]:
    from pullback.passes.autodiff import AutodiffPass

    return AutodiffPass


def _prune() -> type[ModulePass]:
    from pullback.passes.prune import PrunePass

    return PrunePass


def _data_parallel() -> type[ModulePass]:
    from pullback.passes.data_parallel import DataParallelPass

    return DataParallelPass


def _recompute() -> type[ModulePass]:
    from pullback.passes.recompute import RecomputePass

    return RecomputePass


def _amp() -> type[ModulePass]:
    from pullback.passes.amp import AutoMixedPrecisionPass

    return AutoMixedPrecisionPass


def _complex_to_real() -> type[ModulePass]:
    from pullback.passes.complex_to_real import ComplexToRealPass

    return ComplexToRealPass


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "autodiff": _autodiff,
    "prune": _prune,
    "data-parallel": _data_parallel,
    "recompute": _recompute,
    "auto-mixed-precision": _amp,
    "complex-to-real": _complex_to_real,
}
"""Our passes by command-line name (lowering passes are in `pullback.lowering`)."""
