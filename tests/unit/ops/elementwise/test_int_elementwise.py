"""Integer tensors in the unary elementwise ops (Paddle 3.x semantics): `abs`, `sign`,
`square` and `clip` keep the integer dtype (wrapping as C++ does: |INT_MIN| is
INT_MIN); the transcendental ops, `floor`/`ceil` and the composites built on them
autocast to float32; the others (`relu`, `round`, ...) refuse integers with the
same error as before.  Checked on the typing rule, the interpreter kernels against
numpy, the compiled backend against the interpreter, eager against static, and
gradients (integer values carry Paddle's truncated gradient in static programs)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from pullback.dialects import pd
from pullback.runtime.kernels import load_all
from pullback.testing import run_op
from xdsl.utils.exceptions import VerifyException

import pullback as paddle

load_all()

INTS = [np.int32, np.int64]

# Paddle 3.x: the kernels registered for int32/int64 that keep the dtype.
SAME = {pd.AbsOp: np.abs, pd.SignOp: np.sign, pd.SquareOp: lambda x: x * x}
# Paddle 3.x: integer inputs autocast to float32 (the API docs' "integer types are
# autocasted into float32"; exp/expm1/log/log1p have int-in-float-out kernels).
FLOAT32 = {
    pd.SqrtOp: np.sqrt, pd.ExpOp: np.exp, pd.LogOp: np.log, pd.Log1pOp: np.log1p,
    pd.Expm1Op: np.expm1, pd.SinOp: np.sin, pd.CosOp: np.cos, pd.TanOp: np.tan,
    pd.AsinOp: np.arcsin, pd.AcosOp: np.arccos, pd.AtanOp: np.arctan, pd.SinhOp: np.sinh,
    pd.CoshOp: np.cosh, pd.TanhOp: np.tanh, pd.SigmoidOp: lambda x: 1 / (1 + np.exp(-x)),
    pd.FloorOp: np.floor, pd.CeilOp: np.ceil,
}
# Paddle registers these for float types only.
REJECT = [pd.ReluOp, pd.RoundOp, pd.GeluOp]


def edge_ints(dtype: Any) -> np.ndarray:
    """Small values, zero, and the dtype's extremes (INT_MIN included)."""
    info = np.iinfo(dtype)
    return np.array([[info.min, -7, -1, 0], [1, 3, 12, info.max]], dtype=dtype)


def small_ints(dtype: Any) -> np.ndarray:
    """Values where every float32-autocast op is finite somewhere and defined."""
    return np.array([[-3, -1, 0], [1, 2, 5]], dtype=dtype)


# ================================================================ typing rule


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_int_input_fact_decides_the_result_type(dtype: str) -> None:
    elem = pd.dtype_from_name(dtype)
    for op_cls in (*SAME, pd.ClipOp, pd.PowOp, *FLOAT32, *REJECT):
        x = pd.DataOp.make("x", [2, 3], dtype).out
        props = {pd.ClipOp: {"min": -1.0, "max": 1.0}, pd.PowOp: {"factor": 3.0}}.get(op_cls, {})
        if op_cls in REJECT:
            assert op_cls.INT_INPUT == "reject"
            with pytest.raises(VerifyException, match="must be float32 or float64"):
                op_cls.make(x, **props)
            continue
        out = pd.elem_of(op_cls.make(x, **props).results[0].type)
        assert out == (pd.f32 if op_cls in FLOAT32 else elem), op_cls.name


def test_float_inputs_are_unchanged() -> None:
    for op_cls in (*SAME, *FLOAT32):
        x = pd.DataOp.make("x", [2], "float64").out
        assert pd.elem_of(op_cls.make(x).results[0].type) == pd.f64


# ============================================================ interpreter kernels


@pytest.mark.parametrize("dtype", INTS)
def test_same_dtype_kernels_wrap_like_numpy(dtype: Any) -> None:
    x = edge_ints(dtype)
    for op_cls, f in SAME.items():
        with np.errstate(over="ignore"):
            want = f(x)
        got = run_op(op_cls, x)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want, err_msg=op_cls.name)
    assert run_op(pd.AbsOp, x)[0, 0] == np.iinfo(dtype).min  # |INT_MIN| wraps


@pytest.mark.parametrize("dtype", INTS)
def test_clip_truncates_and_saturates_its_bounds(dtype: Any) -> None:
    x = edge_ints(dtype)
    np.testing.assert_array_equal(run_op(pd.ClipOp, x, min=-2.5, max=3.9), np.clip(x, -2, 3))
    # paddle.clip's absent bounds (+-DBL_MAX) saturate to the dtype's extremes.
    big = float(np.finfo(np.float64).max)
    np.testing.assert_array_equal(run_op(pd.ClipOp, x, min=0.0, max=big), np.clip(x, 0, None))
    np.testing.assert_array_equal(run_op(pd.ClipOp, x, min=-big, max=big), x)


