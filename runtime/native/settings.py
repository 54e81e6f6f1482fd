"""The compiled backend's settings: the environment variables a compile reads and the
compile options they and the code default to, in one place.

A compile (`native/compiler.py`, `native/jit.py`) is configured by the LLVM options
(`SLP_VECTORIZE`, `LOOP_UNROLL_THRESHOLD`, `FULL_UNROLL_MAX_COUNT`), the translation
the lowering's switches (`OUTLINE_SEGMENTS`, `DEDUPE_SEGMENTS`,
`PARALLEL_LOOPS`, `min_chunk_work`), the threads LLVM compiles on
(`compile_threads`), whether phase times are printed (`times_requested`) and whether
a slow compile is announced on stderr (`compile_notice_enabled`:
`PULLBACK_COMPILE_NOTICE=0` or `FLAGS_pullback_compile_notice` silences it).

`PULLBACK_SLP` and `PULLBACK_PARALLEL_LOOPS` are read once, when
this module is first imported: with the compiled backend (the eager kernels and the
thread pool never import it).  They are module attributes the compiler reads at each
compile, so tests and benchmarks can set them here; the functions read their
variables on each call (integers through `native/env.py`'s `int_setting`).  Other
native modules read their own variables where they act on them (the disk cache, the
thread pool, BLAS, malloc).
"""

from __future__ import annotations

import os

from pullback.lowering.parallelize_loops import MIN_CHUNK_WORK
from pullback.runtime.native.cpu_load import others_running
from pullback.runtime.native.env import int_setting


# ------------------------------------------------------------------------ LLVM

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

SLP_VECTORIZE = os.environ.get("PULLBACK_SLP", "0") == "1"
"""LLVM's SLP (straight-line) vectorizer stays off: the LLVM 22.1 that llvmlite 0.50
ships aborts the whole process on some valid modules with it (an assertion in
`Value::doRAUW`, llvm/llvm-project#177124; found by the differential fuzzer on a
conv2d program, tests/unit/testing/test_fuzz.py).  The loop vectorizer does the work that
matters for our loops (benchmarks/RESULTS.md).  `PULLBACK_SLP=1` turns it back on."""

MAX_COMPILE_THREADS = 8
"""The default compile threads' bound (each holds a chunk's LLVM module in memory)."""


def compile_threads() -> int:
    """Threads LLVM compiles a program's chunks on (`native/llvm_chunks.py`):
    `PULLBACK_COMPILE_THREADS` if set, else one per CPU that other processes are not
    using right now (at least one, at most `MAX_COMPILE_THREADS`): on a machine whose
    cores are all taken a second thread only competes with the first.  "Right now"
    is `others_running()` (`native/cpu_load.py`, which the BLAS thread rule reads
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


# -------------------------------------------------------------------- lowering

OUTLINE_SEGMENTS = True
"""Outline the entry function's loops into functions of their own
(`lowering/outline_segments.py`), keeping every pass linear in the program size."""

PARALLEL_LOOPS = os.environ.get("PULLBACK_PARALLEL_LOOPS", "1").strip().lower() not in ("0", "false", "off", "no")
"""Large loops and reductions run on the thread pool (`lowering/parallelize_loops.py`,
`native/threadpool.py`); `PULLBACK_PARALLEL_LOOPS=0` compiles them single-threaded
(the thread count itself is a run-time setting: `threadpool.set_num_threads`)."""

DEDUPE_SEGMENTS = True
"""Structurally equal outlined segments become one function (`outline-segments`'
`dedupe`): a ResNet's repeated blocks are optimized and emitted once."""


def min_chunk_work() -> int:
    """`PULLBACK_PARALLEL_MIN_WORK`: the work per chunk (cost units) of
    `parallelize-loops`, default `MIN_CHUNK_WORK` (small values split every loop:
    how the test suite can run everything through the threaded path)."""
    value = int_setting("PULLBACK_PARALLEL_MIN_WORK")
    return MIN_CHUNK_WORK if value is None else value


_compile_notice: bool | None = None
"""Set by `paddle.set_flags({'FLAGS_pullback_compile_notice': ...})`; None: the
environment decides."""


def set_compile_notice(on: bool | None) -> None:
    """Turn the slow-compile notice on or off (None: back to `PULLBACK_COMPILE_NOTICE`)."""
    global _compile_notice
    _compile_notice = on


def compile_notice_enabled() -> bool:
    """Whether a compile slower than `compiler.NOTICE_AFTER_S` says so on stderr: on
    unless `paddle.set_flags({'FLAGS_pullback_compile_notice': False})` or
    `PULLBACK_COMPILE_NOTICE=0` (the flag wins when set).  `PULLBACK_COMPILE_TIMES=1`
    prints its report regardless."""
    if _compile_notice is not None:
        return _compile_notice
    return os.environ.get("PULLBACK_COMPILE_NOTICE", "1").strip().lower() not in ("0", "false", "off", "no")


def times_requested() -> bool:
    """`PULLBACK_COMPILE_TIMES=1`: print every compile's phase times to stderr."""
    return os.environ.get("PULLBACK_COMPILE_TIMES", "").strip().lower() not in ("", "0", "false", "off", "no")


__all__ = [
    "DEDUPE_SEGMENTS", "FULL_UNROLL_MAX_COUNT", "LOOP_UNROLL_THRESHOLD", "MAX_COMPILE_THREADS", "OUTLINE_SEGMENTS",
    "PARALLEL_LOOPS", "SLP_VECTORIZE", "compile_threads", "min_chunk_work",
    "times_requested",
]
