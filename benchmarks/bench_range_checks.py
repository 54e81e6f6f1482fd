"""Cost of the compiled backend's run-time range checks (ids, labels): an embedding
(256x20 ids into a 1000x64 table), a matmul and a softmax cross entropy, compiled
with and without the checks, alternating; median of 300 calls each.

    OPENBLAS_NUM_THREADS=1 python -m pullback.benchmarks.bench_range_checks
"""

from __future__ import annotations

import statistics
import time

import numpy as np
import pullback.lowering.convert_pd_to_linalg as L
from pullback.benchmarks.programs import ProgramBuilder
from pullback.dialects import pd
from pullback.runtime.native import compiler as C
from pullback.runtime.native.backend import CompiledBackend


def build() -> tuple[ProgramBuilder, list]:
    """The measured program."""
    b = ProgramBuilder()
    ids = b.data("ids", [-1, 20], "int64")
    lab = b.data("lab", [-1, 1], "int64")
    w = b.param("w", [1000, 64])
    v = b.param("v", [1280, 10])
    e = b.add(pd.LookupTableOp, ids, w)
    h = b.add(pd.MatmulOp, b.add(pd.ReshapeOp, e, shape=[-1, 1280]), v)
    loss = b.add(pd.MeanOp, b.op(pd.SoftmaxWithCrossEntropyOp.make(h, lab)).results[1])
    return b, [loss]


def main() -> None:
    """Print the median call time with and without checks (two rounds each)."""
    rng = np.random.default_rng(0)
    feeds = {"ids": rng.integers(0, 1000, (256, 20)), "lab": rng.integers(0, 10, (256, 1))}
    scope = {"w": rng.standard_normal((1000, 64)).astype(np.float32),
             "v": rng.standard_normal((1280, 10)).astype(np.float32)}
    original = L.build_entry
    results: dict[bool, list[float]] = {}
    try:
        for checks in (True, False, True, False):
            C.build_entry = lambda *a, checks=checks, **k: original(*a, **{**k, "range_checks": checks})
            b, fetch = build()
            backend = CompiledBackend()
            backend.run(b.module, feeds, scope, fetch)
            times = []
            for _ in range(300):
                t0 = time.perf_counter()
                backend.run(b.module, feeds, scope, fetch)
                times.append(time.perf_counter() - t0)
            results.setdefault(checks, []).append(statistics.median(times) * 1e6)
    finally:
        C.build_entry = original
    for checks, ts in results.items():
        print(f"range checks {'on ' if checks else 'off'}: " + ", ".join(f"{t:.1f} us" for t in ts))


if __name__ == "__main__":
    main()
