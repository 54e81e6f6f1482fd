"""Check, with real PaddlePaddle, that Paddle reads the files pullback writes.

Three steps (run by hand; the results are in the report of issue 30):

    PYTHONPATH=<dir holding pullback> <pullback python> check_paddle_reads_pullback.py --write OUT
    <paddle python> check_paddle_reads_pullback.py --check OUT
    FLAGS_enable_pir_api=0 <paddle python> check_paddle_reads_pullback.py --check OUT

`--write` (pullback) saves, into OUT: a checkpoint of an MLP trained one Adam step
under a StepDecay scheduler (`paddle.save` of its state dicts, protocols 4 and 2,
and of a Tensor), the next training step's input and results; the same (Adam,
lr 0.01) for a `TransformerEncoderLayer` and a two-layer `LSTM` with a Linear head
(`make_fixtures.py`'s models), with their outputs before the step; inference
models (`jit.save` of a small CNN, of an MLP, of a layer of assorted ops, of the
encoder, of the LSTM and of a bidirectional GRU over sequences of given lengths; `static.save_inference_model` of a static fc program and
of the LSTM built in static mode) with inputs and pullback's outputs.  Each model
is also copied into `OUT/pir_only` (`.json` + `.pdiparams`) and `OUT/legacy_only`
(`.pdmodel` + `.pdiparams`), so each format is read for certain.

`--check` (Paddle) loads the checkpoints into the same models built with Paddle,
compares the outputs, resumes training one step and compares with pullback's
step; loads each inference model with `paddle.jit.load` and
`paddle.static.load_inference_model` and compares its outputs with pullback's:
the PIR `.json` in Paddle's default mode, the legacy `.pdmodel` with
`FLAGS_enable_pir_api=0`.  The model code below is the same for both (it takes
the `paddle` module as an argument): `import pullback as paddle` runs Paddle code.
"""

from __future__ import annotations

import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_fixtures import Encoder, Lstm, _loss  # noqa: E402  (the fixtures' models)


def mlp(paddle):
    return paddle.nn.Sequential(paddle.nn.Linear(3, 4), paddle.nn.ReLU(), paddle.nn.Linear(4, 2))


def cnn(paddle):
    nn = paddle.nn

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2D(1, 4, 3, padding=1)
            self.bn = nn.BatchNorm2D(4)
            self.fc = nn.Linear(4 * 4 * 4, 8)
            self.ln = nn.LayerNorm(8)
            self.drop = nn.Dropout(0.25)

        def forward(self, x):
            x = nn.functional.max_pool2d(nn.functional.relu(self.bn(self.conv(x))), 2)
            x = nn.functional.avg_pool2d(x, 1)
            h = self.drop(nn.functional.gelu(self.ln(self.fc(paddle.flatten(x, 1)))))
            t = paddle.transpose(paddle.reshape(h, [-1, 2, 4]), [0, 2, 1])
            c = paddle.concat([paddle.tanh(t), nn.functional.sigmoid(t) * 2.0 + 1.0], axis=-1).mean(axis=1)
            return nn.functional.softmax(c, -1), paddle.unsqueeze(c, 1).squeeze(1)[:, 1:3]

    return Net()


def ops_model(paddle):
    """Ops beyond the CNN's: split, gather, topk, where, expand, argmax,
    embedding, add_n, pow, strided_slice, conv2d_transpose, equal, cast."""
    nn = paddle.nn

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(10, 4)
            self.up = nn.Conv2DTranspose(2, 3, 3, stride=2, padding=1, output_padding=1)

        def forward(self, x, ids, img):
            a, b = paddle.split(x, 2, axis=1)
            g = paddle.gather(x, paddle.to_tensor(np.array([3, 0], dtype="int64")), axis=1)
            tv, ti = paddle.topk(x, 2)
            w = paddle.where(x > 0, x, paddle.concat([a, a], axis=1))
            e = paddle.expand(paddle.unsqueeze(a, 0), [3, -1, 2])
            am = paddle.argmax(x, axis=1)
            s = paddle.add_n([a, b, g]) + paddle.pow(a, 2.0)
            ss = paddle.strided_slice(x, [1], [0], [4], [2])
            eq = paddle.cast(paddle.equal(x, paddle.ones_like(x)), "float32")
            return [tv, ti, w, e, am, self.emb(ids), s, ss, self.up(img), eq]

    return Net()


def static_fc(paddle, x):
    h = paddle.static.nn.fc(x, 6, activation="relu")
    return paddle.nn.functional.softmax(paddle.static.nn.fc(h, 3))


