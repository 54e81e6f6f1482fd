"""pullback's dtypes against facts read off PaddlePaddle 3.3.1 (`data/paddle_dtype_facts.json`,
made by `paddle_dtype_facts.py` beside this file): type promotion of tensor-tensor and
tensor-scalar operators, the dtype `to_tensor` keeps for numpy arrays, float to small
integer casts, uint8 arithmetic, float16 values and bfloat16 bits of rounded float32s,
in eager mode and in static programs on both backends."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import numpy as np
import pytest

import pullback as paddle
from pullback.dialects.pd.dtypes import promote_types
from pullback.frontend import core

FACTS = json.load(open(os.path.join(os.path.dirname(__file__), "data", "paddle_dtype_facts.json")))


@pytest.fixture(autouse=True)
def _eager() -> Iterator[None]:
    core.disable_static()
    yield
    core.disable_static()


def _paddle_result(pair: str) -> str | None:
    """Paddle's dtype of `a + b`; a dtype with itself is itself (Paddle 3.3.1's CPU has
    no bfloat16 `add` kernel: no promotion question)."""
    a, b = pair.split("+")
    return a if a == b else FACTS["tensor_plus_tensor"][pair]


def test_promotion_table_is_paddles() -> None:
    for pair in FACTS["tensor_plus_tensor"]:
        a, b = pair.split("+")
        assert promote_types(a, b) == _paddle_result(pair), pair


@pytest.mark.parametrize("pair", sorted(FACTS["tensor_plus_tensor"]))
def test_tensor_plus_tensor(pair: str) -> None:
    a, b = pair.split("+")
    want = _paddle_result(pair)
    x, y = paddle.ones([2], dtype=a), paddle.ones([2], dtype=b)
    if want is None:
        with pytest.raises(TypeError, match="must have the same dtype"):
            x + y
        return
    assert (x + y).dtype == want


def test_tensor_op_scalar() -> None:
    ops = {"+1": lambda t: t + 1, "+1.5": lambda t: t + 1.5, "/2": lambda t: t / 2, "*1.5": lambda t: t * 1.5}
    for key, want in FACTS["tensor_op_scalar"].items():
        label = next(k for k in ops if key.endswith(k))
        dt = key[: -len(label)]
        if want is None:
            continue
        assert ops[label](paddle.ones([2], dtype=dt)).dtype == want, key


def test_to_tensor_keeps_the_arrays_dtype() -> None:
    for np_dtype, want in FACTS["to_tensor_of_array"].items():
        t = paddle.to_tensor(np.array([1, 2], np_dtype))
        assert t.dtype == want, np_dtype
        assert t.numpy().dtype == np.dtype(np_dtype)
    with pytest.raises(TypeError, match="unsupported dtype uint32"):
        paddle.to_tensor(np.array([1], "uint32"))


def _static_run(fn, feeds: dict[str, np.ndarray], backend: str) -> list[np.ndarray]:
    """`fn(*data vars)`'s results in a static program run on `backend`."""
    paddle.enable_static()
    try:
        main, start = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, start):
            xs = [paddle.static.data(k, list(v.shape), dtype=str(_dtype_of(v))) for k, v in feeds.items()]
            outs = fn(*xs)
        exe = paddle.static.Executor(paddle.CPUPlace(), backend=backend)
        return exe.run(main, feed=feeds, fetch_list=list(outs))
    finally:
        paddle.disable_static()


def _dtype_of(a: np.ndarray) -> str:
    return {np.dtype("uint16"): "bfloat16"}.get(a.dtype, a.dtype.name)


BACKENDS = ["interpreter", "compiled"]


@pytest.mark.parametrize("backend", ["eager", *BACKENDS])
def test_float_to_small_int_casts_wrap_as_paddles(backend: str) -> None:
    src = np.array([-3.7, 300.0, 0.5, -0.5, 127.9, 255.5], np.float32)
    for dt, want in FACTS["cast_from_float32"].items():
        if backend == "eager":
            got = paddle.to_tensor(src).astype(dt).numpy()
        else:
            (got,) = _static_run(lambda x, dt=dt: [x.astype(dt)], {"x": src}, backend)
        assert got.dtype == np.dtype(dt)
        np.testing.assert_array_equal(got, want, err_msg=f"{dt} on {backend}")


