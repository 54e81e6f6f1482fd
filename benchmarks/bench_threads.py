"""Threads (issue 18): compiled programs on 1 and more threads, same process, same run.

Run: `OPENBLAS_NUM_THREADS=1 python -m pullback.benchmarks.bench_threads [--quick]
[--threads 1,2]`.  Each program is compiled twice: without `parallelize-loops`
(`threads=False`, the code before this work) and with it; the threaded code then runs
with each thread count (`threadpool.set_num_threads`).  BLAS threads are whatever
`OPENBLAS_NUM_THREADS` says (printed), so matrix products do not hide the loops.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable

import numpy as np
from pullback.benchmarks.programs import Built, ProgramBuilder, elementwise_chain, mlp_train
from pullback.dialects import pd
from pullback.runtime.native import threadpool
from pullback.runtime.native.compiler import compile_program
from pullback.runtime.native.program import CompiledProgram, execute


def fan_out(n: int = 1 << 20, width: int = 8) -> Built:
    """`loss = sum_k sum(f_k(x))` for `width` branches reading one input (several
    reductions and elementwise loops of 1M elements, forward and backward)."""
    b = ProgramBuilder()
    x = b.data("x", [n], "float32")
    kinds = [pd.TanhOp, pd.SigmoidOp, pd.ExpOp, pd.SquareOp]
    parts = []
    for k in range(width):
        h = b.add(kinds[k % len(kinds)], b.add(pd.ScaleOp, x, scale=0.5 + 0.1 * k, bias=0.0))
        parts.append(b.add(pd.ReduceSumOp, h))
    loss = parts[0]
    for p in parts[1:]:
        loss = b.add(pd.ElementwiseAddOp, loss, p)
    (gx,) = b.backward(loss, [x])
    b.fetch(loss)
    b.fetch(gx)
    return Built(b.module, [loss, gx], {})


def reduce_sum(n: int = 1 << 22) -> Built:
    """`reduce_sum` of 4M floats (one split reduction)."""
    b = ProgramBuilder()
    x = b.data("x", [n], "float32")
    s = b.add(pd.ReduceSumOp, x)
    b.fetch(s)
    return Built(b.module, [s], {})


def _runner(cp: CompiledProgram, feeds: dict[str, np.ndarray], scope: dict[str, np.ndarray]) -> Callable[[], object]:
    """One call of `cp` on these feeds and its own scope."""
    return lambda: execute(cp, feeds, scope)


def bench(name: str, built: Built, feeds: dict[str, np.ndarray], counts: list[int], repeat: int) -> None:
    """Print one program's times: unthreaded compile, then threaded on each count.
    The variants run round-robin (one call each per round, after a warm-up), so a
    change in the machine's load hits them alike; median and best of `repeat`."""
    plain = compile_program(built.module, built.fetch, threads=False)
    par = compile_program(built.module, built.fetch, threads=True)
    variants: list[tuple[str, Callable[[], object], int]] = []
    for label, cp, t in [("no parallelize-loops", plain, 1)] + [
        (f"parallelize-loops, {t} thread(s)", par, t) for t in counts
    ]:
        variants.append((label, _runner(cp, feeds, {k: v.copy() for k, v in built.scope.items()}), t))
    times: dict[str, list[float]] = {label: [] for label, _, _ in variants}
    for r in range(repeat + 2):
        for label, run, t in variants:
            threadpool.set_num_threads(t)
            t0 = time.perf_counter()
            run()
            if r >= 2:
                times[label].append(time.perf_counter() - t0)
    base = float(np.median(times[variants[0][0]]))
    print(f"\n## {name}")
    for label, _, _ in variants:
        med, best = float(np.median(times[label])), min(times[label])
        print(f"  {label:34s} median {med * 1e3:9.3f} ms  best {best * 1e3:9.3f} ms  {base / med:4.2f}x")


def main() -> None:
    """Run the thread benchmarks once and print them."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--threads", default="1,2", help="thread counts to run, e.g. 1,2,4")
    args = ap.parse_args()
    repeat = 7 if args.quick else 30
    counts = [int(t) for t in args.threads.split(",")]
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.2f}, python {platform.python_version()}, numpy {np.__version__}; "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}")
    rng = np.random.default_rng(0)
    n = 1 << 20
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.uniform(0.5, 1.0, n).astype(np.float32)
    bench("elementwise chain fwd+bwd, 1M float32, 20 ops, loss = sum", elementwise_chain(n, 20),
          {"x": x, "y": y}, counts, repeat)
    bench("fan-out: 8 branches of 1M float32, 8 sums, fwd+bwd", fan_out(n, 8), {"x": x}, counts, repeat)
    bench("reduce_sum of 4M float32", reduce_sum(4 * n),
          {"x": rng.standard_normal(4 * n).astype(np.float32)}, counts, repeat)
    mlp = mlp_train((784, 512, 512, 10), 0.01)
    feeds: dict[str, np.ndarray] = {"x": rng.standard_normal((128, 784)).astype(np.float32),
             "label": rng.integers(0, 10, (128, 1)).astype(np.int64)}
    bench("MLP train step 784-512-512-10, batch 128, SGD", mlp, feeds, counts, repeat)


if __name__ == "__main__":
    main()
