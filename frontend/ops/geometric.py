"""`paddle.geometric`: message passing on graphs given as edge lists (`send_u_recv`,
`send_ue_recv`, `send_uv`), segment pooling (`segment_sum`, `_mean`, `_max`,
`_min`), and the host-only graph utilities (`reindex_graph`, `reindex_heter_graph`,
`sample_neighbors`, `weighted_sample_neighbors`); also Paddle's older
`paddle.incubate.graph_send_recv`.

Signatures, defaults and result shapes are Paddle 3.3.1's.  `send_u_recv` and
`send_ue_recv` are one `pd.send_recv` (gather, message, scatter-reduce in one
loop nest when compiled); `send_uv` is a composite of gathers and an elementwise op.
An `out_size` given as a Tensor is read in eager mode; a static program needs it as
an int (its value decides the result's shape, which the compiled code allocates
before it runs).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pullback.dialects import pd
from pullback.frontend.core import apply, in_dynamic_mode
from pullback.frontend.ops.creation import random_seed
from pullback.frontend.ops.elementwise import check_tensor
from pullback.frontend.ops.indexing import gather
from pullback.frontend.ops.shape import concat, reshape, unsqueeze

_NUMERIC = ("float32", "float64", "int32", "int64")
"""The dtypes of x the message-passing ops take (those of Paddle's CPU kernels;
its GPU kernels also take float16/bfloat16, which pullback does not support yet)."""

_SEGMENT_NUMERIC = ("float16", *_NUMERIC)
"""The segment ops also take float16, as Paddle's CPU `segment_pool` kernel does."""


def _check_index(fn: str, arg: str, index: Any) -> None:
    check_tensor(fn, arg, index)
    if index.dtype not in ("int32", "int64"):
        raise TypeError(f"{fn}: '{arg}' must be int32 or int64, got {index.dtype}")
    if len(index.shape) != 1:
        raise ValueError(f"{fn}: '{arg}' must be 1-D, got shape {list(index.shape)}")


def _check_x(fn: str, arg: str, x: Any, allowed: Sequence[str] = _NUMERIC) -> None:
    check_tensor(fn, arg, x)
    if x.dtype not in allowed:
        raise TypeError(f"{fn}: '{arg}' must be one of {list(allowed)}, got {x.dtype}")


def _check_choice(fn: str, arg: str, value: Any, allowed: Sequence[str]) -> str:
    if value not in allowed:
        quoted = ", ".join(f"`{a}`" for a in allowed)
        raise ValueError(f"{fn}: {arg} should be {quoted}, but received {value}")
    return str(value)


def _out_size(fn: str, out_size: Any) -> int:
    """Paddle's `out_size`: None or a value <= 0 means as many rows as x (0 here)."""
    if out_size is None:
        return 0
    if hasattr(out_size, "shape") and type(out_size).__module__ != "numpy":
        if not in_dynamic_mode():
            raise TypeError(
                f"{fn}: out_size must be an int in a static program (a Variable's value "
                "would decide the result's shape only at run time); got a Variable")
        arr = np.asarray(out_size.numpy()).reshape(-1)
        if arr.size != 1:
            raise ValueError(f"{fn}: out_size must hold one value, got shape {list(out_size.shape)}")
        out_size = arr[0]
    if isinstance(out_size, bool) or not isinstance(out_size, (int, np.integer)):
        raise TypeError(f"{fn}: out_size must be an int, a Tensor or None, got {out_size!r}")
    return max(int(out_size), 0)


def _as_2d(v: Any) -> Any:
    """A 1-D node or edge tensor as `[n, 1]` (Paddle's `reshape_lhs_rhs`)."""
    return reshape(v, [-1, 1]) if len(v.shape) == 1 else v


# ------------------------------------------------------------- message passing


def send_u_recv(x: Any, src_index: Any, dst_index: Any, reduce_op: str = "sum",
                out_size: Any = None, name: str | None = None) -> Any:
    """`paddle.geometric.send_u_recv`: `out[dst[e]] <reduce_op>= x[src[e]]` over the
    edges; `out` has `out_size` rows (None: as many as x), 0 where nothing arrives."""
    fn = "send_u_recv"
    _check_x(fn, "x", x)
    _check_index(fn, "src_index", src_index)
    _check_index(fn, "dst_index", dst_index)
    reduce = _check_choice(fn, "reduce_op", reduce_op, pd.GRAPH_REDUCE_OPS)
    return apply(pd.SendRecvOp, [x, src_index, dst_index], prefix="send_u_recv", name=name,
                 reduce_op=reduce, out_size=_out_size(fn, out_size))


