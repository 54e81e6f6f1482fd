"""`paddle.amp`: the op lists (Paddle 3.3.1's, `data/paddle_dtype_facts.json`),
`auto_cast` in eager mode and in static programs (casts visible in the printed IR,
compiled), `decorate` (O2 parameters and float32 master weights), `GradScaler`
(scaling, skipped steps and a lowered scale on an injected inf, its state), and small
MLPs trained in float16 and bfloat16, eager and static, reaching float32's accuracy.

Where pullback differs from Paddle 3.3.1 on a CPU (by design, `frontend/amp.py`): ops
really compute in the low precision there, `GradScaler` is enabled and
`is_float16_supported()` is True."""

from __future__ import annotations

import json
import os
import re
import warnings
from collections.abc import Iterator

import numpy as np
import pytest

import pullback as paddle
from pullback.frontend import core
from pullback.testing.low_precision import to_float64

FACTS = json.load(open(os.path.join(os.path.dirname(__file__), "data", "paddle_dtype_facts.json")))


@pytest.fixture(autouse=True)
def _eager() -> Iterator[None]:
    core.disable_static()
    yield
    core.disable_static()


def test_op_lists_are_paddles() -> None:
    for d, table in FACTS["amp_white_list"].items():
        assert {lv: sorted(v) for lv, v in paddle.amp.white_list()[d].items()} == table
    for d, table in FACTS["amp_black_list"].items():
        assert {lv: sorted(v) for lv, v in paddle.amp.black_list()[d].items()} == table
    assert paddle.amp.is_float16_supported() and paddle.amp.is_bfloat16_supported()  # Paddle's CPU: False, True


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_o1_casts_by_the_lists(dtype: str) -> None:
    x = paddle.to_tensor(np.random.default_rng(0).standard_normal((4, 3)).astype("float32"))
    w = paddle.to_tensor(np.ones((3, 5), np.float32))
    with paddle.amp.auto_cast(dtype=dtype):
        assert paddle.amp.is_autocast_enabled() and paddle.amp.get_autocast_dtype() == dtype
        y = paddle.matmul(x, w)  # white
        assert y.dtype == dtype
        assert paddle.nn.functional.softmax(y).dtype == "float32"  # black
        assert paddle.nn.functional.relu(y).dtype == dtype  # gray: its input's dtype
        assert (y + x[:, :1]).dtype == "float32"  # gray, mixed: float32
        assert paddle.exp(y).dtype == "float32"
    assert not paddle.amp.is_autocast_enabled() and paddle.amp.get_autocast_dtype() == "float16"
    with paddle.amp.auto_cast(dtype=dtype, custom_black_list=["matmul"], custom_white_list=["exp"]):
        assert paddle.matmul(x, w).dtype == "float32"
        assert paddle.exp(x).dtype == dtype
    with paddle.amp.auto_cast(enable=False, dtype=dtype):
        assert paddle.matmul(x, w).dtype == "float32"
    with pytest.raises(ValueError, match="overlap"):
        with paddle.amp.auto_cast(custom_white_list=["exp"], custom_black_list=["exp"]):
            pass


def test_o2_and_od_levels() -> None:
    x = paddle.to_tensor(np.ones((2, 3), np.float32))
    with paddle.amp.auto_cast(level="O2"):
        assert paddle.nn.functional.relu(x).dtype == "float16"  # gray: low precision at O2
        assert paddle.nn.functional.softmax(x).dtype == "float16"  # only EXTRA_BLACK_LIST is black at O2
    with paddle.amp.auto_cast(level="OD", dtype="bfloat16"):
        assert paddle.nn.functional.relu(x.astype("bfloat16")).dtype == "float32"
        assert paddle.matmul(x, x.T).dtype == "bfloat16"


def test_gradients_flow_through_the_casts() -> None:
    w = paddle.to_tensor(np.full((3, 2), 0.5, np.float32), stop_gradient=False)
    x = paddle.to_tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    with paddle.amp.auto_cast(dtype="bfloat16"):
        loss = paddle.mean(paddle.matmul(x, w))
    loss.backward()
    assert w.grad.dtype == "float32"  # the float32 weight gets a float32 gradient
    np.testing.assert_allclose(w.grad.numpy(), np.repeat(x.numpy().sum(0)[:, None] / 4, 2, 1), rtol=1e-2)


