"""Native eager kernels (issue 33): eager steps with and without them, against
PyTorch eager, in one run; and the latency of the first steps.

    taskset -c 0 python -m pullback.benchmarks.bench_eager_native [--iters N] [--rounds R]

Steady state: the LeNet Adam step and the 64-128-128-10 MLP step of `bench_eager`,
each timed in interleaved rounds with native eager kernels on (compiled, trials
done), off (`eager_native.set_enabled(False)`: every op and plan on the reference
kernels) and PyTorch; the median round is reported.  One thread everywhere
(BLAS, pullback's pool, torch).

First steps: a fresh process runs LeNet steps from a cold disk cache (a new
`PULLBACK_CACHE_DIR`) and then again from the warm one, printing the first three
steps' latencies and how long until the background compiles finished, with native
kernels on and off.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "PULLBACK_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

from pullback.benchmarks.bench_eager import pb_lenet, pb_mlp, per_iter_us, torch_lenet, torch_mlp  # noqa: E402
from pullback.frontend import eager_native  # noqa: E402

_FIRST_STEPS = """
import time, numpy as np
t0 = time.perf_counter()
from pullback.frontend import eager_native
from pullback.benchmarks.bench_eager import pb_lenet
step = pb_lenet(np.random.default_rng(0))
times = []
for _ in range(3):
    t = time.perf_counter(); step(); times.append((time.perf_counter() - t) * 1e3)
eager_native.wait()
done = time.perf_counter() - t0
for _ in range(5):
    step()
t = time.perf_counter(); step(); steady = (time.perf_counter() - t) * 1e3
print("first three steps " + ", ".join(f"{x:.1f}" for x in times) +
      f" ms; compiles done {done:.2f} s after start; then {steady:.1f} ms/step")
"""


def first_steps() -> None:
    with tempfile.TemporaryDirectory() as cache:
        for native in ("1", "0"):
            for cold in (True, False):
                if native == "0" and not cold:
                    continue
                env = dict(os.environ, PULLBACK_CACHE_DIR=cache, PULLBACK_EAGER_NATIVE=native)
                out = subprocess.run([sys.executable, "-c", _FIRST_STEPS], env=env, capture_output=True,
                                     text=True, check=True).stdout.strip()
                what = "native off" if native == "0" else f"native on, {'cold' if cold else 'warm'} disk cache"
                print(f"LeNet, {what:<30}: {out}")


def steady(name: str, ours, theirs, iters: int, rounds: int) -> None:
    for _ in range(10):
        ours()
    eager_native.wait()
    for _ in range(5):  # the trials of freshly compiled kernels
        ours()
    on, off, torch_t = [], [], []
    for _ in range(rounds):
        eager_native.set_enabled(True)
        on.append(per_iter_us(ours, iters))
        eager_native.set_enabled(False)
        off.append(per_iter_us(ours, iters))
        eager_native.set_enabled(True)
        if theirs:
            torch_t.append(per_iter_us(theirs, iters))
    a, b = statistics.median(on), statistics.median(off)
    line = f"{name:<24} median us: native on {a:9.1f}, off {b:9.1f} (on/off {a / b:4.2f})"
    if torch_t:
        c = statistics.median(torch_t)
        line += f", torch {c:9.1f}; on/torch {a / c:4.2f}x, off/torch {b / c:4.2f}x"
    print(line)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iters", type=int, default=100, help="MLP steps per round (LeNet: a tenth)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--skip-first-steps", action="store_true")
    args = ap.parse_args()
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        torch = None
    rng = np.random.default_rng(0)
    steady("LeNet Adam b=64", pb_lenet(rng), torch_lenet(torch, rng) if torch else None,
           max(1, args.iters // 10), args.rounds)
    steady("MLP 64-128-128-10 b=32", pb_mlp(rng), torch_mlp(torch, rng) if torch else None, args.iters, args.rounds)
    print(f"native eager stats: {eager_native.stats}")
    if not args.skip_first_steps:
        first_steps()


if __name__ == "__main__":
    main()
