"""Group, instance and layer normalization (composite functions and layers):
values against numpy formulas and Paddle's documented output, gradients against
float64 finite differences to second order, static programs with a dynamic batch,
and argument errors."""

from __future__ import annotations

import numpy as np
import pullback as paddle
import pytest
from pullback.frontend import core, unique_name
from pullback.frontend.framework import Program, program_guard
from pullback.testing import check_eager_grad, run_fetch

F = paddle.nn.functional
RNG = np.random.default_rng(11)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


def ref_group_norm(x, groups, eps, w, b, channel_last=False):
    x = np.asarray(x, np.float64)
    if channel_last:
        x = np.moveaxis(x, -1, 1)
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1)
    mu = g.mean(axis=2, keepdims=True)
    var = ((g - mu) ** 2).mean(axis=2, keepdims=True)
    y = ((g - mu) / np.sqrt(var + eps)).reshape(x.shape)
    shape = [1, c] + [1] * (x.ndim - 2)
    if w is not None:
        y = y * w.reshape(shape)
    if b is not None:
        y = y + b.reshape(shape)
    return np.moveaxis(y, 1, -1) if channel_last else y


def ref_instance_norm(x, eps, w, b):
    axes = tuple(range(2, x.ndim))
    mu = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    shape = [1, x.shape[1]] + [1] * (x.ndim - 2)
    return (x - mu) / np.sqrt(var + eps) * w.reshape(shape) + b.reshape(shape)


def test_group_norm_documented_values(dynamic_mode):
    x = paddle.to_tensor(np.arange(48, dtype=np.float32).reshape(2, 6, 2, 2))
    y = paddle.nn.GroupNorm(num_channels=6, num_groups=6)(x).numpy()
    np.testing.assert_allclose(y[1, 3].ravel(), [-1.34163547, -0.44721183, 0.44721183, 1.34163547], rtol=1e-5)


@pytest.mark.parametrize("shape,groups,fmt", [
    ((2, 4, 3, 3), 2, "NCHW"), ((2, 6, 5), 3, "NCL"), ((2, 3, 3, 4), 4, "NHWC"), ((2, 4, 2, 2, 2), 1, "NCDHW"),
])
def test_group_norm_values(dynamic_mode, shape, groups, fmt):
    xv = rand(*shape).astype(np.float32)
    c = shape[-1] if fmt[1] != "C" else shape[1]
    w, b = rand(c).astype(np.float32), rand(c).astype(np.float32)
    y = F.group_norm(paddle.to_tensor(xv), groups, 1e-4, paddle.to_tensor(w), paddle.to_tensor(b), fmt)
    np.testing.assert_allclose(y.numpy(), ref_group_norm(xv, groups, 1e-4, w, b, fmt[1] != "C"),
                               rtol=1e-4, atol=1e-5)


def test_group_norm_layer_parameters(dynamic_mode):
    gn = paddle.nn.GroupNorm(2, 4, weight_attr=False)
    assert gn.weight.stop_gradient and not gn.bias.stop_gradient
    np.testing.assert_allclose(gn.weight.numpy(), 1.0)
    assert list(gn.state_dict()) == ["weight", "bias"]


@pytest.mark.parametrize("fmt,shape", [("NCHW", (2, 4, 2, 3)), ("NHWC", (2, 2, 3, 4))])
def test_group_norm_gradients(dynamic_mode, fmt, shape):
    check_eager_grad(lambda x, w, b: F.group_norm(x, 2, 1e-5, w, b, fmt),
                     [rand(*shape), rand(4), rand(4)], order=2)


def test_instance_norm_values_and_layer(dynamic_mode):
    xv = rand(2, 3, 4, 5).astype(np.float32)
    layer = paddle.nn.InstanceNorm2D(3)
    np.testing.assert_allclose(layer(paddle.to_tensor(xv)).numpy(),
                               ref_instance_norm(xv.astype(np.float64), 1e-5, np.ones(3), np.zeros(3)),
                               rtol=1e-4, atol=1e-5)
    assert list(layer.state_dict()) == ["scale", "bias"]
    bare = paddle.nn.InstanceNorm1D(3, weight_attr=False, bias_attr=False)
    assert bare.parameters() == []
    xv1 = rand(2, 3, 6)
    np.testing.assert_allclose(bare(paddle.to_tensor(xv1)).numpy(),
                               ref_instance_norm(xv1, 1e-5, np.ones(3), np.zeros(3)), rtol=1e-6)
    with pytest.raises(ValueError, match="expected 4D input"):
        layer(paddle.to_tensor(xv1))
    with pytest.raises(ValueError, match="at the same time"):
        paddle.nn.InstanceNorm2D(3, weight_attr=False)


def test_instance_norm_gradients(dynamic_mode):
    check_eager_grad(lambda x, w, b: F.instance_norm(x, weight=w, bias=b),
                     [rand(2, 3, 2, 3), rand(3), rand(3)], order=2)


@pytest.mark.parametrize("normalized", [[4], [3, 4], [2, 3, 4]])
def test_layer_norm_any_shape_gradients(dynamic_mode, normalized):
    size = int(np.prod(normalized))
    check_eager_grad(lambda x, w, b: F.layer_norm(x, normalized, w, b),
                     [rand(2, 3, 4), rand(size), rand(size)], order=2)


def test_layer_norm_layer_shapes(dynamic_mode):
    ln = paddle.nn.LayerNorm([3, 4], weight_attr=False)
    assert ln.weight is None and list(ln.bias.shape) == [12]
    xv = rand(2, 3, 4).astype(np.float32)
    y = ln(paddle.to_tensor(xv)).numpy()
    flat = xv.reshape(2, -1)
    want = (flat - flat.mean(1, keepdims=True)) / np.sqrt(flat.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y, want.reshape(xv.shape), rtol=1e-4, atol=1e-5)


def test_static_norms_with_dynamic_batch():
    core.enable_static()
    try:
        main = Program()
        with program_guard(main, Program()), unique_name.guard():
            x = paddle.static.data("x", [-1, 4, 2, 3], "float32")
            g = F.group_norm(x, 2)
            i = F.instance_norm(x)
        xv = rand(3, 4, 2, 3).astype(np.float32)
        gv, iv = run_fetch(main, {"x": xv}, g, i)
        np.testing.assert_allclose(gv, ref_group_norm(xv, 2, 1e-5, None, None), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(iv, ref_instance_norm(xv.astype(np.float64), 1e-5, np.ones(4), np.zeros(4)),
                                   rtol=1e-4, atol=1e-5)
    finally:
        core.disable_static()


@pytest.mark.parametrize("call,match", [
    (lambda x: F.group_norm(x, 3), "must be divisible by num_groups"),
    (lambda x: F.group_norm(x, 0), "num_groups must be a positive int"),
    (lambda x: F.group_norm(x, 2, data_format="CHWN"), "unsupported data layout"),
    (lambda x: F.instance_norm(x[0, 0]), "rank >= 3"),
])
def test_argument_errors(dynamic_mode, call, match):
    x = paddle.to_tensor(np.zeros((2, 4, 2, 2), np.float32))
    with pytest.raises(ValueError, match=match):
        call(x)
