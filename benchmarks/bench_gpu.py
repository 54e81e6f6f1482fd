"""GPU benchmarks: pullback's CUDA backend against PyTorch CUDA (when installed).

Run: `python -m pullback.benchmarks.bench_gpu [--quick]`.  Without a usable GPU it
prints why and exits 0 (nothing is measured, nothing is claimed).  Targets (issue
6): the MLP training step within 2x of PyTorch CUDA; the elementwise chain at
least 50 % of the card's DRAM bandwidth.
"""

from __future__ import annotations

import argparse
import datetime
import time
from collections.abc import Callable

import numpy as np

from pullback.benchmarks.programs import elementwise_chain, mlp_train, torch_mlp_step
from pullback.runtime.gpu import cuda

Row = tuple[str, float | None, str]


def timeit(fn: Callable[[], object], repeat: int) -> float:
    """Best-of-`repeat` wall time of `fn` in seconds (after one warm-up call)."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def _torch_cuda():  # type: ignore[no-untyped-def]
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def bench_mlp(repeat: int) -> list[Row]:
    """MLP 784-512-512-10, batch 128, relu, softmax cross-entropy, SGD: one step."""
    from pullback.runtime.gpu.backend import GpuBackend

    sizes, batch, lr = (784, 512, 512, 10), 128, 0.01
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 784)).astype(np.float32)
    y = rng.integers(0, 10, (batch, 1)).astype(np.int64)
    built = mlp_train(sizes, lr)
    backend = GpuBackend(type("Place", (), {"device_id": 0})())
    feeds = {"x": x, "label": y}
    t = time.perf_counter()
    backend.run(built.module, feeds, built.scope, built.fetch)
    compile_s = time.perf_counter() - t
    rows: list[Row] = [(
        "pullback cuda",
        timeit(lambda: backend.run(built.module, feeds, built.scope, built.fetch), repeat),
        f"first run (compile + load) {compile_s:.2f} s",
    )]
    torch = _torch_cuda()
    if torch is None:
        rows.append(("torch cuda", None, "skipped: torch with CUDA not installed"))
        return rows
    dev = torch.device("cuda")
    params = [torch.tensor(built.scope[k], device=dev, requires_grad=True)
              for k in ("fc_0.w_0", "fc_0.b_0", "fc_1.w_0", "fc_1.b_0", "fc_2.w_0", "fc_2.b_0")]
    tx, ty = torch.tensor(x, device=dev), torch.tensor(y[:, 0], device=dev)

    def step() -> None:
        # .item(): the pullback step returns the loss to the host too
        torch_mlp_step(params, tx, ty, lr).item()

    rows.append(("torch cuda", timeit(step, repeat), f"torch {torch.__version__}"))
    return rows


def bench_chain(repeat: int, n: int) -> list[Row]:
    """The 20-op elementwise chain and its gradient over `n` float32 elements."""
    from pullback.runtime.gpu.backend import GpuBackend

    built = elementwise_chain(n)
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal(n).astype(np.float32), "y": rng.standard_normal(n).astype(np.float32)}
    backend = GpuBackend(type("Place", (), {"device_id": 0})())
    secs = timeit(lambda: backend.run(built.module, feeds, {}, built.fetch), repeat)
    # Lower bound on DRAM traffic: read x and y, write the gradient.
    gbs = 3 * n * 4 / secs / 1e9
    peak = backend.device.peak_bandwidth_gbs
    rows: list[Row] = [("pullback cuda", secs, f"{gbs:.0f} GB/s of {peak:.0f} peak ({100 * gbs / peak:.0f} %), incl. host copies")]
    torch = _torch_cuda()
    if torch is None:
        rows.append(("torch cuda", None, "skipped: torch with CUDA not installed"))
    return rows


def report(title: str, rows: list[Row]) -> None:
    """Print one table."""
    print(f"\n{title}")
    for name, secs, note in rows:
        t = "skipped" if secs is None else f"{secs * 1e3:9.3f} ms"
        print(f"  {name:16s} {t:>12s}  {note}")


def main() -> None:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer repetitions, smaller chain")
    args = ap.parse_args()
    reason = cuda.unavailable_reason(0)
    if reason is not None:
        print(f"bench_gpu: skipped, no usable GPU: {reason}")
        return
    dev = cuda.get_device(0)
    print(f"{dev.name} (sm_{''.join(map(str, dev.compute_capability))}), {datetime.date.today()}")
    repeat = 3 if args.quick else 20
    report("MLP train step (784-512-512-10, batch 128, SGD)", bench_mlp(repeat))
    report("elementwise chain (20 ops + gradient)", bench_chain(repeat, 1 << (20 if args.quick else 24)))


if __name__ == "__main__":
    main()
