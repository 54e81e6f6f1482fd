"""PaddlePaddle's side of `run_all`'s workloads, run in Paddle's own interpreter.

    /path/to/paddle-venv/bin/python benchmarks/paddle_peer.py WORKLOAD --steps K [--warmup W] [--tiny]

prints one line `RUN_ALL_RESULT {json}`, as `run_all --worker` does (WORKLOAD: mlp,
resnet18, lstm, transformer, ad-build in static mode; issue 33's dygraph workloads
eager-lenet, eager-resnet18, eager-transformer, eager-lstm; `paddle.Model.fit` epochs
fit-lenet, fit-mlp (dynamic mode) and fit-lenet-static, fit-mlp-static).  It imports only numpy and paddle: Paddle's
interpreter need not have pullback installed.

Where a benchmark builds its model with the Paddle API alone (`bench_resnet.build_ours`,
`bench_seq`'s models, `ad_build.build_chain`), this runs that very code on real Paddle:
the benchmark file is loaded by path with `pullback` standing for `paddle`
(`_alias_pullback_to_paddle`), so both sides run one definition of the model.  The MLP
is written here (ours is built from `pd` ops, `programs.mlp_train`).  Every program runs
in static mode on Paddle's CPU executor, Paddle's default (PIR) since 3.0, except
issue 33's eager and `fit` workloads (`eager_workloads.py`, `bench_seq.eager_step`),
which run in dygraph mode (the `fit-*-static` ones build their Model in static mode).
Every result also gives the first three calls' seconds of this fresh process
(`first_steps_s`) and how long after its start the step was built (`ready_s`).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

STARTED = time.perf_counter()
"""When this process began its work (before paddle's import)."""
HERE = Path(__file__).resolve().parent
MARKER = "RUN_ALL_RESULT "
"""The prefix of the result line (libraries may print other lines)."""


def _alias_pullback_to_paddle(paddle: Any) -> None:
    """Make `import pullback`, `pullback.nn.functional`, `pullback.vision.models` and
    `pullback.frontend.core` resolve to Paddle's modules, so that benchmark files
    written against our Paddle-compatible API load unchanged.  `disable_static` is
    a no-op: this process only runs static programs (bench_seq's `static_step` leaves
    static mode once built, which Paddle's executor then refuses)."""
    sys.modules["pullback"] = paddle
    sys.modules["pullback.nn"] = paddle.nn
    sys.modules["pullback.nn.functional"] = paddle.nn.functional
    sys.modules["pullback.vision"] = paddle.vision
    sys.modules["pullback.vision.models"] = paddle.vision.models
    core = types.ModuleType("pullback.frontend.core")
    core.enable_static = paddle.enable_static  # type: ignore[attr-defined]
    core.disable_static = lambda: None  # type: ignore[attr-defined]
    frontend = types.ModuleType("pullback.frontend")
    frontend.core = core  # type: ignore[attr-defined]
    sys.modules["pullback.frontend"] = frontend
    sys.modules["pullback.frontend.core"] = core


def _load(name: str) -> Any:
    """The benchmark module `name` of this folder, loaded by path."""
    spec = importlib.util.spec_from_file_location(f"_paddle_peer_{name}", HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _static_step(paddle: Any, main: Any, startup: Any, feed: dict[str, Any], loss: Any) -> Callable[[], object]:
    """One run of `main` on Paddle's CPU executor, after its startup program."""
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    return lambda: exe.run(main, feed=feed, fetch_list=[loss])


def mlp_step(paddle: Any, tiny: bool) -> Callable[[], object]:
    """The MLP step of `programs.mlp_train` in Paddle's API: 784-512-512-10 (relu),
    batch 128, softmax cross-entropy, mean, SGD 0.01."""
    sizes, batch = ((32, 16, 10), 8) if tiny else ((784, 512, 512, 10), 128)
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        h = paddle.static.data("x", [batch, sizes[0]], "float32")
        label = paddle.static.data("label", [batch, 1], "int64")
        for i, n in enumerate(sizes[1:]):
            h = paddle.static.nn.fc(h, n, activation="relu" if i < len(sizes) - 2 else None)
        loss = paddle.mean(paddle.nn.functional.cross_entropy(h, label))
        paddle.optimizer.SGD(learning_rate=0.01).minimize(loss)
    rng = np.random.default_rng(0)
    feed = {"x": rng.standard_normal((batch, sizes[0])).astype(np.float32),
            "label": rng.integers(0, sizes[-1], (batch, 1)).astype(np.int64)}
    return _static_step(paddle, main, startup, feed, loss)


def resnet18_step(paddle: Any, tiny: bool) -> Callable[[], object]:
    """`bench_resnet.build_ours` (ResNet-18, batch 32 of 3x32x32, Momentum) on Paddle."""
    batch = 2 if tiny else 32
    main, startup, loss, (xn, yn) = _load("bench_resnet").build_ours(batch, 0.01)
    rng = np.random.default_rng(0)
    feed = {xn: rng.standard_normal((batch, 3, 32, 32)).astype(np.float32),
            yn: rng.integers(0, 10, (batch, 1)).astype(np.int64)}
    return _static_step(paddle, main, startup, feed, loss)


def sequence_step(paddle: Any, kind: str, tiny: bool) -> Callable[[], object]:
    """`bench_seq.static_step` (Transformer or LSTM, AdamW) on Paddle."""
    bench_seq = _load("bench_seq")
    paddle.seed(1)
    dims = (bench_seq.QUICK_CASES if tiny else bench_seq.CASES)[kind][0]
    step, _, _ = bench_seq.static_step(kind, dims, bench_seq.seq_input(kind, tiny))
    return step  # type: ignore[no-any-return]


EAGER_WORKLOADS = ("eager-lenet", "eager-resnet18", "eager-transformer", "eager-lstm")
FIT_WORKLOADS = ("fit-lenet", "fit-mlp", "fit-lenet-static", "fit-mlp-static")


def eager_step(paddle: Any, workload: str, tiny: bool) -> tuple[Callable[[], object], int]:
    """(one call, training steps per call) of an issue-33 workload in dygraph mode
    (`fit-*-static`: a Model built in static mode), from the same definitions as
    pullback's side (`eager_workloads`, `bench_seq.eager_step`)."""
    models = _load("eager_workloads")
    if workload.startswith("fit-"):
        net = workload.split("-")[1]
        batches = models.TINY_FIT_BATCHES if tiny else models.FIT_BATCHES
        return models.fit_epoch(paddle, net, workload.endswith("-static"), batches,
                                4 if tiny else models.FIT_BATCH), batches
    if workload == "eager-lenet":
        return models.lenet_step(paddle, np.random.default_rng(0), 4 if tiny else models.LENET_BATCH), 1
    if workload == "eager-resnet18":
        return models.resnet18_step(paddle, 2 if tiny else models.RESNET_BATCH), 1
    bench_seq = _load("bench_seq")
    kind = workload[len("eager-"):]
    paddle.seed(1)
    dims = (bench_seq.QUICK_CASES if tiny else bench_seq.CASES)[kind][0]
    return bench_seq.eager_step(kind, dims, bench_seq.seq_input(kind, tiny)), 1


AD_SIZES = (1000, 5000, 10000)
"""As `run_all`'s; Paddle's PIR `append_backward` grows quadratically (1,000 ops 0.6 s,
2,000 ops 2.5 s on the 2-vCPU guest), so the driver may ask for fewer (`--sizes`)."""


def measure(workload: str, steps: int, warmup: int, tiny: bool, sizes: list[int]) -> dict[str, Any]:
    """The side's result: step times, or `append_backward` seconds by chain length."""
    import paddle

    _alias_pullback_to_paddle(paddle)
    threads = int(os.environ.get("RUN_ALL_THREADS", "1"))
    set_threads = getattr(paddle.base.core, "set_num_threads", None)
    if set_threads is not None:
        set_threads(threads)
    if workload in EAGER_WORKLOADS or workload in FIT_WORKLOADS:
        paddle.set_device("cpu")
        step, per_call = eager_step(paddle, workload, tiny)
        return _time(step, steps, warmup, per_call)
    paddle.enable_static()
    if workload == "ad-build":
        ad_build = _load("ad_build")
        # `steps` is the builds per size (the best kept), one above 5,000 ops as `ad_build` does.
        return {"values": {str(n): ad_build.time_append_backward(n, steps if n <= 5000 else 1) for n in sizes}}
    if workload == "mlp":
        step = mlp_step(paddle, tiny)
    elif workload == "resnet18":
        step = resnet18_step(paddle, tiny)
    elif workload in ("lstm", "transformer"):
        step = sequence_step(paddle, workload, tiny)
    else:
        raise ValueError(f"no Paddle side for workload {workload!r}")
    return _time(step, steps, warmup)


def _time(step: Callable[[], object], steps: int, warmup: int, per_call: int = 1) -> dict[str, Any]:
    """`steps` timed calls after `warmup` untimed ones (at least the first three,
    whose seconds are kept), each divided by the training steps in a call."""
    ready = time.perf_counter() - STARTED
    firsts = []
    for _ in range(max(3, warmup)):
        t = time.perf_counter()
        step()
        firsts.append((time.perf_counter() - t) / per_call)
    times = []
    for _ in range(steps):
        t = time.perf_counter()
        step()
        times.append((time.perf_counter() - t) / per_call)
    return {"times_s": times, "first_s": firsts[0], "first_steps_s": firsts[:3], "ready_s": ready}


def main(argv: list[str] | None = None) -> None:
    """Measure one workload's Paddle side and print the result line."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("workload")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--tiny", action="store_true")
    ap.add_argument("--sizes", type=int, nargs="*", default=list(AD_SIZES))
    args = ap.parse_args(argv)
    out: dict[str, Any] = {"workload": args.workload, "pid": os.getpid()}
    if hasattr(os, "sched_getaffinity"):
        out["cores"] = sorted(os.sched_getaffinity(0))
    try:
        side = measure(args.workload, args.steps, args.warmup, args.tiny, args.sizes)
    except ImportError as e:
        side = {"skipped": f"paddle not installed in {sys.executable}" if e.name == "paddle" else f"{e}"}
    except Exception as e:  # noqa: BLE001 - reported in the table
        side = {"error": f"{type(e).__name__}: {e}"[:300]}
    out["sides"] = {"paddle": side}
    paddle = sys.modules.get("paddle")
    if paddle is not None:
        out["versions"] = {"paddle": str(paddle.__version__), "python": sys.version.split()[0]}
        out["threads"] = {"paddle": os.environ.get("RUN_ALL_THREADS", "default"),
                          "paddle OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "unset")}
    try:
        out["os_threads"] = len(os.listdir("/proc/self/task"))
    except OSError:  # not Linux
        pass
    print(MARKER + json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
