"""Volumetric convolution and pooling: `conv3d`, `max_pool3d`, `avg_pool3d`.

Composites of existing ops: each kernel tap is one strided slice of the (padded)
input; the taps stacked along a new axis are contracted with the weight by one
`matmul` (convolution, groups as a batch dimension) or reduced by max/mean
(pooling).  The average's divisor (`exclusive`: the in-input elements of each
window) is a constant computed when the op is built.  Spatial sizes must be static.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from pullback.frontend.ops.elementwise import check_float_tensor
from pullback.frontend.ops.indexing import flip, stack, strided_slice, to_constant
from pullback.frontend.ops.nn import matmul
from pullback.frontend.ops.reduction import max, sum
from pullback.frontend.ops.shape import pad, reshape, transpose

_FORMATS = ("NCDHW", "NDHWC")
_LOWEST = -3.0e38  # the max-pool padding: below every float32 value that matters


def _is_int(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, np.integer))


def int_triple(fn: str, arg: str, v: Any, minimum: int) -> list[int]:
    """An int or 3 ints (depth, height, width), each at least `minimum`."""
    vals = [v] * 3 if _is_int(v) else list(v) if isinstance(v, (list, tuple)) else None
    if vals is None or len(vals) != 3 or not all(_is_int(e) and int(e) >= minimum for e in vals):
        raise ValueError(f"{fn}: {arg} must be an int or 3 ints >= {minimum}, got {v!r}")
    return [int(e) for e in vals]


def _pads(fn: str, padding: Any, channel_last: bool, in_dims: Sequence[int], kernel: Sequence[int],
          stride: Sequence[int], dilation: Sequence[int]) -> list[list[int]]:
    """Paddle's 3-D padding forms as `[before, after]` per spatial axis: 'SAME'
    (output `ceil(in / stride)`, the extra on the far side), 'VALID', an int, 3 ints,
    6 ints (front, back, top, bottom, left, right) or 5 per-axis pairs."""
    if isinstance(padding, str):
        algo = padding.upper()
        if algo == "VALID":
            return [[0, 0] for _ in range(3)]
        if algo != "SAME":
            raise ValueError(f"{fn}: padding must be 'SAME', 'VALID' or ints, got {padding!r}")
        out = []
        for n, k, s, d in zip(in_dims, kernel, stride, dilation):
            total = builtin_max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
            out.append([total // 2, total - total // 2])
        return out
    if _is_int(padding):
        return [[int(padding)] * 2 for _ in range(3)]
    pads = list(padding) if isinstance(padding, (list, tuple)) else []
    if len(pads) == 5 and all(isinstance(p, (list, tuple)) for p in pads):
        fixed, spatial = ([pads[0], pads[4]], pads[1:4]) if channel_last else (pads[:2], pads[2:])
        if any(list(p) != [0, 0] for p in fixed):
            raise ValueError(f"{fn}: batch and channel dimensions cannot be padded, got {padding!r}")
        pads = [v for pair in spatial for v in pair]
    if len(pads) == 3 and all(_is_int(p) and p >= 0 for p in pads):
        return [[int(p)] * 2 for p in pads]
    if len(pads) == 6 and all(_is_int(p) and p >= 0 for p in pads):
        return [[int(pads[2 * i]), int(pads[2 * i + 1])] for i in range(3)]
    raise ValueError(f"{fn}: padding must be 'SAME', 'VALID', an int, or 3 or 6 non-negative ints, "
                     f"got {padding!r}")


def builtin_max(a: int, b: int) -> int:
    """The larger int (`max` here is the tensor reduction)."""
    return a if a >= b else b


def _channel_first(fn: str, x: Any, data_format: str) -> tuple[Any, bool]:
    """x as NCDHW, and whether it came channel-last."""
    check_float_tensor(fn, "x", x)
    if len(x.shape) != 5:
        raise ValueError(f"{fn}: x must be 5-D [N, C, D, H, W], got shape {list(x.shape)}")
    if data_format not in _FORMATS:
        raise ValueError(f"{fn}: Attr(data_format) should be 'NCDHW' or 'NDHWC'. Received "
                         f"Attr(data_format): {data_format}.")
    last = data_format == "NDHWC"
    return (transpose(x, [0, 4, 1, 2, 3]) if last else x), last


def _static(fn: str, x: Any) -> list[int]:
    dims = [int(d) for d in x.shape[1:]]
    if any(d < 0 for d in dims):
        raise ValueError(f"{fn}: the channel and spatial dimensions must be static, got {list(x.shape)}")
    return dims


def _taps(x: Any, pads: list[list[int]], kernel: list[int], stride: list[int], dilation: list[int],
          out_dims: list[int], pad_value: float) -> Any:
    """The kernel taps of padded x stacked on a new axis 2: `[N, C, K, Do, Ho, Wo]`."""
    if any(p for pair in pads for p in pair):
        x = pad(x, [0, 0, 0, 0, *pads[0], *pads[1], *pads[2]], value=pad_value)
    taps = []
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            for k in range(kernel[2]):
                starts = [i * dilation[0], j * dilation[1], k * dilation[2]]
                ends = [s + st * (o - 1) + 1 for s, st, o in zip(starts, stride, out_dims)]
                taps.append(strided_slice(x, [2, 3, 4], starts, ends, stride))
    return stack(taps, axis=2)


def _out_dims(fn: str, in_dims: Sequence[int], pads: list[list[int]], kernel: Sequence[int],
              stride: Sequence[int], dilation: Sequence[int], ceil_mode: bool = False) -> list[int]:
    out = []
    for n, (b, a), k, s, d in zip(in_dims, pads, kernel, stride, dilation):
        span = n + b + a - (d * (k - 1) + 1)
        o = (-(-span // s) if ceil_mode else span // s) + 1
        if span < 0 or o <= 0:
            raise ValueError(f"{fn}: the window (extent {d * (k - 1) + 1}) does not fit the padded input "
                             f"size {n + b + a}")
        out.append(o)
    return out


def conv3d(x: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
           groups: int = 1, data_format: str = "NCDHW", name: str | None = None) -> Any:
    """`paddle.nn.functional.conv3d`: weight `[O, C/groups, kd, kh, kw]`, optional
    bias `[O]`; stride, dilation and padding in Paddle's forms (see `_pads`)."""
    fn = "conv3d"
    xc, last = _channel_first(fn, x, data_format)
    check_float_tensor(fn, "weight", weight)
    c, *in_dims = _static(fn, xc)
    if len(weight.shape) != 5:
        raise ValueError(f"{fn}: weight must be 5-D [out, in/groups, kd, kh, kw], got {list(weight.shape)}")
    o, cg, *kernel = (int(d) for d in weight.shape)
    if not _is_int(groups) or groups < 1 or c % groups or o % groups or cg * groups != c:
        raise ValueError(f"{fn}: weight {list(weight.shape)} and groups={groups!r} do not match "
                         f"{c} input channels")
    st, dl = int_triple(fn, "stride", stride, 1), int_triple(fn, "dilation", dilation, 1)
    pads = _pads(fn, padding, last, in_dims, kernel, st, dl)
    out_dims = _out_dims(fn, in_dims, pads, kernel, st, dl)
    k = math.prod(kernel)
    n = int(xc.shape[0]) if xc.shape[0] >= 0 else -1
    length = math.prod(out_dims)
    cols = reshape(_taps(xc, pads, kernel, st, dl, out_dims, 0.0), [n, groups, cg * k, length])
    w = reshape(weight, [groups, o // groups, cg * k])
    out = reshape(matmul(w, cols), [n, o, *out_dims])  # [N, g, O/g, L] -> [N, O, D, H, W]
    if bias is not None:
        check_float_tensor(fn, "bias", bias)
        out = out + reshape(bias, [1, o, 1, 1, 1])
    return transpose(out, [0, 2, 3, 4, 1], name=name) if last else out


def conv3d_transpose(x: Any, weight: Any, bias: Any = None, stride: Any = 1, padding: Any = 0,
                     output_padding: Any = 0, groups: int = 1, dilation: Any = 1, output_size: Any = None,
                     data_format: str = "NCDHW", name: str | None = None) -> Any:
    """`paddle.nn.functional.conv3d_transpose`: weight `[C_in, C_out/groups, kd, kh,
    kw]`; output size `(in - 1) * stride - pad_before - pad_after + dilation * (k - 1)
    + 1 + output_padding` per axis (`output_size` picks `output_padding`).  Built as
    the adjoint of `conv3d`: the input spread over a stride grid (zeros between),
    padded by `dilation * (k - 1) - pad`, convolved with the flipped kernel."""
    fn = "conv3d_transpose"
    xc, last = _channel_first(fn, x, data_format)
    check_float_tensor(fn, "weight", weight)
    c, *in_dims = _static(fn, xc)
    if len(weight.shape) != 5:
        raise ValueError(f"{fn}: weight must be 5-D [in, out/groups, kd, kh, kw], got {list(weight.shape)}")
    ci, og, *kernel = (int(d) for d in weight.shape)
    if not _is_int(groups) or groups < 1 or ci != c or c % groups:
        raise ValueError(f"{fn}: weight {list(weight.shape)} and groups={groups!r} do not match "
                         f"{c} input channels")
    st, dl = int_triple(fn, "stride", stride, 1), int_triple(fn, "dilation", dilation, 1)
    if isinstance(padding, str):
        if padding.upper() != "VALID":
            raise NotImplementedError(f"{fn}: padding {padding!r} is not supported (use ints or 'VALID')")
        padding = 0
    pads = _pads(fn, padding, last, in_dims, kernel, st, dl)
    natural = [(n - 1) * s - b - a + d * (k - 1) + 1 for n, s, (b, a), d, k in zip(in_dims, st, pads, dl, kernel)]
    if output_size is not None:
        sizes = int_triple(fn, "output_size", output_size, 1)
        extra = [o - n for o, n in zip(sizes, natural)]
        if any(e < 0 or e >= builtin_max(s, d) for e, s, d in zip(extra, st, dl)):
            raise ValueError(f"{fn}: output_size {sizes} is not reachable from the natural size {natural} "
                             f"with stride {st}")
    else:
        extra = int_triple(fn, "output_padding", output_padding, 0)
        if any(e >= builtin_max(s, d) for e, s, d in zip(extra, st, dl)):
            raise ValueError(f"{fn}: output_padding {extra} must be smaller than stride or dilation")
    n = int(xc.shape[0]) if xc.shape[0] >= 0 else -1
    d, h, w = in_dims
    spread = xc
    if any(s > 1 for s in st):  # zeros between input entries: [D, s] grid, then drop the trailing s - 1
        spread = reshape(xc, [n, c, d, 1, h, 1, w, 1])
        spread = pad(spread, [0, 0, 0, 0, 0, 0, 0, st[0] - 1, 0, 0, 0, st[1] - 1, 0, 0, 0, st[2] - 1])
        spread = reshape(spread, [n, c, d * st[0], h * st[1], w * st[2]])
        spread = strided_slice(spread, [2, 3, 4], [0, 0, 0],
                               [(d - 1) * st[0] + 1, (h - 1) * st[1] + 1, (w - 1) * st[2] + 1], [1, 1, 1])
    full = [[dd * (k - 1) - b, dd * (k - 1) - a + e] for dd, k, (b, a), e in zip(dl, kernel, pads, extra)]
    crop = [[builtin_max(-b, 0), builtin_max(-a, 0)] for b, a in full]
    full = [[builtin_max(b, 0), builtin_max(a, 0)] for b, a in full]
    if any(v for pair in crop for v in pair):  # more padding than the kernel reach: trim instead
        dims = [int(v) for v in spread.shape[2:]]
        spread = strided_slice(spread, [2, 3, 4], [b for b, _ in crop],
                               [m - a for m, (_, a) in zip(dims, crop)], [1, 1, 1])
    flipped = flip(weight, [2, 3, 4])
    wt = reshape(transpose(reshape(flipped, [groups, c // groups, og, *kernel]), [0, 2, 1, 3, 4, 5]),
                 [groups * og, c // groups, *kernel])
    out = conv3d(spread, wt, bias, 1, [v for pair in full for v in pair], dl, groups)
    return transpose(out, [0, 2, 3, 4, 1], name=name) if last else out


def _pool(fn: str, x: Any, kernel_size: Any, stride: Any, padding: Any, ceil_mode: bool,
          data_format: str) -> tuple[Any, bool, list[int], list[int], list[list[int]], list[int], list[int]]:
    """Shared argument handling of the 3-D pools; the taps stacked on axis 2."""
    xc, last = _channel_first(fn, x, data_format)
    _, *in_dims = _static(fn, xc)
    kernel = int_triple(fn, "kernel_size", kernel_size, 1)
    st = kernel if stride is None else int_triple(fn, "stride", stride, 1)
    pads = _pads(fn, padding, last, in_dims, kernel, st, [1, 1, 1])
    out_dims = _out_dims(fn, in_dims, pads, kernel, st, [1, 1, 1], bool(ceil_mode))
    if ceil_mode:  # the last window may overhang the padded input: pad it out
        for i, (n, o) in enumerate(zip(in_dims, out_dims)):
            need = (o - 1) * st[i] + kernel[i] - (n + pads[i][0] + pads[i][1])
            if need > 0:
                pads[i] = [pads[i][0], pads[i][1] + need]
    return xc, last, in_dims, kernel, pads, st, out_dims


def max_pool3d(x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               return_mask: bool = False, data_format: str = "NCDHW", name: str | None = None) -> Any:
    """`paddle.nn.functional.max_pool3d` (padding never wins the max)."""
    fn = "max_pool3d"
    if return_mask:
        raise NotImplementedError(f"{fn}: return_mask=True is not supported")
    xc, last, _, kernel, pads, st, out_dims = _pool(fn, x, kernel_size, stride, padding, ceil_mode, data_format)
    out = max(_taps(xc, pads, kernel, st, [1, 1, 1], out_dims, _LOWEST), axis=2)
    return transpose(out, [0, 2, 3, 4, 1], name=name) if last else out


def avg_pool3d(x: Any, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
               exclusive: bool = True, divisor_override: float | None = None, data_format: str = "NCDHW",
               name: str | None = None) -> Any:
    """`paddle.nn.functional.avg_pool3d`: the window sum divided by
    `divisor_override`, else by the number of its elements inside the input
    (`exclusive`, Paddle's default) or by the kernel volume."""
    fn = "avg_pool3d"
    xc, last, in_dims, kernel, pads, st, out_dims = _pool(fn, x, kernel_size, stride, padding, ceil_mode,
                                                          data_format)
    total = sum(_taps(xc, pads, kernel, st, [1, 1, 1], out_dims, 0.0), axis=2)
    if divisor_override is not None:
        if not isinstance(divisor_override, (int, float)) or divisor_override <= 0:
            raise ValueError(f"{fn}: divisor_override must be a positive number, got {divisor_override!r}")
        out = total * (1.0 / float(divisor_override))
    elif exclusive:
        valid = []
        for n, o, k, s, (before, _) in zip(in_dims, out_dims, kernel, st, pads):
            starts = np.arange(o) * s - before
            valid.append((np.minimum(starts + k, n) - np.maximum(starts, 0)).astype(np.float64))
        counts = np.einsum("i,j,k->ijk", *valid).reshape(1, 1, *out_dims)
        out = total * to_constant(1.0 / counts, total.dtype)
    else:
        out = total * (1.0 / math.prod(kernel))
    return transpose(out, [0, 2, 3, 4, 1], name=name) if last else out


PADDLE: list[Callable[..., Any]] = []
FUNCTIONAL: list[Callable[..., Any]] = [conv3d, conv3d_transpose, max_pool3d, avg_pool3d]
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {}
