"""The compiled CPU backend: `pd` programs run as native code built by our pipeline.

`CompiledBackend().run(module, feeds, scope, fetches)` (the executor's backend seam):

1. *Compile* once per program content, fetch list and feed dtypes/ranks: lower with
   `lowering.pipeline` (pd -> linalg, outlined and deduplicated segments, then the
   CPU emitter, `lowering/llvm/`, straight to llvmlite IR), verify,
   optimize at O3 for the host CPU with loop vectorization (not SLP: `SLP_VECTORIZE`), emit an object
   file and link it into the process's MCJIT engine.  Matrix products call numpy's
   bundled OpenBLAS, and Intel MKL for large products when it is installed
   (`runtime/blas.py`).  The object code and ABI go to the
   persistent disk cache (`runtime/compile_cache.py`), so another process running
   the same program skips all of that.  A compile longer than `NOTICE_AFTER_S`
   says so on stderr; `PULLBACK_COMPILE_TIMES=1` prints every compile's phase times.
   Compiled programs are cached per backend, least recently used first out beyond
   `cache_size` (default `DEFAULT_CACHE_SIZE`, 64 programs).
2. *Check* the feeds before any native code runs: names, dtypes, ranks and sizes
   (`lowering.shapes.plan_shapes`, cached per concrete feed shapes).  A wrong shape
   raises ValueError; it never reaches compiled code.
3. *Call* the program's packed entry point through ctypes with one array of 8-byte
   slots (sizes and buffer addresses).  Feeds are passed without copies when they
   already have the right dtype and layout; parameters are the Scope's own arrays,
   updated in place by the optimizer ops; outputs are fresh numpy arrays.  The
   generated code frees its temporaries before returning.

Ops the pipeline cannot lower raise `NotCompilable` (naming the op) at compile time;
`CompiledBackend(fallback=True)` then runs that program on the interpreter instead,
with a warning, never silently.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import sys
import threading
import time
import warnings
import weakref
from collections import OrderedDict
from collections.abc import Hashable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from pullback.dialects.pd.base import DTYPES, PdOp
from pullback.passes.gc_pause import cyclic_gc_paused
from pullback.lowering.abi import LoweringError, Program, abi_of, output_values
from pullback.lowering import core, fusion
from pullback.lowering.convert_pd_to_linalg import build_entry
from pullback.lowering.core import declare_callees
from pullback.lowering.memory import MemoryReport, Peak, analyze_function
from pullback.lowering.parallelize_loops import MIN_CHUNK_WORK
from pullback.lowering.phase_times import PhaseTimes
from pullback.lowering.shapes import ShapeError, plan_shapes
from pullback.runtime import blas, compile_cache, threadpool
from pullback.runtime.cpu_load import others_running
from pullback.runtime.env import int_setting
from pullback.runtime.malloc import keep_freed_memory
from pullback.runtime.interpreter import out_of_range
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Region, SSAValue

_NP = {d.short: d.numpy for d in DTYPES}
"""numpy dtypes by the element type names of ABI descriptions (`'f32'`)."""

DEFAULT_CACHE_SIZE = 64
"""Compiled programs one `CompiledBackend` keeps (least recently used dropped first).
A program is specialized to its static shapes, so a workload whose shapes keep
changing would otherwise grow the cache, and the process, without bound."""

LOOP_UNROLL_THRESHOLD = 300
"""LLVM's loop-unrolling cost threshold (`-unroll-threshold`; 300 is LLVM's own at O3,
0 turns unrolling off)."""

FULL_UNROLL_MAX_COUNT = 3
"""Loops are fully unrolled only up to this trip count (`-unroll-full-max-count`;
0: no bound, LLVM's default).  Unbounded, LLVM fully unrolled the small static nested
loops of a training step (a batch-norm reduction over 2x16x16 became a
26,000-instruction function), which took most of a ResNet-style compile; with no
unrolling at all, the CNN step's 3x3 kernel loops ran 2.3x slower.  Bounded at 3,
3x3 kernel loops still unroll.  At 4, ResNet-18's 4x4 feature maps unrolled into
16-fold loop bodies whose vectorized loops cost LLVM's loop-load elimination half
a second each (one batch-norm backward segment: 526 ms at 4, 16 ms at 3); the
ResNet-18 step's LLVM time fell from 4.8 s to 3.4 s and its run time by 2.5%, the
MLP and CNN steps' run times unchanged (benchmarks/RESULTS.md, issue 18)."""

SHAPE_PLANS_PER_PROGRAM = 256
"""Concrete feed-shape plans kept per compiled program (same policy: one plan per
batch size seen, and batch sizes can be unbounded)."""


def remember(cache: OrderedDict[Any, Any], key: Hashable, value: Any, size: int) -> None:
    """Insert `key` as the most recently used entry of an LRU `cache` of `size`."""
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > size:
        cache.popitem(last=False)


class NotCompilable(RuntimeError):
    """The program uses an op the compiled backend cannot lower (message names it)."""


# ------------------------------------------------------------------------ LLVM


SLP_VECTORIZE = os.environ.get("PULLBACK_SLP", "0") == "1"
"""LLVM's SLP (straight-line) vectorizer stays off: the LLVM 22.1 that llvmlite 0.50
ships aborts the whole process on some valid modules with it (an assertion in
`Value::doRAUW`, llvm/llvm-project#177124; found by the differential fuzzer on a
conv2d program, tests/unit/test_fuzz.py).  The loop vectorizer does the work that
matters for our loops (benchmarks/RESULTS.md).  `PULLBACK_SLP=1` turns it back on."""


def compile_threads() -> int:
    """Threads LLVM compiles a program's chunks on (`runtime/llvm_chunks.py`):
    `PULLBACK_COMPILE_THREADS` if set, else one per CPU that other processes are not
    using right now (at least one, at most `MAX_COMPILE_THREADS`): on a machine whose
    cores are all taken a second thread only competes with the first.  "Right now"
    is `others_running()` (`runtime/cpu_load.py`, which the BLAS thread rule reads
    too) where the system tells it (Linux); elsewhere the 1-minute
    load average, a CPU counted idle when at least half idle.  (The load average
    counts this process's own past work: after a minute of training on both cores,
    or of compiling, it said one thread on an idle 2-core machine, and a CNN step
    compiled with 1.25 s of LLVM after its Python instead of ~0.7.)  The object code
    is the same for any count."""
    value = int_setting("PULLBACK_COMPILE_THREADS")
    if value is not None:
        return value
    cpus = os.cpu_count() or 1
    others = others_running()
    if others is not None:
        free = cpus - others
    else:
        try:
            free = int(cpus - os.getloadavg()[0] + 0.5) + 1
        except OSError:  # no load average on this platform
            free = cpus
    return max(1, min(cpus, MAX_COMPILE_THREADS, free))


MAX_COMPILE_THREADS = 8
"""The default compile threads' bound (each holds a chunk's LLVM module in memory)."""


class _Jit:
    """One MCJIT engine for the process.  Programs are optimized and emitted as
    object files (which the disk cache stores), then linked into the engine; the
    LLVM module is freed right after emission, the machine code (a few KB to a few
    MB per program) stays in the engine's memory manager.  (An engine per program
    would free that too, but costs a target machine and memory pages per program:
    more memory in all, measured.)"""

    _lock = threading.RLock()
    _instance: _Jit | None = None
    _prewarming: threading.Thread | None = None
    """The set-up thread `prewarm` started, if any."""

    def __init__(self) -> None:
        import llvmlite.binding as llvm

        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        self.llvm = llvm
        target = llvm.Target.from_default_triple()
        self.tm = target.create_target_machine(
            cpu=llvm.get_host_cpu_name(),
            features=llvm.get_host_cpu_features().flatten(),
            opt=3,
            jit=True,
        )
        self.blas = blas.bind(llvm) is not None
        keep_freed_memory()  # large temporaries reused across runs (runtime/malloc.py)
        # Before any program links: they may call the pool (`pb_parallel_for`).
        threadpool.ensure()
        backing = llvm.parse_assembly("")
        self.engine = llvm.create_mcjit_compiler(backing, self.tm)
        self.loaded: dict[str, int] = {}
        """Entry symbols linked so far and their addresses."""
        self._tms: list[Any] = [self.tm]
        """Target machines of the compiling threads (`target_machines`)."""
        self._fast_tms: list[Any] = []
        """Their code-generation-level-0 twins, for loop-free chunks (`target_machines`)."""

    @classmethod
    def get(cls) -> _Jit:
        """The process-wide JIT (created on first use)."""
        with cls._lock:
            if cls._instance is None:
                cls._instance = _Jit()
            return cls._instance

    @classmethod
    def prewarm(cls) -> None:
        """Create the JIT on a background thread if nobody has yet: its set-up (LLVM's
        targets, the MCJIT engine, the BLAS libraries, the thread pool: ~60-100 ms,
        most of it in native code) then overlaps whatever the caller does before its
        first compile (a training script runs its startup program first), and that
        compile, which waits for it under `_lock`, starts sooner."""
        if cls._instance is not None or cls._prewarming is not None:
            return  # (without the lock: a compile on another thread may hold it)
        with cls._lock:
            if cls._instance is None and cls._prewarming is None:
                cls._prewarming = threading.Thread(target=cls._set_up_quietly, name="pullback-jit-setup", daemon=True)
                cls._prewarming.start()

    @classmethod
    def _set_up_quietly(cls) -> None:
        """`get` for `prewarm`'s thread.  A set-up that fails (a bad `PULLBACK_BLAS`,
        say) fails again in the first compile, which reports it to its caller; here
        it would only print a thread's traceback."""
        try:
            cls.get()
        except Exception:  # noqa: BLE001 - reported by the compile that needs the JIT
            pass

    @classmethod
    def _await_prewarm(cls) -> None:
        """Before a fork: let a set-up under way finish, so that the child never
        inherits LLVM or `_lock` half-way through it (a child that compiled would
        wait on the lock forever)."""
        t = cls._prewarming
        if t is not None and t.is_alive() and t is not threading.current_thread():
            t.join()

    def fingerprint(self) -> str:
        """What this engine's code depends on besides the program (for the disk cache)."""
        return compile_cache.fingerprint(self.llvm.get_host_cpu_name(), self.llvm.get_host_cpu_features().flatten())

    def target_machines(self, n: int, fast: bool = False) -> list[Any]:
        """`n` target machines for the host CPU, one per compiling thread (LLVM's
        are not shared between threads), code generation at level 3 (or 0 with
        `fast`: LLVM's fast instruction selector and register allocator); made on
        first use and kept."""
        with self._lock:
            tms = self._fast_tms if fast else self._tms
            while len(tms) < n:
                tms.append(self._target_machine(0 if fast else 3))
            return tms[:n]

    def _target_machine(self, opt: int = 3) -> Any:
        llvm = self.llvm
        return llvm.Target.from_default_triple().create_target_machine(
            cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=opt, jit=True
        )

    def emit(
        self,
        llvm_ir: str,
        times: PhaseTimes,
        unroll_threshold: int = LOOP_UNROLL_THRESHOLD,
        full_unroll_max: int = FULL_UNROLL_MAX_COUNT,
        threads: int | None = None,
        split: bool = True,
    ) -> list[bytes]:
        """Verify, optimize and emit object files of LLVM IR text: with `split`, the
        module cut into chunks (`runtime/llvm_chunks.py`) compiled on `threads`
        threads (default `compile_threads()`); else whole, on one (`compiling`)."""
        from pullback.runtime import llvm_chunks

        with times.phase("llvm-split"):
            chunks = llvm_chunks.split_module(llvm_ir, llvm_chunks.MAX_CHUNKS if split else 1)
        n = compile_threads() if threads is None else max(1, threads)
        with self.compiling(times, unroll_threshold, full_unroll_max, min(n, len(chunks))) as compiler:
            for chunk in chunks:
                compiler.submit(chunk)
        return compiler.objects

    @contextlib.contextmanager
    def compiling(
        self,
        times: PhaseTimes,
        unroll_threshold: int = LOOP_UNROLL_THRESHOLD,
        full_unroll_max: int = FULL_UNROLL_MAX_COUNT,
        threads: int | None = None,
    ) -> Iterator[Any]:
        """A `llvm_chunks.ChunkCompiler` on `threads` threads (default
        `compile_threads()`) for the body to submit chunks to, compiling them as they
        come: optimized at O3 (loop vectorizer on; loop unrolling bounded by
        `unroll_threshold` and `full_unroll_max`, see `LOOP_UNROLL_THRESHOLD` and
        `FULL_UNROLL_MAX_COUNT`), loop-free chunks emitted by the fast code generator.
        On leaving, the calling thread compiles along until all are done (phase
        `llvm`); the object files are then in the compiler's `objects`."""
        from pullback.runtime import llvm_chunks

        llvm = self.llvm
        n = compile_threads() if threads is None else max(1, threads)

        def pass_builder(tm: Any) -> Any:
            pto = llvm.create_pipeline_tuning_options(speed_level=3)
            pto.loop_vectorization = True
            pto.slp_vectorization = SLP_VECTORIZE
            pto.loop_unrolling = unroll_threshold > 0
            return llvm.create_pass_builder(tm, pto)

        # The unrolling bounds are process-wide LLVM options: set, and used by every
        # chunk, under the lock.
        with self._lock:
            if unroll_threshold > 0:
                llvm.set_option("pullback", f"-unroll-threshold={unroll_threshold}")
                llvm.set_option("pullback", f"-unroll-full-max-count={full_unroll_max or 2**32 - 1}")
            tms = self.target_machines(n)
            compiler = llvm_chunks.ChunkCompiler(llvm, tms, pass_builder, self.target_machines(n, fast=True))
            try:
                yield compiler
            except BaseException:
                compiler.cancel()
                raise
            with times.phase("llvm"):
                try:
                    objs, chunk_times = compiler.finish()
                except llvm_chunks.ChunkError as e:
                    raise RuntimeError(f"compiled backend: {e}") from None
        tag = f" ({len(objs)} chunks, {len(tms)} threads)" if len(objs) > 1 else ""
        for step in ("parse", "optimize", "codegen"):
            times.threads.append((f"llvm-{step}{tag}", sum(getattr(ct, step) for ct in chunk_times)))

    def load(self, objs: Sequence[bytes], symbol: str, times: PhaseTimes) -> tuple[NativeCode, int]:
        """Link object files (from `emit` or the disk cache) into the engine; returns
        a handle and `symbol`'s address.  Objects whose symbol this engine already
        holds are not linked twice (the same program, compiled again after eviction
        or by another backend, shares the code)."""
        with times.phase("jit-link"), self._lock:
            addr = self.loaded.get(symbol)
            if addr is None:
                for obj in objs:
                    self.engine.add_object_file(self.llvm.ObjectFileRef.from_data(obj))
                self.engine.finalize_object()
                addr = self.engine.get_function_address(symbol)
                if not addr:
                    raise RuntimeError(f"compiled backend: the object code has no symbol {symbol!r}")
                self.loaded[symbol] = addr
            return NativeCode(symbol, sum(len(o) for o in objs)), addr


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_Jit._await_prewarm)


