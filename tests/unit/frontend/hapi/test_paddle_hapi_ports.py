"""Ports of PaddlePaddle's own `paddle.Model` (hapi) unit tests that use the public
API, rewritten for pytest (PaddlePaddle/Paddle, Apache-2.0).  MNIST (a download) is
replaced by a small random dataset of the same shapes.

* `test/legacy_test/test_model.py` (`TestModelFunction`, `TestModelWithLRScheduler`,
  `TestRaiseError`; its `TestModel` class is GPU-only in Paddle and its fit/evaluate/
  predict/DistributedBatchSampler flow is covered here on the CPU): train_batch and
  predict_batch against a hand-written eager step, eager and static; save/load
  (eager, static, eager save then static load and back); parameters; summary
  (Model.summary, an LSTM/GRU/SimpleRNN summary, summary errors); exporting an
  inference model (`save(training=False)`) and running it with
  `static.load_inference_model`; gradient accumulation (`train_batch(update=False)`);
  a LinearWarmup(PiecewiseDecay) schedule stepped per batch and per epoch
  (`callbacks.LRScheduler(by_epoch=True)`); and the constructor/save errors.
* `test/legacy_test/test_callbacks.py`: `hapi.callbacks.config_callbacks` driven by
  hand through train/eval/predict with verbose 0 to 3.
* `test/legacy_test/test_callback_early_stop.py`: four `EarlyStopping` callbacks (loss
  min, acc auto with a baseline, an unknown mode, an unknown monitor) with
  save_best_model, with and without eval data.
* `test/legacy_test/test_callback_reduce_lr_on_plateau.py`: `ReduceLROnPlateau`
  (patience, cooldown) during `fit`, its factor error, an unknown mode, an unknown
  monitor and an optimizer with a schedule (warnings, not errors).
* `test/legacy_test/test_hapi_amp.py` (GPU-only in Paddle; pullback computes float16 on
  the CPU): `fit` with amp_configs O0 / O1 / O2 (eager and static; a static Model
  trains in float32, as Paddle's does on a CPU), save/load restoring the GradScaler's
  counters and the optimizer's moments, and the amp_configs errors (eager and
  static).
"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

import pullback as paddle
from pullback import Model
from pullback.hapi.callbacks import config_callbacks
from pullback.metric import Accuracy
from pullback.nn import CrossEntropyLoss, Linear
from pullback.static import InputSpec
from pullback.vision.models import LeNet


class FakeMnist(paddle.io.Dataset):
    """MNIST-shaped samples: [1, 28, 28] float32 images, int64 labels."""

    def __init__(self, n: int, seed: int = 0, return_label: bool = True) -> None:
        rng = np.random.RandomState(seed)
        self.images = rng.random_sample((n, 1, 28, 28)).astype("float32")
        self.labels = rng.randint(0, 10, (n, 1)).astype("int64")
        self.return_label = return_label

    def __getitem__(self, idx):
        if self.return_label:
            return self.images[idx], self.labels[idx]
        return (self.images[idx],)

    def __len__(self) -> int:
        return len(self.images)


class MyModel(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self._fc = Linear(20, 10)

    def forward(self, x):
        return self._fc(x)


class MyDataset(paddle.io.Dataset):
    def __getitem__(self, idx):
        return (np.random.random(size=(20,)).astype(np.float32),
                np.random.randint(0, 10, size=(1,)).astype(np.int64))

    def __len__(self) -> int:
        return 40


_X = [InputSpec([None, 20], "float32", "x")]
_Y = [InputSpec([None, 1], "int64", "label")]


def _set_mode(dynamic: bool) -> None:
    if dynamic:
        paddle.disable_static()
    else:
        paddle.enable_static()


@pytest.fixture
def modes(dynamic_mode):
    """Eager to start with; static programs and parameters of this test only."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), paddle.static.scope_guard(paddle.static.Scope()):
        yield
    paddle.disable_static()


