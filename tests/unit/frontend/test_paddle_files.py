"""Paddle's own checkpoint files, and loading nothing that can run code.

The fixtures under `tests/data/paddle_files/checkpoint` were written by real
PaddlePaddle 3.3.1 (`tests/data/paddle_files/make_fixtures.py`): an MLP trained one
Adam step under a StepDecay scheduler, saved with `paddle.save` at pickle protocols
4 and 2, plus a Tensor, a nested structure and a DenseTensor; `expected.npz` holds
what Paddle's parameters, optimizer state, loss and learning rate were after the
next step.

* every loader (`paddle.load`, `static.load`, `load_program_state`, `jit.load`,
  `load_inference_model`, `hapi.Model.load`) refuses a pickle that names anything
  but data, before building or running any of it;
* Paddle's checkpoints load, resume training and match Paddle's next step;
* bad files (empty, truncated, another format, a newer version, another model's)
  raise one `FileFormatError` naming the file and the problem.
"""

from __future__ import annotations

import io
import os
import pickle
import struct
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pullback as paddle
from pullback.frontend import core, unique_name
from pullback.frontend.formats import FileFormatError, UnsafeFileError
from pullback.frontend.formats.safe_pickle import ALLOWED, safe_load
from pullback.frontend.framework import Program, program_guard
from pullback.runtime.scope import Scope, scope_guard

DATA = Path(__file__).resolve().parents[2] / "data" / "paddle_files"
CKPT = DATA / "checkpoint"
INFER = DATA / "infer"


# ------------------------------------------------------------ hostile pickles


class _Evil:
    """Unpickling this would create `target` (what an attacker's file does)."""

    def __init__(self, target: str, how: str = "open") -> None:
        self.target = target
        self.how = how

    def __reduce__(self) -> Any:
        if self.how == "open":
            return (open, (self.target, "w"))
        if self.how == "system":
            return (os.system, (f"touch {self.target}",))
        # Paddle's DenseTensor spelling, abused: eval of an arbitrary expression.
        return (eval, (f"open({self.target!r}, 'w')", {}))


def _evil_bytes(target: Path, how: str = "open", protocol: int = 4, nested: bool = True) -> bytes:
    obj: Any = _Evil(str(target), how)
    if nested:  # hidden inside an ordinary-looking state dict
        obj = {"0.weight": np.ones((2, 2), np.float32), "extra": [obj]}
    return pickle.dumps(obj, protocol=protocol)


@pytest.mark.parametrize("how", ["open", "system", "eval"])
@pytest.mark.parametrize("protocol", [2, 4])
def test_paddle_load_refuses_a_pickle_that_runs_code(dynamic_mode, tmp_path, how, protocol):
    target = tmp_path / "pwned"
    path = tmp_path / "model.pdparams"
    path.write_bytes(_evil_bytes(target, how, protocol))
    with pytest.raises(UnsafeFileError) as e:
        paddle.load(str(path))
    assert not target.exists()
    msg = str(e.value)
    assert "paddle.load" in msg and str(path) in msg
    if how == "open":
        assert "'open'" in msg and "'builtins'" in msg or "'io'" in msg
    elif how == "system":
        assert "'system'" in msg and ("'posix'" in msg or "'os'" in msg or "'nt'" in msg)
    else:
        assert "eval" in msg


def test_paddle_load_refuses_from_a_buffer(dynamic_mode, tmp_path):
    target = tmp_path / "pwned"
    with pytest.raises(UnsafeFileError, match="BytesIO"):
        paddle.load(io.BytesIO(_evil_bytes(target)))
    assert not target.exists()


def _static_model(tmp_path: Path) -> tuple[Program, str]:
    """A static fc program, its start-up run, saved with paddle.static.save."""
    main, start = Program(), Program()
    with program_guard(main, start), unique_name.guard():
        x = paddle.static.data("x", [None, 3], "float32")
        paddle.static.nn.fc(x, 2)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(start)
    prefix = str(tmp_path / "static_model")
    paddle.static.save(main, prefix)
    return main, prefix


