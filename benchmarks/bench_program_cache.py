"""Memory of the compiled backend's program caches: programs of distinct static shapes
through one Executor.

    python -m pullback.benchmarks.bench_program_cache [--programs 300]

Each program is `mean(relu(2 x + 1))` with `x` of shape `[n, 8]`, `n` = 1, 2, ...
(a new shape, hence a new compiled program, every time).  Reported per block of 100
programs: resident-memory growth and the cache entries (identity + content keys).
The caches keep `DEFAULT_CACHE_SIZE` programs; an evicted program's LLVM module and
context are freed.
"""

from __future__ import annotations

import argparse
import gc

import numpy as np
import pullback as paddle


def rss_mb() -> float:
    """Resident memory of this process in MB (Linux)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def main() -> None:
    """Print the figures RESULTS.md records."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--programs", type=int, default=300)
    args = ap.parse_args()
    paddle.enable_static()
    exe = paddle.static.Executor(paddle.CPUPlace())

    def run(n: int) -> None:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
            x = paddle.static.data("x", [n, 8])
            y = paddle.mean(paddle.nn.functional.relu(x * 2.0 + 1.0))
        exe.run(main, feed={"x": np.ones((n, 8), np.float32)}, fetch_list=[y])

    n = 1
    while n <= args.programs:
        before = rss_mb()
        start = n
        for _ in range(100):
            run(n)
            n += 1
        gc.collect()
        info = exe.backend.cache_info()
        print(f"programs {start}-{n - 1}: +{rss_mb() - before:.1f} MB resident, "
              f"entries {info['identity']} + {info['content']} (bound {info['size']})")
    print(f"resident: {rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