def test_train_batch(modes) -> None:
    data = np.random.random(size=(4, 20)).astype(np.float32)
    label = np.random.randint(0, 10, size=(4, 1)).astype(np.int64)
    paddle.seed(1024)
    m = MyModel()
    optim = paddle.optimizer.SGD(learning_rate=0.001, parameters=m.parameters())
    loss = paddle.sum(CrossEntropyLoss(reduction="sum")(m(paddle.to_tensor(data)), paddle.to_tensor(label)))
    loss.backward()
    optim.minimize(loss)
    ref = loss.numpy()
    for dynamic in (True, False):
        _set_mode(dynamic)
        paddle.seed(1024)
        net = MyModel()
        model = Model(net, _X, _Y)
        model.prepare(paddle.optimizer.SGD(learning_rate=0.001, parameters=net.parameters()),
                      loss=CrossEntropyLoss(reduction="sum"))
        (got,) = model.train_batch([data], [label])
        np.testing.assert_allclose(np.asarray(got).flatten(), ref.flatten(), rtol=1e-6)
        paddle.disable_static()


def test_predict_batch(modes) -> None:
    data = np.random.random(size=(4, 20)).astype(np.float32)
    paddle.seed(1024)
    m = MyModel()
    m.eval()
    ref = m(paddle.to_tensor(data)).numpy()
    for dynamic in (True, False):
        _set_mode(dynamic)
        paddle.seed(1024)
        model = Model(MyModel(), _X)
        model.prepare()
        (out,) = model.predict_batch([data])
        np.testing.assert_allclose(out, ref, rtol=1e-6)
        paddle.disable_static()


def test_save_load(modes, tmp_path) -> None:
    path = str(tmp_path / "save_load")
    for dynamic in (True, False):
        _set_mode(dynamic)
        net = MyModel()
        model = Model(net, _X, _Y)
        model.prepare(optimizer=paddle.optimizer.SGD(learning_rate=0.001, parameters=net.parameters()),
                      loss=CrossEntropyLoss(reduction="sum"))
        model.save(path)
        model.load(path)
        assert os.path.exists(path + ".pdparams")
        paddle.disable_static()


def test_dynamic_save_static_load(modes, tmp_path) -> None:
    path = str(tmp_path / "dy")
    model = Model(MyModel())
    model.prepare(optimizer=paddle.optimizer.SGD(learning_rate=0.001, parameters=model.parameters()),
                  loss=CrossEntropyLoss(reduction="sum"))
    model.save(path)
    saved = {k: v.numpy() for k, v in model.network.state_dict().items()}
    paddle.enable_static()
    model = Model(MyModel(), _X, _Y)
    model.prepare(optimizer=paddle.optimizer.SGD(learning_rate=0.001, parameters=model.parameters()),
                  loss=CrossEntropyLoss(reduction="sum"))
    model.load(path)
    data = np.random.random((3, 20)).astype("float32")
    (out,) = model.predict_batch([data])
    np.testing.assert_allclose(out, data @ saved["_fc.weight"] + saved["_fc.bias"], rtol=1e-5)


def test_static_save_dynamic_load(modes, tmp_path) -> None:
    path = str(tmp_path / "st")
    paddle.enable_static()
    net = MyModel()
    model = Model(net, _X, _Y)
    model.prepare(optimizer=paddle.optimizer.SGD(learning_rate=0.001, parameters=net.parameters()),
                  loss=CrossEntropyLoss(reduction="sum"))
    model.save(path)
    data = np.random.random((3, 20)).astype("float32")
    (want,) = model.predict_batch([data])
    paddle.disable_static()
    net = MyModel()
    model = Model(net, _X, _Y)
    model.prepare(optimizer=paddle.optimizer.SGD(learning_rate=0.001, parameters=net.parameters()),
                  loss=CrossEntropyLoss(reduction="sum"))
    model.load(path)
    (out,) = model.predict_batch([data])
    np.testing.assert_allclose(out, want, rtol=1e-5)


def test_parameters(modes) -> None:
    for dynamic in (True, False):
        _set_mode(dynamic)
        model = Model(MyModel(), _X)
        model.prepare()
        params = model.parameters()
        assert list(params[0].shape) == [20, 10]
        paddle.disable_static()


