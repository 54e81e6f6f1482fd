"""Recompute benchmark: peak memory and step time of a deep MLP's forward+backward,
without recompute, with manual checkpoints every k layers, and automatic.

Run: `python -m pullback.benchmarks.bench_recompute [--layers 32 --width 1024
--batch 64 --every 4 --repeat 5]`.  The step computes the loss and the gradients of
every weight and bias (fetched: caller-owned output buffers), so the peak of live
temporaries reported by the compiled program's memory analysis
(`lowering/memory.py`) is the activation (and backward scratch) memory.  Each layer
is `fc` (matmul + bias) + relu + dropout(0.1), so that replays must reproduce masks.
"""

from __future__ import annotations

import argparse
import platform
import time

from typing import Any

import numpy as np
from xdsl.context import Context

import pullback as paddle
import pullback.nn.functional as F
from pullback.passes.recompute import RecomputePass
from pullback.runtime.executor import Executor


def build(layers: int, width: int, mode: str, every: int, budget: str = "auto"):
    """(main, startup, fetch list) of the MLP with the given recompute mode."""
    paddle.seed(2024)  # the same dropout seeds in every mode
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
        x = paddle.static.data("x", [None, width], "float32")
        h, acts = x, []
        for _ in range(layers):
            h = F.dropout(paddle.static.nn.fc(h, width, activation="relu"), p=0.1)
            acts.append(h)
        loss = paddle.mean(h * h)
        if mode == "manual":
            pairs, _ = paddle.static.append_backward(loss, checkpoints=acts[every - 1 :: every])
        else:
            pairs = paddle.static.append_backward(loss)
            if mode == "auto":
                RecomputePass(budget=budget).apply(Context(), main.module)
                main._bump()
    return main, startup, [loss, *(g for _, g in pairs)]


def prepare(layers: int, width: int, batch: int, mode: str, every: int) -> dict[str, Any]:
    """Build and compile one mode (timing the first run), its peak bytes and the
    gradients (to compare); `step` runs it once more."""
    main, startup, fetch = build(layers, width, mode, every)
    exe = Executor(paddle.CPUPlace())
    exe.run(startup)
    scope = paddle.static.global_scope()
    rng = np.random.default_rng(0)
    for p in main.global_block().all_parameters():
        scope[p.name] = (rng.standard_normal(p.shape) / np.sqrt(width)).astype("float32")
    x = rng.standard_normal((batch, width)).astype("float32")
    t0 = time.perf_counter()
    outs = exe.run(main, feed={"x": x}, fetch_list=fetch)
    first = time.perf_counter() - t0
    peak = exe.memory_peak(main, feed={"x": x}, fetch_list=fetch)
    return {
        "compile_s": first,
        "peak_bytes": peak.bytes,
        "n_live": len(peak.live),
        "outs": outs,
        "step": lambda: exe.run(main, feed={"x": x}, fetch_list=fetch),
        "times": [],
    }


def main() -> None:
    """Run the three modes and print a Markdown table."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--every", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    paddle.enable_static()
    print(f"# {platform.processor() or platform.machine()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    print(f"# MLP {args.layers} layers, width {args.width}, batch {args.batch}; fc+relu+dropout")
    rows = {}
    for mode in ("baseline", "manual", "auto"):
        rows[mode] = prepare(args.layers, args.width, args.batch, mode, args.every)
    # Interleaved, so that a change of machine load affects every mode alike.
    for _ in range(args.repeat):
        for r in rows.values():
            t = time.perf_counter()
            r["step"]()
            r["times"].append(time.perf_counter() - t)
    for r in rows.values():
        r["step_s"] = float(np.median(r["times"]))
    base = rows["baseline"]
    for mode in ("manual", "auto"):
        for a, b in zip(rows[mode]["outs"], base["outs"]):  # type: ignore[arg-type]
            if not np.array_equal(a, b):
                raise SystemExit(f"{mode}: gradients differ from the baseline")
    print("| mode | peak temporaries (MiB) | vs baseline | step (ms) | vs baseline | first run incl. compile (s) |")
    print("|---|---|---|---|---|---|")
    for mode, r in rows.items():
        label = f"manual (every {args.every})" if mode == "manual" else mode
        print(
            f"| {label} | {r['peak_bytes'] / 2**20:.1f} | {r['peak_bytes'] / base['peak_bytes']:.2f} | "
            f"{r['step_s'] * 1e3:.1f} | {r['step_s'] / base['step_s']:.2f} | {r['compile_s']:.1f} |"
        )
    print("# gradients of every mode equal the baseline's bit for bit")


if __name__ == "__main__":
    main()