@pytest.mark.parametrize("dtype", INTS)
def test_float32_autocast_kernels(dtype: Any) -> None:
    x = small_ints(dtype)
    for op_cls, f in FLOAT32.items():
        got = run_op(op_cls, x)
        assert got.dtype == np.float32
        with np.errstate(all="ignore"):
            want = f(x.astype(np.float32))
        np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True, err_msg=op_cls.name)


@pytest.mark.parametrize("dtype", INTS)
def test_int_pow_is_the_double_power_truncated_and_saturated(dtype: Any) -> None:
    x = np.array([-2, 3, 0, 5, 100000], dtype)
    info = np.iinfo(dtype)
    np.testing.assert_array_equal(run_op(pd.PowOp, x, factor=2.0), x * x)  # wraps
    np.testing.assert_array_equal(run_op(pd.PowOp, x, factor=3.0)[:4], [-8, 27, 0, 125])
    # sqrt(-2) is NaN -> 0; 0 ** -1 is inf -> the dtype's maximum.
    np.testing.assert_array_equal(run_op(pd.PowOp, x, factor=0.5)[:4], [0, 1, 0, 2])
    np.testing.assert_array_equal(run_op(pd.PowOp, x, factor=-1.0), [0, 0, info.max, 0, 0])


@pytest.mark.parametrize("dtype", INTS)
def test_int_elementwise_pow(dtype: Any) -> None:
    x = np.array([-2, 3, 0, 5, 7], dtype)
    y = np.array([2, 3, -1, 0, 2], dtype)
    got = run_op(pd.ElementwisePowOp, x, y)
    np.testing.assert_array_equal(got, [4, 27, np.iinfo(dtype).max, 1, 49])  # 0 ** -1 saturates


# ====================================================== frontend, both backends


def _static_outputs(dtype: str, build: Callable[[Any], list[Any]], xv: np.ndarray,
                    backend: str) -> list[np.ndarray]:
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [None, xv.shape[1]], dtype)
            outs = build(x)
        exe = paddle.static.Executor(paddle.CPUPlace(), backend=backend)
        return exe.run(main, feed={"x": xv}, fetch_list=outs)
    finally:
        paddle.disable_static()


def _program(x: Any) -> list[Any]:
    """Every accepted op on x, plus a fused chain mixing integer and float results."""
    return [
        paddle.abs(x), paddle.sign(x), paddle.square(x), paddle.clip(x, -2.5, 7),
        paddle.clip(x, min=0), x.abs(), paddle.abs(x) + x,
        paddle.sqrt(paddle.abs(x)), paddle.sin(x), paddle.floor(x), paddle.ceil(x),
        paddle.exp(paddle.clip(x, -3, 3)), paddle.tanh(x), paddle.log2(paddle.abs(x)),
        paddle.rsqrt(paddle.abs(x)), paddle.sign(x) * paddle.square(paddle.clip(x, -5, 5)),
        paddle.pow(x, 2), paddle.pow(paddle.clip(x, -9, 9), 3), paddle.pow(x, 0.5), x ** 2,
        paddle.pow(paddle.clip(x, -3, 3), paddle.clip(x, -1, 4)),
    ]


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_compiled_backend_equals_interpreter(dtype: str) -> None:
    xv = edge_ints(dtype)
    interp = _static_outputs(dtype, _program, xv, "interpreter")
    compiled = _static_outputs(dtype, _program, xv, "compiled")
    for i, (a, b) in enumerate(zip(interp, compiled)):
        assert a.dtype == b.dtype, i
        if a.dtype.kind == "i":
            np.testing.assert_array_equal(a, b, err_msg=str(i))
        else:
            np.testing.assert_allclose(a, b, rtol=1e-6, equal_nan=True, err_msg=str(i))
    assert interp[0].dtype == np.dtype(dtype) and interp[7].dtype == np.float32


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_eager_equals_static(dtype: str) -> None:
    xv = edge_ints(dtype)
    static = _static_outputs(dtype, _program, xv, "interpreter")
    eager = [t.numpy() for t in _program(paddle.to_tensor(xv))]
    for i, (a, b) in enumerate(zip(static, eager)):
        assert a.dtype == b.dtype, i
        np.testing.assert_allclose(a, b, rtol=1e-6, equal_nan=True, err_msg=str(i))


