"""Composite `paddle.nn.functional` activations, normalizations and distances:
`maxout`, `rrelu`, `gumbel_softmax`, `local_response_norm`, `bilinear`,
`pairwise_distance`.  Each is built from existing differentiable ops (as Paddle's own
Python builds several of them), so gradients, static mode and the compiled backend
come from those ops' rules.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from pullback.frontend.ops.composite import _number
from pullback.frontend.ops.creation import uniform
from pullback.frontend.ops.elementwise import (
    abs,
    cast,
    check_float_tensor,
    check_tensor,
    equal,
    greater_equal,
    greater_than,
    log,
    not_equal,
    pow,
    scale,
    where,
)
from pullback.frontend.ops.indexing import to_constant
from pullback.frontend.ops.nn import matmul
from pullback.frontend.ops.reduction import max, softmax, sum
from pullback.frontend.ops.shape import pad, reshape, transpose, unsqueeze
from pullback.frontend.ops.shape import slice as pslice
from pullback.frontend.ops.statistics import min


def _static_shape(fn: str, x: Any) -> list[int]:
    """x's shape, which must be fully static (random draws need it)."""
    shape = [int(d) for d in x.shape]
    if any(d < 0 for d in shape):
        raise ValueError(f"{fn}: the shape of x must be static, got {shape}")
    return shape