@dataclass(eq=False)
class NativeCode:
    """A program's machine code in the process-wide JIT.  (MCJIT's memory manager
    keeps machine code until the engine goes; no LLVM module or context is kept.)"""

    symbol: str
    nbytes: int
    """Size of the object files it was linked from."""


# ----------------------------------------------------------------- compiled code


@dataclass
class CompiledProgram:
    """A program compiled for one fetch list and feed dtypes/ranks."""

    prog: Program
    outputs: list[SSAValue]
    """The `pd` value behind each output buffer (`abi.output_values`)."""
    abi: dict[str, Any]
    fn: Any
    compile_seconds: float
    native: NativeCode | None = None
    """The module behind `fn`: freed when the last program using it is dropped."""
    memory: MemoryReport | None = None
    """Allocation events of the lowered entry function (`lowering/memory.py`)."""
    times: PhaseTimes | None = None
    """Where `compile_seconds` went, per phase (`PULLBACK_COMPILE_TIMES=1` prints it)."""
    shape_plans: OrderedDict[tuple[tuple[int, ...], ...], list[tuple[int, ...]]] = field(
        default_factory=OrderedDict
    )
    """Output shapes per feed shapes (they depend only on the program's structure),
    the `SHAPE_PLANS_PER_PROGRAM` most recently used."""
    addresses: dict[str, tuple[weakref.ref[np.ndarray], int]] = field(default_factory=dict, repr=False)
    """Each persistable's last scope array (weakly: a cached program must not keep a
    dropped model's parameters alive) and its buffer address (`execute`)."""
    _plan: CallPlan | None = field(default=None, repr=False)

    def call_plan(self) -> CallPlan:
        """The ABI as `execute` reads it on every call (made on first use)."""
        if self._plan is None:
            self._plan = CallPlan.of(self.abi)
        return self._plan

    def for_module(self, module: ModuleOp, fetches: Sequence[SSAValue]) -> CompiledProgram:
        """This native code serving an equal (printed-identical) module: the same code,
        ABI and shape plans, with a `Program` view of that module's own values."""
        prog = Program.of(module, fetches, use_fetch_ops=False)
        return replace(self, prog=prog, outputs=output_values(prog, self.abi, fetches), addresses={})

    def dim_bindings(self, feeds: Mapping[str, Any]) -> dict[str, int]:
        """The entry function's dynamic-dimension symbols bound from feed shapes."""
        names = [n for n, _ in self.abi["feeds"]]
        out: dict[str, int] = {}
        for sym, (fi, k) in zip(self.abi.get("dim_names", []), self.abi["dims"]):
            if names[fi] in feeds:
                out[sym] = int(np.shape(feeds[names[fi]])[k])
        return out

    def memory_peak(self, feeds: Mapping[str, Any]) -> Peak:
        """Peak bytes of live temporaries (and the buffers making it) for these feeds."""
        assert self.memory is not None
        return self.memory.peak(self.dim_bindings(feeds))

    def output_shapes(self, feeds: Sequence[np.ndarray]) -> list[tuple[int, ...]]:
        """Concrete output shapes for these feeds (checked; cached per feed shapes)."""
        key = tuple(f.shape for f in feeds)
        plan = self.shape_plans.get(key)
        if plan is None:
            names = [n for n, _ in self.abi["feeds"]]
            shapes = plan_shapes(self.prog, dict(zip(names, key)))
            plan = [shapes[v] for v in self.outputs]
        remember(self.shape_plans, key, plan, SHAPE_PLANS_PER_PROGRAM)
        return plan


