"""Kernels of the indexing ops (numpy fancy indexing; `np.add.at` where duplicate
indices accumulate).  Out-of-range indices raise `IndexOutOfRange` (an IndexError)
naming the op and the first bad index, as compiled code does."""

from __future__ import annotations

import numpy as np
from pullback.dialects import pd
from pullback.runtime.interpreter import kernel, out_of_range


def _check_range(op: pd.PdOp, index: np.ndarray, size: int, what: str = "index") -> np.ndarray:
    """Negative indices are rejected as Paddle's kernels do; so are those >= size.
    The first bad one in row-major order is reported, as compiled code reports it."""
    if index.size and (index.min() < 0 or index.max() >= size):
        flat = index.reshape(-1)
        first = flat[np.argmax((flat < 0) | (flat >= size))]
        raise out_of_range(op.name, what, int(first), size)
    return index.astype(np.int64)


@kernel(pd.GatherOp)
def gather(op: pd.GatherOp, x: np.ndarray, index: np.ndarray) -> np.ndarray:
    """`take` along the axis."""
    axis = op.prop("axis") % x.ndim
    return np.take(x, _check_range(op, index, x.shape[axis]), axis=axis)


@kernel(pd.IndexAddOp)
def index_add(op: pd.IndexAddOp, x: np.ndarray, index: np.ndarray, updates: np.ndarray) -> np.ndarray:
    """Accumulate `updates` into the entries `index` along the axis."""
    axis = op.prop("axis") % x.ndim
    idx = _check_range(op, index, x.shape[axis])
    out = np.array(x, copy=True)
    moved = np.moveaxis(out, axis, 0)  # a view: adding into it writes `out`
    np.add.at(moved, idx, np.moveaxis(updates, axis, 0) if idx.ndim else updates)
    return out


def _nd_index(op: pd.PdOp, x: np.ndarray, index: np.ndarray) -> tuple[np.ndarray, ...]:
    k = index.shape[-1]
    for j in range(k):
        _check_range(op, index[..., j], x.shape[j], f"index[..., {j}]")
    return tuple(index[..., j].astype(np.int64) for j in range(k))


@kernel(pd.GatherNdOp)
def gather_nd(op: pd.GatherNdOp, x: np.ndarray, index: np.ndarray) -> np.ndarray:
    """`x[index[..., 0], index[..., 1], ...]`."""
    if index.shape[-1] == 0:  # an empty coordinate selects all of x for each row
        return np.broadcast_to(x, index.shape[:-1] + x.shape).copy()
    return x[_nd_index(op, x, index)]


@kernel(pd.ScatterNdAddOp)
def scatter_nd_add(op: pd.ScatterNdAddOp, x: np.ndarray, index: np.ndarray,
                   updates: np.ndarray) -> np.ndarray:
    """Accumulate `updates` at the coordinates of `index`."""
    out = np.array(x, copy=True)
    if index.shape[-1] == 0:
        return out + updates.reshape((-1,) + x.shape).sum(axis=0)
    np.add.at(out, _nd_index(op, x, index), updates)
    return out


@kernel(pd.ScatterOp)
def scatter(op: pd.ScatterOp, x: np.ndarray, index: np.ndarray, updates: np.ndarray) -> np.ndarray:
    """Overwrite rows (the last duplicate wins), or zero them and accumulate."""
    idx = _check_range(op, index, x.shape[0])
    out = np.array(x, copy=True)
    if op.prop("overwrite"):
        out[idx] = updates
    else:
        out[idx] = 0
        np.add.at(out, idx, updates)
    return out


@kernel(pd.TakeAlongAxisOp)
def take_along_axis(op: pd.TakeAlongAxisOp, x: np.ndarray, index: np.ndarray) -> np.ndarray:
    """`np.take_along_axis`."""
    axis = op.prop("axis") % x.ndim
    return np.take_along_axis(x, _check_range(op, index, x.shape[axis]), axis=axis)


@kernel(pd.PutAlongAxisOp)
def put_along_axis(op: pd.PutAlongAxisOp, x: np.ndarray, index: np.ndarray,
                   values: np.ndarray) -> np.ndarray:
    """Write (`assign`), add or multiply `values` at `index` along the axis."""
    axis = op.prop("axis") % x.ndim
    idx = _check_range(op, index, x.shape[axis])
    out = np.array(x, copy=True)
    # Full coordinates of every index entry: the index along `axis`, the entry's
    # own position along the other dimensions.
    coords = list(np.indices(idx.shape, sparse=True))
    coords[axis] = idx
    where = tuple(np.broadcast_arrays(*coords))
    reduce = op.prop("reduce")
    if reduce == "assign":
        out[where] = values
    elif reduce == "add":
        np.add.at(out, where, values)
    else:
        np.multiply.at(out, where, values)
    return out


def _strided_index(op: pd.PdOp, shape: tuple[int, ...]) -> tuple[slice, ...]:
    index = [slice(None)] * len(shape)
    for a, s, e, st in zip(op.prop("axes"), op.prop("starts"), op.prop("ends"), op.prop("strides")):
        a %= len(shape)
        lo, n, st = pd.strided_dim(shape[a], s, e, st)
        stop = lo + n * st
        index[a] = slice(lo, stop if stop >= 0 else None, st)
    return tuple(index)


@kernel(pd.StridedSliceOp)
def strided_slice(op: pd.StridedSliceOp, x: np.ndarray) -> np.ndarray:
    """`x[start:end:stride, ...]`."""
    return np.array(x[_strided_index(op, x.shape)], copy=True)


@kernel(pd.SetValueOp)
def set_value(op: pd.SetValueOp, x: np.ndarray, value: np.ndarray) -> np.ndarray:
    """A copy of x with the strided slice replaced by `value`."""
    out = np.array(x, copy=True)
    where = _strided_index(op, x.shape)
    if out[where].shape != value.shape:
        raise ValueError(f"'{op.name}': value has shape {list(value.shape)}, the slice "
                         f"{list(out[where].shape)}")
    out[where] = value
    return out


@kernel(pd.TrilTriuOp)
def tril_triu(op: pd.TrilTriuOp, x: np.ndarray) -> np.ndarray:
    """`np.tril`/`np.triu` of the last two dimensions."""
    k = op.prop("diagonal")
    return np.tril(x, k) if op.prop("lower") else np.triu(x, k)


@kernel(pd.NonzeroOp)
def nonzero(op: pd.NonzeroOp, x: np.ndarray) -> np.ndarray:
    """Coordinates of the non-zero entries, `[count, rank]`."""
    return np.argwhere(x).astype(np.int64).reshape(-1, x.ndim)
