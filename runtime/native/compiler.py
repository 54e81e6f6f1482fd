"""Compiling a `pd` program to native code: the orchestration of one compile.

`compile_program(module, fetches)` (no in-memory caching here: `native/backend.py`):

1. *Key*: the program's printed IR, its fetch positions, the compile options
   (`native/settings.py`) and the engine's fingerprint name its entry in the
   persistent disk cache (`native/disk_cache.py`); a hit skips step 2.
2. *Lower and emit*: `convert-pd-to-linalg` (`lowering/convert_pd_to_linalg.py`)
   builds the entry function and its ABI, `lowering/pipeline.py` lowers it to loops
   (outlined and deduplicated segments, parallel loops), translates it straight to
   LLVM IR (the CPU emitter, `lowering/llvm/`) and streams its functions to LLVM, which optimizes and emits them
   on several threads (`native/jit.py`, `native/llvm_chunks.py`).  The object code,
   ABI and memory report are stored in the disk cache.
3. *Link*: the object files go into the process's engine (`Jit.load`), and the entry
   point becomes a `CompiledProgram` (`native/program.py`).

Ops the pipeline cannot lower raise `NotCompilable` (naming the op).  A compile
longer than `NOTICE_AFTER_S` says so on stderr (silenced by
`PULLBACK_COMPILE_NOTICE=0` or `paddle.set_flags({'FLAGS_pullback_compile_notice':
False})`); `PULLBACK_COMPILE_TIMES=1` prints every compile's phase times.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, i32
from xdsl.ir import SSAValue

from pullback.lowering import fusion
from pullback.lowering.abi import PACKED_PREFIX, LoweringError, Program, abi_of, output_values
from pullback.lowering.convert_pd_to_linalg import build_entry, declare_callees
from pullback.lowering.distributed import COLLECTIVE_ABI
from pullback.lowering.lowerer import fusion_plan
from pullback.lowering.memory import MemoryReport, analyze_function
from pullback.lowering.lowerer.base import POLL
from pullback.lowering.phase_times import PhaseTimes
from pullback.passes.gc_pause import cyclic_gc_paused
from pullback.runtime.communicator import NATIVE_SYMBOL
from pullback.runtime.interrupts import surfaced_interrupts
from pullback.runtime.native import bf16_gemm, constants, disk_cache, llvm_chunks, settings
from pullback.runtime.native.jit import Jit
from pullback.runtime.native.program import CompiledProgram


class NotCompilable(RuntimeError):
    """The program uses an op the compiled backend cannot lower (message names it)."""


NOTICE_AFTER_S = 1.0
"""A compile still running after this many seconds says so on stderr (what is being
compiled), and again when it is done (the time it took)."""


@contextlib.contextmanager
def _announced(what: str, times: PhaseTimes, notice_wanted: bool = True) -> Iterator[None]:
    """Run the body (a compile); if it takes more than `NOTICE_AFTER_S`, tell the user
    on stderr while it runs and when it ends, so nobody waits in silence (unless
    `notice_wanted` is False: nobody waits for a background compile)."""
    shown = threading.Event()

    def notice() -> None:
        if not notice_wanted or not settings.compile_notice_enabled():
            return
        shown.set()
        print(f"pullback: compiling {what}", file=sys.stderr, flush=True)

    timer = threading.Timer(NOTICE_AFTER_S, notice)
    timer.daemon = True
    t = time.perf_counter()
    timer.start()
    ok = False
    try:
        yield
        ok = True
    finally:
        timer.cancel()
        timer.join()
        elapsed = time.perf_counter() - t
        verbose = settings.times_requested()
        if shown.is_set() or verbose:
            done = "compiled" if ok else "failed to compile"
            print(f"pullback: {done} {what} in {elapsed:.2f} s", file=sys.stderr, flush=True)
        if verbose:
            print(times.format(), file=sys.stderr, flush=True)


def _fetch_name(v: SSAValue) -> str | None:
    """A fetched value's Paddle variable name (`fc_0.b_0`, not the SSA hint `fc_0.b`)."""
    from pullback.dialects.pd import value_name

    return value_name(v) or v.name_hint