OUTLINE_SEGMENTS = True
"""Outline the entry function's loops into functions of their own
(`lowering/outline_segments.py`), keeping every pass linear in the program size."""

PARALLEL_LOOPS = os.environ.get("PULLBACK_PARALLEL_LOOPS", "1").strip().lower() not in ("0", "false", "off", "no")
"""Large loops and reductions run on the thread pool (`lowering/parallelize_loops.py`,
`runtime/threadpool.py`); `PULLBACK_PARALLEL_LOOPS=0` compiles them single-threaded
(the thread count itself is a run-time setting: `threadpool.set_num_threads`)."""

DEDUPE_SEGMENTS = True
"""Structurally equal outlined segments become one function (`outline-segments`'
`dedupe`): a ResNet's repeated blocks are optimized and emitted once."""


def _min_chunk_work() -> int:
    """`PULLBACK_PARALLEL_MIN_WORK`: the work per chunk (cost units) of
    `parallelize-loops`, default `MIN_CHUNK_WORK` (small values split every loop:
    how the test suite can run everything through the threaded path)."""
    value = int_setting("PULLBACK_PARALLEL_MIN_WORK")
    return MIN_CHUNK_WORK if value is None else value

NOTICE_AFTER_S = 1.0
"""A compile still running after this many seconds says so on stderr (what is being
compiled), and again when it is done (the time it took)."""


