"""CPU benchmarks: our compiled backend against NumPy, PyTorch eager and JAX jit.

Run: `python -m pullback.benchmarks.bench_cpu [--quick]`.  One process, one run;
peers that are not installed are reported as skipped.  torch and jax are optional
(`pip install pullback[bench]`), never runtime dependencies.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import numpy as np
from pullback.benchmarks.programs import (
    FANOUT_KINDS,
    Built,
    ProgramBuilder,
    classifier_step,
    elementwise_chain,
    fanout_chain,
    mlp_train,
    residual_mlp_train,
    torch_mlp_step,
)
from pullback.dialects import pd
from pullback.runtime.native.backend import CompiledBackend
from xdsl.ir import SSAValue


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


def interleaved_times(fns: Sequence[Callable[[], object]], repeat: int, warmup: int = 2) -> list[list[float]]:
    """Seconds of each call of each of `fns`, called once each per round, `repeat`
    rounds (after `warmup` rounds), each round in a new random order (seeded), so
    that every function follows every other about equally often.  (In a fixed
    order, or a fixed order rotated, each call always follows the same one, and
    paid for its cache traffic: our MLP step measured 5% slower right after the
    peers than after our own second variant.)  `result[i][r]` is `fns[i]` in round `r`."""
    for _ in range(warmup):
        for fn in fns:
            fn()
    times: list[list[float]] = [[] for _ in fns]
    order = np.random.default_rng(0)
    for _ in range(repeat):
        for i in order.permutation(len(fns)):
            t = time.perf_counter()
            fns[i]()
            times[i].append(time.perf_counter() - t)
    return times


def timeit_interleaved(fns: list[Callable[[], object]], repeat: int) -> list[float]:
    """Median seconds per call of each of `fns` over `interleaved_times`' rounds."""
    return [float(np.median(ts)) for ts in interleaved_times(fns, repeat)]


Peer = tuple[str, Callable[[], object], str]
"""(name, one call, note) of a peer timed in the same interleaved rounds as ours."""


def _try_import(name: str):  # type: ignore[no-untyped-def]
    try:
        return __import__(name)
    except ImportError:
        return None


# ------------------------------------------------------------------- MLP step


def numpy_mlp_step(params: list[np.ndarray], x: np.ndarray, y: np.ndarray, lr: float) -> float:
    """A hand-written NumPy training step of the same MLP (in place SGD)."""
    acts = [x]
    h = x
    n_layers = len(params) // 2
    for i in range(n_layers):
        h = h @ params[2 * i] + params[2 * i + 1]
        if i < n_layers - 1:
            h = np.maximum(h, 0)
        acts.append(h)
    m = h.max(axis=1, keepdims=True)
    e = np.exp(h - m)
    s = e.sum(axis=1, keepdims=True)
    logp = h - m - np.log(s)
    n = x.shape[0]
    loss = -logp[np.arange(n), y[:, 0]].mean()
    g = e / s
    g[np.arange(n), y[:, 0]] -= 1
    g /= n
    for i in reversed(range(n_layers)):
        w = params[2 * i]
        gw = acts[i].T @ g
        gb = g.sum(axis=0)
        if i > 0:
            g = (g @ w.T) * (acts[i] > 0)
        w -= lr * gw
        params[2 * i + 1] -= lr * gb
    return float(loss)


@dataclass
class Case:
    """A training step's program with its feeds and initial state, and the same
    layer parameters and data as arrays for the peers (which copy them)."""

    built: Built
    feeds: dict[str, np.ndarray]
    params: list[np.ndarray]
    lr: float


