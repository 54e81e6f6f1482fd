"""Paddle's inference models, read into `pd` IR and run.

The fixtures under `tests/data/paddle_files/infer` were written by real
PaddlePaddle 3.3.1 (`tests/data/paddle_files/make_fixtures.py`), each model in the
format Paddle 3.3.1 writes by default (PIR `<name>.json`) and in the legacy
`ProgramDesc` (`<name>_legacy.pdmodel`), with the binary `.pdiparams`, plus an
input and Paddle's outputs for it (`<name>[_legacy]_io.npz`):

* `mlp` (jit.save of Linear-ReLU-Linear), `lenet` (conv, batch_norm, relu, max
  and avg pool, flatten, linear, softmax), `mixed` (layer_norm, gelu/silu,
  dropout, reshape, transpose, concat, scale, mean, slice, ...), `static_fc`
  (`save_inference_model` of a static fc program);
* `encoder` (`nn.TransformerEncoderLayer(8, 2, 16)`, dropout 0.1 in eval mode) and
  `lstm` (two-layer `nn.LSTM(4, 5)`, Paddle's fused `rnn` op, with a Linear head),
  also as checkpoints (`checkpoint/{encoder,lstm}.pdparams/.pdopt`, one Adam step,
  and `<name>_expected.npz`: Paddle's outputs, loss, parameters and optimizer state
  around the next step);
* `unsupported`: ops pullback does not have (i0, polygamma, renorm).

The model code is `make_fixtures.py`'s own (it takes the `paddle` module).
"""

from __future__ import annotations

import importlib.util
import json
import pickle
import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pullback as paddle
from pullback.dialects import pd
from pullback.frontend import core
from pullback.frontend.formats.importer import UnsupportedOpsError, legacy_ops, pir_ops
from pullback.runtime.scope import Scope, scope_guard

DATA = Path(__file__).resolve().parents[2] / "data" / "paddle_files"
INFER = DATA / "infer"
CKPT = DATA / "checkpoint"

MODELS = ["mlp", "mlp_legacy", "lenet", "lenet_legacy", "mixed", "mixed_legacy", "static_fc", "static_fc_legacy",
          "encoder", "encoder_legacy", "lstm", "lstm_legacy"]


def _fixture_models() -> Any:
    """`make_fixtures.py` as a module: the models Paddle saved, as code for either
    `paddle` (`Encoder.build`, `Lstm.build`, `_loss`)."""
    spec = importlib.util.spec_from_file_location("paddle_make_fixtures", DATA / "make_fixtures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


FIX = _fixture_models()
BUILD = {"encoder": FIX.Encoder.build, "lstm": FIX.Lstm.build}


def _io(name: str) -> np.lib.npyio.NpzFile:
    own = INFER / f"{name}_io.npz"
    return np.load(own if own.exists() else INFER / f"{name.removesuffix('_legacy')}_io.npz")


def _outputs(io: np.lib.npyio.NpzFile) -> list[np.ndarray]:
    return [io[f"out{i}"] for i in range(len([k for k in io.files if k.startswith("out")]))]


@pytest.mark.parametrize("name", MODELS)
def test_jit_load_runs_paddle_models_like_paddle(dynamic_mode, name):
    io = _io(name)
    layer = paddle.jit.load(str(INFER / name))
    out = layer(paddle.to_tensor(io["x"]))
    outs = out if isinstance(out, list) else [out]
    expected = _outputs(io)
    assert len(outs) == len(expected)
    for got, want in zip(outs, expected):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=2e-6)


@pytest.mark.parametrize("name", ["lenet", "static_fc_legacy", "encoder_legacy", "lstm"])
def test_load_inference_model_runs_paddle_models(name):
    io = _io(name)
    core.enable_static()
    try:
        with scope_guard(Scope()):
            exe = paddle.static.Executor(paddle.CPUPlace())
            program, feeds, fetches = paddle.static.load_inference_model(str(INFER / name), exe)
            assert feeds == (["img"] if name.startswith("static_fc") else ["x"])
            got = exe.run(program, feed={feeds[0]: io["x"]}, fetch_list=fetches)
    finally:
        core.disable_static()
    for g, want in zip(got, _outputs(io)):
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=2e-6)


