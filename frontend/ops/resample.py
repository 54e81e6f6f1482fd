"""Resampling and rearranging images: `interpolate`/`upsample` (nearest, linear,
bilinear, trilinear, bicubic, area), `pixel_shuffle`, `pixel_unshuffle`,
`channel_shuffle`, `unfold` (im2col), `fold` (col2im) and `zeropad2d`.

All are composites of existing ops, so gradients, static mode, the compiled backend
and double grad come from those ops:

* interpolation is separable: each resized axis is one `pd.gather` per tap (1 for
  nearest, 2 for linear, 4 for cubic) times a constant weight, summed.  The source
  indices and weights are Paddle's kernel formulas (phi `interpolate_kernel`),
  computed here in float32 as the kernel does, so the truncations agree;
* the shuffles are reshape + transpose;
* `unfold` stacks one strided slice per kernel tap; `fold` spreads each tap's block
  over the strided grid with reshape + zero padding and sums them (overlaps add).

Spatial sizes must be static (the index tables are built when the op is built).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from pullback.frontend.ops.elementwise import (
    abs,
    cast,
    check_float_tensor,
    check_tensor,
    clip,
    equal,
    greater_equal,
    is_scalar,
    less_equal,
    scale,
    where,
)
from pullback.frontend.ops.indexing import index_select, stack, strided_slice, take_along_axis, to_constant
from pullback.frontend.ops.math import floor, round
from pullback.frontend.ops.nn import adaptive_avg_pool1d, adaptive_avg_pool2d, matmul
from pullback.frontend.ops.reduction import max as reduce_max
from pullback.frontend.ops.shape import concat, pad, reshape, transpose
from pullback.frontend.ops.shape import slice as pslice

_MODES = ("linear", "bilinear", "trilinear", "nearest", "bicubic", "area")
_FORMATS = {3: ("NCW", "NWC"), 4: ("NCHW", "NHWC"), 5: ("NCDHW", "NDHWC")}
_CUBIC_A = -0.75  # Paddle's (and OpenCV's) bicubic convolution parameter


# --------------------------------------------------------------------- helpers


class ArgumentAssertionError(AssertionError, ValueError):
    """A bad argument that Paddle rejects with an `assert` (AssertionError): also a
    ValueError, the class a bad argument raises elsewhere."""



def _host_values(fn: str, arg: str, v: Any) -> Any:
    """A size/scale argument with eager Tensors read to Python numbers (a static
    Variable has no value when the program is built)."""
    if hasattr(v, "numpy") and hasattr(v, "dtype"):
        a = np.asarray(v.numpy())
        return a.item() if a.ndim == 0 else a.reshape(-1).tolist()
    if hasattr(v, "dtype") and hasattr(v, "shape") and type(v).__module__ != "numpy":
        raise TypeError(f"{fn}: '{arg}' as a static Variable is not supported; pass Python numbers")
    if isinstance(v, (list, tuple)):
        return [_host_values(fn, arg, e) for e in v]
    if isinstance(v, np.ndarray):
        return v.item() if v.ndim == 0 else v.reshape(-1).tolist()
    return v


def _static_dims(fn: str, x: Any, axes: Sequence[int]) -> list[int]:
    """The sizes of `axes` of x, which must be known when the program is built."""
    dims = [int(x.shape[a]) for a in axes]
    if any(d < 0 for d in dims):
        raise ValueError(f"{fn}: the spatial dimensions of x must be static, got shape {list(x.shape)}")
    return dims


def _batch_dim(x: Any) -> int:
    """x's first dimension for a reshape target (-1 when dynamic)."""
    return int(x.shape[0]) if x.shape[0] >= 0 else -1


def _weighted_taps(x: Any, axis: int, taps: list[tuple[np.ndarray, np.ndarray]]) -> Any:
    """`sum_t w_t * x.take(i_t, axis)`: each tap an index table and its weights, the
    weights broadcast along `axis`."""
    rank = len(x.shape)
    out = None
    for idx, w in taps:
        picked = index_select(x, to_constant(idx.astype(np.int64)), axis=axis)
        if not np.all(w == 1.0):
            shape = [1] * rank
            shape[axis] = len(w)
            picked = picked * to_constant(w.astype(np.float64).reshape(shape), x.dtype)
        out = picked if out is None else out + picked
    assert out is not None
    return out


def _ratio(in_size: int, out_size: int, align_corners: bool, scale: float | None) -> np.float32:
    """Paddle's source-per-destination step (float32, as in its kernel; 0 for a
    single output, which therefore samples the first input, as Paddle does)."""
    if out_size <= 1:
        return np.float32(0.0)
    if align_corners:
        return np.float32((in_size - 1) / (out_size - 1))
    if scale is not None and scale > 0:
        return np.float32(1.0 / scale)
    return np.float32(in_size / out_size)


def _nearest_taps(in_size: int, out_size: int, ratio: np.float32,
                  align_corners: bool) -> list[tuple[np.ndarray, np.ndarray]]:
    """Nearest neighbour: source index `int(ratio * k)` (Paddle truncates), rounded
    (`int(ratio * k + 0.5)`) with `align_corners` (fluid's resize_nearest)."""
    k = np.arange(out_size, dtype=np.float32)
    src = ratio * k + np.float32(0.5) if align_corners else ratio * k
    idx = np.minimum(src.astype(np.int64), in_size - 1)
    return [(idx, np.ones(out_size))]


