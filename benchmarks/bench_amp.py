"""Training steps under bfloat16 mixed precision against float32, in one run: the MLP
784-512-512-10 (batch 128, Adam, cross entropy) and ResNet-18 (batch 32, 3x32x32,
Momentum), each as

* pullback's static program, compiled, in float32 and under
  `paddle.amp.auto_cast(dtype='bfloat16')` (O1: matrix products and convolutions in
  bfloat16 from float32 master parameters; on CPUs with AVX512-BF16 they run on
  `runtime/native/bf16_gemm.py`, elsewhere in float32 on bfloat16 values);
* pullback eager, float32 and bfloat16 O2 (`paddle.amp.decorate`), MLP only;
* PyTorch eager, float32 and `torch.autocast('cpu', dtype=torch.bfloat16)`;
* Paddle 3.3.1's static CPU executor, float32 and under `paddle.amp.auto_cast`
  (`--paddle-python`, a separate process: this very file's model code runs there with
  `paddle` for `pullback`).

It also runs each of our models 20 steps from the same start in both precisions and
reports how far the bfloat16 loss curve is from float32's (relative to the loss).

    python -m pullback.benchmarks.bench_amp [--steps N] [--only mlp|resnet18]
        [--paddle-python /path/to/paddle-venv/bin/python]

Every side runs one thread (set here, before the libraries start); pin the process
with `taskset -c N` for figures to record.  PyTorch is imported only here.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "PULLBACK_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

BATCH, DIMS = 128, (784, 512, 512, 10)
RESNET_BATCH = 32
MARKER = "BENCH_AMP_RESULT "


def _median_step(step: Callable[[], object], steps: int, warmup: int = 3) -> float:
    for _ in range(warmup):
        step()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _mlp_data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.standard_normal((BATCH, DIMS[0])).astype(np.float32), rng.integers(0, 10, (BATCH, 1)).astype(np.int64)


def _resnet_data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return (rng.standard_normal((RESNET_BATCH, 3, 32, 32)).astype(np.float32),
            rng.integers(0, 10, (RESNET_BATCH, 1)).astype(np.int64))


def static_step(paddle: Any, model: str, dtype: str | None) -> Callable[[], float]:
    """One training step of `model` ('mlp' or 'resnet18') as a static program on
    `paddle`'s CPU executor (pullback's or Paddle's: Paddle API only), forward under
    `auto_cast(dtype)` when `dtype` is given; the step returns the loss."""
    paddle.enable_static()
    main, start = paddle.static.Program(), paddle.static.Program()
    main.random_seed = start.random_seed = 1
    x, y = _mlp_data() if model == "mlp" else _resnet_data()
    with paddle.static.program_guard(main, start):
        xv = paddle.static.data("x", [None, *x.shape[1:]], "float32")
        yv = paddle.static.data("y", [None, 1], "int64")
        with paddle.amp.auto_cast(enable=dtype is not None, dtype=dtype or "bfloat16"):
            if model == "mlp":
                h = xv
                for d in DIMS[1:-1]:
                    h = paddle.nn.functional.relu(paddle.static.nn.fc(h, d))
                out = paddle.static.nn.fc(h, DIMS[-1])
            else:
                out = paddle.vision.models.resnet18(num_classes=10)(xv)
        loss = paddle.mean(paddle.nn.functional.cross_entropy(paddle.cast(out, "float32"), yv))
        if model == "mlp":
            paddle.optimizer.Adam(1e-3).minimize(loss)
        else:
            paddle.optimizer.Momentum(0.01, 0.9).minimize(loss)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(start)
    paddle.disable_static()

    def step() -> float:
        paddle.enable_static()
        try:
            (value,) = exe.run(main, feed={"x": x, "y": y}, fetch_list=[loss])
        finally:
            paddle.disable_static()
        return float(np.asarray(value))

    return step


def pullback_eager_mlp(dtype: str | None) -> Callable[[], object]:
    """The MLP step in pullback eager mode, bfloat16 O2 (`paddle.amp.decorate`) when
    `dtype` is given."""
    import pullback as paddle

    x, y = _mlp_data()
    layers = []
    for a, b in zip(DIMS[:-1], DIMS[1:]):
        layers += [paddle.nn.Linear(a, b), paddle.nn.ReLU()]
    model = paddle.nn.Sequential(*layers[:-1])
    opt = paddle.optimizer.Adam(1e-3, parameters=model.parameters())
    if dtype is not None:
        model, opt = paddle.amp.decorate(model, opt, level="O2", dtype=dtype)
    xt, yt = paddle.to_tensor(x), paddle.to_tensor(y)

    def step() -> None:
        with paddle.amp.auto_cast(enable=dtype is not None, level="O2", dtype=dtype or "bfloat16"):
            loss = paddle.nn.functional.cross_entropy(model(xt), yt)
        loss.backward()
        opt.step()
        opt.clear_grad()

    return step


def torch_step(model_name: str, autocast: bool) -> Callable[[], object]:
    """The step in PyTorch eager (one thread), under CPU autocast to bfloat16 when asked."""
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)
    if model_name == "mlp":
        x, y = _mlp_data()
        layers: list[torch.nn.Module] = []
        for a, b in zip(DIMS[:-1], DIMS[1:]):
            layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
        model = torch.nn.Sequential(*layers[:-1])
        opt: Any = torch.optim.Adam(model.parameters(), 1e-3)
    else:
        from pullback.benchmarks.bench_resnet import torch_resnet18

        x, y = _resnet_data()
        model = torch_resnet18().train()
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y[:, 0])

    def step() -> None:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = torch.nn.functional.cross_entropy(model(xt), yt)
        loss.backward()
        opt.step()
        opt.zero_grad()

    return step


def _loss_gap(paddle: Any, model: str, steps: int = 20) -> float:
    """The largest |bfloat16 loss - float32 loss| over `steps` steps from the same
    start (same seeds, same batch), relative to the first float32 loss: the fixed
    batch is memorized, so later losses approach 0 and a gap relative to each would
    measure nothing but that."""
    f32 = static_step(paddle, model, None)
    b16 = static_step(paddle, model, "bfloat16")
    pairs = [(f32(), b16()) for _ in range(steps)]
    return max(abs(b - a) for a, b in pairs) / abs(pairs[0][0])


def paddle_worker(models: list[str], steps: int) -> None:
    """Paddle's side (run with `--paddle-worker` in Paddle's interpreter): prints one
    `MARKER {json}` line with seconds per step, or the error that stopped a row."""
    import paddle

    out: dict[str, Any] = {"version": paddle.__version__}
    for model in models:
        for dtype in (None, "bfloat16"):
            key = f"{model} {dtype or 'float32'}"
            try:
                out[key] = _median_step(static_step(paddle, model, dtype), steps)
            except Exception as e:  # noqa: BLE001 - reported as the row's result
                out[key] = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
    print(MARKER + json.dumps(out), flush=True)


def _run_paddle(python: str, models: list[str], steps: int) -> dict[str, Any]:
    proc = subprocess.run(
        [python, str(Path(__file__).resolve()), "--paddle-worker", "--steps", str(steps), "--only", *models],
        capture_output=True, text=True, timeout=1800,
        env={**os.environ, "PYTHONPATH": ""},
    )
    for line in proc.stdout.splitlines():
        if line.startswith(MARKER):
            return dict(json.loads(line[len(MARKER):]))
    return {"error": (proc.stderr or proc.stdout).strip().splitlines()[-1:]}


def main(argv: list[str] | None = None) -> None:
    """Print one line per (model, side, precision): milliseconds per step."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--only", nargs="*", default=["mlp", "resnet18"], choices=["mlp", "resnet18"])
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--paddle-python", default=None, help="Paddle 3.3.1's interpreter, for its CPU AMP as a peer")
    ap.add_argument("--paddle-worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.paddle_worker:
        paddle_worker(args.only, args.steps)
        return
    import pullback as paddle
    from pullback.runtime.native import bf16_gemm

    print(f"{platform.processor() or platform.machine()}; one thread each; bfloat16 GEMM: "
          f"{'on' if bf16_gemm.enabled() else 'off (no AVX512-BF16 or PULLBACK_BF16_GEMM=0)'}")
    for model in args.only:
        rows: list[tuple[str, Callable[[], Callable[[], object]]]] = [
            ("pullback static float32 (compiled)", partial(static_step, paddle, model, None)),
            ("pullback static auto_cast bfloat16 O1 (compiled)", partial(static_step, paddle, model, "bfloat16")),
        ]
        if model == "mlp":
            rows += [("pullback eager float32", partial(pullback_eager_mlp, None)),
                     ("pullback eager bfloat16 O2 (decorate)", partial(pullback_eager_mlp, "bfloat16"))]
        if not args.no_torch:
            rows += [("torch float32", partial(torch_step, model, False)),
                     ("torch autocast bfloat16", partial(torch_step, model, True))]
        print(f"\n{model}:")
        for name, make in rows:
            print(f"  {name:50s} {_median_step(make(), args.steps) * 1e3:8.2f} ms/step", flush=True)
        print(f"  bfloat16 vs float32 loss, 20 steps: largest gap {_loss_gap(paddle, model):.2e} of the first loss")
    if args.paddle_python:
        res = _run_paddle(args.paddle_python, args.only, args.steps)
        print(f"\nPaddle {res.pop('version', '?')} static CPU executor (separate process, one thread):")
        for key, value in res.items():
            shown = f"{value * 1e3:8.2f} ms/step" if isinstance(value, float) else str(value)
            print(f"  {key:50s} {shown}")


if __name__ == "__main__":
    if "--paddle-worker" in sys.argv:
        sys.modules.setdefault("pullback", __import__("paddle"))  # (this file's model code names `paddle` only)
    main()