def test_imported_program_keeps_paddles_names_and_parameters(dynamic_mode):
    core.enable_static()
    try:
        with scope_guard(Scope()) :
            exe = paddle.static.Executor(paddle.CPUPlace())
            program, feeds, fetches = paddle.static.load_inference_model(str(INFER / "lenet_legacy"), exe)
            scope = paddle.static.global_scope()
            params = {op.var_name.data: op for op in program.module.walk() if isinstance(op, pd.ParameterOp)}
            assert "conv2d_0.w_0" in params and scope["conv2d_0.w_0"].shape == (4, 1, 3, 3)
            # Batch-norm statistics are written by Paddle's op: not trainable.
            assert not params["batch_norm2d_0.w_1"].trainable.value.data
            assert params["conv2d_0.w_0"].trainable.value.data
            assert [v.name for v in fetches] == ["softmax_0.tmp_0"]
            assert program.global_block().var("relu_0.tmp_0").shape == [-1, 4, 16, 16]
            # Inference behaviour: batch_norm in test mode.
            bns = [op for op in program.module.walk() if isinstance(op, pd.BatchNormOp)]
            assert bns and all(op.prop("is_test") for op in bns)
    finally:
        core.disable_static()


def test_both_formats_give_the_same_program_shape(dynamic_mode):
    legacy = paddle.jit.load(str(INFER / "lenet_legacy"))
    pir = paddle.jit.load(str(INFER / "lenet"))
    names = lambda layer: sorted(op.name for op in layer.program().module.walk())  # noqa: E731
    assert names(legacy) == names(pir)


def test_paddle_load_of_a_model_prefix_gives_its_state_dict(dynamic_mode):
    state = paddle.load(str(INFER / "mlp"))
    assert sorted(state) == ["linear_2.b_0", "linear_2.w_0", "linear_3.b_0", "linear_3.w_0"]
    assert state["linear_2.w_0"].shape == [3, 4]
    assert isinstance(paddle.load(str(INFER / "mlp_legacy"), return_numpy=True)["linear_0.b_0"], np.ndarray)


def test_loaded_paddle_model_fine_tunes(dynamic_mode):
    layer = paddle.jit.load(str(INFER / "mlp_legacy"))
    x = paddle.to_tensor(_io("mlp_legacy")["x"])
    opt = paddle.optimizer.SGD(0.1, parameters=layer.parameters())
    before = float((layer(x) ** 2).mean())
    for _ in range(3):
        loss = (layer(x) ** 2).mean()
        loss.backward()
        opt.step()
        opt.clear_grad()
    assert float((layer(x) ** 2).mean()) < before


@pytest.mark.parametrize("name, prefix", [("unsupported", "pd_op."), ("unsupported_legacy", "")])
def test_unsupported_ops_are_listed_at_once(dynamic_mode, name, prefix):
    with pytest.raises(UnsupportedOpsError) as e:
        paddle.jit.load(str(INFER / name))
    msg = str(e.value)
    assert f"{name}." in msg and "3 operator type(s)" in msg
    assert f"{prefix}i0, {prefix}polygamma, {prefix}renorm" in msg
    assert "erfinv" not in msg and "clip" not in msg  # those it has


def test_translation_tables_cover_the_common_inference_ops():
    for op in ["feed", "fetch"]:
        assert op not in legacy_ops()  # handled before translation
    for op in ["matmul_v2", "mul", "elementwise_add", "conv2d", "depthwise_conv2d", "pool2d", "batch_norm",
               "layer_norm", "relu", "softmax", "reshape2", "transpose2", "flatten_contiguous_range", "concat",
               "dropout", "scale", "slice", "reduce_mean", "gelu", "hard_swish", "lookup_table_v2", "cast"]:
        assert op in legacy_ops(), op
    for op in ["matmul", "add", "conv2d", "pool2d", "batch_norm_", "layer_norm", "relu", "softmax",
               "reshape", "transpose", "flatten", "concat", "dropout", "scale", "slice", "mean", "full",
               "full_int_array", "embedding", "cast", "rnn", "shape64", "full_with_tensor"]:
        assert f"pd_op.{op}" in pir_ops(), op
    for op in ["rnn", "shape", "fill_constant"]:
        assert op in legacy_ops(), op


# ------------------------------------------------------------ writing Paddle's format


