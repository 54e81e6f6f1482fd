"""The process's one MCJIT engine: LLVM IR optimized and emitted as object files, and
object files (emitted here or loaded from the disk cache) linked into the engine.

- `Jit.get()`: the process-wide engine, created on first use (the host CPU's target
  machine; the BLAS symbols bound, `native/blas.py`; malloc's thresholds raised,
  `native/malloc.py`; the thread pool built, `native/threadpool.py`); `Jit.prewarm()`
  starts that set-up on a background thread, and a fork waits for it to finish.
- `Jit.emit` / `Jit.compiling`: optimize at O3 for the host CPU (loop vectorizer on,
  SLP off, loop unrolling bounded: `native/settings.py`) and emit object files, the
  module cut into chunks compiled on several threads (`native/llvm_chunks.py`).
- `Jit.load`: link a program's object files and return its entry point's address
  (`NativeCode` holds the linked machine code; symbols already linked are not
  linked twice).  Programs are linked into MCJIT engines of `GENERATION_PROGRAMS`
  programs each: MCJIT cannot unload one object file, but an engine is freed whole
  (its machine code, object files and target machine) once it takes no more programs
  and none of its programs is alive (every `NativeCode` of it collected).  A
  workload that compiles distinct programs without end (shapes that keep changing)
  so keeps the machine code of the programs its caches hold, not of every program
  it ever ran (`benchmarks/bench_program_memory.py`).

What is compiled, and the caches around it, are `native/compiler.py`'s and
`native/backend.py`'s.
"""

from __future__ import annotations

import contextlib
import os
import threading
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pullback.lowering.phase_times import PhaseTimes
from pullback.runtime.interrupts import deferred_interrupts
from pullback.runtime.native import bf16_gemm, blas, disk_cache, llvm_chunks, settings, threadpool
from pullback.runtime.native.malloc import keep_freed_memory
from pullback.runtime.native.settings import FULL_UNROLL_MAX_COUNT, LOOP_UNROLL_THRESHOLD, compile_threads


GENERATION_PROGRAMS = 16
"""Programs linked into one MCJIT engine before the next engine is started.  An
engine costs a target machine and its own memory pages (about 54 KB with one small
program, against 11 KB per program sharing one, measured); one per 16 programs keeps
that small while letting engines whose programs are all gone be freed."""


class _Generation:
    """One MCJIT engine and how many live `NativeCode`s use it."""

    def __init__(self, llvm: Any, tm: Any) -> None:
        self.engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), tm)
        self.linked = 0
        """Programs linked into it."""
        self.live = 0
        """`NativeCode`s of it not yet collected."""
        self.symbols: list[str] = []


