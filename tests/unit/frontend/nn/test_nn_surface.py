"""The composite paddle.nn / paddle.nn.functional surface (frontend/ops/resample.py,
composite_nn.py, composite_loss.py and their layers): values against numpy references
written from Paddle's kernel formulas and against hand-computed values, gradients
against float64 finite differences, static mode on both backends, and Paddle's errors.
"""

from __future__ import annotations

import math

import numpy as np
import pullback as paddle
import pytest
from pullback.frontend import core
from pullback.testing import check_eager_grad

F = paddle.nn.functional
R = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def dynamic_mode():
    core.disable_static()
    yield
    core.disable_static()


def T(a: np.ndarray) -> paddle.Tensor:
    return paddle.to_tensor(a)


# ---------------------------------------------------------- numpy references


def interp_matrix(n_in: int, n_out: int, mode: str, align_corners: bool, align_mode: int,
                  scale: float | None = None) -> np.ndarray:
    """[n_out, n_in] resampling weights, transcribed scalar by scalar from Paddle's
    phi interpolate kernels (float32 ratios, C++ truncation)."""
    if n_out == 1:
        ratio = np.float32(0)
    elif align_corners:
        ratio = np.float32((n_in - 1) / (n_out - 1))
    elif scale is not None:
        ratio = np.float32(1.0 / scale)
    else:
        ratio = np.float32(n_in / n_out)
    m = np.zeros((n_out, n_in))
    for k in range(n_out):
        kf = np.float32(k)
        if mode == "nearest":
            m[k, min(int(ratio * kf), n_in - 1)] = 1.0
        elif mode == "linear":
            flag = align_mode == 0 and not align_corners
            src = ratio * (kf + np.float32(0.5)) - np.float32(0.5) if flag else ratio * kf
            lo = max(int(src), 0)  # int() truncates toward zero like static_cast<int>
            hi = lo + 1 if lo < n_in - 1 else lo
            d = (max(float(src), 0.0) if flag else float(src)) - lo
            m[k, lo] += 1 - d
            m[k, hi] += d
        else:  # cubic
            src = ratio * kf if align_corners else ratio * (kf + np.float32(0.5)) - np.float32(0.5)
            base = math.floor(src)
            t = float(src) - base
            a = -0.75
            ws = [((a * v - 5 * a) * v + 8 * a) * v - 4 * a if j in (0, 3) else ((a + 2) * v - (a + 3)) * v * v + 1
                  for j, v in enumerate([t + 1, t, 1 - t, 2 - t])]
            for j, w in enumerate(ws):
                m[k, min(max(base - 1 + j, 0), n_in - 1)] += w
    return m


def bilinear_direct(x: np.ndarray, oh: int, ow: int, align_corners: bool, align_mode: int) -> np.ndarray:
    """Paddle's BilinearInterpolation loop (NCHW), one output pixel at a time."""
    n, c, h, w = x.shape
    rh = np.float32(0) if oh == 1 else np.float32((h - 1) / (oh - 1)) if align_corners else np.float32(h / oh)
    rw = np.float32(0) if ow == 1 else np.float32((w - 1) / (ow - 1)) if align_corners else np.float32(w / ow)
    flag = align_mode == 0 and not align_corners
    out = np.zeros((n, c, oh, ow))
    for k in range(oh):
        sy = rh * (k + np.float32(0.5)) - np.float32(0.5) if flag else rh * np.float32(k)
        y0 = max(int(sy), 0)
        y1 = y0 + 1 if y0 < h - 1 else y0
        dy = (max(float(sy), 0.0) if flag else float(sy)) - y0
        for lpos in range(ow):
            sx = rw * (lpos + np.float32(0.5)) - np.float32(0.5) if flag else rw * np.float32(lpos)
            x0 = max(int(sx), 0)
            x1 = x0 + 1 if x0 < w - 1 else x0
            dx = (max(float(sx), 0.0) if flag else float(sx)) - x0
            out[:, :, k, lpos] = ((1 - dy) * ((1 - dx) * x[:, :, y0, x0] + dx * x[:, :, y0, x1])
                                  + dy * ((1 - dx) * x[:, :, y1, x0] + dx * x[:, :, y1, x1]))
    return out


def resample_np(x: np.ndarray, axes: list[int], outs: list[int], mode: str, align_corners: bool = False,
                align_mode: int = 0, scales: list[float] | None = None) -> np.ndarray:
    for i, (a, o) in enumerate(zip(axes, outs)):
        m = interp_matrix(x.shape[a], o, mode, align_corners, align_mode, None if scales is None else scales[i])
        x = np.moveaxis(np.tensordot(m, np.moveaxis(x, a, 0), axes=1), 0, a)
    return x


def unfold_np(x: np.ndarray, k: tuple[int, int], s: tuple[int, int], p: tuple[int, int, int, int],
              d: tuple[int, int]) -> np.ndarray:
    n, c, h, w = x.shape
    xp = np.pad(x, [(0, 0), (0, 0), (p[0], p[2]), (p[1], p[3])])
    oh = (h + p[0] + p[2] - (d[0] * (k[0] - 1) + 1)) // s[0] + 1
    ow = (w + p[1] + p[3] - (d[1] * (k[1] - 1) + 1)) // s[1] + 1
    out = np.zeros((n, c * k[0] * k[1], oh * ow))
    for ci in range(c):
        for i in range(k[0]):
            for j in range(k[1]):
                for a in range(oh):
                    for b in range(ow):
                        out[:, ci * k[0] * k[1] + i * k[1] + j, a * ow + b] = \
                            xp[:, ci, a * s[0] + i * d[0], b * s[1] + j * d[1]]
    return out


def fold_np(cols: np.ndarray, size: tuple[int, int], k: tuple[int, int], s: tuple[int, int],
            p: tuple[int, int, int, int], d: tuple[int, int]) -> np.ndarray:
    n, ck, _ = cols.shape
    c = ck // (k[0] * k[1])
    h, w = size
    oh = (h + p[0] + p[2] - (d[0] * (k[0] - 1) + 1)) // s[0] + 1
    ow = (w + p[1] + p[3] - (d[1] * (k[1] - 1) + 1)) // s[1] + 1
    out = np.zeros((n, c, h + p[0] + p[2], w + p[1] + p[3]))
    for ci in range(c):
        for i in range(k[0]):
            for j in range(k[1]):
                for a in range(oh):
                    for b in range(ow):
                        out[:, ci, a * s[0] + i * d[0], b * s[1] + j * d[1]] += \
                            cols[:, ci * k[0] * k[1] + i * k[1] + j, a * ow + b]
    return out[:, :, p[0]:p[0] + h, p[1]:p[1] + w]


def log_sigmoid_np(x: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0.0, -x)


# ----------------------------------------------------------------- interpolate


def test_interpolate_known_values():
    x = T(np.array([[[[1.0, 2.0], [3.0, 4.0]]]]))
    np.testing.assert_array_equal(
        F.interpolate(x, scale_factor=2).numpy()[0, 0],
        [[1, 1, 2, 2], [1, 1, 2, 2], [3, 3, 4, 4], [3, 3, 4, 4]])
    np.testing.assert_allclose(
        F.interpolate(x, size=[3, 3], mode="bilinear", align_corners=True).numpy()[0, 0],
        [[1, 1.5, 2], [2, 2.5, 3], [3, 3.5, 4]], rtol=1e-7)
    # half-pixel centres (align_mode 0): source rows -0.25 -> 0, 0.25, 0.75, 1.25 -> 1
    np.testing.assert_allclose(
        F.interpolate(x, size=[4, 4], mode="bilinear").numpy()[0, 0, 0], [1, 1.25, 1.75, 2], rtol=1e-7)
    # align_mode 1: source = ratio * k
    np.testing.assert_allclose(
        F.interpolate(x, size=[4, 4], mode="bilinear", align_mode=1).numpy()[0, 0, 0], [1, 1.5, 2, 2],
        rtol=1e-7)
    u8 = paddle.to_tensor(np.array([[[[1, 2], [3, 4]]]], dtype="uint8"))
    got = F.interpolate(u8, scale_factor=2)
    assert got.dtype == u8.dtype
    np.testing.assert_array_equal(got.numpy()[0, 0, 1], [1, 1, 2, 2])
    # one output pixel samples the first input (Paddle's ratio is 0 then)
    np.testing.assert_array_equal(F.interpolate(x, size=[1, 1], mode="bilinear").numpy(), [[[[1.0]]]])
    # equal sizes copy the input whatever the scale (Paddle's kernels do)
    y = R.standard_normal((1, 1, 4, 4))
    np.testing.assert_array_equal(F.interpolate(T(y), scale_factor=1.01, mode="bicubic").numpy(), y)