def test_static_auto_cast_inserts_casts_visible_in_the_ir() -> None:
    paddle.enable_static()
    main, start = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, start):
        x = paddle.static.data("x", [None, 4])
        with paddle.amp.auto_cast(dtype="bfloat16"):
            y = paddle.static.nn.fc(x, 3)
            loss = paddle.mean(paddle.nn.functional.softmax(y))
    text = str(main)
    assert re.search(r'= pd.cast %x \{dtype = "bfloat16".*tensor<\?x4xbf16>', text), text
    assert re.search(r"pd.matmul .*: \(tensor<\?x4xbf16>, tensor<4x3xbf16>\) -> tensor<\?x3xbf16>", text), text
    assert all(p.dtype == "float32" for p in main.all_parameters())  # master weights stay float32
    assert loss.dtype == "float32"
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(start)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # compiled, no interpreter fallback
        (got,) = exe.run(main, feed={"x": np.ones((2, 4), np.float32)}, fetch_list=[loss])
    assert got.dtype == np.float32 and np.isfinite(got).all()


# --------------------------------------------------------------------- GradScaler


def _model_and_opt() -> tuple[paddle.nn.Layer, paddle.optimizer.Optimizer]:
    paddle.seed(1)
    model = paddle.nn.Linear(3, 2)
    return model, paddle.optimizer.SGD(learning_rate=0.1, parameters=model.parameters())


def test_grad_scaler_defaults() -> None:
    d = FACTS["grad_scaler_defaults"]
    s = paddle.amp.GradScaler()
    assert s.get_init_loss_scaling() == d["init_loss_scaling"] and s.get_incr_ratio() == d["incr_ratio"]
    assert s.get_decr_ratio() == d["decr_ratio"] and s.get_incr_every_n_steps() == d["incr_every_n_steps"]
    assert s.get_decr_every_n_nan_or_inf() == d["decr_every_n_nan_or_inf"]
    assert s.is_enable() and s.is_use_dynamic_loss_scaling()  # (Paddle disables it on a CPU)


def test_grad_scaler_skips_the_step_and_lowers_the_scale_on_inf() -> None:
    model, opt = _model_and_opt()
    scaler = paddle.amp.GradScaler(init_loss_scaling=1024.0, incr_every_n_steps=2)
    x = paddle.to_tensor(np.ones((4, 3), np.float32))
    before = model.weight.numpy().copy()
    # A good step: the gradient is unscaled before the update.
    loss = paddle.mean(model(x))
    scaler.scale(loss).backward()
    assert np.allclose(model.weight.grad.numpy(), 1024.0 * 0.5)
    scaler.step(opt)
    scaler.update()
    np.testing.assert_allclose(model.weight.numpy(), before - 0.1 * 0.5, rtol=1e-6)
    opt.clear_grad()
    # An inf in a gradient: no update, the scale halves.
    after_good = model.weight.numpy().copy()
    loss = paddle.mean(model(x))
    scaler.scale(loss).backward()
    model.bias.grad._data[0] = np.inf
    scaler.step(opt)
    scaler.update()
    np.testing.assert_array_equal(model.weight.numpy(), after_good)
    assert float(scaler.state_dict()["scale"][0]) == 512.0
    opt.clear_grad()
    # Two good steps in a row raise it again (incr_every_n_steps=2).
    for _ in range(2):
        scaler.scale(paddle.mean(model(x))).backward()
        scaler.step(opt)
        scaler.update()
        opt.clear_grad()
    assert float(scaler.state_dict()["scale"][0]) == 1024.0


def test_grad_scaler_minimize_and_protocol_errors() -> None:
    model, opt = _model_and_opt()
    scaler = paddle.amp.GradScaler(init_loss_scaling=8.0)
    x = paddle.to_tensor(np.full((2, 3), np.nan, np.float32))
    before = model.weight.numpy().copy()
    scaled = scaler.scale(paddle.mean(model(x)))
    scaled.backward()
    scaler.minimize(opt, scaled)
    np.testing.assert_array_equal(model.weight.numpy(), before)  # nan gradients: skipped
    assert scaler.state_dict()["scale"][0] == 4.0
    opt.clear_grad()
    scaler.scale(paddle.mean(model(paddle.ones([2, 3])))).backward()
    scaler.unscale_(opt)
    with pytest.raises(RuntimeError, match="unscale_\\(\\) has already been called"):
        scaler.unscale_(opt)
    scaler.step(opt)
    with pytest.raises(RuntimeError, match="step\\(\\) has already been called"):
        scaler.step(opt)
    scaler.update()