def _linear_taps(in_size: int, out_size: int, ratio: np.float32,
                 align_corners: bool, align_mode: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Linear: the two neighbours of the source coordinate and their weights, with
    the half-pixel rule when `align_mode == 0` and not `align_corners`."""
    half = align_mode == 0 and not align_corners
    k = np.arange(out_size, dtype=np.float32)
    if half:
        src = ratio * (k + np.float32(0.5)) - np.float32(0.5)
        lo = np.maximum(np.trunc(src).astype(np.int64), 0)
        d = np.maximum(src, np.float32(0.0)) - lo.astype(np.float32)
    else:
        src = ratio * k
        lo = np.maximum(np.trunc(src).astype(np.int64), 0)
        d = src - lo.astype(np.float32)
    lo = np.minimum(lo, in_size - 1)
    hi = np.where(lo < in_size - 1, lo + 1, lo)
    d = d.astype(np.float64)
    return [(lo, 1.0 - d), (hi, d)]


def _cubic_taps(in_size: int, out_size: int, ratio: np.float32,
                align_corners: bool) -> list[tuple[np.ndarray, np.ndarray]]:
    """Bicubic (Keys, A = -0.75): four neighbours, indices clamped to the edge."""
    k = np.arange(out_size, dtype=np.float32)
    src = ratio * k if align_corners else ratio * (k + np.float32(0.5)) - np.float32(0.5)
    base = np.floor(src).astype(np.int64)
    t = (src - base.astype(np.float32)).astype(np.float64)
    a = _CUBIC_A

    def near(v: np.ndarray) -> np.ndarray:  # |v| <= 1
        return ((a + 2) * v - (a + 3)) * v * v + 1

    def far(v: np.ndarray) -> np.ndarray:  # 1 < |v| < 2
        return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a

    weights = [far(t + 1), near(t), near(1 - t), far(2 - t)]
    return [(np.clip(base - 1 + j, 0, in_size - 1), weights[j]) for j in range(4)]


def _area_taps(in_size: int, out_size: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Adaptive average pooling along one axis: output `i` averages inputs
    `[floor(i * in / out), ceil((i + 1) * in / out))` (taps past a window weigh 0)."""
    i = np.arange(out_size)
    start = (i * in_size) // out_size
    end = -((-(i + 1) * in_size) // out_size)
    width = end - start
    return [(np.minimum(start + j, end - 1), np.where(j < width, 1.0 / width, 0.0))
            for j in range(int(width.max()))]


def _sizes(fn: str, x: Any, rank: int, in_dims: list[int], size: Any, scale_factor: Any,
           recompute_scale_factor: bool | None) -> tuple[list[int], list[float | None]]:
    """The output sizes and the scales the kernel uses (None where it uses in/out)."""
    nsp = rank - 2
    if size is not None and scale_factor is not None:
        raise ValueError(f"{fn}: Only one of size or scale_factor should be defined.")
    if size is not None:
        if recompute_scale_factor:
            raise ValueError(f"{fn}: recompute_scale_factor is not meaningful with an explicit size.")
        size = _host_values(fn, "size", size)
        if not isinstance(size, (list, tuple)):
            raise TypeError(f"{fn}: size should be a list or tuple or Tensor, got {size!r}")
        if len(size) != nsp:
            raise ValueError(f"{fn}: The x and size should satisfy rank(x) - 2 == len(size), "
                             f"got a {rank}-D x and size {list(size)}")
        out = [int(s) for s in size]
        if any(s <= 0 for s in out):
            raise ArgumentAssertionError(f"{fn}: Each dimension size given in size must be greater than 0, "
                                         f"got {out}")
        return out, [None] * nsp
    factor = _host_values(fn, "scale_factor", scale_factor)
    if is_scalar(factor):
        scales = [float(factor)] * nsp
    elif isinstance(factor, (list, tuple)):
        if len(factor) != nsp:
            raise ValueError(f"{fn}: scale_shape length should be {nsp} for input {rank}-D tensor, "
                             f"got {list(factor)}")
        scales = [float(s) for s in factor]
    else:
        raise TypeError(f"{fn}: Attr(scale)'s type should be float, int, list, tuple, or Tensor, "
                        f"got {type(scale_factor).__name__}")
    if any(s <= 0 for s in scales):
        raise ValueError(f"{fn}: Attr(scale) should be greater than zero, got {scales}")
    out = [int(math.floor(d * s)) for d, s in zip(in_dims, scales)]
    if any(o <= 0 for o in out):
        raise ValueError(f"{fn}: scale_factor {scales} gives an empty output for input sizes {in_dims}")
    return out, ([None] * nsp if recompute_scale_factor else list(scales))


# ----------------------------------------------------------------- interpolate


def interpolate(x: Any, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                align_corners: bool = False, align_mode: int = 0, data_format: str | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False,
                name: str | None = None) -> Any:
    """`paddle.nn.functional.interpolate`: resize the spatial dimensions of a 3-D
    (`linear`, `area`), 4-D (`nearest`, `bilinear`, `bicubic`, `area`) or 5-D
    (`nearest`, `trilinear`, `area`) input to `size`, or by `scale_factor` (output
    `floor(in * scale)`).  `align_corners` maps the corner pixels onto each other
    (ratio `(in - 1) / (out - 1)`); otherwise the ratio is `1 / scale` (or
    `in / out` for a size) and linear modes with `align_mode=0` sample at half-pixel
    centres.  `data_format` defaults from the rank (`NCW`, `NCHW`, `NCDHW`)."""
    fn = "interpolate"
    check_tensor(fn, "x", x)
    rank = len(x.shape)
    if data_format is None:
        if rank not in _FORMATS:
            raise ValueError(f"{fn}: The dimension of the input tensor should only be 3-D, 4-D or 5-D, "
                             f"but the received dimension is {rank}.")
        data_format = _FORMATS[rank][0]
    if not isinstance(mode, str) or mode.lower() not in _MODES:
        raise ValueError(f"{fn}: The 'resample' of image_resize can only be 'area', 'linear', 'bilinear', "
                         f"'trilinear', 'bicubic' or 'nearest' currently, got {mode!r}")
    mode = mode.lower()
    data_format = str(data_format).upper()
    need = {"linear": (3,), "nearest": (4, 5), "bilinear": (4,), "bicubic": (4,), "trilinear": (5,),
            "area": (3, 4, 5)}[mode]
    if rank not in need:
        raise ValueError(f"{fn}: mode '{mode}' only supports {' or '.join(f'{r}-D' for r in need)} "
                         f"input, got a {rank}-D tensor")
    if size is None and scale_factor is None:
        raise ValueError(f"{fn}: One of size and scale_factor must not be None.")
    if not isinstance(align_corners, bool):
        raise TypeError(f"{fn}: Attr align_corners should be a bool value, got {align_corners!r}")
    if align_mode not in (0, 1):
        raise ValueError(f"{fn}: align_mode can only be 0 or 1, got {align_mode!r}")
    if not isinstance(antialias, bool):
        raise TypeError(f"{fn}: Attr antialias should be a bool value, got {antialias!r}")
    if antialias and mode not in ("bilinear", "bicubic"):
        raise ValueError(f"{fn}: Anti-alias option is only supported for bilinear and bicubic modes")
    if antialias:
        raise NotImplementedError(f"{fn}: antialias=True (Pillow-style downsampling) is not supported")
    if align_corners and mode == "nearest":
        raise ValueError(f"{fn}: align_corners option can only be set with the interpolating modes: "
                         "linear | bilinear | bicubic | trilinear")
    if data_format not in _FORMATS[rank]:
        raise ValueError(f"{fn}: Got wrong value for param `data_format`: {data_format} received but "
                         f"only {' or '.join(f'`{f}`' for f in _FORMATS[rank])} supported for "
                         f"{rank}-D input.")
    if mode == "area":
        if size is None:
            raise ValueError(f"{fn}: output size can not be None in AREA mode")
        if data_format[1] != "C":
            raise ValueError(f"{fn}: mode 'area' supports channel-first input only, got {data_format}")
        if rank == 3:
            return adaptive_avg_pool1d(x, _host_values(fn, "size", size)[0] if isinstance(
                size, (list, tuple)) else _host_values(fn, "size", size))
        if rank == 4:
            return adaptive_avg_pool2d(x, _host_values(fn, "size", size))
        return adaptive_avg_pool3d(x, _host_values(fn, "size", size))
    if mode != "nearest":  # nearest only copies entries: any dtype (Paddle: uint8 images too)
        check_float_tensor(fn, "x", x)
    axes = _spatial_axes(rank, data_format)
    in_dims = _static_dims(fn, x, axes)
    out_dims, scales = _sizes(fn, x, rank, in_dims, size, scale_factor, recompute_scale_factor)
    return _resize(x, axes, in_dims, out_dims, scales, mode, align_corners, align_mode, name)


def _spatial_axes(rank: int, data_format: str) -> list[int]:
    """The resized axes: after the channel (`NC...`) or before it (`N...C`)."""
    return list(range(2, rank)) if data_format[1] == "C" else list(range(1, rank - 1))


def _resize(x: Any, axes: list[int], in_dims: list[int], out_dims: list[int], scales: list[float | None],
            mode: str, align_corners: bool, align_mode: int, name: str | None) -> Any:
    """Resample `axes` of x from `in_dims` to `out_dims`, one axis at a time."""
    if out_dims == in_dims:  # Paddle's kernels copy the input then, whatever the scale
        return scale(x, 1.0, name=name)
    out = x
    for axis, n_in, n_out, s in zip(axes, in_dims, out_dims, scales):
        r = _ratio(n_in, n_out, align_corners, s)
        if mode == "nearest":
            taps = _nearest_taps(n_in, n_out, r, align_corners)
        elif mode == "bicubic":
            taps = _cubic_taps(n_in, n_out, r, align_corners)
        else:
            taps = _linear_taps(n_in, n_out, r, align_corners, align_mode)
        out = _weighted_taps(out, axis, taps)
    return out


_FLUID_MODES = {"BILINEAR": ("bilinear", 4), "TRILINEAR": ("trilinear", 5), "NEAREST": ("nearest", 4),
                "LINEAR": ("linear", 3), "BICUBIC": ("bicubic", 4)}


def image_resize(input: Any, out_shape: Any = None, scale: Any = None, name: str | None = None,
                 resample: str = "BILINEAR", actual_shape: Any = None, align_corners: bool = True,
                 align_mode: int = 1, data_format: str = "NCHW") -> Any:
    """`fluid.layers.image_resize` (the v1 interp ops): resize to `out_shape`, else
    by `scale` (`out = int(in * scale)`); the ratio is `in / out` (or
    `(in - 1) / (out - 1)` with `align_corners`, fluid's default, which nearest
    rounds to).  `actual_shape` (a run-time shape) is not supported."""
    fn = "image_resize"
    check_float_tensor(fn, "input", input)
    if not isinstance(resample, str) or resample.upper() not in _FLUID_MODES:
        raise ValueError(f"{fn}: The 'resample' of image_resize can only be 'LINEAR', 'BILINEAR', "
                         f"'TRILINEAR', 'BICUBIC' or 'NEAREST' currently, got {resample!r}")
    mode, want_rank = _FLUID_MODES[resample.upper()]
    rank = len(input.shape)
    if rank != want_rank:
        raise ValueError(f"{fn}: resample '{resample}' needs a {want_rank}-D input, got {rank}-D")
    if actual_shape is not None:
        raise NotImplementedError(f"{fn}: actual_shape (a run-time output shape) is not supported")
    if data_format not in _FORMATS[rank]:
        raise ValueError(f"{fn}: data_format must be one of {list(_FORMATS[rank])}, got {data_format!r}")
    if not isinstance(align_corners, bool):
        raise TypeError(f"{fn}: Attr align_corners should be a bool value, got {align_corners!r}")
    if align_mode not in (0, 1):
        raise ValueError(f"{fn}: align_mode can only be 0 or 1, got {align_mode!r}")
    axes = _spatial_axes(rank, data_format)
    in_dims = _static_dims(fn, input, axes)
    if out_shape is not None:
        dims = _host_values(fn, "out_shape", out_shape)
        if not isinstance(dims, (list, tuple)) or len(dims) != rank - 2:
            raise ValueError(f"{fn}: out_shape length should be {rank - 2} for input {rank}-D tensor, "
                             f"got {out_shape!r}")
        out_dims = [int(d) for d in dims]
    elif scale is not None:
        factor = _host_values(fn, "scale", scale)
        if not is_scalar(factor) or factor <= 0:
            raise ValueError(f"{fn}: scale should be a positive number, got {scale!r}")
        out_dims = [int(d * float(factor)) for d in in_dims]
    else:
        raise ValueError(f"{fn}: One of out_shape and scale must not be None.")
    if any(d <= 0 for d in out_dims):
        raise ValueError(f"{fn}: the output size must be positive, got {out_dims}")
    return _resize(input, axes, in_dims, out_dims, [None] * (rank - 2), mode, align_corners, align_mode, name)


def resize_bilinear(input: Any, out_shape: Any = None, scale: Any = None, name: str | None = None,
                    actual_shape: Any = None, align_corners: bool = True, align_mode: int = 1,
                    data_format: str = "NCHW") -> Any:
    """`fluid.layers.resize_bilinear`: `image_resize(resample='BILINEAR')`."""
    return image_resize(input, out_shape, scale, name, "BILINEAR", actual_shape, align_corners, align_mode,
                        data_format)


def resize_nearest(input: Any, out_shape: Any = None, scale: Any = None, name: str | None = None,
                   actual_shape: Any = None, align_corners: bool = True, data_format: str = "NCHW") -> Any:
    """`fluid.layers.resize_nearest`: `image_resize(resample='NEAREST')`."""
    return image_resize(input, out_shape, scale, name, "NEAREST", actual_shape, align_corners, 1, data_format)


def resize_trilinear(input: Any, out_shape: Any = None, scale: Any = None, name: str | None = None,
                     actual_shape: Any = None, align_corners: bool = True, align_mode: int = 1,
                     data_format: str = "NCDHW") -> Any:
    """`fluid.layers.resize_trilinear`: `image_resize(resample='TRILINEAR')`."""
    return image_resize(input, out_shape, scale, name, "TRILINEAR", actual_shape, align_corners, align_mode,
                        data_format)


def adaptive_avg_pool3d(x: Any, output_size: Any, data_format: str = "NCDHW", name: str | None = None) -> Any:
    """`paddle.nn.functional.adaptive_avg_pool3d`: output `(i, j, k)` averages the
    input box `[floor(i*D/od), ceil((i+1)*D/od)) x ...`; `output_size` an int or 3
    entries (None keeps that size).  A box mean is separable: one averaging pass
    (constant-weight gathers) per axis."""
    fn = "adaptive_avg_pool3d"
    check_float_tensor(fn, "x", x)
    if len(x.shape) != 5:
        raise ValueError(f"{fn}: x must be 5-D, got shape {list(x.shape)}")
    if data_format not in ("NCDHW", "NDHWC"):
        raise ValueError(f"{fn}: Attr(data_format) should be 'NCDHW' or 'NDHWC'. Received "
                         f"Attr(data_format): {data_format}.")
    axes = _spatial_axes(5, data_format)
    in_dims = _static_dims(fn, x, axes)
    sizes = [output_size] * 3 if isinstance(output_size, (int, np.integer)) else list(output_size)
    if len(sizes) != 3:
        raise ValueError(f"{fn}: output_size must be an int or 3 entries, got {output_size!r}")
    sizes = [d if s is None else s for d, s in zip(in_dims, sizes)]
    if any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s <= 0 for s in sizes):
        raise ValueError(f"{fn}: output_size entries must be positive ints or None, got {output_size!r}")
    out = x
    for axis, n_in, n_out in zip(axes, in_dims, sizes):
        if n_in != n_out:
            out = _weighted_taps(out, axis, _area_taps(n_in, int(n_out)))
    return out if out is not x else scale(x, 1.0, name=name)


def adaptive_max_pool3d(x: Any, output_size: Any, return_mask: bool = False, name: str | None = None) -> Any:
    """`paddle.nn.functional.adaptive_max_pool3d` of NCDHW input: the maximum over the
    box `[floor(i*D/od), ceil((i+1)*D/od)) x ...`.  A box maximum is separable: per
    axis, the window's entries are gathered as taps (the shorter windows repeat
    their last entry, which leaves the max alone) and reduced by max."""
    fn = "adaptive_max_pool3d"
    if return_mask:
        raise NotImplementedError(f"{fn}: return_mask=True is not supported")
    check_float_tensor(fn, "x", x)
    if len(x.shape) != 5:
        raise ValueError(f"{fn}: x must be 5-D [N, C, D, H, W], got shape {list(x.shape)}")
    in_dims = _static_dims(fn, x, [2, 3, 4])
    sizes = [output_size] * 3 if isinstance(output_size, (int, np.integer)) else list(output_size)
    if len(sizes) != 3:
        raise ValueError(f"{fn}: output_size must be an int or 3 entries, got {output_size!r}")
    sizes = [d if s is None else s for d, s in zip(in_dims, sizes)]
    if any(isinstance(s, bool) or not isinstance(s, (int, np.integer)) or s <= 0 for s in sizes):
        raise ValueError(f"{fn}: output_size entries must be positive ints or None, got {output_size!r}")
    out = x
    for axis, n_in, n_out in zip([2, 3, 4], in_dims, sizes):
        if n_in == n_out:
            continue
        taps = [index_select(out, to_constant(idx.astype(np.int64)), axis=axis)
                for idx, _ in _area_taps(n_in, int(n_out))]
        out = taps[0] if len(taps) == 1 else reduce_max(stack(taps, axis=0), axis=0)
    return out if out is not x else scale(x, 1.0, name=name)


def upsample(x: Any, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
             align_corners: bool = False, align_mode: int = 0, data_format: str | None = None,
             name: str | None = None) -> Any:
    """`paddle.nn.functional.upsample`: `interpolate` under its older name."""
    return interpolate(x, size, scale_factor, mode, align_corners, align_mode, data_format, name=name)


# ------------------------------------------------------- affine_grid / grid_sample


def affine_grid(theta: Any, out_shape: Any, align_corners: bool = True, name: str | None = None) -> Any:
    """`paddle.nn.functional.affine_grid`: the sampling grid `[N, H, W, 2]` of the 2-D
    affine maps `theta [N, 2, 3]` applied to the normalized output coordinates
    `(x, y, 1)`, x and y spanning [-1, 1] at the pixel centres of the corners
    (`align_corners`) or of a grid shrunk by `(size - 1) / size`."""
    fn = "affine_grid"
    check_float_tensor(fn, "theta", theta)
    shape = _host_values(fn, "out_shape", out_shape)
    if not isinstance(shape, (list, tuple)):
        raise TypeError(f"{fn}: out_shape must be a list, tuple or Tensor, got {type(out_shape).__name__}")
    if len(shape) == 5:
        raise NotImplementedError(f"{fn}: the 3-D (5-D out_shape) form is not supported")
    if len(shape) != 4 or len(theta.shape) != 3 or list(theta.shape[1:]) != [2, 3]:
        raise ValueError(f"{fn}: expected theta [N, 2, 3] and out_shape [N, C, H, W], got "
                         f"{list(theta.shape)} and {list(shape)}")
    if not isinstance(align_corners, bool):
        raise TypeError(f"{fn}: align_corners must be a bool, got {align_corners!r}")
    h, w = int(shape[2]), int(shape[3])

    def axis(n: int) -> np.ndarray:
        v = np.linspace(-1.0, 1.0, n) if n > 1 else np.zeros(1)
        return v if align_corners else v * (n - 1) / n

    ys, xs = np.meshgrid(axis(h), axis(w), indexing="ij")
    base = np.stack([xs, ys, np.ones_like(xs)], axis=-1).reshape(1, h * w, 3)
    grid = matmul(to_constant(base, theta.dtype), transpose(theta, [0, 2, 1]))  # [N, H*W, 2]
    return reshape(grid, [_batch_dim(theta), h, w, 2], name=name)


def _reflect(v: Any, twice_low: int, twice_high: int) -> Any:
    """Fold coordinates into `[twice_low / 2, twice_high / 2]` by mirroring at the ends
    (Paddle's (and torch's) reflect_coordinates)."""
    if twice_low == twice_high:
        return v * 0.0
    low, span = twice_low / 2.0, (twice_high - twice_low) / 2.0
    d = abs(scale(v, 1.0, -low))
    flips = floor(scale(d, 1.0 / span))
    extra = d - scale(flips, span)
    even = equal(flips - scale(floor(scale(flips, 0.5)), 2.0), 0.0)
    return where(even, scale(extra, 1.0, low), scale(extra, -1.0, span + low))


def _source_coords(g: Any, size: int, align_corners: bool, padding_mode: str) -> Any:
    """Normalized grid coordinates in [-1, 1] to input pixel coordinates, padded."""
    v = scale(g, (size - 1) / 2.0, (size - 1) / 2.0) if align_corners else scale(g, size / 2.0, (size - 1) / 2.0)
    if padding_mode == "border":
        v = clip(v, 0.0, float(size - 1))
    elif padding_mode == "reflection":
        v = _reflect(v, 0, 2 * (size - 1)) if align_corners else _reflect(v, -1, 2 * size - 1)
        v = clip(v, 0.0, float(size - 1))
    return v


def grid_sample(x: Any, grid: Any, mode: str = "bilinear", padding_mode: str = "zeros",
                align_corners: bool = True, name: str | None = None) -> Any:
    """`paddle.nn.functional.grid_sample` of a 4-D input `[N, C, H, W]` at the grid
    `[N, Ho, Wo, 2]` of normalized `(x, y)` in [-1, 1]: bilinear (the four
    neighbours, each weighted and zero outside with `padding_mode='zeros'`) or
    nearest; `'border'` clamps and `'reflection'` mirrors coordinates.  Gradients
    reach both x (through gathers) and grid (through the weights)."""
    fn = "grid_sample"
    check_float_tensor(fn, "x", x)
    check_float_tensor(fn, "grid", grid)
    if mode not in ("bilinear", "nearest"):
        raise ValueError(f"{fn}: The mode of grid sample function should be in ['bilinear', 'nearest'], "
                         f"but got: {mode}")
    if padding_mode not in ("zeros", "reflection", "border"):
        raise ValueError(f"{fn}: The padding mode of grid sample function should be in ['zeros', "
                         f"'reflection', 'border'], but got: {padding_mode}")
    if not isinstance(align_corners, bool):
        raise ValueError(f"{fn}: The align corners should be bool, but got: {align_corners}")
    if len(x.shape) == 5:
        raise NotImplementedError(f"{fn}: 5-D (volumetric) input is not supported")
    if len(x.shape) != 4 or len(grid.shape) != 4 or grid.shape[3] != 2:
        raise ValueError(f"{fn}: expected x [N, C, H, W] and grid [N, H_out, W_out, 2], got "
                         f"{list(x.shape)} and {list(grid.shape)}")
    c, h, w = _static_dims(fn, x, [1, 2, 3])
    ho, wo = _static_dims(fn, grid, [1, 2])
    n = _batch_dim(x)
    gx = reshape(pslice(grid, [3], [0], [1]), [n, 1, ho * wo])
    gy = reshape(pslice(grid, [3], [1], [2]), [n, 1, ho * wo])
    ix = _source_coords(gx, w, align_corners, padding_mode)
    iy = _source_coords(gy, h, align_corners, padding_mode)
    flat = reshape(x, [n, c, h * w])

    def corner(cx: Any, cy: Any) -> tuple[Any, Any]:
        """Values at integer coordinates (clamped for the gather) and their in-range mask."""
        inside = (cast(greater_equal(cx, 0.0), x.dtype) * cast(less_equal(cx, float(w - 1)), x.dtype)
                  * cast(greater_equal(cy, 0.0), x.dtype) * cast(less_equal(cy, float(h - 1)), x.dtype))
        idx = cast(scale(clip(cy, 0.0, float(h - 1)), float(w)) + clip(cx, 0.0, float(w - 1)), "int64")
        return take_along_axis(flat, idx, axis=2), inside

    if mode == "nearest":
        value, inside = corner(round(ix), round(iy))
        out = value * inside
    else:
        x0, y0 = floor(ix), floor(iy)
        wx1, wy1 = ix - x0, iy - y0
        wx0, wy0 = scale(wx1, -1.0, 1.0), scale(wy1, -1.0, 1.0)
        out = None
        for cx, cy, wgt in ((x0, y0, wx0 * wy0), (scale(x0, 1.0, 1.0), y0, wx1 * wy0),
                            (x0, scale(y0, 1.0, 1.0), wx0 * wy1), (scale(x0, 1.0, 1.0), scale(y0, 1.0, 1.0), wx1 * wy1)):
            value, inside = corner(cx, cy)
            term = value * (wgt * inside)
            out = term if out is None else out + term
    return reshape(out, [n, c, ho, wo], name=name)


# ------------------------------------------------------------------- shuffles


def _nchw(fn: str, x: Any, data_format: str) -> bool:
    """True for NCHW, False for NHWC; errors for other ranks and formats."""
    check_tensor(fn, "x", x)
    if len(x.shape) != 4:
        raise ValueError(f"{fn}: Input x should be 4D tensor, but received x with the shape of {list(x.shape)}")
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"{fn}: Attr(data_format) should be 'NCHW' or 'NHWC'. But receive "
                         f"Attr(data_format): {data_format} ")
    return data_format == "NCHW"