def mlp_case(sizes: Sequence[int] = (784, 512, 512, 10), batch: int = 128, lr: float = 0.01) -> Case:
    """The MLP step (relu, softmax cross-entropy, SGD) and its data: `params` are
    `[w0, b0, w1, b1, ...]`, feeds `x` and `label`."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = rng.integers(0, sizes[-1], (batch, 1)).astype(np.int64)
    built = mlp_train(sizes, lr)
    # The layers' weights and biases (the scope also holds the learning rate).
    layer_params = [k for k in built.scope if "." in k]
    params = [built.scope[k].copy() for k in sorted(layer_params, key=lambda k: (k.split(".")[0], k.split(".")[1][0] == "b"))]
    return Case(built, {"x": x, "label": y}, params, lr)


def jax_mlp_step(case: Case) -> Callable[[], None]:
    """A JAX jit SGD step of `case`'s MLP (jax imported here)."""
    import jax
    import jax.numpy as jnp

    lr, n_layers = case.lr, len(case.params) // 2

    def loss_fn(ps, xx, yy):  # type: ignore[no-untyped-def]
        h = xx
        for i in range(n_layers):
            h = h @ ps[2 * i] + ps[2 * i + 1]
            if i < n_layers - 1:
                h = jax.nn.relu(h)
        logp = jax.nn.log_softmax(h)
        return -jnp.take_along_axis(logp, yy, axis=1).mean()

    @jax.jit
    def step(ps, xx, yy):  # type: ignore[no-untyped-def]
        loss, grads = jax.value_and_grad(loss_fn)(ps, xx, yy)
        return [p - lr * g for p, g in zip(ps, grads)], loss

    jx, jy = jnp.asarray(case.feeds["x"]), jnp.asarray(case.feeds["label"])
    state = {"p": [jnp.asarray(p) for p in case.params]}

    def jax_step() -> None:
        state["p"], loss = step(state["p"], jx, jy)
        loss.block_until_ready()

    return jax_step


def torch_mlp_peer(case: Case) -> Callable[[], None]:
    """A PyTorch eager SGD step of `case`'s MLP (`programs.torch_mlp_step`)."""
    import torch

    tp = [torch.tensor(p, requires_grad=True) for p in case.params]
    tx, ty = torch.tensor(case.feeds["x"]), torch.tensor(case.feeds["label"][:, 0])
    return lambda: torch_mlp_step(tp, tx, ty, case.lr)


def bench_mlp(repeat: int) -> list[tuple[str, float | None, str]]:
    """MLP 784-512-512-10, batch 128, relu, softmax cross-entropy, SGD; NumPy, torch
    eager and JAX jit timed in the same interleaved rounds as ours."""
    case = mlp_case()
    x, y, lr = case.feeds["x"], case.feeds["label"], case.lr
    params = [p.copy() for p in case.params]
    peers: list[Peer] = [("numpy", lambda: numpy_mlp_step(params, x, y, lr), "")]
    skipped: list[tuple[str, float | None, str]] = []

    torch = _try_import("torch")
    if torch is None:
        skipped.append(("torch eager", None, "skipped: torch not installed"))
    else:
        torch.set_num_threads(max(1, torch.get_num_threads()))
        peers.append(("torch eager", torch_mlp_peer(case), f"torch {torch.__version__}"))

    jax = _try_import("jax")
    if jax is None:
        skipped.append(("jax jit", None, "skipped: jax not installed"))
    else:
        peers.append(("jax jit", jax_mlp_step(case), f"jax {jax.__version__}"))
    return _ours_before_after(case.built, case.feeds, case.built.scope, repeat, peers) + skipped


# ------------------------------------------------------- elementwise chain


