"""paddle.Model: fit/evaluate/predict over Datasets (compiled through to_static),
the same losses as a hand-written eager loop, Paddle's progress lines, the
*_batch methods, save/load, callbacks (EarlyStopping, ModelCheckpoint,
LRScheduler) and errors."""

from __future__ import annotations

import os

import numpy as np
import pullback as paddle
import pytest
from pullback.dialects import pd
from pullback.static import InputSpec

F = paddle.nn.functional


class Blobs(paddle.io.Dataset):
    def __init__(self, n: int, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.x = rng.standard_normal((n, 4)).astype("float32")
        self.y = (self.x[:, :1] + self.x[:, 1:2] > 0).astype("int64")

    def __getitem__(self, i):
        return self.x[i], self.y[i]

    def __len__(self) -> int:
        return len(self.x)


def _net():
    paddle.seed(11)
    return paddle.nn.Sequential(paddle.nn.Linear(4, 8), paddle.nn.ReLU(), paddle.nn.Linear(8, 2))


def _model(lr=0.05, metrics=True):
    net = _net()
    model = paddle.Model(net, inputs=[InputSpec([None, 4], "float32", "x")],
                         labels=[InputSpec([None, 1], "int64", "label")])
    model.prepare(paddle.optimizer.SGD(lr, parameters=model.parameters()), paddle.nn.CrossEntropyLoss(),
                  paddle.metric.Accuracy() if metrics else None)
    return model


def test_train_batch_matches_an_eager_loop(dynamic_mode):
    data = Blobs(24)
    model = _model(metrics=False)
    got = [float(model.train_batch([data.x[i:i + 8]], [data.y[i:i + 8]])[0]) for i in (0, 8, 16)]
    net = _net()
    opt = paddle.optimizer.SGD(0.05, parameters=net.parameters())
    want = []
    for i in (0, 8, 16):
        loss = F.cross_entropy(net(paddle.to_tensor(data.x[i:i + 8])), paddle.to_tensor(data.y[i:i + 8]))
        loss.backward()
        opt.step()
        opt.clear_grad()
        want.append(float(loss))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    # Each step (forward, loss, backward, update) ran as one compiled program,
    # the same for every batch.
    assert model._train_steps is not None and len(model._train_steps) == 1


def test_fit_prints_progress_and_learns(dynamic_mode, capsys):
    model = _model(lr=0.2)
    before = model.evaluate(Blobs(32, 1), batch_size=16, verbose=0)
    model.fit(Blobs(64), Blobs(32, 1), batch_size=16, epochs=3, verbose=2, log_freq=2, shuffle=False)
    out = capsys.readouterr().out
    assert "Epoch 1/3" in out and "Epoch 3/3" in out
    assert "step 4/4 - loss: " in out and " - acc: " in out and "ms/step" in out
    assert "Eval begin..." in out and "Eval samples: 32" in out
    after = model.evaluate(Blobs(32, 1), batch_size=16, verbose=0)
    assert set(after) == {"loss", "acc"}
    assert after["loss"][0] < before["loss"][0]
    assert after["acc"] > 0.6


def test_eval_and_predict_batches(dynamic_mode):
    model = _model()
    data = Blobs(10)
    loss, metrics = model.eval_batch([data.x], [data.y])
    assert np.asarray(loss[0]).size == 1 and 0.0 <= metrics[0] <= 1.0
    (out,) = model.predict_batch([data.x])
    np.testing.assert_allclose(out, model.network(paddle.to_tensor(data.x)).numpy(), rtol=1e-6)
    preds = model.predict(data, batch_size=4, verbose=0)
    assert [p.shape for p in preds[0]] == [(4, 2), (4, 2), (2, 2)]
    stacked = model.predict(data, batch_size=4, stack_outputs=True, verbose=0)
    np.testing.assert_allclose(stacked[0], out, rtol=1e-6)


def test_save_and_load(dynamic_mode, tmp_path):
    model = _model()
    model.prepare(paddle.optimizer.Adam(0.01, parameters=model.parameters()), paddle.nn.CrossEntropyLoss())
    model.fit(Blobs(16), batch_size=8, epochs=1, verbose=0)
    path = str(tmp_path / "ck" / "m")
    model.save(path)
    assert os.path.exists(path + ".pdparams") and os.path.exists(path + ".pdopt")
    other = _model()
    other.prepare(paddle.optimizer.Adam(0.01, parameters=other.parameters()), paddle.nn.CrossEntropyLoss())
    other.load(path)
    # Same parameters and Adam moments: the next step agrees too.
    batch = Blobs(8, 5)
    for m in (model, other):
        m.train_batch([batch.x], [batch.y])
    for p, q in zip(model.parameters(), other.parameters()):
        np.testing.assert_allclose(q.numpy(), p.numpy(), rtol=1e-6)
    x = Blobs(4).x
    np.testing.assert_allclose(other.predict_batch([x])[0], model.predict_batch([x])[0], rtol=1e-6)
    model.save(str(tmp_path / "infer"), training=False)
    loaded = paddle.jit.load(str(tmp_path / "infer"))
    np.testing.assert_allclose(loaded(paddle.to_tensor(x)).numpy(), model.predict_batch([x])[0], rtol=1e-6)
    with pytest.raises(ValueError, match="no '"):
        other.load(str(tmp_path / "missing"))


def test_callbacks(dynamic_mode, tmp_path):
    calls = []

    class Spy(paddle.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            calls.append(("epoch", epoch, round(float(logs["loss"][0]), 6)))

        def on_train_batch_end(self, step, logs=None):
            calls.append(("batch", step))

    sched = paddle.optimizer.lr.StepDecay(0.1, step_size=1, gamma=0.5)
    net = _net()
    model = paddle.Model(net, inputs=[InputSpec([None, 4], "float32", "x")])
    model.prepare(paddle.optimizer.SGD(sched, parameters=net.parameters()), paddle.nn.CrossEntropyLoss())
    stop = paddle.callbacks.EarlyStopping(monitor="loss", patience=0, min_delta=1e9, save_best_model=False,
                                          verbose=0)
    model.fit(Blobs(16), Blobs(8), batch_size=8, epochs=5, verbose=0,
              callbacks=[Spy(), paddle.callbacks.LRScheduler(by_step=True), stop,
                         paddle.callbacks.ModelCheckpoint(1, str(tmp_path / "ck"))])
    # EarlyStopping stopped after the first evaluation (no improvement of 1e9).
    assert [c for c in calls if c[0] == "epoch"][-1][1] == 0
    assert [c[1] for c in calls if c[0] == "batch"] == [0, 1]
    assert sched() == pytest.approx(0.1 * 0.5 ** 2)
    assert os.path.exists(tmp_path / "ck" / "0.pdparams") and os.path.exists(tmp_path / "ck" / "final.pdparams")
    with pytest.raises(ValueError, match="mutually exclusive"):
        paddle.callbacks.LRScheduler(by_step=True, by_epoch=True)


def test_errors(dynamic_mode):
    with pytest.raises(TypeError, match="Layer"):
        paddle.Model(lambda x: x)
    model = paddle.Model(_net())
    with pytest.raises(ValueError, match="prepare"):
        model.train_batch([np.zeros((1, 4), "float32")], [np.zeros((1, 1), "int64")])
    with pytest.raises(TypeError, match="Metric"):
        model.prepare(metrics=[object()])
    with pytest.raises(TypeError, match="loss"):
        model.prepare(loss=3)


def test_untraceable_network_falls_back_to_eager(dynamic_mode):
    class Branchy(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = paddle.nn.Linear(4, 2)

        def forward(self, x):
            y = self.fc(x)
            return y if y.mean() > -100 else -y

    model = paddle.Model(Branchy(), inputs=[InputSpec([None, 4], "float32", "x")])
    with pytest.warns(UserWarning, match="eagerly"):
        (out,) = model.predict_batch([Blobs(3).x])
    assert out.shape == (3, 2) and model._static is None


def test_static_graph_mode_matches_dynamic(dynamic_mode, tmp_path):
    """paddle.enable_static(): one program per mode, parameters shared by name."""
    data = Blobs(24)
    dyn = _model(metrics=False)
    want = [float(dyn.train_batch([data.x[i:i + 8]], [data.y[i:i + 8]])[0]) for i in (0, 8, 16)]
    weights = [p.numpy() for p in _net().parameters()]
    paddle.enable_static()
    try:
        net = _net()
        model = paddle.Model(net, inputs=[InputSpec([None, 4], "float32", "x")],
                             labels=[InputSpec([None, 1], "int64", "label")])
        model.prepare(paddle.optimizer.SGD(0.05, parameters=model.parameters()), paddle.nn.CrossEntropyLoss(),
                      paddle.metric.Accuracy())
        model._static_program("train")
        scope = paddle.static.global_scope()
        for p, w in zip(net.parameters(), weights):
            scope[p.name] = w.copy()
        got = []
        for i in (0, 8, 16):
            loss, (acc,) = model.train_batch([data.x[i:i + 8]], [data.y[i:i + 8]])
            got.append(float(loss[0]))
            assert 0.0 <= acc <= 1.0
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        (out,) = model.predict_batch([data.x[:3]])
        assert out.shape == (3, 2)
        result = model.evaluate(data, batch_size=8, verbose=0)
        assert set(result) == {"loss", "acc"}
        model.save(str(tmp_path / "static"))
        assert os.path.exists(tmp_path / "static.pdparams")
        with pytest.raises(TypeError, match="inputs"):  # Paddle's TypeError
            paddle.Model(net)
    finally:
        paddle.disable_static()


def test_a_layer_built_outside_program_guard_is_shared_by_name(dynamic_mode):
    paddle.enable_static()
    try:
        net = paddle.nn.Linear(3, 2)
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [None, 3])
            y = net(x)
            other = paddle.static.default_main_program()
        assert other is main
        names = [op.var_name.data for op in main.module.body.block.ops if isinstance(op, pd.ParameterOp)]
        assert names == [net.weight.name, net.bias.name]
        main.module.verify()
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(paddle.static.default_startup_program())
        xv = np.ones((2, 3), "float32")
        scope = paddle.static.global_scope()
        want = xv @ np.asarray(scope[net.weight.name]) + np.asarray(scope[net.bias.name])
        np.testing.assert_allclose(exe.run(main, {"x": xv}, [y])[0], want, rtol=1e-6)
    finally:
        paddle.disable_static()


def test_reduce_lr_on_plateau(dynamic_mode):
    net = _net()
    model = paddle.Model(net, inputs=[InputSpec([None, 4], "float32", "x")])
    model.prepare(paddle.optimizer.SGD(0.1, parameters=net.parameters()), paddle.nn.CrossEntropyLoss())
    cb = paddle.callbacks.ReduceLROnPlateau(monitor="loss", factor=0.5, patience=1, min_delta=1e9, verbose=0)
    model.fit(Blobs(16), Blobs(8), batch_size=8, epochs=3, verbose=0, callbacks=[cb])
    # Never "improves" by 1e9: the rate halves after each evaluation but the first.
    assert model._optimizer.get_lr() == pytest.approx(0.1 * 0.5 ** 2)
    with pytest.raises(ValueError, match="factor"):
        paddle.callbacks.ReduceLROnPlateau(factor=2.0)