def _image_dims(fn: str, x: Any, nchw: bool) -> tuple[Any, int, int, int]:
    """`(n, c, h, w)` of a checked 4-D image in either layout; n may be dynamic, the
    others must be static."""
    if nchw:
        c, h, w = _static_dims(fn, x, [1, 2, 3])
    else:
        h, w, c = _static_dims(fn, x, [1, 2, 3])
    return _batch_dim(x), c, h, w


def _factor(fn: str, arg: str, v: Any) -> int:
    """A positive int factor: TypeError for another type, ValueError if not positive
    (Paddle's errors)."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{fn}: {arg} must be int type, got {v!r}")
    if v <= 0:
        raise ValueError(f"{fn}: {arg} must be positive, got {v}")
    return int(v)


def pixel_shuffle(x: Any, upscale_factor: int, data_format: str = "NCHW", name: str | None = None) -> Any:
    """`paddle.nn.functional.pixel_shuffle`: `[N, C*r*r, H, W] -> [N, C, H*r, W*r]`
    (channel `c*r*r + i*r + j` goes to pixel `(h*r + i, w*r + j)` of channel `c`)."""
    fn = "pixel_shuffle"
    first = _nchw(fn, x, data_format)
    r = _factor(fn, "upscale_factor", upscale_factor)
    n, c, h, w = _image_dims(fn, x, first)
    if c % (r * r):
        raise ValueError(f"{fn}: The square of upscale_factor[{r}] should divide the number of channel[{c}]")
    oc = c // (r * r)
    if first:
        y = transpose(reshape(x, [n, oc, r, r, h, w]), [0, 1, 4, 2, 5, 3])
        return reshape(y, [n, oc, h * r, w * r], name=name)
    y = transpose(reshape(x, [n, h, w, oc, r, r]), [0, 1, 4, 2, 5, 3])
    return reshape(y, [n, h * r, w * r, oc], name=name)


def pixel_unshuffle(x: Any, downscale_factor: int, data_format: str = "NCHW", name: str | None = None) -> Any:
    """`paddle.nn.functional.pixel_unshuffle`: the inverse of `pixel_shuffle`,
    `[N, C, H, W] -> [N, C*r*r, H/r, W/r]`."""
    fn = "pixel_unshuffle"
    first = _nchw(fn, x, data_format)
    r = _factor(fn, "downscale_factor", downscale_factor)
    n, c, h, w = _image_dims(fn, x, first)
    if h % r or w % r:
        raise ValueError(f"{fn}: Downscale factor[{r}] should divide both height[{h}] and width[{w}]")
    if first:
        y = transpose(reshape(x, [n, c, h // r, r, w // r, r]), [0, 1, 3, 5, 2, 4])
        return reshape(y, [n, c * r * r, h // r, w // r], name=name)
    y = transpose(reshape(x, [n, h // r, r, w // r, r, c]), [0, 1, 3, 5, 2, 4])
    return reshape(y, [n, h // r, w // r, c * r * r], name=name)


def channel_shuffle(x: Any, groups: int, data_format: str = "NCHW", name: str | None = None) -> Any:
    """`paddle.nn.functional.channel_shuffle`: split the channels into `groups` and
    interleave them (`[g, C/g]` -> `[C/g, g]`)."""
    fn = "channel_shuffle"
    first = _nchw(fn, x, data_format)
    g = _factor(fn, "groups", groups)
    n, c, h, w = _image_dims(fn, x, first)
    if c % g:
        raise ValueError(f"{fn}: The number of groups[{g}] should divide the number of channel[{c}]")
    if first:
        y = transpose(reshape(x, [n, g, c // g, h, w]), [0, 2, 1, 3, 4])
        return reshape(y, [n, c, h, w], name=name)
    y = transpose(reshape(x, [n, h, w, g, c // g]), [0, 1, 2, 4, 3])
    return reshape(y, [n, h, w, c], name=name)


def temporal_shift(x: Any, seg_num: int, shift_ratio: float = 0.25, name: str | None = None,
                   data_format: str = "NCHW") -> Any:
    """`paddle.nn.functional.temporal_shift` (TSM): x `[N*T, C, H, W]` viewed as
    `T = seg_num` frames; the first `int(C * shift_ratio)` channels take the
    previous frame's values, the next ones up to `int(2 * C * shift_ratio)` the
    following frame's, zeros past either end; the rest stay."""
    fn = "temporal_shift"
    first = _nchw(fn, x, data_format)
    if isinstance(seg_num, bool) or not isinstance(seg_num, (int, np.integer)):
        raise TypeError(f"{fn}: seg_num must be int type, got {seg_num!r}")
    if seg_num <= 0:
        raise ValueError(f"{fn}: seg_num should be greater than 0, got {seg_num}")
    if not is_scalar(shift_ratio) or not 0 <= float(shift_ratio) <= 0.5:
        raise ValueError(f"{fn}: shift_ratio should be in [0, 0.5], got {shift_ratio!r}")
    t = int(seg_num)
    if first:
        c, h, w = _static_dims(fn, x, [1, 2, 3])
        view, ca = [-1, t, c, h, w], 2
    else:
        h, w, c = _static_dims(fn, x, [1, 2, 3])
        view, ca = [-1, t, h, w, c], 4
    if x.shape[0] >= 0 and x.shape[0] % t:
        raise ValueError(f"{fn}: the batch size {x.shape[0]} must be a multiple of seg_num {t}")
    c1, c2 = int(c * float(shift_ratio)), int(c * 2 * float(shift_ratio))
    v = reshape(x, view)
    parts = []
    for lo, hi, step in ((0, c1, -1), (c1, c2, 1), (c2, c, 0)):
        if hi <= lo:
            continue
        part = pslice(v, [ca], [lo], [hi])
        if step:  # out[t] = x[t + step], zero where t + step leaves [0, T)
            pads = [0] * 10
            pads[2:4] = [1, 0] if step < 0 else [0, 1]
            part = pslice(pad(part, pads), [1], [0 if step < 0 else 1], [t if step < 0 else t + 1])
        parts.append(part)
    out = parts[0] if len(parts) == 1 else concat(parts, axis=ca)
    return reshape(out, [-1, c, h, w] if first else [-1, h, w, c], name=name)