def test_saved_models_are_paddle_program_descs(dynamic_mode, tmp_path):
    """`jit.save` writes Paddle's ProgramDesc and binary parameters (real Paddle
    3.3.1 loaded such files when these tests were written:
    tests/data/paddle_files/check_paddle_reads_pullback.py), and reads them back."""
    from pullback.frontend.formats import program_desc as pdesc
    from pullback.frontend.formats.tensor_stream import read_tensors
    from pullback.frontend.serialization import sniff

    paddle.seed(2)
    net = paddle.nn.Sequential(paddle.nn.Conv2D(1, 2, 3, padding=1), paddle.nn.BatchNorm2D(2), paddle.nn.ReLU(),
                               paddle.nn.Flatten(), paddle.nn.Linear(2 * 16, 3), paddle.nn.LayerNorm(3),
                               paddle.nn.GELU(), paddle.nn.Dropout(0.2), paddle.nn.Softmax())
    net.eval()
    prefix = str(tmp_path / "net")
    paddle.jit.save(net, prefix, input_spec=[paddle.static.InputSpec([None, 1, 4, 4], "float32", "img")])
    raw = (tmp_path / "net.pdmodel").read_bytes()
    assert sniff(raw) == "program_desc"
    prog = pdesc.parse_program(raw)
    types = [op["type"] for op in prog["blocks"][0]["ops"]]
    assert types[0] == "feed" and types[-1] == "fetch"
    for t in ("conv2d", "batch_norm", "relu", "reshape2", "matmul_v2", "elementwise_add", "layer_norm", "gelu",
              "dropout", "softmax"):
        assert t in types, t
    params = read_tensors((tmp_path / "net.pdiparams").read_bytes())
    assert len(params) == 10  # conv w/b, bn scale/bias/mean/var, linear w/b, layer_norm w/b
    x = paddle.to_tensor(np.random.default_rng(0).standard_normal((2, 1, 4, 4)).astype("float32"))
    np.testing.assert_allclose(paddle.jit.load(prefix)(x).numpy(), net(x).numpy(), rtol=1e-5, atol=1e-6)
    # Paddle 3's default form, `.json` (PIR), is written next to it and reads back too.
    assert sniff((tmp_path / "net.json").read_bytes()) == "pir_json"
    (tmp_path / "pir").mkdir()
    (tmp_path / "pir" / "net.json").write_bytes((tmp_path / "net.json").read_bytes())
    (tmp_path / "pir" / "net.pdiparams").write_bytes((tmp_path / "net.pdiparams").read_bytes())
    got = paddle.jit.load(str(tmp_path / "pir" / "net"))(x).numpy()
    np.testing.assert_allclose(got, net(x).numpy(), rtol=1e-5, atol=1e-6)


def test_model_format_pullback_and_the_fallback(dynamic_mode, tmp_path):
    from pullback.frontend.serialization import sniff

    net = paddle.nn.Linear(3, 2)
    spec = [paddle.static.InputSpec([None, 3], "float32", "x")]
    paddle.jit.save(net, str(tmp_path / "ir"), input_spec=spec, model_format="pullback")
    assert sniff((tmp_path / "ir.pdmodel").read_bytes()) == "pd_ir"
    x = paddle.ones([2, 3])
    np.testing.assert_allclose(paddle.jit.load(str(tmp_path / "ir"))(x).numpy(), net(x).numpy(), rtol=1e-6)

    def cum(x):  # pd.cumsum: no Paddle operator written here
        return paddle.cumsum(net(x), axis=1)

    with pytest.warns(UserWarning, match="pd.cumsum have no Paddle operator"):
        paddle.jit.save(cum, str(tmp_path / "cum"), input_spec=spec)
    assert sniff((tmp_path / "cum.pdmodel").read_bytes()) == "pd_ir"
    np.testing.assert_allclose(paddle.jit.load(str(tmp_path / "cum"))(x).numpy(), cum(x).numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="cannot be written in Paddle's format"):
        paddle.jit.save(cum, str(tmp_path / "cum2"), input_spec=spec, model_format="paddle")
    # An op the ProgramDesc writer has and the PIR json writer has not: no `.json`.
    def rounded(x):
        return paddle.round(net(x) * 10.0)

    (tmp_path / "g.json").write_text("stale")
    with pytest.warns(UserWarning, match="pd.round have no PIR form"):
        paddle.jit.save(rounded, str(tmp_path / "g"), input_spec=spec)
    assert sniff((tmp_path / "g.pdmodel").read_bytes()) == "program_desc" and not (tmp_path / "g.json").exists()
    np.testing.assert_allclose(paddle.jit.load(str(tmp_path / "g"))(x).numpy(), rounded(x).numpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="model_format"):
        paddle.jit.save(net, str(tmp_path / "bad"), input_spec=spec, model_format="onnx")


