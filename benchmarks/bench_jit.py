"""Training step of an MLP and a small CNN: pullback eager vs `paddle.jit.to_static`
vs the static API, against PyTorch eager and `torch.compile`, in one run.

    OPENBLAS_NUM_THREADS=1 python -m pullback.benchmarks.bench_jit [--iters N] [--no-compile]

A step is forward, softmax cross-entropy, backward, SGD update and clear_grad:

* `eager`: the Layer run op by op (numpy kernels, eager autograd);
* `to_static(net)`: the same Layer converted with `paddle.jit.to_static` (one
  `pd.run_program` op: compiled forward, compiled backward), loss and optimizer
  eager;
* `to_static(net+loss)`: a to_static function computing the loss from the Layer
  (what the static program holds), optimizer eager;
* `static`: the same network built in a static program with `SGD.minimize`, one
  `Executor.run` per step (compiled forward, backward and update in one module);
* `torch` / `torch.compile`: the same network in PyTorch 2 (only imported here).

MLP 784-256-256-10 (ReLU), batch 64; CNN (LeNet-like) conv 1->6 5x5, ReLU, max pool
2, conv 6->16 5x5, ReLU, max pool 2, linear 256->10 on 1x28x28, batch 32.  Each
variant runs `--iters` steps after 3 warm-ups, interleaved round by round; the median
step is reported, with the ratio to the static API.
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
from pullback.frontend.nn_layers import Layer  # noqa: E402

nn = paddle.nn
F = paddle.nn.functional


class MLP(Layer):
    """784-256-256-10 with ReLU."""

    def __init__(self) -> None:
        super().__init__()
        self.l1, self.l2, self.l3 = nn.Linear(784, 256), nn.Linear(256, 256), nn.Linear(256, 10)

    def forward(self, x):  # type: ignore[no-untyped-def]
        return self.l3(F.relu(self.l2(F.relu(self.l1(x)))))


class CNN(Layer):
    """LeNet-like: two 5x5 convolutions with max pooling, one linear layer."""

    def __init__(self) -> None:
        super().__init__()
        self.c1, self.c2 = nn.Conv2D(1, 6, 5), nn.Conv2D(6, 16, 5)
        self.fc = nn.Linear(256, 10)

    def forward(self, x):  # type: ignore[no-untyped-def]
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        return self.fc(paddle.flatten(x, 1))


WORKLOADS: dict[str, tuple[type[Layer], list[int], int]] = {"mlp": (MLP, [784], 64), "cnn": (CNN, [1, 28, 28], 32)}


def _data(shape: list[int], batch: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal([batch, *shape]).astype(np.float32)
    y = rng.integers(0, 10, (batch, 1)).astype(np.int64)
    return x, y


def pb_dynamic(name: str, mode: str) -> Callable[[], None]:
    """`mode`: 'eager', 'net' (to_static on the Layer) or 'loss' (to_static on a
    function computing the loss from the Layer)."""
    cls, shape, batch = WORKLOADS[name]
    paddle.seed(0)
    net = cls()
    x_spec = paddle.static.InputSpec([None, *shape], "float32")
    if mode == "net":
        net = paddle.jit.to_static(net, input_spec=[x_spec])

    def loss_of(x, y):  # type: ignore[no-untyped-def]
        return F.cross_entropy(net(x), y)

    if mode == "loss":
        loss_of = paddle.jit.to_static(loss_of, input_spec=[x_spec, paddle.static.InputSpec([None, 1], "int64")])
    opt = paddle.optimizer.SGD(0.01, parameters=net.parameters())
    xv, yv = _data(shape, batch)
    x, y = paddle.to_tensor(xv), paddle.to_tensor(yv)

    def step() -> None:
        loss = loss_of(x, y)
        loss.backward()
        opt.step()
        opt.clear_grad()

    return step


def pb_static(name: str) -> Callable[[], None]:
    cls, shape, batch = WORKLOADS[name]
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [None, *shape], "float32")
            y = paddle.static.data("y", [None, 1], "int64")
            loss = F.cross_entropy(cls()(x), y)
            paddle.optimizer.SGD(0.01).minimize(loss)
    finally:
        paddle.disable_static()
    exe = paddle.static.Executor(paddle.CPUPlace())
    scope = paddle.static.Scope()
    exe.run(startup, scope=scope)
    xv, yv = _data(shape, batch)
    feed = {"x": xv, "y": yv}

    def step() -> None:
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)

    return step


def torch_step(name: str, compiled: bool) -> Callable[[], None]:
    import torch

    torch.set_num_threads(1)
    _, shape, batch = WORKLOADS[name]
    if name == "mlp":
        net = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 256),
                                  torch.nn.ReLU(), torch.nn.Linear(256, 10))
    else:
        net = torch.nn.Sequential(torch.nn.Conv2d(1, 6, 5), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                  torch.nn.Conv2d(6, 16, 5), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
                                  torch.nn.Flatten(), torch.nn.Linear(256, 10))
    fwd = torch.compile(net) if compiled else net
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    xv, yv = _data(shape, batch)
    x, y = torch.from_numpy(xv), torch.from_numpy(yv[:, 0])

    def step() -> None:
        loss = torch.nn.functional.cross_entropy(fwd(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()

    return step


def measure(steps: dict[str, Callable[[], None]], iters: int) -> dict[str, float]:
    """Median seconds per step of each variant, interleaved round by round."""
    for fn in steps.values():
        for _ in range(3):
            fn()
    times: dict[str, list[float]] = {k: [] for k in steps}
    for _ in range(iters):
        for k, fn in steps.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def main() -> None:
    """Run every workload and print a Markdown table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    args = ap.parse_args()
    try:
        import torch  # noqa: F401

        have_torch = True
    except ImportError:
        have_torch = False
    print(f"# bench_jit  ({platform.processor() or platform.machine()}, "
          f"OPENBLAS_NUM_THREADS={os.environ['OPENBLAS_NUM_THREADS']}, load {os.getloadavg()[0]:.1f})")
    print("| model | eager | to_static(net) | to_static(net+loss) | static API | torch eager | torch.compile "
          "| to_static(net) / static | to_static(net+loss) / static |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name in WORKLOADS:
        steps: dict[str, Callable[[], None]] = {
            "eager": pb_dynamic(name, "eager"),
            "to_static": pb_dynamic(name, "net"),
            "to_static_loss": pb_dynamic(name, "loss"),
            "static": pb_static(name),
        }
        if have_torch:
            steps["torch"] = torch_step(name, False)
            if not args.no_compile:
                steps["compile"] = torch_step(name, True)
        t = measure(steps, args.iters)

        def ms(k: str, t: dict[str, float] = t) -> str:
            return f"{t[k] * 1e3:.2f} ms" if k in t else "n/a"

        print(f"| {name} | {ms('eager')} | {ms('to_static')} | {ms('to_static_loss')} | {ms('static')} | "
              f"{ms('torch')} | {ms('compile')} | {t['to_static'] / t['static']:.2f}x | "
              f"{t['to_static_loss'] / t['static']:.2f}x |")


if __name__ == "__main__":
    main()
