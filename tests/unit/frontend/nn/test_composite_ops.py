"""Composite functional ops (frontend/ops/composite.py): the losses (mse, l1, binary
cross entropy with and without logits) and normalize: values against numpy formulas,
gradients against float64 central finite differences (eager mode), the reductions,
argument errors (the composite activations' too) and the static-mode path.
(The activations of composite.py: tests/unit/frontend/nn/test_activations.py.)"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pullback as paddle
import pytest
from pullback.frontend import core
from pullback.testing import fd_grad, run_fetch

F = paddle.nn.functional


@pytest.fixture(autouse=True)
def dynamic_mode():
    core.disable_static()
    yield
    core.disable_static()


RNG = np.random.default_rng(0)
# Away from the kinks at 0 so finite differences are meaningful.
X = np.array([-3.0, -1.2, -0.4, 0.3, 0.9, 2.5])
PROB = np.array([0.1, 0.3, 0.45, 0.6, 0.8, 0.95])
LABEL = np.array([0.0, 1.0, 0.3, 1.0, 0.0, 0.7])


def check_grads(fn: Callable[..., object], arrays: list[np.ndarray], wrt: list[int], **kwargs: object) -> None:
    """paddle.grad of sum(fn(...) * P) equals finite differences, for inputs `wrt`."""
    out_shape = np.asarray(fn(*[paddle.to_tensor(a) for a in arrays], **kwargs)).shape
    proj = RNG.uniform(0.5, 1.5, out_shape)

    def scalar(xs: list[np.ndarray]) -> float:
        with paddle.no_grad():
            y = fn(*[paddle.to_tensor(a) for a in xs], **kwargs)
        return float((np.asarray(y) * proj).sum())

    ts = [paddle.to_tensor(a, stop_gradient=i not in wrt) for i, a in enumerate(arrays)]
    y = fn(*ts, **kwargs)
    grads = paddle.grad(y * paddle.to_tensor(proj), [ts[i] for i in wrt])
    for i, g in zip(wrt, grads):
        np.testing.assert_allclose(g.numpy(), fd_grad(lambda a, i=i: scalar([*arrays[:i], a, *arrays[i + 1:]]), arrays[i]), rtol=1e-6, atol=1e-8)


def test_eager_mse_loss_is_one_square_error_op_and_broadcasts_like_subtract():
    """Same-shaped eager operands: one recorded `square_error_cost` (then the mean);
    a label that broadcasts still goes through `subtract`, as in Paddle."""
    a, b = X.reshape(2, 3), LABEL.reshape(2, 3)
    x = paddle.to_tensor(a, stop_gradient=False)
    loss = F.mse_loss(x, paddle.to_tensor(b))
    assert loss._node.parents[0][0].tpl.type == "square_error_cost"
    loss.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * (a - b) / a.size, rtol=1e-6)
    row = paddle.to_tensor(b[:1])
    got = F.mse_loss(paddle.to_tensor(a), row, reduction="none")
    np.testing.assert_allclose(got.numpy(), (a - b[:1]) ** 2, rtol=1e-6)
    check_grads(F.mse_loss, [a, b[:1]], [0, 1])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_mse_and_l1_loss(reduction):
    a, b = X.reshape(2, 3), LABEL.reshape(2, 3)
    red = {"mean": np.mean, "sum": np.sum, "none": lambda v: v}[reduction]
    got = F.mse_loss(paddle.to_tensor(a), paddle.to_tensor(b), reduction=reduction)
    np.testing.assert_allclose(got.numpy(), red((a - b) ** 2), rtol=1e-6)
    got = F.l1_loss(paddle.to_tensor(a), paddle.to_tensor(b), reduction=reduction)
    np.testing.assert_allclose(got.numpy(), red(np.abs(a - b)), rtol=1e-6)
    check_grads(F.mse_loss, [a, b], [0, 1], reduction=reduction)
    check_grads(F.l1_loss, [a, b], [0, 1], reduction=reduction)


def test_binary_cross_entropy():
    w = np.array([1.0, 2.0, 0.5, 1.0, 1.0, 3.0])
    ref = -w * (LABEL * np.log(PROB) + (1 - LABEL) * np.log(1 - PROB))
    got = F.binary_cross_entropy(paddle.to_tensor(PROB), paddle.to_tensor(LABEL),
                                 weight=paddle.to_tensor(w), reduction="none")
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12)
    got = F.binary_cross_entropy(paddle.to_tensor(PROB), paddle.to_tensor(LABEL))
    assert got.shape == [] and float(got) == pytest.approx(np.mean(-(LABEL * np.log(PROB) + (1 - LABEL) * np.log(1 - PROB))))
    check_grads(F.binary_cross_entropy, [PROB, LABEL], [0, 1], reduction="sum")
    # log is clamped at -100 as in Paddle: a certain wrong prediction costs 100.
    edge = F.binary_cross_entropy(paddle.to_tensor([0.0, 1.0]), paddle.to_tensor([1.0, 0.0]), reduction="none")
    np.testing.assert_allclose(edge.numpy(), [100.0, 100.0])


def test_binary_cross_entropy_with_logits():
    ref = np.maximum(X, 0) - X * LABEL + np.log1p(np.exp(-np.abs(X)))
    got = F.binary_cross_entropy_with_logits(paddle.to_tensor(X), paddle.to_tensor(LABEL), reduction="none")
    np.testing.assert_allclose(got.numpy(), ref, rtol=1e-12)
    pw = np.array([2.0, 0.5, 1.0, 3.0, 1.0, 1.5])
    lw = (pw - 1) * LABEL + 1
    ref_pw = (1 - LABEL) * X + lw * (np.log1p(np.exp(-np.abs(X))) + np.maximum(-X, 0))
    got = F.binary_cross_entropy_with_logits(paddle.to_tensor(X), paddle.to_tensor(LABEL),
                                             reduction="sum", pos_weight=paddle.to_tensor(pw))
    assert float(got) == pytest.approx(ref_pw.sum())
    check_grads(F.binary_cross_entropy_with_logits, [X, LABEL, pw], [0, 1, 2],)
    big = F.binary_cross_entropy_with_logits(paddle.to_tensor([-500.0, 500.0]), paddle.to_tensor([1.0, 0.0]), reduction="none")
    np.testing.assert_allclose(big.numpy(), [500.0, 500.0])


@pytest.mark.parametrize("p,axis", [(2, 1), (1, 0), (3, -1)])
def test_normalize(p, axis):
    a = X.reshape(2, 3)
    norm = np.sum(np.abs(a) ** p, axis=axis, keepdims=True) ** (1 / p)
    got = F.normalize(paddle.to_tensor(a), p=p, axis=axis)
    np.testing.assert_allclose(got.numpy(), a / np.maximum(norm, 1e-12), rtol=1e-12)
    check_grads(F.normalize, [a], [0], p=p, axis=axis)
    zero = F.normalize(paddle.to_tensor([[0.0, 0.0]]), epsilon=1e-6)
    np.testing.assert_array_equal(zero.numpy(), [[0.0, 0.0]])


@pytest.mark.parametrize(
    "call,exc,fragment",
    [
        (lambda: F.mse_loss(paddle.to_tensor([1.0]), paddle.to_tensor([1.0]), reduction="avg"), ValueError, "reduction must be one of"),
        (lambda: F.l1_loss([1.0], paddle.to_tensor([1.0])), TypeError, "'input' must be a Tensor"),
        (lambda: F.mse_loss(paddle.to_tensor([1.0]), paddle.to_tensor([1.0], dtype="float64")), TypeError, "must have one dtype"),
        (lambda: F.leaky_relu(paddle.to_tensor([1.0]), negative_slope="a"), TypeError, "'negative_slope' must be a number"),
        (lambda: F.softplus(paddle.to_tensor([1.0]), beta=0), ValueError, "beta must not be 0"),
        (lambda: F.normalize(paddle.to_tensor([[1.0]]), p=0), ValueError, "p must be positive"),
        (lambda: F.normalize(paddle.to_tensor([[1.0]]), axis=2), ValueError, "out of range"),
        (lambda: F.elu(paddle.to_tensor([1, 2])), TypeError, "float32 or float64"),
    ],
)
def test_errors(call, exc, fragment):
    with pytest.raises(exc, match=fragment):
        call()


def test_static_mode_through_the_executor(static):
    main, feed = static
    x = feed("x", [-1, 3])
    y = feed("y", [-1, 3])
    loss = F.binary_cross_entropy_with_logits(x, y)
    act = F.leaky_relu(x, 0.2)
    a, b = X.reshape(2, 3).astype("float32"), LABEL.reshape(2, 3).astype("float32")
    got_loss, got_act = run_fetch(main, {"x": a, "y": b}, loss, act)
    ref = np.mean(np.maximum(a, 0) - a * b + np.log1p(np.exp(-np.abs(a))))
    assert float(got_loss) == pytest.approx(ref, rel=1e-5)
    np.testing.assert_allclose(got_act, np.where(a > 0, a, 0.2 * a), rtol=1e-6)


def test_exported_in_namespaces():
    from pullback import fluid
    from pullback.frontend.ops import composite

    assert F.silu is composite.silu and F.mse_loss is composite.mse_loss

    assert float(fluid.layers.leaky_relu(paddle.to_tensor([-1.0]))) == pytest.approx(-0.02)
