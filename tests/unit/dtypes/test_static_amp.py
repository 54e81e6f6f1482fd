"""`paddle.static.amp.decorate`'s loss scaling: the program it builds (the scaled
loss, `pd.check_finite_and_unscale`, `pd.update_loss_scaling`, by dtype and
options, as Paddle 3.3.1's decorator) and a tiny float16 program trained for six
steps against Paddle 3.3.1's run of the same steps (`static_amp_cases.py`, recorded
by `gen_static_amp_reference.py`): the same losses (to float16's precision), the
same scale after every step (raised after two good steps, halved on the step that
feeds an inf) and the same weights (that step skipped); with Adam, AdamW and Lamb
the same moments and beta powers after every step too (`found_inf` as their
`skip_update`: the inf step leaves them as they were)."""

from __future__ import annotations

import importlib.util
import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pullback as paddle
from pullback.frontend import unique_name
from pullback.testing.low_precision import to_float64

HERE = Path(__file__).resolve().parent
REFERENCE = json.loads((HERE / "data" / "static_amp_reference.json").read_text())
_spec = importlib.util.spec_from_file_location("static_amp_cases", HERE / "static_amp_cases.py")
assert _spec is not None and _spec.loader is not None
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)


def _run_case(optimizer: str, backend: str, monkeypatch: pytest.MonkeyPatch) -> dict:
    """`static_amp_cases.run` with pullback on `backend` (compiled: no interpreter
    fallback allowed)."""
    monkeypatch.setenv("PULLBACK_BACKEND", backend)
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="compiled backend")  # no interpreter fallback
        warnings.filterwarnings("ignore", category=RuntimeWarning)  # the interpreter's inf * 0
        return cases.run(paddle, optimizer=optimizer)


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
@pytest.mark.parametrize("optimizer", ["sgd", "momentum"])
def test_float16_steps_match_paddle(optimizer: str, backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    want = REFERENCE[optimizer]
    got = _run_case(optimizer, backend, monkeypatch)
    assert got["scales"] == want["scales"] == [1024.0, 2048.0, 1024.0, 1024.0, 2048.0, 2048.0]
    assert np.isinf(got["losses"][2]) and np.isinf(want["losses"][2])
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=3e-3)
    np.testing.assert_allclose(got["w"], want["w"], atol=2e-3)
    np.testing.assert_allclose(got["b"], want["b"], atol=2e-3)


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
@pytest.mark.parametrize("optimizer", cases.ADAM_LIKE)
def test_adam_like_skip_the_inf_step_as_paddle(optimizer: str, backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Paddle 3.3.1 hands found_inf to adam, adamw and lamb as their SkipUpdate input:
    # on step 2 (an inf fed) the weights, both moments and both beta powers stay as
    # step 1 left them, and the scale is halved.
    want = REFERENCE[optimizer]
    got = _run_case(optimizer, backend, monkeypatch)
    assert got["scales"] == want["scales"] == [1024.0, 2048.0, 1024.0, 1024.0, 2048.0, 2048.0]
    for run in (got, want):
        assert run["w_steps"][2] == run["w_steps"][1] and run["state"][2] == run["state"][1]
        assert run["w_steps"][3] != run["w_steps"][2] and run["state"][3] != run["state"][2]
    # The beta powers advanced five times in six steps (float32 products, as Paddle's).
    assert got["state"][-1][2] == want["state"][-1][2] and got["state"][-1][3] == want["state"][-1][3]
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=3e-3)
    np.testing.assert_allclose(got["w_steps"], want["w_steps"], atol=1e-3)
    for g, w in zip(got["state"], want["state"]):
        for k in range(4):
            np.testing.assert_allclose(g[k], w[k], rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(got["b"], want["b"], atol=1e-3)


def _program(dtype: str, **options: Any) -> tuple[str, Any, Any]:
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup), unique_name.guard():
            x = paddle.static.data("x", [4, 3], "float32")
            loss = paddle.mean(paddle.static.nn.fc(x, 2))
            opt = paddle.static.amp.decorate(paddle.optimizer.SGD(0.1), dtype=dtype, **options)
            opt.minimize(loss)
        return str(main), opt, main
    finally:
        paddle.disable_static()


def test_float16_program_scales_checks_and_updates() -> None:
    text, opt, _ = _program("float16")
    assert opt.get_loss_scaling().name == "loss_scaling_0"
    assert "pd.check_finite_and_unscale" in text
    # Paddle 3.3.1's defaults: scale 2**16, raised every 2000 good steps, lowered by
    # half on every bad one.
    assert 'incr_every_n_steps = 2000 : i64' in text and 'decr_every_n_nan_or_inf = 1 : i64' in text
    assert 'names = ["", "", "loss_scaling_0", "num_good_steps_0", "num_bad_steps_0"]' in text
    # The updates read the zeroed gradients update_loss_scaling gives.
    uls = text.index("pd.update_loss_scaling")
    assert uls < text.index("pd.sgd")


def test_bfloat16_has_no_dynamic_scaling_by_default() -> None:
    text, opt, _ = _program("bfloat16")
    assert "pd.check_finite_and_unscale" in text and "pd.update_loss_scaling" not in text
    text, _, _ = _program("bfloat16", use_dynamic_loss_scaling=False, init_loss_scaling=1.0)
    assert "pd.check_finite_and_unscale" not in text  # a constant scale of 1: nothing to undo