def bench_chain(repeat: int) -> list[tuple[str, float | None, str]]:
    """20 elementwise ops over 1M floats, loss = sum, forward + backward."""
    n = 1 << 20
    rng = np.random.default_rng(1)
    x = rng.standard_normal(n).astype(np.float32)
    yv = rng.uniform(0.5, 1.0, n).astype(np.float32)
    built = elementwise_chain(n, 20)

    def numpy_chain() -> None:
        hs = [x]
        h = x
        for i in range(20):
            k = i % 5
            h = [np.tanh, lambda a: a * yv, lambda a: 1 / (1 + np.exp(-a)), lambda a: a + yv, lambda a: 0.5 * a + 0.1][k](h)
            hs.append(h)
        g = np.ones_like(x)
        for i in reversed(range(20)):
            k, out = i % 5, hs[i + 1]
            g = [lambda: g * (1 - out * out), lambda: g * yv, lambda: g * out * (1 - out), lambda: g, lambda: 0.5 * g][k]()  # noqa: B023 - called at once
        _ = h.sum()

    peers: list[Peer] = [("numpy", numpy_chain, "hand-written fwd+bwd")]
    jax = _try_import("jax")
    if jax is not None:
        import jax.numpy as jnp

        def f(a, b):  # type: ignore[no-untyped-def]
            for i in range(20):
                k = i % 5
                a = [jnp.tanh, lambda t: t * b, jax.nn.sigmoid, lambda t: t + b, lambda t: 0.5 * t + 0.1][k](a)
            return a.sum()

        g = jax.jit(jax.value_and_grad(f))
        jx, jy = jnp.asarray(x), jnp.asarray(yv)
        peers.append(("jax jit", lambda: g(jx, jy)[1].block_until_ready(), f"jax {jax.__version__}"))
    rows = _ours_before_after(built, {"x": x, "y": yv}, {}, repeat, peers)
    if jax is None:
        rows.append(("jax jit", None, "skipped: jax not installed"))
    return rows


# ------------------------------------------------------------ fan-out (issue 18)


@contextlib.contextmanager
def multi_output_fusion(enabled: bool) -> Iterator[None]:
    """Compile with multi-output fusion on or off (`lowering/fusion.py`; the
    compile cache's key says which)."""
    from pullback.lowering import fusion

    saved = fusion.ENABLED
    fusion.ENABLED = enabled
    try:
        yield
    finally:
        fusion.ENABLED = saved


def _ours_before_after(built: Built, feeds: dict[str, np.ndarray], scope: dict[str, np.ndarray], repeat: int,
                       peers: Sequence[Peer] = ()) -> list[tuple[str, float | None, str]]:
    """Our compiled program with multi-output fusion, then without (same run), and
    each of `peers` timed in the same interleaved rounds (so that a load change on
    this shared machine hits all alike: sequential medians of the same step swung
    by 20% between minutes here)."""
    runs: list[Callable[[], object]] = []
    notes: list[str] = []
    for enabled in (True, False):
        backend = CompiledBackend()
        state = {k: v.copy() for k, v in scope.items()}
        with multi_output_fusion(enabled):
            t = time.perf_counter()
            backend.run(built.module, feeds, state, built.fetch)
            notes.append(f"first run (compile) {time.perf_counter() - t:.2f} s")
        runs.append(lambda b=backend, st=state: b.run(built.module, feeds, st, built.fetch))
    runs.extend(call for _, call, _ in peers)
    times = timeit_interleaved(runs, repeat)
    rows: list[tuple[str, float | None, str]] = [
        ("pullback compiled", times[0], notes[0]), ("pullback, no mo-fusion", times[1], notes[1])]
    rows.extend((name, t, ", ".join(filter(None, [note, "interleaved with ours"])))
                for (name, _, note), t in zip(peers, times[2:]))
    return rows


def _torch_row(torch, name: str, step: Callable[[], None], repeat: int) -> tuple[str, float | None, str]:  # type: ignore[no-untyped-def]
    """A torch peer's row: its first call timed alone (torch.compile compiles there),
    then the median of `repeat`; a peer that cannot run is reported as skipped."""
    t = time.perf_counter()
    try:
        step()
    except Exception as e:  # noqa: BLE001 - a peer that cannot run is reported
        return (name, None, f"skipped: {type(e).__name__}")
    first = time.perf_counter() - t
    return (name, timeit(step, repeat), f"torch {torch.__version__}, {torch.get_num_threads()} threads, first {first:.1f} s")


def _torch_compile(torch, fn):  # type: ignore[no-untyped-def]
    """`torch.compile(fn)`, or None when this machine cannot (no C++ compiler)."""
    try:
        return torch.compile(fn)
    except Exception:  # noqa: BLE001 - reported as skipped
        return None