def send_ue_recv(x: Any, y: Any, src_index: Any, dst_index: Any, message_op: str = "add",
                 reduce_op: str = "sum", out_size: Any = None, name: str | None = None) -> Any:
    """`paddle.geometric.send_ue_recv`: the message `x[src[e]] <message_op> y[e]`
    (features broadcast right-aligned; 1-D x or y taken as `[n, 1]`) reduced into
    `out[dst[e]]`."""
    fn = "send_ue_recv"
    _check_x(fn, "x", x)
    _check_x(fn, "y", y)
    _check_index(fn, "src_index", src_index)
    _check_index(fn, "dst_index", dst_index)
    message = _check_choice(fn, "message_op", message_op, pd.GRAPH_MESSAGE_OPS)
    reduce = _check_choice(fn, "reduce_op", reduce_op, pd.GRAPH_REDUCE_OPS)
    size = _out_size(fn, out_size)
    return apply(pd.SendRecvOp, [_as_2d(x), src_index, dst_index, _as_2d(y)], prefix="send_ue_recv",
                 name=name, message_op=message, reduce_op=reduce, out_size=size)


def send_uv(x: Any, y: Any, src_index: Any, dst_index: Any, message_op: str = "add",
            name: str | None = None) -> Any:
    """`paddle.geometric.send_uv`: per edge, `x[src[e]] <message_op> y[dst[e]]`
    (`[E, features]`, features broadcast right-aligned; 1-D x or y as `[n, 1]`)."""
    fn = "send_uv"
    _check_x(fn, "x", x)
    _check_x(fn, "y", y)
    _check_index(fn, "src_index", src_index)
    _check_index(fn, "dst_index", dst_index)
    message = _check_choice(fn, "message_op", message_op, pd.GRAPH_MESSAGE_OPS)
    if x.dtype != y.dtype:
        raise TypeError(f"{fn}: x and y must have the same dtype, got {x.dtype} and {y.dtype}")
    if src_index.shape[0] >= 0 and dst_index.shape[0] >= 0 and src_index.shape[0] != dst_index.shape[0]:
        raise ValueError(f"{fn}: src_index has {src_index.shape[0]} entries but dst_index has "
                         f"{dst_index.shape[0]}")
    xs = gather(_as_2d(x), src_index)
    ys = gather(_as_2d(y), dst_index)
    # Edge axis first, features right-aligned: lift the lower-rank one after axis 0.
    k = len(xs.shape) - len(ys.shape)
    if k > 0:
        ys = unsqueeze(ys, list(range(1, 1 + k)))
    elif k < 0:
        xs = unsqueeze(xs, list(range(1, 1 - k)))
    op = {"add": pd.ElementwiseAddOp, "sub": pd.ElementwiseSubOp,
          "mul": pd.ElementwiseMulOp, "div": pd.ElementwiseDivOp}[message]
    return apply(op, [xs, ys], prefix="send_uv", name=name)


def graph_send_recv(x: Any, src_index: Any, dst_index: Any, pool_type: str = "sum",
                    out_size: Any = None, name: str | None = None) -> Any:
    """`paddle.incubate.graph_send_recv` (deprecated in Paddle for `send_u_recv`)."""
    _check_choice("graph_send_recv", "pool_type", pool_type, pd.GRAPH_REDUCE_OPS)
    return send_u_recv(x, src_index, dst_index, reduce_op=pool_type, out_size=out_size, name=name)


# -------------------------------------------------------------------- segments


def _segment(fn: str, pooltype: str, data: Any, segment_ids: Any, name: str | None) -> Any:
    _check_x(fn, "data", data, _SEGMENT_NUMERIC)
    _check_index(fn, "segment_ids", segment_ids)
    return apply(pd.SegmentPoolOp, [data, segment_ids], prefix="segment_pool", name=name,
                 pooltype=pooltype)


def segment_sum(data: Any, segment_ids: Any, name: str | None = None) -> Any:
    """`paddle.geometric.segment_sum`: rows of `data` with the same (sorted) id summed;
    `segment_ids[-1] + 1` rows, 0 for an id that does not occur."""
    return _segment("segment_sum", "sum", data, segment_ids, name)


def segment_mean(data: Any, segment_ids: Any, name: str | None = None) -> Any:
    """`paddle.geometric.segment_mean`: the mean of each segment's rows."""
    return _segment("segment_mean", "mean", data, segment_ids, name)


def segment_max(data: Any, segment_ids: Any, name: str | None = None) -> Any:
    """`paddle.geometric.segment_max`: the elementwise maximum of each segment's rows
    (the gradient goes to every row equal to it)."""
    return _segment("segment_max", "max", data, segment_ids, name)


def segment_min(data: Any, segment_ids: Any, name: str | None = None) -> Any:
    """`paddle.geometric.segment_min`: the elementwise minimum of each segment's rows."""
    return _segment("segment_min", "min", data, segment_ids, name)


# ------------------------------------------------------ host-only graph utilities