def _n_params(layer) -> int:
    return int(sum(np.prod(v.shape) for v in layer.state_dict().values()))


def test_summary(modes) -> None:
    for dynamic in (True, False):
        _set_mode(dynamic)
        net = MyModel()
        model = Model(net, _X)
        model.prepare()
        assert model.summary()["total_params"] == _n_params(net)
        for kwargs in ({"input_size": 20}, {"input_size": [20]}, {"input_size": 20, "dtype": "float32"}):
            assert model.summary(**kwargs)["total_params"] == 210
        paddle.disable_static()


def test_summary_rnn(modes) -> None:
    paddle.summary(paddle.nn.GRU(input_size=2, hidden_size=3, num_layers=3, direction="bidirectional"), (1, 1, 2))
    rnn = paddle.nn.LSTM(16, 32, 2)
    info = paddle.summary(rnn, [(-1, 23, 16), ((2, None, 32), (2, -1, 32))])
    # Paddle's summary counts an RNN's weights once (its state_dict holds them twice).
    assert info["total_params"] == _n_params(rnn) / 2
    for rnn in (paddle.nn.GRU(16, 32, 2, direction="bidirectional"),
                paddle.nn.SimpleRNN(16, 32, 2, direction="bidirectional")):
        assert paddle.summary(rnn, (4, 23, 16))["total_params"] == _n_params(rnn) / 2


def test_summary_errors(modes) -> None:
    with pytest.raises(TypeError):
        paddle.summary(paddle.nn.GRU(input_size=2, hidden_size=3, num_layers=3), (1, 1, "2"))
    with pytest.raises(ValueError):
        paddle.summary(paddle.nn.GRU(input_size=2, hidden_size=3, num_layers=3), (-1, -1))
    paddle.summary(paddle.nn.GRU(input_size=2, hidden_size=3, num_layers=3), (1, 1, 2))


def test_export_deploy_model(modes, tmp_path) -> None:
    save_dir = str(tmp_path / "deploy")
    img = np.random.RandomState(201).random_sample((1, 1, 28, 28)).astype(np.float32)
    for dynamic in (True, False):
        _set_mode(dynamic)
        model = Model(LeNet(), [InputSpec([None, 1, 28, 28], "float32", "x")])
        model.prepare()
        model.save(save_dir, training=False)
        ori = model.predict_batch(img)
        paddle.enable_static()
        exe = paddle.static.Executor(paddle.CPUPlace())
        with paddle.static.scope_guard(paddle.static.Scope()):
            program, feeds, fetches = paddle.static.load_inference_model(save_dir, exe)
            res = exe.run(program, feed={feeds[0]: img}, fetch_list=fetches)
        np.testing.assert_allclose(res, ori, rtol=1e-5, atol=1e-6)
        paddle.disable_static()


@pytest.mark.parametrize("initial", ["fit", "train_batch", "eval_batch", "predict_batch"])
def test_dygraph_export_without_inputs(modes, tmp_path, initial: str) -> None:
    model = Model(LeNet())
    model.prepare(optimizer=paddle.optimizer.Adam(learning_rate=0.001, parameters=model.parameters()),
                  loss=CrossEntropyLoss(reduction="sum"))
    img = np.random.random((1, 1, 28, 28)).astype(np.float32)
    label = np.zeros((1, 1), np.int64)
    if initial == "fit":
        model.fit(FakeMnist(8), batch_size=4, verbose=0)
    elif initial == "train_batch":
        model.train_batch([img], [label])
    elif initial == "eval_batch":
        model.eval_batch([img], [label])
    else:
        model.predict_batch([img])
    model.save(str(tmp_path / "infer"), training=False)
    assert os.path.exists(str(tmp_path / "infer") + ".pdmodel") or os.path.exists(
        str(tmp_path / "infer") + ".json")