# --------------------------------------------------------------- unfold / fold


def _pair(fn: str, arg: str, v: Any, minimum: int) -> list[int]:
    """An int or a pair of ints, each at least `minimum`."""
    vals = [v, v] if isinstance(v, (int, np.integer)) and not isinstance(v, bool) else list(v) \
        if isinstance(v, (list, tuple)) else None
    if vals is None or len(vals) != 2 or any(
            isinstance(e, bool) or not isinstance(e, (int, np.integer)) for e in vals):
        raise ArgumentAssertionError(f"{fn}: {arg} should either be an integer or a list of two integers, "
                                     f"got {v!r}")
    if any(e < minimum for e in vals):
        raise ValueError(f"{fn}: each of {arg} must be at least {minimum}, got {v!r}")
    return [int(e) for e in vals]


def _paddings(fn: str, v: Any) -> list[int]:
    """Paddle's `paddings`: an int, `[ph, pw]`, or `[top, left, bottom, right]`;
    returned as `[top, left, bottom, right]`."""
    if isinstance(v, (list, tuple)) and len(v) == 4:
        if any(isinstance(e, bool) or not isinstance(e, (int, np.integer)) or e < 0 for e in v):
            raise ValueError(f"{fn}: paddings must be non-negative integers, got {v!r}")
        return [int(e) for e in v]
    try:
        ph, pw = _pair(fn, "paddings", v, 0)
    except (ValueError, AssertionError):
        raise ValueError(f"{fn}: paddings should either be an integer or a list of 2 or 4 integers, "
                         f"got {v!r}") from None
    return [ph, pw, ph, pw]


