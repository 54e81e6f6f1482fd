"""Compile time and its effect on run time (issue 18): each program compiled with
the settings of `VARIANTS` (the module whole on one LLVM thread before; streamed
function by function into chunks compiled on `compile_threads()` threads now,
`lowering/pipeline.py`'s `translate_streamed`, `runtime/native/llvm_chunks.py`),
phase by phase; then both
compiled programs timed interleaved in one process, so the run-time ratio is a
same-run figure.

Run: `python -m pullback.benchmarks.bench_compile [--repeat 20] [--resnet]`.
The disk cache is off in this process (`PULLBACK_CACHE=0`): every compile is real.
`--resnet` adds a 4-block residual conv net (batch 2, 16x16); the full ResNet-18
step is `--resnet18` (minutes per compile).
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import time
from collections.abc import Callable
from typing import Any

import numpy as np

os.environ["PULLBACK_CACHE"] = "0"

from pullback.benchmarks.programs import elementwise_chain, mlp_train  # noqa: E402
from pullback.runtime.native.compiler import compile_program  # noqa: E402
from pullback.runtime.native.program import CompiledProgram, execute  # noqa: E402

VARIANTS: dict[str, dict[str, Any]] = {"before": {"split_llvm": False}, "after": {}}
"""The settings compared: the whole module lowered, then optimized and emitted on one
thread, and the default now (lowered function by function after `outline-segments`,
each function's chunk compiled on `compile_threads()` threads while the next ones
are lowered: `PULLBACK_COMPILE_THREADS`, else the idle CPUs).
(The earlier comparison, the xDSL route to LLVM IR against the direct translation,
was `{"translate": "xdsl", "dedupe": False}`: benchmarks/RESULTS.md.)"""

def summary(prog: CompiledProgram) -> dict[str, float]:
    """Seconds in xDSL (lowering and passes), the last step to LLVM IR text (the direct
    translation, or xDSL's converter), LLVM (wall clock), and LLVM's optimize and
    codegen added over its threads, in all."""
    assert prog.times is not None
    out = {"xdsl": 0.0, "to-ir": 0.0, "llvm": 0.0, "llvm-optimize": 0.0, "llvm-codegen": 0.0,
           "total": prog.compile_seconds}
    for name, s in prog.times.threads:
        for step in ("llvm-optimize", "llvm-codegen"):
            if name.startswith(step):
                out[step] += s
    for name, s in prog.times.phases:
        if name in ("llvm", "llvm-split"):
            out["llvm"] += s
        elif name in ("translate-to-llvmlite", "to-llvm-ir"):
            out["to-ir"] += s
        elif not name.startswith(("llvm-", "jit-", "disk-", "key")):
            out["xdsl"] += s
    return out


def interleaved(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Median seconds per call of each function, timed round-robin after warm-ups."""
    for f in fns.values():
        f()
        f()
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(repeat):
        for k, f in fns.items():
            t = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t)
    return {k: float(np.median(v)) for k, v in times.items()}


Bench = tuple[str, Any, list[Any], dict[str, Any], dict[str, Any]]
"""(name, module, fetches, feeds, scope) of one benchmarked program."""


def programs(resnet: bool) -> list[Bench]:
    """(name, module, fetches, feeds, scope) of each benchmarked program."""
    from pullback.benchmarks.bench_cpu import cnn_train

    rng = np.random.default_rng(0)
    out: list[Bench] = []
    mlp = mlp_train((784, 512, 512, 10), 0.01)
    out.append(("MLP 784-512-512-10 step, batch 128", mlp.module, mlp.fetch,
                {"x": rng.standard_normal((128, 784)).astype(np.float32),
                 "label": rng.integers(0, 10, (128, 1)).astype(np.int64)}, mlp.scope))
    cnn = cnn_train(lr=0.01)
    out.append(("CNN step (two 3x3 convs), batch 32", cnn.module, cnn.fetch,
                {"img": rng.standard_normal((32, 1, 28, 28)).astype(np.float32),
                 "label": rng.integers(0, 10, (32, 1)).astype(np.int64)}, cnn.scope))
    chain = elementwise_chain(1 << 20, 20)
    out.append(("elementwise chain fwd+bwd, 1M f32", chain.module, chain.fetch,
                {"x": rng.standard_normal(1 << 20).astype(np.float32),
                 "y": rng.standard_normal(1 << 20).astype(np.float32)}, {}))
    if resnet:
        out.append(residual_net())
    return out


