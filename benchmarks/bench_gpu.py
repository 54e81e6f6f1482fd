"""GPU benchmarks: pullback's CUDA backend against PyTorch CUDA, same run (issue 31).

Run: `python -m pullback.benchmarks.bench_gpu [--quick] [--json FILE] [--only NAME]`
(`tools/gpu_check.sh run` runs it with the GPU tests).  Without a usable GPU it
prints why and exits 0 (nothing is measured, nothing is claimed).

Workloads, each with torch CUDA as the peer when torch sees the GPU:

* `mlp`: MLP 784-512-512-10 training step (batch 128, relu, softmax cross-entropy,
  SGD), ours with cuBLAS and with the tiled kernel, each with CUDA graphs and
  asynchronous feed uploads (`PULLBACK_GPU_GRAPH=1`, the default) and without
  (same process);
* `chain`: the 20-op elementwise chain and its gradient over 2^24 floats, as
  bandwidth (graph and staged uploads on and off), next to the measured device-to-device copy bandwidth (`copy`) and
  the host->device copy of its feeds (which our step includes);
* `resnet`: ResNet-18 training step, batch 64 of 3x32x32, Momentum.

Each section is timed best-of-`repeat` after a warm-up; the figures of finished
sections are written to `--json` as they come, so a run cut short keeps them.
Targets (issue 31): the MLP step within 2x of torch CUDA; the chain at least 50 %
of the measured copy bandwidth.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import json
import os
import time
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from pullback.benchmarks.programs import elementwise_chain, mlp_train, torch_mlp_step
from pullback.runtime.gpu import cuda
from pullback.runtime.gpu.replay import GRAPH_ENV

Row = tuple[str, float | None, str]

SECTIONS = ("mlp", "copy", "chain", "resnet")
"""Workloads in the order they run (the riskiest last)."""


def timeit(fn: Callable[[], object], repeat: int) -> float:
    """Best-of-`repeat` wall time of `fn` in seconds (after one warm-up call)."""
    fn()
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


@contextlib.contextmanager
def graph_setting(on: bool) -> Iterator[None]:
    """Run with CUDA graphs and asynchronous feed uploads on or off
    (`PULLBACK_GPU_GRAPH`, read at every run), restoring the setting after."""
    old = os.environ.get(GRAPH_ENV)
    os.environ[GRAPH_ENV] = "1" if on else "0"
    try:
        yield
    finally:
        if old is None:
            del os.environ[GRAPH_ENV]
        else:
            os.environ[GRAPH_ENV] = old


def _torch_cuda():  # type: ignore[no-untyped-def]
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def _place() -> Any:
    return type("Place", (), {"device_id": 0})()


def bench_mlp(repeat: int) -> list[Row]:
    """MLP 784-512-512-10, batch 128, relu, softmax cross-entropy, SGD: one step."""
    from pullback.runtime.gpu.backend import GpuBackend

    sizes, batch, lr = (784, 512, 512, 10), 128, 0.01
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 784)).astype(np.float32)
    y = rng.integers(0, 10, (batch, 1)).astype(np.int64)
    feeds = {"x": x, "label": y}
    rows: list[Row] = []
    device = cuda.get_device(0)
    for label, gemm in (("cuBLAS", None), ("tiled kernel", (None, "tiled kernel (forced)"))):
        for graph in (True, False):
            built = mlp_train(sizes, lr)
            backend = GpuBackend(_place(), device=device, gemm=gemm)
            name = f"pullback {label}, {'graph' if graph else 'no graph'}"
            if label == "cuBLAS" and backend.blas is None:
                rows.append((name, None, f"skipped: {backend.gemm_engine}"))
                continue
            with graph_setting(graph):
                t = time.perf_counter()
                backend.run(built.module, feeds, built.scope, built.fetch)
                compile_s = time.perf_counter() - t
                secs = timeit(lambda b=backend, m=built: b.run(m.module, feeds, m.scope, m.fetch), repeat)
            rows.append((name, secs,
                         f"{backend.gemm_engine}; {backend.stats}; first run (compile + load) {compile_s:.2f} s"))
    torch = _torch_cuda()
    if torch is None:
        rows.append(("torch cuda", None, "skipped: torch with CUDA not installed"))
        return rows
    built = mlp_train(sizes, lr)
    dev = torch.device("cuda")
    params = [torch.tensor(built.scope[k], device=dev, requires_grad=True)
              for k in ("fc_0.w_0", "fc_0.b_0", "fc_1.w_0", "fc_1.b_0", "fc_2.w_0", "fc_2.b_0")]
    tx, ty = torch.tensor(x, device=dev), torch.tensor(y[:, 0], device=dev)

    def step() -> None:
        # .item(): the pullback step returns the loss to the host too
        torch_mlp_step(params, tx, ty, lr).item()

    rows.append(("torch cuda", timeit(step, repeat), f"torch {torch.__version__}, TF32 matmul "
                 f"{torch.backends.cuda.matmul.allow_tf32}"))
    return rows


def copy_bandwidth(n: int, repeat: int) -> tuple[float, float]:
    """(device-to-device GB/s counting bytes read and written, host-to-device GB/s)
    for `n` float32 elements, measured with the driver's copies."""
    dev = cuda.get_device(0)
    host = np.ones(n, np.float32)
    a, b = dev.to_device(host), dev.alloc(host.nbytes)

    def d2d() -> None:
        b.copy_from(a)
        dev.synchronize()

    d2d_s = timeit(d2d, repeat)
    h2d_s = timeit(lambda: a.upload(host), repeat)
    return 2 * host.nbytes / d2d_s / 1e9, host.nbytes / h2d_s / 1e9