def _out_len(fn: str, n: int, before: int, after: int, k: int, s: int, d: int) -> int:
    extent = d * (k - 1) + 1
    length = (n + before + after - extent) // s + 1
    if n + before + after < extent or length <= 0:
        raise ValueError(f"{fn}: the kernel (extent {extent}) does not fit the padded input size "
                         f"{n + before + after}")
    return length


def unfold(x: Any, kernel_sizes: Any, strides: Any = 1, paddings: Any = 0, dilations: Any = 1,
           name: str | None = None) -> Any:
    """`paddle.nn.functional.unfold` (im2col): `[N, C, H, W] -> [N, C*kh*kw, L]`,
    row `c*kh*kw + i*kw + j` holding tap `(i, j)` of channel `c` at each of the
    `L = out_h * out_w` sliding positions (row-major)."""
    fn = "unfold"
    check_tensor(fn, "x", x)
    if len(x.shape) != 4:
        raise ArgumentAssertionError(f"{fn}: input should be the format of [N, C, H, W], got shape "
                                     f"{list(x.shape)}")
    kh, kw = _pair(fn, "kernel_sizes", kernel_sizes, 1)
    sh, sw = _pair(fn, "strides", strides, 1)
    dh, dw = _pair(fn, "dilations", dilations, 1)
    top, left, bottom, right = _paddings(fn, paddings)
    c, h, w = _static_dims(fn, x, [1, 2, 3])
    oh = _out_len(fn, h, top, bottom, kh, sh, dh)
    ow = _out_len(fn, w, left, right, kw, sw, dw)
    xp = pad(x, [0, 0, 0, 0, top, bottom, left, right]) if top or left or bottom or right else x
    taps = [
        strided_slice(xp, [2, 3], [i * dh, j * dw], [i * dh + sh * (oh - 1) + 1, j * dw + sw * (ow - 1) + 1],
                      [sh, sw])
        for i in range(kh) for j in range(kw)
    ]
    cols = stack(taps, axis=2)  # [N, C, kh*kw, oh, ow]
    return reshape(cols, [_batch_dim(x), c * kh * kw, oh * ow], name=name)


