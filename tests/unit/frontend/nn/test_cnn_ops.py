"""CNN functionals and layers built on the conv/pool/pad ops: NHWC layouts, 1-D
convolution and pooling, transposed convolutions, adaptive pools, padding modes,
flatten and add_n: values against numpy references and gradients against float64
finite differences."""

from __future__ import annotations

import warnings

import numpy as np
import pullback as paddle
import pytest
from pullback.frontend import core, unique_name
from pullback.frontend.framework import Program, program_guard
from pullback.testing import check_eager_grad

F = paddle.nn.functional
RNG = np.random.default_rng(21)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


def ref_conv1d(x, w, stride=1, pad=(0, 0), dilation=1, groups=1):
    """Direct loops: out[n, o, t] = sum_{c, i} xp[n, g*C/G + c, t*s + i*d] w[o, c, i]."""
    n, _c, _ = x.shape
    o, cg, k = w.shape
    xp = np.pad(x, [(0, 0), (0, 0), pad])
    length = (xp.shape[2] - dilation * (k - 1) - 1) // stride + 1
    out = np.zeros((n, o, length))
    per = o // groups
    for oo in range(o):
        g = oo // per
        for t in range(length):
            for cc in range(cg):
                for i in range(k):
                    out[:, oo, t] += xp[:, g * cg + cc, t * stride + i * dilation] * w[oo, cc, i]
    return out


@pytest.mark.parametrize("stride,pad,dilation,groups", [(1, (0, 0), 1, 1), (2, (1, 2), 2, 2), (1, (2, 2), 1, 4)])
def test_conv1d_values(dynamic_mode, stride, pad, dilation, groups):
    x, w, b = rand(2, 4, 9), rand(8, 4 // groups, 3), rand(8)
    got = F.conv1d(paddle.to_tensor(x), paddle.to_tensor(w), paddle.to_tensor(b), stride=stride,
                   padding=list(pad), dilation=dilation, groups=groups).numpy()
    np.testing.assert_allclose(got, ref_conv1d(x, w, stride, pad, dilation, groups) + b[None, :, None],
                               rtol=1e-10, atol=1e-10)
    nlc = F.conv1d(paddle.to_tensor(x.transpose(0, 2, 1)), paddle.to_tensor(w), paddle.to_tensor(b),
                   stride=stride, padding=list(pad), dilation=dilation, groups=groups, data_format="NLC")
    np.testing.assert_allclose(nlc.numpy(), got.transpose(0, 2, 1), rtol=1e-12)


def test_conv1d_gradients(dynamic_mode):
    check_eager_grad(lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=[1, 2], dilation=2, groups=2),
                     [rand(2, 4, 9), rand(6, 2, 3), rand(6)])


def test_conv2d_nhwc_matches_nchw(dynamic_mode):
    x, w, b = rand(2, 3, 6, 5), rand(4, 3, 3, 3), rand(4)
    kw = {"stride": [2, 1], "padding": [[0, 0], [1, 0], [2, 1], [0, 0]], "dilation": [1, 2]}
    nhwc = F.conv2d(paddle.to_tensor(x.transpose(0, 2, 3, 1)), paddle.to_tensor(w), paddle.to_tensor(b),
                    data_format="NHWC", **kw).numpy()
    nchw = F.conv2d(paddle.to_tensor(x), paddle.to_tensor(w), paddle.to_tensor(b), stride=[2, 1],
                    padding=[1, 0, 2, 1], dilation=[1, 2]).numpy()
    np.testing.assert_allclose(nhwc, nchw.transpose(0, 2, 3, 1), rtol=1e-12)
    check_eager_grad(lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=3, data_format="NHWC"),
                     [rand(1, 5, 4, 3), rand(6, 1, 3, 3), rand(6)])


