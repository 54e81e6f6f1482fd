"""A recurrent network over a sequence written with `paddle.static.nn.while_loop`:
one training step (forward loop, reverse loop through the stacks, SGD) on the
compiled backend (`lowering/control.py`: `scf.while`, heap stacks) against the
interpreter, and against the same network unrolled in Python (compiled), in one run.

    OPENBLAS_NUM_THREADS=1 python -m pullback.benchmarks.bench_while [--steps T] [--repeat N] [--quick]

The cell is `h_t = tanh(x_t W + h_{t-1} U + b)` with `x_t = gather(seq, t)` for the
loop counter `t`; the loss is the mean squared error of `h_T V` against a label.
Each figure is the median seconds per step after two warm-ups; the first run's time
(lowering, LLVM O3 and JIT) is printed apart.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from collections.abc import Callable
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import pullback as paddle


def timeit(fn: Callable[[], object], repeat: int) -> float:
    """Median seconds per call after two warm-up calls."""
    fn()
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def build_rnn(steps: int, batch: int, hidden: int, unrolled: bool) -> tuple[Any, Any, Any]:
    """The training program (static mode must be on): returns (main, startup, loss)."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
        seq = paddle.static.data("seq", [steps, batch, hidden], "float32")
        label = paddle.static.data("label", [batch, 1], "float32")

        def param(name: str, shape: list[int]) -> Any:
            attr = paddle.ParamAttr(name=name, initializer=paddle.nn.initializer.Uniform(-0.3, 0.3))
            return paddle.static.create_parameter(shape, "float32", attr=attr)

        W, U = param("W", [hidden, hidden]), param("U", [hidden, hidden])
        b, V = param("b", [hidden]), param("V", [hidden, 1])
        h0 = paddle.zeros([batch, hidden], dtype="float32")

        def cell(x_t: Any, h: Any) -> Any:
            return paddle.tanh(paddle.matmul(x_t, W) + paddle.matmul(h, U) + b)

        if unrolled:
            h = h0
            for t in range(steps):
                h = cell(seq[t], h)
        else:

            def body(t: Any, h: Any) -> list[Any]:
                x_t = paddle.reshape(paddle.gather(seq, t, axis=0), [batch, hidden])
                return [t + 1, cell(x_t, h)]

            t0 = paddle.full([1], 0, dtype="int64")
            _, h = paddle.static.nn.while_loop(lambda t, h: t < steps, body, [t0, h0])
        pred = paddle.matmul(h, V)
        loss = paddle.mean((pred - label) * (pred - label))
        paddle.optimizer.SGD(learning_rate=0.1).minimize(loss)
    return main, startup, loss


def measure(steps: int, batch: int, hidden: int, repeat: int, unrolled_too: bool) -> list[tuple[str, float, float]]:
    """(variant, seconds per step, first-run seconds) per variant."""
    rng = np.random.default_rng(0)
    feed = {
        "seq": rng.normal(size=(steps, batch, hidden)).astype(np.float32),
        "label": rng.normal(size=(batch, 1)).astype(np.float32),
    }
    rows = []
    variants = [("while_loop, compiled", False, "compiled"), ("while_loop, interpreter", False, "interpreter")]
    if unrolled_too:
        variants.append(("unrolled in Python, compiled", True, "compiled"))
    paddle.enable_static()
    try:
        for label, unrolled, backend in variants:
            main, startup, loss = build_rnn(steps, batch, hidden, unrolled)
            exe = paddle.static.Executor(paddle.CPUPlace(), backend=backend)
            with paddle.static.scope_guard(paddle.static.Scope()):
                exe.run(startup)
                t = time.perf_counter()
                exe.run(main, feed=feed, fetch_list=[loss])
                first = time.perf_counter() - t
                per_step = timeit(lambda: exe.run(main, feed=feed, fetch_list=[loss]), repeat)  # noqa: B023
            rows.append((label, per_step, first))
    finally:
        paddle.disable_static()
    return rows


def main() -> None:
    """Print the table (markdown) for benchmarks/RESULTS.md."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--steps", type=int, default=16)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="tiny shapes (checks the script runs)")
    ap.add_argument("--no-unrolled", action="store_true", help="skip the unrolled program (slow to compile)")
    args = ap.parse_args()
    if args.quick:
        args.steps, args.batch, args.hidden, args.repeat = 4, 4, 8, 3
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
          f"load {os.getloadavg()[0]:.1f}; steps {args.steps}, batch {args.batch}, hidden {args.hidden}")
    rows = measure(args.steps, args.batch, args.hidden, args.repeat, not args.no_unrolled)
    base = rows[0][1]
    print("| program | per step | vs while_loop compiled | first run (compile) |")
    print("|---|---|---|---|")
    for label, per_step, first in rows:
        print(f"| {label} | {per_step * 1e3:.2f} ms | {per_step / base:.2f}x | {first:.1f} s |")


if __name__ == "__main__":
    main()