def fold(x: Any, output_sizes: Any, kernel_sizes: Any, strides: Any = 1, paddings: Any = 0,
         dilations: Any = 1, name: str | None = None) -> Any:
    """`paddle.nn.functional.fold` (col2im): `[N, C*kh*kw, L] -> [N, C, H, W]`, the
    inverse arrangement of `unfold` with overlapping taps summed."""
    fn = "fold"
    check_tensor(fn, "x", x)
    if len(x.shape) != 3:
        raise ArgumentAssertionError(f"{fn}: input should be the format of [N, C, L], got shape "
                                     f"{list(x.shape)}")
    h, w = _pair(fn, "output_sizes", output_sizes, 1)
    kh, kw = _pair(fn, "kernel_sizes", kernel_sizes, 1)
    sh, sw = _pair(fn, "strides", strides, 1)
    dh, dw = _pair(fn, "dilations", dilations, 1)
    top, left, bottom, right = _paddings(fn, paddings)
    ck, length = _static_dims(fn, x, [1, 2])
    if ck % (kh * kw):
        raise ValueError(f"{fn}: The size of input channels ({ck}) should be divisible by the product "
                         f"of kernel_sizes ({kh * kw})")
    oh = _out_len(fn, h, top, bottom, kh, sh, dh)
    ow = _out_len(fn, w, left, right, kw, sw, dw)
    if oh * ow != length:
        raise ValueError(f"{fn}: expected the input's last dimension to be {oh * ow} "
                         f"({oh} x {ow} blocks for output_sizes {[h, w]}), got {length}")
    c, n = ck // (kh * kw), _batch_dim(x)
    hp, wp = h + top + bottom, w + left + right
    cols = reshape(x, [n, c, kh * kw, oh, 1, ow, 1])
    if sh > 1 or sw > 1:  # interleave stride-1 zeros after each block position
        cols = pad(cols, [0, 0, 0, 0, 0, 0, 0, 0, 0, sh - 1, 0, 0, 0, sw - 1])
    grid_h, grid_w = oh * sh, ow * sw
    cols = reshape(cols, [n, c, kh * kw, grid_h, grid_w])
    total = None
    for i in range(kh):
        for j in range(kw):
            tap = pslice(cols, [2], [i * kw + j], [i * kw + j + 1])
            tap = reshape(tap, [n, c, grid_h, grid_w])
            r0, c0 = i * dh, j * dw
            # Each tap's grid starts at its offset; trim or pad to the padded size.
            keep_h, keep_w = min(grid_h, hp - r0), min(grid_w, wp - c0)
            if keep_h < grid_h or keep_w < grid_w:
                tap = pslice(tap, [2, 3], [0, 0], [keep_h, keep_w])
            tap = pad(tap, [0, 0, 0, 0, r0, hp - r0 - keep_h, c0, wp - c0 - keep_w])
            total = tap if total is None else total + tap
    assert total is not None
    if top or left or bottom or right:
        total = pslice(total, [2, 3], [top, left], [top + h, left + w])
    return total


def zeropad2d(x: Any, padding: Any, data_format: str = "NCHW", name: str | None = None) -> Any:
    """`paddle.nn.functional.zeropad2d`: zero padding of a 4-D input, `padding` an int
    or `[left, right, top, bottom]`."""
    check_tensor("zeropad2d", "x", x)
    if isinstance(padding, (int, np.integer)) and not isinstance(padding, bool):
        padding = [int(padding)] * 4
    return pad(x, padding, mode="constant", value=0.0, data_format=data_format, name=name)


PADDLE: list[Callable[..., Any]] = []
FUNCTIONAL: list[Callable[..., Any]] = [
    interpolate, upsample, adaptive_avg_pool3d, adaptive_max_pool3d, affine_grid, grid_sample, pixel_shuffle, pixel_unshuffle,
    channel_shuffle, temporal_shift, unfold, fold, zeropad2d,
]
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {
    "image_resize": image_resize, "resize_bilinear": resize_bilinear, "resize_nearest": resize_nearest,
    "resize_trilinear": resize_trilinear, "pixel_shuffle": pixel_shuffle, "unfold": unfold,
}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {}