def bench_copy(repeat: int, n: int) -> list[Row]:
    """The copy bandwidths the chain is judged against."""
    d2d, h2d = copy_bandwidth(n, repeat)
    peak = cuda.get_device(0).peak_bandwidth_gbs
    return [("device copy", 2 * n * 4 / d2d / 1e9, f"{d2d:.0f} GB/s read+write ({100 * d2d / peak:.0f} % of {peak:.0f} peak)"),
            ("host->device", n * 4 / h2d / 1e9, f"{h2d:.1f} GB/s")]


def _torch_chain(torch: Any, x: Any, y: Any, ops: int = 20) -> Any:
    """The chain of `programs.elementwise_chain` in torch: the same op sequence."""
    h = x
    for i in range(ops):
        k = i % 5
        if k == 0:
            h = torch.tanh(h)
        elif k == 1:
            h = h * y
        elif k == 2:
            h = torch.sigmoid(h)
        elif k == 3:
            h = h + y
        else:
            h = h * 0.5 + 0.1
    return h.sum()


def bench_chain(repeat: int, n: int) -> list[Row]:
    """The 20-op elementwise chain and its gradient over `n` float32 elements."""
    from pullback.runtime.gpu.backend import GpuBackend

    built = elementwise_chain(n)
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal(n).astype(np.float32), "y": rng.standard_normal(n).astype(np.float32)}
    d2d, h2d = copy_bandwidth(n, repeat)
    host_copies = 3 * n * 4 / h2d / 1e9  # x, y up; the gradient down (about as fast)
    rows: list[Row] = []
    for graph in (True, False):
        backend = GpuBackend(_place())
        with graph_setting(graph):
            secs = timeit(lambda b=backend: b.run(built.module, feeds, {}, built.fetch), repeat)
        # Lower bound on DRAM traffic: read x and y, write the gradient.
        gbs = 3 * n * 4 / secs / 1e9
        rows.append((
            f"pullback cuda, {'graph' if graph else 'no graph'}", secs,
            f"{gbs:.0f} GB/s = {100 * gbs / d2d:.0f} % of the copy's {d2d:.0f} GB/s, incl. ~{host_copies * 1e3:.2f} ms "
            f"of host copies (staged and asynchronous with the graph); {backend.stats}",
        ))
    torch = _torch_cuda()
    if torch is None:
        rows.append(("torch cuda", None, "skipped: torch with CUDA not installed"))
        return rows
    x = torch.tensor(feeds["x"], device="cuda", requires_grad=True)
    y = torch.tensor(feeds["y"], device="cuda")

    def step() -> None:
        loss = _torch_chain(torch, x, y)
        (gx,) = torch.autograd.grad(loss, [x])
        loss.item()

    t = timeit(step, repeat)
    rows.append(("torch cuda", t, f"{3 * n * 4 / t / 1e9:.0f} GB/s = {100 * 3 * n * 4 / t / 1e9 / d2d:.0f} % of the copy "
                 "(data already on the device)"))
    return rows


