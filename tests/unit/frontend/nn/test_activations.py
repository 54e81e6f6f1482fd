"""Activation functions (paddle.nn.functional and their layers), composites of the
elementwise ops: relu6 ... glu (frontend/ops/activation.py), leaky_relu ... hardtanh
(frontend/ops/composite.py), maxout, rrelu, Softmax2D, SiLU: values against numpy
formulas (float32, float64), gradients against float64 finite differences, large
inputs that stay finite, prelu per channel, the layers, argument errors and static
mode.  (The elementwise ops themselves: tests/unit/ops/elementwise.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pullback as paddle
import pytest
from pullback.frontend import core
from pullback.testing import check_eager_grad

F = paddle.nn.functional
RNG = np.random.default_rng(3)


@pytest.fixture(autouse=True)
def eager() -> Any:
    core.disable_static()
    yield
    core.disable_static()




def softplus_np(x: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, x)


def sigmoid_np(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


# ------------------------------------------------ relu6 ... glu (ops/activation.py)


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
    ("silu", {}, lambda x: x * sigmoid_np(x)),
    ("swish", {}, lambda x: x * sigmoid_np(x)),
    ("glu", {}, lambda x: x[:, :2] * sigmoid_np(x[:, 2:])),
    ("glu", {"axis": 0}, lambda x: x[:1] * sigmoid_np(x[1:])),
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
        check_eager_grad(lambda t: fn(t, **kwargs), [XA], rtol=1e-6, atol=1e-8)


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
    check_eager_grad(lambda t: F.prelu(t, paddle.to_tensor(w), data_format=data_format), [x], rtol=1e-6, atol=1e-8)
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
    assert p._weight.shape == [4] and len(p.parameters()) == 1
    assert list(p.state_dict()) == ["_weight"]  # Paddle's name
    np.testing.assert_allclose(p._weight.numpy(), 0.1)
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
    np.testing.assert_allclose(got[2], XA[:, :2] * sigmoid_np(XA[:, 2:]), rtol=1e-12)
    np.testing.assert_allclose(got[3], np.clip(0.2 * XA + 0.5, 0, 1), rtol=1e-12)
    np.testing.assert_allclose(got[4], np.clip(XA, 0, 3), rtol=1e-12)


# ------------------------------------------ leaky_relu ... hardtanh (ops/composite.py)

# Away from the kinks at 0 so finite differences are meaningful.
X = np.array([-3.0, -1.2, -0.4, 0.3, 0.9, 2.5])

UNARY: list[tuple[str, Callable[..., object], dict, Callable[[np.ndarray], np.ndarray]]] = [
    ("leaky_relu", F.leaky_relu, {"negative_slope": 0.1}, lambda x: np.where(x > 0, x, 0.1 * x)),
    ("elu", F.elu, {"alpha": 1.5}, lambda x: np.where(x > 0, x, 1.5 * (np.exp(x) - 1))),
    ("softplus", F.softplus, {}, softplus_np),
    ("softplus_beta", F.softplus, {"beta": 2.0, "threshold": 3.0},
     lambda x: np.where(2 * x > 3, x, softplus_np(2 * x) / 2)),
    ("silu", F.silu, {}, lambda x: x * sigmoid_np(x)),
    ("swish", F.swish, {}, lambda x: x * sigmoid_np(x)),
    ("log_sigmoid", F.log_sigmoid, {}, lambda x: -softplus_np(-x)),
    ("hardtanh", F.hardtanh, {"min": -0.5, "max": 2.0}, lambda x: np.clip(x, -0.5, 2.0)),
]


@pytest.mark.parametrize("name,fn,kwargs,ref", UNARY, ids=[u[0] for u in UNARY])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_activation_values(name, fn, kwargs, ref, dtype):
    y = fn(paddle.to_tensor(X, dtype=dtype), **kwargs)
    assert y.dtype == dtype and y.shape == [6]
    np.testing.assert_allclose(y.numpy(), ref(X), rtol=1e-5 if dtype == "float32" else 1e-12, atol=1e-7)


@pytest.mark.parametrize("name,fn,kwargs,ref", UNARY, ids=[u[0] for u in UNARY])
def test_activation_gradients(name, fn, kwargs, ref):
    check_eager_grad(lambda t: fn(t, **kwargs), [X.reshape(2, 3)], rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn", [F.softplus, F.log_sigmoid, F.elu, F.silu])
def test_activations_stay_finite_for_large_inputs(fn):
    x = paddle.to_tensor([-1000.0, -80.0, 0.0, 80.0, 1000.0], stop_gradient=False)
    y = fn(x)
    (g,) = paddle.grad(y.sum(), x)
    assert np.isfinite(y.numpy()).all() and np.isfinite(g.numpy()).all()


def test_softplus_gradient_at_zero_is_one_half():
    # The logsumexp form has no kink: d/dx softplus(0) = sigmoid(0).
    x = paddle.to_tensor([0.0], dtype="float64", stop_gradient=False)
    (g,) = paddle.grad(F.softplus(x).sum(), x)
    assert g.numpy()[0] == pytest.approx(0.5)


# ------------------------------------------------------ maxout, rrelu, Softmax2D, SiLU


def test_maxout_rrelu_softmax2d_silu():
    x = RNG.standard_normal((2, 6, 3, 2))
    want = x.reshape(2, 3, 2, 3, 2).max(2)
    np.testing.assert_array_equal(F.maxout(paddle.to_tensor(x), 2).numpy(), want)
    np.testing.assert_array_equal(paddle.nn.Maxout(2, axis=-1)(paddle.to_tensor(x.transpose(0, 2, 3, 1))).numpy(),
                                  want.transpose(0, 2, 3, 1))
    check_eager_grad(lambda t: F.maxout(t, 3), [x[:1, :, :1]])
    with pytest.raises(ValueError, match="Attr\\(axis\\) should be 1"):
        F.maxout(paddle.to_tensor(x), 2, axis=2)
    y = F.rrelu(paddle.to_tensor(x), 0.1, 0.3, training=False).numpy()
    np.testing.assert_allclose(y, np.where(x >= 0, x, 0.2 * x), rtol=1e-12)
    z = F.rrelu(paddle.to_tensor(x), 0.1, 0.3).numpy()
    ratio = z[x < 0] / x[x < 0]
    assert (ratio >= 0.1).all() and (ratio <= 0.3).all() and ratio.std() > 0
    np.testing.assert_array_equal(z[x >= 0], x[x >= 0])
    layer = paddle.nn.RReLU(0.1, 0.3)
    layer.eval()
    np.testing.assert_allclose(layer(paddle.to_tensor(x)).numpy(), y)
    with pytest.raises(ValueError, match="upper value must be greater than lower"):
        F.rrelu(paddle.to_tensor(x), 0.5, 0.2)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(paddle.nn.Softmax2D()(paddle.to_tensor(x)).numpy(), e / e.sum(1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(paddle.nn.SiLU()(paddle.to_tensor(x)).numpy(), x / (1 + np.exp(-x)), rtol=1e-12)