def test_bad_ratios_are_refused() -> None:
    paddle.enable_static()
    try:
        with pytest.raises(ValueError, match="decr_ratio"):
            paddle.static.amp.decorate(paddle.optimizer.SGD(0.1), decr_ratio=1.5)
        with pytest.raises(ValueError, match="level"):
            paddle.static.amp.decorate(paddle.optimizer.SGD(0.1), level="O3")
    finally:
        paddle.disable_static()


# ------------------------------------------------- eager GradScaler on the same ops


def test_eager_grad_scaler_runs_the_loss_scaling_ops(monkeypatch: pytest.MonkeyPatch) -> None:
    from pullback.dialects import pd
    from pullback.frontend import core

    calls: list[str] = []
    apply = core.apply

    def recording(op_cls: type[pd.PdOp], *a: Any, **k: Any) -> Any:
        if op_cls in pd.LOSS_SCALING_OPS:
            calls.append(op_cls.name)
        return apply(op_cls, *a, **k)

    monkeypatch.setattr(core, "apply", recording)
    paddle.seed(1)
    model = paddle.nn.Linear(3, 2)
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    scaler = paddle.amp.GradScaler(init_loss_scaling=64.0, incr_every_n_steps=3)
    x = paddle.to_tensor(np.ones((4, 3), np.float32))
    for _ in range(3):
        scaler.scale(paddle.mean(model(x))).backward()
        scaler.step(opt)
        scaler.update()
        opt.clear_grad()
    assert calls == ["pd.check_finite_and_unscale", "pd.update_loss_scaling"] * 3
    assert float(scaler.state_dict()["scale"][0]) == 128.0 and scaler.state_dict()["incr_count"] == 0


def test_grad_scaler_with_a_to_static_model_skips_an_inf_step() -> None:
    paddle.seed(2)
    model = paddle.jit.to_static(paddle.nn.Linear(3, 2))
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())
    scaler = paddle.amp.GradScaler(init_loss_scaling=256.0)
    good = paddle.to_tensor(np.ones((4, 3), np.float32))
    bad = paddle.to_tensor(np.array([[1, np.inf, 1]] * 4, np.float32))
    before = model.weight.numpy().copy()
    scaler.scale(paddle.mean(model(bad))).backward()
    scaler.step(opt)
    scaler.update()
    opt.clear_grad()
    np.testing.assert_array_equal(model.weight.numpy(), before)
    assert float(scaler.state_dict()["scale"][0]) == 128.0
    scaler.scale(paddle.mean(model(good))).backward()
    scaler.step(opt)
    scaler.update()
    np.testing.assert_allclose(model.weight.numpy(), before - 0.1 * 0.5, rtol=1e-6)


# ---------------------------------------------------------------------- static O2


def _task() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((512, 16)).astype(np.float32)
    w = rng.standard_normal((16, 4))
    y = np.argmax(x @ w + 0.3 * np.sin(2 * x[:, :4]), 1).astype(np.int64)[:, None]
    return x, y


def _o2_accuracy(dtype: str | None, **options: Any) -> tuple[float, str]:
    """A static MLP trained 3 epochs (Momentum), at O2 in `dtype` (float32 when
    None); returns its accuracy on the training set and its printed program."""
    x, y = _task()
    paddle.enable_static()
    try:
        main, start = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, start), unique_name.guard():
            xv = paddle.static.data("x", [None, 16])
            yv = paddle.static.data("y", [None, 1], "int64")
            out = paddle.static.nn.fc(paddle.nn.functional.relu(paddle.static.nn.fc(xv, 64)), 4)
            loss = paddle.mean(paddle.nn.functional.cross_entropy(out, yv))
            opt = paddle.optimizer.Momentum(learning_rate=0.05, momentum=0.9)
            if dtype is not None:
                opt = paddle.static.amp.decorate(opt, dtype=dtype, **options)
            opt.minimize(loss)
            test = main.clone(for_test=True)
        exe = paddle.static.Executor(paddle.CPUPlace())
        paddle.seed(0)
        exe.run(start)
        if dtype is not None:
            opt.amp_init(paddle.CPUPlace())
        for _ in range(3):
            for i in range(0, 512, 64):
                exe.run(main, feed={"x": x[i:i + 64], "y": y[i:i + 64]}, fetch_list=[loss])
        (o,) = exe.run(test, feed={"x": x, "y": y}, fetch_list=[out])
        return float((to_float64(o).argmax(1) == y[:, 0]).mean()), str(main)
    finally:
        paddle.disable_static()


@pytest.mark.parametrize("dtype,options", [("float16", {"level": "O2"}), ("bfloat16", {"level": "O2"}),
                                           ("bfloat16", {"use_pure_bf16": True})])
def test_static_o2_reaches_float32_accuracy(dtype: str, options: dict[str, Any]) -> None:
    want, _ = _o2_accuracy(None)
    got, text = _o2_accuracy(dtype, **options)
    short = {"float16": "f16", "bfloat16": "bf16"}[dtype]
    # The parameters stay float32 (master weights); the program casts them at each use.
    assert 'pd.parameter "fc_0.w_0" : tensor<16x64xf32>' in text
    assert f"-> tensor<16x64x{short}>" in text and f"(tensor<?x64x{short}>, tensor<64x4x{short}>)" in text
    assert want > 0.8 and got >= want - 0.03, (dtype, got, want)


def test_static_o2_without_master_weights_is_refused() -> None:
    paddle.enable_static()
    try:
        with pytest.raises(NotImplementedError, match="master_weight=False"):
            paddle.static.amp.decorate(paddle.optimizer.SGD(0.1), level="O2", master_weight=False)
    finally:
        paddle.disable_static()