def test_transposed_convolutions(dynamic_mode):
    ct = paddle.nn.Conv2DTranspose(3, 4, 3, stride=2, padding=1)
    assert ct.weight.shape == [3, 4, 3, 3]
    x = paddle.to_tensor(rand(2, 3, 5, 5).astype(np.float32))
    assert ct(x).shape == [2, 4, 9, 9] and ct(x, output_size=[10, 10]).shape == [2, 4, 10, 10]
    # conv1d_transpose is the adjoint of conv1d: <conv1d(a, w), b> == <a, conv1d_transpose(b, w)>.
    a, w, bb = rand(2, 4, 9), rand(3, 4, 3), rand(2, 3, 4)
    lhs = np.sum(F.conv1d(paddle.to_tensor(a), paddle.to_tensor(w), stride=2).numpy() * bb)
    back = F.conv1d_transpose(paddle.to_tensor(bb), paddle.to_tensor(w), stride=2, output_size=9).numpy()
    assert lhs == pytest.approx(np.sum(a * back), rel=1e-10)
    check_eager_grad(lambda x, w: F.conv1d_transpose(x, w, stride=2, padding=1, output_padding=1),
                     [rand(2, 4, 5), rand(4, 3, 3)])
    assert paddle.nn.Conv1DTranspose(4, 2, 3)(paddle.to_tensor(rand(1, 4, 5).astype(np.float32))).shape == [1, 2, 7]


def _ref_pool1d(x, k, s, fn):
    length = (x.shape[2] - k) // s + 1
    return np.stack([fn(x[:, :, t * s : t * s + k], axis=2) for t in range(length)], axis=2)