def maxout(x: Any, groups: int, axis: int = 1, name: str | None = None) -> Any:
    """`paddle.nn.functional.maxout`: the channel axis (`1`, or `-1`/`3` for NHWC) of
    a 4-D input split into runs of `groups` channels, each run reduced by max
    (`C -> C / groups`)."""
    fn = "maxout"
    check_float_tensor(fn, "x", x)
    if len(x.shape) != 4:
        raise ValueError(f"{fn}: x must be 4-D, got shape {list(x.shape)}")
    if axis not in (1, -1, 3):
        raise ValueError(f"{fn}: Attr(axis) should be 1 when data format is NCHW, -1 or 3 when data "
                         f"format is NHWC. Received Attr(axis): {axis}.")
    if isinstance(groups, bool) or not isinstance(groups, int) or groups <= 0:
        raise ValueError(f"{fn}: groups must be a positive int, got {groups!r}")
    a = axis % 4
    c = int(x.shape[a])
    if c < 0 or c % groups:
        raise ValueError(f"{fn}: the number of channels ({c}) must be static and divisible by "
                         f"groups ({groups})")
    dims = [int(d) if d >= 0 else -1 for d in x.shape]
    split = dims[:a] + [c // groups, groups] + dims[a + 1:]
    if split.count(-1) > 1:
        split = [0 if i < a and d == -1 else d for i, d in enumerate(split)]
    return max(reshape(x, split), axis=a + 1, name=name)


def rrelu(x: Any, lower: float = 1.0 / 8.0, upper: float = 1.0 / 3.0, training: bool = True,
          name: str | None = None) -> Any:
    """`paddle.nn.functional.rrelu`: `x` where `x >= 0`, else `a * x` with `a` drawn
    from `U(lower, upper)` per element when training, `(lower + upper) / 2` in eval."""
    fn = "rrelu"
    check_float_tensor(fn, "x", x)
    lo, hi = _number(fn, "lower", lower), _number(fn, "upper", upper)
    if lo < 0 or lo > 1:
        raise ValueError(f"{fn}: The lower value must be no less than zero or greater than one. "
                         f"Received: {lo}.")
    if hi < lo:
        raise ValueError(f"{fn}: The upper value must be greater than lower value. Received: {lo}, {hi}.")
    if hi > 1:
        raise ValueError(f"{fn}: The upper value must be no greater than one. Received: {hi}.")
    if training and hi > lo:
        slope: Any = uniform(_static_shape(fn, x), dtype=x.dtype, min=lo, max=hi)
    else:
        slope = (lo + hi) / 2.0
    return where(greater_equal(x, 0.0), x, x * slope, name=name)


def gumbel_softmax(x: Any, temperature: float = 1.0, hard: bool = False, axis: int = -1,
                   name: str | None = None) -> Any:
    """`paddle.nn.functional.gumbel_softmax`: `softmax((x + g) / temperature)` with
    Gumbel noise `g = -log(-log(U))`; `hard=True` returns the one-hot of the argmax
    with the soft sample's gradient (straight through)."""
    fn = "gumbel_softmax"
    check_float_tensor(fn, "x", x)
    t = _number(fn, "temperature", temperature)
    if t <= 0:
        raise ValueError(f"{fn}: temperature must be positive, got {t}")
    u = uniform(_static_shape(fn, x), dtype=x.dtype, min=1e-10, max=1.0)
    g = -log(-log(u))
    y = softmax(scale(x + g, 1.0 / t), axis=axis)
    if not hard:
        return y
    one_hot = cast(equal(y, max(y, axis=axis, keepdim=True)), y.dtype)
    return one_hot - y.detach() + y


def local_response_norm(x: Any, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0,
                        data_format: str = "NCHW", name: str | None = None) -> Any:
    """`paddle.nn.functional.local_response_norm`: `x / (k + alpha * avg_c(x^2))^beta`,
    the average taken over `size` neighbouring channels (`size // 2` before,
    `(size - 1) // 2` after, zero beyond the edges, always divided by `size`)."""
    fn = "local_response_norm"
    check_float_tensor(fn, "x", x)
    rank = len(x.shape)
    if rank < 3:
        raise ValueError(f"{fn}: Expected 3D or higher dimensionality input, but got {rank} dimensions")
    if data_format not in ("NCL", "NLC", "NCHW", "NHWC", "NCDHW", "NDHWC"):
        raise ValueError(f"{fn}: data_format should be in one of [NCL, NCHW, NCDHW, NLC, NHWC, NDHWC], "
                         f"but got {data_format}")
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        raise ValueError(f"{fn}: size must be a positive int, got {size!r}")
    c_axis = rank - 1 if data_format[-1] == "C" else 1
    c = int(x.shape[c_axis])
    if c < 0:
        raise ValueError(f"{fn}: the channel dimension must be static, got shape {list(x.shape)}")
    sq = x * x
    paddings = [0] * (2 * rank)
    paddings[2 * c_axis], paddings[2 * c_axis + 1] = size // 2, (size - 1) // 2
    padded = pad(sq, paddings)
    window = None
    for s in range(size):
        part = pslice(padded, [c_axis], [s], [s + c])
        window = part if window is None else window + part
    div = pow(scale(window, float(alpha) / size, float(k)), float(beta))
    return x / div


def bilinear(x1: Any, x2: Any, weight: Any, bias: Any = None, name: str | None = None) -> Any:
    """`paddle.nn.functional.bilinear`: `out[n, o] = x1[n] . weight[o] . x2[n] + bias[o]`,
    `x1 [N, in1]`, `x2 [N, in2]`, `weight [out, in1, in2]`, `bias [1, out]`."""
    fn = "bilinear"
    for arg, v in (("x1", x1), ("x2", x2), ("weight", weight)):
        check_float_tensor(fn, arg, v)
    if len(x1.shape) != 2 or len(x2.shape) != 2 or len(weight.shape) != 3:
        raise ValueError(f"{fn}: expected x1 [N, in1], x2 [N, in2] and weight [out, in1, in2], got "
                         f"{list(x1.shape)}, {list(x2.shape)} and {list(weight.shape)}")
    out_f, in1, in2 = (int(d) for d in weight.shape)
    if (x1.shape[1] >= 0 and x1.shape[1] != in1) or (x2.shape[1] >= 0 and x2.shape[1] != in2):
        raise ValueError(f"{fn}: weight {list(weight.shape)} does not match x1 {list(x1.shape)} and "
                         f"x2 {list(x2.shape)}")
    w = reshape(transpose(weight, [1, 0, 2]), [in1, out_f * in2])
    left = reshape(matmul(x1, w), [-1, out_f, in2])
    out = sum(left * unsqueeze(x2, [1]), axis=2)
    if bias is not None:
        check_float_tensor(fn, "bias", bias)
        out = out + reshape(bias, [1, out_f])
    return out


def _p_norm(d: Any, p: float, axis: int, keepdim: bool) -> Any:
    """The p-norm of d along `axis` (inf, -inf and 0 as in `paddle.linalg.norm`)."""
    if p == math.inf:
        return max(abs(d), axis=axis, keepdim=keepdim)
    if p == -math.inf:
        return min(abs(d), axis=axis, keepdim=keepdim)
    if p == 0:
        return sum(cast(not_equal(d, 0.0), d.dtype), axis=axis, keepdim=keepdim)
    if p == 1:
        return sum(abs(d), axis=axis, keepdim=keepdim)
    if p == 2:
        return pow(sum(d * d, axis=axis, keepdim=keepdim), 0.5)
    return pow(sum(pow(abs(d), p), axis=axis, keepdim=keepdim), 1.0 / p)


def pairwise_distance(x: Any, y: Any, p: float = 2.0, epsilon: float = 1e-6, keepdim: bool = False,
                      name: str | None = None) -> Any:
    """`paddle.nn.functional.pairwise_distance`: `||x - y + epsilon||_p` along the
    last axis (`[N, D] -> [N]`, or `[N, 1]` with `keepdim`)."""
    fn = "pairwise_distance"
    check_float_tensor(fn, "x", x)
    check_tensor(fn, "y", y)
    if x.dtype != y.dtype:
        raise TypeError(f"{fn}: x ({x.dtype}) and y ({y.dtype}) must have one dtype")
    order = _number(fn, "p", p)
    return _p_norm(scale(x - y, 1.0, _number(fn, "epsilon", epsilon)), order, -1, bool(keepdim))


def sequence_mask(x: Any, maxlen: Any = None, dtype: Any = "int64", name: str | None = None) -> Any:
    """`paddle.nn.functional.sequence_mask`: `mask[..., j] = j < x[...]` for lengths
    `x`, `j` in `[0, maxlen)`; `maxlen` defaults to `max(x)`, which needs the value
    (eager mode) since it fixes the result's shape."""
    fn = "sequence_mask"
    check_tensor(fn, "x", x)
    if x.dtype not in ("int32", "int64"):
        raise TypeError(f"{fn}: x must be int32 or int64, got {x.dtype}")
    if maxlen is not None and hasattr(maxlen, "numpy"):
        maxlen = int(maxlen.numpy().reshape(-1)[0])
    if maxlen is None:
        if not hasattr(x, "numpy"):
            raise ValueError(f"{fn}: maxlen must be given in static mode (it fixes the result's shape)")
        values = x.numpy()
        maxlen = int(values.max()) if values.size else 0
    if isinstance(maxlen, bool) or not isinstance(maxlen, (int, np.integer)) or maxlen < 0:
        raise TypeError(f"{fn}: maxlen must be a non-negative int or a Tensor, got {maxlen!r}")
    steps = to_constant(np.arange(int(maxlen), dtype=np.int64))
    mask = greater_than(unsqueeze(cast(x, "int64"), [-1]), steps)
    return cast(mask, dtype)


PADDLE: list[Callable[..., Any]] = []
FUNCTIONAL: list[Callable[..., Any]] = [
    maxout, rrelu, gumbel_softmax, local_response_norm, bilinear, pairwise_distance, sequence_mask,
]
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {"maxout": maxout, "sequence_mask": sequence_mask}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {}
