"""`paddle.inference`'s predictor over models Paddle 3.3.1 exported (the fixtures of
`tests/data/paddle_files/make_fixtures.py`, outputs recorded by Paddle): both
calling styles, both file formats, a model directory, its own scope, and clear
errors for what it cannot do."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

import pullback as paddle
from pullback.inference import Config, DataType, create_predictor

INFER = Path(__file__).resolve().parents[2] / "data" / "paddle_files" / "infer"


def _io(name: str) -> tuple[list[np.ndarray], list[np.ndarray]]:
    path = INFER / f"{name}_io.npz"
    if not path.exists():  # a legacy export of the same model records the same outputs
        path = INFER / f"{name.removesuffix('_legacy')}_io.npz"
    data = np.load(path)
    ins = [data[k] for k in data.files if not k.startswith("out")]
    outs = [data[k] for k in sorted((k for k in data.files if k.startswith("out")), key=lambda k: int(k[3:]))]
    return ins, outs


@pytest.mark.parametrize("model", ["mlp.json", "mlp_legacy.pdmodel", "lenet.json", "lenet_legacy.pdmodel"])
def test_handle_style_runs_paddles_models_to_paddles_outputs(model: str) -> None:
    stem = model.split(".")[0]
    ins, want = _io(stem)
    pred = create_predictor(Config(str(INFER / model), str(INFER / f"{stem}.pdiparams")))
    names = pred.get_input_names()
    assert len(names) == len(ins)
    for name, x in zip(names, ins):
        h = pred.get_input_handle(name)
        h.reshape(list(x.shape))
        h.copy_from_cpu(x)
    assert pred.run() is True
    got = [pred.get_output_handle(n).copy_to_cpu() for n in pred.get_output_names()]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    out = pred.get_output_handle(pred.get_output_names()[0])
    assert out.shape() == list(want[0].shape) and out.type() == DataType.FLOAT32


def test_list_style_and_a_model_directory(tmp_path: Path) -> None:
    ins, want = _io("mlp")
    shutil.copy(INFER / "mlp.json", tmp_path / "inference.json")
    shutil.copy(INFER / "mlp.pdiparams", tmp_path / "inference.pdiparams")
    pred = create_predictor(Config(str(tmp_path)))
    got = pred.run([paddle.to_tensor(ins[0])])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-6)
    twin = pred.clone()
    np.testing.assert_allclose(twin.run(ins)[0], want[0], rtol=1e-5, atol=1e-6)


def test_a_predictor_keeps_its_weights_out_of_the_global_scope() -> None:
    before = set(paddle.static.global_scope().keys()) if hasattr(paddle.static.global_scope(), "keys") else set()
    create_predictor(Config(str(INFER / "mlp.json"), str(INFER / "mlp.pdiparams")))
    after = set(paddle.static.global_scope().keys()) if hasattr(paddle.static.global_scope(), "keys") else set()
    assert after == before


def test_clear_errors() -> None:
    pred = create_predictor(Config(str(INFER / "mlp.json"), str(INFER / "mlp.pdiparams")))
    with pytest.raises(ValueError, match="no input 'nope'"):
        pred.get_input_handle("nope")
    with pytest.raises(RuntimeError, match="no value for the inputs"):
        pred.run()
    with pytest.raises(RuntimeError, match="has no value yet"):
        pred.get_output_handle(pred.get_output_names()[0]).copy_to_cpu()
    with pytest.raises(ValueError, match="has 1 inputs"):
        pred.run([np.zeros(3), np.zeros(3)])
    with pytest.raises(ValueError, match="no model file"):
        create_predictor(Config("/nonexistent/model.json", "/nonexistent/model.pdiparams"))
    with pytest.raises(RuntimeError, match="runs on the CPU"):
        Config().enable_use_gpu(100, 0)
    config = Config(str(INFER / "mlp.json"), str(INFER / "mlp.pdiparams"))
    config.enable_mkldnn()  # an engine switch: recorded, no effect
    config.switch_ir_optim(True)
    assert "enable_mkldnn" in config.options and create_predictor(config).get_input_names()
