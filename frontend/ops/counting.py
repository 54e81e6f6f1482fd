"""Paddle's counting functions: `histogram` (a composite: every element compared with
every bin, so static mode and the compiled backend work), and `bincount` and `unique`,
whose result *shapes* depend on the values.

pullback's ops have result shapes known when the program is built, so `bincount` and
`unique` are computed from the value of an eager Tensor (numpy, the same results as
Paddle's kernels) and say so in static mode rather than give a wrong shape.  None of
these has a gradient.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pullback.dialects.pd.dtypes import to_dtype_name
from pullback.frontend.core import in_dynamic_mode
from pullback.frontend.eager import to_tensor
from pullback.frontend.ops.elementwise import (
    cast,
    check_tensor,
    constant_like,
    divide,
    equal,
    greater_equal,
    less_equal,
    scale,
    subtract,
    where,
)
from pullback.frontend.ops.indexing import to_constant
from pullback.frontend.ops.logic import logical_and
from pullback.frontend.ops.math import floor
from pullback.frontend.ops.reduction import max as reduce_max
from pullback.frontend.ops.reduction import sum as reduce_sum
from pullback.frontend.ops.shape import reshape, unsqueeze
from pullback.frontend.ops.statistics import min as reduce_min


def histogram(input: Any, bins: int = 100, min: float = 0, max: float = 0,  # noqa: A002
              weight: Any = None, density: bool = False, name: str | None = None) -> Any:
    """`paddle.histogram`: counts of `input` in `bins` equal bins over `[min, max]`
    (the data's range when both are 0; widened by 1 each way when that range is
    empty); elements outside are ignored, `max` falls in the last bin.  int64 counts,
    or float sums of `weight` / a `density` (normalized so the bins integrate to 1)."""
    check_tensor("histogram", "input", input)
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ValueError(f"histogram: bins must be a positive int, got {bins!r}")
    lo_v, hi_v = float(min), float(max)
    if lo_v > hi_v:
        raise ValueError(f"histogram: max must be larger or equal to min, got min={lo_v}, max={hi_v}")
    x = reshape(input, [-1])
    xf = x if x.dtype in ("float32", "float64") else cast(x, "float32")
    if lo_v == 0 and hi_v == 0:
        lo, hi = reduce_min(xf, keepdim=True), reduce_max(xf, keepdim=True)
        same = equal(lo, hi)
        lo = where(same, scale(lo, 1.0, -1.0), lo)
        hi = where(same, scale(hi, 1.0, 1.0), hi)
    else:
        if lo_v == hi_v:
            lo_v, hi_v = lo_v - 1, hi_v + 1
        anchor = reduce_min(xf, keepdim=True)
        lo, hi = constant_like(anchor, lo_v), constant_like(anchor, hi_v)
    n = int(bins)
    # Paddle's bin: (x - min) * bins / (max - min), truncated; x == max is the last
    pos = floor(divide(scale(subtract(xf, lo), float(n)), subtract(hi, lo)))
    pos = where(greater_equal(pos, constant_like(pos, float(n))), constant_like(pos, float(n - 1)), pos)
    inside = logical_and(greater_equal(xf, lo), less_equal(xf, hi))
    ks = to_constant(np.arange(n, dtype=np.float64), xf.dtype)
    hit = logical_and(equal(unsqueeze(pos, [1]), ks), unsqueeze(inside, [1]))  # [N, bins]
    if weight is None and not density:
        return reduce_sum(cast(hit, "int64"), axis=0)
    w = constant_like(xf, 1.0) if weight is None else cast(reshape(weight, [-1]), xf.dtype)
    wcol = unsqueeze(w, [1])
    counts = reduce_sum(where(hit, wcol, constant_like(wcol, 0.0)), axis=0)
    if not density:
        return counts
    width = scale(subtract(hi, lo), 1.0 / n)
    return divide(counts, reduce_sum(counts) * width)


def _eager_value(fn: str, x: Any) -> np.ndarray:
    check_tensor(fn, "x", x)
    if not in_dynamic_mode():
        raise NotImplementedError(
            f"{fn}: the result's shape depends on the values, which a static program does "
            "not know when it is built; pullback supports it in dynamic (eager) mode only")
    return np.asarray(x.numpy())


def bincount(x: Any, weights: Any = None, minlength: int = 0, name: str | None = None) -> Any:
    """`paddle.bincount`: the number of occurrences of each value 0..max(x) of a 1-D
    non-negative integer x (summed `weights` instead of counts when given), at least
    `minlength` long.  Eager mode only."""
    a = _eager_value("bincount", x)
    if a.ndim != 1 or a.dtype.kind not in "iu":
        raise TypeError(f"bincount: x must be a 1-D integer tensor, got {x.dtype} of shape {list(a.shape)}")
    if a.size and a.min() < 0:
        raise ValueError("bincount: the elements of x must be non-negative")
    if isinstance(minlength, bool) or not isinstance(minlength, (int, np.integer)) or minlength < 0:
        raise ValueError(f"bincount: minlength must be a non-negative int, got {minlength!r}")
    if weights is None:
        return to_tensor(np.bincount(a, minlength=int(minlength)).astype(np.int64))
    w = _eager_value("bincount", weights)
    if w.shape != a.shape:
        raise ValueError(f"bincount: weights of shape {list(w.shape)} must match x's {list(a.shape)}")
    out = np.bincount(a, weights=w, minlength=int(minlength))
    return to_tensor(out.astype(w.dtype if w.dtype.kind == "f" else np.int64))


def unique(x: Any, return_index: bool = False, return_inverse: bool = False,
           return_counts: bool = False, axis: int | None = None, dtype: Any = "int64",
           name: str | None = None) -> Any:
    """`paddle.unique`: the sorted unique elements of x (of the flattened x, or the
    unique slices along `axis`), with the first index of each, the inverse mapping and
    the counts on request (all in `dtype`).  Eager mode only."""
    a = _eager_value("unique", x)
    idx_dtype = to_dtype_name(dtype, "unique")
    if idx_dtype not in ("int32", "int64"):
        raise TypeError(f"unique: dtype must be int32 or int64, got {idx_dtype}")
    if axis is not None:
        if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)) or not -a.ndim <= axis < a.ndim:
            raise ValueError(f"unique: axis {axis!r} is out of range for a {a.ndim}-D input")
    vals, index, inverse, counts = np.unique(a, return_index=True, return_inverse=True,
                                             return_counts=True, axis=axis)
    out = [to_tensor(vals.astype(a.dtype))]
    if return_index:
        out.append(to_tensor(index.astype(idx_dtype)))
    if return_inverse:
        out.append(to_tensor(inverse.reshape(-1).astype(idx_dtype)))
    if return_counts:
        out.append(to_tensor(counts.astype(idx_dtype)))
    return out[0] if len(out) == 1 else tuple(out)


_ALL: list[Callable[..., Any]] = [histogram, bincount, unique]

PADDLE: list[Callable[..., Any]] = list(_ALL)
FUNCTIONAL: list[Callable[..., Any]] = []
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {f.__name__: f for f in _ALL}
