"""Saving and loading: paddle.save/load (state dicts, Tensors, nested containers,
buffers, programs), paddle.static.save/load and program state, inference models
(pruned, test-mode, reloaded in a fresh scope and run on both backends), and
paddle.summary."""

from __future__ import annotations

import io
import os
import pickle
import warnings

import numpy as np
import pullback as paddle
import pytest
from pullback.dialects import pd
from pullback.frontend import core, unique_name
from pullback.frontend.framework import Program, program_guard

RNG = np.random.default_rng(3)


def _net():
    return paddle.nn.Sequential(paddle.nn.Linear(3, 4), paddle.nn.BatchNorm1D(4), paddle.nn.ReLU())


def test_state_dict_round_trip(dynamic_mode, tmp_path):
    net = _net()
    xv = RNG.standard_normal((5, 3)).astype(np.float32)
    net(paddle.to_tensor(xv))  # moves the running statistics away from 0 / 1
    path = str(tmp_path / "sub" / "model.pdparams")
    paddle.save(net.state_dict(), path)
    with open(path, "rb") as f:
        raw = pickle.load(f)
    assert raw["StructuredToParameterName@@"]["1._mean"] == net[1]._mean.name  # Paddle's layout
    loaded = paddle.load(path)
    assert set(loaded) == set(net.state_dict())
    assert loaded["0.weight"].name == net[0].weight.name
    other = _net()
    other.set_state_dict(loaded)
    net.eval()
    other.eval()
    np.testing.assert_allclose(other(paddle.to_tensor(xv)).numpy(), net(paddle.to_tensor(xv)).numpy())
    raw_arrays = paddle.load(path, return_numpy=True)
    assert isinstance(raw_arrays["1._variance"], np.ndarray)
    assert "StructuredToParameterName@@" in paddle.load(path, keep_name_table=True)


def test_tensors_and_nested_containers(dynamic_mode):
    obj = {"w": [paddle.to_tensor([1.0, 2.0]), 3, "text"], "t": (paddle.to_tensor(np.arange(4)),), "epoch": 7}
    buf = io.BytesIO()
    paddle.save(obj, buf)
    buf.seek(0)
    back = paddle.load(buf)
    assert back["epoch"] == 7 and back["w"][1:] == [3, "text"]
    np.testing.assert_array_equal(back["w"][0].numpy(), [1.0, 2.0])
    assert isinstance(back["t"], tuple) and back["t"][0].dtype == "int64"
    buf = io.BytesIO()
    paddle.save(paddle.to_tensor(np.eye(2, dtype=np.float32)), buf)
    buf.seek(0)
    np.testing.assert_array_equal(paddle.load(buf, return_numpy=True), np.eye(2))


def test_save_errors(dynamic_mode, tmp_path):
    with pytest.raises(ValueError, match="do not support saving `paddle.nn.Layer`"):
        paddle.save([_net()], str(tmp_path / "x.pkl"))
    with pytest.raises(ValueError, match="protocol"):
        paddle.save({"a": 1}, str(tmp_path / "x.pkl"), protocol=5)
    paddle.save({"a": paddle.to_tensor([1.0])}, str(tmp_path / "m.pdparams"))
    with pytest.raises(ValueError, match="specify the full file name"):
        paddle.load(str(tmp_path / "m"))
    with pytest.raises(ValueError, match="not supported"):
        paddle.load(str(tmp_path / "m.pdparams"), bogus=1)


def _train_program():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data("x", [-1, 2, 4, 4], "float32")
        h = paddle.static.nn.batch_norm(paddle.static.nn.conv2d(x, 3, 3), act="relu")
        y = paddle.mean(h, axis=[2, 3])
        loss = paddle.mean(y)
        paddle.optimizer.Momentum(0.05, momentum=0.9).minimize(loss)
    return main, startup, x, y, loss


@pytest.fixture
def static_mode():
    core.enable_static()
    try:
        yield
    finally:
        core.disable_static()