def residual_net() -> Bench:
    """Conv-BN-ReLU and four ResNet basic blocks (8 channels), batch 2 of 3x16x16,
    cross-entropy, Momentum: a ResNet-shaped step small enough to compile twice."""
    import pullback as paddle
    import pullback.nn.functional as F
    from pullback.frontend.vision.models.resnet import BasicBlock

    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    main.random_seed = startup.random_seed = 1
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("image", [2, 3, 16, 16], "float32")
        y = paddle.static.data("label", [2, 1], "int64")
        nn = paddle.nn
        net = nn.Sequential(nn.Conv2D(3, 8, 3, padding=1), nn.BatchNorm2D(8), nn.ReLU(),
                            *[BasicBlock(8, 8) for _ in range(4)],
                            nn.AdaptiveAvgPool2D(1), nn.Flatten(), nn.Linear(8, 10))
        loss = paddle.mean(F.cross_entropy(net(x), y))
        paddle.optimizer.Momentum(learning_rate=0.01, momentum=0.9).minimize(loss)
    from pullback.runtime.executor import resolve_fetch

    scope = paddle.static.Scope()
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    with paddle.static.scope_guard(scope):
        exe.run(startup)
    entry = exe._prepared(main, [resolve_fetch(main, loss)])
    paddle.disable_static()
    rng = np.random.default_rng(0)
    feeds = {"image": rng.standard_normal((2, 3, 16, 16)).astype(np.float32),
             "label": rng.integers(0, 10, (2, 1)).astype(np.int64)}
    return "residual conv net (4 basic blocks), batch 2", entry.module, list(entry.fetches), feeds, dict(scope)


def resnet18_step(batch: int = 32) -> Bench:
    """`bench_resnet`'s ResNet-18 training step (batch 32 of 3x32x32, Momentum)."""
    import pullback as paddle
    from pullback.benchmarks.bench_resnet import build_ours
    from pullback.runtime.executor import resolve_fetch

    main, startup, loss, (xn, yn) = build_ours(batch, 0.01)
    scope = paddle.static.Scope()
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    with paddle.static.scope_guard(scope):
        exe.run(startup)
    entry = exe._prepared(main, [resolve_fetch(main, loss)])
    paddle.disable_static()
    rng = np.random.default_rng(0)
    feeds = {xn: rng.standard_normal((batch, 3, 32, 32)).astype(np.float32),
             yn: rng.integers(0, 10, (batch, 1)).astype(np.int64)}
    return "ResNet-18 step, batch 32 of 3x32x32", entry.module, list(entry.fetches), feeds, dict(scope)


def main() -> None:
    """Compile each program both ways, print phase times and the run-time ratio."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--resnet", action="store_true", help="add the residual conv net")
    ap.add_argument("--resnet18", action="store_true",
                    help="only the full ResNet-18 step (minutes of compiling)")
    args = ap.parse_args()
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cpus, "
          f"load {os.getloadavg()[0]:.1f}, {time.strftime('%Y-%m-%d %H:%M')}")
    for name, module, fetches, feeds, scope in [resnet18_step()] if args.resnet18 else programs(args.resnet):
        compiled = {k: compile_program(module, fetches, **v) for k, v in VARIANTS.items()}
        print(f"\n{name}")
        for k, prog in compiled.items():
            s = summary(prog)
            print(f"  compile {k:<6}: {s['total']:7.2f} s  (xDSL {s['xdsl']:.2f}, to IR {s['to-ir']:.2f}, "
                  f"LLVM {s['llvm']:.2f} wall once lowered; optimize {s['llvm-optimize']:.2f} + codegen "
                  f"{s['llvm-codegen']:.2f} thread-seconds in all)")
        states = {k: {n: np.array(a) for n, a in scope.items()} for k in compiled}
        calls: dict[str, Callable[[], object]] = {
            k: functools.partial(execute, p, feeds, states[k]) for k, p in compiled.items()}
        run = interleaved(calls, args.repeat)
        ratio = run["after"] / run["before"]
        print(f"  run: before {1e3 * run['before']:.3f} ms, after {1e3 * run['after']:.3f} ms, "
              f"after/before {ratio:.2f}x")


if __name__ == "__main__":
    main()
