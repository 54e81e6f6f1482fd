"""Cases run unchanged under real Paddle 3.3.1 and under pullback (`paddle` is the
module passed in).  `gen_hapi_conventions_reference.py` ran them once under Paddle
(`/work/venv-paddle/bin/python gen_hapi_conventions_reference.py`) and wrote
`data/hapi_conventions_reference.json`; `test_hapi_conventions_paddle.py` reruns them
with pullback and compares.  Each case returns a flat dict of JSON-able values
(numbers, nested lists, strings)."""

from __future__ import annotations

from typing import Any

import numpy as np


def _w(shape: tuple[int, ...], seed: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype("float32") * 0.5


def _dataset(paddle: Any, n: int = 10) -> Any:
    xs = _w((n, 4), 1)
    ys = (np.arange(n) % 3).astype("int64").reshape(n, 1)

    class Pairs(paddle.io.Dataset):
        def __getitem__(self, i: int) -> Any:
            return xs[i], ys[i]

        def __len__(self) -> int:
            return n

    return Pairs()


def _linear(paddle: Any) -> Any:
    net = paddle.nn.Linear(4, 3)
    net.weight.set_value(_w((4, 3), 2))
    net.bias.set_value(_w((3,), 3))
    return net


def _model(paddle: Any, lr: Any = 0.1) -> Any:
    net = _linear(paddle)
    model = paddle.Model(net)  # no inputs=/labels=: taken from forward's arguments
    opt = paddle.optimizer.SGD(learning_rate=lr, parameters=model.parameters())
    model.prepare(opt, paddle.nn.CrossEntropyLoss(), paddle.metric.Accuracy())
    return model, net, opt


def hapi_predict_evaluate(paddle: Any) -> dict[str, Any]:
    model, _, _ = _model(paddle)
    ds = _dataset(paddle)
    ev = model.evaluate(ds, batch_size=4, verbose=0)
    pred = model.predict(ds, batch_size=4, stack_outputs=True, verbose=0)
    pred_batches = model.predict(ds, batch_size=4, verbose=0)
    return {
        "eval_keys": sorted(ev),
        "eval_loss": np.asarray(ev["loss"], dtype="float64").ravel().tolist(),
        "eval_acc": float(ev["acc"]),
        "predict_stacked": np.asarray(pred[0]).tolist(),
        "predict_batches": [list(np.asarray(b).shape) for b in pred_batches[0]],
    }


def hapi_fit_lr_scheduler(paddle: Any) -> dict[str, Any]:
    sched = paddle.optimizer.lr.StepDecay(learning_rate=0.1, step_size=2, gamma=0.5)
    model, net, _ = _model(paddle, sched)
    ds = _dataset(paddle)
    model.fit(ds, batch_size=4, epochs=2, shuffle=False, verbose=0)
    ev = model.evaluate(ds, batch_size=5, verbose=0)
    return {
        "last_lr": float(sched.last_lr),
        "last_epoch": int(sched.last_epoch),
        "weight": net.weight.numpy().tolist(),
        "bias": net.bias.numpy().tolist(),
        "eval_loss": np.asarray(ev["loss"], dtype="float64").ravel().tolist(),
    }


def _state_layout(layer: Any) -> dict[str, Any]:
    return {
        "params": [[n, list(p.shape)] for n, p in layer.named_parameters()],
        "state": [[n, list(t.shape)] for n, t in layer.state_dict().items()],
    }


def spectral_norm_linear(paddle: Any) -> dict[str, Any]:
    layer = _linear(paddle)
    layer = paddle.nn.utils.spectral_norm(layer)
    out: dict[str, Any] = {"layout": _state_layout(layer)}
    layer.weight_u.set_value(_w(tuple(layer.weight_u.shape), 4))
    layer.weight_v.set_value(_w(tuple(layer.weight_v.shape), 5))
    opt = paddle.optimizer.SGD(learning_rate=0.05, parameters=layer.parameters())
    x = paddle.to_tensor(_w((6, 4), 6))
    losses = []
    for _ in range(4):
        loss = (layer(x) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    out["losses"] = losses
    out["weight_orig"] = layer.weight_orig.numpy().tolist()
    out["weight_u"] = layer.weight_u.numpy().tolist()
    out["weight_v"] = layer.weight_v.numpy().tolist()
    layer.eval()
    out["eval_out"] = layer(x).numpy().tolist()
    return out


def spectral_norm_conv(paddle: Any) -> dict[str, Any]:
    conv = paddle.nn.utils.spectral_norm(paddle.nn.Conv2D(2, 3, 3))
    convt = paddle.nn.utils.spectral_norm(paddle.nn.Conv2DTranspose(2, 3, 3))
    return {"conv": _state_layout(conv), "conv_transpose": _state_layout(convt)}


def weight_norm_layouts(paddle: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    x = paddle.to_tensor(_w((2, 4), 7))
    for dim in (0, 1, -1, None):
        layer = paddle.nn.utils.weight_norm(_linear(paddle), dim=dim)
        out[f"linear_dim{dim}"] = _state_layout(layer)
        out[f"linear_dim{dim}_g"] = np.asarray(layer.weight_g.numpy()).tolist()
        out[f"linear_dim{dim}_out"] = layer(x).numpy().tolist()
    conv = paddle.nn.Conv2D(2, 3, 3)
    conv.weight.set_value(_w((3, 2, 3, 3), 8))
    conv = paddle.nn.utils.weight_norm(conv, dim=1)
    out["conv_dim1"] = _state_layout(conv)
    out["conv_dim1_g"] = conv.weight_g.numpy().tolist()
    out["conv_dim1_w"] = conv.weight.numpy().tolist()
    return out


def layer_layouts(paddle: Any) -> dict[str, Any]:
    nn = paddle.nn
    layers = {
        "Linear": nn.Linear(4, 3),
        "Conv2D": nn.Conv2D(2, 3, 3),
        "Conv2DTranspose": nn.Conv2DTranspose(2, 3, 3),
        "Conv1D": nn.Conv1D(2, 3, 3),
        "BatchNorm2D": nn.BatchNorm2D(3),
        "BatchNorm1D": nn.BatchNorm1D(3),
        "LayerNorm": nn.LayerNorm(5),
        "GroupNorm": nn.GroupNorm(2, 4),
        "InstanceNorm2D": nn.InstanceNorm2D(3),
        "Embedding": nn.Embedding(7, 3),
        "PReLU": nn.PReLU(),
        "SimpleRNN": nn.SimpleRNN(3, 4),
        "GRU": nn.GRU(3, 4),
        "LSTM": nn.LSTM(3, 4, num_layers=2, direction="bidirect"),
        "MultiHeadAttention": nn.MultiHeadAttention(8, 2),
        "TransformerEncoderLayer": nn.TransformerEncoderLayer(8, 2, 16),
        "Bilinear": nn.Bilinear(3, 4, 5),
    }
    return {k: _state_layout(v) for k, v in layers.items()}


CASES = {
    "hapi_predict_evaluate": hapi_predict_evaluate,
    "hapi_fit_lr_scheduler": hapi_fit_lr_scheduler,
    "spectral_norm_linear": spectral_norm_linear,
    "spectral_norm_conv": spectral_norm_conv,
    "weight_norm_layouts": weight_norm_layouts,
    "layer_layouts": layer_layouts,
}
