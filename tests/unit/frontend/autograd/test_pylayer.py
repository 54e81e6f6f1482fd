"""`paddle.autograd.PyLayer`: Python forward/backward as one node of the eager graph.
Gradients are checked against float64 central finite differences of the same
function written without the layer."""

from __future__ import annotations

import numpy as np
import pytest

import pullback as paddle
from pullback.autograd import PyLayer, PyLayerContext
from pullback.testing import fd_grad


@pytest.fixture(autouse=True)
def _eager():
    paddle.disable_static()
    yield


class CusTanh(PyLayer):
    """Paddle's documentation example: y = tanh(x), dy/dx = 1 - y^2."""

    @staticmethod
    def forward(ctx, x, func1=paddle.tanh, func2=paddle.square):
        ctx.func = func2
        y = func1(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, dy):
        (y,) = ctx.saved_tensor()
        return dy * (1 - ctx.func(y))


def _leaf(a: np.ndarray):
    t = paddle.to_tensor(a)
    t.stop_gradient = False
    return t


def test_documented_example_matches_finite_differences() -> None:
    x_np = np.random.default_rng(0).standard_normal((2, 3))
    x = _leaf(x_np)
    z = CusTanh.apply(x, func1=paddle.tanh)
    assert not z.stop_gradient and not z.is_leaf
    paddle.mean(z * z).backward()
    np.testing.assert_allclose(x.grad.numpy(), fd_grad(lambda v: np.mean(np.tanh(v) ** 2), x_np), rtol=1e-6)


def test_layers_between_recorded_ops_and_paddle_grad_of_an_interior_tensor() -> None:
    rng = np.random.default_rng(1)
    x_np, w_np = rng.standard_normal((2, 3)), rng.standard_normal((3, 3))
    x, w = _leaf(x_np), _leaf(w_np)
    h = paddle.matmul(x, w)
    y = CusTanh.apply(h)
    loss = paddle.sum(CusTanh.apply(y * 2)) + paddle.sum(y)
    gx, gh, gw = paddle.grad(loss, [x, h, w])

    def f(xv, wv):
        yv = np.tanh(xv @ wv)
        return np.sum(np.tanh(2 * yv)) + np.sum(yv)

    np.testing.assert_allclose(gx.numpy(), fd_grad(lambda v: f(v, w_np), x_np), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(gw.numpy(), fd_grad(lambda v: f(x_np, v), w_np), rtol=1e-6, atol=1e-9)
    hv = x_np @ w_np
    np.testing.assert_allclose(
        gh.numpy(), fd_grad(lambda v: np.sum(np.tanh(2 * np.tanh(v))) + np.sum(np.tanh(v)), hv), rtol=1e-6, atol=1e-9
    )
    assert x.grad is None  # paddle.grad leaves .grad alone


class ScaleBoth(PyLayer):
    """Two inputs, two outputs (one of them an integer side result), a non-Tensor
    argument in the middle."""

    @staticmethod
    def forward(ctx, a, k, b):
        ctx.k = k
        ctx.mark_non_differentiable()
        return a * k, paddle.cast(b > 0, "int64"), a * b

    @staticmethod
    def backward(ctx, ga, gi, gab):
        return (ga * ctx.k,)  # one short: b has none


def test_backward_must_return_one_gradient_per_tensor_input() -> None:
    a, b = _leaf(np.ones((2,))), _leaf(np.ones((2,)))
    out, ints, ab = ScaleBoth.apply(a, 3.0, b)
    assert ints.stop_gradient  # integer outputs get no gradient
    assert not out.stop_gradient
    with pytest.raises(ValueError, match=r"returned 1 gradient\(s\), but forward received 2.*one gradient \(or None\) per Tensor input"):
        paddle.sum(out).backward()


class Twice(PyLayer):
    @staticmethod
    def forward(ctx, a, b):
        ctx.save_for_backward(a, b)
        return a * b, a + b

    @staticmethod
    def backward(ctx, g1, g2):
        a, b = ctx.saved_tensor()
        return g1 * b + g2, g1 * a + g2


def test_unused_output_gets_zeros_or_none_by_materialize_grads() -> None:
    a, b = _leaf(np.array([1.0, 2.0])), _leaf(np.array([3.0, 4.0]))
    p, _ = Twice.apply(a, b)
    paddle.sum(p).backward()
    np.testing.assert_allclose(a.grad.numpy(), [3.0, 4.0])
    np.testing.assert_allclose(b.grad.numpy(), [1.0, 2.0])

    seen = []

    class NoMaterialize(Twice):
        @staticmethod
        def forward(ctx, a, b):
            ctx.set_materialize_grads(False)
            return Twice.forward(ctx, a, b)

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append(g2)
            return g1, g1

    p, _ = NoMaterialize.apply(a, b)
    paddle.sum(p).backward()
    assert seen == [None]


def test_hook_on_a_layer_output_and_second_backward_error() -> None:
    x = _leaf(np.array([0.5, -0.25]))
    y = CusTanh.apply(x)
    y.register_hook(lambda g: g * 10)
    paddle.sum(y).backward()
    np.testing.assert_allclose(x.grad.numpy(), 10 * (1 - np.tanh([0.5, -0.25]) ** 2))
    with pytest.raises(RuntimeError, match="backward is computed twice"):
        paddle.sum(y).backward()


def test_double_grad_through_a_layer_with_differentiable_backward() -> None:
    x_np = np.array([0.3, -0.7, 1.1])
    x = _leaf(x_np)
    y = CusTanh.apply(x)
    (g,) = paddle.grad(paddle.sum(y), [x], create_graph=True)
    assert not g.stop_gradient
    (gg,) = paddle.grad(paddle.sum(g), [x])
    # d/dx (1 - tanh(x)^2) = -2 tanh(x) (1 - tanh(x)^2)
    t = np.tanh(x_np)
    np.testing.assert_allclose(gg.numpy(), -2 * t * (1 - t * t), rtol=1e-10)


def test_no_record_without_a_gradient_and_names() -> None:
    x = paddle.to_tensor(np.ones((2,)))
    assert CusTanh.apply(x).stop_gradient
    assert paddle.autograd.PyLayerContext is PyLayerContext
    with pytest.raises(NotImplementedError, match="forward"):
        PyLayer.apply(x)


def test_a_gradient_of_the_wrong_shape_is_named() -> None:
    class Bad(PyLayer):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return paddle.ones([5], dtype="float64")

    x = _leaf(np.ones((2, 3)))
    y = Bad.apply(paddle.matmul(x, _leaf(np.ones((3, 3)))))
    with pytest.raises(ValueError, match=r"Bad.backward: gradient #0 has shape \[5\], but Tensor input #0 of forward has shape \[2, 3\]"):
        paddle.sum(y).backward()