@pytest.mark.parametrize("mode,size,scale,ac,am", [
    ("nearest", [5, 7], None, False, 0),
    ("nearest", None, [1.5, 0.5], False, 0),
    ("bilinear", [5, 7], None, False, 0),
    ("bilinear", [5, 3], None, True, 0),
    ("bilinear", [2, 9], None, False, 1),
    ("bilinear", None, 1.7, False, 0),
    ("bicubic", [5, 7], None, False, 0),
    ("bicubic", [6, 2], None, True, 0),
    ("bilinear", [1, 3], None, False, 0),
    ("bicubic", [1, 1], None, False, 0),
])
def test_interpolate_4d_against_kernel_formulas(mode, size, scale, ac, am):
    x = R.standard_normal((2, 3, 4, 5))
    got = F.interpolate(T(x), size=size, scale_factor=scale, mode=mode, align_corners=ac,
                        align_mode=am).numpy()
    scales = None if scale is None else ([scale] * 2 if np.isscalar(scale) else scale)
    outs = size or [int(math.floor(d * s)) for d, s in zip(x.shape[2:], scales)]
    kind = {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    want = resample_np(x, [2, 3], outs, kind, ac, am, scales)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    if mode == "bilinear" and scale is None:
        np.testing.assert_allclose(got, bilinear_direct(x, outs[0], outs[1], ac, am), rtol=1e-6, atol=1e-7)
    # NHWC is the same resampling of the transposed data.
    nhwc = F.interpolate(T(x.transpose(0, 2, 3, 1)), size=size, scale_factor=scale, mode=mode,
                         align_corners=ac, align_mode=am, data_format="NHWC").numpy()
    np.testing.assert_allclose(nhwc, want.transpose(0, 2, 3, 1), rtol=1e-6, atol=1e-7)


def test_interpolate_linear_trilinear_nearest3d_area():
    x3 = R.standard_normal((2, 3, 5))
    got = F.interpolate(T(x3), size=[8], mode="linear").numpy()
    np.testing.assert_allclose(got, resample_np(x3, [2], [8], "linear"), rtol=1e-6)
    x5 = R.standard_normal((1, 2, 3, 4, 2))
    got = F.interpolate(T(x5), scale_factor=[2, 0.5, 1.5], mode="trilinear", align_corners=True).numpy()
    np.testing.assert_allclose(got, resample_np(x5, [2, 3, 4], [6, 2, 3], "linear", True), rtol=1e-6)
    got = F.upsample(T(x5), size=[4, 5, 3], mode="nearest").numpy()
    np.testing.assert_allclose(got, resample_np(x5, [2, 3, 4], [4, 5, 3], "nearest"))
    x = R.standard_normal((1, 2, 4, 6))
    got = F.interpolate(T(x), size=[2, 3], mode="area").numpy()
    np.testing.assert_allclose(got, x.reshape(1, 2, 2, 2, 3, 2).mean((3, 5)), rtol=1e-12)
    # 5-D area: adaptive average pooling, windows [floor(i*in/out), ceil((i+1)*in/out))
    x5 = R.standard_normal((1, 2, 5, 4, 3))
    got = F.interpolate(T(x5), size=[3, 2, 3], mode="area").numpy()
    want = np.zeros((1, 2, 3, 2, 3))
    for i in range(3):
        for j in range(2):
            for k in range(3):
                want[:, :, i, j, k] = x5[:, :, (i * 5) // 3:-((-(i + 1) * 5) // 3), 2 * j:2 * j + 2, k].mean((2, 3))
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("mode,kw", [
    ("bilinear", {"size": [3, 5]}),
    ("bicubic", {"scale_factor": 1.5, "align_corners": True}),
    ("nearest", {"scale_factor": 2}),
])
def test_interpolate_gradients(mode, kw):
    x = R.standard_normal((1, 2, 3, 3))
    check_eager_grad(lambda t: F.interpolate(t, mode=mode, **kw), [x], order=2)


def test_interpolate_errors():
    x = T(R.standard_normal((1, 1, 2, 2)))
    with pytest.raises(ValueError, match="One of size and scale_factor must not be None"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="Only one of size or scale_factor"):
        F.interpolate(x, size=[3, 3], scale_factor=2)
    with pytest.raises(ValueError, match="align_corners option can only be set"):
        F.interpolate(x, size=[3, 3], align_corners=True)
    with pytest.raises(ValueError, match="'resample' of image_resize"):
        F.interpolate(x, size=[3, 3], mode="cubic")
    with pytest.raises(ValueError, match="mode 'trilinear' only supports 5-D"):
        F.interpolate(x, size=[3, 3], mode="trilinear")
    with pytest.raises(ValueError, match="rank\\(x\\) - 2 == len\\(size\\)"):
        F.interpolate(x, size=[3], mode="bilinear")
    with pytest.raises(ValueError, match="align_mode can only be 0 or 1"):
        F.interpolate(x, size=[3, 3], mode="bilinear", align_mode=2)
    with pytest.raises(ValueError, match="should be greater than zero"):
        F.interpolate(x, scale_factor=-1.0)
    with pytest.raises(ValueError, match="only `NCHW` or `NHWC`"):
        F.interpolate(x, size=[3, 3], data_format="NCW")


def test_fluid_resize_spellings():
    x = R.standard_normal((1, 2, 3, 4))
    fluid = paddle.fluid.layers
    # fluid's defaults: align_corners=True, align_mode=1; nearest rounds then
    np.testing.assert_allclose(fluid.resize_bilinear(T(x), out_shape=[5, 7]).numpy(),
                               resample_np(x, [2, 3], [5, 7], "linear", True, 1), rtol=1e-6)
    got = fluid.resize_nearest(T(x), scale=2.0).numpy()
    rows = [min(int(np.float32(2 / 5) * np.float32(k) + np.float32(0.5)), 2) for k in range(6)]
    cols = [min(int(np.float32(3 / 7) * np.float32(k) + np.float32(0.5)), 3) for k in range(8)]
    np.testing.assert_array_equal(got, x[:, :, rows][:, :, :, cols])
    got = fluid.image_resize(T(x), out_shape=[6, 2], resample="BILINEAR", align_corners=False, align_mode=0)
    np.testing.assert_allclose(got.numpy(), resample_np(x, [2, 3], [6, 2], "linear"), rtol=1e-6)
    x5 = R.standard_normal((1, 1, 2, 3, 2))
    np.testing.assert_allclose(fluid.resize_trilinear(T(x5), out_shape=[3, 3, 4]).numpy(),
                               resample_np(x5, [2, 3, 4], [3, 3, 4], "linear", True, 1), rtol=1e-6)
    with pytest.raises(ValueError, match="One of out_shape and scale must not be None"):
        fluid.resize_bilinear(T(x))
    with pytest.raises(ValueError, match="resample 'TRILINEAR' needs a 5-D input"):
        fluid.image_resize(T(x), out_shape=[2, 2], resample="TRILINEAR")


def test_adaptive_avg_pool3d_and_sequence_mask():
    x = R.standard_normal((1, 2, 5, 4, 3))
    want = np.zeros((1, 2, 3, 4, 2))
    for i in range(3):
        for k in range(2):
            d0, d1 = (i * 5) // 3, -((-(i + 1) * 5) // 3)
            h0, h1 = (k * 3) // 2, -((-(k + 1) * 3) // 2)
            want[:, :, i, :, k] = x[:, :, d0:d1, :, h0:h1].mean((2, 4))
    np.testing.assert_allclose(F.adaptive_avg_pool3d(T(x), [3, None, 2]).numpy(), want, rtol=1e-12)
    got = paddle.nn.AdaptiveAvgPool3D([3, 4, 2], data_format="NDHWC")(T(x.transpose(0, 2, 3, 4, 1)))
    np.testing.assert_allclose(got.numpy(), want.transpose(0, 2, 3, 4, 1), rtol=1e-12)
    check_eager_grad(lambda t: F.adaptive_avg_pool3d(t, 2), [x[:, :1]])
    wmax = np.zeros((1, 2, 3, 4, 2))
    for i in range(3):
        for k in range(2):
            d0, d1 = (i * 5) // 3, -((-(i + 1) * 5) // 3)
            h0, h1 = (k * 3) // 2, -((-(k + 1) * 3) // 2)
            wmax[:, :, i, :, k] = x[:, :, d0:d1, :, h0:h1].max((2, 4))
    np.testing.assert_array_equal(F.adaptive_max_pool3d(T(x), [3, None, 2]).numpy(), wmax)
    np.testing.assert_array_equal(paddle.nn.AdaptiveMaxPool3D([3, 4, 2])(T(x)).numpy(), wmax)
    check_eager_grad(lambda t: F.adaptive_max_pool3d(t, [2, 3, 2]), [x[:, :1]])
    lengths = np.array([[2, 0], [3, 1]])
    mask = F.sequence_mask(T(lengths))
    assert mask.dtype == paddle.int64
    np.testing.assert_array_equal(mask.numpy(), np.arange(3) < lengths[..., None])
    np.testing.assert_array_equal(F.sequence_mask(T(lengths), maxlen=5, dtype="float32").numpy(),
                                  (np.arange(5) < lengths[..., None]).astype("float32"))


def grid_sample_np(x: np.ndarray, grid: np.ndarray, mode: str, padding: str, align: bool) -> np.ndarray:
    """Paddle's CPU grid_sample, one output point at a time."""
    n, c, h, w = x.shape
    _, ho, wo, _ = grid.shape

    def unnorm(g: float, size: int) -> float:
        v = (g + 1) / 2 * (size - 1) if align else ((g + 1) * size - 1) / 2
        if padding == "border":
            v = min(max(v, 0.0), size - 1.0)
        elif padding == "reflection":
            lo2, hi2 = (0, 2 * (size - 1)) if align else (-1, 2 * size - 1)
            if lo2 == hi2:
                v = 0.0
            else:
                low, span = lo2 / 2, (hi2 - lo2) / 2
                d = abs(v - low)
                flips = math.floor(d / span)
                extra = d - flips * span
                v = extra + low if flips % 2 == 0 else span - extra + low
            v = min(max(v, 0.0), size - 1.0)
        return v

    def at(b: int, yy: int, xx: int) -> np.ndarray:
        return x[b, :, yy, xx] if 0 <= yy < h and 0 <= xx < w else np.zeros(c)

    out = np.zeros((n, c, ho, wo))
    for b in range(n):
        for i in range(ho):
            for j in range(wo):
                sx, sy = unnorm(grid[b, i, j, 0], w), unnorm(grid[b, i, j, 1], h)
                if mode == "nearest":
                    out[b, :, i, j] = at(b, int(math.floor(sy + 0.5)), int(math.floor(sx + 0.5)))
                    continue
                x0, y0 = math.floor(sx), math.floor(sy)
                dx, dy = sx - x0, sy - y0
                out[b, :, i, j] = ((1 - dx) * (1 - dy) * at(b, y0, x0) + dx * (1 - dy) * at(b, y0, x0 + 1)
                                   + (1 - dx) * dy * at(b, y0 + 1, x0) + dx * dy * at(b, y0 + 1, x0 + 1))
    return out


@pytest.mark.parametrize("mode,padding,align", [
    ("bilinear", "zeros", True), ("bilinear", "zeros", False), ("bilinear", "border", False),
    ("bilinear", "reflection", True), ("bilinear", "reflection", False), ("nearest", "zeros", True),
    ("nearest", "border", False),
])
def test_grid_sample(mode, padding, align):
    x = R.standard_normal((2, 3, 4, 5))
    grid = R.uniform(-1.4, 1.4, (2, 3, 2, 2))
    got = F.grid_sample(T(x), T(grid), mode=mode, padding_mode=padding, align_corners=align).numpy()
    np.testing.assert_allclose(got, grid_sample_np(x, grid, mode, padding, align), rtol=1e-10, atol=1e-12)
    if mode == "bilinear":
        check_eager_grad(lambda a, g: F.grid_sample(a, g, mode=mode, padding_mode=padding, align_corners=align),
                         [x[:1, :1], grid[:1]])


def test_affine_grid():
    theta = R.standard_normal((2, 2, 3))
    for align in (True, False):
        got = F.affine_grid(T(theta), [2, 3, 4, 5], align_corners=align).numpy()
        xs, ys = np.linspace(-1, 1, 5), np.linspace(-1, 1, 4)
        if not align:
            xs, ys = xs * 4 / 5, ys * 3 / 4
        base = np.stack(np.broadcast_arrays(xs[None, :], ys[:, None], 1.0), -1)  # [H, W, 3]
        np.testing.assert_allclose(got, np.einsum("hwk,njk->nhwj", base, theta), rtol=1e-12)
    check_eager_grad(lambda t: F.affine_grid(t, [2, 1, 3, 3]), [theta])
    # the identity map samples the input back exactly (align_corners=True)
    x = R.standard_normal((1, 2, 3, 4))
    eye = T(np.array([[[1.0, 0, 0], [0, 1, 0]]]))
    np.testing.assert_allclose(F.grid_sample(T(x), F.affine_grid(eye, [1, 2, 3, 4])).numpy(), x, rtol=1e-12)
    with pytest.raises(ValueError, match="padding mode of grid sample function"):
        F.grid_sample(T(x), F.affine_grid(eye, [1, 2, 3, 4]), padding_mode="wrap")


def test_upsample_layers():
    x = R.standard_normal((1, 2, 3, 4))
    np.testing.assert_allclose(paddle.nn.UpsamplingBilinear2D(size=[5, 6])(T(x)).numpy(),
                               resample_np(x, [2, 3], [5, 6], "linear", True), rtol=1e-6)
    np.testing.assert_allclose(paddle.nn.UpsamplingNearest2D(scale_factor=2)(T(x)).numpy(),
                               x.repeat(2, 2).repeat(2, 3))
    np.testing.assert_allclose(paddle.nn.Upsample(size=[6, 8], mode="bilinear")(T(x)).numpy(),
                               resample_np(x, [2, 3], [6, 8], "linear"), rtol=1e-6)


# -------------------------------------------------------------------- shuffles


def test_pixel_shuffle_unshuffle_channel_shuffle():
    r = 2
    x = R.standard_normal((2, 8, 3, 2))
    want = np.zeros((2, 2, 6, 4))
    for c in range(2):
        for i in range(r):
            for j in range(r):
                want[:, c, i::r, j::r] = x[:, c * r * r + i * r + j]
    np.testing.assert_array_equal(F.pixel_shuffle(T(x), r).numpy(), want)
    np.testing.assert_array_equal(paddle.nn.PixelShuffle(r, "NHWC")(T(x.transpose(0, 2, 3, 1))).numpy(),
                                  want.transpose(0, 2, 3, 1))
    np.testing.assert_array_equal(F.pixel_unshuffle(T(want), r).numpy(), x)
    np.testing.assert_array_equal(
        paddle.nn.PixelUnshuffle(r, "NHWC")(T(want.transpose(0, 2, 3, 1))).numpy(), x.transpose(0, 2, 3, 1))
    g = 4
    cs = F.channel_shuffle(T(x), g).numpy()
    for i in range(8 // g):
        for j in range(g):
            np.testing.assert_array_equal(cs[:, i * g + j], x[:, j * (8 // g) + i])
    np.testing.assert_array_equal(paddle.nn.ChannelShuffle(g, "NHWC")(T(x.transpose(0, 2, 3, 1))).numpy(),
                                  cs.transpose(0, 2, 3, 1))
    check_eager_grad(lambda t: F.pixel_shuffle(t, 2) * F.pixel_shuffle(t, 2), [x[:1, :, :2]])
    with pytest.raises(TypeError, match="upscale_factor must be int type"):
        F.pixel_shuffle(T(x), 3.33)
    with pytest.raises(ValueError, match="groups must be positive"):
        F.channel_shuffle(T(x), 0)
    with pytest.raises(ValueError, match="should divide the number of channel"):
        F.pixel_shuffle(T(R.standard_normal((1, 6, 2, 2))), 2)
    with pytest.raises(ValueError, match="should divide both height"):
        F.pixel_unshuffle(T(R.standard_normal((1, 1, 3, 2))), 2)
    with pytest.raises(ValueError, match="Attr\\(data_format\\) should be 'NCHW' or 'NHWC'"):
        F.channel_shuffle(T(x), 2, data_format="NCWH")


def test_temporal_shift():
    x = R.standard_normal((6, 8, 2, 2))  # N=2 clips of T=3 frames
    v = x.reshape(2, 3, 8, 2, 2)
    want = np.zeros_like(v)
    c1, c2 = int(8 * 0.25), int(8 * 0.5)
    for t in range(3):
        for ch in range(8):
            src = t - 1 if ch < c1 else t + 1 if ch < c2 else t
            if 0 <= src < 3:
                want[:, t, ch] = v[:, src, ch]
    want = want.reshape(6, 8, 2, 2)
    np.testing.assert_array_equal(F.temporal_shift(T(x), 3).numpy(), want)
    got = F.temporal_shift(T(x.transpose(0, 2, 3, 1)), 3, data_format="NHWC").numpy()
    np.testing.assert_array_equal(got, want.transpose(0, 2, 3, 1))
    check_eager_grad(lambda t: F.temporal_shift(t, 3, 0.3) ** 2, [x[:, :4, :1, :1]])
    with pytest.raises(TypeError, match="seg_num must be int type"):
        F.temporal_shift(T(x), 2.0)


# --------------------------------------------------------------- unfold / fold


@pytest.mark.parametrize("k,s,p,d", [
    ((2, 2), (1, 1), (0, 0, 0, 0), (1, 1)),
    ((3, 2), (2, 1), (1, 0, 2, 1), (1, 2)),
    ((2, 3), (2, 3), (1, 1, 1, 1), (2, 1)),
])
def test_unfold_fold_against_loops(k, s, p, d):
    x = R.standard_normal((2, 2, 5, 6))
    pads = list(p) if p[0] != p[2] or p[1] != p[3] else [p[0], p[1]]
    cols = F.unfold(T(x), list(k), list(s), pads, list(d)).numpy()
    np.testing.assert_array_equal(cols, unfold_np(x, k, s, p, d))
    layer = paddle.nn.Unfold(list(k), dilations=list(d), paddings=pads, strides=list(s))
    np.testing.assert_array_equal(layer(T(x)).numpy(), cols)
    c = R.standard_normal(cols.shape)
    got = F.fold(T(c), [5, 6], list(k), list(s), pads, list(d)).numpy()
    np.testing.assert_allclose(got, fold_np(c, (5, 6), k, s, p, d), rtol=1e-12)
    np.testing.assert_allclose(
        paddle.nn.Fold([5, 6], list(k), dilations=list(d), paddings=pads, strides=list(s))(T(c)).numpy(),
        got, rtol=1e-12)


def test_unfold_fold_gradients_and_errors():
    x = R.standard_normal((1, 1, 4, 4))
    check_eager_grad(lambda t: F.unfold(t, 2, strides=2, paddings=1) ** 2, [x])
    cols = R.standard_normal((1, 4, 9))
    check_eager_grad(lambda t: F.fold(t, [4, 4], 2, strides=1, paddings=0) ** 2, [cols])
    with pytest.raises(AssertionError, match="unfold: input should be the format of \\[N, C, H, W\\]"):
        F.unfold(T(x[0]), 2)
    with pytest.raises(ValueError, match="kernel_sizes should either be an integer or a list of two"):
        F.unfold(T(x), [2, 2, 2])
    with pytest.raises(ValueError, match="paddings should either be an integer or a list of 2 or 4"):
        F.unfold(T(x), 2, paddings=[1, 1, 1])
    with pytest.raises(ValueError, match="should be divisible by the product of kernel_sizes"):
        F.fold(T(R.standard_normal((1, 3, 9))), [4, 4], 2)
    with pytest.raises(ValueError, match="expected the input's last dimension to be 9"):
        F.fold(T(R.standard_normal((1, 4, 8))), [4, 4], 2)


def test_zeropad2d():
    x = R.standard_normal((1, 2, 2, 3))
    np.testing.assert_array_equal(F.zeropad2d(T(x), [1, 0, 2, 1]).numpy(),
                                  np.pad(x, [(0, 0), (0, 0), (2, 1), (1, 0)]))
    np.testing.assert_array_equal(F.zeropad2d(T(x), 1).numpy(), np.pad(x, [(0, 0), (0, 0), (1, 1), (1, 1)]))


# ------------------------------------------------------------- 3-D conv / pools


def conv3d_np(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, s: list[int], p: list[list[int]],
              d: list[int], g: int) -> np.ndarray:
    """Direct 3-D cross-correlation, one output position at a time."""
    xp = np.pad(x, [(0, 0), (0, 0)] + [tuple(q) for q in p])
    o, cg, *k = w.shape
    outs = [(xp.shape[2 + i] - (d[i] * (k[i] - 1) + 1)) // s[i] + 1 for i in range(3)]
    out = np.zeros((x.shape[0], o, *outs))
    for oc in range(o):
        gi = oc // (o // g)
        for pos in np.ndindex(*outs):
            sl = tuple(slice(pos[i] * s[i], pos[i] * s[i] + d[i] * (k[i] - 1) + 1, d[i]) for i in range(3))
            out[(slice(None), oc, *pos)] = (xp[(slice(None), slice(gi * cg, (gi + 1) * cg), *sl)] * w[oc]).sum((1, 2, 3, 4))
    return out if b is None else out + b[None, :, None, None, None]


def pool3d_np(x: np.ndarray, k: list[int], s: list[int], p: list[int], kind: str, exclusive: bool = True,
              ceil_mode: bool = False) -> np.ndarray:
    """Paddle's Pool3dFunctor: windows clipped to the input; the average divides by
    the clipped size (exclusive) or the kernel volume."""
    dims = x.shape[2:]
    outs = [((n + 2 * q - kk + (ss - 1 if ceil_mode else 0)) // ss) + 1 for n, kk, ss, q in zip(dims, k, s, p)]
    out = np.zeros((*x.shape[:2], *outs))
    for pos in np.ndindex(*outs):
        lo = [pos[i] * s[i] - p[i] for i in range(3)]
        hi = [min(lo[i] + k[i], dims[i] + p[i]) for i in range(3)]
        lo, hi = [max(v, 0) for v in lo], [min(hi[i], dims[i]) for i in range(3)]
        win = x[(slice(None), slice(None), *[slice(a, b) for a, b in zip(lo, hi)])]
        if kind == "max":
            out[(slice(None), slice(None), *pos)] = win.max((2, 3, 4))
        else:
            div = win[0, 0].size if exclusive else math.prod(k)
            out[(slice(None), slice(None), *pos)] = win.sum((2, 3, 4)) / div
    return out


def test_conv3d():
    x = R.standard_normal((2, 4, 4, 5, 3))
    w = R.standard_normal((6, 2, 2, 3, 1))
    b = R.standard_normal(6)
    got = F.conv3d(T(x), T(w), T(b), stride=[1, 2, 1], padding=[1, 0, 1, 1, 0, 2], dilation=[1, 1, 2], groups=2)
    np.testing.assert_allclose(got.numpy(), conv3d_np(x, w, b, [1, 2, 1], [[1, 0], [1, 1], [0, 2]], [1, 1, 2], 2),
                               rtol=1e-10, atol=1e-12)
    same = F.conv3d(T(x.transpose(0, 2, 3, 4, 1)), T(w[:, :, :, :2]), padding="SAME", groups=2,
                    data_format="NDHWC").numpy()
    want = conv3d_np(x, w[:, :, :, :2], None, [1, 1, 1], [[0, 1], [0, 1], [0, 0]], [1, 1, 1], 2)
    np.testing.assert_allclose(same, want.transpose(0, 2, 3, 4, 1), rtol=1e-10, atol=1e-12)
    check_eager_grad(lambda a, ww, bb: F.conv3d(a, ww, bb, padding=1, stride=2),
                     [x[:1, :2, :3, :3, :2], w[:2, :, :2, :2], b[:2]], order=2)
    layer = paddle.nn.Conv3D(4, 6, (2, 3, 1), padding=1, groups=2)
    assert layer.weight.shape == [6, 2, 2, 3, 1]
    assert layer(T(x.astype("float32"))).shape == [2, 6, 5, 5, 5]
    with pytest.raises(ValueError, match="conv3d: weight \\[6, 3, 2, 3, 1\\] and groups=2 do not match"):
        F.conv3d(T(x), T(R.standard_normal((6, 3, 2, 3, 1))), groups=2)


def conv3d_transpose_np(x: np.ndarray, w: np.ndarray, s: list[int], p: list[list[int]], d: list[int], g: int,
                        extra: list[int]) -> np.ndarray:
    """Transposed convolution as the scatter it is: each input entry adds its
    weighted kernel into the output, then the padding is cropped."""
    n, c, *dims = x.shape
    _, og, *k = w.shape
    full = [(dims[i] - 1) * s[i] + d[i] * (k[i] - 1) + 1 + extra[i] for i in range(3)]
    out = np.zeros((n, og * g, *full))
    cg = c // g
    for ic in range(c):
        gi = ic // cg
        for pos in np.ndindex(*dims):
            for kp in np.ndindex(*k):
                at = tuple(pos[i] * s[i] + kp[i] * d[i] for i in range(3))
                out[(slice(None), slice(gi * og, (gi + 1) * og), *at)] += x[(slice(None), ic, *pos)][:, None] * w[(ic, slice(None), *kp)]
    return out[(slice(None), slice(None), *[slice(p[i][0], full[i] - p[i][1]) for i in range(3)])]


def test_conv3d_transpose():
    x = R.standard_normal((2, 4, 2, 3, 2))
    w = R.standard_normal((4, 3, 2, 3, 2))
    b = R.standard_normal(6)
    got = F.conv3d_transpose(T(x), T(w), T(b), stride=[2, 1, 3], padding=[1, 0, 0, 1, 2, 0], output_padding=[1, 0, 2],
                             groups=2, dilation=[1, 2, 1]).numpy()
    want = conv3d_transpose_np(x, w, [2, 1, 3], [[1, 0], [0, 1], [2, 0]], [1, 2, 1], 2, [1, 0, 2])
    np.testing.assert_allclose(got, want + b[None, :, None, None, None], rtol=1e-10, atol=1e-12)
    sized = F.conv3d_transpose(T(x), T(w), stride=2, padding=1, output_size=[3, 6, 3], groups=2).numpy()
    np.testing.assert_allclose(sized, conv3d_transpose_np(x, w, [2] * 3, [[1, 1]] * 3, [1] * 3, 2, [1, 1, 1]),
                               rtol=1e-10, atol=1e-12)
    nd = F.conv3d_transpose(T(x.transpose(0, 2, 3, 4, 1)), T(w), stride=2, groups=2, data_format="NDHWC").numpy()
    np.testing.assert_allclose(nd, conv3d_transpose_np(x, w, [2] * 3, [[0, 0]] * 3, [1] * 3, 2, [0] * 3)
                               .transpose(0, 2, 3, 4, 1), rtol=1e-10, atol=1e-12)
    check_eager_grad(lambda a, ww: F.conv3d_transpose(a, ww, stride=2, padding=1), [x[:1, :2], w[:2, :2, :2, :2]])
    layer = paddle.nn.Conv3DTranspose(4, 6, 2, stride=2, groups=2)
    assert layer.weight.shape == [4, 3, 2, 2, 2]
    assert layer(T(x.astype("float32"))).shape == [2, 6, 4, 6, 4]
    with pytest.raises(ValueError, match="output_padding \\[2, 0, 0\\] must be smaller than stride"):
        F.conv3d_transpose(T(x), T(w), stride=2, output_padding=[2, 0, 0], groups=2)


@pytest.mark.parametrize("kind,kw", [
    ("max", {"kernel_size": 2}),
    ("max", {"kernel_size": [2, 3, 2], "stride": 2, "ceil_mode": True}),
    ("max", {"kernel_size": 3, "stride": 2, "padding": 1}),
    ("avg", {"kernel_size": 3, "stride": 2, "padding": 1}),
    ("avg", {"kernel_size": 3, "stride": 2, "padding": 1, "exclusive": False}),
    ("avg", {"kernel_size": [2, 3, 3], "stride": [1, 2, 2], "padding": [0, 1, 1], "ceil_mode": True}),
])
def test_pool3d(kind, kw):
    x = R.standard_normal((2, 2, 4, 5, 5))
    fn = F.max_pool3d if kind == "max" else F.avg_pool3d
    got = fn(T(x), **kw).numpy()
    k = [kw["kernel_size"]] * 3 if isinstance(kw["kernel_size"], int) else kw["kernel_size"]
    st = kw.get("stride", k)
    st = [st] * 3 if isinstance(st, int) else st
    p = kw.get("padding", 0)
    p = [p] * 3 if isinstance(p, int) else p
    want = pool3d_np(x, k, st, p, kind, kw.get("exclusive", True), kw.get("ceil_mode", False))
    np.testing.assert_allclose(got, want, rtol=1e-12)
    layer = (paddle.nn.MaxPool3D if kind == "max" else paddle.nn.AvgPool3D)(**kw, data_format="NDHWC")
    np.testing.assert_allclose(layer(T(x.transpose(0, 2, 3, 4, 1))).numpy(), want.transpose(0, 2, 3, 4, 1),
                               rtol=1e-12)
    check_eager_grad(lambda t: fn(t, **kw), [x[:1, :1]])


# ------------------------------------------------------------------------ norms


def test_gumbel_softmax():
    x = R.standard_normal((50, 4))
    soft = F.gumbel_softmax(T(x), temperature=0.5).numpy()
    np.testing.assert_allclose(soft.sum(-1), 1.0, rtol=1e-12)
    t = paddle.to_tensor(x, stop_gradient=False)
    hard = F.gumbel_softmax(t, hard=True)
    h = hard.numpy()
    assert set(np.unique(h)) <= {0.0, 1.0} and (h.sum(-1) == 1).all()
    (g,) = paddle.grad((hard * T(R.standard_normal(x.shape))).sum(), [t])
    assert np.abs(g.numpy()).sum() > 0  # straight-through: the soft sample's gradient
    with pytest.raises(ValueError, match="temperature must be positive"):
        F.gumbel_softmax(T(x), temperature=0.0)


def test_local_response_norm():
    x = R.standard_normal((2, 5, 3, 2))
    size, alpha, beta, k = 3, 1e-2, 0.75, 2.0
    sq = np.pad(x**2, [(0, 0), (size // 2, (size - 1) // 2), (0, 0), (0, 0)])
    avg = np.stack([sq[:, c:c + size].sum(1) / size for c in range(5)], axis=1)
    want = x / (k + alpha * avg) ** beta
    np.testing.assert_allclose(F.local_response_norm(T(x), size, alpha, beta, k).numpy(), want, rtol=1e-12)
    nhwc = paddle.nn.LocalResponseNorm(size, alpha, beta, k, data_format="NHWC")(T(x.transpose(0, 2, 3, 1)))
    np.testing.assert_allclose(nhwc.numpy(), want.transpose(0, 2, 3, 1), rtol=1e-12)
    check_eager_grad(lambda t: F.local_response_norm(t, 2, 0.5, 0.75, 1.0), [x[:1, :, :1]], order=2)
    with pytest.raises(ValueError, match="Expected 3D or higher dimensionality input"):
        F.local_response_norm(T(x[0, 0]), 3)


def test_bilinear_and_pairwise_distance():
    x1, x2, w, b = (R.standard_normal(s) for s in ((3, 2), (3, 4), (5, 2, 4), (1, 5)))
    want = np.einsum("ni,oij,nj->no", x1, w, x2) + b
    np.testing.assert_allclose(F.bilinear(T(x1), T(x2), T(w), T(b)).numpy(), want, rtol=1e-12)
    check_eager_grad(lambda a, c, ww, bb: F.bilinear(a, c, ww, bb), [x1, x2, w, b], order=2)
    layer = paddle.nn.Bilinear(2, 4, 5)
    assert layer.weight.shape == [5, 2, 4] and layer.bias.shape == [1, 5]
    assert layer(T(x1.astype("float32")), T(x2.astype("float32"))).shape == [3, 5]
    x, y = R.standard_normal((4, 3)), R.standard_normal((4, 3))
    d = x - y + 1e-6
    for p, ref in ((2.0, np.sqrt((d**2).sum(-1))), (1.0, np.abs(d).sum(-1)), (3.0, (np.abs(d)**3).sum(-1)**(1 / 3)),
                   (math.inf, np.abs(d).max(-1)), (-math.inf, np.abs(d).min(-1))):
        np.testing.assert_allclose(F.pairwise_distance(T(x), T(y), p).numpy(), ref, rtol=1e-12)
    got = paddle.nn.PairwiseDistance(keepdim=True)(T(x), T(y))
    assert got.shape == [4, 1]
    check_eager_grad(lambda a, c: F.pairwise_distance(a, c, 3.0), [x, y])


def test_sync_batch_norm_is_batch_norm_on_one_device():
    paddle.seed(1)
    x = T(R.standard_normal((4, 3, 2, 2)).astype("float32"))
    sync, plain = paddle.nn.SyncBatchNorm(3), paddle.nn.BatchNorm2D(3)
    np.testing.assert_allclose(sync(x).numpy(), plain(x).numpy(), rtol=1e-6)
    np.testing.assert_allclose(sync._mean.numpy(), plain._mean.numpy(), rtol=1e-6)
    model = paddle.nn.Sequential(paddle.nn.Conv2D(3, 3, 1), paddle.nn.BatchNorm2D(3))
    before = model(x).numpy()
    model[1]._mean.set_value(np.ones(3, "float32"))
    converted = paddle.nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert isinstance(converted[1], paddle.nn.SyncBatchNorm)
    assert converted[1]._mean is model[1]._mean and converted[1].weight is model[1].weight
    assert converted(x).shape == list(before.shape)
    with pytest.raises(ValueError, match="SyncBatchNorm: expected data_format"):
        paddle.nn.SyncBatchNorm(3, data_format="NCWH")


def test_unflatten():
    x = T(R.standard_normal((2, 6, 3)))
    assert paddle.nn.Unflatten(1, [2, 3])(x).shape == [2, 2, 3, 3]
    assert paddle.nn.Unflatten(-1, (3, -1))(x).shape == [2, 6, 3, 1]
    np.testing.assert_array_equal(paddle.nn.Unflatten(1, [3, -1])(x).numpy(), x.numpy().reshape(2, 3, 2, 3))
    with pytest.raises(ValueError, match="does not fit dimension 1"):
        paddle.nn.Unflatten(1, [4, 2])(x)


# ----------------------------------------------------------------------- losses


A, B, C = (R.standard_normal((4, 3)) for _ in range(3))
SIGNS = np.sign(R.standard_normal((4, 3)))
BITS = (R.random((4, 3)) > 0.5).astype("float64")
COUNTS = R.integers(0, 5, (4, 3)).astype("float64")
VAR = R.random((4, 3)) + 0.2


def cos_np(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(-1) / np.sqrt(((a**2).sum(-1) + 1e-11) * ((b**2).sum(-1) + 1e-11))


def stirling(y: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(y > 1, y * np.log(y) - y + 0.5 * np.log(2 * np.pi * y), 0.0)


LOSSES = [
    ("hinge_embedding", lambda a: F.hinge_embedding_loss(a, T(SIGNS), margin=0.5, reduction="none"),
     lambda a: np.where(SIGNS == 1, a, np.maximum(0, 0.5 - a))),
    ("cosine_embedding", lambda a: F.cosine_embedding_loss(a, T(B), T(np.array([1.0, -1, 1, -1])), margin=0.1,
                                                           reduction="none"),
     lambda a: np.where(np.array([1, -1, 1, -1]) == 1, 1 - cos_np(a, B), np.maximum(0, cos_np(a, B) - 0.1))),
    ("triplet_margin", lambda a: F.triplet_margin_loss(a, T(B), T(C), margin=2.0, reduction="none"),
     lambda a: np.maximum(np.sqrt(((a - B + 1e-6)**2).sum(-1)) - np.sqrt(((a - C + 1e-6)**2).sum(-1)) + 2.0, 0)),
    ("triplet_swap", lambda a: F.triplet_margin_loss(a, T(B), T(C), p=1, swap=True, reduction="sum"),
     lambda a: np.maximum(np.abs(a - B + 1e-6).sum(-1) - np.minimum(np.abs(a - C + 1e-6).sum(-1),
                                                                     np.abs(B - C + 1e-6).sum(-1)) + 1, 0).sum()),
    ("multi_label_soft_margin", lambda a: F.multi_label_soft_margin_loss(a, T(BITS), weight=T(VAR)),
     lambda a: (-(BITS * log_sigmoid_np(a) + (1 - BITS) * log_sigmoid_np(-a)) * VAR).mean(-1).mean()),
    ("soft_margin", lambda a: F.soft_margin_loss(a, T(SIGNS), reduction="sum"),
     lambda a: np.log1p(np.exp(-SIGNS * a)).sum()),
    ("poisson_nll", lambda a: F.poisson_nll_loss(a, T(COUNTS), full=True),
     lambda a: (np.exp(a) - COUNTS * a + stirling(COUNTS)).mean()),
    ("poisson_nll_rate", lambda a: F.poisson_nll_loss(a * a + 0.5, T(COUNTS), log_input=False, reduction="none"),
     lambda a: (a * a + 0.5) - COUNTS * np.log(a * a + 0.5 + 1e-8)),
    ("gaussian_nll", lambda a: F.gaussian_nll_loss(a, T(B), T(VAR), full=True, reduction="sum"),
     lambda a: (0.5 * (np.log(VAR) + (a - B)**2 / VAR) + 0.5 * np.log(2 * np.pi)).sum()),
    ("gaussian_nll_homo", lambda a: F.gaussian_nll_loss(a, T(B), T(VAR[:, 0])),
     lambda a: (0.5 * (np.log(VAR[:, :1]) + (a - B)**2 / VAR[:, :1])).mean()),
    ("sigmoid_focal", lambda a: F.sigmoid_focal_loss(a, T(BITS), normalizer=T(np.array([2.0]))),
     lambda a: ((lambda p: (0.25 * BITS + 0.75 * (1 - BITS)) * (1 - (p * BITS + (1 - p) * (1 - BITS)))**2
                 * -(BITS * np.log(p) + (1 - BITS) * np.log(1 - p)))(1 / (1 + np.exp(-a)))).sum() / 2),
    ("log_loss", lambda a: F.log_loss(F.sigmoid(a), T(BITS)),
     lambda a: (lambda p: -BITS * np.log(p + 1e-4) - (1 - BITS) * np.log(1 - p + 1e-4))(1 / (1 + np.exp(-a)))),
]


@pytest.mark.parametrize("name,fn,ref", LOSSES, ids=[t[0] for t in LOSSES])
def test_losses_values_and_gradients(name, fn, ref):
    np.testing.assert_allclose(fn(T(A)).numpy(), ref(A), rtol=1e-10, atol=1e-12)
    check_eager_grad(fn, [A])


def multi_margin_np(x: np.ndarray, y: np.ndarray, p: int, margin: float, w: np.ndarray | None) -> np.ndarray:
    """Per sample: sum over the other classes of w[y] max(0, margin - x[y] + x[i])^p, over C."""
    n, c = x.shape
    out = np.zeros(n)
    for k in range(n):
        for i in range(c):
            if i != y[k]:
                out[k] += (1.0 if w is None else w[y[k]]) * max(0.0, margin - x[k, y[k]] + x[k, i]) ** p
    return out / c


def test_multi_margin_loss():
    x = R.standard_normal((5, 4))
    y = np.array([0, 3, 1, 1, 2])
    w = R.random(4) + 0.5
    for p, margin, weight in ((1, 1.0, None), (2, 0.7, w)):
        fn = lambda t, p=p, margin=margin, weight=weight: F.multi_margin_loss(  # noqa: E731
            t, T(y), p=p, margin=margin, weight=None if weight is None else T(weight), reduction="none")
        np.testing.assert_allclose(fn(T(x)).numpy(), multi_margin_np(x, y, p, margin, weight), rtol=1e-12)
        check_eager_grad(fn, [x])
    np.testing.assert_allclose(paddle.nn.MultiMarginLoss(p=2, weight=T(w))(T(x), T(y)).numpy(),
                               multi_margin_np(x, y, 2, 1.0, w).mean(), rtol=1e-12)
    with pytest.raises(ValueError, match="label's shape\\[0\\] should be equal"):
        F.multi_margin_loss(T(x), T(y[:3]))


def test_margin_cross_entropy():
    cosines = np.tanh(R.standard_normal((4, 5)))
    label = np.array([0, 3, 4, 3])
    m1, m2, m3, s = 1.0, 0.5, 0.1, 8.0
    z = cosines.copy()
    rows = np.arange(4)
    z[rows, label] = np.cos(m1 * np.arccos(cosines[rows, label]) + m2) - m3
    z *= s
    lsm = z - z.max(1, keepdims=True)
    lsm = lsm - np.log(np.exp(lsm).sum(1, keepdims=True))
    per = -lsm[rows, label]
    fn = lambda t, red="none": F.margin_cross_entropy(t, T(label), m1, m2, m3, s, reduction=red)  # noqa: E731
    np.testing.assert_allclose(fn(T(cosines)).numpy(), per[:, None], rtol=1e-10)
    np.testing.assert_allclose(fn(T(cosines), "mean").numpy(), per.mean(), rtol=1e-10)
    loss, sm = F.margin_cross_entropy(T(cosines), T(label[:, None]), m1, m2, m3, s, return_softmax=True,
                                      reduction=None)
    np.testing.assert_allclose(sm.numpy(), np.exp(lsm), rtol=1e-10)
    assert loss.shape == [4, 1]
    check_eager_grad(fn, [cosines])
    with pytest.raises(ValueError, match="reduction must be one of"):
        fn(T(cosines), "avg")


def test_dice_and_npair_losses():
    p = R.random((2, 3, 4))
    p /= p.sum(-1, keepdims=True)
    lab = R.integers(0, 4, (2, 3, 1))
    oh = np.eye(4)[lab[..., 0]]
    inse, den = (p * oh).sum((1, 2)), p.sum((1, 2)) + oh.sum((1, 2))
    np.testing.assert_allclose(F.dice_loss(T(p), T(lab)).numpy(), (1 - 2 * inse / (den + 1e-5)).mean(), rtol=1e-12)
    check_eager_grad(lambda t: F.dice_loss(t, T(lab)), [p])
    with pytest.raises(ValueError, match="The last dimension of label should be 1"):
        F.dice_loss(T(p), T(R.integers(0, 4, (2, 3, 2))))
    labels = np.array([1, 2, 1, 3])
    same = (labels[:, None] == labels[None, :]).astype(float)
    same /= same.sum(1, keepdims=True)
    sim = A @ B.T
    lsm = sim - sim.max(1, keepdims=True)
    lsm = lsm - np.log(np.exp(lsm).sum(1, keepdims=True))
    ce = -(same * lsm).sum(1).mean()
    l2 = 0.25 * 0.002 * ((A**2).sum(1).mean() + (B**2).sum(1).mean())
    np.testing.assert_allclose(F.npair_loss(T(A), T(B), T(labels)).numpy(), l2 + ce, rtol=1e-10)
    check_eager_grad(lambda a, b: F.npair_loss(a, b, T(labels)), [A, B])


def ctc_np(logits: np.ndarray, labels: np.ndarray, in_len: np.ndarray, lab_len: np.ndarray,
           blank: int = 0) -> np.ndarray:
    """CTC negative log-likelihood per sequence: softmax of the logits, then the
    textbook alpha recursion over the blank-extended label, in float64 with -inf."""
    z = logits - logits.max(2, keepdims=True)
    lp = z - np.log(np.exp(z).sum(2, keepdims=True))
    out = []
    for b in range(logits.shape[1]):
        ext = [blank]
        for c in labels[b, :lab_len[b]]:
            ext += [int(c), blank]
        n = len(ext)
        alpha = np.full(n, -np.inf)
        alpha[: min(2, n)] = lp[0, b, ext[: min(2, n)]]
        for t in range(1, in_len[b]):
            nxt = np.full(n, -np.inf)
            for k in range(n):
                terms = [alpha[k]] + ([alpha[k - 1]] if k >= 1 else [])
                if k >= 2 and ext[k] != blank and ext[k] != ext[k - 2]:
                    terms.append(alpha[k - 2])
                nxt[k] = np.logaddexp.reduce(terms) + lp[t, b, ext[k]]
            alpha = nxt
        out.append(-np.logaddexp.reduce(alpha[max(n - 2, 0):]))
    return np.array(out)


def test_ctc_loss():
    x = R.standard_normal((5, 4, 4))
    labels = np.array([[1, 2, 2], [3, 3, 0], [2, 0, 0], [1, 0, 0]], dtype=np.int32)
    il, ll = np.array([5, 4, 3, 2]), np.array([3, 2, 1, 0])
    args = [T(labels), T(il), T(ll)]
    want = ctc_np(x, labels, il, ll)
    np.testing.assert_allclose(F.ctc_loss(T(x), *args, reduction="none").numpy(), want, rtol=1e-10)
    np.testing.assert_allclose(F.ctc_loss(T(x), *args, reduction="sum").numpy(), want.sum(), rtol=1e-10)
    np.testing.assert_allclose(F.ctc_loss(T(x[:, :3]), T(labels[:3]), T(il[:3]), T(ll[:3])).numpy(),
                               (want[:3] / ll[:3]).mean(), rtol=1e-10)
    blank3 = np.where(labels == 3, 0, labels)
    np.testing.assert_allclose(F.ctc_loss(T(x), T(blank3), T(il), T(ll), blank=3, reduction="none").numpy(),
                               ctc_np(x, blank3, il, ll, blank=3), rtol=1e-10)
    check_eager_grad(lambda t: F.ctc_loss(t, *args, reduction="none"), [x])
    np.testing.assert_allclose(paddle.nn.CTCLoss(reduction="sum")(T(x), *args).numpy(), want.sum(), rtol=1e-10)
    # norm_by_times divides the gradient, not the loss, by the input length (warpctc)
    t1, t2 = paddle.to_tensor(x, stop_gradient=False), paddle.to_tensor(x, stop_gradient=False)
    plain = F.ctc_loss(t1, *args, reduction="sum")
    normed = F.ctc_loss(t2, *args, reduction="sum", norm_by_times=True)
    np.testing.assert_allclose(normed.numpy(), plain.numpy(), rtol=1e-12)
    (g1,), (g2,) = paddle.grad(plain, [t1]), paddle.grad(normed, [t2])
    np.testing.assert_allclose(g2.numpy(), g1.numpy() / il[None, :, None], rtol=1e-10, atol=1e-14)
    with pytest.raises(ValueError, match="blank must be in \\[0, 4\\)"):
        F.ctc_loss(T(x), *args, blank=4)
    with pytest.raises(TypeError, match="labels must be int32 or int64"):
        F.ctc_loss(T(x), T(labels.astype("float64")), T(il), T(ll))
    core.enable_static()
    main, start = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, start):
        xv = paddle.static.data("x", [5, None, 4], "float64")
        lv = paddle.static.data("labels", [None, 3], "int32")
        iv = paddle.static.data("il", [None], "int64")
        kv = paddle.static.data("ll", [None], "int64")
        xv.stop_gradient = False
        loss = F.ctc_loss(xv, lv, iv, kv, reduction="none")
        (gx,) = paddle.static.gradients([paddle.sum(loss)], [xv])
    feed = {"x": x, "labels": labels, "il": il, "ll": ll}
    grads = []
    for exe in (paddle.static.Executor(paddle.CPUPlace()),
                paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")):
        got, g = exe.run(main, feed=feed, fetch_list=[loss, gx])
        np.testing.assert_allclose(got, want, rtol=1e-10)
        grads.append(g)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-9, atol=1e-12)


def test_loss_layers_and_errors():
    nn = paddle.nn
    np.testing.assert_allclose(nn.HingeEmbeddingLoss(margin=0.5)(T(A), T(SIGNS)).numpy(),
                               F.hinge_embedding_loss(T(A), T(SIGNS), 0.5).numpy())
    np.testing.assert_allclose(nn.SoftMarginLoss("sum")(T(A), T(SIGNS)).numpy(),
                               np.log1p(np.exp(-SIGNS * A)).sum(), rtol=1e-12)
    np.testing.assert_allclose(nn.TripletMarginLoss(p=1.0)(T(A), T(B), T(C)).numpy(),
                               F.triplet_margin_loss(T(A), T(B), T(C), p=1.0).numpy())
    assert nn.CosineEmbeddingLoss()(T(A), T(B), T(np.array([1.0, -1, 1, 1]))).shape == []
    assert nn.MultiLabelSoftMarginLoss(reduction="none")(T(A), T(BITS)).shape == [4]
    assert nn.PoissonNLLLoss()(T(A), T(COUNTS)).shape == []
    assert nn.GaussianNLLLoss(reduction="none")(T(A), T(B), T(VAR)).shape == [4, 3]
    with pytest.raises(ValueError, match="hinge_embedding_loss: reduction must be one of"):
        F.hinge_embedding_loss(T(A), T(SIGNS), reduction="avg")
    with pytest.raises(ValueError, match="input1 \\[4, 3\\] and input2 \\[4, 2\\] must have the same shape"):
        F.cosine_embedding_loss(T(A), T(B[:, :2]), T(np.ones(4)))
    with pytest.raises(ValueError, match="1D target tensor expected"):
        F.cosine_embedding_loss(T(A), T(B), T(np.ones((4, 1))))
    with pytest.raises(ValueError, match="epsilon` in poisson_nll_loss should be positive"):
        F.poisson_nll_loss(T(A), T(COUNTS), epsilon=0.0)
    with pytest.raises(ValueError, match="variance has negative entry"):
        F.gaussian_nll_loss(T(A), T(B), T(-VAR))
    with pytest.raises(ValueError, match="variance \\[4, 2\\] is of incorrect size"):
        F.gaussian_nll_loss(T(A), T(B), T(VAR[:, :2]))
    with pytest.raises(ValueError, match="GaussianNLLLoss: reduction must be one of"):
        nn.GaussianNLLLoss(reduction="avg")


# ------------------------------------------------------------------ static mode


def test_static_programs_match_eager_on_both_backends():
    x = R.standard_normal((2, 4, 3, 3)).astype("float32")
    a = R.standard_normal((3, 4)).astype("float32")
    grid = R.uniform(-1.2, 1.2, (2, 2, 3, 2)).astype("float32")
    theta = R.standard_normal((2, 2, 3)).astype("float32")
    x5 = R.standard_normal((2, 2, 3, 2, 4)).astype("float32")
    w3 = R.standard_normal((3, 2, 2, 1, 2)).astype("float32")
    eager = [
        F.interpolate(T(x), size=[5, 4], mode="bilinear").numpy(),
        F.interpolate(T(x), scale_factor=2, mode="nearest").numpy(),
        F.interpolate(T(x), size=[4, 4], mode="bicubic", align_corners=True).numpy(),
        F.pixel_shuffle(T(x), 2).numpy(),
        F.channel_shuffle(T(x), 2).numpy(),
        F.fold(F.unfold(T(x), 2, paddings=1), [3, 3], 2, paddings=1).numpy(),
        F.local_response_norm(T(x), 3).numpy(),
        F.maxout(T(x), 2).numpy(),
        F.triplet_margin_loss(T(a), T(a * 0.5), T(-a)).numpy(),
        F.soft_margin_loss(T(a), T(np.sign(a))).numpy(),
        F.grid_sample(T(x), T(grid), padding_mode="reflection", align_corners=False).numpy(),
        F.grid_sample(T(x), T(grid), mode="nearest").numpy(),
        F.affine_grid(T(theta), [2, 4, 3, 2]).numpy(),
        F.adaptive_avg_pool3d(T(x5), [2, 1, 2]).numpy(),
        F.conv3d(T(x5), T(w3), padding=1, stride=[1, 1, 2]).numpy(),
        F.max_pool3d(T(x5), 2, padding=1).numpy(),
        F.avg_pool3d(T(x5), [2, 2, 3], stride=1, padding=[1, 0, 1]).numpy(),
    ]
    core.enable_static()
    main, start = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, start):
        xv = paddle.static.data("x", [None, 4, 3, 3], "float32")
        av = paddle.static.data("a", [None, 4], "float32")
        gv = paddle.static.data("grid", [None, 2, 3, 2], "float32")
        tv = paddle.static.data("theta", [2, 2, 3], "float32")
        x5v = paddle.static.data("x5", [None, 2, 3, 2, 4], "float32")
        w3v = paddle.static.data("w3", [3, 2, 2, 1, 2], "float32")
        x5v.stop_gradient = False
        xv.stop_gradient = False
        outs = [
            F.interpolate(xv, size=[5, 4], mode="bilinear"),
            F.interpolate(xv, scale_factor=2, mode="nearest"),
            F.interpolate(xv, size=[4, 4], mode="bicubic", align_corners=True),
            F.pixel_shuffle(xv, 2),
            F.channel_shuffle(xv, 2),
            F.fold(F.unfold(xv, 2, paddings=1), [3, 3], 2, paddings=1),
            F.local_response_norm(xv, 3),
            F.maxout(xv, 2),
            F.triplet_margin_loss(av, av * 0.5, -av),
            F.soft_margin_loss(av, paddle.sign(av)),
            F.grid_sample(xv, gv, padding_mode="reflection", align_corners=False),
            F.grid_sample(xv, gv, mode="nearest"),
            F.affine_grid(tv, [2, 4, 3, 2]),
            F.adaptive_avg_pool3d(x5v, [2, 1, 2]),
            F.conv3d(x5v, w3v, padding=1, stride=[1, 1, 2]),
            F.max_pool3d(x5v, 2, padding=1),
            F.avg_pool3d(x5v, [2, 2, 3], stride=1, padding=[1, 0, 1]),
        ]
        total = paddle.add_n([paddle.sum(o) for o in outs[:8] + outs[10:12]])
        total = total + paddle.add_n([paddle.sum(o * o) for o in outs[-4:]])
        gx, g5 = paddle.static.gradients([total], [xv, x5v])
    feed = {"x": x, "a": a, "grid": grid, "theta": theta, "x5": x5, "w3": w3}
    results = {}
    for backend in ("compiled", "interpreter"):
        exe = paddle.static.Executor(paddle.CPUPlace()) if backend == "compiled" else \
            paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
        exe.run(start)
        results[backend] = exe.run(main, feed=feed, fetch_list=[*outs, gx, g5])
        for got, want in zip(results[backend], eager):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    for k in (-2, -1):
        np.testing.assert_allclose(results["compiled"][k], results["interpreter"][k], rtol=1e-5, atol=1e-5)