def _times_requested() -> bool:
    """`PULLBACK_COMPILE_TIMES=1`: print every compile's phase times to stderr."""
    return os.environ.get("PULLBACK_COMPILE_TIMES", "").strip().lower() not in ("", "0", "false", "off", "no")


@contextlib.contextmanager
def _announced(what: str, times: PhaseTimes) -> Iterator[None]:
    """Run the body (a compile); if it takes more than `NOTICE_AFTER_S`, tell the user
    on stderr while it runs and when it ends, so nobody waits in silence."""
    shown = threading.Event()

    def notice() -> None:
        shown.set()
        print(f"pullback: compiling {what} ...", file=sys.stderr, flush=True)

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
        verbose = _times_requested()
        if shown.is_set() or verbose:
            done = "compiled" if ok else "failed to compile"
            print(f"pullback: {done} {what} in {elapsed:.2f} s", file=sys.stderr, flush=True)
        if verbose:
            print(times.format(), file=sys.stderr, flush=True)


def _describe(module: ModuleOp, fetches: Sequence[SSAValue]) -> str:
    """`a program of 412 ops fetching mean_0`: how a compile names its program."""
    n = sum(1 for _ in module.walk()) - 1
    names = [v.name_hint or "?" for v in fetches[:3]] + (["..."] if len(fetches) > 3 else [])
    return f"a program of {n} ops fetching {', '.join(names) or 'nothing'}"


