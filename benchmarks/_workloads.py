"""The workloads `run_all` measures, built inside one worker process.

Every (workload, side) pair is made by the benchmark modules' own builders
(`bench_cpu`, `bench_resnet`, `bench_seq`, `bench_eager`, `ad_build`, `bench_compile`,
`programs`): this module only chooses them, and reports which threads and versions
the worker ran with.  torch and jax are imported only when a side needs them, so
this module imports without either.  (Paddle's side runs in Paddle's own interpreter:
`paddle_peer.py`.)
"""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

SIDE_LABELS: dict[str, str] = {
    "ours": "pullback compiled",
    "ours-eager": "pullback eager",
    "jax": "JAX jit",
    "torch": "PyTorch eager",
    "paddle": "Paddle static",
    "paddle-eager": "Paddle dygraph",
    "ours-fit": "pullback Model dynamic",
    "ours-fit-static": "pullback Model static",
    "paddle-fit": "Paddle Model dynamic",
    "paddle-fit-static": "Paddle Model static",
}
"""How each side is named in the tables."""

PEER_MODULES: dict[str, str] = {"jax": "jax", "torch": "torch", "paddle": "paddle"}
"""The module a peer side needs (the side is skipped where it is not installed)."""

OURS = ("ours", "ours-eager", "ours-fit")
"""Our sides (every other side is a peer; `ours-fit-static`, pullback's own static
Model, is the peer `fit` is measured against)."""

PADDLE_SIDES = ("paddle", "paddle-eager", "paddle-fit", "paddle-fit-static")
"""Sides run in Paddle's own interpreter (`paddle_peer.py`), in separate processes only."""

EAGER_WORKLOADS = ("eager-lenet", "eager-resnet18", "eager-transformer", "eager-lstm", "fit-lenet", "fit-mlp")
"""Issue 33's eager table set (`run_all --only eager`): each worker also reports its
first three steps, and our first separate-process round runs from a cold disk cache."""


class SideSkipped(Exception):
    """A side that cannot run in this interpreter (its library is not installed)."""


@dataclass
class Prepared:
    """One side of a workload, ready to time: `step` runs one training step (or one
    forward and backward); `first_s` is the first call's seconds (a compile, or a
    load from the disk cache) where the builder already made that call."""

    step: Callable[[], object]
    first_s: float | None = None
    note: str = ""
    per_call: int = 1
    """Training steps in one call (a `fit` epoch's batches): times are divided by it."""
    settle: Callable[[], object] | None = None
    """Run after the first three calls of an eager workload, before timing (the
    background compiles of native eager kernels, then their trials)."""


def missing_peer(side: str) -> str | None:
    """The module `side` needs when this interpreter lacks it, else None (without
    importing it: torch alone takes seconds)."""
    module = PEER_MODULES.get(side)
    if module is None or importlib.util.find_spec(module) is not None:
        return None
    return module


def configure_torch(threads: int) -> None:
    """torch on `threads` intra-op threads and one inter-op thread (before any torch
    work: the inter-op pool can be sized only before it starts)."""
    import torch

    torch.set_num_threads(threads)
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:  # already started in this process: keep its pool
        pass


def _ours_compiled(built: object, feeds: dict[str, np.ndarray], scope: dict[str, np.ndarray]) -> Prepared:
    """A `programs.Built` on the compiled backend, its first run (compile) done."""
    from pullback.runtime.native.backend import CompiledBackend

    backend = CompiledBackend()
    state = {k: v.copy() for k, v in scope.items()}
    module, fetch = built.module, built.fetch  # type: ignore[attr-defined]
    t = time.perf_counter()
    backend.run(module, feeds, state, fetch)
    first = time.perf_counter() - t
    return Prepared(lambda: backend.run(module, feeds, state, fetch), first)


