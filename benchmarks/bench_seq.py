"""Sequence-model training steps: a Transformer encoder and an LSTM, pullback static
(compiled backend) and eager, against PyTorch eager in the same run.

    OPENBLAS_NUM_THREADS=1 python -m pullback.benchmarks.bench_seq [--repeat N] [--quick]

Workloads (issue 13): a 2-layer `nn.TransformerEncoder` (d_model 128, 4 heads,
feed-forward 512, no dropout), sequence 64, batch 16, mean-squared-error loss,
AdamW (Adam where AdamW is not available); an `nn.LSTM` (input 128, hidden 128),
sequence 32, batch 32, the same loss, the same optimizer.  Each row is the median
seconds per training step after two warm-ups.  `--quick` uses smaller shapes (for
checking that the script runs).  PyTorch is optional and only imported here.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import warnings
from collections.abc import Callable
from typing import Any

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np
import pullback as paddle
from pullback.frontend import core


def timeit(fn: Callable[[], object], repeat: int) -> float:
    """Median seconds per call after two warm-up calls."""
    fn()
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def _optimizer(params: Any = None) -> Any:
    """AdamW when this build has it, else Adam (same settings)."""
    cls = getattr(paddle.optimizer, "AdamW", None) or paddle.optimizer.Adam
    kwargs: dict[str, Any] = {"learning_rate": 1e-3}
    if params is not None:
        kwargs["parameters"] = params
    return cls(**kwargs)


def _model(kind: str, dims: dict[str, int]) -> Any:
    nn = paddle.nn
    if kind == "transformer":
        layer = nn.TransformerEncoderLayer(dims["d"], dims["heads"], dims["ff"], dropout=0.0)
        return nn.TransformerEncoder(layer, dims["layers"])
    return nn.LSTM(dims["d"], dims["d"])


def _forward(kind: str, model: Any, x: Any) -> Any:
    out = model(x) if kind == "transformer" else model(x)[0]
    return paddle.mean(paddle.square(out - 0.5))


def static_step(kind: str, dims: dict[str, int], x: np.ndarray) -> tuple[Callable[[], object], float, bool]:
    """One step of the static program on the default (compiled) backend, after its
    first run: (the step, the first run's seconds, whether it ran native, not fallen
    back to the interpreter)."""
    core.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            xv = paddle.static.data("x", list(x.shape), "float32")
            loss = _forward(kind, _model(kind, dims), xv)
            _optimizer().minimize(loss)
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            t = time.perf_counter()
            exe.run(main, feed={"x": x}, fetch_list=[loss])
            first = time.perf_counter() - t
        native = not any("interpreter" in str(w.message) for w in caught)
        return (lambda: exe.run(main, feed={"x": x}, fetch_list=[loss])), first, native
    finally:
        core.disable_static()


def pullback_static(kind: str, dims: dict[str, int], x: np.ndarray, repeat: int) -> tuple[float, str]:
    """Seconds per step of the static program on the default (compiled) backend."""
    step, first, native = static_step(kind, dims, x)
    note = f"first run (compile) {first:.1f} s; {'native' if native else 'FELL BACK to the interpreter'}"
    return timeit(step, repeat), note


def eager_step(kind: str, dims: dict[str, int], x: np.ndarray) -> Callable[[], None]:
    """One eager step (forward, backward, optimizer step, clear_grad)."""
    model = _model(kind, dims)
    opt = _optimizer(model.parameters())
    xt = paddle.to_tensor(x)

    def step() -> None:
        loss = _forward(kind, model, xt)
        loss.backward()
        opt.step()
        opt.clear_grad()

    return step


def pullback_eager(kind: str, dims: dict[str, int], x: np.ndarray, repeat: int) -> float:
    """Seconds per eager step (forward, backward, optimizer step, clear_grad)."""
    return timeit(eager_step(kind, dims, x), repeat)


def torch_step(kind: str, dims: dict[str, int], x: np.ndarray) -> Callable[[], None] | None:
    """One PyTorch eager step of the same model, or None without torch.  It runs
    `OMP_NUM_THREADS` threads (one unless set), as BLAS does on our side."""
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "1")))
    if kind == "transformer":
        layer = torch.nn.TransformerEncoderLayer(dims["d"], dims["heads"], dims["ff"], dropout=0.0,
                                                 batch_first=True)
        model: Any = torch.nn.TransformerEncoder(layer, dims["layers"], enable_nested_tensor=False)
    else:
        model = torch.nn.LSTM(dims["d"], dims["d"], batch_first=True)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    xt = torch.tensor(x)

    def step() -> None:
        out = model(xt) if kind == "transformer" else model(xt)[0]
        loss = ((out - 0.5) ** 2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()

    return step


def torch_eager(kind: str, dims: dict[str, int], x: np.ndarray, repeat: int) -> float | None:
    """Seconds per PyTorch eager step of the same model, or None without torch."""
    step = torch_step(kind, dims, x)
    return None if step is None else timeit(step, repeat)


CASES: dict[str, tuple[dict[str, int], tuple[int, int]]] = {
    "transformer": ({"d": 128, "heads": 4, "ff": 512, "layers": 2}, (16, 64)),
    "lstm": ({"d": 128}, (32, 32)),
}
"""Each workload's dimensions and (batch, sequence length)."""

QUICK_CASES: dict[str, tuple[dict[str, int], tuple[int, int]]] = {
    "transformer": ({"d": 32, "heads": 4, "ff": 64, "layers": 2}, (4, 16)),
    "lstm": ({"d": 32}, (8, 8)),
}
"""`--quick`'s smaller shapes (a smoke test)."""


def seq_input(kind: str, quick: bool = False, rng: np.random.Generator | None = None) -> np.ndarray:
    """The input batch of `kind` ([batch, seq, d] float32, from `rng`, else seed 0)."""
    dims, (batch, seq) = (QUICK_CASES if quick else CASES)[kind]
    rng = rng if rng is not None else np.random.default_rng(0)
    return rng.standard_normal((batch, seq, dims["d"])).astype(np.float32)


def main() -> None:
    """Run both workloads and print one table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="small shapes (a smoke test)")
    ap.add_argument("--only", choices=["transformer", "lstm"], default=None)
    ap.add_argument("--eager-only", action="store_true", help="skip the static (compiled) column")
    args = ap.parse_args()
    paddle.seed(1)
    rng = np.random.default_rng(0)
    cases = QUICK_CASES if args.quick else CASES
    print(f"# {platform.processor() or platform.machine()}, Python {platform.python_version()}, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")
    print("| workload | pullback static compiled | pullback eager | torch eager | static / torch | eager / torch | note |")
    print("|---|---|---|---|---|---|---|")
    for kind, (dims, (batch, seq)) in cases.items():
        if args.only and kind != args.only:
            continue
        x = seq_input(kind, args.quick, rng)
        st, note = (float("nan"), "static skipped") if args.eager_only else pullback_static(kind, dims, x, args.repeat)
        ea = pullback_eager(kind, dims, x, args.repeat)
        tt = torch_eager(kind, dims, x, args.repeat)

        def ratio(v: float, tt: float | None = tt) -> str:
            return f"{v / tt:.2f}x" if tt else "-"

        print(f"| {kind} {dims} batch {batch} seq {seq} | {st * 1e3:.1f} ms | {ea * 1e3:.1f} ms | "
              f"{'%.1f ms' % (tt * 1e3) if tt else 'skipped: torch not installed'} | {ratio(st)} | "
              f"{ratio(ea)} | {note} |", flush=True)


if __name__ == "__main__":
    main()