def _translator() -> str:
    """The CPU emitter's version (part of the disk-cache key)."""
    from pullback.lowering.llvm.cpu import TRANSLATOR_VERSION

    return f"direct-v{TRANSLATOR_VERSION}"


def _bind_collectives(jit: _Jit, module: ModuleOp) -> None:
    """Native collectives (lowering/distributed.py) call the MPI library itself: bind
    it, and refuse (NotCompilable) a program built for another job size."""
    from pullback.lowering.distributed import MPICH, job_size_mismatch
    from pullback.runtime.communicator import DistributedError, bind_native_mpi, world

    try:
        bind_native_mpi(jit.llvm, MPICH)
        # Native collectives trust their buffer sizes: a program built for
        # another job size runs on the interpreter, which reports it.
        why = job_size_mismatch(module.walk(), world().size)
        if why is not None:
            raise DistributedError(why)
    except DistributedError as e:
        raise NotCompilable(str(e)) from None


_ENTRY_KEYS = frozenset({"abi", "memory", "objects", "symbol", "collectives"})


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
) -> CompiledProgram:
    """Lower, optimize and JIT `module` for `fetches`, or load its object code from the
    disk cache (`runtime/compile_cache.py`); no in-memory caching here.  `outline`,
    `dedupe`, `unroll_threshold` and `full_unroll_max` default to
    `OUTLINE_SEGMENTS`, `DEDUPE_SEGMENTS`, `LOOP_UNROLL_THRESHOLD` and
    `FULL_UNROLL_MAX_COUNT`; `text` is `str(module)` when the caller
    has printed it already (printing a ResNet takes most of a cache hit); `threads`
    (default `PARALLEL_LOOPS`): split large loops over the thread pool, in chunks of at
    least `min_chunk_work` (default `PULLBACK_PARALLEL_MIN_WORK`, else
    `parallelize_loops.MIN_CHUNK_WORK`); `llvm_threads`: LLVM's threads (default
    `compile_threads()`; the object code does not depend on it); `split_llvm=False`:
    the module optimized and emitted whole, on one thread (for comparison)."""
    t0 = time.perf_counter()
    times = PhaseTimes()
    jit = _Jit.get()
    use_blas = jit.blas if blas is None else blas and jit.blas
    outline = OUTLINE_SEGMENTS if outline is None else outline
    unroll = LOOP_UNROLL_THRESHOLD if unroll_threshold is None else unroll_threshold
    full = FULL_UNROLL_MAX_COUNT if full_unroll_max is None else full_unroll_max
    route = _translator()
    dedupe = DEDUPE_SEGMENTS if dedupe is None else dedupe
    threads = PARALLEL_LOOPS if threads is None else threads
    work = _min_chunk_work() if min_chunk_work is None else min_chunk_work
    # (The fusion settings can be changed to compare: the code differs.)
    options = (f"blas={use_blas} outline={outline} dedupe={dedupe} unroll={unroll},{full} "
               f"slp={SLP_VECTORIZE} translate={route} mofusion={fusion.ENABLED} budget={core.RECOMPUTE_BUDGET} "
               f"threads={threads},{work} split={split_llvm}")
    with _announced(_describe(module, fetches), times):
        with times.phase("key"):
            text = str(module) if text is None else text
            positions = _value_positions(module, fetches)
            key = compile_cache.key(text, repr(positions), options, jit.fingerprint())
        with times.phase("disk-cache-load"):
            entry = compile_cache.load(key)
        if entry is None or not _ENTRY_KEYS <= entry.keys():
            with cyclic_gc_paused():
                entry = _lower_and_emit(
                    jit, module, fetches, f"pb_{key[:24]}", use_blas, outline, (unroll, full), times, dedupe,
                    work if threads else None, llvm_threads, split_llvm,
                )
            with times.phase("disk-cache-store"):
                compile_cache.store(key, entry)
        elif entry["collectives"]:
            _bind_collectives(jit, module)
        native, addr = jit.load(entry["objects"], entry["symbol"], times)
    fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(addr)
    prog = Program.of(module, fetches, use_fetch_ops=False)
    abi = entry["abi"]
    return CompiledProgram(
        prog, output_values(prog, abi, fetches), abi, fn, time.perf_counter() - t0, native, entry["memory"], times
    )


