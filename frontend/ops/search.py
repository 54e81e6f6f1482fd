"""Paddle's sorting and order-statistic functions: `sort`, `argsort`, `kthvalue`,
`median`, `quantile`, `searchsorted` and `bucketize`.

`sort`/`argsort` are one `pd.top_k` with k the whole axis (`largest` for descending),
whose ties keep the lower index first, so both are stable; the values' gradient is
top_k's (scattered back to the source positions).  `kthvalue`, `median` and
`quantile` slice the sorted values, so their gradients flow the same way (Paddle's
`median` gives the two middle elements half the gradient each; so does this).
`searchsorted` counts, per value, the sequence elements below it (`<` for the left
side, `<=` for the right), with comparisons and a sum: exact, and no gradient.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from pullback.dialects import pd
from pullback.frontend.core import apply, in_dynamic_mode
from pullback.frontend.ops.creation import uniform
from pullback.frontend.ops.elementwise import (
    add,
    cast,
    check_tensor,
    equal,
    constant_like,
    divide,
    log,
    minimum,
    is_scalar,
    less_equal,
    less_than,
    not_equal,
    scale,
    subtract,
    where,
)
from pullback.frontend.ops.indexing import flip, stack, strided_slice, take_along_axis
from pullback.frontend.ops.logic import any as logical_any
from pullback.frontend.ops.reduction import argmax
from pullback.frontend.ops.reduction import max as reduce_max
from pullback.frontend.ops.reduction import sum as reduce_sum
from pullback.frontend.ops.statistics import cumsum
from pullback.frontend.ops.statistics import min as reduce_min
from pullback.frontend.ops.shape import expand, flatten, reshape, squeeze, transpose, unsqueeze


def _axis(fn: str, x: Any, axis: Any) -> int:
    """An axis argument mapped into `[0, rank)` (0 for a 0-D x)."""
    if isinstance(axis, bool) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{fn}: axis must be an int, got {axis!r}")
    rank = builtins.max(len(x.shape), 1)
    if not -rank <= axis < rank:
        raise ValueError(f"{fn}: axis {axis} is out of range for a {len(x.shape)}-D input")
    return int(axis) % rank


def _sorted(fn: str, x: Any, axis: int, descending: bool) -> list[Any]:
    """`[values, int64 indices]` of x sorted along `axis` (stable)."""
    check_tensor(fn, "x", x)
    if not x.shape:
        return [x, cast(scale(cast(x, "float32"), 0.0), "int64")]
    a = _axis(fn, x, axis)
    n = x.shape[a]
    if n < 0:
        raise ValueError(f"{fn}: dimension {a} of x (shape {list(x.shape)}) must be static")
    src = cast(x, "int32") if x.dtype == "bool" else x
    if n == 0:
        return [x, cast(x, "int64")]
    values, indices = apply(pd.TopKOp, [src], prefix="top_k_v2", k=n, axis=a,
                            largest=bool(descending), sorted=True)
    return [cast(values, "bool") if x.dtype == "bool" else values, indices]


def sort(x: Any, axis: int = -1, descending: bool = False, stable: bool = False,
         name: str | None = None) -> Any:
    """`paddle.sort`: x sorted along `axis` (ascending unless `descending`; always
    stable here, which `stable=False` permits)."""
    return _sorted("sort", x, axis, descending)[0]


def argsort(x: Any, axis: int = -1, descending: bool = False, stable: bool = False,
            name: str | None = None) -> Any:
    """`paddle.argsort`: the int64 indices that sort x along `axis` (stable)."""
    return _sorted("argsort", x, axis, descending)[1]


def _take(x: Any, axis: int, i: int) -> Any:
    """Index i of x along `axis`, that axis kept (size 1)."""
    return strided_slice(x, [axis], [i], [i + 1], [1])


def kthvalue(x: Any, k: int, axis: int | None = None, keepdim: bool = False,
             name: str | None = None) -> tuple[Any, Any]:
    """`paddle.kthvalue`: `(values, indices)` of the k-th smallest element (1-based)
    along `axis` (default the last)."""
    check_tensor("kthvalue", "x", x)
    a = _axis("kthvalue", x, -1 if axis is None else axis)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"kthvalue: k must be an int, got {k!r}")
    n = x.shape[a] if x.shape else 1
    if not 1 <= k <= n:
        raise ValueError(f"kthvalue: k must be in [1, {n}] for x of shape {list(x.shape)}, got {k}")
    if not x.shape:
        return x, cast(scale(cast(x, "float32"), 0.0), "int64")
    values, indices = apply(pd.TopKOp, [x], prefix="top_k_v2", k=int(k), axis=a,
                            largest=False, sorted=True)
    v, i = _take(values, a, int(k) - 1), _take(indices, a, int(k) - 1)
    if not keepdim:
        v, i = squeeze(v, [a]), squeeze(i, [a])
    return v, i


def _along(fn: str, x: Any, axis: Any) -> tuple[Any, int]:
    """x and the axis to reduce (x flattened when `axis` is None)."""
    check_tensor(fn, "x", x)
    if axis is None:
        return (flatten(x) if len(x.shape) != 1 else x), 0
    return x, _axis(fn, x, axis)


def _restore(fn: str, out: Any, x: Any, axis: Any, a: int, keepdim: bool) -> Any:
    """A reduced result (axis `a` kept, size 1) shaped as Paddle returns it."""
    if keepdim:
        if axis is None:
            return reshape(out, [1] * len(x.shape))
        return out
    return squeeze(out, [a]) if axis is not None else squeeze(out, [0])


def _nan_if_any(out: Any, xs: Any, a: int) -> Any:
    """`out` (axis `a` kept) made NaN where its row of xs holds a NaN, as Paddle's
    median and quantile propagate NaN (`nanmedian`/`nanquantile` skip them)."""
    if xs.dtype not in ("float32", "float64"):
        return out
    has_nan = logical_any(not_equal(xs, xs), axis=a, keepdim=True)
    return where(has_nan, constant_like(out, math.nan), out)


def median(x: Any, axis: int | None = None, keepdim: bool = False, mode: str = "avg",
           name: str | None = None) -> Any:
    """`paddle.median`: the median along `axis` (of all elements when None).  With
    an even count, `mode='avg'` averages the two middle elements (integers give
    float32); `mode='min'` takes the lower one and, for an int `axis`, also returns
    its int64 index.  A row holding NaN gives NaN."""
    if mode not in ("avg", "min"):
        raise ValueError(f"median: mode must be 'avg' or 'min', got {mode!r}")
    xs, a = _along("median", x, axis)
    n = xs.shape[a]
    if n <= 0:
        raise ValueError(f"median: the reduced dimension of x (shape {list(x.shape)}) must be static and non-empty")
    values, indices = _sorted("median", xs, a, False)
    lo = (n - 1) // 2
    if mode == "min" or n % 2:
        out = _restore("median", _nan_if_any(_take(values, a, lo), xs, a), x, axis, a, keepdim)
        if mode == "min" and axis is not None:
            return out, _restore("median", _take(indices, a, lo), x, axis, a, keepdim)
        if x.dtype not in ("float32", "float64") and mode == "avg":
            out = cast(out, "float32")
        return out
    pair = _take(values, a, lo), _take(values, a, lo + 1)
    if x.dtype not in ("float32", "float64"):
        pair = cast(pair[0], "float32"), cast(pair[1], "float32")
    return _restore("median", _nan_if_any(scale(add(*pair), 0.5), xs, a), x, axis, a, keepdim)


_INTERPOLATIONS = ("linear", "lower", "higher", "nearest", "midpoint")


def quantile(x: Any, q: Any, axis: Any = None, keepdim: bool = False,
             interpolation: str = "linear", name: str | None = None) -> Any:
    """`paddle.quantile`: the q-th quantile(s) along `axis` (all elements when
    None): position `q * (n - 1)` of the sorted values, between neighbours by
    `interpolation`.  A list `q` stacks its quantiles along a new first axis."""
    check_tensor("quantile", "x", x)
    if x.dtype not in ("float32", "float64"):
        raise TypeError(f"quantile: x must be float32 or float64, got {x.dtype}")
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"quantile: interpolation must be one of {list(_INTERPOLATIONS)}, "
                         f"got {interpolation!r}")
    qs = list(q) if isinstance(q, (list, tuple)) else [q]
    if not qs or not all(is_scalar(v) for v in qs):
        raise TypeError(f"quantile: q must be a float or a non-empty list of floats, got {q!r}")
    if any(not 0 <= float(v) <= 1 for v in qs):
        raise ValueError(f"quantile: q must be in [0, 1], got {q!r}")
    if isinstance(axis, (list, tuple)):
        raise NotImplementedError("quantile: a list of axes is not supported")
    xs, a = _along("quantile", x, axis)
    n = xs.shape[a]
    if n <= 0:
        raise ValueError(f"quantile: the reduced dimension of x (shape {list(x.shape)}) must be static and non-empty")
    values = _sorted("quantile", xs, a, False)[0]
    outs = []
    for v in qs:
        pos = float(v) * (n - 1)
        lo, hi = math.floor(pos), math.ceil(pos)
        if interpolation == "lower":
            hi = lo
        elif interpolation == "higher":
            lo = hi
        elif interpolation == "nearest":
            lo = hi = int(np.round(pos))
        vlo = _take(values, a, lo)
        if hi == lo:
            out = vlo
        else:
            vhi = _take(values, a, hi)
            w = 0.5 if interpolation == "midpoint" else pos - lo
            out = add(vlo, scale(subtract(vhi, vlo), w))
        outs.append(_restore("quantile", _nan_if_any(out, xs, a), x, axis, a, keepdim))
    if isinstance(q, (list, tuple)):
        return stack(outs, axis=0)
    return outs[0]


def searchsorted(sorted_sequence: Any, values: Any, out_int32: bool = False, right: bool = False,
                 name: str | None = None) -> Any:
    """`paddle.searchsorted`: for each value, the index in the innermost dimension of
    `sorted_sequence` where it would be inserted to keep the order (leftmost, or
    rightmost with `right`); a 1-D sequence serves every value, an N-D one's leading
    dimensions match `values`'.  int64 unless `out_int32`."""
    check_tensor("searchsorted", "sorted_sequence", sorted_sequence)
    check_tensor("searchsorted", "values", values)
    seq_rank, val_rank = len(sorted_sequence.shape), len(values.shape)
    if seq_rank == 0:
        raise ValueError("searchsorted: sorted_sequence must be at least 1-D")
    if seq_rank > 1 and list(sorted_sequence.shape[:-1]) != list(values.shape[:-1]):
        raise ValueError(
            f"searchsorted: the leading dimensions of sorted_sequence {list(sorted_sequence.shape)} "
            f"and values {list(values.shape)} must match")
    if sorted_sequence.dtype != values.dtype:
        sorted_sequence = cast(sorted_sequence, values.dtype)
    v = unsqueeze(values, [val_rank])  # [..., k, 1]
    s = sorted_sequence if seq_rank == 1 else unsqueeze(sorted_sequence, [seq_rank - 1])
    below = less_equal(s, v) if right else less_than(s, v)
    count = reduce_sum(cast(below, "int64"), axis=-1)
    return cast(count, "int32") if out_int32 else count