def test_static_load_and_program_state_refuse_hostile_pickles(tmp_path):
    target = tmp_path / "pwned"
    core.enable_static()
    try:
        with scope_guard(Scope()):
            main, prefix = _static_model(tmp_path)
            Path(prefix + ".pdparams").write_bytes(_evil_bytes(target))
            with pytest.raises(UnsafeFileError, match="paddle.static.load"):
                paddle.static.load(main, prefix)
            with pytest.raises(UnsafeFileError, match="load_program_state"):
                paddle.static.load_program_state(prefix)
            Path(prefix + ".pdparams").unlink()
            Path(prefix + ".pdopt").write_bytes(_evil_bytes(target, "system"))
            with pytest.raises(UnsafeFileError, match=r"static_model\.pdopt"):
                paddle.static.load_program_state(prefix)
    finally:
        core.disable_static()
    assert not target.exists()


def test_inference_loaders_refuse_hostile_parameter_pickles(dynamic_mode, tmp_path):
    """pullback's own IR-text models with a pickled `.pdiparams` (as earlier
    pullback versions wrote them): the parameters go through the same unpickler."""
    target = tmp_path / "pwned"
    net = paddle.nn.Linear(3, 2)
    prefix = str(tmp_path / "jit_model")
    paddle.jit.save(net, prefix, input_spec=[paddle.static.InputSpec([None, 3], "float32")])
    Path(prefix + ".pdiparams").write_bytes(_evil_bytes(target, nested=False))
    with pytest.raises(UnsafeFileError, match="paddle.jit.load"):
        paddle.jit.load(prefix)
    with pytest.raises(UnsafeFileError, match="paddle.load"):
        paddle.load(prefix)  # a prefix: the inference model's state dict
    core.enable_static()
    try:
        with scope_guard(Scope()):
            exe = paddle.static.Executor(paddle.CPUPlace())
            with pytest.raises(UnsafeFileError, match="load_inference_model"):
                paddle.static.load_inference_model(prefix, exe)
    finally:
        core.disable_static()
    assert not target.exists()


def test_hapi_model_load_refuses_hostile_pickles(dynamic_mode, tmp_path):
    target = tmp_path / "pwned"
    model = paddle.Model(paddle.nn.Linear(3, 2))
    (tmp_path / "ckpt.pdparams").write_bytes(_evil_bytes(target))
    with pytest.raises(UnsafeFileError):
        model.load(str(tmp_path / "ckpt"))
    assert not target.exists()


def test_allowed_names_are_data_only():
    modules = {m for m, _ in ALLOWED}
    assert modules == {"numpy", "numpy.core.multiarray", "numpy._core.multiarray", "numpy.core.numeric",
                       "numpy._core.numeric", "builtins", "__builtin__", "collections", "_codecs"}
    for _module, name in ALLOWED:
        assert name not in ("exec", "open", "getattr", "__import__", "compile", "system", "setattr",
                            "globals", "apply", "__reduce__", "_reconstructor")


def test_numpy_reconstruct_only_builds_plain_arrays():
    # numpy's _reconstruct with a subtype other than ndarray is refused.
    bad = (b"\x80\x04\x8c\x16numpy._core.multiarray\x8c\x0c_reconstruct\x93\x8c\x05numpy\x8c\x05dtype\x93"
           b"K\x00\x85C\x01b\x87R.")
    with pytest.raises(FileFormatError, match="_reconstruct"):
        safe_load(bad, "x.pdparams", "paddle.load")


def test_numpy_1_pickles_load():
    """numpy 1.x wrote `numpy.core.multiarray._reconstruct`: same arrays, no import
    of the deprecated `numpy.core`."""
    data = pickle.dumps(np.arange(4, dtype=np.float32), protocol=2)
    old = data.replace(b"numpy._core.multiarray", b"numpy.core.multiarray")
    assert old != data
    np.testing.assert_array_equal(safe_load(old, "old.pdparams", "paddle.load"), np.arange(4, dtype=np.float32))


def test_plain_values_round_trip_through_the_safe_unpickler():
    from collections import OrderedDict

    obj = {"a": [1, 2.5, "s", b"\x00\xff", None, True], "t": (1 + 2j, frozenset({1}), {3}),
           "o": OrderedDict(x=np.float32(1.5)), "arr": np.arange(6).reshape(2, 3),
           "strs": np.array(["a", "bc"]), "b": np.array([True, False])}
    for protocol in (2, 3, 4, 5):
        got = safe_load(pickle.dumps(obj, protocol=protocol), "f", "paddle.load")
        assert got["a"] == obj["a"] and got["t"] == obj["t"] and got["o"] == obj["o"]
        np.testing.assert_array_equal(got["arr"], obj["arr"])
        np.testing.assert_array_equal(got["strs"], obj["strs"])


