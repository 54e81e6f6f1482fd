"""Recompute benchmark: peak memory and step time of a deep MLP's (or ResNet-18's)
forward+backward, without recompute, with manual checkpoints every k layers (every
k residual blocks), and automatic.

Run: `python -m pullback.benchmarks.bench_recompute [--layers 32 --width 1024
--batch 64 --every 4 --repeat 5]`.  The step computes the loss and the gradients of
every weight and bias (fetched: caller-owned output buffers), so the peak of live
temporaries reported by the compiled program's memory analysis
(`lowering/memory.py`) is the activation (and backward scratch) memory.  Each layer
is `fc` (matmul + bias) + relu + dropout(0.1), so that replays must reproduce masks.
`--model resnet18 --batch 32` runs `paddle.vision.models.resnet18(num_classes=10)` on
3x32x32 images (batch norm in training mode, softmax cross-entropy), checkpointing
the outputs of every k-th of its 8 residual blocks.
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
        pairs = _backward(main, loss, mode, acts[every - 1 :: every], budget)
    return main, startup, [loss, *(g for _, g in pairs)]


def _backward(main: Any, loss: Any, mode: str, checkpoints: list[Any], budget: str) -> list[Any]:
    """`append_backward` as the mode asks: plain, with manual checkpoints, or plain
    followed by the automatic `recompute` pass; returns the (param, grad) pairs."""
    if mode == "manual":
        pairs, _ = paddle.static.append_backward(loss, checkpoints=checkpoints)
        return pairs
    pairs = paddle.static.append_backward(loss)
    if mode == "auto":
        RecomputePass(budget=budget).apply(Context(), main.module)
        main._bump()
    return pairs


def build_resnet(mode: str, every: int, budget: str = "auto"):
    """(main, startup, fetch list) of a ResNet-18 step with the given recompute mode."""
    paddle.seed(2024)
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
        x = paddle.static.data("x", [None, 3, 32, 32], "float32")
        label = paddle.static.data("label", [None, 1], "int64")
        net = paddle.vision.models.resnet18(num_classes=10)
        h = net.maxpool(net.relu(net.bn1(net.conv1(x))))
        blocks = []
        for stage in (net.layer1, net.layer2, net.layer3, net.layer4):
            for block in stage:
                h = block(h)
                blocks.append(h)
        logits = net.fc(paddle.flatten(net.avgpool(h), 1))
        loss = paddle.mean(F.cross_entropy(logits, label))
        pairs = _backward(main, loss, mode, blocks[every - 1 :: every], budget)
    return main, startup, [loss, *(g for _, g in pairs)]


def prepare(model: str, layers: int, width: int, batch: int, mode: str, every: int) -> dict[str, Any]:
    """Build and compile one mode (timing the first run), its peak bytes and the
    gradients (to compare); `step` runs it once more."""
    main, startup, fetch = build(layers, width, mode, every) if model == "mlp" else build_resnet(mode, every)
    exe = Executor(paddle.CPUPlace())
    exe.run(startup)
    scope = paddle.static.global_scope()
    rng = np.random.default_rng(0)
    if model == "mlp":
        for p in main.global_block().all_parameters():
            scope[p.name] = (rng.standard_normal(p.shape) / np.sqrt(width)).astype("float32")
        feed = {"x": rng.standard_normal((batch, width)).astype("float32")}
    else:  # the start-up program's initial values (seeded alike in every mode)
        feed = {"x": rng.standard_normal((batch, 3, 32, 32)).astype("float32"),
                "label": rng.integers(0, 10, (batch, 1))}
    t0 = time.perf_counter()
    outs = exe.run(main, feed=feed, fetch_list=fetch)
    first = time.perf_counter() - t0
    peak = exe.memory_peak(main, feed=feed, fetch_list=fetch)
    return {
        "compile_s": first,
        "peak_bytes": peak.bytes,
        "n_live": len(peak.live),
        "outs": outs,
        "step": lambda: exe.run(main, feed=feed, fetch_list=fetch),
        "times": [],
    }


def main() -> None:
    """Run the three modes and print a Markdown table."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", choices=["mlp", "resnet18"], default="mlp")
    ap.add_argument("--layers", type=int, default=32)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--every", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    paddle.enable_static()
    print(f"# {platform.processor() or platform.machine()}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    if args.model == "mlp":
        print(f"# MLP {args.layers} layers, width {args.width}, batch {args.batch}; fc+relu+dropout")
    else:
        print(f"# ResNet-18 (10 classes), batch {args.batch} of 3x32x32, checkpoints every {args.every} blocks")
    rows = {}
    for mode in ("baseline", "manual", "auto"):
        rows[mode] = prepare(args.model, args.layers, args.width, args.batch, mode, args.every)
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
            # The MLP's replays repeat the same ops bit for bit; ResNet's batch-norm
            # and convolution replays may round differently in the last place.
            same = np.array_equal(a, b) if args.model == "mlp" else np.allclose(a, b, rtol=1e-4, atol=1e-6)
            if not same:
                raise SystemExit(f"{mode}: gradients differ from the baseline")
    print("| mode | peak temporaries (MiB) | vs baseline | step (ms) | vs baseline | first run incl. compile (s) |")
    print("|---|---|---|---|---|---|")
    for mode, r in rows.items():
        label = f"manual (every {args.every})" if mode == "manual" else mode
        print(
            f"| {label} | {r['peak_bytes'] / 2**20:.1f} | {r['peak_bytes'] / base['peak_bytes']:.2f} | "
            f"{r['step_s'] * 1e3:.1f} | {r['step_s'] / base['step_s']:.2f} | {r['compile_s']:.1f} |"
        )
    print("# gradients of every mode equal the baseline's" + (" bit for bit" if args.model == "mlp" else " (rtol 1e-4)"))


if __name__ == "__main__":
    main()
