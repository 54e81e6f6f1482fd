"""Paddle's running reductions beyond `cumsum`/`cumprod`: `logcumsumexp`, `cummax`
and `cummin`.

* `logcumsumexp(x)` is `log(cumsum(exp(x - m))) + m` with m the maximum along the
  axis (the identity holds for any m, so its gradient through m cancels; m keeps
  `exp` from overflowing).
* `cummax`/`cummin` compare every position with every earlier one: x is expanded to
  `[..., n, n]`, the entries after the current position are masked, and
  a `max`/`min` over the last axis gives the values (whose gradient, top-k style,
  reaches the elements attaining them); masked entries hold the row's opposite extreme.  The index is the last position attaining the
  running extreme, as Paddle's kernel (`>=`) returns.  This costs O(n^2) per row, fine
  for the moderate lengths these are used on, and needs a static axis length.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from pullback.dialects.pd.dtypes import to_dtype_name
from pullback.frontend.ops.elementwise import (
    add,
    cast,
    check_float_tensor,
    check_tensor,
    constant_like,
    exp,
    log,
    subtract,
    where,
)
from pullback.frontend.ops.indexing import flip, to_constant
from pullback.frontend.ops.reduction import argmax, argmin, check_axes
from pullback.frontend.ops.reduction import max as reduce_max
from pullback.frontend.ops.shape import expand, reshape, transpose, unsqueeze
from pullback.frontend.ops.statistics import cumsum
from pullback.frontend.ops.statistics import min as reduce_min


def _prepare(fn: str, x: Any, axis: Any) -> tuple[Any, int]:
    """x (flattened when `axis` is None) and the axis mapped into range."""
    check_tensor(fn, "x", x)
    if axis is None:
        return reshape(x, [-1]), 0
    check_axes(fn, x, axis)
    if isinstance(axis, (list, tuple)):
        raise TypeError(f"{fn}: axis must be an int, got {axis!r}")
    return x, int(axis) % builtins.max(len(x.shape), 1)


def logcumsumexp(x: Any, axis: int | None = None, dtype: Any = None, name: str | None = None) -> Any:
    """`paddle.logcumsumexp`: `log(cumsum(exp(x)))` along `axis` (of the flattened
    x when None), computed without overflow."""
    check_tensor("logcumsumexp", "x", x)
    if dtype is not None:
        x = cast(x, to_dtype_name(dtype, "logcumsumexp"))
    check_float_tensor("logcumsumexp", "x", x)
    xs, a = _prepare("logcumsumexp", x, axis)
    if not xs.shape:
        return xs
    m = reduce_max(xs, axis=a, keepdim=True)
    # an all -inf row has m = -inf; use 0 there so that x - m stays -inf, not NaN
    m = where(subtract(m, m) == constant_like(m, 0.0), m, constant_like(m, 0.0))
    return add(log(cumsum(exp(subtract(xs, m)), axis=a)), m, name=name)


def _running(fn: str, x: Any, axis: Any, dtype: Any, largest: bool) -> tuple[Any, Any]:
    """`(values, indices)` of the running max (`largest`) or min along `axis`."""
    xs, a = _prepare(fn, x, axis)
    out_dtype = to_dtype_name(dtype, fn)
    if out_dtype not in ("int32", "int64"):
        raise TypeError(f"{fn}: dtype must be int32 or int64, got {out_dtype}")
    if not xs.shape:
        return xs, cast(constant_like(cast(xs, "float32"), 0.0), out_dtype)
    rank = len(xs.shape)
    n = xs.shape[a]
    if n < 0:
        raise ValueError(f"{fn}: dimension {a} of x (shape {list(xs.shape)}) must be static")
    # move the axis last: [..., n]
    perm = [d for d in range(rank) if d != a] + [a]
    moved = xs if a == rank - 1 else transpose(xs, perm)
    lead = list(moved.shape[:-1])
    grid = expand(unsqueeze(moved, [rank - 1]), [*lead, n, n])  # [..., j, i] = x[..., i]
    later = to_constant(np.triu(np.ones((n, n), bool), 1))  # i > j
    # Masked entries take the row's opposite extreme, which never beats a real one.
    fill = (reduce_min if largest else reduce_max)(grid, axis=-1, keepdim=True)
    masked = where(later, fill, grid)  # where broadcasts (dynamic leading dimensions too)
    values = (reduce_max if largest else reduce_min)(masked, axis=-1)
    # the last index attaining it: search the reversed row, then map back
    pick = argmax if largest else argmin
    rev = pick(flip(masked, [rank]), axis=-1)
    idx = subtract(constant_like(rev, n - 1), rev)
    # In row j a masked entry can only tie when the running extreme equals the
    # row's opposite one; then x[0..j] are all equal and the answer is j.
    pos = to_constant(np.arange(n, dtype=np.int64))
    idx = where(idx > pos, expand_like(pos, idx), idx)
    if a != rank - 1:
        back = [0] * rank
        for k, p in enumerate(perm):
            back[p] = k
        values, idx = transpose(values, back), transpose(idx, back)
    if axis is None and len(x.shape) != 1:
        values, idx = reshape(values, [-1]), reshape(idx, [-1])
    return values, cast(idx, out_dtype)


def expand_like(pos: Any, like: Any) -> Any:
    """The 1-D `pos` broadcast to `like`'s shape (dynamic dimensions included)."""
    return add(pos, subtract(like, like))


def cummax(x: Any, axis: int | None = None, dtype: Any = "int64", name: str | None = None) -> tuple[Any, Any]:
    """`paddle.cummax`: `(values, indices)` of the running maximum along `axis` (of
    the flattened x when None); indices are those of the last element attaining it."""
    return _running("cummax", x, axis, dtype, True)


def cummin(x: Any, axis: int | None = None, dtype: Any = "int64", name: str | None = None) -> tuple[Any, Any]:
    """`paddle.cummin`: `(values, indices)` of the running minimum along `axis` (of
    the flattened x when None); indices are those of the last element attaining it."""
    return _running("cummin", x, axis, dtype, False)


_ALL: list[Callable[..., Any]] = [logcumsumexp, cummax, cummin]

PADDLE: list[Callable[..., Any]] = list(_ALL)
FUNCTIONAL: list[Callable[..., Any]] = []
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {f.__name__: f for f in _ALL}
