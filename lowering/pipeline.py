"""The CPU lowering pipeline, from a `pd` program to LLVM IR.

The compiled backend runs `convert-pd-to-linalg`, then the passes of
`translate_passes` (their order is written there only), then the CPU emitter
(`lowering/llvm/cpu.py`: one walk to llvmlite IR).  `translate_streamed` runs the
same passes one function at a time, so that LLVM compiles each while the next is
lowered.  `pullback-opt -p lower-to-loops -t llvm` (`LowerToLoopsPass`, the named
pipeline) does what the compiled backend does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import llvmlite.ir as lir
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from pullback.lowering.convert_linalg_to_blas import ConvertLinalgToBlasPass
from pullback.lowering.convert_pd_to_linalg import ConvertPdToLinalgPass
from pullback.lowering.llvm.cpu import CpuEmitter, translate_module
from pullback.lowering.math_polynomial_approximation import MathPolynomialApproximationPass
from pullback.lowering.outline_segments import OutlineSegmentsPass, outlined
from pullback.lowering.parallelize_loops import PAR_INFIX, ParallelizeLoopsPass, lower_forks, lower_forks_of
from pullback.lowering.phase_times import PhaseTimes


@runtime_checkable
class FunctionPass(Protocol):
    """A pass of `translate_passes` that can also run one function at a time."""

    name: str

    def per_function(self, module: ModuleOp) -> Callable[[func.FuncOp], list[Operation]]:
        """A runner for `module`: each call transforms one function and returns the
        module-level ops it added (functions to translate, declarations)."""
        ...


def translate_passes(
    blas: bool = True, outline: bool = False, dedupe: bool = True, threads: int | None = None
) -> list[ModulePass]:
    """The CPU pipeline after `convert-pd-to-linalg`, in order: what runs before the
    emitter (`translate`), which takes linalg, `scf` (parallel loops included),
    `memref`, `arith` and `math` itself.  This is the one place the order is
    written (`LowerToLoopsPass` and `translate_streamed` iterate it): with
    `outline`, the entry's loops first move into functions of their own
    (`outline-segments`: what the compiled backend runs, so that compile time stays
    linear in the program; with `dedupe`, structurally equal segments are one
    function); with `threads` (a work per chunk), large loops run on the thread
    pool (`parallelize-loops`)."""
    return [
        *([OutlineSegmentsPass(dedupe=dedupe)] if outline else []),
        *([ConvertLinalgToBlasPass()] if blas else []),
        *([ParallelizeLoopsPass(threads)] if threads is not None else []),
        MathPolynomialApproximationPass(),
    ]


@dataclass(frozen=True)
class LowerToLoopsPass(ModulePass):
    """The compiled backend's pipeline: a `pd` program to the loop level that
    `translate-to-llvmlite` takes (`-t llvm` prints it as LLVM IR)."""

    name = "lower-to-loops"

    blas: bool = True
    """Matrix products as calls to the BLAS kernels (`convert-linalg-to-blas`)."""

    outline: bool = False
    """Outline the entry's loops into functions (`outline-segments`, deduplicated)."""

    def passes(self) -> list[ModulePass]:
        """The passes this pipeline runs, in order."""
        return [ConvertPdToLinalgPass(), *translate_passes(self.blas, self.outline)]

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        """Run every pass of the pipeline on `op`."""
        run_passes(op, self.passes(), ctx)


def run_passes(
    module: ModuleOp, passes: Sequence[ModulePass], ctx: Context | None = None, times: PhaseTimes | None = None
) -> None:
    """Apply passes in order (in place), timing each under its name into `times`."""
    ctx = ctx or Context(allow_unregistered=True)
    times = times or PhaseTimes()
    for p in passes:
        with times.phase(p.name):
            p.apply(ctx, module)


def translate(module: ModuleOp) -> lir.Module:
    """An llvmlite module of a module at the level `translate_passes` leaves it
    (`lowering/llvm/cpu.py`: one walk)."""
    return translate_module(module)