def test_accumulate(modes) -> None:
    data = np.random.random(size=(4, 20)).astype(np.float32)
    label = np.random.randint(0, 10, size=(4, 1)).astype(np.int64)
    net = MyModel()
    optim = paddle.optimizer.SGD(learning_rate=0.001, parameters=net.parameters())
    for amp in (None, "O1"):
        model = Model(net, _X, _Y)
        model.prepare(optim, loss=CrossEntropyLoss(reduction="sum"), amp_configs=amp)
        losses, grads = [], []
        for update in (False, False, True):
            (loss,) = model.train_batch([data], [label], update=update)
            losses.append(loss)
            grads.append([p.grad.numpy() for p in net.parameters()])
        for g1, g2, g3 in zip(*grads, strict=True):
            np.testing.assert_almost_equal(g1 * 2, g2, decimal=4)
            np.testing.assert_almost_equal(g3, np.zeros_like(g3), decimal=4)
        np.testing.assert_almost_equal(losses[0], losses[1], decimal=4)
        np.testing.assert_almost_equal(losses[0], losses[2], decimal=4)


def _warmup_momentum(parameters, warmup: int):
    base_lr, boundaries = 1e-3, [5, 8]
    lr = paddle.optimizer.lr.PiecewiseDecay(boundaries=boundaries,
                                            values=[base_lr * 0.1**i for i in range(len(boundaries) + 1)])
    lr = paddle.optimizer.lr.LinearWarmup(learning_rate=lr, warmup_steps=warmup, start_lr=base_lr / 5.0,
                                          end_lr=base_lr)
    return paddle.optimizer.Momentum(learning_rate=lr, weight_decay=5e-4, momentum=0.9, parameters=parameters)


@pytest.mark.parametrize("dynamic", [True, False])
@pytest.mark.parametrize("by_epoch", [False, True])
def test_fit_with_lr_scheduler(modes, dynamic: bool, by_epoch: bool) -> None:
    _set_mode(dynamic)
    net = MyModel()
    model = Model(net, _X, _Y)
    model.prepare(optimizer=_warmup_momentum(net.parameters(), 4), loss=CrossEntropyLoss(reduction="sum"))
    cbks = paddle.callbacks.LRScheduler(by_step=False, by_epoch=True) if by_epoch else None
    model.fit(MyDataset(), MyDataset(), batch_size=4, epochs=10, num_workers=0, verbose=0, callbacks=cbks)
    # by step: 100 steps pass both boundaries; by epoch: 10 epochs pass 5+4 but not 8+4.
    cnt = 1 if by_epoch else 2
    np.testing.assert_allclose(model._optimizer._learning_rate.last_lr, 1e-3 * 0.1**cnt)


def test_raise_errors(modes, tmp_path) -> None:
    with pytest.raises(ValueError):
        Model(MyModel(), [InputSpec([None, 10], "float32")], _Y)
    with pytest.raises(RuntimeError):
        Model(MyModel()).save(str(tmp_path / "infer"), training=False)
    paddle.enable_static()
    with pytest.raises(TypeError):
        Model(MyModel())
    model = Model(LeNet(), [InputSpec([None, 1, 28, 28], "float32", "x")])
    model.prepare()
    with pytest.raises(ValueError):
        model.save("", training=False)


@pytest.mark.parametrize("verbose", [0, 1, 2, 3])
def test_config_callbacks(modes, tmp_path, verbose: int) -> None:
    epochs, steps, eval_steps = 2, 5, 2
    lenet = Model(LeNet(), [InputSpec([None, 1, 28, 28], "float32", "image")])
    lenet.prepare()
    cbks = config_callbacks(model=lenet, batch_size=128, epochs=epochs, steps=steps, log_freq=2, verbose=verbose,
                            metrics=["loss", "acc"], save_dir=str(tmp_path))
    cbks.on_begin("train")
    logs = {"loss": 50.341673, "acc": 0.00256}
    for epoch in range(epochs):
        cbks.on_epoch_begin(epoch)
        for step in range(steps):
            cbks.on_batch_begin("train", step, logs)
            logs["loss"] -= random.random() * 0.1
            logs["acc"] += random.random() * 0.1
            cbks.on_batch_end("train", step, logs)
        cbks.on_epoch_end(epoch, logs)
        eval_logs = {"eval_loss": 20.341673, "eval_acc": 0.256}
        cbks.on_begin("eval", {"steps": eval_steps, "metrics": ["eval_loss", "eval_acc"]})
        for step in range(eval_steps):
            cbks.on_batch_begin("eval", step, eval_logs)
            eval_logs["eval_loss"] -= random.random() * 0.1
            eval_logs["eval_acc"] += random.random() * 0.1
            eval_logs["batch_size"] = 2
            cbks.on_batch_end("eval", step, eval_logs)
        cbks.on_end("eval", eval_logs)
        test_logs: dict = {}
        cbks.on_begin("predict", {"steps": eval_steps})
        for step in range(eval_steps):
            cbks.on_batch_begin("predict", step, test_logs)
            test_logs["batch_size"] = 2
            cbks.on_batch_end("predict", step, test_logs)
        cbks.on_end("predict", test_logs)
    cbks.on_end("train")
    # The ModelCheckpoint config_callbacks adds saved each epoch and the final model.
    assert os.path.exists(os.path.join(str(tmp_path), "final.pdparams"))