# ---------------------------------------------------- Paddle's checkpoints


def _mlp() -> Any:
    with unique_name.guard():
        return paddle.nn.Sequential(paddle.nn.Linear(3, 4), paddle.nn.ReLU(), paddle.nn.Linear(4, 2))


def test_paddle_state_dicts_load_with_paddle_layout(dynamic_mode):
    params = paddle.load(str(CKPT / "mlp.pdparams"))
    assert list(params) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert params["0.weight"].name == "linear_0.w_0" and params["0.weight"].shape == [3, 4]
    opt = paddle.load(str(CKPT / "mlp.pdopt"))
    assert set(opt) == {f"linear_{i}.{p}_0_{acc}_0" for i in (0, 1) for p in ("w", "b")
                        for acc in ("moment1", "moment2", "beta1_pow_acc", "beta2_pow_acc")} | {"LR_Scheduler"}
    assert opt["LR_Scheduler"] == {"last_epoch": 1, "last_lr": 0.025}
    assert opt["linear_0.w_0_beta1_pow_acc_0"].shape == [1]
    table = paddle.load(str(CKPT / "mlp.pdparams"), keep_name_table=True)["StructuredToParameterName@@"]
    assert table["2.bias"] == "linear_1.b_0"
    arrays = paddle.load(str(CKPT / "mlp.pdopt"), return_numpy=True)
    assert isinstance(arrays["linear_1.w_0_moment2_0"], np.ndarray)
    for stem in ("mlp", "mlp_p2"):  # protocol 4 and protocol 2 (bytes via _codecs.encode)
        p = paddle.load(str(CKPT / f"{stem}.pdparams"), return_numpy=True)
        np.testing.assert_array_equal(p["2.weight"], params["2.weight"].numpy())


def test_paddle_checkpoint_resumes_training_like_paddle(dynamic_mode):
    expected = np.load(CKPT / "expected.npz")
    model = _mlp()
    sched = paddle.optimizer.lr.StepDecay(0.05, step_size=1, gamma=0.5)
    opt = paddle.optimizer.Adam(sched, parameters=model.parameters())
    model.set_state_dict(paddle.load(str(CKPT / "mlp.pdparams")))
    opt.set_state_dict(paddle.load(str(CKPT / "mlp.pdopt")))
    assert sched.last_epoch == 1 and sched.get_lr() == pytest.approx(0.025)
    for key, value in model.state_dict().items():
        np.testing.assert_array_equal(value.numpy(), expected[f"before/{key}"])
    loss = (model(paddle.to_tensor(expected["x2"])) ** 2).mean()
    loss.backward()
    opt.step()
    opt.clear_grad()
    sched.step()
    np.testing.assert_allclose(float(loss), float(expected["loss2"]), rtol=1e-6)
    for key, value in model.state_dict().items():
        np.testing.assert_allclose(value.numpy(), expected[f"param/{key}"], rtol=1e-5, atol=1e-6)
    for key, value in opt.state_dict().items():
        if key != "LR_Scheduler":
            np.testing.assert_allclose(value.numpy(), expected[f"opt/{key}"], rtol=1e-5, atol=1e-7)
    assert sched.get_lr() == pytest.approx(float(expected["lr_after"]))


def test_our_checkpoints_have_paddles_layout(dynamic_mode, tmp_path):
    """What pullback writes is what Paddle 3.3.1 writes: the same keys, name table,
    accumulator names and scheduler entry (Paddle itself read such files back when
    these tests were written: tests/data/paddle_files/check_paddle_reads_pullback.py)."""
    model = _mlp()
    sched = paddle.optimizer.lr.StepDecay(0.05, step_size=1, gamma=0.5)
    opt = paddle.optimizer.Adam(sched, parameters=model.parameters())
    (model(paddle.ones([2, 3])) ** 2).mean().backward()
    opt.step()
    sched.step()
    paddle.save(model.state_dict(), str(tmp_path / "m.pdparams"))
    paddle.save(opt.state_dict(), str(tmp_path / "m.pdopt"), protocol=2)
    theirs = {k: pickle.loads((CKPT / k).read_bytes()) for k in ("mlp.pdparams", "mlp.pdopt")}
    ours_p = pickle.loads((tmp_path / "m.pdparams").read_bytes())
    ours_o = pickle.loads((tmp_path / "m.pdopt").read_bytes())
    assert list(ours_p) == list(theirs["mlp.pdparams"])
    assert ours_p["StructuredToParameterName@@"] == theirs["mlp.pdparams"]["StructuredToParameterName@@"]
    assert set(ours_o) == set(theirs["mlp.pdopt"])
    assert ours_o["StructuredToParameterName@@"] == theirs["mlp.pdopt"]["StructuredToParameterName@@"]
    assert ours_o["LR_Scheduler"] == {"last_epoch": 1, "last_lr": 0.025}
    assert all(type(v) is np.ndarray for k, v in ours_p.items() if k != "StructuredToParameterName@@")


