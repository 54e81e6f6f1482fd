"""Native eager kernels (`frontend/eager_native.py`): eager ops and whole backward
plans compiled in the background give the reference kernels' results (to float32
rounding), hand over from the reference without stalling, stay bounded, and fall
back to the reference with one warning when compiling or calling fails."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pullback as paddle
import pullback.nn.functional as F
from pullback.frontend import eager, eager_lazy, eager_native
from pullback.frontend.autograd import plan_cache


@pytest.fixture(autouse=True)
def _per_op() -> None:
    """These tests are about the per-op and per-plan regions: deferral
    (`frontend/eager_lazy.py`, tested in test_eager_lazy.py) would fuse them."""
    with eager_lazy.paused():
        yield


@pytest.fixture
def native(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every eager op and plan is compiled from its first use (no cost threshold,
    one probe) and kept (no calibration), on fresh template and plan caches."""
    monkeypatch.setattr(eager_native, "MIN_US", 0.0)
    monkeypatch.setattr(eager_native, "PROBES", 1)
    monkeypatch.setattr(eager_native, "CALIBRATE", False)
    monkeypatch.setattr(eager, "_TEMPLATES", {})
    monkeypatch.setattr(plan_cache, "_PLANS", {})
    old = eager_native.set_enabled(True)
    yield
    eager_native.wait(120)
    eager_native.set_enabled(old)


def _chain(seed: int):
    """A random small CNN step (conv, pool, linear, relu, softmax cross entropy)
    as a function of its parameters: returns the loss and the gradients."""
    rng = np.random.default_rng(seed)
    c_in, c_out, k = int(rng.integers(1, 3)), int(rng.integers(2, 4)), int(rng.choice([1, 3]))
    pad, pool = int(rng.integers(0, 2)), ("max", "avg", "avg")[seed % 3]
    n, hw = 4, 8
    x = rng.standard_normal((n, c_in, hw, hw)).astype(np.float32)
    label = rng.integers(0, 5, (n, 1)).astype(np.int64)
    w = (rng.standard_normal((c_out, c_in, k, k)) * 0.3).astype(np.float32)
    b = rng.standard_normal(c_out).astype(np.float32) * 0.1
    h = (hw + 2 * pad - k + 1) // 2
    w1 = (rng.standard_normal((c_out * h * h, 6)) * 0.2).astype(np.float32)
    w2 = (rng.standard_normal((6, 5)) * 0.2).astype(np.float32)
    use_bn = seed % 2 == 0

    def step() -> list[np.ndarray]:
        ps = [paddle.to_tensor(a, stop_gradient=False) for a in (w, b, w1, w2)]
        t = F.conv2d(paddle.to_tensor(x), ps[0], ps[1], padding=pad)
        if use_bn:
            t = F.batch_norm(t, paddle.zeros([c_out]), paddle.ones([c_out]), training=True)
        t = F.relu(t)
        t = F.max_pool2d(t, 2, 2) if pool == "max" else F.avg_pool2d(t, 2, 2)
        t = F.relu(paddle.matmul(paddle.flatten(t, 1), ps[2]))
        loss = F.cross_entropy(paddle.matmul(t, ps[3]), paddle.to_tensor(label))
        loss.backward()
        return [loss.numpy()] + [p.grad.numpy() for p in ps]

    return step


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_chains_match_reference(native: None, seed: int) -> None:
    step = _chain(seed)
    eager_native.set_enabled(False)
    want = step()
    eager_native.set_enabled(True)  # for the templates and plans made from now on
    eager._TEMPLATES.clear()
    plan_cache._PLANS.clear()
    before = eager_native.stats["native_calls"]
    first = step()  # the reference kernels run while the compile thread works
    assert eager_native.wait(120)
    step()  # trial calls
    got = step()
    assert eager_native.stats["native_calls"] > before
    for a, b, c in zip(want, first, got):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(c, a, rtol=2e-5, atol=2e-6 * max(1.0, float(np.abs(a).max())))


def test_handoff_reference_then_native(native: None) -> None:
    """The first call of a signature runs the reference kernel (never waits for the
    compile); once compiled, the same op runs natively with the same result."""
    x = paddle.to_tensor(np.random.default_rng(3).standard_normal((2, 3, 6, 6)).astype(np.float32))
    calls = eager_native.stats["native_calls"]
    ref = F.max_pool2d(x, 2, 2).numpy()
    tpl = next(iter(eager._TEMPLATES.values()))
    assert tpl.native is not None and tpl.native.state in (eager_native.PENDING, eager_native.TRIAL)
    assert eager_native.stats["native_calls"] == calls
    assert eager_native.wait(60)
    out = [F.max_pool2d(x, 2, 2).numpy() for _ in range(3)]
    assert tpl.native.state is eager_native.NATIVE
    assert eager_native.stats["native_calls"] == calls + 3
    for o in out:
        np.testing.assert_array_equal(o, ref)