def fanout_data(n: int = 1 << 20) -> tuple[np.ndarray, np.ndarray]:
    """The fan-out and chain benchmarks' feeds `x` and `y` (`n` floats each)."""
    rng = np.random.default_rng(1)
    return rng.standard_normal(n).astype(np.float32), rng.uniform(0.5, 1.0, n).astype(np.float32)


def jax_fanout_step(x: np.ndarray, yv: np.ndarray, ops: int = 20, every: int = 4) -> Callable[[], None]:
    """JAX jit value and gradient of `programs.fanout_chain` (jax imported here)."""
    import jax
    import jax.numpy as jnp

    def f(a, b):  # type: ignore[no-untyped-def]
        h = a
        for i in range(ops):
            h = [jnp.tanh, lambda t: t * b, jax.nn.sigmoid, lambda t: 0.5 * t + 0.1][i % 4](h)
            if (i + 1) % every == 0:
                h = h + a
        return h.sum()

    g = jax.jit(jax.value_and_grad(f))
    jx, jy = jnp.asarray(x), jnp.asarray(yv)
    return lambda: g(jx, jy)[1].block_until_ready()


def torch_fanout_step(x: np.ndarray, yv: np.ndarray, ops: int = 20, every: int = 4,
                      compiled: bool = False) -> Callable[[], None] | None:
    """PyTorch value and gradient of `programs.fanout_chain`, eager or through
    `torch.compile` (None when this machine cannot compile)."""
    import torch

    def tf(a, b):  # type: ignore[no-untyped-def]
        h = a
        for i in range(ops):
            h = [torch.tanh, lambda t: t * b, torch.sigmoid, lambda t: 0.5 * t + 0.1][i % 4](h)
            if (i + 1) % every == 0:
                h = h + a
        return h.sum()

    fn = _torch_compile(torch, tf) if compiled else tf
    if fn is None:
        return None
    tx, ty = torch.tensor(x), torch.tensor(yv)

    def step() -> None:
        a = tx.detach().requires_grad_()
        fn(a, ty).backward()

    return step


def bench_fanout(repeat: int, ops: int = 20, every: int = 4) -> list[tuple[str, float | None, str]]:
    """`h = f(h) + x` every `every` of `ops` elementwise ops over 1M floats, loss =
    sum(h), value and gradient with respect to x (x fans out to every residual)."""
    n = 1 << 20
    x, yv = fanout_data(n)
    built = fanout_chain(n, ops, every)
    assert [k.name for k in FANOUT_KINDS] == ["pd.tanh", "pd.elementwise_mul", "pd.sigmoid", "pd.scale"]
    jax = _try_import("jax")
    peers: list[Peer] = []
    if jax is not None:
        peers.append(("jax jit", jax_fanout_step(x, yv, ops, every), f"jax {jax.__version__}"))
    rows = _ours_before_after(built, {"x": x, "y": yv}, {}, repeat, peers)
    if jax is None:
        rows.append(("jax jit", None, "skipped: jax not installed"))

    torch = _try_import("torch")
    if torch is None:
        rows.append(("torch eager", None, "skipped: torch not installed"))
        return rows
    for name, compiled in (("torch eager", False), ("torch.compile", True)):
        step = torch_fanout_step(x, yv, ops, every, compiled)
        if step is None:
            rows.append((name, None, "skipped: torch.compile unavailable"))
            continue
        rows.append(_torch_row(torch, name, step, repeat))
    return rows