def gru(paddle):
    """A bidirectional two-layer GRU over sequences of given lengths."""

    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.gru = paddle.nn.GRU(4, 3, num_layers=2, direction="bidirect")

        def forward(self, x, lens):
            y, h = self.gru(x, sequence_length=lens)
            return [y, h]

    return Net()


def lstm_static(paddle, x):
    net = Lstm.build(paddle)
    net.eval()
    return list(net(x))


MODEL_CKPTS = {"encoder": (Encoder.build, [2, 3, 8]), "lstm": (Lstm.build, [2, 3, 4])}
INFER_MODELS = ("cnn", "mlp_infer", "ops", "encoder_infer", "lstm_infer", "gru_infer")
STATIC_MODELS = ("static_fc", "lstm_static")


def model_step(paddle, name, x1, x2, out):
    """`make_fixtures`' checkpoint recipe in pullback: one Adam step on `x1`, saved,
    then the outputs for `x2`, the next step, its loss and parameters."""
    build, _shape = MODEL_CKPTS[name]
    with paddle.utils.unique_name.guard():
        paddle.seed(4)
        model = build(paddle)
        opt = paddle.optimizer.Adam(0.01, parameters=model.parameters())
        _loss(paddle, model(paddle.to_tensor(x1))).backward()
        opt.step()
        opt.clear_grad()
        paddle.save(model.state_dict(), f"{out}/{name}.pdparams")
        paddle.save(opt.state_dict(), f"{out}/{name}.pdopt")
        y = model(paddle.to_tensor(x2))
        ys = list(y) if isinstance(y, (list, tuple)) else [y]
        recorded = {f"out{i}": o.numpy().copy() for i, o in enumerate(ys)}
        loss = _loss(paddle, y)
        loss.backward()
        opt.step()
        opt.clear_grad()
        np.savez(f"{out}/{name}_expected.npz", x2=x2, loss2=float(loss), **recorded,
                 **{f"param/{k}": v.numpy() for k, v in model.state_dict().items()})


def train_step(paddle, model, opt, sched, x):
    loss = (model(paddle.to_tensor(x)) ** 2).mean()
    loss.backward()
    opt.step()
    opt.clear_grad()
    sched.step()
    return float(loss)