def translate_streamed(
    module: ModuleOp,
    written: Callable[[lir.Module, list[lir.Function]], None],
    *,
    blas: bool = True,
    outline: bool = False,
    dedupe: bool = True,
    threads: int | None = None,
    times: PhaseTimes | None = None,
) -> lir.Module:
    """`translate_passes` and `translate` run one function at a time: with
    `outline`, each segment as soon as `outline-segments` has cut it
    (`outlined`), then the rest; every function through the other passes of
    `translate_passes`, in their order (each pass's `per_function`; the functions
    a pass makes, such as `parallelize-loops`' chunk functions, go through the
    passes after it), and the translation, then handed on with the forks it calls
    and their trampolines (`lower_forks_of`) as `written(module, group)`, so that
    LLVM compiles it while the next ones are lowered (`runtime/native/llvm_chunks.py`,
    `ChunkWriter`).  The passes touch only the function they run on (and add
    declarations, or chunk functions next to it), so the IR is what the
    module-wide passes make (deduplication compares segments as they were made:
    `outline_segments.structure`).  Times add up per pass in `times`."""
    times = times or PhaseTimes()
    tr = CpuEmitter()
    steps: list[tuple[str, Callable[[func.FuncOp], list[Operation]]]] = []
    for p in translate_passes(blas, False, dedupe, threads):
        if not isinstance(p, FunctionPass):
            raise TypeError(f"translate_streamed: pass {p.name} cannot run one function at a time")
        steps.append((p.name, p.per_function(module)))
    with times.adding(TRANSLATE_PHASE):
        tr.declare_module(module)  # the entries and kernels; each function adds its own below
    for fn in _timed(_functions(module, outline, dedupe), times, OutlineSegmentsPass.name):
        group = [fn]
        added: list[Operation] = [fn]
        for name, run in steps:
            with times.adding(name):
                for f in list(group):
                    new = run(f)
                    added += new
                    group += [o for o in new if isinstance(o, func.FuncOp) and not o.is_declaration]
        with times.adding(TRANSLATE_PHASE):
            # This function, what the passes added (chunk functions, their forks,
            # kernels): only those, not the whole module.
            tr.declare_ops(added)
            for f in [*group[1:], fn]:
                made = tr.written_function(f)
                written(tr.module, [*made, *lower_forks_of(tr.module, f.sym_name.data)])
    if lower_forks(tr.module):  # each fork is its caller's (`lower_forks_of`): none is left
        raise RuntimeError("translate_streamed: a fork that no translated function calls")
    return tr.module


TRANSLATE_PHASE = "translate-to-llvmlite"
"""The phase name the emitter's time is reported under (`PhaseTimes`)."""


def _functions(module: ModuleOp, outline: bool, dedupe: bool) -> Iterator[func.FuncOp]:
    """The functions with a body that `translate_streamed` lowers, in order: with
    `outline`, each entry's segments as they are cut, then every function not yet
    given (the entries among them)."""
    given: set[func.FuncOp] = set()
    if outline:
        pass_ = OutlineSegmentsPass(dedupe=dedupe)
        for fn in [o for o in module.body.block.ops if isinstance(o, func.FuncOp)]:
            if "llvm.emit_c_interface" in fn.attributes and fn.body.blocks:
                for seg in outlined(fn, module, pass_.max_ops, dedupe):
                    given.add(seg)
                    yield seg
    for fn in [o for o in module.body.block.ops if isinstance(o, func.FuncOp)]:
        if fn.body.blocks and fn not in given and PAR_INFIX not in fn.sym_name.data:
            yield fn


def _timed(items: Iterable[func.FuncOp], times: PhaseTimes, name: str) -> Iterator[func.FuncOp]:
    """`items`, the time spent making each added to phase `name`."""
    it = iter(items)
    while True:
        with times.adding(name):
            item = next(it, None)
        if item is None:
            return
        yield item
