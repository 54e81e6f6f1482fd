"""Eager forward + backward per iteration: pullback vs PyTorch eager, in one run.

    python -m pullback.benchmarks.bench_eager [--iters N] [--rounds R] [--only W ...]
        [--paddle-python PATH] [--profile] [--no-first-steps] [--no-pin]

Workloads (the issue's): the `paddle.autograd.backward` seed example (two 2x2
matmuls, backward with two seed tensors, clear_grad) and a 3-layer MLP (64-128-128-10,
ReLU, mean squared error, batch 32) forward + backward + clear_grad, written with
`paddle.matmul`; and issue 18's 3-layer MLP with dropout written with `nn` layers
(`Linear`, `ReLU`, `Dropout(0.1)`, `F.mse_loss`), as a Paddle user writes it.

Issue 33's training steps (`--only lenet|resnet18|transformer|lstm|fit`): LeNet
(`paddle.vision.models.LeNet`, batch 64 of 1x28x28, cross entropy, Adam), ResNet-18
(batch 32 of 3x32x32, Momentum 0.9, the static table's network), the Transformer
encoder and the LSTM of `bench_seq` (AdamW, the static tables' sizes): forward,
backward, `step`, `clear_grad`; target ratios to PyTorch eager 1.2x, 1.2x, 1.0x, 1.0x.
The models are `eager_workloads`' (Paddle's side runs the very same code).  `fit`:
`paddle.Model.fit` of LeNet and of the MLP 784-512-512-10 (batch 64, Adam,
`DataLoader` over an in-memory dataset, `verbose=0`) in dynamic mode against the
static-mode Model (`enable_static` before `Model(...)`, `InputSpec`s), per step,
the first epoch (the compile) excluded; target dynamic / static <= 1.2x.

Every side runs one thread (`*_NUM_THREADS=1`, `torch.set_num_threads(1)`), the
process and its children pinned to one core (`os.sched_setaffinity`, as `run_all`);
pullback and torch in interleaved rounds of one process, the median round reported.
With `--paddle-python` Paddle 3.3.1 runs the same workload in dygraph mode in its own
process (`paddle_peer.py eager-*`/`fit-*`).  For issue 33's workloads the first three
steps of fresh processes are printed: ours from a cold disk cache of compiled code
(`PULLBACK_CACHE_DIR` a new folder) then a warm one, torch's, Paddle's.  `--profile`
prints a cProfile of our side.  PyTorch is only imported here: it is never a
dependency of pullback.

Also reported: pullback's plan-cache hits and misses (the backward of a repeated
graph shape is differentiated once), and the cost of one backward whose plan is
rebuilt every time (the cache disabled), to show what the cache saves.
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()
"""When this process began (before numpy, pullback and torch are imported): the
first steps' `ready_s` counts from here."""

import argparse  # noqa: E402
import os  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
from collections.abc import Callable  # noqa: E402

# One thread on every side (BLAS, pullback's pool, torch's OpenMP), set before any import.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "PULLBACK_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

import pullback as paddle  # noqa: E402
import pullback.nn.functional as F  # noqa: E402
from pullback.benchmarks import eager_workloads as E  # noqa: E402
from pullback.frontend import autograd, eager_native  # noqa: E402
from pullback.frontend.hapi import compiled_step  # noqa: E402

DIMS = [64, 128, 128, 10]
BATCH = 32


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


def pb_lenet(rng: np.random.Generator) -> Callable[[], None]:
    """Issue 33's workload: one eager LeNet training step with Adam
    (`eager_workloads.lenet_step`, the definition Paddle's side runs too)."""
    return E.lenet_step(paddle, rng)


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


