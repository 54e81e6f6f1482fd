"""Elementwise math ops (sin ... round) and the composite activations (relu6 ... glu):
interpreter kernels against numpy (float32, float64), VJP rules against float64
finite differences to second order, zero gradients of the rounding ops, the Paddle
spellings (`paddle.X`, `Tensor.X`, `fluid.layers.X`, `F.X`, `nn.X`) eager and static,
and argument errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pullback as paddle
import pytest
from pullback.dialects import pd
from pullback.frontend import core
from pullback.passes.vjp import NON_DIFFERENTIABLE
from pullback.runtime.kernels import load_all
from pullback.testing import check_vjp, fd_grad, input_range, run_op

load_all()
F = paddle.nn.functional
RNG = np.random.default_rng(3)


@pytest.fixture(autouse=True)
def eager() -> Any:
    core.disable_static()
    yield
    core.disable_static()


def check_grad(fn: Callable[..., Any], x: np.ndarray, rtol: float = 1e-6, atol: float = 1e-8) -> None:
    """paddle.grad of sum(fn(x) * P) equals finite differences (float64, eager)."""
    proj = RNG.uniform(0.5, 1.5, np.asarray(fn(paddle.to_tensor(x))).shape)

    def scalar(a: np.ndarray) -> float:
        with paddle.no_grad():
            return float((np.asarray(fn(paddle.to_tensor(a))) * proj).sum())

    t = paddle.to_tensor(x, stop_gradient=False)
    (g,) = paddle.grad((fn(t) * paddle.to_tensor(proj)).sum(), [t])
    np.testing.assert_allclose(g.numpy(), fd_grad(scalar, x), rtol=rtol, atol=atol)


# ------------------------------------------------------------------ math ops

def _round_away(x: np.ndarray) -> np.ndarray:
    return np.copysign(np.floor(np.abs(x) + 0.5), x)


# (op, numpy reference, bounds): inputs are drawn from the bounds narrowed into the
# op's declared domain (`input_range`); tan's bounds keep float32 tan accurate to 1e-6.
MATH_OPS: list[tuple[type[pd.PdOp], Callable[[np.ndarray], np.ndarray], tuple[float, float]]] = [
    (pd.SinOp, np.sin, (-3, 3)),
    (pd.CosOp, np.cos, (-3, 3)),
    (pd.TanOp, np.tan, (-1.2, 1.2)),
    (pd.AsinOp, np.arcsin, (-3, 3)),
    (pd.AcosOp, np.arccos, (-3, 3)),
    (pd.AtanOp, np.arctan, (-3, 3)),
    (pd.SinhOp, np.sinh, (-2, 2)),
    (pd.CoshOp, np.cosh, (-2, 2)),
    (pd.Log1pOp, lambda x: np.log(1 + x), (-3, 3)),
    (pd.Expm1Op, lambda x: np.exp(x) - 1, (-2, 2)),
    (pd.FloorOp, np.floor, (-3, 3)),
    (pd.CeilOp, np.ceil, (-3, 3)),
    (pd.RoundOp, _round_away, (-3, 3)),
]
IDS = [c[0].name for c in MATH_OPS]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op_cls,ref,bounds", MATH_OPS, ids=IDS)
def test_math_kernels_match_numpy(op_cls, ref, bounds, dtype):
    x = RNG.uniform(*input_range(op_cls, lo=bounds[0], hi=bounds[1]), (3, 4)).astype(dtype)
    got = run_op(op_cls, x, dynamic=True)
    assert got.dtype == dtype
    tol = 1e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got, ref(x.astype(np.float64)), rtol=tol, atol=tol)


def test_round_is_half_away_from_zero():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999])
    np.testing.assert_array_equal(run_op(pd.RoundOp, x), [-3, -2, -1, 1, 2, 3, 0])
    np.testing.assert_array_equal(paddle.round(paddle.to_tensor(x)).numpy(), [-3, -2, -1, 1, 2, 3, 0])


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic_batch"])
@pytest.mark.parametrize("op_cls,ref,bounds", [c for c in MATH_OPS if c[0] not in
                                               (pd.FloorOp, pd.CeilOp, pd.RoundOp)],
                         ids=IDS[:10])
def test_math_vjp_first_and_second_order(op_cls, ref, bounds, dynamic):
    x = RNG.uniform(*input_range(op_cls, lo=bounds[0], hi=bounds[1]), (3, 4))
    check_vjp(op_cls, [x], order=2, dynamic_batch=dynamic)


@pytest.mark.parametrize("op_cls", [pd.FloorOp, pd.CeilOp, pd.RoundOp])
def test_rounding_ops_have_zero_gradient(op_cls):
    assert op_cls in NON_DIFFERENTIABLE
    x = RNG.uniform(0.1, 0.4, (2, 3)) + np.arange(3)  # away from the jumps
    check_vjp(op_cls, [x])
    fn = {pd.FloorOp: paddle.floor, pd.CeilOp: paddle.ceil, pd.RoundOp: paddle.round}[op_cls]
    t = paddle.to_tensor(x, stop_gradient=False)
    (g,) = paddle.grad((fn(t) * t).sum(), [t])
    np.testing.assert_allclose(g.numpy(), fn(paddle.to_tensor(x)).numpy())


FRONTEND_MATH: list[tuple[str, Callable[[np.ndarray], np.ndarray], tuple[float, float]]] = [
    ("sin", np.sin, (-3, 3)), ("cos", np.cos, (-3, 3)), ("tan", np.tan, (-1, 1)),
    ("asin", np.arcsin, (-3, 3)), ("acos", np.arccos, (-3, 3)),
    ("atan", np.arctan, (-3, 3)), ("sinh", np.sinh, (-2, 2)), ("cosh", np.cosh, (-2, 2)),
    ("log1p", np.log1p, (-3, 3)), ("expm1", np.expm1, (-2, 2)),
    ("log2", np.log2, (-3, 5)), ("log10", np.log10, (-3, 5)),
    # reciprocal: positive values (1/x is finite for any x != 0; the test keeps to one sign)
    ("rsqrt", lambda x: 1 / np.sqrt(x), (-3, 5)), ("reciprocal", lambda x: 1 / x, (0.2, 5)),
    ("floor", np.floor, (-3, 3)), ("ceil", np.ceil, (-3, 3)), ("round", _round_away, (-3, 3)),
]
# The op whose declared input domain narrows a frontend function's bounds.
FRONTEND_DOMAIN: dict[str, type[pd.PdOp]] = {
    "tan": pd.TanOp, "asin": pd.AsinOp, "acos": pd.AcosOp, "log1p": pd.Log1pOp,
    "log2": pd.LogOp, "log10": pd.LogOp, "rsqrt": pd.SqrtOp,
}


@pytest.mark.parametrize("name,ref,bounds", FRONTEND_MATH, ids=[c[0] for c in FRONTEND_MATH])
def test_math_frontend_spellings_values_and_gradients(name, ref, bounds):
    ops = [FRONTEND_DOMAIN[name]] if name in FRONTEND_DOMAIN else []
    x = RNG.uniform(*input_range(*ops, lo=bounds[0], hi=bounds[1]), (2, 3))
    fn = getattr(paddle, name)
    np.testing.assert_allclose(fn(paddle.to_tensor(x)).numpy(), ref(x), rtol=1e-12)
    np.testing.assert_allclose(getattr(paddle.to_tensor(x), name)().numpy(), ref(x), rtol=1e-12)
    assert fn(paddle.to_tensor(x, dtype="float32")).dtype == "float32"
    if name not in ("floor", "ceil", "round"):
        check_grad(fn, x)
    # Static mode: the same function builds a program; the fluid spelling exists too.
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        v = paddle.static.data("x", [None, 3], "float64")
        out = getattr(paddle.fluid.layers, name)(v)
        exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
        (got,) = exe.run(main, feed={"x": x}, fetch_list=[out])
    np.testing.assert_allclose(got, ref(x), rtol=1e-12)


def test_round_decimals_and_errors():
    x = paddle.to_tensor([1.2345, -2.5678])
    np.testing.assert_allclose(paddle.round(x, decimals=2).numpy(), [1.23, -2.57], rtol=1e-6)
    with pytest.raises(TypeError, match="round: 'x' must be float32 or float64, got int64"):
        paddle.round(paddle.to_tensor([1, 2]))  # Paddle's round has float kernels only
    with pytest.raises(TypeError, match="decimals"):
        paddle.round(x, decimals=1.5)


# ---------------------------------------------------------------- activations

def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


_SELU_S, _SELU_A = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717
ACTS: list[tuple[str, dict, Callable[[np.ndarray], np.ndarray]]] = [
    ("relu6", {}, lambda x: np.minimum(np.maximum(x, 0), 6)),
    ("hardsigmoid", {}, lambda x: np.clip(x * 0.1666667 + 0.5, 0, 1)),
    ("hardsigmoid", {"slope": 0.2, "offset": 0.4}, lambda x: np.clip(x * 0.2 + 0.4, 0, 1)),
    ("hardswish", {}, lambda x: x * np.clip(x + 3, 0, 6) / 6),
    ("mish", {}, lambda x: x * np.tanh(np.log1p(np.exp(x)))),
    ("selu", {}, lambda x: _SELU_S * np.where(x > 0, x, _SELU_A * (np.exp(x) - 1))),
    ("selu", {"scale": 1.5, "alpha": 2.0}, lambda x: 1.5 * np.where(x > 0, x, 2.0 * (np.exp(x) - 1))),
    ("celu", {"alpha": 1.5}, lambda x: np.maximum(x, 0) + np.minimum(0, 1.5 * (np.exp(x / 1.5) - 1))),
    ("softsign", {}, lambda x: x / (1 + np.abs(x))),
    ("tanhshrink", {}, lambda x: x - np.tanh(x)),
    ("hardshrink", {"threshold": 0.6}, lambda x: np.where(np.abs(x) > 0.6, x, 0)),
    ("softshrink", {"threshold": 0.6}, lambda x: np.where(x > 0.6, x - 0.6, np.where(x < -0.6, x + 0.6, 0))),
    ("thresholded_relu", {"threshold": 0.5}, lambda x: np.where(x > 0.5, x, 0)),
    ("silu", {}, lambda x: x * _sigmoid(x)),
    ("swish", {}, lambda x: x * _sigmoid(x)),
    ("glu", {}, lambda x: x[:, :2] * _sigmoid(x[:, 2:])),
    ("glu", {"axis": 0}, lambda x: x[:1] * _sigmoid(x[1:])),
]
# Away from every kink (0, +-0.5, +-0.6, +-3, 6) so finite differences are meaningful.
XA = np.array([[-4.1, -2.2, -0.85, -0.3], [0.2, 0.55, 1.7, 7.2]])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs,ref", ACTS, ids=[f"{a[0]}{a[1] or ''}" for a in ACTS])
def test_activation_values_and_gradients(name, kwargs, ref, dtype):
    fn = getattr(F, name)
    y = fn(paddle.to_tensor(XA, dtype=dtype), **kwargs)
    assert y.dtype == dtype
    np.testing.assert_allclose(y.numpy(), ref(XA), rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-7)
    if dtype == "float64":
        check_grad(lambda t: fn(t, **kwargs), XA)


def test_mish_and_selu_stay_finite_for_large_inputs():
    x = paddle.to_tensor([-1000.0, -30.0, 0.5, 30.0, 1000.0], stop_gradient=False)
    for fn in (F.mish, F.selu, F.celu):
        (g,) = paddle.grad(fn(x).sum(), x)
        assert np.isfinite(fn(x).numpy()).all() and np.isfinite(g.numpy()).all()
    np.testing.assert_allclose(F.mish(x).numpy()[-2:], [30.0, 1000.0], rtol=1e-6)


@pytest.mark.parametrize("data_format,shape,axis", [("NCHW", (2, 3, 2, 2), 1), ("NHWC", (2, 2, 2, 3), 3),
                                                     ("NCL", (2, 3, 4), 1)])
def test_prelu_per_channel_and_shared(data_format, shape, axis):
    x = RNG.standard_normal(shape)
    x[np.abs(x) < 0.05] = 0.3
    w = np.array([0.1, 0.2, 0.3])
    wb = w.reshape([3 if i == axis else 1 for i in range(len(shape))])
    got = F.prelu(paddle.to_tensor(x), paddle.to_tensor(w), data_format=data_format)
    np.testing.assert_allclose(got.numpy(), np.where(x > 0, x, wb * x), rtol=1e-12)
    shared = F.prelu(paddle.to_tensor(x), paddle.to_tensor([0.25], dtype="float64"), data_format=data_format)
    np.testing.assert_allclose(shared.numpy(), np.where(x > 0, x, 0.25 * x), rtol=1e-12)
    check_grad(lambda t: F.prelu(t, paddle.to_tensor(w), data_format=data_format), x)
    # and the gradient with respect to the weight
    wt = paddle.to_tensor(w, stop_gradient=False)
    (gw,) = paddle.grad(F.prelu(paddle.to_tensor(x), wt, data_format=data_format).sum(), [wt])
    red = tuple(i for i in range(len(shape)) if i != axis)
    np.testing.assert_allclose(gw.numpy(), np.where(x > 0, 0, x).sum(axis=red), rtol=1e-12)


def test_activation_layers():
    x = paddle.to_tensor(XA)
    for layer, name, kwargs in [
        (paddle.nn.Silu(), "silu", {}), (paddle.nn.Swish(), "swish", {}), (paddle.nn.Mish(), "mish", {}),
        (paddle.nn.Hardswish(), "hardswish", {}), (paddle.nn.Hardsigmoid(), "hardsigmoid", {}),
        (paddle.nn.ReLU6(), "relu6", {}), (paddle.nn.SELU(), "selu", {}),
        (paddle.nn.CELU(2.0), "celu", {"alpha": 2.0}), (paddle.nn.GLU(axis=0), "glu", {"axis": 0}),
        (paddle.nn.Softsign(), "softsign", {}), (paddle.nn.Tanhshrink(), "tanhshrink", {}),
        (paddle.nn.Hardshrink(0.6), "hardshrink", {"threshold": 0.6}),
        (paddle.nn.Softshrink(), "softshrink", {}), (paddle.nn.ELU(0.5), "elu", {"alpha": 0.5}),
        (paddle.nn.LogSigmoid(), "log_sigmoid", {}), (paddle.nn.Softplus(), "softplus", {}),
    ]:
        np.testing.assert_array_equal(layer(x).numpy(), getattr(F, name)(x, **kwargs).numpy())
    with pytest.raises(TypeError, match="unexpected keyword"):
        paddle.nn.CELU(beta=1.0)
    p = paddle.nn.PReLU(num_parameters=4, init=0.1)
    assert p.weight.shape == [4] and len(p.parameters()) == 1
    np.testing.assert_allclose(p.weight.numpy(), 0.1)
    out = p(paddle.to_tensor(XA.astype("float32")))
    np.testing.assert_allclose(out.numpy(), np.where(XA > 0, XA, 0.1 * XA), rtol=1e-6)


def test_activation_argument_errors():
    x = paddle.to_tensor(XA)
    with pytest.raises(ValueError, match="glu: the size of axis 1 must be even"):
        F.glu(paddle.to_tensor(np.zeros((2, 3))), axis=1)
    with pytest.raises(ValueError, match="prelu: weight has 2 elements but x has 4 channels"):
        F.prelu(paddle.to_tensor(np.zeros((2, 4))), paddle.to_tensor(np.array([0.1, 0.2])))
    with pytest.raises(ValueError, match="selu: scale must be greater than 1.0"):
        F.selu(x, scale=0.5)
    with pytest.raises(TypeError, match="relu6: 'x' must be float32 or float64"):
        F.relu6(paddle.to_tensor([1, 2]))


def test_activations_in_static_mode():
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        v = paddle.static.data("x", [None, 4], "float64")
        outs = [F.mish(v), F.hardswish(v), F.glu(v), paddle.fluid.layers.hard_sigmoid(v),
                paddle.fluid.layers.relu6(v, threshold=3.0)]
        exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
        got = exe.run(main, feed={"x": XA}, fetch_list=outs)
    np.testing.assert_allclose(got[0], XA * np.tanh(np.log1p(np.exp(XA))), rtol=1e-12)
    np.testing.assert_allclose(got[1], XA * np.clip(XA + 3, 0, 6) / 6, rtol=1e-12)
    np.testing.assert_allclose(got[2], XA[:, :2] * _sigmoid(XA[:, 2:]), rtol=1e-12)
    np.testing.assert_allclose(got[3], np.clip(0.2 * XA + 0.5, 0, 1), rtol=1e-12)
    np.testing.assert_allclose(got[4], np.clip(XA, 0, 3), rtol=1e-12)
