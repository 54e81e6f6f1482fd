"""Ports of PaddlePaddle's own weight-norm and spectral-norm unit tests that use the
public API, rewritten for pytest (PaddlePaddle/Paddle, Apache-2.0).

* `test/legacy_test/test_dygraph_weight_norm.py`: `nn.utils.weight_norm` on a Conv2D
  for dim None/0/1/3/-3 (weight_g and weight_v against a numpy reference) and
  `remove_weight_norm` restoring the weight.
* `test/legacy_test/test_dygraph_spectral_norm.py`: `nn.utils.spectral_norm` on a
  Conv2D (power iterations 1 and 2, dim None and 1, eps 1e-12 and 1e-10) against the
  numpy power iteration from the hook's own u and v.
* `test/legacy_test/test_spectral_norm_op.py`: the `spectral_norm` computation (through
  the public `nn.SpectralNorm` layer with its u and v set) for weights (10, 12) dim 0
  and (2, 3, 3, 3) dim 1 with 5/10 power iterations, the gradient of the weight with
  no power iteration (finite differences), and the layer's argument errors.
* `test/legacy_test/test_weight_normalization.py`: a static `fc` with a
  `WeightNormParamAttr(dim=None)` weight (g, v and g's gradient against numpy):
  skipped, pullback has no `WeightNormParamAttr` (use `nn.utils.weight_norm`).
"""

from __future__ import annotations

import numpy as np
import pytest

import pullback as paddle
from pullback.nn.utils import remove_weight_norm, spectral_norm, weight_norm


@pytest.fixture(autouse=True)
def _eager(dynamic_mode):
    """Eager mode whatever an earlier test left (pullback's own PyLayer tests end static)."""
    yield


def _norm_except_dim(w: np.ndarray, dim: int) -> np.ndarray:
    if dim == -1:
        return np.linalg.norm(w)
    axes = tuple(i for i in range(w.ndim) if i != dim)
    return np.sqrt((w * w).sum(axis=axes))


@pytest.mark.parametrize("dim", [None, 0, 1, 3, -3])
def test_weight_norm(dim: int | None) -> None:
    conv = paddle.nn.Conv2D(2, 3, 3)
    before = conv.weight.numpy().copy()
    d = -1 if dim is None else (dim + before.ndim) % before.ndim
    weight_norm(conv, dim=d)
    x = np.random.random([3, 2, 3, 3]).astype("float32")
    out = conv(paddle.to_tensor(x))
    np.testing.assert_allclose(conv.weight_v.numpy(), before, atol=1e-3)
    np.testing.assert_allclose(conv.weight_g.numpy().reshape(-1), np.ravel(_norm_except_dim(before, d)),
                               atol=1e-3)
    # The weight recomputed from g and v is the original one.
    np.testing.assert_allclose(conv.weight.numpy(), before, rtol=1e-5, atol=1e-6)
    assert list(out.shape) == [3, 3, 1, 1]


def test_remove_weight_norm() -> None:
    conv = paddle.nn.Conv2D(2, 3, 3)
    before = conv.weight.numpy().copy()
    weight_norm(conv, dim=None)
    remove_weight_norm(conv)
    np.testing.assert_allclose(before, conv.weight.numpy(), atol=1e-3)
    assert not hasattr(conv, "weight_g")


def _spectral_ref(weight, u, v, dim, power_iters, eps):
    shape = weight.shape
    h = shape[dim]
    perm = [dim] + [d for d in range(len(shape)) if d != dim]
    mat = weight.transpose(perm).reshape((h, -1))
    u = u.reshape((h, 1))
    v = v.reshape((-1, 1))
    for _ in range(power_iters):
        v = mat.T @ u
        v = v / (np.sqrt((v * v).sum()) + eps)
        u = mat @ v
        u = u / (np.sqrt((u * u).sum()) + eps)
    sigma = (u * (mat @ v)).sum()
    return weight / sigma


@pytest.mark.parametrize("iters,eps,dim", [(1, 1e-12, None), (2, 1e-12, None), (1, 1e-12, 1), (1, 1e-10, None)])
def test_spectral_norm_hook(iters: int, eps: float, dim: int | None) -> None:
    conv = paddle.nn.Conv2D(2, 1, 3)
    before = conv.weight.numpy().copy()
    d = 0 if dim is None else (dim + before.ndim) % before.ndim
    sn = spectral_norm(conv, n_power_iterations=iters, eps=eps, dim=d)
    u, v = sn.weight_u.numpy().copy(), sn.weight_v.numpy().copy()
    conv(paddle.to_tensor(np.random.random([3, 2, 3, 3]).astype("float32")))
    np.testing.assert_allclose(conv.weight.numpy(), _spectral_ref(before, u, v, d, iters, eps),
                               rtol=1e-5, atol=1e-3)


