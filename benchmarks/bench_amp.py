"""One training step of the MLP 784-512-512-10 (batch 128, Adam, cross entropy) under
mixed precision: pullback's static program compiled in float32 and under
`paddle.amp.auto_cast(dtype='bfloat16')` (O1: the matmuls in bfloat16 from float32
master parameters), pullback eager float32 and eager bfloat16 O2
(`paddle.amp.decorate`), and PyTorch CPU float32 and `torch.autocast('cpu',
dtype=torch.bfloat16)`, in one run.  PyTorch is imported only here (never a
dependency of pullback).

    python -m pullback.benchmarks.bench_amp [--steps N]

pullback's bfloat16 matrix products are not a bfloat16 GEMM: operands are converted to
float32 and multiplied by the float32 kernels (issue 28 leaves the bf16 GEMM for later),
so bfloat16 costs conversions on top of float32's work; PyTorch's oneDNN uses the
CPU's bf16 instructions (avx512_bf16/AMX) where it has them.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from collections.abc import Callable

import numpy as np

BATCH, DIMS = 128, (784, 512, 512, 10)


def _median_step(step: Callable[[], object], steps: int, warmup: int = 3) -> float:
    for _ in range(warmup):
        step()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    return rng.standard_normal((BATCH, DIMS[0])).astype(np.float32), rng.integers(0, 10, (BATCH, 1)).astype(np.int64)


def pullback_static(dtype: str | None, steps: int) -> float:
    import pullback as paddle

    x, y = _data()
    paddle.enable_static()
    try:
        main, start = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, start):
            xv = paddle.static.data("x", [None, DIMS[0]])
            yv = paddle.static.data("y", [None, 1], "int64")
            with paddle.amp.auto_cast(enable=dtype is not None, dtype=dtype or "bfloat16"):
                h = xv
                for d in DIMS[1:-1]:
                    h = paddle.nn.functional.relu(paddle.static.nn.fc(h, d))
                out = paddle.static.nn.fc(h, DIMS[-1])
                loss = paddle.mean(paddle.nn.functional.cross_entropy(out, yv))
            paddle.optimizer.Adam(1e-3).minimize(loss)
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(start)
        return _median_step(lambda: exe.run(main, feed={"x": x, "y": y}, fetch_list=[loss]), steps)
    finally:
        paddle.disable_static()


def pullback_eager(dtype: str | None, steps: int) -> float:
    import pullback as paddle

    x, y = _data()
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

    return _median_step(step, steps)


def torch_step(autocast: bool, steps: int) -> float:
    import torch

    x, y = _data()
    layers: list[torch.nn.Module] = []
    for a, b in zip(DIMS[:-1], DIMS[1:]):
        layers += [torch.nn.Linear(a, b), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers[:-1])
    opt = torch.optim.Adam(model.parameters(), 1e-3)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y[:, 0])

    def step() -> None:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
            loss = torch.nn.functional.cross_entropy(model(xt), yt)
        loss.backward()
        opt.step()
        opt.zero_grad()

    return _median_step(step, steps)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--no-torch", action="store_true")
    args = ap.parse_args(argv)
    print(f"MLP {'-'.join(map(str, DIMS))}, batch {BATCH}, Adam; {platform.processor() or platform.machine()}")
    rows = [
        ("pullback static float32 (compiled)", lambda: pullback_static(None, args.steps)),
        ("pullback static auto_cast bfloat16 O1 (compiled)", lambda: pullback_static("bfloat16", args.steps)),
        ("pullback eager float32", lambda: pullback_eager(None, args.steps)),
        ("pullback eager bfloat16 O2 (decorate)", lambda: pullback_eager("bfloat16", args.steps)),
    ]
    if not args.no_torch:
        rows += [("torch float32", lambda: torch_step(False, args.steps)),
                 ("torch autocast bfloat16", lambda: torch_step(True, args.steps))]
    for name, fn in rows:
        print(f"{name:50s} {fn() * 1e3:8.2f} ms/step")


if __name__ == "__main__":
    main()