@pytest.mark.parametrize("backend", ["eager", *BACKENDS])
def test_uint8_arithmetic_is_unsigned(backend: str) -> None:
    a = np.array([200, 3, 250, 7], np.uint8)
    b = np.array([7, 2, 10, 200], np.uint8)
    ops = {
        "add": lambda x, y: x + y, "sub": lambda x, y: x - y, "mul": lambda x, y: x * y,
        "floordiv": lambda x, y: x // y, "mod": lambda x, y: x % y, "gt": lambda x, y: x > y,
        "max": paddle.maximum, "min": paddle.minimum, "to_float32": lambda x, y: x.astype("float32"),
        "to_int8": lambda x, y: x.astype("int8"),
    }
    # Paddle's CPU has no uint8 kernel for some of them: numpy's unsigned arithmetic is the reference there.
    numpy_ref = {
        "sub": a - b, "mul": a * b, "mod": a % b, "max": np.maximum(a, b), "min": np.minimum(a, b),
    }
    for k, fn in ops.items():
        want = FACTS["uint8_ops"][k]
        want = numpy_ref[k] if want is None else np.array(want)
        if backend == "eager":
            got = fn(paddle.to_tensor(a), paddle.to_tensor(b)).numpy()
        else:
            (got,) = _static_run(lambda x, y, fn=fn: [fn(x, y)], {"a": a, "b": b}, backend)
        np.testing.assert_array_equal(got, want, err_msg=f"uint8 {k} on {backend}")
        if k not in ("gt", "to_float32", "to_int8"):
            assert got.dtype == np.uint8, k


@pytest.mark.parametrize("backend", ["eager", *BACKENDS])
def test_rounding_to_16_bit_floats(backend: str) -> None:
    v = np.array([1.0, 1.00390625, 1.01171875, 3.4e38, -2.5e-3, 65519.0, 70000.0], np.float32)
    if backend == "eager":
        bf, hf = (paddle.to_tensor(v).astype(d).numpy() for d in ("bfloat16", "float16"))
    else:
        bf, hf = _static_run(lambda x: [x.astype("bfloat16"), x.astype("float16")], {"x": v}, backend)
    assert bf.dtype == np.uint16 and hf.dtype == np.float16
    np.testing.assert_array_equal(bf, FACTS["bfloat16_bits"])
    np.testing.assert_array_equal(hf.astype(np.float64), FACTS["float16_values"])


def test_bfloat16_round_trip_of_every_value() -> None:
    """Every finite bfloat16 survives float32 and back, and float32 -> bfloat16 rounds
    to nearest even on both backends (all 65536 bit patterns, and their midpoints)."""
    from pullback.dialects.bfloat16 import bf16_to_f32, f32_to_bf16

    bits = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    f = bf16_to_f32(bits)
    finite = np.isfinite(f)
    np.testing.assert_array_equal(f32_to_bf16(f)[finite], bits[finite])
    mids = (bits.astype(np.uint32) << 16 | 0x8000).view(np.float32)[finite]
    want = f32_to_bf16(mids)
    even = (bits[finite] & 1) == 0
    np.testing.assert_array_equal(want[even], bits[finite][even])  # ties go to the even neighbour
    (got,) = _static_run(lambda x: [x.astype("bfloat16")], {"x": mids}, "compiled")
    np.testing.assert_array_equal(got, want)
    (back,) = _static_run(lambda x: [x.astype("float32")], {"x": bits[finite]}, "compiled")
    np.testing.assert_array_equal(back, f[finite])
    # A 0-d value gives a 0-d array (not a numpy scalar: callers set its flags).
    zero_d = f32_to_bf16(np.float32(1.5))
    assert isinstance(zero_d, np.ndarray) and zero_d.shape == () and int(zero_d) == 0x3FC0
    # NaNs stay NaNs with the quiet bit set (a signalling one included); infinities stay.
    special = np.array([0x7F800001, 0xFFC00000, 0x7FBFFFFF, 0x7F800000, 0xFF800000], np.uint32).view(np.float32)
    np.testing.assert_array_equal(f32_to_bf16(special), np.array([0x7FC0, 0xFFC0, 0x7FFF, 0x7F80, 0xFF80], np.uint16))


def test_unsupported_pairs_are_clear_errors() -> None:
    with pytest.raises(TypeError, match="Paddle promotes only between float dtypes"):
        paddle.to_tensor([1], dtype="uint8") + paddle.to_tensor([1], dtype="int8")
    with pytest.raises(TypeError, match="float8_e4m3fn is not supported"):
        paddle.to_tensor([1.0]).astype("float8_e4m3fn")


@pytest.mark.parametrize("dt", ["uint8", "int8", "int16", "float16", "bfloat16", "bool"])
def test_static_data_takes_every_dtype(dt: str) -> None:
    paddle.enable_static()
    try:
        with paddle.static.program_guard(paddle.static.Program(), paddle.static.Program()):
            x = paddle.static.data("img", [None, 4], dtype=dt)
            assert x.dtype == dt
    finally:
        paddle.disable_static()
