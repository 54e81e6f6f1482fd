"""The Executor runs native code by default on CPUPlace, and it trains correctly."""

from __future__ import annotations

import numpy as np
import pytest

import pullback as paddle
import pullback.nn.functional as F


@pytest.fixture
def no_backend_override(monkeypatch):
    monkeypatch.delenv("PULLBACK_BACKEND", raising=False)


def _fit_a_line_losses(backend: str | None, steps: int = 30) -> list[float]:
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    main.random_seed = startup.random_seed = 3
    with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 13], dtype="float32")
        y = paddle.static.data(name="y", shape=[None, 1], dtype="float32")
        pred = paddle.static.nn.fc(x, size=1)
        loss = paddle.mean(F.square_error_cost(input=pred, label=y))
        paddle.optimizer.SGD(learning_rate=0.05).minimize(loss)
    with paddle.static.scope_guard(paddle.static.Scope()):
        exe = paddle.static.Executor(paddle.CPUPlace(), backend=backend)
        exe.run(startup)
        rng = np.random.default_rng(0)
        w = rng.standard_normal((13, 1)).astype("float32")
        out = []
        for _ in range(steps):
            xs = rng.standard_normal((16, 13)).astype("float32")
            (l,) = exe.run(main, feed={"x": xs, "y": xs @ w}, fetch_list=[loss])
            out.append(float(l))
    paddle.disable_static()
    return out


def test_cpu_default_is_compiled(no_backend_override):
    exe = paddle.static.Executor(paddle.CPUPlace())
    assert exe.backend_name == "compiled"


def test_default_training_matches_the_interpreter(no_backend_override):
    compiled = _fit_a_line_losses(None)
    reference = _fit_a_line_losses("interpreter")
    np.testing.assert_allclose(compiled, reference, rtol=2e-4, atol=1e-6)
    assert compiled[-1] < 0.1 * compiled[0]