def _lower_and_emit(
    jit: _Jit,
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
    `split_llvm`: `_Jit.emit`'s `threads` and `split`.  Returns the disk cache's
    entry (object files, ABI, memory report)."""
    from pullback.lowering.abi import PACKED_PREFIX
    from pullback.lowering.pipeline import run_passes, translate, translate_passes, translate_streamed
    from pullback.runtime import llvm_chunks

    try:
        with times.phase("convert-pd-to-linalg"):
            fn_op, _ = build_entry(module, fetches, entry=entry, only_given_fetches=True)
    except LoweringError as e:
        raise NotCompilable(str(e)) from None
    lowered = ModuleOp([fn_op])
    declare_callees(lowered)
    collectives = any(
        getattr(o, "sym_name", None) and o.sym_name.data.startswith("MPI_") for o in lowered.body.block.ops
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
            "collectives": collectives}


# ---------------------------------------------------------------------- backend


class CompiledBackend:
    """Runs `pd` programs as JIT-compiled native code (see the module docstring)."""

    def __init__(
        self, fallback: bool = False, blas: bool | None = None, cache_size: int = DEFAULT_CACHE_SIZE
    ) -> None:
        if cache_size < 1:
            raise ValueError(f"CompiledBackend: cache_size must be at least 1, got {cache_size}")
        self.fallback = fallback
        self.blas = blas
        self.cache_size = cache_size
        self._by_identity: OrderedDict[
            tuple[Any, ...], tuple[ModuleOp, CompiledProgram | None, tuple[Any, ...] | None]
        ] = OrderedDict()
        self._by_content: OrderedDict[tuple[Any, ...], CompiledProgram] = OrderedDict()
        self._sealed: weakref.WeakSet[ModuleOp] = weakref.WeakSet()
        self.compiles = 0
        _Jit.prewarm()

    def seal(self, module: ModuleOp) -> None:
        """The caller will not change `module` again (the executor's private copy of
        a program): its calls find their compiled program by the module's identity
        alone, without walking its ops to notice changes."""
        self._sealed.add(module)

    def cache_info(self) -> dict[str, int]:
        """Entries of the two program caches, their bound and the compiles so far."""
        return {"identity": len(self._by_identity), "content": len(self._by_content),
                "size": self.cache_size, "compiles": self.compiles}

    # The cache: an identity key (module object, its ops, fetches, feed dtypes/ranks)
    # finds a program without printing the module; the content key (its text) lets
    # equal programs share code.  Both are LRU-bounded by `cache_size`, with one
    # recency: a hit by identity refreshes the content entry too.
    def program_for(
        self, module: ModuleOp, fetches: Sequence[SSAValue], feeds: Mapping[str, np.ndarray]
    ) -> CompiledProgram | None:
        """The compiled program for this call (compiling on first use)."""
        sig = tuple(sorted((n, np.asarray(a).dtype.str, np.ndim(a)) for n, a in feeds.items()))
        ops = 0 if module in self._sealed else hash(_op_ids(module))
        ident = (id(module), ops, tuple(id(v) for v in fetches), sig)
        hit = self._by_identity.get(ident)
        if hit is not None and hit[0] is module:
            self._by_identity.move_to_end(ident)
            if hit[2] is not None and hit[2] in self._by_content:
                self._by_content.move_to_end(hit[2])
            return hit[1]
        positions = _value_positions(module, fetches)
        text = str(module)  # printed once: the disk cache's key reuses it
        content = (hashlib.sha1(text.encode()).hexdigest(), positions, sig)
        compiled = self._by_content.get(content)
        if compiled is None and _initializers_only(module):
            # Startup programs: random initializers stay on the host by design
            # (they run once, drawing from numpy's generator), so no warning.
            remember(self._by_identity, ident, (module, None, None), self.cache_size)
            return None
        if compiled is None:
            try:
                compiled = compile_program(module, fetches, self.blas, text=text)
                self.compiles += 1
            except NotCompilable as e:
                if not self.fallback:
                    raise
                warnings.warn(f"compiled backend: {e}; running this program on the interpreter", stacklevel=3)
                remember(self._by_identity, ident, (module, None, None), self.cache_size)
                return None
            remember(self._by_content, content, compiled, self.cache_size)
        else:
            self._by_content.move_to_end(content)
            compiled = compiled.for_module(module, fetches)
        remember(self._by_identity, ident, (module, compiled, content), self.cache_size)
        return compiled

    def run(
        self,
        module: ModuleOp,
        feeds: Mapping[str, np.ndarray],
        scope: MutableMapping[str, np.ndarray],
        fetches: Sequence[SSAValue],
    ) -> list[np.ndarray]:
        """Run `module` natively; returns the values of `fetches` (parameter updates
        are made in place in `scope`'s arrays, which are returned for them)."""
        compiled = self.program_for(module, fetches, feeds)
        if compiled is None:
            from pullback.runtime.interpreter import run_module

            env = run_module(module, feeds, scope)
            return [env[v] for v in fetches]
        return execute(compiled, feeds, scope)


def _op_ids(module: ModuleOp) -> tuple[int, ...]:
    """The identity of every op in `module`, in walk order: the per-call part of the
    program cache's identity key (an op added, removed or replaced changes it).

    Plain loops over the linked lists of blocks and ops: xDSL's nested `walk`
    generators cost about 6 us an op (6% of a 10 ms training step of 95 ops), an
    explicit stack of children ~0.9 us, these loops ~0.35 us."""
    ids: list[int] = [id(module)]
    append = ids.append

    def region_ops(region: Region) -> None:
        block = region.first_block
        while block is not None:
            op = block.first_op
            while op is not None:
                append(id(op))
                for nested in op.regions:
                    region_ops(nested)
                op = op.next_op
            block = block.next_block

    for region in module.regions:
        region_ops(region)
    return tuple(ids)


def _value_positions(module: ModuleOp, values: Sequence[SSAValue]) -> tuple[tuple[int, int], ...]:
    """Each value as (index of its defining op in a walk, result index)."""
    index = {id(op): i for i, op in enumerate(module.walk())}
    out = []
    for v in values:
        owner = v.owner
        out.append((index.get(id(owner), -1), getattr(v, "index", 0)))
    return tuple(out)


def _as_input(name: str, value: Any, spec: list[Any], what: str) -> np.ndarray:
    """A C-contiguous array of the declared dtype and rank (copying only if needed)."""
    shape, elem = spec
    dtype = np.dtype(_NP[elem])
    arr = np.asarray(value)
    if arr.ndim != len(shape):
        raise ValueError(
            f"{what} '{name}' has rank {arr.ndim} (shape {list(arr.shape)}), "
            f"but the program declares rank {len(shape)}"
        )
    if arr.dtype != dtype:
        if not np.can_cast(arr.dtype, dtype, casting="same_kind") and not (
            arr.dtype.kind in "iub" and dtype.kind in "iu"
        ):
            raise ValueError(f"{what} '{name}' has dtype {arr.dtype}, expected {dtype}")
        arr = arr.astype(dtype)
    # Not np.ascontiguousarray: it turns a 0-d array into shape [1].
    return np.require(arr, requirements="C")


@dataclass(frozen=True)
class CallPlan:
    """What `execute` needs of a program's ABI on every call, worked out once: the
    feeds' and parameters' dtypes as numpy objects, the slot array's ctypes type, and
    which outputs are new persistables.  (Re-deriving these from the JSON-shaped ABI
    each call, and taking every buffer's address through `ndarray.ctypes`, cost ~120
    us per call: 3-4% of a 3 ms training step.)"""

    feeds: tuple[tuple[str, np.dtype, int, list[Any]], ...]
    """(name, dtype, rank, ABI spec) of each feed."""
    params: tuple[tuple[str, np.dtype, tuple[int, ...]], ...]
    """(name, dtype, shape) of each persistable the program reads or writes."""
    out_dtypes: tuple[np.dtype, ...]
    new_outputs: tuple[tuple[int, str], ...]
    """(output index, scope name) of each persistable the program creates."""
    slots: Any
    """The ctypes array type of the entry point's one argument."""

    @classmethod
    def of(cls, abi: dict[str, Any]) -> CallPlan:
        """The plan of `abi` (as `abi_of` records it)."""
        feeds = tuple((name, np.dtype(_NP[spec[1]]), len(spec[0]), spec) for name, spec in abi["feeds"])
        params = tuple((name, np.dtype(_NP[elem]), tuple(shape)) for name, (shape, elem) in abi["params"])
        outputs = abi["outputs"]
        n_new = _n_new(abi)
        new = tuple((i, name) for i, (name, _) in enumerate(outputs) if i >= len(outputs) - n_new)
        n_slots = len(abi["dims"]) + len(feeds) + len(params) + len(outputs) + (1 if abi.get("checks") else 0)
        return cls(feeds, params, tuple(np.dtype(_NP[spec[1]]) for _, spec in outputs), new,
                   ctypes.c_int64 * n_slots)


def _feed_array(name: str, value: Any, dtype: np.dtype, rank: int, spec: list[Any]) -> np.ndarray:
    """`value` as the program's feed `name`: itself when it already is a C-contiguous
    array of the declared dtype and rank (the common case, checked without a call
    into numpy), else `_as_input`'s conversion and checks."""
    if type(value) is np.ndarray and value.dtype == dtype and value.ndim == rank and value.flags.c_contiguous:
        return value
    return _as_input(name, value, spec, "feed")


def _param_array(
    compiled: CompiledProgram, scope: MutableMapping[str, np.ndarray], name: str, dtype: np.dtype,
    shape: tuple[int, ...],
) -> tuple[np.ndarray, int]:
    """The scope's array for persistable `name` and its buffer's address.

    Parameters are the same arrays from step to step (updated in place), so their
    addresses are remembered per program (`CompiledProgram.addresses`): a hit needs
    the same array object (alive), still of the declared dtype and shape,
    C-contiguous and writeable.  An array object keeps its buffer for life; only
    `ndarray.resize` moves it, and that changes its size, which the shape check
    sees (resizing away and back between two calls would not be seen: numpy's own
    documentation warns against resizing arrays others may hold)."""
    try:
        arr = scope[name]
    except KeyError:
        raise RuntimeError(
            f"parameter '{name}' is not initialized in the scope (run the startup program first)"
        ) from None
    known = compiled.addresses.get(name)
    if known is not None and known[0]() is arr and arr.dtype == dtype and arr.shape == shape:
        flags = arr.flags
        if flags.c_contiguous and flags.writeable:
            return arr, known[1]
    if not (isinstance(arr, np.ndarray) and arr.dtype == dtype and arr.flags.c_contiguous and arr.flags.writeable):
        arr = np.array(arr, dtype=dtype, order="C")  # a copy; 0-d stays 0-d
        scope[name] = arr  # updates in place from now on
    if arr.shape != shape:
        raise ValueError(f"parameter '{name}' has shape {list(arr.shape)} in the scope, expected {list(shape)}")
    address = arr.ctypes.data
    compiled.addresses[name] = (weakref.ref(arr), address)
    return arr, address


def execute(
    compiled: CompiledProgram, feeds: Mapping[str, np.ndarray], scope: MutableMapping[str, np.ndarray]
) -> list[np.ndarray]:
    """Check the feeds, call the native code, return the fetched values."""
    abi = compiled.abi
    plan = compiled.call_plan()
    feed_arrays = []
    for name, dtype, rank, spec in plan.feeds:
        try:
            value = feeds[name]
        except KeyError:
            raise ValueError(f"feed '{name}' is missing") from None
        feed_arrays.append(_feed_array(name, value, dtype, rank, spec))
    try:
        out_shapes = compiled.output_shapes(feed_arrays)
    except ShapeError as e:
        raise ValueError(str(e)) from None
    slots: list[int] = [feed_arrays[fi].shape[k] for fi, k in abi["dims"]]
    slots += [a.ctypes.data for a in feed_arrays]
    params = []
    writable = []
    for name, dtype, shape in plan.params:
        arr, address = _param_array(compiled, scope, name, dtype, shape)
        params.append(arr)
        slots.append(address)
        if arr.size:
            writable.append(address)
    outs = [np.empty(s, dtype=d) for s, d in zip(out_shapes, plan.out_dtypes)]
    for o in outs:
        address = o.ctypes.data
        slots.append(address)
        if o.size:
            writable.append(address)
    if len(set(writable)) != len(writable):
        raise ValueError("two parameters share one buffer; the compiled code needs distinct arrays")
    checks = abi.get("checks") or []
    status = np.zeros(3, np.int64) if checks else None
    if status is not None:
        slots.append(status.ctypes.data)
    compiled.fn(plan.slots(*slots))
    if status is not None and status[0]:
        # A failed range check: the code skipped every persistable update after it.
        code, bad, limit = (int(v) for v in status)
        op_name, what = checks[code - 1]
        raise out_of_range(op_name, what, bad, limit)
    for i, name in plan.new_outputs:
        scope[name] = outs[i]
    by_name = {n: p for (n, _, _), p in zip(plan.params, params)}
    return [outs[ref] if kind == "out" else by_name[ref] for kind, ref in abi["fetches"]]


def _n_new(abi: dict[str, Any]) -> int:
    return sum(1 for n, _ in abi["outputs"] if n)


# `pd.broadcast`: a data-parallel start-up program sends rank 0's initial values
# (see passes/data_parallel.py); it still runs once, on the host.
_INITIALIZER_OPS = frozenset({"pd.fill_constant", "pd.parameter", "pd.fetch", "pd.broadcast"})


def _initializers_only(module: ModuleOp) -> bool:
    """True for startup-style programs: host-only initializers and constants."""
    ops = list(module.body.block.ops)
    host_only = [isinstance(op, PdOp) and op.HOST_ONLY is not None for op in ops]
    return any(host_only) and all(
        host or op.name in _INITIALIZER_OPS for host, op in zip(host_only, ops)
    )


def make_backend(place: Any) -> CompiledBackend:
    """The executor's factory (`runtime.executor.BACKEND_MODULES["compiled"]`)."""
    kind = getattr(place, "kind", "cpu")
    if kind != "cpu":
        raise ValueError(f"the compiled backend runs on CPUPlace only, not {place}")
    return CompiledBackend(fallback=os.environ.get("PULLBACK_COMPILED_FALLBACK", "1") != "0")


__all__ = ["CompiledBackend", "CompiledProgram", "NotCompilable", "compile_program", "execute", "make_backend"]
_ = TensorType
