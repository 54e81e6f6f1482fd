"""Eager forward + backward per iteration: pullback vs PyTorch eager, in one run.

    OPENBLAS_NUM_THREADS=1 python -m pullback.benchmarks.bench_eager [--iters N]

Workloads (the issue's): the `paddle.autograd.backward` seed example (two 2x2
matmuls, backward with two seed tensors, clear_grad) and a 3-layer MLP (64-128-128-10,
ReLU, mean squared error, batch 32) forward + backward + clear_grad, written with
`paddle.matmul`; and issue 18's 3-layer MLP with dropout written with `nn` layers
(`Linear`, `ReLU`, `Dropout(0.1)`, `F.mse_loss`), as a Paddle user writes it; and
issue 33's LeNet training step (`paddle.vision.models.LeNet`, batch 64 of 1x28x28,
cross entropy, Adam: forward, backward, `step`, `clear_grad`).  Both frameworks
run single-threaded (BLAS threads only add noise at these sizes), in interleaved
rounds; the median round is reported.  PyTorch is only imported here: it is never a
dependency of pullback.

Also reported: pullback's plan-cache hits and misses (the backward of a repeated
graph shape is differentiated once), and the cost of one backward whose plan is
rebuilt every time (the cache disabled), to show what the cache saves.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
from collections.abc import Callable

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

import pullback as paddle  # noqa: E402
import pullback.nn.functional as F  # noqa: E402
from pullback.frontend import autograd, eager_native  # noqa: E402

DIMS = [64, 128, 128, 10]
BATCH = 32
LENET_BATCH = 64


# ----------------------------------------------------------------- pullback


def pb_seed() -> Callable[[], None]:
    x = paddle.to_tensor([[1, 2], [3, 4]], dtype="float32", stop_gradient=False)
    y = paddle.to_tensor([[3, 2], [3, 4]], dtype="float32")
    g1 = paddle.to_tensor([[1, 2], [2, 3]], dtype="float32")
    g2 = paddle.to_tensor([[1, 1], [1, 1]], dtype="float32")

    matmul, backward = paddle.matmul, paddle.autograd.backward  # see RESULTS.md

    def step() -> None:
        z1 = matmul(x, y)
        z2 = matmul(x, y)
        backward([z1, z2], [g1, g2])
        x.clear_grad()

    return step


def pb_mlp(rng: np.random.Generator) -> Callable[[], None]:
    ws = [
        paddle.to_tensor(rng.standard_normal((i, o)).astype(np.float32) * 0.1, stop_gradient=False)
        for i, o in zip(DIMS, DIMS[1:])
    ]
    bs = [paddle.to_tensor(np.zeros(o, np.float32), stop_gradient=False) for o in DIMS[1:]]
    x = paddle.to_tensor(rng.standard_normal((BATCH, DIMS[0])).astype(np.float32))
    t = paddle.to_tensor(rng.standard_normal((BATCH, DIMS[-1])).astype(np.float32))
    params = ws + bs
    matmul, relu, mean = paddle.matmul, F.relu, paddle.mean  # see RESULTS.md

    def step() -> None:
        h = x
        for k in range(3):
            h = matmul(h, ws[k]) + bs[k]
            if k < 2:
                h = relu(h)
        d = h - t
        loss = mean(d * d)
        loss.backward()
        for p in params:
            p.clear_grad()

    return step


def pb_mlp_dropout(rng: np.random.Generator) -> Callable[[], None]:
    """Issue 18's workload as a Paddle user writes it: `nn.Sequential` of Linear, ReLU
    and Dropout(0.1), mean squared error, forward + backward + `clear_grad`."""
    nn = paddle.nn
    paddle.seed(0)
    model = nn.Sequential(
        nn.Linear(DIMS[0], DIMS[1]), nn.ReLU(), nn.Dropout(0.1),
        nn.Linear(DIMS[1], DIMS[2]), nn.ReLU(), nn.Dropout(0.1),
        nn.Linear(DIMS[2], DIMS[3]),
    )
    x = paddle.to_tensor(rng.standard_normal((BATCH, DIMS[0])).astype(np.float32))
    t = paddle.to_tensor(rng.standard_normal((BATCH, DIMS[-1])).astype(np.float32))
    params = model.parameters()
    mse = F.mse_loss

    def step() -> None:
        loss = mse(model(x), t)
        loss.backward()
        for p in params:
            p.clear_grad()

    return step


def _lenet_data(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    x = rng.standard_normal((LENET_BATCH, 1, 28, 28)).astype(np.float32)
    return x, rng.integers(0, 10, (LENET_BATCH, 1)).astype(np.int64)


def pb_lenet(rng: np.random.Generator) -> Callable[[], None]:
    """Issue 33's workload: one eager LeNet training step with Adam."""
    paddle.seed(0)
    model = paddle.vision.models.LeNet()
    opt = paddle.optimizer.Adam(learning_rate=1e-3, parameters=model.parameters())
    xv, yv = _lenet_data(rng)
    x, y = paddle.to_tensor(xv), paddle.to_tensor(yv)
    ce = F.cross_entropy

    def step() -> None:
        loss = ce(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()

    return step


# -------------------------------------------------------------------- torch


def torch_seed(torch) -> Callable[[], None]:
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = torch.tensor([[3.0, 2.0], [3.0, 4.0]])
    g1 = torch.tensor([[1.0, 2.0], [2.0, 3.0]])
    g2 = torch.ones(2, 2)

    def step() -> None:
        z1 = torch.matmul(x, y)
        z2 = torch.matmul(x, y)
        torch.autograd.backward([z1, z2], [g1, g2])
        x.grad.zero_()  # Paddle's clear_grad sets zeros

    return step


def torch_mlp(torch, rng: np.random.Generator) -> Callable[[], None]:
    ws = [
        torch.tensor(rng.standard_normal((i, o)).astype(np.float32) * 0.1, requires_grad=True)
        for i, o in zip(DIMS, DIMS[1:])
    ]
    bs = [torch.zeros(o, requires_grad=True) for o in DIMS[1:]]
    x = torch.tensor(rng.standard_normal((BATCH, DIMS[0])).astype(np.float32))
    t = torch.tensor(rng.standard_normal((BATCH, DIMS[-1])).astype(np.float32))
    params = ws + bs

    def step() -> None:
        h = x
        for k in range(3):
            h = torch.matmul(h, ws[k]) + bs[k]
            if k < 2:
                h = torch.relu(h)
        d = h - t
        loss = torch.mean(d * d)
        loss.backward()
        for p in params:
            p.grad.zero_()

    return step


def torch_mlp_dropout(torch, rng: np.random.Generator) -> Callable[[], None]:
    """The same model in PyTorch (`torch.nn`, `F.mse_loss`, `p.grad.zero_()`)."""
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(DIMS[0], DIMS[1]), nn.ReLU(), nn.Dropout(0.1),
        nn.Linear(DIMS[1], DIMS[2]), nn.ReLU(), nn.Dropout(0.1),
        nn.Linear(DIMS[2], DIMS[3]),
    )
    x = torch.tensor(rng.standard_normal((BATCH, DIMS[0])).astype(np.float32))
    t = torch.tensor(rng.standard_normal((BATCH, DIMS[-1])).astype(np.float32))
    params = list(model.parameters())
    mse = torch.nn.functional.mse_loss

    def step() -> None:
        loss = mse(model(x), t)
        loss.backward()
        for p in params:
            p.grad.zero_()

    return step


