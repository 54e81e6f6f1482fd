"""Kernels of the neural-network ops: plain numpy, written for obviousness.

Output sizes come from each op's own typing rule (`infer`) applied to the concrete
input shapes, window geometry from the ops themselves (`ConvWindowOp.window`,
`PoolWindowOp.pads_before`) and the dropout hash from its constants next to
`DropoutOp`, so each is stated once; the arithmetic below is independent of it.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from pullback.dialects import pd
from pullback.dialects.bfloat16 import bf16_to_f32
from pullback.dialects.pd.base import elem_of
from pullback.dialects.pd.nn import (
    DROPOUT_BITS,
    SPLITMIX_GAMMA,
    SPLITMIX_LAST_SHIFT,
    SPLITMIX_MIX,
    dropout_threshold,
)
from pullback.runtime.native import bf16_gemm
from pullback.runtime.native import dropout as native_dropout
from pullback.runtime.interpreter import kernel, narrow_kernel, out_of_range
from xdsl.dialects.builtin import TensorType, bf16


def out_shape(op: pd.PdOp, *arrays: np.ndarray) -> tuple[int, ...]:
    """The first result's shape for these concrete operands (the op's typing rule)."""
    types = [TensorType(t.get_element_type(), a.shape) for t, a in zip(op.operand_types, arrays)]
    return pd.shape_of(type(op).infer(types, op.py_props())[0])


# --------------------------------------------------------------------------- matmul


@kernel(pd.MatmulOp)
def matmul(op, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`x @ y` after the requested transposes of matrix operands."""
    if op.prop("transpose_x") and x.ndim >= 2:
        x = np.swapaxes(x, -1, -2)
    if op.prop("transpose_y") and y.ndim >= 2:
        y = np.swapaxes(y, -1, -2)
    return _product(x, y)


def _bf16_gemm_takes(op, *arrays: np.ndarray) -> bool:
    """Whether every operand of `op` is bfloat16 (held as uint16 bits) and the
    bfloat16 GEMM is on: what the narrow product kernels need."""
    return (
        all(a.dtype == np.uint16 for a in arrays)
        and all(elem_of(v.type) == bf16 for v in op.operands)
        and bf16_gemm.enabled()
    )


@narrow_kernel(pd.MatmulOp)
def matmul_bf16(op, x: np.ndarray, y: np.ndarray) -> np.ndarray | None:
    """A product of two bfloat16 matrices (uint16 bits) by the bfloat16 GEMM
    (`runtime/native/bf16_gemm.py`), summed in float32 as the float32 kernel on
    converted copies would; None (that kernel) for other dtypes, batched or vector
    operands, or a CPU without AVX512-BF16."""
    if x.ndim != 2 or y.ndim != 2 or not _bf16_gemm_takes(op, x, y):
        return None
    tx, ty = bool(op.prop("transpose_x")), bool(op.prop("transpose_y"))
    m, k = (x.shape[1], x.shape[0]) if tx else x.shape
    n = y.shape[0] if ty else y.shape[1]
    if (y.shape[1] if ty else y.shape[0]) != k:
        return None  # (the float32 kernel reports the mismatch)
    x, y = np.ascontiguousarray(x), np.ascontiguousarray(y)
    out = np.empty((m, n), np.float32)
    bf16_gemm.call(tx, ty, m, n, k, x, y, out)
    return out