def bench_resnet(repeat: int, batch: int = 64) -> list[Row]:
    """ResNet-18 training step, batch 64 of 3x32x32, Momentum 0.9."""
    import pullback as paddle
    from pullback.benchmarks.bench_resnet import ours_step, torch_step

    t = time.perf_counter()
    step, first, fallback = ours_step(batch, 0.01, backend="cuda", place=paddle.CUDAPlace(0))
    rows: list[Row] = [("pullback cuda", timeit(step, repeat),
                        f"first run (compile + load) {first:.1f} s; setup {time.perf_counter() - t:.1f} s"
                        + (f"; {fallback[0]}" if fallback else ""))]
    torch = _torch_cuda()
    if torch is None:
        rows.append(("torch cuda", None, "skipped: torch with CUDA not installed"))
        return rows
    tstep = torch_step(batch, 0.01, device="cuda")
    assert tstep is not None
    rows.append(("torch cuda", timeit(tstep, repeat), f"torch {torch.__version__} eager"))
    return rows


def report(title: str, rows: list[Row]) -> None:
    """Print one table."""
    print(f"\n{title}", flush=True)
    for name, secs, note in rows:
        t = "skipped" if secs is None else f"{secs * 1e3:9.3f} ms"
        print(f"  {name:34s} {t:>12s}  {note}", flush=True)
    ours = [s for n, s, _ in rows if n.startswith("pullback") and s]
    theirs = [s for n, s, _ in rows if n.startswith("torch") and s]
    if ours and theirs:
        print(f"  ours / torch: {min(ours) / theirs[0]:.2f}x", flush=True)


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions, smaller chain")
    ap.add_argument("--json", help="write the figures here (after each section)")
    ap.add_argument("--only", action="append", choices=SECTIONS, help="run only these sections")
    args = ap.parse_args(argv)
    reason = cuda.unavailable_reason(0)
    if reason is not None:
        print(f"bench_gpu: skipped, no usable GPU: {reason}")
        return
    dev = cuda.get_device(0)
    head = f"{dev.name} (sm_{''.join(map(str, dev.compute_capability))}), {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC"
    print(head, flush=True)
    repeat = 3 if args.quick else 10
    n = 1 << (20 if args.quick else 24)
    sections: dict[str, tuple[str, Callable[[], list[Row]]]] = {
        "mlp": ("MLP train step (784-512-512-10, batch 128, SGD)", lambda: bench_mlp(repeat)),
        "copy": (f"copy bandwidth ({n} float32)", lambda: bench_copy(repeat, n)),
        "chain": (f"elementwise chain (20 ops + gradient, {n} float32)", lambda: bench_chain(repeat, n)),
        "resnet": ("ResNet-18 train step (batch 64, 3x32x32, Momentum)", lambda: bench_resnet(max(repeat // 2, 2))),
    }
    results: dict[str, Any] = {"device": head}
    for key in args.only or SECTIONS:
        title, fn = sections[key]
        try:
            rows = fn()
        except Exception as e:  # one failing section must not cost the others' figures
            traceback.print_exc()
            rows = [("pullback cuda", None, f"FAILED: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")]
        report(title, rows)
        results[key] = [{"name": r[0], "seconds": r[1], "note": r[2]} for r in rows]
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