def test_paddle_1x_directory_models(tmp_path):
    """Paddle 1.x's `save_inference_model(dirname)`: `dirname/__model__` and one
    tensor file per parameter; and Paddle 2's `model_filename`/`params_filename`
    relative to a directory."""
    from pullback.frontend.formats import program_desc as pdesc
    from pullback.frontend.formats.tensor_stream import read_tensors, write_tensor

    model = (INFER / "lenet_legacy.pdmodel").read_bytes()
    prog = pdesc.parse_program(model)
    names = sorted(v["name"] for v in prog["blocks"][0]["vars"]
                   if v.get("persistable") and v["type"]["type"] == pdesc.DENSE_TENSOR)
    arrays = read_tensors((INFER / "lenet_legacy.pdiparams").read_bytes())
    old = tmp_path / "old"
    old.mkdir()
    (old / "__model__").write_bytes(model)
    for n, a in zip(names, arrays):
        (old / n).write_bytes(write_tensor(a))
    new = tmp_path / "new"
    new.mkdir()
    (new / "net.pdmodel").write_bytes(model)
    (new / "net.pdiparams").write_bytes((INFER / "lenet_legacy.pdiparams").read_bytes())
    io = _io("lenet_legacy")
    core.enable_static()
    try:
        for where, kwargs in ((old, {"model_filename": "__model__"}),
                              (new, {"model_filename": "net", "params_filename": "net"})):
            with scope_guard(Scope()):
                exe = paddle.static.Executor(paddle.CPUPlace())
                program, feeds, fetches = paddle.static.load_inference_model(str(where), exe, **kwargs)
                (got,) = exe.run(program, feed={feeds[0]: io["x"]}, fetch_list=fetches)
            np.testing.assert_allclose(got, io["out0"], rtol=1e-5, atol=2e-6)
        (old / names[0]).unlink()
        with scope_guard(Scope()), pytest.raises(ValueError, match="no parameter file .*conv2d_0.b_0|batch_norm"):
            paddle.static.load_inference_model(str(old), paddle.static.Executor(), model_filename="__model__")
    finally:
        core.disable_static()


def test_pir_program_of_more_ops(dynamic_mode):
    """`pir_ops`: Paddle 3.3.1's PIR forms of split (vector results), gather,
    topk, where, tile, expand, argmax, embedding, full, add_n, pow,
    strided_slice, conv2d_transpose, equal and a constant array; three feeds."""
    io = np.load(INFER / "pir_ops_io.npz")
    layer = paddle.jit.load(str(INFER / "pir_ops"))
    outs = layer(*(paddle.to_tensor(io[k]) for k in ("x", "ids", "img")))
    expected = _outputs(io)
    assert len(outs) == len(expected) == 13
    for i, (got, want) in enumerate(zip(outs, expected)):
        assert got.numpy().dtype == want.dtype, i
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6, err_msg=str(i))


# ------------------------------------------------- a Transformer encoder and an LSTM


def _as_list(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (list, tuple)) else [out]