def test_float_only_ops_still_refuse_integers() -> None:
    x = paddle.to_tensor(np.array([1, -2], np.int32))
    for f in (paddle.nn.functional.relu, paddle.round, paddle.nn.functional.gelu):
        with pytest.raises(TypeError, match="must be float32 or float64, got int32"):
            f(x)
    with pytest.raises(TypeError, match="sigmoid: 'x' must be float32 or float64, got bool"):
        paddle.nn.functional.sigmoid(paddle.cast(x, "bool"))
    b = paddle.to_tensor(np.array([True, False]))
    with pytest.raises(TypeError, match="abs: 'x' must be float32 or float64, got bool"):
        paddle.abs(b)


# ===================================================================== gradients


def _grad_program(x: Any, ids: Any) -> tuple[Any, Any]:
    """`sum(x * abs(ids) + sin(cast(x, int32)) * x)`: the integer abs is off the
    differentiated path; the int path through `sin` carries a truncated gradient."""
    a = paddle.cast(paddle.abs(ids), "float32")
    s = paddle.sin(paddle.cast(x, "int32"))
    return (x * a + s * x).sum(), a


def test_gradient_does_not_flow_into_an_integer_abs() -> None:
    xv = np.array([-2.7, 1.5, 3.2], np.float32)
    iv = np.array([-4, 0, 9], np.int32)
    xi = np.trunc(xv)
    # d/dx: |ids| + sin(int(x)) + trunc(x * cos(int(x))) (the gradient reaching the
    # int32 value is cast to int32, as Paddle's cast gradient does).
    want_static = np.abs(iv) + np.sin(xi) + np.trunc(xv * np.cos(xi))
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [3], "float32")
            x.stop_gradient = False
            ids = paddle.static.data("ids", [3], "int32")
            loss, _ = _grad_program(x, ids)
            (gx,) = paddle.static.gradients([loss], [x])
        for backend in ("interpreter", "compiled"):
            exe = paddle.static.Executor(paddle.CPUPlace(), backend=backend)
            (got,) = exe.run(main, feed={"x": xv, "ids": iv}, fetch_list=[gx])
            np.testing.assert_allclose(got, want_static, rtol=1e-6, err_msg=backend)
    finally:
        paddle.disable_static()
    # Eager: the cast to int32 ends the gradient path (integer tensors stop it).
    x = paddle.to_tensor(xv, stop_gradient=False)
    loss, _ = _grad_program(x, paddle.to_tensor(iv))
    (g,) = paddle.grad([loss], [x])
    np.testing.assert_allclose(g.numpy(), np.abs(iv) + np.sin(xi), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_float_to_int_cast_saturates_on_both_backends(dtype: str) -> None:
    """NaN and out-of-range floats (an autocast op's gradient, say) convert the same
    way on every backend: NaN to 0, overflow to the dtype's extremes."""
    info = np.iinfo(dtype)
    xv = np.array([[np.nan, 1e30, -1e30, -2.7, 2.7]], np.float64)

    def build(x: Any) -> list[Any]:
        return [paddle.cast(x, dtype)]

    want = np.array([[0, info.max, info.min, -2, 2]], dtype)
    for backend in ("interpreter", "compiled"):
        (got,) = _static_outputs("float64", build, xv, backend)
        np.testing.assert_array_equal(got, want, err_msg=backend)
    np.testing.assert_array_equal(paddle.cast(paddle.to_tensor(xv), dtype).numpy(), want)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_paddle_clip_absent_integer_bounds(dtype: str) -> None:
    """`paddle.clip` on integers: an absent min is the dtype's minimum, an absent max
    Paddle's `INT32_MAX - 2**7` / `INT64_MAX - 2**39` (what its own test_clip_op
    expects), on both backends and in eager mode."""
    info = np.iinfo(dtype)
    # pd.clip's bounds are float64 attributes: int64's lands on 2**63 - 2**39, one
    # above Paddle's (whose Scalar attributes hold the int exactly).
    top = int(float(info.max - (2**7 if dtype == "int32" else 2**39)))
    xv = np.array([[info.min, -1, info.max]], dtype)
    want = np.array([[0, 0, top]], dtype)

    def build(x: Any) -> list[Any]:
        return [paddle.clip(x, min=0), paddle.clip(x)]

    for backend in ("interpreter", "compiled"):
        lower, both = _static_outputs(dtype, build, xv, backend)
        np.testing.assert_array_equal(lower, want, err_msg=backend)
        np.testing.assert_array_equal(both, [[info.min, -1, top]], err_msg=backend)
    np.testing.assert_array_equal(paddle.clip(paddle.to_tensor(xv), min=0).numpy(), want)