def reindex_graph(x: Any, neighbors: Any, count: Any, value_buffer: Any = None,
                  index_buffer: Any = None, name: str | None = None) -> tuple[Any, Any, Any]:
    """`paddle.geometric.reindex_graph`: `(reindex_src, reindex_dst, out_nodes)`, the
    nodes renumbered x first then new neighbors in order of appearance.  The
    buffers are Paddle's GPU hash-table workspaces and are not needed here."""
    fn = "reindex_graph"
    _check_index(fn, "x", x)
    _check_index(fn, "neighbors", neighbors)
    _check_index(fn, "count", count)
    if neighbors.dtype != x.dtype:
        raise TypeError(f"{fn}: neighbors must have x's dtype {x.dtype}, got {neighbors.dtype}")
    src, dst, nodes = apply(pd.ReindexGraphOp, [x, neighbors, count], prefix="graph_reindex", name=name)
    return src, dst, nodes


def reindex_heter_graph(x: Any, neighbors: Sequence[Any], count: Sequence[Any],
                        value_buffer: Any = None, index_buffer: Any = None,
                        name: str | None = None) -> tuple[Any, Any, Any]:
    """`paddle.geometric.reindex_heter_graph`: `reindex_graph` over several edge types
    at once (one numbering for all; the types' results concatenated in order)."""
    fn = "reindex_heter_graph"
    if not isinstance(neighbors, (list, tuple)) or not isinstance(count, (list, tuple)):
        raise TypeError(f"{fn}: neighbors and count must be lists of Tensors")
    if len(neighbors) != len(count) or not neighbors:
        raise ValueError(f"{fn}: neighbors and count must be non-empty lists of the same length, "
                         f"got {len(neighbors)} and {len(count)}")
    for i, (n, c) in enumerate(zip(neighbors, count)):
        _check_index(fn, f"neighbors[{i}]", n)
        _check_index(fn, f"count[{i}]", c)
    all_n = concat(list(neighbors)) if len(neighbors) > 1 else neighbors[0]
    all_c = concat(list(count)) if len(count) > 1 else count[0]
    return reindex_graph(x, all_n, all_c, name=name)


def _sample(fn: str, op: type[pd.PdOp], inputs: list[Any], sample_size: Any, eids: Any,
            return_eids: bool, name: str | None) -> Any:
    for arg, v in zip(("row", "colptr"), inputs[:2]):
        _check_index(fn, arg, v)
    _check_index(fn, "input_nodes", inputs[-1])
    if isinstance(sample_size, bool) or not isinstance(sample_size, (int, np.integer)):
        raise TypeError(f"{fn}: sample_size must be an int, got {sample_size!r}")
    if return_eids and eids is None:
        raise ValueError(f"{fn}: `eids` should not be None if `return_eids` is True.")
    if eids is not None:
        _check_index(fn, "eids", eids)
        inputs = [*inputs, eids]
    neighbors, counts, out_eids = apply(
        op, inputs, prefix=fn, name=name, sample_size=int(sample_size),
        return_eids=bool(return_eids), seed=random_seed(fn, 0, name))
    return (neighbors, counts, out_eids) if return_eids else (neighbors, counts)


def sample_neighbors(row: Any, colptr: Any, input_nodes: Any, sample_size: int = -1,
                     eids: Any = None, return_eids: bool = False, perm_buffer: Any = None,
                     name: str | None = None) -> Any:
    """`paddle.geometric.sample_neighbors`: up to `sample_size` neighbors (-1: all) of
    each input node of a CSC graph, drawn uniformly without replacement:
    `(out_neighbors, out_count)`, plus `out_eids` with `return_eids`.
    `perm_buffer` is Paddle's GPU workspace and is not needed here."""
    return _sample("sample_neighbors", pd.SampleNeighborsOp, [row, colptr, input_nodes],
                   sample_size, eids, return_eids, name)


def weighted_sample_neighbors(row: Any, colptr: Any, edge_weight: Any, input_nodes: Any,
                              sample_size: int = -1, eids: Any = None, return_eids: bool = False,
                              name: str | None = None) -> Any:
    """`paddle.geometric.weighted_sample_neighbors`: like `sample_neighbors`, each
    neighbor drawn with probability proportional to its edge weight."""
    fn = "weighted_sample_neighbors"
    check_tensor(fn, "edge_weight", edge_weight)
    if edge_weight.dtype not in ("float32", "float64"):
        raise TypeError(f"{fn}: 'edge_weight' must be float32 or float64, got {edge_weight.dtype}")
    return _sample(fn, pd.WeightedSampleNeighborsOp, [row, colptr, edge_weight, input_nodes],
                   sample_size, eids, return_eids, name)


GEOMETRIC: list[Callable[..., Any]] = [
    send_u_recv, send_ue_recv, send_uv, segment_sum, segment_mean, segment_max, segment_min,
    reindex_graph, reindex_heter_graph, sample_neighbors, weighted_sample_neighbors,
]
"""`paddle.geometric`'s functions (`frontend/api/geometric.py`)."""

INCUBATE: list[Callable[..., Any]] = [graph_send_recv, segment_sum, segment_mean, segment_max, segment_min]
"""The older `paddle.incubate` spellings Paddle 3.3.1 still has."""

PADDLE: list[Callable[..., Any]] = []
FUNCTIONAL: list[Callable[..., Any]] = []