@pytest.mark.parametrize("name", ["encoder", "lstm"])
def test_paddle_checkpoints_of_encoder_and_lstm_resume_like_paddle(dynamic_mode, name):
    """Paddle's state dict loads into pullback's `nn.TransformerEncoderLayer` / `nn.LSTM`
    with every key used (Paddle's keys, `nn.LSTM`'s `weight_ih_l0` and
    `0.cell.weight_ih` both), the optimizer state under Paddle's accumulator names;
    the outputs are Paddle's, and one more Adam step gives Paddle's loss, parameters
    and accumulators."""
    expected = np.load(CKPT / f"{name}_expected.npz")
    params = paddle.load(str(CKPT / f"{name}.pdparams"))
    with paddle.utils.unique_name.guard():  # names as in a fresh process (the accumulators' too)
        model = BUILD[name](paddle)
        opt = paddle.optimizer.Adam(0.01, parameters=model.parameters())
        assert list(model.state_dict()) == list(params)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no missing or unused keys
            assert model.set_state_dict(params) == ([], [])
        opt.set_state_dict(paddle.load(str(CKPT / f"{name}.pdopt")))
        out = _as_list(model(paddle.to_tensor(expected["x2"])))
        for i, o in enumerate(out):
            np.testing.assert_allclose(o.numpy(), expected[f"out{i}"], rtol=1e-5, atol=1e-6)
        loss = FIX._loss(paddle, out)
        loss.backward()
        opt.step()
        opt.clear_grad()
    np.testing.assert_allclose(float(loss), float(expected["loss2"]), rtol=1e-6)
    # The attention's key bias gets a gradient that is zero but for rounding (softmax
    # ignores a shift of all the scores of a row), which Adam scales up to any step
    # below its learning rate: in Paddle as here, only that bound holds.
    noise = model.self_attn.k_proj.bias.name if name == "encoder" else None
    for key, value in model.state_dict().items():
        if value.name == noise:
            assert np.abs(value.numpy() - params[key].numpy()).max() <= 2 * 0.01 + 1e-6
            continue
        np.testing.assert_allclose(value.numpy(), expected[f"param/{key}"], rtol=1e-4, atol=1e-6, err_msg=key)
    state = opt.state_dict()
    assert sorted(state) == sorted(k[4:] for k in expected.files if k.startswith("opt/"))
    for key, value in state.items():
        if noise is None or not key.startswith(noise + "_"):
            np.testing.assert_allclose(value.numpy(), expected[f"opt/{key}"], rtol=1e-4, atol=1e-8, err_msg=key)


@pytest.mark.parametrize("name", ["encoder", "lstm"])
def test_our_encoder_and_lstm_checkpoints_have_paddles_layout(dynamic_mode, tmp_path, name):
    """What pullback writes for these models has Paddle's keys, name table and
    accumulator names (Paddle reads them: check_paddle_reads_pullback.py)."""
    with paddle.utils.unique_name.guard():
        model = BUILD[name](paddle)
        opt = paddle.optimizer.Adam(0.01, parameters=model.parameters())
        x = paddle.to_tensor(np.load(CKPT / f"{name}_expected.npz")["x2"])
        FIX._loss(paddle, _as_list(model(x))).backward()
        opt.step()
    paddle.save(model.state_dict(), str(tmp_path / "m.pdparams"))
    paddle.save(opt.state_dict(), str(tmp_path / "m.pdopt"))
    ours = {k: pickle.loads((tmp_path / f"m.{k}").read_bytes()) for k in ("pdparams", "pdopt")}
    theirs = {k: pickle.loads((CKPT / f"{name}.{k}").read_bytes()) for k in ("pdparams", "pdopt")}
    for kind in ("pdparams", "pdopt"):
        assert list(ours[kind]) == list(theirs[kind]) if kind == "pdparams" else set(ours[kind]) == set(theirs[kind])
        for key, value in theirs[kind].items():
            if isinstance(value, np.ndarray):
                assert ours[kind][key].shape == value.shape and ours[kind][key].dtype == value.dtype, key
    table = "StructuredToParameterName@@"
    assert ours["pdparams"][table] == theirs["pdparams"][table]


def _creation_order(name: str) -> tuple[Any, ...]:
    """`linear_12.w_0` -> ('linear', 12, 'w_0'): parameters in the order their layers
    were made, whatever the name counters started at."""
    m = re.fullmatch(r"(.*)_(\d+)\.(.*)", name)
    assert m is not None, name
    return m.group(1), int(m.group(2)), m.group(3)