def bucketize(x: Any, sorted_sequence: Any, out_int32: bool = False, right: bool = False,
              name: str | None = None) -> Any:
    """`paddle.bucketize`: `searchsorted` of x in a 1-D `sorted_sequence`."""
    check_tensor("bucketize", "sorted_sequence", sorted_sequence)
    if len(sorted_sequence.shape) != 1:
        raise ValueError(
            f"bucketize: sorted_sequence must be 1-D, got shape {list(sorted_sequence.shape)}")
    return searchsorted(sorted_sequence, x, out_int32=out_int32, right=right, name=name)


def multinomial(x: Any, num_samples: int = 1, replacement: bool = False,
                name: str | None = None) -> Any:
    """`paddle.multinomial`: int64 category indices drawn from the (unnormalized)
    probabilities in the last dimension of a 1-D or 2-D x.  With `replacement`, each
    draw is the `searchsorted` of a uniform sample in the cumulative distribution;
    without, the `num_samples` largest `log(p) + Gumbel noise` (the Gumbel top-k
    trick: the same distribution as drawing one by one without replacement)."""
    check_tensor("multinomial", "x", x)
    if x.dtype not in ("float32", "float64"):
        raise TypeError(f"multinomial: x must be float32 or float64, got {x.dtype}")
    if len(x.shape) not in (1, 2):
        raise ValueError(f"multinomial: x must be 1-D or 2-D, got shape {list(x.shape)}")
    if any(d < 0 for d in x.shape):
        raise ValueError(f"multinomial: x must have a static shape, got {list(x.shape)}")
    if isinstance(num_samples, bool) or not isinstance(num_samples, (int, np.integer)) or num_samples < 1:
        raise ValueError(f"multinomial: num_samples must be a positive int, got {num_samples!r}")
    n = x.shape[-1]
    if not replacement and num_samples > n:
        raise ValueError(
            f"multinomial: num_samples ({num_samples}) must not exceed the number of categories "
            f"({n}) without replacement")
    if in_dynamic_mode():
        p = x.numpy()
        if (p < 0).any() or not np.isfinite(p).all():
            raise ValueError("multinomial: the probabilities must be finite and non-negative")
        if (p.sum(axis=-1) <= 0).any():
            raise ValueError("multinomial: the probabilities of a row must not all be zero")
        if not replacement and ((p > 0).sum(axis=-1) < num_samples).any():
            raise ValueError(
                f"multinomial: without replacement, every row needs at least num_samples "
                f"({num_samples}) categories of nonzero probability")
    lead = list(x.shape[:-1])
    if replacement:
        u = uniform([*lead, int(num_samples)], x.dtype, 0.0, 1.0)
        cdf = cumsum(x, axis=-1)
        total = strided_slice(cdf, [len(lead)], [n - 1], [n], [1])
        idx = searchsorted(divide(cdf, total), u, right=True)
        return minimum(idx, constant_like(idx, n - 1))
    # Gumbel noise -log(-log(u)), u moved off 0 and 1 so that both logs stay finite
    tiny = 1e-7 if x.dtype == "float32" else 1e-16
    noise = scale(uniform([*lead, n], x.dtype, 0.0, 1.0), 1.0 - 2 * tiny, tiny)
    keys = subtract(log(x), log(scale(log(noise), -1.0)))
    return apply(pd.TopKOp, [keys], prefix="top_k_v2", k=int(num_samples), axis=-1,
                 largest=True, sorted=True)[1]