def resmlp_case(depth: int = 4, width: int = 256, batch: int = 128, lr: float = 0.01) -> Case:
    """The residual MLP step (784 -> `width`, `depth` blocks `h + relu(h W + b)`,
    -> 10) and its data: `params` are `[W_in, b_in, W_0, b_0, ..., W_out, b_out]`."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 784)).astype(np.float32)
    y = rng.integers(0, 10, (batch, 1)).astype(np.int64)
    built = residual_mlp_train(784, width, depth, 10, lr)
    names = ["fc_in", *(f"res_{i}" for i in range(depth)), "fc_out"]
    params = [built.scope[f"{n}.{k}_0"].copy() for n in names for k in ("w", "b")]
    return Case(built, {"x": x, "label": y}, params, lr)


def jax_resmlp_step(case: Case) -> Callable[[], None]:
    """A JAX jit SGD step of `case`'s residual MLP (jax imported here)."""
    import jax
    import jax.numpy as jnp

    lr, depth = case.lr, len(case.params) // 2 - 2

    def loss_fn(ps, xx, yy):  # type: ignore[no-untyped-def]
        h = xx @ ps[0] + ps[1]
        for i in range(depth):
            h = h + jax.nn.relu(h @ ps[2 + 2 * i] + ps[3 + 2 * i])
        logp = jax.nn.log_softmax(h @ ps[-2] + ps[-1])
        return -jnp.take_along_axis(logp, yy, axis=1).mean()

    @jax.jit
    def jstep(ps, xx, yy):  # type: ignore[no-untyped-def]
        loss, grads = jax.value_and_grad(loss_fn)(ps, xx, yy)
        return [p - lr * g for p, g in zip(ps, grads)], loss

    state = {"p": [jnp.asarray(p) for p in case.params]}
    jx, jy = jnp.asarray(case.feeds["x"]), jnp.asarray(case.feeds["label"])

    def jax_step() -> None:
        state["p"], loss = jstep(state["p"], jx, jy)
        loss.block_until_ready()

    return jax_step


def torch_resmlp_step(case: Case, compiled: bool = False) -> Callable[[], None] | None:
    """A PyTorch SGD step of `case`'s residual MLP, eager or through `torch.compile`
    (None when this machine cannot compile)."""
    import torch

    F = torch.nn.functional
    lr, depth = case.lr, len(case.params) // 2 - 2
    tx, ty = torch.tensor(case.feeds["x"]), torch.tensor(case.feeds["label"][:, 0])

    def forward(tp, xx, yy):  # type: ignore[no-untyped-def]
        h = xx @ tp[0] + tp[1]
        for i in range(depth):
            h = h + torch.relu(h @ tp[2 + 2 * i] + tp[3 + 2 * i])
        return F.cross_entropy(h @ tp[-2] + tp[-1], yy)

    fn = _torch_compile(torch, forward) if compiled else forward
    if fn is None:
        return None
    tp = [torch.tensor(p, requires_grad=True) for p in case.params]

    def step() -> None:
        fn(tp, tx, ty).backward()
        with torch.no_grad():
            for p in tp:
                p -= lr * p.grad
                p.grad = None

    return step


def bench_residual_mlp(repeat: int, depth: int = 4, width: int = 256) -> list[tuple[str, float | None, str]]:
    """Residual MLP train step: 784 -> 256, four blocks h + relu(h W + b), -> 10,
    batch 128, softmax cross-entropy, SGD.  JAX jit and torch eager run in the same
    interleaved rounds as ours; torch.compile after them (its first call compiles)."""
    case = resmlp_case(depth, width)
    peers: list[Peer] = []
    skipped: list[tuple[str, float | None, str]] = []

    jax = _try_import("jax")
    if jax is None:
        skipped.append(("jax jit", None, "skipped: jax not installed"))
    else:
        peers.append(("jax jit", jax_resmlp_step(case), f"jax {jax.__version__}"))

    torch = _try_import("torch")
    compiled: Callable[[], None] | None = None
    if torch is None:
        skipped.append(("torch eager", None, "skipped: torch not installed"))
    else:
        eager = torch_resmlp_step(case)
        assert eager is not None
        peers.append(("torch eager", eager, f"torch {torch.__version__}, {torch.get_num_threads()} threads"))
        compiled = torch_resmlp_step(case, compiled=True)
    rows = _ours_before_after(case.built, case.feeds, case.built.scope, repeat, peers) + skipped
    if torch is not None:
        if compiled is not None:
            rows.append(_torch_row(torch, "torch.compile", compiled, repeat))
        else:
            rows.append(("torch.compile", None, "skipped: torch.compile unavailable"))
    return rows