def write(out: str) -> None:
    import pullback as paddle

    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(5)
    paddle.seed(3)
    model = mlp(paddle)
    sched = paddle.optimizer.lr.StepDecay(0.05, step_size=1, gamma=0.5)
    opt = paddle.optimizer.Adam(sched, parameters=model.parameters())
    train_step(paddle, model, opt, sched, rng.standard_normal((5, 3)).astype("float32"))
    paddle.save(model.state_dict(), f"{out}/mlp.pdparams")
    paddle.save(opt.state_dict(), f"{out}/mlp.pdopt")
    paddle.save(model.state_dict(), f"{out}/mlp_p2.pdparams", protocol=2)
    paddle.save(opt.state_dict(), f"{out}/mlp_p2.pdopt", protocol=2)
    t = paddle.to_tensor(np.arange(6, dtype="float32").reshape(2, 3))
    paddle.save(t, f"{out}/tensor.pdtensor")
    x2 = rng.standard_normal((5, 3)).astype("float32")
    loss2 = train_step(paddle, model, opt, sched, x2)
    np.savez(f"{out}/expected.npz", x2=x2, loss2=loss2,
             **{f"param/{k}": v.numpy() for k, v in model.state_dict().items()})

    net = cnn(paddle)
    net(paddle.to_tensor(rng.standard_normal((4, 1, 8, 8)).astype("float32")))  # batch-norm statistics move
    net.eval()
    spec = [paddle.static.InputSpec([None, 1, 8, 8], "float32", "image")]
    paddle.jit.save(net, f"{out}/cnn", input_spec=spec)
    x = rng.standard_normal((3, 1, 8, 8)).astype("float32")
    outs = net(paddle.to_tensor(x))
    np.savez(f"{out}/cnn_io.npz", x=x, out0=outs[0].numpy(), out1=outs[1].numpy())
    net2 = mlp(paddle)
    paddle.jit.save(net2, f"{out}/mlp_infer", input_spec=[paddle.static.InputSpec([None, 3], "float32", "x")])
    x = rng.standard_normal((2, 3)).astype("float32")
    np.savez(f"{out}/mlp_infer_io.npz", x=x, out0=net2(paddle.to_tensor(x)).numpy())

    net3 = ops_model(paddle)
    spec = [paddle.static.InputSpec([None, 4], "float32", "x"), paddle.static.InputSpec([None, 2], "int64", "ids"),
            paddle.static.InputSpec([None, 2, 5, 5], "float32", "img")]
    paddle.jit.save(net3, f"{out}/ops", input_spec=spec)
    feed = {"x": rng.standard_normal((2, 4)).astype("float32"), "ids": np.array([[1, 9], [0, 4]], dtype="int64"),
            "img": rng.standard_normal((2, 2, 5, 5)).astype("float32")}
    feed["x"][0, 2] = 1.0
    outs = net3(*(paddle.to_tensor(v) for v in feed.values()))
    np.savez(f"{out}/ops_io.npz", **feed, **{f"out{i}": o.numpy() for i, o in enumerate(outs)})

    for name, (build, shape) in MODEL_CKPTS.items():
        model_step(paddle, name, rng.standard_normal(shape).astype("float32"),
                   rng.standard_normal(shape).astype("float32"), out)
        paddle.seed(6)
        net = Encoder.build(paddle, dropout=0.1) if name == "encoder" else build(paddle)
        net.eval()
        spec = [paddle.static.InputSpec([None, *shape[1:]], "float32", "x")]
        paddle.jit.save(net, f"{out}/{name}_infer", input_spec=spec)
        x = rng.standard_normal(shape).astype("float32")
        outs = net(paddle.to_tensor(x))
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        np.savez(f"{out}/{name}_infer_io.npz", x=x, **{f"out{i}": o.numpy() for i, o in enumerate(outs)})

    net = gru(paddle)
    net.eval()
    spec = [paddle.static.InputSpec([None, 5, 4], "float32", "x"), paddle.static.InputSpec([None], "int64", "lens")]
    paddle.jit.save(net, f"{out}/gru_infer", input_spec=spec)
    feed = {"x": rng.standard_normal((2, 5, 4)).astype("float32"), "lens": np.array([5, 3], dtype="int64")}
    outs = net(*(paddle.to_tensor(v) for v in feed.values()))
    np.savez(f"{out}/gru_infer_io.npz", **feed, **{f"out{i}": o.numpy() for i, o in enumerate(outs)})

    paddle.enable_static()
    for name, build, shape in (("static_fc", static_fc, [5]), ("lstm_static", lstm_static, [3, 4])):
        main, start = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, start):
            xs = paddle.static.data("img" if name == "static_fc" else "x", [None, *shape], "float32")
            ys = build(paddle, xs)
            ys = ys if isinstance(ys, list) else [ys]
            exe = paddle.static.Executor(paddle.CPUPlace())
            exe.run(start)
            paddle.static.save_inference_model(f"{out}/{name}", [xs], ys, exe)
            feed = rng.standard_normal((3, *shape)).astype("float32")
            got = exe.run(main, feed={xs.name: feed}, fetch_list=ys)
        np.savez(f"{out}/{name}_io.npz", x=feed, **{f"out{i}": g for i, g in enumerate(got)})
    paddle.disable_static()
    for kind, suffix in (("pir_only", ".json"), ("legacy_only", ".pdmodel")):
        os.makedirs(f"{out}/{kind}", exist_ok=True)
        for name in INFER_MODELS + STATIC_MODELS:
            if os.path.exists(f"{out}/{name}{suffix}"):  # (pullback warns when it writes no .json)
                for ext in (suffix, ".pdiparams"):
                    shutil.copy(f"{out}/{name}{ext}", f"{out}/{kind}/{name}{ext}")
    print("written:", sorted(os.listdir(out)))