def test_loop_never_waits_for_a_compile(native: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """While a compile is held up, the op keeps running on the reference kernel;
    once the compile is let through, the native kernel takes over."""
    import threading

    from pullback.runtime.native import compiler

    release = threading.Event()
    real = compiler.compile_program

    def held(*args: object, **kwargs: object) -> object:
        assert release.wait(60)
        return real(*args, **kwargs)

    monkeypatch.setattr(compiler, "compile_program", held)
    x = paddle.to_tensor(np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4))
    calls = eager_native.stats["native_calls"]
    outs = [paddle.nn.functional.softplus(x).numpy() for _ in range(5)]  # the compile is still held
    assert eager_native.stats["native_calls"] == calls
    release.set()
    assert eager_native.wait(60)
    outs.append(paddle.nn.functional.softplus(x).numpy())  # (a composite: several ops)
    assert eager_native.stats["native_calls"] > calls
    for o in outs[1:]:
        np.testing.assert_allclose(o, outs[0], rtol=1e-6)


def test_probes_before_compiling(native: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A signature is compiled only after `PROBES` reference runs: an op used once
    is never compiled."""
    monkeypatch.setattr(eager_native, "PROBES", 2)
    x = paddle.to_tensor(np.ones((2, 7), np.float32))
    paddle.sin(x)
    tpl = next(t for t in eager._TEMPLATES.values() if t.type == "sin")
    assert tpl.native.state is eager_native.PROBE
    paddle.sin(x)
    assert tpl.native.state in (eager_native.PENDING, eager_native.TRIAL)


def test_registry_is_bounded(native: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """At most `MAX_REGIONS` compiled regions are kept; a dropped one's op probes
    again and still computes the right values."""
    monkeypatch.setattr(eager_native, "MAX_REGIONS", 2)
    dropped = eager_native.stats["dropped"]
    xs = [paddle.to_tensor(np.arange(n, dtype=np.float32) - 2) for n in range(3, 7)]
    for x in xs:
        F.relu(x)
        assert eager_native.wait(60)
    assert eager_native.compiled_count() <= 2
    assert eager_native.stats["dropped"] >= dropped + 2
    for x in xs:
        np.testing.assert_array_equal(F.relu(x).numpy(), np.maximum(x.numpy(), 0))


def test_compile_error_warns_once_and_falls_back(native: None, monkeypatch: pytest.MonkeyPatch) -> None:
    from pullback.runtime.native import compiler

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(compiler, "compile_program", broken)
    x = paddle.to_tensor(np.linspace(-1, 1, 10, dtype=np.float32))
    ref = np.tanh(x.numpy())
    np.testing.assert_allclose(paddle.tanh(x).numpy(), ref, rtol=1e-6)
    assert eager_native.wait(60)
    with pytest.warns(UserWarning, match="eager native kernel for 'pd.tanh'.*boom"):
        np.testing.assert_allclose(paddle.tanh(x).numpy(), ref, rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.testing.assert_allclose(paddle.tanh(x).numpy(), ref, rtol=1e-6)


def test_call_error_warns_once_and_falls_back(native: None) -> None:
    x = paddle.to_tensor(np.linspace(-1, 1, 8, dtype=np.float32))
    paddle.exp(x)
    assert eager_native.wait(60)
    tpl = next(t for t in eager._TEMPLATES.values() if t.type == "exp")
    tpl.native.program = object()  # not a program: the call fails
    with pytest.warns(UserWarning, match="eager native kernel for 'pd.exp'"):
        np.testing.assert_allclose(paddle.exp(x).numpy(), np.exp(x.numpy()), rtol=1e-6)
    assert tpl.native is None or tpl.native.state is eager_native.OFF
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        paddle.exp(x)


def test_disabled_means_reference_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(eager, "_TEMPLATES", {})
    monkeypatch.setattr(plan_cache, "_PLANS", {})
    old = eager_native.set_enabled(False)
    try:
        w = paddle.to_tensor(np.ones((3, 3), np.float32), stop_gradient=False)
        paddle.matmul(w, w).sum().backward()
        assert all(t.native is None for t in eager._TEMPLATES.values())
        assert all(p.native is None for p in plan_cache._PLANS.values())
    finally:
        eager_native.set_enabled(old)


def test_optimizer_updates_run_natively_and_match_the_reference(native: None) -> None:
    """An eager Adam update is a region that writes parameters: its compiled code takes
    the status buffer of a commit point (`lowering/abi.py`).  A direct call without
    it crashed the process (SIGSEGV) once such a region went native."""

    def train(steps: int) -> list[np.ndarray]:
        paddle.seed(5)
        net = paddle.nn.Sequential(paddle.nn.Linear(6, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 3))
        opt = paddle.optimizer.Adam(1e-2, parameters=net.parameters())
        x = paddle.to_tensor(np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32))
        for _ in range(steps):
            loss = net(x).square().mean()
            loss.backward()
            opt.step()
            opt.clear_grad()
            eager_native.wait(120)  # each step's compiles land before the next
        return [p.numpy() for p in net.parameters()]

    eager_native.set_enabled(False)
    want = train(6)
    eager_native.set_enabled(True)
    eager._TEMPLATES.clear()
    plan_cache._PLANS.clear()
    before = eager_native.stats["native_calls"]
    got = train(6)
    assert eager_native.stats["native_calls"] > before
    kinds = {t.type for t in eager._TEMPLATES.values() if t.native is not None and t.native.state is eager_native.NATIVE}
    assert "adam" in kinds, kinds
    for a, b in zip(want, got):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


def test_trials_are_not_timed_while_a_compile_is_in_flight(native: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A compiled region's trial calls count towards keeping or dropping it only
    when no other compile shares the CPU: while one is in flight the region runs
    natively but stays in `TRIAL` (a trial timed then was judged slower for good).
    The reference it is judged against is timed afresh once the compiles are done:
    the best time from before its compile (here made 1000 s) may be stale."""
    monkeypatch.setattr(eager_native, "CALIBRATE", True)
    x = paddle.to_tensor(np.ones((64, 64), np.float32))
    paddle.tanh(x)
    eager_native.wait(120)
    tpl = next(t for t in eager._TEMPLATES.values() if t.type == "tanh")
    region = tpl.native
    assert region is not None and region.state is eager_native.PENDING and region.program is not None
    region.ref_s = 1000.0  # a stale reference: the native code would win any trial against it
    monkeypatch.setattr(eager_native, "_pending", 1)  # as if another region were compiling
    assert region.ready() and region.state is eager_native.TRIAL
    calls = eager_native.stats["native_calls"]
    for _ in range(eager_native.TRIALS + 2):
        np.testing.assert_allclose(paddle.tanh(x).numpy(), np.tanh(np.ones((64, 64), np.float32)), rtol=1e-6)
    assert eager_native.stats["native_calls"] == calls + eager_native.TRIALS + 2
    assert region.state is eager_native.TRIAL and region.trials == 0 and region.ref_s == float("inf")
    monkeypatch.setattr(eager_native, "_pending", 0)
    assert not region.ready()  # the reference first, timed now
    paddle.tanh(x)
    assert eager_native.stats["native_calls"] == calls + eager_native.TRIALS + 2 and region.ref_s < 1.0
    for _ in range(eager_native.TRIALS):
        paddle.tanh(x)
    assert eager_native.stats["native_calls"] == calls + 2 * eager_native.TRIALS + 2
    assert region.state in (eager_native.NATIVE, eager_native.WAIT)


def test_a_region_measured_slower_is_tried_again_later(native: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A trial lost (here: the reference made to look infinitely fast) sends the
    region to `WAIT` with its code kept: after `RETRY_CALLS` reference runs it is
    tried again, `RETRIES` times, and only then switched off for good."""
    monkeypatch.setattr(eager_native, "CALIBRATE", True)
    monkeypatch.setattr(eager_native, "RETRY_CALLS", 3)
    x = paddle.to_tensor(np.ones((32, 32), np.float32))
    paddle.exp(x)
    eager_native.wait(120)
    tpl = next(t for t in eager._TEMPLATES.values() if t.type == "exp")
    region = tpl.native
    assert region is not None
    region.ready()  # compiled: on to `TRIAL` (the reference is made to win below)
    assert region.state is eager_native.TRIAL
    want = np.exp(np.ones((32, 32), np.float32))
    seen = []
    for _ in range(80):
        region.ref_s = 0.0  # the reference "always wins"
        np.testing.assert_allclose(paddle.exp(x).numpy(), want, rtol=1e-6)
        seen.append(region.state)
        if region.state is eager_native.OFF:
            break
    assert seen.count(eager_native.WAIT) == 3 + 12  # RETRY_CALLS, then 4x as many
    trials = sum(1 for a, b in zip(seen, seen[1:]) if a is eager_native.WAIT and b is eager_native.TRIAL)
    assert trials == eager_native.RETRIES
    assert seen[-1] is eager_native.OFF and region.program is None

