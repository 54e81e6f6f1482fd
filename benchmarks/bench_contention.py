"""An eager training step on a loaded machine: do BLAS threads degrade gracefully?

    python -m pullback.benchmarks.bench_contention [--load 8] [--steps 200]

The step: an eager 784-256-10 MLP (`nn.Linear`, ReLU, cross-entropy, Adam), batch
128, as a Paddle user writes it.  It is timed in a fresh process per setting, first
on a quiet machine, then with `--load` busy processes (pure Python spinning loops,
one per requested unit of load) started beside it, each setting in its own process,
alternating: (a) pullback's defaults, where BLAS threads follow pullback's setting and
the load (`runtime/native/blas_threads.py`), and (b) `OPENBLAS_NUM_THREADS` set to the CPU
count, which is what numpy's OpenBLAS does when nobody sets it (the behaviour before
`blas_threads`); with `--paddle-python`, (c) Paddle 3.3.1's dygraph with its defaults.  Prints the median step and the 90th percentile of each.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

_WORKER = "--worker"


def _step_times(steps: int) -> list[float]:
    """Seconds per eager step, `steps` of them after 5 warm-ups (with real Paddle when
    this interpreter runs as Paddle's side: `PULLBACK_BENCH_PADDLE=1`)."""
    import importlib

    import numpy as np

    name = "paddle" if os.environ.get("PULLBACK_BENCH_PADDLE") == "1" else "pullback"
    paddle = importlib.import_module(name)
    F = importlib.import_module(f"{name}.nn.functional")

    paddle.disable_static()
    paddle.seed(0)
    if name == "paddle":
        paddle.set_device("cpu")
    model = paddle.nn.Sequential(paddle.nn.Linear(784, 256), paddle.nn.ReLU(), paddle.nn.Linear(256, 10))
    opt = paddle.optimizer.Adam(learning_rate=1e-3, parameters=model.parameters())
    rng = np.random.default_rng(0)
    x = paddle.to_tensor(rng.standard_normal((128, 784)).astype("float32"))
    y = paddle.to_tensor(rng.integers(0, 10, (128, 1)).astype("int64"))
    times = []
    for i in range(steps + 5):
        t = time.perf_counter()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        if i >= 5:
            times.append(time.perf_counter() - t)
    return times


def _spinner() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def _run(env: dict[str, str], steps: int, python: str = sys.executable) -> list[float]:
    # Paddle's side runs this file as a script in Paddle's interpreter (no pullback).
    cmd = [python, __file__] if python != sys.executable else [python, "-m", "pullback.benchmarks.bench_contention"]
    out = subprocess.run([*cmd, _WORKER, str(steps)], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> None:
    """Time both settings quiet and loaded, in alternating fresh processes."""
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] == _WORKER:
        print(json.dumps(_step_times(int(args[1]))))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--load", type=int, default=8, help="busy processes started beside the step")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--paddle-python", help="an interpreter with PaddlePaddle: its eager step too, default threads")
    a = ap.parse_args(args)
    cpus = len(os.sched_getaffinity(0))
    base = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    settings = {"pullback defaults": base, f"OPENBLAS_NUM_THREADS={cpus}": {**base, "OPENBLAS_NUM_THREADS": str(cpus)}}
    print(f"eager 784-256-10 Adam step, batch 128; {cpus} CPUs; load average before {os.getloadavg()[0]:.1f}")
    for load in (0, a.load):
        spinners = [_spinner() for _ in range(load)]
        try:
            got: dict[str, list[float]] = {k: [] for k in settings}
            if a.paddle_python:
                got["Paddle 3.3.1 dygraph"] = []
            for _ in range(a.rounds):
                for name, env in settings.items():
                    got[name] += _run(env, a.steps)
                if a.paddle_python:
                    got["Paddle 3.3.1 dygraph"] += _run({**base, "PULLBACK_BENCH_PADDLE": "1"}, a.steps, a.paddle_python)
        finally:
            for p in spinners:
                p.kill()
        for name, ts in got.items():
            ts.sort()
            print(f"  load {load:2d}  {name:24s} median {1e3 * statistics.median(ts):7.2f} ms"
                  f"   p90 {1e3 * ts[int(0.9 * len(ts))]:7.2f} ms")


if __name__ == "__main__":
    main()