def _describe(module: ModuleOp, fetches: Sequence[SSAValue]) -> str:
    """`a program of 412 ops fetching mean_0.tmp_0`: how a compile names its program
    (by Paddle's variable names; unnamed values are counted, never shown as `?`)."""
    n = sum(1 for _ in module.walk()) - 1
    names = [m for m in (_fetch_name(v) for v in fetches) if m]
    shown = names[:3]
    rest = len(fetches) - len(shown)
    if not fetches:
        return f"a program of {n} ops fetching nothing"
    if not shown:
        return f"a program of {n} ops fetching {len(fetches)} value{'s' if len(fetches) > 1 else ''}"
    more = f" and {rest} more" if rest else ""
    return f"a program of {n} ops fetching {', '.join(shown)}{more}"


def _translator() -> str:
    """The CPU emitter's version (part of the disk-cache key)."""
    from pullback.lowering.llvm.cpu import TRANSLATOR_VERSION

    return f"direct-v{TRANSLATOR_VERSION}"


def _bind_collectives(jit: Jit, module: ModuleOp) -> None:
    """Native collectives (lowering/distributed.py) call back into the communicator:
    bind that callback, and refuse (NotCompilable) a program built for another job
    size."""
    from pullback.lowering.distributed import job_size_mismatch
    from pullback.runtime.communicator import DistributedError, bind_native_collectives, world

    try:
        bind_native_collectives(jit.llvm)
        # Native collectives trust their buffer sizes: a program built for
        # another job size runs on the interpreter, which reports it.
        why = job_size_mismatch(module.walk(), world().size)
        if why is not None:
            raise DistributedError(why)
    except DistributedError as e:
        raise NotCompilable(str(e)) from None


_ABI_KEYS = frozenset({"feeds", "params", "outputs", "dims", "fetches"})


def _entry_of(meta: dict[str, Any], objects: list[bytes], symbol: str) -> dict[str, Any]:
    """A disk-cache entry's content as `_lower_and_emit` returns it; ValueError if its
    JSON is not of that shape (the entry is then dropped and the program compiled)."""
    abi = meta.get("abi")
    if not isinstance(abi, dict) or not _ABI_KEYS <= abi.keys():
        raise ValueError("its ABI is incomplete")
    if meta.get("symbol") != symbol:
        raise ValueError(f"its entry point is {meta.get('symbol')!r}, not {symbol!r}")
    if not objects:
        raise ValueError("it has no object code")
    named = meta.get("constants", [])
    if not isinstance(named, list) or not all(
        isinstance(c, list) and len(c) == 2 and isinstance(c[0], str) and isinstance(c[1], int) for c in named
    ):
        raise ValueError("its list of constants is malformed")
    return {"abi": abi, "memory": MemoryReport.from_json(meta.get("memory")), "objects": objects,
            "symbol": symbol, "collectives": bool(meta.get("collectives")),
            "constants": [(name, pos) for name, pos in named]}


def program_digest(text: str, positions: Any) -> str:
    """The digest of a program (its printed IR and fetch positions) a disk-cache entry
    records and `disk_cache.load` checks."""
    return hashlib.sha256(f"{text}\n{positions!r}".encode()).hexdigest()