# ------------------------------------------------------------------ small CNN


def cnn_train(
    batch_shape: tuple[int, int, int] = (1, 28, 28),
    channels: tuple[int, int] = (16, 32),
    classes: int = 10,
    lr: float = 0.01,
    dtype: str = "float32",
    seed: int = 0,
) -> Built:
    """A small CNN's training step: two 3x3 convolutions (padding 1, bias, relu, 2x2
    max pooling), a reshape, a linear classifier, softmax cross-entropy, mean loss,
    backward and SGD on every parameter."""
    b = ProgramBuilder()
    rng = np.random.default_rng(seed)
    scope: dict[str, np.ndarray] = {}
    c, h, w = batch_shape
    x = b.data("img", [-1, c, h, w], dtype)
    label = b.data("label", [-1, 1], "int64")
    params: list[SSAValue] = []

    def param(name: str, shape: list[int], fan_in: int) -> SSAValue:
        scope[name] = (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(dtype)
        params.append(b.param(name, shape, dtype))
        return params[-1]

    for i, out_c in enumerate(channels):
        filt = param(f"conv{i}.w_0", [out_c, c, 3, 3], 9 * c)
        bias = param(f"conv{i}.b_0", [out_c], 9 * c)
        x = b.add(pd.Conv2DOp, x, filt, paddings=[1, 1])
        x = b.add(pd.ReluOp, b.add(pd.ElementwiseAddOp, x, bias, axis=1))
        x = b.add(pd.Pool2DOp, x, pooling_type="max", ksize=[2, 2], strides=[2, 2])
        c, h, w = out_c, h // 2, w // 2
    x = b.add(pd.ReshapeOp, x, shape=[-1, c * h * w])
    fc = param("fc.w_0", [c * h * w, classes], c * h * w)
    fc_b = param("fc.b_0", [classes], c * h * w)
    logits = b.add(pd.ElementwiseAddOp, b.add(pd.MatmulOp, x, fc), fc_b, axis=1)
    return classifier_step(b, logits, label, params, scope, lr, dtype)


def bench_cnn(repeat: int) -> list[tuple[str, float | None, str]]:
    """Small CNN training step (fwd + bwd + SGD), batch 32, 1x28x28, two 3x3 convs."""
    rows: list[tuple[str, float | None, str]] = []
    batch, lr = 32, 0.01
    rng = np.random.default_rng(2)
    x = rng.standard_normal((batch, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, (batch, 1)).astype(np.int64)
    built = cnn_train(lr=lr)
    initial = {k: v.copy() for k, v in built.scope.items()}
    backend = CompiledBackend()
    feeds = {"img": x, "label": y}
    t = time.perf_counter()
    backend.run(built.module, feeds, built.scope, built.fetch)
    compile_s = time.perf_counter() - t
    ours = timeit(lambda: backend.run(built.module, feeds, built.scope, built.fetch), repeat)
    rows.append(("pullback compiled", ours, f"first run (compile) {compile_s:.2f} s"))

    torch = _try_import("torch")
    if torch is None:
        rows.append(("torch eager", None, "skipped: torch not installed"))
        return rows
    F = torch.nn.functional
    names = ["conv0.w_0", "conv0.b_0", "conv1.w_0", "conv1.b_0", "fc.w_0", "fc.b_0"]
    tp = [torch.tensor(initial[n], requires_grad=True) for n in names]
    tx, ty = torch.tensor(x), torch.tensor(y[:, 0])

    def torch_step() -> None:
        h = tx
        for i in range(2):
            h = F.max_pool2d(F.relu(F.conv2d(h, tp[2 * i], tp[2 * i + 1], padding=1)), 2)
        loss = F.cross_entropy(h.reshape(h.shape[0], -1) @ tp[4] + tp[5], ty)
        loss.backward()
        with torch.no_grad():
            for p in tp:
                p -= lr * p.grad
                p.grad = None

    rows.append(("torch eager", timeit(torch_step, repeat), f"torch {torch.__version__}, {torch.get_num_threads()} threads"))
    return rows


def report(title: str, rows: list[tuple[str, float | None, str]]) -> None:
    """Print one benchmark's times and ratios to our compiled path."""
    print(f"\n## {title}")
    ours = rows[0][1]
    for name, t, note in rows:
        if t is None:
            print(f"  {name:20s} {'-':>10s}           {note}")
            continue
        ratio = f"{t / ours:6.2f}x ours" if ours else ""
        print(f"  {name:20s} {t * 1e3:9.3f} ms  {ratio}  {note}")


def _blas_line() -> str:
    """Which BLAS our compiled matmuls call (starting the compiled backend)."""
    from pullback.runtime.native import blas
    from pullback.runtime.native.jit import Jit

    Jit.get()
    bound = blas.bound()
    return bound.describe() if bound is not None else "none (matmuls compile to loops)"


def main() -> None:
    """Run every benchmark once and print the results."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    ap.add_argument("--only", choices=["mlp", "chain", "cnn", "fanout", "resmlp"], action="append",
                    help="run only these benchmarks (repeatable)")
    ap.add_argument("--single-thread", action="store_true",
                    help="run the whole process on one CPU core (every peer's threads share it) "
                         "and ask each peer for one thread (torch, XLA's CPU client, BLAS)")
    args = ap.parse_args()
    repeat = 5 if args.quick else 30
    if args.single_thread:
        # Before jax and torch are imported: XLA reads its flags once.
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_cpu_multi_thread_eigen=false"
                                   " intra_op_parallelism_threads=1").strip()
        if os.environ.get("OPENBLAS_NUM_THREADS") != "1":
            # numpy's OpenBLAS (which our matmuls call) read it when numpy loaded.
            print("warning: --single-thread without OPENBLAS_NUM_THREADS=1 in the environment: "
                  "BLAS keeps its threads")
        os.environ["OMP_NUM_THREADS"] = "1"
        os.environ["MKL_NUM_THREADS"] = "1"
        # XLA's CPU runtime keeps a second thread busy whatever its flags say (its
        # process CPU time ran at 1.8x wall time on a 128x784x256 product): only an
        # affinity mask makes the comparison one core against one core.
        if hasattr(os, "sched_setaffinity"):
            os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        torch = _try_import("torch")
        if torch is not None:
            torch.set_num_threads(1)
    only = set(args.only or ["mlp", "chain", "cnn", "fanout", "resmlp"])
    print(f"machine: {platform.processor() or platform.machine()}, {platform.system()} "
          f"{platform.release()}, python {platform.python_version()}, numpy {np.__version__}")
    cores = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "all"
    print(f"threads: OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, "
          f"XLA_FLAGS={os.environ.get('XLA_FLAGS', 'unset')}, cores {cores}")
    print(f"BLAS: {_blas_line()}")
    if "mlp" in only:
        report("MLP train step 784-512-512-10, batch 128, SGD", bench_mlp(repeat))
    if "chain" in only:
        report("elementwise chain fwd+bwd, 1M float32, 20 ops, loss = sum", bench_chain(repeat))
    if "cnn" in only:
        report("small CNN train step (fwd+bwd+SGD), batch 32, 1x28x28, two 3x3 convs", bench_cnn(repeat))
    if "fanout" in only:
        report("fan-out chain fwd+bwd, 1M float32, 20 ops, h = f(h) + x every 4, loss = sum", bench_fanout(repeat))
    if "resmlp" in only:
        report("residual MLP train step 784-256, 4 x (h + relu(h W + b)), -> 10, batch 128, SGD",
               bench_residual_mlp(repeat))


if __name__ == "__main__":
    main()
