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
* `unsupported`: ops pullback does not have (i0, polygamma, renorm).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pullback as paddle
from pullback.dialects import pd
from pullback.frontend import core
from pullback.frontend.formats.importer import UnsupportedOpsError, legacy_ops, pir_ops
from pullback.runtime.scope import Scope, scope_guard

INFER = Path(__file__).resolve().parents[2] / "data" / "paddle_files" / "infer"

MODELS = ["mlp", "mlp_legacy", "lenet", "lenet_legacy", "mixed", "mixed_legacy", "static_fc", "static_fc_legacy"]


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


@pytest.mark.parametrize("name", ["lenet", "static_fc_legacy"])
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
               "full_int_array", "embedding", "cast"]:
        assert f"pd_op.{op}" in pir_ops(), op


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