def test_early_stopping(modes, tmp_path) -> None:
    paddle.seed(2020)
    train, val = FakeMnist(32, 0), FakeMnist(32, 1)
    net = LeNet()
    model = Model(net, inputs=[InputSpec([None, 1, 28, 28], "float32", "x")],
                  labels=[InputSpec([None, 1], "int64", "label")])
    model.prepare(paddle.optimizer.Adam(learning_rate=0.001, parameters=net.parameters()),
                  loss=CrossEntropyLoss(reduction="sum"), metrics=[Accuracy()])
    es = paddle.callbacks.EarlyStopping
    cbks = [es("loss", mode="min", patience=1, verbose=1, min_delta=0, baseline=None, save_best_model=True),
            es("acc", mode="auto", patience=1, verbose=1, min_delta=0, baseline=0, save_best_model=True),
            es("loss", mode="auto_", patience=1, verbose=1, min_delta=0, baseline=None, save_best_model=True),
            es("acc_", mode="max", patience=1, verbose=1, min_delta=0, baseline=0, save_best_model=True)]
    model.fit(train, val, batch_size=16, save_freq=10, save_dir=str(tmp_path), epochs=4, verbose=0, callbacks=cbks)
    assert os.path.exists(os.path.join(str(tmp_path), "best_model.pdparams"))
    # No eval data: the monitored quantity never appears, training runs to the end.
    model.fit(train, batch_size=16, save_freq=10, save_dir=str(tmp_path), epochs=2, verbose=0, callbacks=cbks[:1])


def _amp_model(amp_config):
    net = LeNet()
    model = Model(net, InputSpec([None, 1, 28, 28], "float32", "x"), InputSpec([None, 1], "int64", "y"))
    optim = paddle.optimizer.Adam(learning_rate=0.001, parameters=model.parameters())
    model.prepare(optimizer=optim, loss=CrossEntropyLoss(reduction="sum"), amp_configs=amp_config)
    return model


@pytest.mark.parametrize("level", ["O0", "O1", "O2"])
@pytest.mark.parametrize("dynamic", [True, False])
def test_hapi_amp_fit(modes, level: str, dynamic: bool) -> None:
    config = {"level": level} if level == "O0" else {"level": level, "init_loss_scaling": 128}
    if not dynamic and level == "O2":
        config["use_fp16_guard"] = False
    paddle.seed(2021)
    _set_mode(dynamic)
    model = _amp_model(config)
    model.fit(FakeMnist(16), epochs=1, batch_size=8, num_iters=2, log_freq=1, verbose=0)
    if dynamic and level != "O0":
        assert model._scaler is not None and model._scaler.state_dict()["incr_count"] == 2