def mode(x: Any, axis: int = -1, keepdim: bool = False, name: str | None = None) -> tuple[Any, Any]:
    """`paddle.mode`: `(values, indices)` of the most frequent value along `axis`
    (the smallest of equally frequent ones) and the last index holding it, as
    Paddle's kernel; the gradient reaches that element.  Each element is compared
    with every other one of its row (O(n^2), static length)."""
    check_tensor("mode", "x", x)
    if not x.shape:
        return x, cast(scale(cast(x, "float32"), 0.0), "int64")
    a = _axis("mode", x, axis)
    rank = len(x.shape)
    n = x.shape[a]
    if n <= 0:
        raise ValueError(f"mode: dimension {a} of x (shape {list(x.shape)}) must be static and non-empty")
    perm = [d for d in range(rank) if d != a] + [a]
    moved = x if a == rank - 1 else transpose(x, perm)
    lead = list(moved.shape[:-1])
    rows = expand(unsqueeze(moved, [rank]), [*lead, n, n])  # [..., j, i] = x[..., j]
    cols = expand(unsqueeze(moved, [rank - 1]), [*lead, n, n])  # [..., j, i] = x[..., i]
    counts = reduce_sum(cast(equal(rows, cols), "int64"), axis=-1)  # occurrences of x[..., j]
    best = equal(counts, reduce_max(counts, axis=-1, keepdim=True))
    top = reduce_max(moved, axis=-1, keepdim=True)
    value = reduce_min(where(best, moved, expand(top, [*lead, n])), axis=-1, keepdim=True)
    hits = cast(equal(moved, expand(value, [*lead, n])), "int32")
    last = subtract(constant_like(reduce_sum(hits, axis=-1, keepdim=True), n - 1),
                    argmax(flip(hits, [rank - 1]), axis=-1, keepdim=True))
    # read the value at that index, so that its gradient reaches that element only
    value = take_along_axis(moved, last, axis=rank - 1)
    if a != rank - 1:
        back = [perm.index(d) for d in range(rank)]
        value, last = transpose(value, back), transpose(last, back)
    if not keepdim:
        value, last = squeeze(value, [a]), squeeze(last, [a])
    return value, last


def fluid_argsort(input: Any, axis: int = -1, descending: bool = False,  # noqa: A002
                  name: str | None = None) -> tuple[Any, Any]:
    """`fluid.layers.argsort`: `(sorted values, indices)`."""
    values, indices = _sorted("argsort", input, axis, descending)
    return values, indices


_ALL: list[Callable[..., Any]] = [sort, argsort, kthvalue, median, quantile, searchsorted,
                                  bucketize, multinomial, mode]

PADDLE: list[Callable[..., Any]] = list(_ALL)
FUNCTIONAL: list[Callable[..., Any]] = []
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {"argsort": fluid_argsort}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {f.__name__: f for f in _ALL}