def test_static_save_load_and_program_state(static_mode, tmp_path):
    main, startup, _x, _y, loss = _train_program()
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    xv = RNG.standard_normal((2, 2, 4, 4)).astype(np.float32)
    scope = paddle.static.Scope()
    prefix = str(tmp_path / "ckpt" / "model")
    with paddle.static.scope_guard(scope):
        exe.run(startup)
        exe.run(main, feed={"x": xv}, fetch_list=[loss])
        paddle.static.save(main, prefix)
        after, = exe.run(main, feed={"x": xv}, fetch_list=[loss])
    for suffix in (".pdparams", ".pdopt", ".pdmodel"):
        assert os.path.exists(prefix + suffix)
    with open(prefix + ".pdparams", "rb") as f:
        params = pickle.load(f)
    with open(prefix + ".pdopt", "rb") as f:
        opt = pickle.load(f)
    assert "batch_norm_0.w_1" in params and "conv2d_0.w_0" in params  # statistics are parameters
    # The optimizer's persistables, as Paddle's .pdopt holds them: the accumulators and
    # the learning-rate variable.
    assert opt and all("velocity" in n or n.startswith("learning_rate_") for n in opt)
    assert any("velocity" in n for n in opt)
    state = paddle.static.load_program_state(prefix)
    assert set(state) == set(params) | set(opt)
    # A fresh scope restored from the files continues exactly like the original.
    with paddle.static.scope_guard(paddle.static.Scope()):
        paddle.static.load(main, prefix, exe)
        again, = exe.run(main, feed={"x": xv}, fetch_list=[loss])
    np.testing.assert_allclose(again, after, rtol=1e-6)
    with paddle.static.scope_guard(paddle.static.Scope()):
        paddle.static.set_program_state(main, state)
        again2, = exe.run(main, feed={"x": xv}, fetch_list=[loss])
    np.testing.assert_allclose(again2, after, rtol=1e-6)
    bad = dict(state)
    bad["conv2d_0.w_0"] = np.zeros([1])
    with pytest.raises(RuntimeError, match=r"conv2d_0.w_0' has shape \[3, 2, 3, 3\]"):
        paddle.static.set_program_state(main, bad)
    with pytest.warns(UserWarning, match="not used in the program"), paddle.static.scope_guard(paddle.static.Scope()):
        paddle.static.set_program_state(main, {**state, "stray": np.zeros(1)})


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_inference_model_round_trip(static_mode, tmp_path, backend):
    main, startup, x, y, loss = _train_program()
    exe = paddle.static.Executor(paddle.CPUPlace(), backend=backend)
    xv = RNG.standard_normal((3, 2, 4, 4)).astype(np.float32)
    prefix = str(tmp_path / "infer" / "net")
    with paddle.static.scope_guard(paddle.static.Scope()), warnings.catch_warnings():
        warnings.simplefilter("error")  # native code: no interpreter fallback
        exe.run(startup)
        exe.run(main, feed={"x": xv}, fetch_list=[loss])
        paddle.static.save_inference_model(prefix, [x], [y], exe, program=main)
        pruned = paddle.static.normalize_program(main, [x], [y])
        want, = exe.run(pruned, feed={"x": xv}, fetch_list=[y.name])
    ops = [op for op in pruned.module.body.block.ops]
    assert not any(isinstance(op, (pd.BackwardOp, pd.MomentumOp)) for op in ops)
    assert all(op.prop("is_test") for op in ops if isinstance(op, pd.BatchNormOp))
    with paddle.static.scope_guard(paddle.static.Scope()), warnings.catch_warnings():
        warnings.simplefilter("error")
        prog, feeds, fetches = paddle.static.load_inference_model(prefix, exe)
        got, = exe.run(prog, feed={feeds[0]: xv}, fetch_list=fetches)
    assert feeds == ["x"] and [f.name for f in fetches] == [y.name]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # With running statistics (test mode) the output of a sample does not depend on the batch.
    with paddle.static.scope_guard(paddle.static.Scope()), warnings.catch_warnings():
        warnings.simplefilter("error")
        prog, feeds, fetches = paddle.static.load_inference_model(prefix, exe)
        one, = exe.run(prog, feed={"x": xv[:1]}, fetch_list=fetches)
    np.testing.assert_allclose(one, want[:1], rtol=1e-5, atol=1e-6)


def test_inference_model_errors(static_mode, tmp_path):
    main, _startup, x, _y, _loss = _train_program()
    with pytest.raises(TypeError, match="fetch_vars must be Variables"):
        paddle.static.save_inference_model(str(tmp_path / "m"), [x], ["y"], None, program=main)
    with pytest.raises(ValueError, match="there is no model file"):
        paddle.static.load_inference_model(str(tmp_path / "missing"), None)


def test_program_save_load(static_mode, tmp_path):
    main, *_ = _train_program()
    path = str(tmp_path / "main.pdmodel")
    paddle.save(main, path)
    back = paddle.load(path)
    assert isinstance(back, Program)
    assert back.to_string() == main.to_string()


def test_summary(dynamic_mode, capsys):
    net = paddle.nn.Sequential(paddle.nn.Conv2D(1, 6, 3, padding=1), paddle.nn.BatchNorm2D(6),
                               paddle.nn.ReLU(), paddle.nn.Flatten(), paddle.nn.Linear(6 * 4 * 4, 10))
    info = paddle.summary(net, (-1, 1, 4, 4))
    out = capsys.readouterr().out
    # conv 6*9+6, bn 4*6 (2*6 of them running statistics), linear 96*10+10
    assert info == {"total_params": 60 + 24 + 970, "trainable_params": 60 + 12 + 970}
    assert "Conv2D-1" in out and "[[1, 1, 4, 4]]" in out and "[1, 10]" in out
    assert "Non-trainable params: 12" in out
    assert net.training  # restored
    with pytest.raises(ValueError, match="cannot be None at the same time"):
        paddle.summary(net)