class Jit:
    """The process's JIT: programs are optimized and emitted as object files (which
    the disk cache stores), then linked into MCJIT engines (see the module
    docstring: an engine per `GENERATION_PROGRAMS` programs, freed when all of its
    programs are); the LLVM module is freed right after emission."""

    _lock = threading.RLock()
    _instance: Jit | None = None
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
        keep_freed_memory()  # large temporaries reused across runs (native/malloc.py)
        # Before any program links: they may call the pool (`pb_parallel_for`).
        threadpool.ensure()
        self._generation: _Generation | None = None
        """The engine new programs are linked into."""
        self.loaded: dict[str, tuple[int, _Generation]] = {}
        """Entry symbols linked and not freed, with their addresses and engines."""
        self.engines_freed = 0
        """Engines closed so far (all of their programs gone)."""
        self._released: list[_Generation] = []
        """Engines of collected `NativeCode`s, one entry each, not yet counted down."""
        self._tms: list[Any] = [self.tm]
        """Target machines of the compiling threads (`target_machines`)."""
        self._fast_tms: list[Any] = []
        """Their code-generation-level-0 twins, for loop-free chunks (`target_machines`)."""

    @classmethod
    def get(cls) -> Jit:
        """The process-wide JIT (created on first use)."""
        with cls._lock:
            if cls._instance is None:
                cls._instance = Jit()
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
        return disk_cache.fingerprint(self.llvm.get_host_cpu_name(), self.llvm.get_host_cpu_features().flatten())

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
        module cut into chunks (`native/llvm_chunks.py`) compiled on `threads`
        threads (default `compile_threads()`); else whole, on one (`compiling`)."""
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
        llvm = self.llvm
        n = compile_threads() if threads is None else max(1, threads)

        def pass_builder(tm: Any) -> Any:
            pto = llvm.create_pipeline_tuning_options(speed_level=3)
            pto.loop_vectorization = True
            pto.slp_vectorization = settings.SLP_VECTORIZE
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
        """Link object files (from `emit` or the disk cache) into the current engine;
        returns a handle (keep it as long as the code may run) and `symbol`'s
        address.  A symbol linked already and not freed is not linked twice (the
        same program, compiled again after eviction or by another backend, shares
        the code)."""
        # (Ctrl-C held back while linking: an object file added but not recorded in
        # `loaded` would be added again by the next compile, a duplicate symbol.)
        with times.phase("jit-link"), self._lock, deferred_interrupts():
            self._drain()
            known = self.loaded.get(symbol)
            if known is not None:
                addr, gen = known
            else:
                current = self._generation
                if current is None or current.linked >= GENERATION_PROGRAMS:
                    self._retire(current)
                    current = self._generation = _Generation(self.llvm, self._target_machine())
                gen = current
                if any(bf16_gemm.SYMBOL.encode() in obj for obj in objs):
                    bf16_gemm.bind(self.llvm)  # (compiled on first use: ~1 s once per process)
                for obj in objs:
                    gen.engine.add_object_file(self.llvm.ObjectFileRef.from_data(obj))
                gen.engine.finalize_object()
                gen.linked += 1
                gen.symbols.append(symbol)
                addr = gen.engine.get_function_address(symbol)
                if not addr:
                    raise RuntimeError(f"compiled backend: the object code has no symbol {symbol!r}")
                self.loaded[symbol] = (addr, gen)
            gen.live += 1
            code = NativeCode(symbol, sum(len(o) for o in objs))
            weakref.finalize(code, self._release, gen)
            return code, addr

    def _retire(self, gen: _Generation | None) -> None:
        """`gen` takes no more programs: it is freed now if none of its programs is
        alive, else when the last one goes (`_release`)."""
        if gen is not None and gen.live == 0:
            self._close(gen)

    def _release(self, gen: _Generation) -> None:
        """A `NativeCode` of `gen` was collected.  This runs on whichever thread
        collected it, which may be a chunk-compiling thread while another holds
        `_lock` waiting for it: so it never waits for the lock; the release is
        queued and done now if the lock is free, else by the next `load`."""
        self._released.append(gen)  # (atomic)
        if self._lock.acquire(blocking=False):
            try:
                self._drain()
            finally:
                self._lock.release()

    def _drain(self) -> None:
        """Apply the queued releases (under `_lock`)."""
        while self._released:
            gen = self._released.pop()
            gen.live -= 1
            if gen.live == 0 and gen is not self._generation:
                self._close(gen)

    def _close(self, gen: _Generation) -> None:
        for symbol in gen.symbols:
            if self.loaded.get(symbol, (0, None))[1] is gen:
                del self.loaded[symbol]
        gen.symbols.clear()
        gen.engine.close()
        self.engines_freed += 1


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=Jit._await_prewarm)


@dataclass(eq=False)
class NativeCode:
    """A program's machine code in the JIT: while it is alive, so is the code (its
    engine is freed when every `NativeCode` of it is collected, `Jit.load`); no LLVM
    module or context is kept."""

    symbol: str
    nbytes: int
    """Size of the object files it was linked from."""


__all__ = ["GENERATION_PROGRAMS", "Jit", "NativeCode"]