def torch_lenet(torch, rng: np.random.Generator, batch: int = E.LENET_BATCH) -> Callable[[], None]:
    """The same LeNet (Paddle's layout) and step in PyTorch."""
    nn = torch.nn
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(1, 6, 3, stride=1, padding=1), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Conv2d(6, 16, 5, stride=1, padding=0), nn.ReLU(), nn.MaxPool2d(2, 2),
        nn.Flatten(), nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10),
    )
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    xv, yv = E.lenet_data(rng, batch)
    x, y = torch.from_numpy(xv), torch.from_numpy(yv[:, 0])
    ce = torch.nn.functional.cross_entropy

    def step() -> None:
        loss = ce(model(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()

    return step


# ------------------------------------------------------------------- timing


def wait_background(timeout: float | None = None) -> bool:
    """Block until pullback's background compiles are done: native eager kernels and
    whole-step regions (`eager_native`), dynamic Models' training steps
    (`hapi.compiled_step`); False on timeout."""
    return eager_native.wait(timeout) and compiled_step.wait(timeout)


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


# ------------------------------------------------- issue 33's eager workloads

ISSUE33: dict[str, tuple[str, int, float]] = {
    "lenet": ("LeNet Adam b=64", 20, 1.2),
    "resnet18": ("ResNet-18 Momentum b=32", 2, 1.2),
    "transformer": ("Transformer AdamW", 4, 1.0),
    "lstm": ("LSTM AdamW", 8, 1.0),
}
"""Issue 33's step workloads: (label, steps per timed round at `--iters 200`, the
target ratio to PyTorch eager)."""

FIT_TARGET = 1.2
"""Issue 33: `Model.fit` in dynamic mode at most 1.2x the static Model's step."""

WORKLOADS = ("seed", "mlp", "mlp_dropout", *ISSUE33, "fit")
"""Every `--only` choice."""

MARKER = "BENCH_EAGER_RESULT "
"""The prefix of a `--first-steps-worker` result line."""


def eager_side(workload: str, side: str, tiny: bool = False) -> tuple[Callable[[], None], int]:
    """(one call, training steps per call) of `side` of an issue-33 workload: "ours"
    (pullback eager) or "torch" for the step workloads; "dynamic" or "static"
    (pullback's `paddle.Model`, one `fit` epoch per call) for `fit-lenet`/`fit-mlp`.
    `tiny`: small shapes (tests of the harness)."""
    if workload.startswith("fit-"):
        if side not in ("dynamic", "static"):
            raise ValueError(f"fit workloads have sides 'dynamic' and 'static', not {side!r}")
        batches = E.TINY_FIT_BATCHES if tiny else E.FIT_BATCHES
        return E.fit_epoch(paddle, workload[4:], side == "static", batches, 4 if tiny else E.FIT_BATCH), batches
    if side not in ("ours", "torch"):
        raise ValueError(f"eager workloads have sides 'ours' and 'torch', not {side!r}")
    rng = np.random.default_rng(0)
    if workload == "lenet":
        if side == "ours":
            return E.lenet_step(paddle, rng, 4 if tiny else E.LENET_BATCH), 1
        import torch

        return torch_lenet(torch, rng, 4 if tiny else E.LENET_BATCH), 1
    if workload == "resnet18":
        from pullback.benchmarks import bench_resnet

        batch = 2 if tiny else E.RESNET_BATCH
        step = E.resnet18_step(paddle, batch) if side == "ours" else bench_resnet.torch_step(batch, 0.01)
        if step is None:
            raise ImportError("torch")
        return step, 1
    if workload in ("transformer", "lstm"):
        from pullback.benchmarks import bench_seq

        paddle.seed(1)
        dims = (bench_seq.QUICK_CASES if tiny else bench_seq.CASES)[workload][0]
        x = bench_seq.seq_input(workload, tiny)
        seq = bench_seq.eager_step(workload, dims, x) if side == "ours" else bench_seq.torch_step(workload, dims, x)
        if seq is None:
            raise ImportError("torch")
        return seq, 1
    raise ValueError(f"unknown eager workload {workload!r} (expected one of {', '.join(ISSUE33)}, fit-lenet, fit-mlp)")


def paddle_workload(workload: str, side: str = "dynamic") -> str:
    """The `paddle_peer.py` workload of an issue-33 workload's Paddle side."""
    if workload.startswith("fit-"):
        return workload + ("-static" if side == "static" else "")
    return f"eager-{workload}"


def pin_one_core() -> int | None:
    """Pin this process (and the processes it starts) to its first allowed core, as
    `run_all` does: one thread against one thread is then a fact.  The core, or None
    where the system cannot pin."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    core = min(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {core})
    return core


def run_paddle(paddle_python: str, workload: str, steps: int, warmup: int) -> dict[str, object]:
    """Paddle 3.3.1's side (dygraph, or its `Model` in either mode) in a fresh process
    of `paddle_python` with one thread (`paddle_peer.py`): its result side, or
    `{"error": ...}`."""
    import json
    import subprocess
    import sys
    from pathlib import Path

    cmd = [paddle_python, str(Path(__file__).resolve().parent / "paddle_peer.py"), workload,
           "--steps", str(steps), "--warmup", str(warmup)]
    # One thread, as `run_all.worker_env(1)` gives (not imported: run_all's workers
    # import this module); CPU_NUM 1: Paddle's static executor on one CPU place.
    env = dict(os.environ, RUN_ALL_THREADS="1", CPU_NUM="1",
               **{v: "1" for v in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")})
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
    except (OSError, subprocess.SubprocessError) as e:
        return {"error": f"{type(e).__name__}: {e}"}
    marker = "RUN_ALL_RESULT "  # paddle_peer's result line
    result = next((json.loads(x[len(marker):]) for x in reversed(proc.stdout.splitlines()) if x.startswith(marker)),
                  None)
    if result is None:
        tail = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"exit {proc.returncode}: {tail[:300]}"}
    side: dict[str, object] = result["sides"]["paddle"]
    if "error" in side:
        print(json.dumps(side), file=sys.stderr)
    return side


def first_steps_worker(workload: str, side: str) -> None:
    """`--first-steps-worker`: in this fresh process, build `side` of `workload` and
    time its first three calls; print the result line (seconds since the process
    started until the step was built, and the three calls' seconds)."""
    import json

    if side == "torch":
        import torch

        torch.set_num_threads(1)
    step, per_call = eager_side(workload, side)
    ready = time.perf_counter() - STARTED
    times = []
    for _ in range(3):
        t = time.perf_counter()
        step()
        times.append((time.perf_counter() - t) / per_call)
    # When the background compiles (native eager kernels, Model steps) finished (ours only).
    done = side != "torch" and wait_background()
    out = {"ready_s": ready, "first_steps_s": times, "native_done_s": time.perf_counter() - STARTED if done else None}
    print(MARKER + json.dumps(out), flush=True)


def first_steps(workload: str, sides: list[str], paddle_first: dict[str, object] | None) -> None:
    """Print the first three steps' latency of each side in a fresh process: ours from
    a cold disk cache of compiled code (`PULLBACK_CACHE_DIR` a new empty folder) and
    then a warm one (the same folder again); torch; Paddle's (from its timed run)."""
    import json
    import subprocess
    import sys
    import tempfile

    def line(what: str, r: dict[str, object]) -> None:
        steps = ", ".join(f"{1e3 * t:.1f}" for t in r["first_steps_s"])  # type: ignore[attr-defined]
        extra = f"; native compiles done {r['native_done_s']:.2f} s after start" if r.get("native_done_s") else ""
        per = " (per step, of each of the first three epochs)" if workload.startswith("fit-") else ""
        print(f"  first three steps{per}, {what:<30}: {steps} ms (built {r['ready_s']:.2f} s after start{extra})")

    with tempfile.TemporaryDirectory(prefix="bench_eager_cache_") as cache:
        runs = [(s, c) for s in sides for c in ((True, False) if s != "torch" else (None,))]
        for side, cold in runs:
            env = dict(os.environ, PULLBACK_CACHE_DIR=cache)
            cmd = [sys.executable, "-m", "pullback.benchmarks.bench_eager", "--first-steps-worker", workload,
                   "--side", side]
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1800)
            result = next((json.loads(x[len(MARKER):]) for x in proc.stdout.splitlines() if x.startswith(MARKER)),
                          None)
            label = {"ours": "pullback eager", "dynamic": "pullback Model dynamic",
                     "static": "pullback Model static", "torch": "torch eager"}[side]
            if cold is not None:
                label += ", cold cache" if cold else ", warm cache"
            if result is None:
                print(f"  first three steps, {label}: failed: {(proc.stderr.strip().splitlines() or ['?'])[-1]}")
            else:
                line(label, result)
    if paddle_first is not None and "first_steps_s" in paddle_first:
        line("Paddle 3.3.1 Model dynamic" if workload.startswith("fit-") else "Paddle 3.3.1 dygraph", paddle_first)


def profile(step: Callable[[], None], calls: int, top: int = 25) -> None:
    """cProfile `calls` calls of a warmed-up `step`: the top entries by cumulative
    and by own time."""
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        step()
    prof.disable()
    stats = pstats.Stats(prof)
    for key in ("cumulative", "tottime"):
        print(f"--- profile of {calls} calls, by {key}")
        stats.sort_stats(key).print_stats(top)
    print(profile_summary(stats, calls))


def profile_summary(stats: object, calls: int) -> str:
    """Own time per call split by where it ran: native code (`eager_native`'s
    compiled eager kernels and backward plans, and compiled programs such as
    `to_static`'s, entered through `interrupts.call`; ctypes calls are not profiled
    apart, so their callers' own time is theirs), the reference kernels
    (`runtime/kernels`), C builtins (numpy's, BLAS's), and the rest, the Python of
    the frontend (op dispatch, recording, the backward runner, the optimizer's loop);
    with the eager ops run per call and that Python's share per op."""
    groups = {"native code": 0.0, "reference kernels": 0.0, "C builtins (numpy, BLAS)": 0.0, "Python": 0.0}
    ops = 0
    python_calls = 0
    for (path, _, func), (_, ncalls, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        if (path.endswith("eager_native.py") and func == "__call__") or \
                (path.endswith("runtime/native/interrupts.py") and func == "call"):
            groups["native code"] += tottime
        elif "/runtime/kernels/" in path:
            groups["reference kernels"] += tottime
        elif path == "~":
            groups["C builtins (numpy, BLAS)"] += tottime
        else:
            groups["Python"] += tottime
            python_calls += ncalls
        if path.endswith("frontend/eager.py") and func == "execute":
            ops += ncalls
    total = sum(groups.values())
    parts = ", ".join(f"{k} {1e3 * v / calls:.2f} ms ({100 * v / total:.0f}%)" for k, v in groups.items())
    per_op = f"; {ops // calls} eager ops a call, Python {1e6 * groups['Python'] / max(1, ops):.0f} us per op" \
        if ops else ""
    return (f"--- own time per call (profiled, {1e3 * total / calls:.2f} ms): {parts}; "
            f"{python_calls // calls} Python function calls a call{per_op}")


def compare_issue33(workload: str, torch, iters: int, rounds: int, paddle_python: str | None,
                    with_first: bool, do_profile: bool) -> None:
    """Issue 33's step workload: pullback eager against PyTorch eager in interleaved
    rounds of this process, Paddle dygraph in its own process, then (`with_first`)
    the first three steps of fresh processes, and (`do_profile`) a cProfile of ours."""
    label, per_round, target = ISSUE33[workload]
    n = max(1, per_round * iters // 200)
    ours, _ = eager_side(workload, "ours")
    theirs = eager_side(workload, "torch")[0] if torch is not None else None
    compare(label, ours, theirs, n, rounds, unit="ms")
    print(f"  target (issue 33): pullback eager / torch eager <= {target:.1f}x")
    # Which regions run natively is decided by timed trials (`eager_native`): say how
    # many kept their native code, since a trial lost under load keeps the reference.
    print(f"  native eager: {eager_native.compiled_count()} regions holding native code; {eager_native.stats}")
    paddle_side = None
    if paddle_python:
        paddle_side = run_paddle(paddle_python, paddle_workload(workload), max(3, n * rounds // 2), 2)
        if "times_s" in paddle_side:
            print(f"  Paddle 3.3.1 dygraph (own process, median of {len(paddle_side['times_s'])} steps): "  # type: ignore[arg-type]
                  f"{1e3 * statistics.median(paddle_side['times_s']):.1f} ms")  # type: ignore[arg-type]
        else:
            print(f"  Paddle 3.3.1 dygraph: {paddle_side}")
    if with_first:
        first_steps(workload, ["ours"] + (["torch"] if torch is not None else []), paddle_side)
    if do_profile:
        profile(ours, max(1, n))


def compare_fit(net: str, iters: int, rounds: int, paddle_python: str | None, with_first: bool,
                do_profile: bool) -> None:
    """Issue 33's `Model.fit`: pullback's Model in dynamic mode against its static
    mode, in interleaved rounds of one process (one epoch of `FIT_BATCHES` batches a
    call; time per step = epoch / batches); Paddle's Model in both modes, each in its
    own process."""
    workload = f"fit-{net}"
    dyn, batches = eager_side(workload, "dynamic")
    sta, _ = eager_side(workload, "static")
    for call in (dyn, sta):  # the first epoch compiles (excluded)
        call()
    wait_background()
    dyn()
    a, b = [], []
    n = max(1, iters // 200)
    for _ in range(rounds):
        a.append(per_iter_us(dyn, n) / batches / 1e3)
        b.append(per_iter_us(sta, n) / batches / 1e3)
    ma, mb = statistics.median(a), statistics.median(b)
    print(f"Model.fit {net:<15} median ms/step: dynamic {ma:7.2f}, static {mb:7.2f}, ratio {ma / mb:4.2f}x "
          f"(target <= {FIT_TARGET:.1f}x, issue 33) | best {min(a):.2f} vs {min(b):.2f}")
    paddle_first = None
    if paddle_python:
        for mode in ("dynamic", "static"):
            side = run_paddle(paddle_python, paddle_workload(workload, mode), max(3, rounds), 1)
            if "times_s" in side:
                print(f"  Paddle 3.3.1 Model {mode} (own process): "  # type: ignore[arg-type]
                      f"{1e3 * statistics.median(side['times_s']):.2f} ms/step")  # type: ignore[arg-type]
            else:
                print(f"  Paddle 3.3.1 Model {mode}: {side}")
            paddle_first = side if mode == "dynamic" else paddle_first
    if with_first:
        first_steps(workload, ["dynamic", "static"], paddle_first)
    if do_profile:
        profile(dyn, 2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--iters", type=int, default=200, help="MLP steps per round (every other workload "
                    "scales its own count by iters/200)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--only", action="append", choices=WORKLOADS, help="run only this workload (repeatable)")
    ap.add_argument("--paddle-python", metavar="PATH", help="an interpreter with Paddle 3.3.1: its dygraph "
                    "(and Model) side of issue 33's workloads, each in its own process")
    ap.add_argument("--no-first-steps", action="store_true", help="skip the fresh-process first steps")
    ap.add_argument("--profile", action="store_true", help="cProfile our side of issue 33's workloads")
    ap.add_argument("--no-pin", action="store_true", help="do not pin to one core")
    ap.add_argument("--first-steps-worker", metavar="WORKLOAD", help=argparse.SUPPRESS)
    ap.add_argument("--side", default="ours", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.first_steps_worker:
        first_steps_worker(args.first_steps_worker, args.side)
        return
    core = None if args.no_pin else pin_one_core()
    try:
        import torch

        torch.set_num_threads(1)
        tver = torch.__version__
    except ImportError:
        torch, tver = None, "not installed"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}  {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, Python {platform.python_version()}, numpy {np.__version__}, "
          f"torch {tver}, threads: " + " ".join(f"{v}={os.environ[v]}" for v in
                                                 ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                                  "PULLBACK_NUM_THREADS"))
          + f", torch {torch.get_num_threads() if torch else '-'}; pinned to core {core}; "
          f"PULLBACK_EAGER_NATIVE={os.environ.get('PULLBACK_EAGER_NATIVE', 'default (on)')}; load {load:.2f}")
    rng = np.random.default_rng(0)
    only = args.only or ["seed", "mlp", "mlp_dropout", "lenet"]
    if "seed" in only:
        compare("seed example fwd+bwd", pb_seed(), torch_seed(torch) if torch else None, args.iters, args.rounds)
    if "mlp" in only:
        compare("MLP 64-128-128-10 b=32", pb_mlp(rng), torch_mlp(torch, rng) if torch else None,
                args.iters, args.rounds)
    if "mlp_dropout" in only:
        compare("MLP+dropout nn layers", pb_mlp_dropout(rng), torch_mlp_dropout(torch, rng) if torch else None,
                args.iters, args.rounds)
    for workload in ISSUE33:
        if workload in only:
            compare_issue33(workload, torch, args.iters, args.rounds, args.paddle_python,
                            not args.no_first_steps and bool(args.only), args.profile)
    if "fit" in only:
        for net in E.FIT_NETS:
            compare_fit(net, args.iters, args.rounds, args.paddle_python, not args.no_first_steps, args.profile)
    if not args.only:
        print(f"plan cache: {autograd.cache_info()}")
        print(f"seed example with the plan rebuilt each step: {uncached_backward_us(50):.1f} us")
        op_costs(args.iters)
    if hasattr(os, "getloadavg"):
        print(f"# load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
