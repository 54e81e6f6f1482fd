"""Losses (cross_entropy with weight / label_smoothing / soft labels / ignore_index /
axis, nll_loss, smooth_l1_loss, kl_div, margin_ranking_loss, cosine_similarity,
label_smooth), scaled_dot_product_attention and the structured dropouts: values
against numpy formulas for every reduction, gradients against float64 finite
differences (eager), layers, and static mode."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pullback as paddle
import pytest
from pullback.frontend import core
from pullback.testing import fd_grad

F = paddle.nn.functional
R = np.random.default_rng(21)
X = R.standard_normal((4, 5))
Y = np.array([0, 3, 2, 1])
YI = np.array([0, 3, -100, 1])
W = R.uniform(0.5, 2.0, 5)
RED = {"mean": np.mean, "sum": np.sum, "none": lambda v: v}


@pytest.fixture(autouse=True)
def eager() -> Any:
    core.disable_static()
    yield
    core.disable_static()


def log_softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return x - np.log(np.exp(x).sum(axis, keepdims=True))


def check(fn: Callable[..., Any], xs: list[np.ndarray], ref: Callable[..., Any], wrt: list[int],
          rtol: float = 1e-6) -> None:
    """fn(*xs) equals ref(*xs); gradients for inputs `wrt` equal finite differences."""
    got = fn(*[paddle.to_tensor(a) for a in xs])
    want = np.asarray(ref(*xs))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)
    proj = R.uniform(0.5, 1.5, want.shape)
    ts = [paddle.to_tensor(a, stop_gradient=i not in wrt) for i, a in enumerate(xs)]
    grads = paddle.grad((fn(*ts) * paddle.to_tensor(proj)).sum(), [ts[i] for i in wrt])
    for i, g in zip(wrt, grads):
        def scalar(a: np.ndarray, i: int = i) -> float:
            args = list(xs)
            args[i] = a
            return float((np.asarray(ref(*args)) * proj).sum())
        np.testing.assert_allclose(g.numpy(), fd_grad(scalar, xs[i]), rtol=rtol, atol=1e-8)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_weight_and_ignore_index(reduction):
    def ref(x: np.ndarray) -> Any:
        m = YI != -100
        ys = np.where(m, YI, 0)
        w = W[ys] * m
        loss = -log_softmax(x)[np.arange(4), ys] * w
        return {"mean": loss.sum() / w.sum(), "sum": loss.sum(), "none": loss}[reduction]

    check(lambda x: F.cross_entropy(x, paddle.to_tensor(YI), weight=paddle.to_tensor(W), reduction=reduction),
          [X], ref, [0])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_cross_entropy_label_smoothing_and_axis(reduction):
    def ref(x: np.ndarray) -> Any:
        soft = np.eye(5)[Y] * 0.8 + 0.2 / 5
        return RED[reduction](-(soft * log_softmax(x)).sum(-1))

    check(lambda x: F.cross_entropy(x, paddle.to_tensor(Y), label_smoothing=0.2, reduction=reduction),
          [X], ref, [0])
    # classes along axis 1 of a 3-D input
    x3 = R.standard_normal((2, 5, 3))
    y3 = R.integers(0, 5, (2, 3))
    got = F.cross_entropy(paddle.to_tensor(x3), paddle.to_tensor(y3), axis=1, reduction="none")
    want = -np.take_along_axis(log_softmax(x3, 1), y3[:, None], 1)[:, 0]
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_cross_entropy_soft_label_with_weight():
    soft = np.abs(R.standard_normal((4, 5)))
    soft /= soft.sum(1, keepdims=True)

    def ref(x: np.ndarray) -> Any:
        w = soft @ W
        loss = -(soft * log_softmax(x)).sum(-1) * w
        return loss.sum() / w.sum()

    check(lambda x: F.cross_entropy(x, paddle.to_tensor(soft), soft_label=True, weight=paddle.to_tensor(W)),
          [X], ref, [0])


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss(reduction):
    def ref(lp: np.ndarray) -> Any:
        m = YI != -100
        ys = np.where(m, YI, 0)
        w = W[ys] * m
        loss = -lp[np.arange(4), ys] * w
        return {"mean": loss.sum() / w.sum(), "sum": loss.sum(), "none": loss}[reduction]

    check(lambda x: F.nll_loss(x, paddle.to_tensor(YI), weight=paddle.to_tensor(W), reduction=reduction),
          [log_softmax(X)], ref, [0])
    x4 = log_softmax(R.standard_normal((2, 3, 2, 2)), 1)
    y4 = R.integers(0, 3, (2, 2, 2))
    got = F.nll_loss(paddle.to_tensor(x4), paddle.to_tensor(y4), reduction="none")
    np.testing.assert_allclose(got.numpy(), -np.take_along_axis(x4, y4[:, None], 1)[:, 0], rtol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_pair_losses(reduction):
    red = RED[reduction]
    lab = R.standard_normal((4, 5)) * 2
    check(lambda a, b: F.smooth_l1_loss(a, b, reduction=reduction, delta=0.7), [X, lab],
          lambda a, b: red(np.where(np.abs(a - b) < 0.7, 0.5 * (a - b) ** 2, 0.7 * (np.abs(a - b) - 0.35))), [0, 1])
    p = np.abs(R.standard_normal((4, 5))) + 0.1
    p[0, 0] = 0.0
    check(lambda a, b: F.kl_div(a, b, reduction=reduction), [log_softmax(X), p],
          lambda a, b: red(np.where(b > 0, b * (np.log(np.where(b > 0, b, 1)) - a), 0)), [0])
    check(lambda a, b: F.kl_div(a, b, reduction=reduction, log_target=True), [log_softmax(X), X],
          lambda a, b: red(np.exp(b) * (b - a)), [0, 1])
    sgn = np.where(R.standard_normal((4, 5)) > 0, 1.0, -1.0)
    check(lambda a, b, c: F.margin_ranking_loss(a, b, c, margin=0.3, reduction=reduction), [X, lab, sgn],
          lambda a, b, c: red(np.maximum(0, -c * (a - b) + 0.3)), [0, 1])


def test_kl_div_batchmean_cosine_similarity_label_smooth():
    p = np.abs(R.standard_normal((4, 5))) + 0.1
    got = F.kl_div(paddle.to_tensor(log_softmax(X)), paddle.to_tensor(p), reduction="batchmean")
    np.testing.assert_allclose(float(got), (p * (np.log(p) - log_softmax(X))).sum() / 4, rtol=1e-12)
    b = R.standard_normal((4, 5))
    check(lambda u, v: F.cosine_similarity(u, v, axis=1), [X, b],
          lambda u, v: (u * v).sum(1) / np.sqrt((u * u).sum(1) * (v * v).sum(1)), [0, 1])
    oh = np.eye(5)[Y]
    np.testing.assert_allclose(F.label_smooth(paddle.to_tensor(oh), epsilon=0.1).numpy(), oh * 0.9 + 0.02)
    prior = np.full((1, 5), 0.2)
    np.testing.assert_allclose(F.label_smooth(paddle.to_tensor(oh), paddle.to_tensor(prior), 0.1).numpy(),
                               oh * 0.9 + 0.02)


def _sdpa_ref(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None = None,
              causal: bool = False) -> np.ndarray:
    s = np.einsum("blhd,bmhd->bhlm", q, k) / np.sqrt(q.shape[-1])
    if causal:
        s = np.where(np.triu(np.ones(s.shape[-2:]), 1) > 0, -np.inf, s)
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return np.einsum("bhlm,bmhd->blhd", p, v)


def test_scaled_dot_product_attention():
    q, k, v = (R.standard_normal((2, 3, 2, 4)) for _ in range(3))
    check(lambda a, b, c: F.scaled_dot_product_attention(a, b, c), [q, k, v], _sdpa_ref, [0, 1, 2])
    check(lambda a, b, c: F.scaled_dot_product_attention(a, b, c, is_causal=True), [q, k, v],
          lambda a, b, c: _sdpa_ref(a, b, c, causal=True), [0, 1, 2])
    bm = R.standard_normal((2, 1, 3, 3)) > -0.5
    bm[..., 0] = True
    got = F.scaled_dot_product_attention(*[paddle.to_tensor(a) for a in (q, k, v)], attn_mask=paddle.to_tensor(bm))
    np.testing.assert_allclose(got.numpy(), _sdpa_ref(q, k, v, bm), rtol=1e-10)
    fm = R.standard_normal((3, 3))
    got = F.scaled_dot_product_attention(*[paddle.to_tensor(a) for a in (q, k, v)], attn_mask=paddle.to_tensor(fm))
    np.testing.assert_allclose(got.numpy(), _sdpa_ref(q, k, v, fm), rtol=1e-10)


def test_structured_dropouts():
    x = paddle.ones([4, 6, 3, 3])
    y = F.dropout2d(x, p=0.5).numpy()
    per_channel = y.reshape(4, 6, 9)
    assert set(np.unique(per_channel)) <= {0.0, 2.0}
    assert (per_channel.min(-1) == per_channel.max(-1)).all()  # whole channels
    np.testing.assert_array_equal(F.dropout2d(x, 0.5, training=False).numpy(), x.numpy())
    assert F.dropout3d(paddle.ones([2, 3, 2, 2, 2]), 0.3).shape == [2, 3, 2, 2, 2]
    paddle.seed(3)
    a = F.alpha_dropout(paddle.to_tensor(R.standard_normal((200, 50))), 0.2).numpy()
    assert abs(a.mean()) < 0.1 and abs(a.std() - 1) < 0.1


def test_dropout_axis_drops_whole_slices_with_the_gradient_of_the_mask():
    """`F.dropout(axis=...)` as Paddle defines it: one draw per index of the axes,
    broadcast; `downscale_in_infer` does not rescale in training and scales by 1-p
    at inference; the gradient is the applied mask."""
    paddle.seed(5)
    x = paddle.to_tensor(R.uniform(1.0, 2.0, (8, 6, 3)), stop_gradient=False)
    y = F.dropout(x, 0.5, axis=[0, 1])
    ratio = y.numpy() / x.numpy()
    assert set(np.unique(ratio)) == {0.0, 2.0}
    assert (ratio.min(-1) == ratio.max(-1)).all()
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), ratio)
    down = F.dropout(x, 0.5, axis=1, mode="downscale_in_infer").numpy() / x.numpy()
    assert set(np.unique(down)) <= {0.0, 1.0} and (down == down[:1]).all()  # one draw per column
    np.testing.assert_allclose(F.dropout(x, 0.5, axis=1, training=False, mode="downscale_in_infer").numpy(),
                               x.numpy() * 0.5)
    np.testing.assert_array_equal(F.dropout(x, 0.5, axis=1, training=False).numpy(), x.numpy())
    for axis, err in [(3, ValueError), ([0, 1, 2, 2], ValueError), (-1, ValueError), ("a", TypeError)]:
        with pytest.raises(err, match="dropout: "):
            F.dropout(x, 0.5, axis=axis)


def test_structured_dropout_layers_and_static_dynamic_batch():
    paddle.seed(2)
    x = paddle.ones([4, 6, 3, 3])
    m = paddle.nn.Dropout2D(0.5)
    assert set(np.unique(m(x).numpy())) <= {0.0, 2.0}
    m.eval()
    np.testing.assert_array_equal(m(x).numpy(), x.numpy())
    nhwc = paddle.nn.Dropout2D(0.5, data_format="NHWC")(paddle.ones([2, 3, 3, 6])).numpy()
    assert (nhwc.min((1, 2)) == nhwc.max((1, 2))).all()
    assert paddle.nn.Dropout3D(0.3)(paddle.ones([2, 3, 2, 2, 2])).shape == [2, 3, 2, 2, 2]
    a = paddle.nn.AlphaDropout(0.2)
    z = paddle.to_tensor(R.standard_normal((20, 5)))
    assert not np.array_equal(a(z).numpy(), z.numpy())
    a.eval()
    np.testing.assert_array_equal(a(z).numpy(), z.numpy())
    with pytest.raises(ValueError, match="dropout2d: Attr\\(data_format\\)"):
        F.dropout2d(x, data_format="NCWH")
    core.enable_static()
    main, start = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, start):
        v = paddle.static.data("v", [None, 6, 3], "float32")
        out = F.dropout(v, 0.5, axis=[0, 1])
    feed = {"v": np.ones((5, 6, 3), np.float32)}
    for backend in ("compiled", "interpreter"):
        exe = paddle.static.Executor(paddle.CPUPlace()) if backend == "compiled" else \
            paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
        got = exe.run(main, feed=feed, fetch_list=[out])[0]
        assert set(np.unique(got)) <= {0.0, 2.0} and (got.min(-1) == got.max(-1)).all()


def test_errors():
    with pytest.raises(ValueError, match="kl_div: reduction must be"):
        F.kl_div(paddle.to_tensor(X), paddle.to_tensor(X), reduction="avg")
    with pytest.raises(TypeError, match="nll_loss: label must be int64"):
        F.nll_loss(paddle.to_tensor(X), paddle.to_tensor(Y.astype("int32")))
    with pytest.raises(ValueError, match="scaled_dot_product_attention: query must be 4-D"):
        F.scaled_dot_product_attention(paddle.to_tensor(X), paddle.to_tensor(X), paddle.to_tensor(X))
    with pytest.raises(ValueError, match="cross_entropy: label_smoothing must be in"):
        F.cross_entropy(paddle.to_tensor(X), paddle.to_tensor(Y), label_smoothing=2.0)


def test_static_mode():
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [None, 5], "float64")
        y = paddle.static.data("y", [None], "int64")
        a = F.cross_entropy(x, y, label_smoothing=0.1)
        b = F.nll_loss(F.log_softmax(x), y)
        c = F.smooth_l1_loss(x, x * 0.5)
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    got = exe.run(main, feed={"x": X, "y": Y}, fetch_list=[a, b, c])
    soft = np.eye(5)[Y] * 0.9 + 0.02
    np.testing.assert_allclose(got[0], -(soft * log_softmax(X)).sum(1).mean(), rtol=1e-12)
    np.testing.assert_allclose(got[1], -log_softmax(X)[np.arange(4), Y].mean(), rtol=1e-12)
    d = np.abs(X * 0.5)
    np.testing.assert_allclose(got[2], np.where(d < 1, 0.5 * d**2, d - 0.5).mean(), rtol=1e-12)