def test_grad_scaler_state_dict_round_trip() -> None:
    s = paddle.amp.GradScaler(init_loss_scaling=128.0, incr_ratio=3.0, decr_ratio=0.25, incr_every_n_steps=7)
    state = s.state_dict()
    assert state["scale"].dtype == np.float32 and state["incr_every_n_steps"] == 7
    t = paddle.amp.GradScaler()
    t.load_state_dict(state)
    assert t.state_dict()["incr_ratio"] == 3.0 and float(t.state_dict()["scale"][0]) == 128.0
    assert paddle.amp.GradScaler(enable=False).state_dict() == {}
    with pytest.raises(RuntimeError, match="empty"):
        t.load_state_dict({})


# ---------------------------------------------------------------------- decorate


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_decorate_o2_casts_parameters_and_keeps_master_weights(dtype: str) -> None:
    paddle.seed(0)
    model = paddle.nn.Sequential(paddle.nn.Linear(4, 4), paddle.nn.LayerNorm(4), paddle.nn.Linear(4, 2))
    opt = paddle.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
    w0 = model[0].weight
    model, opt = paddle.amp.decorate(model, opt, level="O2", dtype=dtype)
    assert model[0].weight is w0 and w0.dtype == dtype and model[2].bias.dtype == dtype
    assert model[1].weight.dtype == "float32"  # norm layers keep float32
    with paddle.amp.auto_cast(level="O2", dtype=dtype):
        loss = paddle.mean(model(paddle.ones([3, 4])))
    loss.backward()
    assert w0.grad.dtype == dtype
    opt.step()
    master = opt._master_weights[w0.name]
    assert master.dtype == "float32" and master.name == f"{w0.name}_fp32_master_0"
    np.testing.assert_array_equal(paddle.to_tensor(master.numpy()).astype(dtype).numpy(), w0.numpy())
    assert paddle.amp.decorate(model, level="O1") is model


# ----------------------------------------------------------------- training runs


def _data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((512, 16)).astype(np.float32)
    w = rng.standard_normal((16, 4))
    y = np.argmax(x @ w + 0.3 * np.sin(2 * x[:, :4]), 1).astype(np.int64)[:, None]
    return x, y


def _eager_accuracy(dtype: str | None, level: str) -> float:
    x, y = _data()
    paddle.seed(0)
    model = paddle.nn.Sequential(paddle.nn.Linear(16, 64), paddle.nn.ReLU(), paddle.nn.Linear(64, 4))
    opt = paddle.optimizer.Adam(learning_rate=0.01, parameters=model.parameters())
    if dtype is not None:
        model, opt = paddle.amp.decorate(model, opt, level=level, dtype=dtype)
    scaler = paddle.amp.GradScaler(enable=dtype == "float16", init_loss_scaling=1024.0)
    amp = dict(enable=dtype is not None, level=level, dtype=dtype or "float16")
    for _ in range(3):
        for i in range(0, 512, 64):
            with paddle.amp.auto_cast(**amp):
                loss = paddle.nn.functional.cross_entropy(model(paddle.to_tensor(x[i:i + 64])),
                                                          paddle.to_tensor(y[i:i + 64]))
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            opt.clear_grad()
    with paddle.amp.auto_cast(**amp):
        out = model(paddle.to_tensor(x)).numpy()
    return float((to_float64(out).argmax(1) == y[:, 0]).mean())


@pytest.mark.parametrize("dtype,level", [("float16", "O1"), ("bfloat16", "O1"), ("float16", "O2"), ("bfloat16", "O2")])
def test_eager_training_reaches_float32_accuracy(dtype: str, level: str) -> None:
    want = _eager_accuracy(None, "O1")
    got = _eager_accuracy(dtype, level)
    assert want > 0.8 and got >= want - 0.03, (dtype, level, got, want)


def _static_accuracy(dtype: str | None) -> float:
    x, y = _data()
    paddle.enable_static()
    try:
        main, start = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, start):
            xv = paddle.static.data("x", [None, 16])
            yv = paddle.static.data("y", [None, 1], "int64")
            with paddle.amp.auto_cast(enable=dtype is not None, dtype=dtype or "float16"):
                h = paddle.nn.functional.relu(paddle.static.nn.fc(xv, 64))
                out = paddle.static.nn.fc(h, 4)
                loss = paddle.mean(paddle.nn.functional.cross_entropy(out, yv))
            paddle.optimizer.Adam(learning_rate=0.01).minimize(loss)
        exe = paddle.static.Executor(paddle.CPUPlace())
        paddle.seed(0)
        exe.run(start)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # compiled: no interpreter fallback
            for _ in range(3):
                for i in range(0, 512, 64):
                    exe.run(main, feed={"x": x[i:i + 64], "y": y[i:i + 64]}, fetch_list=[loss])
            (o,) = exe.run(main.clone(for_test=True), feed={"x": x, "y": y}, fetch_list=[out])
        return float((to_float64(o).argmax(1) == y[:, 0]).mean())
    finally:
        paddle.disable_static()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_static_training_reaches_float32_accuracy(dtype: str) -> None:
    want = _static_accuracy(None)
    got = _static_accuracy(dtype)
    assert want > 0.8 and got >= want - 0.03, (dtype, got, want)