def torch_lenet(torch, rng: np.random.Generator) -> Callable[[], None]:
    """The same LeNet (Paddle's layout) and step in PyTorch."""
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 6, 3, stride=1, padding=1), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Conv2d(6, 16, 5, stride=1, padding=0), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Flatten(), nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10),
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    xv, yv = _lenet_data(rng)
    x, y = torch.from_numpy(xv), torch.from_numpy(yv[:, 0])
    ce = torch.nn.functional.cross_entropy

    def step() -> None:
        loss = ce(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()

    return step


# ------------------------------------------------------------------- timing


def per_iter_us(step: Callable[[], None], iters: int) -> float:
    t0 = time.perf_counter()
    for _ in range(iters):
        step()
    return (time.perf_counter() - t0) / iters * 1e6


def compare(name: str, ours: Callable[[], None], theirs: Callable[[], None] | None, iters: int, rounds: int,
            unit: str = "us") -> None:
    for _ in range(min(20, 2 * iters)):  # warm up: templates, plans, allocator
        ours()
        if theirs:
            theirs()
    eager_native.wait()  # the background compiles of native eager kernels, then their trials
    for _ in range(3):
        ours()
    scale = 1e-3 if unit == "ms" else 1.0
    a, b = [], []
    for _ in range(rounds):
        a.append(per_iter_us(ours, iters) * scale)
        if theirs:
            b.append(per_iter_us(theirs, iters) * scale)
    ma, fa = statistics.median(a), min(a)
    if theirs:
        mb, fb = statistics.median(b), min(b)
        print(f"{name:<24} median: pullback {ma:8.1f} {unit}, torch {mb:8.1f} {unit}, ratio {ma / mb:4.2f}x"
              f" | best: {fa:8.1f} {unit} vs {fb:8.1f} {unit}, ratio {fa / fb:4.2f}x")
    else:
        print(f"{name:<24} median: pullback {ma:8.1f} {unit} | best: {fa:8.1f} {unit}")


def uncached_backward_us(iters: int) -> float:
    """A seed-example step whose backward plan is rebuilt every time."""
    step = pb_seed()
    t0 = time.perf_counter()
    for _ in range(iters):
        autograd.clear_cache()
        step()
    return (time.perf_counter() - t0) / iters * 1e6


def op_costs(iters: int) -> None:
    """Why eager ops run on cached templates: building a typed xDSL op per call
    (`PdOp.make`, as static mode does) against a whole eager `paddle.matmul`."""
    from xdsl.dialects.builtin import TensorType, f32
    from xdsl.ir import Block

    from pullback.dialects import pd

    args = Block(arg_types=[TensorType(f32, [2, 2])] * 2).args
    a = paddle.to_tensor(np.ones((2, 2), np.float32), stop_gradient=False)
    matmul = paddle.matmul
    make = min(per_iter_us(lambda: pd.MatmulOp.make(*args), iters) for _ in range(3))
    eager = min(per_iter_us(lambda: matmul(a, a), iters) for _ in range(3))
    print(f"one 2x2 matmul: PdOp.make alone {make:.1f} us, whole eager op (template hit, "
          f"kernel, record) {eager:.1f} us")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--only", choices=["lenet"], help="run only this workload (its --iters "
                    "default 20)")
    args = ap.parse_args()
    try:
        import torch

        torch.set_num_threads(1)
        tver = torch.__version__
    except ImportError:
        torch, tver = None, "not installed"
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}  {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, Python {platform.python_version()}, numpy {np.__version__}, "
          f"torch {tver}, OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}")
    rng = np.random.default_rng(0)
    lenet_iters = max(1, args.iters // 10)  # a LeNet step is ~100x an MLP step
    if args.only == "lenet":
        compare("LeNet Adam b=64", pb_lenet(rng), torch_lenet(torch, rng) if torch else None,
                lenet_iters, args.rounds, unit="ms")
        return
    compare("seed example fwd+bwd", pb_seed(), torch_seed(torch) if torch else None, args.iters, args.rounds)
    compare("MLP 64-128-128-10 b=32", pb_mlp(rng), torch_mlp(torch, rng) if torch else None,
            args.iters, args.rounds)
    compare("MLP+dropout nn layers", pb_mlp_dropout(rng), torch_mlp_dropout(torch, rng) if torch else None,
            args.iters, args.rounds)
    compare("LeNet Adam b=64", pb_lenet(rng), torch_lenet(torch, rng) if torch else None,
            lenet_iters, args.rounds, unit="ms")
    print(f"plan cache: {autograd.cache_info()}")
    print(f"seed example with the plan rebuilt each step: {uncached_backward_us(50):.1f} us")
    op_costs(args.iters)


if __name__ == "__main__":
    main()