def check(out: str) -> None:
    import paddle

    failures = []

    def close(what, got, want, tol=1e-5):
        err = float(np.max(np.abs(np.asarray(got) - np.asarray(want)))) if np.size(want) else 0.0
        ok = np.allclose(got, want, rtol=tol, atol=tol)
        print(f"{'ok  ' if ok else 'FAIL'} {what}: max abs diff {err:.3g}")
        if not ok:
            failures.append(what)

    expected = np.load(f"{out}/expected.npz")
    for stem in ("mlp", "mlp_p2"):
        with paddle.utils.unique_name.guard():  # names as in a fresh process
            model = mlp(paddle)
            sched = paddle.optimizer.lr.StepDecay(0.05, step_size=1, gamma=0.5)
            opt = paddle.optimizer.Adam(sched, parameters=model.parameters())
            model.set_state_dict(paddle.load(f"{out}/{stem}.pdparams"))
            opt.set_state_dict(paddle.load(f"{out}/{stem}.pdopt"))
            loss2 = train_step(paddle, model, opt, sched, expected["x2"])
        close(f"{stem}: resumed loss", loss2, expected["loss2"])
        for k, v in model.state_dict().items():
            close(f"{stem}: {k} after the resumed step", v.numpy(), expected[f"param/{k}"])
    t = paddle.load(f"{out}/tensor.pdtensor")
    close("tensor.pdtensor", t.numpy(), np.arange(6, dtype="float32").reshape(2, 3), 0)

    for name, (build, _shape) in MODEL_CKPTS.items():
        expected = np.load(f"{out}/{name}_expected.npz")
        with paddle.utils.unique_name.guard():
            model = build(paddle)
            opt = paddle.optimizer.Adam(0.01, parameters=model.parameters())
            params = paddle.load(f"{out}/{name}.pdparams")
            missing, unexpected = model.set_state_dict(params)
            if missing or unexpected:
                failures.append(f"{name}: keys missing {missing}, unexpected {unexpected}")
            opt.set_state_dict(paddle.load(f"{out}/{name}.pdopt"))
            y = model(paddle.to_tensor(expected["x2"]))
            ys = list(y) if isinstance(y, (list, tuple)) else [y]
            for i, o in enumerate(ys):
                close(f"{name}: output {i} of the loaded checkpoint", o.numpy(), expected[f"out{i}"])
            loss = _loss(paddle, y)
            loss.backward()
            opt.step()
            opt.clear_grad()
        close(f"{name}: resumed loss", float(loss), expected["loss2"])
        # (attention's key bias has a zero gradient but for rounding, which Adam scales
        # to any step under its learning rate: only that bound is checked.)
        noise = model.self_attn.k_proj.bias.name if name == "encoder" else None
        worst, worst_key = 0.0, ""
        for k, v in model.state_dict().items():
            if v.name == noise:
                if np.abs(v.numpy() - params[k].numpy()).max() > 0.02 + 1e-6:
                    failures.append(f"{name}: {k} moved more than 2 lr")
                continue
            err = float(np.max(np.abs(v.numpy() - expected[f"param/{k}"])))
            if err > worst:
                worst, worst_key = err, k
            if not np.allclose(v.numpy(), expected[f"param/{k}"], rtol=1e-4, atol=1e-5):
                failures.append(f"{name}: {k} after the resumed step")
        print(f"     {name}: {len(model.state_dict())} parameters after the resumed step, max abs diff "
              f"{worst:.3g} ({worst_key})")

    def inputs(io):
        return [io[k] for k in ("x", "ids", "img", "lens") if k in io.files]

    legacy = os.environ.get("FLAGS_enable_pir_api", "").lower() in ("0", "false")
    where = f"{out}/{'legacy_only' if legacy else 'pir_only'}"
    fmt = "legacy .pdmodel" if legacy else "PIR .json"
    present = [n for n in INFER_MODELS + STATIC_MODELS
               if os.path.exists(f"{where}/{n}{'.pdmodel' if legacy else '.json'}")]
    for name in sorted(set(INFER_MODELS + STATIC_MODELS) - set(present)):
        failures.append(f"{name}: no {fmt} written")
    for name in [n for n in INFER_MODELS if n in present]:
        io = np.load(f"{out}/{name}_io.npz")
        layer = paddle.jit.load(f"{where}/{name}")
        outs = layer(*(paddle.to_tensor(v) for v in inputs(io)))
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        for i, o in enumerate(outs):
            close(f"paddle.jit.load {name} ({fmt}) output {i}", o.numpy(), io[f"out{i}"])
    paddle.enable_static()
    for name in present:
        io = np.load(f"{out}/{name}_io.npz")
        exe = paddle.static.Executor(paddle.CPUPlace())
        prog, feeds, fetches = paddle.static.load_inference_model(f"{where}/{name}", exe)
        got = exe.run(prog, feed=dict(zip(feeds, inputs(io))), fetch_list=fetches)
        for i, g in enumerate(got):
            close(f"paddle.static.load_inference_model {name} ({fmt}) output {i}", g, io[f"out{i}"])
    paddle.disable_static()
    print("FAILED: " + ", ".join(failures) if failures else "all checks passed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("--write", "--check"):
        sys.exit(__doc__)
    (write if sys.argv[1] == "--write" else check)(sys.argv[2])