def test_hapi_amp_save_load(modes, tmp_path) -> None:
    config = {"level": "O1", "init_loss_scaling": 128}
    paddle.seed(2021)
    model = _amp_model(config)
    model.fit(FakeMnist(16), epochs=1, batch_size=8, num_iters=2, log_freq=1, verbose=0)
    path = str(tmp_path / "lenet_amp")
    model.save(path)
    paddle.seed(2021)
    new_model = _amp_model(config)
    new_model.fit(FakeMnist(16), epochs=1, batch_size=8, num_iters=1, log_freq=1, verbose=0)
    assert new_model._scaler.state_dict()["incr_count"] != model._scaler.state_dict()["incr_count"]
    new_model.load(path)
    for key in ("incr_count", "decr_count"):
        assert new_model._scaler.state_dict()[key] == model._scaler.state_dict()[key]
    old_state, new_state = model._optimizer.state_dict(), new_model._optimizer.state_dict()
    moments = [k for k in old_state if "moment1" in k]
    assert moments
    for old_key, new_key in zip(moments, [k for k in new_state if "moment1" in k], strict=True):
        np.testing.assert_array_equal(new_state[new_key].numpy(), old_state[old_key].numpy())


def test_hapi_amp_config_errors(modes) -> None:
    model = Model(LeNet())
    optim = paddle.optimizer.Adam(learning_rate=0.001, parameters=model.parameters())
    loss = CrossEntropyLoss(reduction="sum")
    for bad in ({"level": "O3"}, {"level": "O1", "test": 0}, {"level": "O1", "use_fp16_guard": True}, "O3"):
        with pytest.raises(ValueError):
            model.prepare(optimizer=optim, loss=loss, amp_configs=bad)
    model.prepare(optimizer=optim, loss=loss, amp_configs="O2")
    model.prepare(optimizer=optim, loss=loss, amp_configs={"custom_white_list": {"matmul"}, "init_loss_scaling": 1.0})
    paddle.enable_static()
    model = Model(LeNet(), InputSpec([None, 1, 28, 28], "float32", "x"), InputSpec([None, 1], "int64", "y"))
    optim = paddle.optimizer.Adam(learning_rate=0.001, parameters=model.parameters())
    with pytest.raises(ValueError):
        model.prepare(optimizer=optim, loss=loss, amp_configs={"level": "O2", "use_pure_fp16": True})


def _plateau_model():
    net = LeNet()
    model = Model(net, inputs=[InputSpec([None, 1, 28, 28], "float32", "x")],
                  labels=[InputSpec([None, 1], "int64", "label")])
    model.prepare(paddle.optimizer.Adam(learning_rate=0.001, parameters=net.parameters()), loss=CrossEntropyLoss(),
                  metrics=[Accuracy()])
    return model, net


def test_reduce_lr_on_plateau(modes) -> None:
    model, _ = _plateau_model()
    cbk = paddle.callbacks.ReduceLROnPlateau(patience=1, verbose=1, cooldown=1)
    model.fit(FakeMnist(8), FakeMnist(8, 1), batch_size=8, log_freq=1, save_freq=10, epochs=4, verbose=0,
              callbacks=[cbk])
    assert model._optimizer.get_lr() <= 0.001


def test_reduce_lr_on_plateau_warn_or_error(modes) -> None:
    with pytest.raises(ValueError):
        paddle.callbacks.ReduceLROnPlateau(factor=2.0)
    with pytest.warns(UserWarning):
        paddle.callbacks.ReduceLROnPlateau(mode="1", patience=3, verbose=1)
    model, net = _plateau_model()
    cbk = paddle.callbacks.ReduceLROnPlateau(monitor="miou", patience=3, verbose=1)
    with pytest.warns(UserWarning):
        model.fit(FakeMnist(8), FakeMnist(8, 1), batch_size=8, log_freq=1, save_freq=10, epochs=1, verbose=0,
                  callbacks=[cbk])
    optim = paddle.optimizer.Adam(learning_rate=paddle.optimizer.lr.PiecewiseDecay([0.001, 0.0001], [5, 10, 10]),
                                  parameters=net.parameters())
    model.prepare(optim, loss=CrossEntropyLoss(), metrics=[Accuracy()])
    cbk = paddle.callbacks.ReduceLROnPlateau(monitor="acc", mode="max", patience=3, verbose=1, cooldown=1)
    model.fit(FakeMnist(8), FakeMnist(8, 1), batch_size=8, log_freq=1, save_freq=10, epochs=3, verbose=0,
              callbacks=[cbk])