# -------------------------------------------------- static programs: the AMP pass


def test_static_amp_decorate_runs_the_pass_and_trains() -> None:
    x, y = _data()
    paddle.enable_static()
    try:
        main, start = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, start):
            xv = paddle.static.data("x", [None, 16])
            yv = paddle.static.data("y", [None, 1], "int64")
            out = paddle.static.nn.fc(paddle.nn.functional.relu(paddle.static.nn.fc(xv, 64)), 4)
            loss = paddle.mean(paddle.nn.functional.cross_entropy(out, yv))
            lists = paddle.static.amp.AutoMixedPrecisionLists(dtype="bfloat16")
            assert "matmul" in lists.white_list and "softmax_with_cross_entropy" in lists.black_list
            opt = paddle.static.amp.decorate(paddle.optimizer.Adam(learning_rate=0.01), lists)
            opt.minimize(loss)
        text = str(main)
        assert re.search(r"pd.matmul %\d+, %\d+ \{name = \"fc_\d+.tmp_0\"\} : \(tensor<\?x16xbf16>, tensor<16x64xbf16>\)", text)
        assert opt._casts >= 4 and loss.dtype == "float32"
        # bfloat16: a static scale (2**16), gradients unscaled and checked, no dynamic update.
        assert opt.get_loss_scaling().name.startswith("loss_scaling_")
        assert "pd.check_finite_and_unscale" in text and "pd.update_loss_scaling" not in text
        exe = paddle.static.Executor(paddle.CPUPlace())
        paddle.seed(0)
        exe.run(start)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for _ in range(3):
                for i in range(0, 512, 64):
                    exe.run(main, feed={"x": x[i:i + 64], "y": y[i:i + 64]}, fetch_list=[loss])
            (o,) = exe.run(main, feed={"x": x, "y": y}, fetch_list=[out])
    finally:
        paddle.disable_static()
    assert (to_float64(o).argmax(1) == y[:, 0]).mean() >= _static_accuracy(None) - 0.03


def test_auto_mixed_precision_pass_on_mlir_text() -> None:
    from xdsl.context import Context
    from xdsl.parser import Parser

    from pullback.dialects import pd
    from pullback.passes import PASSES

    text = """
    %x = pd.data "x" : tensor<2x3xf32>
    %w = pd.data "w" : tensor<3x4xf32>
    %y = pd.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
    %r = pd.relu %y : (tensor<2x4xf32>) -> tensor<2x4xf32>
    %s = pd.softmax %r : (tensor<2x4xf32>) -> tensor<2x4xf32>
    """
    ctx = Context()
    ctx.load_dialect(pd.PD)
    from xdsl.dialects.builtin import Builtin

    ctx.load_dialect(Builtin)
    module = Parser(ctx, text).parse_module()
    PASSES["auto-mixed-precision"]()(dtype="float16", level="O1").apply(ctx, module)
    module.verify()
    out = str(module)
    assert out.count("pd.cast") == 3, out  # x and w down for the matmul, relu's f16 result up for softmax
    assert "pd.relu %y : (tensor<2x4xf16>) -> tensor<2x4xf16>" in out
    assert "pd.softmax" in out and "-> tensor<2x4xf32>" in out


def test_optimizer_multi_precision_argument_keeps_master_weights() -> None:
    layer = paddle.nn.Linear(2, 2)
    layer.to(dtype="float16")
    opt = paddle.optimizer.Momentum(learning_rate=1e-4, parameters=layer.parameters(), multi_precision=True)
    w = layer.weight
    start = w.numpy().astype(np.float64)
    for _ in range(3):  # updates far below float16's resolution accumulate in the master weight
        paddle.mean(layer(paddle.ones([1, 2], dtype="float16"))).backward()
        opt.step()
        opt.clear_grad()
    master = opt._master_weights[w.name]
    assert master.dtype == "float32"
    assert not np.array_equal(master.numpy().astype(np.float64), start)
    np.testing.assert_array_equal(master.numpy().astype(np.float16), w.numpy())
