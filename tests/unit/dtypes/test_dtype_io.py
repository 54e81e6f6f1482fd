"""The low-precision and small integer dtypes through save/load (eager `paddle.save`
/ `paddle.load`, static `paddle.static.save` / `load`), `paddle.jit.to_static` and a
static program's bfloat16 feed (its bits as uint16, as Paddle's)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pullback as paddle
from pullback.dialects.bfloat16 import f32_to_bf16
from pullback.frontend import core


@pytest.mark.parametrize("dt", ["float16", "bfloat16", "uint8", "int8", "int16"])
def test_eager_save_load_keeps_dtype_and_bits(dt: str, tmp_path: Path) -> None:
    core.disable_static()
    t = paddle.to_tensor(np.arange(6).reshape(2, 3) * 1.25 if dt[0] in "fb" else np.arange(6).reshape(2, 3), dtype=dt)
    paddle.save({"t": t}, str(tmp_path / "s.pdparams"))
    back = paddle.load(str(tmp_path / "s.pdparams"))["t"]
    assert back.dtype == dt
    np.testing.assert_array_equal(back.numpy(), t.numpy())


def test_to_static_of_a_float16_layer() -> None:
    core.disable_static()
    paddle.seed(0)
    layer = paddle.nn.Sequential(paddle.nn.Linear(3, 4), paddle.nn.ReLU(), paddle.nn.Linear(4, 2))
    layer.to(dtype="float16")
    x = paddle.to_tensor(np.linspace(-1, 1, 12).reshape(4, 3), dtype="float16")
    want = layer(x)
    got = paddle.jit.to_static(layer)(x)
    assert got.dtype == "float16"
    np.testing.assert_array_equal(got.numpy(), want.numpy())


def test_static_bfloat16_program_save_load_and_feed(tmp_path: Path) -> None:
    paddle.enable_static()
    try:
        main, start = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, start):
            x = paddle.static.data("x", [None, 3], "bfloat16")
            out = paddle.static.nn.fc(x, 2)
        assert out.dtype == "bfloat16"
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(start)
        feed = {"x": f32_to_bf16(np.ones((2, 3)))}
        (before,) = exe.run(main, feed=feed, fetch_list=[out])
        paddle.static.save(main, str(tmp_path / "m"))
        exe.run(start)  # new random parameters
        paddle.static.load(main, str(tmp_path / "m"), exe)
        (after,) = exe.run(main, feed=feed, fetch_list=[out])
        assert after.dtype == np.uint16
        np.testing.assert_array_equal(after, before)
        with pytest.raises(ValueError, match="must be bfloat16 \\(its bits as uint16"):
            exe.run(main, feed={"x": np.ones((2, 3), np.float32)}, fetch_list=[out])
    finally:
        paddle.disable_static()
