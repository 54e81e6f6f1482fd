"""Resident memory over many distinct compiled programs (issue 32): what a program
leaves behind once its cache entries are gone.

    python -m pullback.benchmarks.bench_program_memory [--programs 300] [--split]

Each program is `mean(relu(2 x + 1))` with `x` of shape `[n, 8]`, `n` = 1, 2, ...
(a new static shape, hence a new compiled program, every time), run once through
one `CompiledBackend` whose cache keeps the last 16; the disk cache is off.  Printed
per block of 50 programs: resident-memory growth, the JIT's linked programs and
freed engines.  `--split` also runs the two halves of a compile apart, in fresh
processes: emitting object code only (`Jit.emit`'s LLVM work) and emitting plus
linking, to tell what the JIT keeps from what LLVM's optimizer keeps.
"""

from __future__ import annotations

import argparse
import gc
import os
import subprocess
import sys

import numpy as np

from pullback.benchmarks.programs import ProgramBuilder
from pullback.dialects import pd


def rss_mb() -> float:
    """Resident memory of this process in MB (Linux)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def _program(n: int) -> tuple[ProgramBuilder, object]:
    b = ProgramBuilder()
    x = b.data("x", [n, 8])
    y = b.add(pd.ReduceMeanOp, b.add(pd.ReluOp, b.add(pd.ScaleOp, x, scale=2.0, bias=1.0)))
    return b, y


def run_backend(programs: int) -> None:
    """Distinct programs through one backend; prints RSS per block of 50."""
    from pullback.runtime.native.backend import CompiledBackend
    from pullback.runtime.native.jit import Jit

    backend = CompiledBackend(cache_size=16)
    jit = Jit.get()
    start = rss_mb()
    for n in range(1, programs + 1):
        b, y = _program(n)
        backend.run(b.module, {"x": np.ones((n, 8), np.float32)}, {}, [y])  # type: ignore[list-item]
        if n % 50 == 0:
            gc.collect()
            print(f"programs {n:4d}: {rss_mb():6.1f} MB resident (+{rss_mb() - start:5.1f}), "
                  f"{len(jit.loaded)} programs linked, {getattr(jit, 'engines_freed', 0)} engines freed", flush=True)
    print(f"per program after the first 100: see the growth between the 100 and {programs} lines")


def run_part(part: str, programs: int) -> None:
    """`emit`: LLVM only; `link`: LLVM and linking (the handle dropped at once)."""
    from pullback.lowering.phase_times import PhaseTimes
    from pullback.runtime.native import compiler
    from pullback.runtime.native.jit import Jit

    jit = Jit.get()

    def one(n: int) -> None:
        b, y = _program(n)
        entry = compiler._lower_and_emit(jit, b.module, [y], f"pb_memprobe{n}", jit.blas, True, (600, 8),  # type: ignore[list-item]
                                         PhaseTimes())
        if part == "link":
            jit.load(entry["objects"], entry["symbol"], PhaseTimes())

    for n in range(1, 51):
        one(n)
    gc.collect()
    before = rss_mb()
    for n in range(51, 51 + programs):
        one(n)
    gc.collect()
    grown = rss_mb() - before
    print(f"{part:5s}: +{grown:.1f} MB over {programs} programs ({grown / programs * 1024:.0f} KB each)", flush=True)


def main() -> None:
    """Print the figures docs/reliability.md records."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--programs", type=int, default=300)
    ap.add_argument("--split", action="store_true", help="also measure emitting and linking apart")
    ap.add_argument("--part", choices=["emit", "link"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    os.environ["PULLBACK_CACHE"] = "0"
    if args.part:
        run_part(args.part, args.programs)
        return
    run_backend(args.programs)
    if args.split:
        for part in ("emit", "link"):
            subprocess.run([sys.executable, "-m", "pullback.benchmarks.bench_program_memory", "--part", part,
                            "--programs", str(args.programs)], check=True)


if __name__ == "__main__":
    main()
