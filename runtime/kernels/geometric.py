"""Kernels of the graph ops (`dialects/pd/geometric.py`): message passing with
`np.add.at` / `np.maximum.at` (duplicate destinations accumulate), segment pooling
as the same scatter-reduce, and the host-only reindexing and neighbor sampling.

Indices out of range raise `IndexOutOfRange` naming the op and the first bad index,
as compiled code does; unsorted segment ids raise ValueError, as Paddle's kernel."""

from __future__ import annotations

import numpy as np

from pullback.dialects import pd
from pullback.runtime.interpreter import kernel, out_of_range


def _check(op: pd.PdOp, index: np.ndarray, size: int, what: str) -> np.ndarray:
    """`index` as int64 after checking every entry lies in `[0, size)` (the first bad
    one in order is reported)."""
    if index.size and (index.min() < 0 or index.max() >= size):
        first = index[np.argmax((index < 0) | (index >= size))]
        raise out_of_range(op.name, what, int(first), size)
    return index.astype(np.int64)


def _tdiv(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`a / b`, truncated toward zero for integers (C++'s division, Paddle's kernels)."""
    if np.issubdtype(a.dtype, np.integer):
        return (np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))).astype(a.dtype)
    return a / b


def message(x_rows: np.ndarray, y: np.ndarray | None, message_op: str) -> np.ndarray:
    """The per-edge messages: `x[src]`, or it combined with the edge values `y`
    (feature dimensions broadcast right-aligned, the edge dimension leading)."""
    if y is None:
        return x_rows
    rank = max(x_rows.ndim, y.ndim)
    e = x_rows.shape[0]
    xr = x_rows.reshape((e,) + (1,) * (rank - x_rows.ndim) + x_rows.shape[1:])
    yr = y.reshape((y.shape[0],) + (1,) * (rank - y.ndim) + y.shape[1:])
    if message_op == "add":
        return xr + yr
    if message_op == "sub":
        return xr - yr
    if message_op == "mul":
        return xr * yr
    xb, yb = np.broadcast_arrays(xr, yr)
    return _tdiv(xb, yb)


def scatter_reduce(msg: np.ndarray, dst: np.ndarray, rows: int, reduce: str) -> np.ndarray:
    """`out[k] = reduce(msg[e] for e with dst[e] == k)`, 0 where no message arrives."""
    shape = (rows,) + msg.shape[1:]
    if reduce in ("sum", "mean"):
        out = np.zeros(shape, msg.dtype)
        np.add.at(out, dst, msg)
        if reduce == "mean":
            count = np.bincount(dst, minlength=rows).reshape((rows,) + (1,) * (msg.ndim - 1))
            out = _tdiv(out, np.maximum(count, 1).astype(msg.dtype))
        return out
    init: float
    if np.issubdtype(msg.dtype, np.integer):
        info = np.iinfo(msg.dtype)
        init = int(info.min if reduce == "max" else info.max)
    else:
        init = -np.inf if reduce == "max" else np.inf
    out = np.full(shape, init, msg.dtype)
    (np.maximum if reduce == "max" else np.minimum).at(out, dst, msg)
    empty = np.bincount(dst, minlength=rows) == 0
    out[empty] = 0
    return out


@kernel(pd.SendRecvOp)
def send_recv(op: pd.SendRecvOp, x: np.ndarray, src: np.ndarray, dst: np.ndarray,
              y: np.ndarray | None = None) -> np.ndarray:
    """Gather `x[src]`, combine with `y`, scatter-reduce into the `dst` rows."""
    size = op.prop("out_size")
    rows = size if size > 0 else x.shape[0]
    s = _check(op, src, x.shape[0], "src_index")
    d = _check(op, dst, rows, "dst_index")
    msg = message(x[s], y, op.prop("message_op"))
    return scatter_reduce(msg, d, rows, op.prop("reduce_op"))


def segment_count(op: pd.PdOp, ids: np.ndarray) -> int:
    """The number of segments, `ids[-1] + 1` (at least 0), after checking every id
    lies in `[0, count)` (the first bad one reported, as compiled code does) and the
    ids are sorted, as Paddle's kernel requires."""
    rows = max(int(ids[-1]) + 1, 0) if ids.size else 0
    _check(op, ids, rows, "segment_ids")
    down = np.flatnonzero(ids[1:] < ids[:-1])
    if down.size:
        i = int(down[0])
        raise ValueError(
            f"'{op.name}': segment ids must be sorted, but segment_ids[{i}] = {int(ids[i])} > "
            f"segment_ids[{i + 1}] = {int(ids[i + 1])}")
    return rows


@kernel(pd.SegmentPoolOp)
def segment_pool(op: pd.SegmentPoolOp, x: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Scatter-reduce the rows of x into `ids[-1] + 1` segments."""
    rows = segment_count(op, ids)
    return scatter_reduce(x, ids.astype(np.int64), rows, op.prop("pooltype"))


@kernel(pd.ReindexGraphOp)
def reindex_graph(op: pd.ReindexGraphOp, x: np.ndarray, neighbors: np.ndarray,
                  count: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x's nodes first, then the neighbors' new nodes in order of first appearance."""
    if count.size and count.min() < 0:
        raise ValueError(f"'{op.name}': count must be non-negative, got {int(count.min())}")
    if int(count.sum()) != neighbors.size:
        raise ValueError(
            f"'{op.name}': the counts add up to {int(count.sum())}, but there are "
            f"{neighbors.size} neighbors")
    number: dict[int, int] = {}
    for v in x.tolist():
        number.setdefault(v, len(number))
    src = np.empty(neighbors.shape, x.dtype)
    for i, v in enumerate(neighbors.tolist()):
        src[i] = number.setdefault(v, len(number))
    types = count.size // x.size if x.size else 0  # (edge types, reindex_heter_graph)
    dst = np.repeat(np.tile(np.arange(x.size, dtype=x.dtype), types), count.astype(np.int64))
    return src, dst, np.fromiter(number, dtype=x.dtype, count=len(number))


def _sample(op: pd.PdOp, row: np.ndarray, colptr: np.ndarray, nodes: np.ndarray,
            weight: np.ndarray | None, eids: np.ndarray | None) -> tuple[np.ndarray, ...]:
    """Per input node, up to `sample_size` of its CSC neighbors without replacement:
    uniform, or weighted by Efraimidis-Spirakis keys `u ** (1 / w)` (the largest
    keys win; a zero weight is drawn last)."""
    n = colptr.size - 1
    nodes64 = _check(op, nodes, n, "input_nodes")
    k = op.prop("sample_size")
    rng = np.random.default_rng(op.prop("seed"))
    picked: list[np.ndarray] = []
    counts = np.empty(nodes.shape, nodes.dtype)
    for j, v in enumerate(nodes64.tolist()):
        lo, hi = int(colptr[v]), int(colptr[v + 1])
        pos = np.arange(lo, hi)
        if 0 <= k < pos.size:
            if weight is None:
                pos = rng.choice(pos, size=k, replace=False)
            else:
                with np.errstate(divide="ignore"):
                    keys = rng.random(pos.size) ** (1.0 / weight[lo:hi].astype(np.float64))
                pos = pos[np.argsort(-keys, kind="stable")[:k]]
        picked.append(pos)
        counts[j] = pos.size
    at = np.concatenate(picked) if picked else np.zeros(0, np.int64)
    out_eids = eids[at] if (eids is not None and op.prop("return_eids")) else np.zeros(0, row.dtype if eids is None else eids.dtype)
    return row[at], counts, out_eids


@kernel(pd.SampleNeighborsOp)
def sample_neighbors(op: pd.SampleNeighborsOp, row: np.ndarray, colptr: np.ndarray,
                     nodes: np.ndarray, eids: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """Uniform neighbor sampling."""
    return _sample(op, row, colptr, nodes, None, eids)


@kernel(pd.WeightedSampleNeighborsOp)
def weighted_sample_neighbors(op: pd.WeightedSampleNeighborsOp, row: np.ndarray, colptr: np.ndarray,
                              weight: np.ndarray, nodes: np.ndarray,
                              eids: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
    """Weighted neighbor sampling."""
    return _sample(op, row, colptr, nodes, weight, eids)