def compile_program(
    module: ModuleOp,
    fetches: Sequence[SSAValue],
    blas: bool | None = None,
    *,
    outline: bool | None = None,
    unroll_threshold: int | None = None,
    full_unroll_max: int | None = None,
    text: str | None = None,
    dedupe: bool | None = None,
    threads: bool | None = None,
    min_chunk_work: int | None = None,
    llvm_threads: int | None = None,
    split_llvm: bool = True,
    background: bool = False,
) -> CompiledProgram:
    """Lower, optimize and JIT `module` for `fetches`, or load its object code from the
    disk cache (`native/disk_cache.py`); no in-memory caching here.  `outline`,
    `dedupe`, `unroll_threshold` and `full_unroll_max` default to
    `settings`' `OUTLINE_SEGMENTS`, `DEDUPE_SEGMENTS`, `LOOP_UNROLL_THRESHOLD`
    and `FULL_UNROLL_MAX_COUNT`; `text` is `str(module)` when the caller
    has printed it already (printing a ResNet takes most of a cache hit); `threads`
    (default `PARALLEL_LOOPS`): split large loops over the thread pool, in chunks of at
    least `min_chunk_work` (default `PULLBACK_PARALLEL_MIN_WORK`, else
    `parallelize_loops.MIN_CHUNK_WORK`); `llvm_threads`: LLVM's threads (default
    `compile_threads()`; the object code does not depend on it); `split_llvm=False`:
    the module optimized and emitted whole, on one thread (for comparison);
    `background`: nobody waits for this compile (eager mode's native kernels), so a
    long one prints no notice."""
    t0 = time.perf_counter()
    times = PhaseTimes()
    jit = Jit.get()
    use_blas = jit.blas if blas is None else blas and jit.blas
    outline = settings.OUTLINE_SEGMENTS if outline is None else outline
    unroll = settings.LOOP_UNROLL_THRESHOLD if unroll_threshold is None else unroll_threshold
    full = settings.FULL_UNROLL_MAX_COUNT if full_unroll_max is None else full_unroll_max
    route = _translator()
    dedupe = settings.DEDUPE_SEGMENTS if dedupe is None else dedupe
    threads = settings.PARALLEL_LOOPS if threads is None else threads
    work = settings.min_chunk_work() if min_chunk_work is None else min_chunk_work
    # (The fusion settings can be changed to compare: the code differs.)
    options = (f"blas={use_blas} outline={outline} dedupe={dedupe} unroll={unroll},{full} "
               f"slp={settings.SLP_VECTORIZE} translate={route} mofusion={fusion.ENABLED} budget={fusion_plan.RECOMPUTE_BUDGET} "
               f"threads={threads},{work} split={split_llvm} collectives=v{COLLECTIVE_ABI} "
               f"bf16gemm={use_blas and bf16_gemm.enabled()}")
    # A Ctrl-C whose KeyboardInterrupt an llvmlite finalizer swallowed is raised
    # when the compile ends (nothing of it is registered yet: `backend.py`
    # remembers a program only once this returns).
    with surfaced_interrupts("a compile"), _announced(_describe(module, fetches), times, notice_wanted=not background):
        with times.phase("key"):
            text = str(module) if text is None else text
            positions = value_positions(module, fetches)
            key = disk_cache.key(text, repr(positions), options, jit.fingerprint())
            digest = program_digest(text, positions)
        symbol = PACKED_PREFIX + f"pb_{key[:24]}"
        with times.phase("disk-cache-load"):
            entry = disk_cache.load(key, digest, lambda e: _entry_of(e.meta, e.objects, symbol))
        stored = entry is not None
        if entry is None:
            with cyclic_gc_paused():
                entry = _lower_and_emit(
                    jit, module, fetches, f"pb_{key[:24]}", use_blas, outline, (unroll, full), times, dedupe,
                    work if threads else None, llvm_threads, split_llvm,
                )
            with times.phase("disk-cache-store"):
                meta = {"abi": entry["abi"], "memory": entry["memory"].to_json(), "symbol": entry["symbol"],
                        "collectives": entry["collectives"], "constants": [list(c) for c in entry["constants"]]}
                stored = disk_cache.store(key, digest, disk_cache.Entry(meta, entry["objects"]))
        elif entry["collectives"]:
            _bind_collectives(jit, module)
        # A linked entry's code stays linked: the guard is for its first link only.
        with disk_cache.trial(key) if stored and entry["symbol"] not in jit.loaded else contextlib.nullcontext():
            native, addr = jit.load(entry["objects"], entry["symbol"], times)
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(addr)
    prog = Program.of(module, fetches, use_fetch_ops=False)
    abi = entry["abi"]
    try:
        data = constants.arrays(module, entry["constants"])
    except ValueError as e:  # (an entry passing every check of disk_cache.load names the same ops)
        raise RuntimeError(f"compiled backend: {e}") from None
    return CompiledProgram(
        prog, output_values(prog, abi, fetches), abi, fn, time.perf_counter() - t0, native, entry["memory"], times,
        first_call=key if stored else None, constants=data, collectives=entry["collectives"], key=key,
        # A rank that skipped a collective would leave the others waiting in it.
        interruptible=not entry["collectives"],
    )