def _classifier(workload: str, side: str, tiny: bool) -> Prepared:
    """The MLP, residual MLP and fan-out chain (`bench_cpu`'s builders)."""
    from pullback.benchmarks import bench_cpu

    if workload == "fanout":
        from pullback.benchmarks.programs import fanout_chain

        n = 1 << 10 if tiny else 1 << 20
        x, yv = bench_cpu.fanout_data(n)
        if side == "ours":
            return _ours_compiled(fanout_chain(n, 20, 4), {"x": x, "y": yv}, {})
        step = bench_cpu.jax_fanout_step(x, yv) if side == "jax" else bench_cpu.torch_fanout_step(x, yv)
        assert step is not None
        return Prepared(step)
    if workload == "mlp":
        case = bench_cpu.mlp_case((32, 16, 10), 8) if tiny else bench_cpu.mlp_case()
        peers = {"jax": bench_cpu.jax_mlp_step, "torch": bench_cpu.torch_mlp_peer}
    else:
        case = bench_cpu.resmlp_case(1, 16, 8) if tiny else bench_cpu.resmlp_case()
        peers = {"jax": bench_cpu.jax_resmlp_step, "torch": bench_cpu.torch_resmlp_step}  # type: ignore[dict-item]
    if side == "ours":
        return _ours_compiled(case.built, case.feeds, case.built.scope)
    peer_step = peers[side](case)
    assert peer_step is not None
    return Prepared(peer_step)


def _resnet18(side: str, tiny: bool) -> Prepared:
    """`bench_resnet`'s ResNet-18 step (batch 2 when `tiny`)."""
    from pullback.benchmarks import bench_resnet

    batch = 2 if tiny else 32
    if side == "ours":
        step, first, fallback = bench_resnet.ours_step(batch, 0.01)
        return Prepared(step, first, fallback[0] if fallback else "")
    torch_step = bench_resnet.torch_step(batch, 0.01)
    assert torch_step is not None
    return Prepared(torch_step)


def _sequence(kind: str, side: str, tiny: bool) -> Prepared:
    """`bench_seq`'s Transformer or LSTM step (its `--quick` shapes when `tiny`)."""
    import pullback as paddle
    from pullback.benchmarks import bench_seq

    paddle.seed(1)
    dims = (bench_seq.QUICK_CASES if tiny else bench_seq.CASES)[kind][0]
    x = bench_seq.seq_input(kind, tiny)
    if side == "ours":
        step, first, native = bench_seq.static_step(kind, dims, x)
        return Prepared(step, first, "" if native else "fell back to the interpreter")
    if side == "ours-eager":
        return Prepared(bench_seq.eager_step(kind, dims, x))
    torch_step = bench_seq.torch_step(kind, dims, x)
    assert torch_step is not None
    return Prepared(torch_step)


def _eager_mlp(side: str) -> Prepared:
    """`bench_eager`'s MLP with dropout, `nn` layers (issue 18's eager workload)."""
    from pullback.benchmarks import bench_eager

    rng = np.random.default_rng(0)
    if side == "ours-eager":
        return Prepared(bench_eager.pb_mlp_dropout(rng))
    import torch

    return Prepared(bench_eager.torch_mlp_dropout(torch, rng))


STEP_SIDES: dict[str, tuple[str, ...]] = {
    "mlp": ("ours", "jax", "torch", "paddle"),
    "resmlp": ("ours", "jax", "torch"),
    "fanout": ("ours", "jax", "torch"),
    "resnet18": ("ours", "torch", "paddle"),
    "lstm": ("ours", "ours-eager", "torch", "paddle"),
    "transformer": ("ours", "ours-eager", "torch", "paddle"),
    "eager-mlp": ("ours-eager", "torch"),
    "eager-lenet": ("ours-eager", "torch", "paddle-eager"),
    "eager-resnet18": ("ours-eager", "torch", "paddle-eager"),
    "eager-transformer": ("ours-eager", "torch", "paddle-eager"),
    "eager-lstm": ("ours-eager", "torch", "paddle-eager"),
    "fit-lenet": ("ours-fit", "ours-fit-static", "paddle-fit", "paddle-fit-static"),
    "fit-mlp": ("ours-fit", "ours-fit-static", "paddle-fit", "paddle-fit-static"),
}
"""The sides each step workload has (Paddle's run in `paddle_peer.py`)."""


def paddle_workload(workload: str, side: str) -> str:
    """The `paddle_peer.py` workload of Paddle's `side` of `workload`."""
    if side == "paddle-fit-static":
        return f"{workload}-static"
    return workload


def _issue33(workload: str, side: str, tiny: bool) -> Prepared:
    """An issue-33 workload's side in this interpreter (`bench_eager.eager_side`)."""
    from pullback.benchmarks import bench_eager

    name = workload if workload.startswith("fit-") else workload[len("eager-"):]
    bench_side = {"ours-eager": "ours", "ours-fit": "dynamic", "ours-fit-static": "static"}.get(side, side)
    step, per_call = bench_eager.eager_side(name, bench_side, tiny)
    settle = None
    if side != "torch":
        def settle() -> None:
            bench_eager.wait_background()  # the background compiles, then their trials
            for _ in range(2):
                step()

    return Prepared(step, per_call=per_call, settle=settle)


