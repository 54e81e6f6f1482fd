"""Fuzzer specs of the shape family: reshape, transpose, concat, split, slice, pad,
squeeze/unsqueeze and expand (and their `_as` forms, shaped like another value).

Shape ops take any values; their specs draw shapes and axes that fit the operand's
declared shape (a dynamic dimension `?` is neither split, padded nor reshaped away).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pullback.dialects import pd

from ..gen import Gen, Pred, Spec, bounded, registry

SPECS: dict[type[pd.PdOp], Spec] = {}
spec = registry(SPECS)


def _factor(g: Gen, n: int) -> list[int]:
    """A random shape with n elements."""
    dims: list[int] = []
    while n > 1 and len(dims) < 3:
        divs = [d for d in range(2, n + 1) if n % d == 0]
        d = g.choice(divs)
        dims.append(d)
        n //= d
    if n > 1:
        dims.append(n)
    while g.coin(0.2):
        dims.insert(g.randint(0, len(dims)), 1)
    return dims


@spec(pd.ReshapeOp)
def _reshape(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val()
    xv = g.val(x)
    if xv.decl and xv.decl[0] is None:
        rest = _factor(g, int(np.prod(xv.array.shape[1:])))
        shape = [0, *rest]  # 0 copies the (dynamic) dimension
    else:
        shape = _factor(g, xv.array.size)
        if shape and g.coin(0.4):
            shape[g.randint(0, len(shape) - 1)] = -1
    return (x,), {"shape": shape}


@spec(pd.ReshapeAsOp)
def _reshape_as(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: not (v.decl and v.decl[0] is None))
    like = g.add_input(g.floats(_factor(g, g.val(x).array.size)), dynamic=False, grad=False)
    return (x, like), {}


@spec(pd.TransposeOp)
def _transpose(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val()
    return (x,), {"perm": [int(p) for p in g.rng.permutation(g.val(x).array.ndim)]}


def _shaped(shape: tuple[int, ...], decl: tuple[int | None, ...]) -> Pred:
    return lambda v: v.array.shape == shape and v.decl == decl


@spec(pd.ConcatOp)
def _concat(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and bounded(1e3)(v))
    xv = g.val(x)
    axis = g.choice(g.static_dims(x) or [0])
    parts = [x]
    for _ in range(g.randint(1, 2)):
        shape = list(xv.array.shape)
        shape[axis] = g.randint(1, 3)
        want: tuple[int | None, ...] = (*xv.decl[:axis], shape[axis], *xv.decl[axis + 1:])
        same = g.pick(_shaped(tuple(shape), want))
        parts.append(same if same is not None else g.like(x, shape) if axis or xv.decl[0] is not None
                     else g.add_input(g.floats(shape), dynamic=True))
    return parts, {"axis": axis - xv.array.ndim if g.coin(0.3) else axis}


def _split_sizes(g: Gen, n: int) -> list[int]:
    sizes = []
    while n > 0:
        s = g.randint(1, n)
        sizes.append(s)
        n -= s
    return sizes


@spec(pd.SplitOp)
def _split(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: any(d is not None and d > 1 for d in v.decl))
    axis = g.choice([a for a in g.static_dims(x) if g.val(x).array.shape[a] > 1])
    n = g.val(x).array.shape[axis]
    if g.coin(0.5):
        return (x,), {"num": g.choice([d for d in range(1, n + 1) if n % d == 0]), "axis": axis}
    sizes = _split_sizes(g, n)
    if g.coin(0.4):
        sizes[g.randint(0, len(sizes) - 1)] = -1
    return (x,), {"sections": sizes, "axis": axis}


@spec(pd.SplitAsOp)
def _split_as(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and v.decl[0] is not None)
    xv = g.val(x)
    axis = g.randint(0, xv.array.ndim - 1)
    likes = []
    for s in _split_sizes(g, xv.array.shape[axis]):
        shape = list(xv.array.shape)
        shape[axis] = s
        likes.append(g.add_input(g.floats(shape), dynamic=False, grad=False))
    return (x, *likes), {"axis": axis}


@spec(pd.SliceOp)
def _slice(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0)
    shape = g.val(x).array.shape
    axes = [a for a in range(len(shape)) if g.coin(0.6)] or [0]
    starts, ends = [], []
    for a in axes:
        s = g.randint(0, shape[a] - 1)
        e = g.randint(s + 1, shape[a])
        starts.append(s - shape[a] if g.coin(0.3) else s)
        ends.append(10**6 if e == shape[a] and g.coin(0.3) else e - shape[a] if g.coin(0.2) and e < shape[a] else e)
    return (x,), {"axes": axes, "starts": starts, "ends": ends}


@spec(pd.PadOp)
def _pad(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and v.array.size <= 16)
    r = g.val(x).array.ndim
    pads = [0 if g.val(x).decl[i // 2] is None else g.randint(0, 2) for i in range(2 * r)]
    return (x,), {"paddings": pads, "value": g.choice([0.0, 0.5, -1.0])}


@spec(pd.SqueezeOp)
def _squeeze(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: 1 in v.decl, make=lambda: g.floats((g.randint(1, 3), 1, g.randint(1, 3))[: g.randint(2, 3)]))
    decl = g.val(x).decl
    ones = [i for i, d in enumerate(decl) if d == 1]
    # Without axes every dimension of size 1 goes, a `?` one too when its run-time
    # size is 1: the result then has a lower rank than its declared type, which the
    # compiled backend refuses (`lowering/shapes.py`) -- not a case to compare.
    dynamic_one = any(d is None and n == 1 for d, n in zip(decl, g.val(x).array.shape))
    if g.coin(0.2) and not dynamic_one:
        axes: list[int] = []  # every dimension of size 1
    else:
        axes = [a for a in range(len(decl)) if (a in ones and g.coin(0.7)) or (decl[a] not in (1, None) and g.coin(0.2))]
        axes = [a - len(decl) if g.coin(0.3) else a for a in axes]
    return (x,), {"axes": axes}


@spec(pd.UnsqueezeOp)
def _unsqueeze(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim < 4)
    r = g.val(x).array.ndim
    n = g.randint(1, 2)
    return (x,), {"axes": sorted(g.randint(0, r + n - 1) for _ in range(n))}


@spec(pd.ExpandOp)
def _expand(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.size <= 8 and v.array.ndim <= 3)
    decl = g.val(x).decl
    shape = [-1 if d is None else (g.randint(1, 3) if d == 1 else (d if g.coin(0.5) else -1)) for d in decl]
    lead = [g.randint(1, 3) for _ in range(g.randint(0 if decl else 1, 1))]
    return (x,), {"shape": lead + shape}


@spec(pd.ExpandAsOp)
def _expand_as(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.size <= 8 and v.array.ndim <= 3 and None not in v.decl)
    shape = [g.randint(1, 3) if d == 1 else d for d in g.val(x).array.shape]
    target = [g.randint(1, 2) for _ in range(g.randint(0, 1))] + shape
    return (x, g.add_input(g.floats(target), grad=False)), {}


__all__ = ["SPECS"]