def test_pools_1d_and_adaptive(dynamic_mode):
    x = rand(2, 3, 10)
    t = paddle.to_tensor(x)
    np.testing.assert_allclose(F.max_pool1d(t, 3, 2).numpy(), _ref_pool1d(x, 3, 2, np.max))
    np.testing.assert_allclose(F.avg_pool1d(t, 4).numpy(), _ref_pool1d(x, 4, 4, np.mean))
    # Adaptive windows [floor(i*L/o), ceil((i+1)*L/o)).
    want = np.stack([x[:, :, (i * 10) // 4 : -(-(i + 1) * 10 // 4)].mean(axis=2) for i in range(4)], axis=2)
    np.testing.assert_allclose(F.adaptive_avg_pool1d(t, 4).numpy(), want)
    np.testing.assert_allclose(paddle.nn.AdaptiveMaxPool1D(1)(t).numpy(), x.max(axis=2, keepdims=True))
    x2 = rand(2, 3, 5, 7)
    got = paddle.nn.AdaptiveMaxPool2D([2, 3])(paddle.to_tensor(x2)).numpy()
    assert got[1, 2, 1, 2] == x2[1, 2, 2:5, 4:7].max()
    nhwc = F.adaptive_avg_pool2d(paddle.to_tensor(x2.transpose(0, 2, 3, 1)), 2, data_format="NHWC").numpy()
    np.testing.assert_allclose(nhwc, F.adaptive_avg_pool2d(paddle.to_tensor(x2), 2).numpy().transpose(0, 2, 3, 1))
    check_eager_grad(lambda x: F.avg_pool1d(x, 3, 2, padding=1), [rand(1, 2, 7)], order=2)
    check_eager_grad(lambda x: F.adaptive_max_pool2d(x, [2, 3]), [rand(1, 2, 5, 7)])
    check_eager_grad(lambda x: F.max_pool2d(x, 2, 1, data_format="NHWC"), [rand(1, 4, 4, 2)])


@pytest.mark.parametrize("mode,np_mode", [("reflect", "reflect"), ("replicate", "edge"), ("circular", "wrap")])
def test_pad_modes(dynamic_mode, mode, np_mode):
    x = rand(2, 3, 4, 5)
    got = F.pad(paddle.to_tensor(x), [2, 1, 0, 3], mode=mode).numpy()
    np.testing.assert_array_equal(got, np.pad(x, [(0, 0), (0, 0), (0, 3), (2, 1)], mode=np_mode))
    x1 = rand(2, 6, 3)  # NLC
    got1 = F.pad(paddle.to_tensor(x1), [1, 2], mode=mode, data_format="NLC").numpy()
    np.testing.assert_array_equal(got1, np.pad(x1, [(0, 0), (1, 2), (0, 0)], mode=np_mode))
    check_eager_grad(lambda x: F.pad(x, [1, 2, 2, 1], mode=mode), [rand(1, 2, 4, 4)], order=2)


def test_pad_errors_and_layers(dynamic_mode):
    x = paddle.to_tensor(np.zeros((1, 1, 3, 3), np.float32))
    with pytest.raises(ValueError, match="must be less than the size"):
        F.pad(x, [3, 0, 0, 0], mode="reflect")
    with pytest.raises(ValueError, match="mode must be one of"):
        F.pad(x, [1, 1, 1, 1], mode="symmetric")
    with pytest.raises(ValueError, match="takes 4 for its spatial dimensions"):
        F.pad(x, [1] * 8, mode="replicate")
    assert paddle.nn.Pad2D([1, 0, 2, 0], mode="replicate")(x).shape == [1, 1, 5, 4]
    assert paddle.nn.ZeroPad2D(1)(x).shape == [1, 1, 5, 5]
    assert paddle.nn.Pad1D(2, mode="circular")(paddle.to_tensor(np.zeros((1, 2, 3), np.float32))).shape == [1, 2, 7]


@pytest.mark.parametrize("mode", ["reflect", "circular"])
def test_conv_padding_modes(dynamic_mode, mode):
    conv = paddle.nn.Conv2D(2, 3, 3, padding=1, padding_mode=mode)
    xv = rand(1, 2, 5, 5).astype(np.float32)
    y = conv(paddle.to_tensor(xv))
    np_mode = {"reflect": "reflect", "circular": "wrap"}[mode]
    padded = paddle.to_tensor(np.pad(xv, [(0, 0), (0, 0), (1, 1), (1, 1)], mode=np_mode))
    want = F.conv2d(padded, conv.weight, conv.bias)
    np.testing.assert_allclose(y.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    c1 = paddle.nn.Conv1D(2, 3, 3, padding=1, padding_mode=mode)
    assert c1(paddle.to_tensor(rand(1, 2, 6).astype(np.float32))).shape == [1, 3, 6]
    with pytest.raises(ValueError, match="padding_mode must be one of"):
        paddle.nn.Conv2D(2, 3, 3, padding_mode="mirror")


def test_flatten_and_add_n_gradients(dynamic_mode):
    check_eager_grad(lambda x: paddle.flatten(x, 1, 2) * 2.0, [rand(2, 3, 4, 2)], order=2)
    check_eager_grad(lambda a, b, c: paddle.add_n([a, b, c]) * a, [rand(2, 3), rand(2, 3), rand(2, 3)], order=2)


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_static_layers(backend):
    core.enable_static()
    try:
        main, startup = Program(), Program()
        with program_guard(main, startup), unique_name.guard():
            x = paddle.static.data("x", [-1, 5, 5, 3], "float32")
            c = paddle.static.nn.conv2d(x, 4, 3, padding=1, data_format="NHWC", act="relu")
            t = paddle.static.nn.conv2d_transpose(paddle.static.data("z", [-1, 3, 4, 4], "float32"),
                                                  2, output_size=9, stride=2)
            w = main.global_block().var("conv2d_transpose_0.w_0")
        assert c.shape == [-1, 5, 5, 4] and t.shape == [-1, 2, 9, 9] and w.shape == [3, 2, 3, 3]
        exe = paddle.static.Executor(paddle.CPUPlace(), backend=backend)
        scope = paddle.static.Scope()
        xv = rand(2, 5, 5, 3).astype(np.float32)
        with paddle.static.scope_guard(scope), warnings.catch_warnings():
            warnings.simplefilter("error")  # native code: no interpreter fallback
            exe.run(startup)
            cv, tv = exe.run(main, feed={"x": xv, "z": rand(2, 3, 4, 4).astype(np.float32)}, fetch_list=[c, t])
        core.disable_static()
        wv, bv = scope["conv2d_0.w_0"], scope["conv2d_0.b_0"]
        want = F.conv2d(paddle.to_tensor(xv), paddle.to_tensor(wv), paddle.to_tensor(bv), padding=1,
                        data_format="NHWC").numpy()
        np.testing.assert_allclose(cv, np.maximum(want, 0), rtol=1e-4, atol=1e-5)
        assert tv.shape == (2, 2, 9, 9)
    finally:
        core.disable_static()
