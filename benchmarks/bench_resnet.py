"""ResNet-18 training step: our static program on the compiled backend against
PyTorch eager, same machine, same process.

Run: `python -m pullback.benchmarks.bench_resnet [--repeat 5] [--batch 32]`.

The step: batch 32 of 3x32x32 images, `paddle.vision.models.resnet18(num_classes=10)`
(20 batch norms in training mode), softmax cross-entropy, mean, backward, Momentum
(0.9) on every trainable parameter, running statistics updated.  PyTorch runs the
same network (built here layer for layer, no torchvision needed) with
`torch.optim.SGD(momentum=0.9)`, whose update `v = mu v + g; p -= lr v` is Paddle's.
torch is optional (`pip install pullback[bench]`); without it only our figures print.
"""

from __future__ import annotations

import argparse
import platform
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import pullback as paddle
import pullback.nn.functional as F
from pullback.vision.models import resnet18


def timeit(fn: Callable[[], object], repeat: int) -> tuple[float, float]:
    """(median, min) seconds per call after two warm-up calls."""
    fn()
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times)), float(np.min(times))


def build_ours(batch: int, lr: float) -> tuple[Any, Any, Any, Any]:
    """The static ResNet-18 training program: (main, startup, loss, feed names)."""
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    main.random_seed = startup.random_seed = 1
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("image", [batch, 3, 32, 32], "float32")
        y = paddle.static.data("label", [batch, 1], "int64")
        loss = paddle.mean(F.cross_entropy(resnet18(num_classes=10)(x), y))
        paddle.optimizer.Momentum(learning_rate=lr, momentum=0.9).minimize(loss)
    return main, startup, loss, ("image", "label")


def ours_step(
    batch: int, lr: float, backend: str = "compiled", place: Any = None
) -> tuple[Callable[[], object], float, list[str]]:
    """Our step on fixed data, after its first run: (one step, the first run's
    seconds (the compile, or a load from the disk cache), the first warning of an
    interpreter fallback if any).  `place`: where the step runs (default
    `CPUPlace()`; the GPU benchmark passes `CUDAPlace(0)` with backend `cuda`)."""
    main, startup, loss, (xn, yn) = build_ours(batch, lr)
    rng = np.random.default_rng(0)
    feed = {xn: rng.standard_normal((batch, 3, 32, 32)).astype(np.float32),
            yn: rng.integers(0, 10, (batch, 1)).astype(np.int64)}
    exe = paddle.static.Executor(place if place is not None else paddle.CPUPlace(), backend=backend)
    scope = paddle.static.Scope()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exe.run(startup, scope=scope)
        t = time.perf_counter()
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
        first = time.perf_counter() - t
    fallback = [str(w.message) for w in caught if "interpreter" in str(w.message)]
    return (lambda: exe.run(main, feed=feed, fetch_list=[loss], scope=scope)), first, fallback[:1]


def bench_ours(batch: int, lr: float, repeat: int, backend: str) -> dict[str, Any]:
    """Compile once, then time steps on fixed data."""
    step, first, fallback = ours_step(batch, lr, backend)
    med, best = timeit(step, repeat)
    return {"median": med, "min": best, "first": first, "fallback": fallback}


def torch_resnet18() -> Any:
    """The same network in PyTorch (`torch.nn`, no torchvision), layer for layer."""
    import torch
    from torch import nn

    class Basic(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.down = None
            if stride != 1 or cin != cout:
                self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x: Any) -> Any:
            out = torch.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            return torch.relu(out + (x if self.down is None else self.down(x)))

    class ResNet18(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64), nn.ReLU(),
                                      nn.MaxPool2d(3, 2, 1))
            layers, cin = [], 64
            for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
                layers += [Basic(cin, cout, stride), Basic(cout, cout, 1)]
                cin = cout
            self.layers = nn.Sequential(*layers)
            self.fc = nn.Linear(512, 10)

        def forward(self, x: Any) -> Any:
            x = self.layers(self.stem(x))
            return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))

    return ResNet18()


def torch_step(batch: int, lr: float, device: str = "cpu") -> Callable[[], None] | None:
    """The same step in PyTorch eager, one call (None when torch is missing); on a
    `device` other than the CPU the step ends reading the loss, as ours does."""
    try:
        import torch
        from torch import nn
    except ImportError:
        return None

    torch.manual_seed(0)
    model = torch_resnet18().train().to(device)
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    rng = np.random.default_rng(0)
    x = torch.tensor(rng.standard_normal((batch, 3, 32, 32)).astype(np.float32), device=device)
    y = torch.tensor(rng.integers(0, 10, batch), device=device)

    def step() -> None:
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        if device != "cpu":
            loss.item()

    return step


def bench_torch(batch: int, lr: float, repeat: int) -> dict[str, Any] | None:
    """The same step in PyTorch eager (None when torch is missing)."""
    step = torch_step(batch, lr)
    if step is None:
        return None
    import torch

    med, best = timeit(step, repeat)
    return {"median": med, "min": best, "version": torch.__version__, "threads": torch.get_num_threads()}


def main(argv: list[str] | None = None) -> None:
    """Run both and print a Markdown row."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--backend", default="compiled")
    args = ap.parse_args(argv)
    print(f"machine: {platform.processor() or platform.machine()}, python {platform.python_version()}, "
          f"numpy {np.__version__}")
    ours = bench_ours(args.batch, args.lr, args.repeat, args.backend)
    print(f"pullback {args.backend}: median {ours['median'] * 1e3:.1f} ms, min {ours['min'] * 1e3:.1f} ms, "
          f"first run (compile) {ours['first']:.1f} s")
    if ours["fallback"]:
        print(f"  note: {ours['fallback'][0]}")
    theirs = bench_torch(args.batch, args.lr, args.repeat)
    if theirs is None:
        print("torch eager: skipped (torch not installed)")
        return
    print(f"torch {theirs['version']} eager ({theirs['threads']} threads): median {theirs['median'] * 1e3:.1f} ms, "
          f"min {theirs['min'] * 1e3:.1f} ms")
    print(f"ratio ours / torch (median): {ours['median'] / theirs['median']:.2f}x")
    print(f"| ResNet-18 train step, batch {args.batch}, 3x32x32, Momentum | {ours['median'] * 1e3:.1f} ms | "
          f"{theirs['median'] * 1e3:.1f} ms | {ours['median'] / theirs['median']:.2f}x | {ours['first']:.1f} s |")


if __name__ == "__main__":
    main()
