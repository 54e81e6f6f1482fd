"""The interpreter's conv2d / pool2d kernels (im2col by `sliding_window_view` and one
BLAS product, vectorized pooling) against their previous window-by-window and
`einsum` forms, kept here as the reference, on random shapes and window properties.

Float32 results agree to float32 rounding (the products and sums are accumulated in
another order); float64 ones to ~1e-12; max pooling and its gradient's routing exactly.
"""

from __future__ import annotations

import numpy as np
import pytest
from pullback.dialects import pd
from pullback.passes.vjp.nn import _explicit_window
from pullback.runtime.kernels import nn as K

RNG = np.random.default_rng(33)


def make(op_cls, *arrays: np.ndarray, **props):
    vals = [pd.DataOp.make(f"t{i}", a.shape, str(a.dtype)).out for i, a in enumerate(arrays)]
    return op_cls.make(*vals, **props)


# ------------------------------------------------- the previous kernels (reference)


def ref_columns(xp, khw, strides, dils, out_hw):
    (kh, kw), (sh, sw), (dh, dw), (oh, ow) = khw, strides, dils, out_hw
    cols = np.empty(xp.shape[:2] + (kh, kw, oh, ow), xp.dtype)
    for i in range(kh):
        for j in range(kw):
            cols[:, :, i, j] = xp[:, :, K._tap(i, dh, sh, oh), K._tap(j, dw, sw, ow)]
    return cols