def test_paddle_tensor_files(dynamic_mode):
    t = paddle.load(str(CKPT / "tensor.pdtensor"))
    assert t.name == "saved_tensor"
    np.testing.assert_array_equal(t.numpy(), np.arange(6, dtype=np.float32).reshape(2, 3))
    assert isinstance(paddle.load(str(CKPT / "tensor.pdtensor"), return_numpy=True), np.ndarray)
    # A DenseTensor, pickled by Paddle as eval('data', {'data': array}): nothing is evaluated.
    dense = paddle.load(str(CKPT / "dense.pdtensor"))
    np.testing.assert_array_equal(dense.numpy(), np.load(CKPT / "dense.npy"))
    nested = paddle.load(str(CKPT / "nested.pdobj"))
    assert nested["epoch"] == 3 and nested["tags"] == ["a", "b"]
    assert list(nested["model"]) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert nested["model"]["0.bias"].name == "linear_0.b_0"
    pair = nested["pair"]
    assert isinstance(pair, tuple) and pair[1] == 1.5 and pair[0].name == "saved_tensor"


def test_binary_tensor_files(dynamic_mode, tmp_path):
    """Paddle's binary tensor serialization (`use_binary_format=True`)."""
    from pullback.frontend.formats.tensor_stream import write_tensor

    arr = np.arange(12, dtype=np.int64).reshape(3, 4)
    (tmp_path / "t.bin").write_bytes(write_tensor(arr))
    np.testing.assert_array_equal(paddle.load(str(tmp_path / "t.bin")).numpy(), arr)
    np.testing.assert_array_equal(paddle.load(str(tmp_path / "t.bin"), return_numpy=True), arr)


def test_big_parameters_split_by_paddle_are_joined(dynamic_mode, tmp_path):
    """Paddle's protocol-2/3 files split arrays over 4 GB into slices listed under
    `UnpackBigParamInfor@@` (here a small one, as the layout is the same)."""
    w = np.arange(10, dtype=np.float32).reshape(2, 5)
    flat = w.reshape(-1)
    obj = {"w@@.0": flat[:6], "w@@.1": flat[6:], "b": np.ones(2, np.float32),
           "UnpackBigParamInfor@@": {"w": {"OriginShape": (2, 5), "slices": ["w@@.0", "w@@.1"]}},
           "StructuredToParameterName@@": {"w": "fc.w_0", "b": "fc.b_0"}}
    (tmp_path / "big.pdparams").write_bytes(pickle.dumps(obj, protocol=2))
    got = paddle.load(str(tmp_path / "big.pdparams"))
    assert set(got) == {"w", "b"}
    np.testing.assert_array_equal(got["w"].numpy(), w)


# -------------------------------------------------------------- bad files


def _err(fn: Any, *args: Any, **kwargs: Any) -> str:
    with pytest.raises(FileFormatError) as e:
        fn(*args, **kwargs)
    return str(e.value)


def test_empty_files(dynamic_mode, tmp_path):
    empty = tmp_path / "empty.pdparams"
    empty.write_bytes(b"")
    assert "empty (0 bytes)" in _err(paddle.load, str(empty))
    prefix = tmp_path / "m"
    (tmp_path / "m.pdmodel").write_bytes(b"")
    msg = _err(paddle.jit.load, str(prefix))
    assert "m.pdmodel" in msg and "empty" in msg
    (tmp_path / "m.pdmodel").write_bytes((INFER / "mlp_legacy.pdmodel").read_bytes())
    (tmp_path / "m.pdiparams").write_bytes(b"")
    msg = _err(paddle.jit.load, str(prefix))
    assert "m.pdiparams" in msg and "empty" in msg