def prepare(workload: str, side: str, tiny: bool = False) -> Prepared:
    """Build `side` of the step workload `workload` (`tiny`: small shapes, for tests);
    SideSkipped where its library is missing."""
    if side not in STEP_SIDES.get(workload, ()) or side in PADDLE_SIDES:
        raise ValueError(f"no side {side!r} of workload {workload!r} in this interpreter")
    missing = missing_peer(side)
    if missing is not None:
        raise SideSkipped(f"{missing} not installed")
    if workload in ("mlp", "resmlp", "fanout"):
        return _classifier(workload, side, tiny)
    if workload == "resnet18":
        return _resnet18(side, tiny)
    if workload in ("lstm", "transformer"):
        return _sequence(workload, side, tiny)
    if workload in EAGER_WORKLOADS:
        return _issue33(workload, side, tiny)
    return _eager_mlp(side)


AD_SIZES = (1000, 5000, 10000)
"""The chains `append_backward` is timed on (`ad_build.build_chain`'s op counts)."""

TINY_AD_SIZES = (30, 60)


def measure_values(workload: str, tiny: bool = False, repeats: int = 3) -> dict[str, float]:
    """Seconds of one-off measurements, by label: `ad-build` ({ops: append_backward
    seconds, best of `repeats` up to 5,000 ops, one run above, as `ad_build` does}),
    `compile-mlp` and `compile-resnet18` ({"compile": seconds of `compile_program`
    with the disk cache off, after a small warm-up compile that sets up the JIT})."""
    if workload == "ad-build":
        import pullback as paddle
        from pullback.benchmarks import ad_build

        paddle.enable_static()
        return {str(n): ad_build.time_append_backward(n, repeats if n <= 5000 else 1)
                for n in (TINY_AD_SIZES if tiny else AD_SIZES)}
    if workload not in ("compile-mlp", "compile-resnet18"):
        raise ValueError(f"unknown workload {workload!r}")
    # Set before the compiled backend is imported; the driver sets it too.
    os.environ["PULLBACK_CACHE"] = "0"
    from pullback.benchmarks.programs import elementwise_chain, mlp_train
    from pullback.runtime.native.compiler import compile_program

    warm = elementwise_chain(64, 2)
    compile_program(warm.module, warm.fetch)
    if workload == "compile-mlp":
        built = mlp_train((32, 16, 10) if tiny else (784, 512, 512, 10), 0.01)
        module, fetches = built.module, built.fetch
    else:
        from pullback.benchmarks.bench_compile import resnet18_step

        _, module, fetches, _, _ = resnet18_step(2 if tiny else 32)
    t = time.perf_counter()
    compile_program(module, fetches)
    return {"compile": time.perf_counter() - t}


def thread_report(sides: list[str]) -> dict[str, str]:
    """The threads each library of this process runs now, by name (what ran, not
    only what was asked): ours (run and compile), each BLAS (threadpoolctl), torch,
    and JAX's flags."""
    out: dict[str, str] = {}
    if any(s in OURS for s in sides):
        from pullback.runtime.native import threadpool
        from pullback.runtime.native.settings import compile_threads

        from pullback.runtime.native import blas

        out["pullback"] = str(threadpool.get_num_threads())
        out["pullback compile"] = str(compile_threads())
        binding = blas.bound()
        if binding is not None:  # which BLAS ours ran (OpenBLAS, MKL, or both routed by size)
            out["pullback BLAS"] = binding.describe()
    try:
        from threadpoolctl import threadpool_info

        for info in threadpool_info():
            if info.get("user_api") == "blas":
                out[str(info.get("internal_api"))] = str(info.get("num_threads"))
    except Exception:  # noqa: BLE001 - threadpoolctl is optional; then the variables say
        out["OPENBLAS_NUM_THREADS"] = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
    torch = sys.modules.get("torch")
    if torch is not None:
        out["torch"] = f"{torch.get_num_threads()} (interop {torch.get_num_interop_threads()})"
    if "jax" in sys.modules:
        out["jax XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "")
    return out


def version_report() -> dict[str, str]:
    """Versions of the libraries this process loaded."""
    out = {"python": sys.version.split()[0], "numpy": np.__version__}
    for name in ("llvmlite", "torch", "jax"):
        module = sys.modules.get(name)
        if module is not None:
            out[name] = str(getattr(module, "__version__", "?"))
    return out