def ref_grouped_columns(op, x, khw, out_hw):
    win = op.window(x.shape[2:], khw)
    xp = np.pad(x, ((0, 0), (0, 0), *win.pads))
    cols = ref_columns(xp, khw, win.strides, win.dilations, out_hw)
    g = op.prop("groups")
    return cols.reshape(x.shape[0], g, x.shape[1] // g, *cols.shape[2:])


def ref_conv2d(op, x, w):
    n, o, oh, ow = K.out_shape(op, x, w)
    g = op.prop("groups")
    cols = ref_grouped_columns(op, x, w.shape[2:], (oh, ow))
    wg = w.reshape(g, o // g, *w.shape[1:])
    return np.einsum("ngcijyx,gocij->ngoyx", cols, wg).reshape(n, o, oh, ow)


def ref_conv2d_filter_grad(op, x, grad):
    o, cg, kh, kw = K.out_shape(op, x, grad)
    g = op.prop("groups")
    cols = ref_grouped_columns(op, x, (kh, kw), grad.shape[2:])
    gg = grad.reshape(grad.shape[0], g, o // g, *grad.shape[2:])
    return np.einsum("ngcijyx,ngoyx->gocij", cols, gg).reshape(o, cg, kh, kw)


def ref_conv2d_transpose(op, x, w):
    n, c, oh, ow = K.out_shape(op, x, w)
    g = op.prop("groups")
    (kh, kw), (h, wd) = w.shape[2:], x.shape[2:]
    win = op.window((h, wd), (kh, kw))
    ((pt, _), (pl, _)), (sh, sw), (dh, dw) = win.pads, win.strides, win.dilations
    xg = x.reshape(n, g, x.shape[1] // g, h, wd)
    wg = w.reshape(g, w.shape[0] // g, *w.shape[1:])
    cols = np.einsum("ngoyx,gocij->ngcijyx", xg, wg).reshape(n, c, kh, kw, h, wd)
    full_h = max((h - 1) * sh + dh * (kh - 1) + 1, pt + oh)
    full_w = max((wd - 1) * sw + dw * (kw - 1) + 1, pl + ow)
    full = np.zeros((n, c, full_h, full_w), x.dtype)
    for i in range(kh):
        for j in range(kw):
            full[:, :, K._tap(i, dh, sh, h), K._tap(j, dw, sw, wd)] += cols[:, :, i, j]
    return full[:, :, pt : pt + oh, pl : pl + ow]


def ref_pool2d(op, x):
    shape = K.out_shape(op, x)
    (rows, cols), spans = K.pool_windows(op, x.shape[2:], shape[2:])
    out = np.empty(shape, x.dtype)
    is_max = op.prop("pooling_type") == "max"
    for oy, (h0, h1) in enumerate(rows):
        for ox, (w0, w1) in enumerate(cols):
            # (The previous kernel sliced `h0:h1`: a window wholly in the top padding
            # has h1 < 0, a Python negative index that read real rows.  Fixed here.)
            win = x[:, :, h0 : max(h0, h1), w0 : max(w0, w1)]
            if is_max:
                out[:, :, oy, ox] = win.max(axis=(2, 3)) if win.size else -np.inf
            else:
                area = (h1 - h0) * (w1 - w0)
                out[:, :, oy, ox] = win.sum(axis=(2, 3)) / K._divisor(op, area, spans, oy, ox)
    return out


def ref_pool2d_grad(op, x, grad):
    (rows, cols), spans = K.pool_windows(op, x.shape[2:], grad.shape[2:])
    dx = np.zeros_like(x)
    n, c = np.indices(x.shape[:2])
    is_max = op.prop("pooling_type") == "max"
    for oy, (h0, h1) in enumerate(rows):
        for ox, (w0, w1) in enumerate(cols):
            g = grad[:, :, oy, ox]
            if h1 <= h0 or w1 <= w0:
                continue
            if is_max:
                arg = x[:, :, h0:h1, w0:w1].reshape(*x.shape[:2], -1).argmax(axis=2)
                hh, ww = np.divmod(arg, w1 - w0)
                np.add.at(dx, (n, c, h0 + hh, w0 + ww), g)
            else:
                area = (h1 - h0) * (w1 - w0)
                dx[:, :, h0:h1, w0:w1] += (g / K._divisor(op, area, spans, oy, ox))[:, :, None, None]
    return dx


# ------------------------------------------------------------------------ the tests


def close(got, want, dtype):
    assert got.shape == want.shape and got.dtype == want.dtype
    if dtype == np.float32:
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5 * max(1.0, np.abs(want).max()))
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def conv_cases(count: int):
    """Random convolutions: `(x shape, filter shape, props)`."""
    rng = np.random.default_rng(7)
    cases = []
    while len(cases) < count:
        g = int(rng.choice([1, 1, 2, 3]))
        c, o = g * int(rng.integers(1, 4)), g * int(rng.integers(1, 4))
        kh, kw = (int(k) for k in rng.integers(1, 5, 2))
        props = {
            "strides": [int(s) for s in rng.integers(1, 4, 2)],
            "dilations": [int(d) for d in rng.integers(1, 3, 2)],
            "paddings": [int(p) for p in rng.integers(0, 3, int(rng.choice([2, 4])))],
            "groups": g,
            "padding_algorithm": str(rng.choice(["EXPLICIT", "EXPLICIT", "SAME", "VALID"])),
        }
        h, w = (int(s) for s in rng.integers(1, 12, 2))
        try:
            make(pd.Conv2DOp, np.zeros((2, c, h, w)), np.zeros((o, c // g, kh, kw)), **props)
        except Exception:  # the window does not fit: draw again
            continue
        cases.append(((int(rng.integers(1, 4)), c, h, w), (o, c // g, kh, kw), props))
    return cases


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("xs,ws,props", conv_cases(40))
def test_conv2d_kernels_match_reference(xs, ws, props, dtype):
    x, w = RNG.standard_normal(xs).astype(dtype), RNG.standard_normal(ws).astype(dtype)
    op = make(pd.Conv2DOp, x, w, **props)
    y = K.conv2d(op, x, w)
    close(y, ref_conv2d(op, x, w), dtype)
    assert y.flags.c_contiguous
    g = RNG.standard_normal(y.shape).astype(dtype)
    fg = make(pd.Conv2DFilterGradOp, x, g, filter_size=list(ws[2:]), **props)
    close(K.conv2d_filter_grad(fg, x, g), ref_conv2d_filter_grad(fg, x, g), dtype)
    # The input gradient is the transposed convolution of g to x's size (the VJP's).
    window = _explicit_window(op, xs[2:], ws[2:])
    tr = make(pd.Conv2DTransposeOp, g, w, output_size=list(xs[2:]), **window)
    dx = K.conv2d_transpose(tr, g, w)
    close(dx, ref_conv2d_transpose(tr, g, w), dtype)
    # ... the adjoint of the convolution: <conv(x), g> == <x, conv_transpose(g)>.
    np.testing.assert_allclose((y * g).sum(), (x * dx).sum(), rtol=1e-4 if dtype == np.float32 else 1e-10)


def pool_cases(count: int):
    """Random strided poolings (plus adaptive and global ones): `(x shape, props)`."""
    rng = np.random.default_rng(11)
    cases = []
    while len(cases) < count:
        props = {
            "pooling_type": str(rng.choice(["max", "avg"])),
            "ksize": [int(k) for k in rng.integers(1, 5, 2)],
            "strides": [int(s) for s in rng.integers(1, 4, 2)],
            "paddings": [int(p) for p in rng.integers(0, 3, int(rng.choice([2, 4])))],
            "ceil_mode": bool(rng.integers(0, 2)),
            "exclusive": bool(rng.integers(0, 2)),
            "padding_algorithm": str(rng.choice(["EXPLICIT", "EXPLICIT", "SAME", "VALID"])),
        }
        mode = rng.integers(0, 10)
        if mode == 0:
            props["adaptive"] = True
        elif mode == 1:
            props["global_pooling"] = True
        xs = (int(rng.integers(1, 3)), int(rng.integers(1, 4)), *(int(s) for s in rng.integers(1, 10, 2)))
        try:
            make(pd.Pool2DOp, np.zeros(xs), **props)
        except Exception:  # the window does not fit: draw again
            continue
        cases.append((xs, props))
    return cases


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("xs,props", pool_cases(60))
def test_pool2d_kernels_match_reference(xs, props, dtype):
    # Few distinct values (ties), and some -inf, exercise the first-maximum rule.
    x = RNG.integers(-3, 3, xs).astype(dtype)
    x[RNG.random(xs) < 0.1] = -np.inf
    op = make(pd.Pool2DOp, x, **props)
    with np.errstate(all="ignore"):
        want = ref_pool2d(op, x)
        y = K.pool2d(op, x)
    if props["pooling_type"] == "max":
        np.testing.assert_array_equal(y, want)
    else:
        close(np.nan_to_num(y), np.nan_to_num(want), dtype)
        np.testing.assert_array_equal(np.isnan(y), np.isnan(want))
    assert y.dtype == x.dtype
    x[np.isinf(x)] = 0  # (an average pooling gradient does not read x)
    x = x if props["pooling_type"] == "max" else RNG.standard_normal(xs).astype(dtype)
    g = RNG.standard_normal(y.shape).astype(dtype)
    gop = make(pd.Pool2DGradOp, x, g, **props)
    close(K.pool2d_grad(gop, x, g), ref_pool2d_grad(gop, x, g), dtype)


def test_max_pool_grad_all_minus_inf_window_and_empty_windows():
    """A window of -inf only gives its gradient to its first input element (not to
    the padding); a window wholly in the padding (padding >= ksize) gives none."""
    x = np.full((1, 1, 3, 3), -np.inf, np.float32)
    x[0, 0, 2, 2] = 1.0
    props = {"pooling_type": "max", "ksize": [2, 2], "strides": [1, 1], "paddings": [1, 1]}
    op = make(pd.Pool2DGradOp, x, np.ones((1, 1, 4, 4), np.float32), **props)
    g = np.arange(1, 17, dtype=np.float32).reshape(1, 1, 4, 4)
    np.testing.assert_array_equal(K.pool2d_grad(op, x, g), ref_pool2d_grad(op, x, g))
    props = {"pooling_type": "max", "ksize": [1, 1], "strides": [2, 2], "paddings": [1, 1]}
    x = RNG.standard_normal((1, 2, 3, 3)).astype(np.float32)
    op = make(pd.Pool2DGradOp, x, np.ones((1, 2, 3, 3), np.float32), **props)
    g = RNG.standard_normal((1, 2, 3, 3)).astype(np.float32)
    np.testing.assert_array_equal(K.pool2d_grad(op, x, g), ref_pool2d_grad(op, x, g))


def test_pool2d_window_wholly_in_top_padding_is_empty():
    """Padding >= ksize: the first windows read nothing (the previous kernel read the
    input's first rows there, through a negative slice end)."""
    x = np.arange(1, 26, dtype=np.float32).reshape(1, 1, 5, 5)
    for ptype, empty in (("max", -np.inf), ("avg", 0.0)):
        op = make(pd.Pool2DOp, x, pooling_type=ptype, ksize=[1, 1], strides=[3, 3], paddings=[2, 2],
                  exclusive=False)
        y = K.pool2d(op, x)
        e = empty
        np.testing.assert_array_equal(y[0, 0], [[e, e, e], [e, 7, 10], [e, 22, 25]])
