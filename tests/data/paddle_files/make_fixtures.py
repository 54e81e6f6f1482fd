"""Make the Paddle-written fixtures of `tests/unit/frontend/test_paddle_files*.py`.

Run ONCE with real PaddlePaddle (3.3.1 made the committed files), from anywhere:

    /path/to/paddle-venv/bin/python tests/data/paddle_files/make_fixtures.py

It rewrites the files next to it:

* `checkpoint/`: an MLP trained one Adam step under a StepDecay scheduler, saved
  with `paddle.save` (`mlp.pdparams`, `mlp.pdopt`, protocol 4; `mlp_p2.*`,
  protocol 2), a single Tensor (`tensor.pdtensor`), a nested structure
  (`nested.pdobj`), a static-mode DenseTensor (`dense.pdtensor`, pickled by Paddle
  through `eval`), and `expected.npz`: the next step's input and what Paddle's
  parameters, optimizer state and loss are after it.
  `encoder.*` and `lstm.*`: the same for a `TransformerEncoderLayer` (d_model 8,
  2 heads, feed-forward 16, dropout 0) and a two-layer `LSTM` (4 -> 5) with a
  `Linear` head, trained one Adam step (lr 0.01) from a fresh name scope, with
  `<name>_expected.npz`: the next step's input, Paddle's outputs for it before
  the step, and its loss, parameters and optimizer state after it.
* `infer/`: inference models, each as Paddle 3.3.1 writes it by default (PIR
  `<name>.json` + `<name>.pdiparams`) and as the legacy `ProgramDesc`
  (`<name>_legacy.pdmodel` + `.pdiparams`, written in a child process with
  `FLAGS_enable_pir_api=0`), plus `<name>_io.npz`: an input and Paddle's outputs.
  `encoder` and `lstm` are the models above (the encoder with dropout 0.1, in
  eval mode); Paddle 3.3.1's legacy `jit.save` cannot trace either, so their
  legacy forms are the same layers called in legacy static mode and written by
  `save_inference_model` (`paddle.matmul` there is PIR-only in 3.3.1, so the
  encoder's matmuls are appended as Paddle's `matmul_v2` operator by hand).

Models are tiny on purpose (the whole folder stays well under 1 MB).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
CKPT = os.path.join(HERE, "checkpoint")
INFER = os.path.join(HERE, "infer")


def _paddle():
    import paddle

    return paddle


def mlp(paddle):
    return paddle.nn.Sequential(paddle.nn.Linear(3, 4), paddle.nn.ReLU(), paddle.nn.Linear(4, 2))


def make_checkpoint() -> None:
    paddle = _paddle()
    paddle.disable_static()
    os.makedirs(CKPT, exist_ok=True)
    paddle.seed(2024)
    rng = np.random.default_rng(0)
    model = mlp(paddle)
    sched = paddle.optimizer.lr.StepDecay(0.05, step_size=1, gamma=0.5)
    opt = paddle.optimizer.Adam(sched, parameters=model.parameters())
    x1 = rng.standard_normal((5, 3)).astype("float32")
    loss = (model(paddle.to_tensor(x1)) ** 2).mean()
    loss.backward()
    opt.step()
    opt.clear_grad()
    sched.step()
    paddle.save(model.state_dict(), os.path.join(CKPT, "mlp.pdparams"))
    paddle.save(opt.state_dict(), os.path.join(CKPT, "mlp.pdopt"))
    paddle.save(model.state_dict(), os.path.join(CKPT, "mlp_p2.pdparams"), protocol=2)
    paddle.save(opt.state_dict(), os.path.join(CKPT, "mlp_p2.pdopt"), protocol=2)
    t = paddle.to_tensor(np.arange(6, dtype="float32").reshape(2, 3))
    t.name = "saved_tensor"
    paddle.save(t, os.path.join(CKPT, "tensor.pdtensor"))
    paddle.save({"model": model.state_dict(), "epoch": 3, "tags": ["a", "b"], "pair": (t, 1.5)},
                os.path.join(CKPT, "nested.pdobj"))
    before = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    # The step a resumed run takes next.
    x2 = rng.standard_normal((5, 3)).astype("float32")
    loss2 = (model(paddle.to_tensor(x2)) ** 2).mean()
    loss2.backward()
    opt.step()
    opt.clear_grad()
    sched.step()
    after = {f"param/{k}": v.numpy() for k, v in model.state_dict().items()}
    opt_after = {f"opt/{k}": v.numpy() for k, v in opt.state_dict().items()
                 if hasattr(v, "numpy")}
    np.savez(os.path.join(CKPT, "expected.npz"), x2=x2, loss2=np.float32(loss2.numpy()),
             lr_after=np.float64(sched.get_lr()), **after, **opt_after,
             **{f"before/{k}": v for k, v in before.items()})

    # A DenseTensor (what static mode's scope holds), which Paddle pickles as
    # `eval('data', {'data': array})`.
    arr = np.linspace(-1, 1, 6).astype("float32").reshape(3, 2)
    dense = paddle.base.core.DenseTensor()
    dense.set(arr, paddle.CPUPlace())
    paddle.save(dense, os.path.join(CKPT, "dense.pdtensor"))
    np.save(os.path.join(CKPT, "dense.npy"), arr)


class Encoder:
    """`paddle.nn.TransformerEncoderLayer(8, 2, 16)` (post-norm, relu)."""

    @staticmethod
    def build(paddle, dropout=0.0):
        return paddle.nn.TransformerEncoderLayer(8, 2, 16, dropout=dropout)


class Lstm:
    """A two-layer `paddle.nn.LSTM(4, 5)` and a `Linear(5, 3)` head: the head's
    outputs at every step and the final hidden states."""

    @staticmethod
    def build(paddle):
        nn = paddle.nn

        class Net(nn.Layer):
            def __init__(self):
                super().__init__()
                self.lstm = nn.LSTM(4, 5, num_layers=2)
                self.head = nn.Linear(5, 3)

            def forward(self, x):
                y, (h, _c) = self.lstm(x)
                return self.head(y), h

        return Net()


def _loss(paddle, out):
    """A loss with real gradients everywhere (a LayerNorm output's mean square
    alone would be ~1 whatever came before): each output against a fixed ramp."""
    total = None
    for o in out if isinstance(out, (list, tuple)) else [out]:
        ramp = np.linspace(-1.0, 1.0, int(np.prod(o.shape))).astype("float32").reshape(o.shape)
        term = ((o - paddle.to_tensor(ramp)) ** 2).mean()
        total = term if total is None else total + term
    return total


def make_model_checkpoints() -> None:
    """`encoder` and `lstm`: one Adam step, saved, then the step a resumed run takes."""
    paddle = _paddle()
    paddle.disable_static()
    for name, build, shape in (("encoder", Encoder.build, [2, 3, 8]), ("lstm", Lstm.build, [2, 3, 4])):
        with paddle.utils.unique_name.guard():  # parameter and accumulator names as in a fresh process
            _train_and_save(paddle, name, build, shape)


def _train_and_save(paddle, name, build, shape) -> None:
    paddle.seed(2025)
    model = build(paddle)
    opt = paddle.optimizer.Adam(0.01, parameters=model.parameters())
    rng = np.random.default_rng(8)
    _loss(paddle, model(paddle.to_tensor(rng.standard_normal(shape).astype("float32")))).backward()
    opt.step()
    opt.clear_grad()
    paddle.save(model.state_dict(), os.path.join(CKPT, f"{name}.pdparams"))
    paddle.save(opt.state_dict(), os.path.join(CKPT, f"{name}.pdopt"))
    x2 = rng.standard_normal(shape).astype("float32")
    out = model(paddle.to_tensor(x2))
    outs = out if isinstance(out, (list, tuple)) else [out]
    recorded = {f"out{i}": o.numpy().copy() for i, o in enumerate(outs)}
    loss2 = _loss(paddle, out)
    loss2.backward()
    opt.step()
    opt.clear_grad()
    np.savez_compressed(os.path.join(CKPT, f"{name}_expected.npz"), x2=x2, loss2=np.float32(loss2.numpy()),
                        **recorded, **{f"param/{k}": v.numpy() for k, v in model.state_dict().items()},
                        **{f"opt/{k}": v.numpy() for k, v in opt.state_dict().items() if hasattr(v, "numpy")})


class LeNet:
    """conv-bn-relu-maxpool, conv-bn-relu-avgpool, flatten, fc-relu-fc, softmax."""

    @staticmethod
    def build(paddle):
        nn = paddle.nn

        class Net(nn.Layer):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2D(1, 4, 3)
                self.bn1 = nn.BatchNorm2D(4)
                self.conv2 = nn.Conv2D(4, 8, 3, padding=1, stride=2)
                self.bn2 = nn.BatchNorm2D(8)
                self.fc1 = nn.Linear(8 * 2 * 2, 16)
                self.fc2 = nn.Linear(16, 10)

            def forward(self, x):
                x = nn.functional.max_pool2d(nn.functional.relu(self.bn1(self.conv1(x))), 2)
                x = nn.functional.avg_pool2d(nn.functional.relu(self.bn2(self.conv2(x))), 2)
                x = paddle.flatten(x, 1)
                x = nn.functional.relu(self.fc1(x))
                return nn.functional.softmax(self.fc2(x), axis=-1)

        return Net()


class Mixed:
    """A grab bag of common inference ops (layer_norm, gelu, transpose, reshape,
    concat, scale, mean, dropout in eval mode, tanh, sigmoid, slice)."""

    @staticmethod
    def build(paddle):
        nn = paddle.nn

        class Net(nn.Layer):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(6, 8)
                self.ln = nn.LayerNorm(8)
                self.drop = nn.Dropout(0.3)

            def forward(self, x):
                h = self.drop(nn.functional.gelu(self.ln(self.fc(x))))
                t = paddle.transpose(paddle.reshape(h, [-1, 2, 4]), [0, 2, 1])
                c = paddle.concat([paddle.tanh(t), nn.functional.sigmoid(t) * 2.0 + 1.0], axis=-1)
                m = paddle.mean(c, axis=1)
                return m[:, 1:3], paddle.exp(-h).sum(axis=-1, keepdim=True)

        return Net()


class Unsupported:
    """Ops pullback does not have (i0, polygamma, renorm: the loader must name them
    all at once) next to one it has (erfinv)."""

    @staticmethod
    def build(paddle):
        nn = paddle.nn

        class Net(nn.Layer):
            def forward(self, x):
                y = paddle.erfinv(paddle.clip(x, -0.5, 0.5))
                return paddle.i0(y) + paddle.polygamma(x * x + 1.0, 1) + paddle.renorm(x, 2.0, 0, 1.0)

        return Net()


MODELS = {
    "mlp": (lambda p: mlp(p), [3], 4),
    "lenet": (LeNet.build, [1, 18, 18], 2),
    "mixed": (Mixed.build, [6], 3),
    "unsupported": (Unsupported.build, [4], 2),
    "encoder": (lambda p: Encoder.build(p, dropout=0.1), [3, 8], 2),
    "lstm": (Lstm.build, [3, 4], 2),
}


def make_inference(legacy: bool) -> None:
    paddle = _paddle()
    paddle.disable_static()
    os.makedirs(INFER, exist_ok=True)
    for name, (build, shape, batch) in MODELS.items():
        paddle.seed(7)
        net = build(paddle)
        # Non-trivial batch-norm statistics, as after training.
        for layer in net.sublayers():
            if isinstance(layer, paddle.nn.BatchNorm2D):
                n = layer._mean.shape[0]
                layer._mean.set_value(np.linspace(-0.2, 0.3, n).astype("float32"))
                layer._variance.set_value(np.linspace(0.5, 1.5, n).astype("float32"))
                layer.weight.set_value(np.linspace(0.8, 1.2, n).astype("float32"))
                layer.bias.set_value(np.linspace(-0.1, 0.1, n).astype("float32"))
        net.eval()
        stem = os.path.join(INFER, name + ("_legacy" if legacy else ""))
        spec = [paddle.static.InputSpec([None, *shape], "float32", "x")]
        try:
            paddle.jit.save(net, stem, input_spec=spec)
        except Exception as e:  # noqa: BLE001 - Paddle's legacy exporter lacks some ops
            if not legacy:
                raise
            print(f"legacy {name}: not written ({type(e).__name__})")
            continue
        info = stem + ".pdiparams.info"
        if os.path.exists(info):
            os.remove(info)  # jit.save's pickled extra info: not part of the fixtures
        if legacy:
            continue
        x = np.random.default_rng(1).standard_normal((batch, *shape)).astype("float32")
        out = net(paddle.to_tensor(x))
        outs = out if isinstance(out, (list, tuple)) else [out]
        np.savez(os.path.join(INFER, name + "_io.npz"), x=x,
                 **{f"out{i}": o.numpy() for i, o in enumerate(outs)})


def _legacy_matmul(paddle):
    """Paddle 3.3.1's `paddle.matmul` calls `_C_ops.matmul`, which takes PIR values
    only: in legacy static mode, append its `matmul_v2` operator as the 2.x
    builder did."""
    from paddle.base.layer_helper import LayerHelper

    def matmul(x, y, transpose_x=False, transpose_y=False, name=None):
        helper = LayerHelper("matmul_v2")
        out = helper.create_variable_for_type_inference(dtype=x.dtype)
        helper.append_op(type="matmul_v2", inputs={"X": x, "Y": y}, outputs={"Out": out},
                         attrs={"trans_x": transpose_x, "trans_y": transpose_y})
        return out

    import paddle.nn.layer.transformer as transformer

    paddle.matmul = paddle.tensor.matmul = matmul
    transformer.tensor = paddle.tensor


def _static_models(paddle):
    """Programs built op by op in static mode: `static_fc` (fc + softmax, as
    `save_inference_model` users write), and, in legacy mode, `mixed`,
    `unsupported`, `encoder` and `lstm` (Paddle 3.3.1's legacy `jit.save` cannot
    trace them)."""
    F = paddle.nn.functional

    def static_fc(x):
        h = paddle.static.nn.fc(x, 6, activation="relu")
        return [F.softmax(paddle.static.nn.fc(h, 3))]

    def mixed(x):
        h = paddle.static.nn.fc(x, 8)
        h = F.layer_norm(h, [8])
        # (Paddle 3.3.1's legacy static mode has no gelu, exp, tanh, sigmoid, abs or sum builders.)
        h = F.dropout(F.silu(h), 0.3, training=False)
        t = paddle.transpose(paddle.reshape(h, [-1, 2, 4]), [0, 2, 1])
        c = paddle.concat([F.hardtanh(t), F.hardsigmoid(t) * 2.0 + 1.0], axis=-1)
        m = paddle.mean(c, axis=1)
        return [m[:, 1:3], paddle.mean(h * h, axis=-1, keepdim=True)]

    def unsupported(x):
        y = paddle.erfinv(paddle.clip(x, -0.5, 0.5))
        return [paddle.i0(y) + paddle.polygamma(x * x + 1.0, 1) + paddle.renorm(x, 2.0, 0, 1.0)]

    def encoder(x):
        _legacy_matmul(paddle)
        layer = Encoder.build(paddle, dropout=0.1)
        layer.eval()
        return [layer(x)]

    def lstm(x):
        net = Lstm.build(paddle)
        net.eval()
        return list(net(x))

    return {"static_fc": (static_fc, [5], 3), "mixed": (mixed, [6], 3), "unsupported": (unsupported, [4], 2),
            "encoder": (encoder, [3, 8], 2), "lstm": (lstm, [3, 4], 2)}


def make_static_inference(legacy: bool) -> None:
    """`paddle.static.save_inference_model` of programs built in static mode."""
    paddle = _paddle()
    paddle.enable_static()
    for name, (build, shape, batch) in _static_models(paddle).items():
        if not legacy and name != "static_fc":
            continue
        main, start = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, start):
            x = paddle.static.data("img" if len(shape) == 1 else "x", [None, *shape], "float32")
            outs = build(x)
            exe = paddle.static.Executor(paddle.CPUPlace())
            paddle.seed(11)
            exe.run(start)
            suffix = "_legacy" if legacy else ""
            stem = os.path.join(INFER, name + suffix)
            paddle.static.save_inference_model(stem, [x], outs, exe)
            feed = np.random.default_rng(2).standard_normal((batch, *shape)).astype("float32")
            got = exe.run(main, feed={x.name: feed}, fetch_list=outs)
            np.savez(os.path.join(INFER, f"{name}{suffix}_io.npz"), x=feed,
                     **{f"out{i}": o for i, o in enumerate(got)})
    paddle.disable_static()


def make_pir_ops() -> None:
    """`pir_ops`: a static program of ops the models above lack (split, gather,
    topk, where, tile, expand, argmax, embedding, full, add_n, pow, strided_slice,
    conv2d_transpose, equal, cast, a constant array), saved as Paddle 3.3.1's PIR
    json only (its legacy static mode has no builders for several of them)."""
    paddle = _paddle()
    paddle.enable_static()
    main, start = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, start):
        x = paddle.static.data("x", [None, 4], "float32")
        ids = paddle.static.data("ids", [None, 2], "int64")
        img = paddle.static.data("img", [None, 2, 5, 5], "float32")
        a, b = paddle.split(x, 2, axis=1)
        _, c1, c2 = paddle.split(x, [1, 1, 2], axis=1)
        g = paddle.gather(x, paddle.to_tensor(np.array([3, 0], dtype="int64")), axis=1)
        tv, ti = paddle.topk(x, 2)
        w = paddle.where(x > 0, x, paddle.tile(a, [1, 2]))
        e = paddle.expand(paddle.unsqueeze(a, 0), [3, -1, 2])
        am = paddle.argmax(x, axis=1)
        emb = paddle.nn.functional.embedding(ids, paddle.static.create_parameter([10, 3], "float32"))
        s = paddle.add_n([a, b, c2]) + paddle.full([1, 2], 1.5, "float32")
        p = paddle.pow(x, 3.0)
        ss = paddle.strided_slice(x, [1], [0], [4], [2])
        ct = paddle.nn.functional.conv2d_transpose(
            img, paddle.static.create_parameter([2, 3, 3, 3], "float32"), stride=2, padding=1, output_padding=1)
        eq = paddle.cast(paddle.equal(x, paddle.assign(np.array([[1.0, 0.0, 1.0, 0.0]], dtype="float32"))), "float32")
        outs = [c1, g, tv, ti, w, e, am, emb, s, p, ss, ct, eq]
        exe = paddle.static.Executor(paddle.CPUPlace())
        paddle.seed(5)
        exe.run(start)
        paddle.static.save_inference_model(os.path.join(INFER, "pir_ops"), [x, ids, img], outs, exe)
        rng = np.random.default_rng(4)
        feed = {"x": rng.standard_normal((2, 4)).astype("float32"),
                "ids": np.array([[1, 9], [0, 4]], dtype="int64"),
                "img": rng.standard_normal((2, 2, 5, 5)).astype("float32")}
        feed["x"][0, 2] = 1.0
        got = exe.run(main, feed=feed, fetch_list=outs)
        np.savez(os.path.join(INFER, "pir_ops_io.npz"), **feed, **{f"out{i}": o for i, o in enumerate(got)})
    paddle.disable_static()


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--legacy":
        make_inference(legacy=True)
        make_static_inference(legacy=True)
        return
    for d in (CKPT, INFER):
        shutil.rmtree(d, ignore_errors=True)
    make_checkpoint()
    make_model_checkpoints()
    make_inference(legacy=False)
    make_static_inference(legacy=False)
    make_pir_ops()
    env = dict(os.environ, FLAGS_enable_pir_api="0")
    subprocess.run([sys.executable, os.path.abspath(__file__), "--legacy"], check=True, env=env)
    total = sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(HERE) for f in fs)
    print(f"fixtures: {total} bytes")


if __name__ == "__main__":
    main()