@narrow_kernel(pd.LinearOp)
def linear_bf16(op, x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray | None:
    """Eager `F.linear` on bfloat16 operands (what `nn.Linear` records): the product by
    the bfloat16 GEMM over x's leading dimensions as rows, then the bias added in
    float32 (one rounding of the sum, as the float32 kernel on converted copies)."""
    if x.ndim < 2 or w.ndim != 2 or not _bf16_gemm_takes(op, x, w, b):
        return None
    k, n = w.shape
    if x.shape[-1] != k:
        return None  # (the float32 kernel reports the mismatch)
    rows = np.ascontiguousarray(x.reshape(-1, k))
    out = np.empty((rows.shape[0], n), np.float32)
    bf16_gemm.call(False, False, rows.shape[0], n, k, rows, np.ascontiguousarray(w), out)
    np.add(out, bf16_to_f32(b), out=out)
    return out.reshape(*x.shape[:-1], n)


def _product(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`np.matmul(x, y)` with a batch of rows against one matrix as one 2-D product."""
    if x.ndim > 2 and y.ndim == 2:
        # A batch of rows against one matrix is one 2-D product: numpy's batched
        # matmul on (transposed) views does not always reach BLAS, this always does.
        lead = x.shape[:-1]
        return np.matmul(x.reshape(-1, x.shape[-1]), y).reshape(*lead, y.shape[-1])
    return np.matmul(x, y)


@kernel(pd.LinearOp)
def linear(op, x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`x @ w + b`: the matmul kernel's product, the bias added in place."""
    out = _product(x, w)
    np.add(out, b, out=out)
    return out


# ------------------------------------------------------------------------ embedding


def _ids_and_pad(op, ids: np.ndarray, rows: int) -> tuple[np.ndarray, int | None]:
    """Checked ids and the non-negative padding row (None when there is none)."""
    if ids.size and (ids.min() < 0 or ids.max() >= rows):
        bad = ids[(ids < 0) | (ids >= rows)].flat[0]
        raise out_of_range(op.name, "id", bad, rows)
    pad = op.prop("padding_idx")
    return ids.astype(np.int64), (None if pad is None else pad % rows)


@kernel(pd.LookupTableOp)
def lookup_table(op, ids: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Gather rows of w; padding rows give zeros."""
    ids, pad = _ids_and_pad(op, ids, w.shape[0])
    out = w[ids]
    if pad is not None:
        out[ids == pad] = 0
    return out


@kernel(pd.LookupTableGradOp)
def lookup_table_grad(op, ids: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """Scatter-add gradient rows into a `[num_rows, D]` table; the padding row stays 0."""
    rows = op.prop("num_rows")
    ids, pad = _ids_and_pad(op, ids, rows)
    out = np.zeros((rows, grad.shape[-1]), grad.dtype)
    np.add.at(out, ids.reshape(-1), grad.reshape(-1, grad.shape[-1]))
    if pad is not None:
        out[pad] = 0
    return out


# ---------------------------------------------------------------------- convolution


def _tap(i: int, d: int, s: int, n: int) -> slice:
    """The padded-input positions `y*s + i*d` (y < n) that filter tap `i` touches."""
    return slice(i * d, i * d + s * (n - 1) + 1, s)


def _windows(xp: np.ndarray, khw, strides, dils, out_hw) -> np.ndarray:
    """The view `v[n, c, y, x, i, j] = xp[n, c, y*sh + i*dh, x*sw + j*dw]` (no copy)."""
    (kh, kw), (sh, sw), (dh, dw), (oh, ow) = khw, strides, dils, out_hw
    v = sliding_window_view(xp, ((kh - 1) * dh + 1, (kw - 1) * dw + 1), axis=(2, 3))
    return v[:, :, _tap(0, 1, sh, oh), _tap(0, 1, sw, ow), ::dh, ::dw]


def _columns(op, x: np.ndarray, khw, out_hw) -> np.ndarray:
    """Im2col by group, one contiguous copy: `[G, C/G * kh * kw, N * oh * ow]` with
    `cols[g, (c, i, j), (n, y, x)] = xp[n, g*C/G + c, y*sh + i*dh, x*sw + j*dw]`
    (`xp` the zero-padded input), so that a convolution is one matrix product."""
    win = op.window(x.shape[2:], khw)
    xp = np.pad(x, ((0, 0), (0, 0), *win.pads))
    v = _windows(xp, khw, win.strides, win.dilations, out_hw)  # [N, C, oh, ow, kh, kw]
    (n, c), g = x.shape[:2], op.prop("groups")
    v = v.reshape(n, g, c // g, *v.shape[2:]).transpose(1, 2, 5, 6, 0, 3, 4)
    return np.ascontiguousarray(v).reshape(g, (c // g) * khw[0] * khw[1], -1)


def _by_group(a: np.ndarray, g: int) -> np.ndarray:
    """`[N, C, H, W]` as the contiguous `[G, C/G, N * H * W]` (channels by group first)."""
    n, c = a.shape[:2]
    return np.ascontiguousarray(a.reshape(n, g, c // g, -1).transpose(1, 2, 0, 3)).reshape(g, c // g, -1)


def _from_groups(a: np.ndarray, n: int, hw) -> np.ndarray:
    """The inverse of `_by_group`: `[G, C/G, N * H * W]` as the contiguous `[N, C, H, W]`."""
    return np.ascontiguousarray(a.reshape(-1, n, *hw).transpose(1, 0, 2, 3))


@kernel(pd.Conv2DOp)
def conv2d(op, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Per group, the filter `[O/G, C/G*kh*kw]` times the input columns (one BLAS
    product each)."""
    n, o, oh, ow = out_shape(op, x, w)
    g = op.prop("groups")
    cols = _columns(op, x, w.shape[2:], (oh, ow))
    return _from_groups(np.matmul(w.reshape(g, o // g, -1), cols), n, (oh, ow))


@kernel(pd.Conv2DFilterGradOp)
def conv2d_filter_grad(op, x: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """Per group, the output gradient `[O/G, N*oh*ow]` times the transposed input
    columns."""
    o, cg, kh, kw = out_shape(op, x, grad)
    g = op.prop("groups")
    cols = _columns(op, x, (kh, kw), grad.shape[2:])
    return np.matmul(_by_group(grad, g), cols.transpose(0, 2, 1)).reshape(o, cg, kh, kw)


@kernel(pd.Conv2DTransposeOp)
def conv2d_transpose(op, x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Every input pixel scatters `pixel * filter` into the (padded) output: the
    columns `cols[c, i, j, n, y, x]` (per group, the transposed filter times the
    input) added tap by tap (col2im)."""
    n, c, oh, ow = out_shape(op, x, w)
    g = op.prop("groups")
    (kh, kw), (h, wd) = w.shape[2:], x.shape[2:]
    win = op.window((h, wd), (kh, kw))
    ((pt, _), (pl, _)), (sh, sw), (dh, dw) = win.pads, win.strides, win.dilations
    wg = w.reshape(g, w.shape[0] // g, -1).transpose(0, 2, 1)  # [G, C/G*kh*kw, Ci/G]
    cols = np.matmul(wg, _by_group(x, g)).reshape(c, kh, kw, n, h, wd)
    # Scatter into the padded output (large enough for the taps and the crop).
    full_h = max((h - 1) * sh + dh * (kh - 1) + 1, pt + oh)
    full_w = max((wd - 1) * sw + dw * (kw - 1) + 1, pl + ow)
    full = np.zeros((n, c, full_h, full_w), x.dtype)
    for i in range(kh):
        for j in range(kw):
            full[:, :, _tap(i, dh, sh, h), _tap(j, dw, sw, wd)] += cols[:, i, j].transpose(1, 0, 2, 3)
    return full[:, :, pt : pt + oh, pl : pl + ow]


# -------------------------------------------------------------------------- pooling


def pool_windows(op, hw: tuple[int, int], out_hw: tuple[int, int]):
    """Per spatial dimension, the clipped `(start, end)` input range of each output
    index, and the per-index spans whose products divide non-exclusive average
    pooling (`PoolWindowOp.window`; None when pooling is global or adaptive, whose
    divisor is the window's area)."""
    mode = op.mode()
    if mode == "global":
        return [[(0, hw[0])], [(0, hw[1])]], None
    if mode == "adaptive":
        ranges = [
            [(i * size // out, -(-(i + 1) * size // out)) for i in range(out)]
            for size, out in zip(hw, out_hw)
        ]
        return ranges, None
    ks, strides = op.prop("ksize"), op.prop("strides")
    ranges, spans = [], []
    for size, out, k, s, p0 in zip(hw, out_hw, ks, strides, op.pads_before(hw)):
        windows = [op.window(i, size, k, s, p0) for i in range(out)]
        ranges.append([(lo, hi) for lo, hi, _ in windows])
        spans.append([span for _, _, span in windows])
    return ranges, spans


def _divisor(op, area: int, spans, oy: int, ox: int) -> int:
    """Average pooling's divisor at output `(oy, ox)`: the clipped window's area
    when exclusive (or adaptive, or global), else the product of the spans."""
    if op.prop("exclusive") or spans is None:
        return area
    return spans[0][oy] * spans[1][ox]


def _divisors(op, rows, cols, spans) -> np.ndarray:
    """`_divisor` at every output `(oy, ox)`, as an `[oh, ow]` array."""
    if op.prop("exclusive") or spans is None:
        return np.outer([h1 - h0 for h0, h1 in rows], [w1 - w0 for w0, w1 in cols])
    return np.outer(spans[0], spans[1])


def _padded(op, x: np.ndarray, out_hw, fill: float) -> tuple[np.ndarray, tuple[int, int]]:
    """`x` padded with `fill` so that window `(y, x)` of a strided pooling is
    `xp[.., y*s : y*s + k, x*s : x*s + k]` (clipped windows read `fill` outside the
    input; the `ceil_mode` overhang included), and the `(top, left)` padding."""
    ks, strides, before = op.prop("ksize"), op.prop("strides"), op.pads_before(x.shape[2:])
    pads = [(p, max(0, (o - 1) * s + k - p - size))
            for size, o, k, s, p in zip(x.shape[2:], out_hw, ks, strides, before)]
    return np.pad(x, ((0, 0), (0, 0), *pads), constant_values=fill), before


def _over_taps(ufunc, win: np.ndarray) -> np.ndarray:
    """`ufunc` reduced over the window taps (the last two axes) of `win`, tap by tap
    in row-major order (numpy reduces small trailing axes of a strided view ~30x
    slower)."""
    kh, kw = win.shape[-2:]
    out = win[..., 0, 0].copy()
    for t in range(1, kh * kw):
        ufunc(out, win[..., t // kw, t % kw], out=out)
    return out


@kernel(pd.Pool2DOp)
def pool2d(op, x: np.ndarray) -> np.ndarray:
    """Max or average over each clipped window.  A window wholly in the padding
    (padding >= ksize) is empty: max gives -inf, the max of nothing, as the
    compiled code does (Paddle's CPU kernel leaves its initial value -FLT_MAX
    there); average gives 0 / its divisor (NaN when exclusive, as in Paddle)."""
    shape = out_shape(op, x)
    (rows, cols), spans = pool_windows(op, x.shape[2:], shape[2:])
    is_max = op.prop("pooling_type") == "max"
    if op.mode() == "window":
        # Padding with -inf (max) or 0 (sum) leaves each clipped window's result as it is.
        xp, _ = _padded(op, x, shape[2:], -np.inf if is_max else 0.0)
        win = _windows(xp, op.prop("ksize"), op.prop("strides"), (1, 1), shape[2:])
        if is_max:
            return _over_taps(np.maximum, win)
        return (_over_taps(np.add, win) / _divisors(op, rows, cols, spans)).astype(x.dtype)
    out = np.empty(shape, x.dtype)  # global or adaptive windows, one by one
    for oy, (h0, h1) in enumerate(rows):
        for ox, (w0, w1) in enumerate(cols):
            win = x[:, :, h0:h1, w0:w1]
            if is_max:
                out[:, :, oy, ox] = win.max(axis=(2, 3)) if win.size else -np.inf
            else:
                area = (h1 - h0) * (w1 - w0)
                out[:, :, oy, ox] = win.sum(axis=(2, 3)) / _divisor(op, area, spans, oy, ox)
    return out


@kernel(pd.Pool2DGradOp)
def pool2d_grad(op, x: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """Route each gradient to its window's first maximum, or spread it (average)."""
    (rows, cols), spans = pool_windows(op, x.shape[2:], grad.shape[2:])
    is_max = op.prop("pooling_type") == "max"
    if op.mode() == "window":
        return (_max_pool_grad if is_max else _avg_pool_grad)(op, x, grad, rows, cols, spans)
    dx = np.zeros_like(x)  # global or adaptive windows, one by one
    n, c = np.indices(x.shape[:2])
    for oy, (h0, h1) in enumerate(rows):
        for ox, (w0, w1) in enumerate(cols):
            g = grad[:, :, oy, ox]
            if is_max:
                # The first maximum in row-major order takes the whole gradient.
                arg = x[:, :, h0:h1, w0:w1].reshape(*x.shape[:2], -1).argmax(axis=2)
                hh, ww = np.divmod(arg, w1 - w0)
                np.add.at(dx, (n, c, h0 + hh, w0 + ww), g)
            else:
                area = (h1 - h0) * (w1 - w0)
                dx[:, :, h0:h1, w0:w1] += (g / _divisor(op, area, spans, oy, ox))[:, :, None, None]
    return dx


def _max_pool_grad(op, x, grad, rows, cols, spans) -> np.ndarray:
    """Strided max pooling's gradient: in each window, the first tap (row-major) that
    lies in the input and holds the window's maximum (NaN counting as the maximum,
    as for `np.argmax`) takes the gradient.  Tap by tap into the padded input, which
    is then cropped; a window wholly in the padding gives nothing."""
    (h, w), (oh, ow), (kh, kw), (sh, sw) = x.shape[2:], grad.shape[2:], op.prop("ksize"), op.prop("strides")
    xp, (pt, pl) = _padded(op, x, (oh, ow), -np.inf)
    inside, _ = _padded(op, np.ones((1, 1, h, w), bool), (oh, ow), False)
    win, ins = (_windows(a, (kh, kw), (sh, sw), (1, 1), (oh, ow)) for a in (xp, inside))
    top = _over_taps(np.maximum, win)
    taken = np.zeros(grad.shape, bool)
    dxp = np.zeros_like(xp)
    zero = grad.dtype.type(0)
    for i in range(kh):
        for j in range(kw):
            v = win[..., i, j]
            hit = ((v == top) | np.isnan(v)) & ins[..., i, j]
            first = hit > taken  # (hit and not taken)
            taken |= hit
            dxp[:, :, _tap(i, 1, sh, oh), _tap(j, 1, sw, ow)] += np.where(first, grad, zero)
    return dxp[:, :, pt : pt + h, pl : pl + w]


def _avg_pool_grad(op, x, grad, rows, cols, spans) -> np.ndarray:
    """Strided average pooling's gradient: the divided gradient added window tap by
    window tap into the padded input, which is then cropped."""
    (h, w), (oh, ow), (kh, kw), (sh, sw) = x.shape[2:], grad.shape[2:], op.prop("ksize"), op.prop("strides")
    xp, (pt, pl) = _padded(op, x, (oh, ow), 0.0)
    dxp = np.zeros_like(xp)
    with np.errstate(divide="ignore", invalid="ignore"):  # empty windows: cropped below
        gd = (grad / _divisors(op, rows, cols, spans)).astype(x.dtype)
        for i in range(kh):
            for j in range(kw):
                dxp[:, :, _tap(i, 1, sh, oh), _tap(j, 1, sw, ow)] += gd
    return dxp[:, :, pt : pt + h, pl : pl + w]


# ------------------------------------------------------------------------ layer norm


@kernel(pd.LayerNormOp)
def layer_norm(op, x: np.ndarray, *params: np.ndarray) -> np.ndarray:
    """Normalize over the trailing axes, then scale and shift."""
    axis = op.prop("begin_norm_axis")
    axes = tuple(range(axis, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + op.prop("epsilon"))
    if params:
        y = y * params[0].reshape(x.shape[axis:])
    if len(params) == 2:
        y = y + params[1].reshape(x.shape[axis:])
    return y


# ------------------------------------------------------------------------ batch norm


@kernel(pd.BatchNormOp)
def batch_norm(op, x, scale, bias, mean, variance):
    """Normalize with batch (or global) statistics, update the running ones."""
    c = op.channel_axis()
    axes = tuple(op.reduced_axes())
    shape = [1] * x.ndim
    shape[c] = x.shape[c]
    eps, m = op.prop("epsilon"), op.prop("momentum")
    if op.global_stats():
        mu, var = mean, variance
        mean_out, var_out = mean, variance
    else:
        if x.size == x.shape[c]:
            # One value per channel: Paddle passes x through and updates nothing.
            zeros = np.zeros_like(mean)
            return x.copy(), mean, variance, zeros, zeros
        mu = x.mean(axis=axes)
        var = ((x - mu.reshape(shape)) ** 2).mean(axis=axes)
        mean_out = m * mean + (1 - m) * mu
        var_out = m * variance + (1 - m) * var
    inv_std = 1.0 / np.sqrt(var + eps)
    y = (x - mu.reshape(shape)) * inv_std.reshape(shape) * scale.reshape(shape) + bias.reshape(shape)
    return y, mean_out, var_out, mu, inv_std


# --------------------------------------------------------------------------- dropout


def _splitmix_bits(seed: int, n: int) -> np.ndarray:
    """The top `DROPOUT_BITS` bits of the splitmix64 hash of `(seed, i + 1)` for flat
    indices `i < n`, as uint64 (see `dropout_uniform`).  Computed in place on one
    buffer (plus one scratch buffer for the shifts): the numpy expression form made
    a temporary per operation, ~3x the time on a [32, 128] mask."""
    z = np.arange(1, n + 1, dtype=np.uint64)
    np.multiply(z, np.uint64(SPLITMIX_GAMMA), out=z)
    np.add(z, np.uint64(seed % (1 << 64)), out=z)
    tmp = np.empty_like(z)
    for shift, mult in SPLITMIX_MIX:
        np.right_shift(z, np.uint64(shift), out=tmp)
        np.bitwise_xor(z, tmp, out=z)
        np.multiply(z, np.uint64(mult), out=z)
    np.right_shift(z, np.uint64(SPLITMIX_LAST_SHIFT), out=tmp)
    np.bitwise_xor(z, tmp, out=z)
    np.right_shift(z, np.uint64(64 - DROPOUT_BITS), out=z)
    return z


def dropout_uniform(seed: int, n: int) -> np.ndarray:
    """`u[i]` in `[0, 1)` for flat index `i`: the `(i+1)`-th output of splitmix64
    seeded with `seed` (mod 2**64), top 24 bits scaled by `2**-24`.

    With 64-bit wrapping arithmetic:
        z = seed + (i + 1) * 0x9E3779B97F4A7C15
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
        z = (z ^ (z >> 27)) * 0x94D049BB133111EB
        z = z ^ (z >> 31)
        u = (z >> 40) * 2**-24          (exact in float32)
    """
    return _splitmix_bits(seed, n).astype(np.float64) * 2.0**-DROPOUT_BITS


_KEEP_CACHE: OrderedDict[tuple[int, tuple[int, ...], float], tuple[np.ndarray, int | None]] = OrderedDict()
_KEEP_CACHE_BYTES = 32 << 20
"""Recent keep-masks (at most this many bytes) with their data addresses (None when
numpy drew them): a dropout's gradient applies the mask its forward drew (same seed
and shape) again; the native loop needs the address, which a read-only array no
longer gives cheaply."""
_keep_cache_size = 0
_keep_cache_lock = threading.Lock()  # ranks of a data-parallel run share the cache


def _cached(key: tuple[int, tuple[int, ...], float]) -> tuple[np.ndarray, int | None] | None:
    with _keep_cache_lock:
        entry = _KEEP_CACHE.get(key)
        if entry is not None:
            _KEEP_CACHE.move_to_end(key)
        return entry


def _remember(key: tuple[int, tuple[int, ...], float], keep: np.ndarray) -> np.ndarray:
    """Make `keep` read-only and keep it (with its address) for the gradient."""
    global _keep_cache_size
    address = native_dropout.address(keep)
    keep.flags.writeable = False
    if keep.nbytes <= _KEEP_CACHE_BYTES // 4:
        with _keep_cache_lock:
            if key not in _KEEP_CACHE:
                _KEEP_CACHE[key] = (keep, address)
                _keep_cache_size += keep.nbytes
            while _keep_cache_size > _KEEP_CACHE_BYTES:
                _keep_cache_size -= _KEEP_CACHE.popitem(last=False)[1][0].nbytes
    return keep


def dropout_keep(seed: int, shape: tuple[int, ...], p: float) -> np.ndarray:
    """The boolean keep-mask of `pd.dropout` for a tensor of `shape` (read-only;
    recent masks are kept, see `_KEEP_CACHE`)."""
    key = (seed, tuple(shape), p)
    entry = _cached(key)
    if entry is not None:
        return entry[0]
    n = math.prod(shape)  # (np.prod costs ~10 us a call, more than a small mask)
    # `u >= p` as the integer test the lowering uses (`dropout_threshold`): no floats.
    # Native code computes the same bits ~5x faster (runtime/native/dropout.py).
    threshold = dropout_threshold(p)
    flat = native_dropout.keep_mask(seed, n, threshold)
    if flat is None:
        flat = _splitmix_bits(seed, n) >= np.uint64(threshold)
    return _remember(key, flat.reshape(shape))


@kernel(pd.DropoutOp)
def dropout(op, x: np.ndarray, seed: np.ndarray | None = None) -> np.ndarray:
    """Apply the hashed keep-mask with the implementation's scaling (the seed
    operand, when given, takes precedence over the `seed` property)."""
    p = op.prop("dropout_prob")
    upscale = op.prop("dropout_implementation") == "upscale_in_train"
    if op.prop("is_test"):
        return x if upscale else x * x.dtype.type(1.0 - p)
    s = op.prop("seed") if seed is None else int(seed.reshape(-1)[0])
    if not upscale:
        return np.where(dropout_keep(s, x.shape, p), x, x.dtype.type(0))
    factor = x.dtype.type(0.0 if p >= 1.0 else 1.0 / (1.0 - p))
    # Native code draws the mask and applies it in one pass (a forward), or applies
    # a remembered mask (its gradient); numpy's `where` is the same arithmetic.
    key = (s, x.shape, p)
    entry = _cached(key)
    if entry is None:
        drawn = native_dropout.dropout(s, dropout_threshold(p), x, float(factor))
        if drawn is not None:
            _remember(key, drawn[0])
            return drawn[1]
    elif entry[1] is not None:
        y = native_dropout.apply_mask(entry[0], entry[1], x, float(factor))
        if y is not None:
            return y
    return np.where(dropout_keep(s, x.shape, p), x * factor, x.dtype.type(0))


__all__ = ["dropout_keep", "dropout_uniform", "out_shape", "pool_windows"]