def test_truncated_files(dynamic_mode, tmp_path):
    data = (CKPT / "mlp.pdopt").read_bytes()
    cut = tmp_path / "cut.pdopt"
    cut.write_bytes(data[: len(data) // 2])
    msg = _err(paddle.load, str(cut))
    assert "cut.pdopt" in msg and "truncated" in msg
    for model, params in (("mlp_legacy.pdmodel", "mlp_legacy.pdiparams"), ("mlp.json", "mlp.pdiparams")):
        suffix = Path(model).suffix
        (tmp_path / f"p{suffix}").write_bytes((INFER / model).read_bytes())
        raw = (INFER / params).read_bytes()
        (tmp_path / "p.pdiparams").write_bytes(raw[:-10])
        msg = _err(paddle.jit.load, str(tmp_path / "p"))
        assert "p.pdiparams" in msg and "truncated" in msg and "ends inside" in msg
        (tmp_path / "p.pdiparams").write_bytes(raw)
        mraw = (INFER / model).read_bytes()
        (tmp_path / f"p{suffix}").write_bytes(mraw[: len(mraw) * 2 // 3])
        msg = _err(paddle.jit.load, str(tmp_path / "p"))
        assert f"p{suffix}" in msg and ("ProgramDesc" in msg or "JSON" in msg)
        (tmp_path / f"p{suffix}").unlink()


def test_wrong_format_files(dynamic_mode, tmp_path):
    junk = tmp_path / "photo.pdparams"
    junk.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(100))
    msg = _err(paddle.load, str(junk))
    assert "photo.pdparams" in msg and "can not parse" in msg
    # A parameter file where the model should be, and a pickle as a model.
    (tmp_path / "m.pdmodel").write_bytes((INFER / "mlp.pdiparams").read_bytes())
    assert "tensor file, not a model" in _err(paddle.jit.load, str(tmp_path / "m"))
    (tmp_path / "m.pdmodel").write_bytes((CKPT / "mlp.pdparams").read_bytes())
    assert "pickle, not a model" in _err(paddle.jit.load, str(tmp_path / "m"))
    # A JSON file that is not a PIR program.
    (tmp_path / "m.pdmodel").unlink()
    (tmp_path / "m.json").write_text('{"base_code": {"magic": "onnx"}}')
    assert "not a Paddle PIR program" in _err(paddle.jit.load, str(tmp_path / "m"))
    # A state dict (pickle) given as the parameters of a Paddle model.
    (tmp_path / "m.json").write_bytes((INFER / "mlp.json").read_bytes())
    (tmp_path / "m.pdiparams").write_bytes(pickle.dumps([1, 2], protocol=2))
    assert "not a parameter file" in _err(paddle.jit.load, str(tmp_path / "m"))


def test_another_models_files(dynamic_mode, tmp_path):
    (tmp_path / "m.json").write_bytes((INFER / "mlp.json").read_bytes())
    (tmp_path / "m.pdiparams").write_bytes((INFER / "lenet.pdiparams").read_bytes())
    msg = _err(paddle.jit.load, str(tmp_path / "m"))
    assert "m.pdiparams" in msg and "does not fit the model" in msg
    (tmp_path / "m.pdiparams").write_bytes((INFER / "static_fc.pdiparams").read_bytes())
    msg = _err(paddle.jit.load, str(tmp_path / "m"))  # as many tensors, other shapes
    assert "has shape" in msg and "different models" in msg
    # Another model's checkpoint into a layer: shapes are checked, keys reported.
    lenet_params = paddle.load(str(INFER / "lenet"))  # an inference model's state dict
    model = _mlp()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        missing, unexpected = model.set_state_dict(lenet_params)
    assert missing == ["0.weight", "0.bias", "2.weight", "2.bias"] and "conv2d_0.w_0" in unexpected
    assert w
    # A wrong-shaped entry is skipped with a warning naming it, as Paddle 3.3.1 does
    # (issue 32: nothing is half-assigned), and the weight keeps its value.
    wrong = {"0.weight": np.zeros((5, 5), np.float32)}
    before = model.state_dict()["0.weight"].numpy().copy()
    with pytest.warns(UserWarning, match="0.weight"):
        missing, unexpected = model.set_state_dict(wrong)
    assert "0.weight" in missing and "0.weight" in unexpected
    np.testing.assert_array_equal(model.state_dict()["0.weight"].numpy(), before)


def test_version_mismatches(dynamic_mode, tmp_path):
    import json

    # A pickle protocol newer than this Python reads.
    (tmp_path / "new.pdparams").write_bytes(b"\x80\x09" + bytes(20))
    assert "protocol 9" in _err(paddle.load, str(tmp_path / "new.pdparams"))
    # A PIR program of an unknown version.
    doc = json.loads((INFER / "mlp.json").read_text())
    doc["base_code"]["version"] = 99
    (tmp_path / "m.json").write_text(json.dumps(doc))
    (tmp_path / "m.pdiparams").write_bytes((INFER / "mlp.pdiparams").read_bytes())
    msg = _err(paddle.jit.load, str(tmp_path / "m"))
    assert "m.json" in msg and "version 99" in msg
    (tmp_path / "m.json").unlink()
    # A legacy program whose conv2d is of a newer op version than translated.
    from pullback.frontend.formats import program_desc as pdesc

    prog = pdesc.parse_program((INFER / "lenet_legacy.pdmodel").read_bytes())
    for pair in prog["op_version_map"]["pair"]:
        if pair["op_name"] == "conv2d":
            pair["op_version"]["version"] = 7
    (tmp_path / "m.pdmodel").write_bytes(pdesc.serialize_program(prog))
    (tmp_path / "m.pdiparams").write_bytes((INFER / "lenet_legacy.pdiparams").read_bytes())
    msg = _err(paddle.jit.load, str(tmp_path / "m"))
    assert "conv2d x2 (op version 7, pullback translates up to 1)" in msg
    # A tensor of a serialization version that does not exist.
    raw = bytearray((INFER / "lenet_legacy.pdiparams").read_bytes())
    raw[0:4] = struct.pack("<I", 3)
    (tmp_path / "m.pdmodel").write_bytes((INFER / "lenet_legacy.pdmodel").read_bytes())
    (tmp_path / "m.pdiparams").write_bytes(bytes(raw))
    msg = _err(paddle.jit.load, str(tmp_path / "m"))
    assert "m.pdiparams" in msg and "tensor version 3" in msg
    # pullback IR text from another version (an op this one does not know).
    (tmp_path / "ir.pdmodel").write_text('builtin.module {\n  %0 = "pd.op_from_the_future"() : () -> tensor<2xf32>\n}\n')
    msg = _err(paddle.load, str(tmp_path / "ir.pdmodel"))
    assert "ir.pdmodel" in msg and "does not parse or verify" in msg


def test_damaged_files_only_raise_format_errors(dynamic_mode, tmp_path):
    """Every truncation and many single-byte corruptions of Paddle's files give a
    `FileFormatError` (or load, when the damage hits a value), never another
    exception out of the readers."""
    from pullback.frontend.formats.errors import FileFormatError as FFE

    rng = np.random.default_rng(0)
    cases = [("mlp_legacy.pdmodel", "mlp_legacy.pdiparams", "pdmodel"), ("mlp.json", "mlp.pdiparams", "json"),
             ("mlp_legacy.pdmodel", "mlp_legacy.pdiparams", "pdiparams")]
    for model, params, damaged in cases:
        m, p = (INFER / model).read_bytes(), (INFER / params).read_bytes()
        raw = {"pdmodel": m, "json": m, "pdiparams": p}[damaged]
        cuts = [raw[:n] for n in range(0, len(raw), max(1, len(raw) // 20))]
        flips = []
        for _ in range(20):
            b = bytearray(raw)
            i = int(rng.integers(len(b)))
            b[i] = int(rng.integers(256))
            flips.append(bytes(b))
        for k, bad in enumerate(cuts + flips):
            d = tmp_path / f"{damaged}{k}"
            d.mkdir()
            suffix = ".json" if model.endswith(".json") else ".pdmodel"
            (d / f"m{suffix}").write_bytes(bad if damaged != "pdiparams" else m)
            (d / "m.pdiparams").write_bytes(bad if damaged == "pdiparams" else p)
            try:
                paddle.jit.load(str(d / "m"))
            except FFE:
                pass
    for name in ("mlp.pdopt", "mlp_p2.pdparams", "dense.pdtensor"):
        raw = (CKPT / name).read_bytes()
        for n in range(0, len(raw), max(1, len(raw) // 30)):
            (tmp_path / "cut").write_bytes(raw[:n])
            with pytest.raises(FFE):
                paddle.load(str(tmp_path / "cut"))