@pytest.mark.parametrize("name", ["encoder", "encoder_legacy", "lstm", "lstm_legacy"])
def test_loaded_encoder_and_lstm_fine_tune_like_the_layers(dynamic_mode, name):
    """A Paddle inference model, loaded with `jit.load`, trains: one SGD step on
    it moves its parameters exactly as the same step on pullback's own layer
    holding those parameters (through `pd.rnn`'s gradient for the LSTM)."""
    base = name.removesuffix("_legacy")
    io = _io(name)
    layer = paddle.jit.load(str(INFER / name))
    loaded = paddle.load(str(INFER / name))
    with paddle.utils.unique_name.guard():
        model = BUILD[base](paddle, 0.1) if base == "encoder" else BUILD[base](paddle)
    model.eval()
    ours = sorted(model.parameters(), key=lambda p: _creation_order(p.name))
    theirs = sorted(loaded, key=_creation_order)
    assert [list(p.shape) for p in ours] == [list(loaded[n].shape) for n in theirs]
    for p, n in zip(ours, theirs):
        p.set_value(loaded[n].numpy())
    x = paddle.to_tensor(io["x"])
    for net in (layer, model):
        opt = paddle.optimizer.SGD(0.5, parameters=net.parameters())
        FIX._loss(paddle, _as_list(net(x))).backward()
        opt.step()
        opt.clear_grad()
    after = {p.saved_name: p.numpy() for p in layer.parameters()}  # (loaded names get a suffix, as Paddle's)
    moved = 0
    for p, n in zip(ours, theirs):
        np.testing.assert_allclose(after[n], p.numpy(), rtol=1e-5, atol=1e-6, err_msg=n)
        moved += not np.allclose(p.numpy(), loaded[n].numpy())
    assert moved >= len(ours) - 1  # (all but attention's key bias, which has no gradient)


# ------------------------------------------------- what pullback writes, next to Paddle's

_SHAPE_OPS = {"shape", "slice", "squeeze2", "unsqueeze2", "fill_constant", "fill_any_like", "expand_v2",
              "full", "full_int_array", "full_like", "full_with_tensor", "shape64", "stack", "squeeze",
              "unsqueeze", "expand", "combine", "split"}
"""Ops that build constants and the LSTM's zero initial states (Paddle and pullback
build those differently) or pack operand vectors (PIR)."""


def _legacy_structure(path: Path) -> dict[str, Any]:
    from pullback.frontend.formats import program_desc as pdesc

    block = pdesc.parse_program(path.read_bytes())["blocks"][0]
    ops = [op for op in block["ops"] if op["type"] not in _SHAPE_OPS]
    rnn = {}
    for op in ops:
        if op["type"] == "rnn":
            attrs = pdesc.op_attrs(op)
            rnn = {"inputs": sorted(pdesc.op_slots(op, "inputs")), "outputs": sorted(pdesc.op_slots(op, "outputs")),
                   "states": len(pdesc.op_slots(op, "outputs")["State"]),
                   "weights": len(pdesc.op_slots(op, "inputs")["WeightList"]),
                   "attrs": {k: attrs[k] for k in ("mode", "input_size", "hidden_size", "num_layers", "is_bidirec",
                                                   "is_test")}}
    params = [(v["name"], pdesc.var_tensor(v)) for v in block["vars"]
              if v.get("persistable") and pdesc.var_tensor(v) is not None]
    return {"ops": [op["type"] for op in ops], "rnn": rnn,
            "params": sorted((_creation_order(n)[::2], tuple(t[0]), t[1]) for n, t in params)}


def _pir_structure(path: Path) -> dict[str, Any]:
    ops = json.loads(path.read_text())["program"]["regions"][0]["blocks"][0]["ops"]
    names = [op["#"].split(".", 1)[-1] for op in ops if op["#"] != "p"]
    params = [(op["A"][-1], op["O"]["TT"]["D"]) for op in ops if op["#"] == "p" and op["OA"][0]]
    rnn = [{a["N"]: a["AT"]["D"] for a in op["A"] if a["N"] != "struct_name"} for op in ops if op["#"] == "1.rnn"]
    state_ins = [op["I"][4] != {"%": 0} for op in ops if op["#"] == "1.rnn"]
    return {"ops": [n for n in names if n not in _SHAPE_OPS], "rnn": rnn, "rnn_dropout_state_in": state_ins,
            "non_persistable": sum(1 for op in ops if op["#"] == "p" and not op["OA"][0]),
            "params": sorted((_creation_order(n)[::2], tuple(d[1]), d[0]["#"]) for n, d in params)}


