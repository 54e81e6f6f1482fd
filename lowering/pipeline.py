"""The CPU lowering pipeline, from a `pd` program to LLVM IR.

The compiled backend runs `convert-pd-to-linalg` and `translate_passes`, then
`translate` (`translate-to-llvmlite`: one walk to llvmlite IR); `pullback-opt -p
lower-to-loops -t llvm` (`LowerToLoopsPass`) does the same.  The xDSL route,
`cpu_passes` (`-p lower-to-llvm -t llvm`, `LowerToLLVMPass`; `CPU_PIPELINE` spells
it for `-p`), lowers to the `llvm` dialect with `convert-*-to-llvm` passes and prints
it with xDSL's converter (`to_llvmlite`); `PULLBACK_TRANSLATE=xdsl` makes the
compiled backend use it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

import llvmlite.ir as lir
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.transforms.convert_linalg_to_loops import ConvertLinalgToLoopsPass
from xdsl.transforms.convert_scf_to_cf import ConvertScfToCf
from xdsl.transforms.lower_affine import LowerAffinePass
from xdsl.transforms.reconcile_unrealized_casts import ReconcileUnrealizedCastsPass

from pullback.lowering.convert_arith_to_llvm import ConvertArithToLLVMPass
from pullback.lowering.convert_cf_to_llvm import ConvertCfToLLVMPass
from pullback.lowering.convert_func_to_llvm import ConvertFuncToLLVMPass
from pullback.lowering.convert_linalg_to_blas import ConvertLinalgToBlasPass
from pullback.lowering.convert_math_to_llvm import ConvertMathToLLVMPass
from pullback.lowering.convert_parallel_loops_to_sequential import ConvertParallelLoopsToSequentialPass
from pullback.lowering.convert_pd_to_linalg import ConvertPdToLinalgPass
from pullback.lowering.convert_scf_while_to_cf import ConvertScfWhileToCfPass
from pullback.lowering.finalize_memref_to_llvm import FinalizeMemRefToLLVMPass
from pullback.lowering.math_polynomial_approximation import MathPolynomialApproximationPass
from pullback.lowering.outline_segments import SEGMENT_INFIX, OutlineSegmentsPass, outlined
from pullback.lowering.parallelize_loops import PAR_INFIX, ParallelizeLoopsPass, lower_forks, lower_forks_of
from pullback.lowering.phase_times import PhaseTimes


def translate_passes(
    blas: bool = True, outline: bool = False, dedupe: bool = True, threads: int | None = None
) -> list[ModulePass]:
    """What runs before `translate-to-llvmlite` (`translate`), which takes linalg,
    `scf` (parallel loops included), `memref`, `arith` and `math` itself: with
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


def loop_passes(
    blas: bool = True, outline: bool = False, dedupe: bool = True, threads: int | None = None
) -> list[ModulePass]:
    """From linalg on memrefs to LLVM-dialect loops (the xDSL route, which
    `to_llvmlite` converts: `PULLBACK_TRANSLATE=xdsl`, `-p lower-to-llvm`)."""
    return [
        *([OutlineSegmentsPass(dedupe=dedupe)] if outline else []),
        *([ConvertLinalgToBlasPass()] if blas else []),
        *([ParallelizeLoopsPass(threads)] if threads is not None else []),
        ConvertLinalgToLoopsPass(),
        ConvertParallelLoopsToSequentialPass(),
        LowerAffinePass(),
        MathPolynomialApproximationPass(),
        ConvertScfWhileToCfPass(),
        ConvertScfToCf(),
        FinalizeMemRefToLLVMPass(),
        ConvertMathToLLVMPass(),
        ConvertArithToLLVMPass(),
        ConvertCfToLLVMPass(),
        ConvertFuncToLLVMPass(),
        ReconcileUnrealizedCastsPass(),
    ]


def cpu_passes(blas: bool = True) -> list[ModulePass]:
    """The whole pipeline, `pd` to the `llvm` dialect."""
    return [ConvertPdToLinalgPass(), *loop_passes(blas)]


