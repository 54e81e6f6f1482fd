"""Device-resident state: parameters and optimizer accumulators stay on the device
between `Executor.run`s and are copied to the host only when read.  Checked on the
recording fake device (`gpu_fakes.py`), which counts every host<->device copy."""

from __future__ import annotations


import numpy as np
import pytest

import pullback as paddle
from pullback.runtime.gpu import backend as gpu_backend, cuda
from pullback.runtime.scope import DeviceResident, Scope
import pullback_gpu_fakes as gpu_fakes


@pytest.fixture
def training(static_programs, monkeypatch):
    """An MLP with Adam (moment and beta-power accumulators), initialized on the
    CPU, and an Executor on `CUDAPlace(0)` whose backend runs on the fake device."""
    main, startup = static_programs
    x = paddle.static.data("x", [None, 6], "float32")
    label = paddle.static.data("label", [None, 1], "int64")
    h = paddle.static.nn.fc(x, 8, activation="relu")
    logits = paddle.static.nn.fc(h, 3)
    loss = paddle.mean(paddle.nn.functional.cross_entropy(logits, label))
    paddle.optimizer.Adam(learning_rate=0.01).minimize(loss)
    paddle.static.Executor(paddle.CPUPlace()).run(startup)
    device = gpu_fakes.FakeDevice()
    monkeypatch.setattr(
        gpu_backend, "make_backend",
        lambda place: gpu_backend.GpuBackend(place, device=device, gemm=(None, "tiled kernel (test)")),
    )
    monkeypatch.setattr(cuda, "require_device", lambda index=0: None)  # the fake is device 0
    exe = paddle.static.Executor(paddle.CUDAPlace(0), backend="cuda")
    rng = np.random.default_rng(0)
    feed = {"x": rng.standard_normal((4, 6)).astype(np.float32),
            "label": rng.integers(0, 3, (4, 1)).astype(np.int64)}
    return exe, main, feed, loss, device, paddle.static.global_scope()


def _step(exe, main, feed, loss) -> None:
    (value,) = exe.run(main, feed=feed, fetch_list=[loss])
    assert isinstance(value, np.ndarray) and value.shape == ()


def test_steady_state_steps_copy_no_parameter(training):
    exe, main, feed, loss, device, scope = training
    _step(exe, main, feed, loss)  # uploads parameters and accumulators once
    assert device.copies["up"] > len(feed)
    names = [n for n in scope if isinstance(scope.raw(n), DeviceResident)]
    assert any(n.startswith("fc_0.w_0") for n in names)
    assert any("moment1" in n for n in names), names  # optimizer accumulators too
    for _ in range(3):
        device.copies.clear()
        _step(exe, main, feed, loss)
        # Per step: the two feeds go up, the fetched loss comes down; nothing else.
        assert dict(device.copies) == {"up": len(feed), "down": 1}


def test_a_read_parameter_is_copied_once_and_not_uploaded_again(training):
    exe, main, feed, loss, device, scope = training
    _step(exe, main, feed, loss)
    assert isinstance(scope.raw("fc_0.w_0"), gpu_backend.ResidentArray)
    device.copies.clear()
    w = np.array(scope.find_var("fc_0.w_0").get_tensor())
    again = scope["fc_0.w_0"]
    assert w.shape == (6, 8) and w.dtype == np.float32 and again.shape == (6, 8)
    assert dict(device.copies) == {"down": 1}  # materialized once
    assert isinstance(scope.raw("fc_0.w_0"), np.ndarray)
    device.copies.clear()
    _step(exe, main, feed, loss)
    # The host copy read above is known to be current: no upload for it.
    assert dict(device.copies) == {"up": len(feed), "down": 1}


def test_a_parameter_set_on_the_host_is_uploaded(training):
    exe, main, feed, loss, device, scope = training
    _step(exe, main, feed, loss)
    scope.var("fc_0.w_0").get_tensor().set(np.ones((6, 8), np.float32), paddle.CPUPlace())
    device.copies.clear()
    _step(exe, main, feed, loss)
    assert dict(device.copies) == {"up": len(feed) + 1, "down": 1}


def test_scope_materializes_a_resident_on_first_host_read():
    class Resident(DeviceResident):
        def __init__(self) -> None:
            self.shape, self.dtype, self.reads = (2,), np.dtype(np.float32), 0

        def to_host(self) -> np.ndarray:
            self.reads += 1
            return np.arange(2, dtype=np.float32)

    scope, r = Scope(), Resident()
    scope["p"] = r
    assert scope.raw("p") is r and "p" in scope and r.reads == 0
    assert "[2] float32" in repr(scope) and r.reads == 0
    np.testing.assert_array_equal(scope["p"], [0, 1])
    np.testing.assert_array_equal(scope.find_var("p").get_tensor().numpy(), [0, 1])
    assert r.reads == 1 and isinstance(scope.raw("p"), np.ndarray)


# ------------------------------------------------------------------ on a real GPU


@pytest.mark.skipif(not cuda.is_available(), reason=f"no usable GPU: {cuda.unavailable_reason(0)}")
def test_executor_on_the_gpu_trains_as_on_the_cpu(static_programs):
    """Adam through `Executor(CUDAPlace(0))`, state on the device, against the
    interpreter from the same start; the parameters read back at the end agree."""
    x = paddle.static.data("x", [None, 6], "float32")
    label = paddle.static.data("label", [None, 1], "int64")
    logits = paddle.static.nn.fc(paddle.static.nn.fc(x, 8, activation="relu"), 3)
    loss = paddle.mean(paddle.nn.functional.cross_entropy(logits, label))
    paddle.optimizer.Adam(learning_rate=0.01).minimize(loss)
    main, startup = static_programs
    rng = np.random.default_rng(0)
    feed = {"x": rng.standard_normal((16, 6)).astype(np.float32),
            "label": rng.integers(0, 3, (16, 1)).astype(np.int64)}
    paddle.static.Executor(paddle.CPUPlace()).run(startup)
    start = {k: np.array(v, copy=True) for k, v in paddle.static.global_scope().items()}
    curves, finals = [], []
    for place, backend in ((paddle.CPUPlace(), "interpreter"), (paddle.CUDAPlace(0), "cuda")):
        scope = Scope()
        for k, v in start.items():
            scope[k] = v.copy()
        exe = paddle.static.Executor(place, backend=backend)
        curves.append([float(exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0]) for _ in range(10)])
        finals.append(np.array(scope["fc_0.w_0"]))
    np.testing.assert_allclose(curves[1], curves[0], rtol=1e-4)
    np.testing.assert_allclose(finals[1], finals[0], rtol=1e-4, atol=1e-6)