_OP_CASES = [((10, 12), 0, 5), ((2, 3, 3, 3), 1, 10), ((10, 12), 0, 0), ((2, 6, 3, 3), 1, 0)]


def _layer(shape, dim, iters, weight, u, v):
    layer = paddle.nn.SpectralNorm(list(shape), dim=dim, power_iters=iters, eps=1e-12, dtype="float64")
    layer.weight_u.set_value(u)
    layer.weight_v.set_value(v)
    return layer


@pytest.mark.parametrize("shape,dim,iters", _OP_CASES)
def test_spectral_norm_layer_output(shape, dim: int, iters: int) -> None:
    rng = np.random.RandomState(0)
    weight = rng.random_sample(shape)
    h = shape[dim]
    u, v = rng.normal(0, 1, (h,)), rng.normal(0, 1, (int(np.prod(shape)) // h,))
    out = _layer(shape, dim, iters, weight, u, v)(paddle.to_tensor(weight))
    np.testing.assert_allclose(out.numpy(), _spectral_ref(weight, u, v, dim, iters, 1e-12), rtol=1e-7)


@pytest.mark.parametrize("shape,dim", [((10, 12), 0), ((2, 6, 3, 3), 1)])
def test_spectral_norm_weight_grad(shape, dim: int) -> None:
    # With no power iteration u and v are constants: the gradient of W / sigma(W).
    rng = np.random.RandomState(1)
    weight = rng.random_sample(shape)
    h = shape[dim]
    u, v = rng.normal(0, 1, (h,)), rng.normal(0, 1, (int(np.prod(shape)) // h,))
    layer = _layer(shape, dim, 0, weight, u, v)
    x = paddle.to_tensor(weight, stop_gradient=False)
    layer(x).mean().backward()
    num = np.zeros_like(weight)
    delta = 1e-6
    flat, g = weight.reshape(-1), num.reshape(-1)
    for i in range(flat.size):
        p, m = flat.copy(), flat.copy()
        p[i] += delta
        m[i] -= delta
        g[i] = (_spectral_ref(p.reshape(shape), u, v, dim, 0, 1e-12).mean()
                - _spectral_ref(m.reshape(shape), u, v, dim, 0, 1e-12).mean()) / (2 * delta)
    np.testing.assert_allclose(x.grad.numpy(), num, rtol=1e-5, atol=1e-8)


def test_spectral_norm_layer_errors() -> None:
    weight = np.random.random((2, 4)).astype("float32")
    with pytest.raises(TypeError):
        paddle.nn.SpectralNorm(weight.shape, dim=1, power_iters=2)(weight)
    with pytest.raises(TypeError):
        paddle.nn.SpectralNorm(weight.shape, dim=1, power_iters=2, dtype="int32")(weight.astype("int32"))
    with pytest.raises(AssertionError):
        paddle.nn.SpectralNorm(weight.shape, dim=1382376303, power_iters=2)(paddle.to_tensor(weight))
    with pytest.raises(ValueError):
        paddle.nn.SpectralNorm(weight.shape, dim=-1, power_iters=2)(paddle.to_tensor(weight))
    layer = paddle.nn.SpectralNorm((2, 4), dim=1, power_iters=2)
    with pytest.raises(TypeError):
        layer(weight)
    with pytest.raises(TypeError):
        layer(weight.astype("int32"))


@pytest.mark.skip(reason="pullback does not support WeightNormParamAttr (static-graph weight normalization of a "
                  "layer's parameter attribute); nn.utils.weight_norm is the supported form")
def test_static_weight_norm_param_attr(dynamic_mode) -> None:
    from pullback.base.param_attr import WeightNormParamAttr

    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            data = paddle.static.data(name="x", shape=[-1, 10])
            out = paddle.static.nn.fc(x=data, size=5, weight_attr=WeightNormParamAttr(
                dim=None, name="weight_norm_param", initializer=paddle.nn.initializer.Constant(1.0)),
                bias_attr=False, activation=None)
            paddle.static.append_backward(loss=paddle.sum(out))
        x = np.random.random([3, 10]).astype("float32")
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        got = exe.run(main, feed={"x": x},
                      fetch_list=["weight_norm_param_g", "weight_norm_param_v", "weight_norm_param_g@GRAD"])
        v = np.ones((10, 5))
        g = np.linalg.norm(v, keepdims=True)
        g_grad = (x.T @ np.ones((3, 5)) * (v / np.linalg.norm(v, keepdims=True))).sum(keepdims=True)
        for want, have in zip((g, v, g_grad), got, strict=True):
            np.testing.assert_allclose(np.array(have), want, rtol=1e-5, atol=1e-3)
    finally:
        paddle.disable_static()
