"""Eager optimizers: `step()`/`clear_grad()` of SGD, Momentum and Adam equal Paddle's
update formulas written out in numpy, a dygraph training loop drives the loss down,
and misuse raises clear errors."""

from __future__ import annotations

import numpy as np
import pullback as paddle
import pytest
from pullback.frontend import core

nn = paddle.nn
F = paddle.nn.functional


pytestmark = pytest.mark.usefixtures("dynamic_mode")


def quadratic_step(opt_cls, steps: int, **kwargs):
    """Minimize sum(w * w * c) a few steps; returns the parameter after each step
    and the gradients seen (g = 2 * c * w)."""
    c = np.array([1.0, 2.0, -0.5])
    w = nn.Linear(1, 3).weight  # [1, 3], any trainable eager parameter
    w.set_value(np.array([[0.5, -1.0, 2.0]], dtype="float32"))
    opt = opt_cls(parameters=[w], **kwargs)
    values, grads = [], []
    for _ in range(steps):
        loss = (w * w * paddle.to_tensor(c, dtype="float32")).sum()
        loss.backward()
        grads.append(w.grad.numpy())
        before = w
        opt.step()
        assert w is before  # updated in place
        values.append(w.numpy())
        opt.clear_grad()
    return values, grads


def test_sgd_step_is_param_minus_lr_grad():
    values, grads = quadratic_step(paddle.optimizer.SGD, 2, learning_rate=0.1)
    w0 = np.array([[0.5, -1.0, 2.0]])
    np.testing.assert_allclose(values[0], w0 - 0.1 * grads[0], rtol=1e-6)
    np.testing.assert_allclose(values[1], values[0] - 0.1 * grads[1], rtol=1e-6)


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_steps_follow_paddles_formula(nesterov):
    lr, mu = 0.1, 0.9
    values, grads = quadratic_step(paddle.optimizer.Momentum, 3, learning_rate=lr, momentum=mu,
                                   use_nesterov=nesterov)
    w, v = np.array([[0.5, -1.0, 2.0]]), np.zeros((1, 3))
    for got, g in zip(values, grads):
        v = mu * v + g
        w = w - lr * (g + mu * v) if nesterov else w - lr * v
        np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-6)


def test_adam_steps_follow_paddles_formula():
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8
    values, grads = quadratic_step(paddle.optimizer.Adam, 3, learning_rate=lr, beta1=b1, beta2=b2, epsilon=eps)
    w, m1, m2 = np.array([[0.5, -1.0, 2.0]]), np.zeros((1, 3)), np.zeros((1, 3))
    b1p, b2p = b1, b2
    for got, g in zip(values, grads):
        m1 = b1 * m1 + (1 - b1) * g
        m2 = b2 * m2 + (1 - b2) * g * g
        lr_t = lr * np.sqrt(1 - b2p) / (1 - b1p)
        w = w - lr_t * m1 / (np.sqrt(m2) + eps * np.sqrt(1 - b2p))
        b1p, b2p = b1p * b1, b2p * b2
        np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-6)


def test_param_attr_learning_rate_scales_the_step_and_frozen_params_stay():
    layer = nn.Linear(2, 1, weight_attr=paddle.ParamAttr(learning_rate=0.5),
                      bias_attr=paddle.ParamAttr(trainable=False))
    w0, b0 = layer.weight.numpy(), layer.bias.numpy()
    opt = paddle.optimizer.SGD(learning_rate=0.2, parameters=layer.parameters())
    layer(paddle.to_tensor([[1.0, 2.0]])).sum().backward()
    g = layer.weight.grad.numpy()
    np.testing.assert_allclose(g, [[1.0], [2.0]])
    opt.step()
    np.testing.assert_allclose(layer.weight.numpy(), w0 - 0.1 * g, rtol=1e-6)
    np.testing.assert_array_equal(layer.bias.numpy(), b0)
    assert layer.bias.grad is None


def test_clear_grad_zeroes_or_drops():
    layer = nn.Linear(2, 2)
    opt = paddle.optimizer.Adam(parameters=layer.parameters())
    layer(paddle.ones([1, 2])).sum().backward()
    opt.clear_grad()
    np.testing.assert_array_equal(layer.weight.grad.numpy(), np.zeros((2, 2)))
    opt.clear_grad(set_to_zero=False)
    assert layer.weight.grad is None
    opt.step()  # no gradients: nothing moves, no error


def mlp() -> nn.Layer:
    paddle.seed(7)
    return nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))


@pytest.mark.parametrize("opt_cls,lr", [(paddle.optimizer.SGD, 0.5), (paddle.optimizer.Adam, 0.05)])
def test_training_loop_drives_cross_entropy_down(opt_cls, lr):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(64, 4)).astype("float32")
    labels = np.argmax(x[:, :3] + 0.1 * x[:, 3:], axis=1).astype("int64")
    model = mlp()
    opt = opt_cls(learning_rate=lr, parameters=model.parameters())
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for _ in range(40):
        loss = loss_fn(model(paddle.to_tensor(x)), paddle.to_tensor(labels))
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0]
    accuracy = (model(paddle.to_tensor(x)).numpy().argmax(1) == labels).mean()
    assert accuracy > 0.85


def test_training_loop_with_mse_and_minimize():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(32, 4)).astype("float32")
    y = (x @ np.array([[1.0], [-2.0], [0.5], [0.0]])).astype("float32")
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    opt = paddle.optimizer.Momentum(learning_rate=0.05, momentum=0.9, parameters=model.parameters())
    first = None
    for _ in range(60):
        loss = nn.MSELoss()(model(paddle.to_tensor(x)), paddle.to_tensor(y))
        loss.backward()
        _, params_grads = opt.minimize(loss)
        model.clear_gradients()
        first = first if first is not None else float(loss)
    assert len(params_grads) == 4
    assert float(loss) < 0.1 * first


def test_errors():
    with pytest.raises(AttributeError, match="should not be None in dygraph mode"):
        paddle.optimizer.SGD(learning_rate=0.1)
    with pytest.raises(TypeError, match=r"parameters\[0\] must be an eager Tensor"):
        paddle.optimizer.SGD(learning_rate=0.1, parameters=[np.zeros(2)]).step()
    with pytest.raises(TypeError, match="should be an iterable of paddle Tensors"):
        paddle.optimizer.SGD(learning_rate=0.1, parameters=paddle.ones([2]))
    with pytest.raises(TypeError, match="loss must be a Tensor in eager mode"):
        paddle.optimizer.SGD(learning_rate=0.1, parameters=[]).minimize(1.0)
    core.enable_static()
    with pytest.raises(RuntimeError, match="for eager mode; in static mode use minimize"):
        paddle.optimizer.Adam(learning_rate=0.1).step()