CPU_PIPELINE = ",".join(p.name for p in cpu_passes())
"""`pullback-opt -p` spelling of the CPU pipeline."""


@dataclass(frozen=True)
class LowerToLLVMPass(ModulePass):
    """The CPU pipeline: a `pd` program (backward regions filled) to the `llvm`
    dialect; `-t llvm` prints it as LLVM IR."""

    name = "lower-to-llvm"

    blas: bool = True
    """Matrix products as calls to the BLAS kernels (`convert-linalg-to-blas`)."""

    def passes(self) -> list[ModulePass]:
        """The passes this pipeline runs, in order."""
        return cpu_passes(self.blas)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        """Run every pass of the pipeline on `op`."""
        run_passes(op, self.passes(), ctx)


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
    (`lowering/translate_to_llvmlite.py`: one walk, no `llvm`-dialect detour)."""
    from pullback.lowering.translate_to_llvmlite import translate_module

    out = translate_module(module)
    lower_forks(out)
    return out


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
    (`outlined`), then the rest; every function through `convert-linalg-to-blas`,
    with `threads` `parallelize-loops`, `math-polynomial-approximation` and the
    translation, then handed on with the forks it calls and their trampolines
    (`lower_forks_of`) as `written(module, group)`, so that LLVM compiles it while
    the next ones are lowered (`runtime/llvm_chunks.py`, `ChunkWriter`).  The passes
    touch only the function they run on (and add declarations, or chunk functions
    next to it), so the IR is what the module-wide passes make (deduplication
    compares segments as they were made: `outline_segments.structure`).  Times add
    up per pass in `times`."""
    from pullback.lowering.convert_linalg_to_blas import declare_gemms, gemms_to_calls
    from pullback.lowering.math_polynomial_approximation import expand_f32_math
    from pullback.lowering.parallelize_loops import FunctionParallelizer
    from pullback.lowering.translate_to_llvmlite import Translator

    times = times or PhaseTimes()
    tr = Translator()
    split = FunctionParallelizer(module, threads) if threads is not None else None
    used: set[str] = set()
    with times.adding("translate-to-llvmlite"):
        tr.declare_module(module)  # the entries and kernels; each function adds its own below
    for fn in _timed(_functions(module, outline, dedupe), times, OutlineSegmentsPass.name):
        made: list[func.FuncOp] = []
        new_kernels = False
        if blas:
            with times.adding(ConvertLinalgToBlasPass.name):
                before = len(used)
                gemms_to_calls(fn, used)
                if len(used) != before:
                    declare_gemms(module, used)
                    new_kernels = True
        if split is not None:
            with times.adding(ParallelizeLoopsPass.name):
                made = split(fn)
        with times.adding(MathPolynomialApproximationPass.name):
            for f in [fn, *made]:
                expand_f32_math(f)
        with times.adding("translate-to-llvmlite"):
            # This function, its chunk functions and their forks (each right after
            # its chunk function), and new kernels: only those, not the whole module.
            if new_kernels:
                tr.declare_module(module)
            else:
                tr.declare_ops([fn, *(o for f in made for o in (f, f.next_op) if o is not None)])
            for f in [*made, fn]:
                group = tr.written_function(f)
                written(tr.module, [*group, *lower_forks_of(tr.module, f.sym_name.data)])
    if lower_forks(tr.module):  # each fork is its caller's (`lower_forks_of`): none is left
        raise RuntimeError("translate_streamed: a fork that no translated function calls")
    return tr.module


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


def to_llvmlite(module: ModuleOp) -> lir.Module:
    """Convert an `llvm`-dialect module to llvmlite IR (xDSL's converter); outlined
    segments are marked `noinline` (inlined back, they would rebuild the one huge
    function that outlining is there to avoid), and the thread pool's forks are
    defined (`parallelize_loops.lower_forks`)."""
    from xdsl.backend.llvm.convert import convert_module

    out = convert_module(module, fallback_target_triple=None)
    for fn in out.functions:
        if SEGMENT_INFIX in fn.name and not fn.is_declaration:
            fn.attributes.add("noinline")
    lower_forks(out)
    return out