def _lower_and_emit(
    jit: Jit,
    module: ModuleOp,
    fetches: Sequence[SSAValue],
    entry: str,
    use_blas: bool,
    outline: bool,
    unroll: tuple[int, int],
    times: PhaseTimes,
    dedupe: bool = True,
    threads: int | None = None,
    llvm_threads: int | None = None,
    split_llvm: bool = True,
) -> dict[str, Any]:
    """The compile proper: `pd` -> linalg -> loops -> LLVM IR (the CPU emitter) ->
    object code; `threads`: the
    work per chunk of `parallelize-loops` (None: not run); `llvm_threads` and
    `split_llvm`: `Jit.emit`'s `threads` and `split`.  Returns the disk cache's
    entry (object files, ABI, memory report)."""
    from pullback.lowering.pipeline import run_passes, translate, translate_passes, translate_streamed

    named: list[tuple[str, int]] = []
    try:
        with times.phase("convert-pd-to-linalg"):
            positions = constants.hoistable(module)
            if positions:  # large constants become inputs (native/constants.py)
                module, fetches, named = constants.hoist(module, fetches, positions)
            fn_op, _ = build_entry(
                module, fetches, entry=entry, only_given_fetches=True, bf16_gemm=use_blas and bf16_gemm.enabled()
            )
    except LoweringError as e:
        raise NotCompilable(str(e)) from None
    lowered = ModuleOp([fn_op])
    declare_callees(lowered)
    # Segment calls poll for Ctrl-C (`outline-segments`; `native/interrupts.py`);
    # `while` loops declared it already when there are some.
    if not any(isinstance(o, func.FuncOp) and o.sym_name.data == POLL for o in lowered.body.block.ops):
        lowered.body.block.add_op(func.FuncOp.external(POLL, [], [i32]))
    collectives = any(
        getattr(o, "sym_name", None) and o.sym_name.data == NATIVE_SYMBOL for o in lowered.body.block.ops
    )
    if collectives:
        _bind_collectives(jit, module)
    abi = abi_of(lowered, entry)
    memory = analyze_function(fn_op)
    abi["dim_names"] = [
        a.name_hint or f"arg{a.index}" for a in fn_op.body.block.args[: len(abi["dims"])]
    ]
    if split_llvm:
        # LLVM compiles each function while the next ones are still being lowered.
        try:
            with jit.compiling(times, *unroll, threads=llvm_threads) as compiler:
                writer = llvm_chunks.ChunkWriter(compiler.submit)
                translate_streamed(lowered, writer.add, blas=use_blas, outline=outline, dedupe=dedupe,
                                   threads=threads, times=times)
                writer.close()
        except LoweringError as e:
            raise NotCompilable(str(e)) from None
        objs = compiler.objects
    else:
        run_passes(lowered, translate_passes(blas=use_blas, outline=outline, dedupe=dedupe, threads=threads), times=times)
        try:
            with times.phase("translate-to-llvmlite"):
                ir = str(translate(lowered))
        except LoweringError as e:
            raise NotCompilable(str(e)) from None
        objs = jit.emit(ir, times, *unroll, threads=llvm_threads, split=split_llvm)
    return {"abi": abi, "memory": memory, "objects": objs, "symbol": PACKED_PREFIX + entry,
            "collectives": collectives, "constants": named}


def value_positions(module: ModuleOp, values: Sequence[SSAValue]) -> tuple[tuple[int, int], ...]:
    """Each value as (index of its defining op in a walk, result index)."""
    index = {id(op): i for i, op in enumerate(module.walk())}
    out = []
    for v in values:
        owner = v.owner
        out.append((index.get(id(owner), -1), getattr(v, "index", 0)))
    return tuple(out)


__all__ = ["NOTICE_AFTER_S", "NotCompilable", "compile_program", "program_digest", "value_positions"]
