"""Ports of PaddlePaddle's own AMP and dtype unit tests that use the public API,
rewritten for pytest (PaddlePaddle/Paddle, Apache-2.0).  Each test names its source;
where Paddle's test skips on a CPU (its AMP needs a GPU), pullback, which computes in
float16/bfloat16 on a CPU, runs it, with the GPU's expected results.

* `test/amp/test_is_autocast_enabled.py`: `is_autocast_enabled` in and out of
  (nested) `auto_cast`, eager and static.
* `test/amp/test_get_autocast_dtype.py`: `get_autocast_dtype` (float16 outside any
  `auto_cast`, the innermost one's dtype inside), eager and static.
* `test/amp/test_amp_list.py`: the default O2 black list, a custom white list moving
  `elementwise_add` to float16 while `mean` and `log` stay float32, and
  `AutoMixedPrecisionLists` with a custom white list.
* `test/amp/test_amp_api.py` (GradScaler state): `state_dict`/`load_state_dict` of a
  scaler, and `decorate` rejecting a level other than O1/O2.
* `test/legacy_test/test_set_default_dtype.py` / `test_get_default_dtype.py`: the
  default dtype's values and its effect on `to_tensor`.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

import pullback as paddle
from pullback.frontend import core


@pytest.fixture(params=["eager", "static"])
def mode(request: pytest.FixtureRequest) -> Iterator[str]:
    if request.param == "static":
        paddle.enable_static()
    yield request.param
    paddle.disable_static()
    paddle.set_default_dtype("float32")


def test_is_autocast_enabled_nests(mode: str) -> None:
    assert not paddle.is_autocast_enabled() and not paddle.amp.is_autocast_enabled()
    with paddle.amp.auto_cast(True):
        assert paddle.is_autocast_enabled() and paddle.amp.is_autocast_enabled("cpu")
        with paddle.amp.auto_cast(False):
            assert not paddle.amp.is_autocast_enabled()
        assert paddle.amp.is_autocast_enabled()
    with paddle.amp.auto_cast(False):
        assert not paddle.amp.is_autocast_enabled()
    assert not paddle.amp.is_autocast_enabled()


def test_get_autocast_dtype_nests(mode: str) -> None:
    def check(want: str) -> None:
        for f in (paddle.get_autocast_dtype, paddle.amp.get_autocast_dtype, paddle.amp.get_autocast_cpu_dtype,
                  paddle.amp.get_autocast_gpu_dtype):
            assert f() == want
        assert paddle.amp.get_autocast_dtype("cpu") == want

    check("float16")
    with paddle.amp.auto_cast(True, dtype="bfloat16"):
        check("bfloat16")
        with paddle.amp.auto_cast(True, dtype="float16"):
            check("float16")
        check("bfloat16")
    check("float16")


def test_amp_lists_and_a_custom_white_list() -> None:
    core.disable_static()
    default_black = ["linear_interp_v2", "nearest_interp_v2", "bilinear_interp_v2", "bicubic_interp_v2",
                     "trilinear_interp_v2"]
    assert set(default_black) <= paddle.amp.black_list()["float16"]["O2"]
    white = paddle.amp.white_list()
    for op in ("log", "elementwise_add"):
        assert op not in white["float16"]["O1"]
    with paddle.amp.auto_cast(custom_white_list={"elementwise_add"}):
        out1 = paddle.rand([2, 3]) + paddle.rand([2, 3])
        out2 = out1.mean()
        out3 = paddle.log(out2)
    assert out1.dtype == paddle.float16 and out2.dtype == paddle.float32 and out3.dtype == paddle.float32
    lists = paddle.static.amp.AutoMixedPrecisionLists(custom_white_list=["lookup_table", "lookup_table_v2"])
    assert set(default_black) <= lists.black_list
    assert "lookup_table" in lists.white_list and "lookup_table" not in lists.black_list


def test_grad_scaler_state_dict_and_decorate_levels() -> None:
    core.disable_static()
    scaler = paddle.amp.GradScaler(init_loss_scaling=1024, incr_every_n_steps=1000, decr_every_n_nan_or_inf=2)
    state = scaler.state_dict()
    assert float(state["scale"][0]) == 1024 and state["incr_every_n_steps"] == 1000
    assert state["decr_every_n_nan_or_inf"] == 2 and state["incr_count"] == 0 and state["decr_count"] == 0
    other = paddle.amp.GradScaler()
    other.load_state_dict(state)
    assert other.state_dict()["decr_every_n_nan_or_inf"] == 2
    model = paddle.nn.Linear(2, 2)
    with pytest.raises(ValueError, match="level should be O1 or O2"):
        paddle.amp.decorate(model, level="O3")


def test_default_dtype_values_and_to_tensor() -> None:
    core.disable_static()
    for d in ("float64", "float32", "float16", "bfloat16"):
        paddle.set_default_dtype(d)
        assert paddle.get_default_dtype() == d
        assert paddle.to_tensor([1.0]).dtype == d
        assert paddle.to_tensor(np.array([1.0], np.float32)).dtype == "float32"
    paddle.set_default_dtype("float32")
    for bad in ("int32", "int64", "bool"):
        with pytest.raises(TypeError):
            paddle.set_default_dtype(bad)
