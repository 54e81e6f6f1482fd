"""Dtypes print as Paddle prints them and compare equal to their names."""

from __future__ import annotations

import numpy as np

import pullback as paddle


def test_dtype_prints_like_paddle_and_equals_its_name():
    x = paddle.to_tensor([1.0, 2.0])
    assert str(x.dtype) == "paddle.float32" and repr(paddle.int64) == "paddle.int64"
    assert x.dtype == "float32" and x.dtype == paddle.float32 and f"{x.dtype}" == "float32"
    assert np.dtype(x.dtype) == np.float32
    assert paddle.cast(x, paddle.int64).dtype == "int64"
    assert "dtype=float32," in repr(x)


def test_static_dtype_objects_never_leak_into_ir():
    paddle.enable_static()
    try:
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            v = paddle.static.data("v", [None, 2], paddle.float32)
            y = paddle.cast(v, paddle.float64)
        assert str(v.dtype) == "paddle.float32" and y.dtype == "float64"
        assert 'dtype = "float64"' in str(main) and "paddle." not in str(main)
    finally:
        paddle.disable_static()