@pytest.mark.parametrize("name", ["encoder", "lstm"])
def test_saved_encoder_and_lstm_are_structured_as_paddles(dynamic_mode, tmp_path, name):
    """pullback's `jit.save` of the same layers writes what Paddle wrote: the same
    operators in the same order (but for how constants and the LSTM's zero states
    are built), the `rnn` operator with Paddle's slots and attributes, the same
    parameters (name stems, shapes, dtypes), in both formats; and the files load
    back to the layer's outputs."""
    with paddle.utils.unique_name.guard():
        net = BUILD[name](paddle, 0.1) if name == "encoder" else BUILD[name](paddle)
    net.eval()
    io = _io(name)
    spec = [paddle.static.InputSpec([None, *io["x"].shape[1:]], "float32", "x")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # both forms written, nothing left out
        paddle.jit.save(net, str(tmp_path / name), input_spec=spec)
    assert _legacy_structure(tmp_path / f"{name}.pdmodel") == _legacy_structure(INFER / f"{name}_legacy.pdmodel")
    ours, theirs = _pir_structure(tmp_path / f"{name}.json"), _pir_structure(INFER / f"{name}.json")
    assert ours == theirs
    if name == "lstm":
        assert ours["rnn"] and ours["rnn_dropout_state_in"] == [True] and ours["non_persistable"] == 1
    x = paddle.to_tensor(io["x"])
    want = _as_list(net(x))
    (tmp_path / "pir").mkdir()
    for suffix in (".json", ".pdiparams"):
        (tmp_path / "pir" / f"{name}{suffix}").write_bytes((tmp_path / f"{name}{suffix}").read_bytes())
    for prefix in (tmp_path / name, tmp_path / "pir" / name):
        got = _as_list(paddle.jit.load(str(prefix))(x))
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)


def test_symbolic_shapes_are_reported_where_unsupported():
    """A run-time shape used other than as the sizes of fill_constant /
    full_with_tensor names the op and the value."""
    from pullback.frontend.formats.errors import FileFormatError
    from pullback.frontend.formats.importer import OpRecord, PaddleProgram, VarInfo, translate

    prog = PaddleProgram("ProgramDesc", [
        OpRecord("shape", {"Input": ["x"]}, {"Out": ["s"]}, {}),
        OpRecord("cast", {"X": ["s"]}, {"Out": ["y"]}, {"out_dtype": 5}),
    ], {"x": VarInfo([-1, 3], "float32"), "s": VarInfo([2], "int32"), "y": VarInfo([2], "float32")},
        ["x"], ["y"], [])
    with pytest.raises(FileFormatError, match="op 'cast'.*'s', a shape computed at run time"):
        translate(prog, "m.pdmodel", "paddle.jit.load")


def test_saved_bidirectional_gru_with_lengths_reads_back(dynamic_mode, tmp_path):
    """`pd.rnn` with two directions, GRU gates and a `sequence_length` operand, in
    both formats (Paddle 3.3.1 read these too: check_paddle_reads_pullback.py)."""

    class Net(paddle.nn.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.gru = paddle.nn.GRU(4, 3, num_layers=2, direction="bidirect")

        def forward(self, x: Any, lens: Any) -> Any:
            y, h = self.gru(x, sequence_length=lens)
            return [y, h]

    net = Net()
    net.eval()
    spec = [paddle.static.InputSpec([None, 5, 4], "float32", "x"), paddle.static.InputSpec([None], "int64", "lens")]
    paddle.jit.save(net, str(tmp_path / "gru"), input_spec=spec)
    x = paddle.to_tensor(np.random.default_rng(3).standard_normal((2, 5, 4)).astype("float32"))
    lens = paddle.to_tensor(np.array([5, 3], dtype="int64"))
    want = net(x, lens)
    for kind, suffix in (("pir", ".json"), ("legacy", ".pdmodel")):
        (tmp_path / kind).mkdir()
        for ext in (suffix, ".pdiparams"):
            (tmp_path / kind / f"gru{ext}").write_bytes((tmp_path / f"gru{ext}").read_bytes())
        got = paddle.jit.load(str(tmp_path / kind / "gru"))(x, lens)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-5, atol=1e-6)
    rnn = [op for op in json.loads((tmp_path / "gru.json").read_text())["program"]["regions"][0]["blocks"][0]["ops"]
           if op["#"] == "1.rnn"]
    assert len(rnn) == 1 and rnn[0]["I"][3] != {"%": 0}  # the lengths operand
