"""Fuzzer specs of the indexing family: gather/scatter (plain, nd, along an axis),
index_add, strided slices and `set_value`, tril/triu.

Indices are drawn in range for the operand's shape; where a repeated index has no
single answer (overwriting scatter, put_along_axis with assign or mul) they are
distinct.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pullback.dialects import pd

from ..gen import Gen, Rejected, Spec, bounded, registry

SPECS: dict[type[pd.PdOp], Spec] = {}
spec = registry(SPECS)


@spec(pd.GatherOp)
def _gather(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0)
    axis = g.choice(g.static_dims(x) or [0])
    n = g.val(x).array.shape[axis]
    index = g.add_input(g.ints(() if g.coin(0.2) else (g.randint(1, 4),), n), dynamic=False)
    return (x, index), {"axis": axis}


@spec(pd.IndexAddOp)
def _index_add(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and None not in v.decl)
    axis = g.randint(0, g.val(x).array.ndim - 1)
    shape = list(g.val(x).array.shape)
    index = g.add_input(g.ints((g.randint(1, 4),), shape[axis]), dynamic=False)
    shape[axis] = g.val(index).array.shape[0]
    return (x, index, g.add_input(g.floats(shape), dynamic=False)), {"axis": axis}


@spec(pd.GatherNdOp)
def _gather_nd(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and None not in v.decl)
    shape = g.val(x).array.shape
    k = g.randint(1, len(shape))
    lead = g.shape(g.randint(1, 2), 6)
    index = np.stack([g.ints(lead, shape[j]) for j in range(k)], axis=-1)
    return (x, g.add_input(index, dynamic=False)), {}


@spec(pd.ScatterNdAddOp)
def _scatter_nd_add(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and None not in v.decl)
    shape = g.val(x).array.shape
    k = g.randint(1, len(shape))
    lead = g.shape(g.randint(1, 2), 6)
    index = np.stack([g.ints(lead, shape[j]) for j in range(k)], axis=-1)
    upd = g.add_input(g.floats((*lead, *shape[k:])), dynamic=False)
    return (x, g.add_input(index, dynamic=False), upd), {}


@spec(pd.ScatterOp)
def _scatter(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and None not in v.decl)
    shape = g.val(x).array.shape
    overwrite = g.coin(0.6)
    m = g.randint(1, shape[0])
    # Overwriting with a repeated index has no single answer (Paddle's last writer
    # wins on CPU only): unique indices there.
    rows = g.rng.permutation(shape[0])[:m] if overwrite else g.ints((m,), shape[0])
    index = g.add_input(np.asarray(rows, dtype=np.int64), dynamic=False)
    upd = g.add_input(g.floats((m, *shape[1:])), dynamic=False)
    return (x, index, upd), {"overwrite": overwrite}


@spec(pd.TakeAlongAxisOp)
def _take_along_axis(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and None not in v.decl)
    shape = list(g.val(x).array.shape)
    axis = g.randint(0, len(shape) - 1)
    n = shape[axis]
    shape[axis] = g.randint(1, 4)
    return (x, g.add_input(g.ints(shape, n), dynamic=False)), {"axis": axis - len(shape) if g.coin(0.3) else axis}


@spec(pd.PutAlongAxisOp)
def _put_along_axis(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and None not in v.decl and bounded(10)(v))
    shape = list(g.val(x).array.shape)
    axis = g.randint(0, len(shape) - 1)
    n = shape[axis]
    reduce = g.choice(["assign", "add", "mul"])
    m = g.randint(1, n)
    # Distinct positions along the axis in each line (a permutation prefix): a
    # repeated position has no single gradient for assign and mul.
    perm = np.argsort(g.rng.random([*shape[:axis], n, *shape[axis + 1:]]), axis=axis)
    index = np.take(perm, np.arange(m), axis=axis).astype(np.int64)
    vals = g.add_input(g.floats(index.shape, 0.5, 1.5), dynamic=False)
    return (x, g.add_input(index, dynamic=False), vals), {"axis": axis, "reduce": reduce}


def _strided(g: Gen, shape: Sequence[int]) -> dict[str, Any]:
    axes = [a for a in range(len(shape)) if g.coin(0.6)] or [len(shape) - 1]
    starts, ends, strides = [], [], []
    for a in axes:
        n = shape[a]
        st = g.choice([1, 2, -1, -2])
        if st > 0:
            s, e = g.randint(0, n - 1), g.choice([n, 10**6, g.randint(1, n)])
        else:
            s, e = g.choice([n - 1, -1, g.randint(0, n - 1)]), g.choice([-(10**6), g.randint(-n - 1, n - 1)])
        starts.append(s)
        ends.append(e)
        strides.append(st)
    return {"axes": axes, "starts": starts, "ends": ends, "strides": strides}


@spec(pd.StridedSliceOp)
def _strided_slice(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and None not in v.decl)
    props = _strided(g, g.val(x).array.shape)
    if 0 in g.val(x).array[_slices(g.val(x).array.shape, props)].shape:
        raise Rejected("empty slice")
    return (x,), props


def _slices(shape: Sequence[int], props: dict[str, Any]) -> tuple[slice, ...]:
    index = [slice(None)] * len(shape)
    for a, s, e, st in zip(props["axes"], props["starts"], props["ends"], props["strides"]):
        index[a] = slice(s, e, st)
    return tuple(index)


@spec(pd.SetValueOp)
def _set_value(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and None not in v.decl)
    props = _strided(g, g.val(x).array.shape)
    target = g.val(x).array[_slices(g.val(x).array.shape, props)].shape
    if 0 in target:
        raise Rejected("empty slice")
    vshape = target if g.coin(0.7) else ()
    return (x, g.add_input(g.floats(vshape), dynamic=False)), props


@spec(pd.TrilTriuOp)
def _tril_triu(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim >= 2, make=lambda: g.floats((g.randint(1, 4), g.randint(1, 4))))
    return (x,), {"diagonal": g.randint(-2, 2), "lower": g.coin()}


__all__ = ["SPECS"]
