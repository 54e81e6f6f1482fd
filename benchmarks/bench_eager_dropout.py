"""Eager training steps with `nn.Dropout` and exact GELU: backward-plan cache hits and
step time, plus the `erf` kernel alone (against the former `np.vectorize(math.erf)`).

    OPENBLAS_NUM_THREADS=1 python -m pullback.benchmarks.bench_eager_dropout [--steps 300]

The model is Linear(64, 128) - GELU(exact) - Dropout(0.5) - Linear(128, 10), batch 32,
mean squared error, SGD.  A dropout layer draws a new mask every step; the mask's seed
is an operand of the recorded op, so every step has the same graph shape and reuses
one backward plan.  Reported: plan-cache hits and misses over the steps, the median
step time, and the median time of the `erf` kernel on 98,304 float32 elements.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import pullback as paddle
from pullback.frontend import autograd
from pullback.runtime.kernels import elementwise as kernels


def train(steps: int) -> tuple[dict[str, int], list[float]]:
    """Run `steps` training steps; returns the plan-cache statistics and step times."""
    paddle.disable_static()
    paddle.seed(0)
    nn = paddle.nn
    model = nn.Sequential(nn.Linear(64, 128), nn.GELU(), nn.Dropout(0.5), nn.Linear(128, 10))
    opt = paddle.optimizer.SGD(learning_rate=0.01, parameters=model.parameters())
    rng = np.random.default_rng(0)
    x = paddle.to_tensor(rng.standard_normal((32, 64)).astype(np.float32))
    t = paddle.to_tensor(rng.standard_normal((32, 10)).astype(np.float32))
    autograd.clear_cache()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        loss = paddle.mean((model(x) - t) ** 2)
        loss.backward()
        opt.step()
        opt.clear_grad()
        times.append(time.perf_counter() - t0)
    return autograd.cache_info(), times


def erf_times(n: int = 98_304, reps: int = 20) -> tuple[float, float]:
    """Median seconds of the interpreter's `erf` on `n` float32 values, and of the
    former kernel (`np.vectorize(math.erf)`), interleaved in one run."""
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    scalar = np.vectorize(math.erf, otypes=[np.float64])
    ours, old = [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        kernels.erf(x)
        t1 = time.perf_counter()
        scalar(x).astype(np.float32)
        t2 = time.perf_counter()
        ours.append(t1 - t0)
        old.append(t2 - t1)
    return statistics.median(ours), statistics.median(old)


def main() -> None:
    """Print the figures RESULTS.md records."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=300)
    args = ap.parse_args()
    info, times = train(args.steps)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores")
    print(f"plan cache over {args.steps} steps: {info['hits']} hits, {info['misses']} misses")
    print(f"median step: {statistics.median(times) * 1e3:.3f} ms "
          f"(last 100: {statistics.median(times[-100:]) * 1e3:.3f} ms)")
    ours, old = erf_times()
    print(f"erf kernel, 98304 float32: {ours * 1e3:.3f} ms; np.vectorize(math.erf): "
          f"{old * 1e3:.3f} ms ({old / ours:.1f}x)")


if __name__ == "__main__":
    main()
