"""Graph ops (`paddle.geometric`): message passing, segment pooling, and the host-only
sampling and reindexing of graphs.

* `pd.send_recv`: every edge `e` sends a message from node `src[e]` to node
  `dst[e]`, the messages arriving at a node are reduced (`sum`, `mean`, `max`,
  `min`; a node that receives none gets 0).  The message is `x[src[e]]`
  (`send_u_recv`), or `x[src[e]] (+ - * /) y[e]` with `y` an optional per-edge
  operand broadcast against x's feature dimensions (`send_ue_recv`).
* `pd.segment_pool`: rows of `data` with the same (sorted) segment id reduced; the
  number of segments is the last id + 1, known only from the ids' values.
* `pd.reindex_graph`, `pd.sample_neighbors`, `pd.weighted_sample_neighbors`: result
  sizes that only the values decide, and random draws: `HOST_ONLY`, no gradient.

Gradients are made of the `indexing` family's gather / index_add and elementwise
ops (`passes/vjp/geometric.py`).

```mlir
%o = pd.send_recv %x, %src, %dst {reduce_op = "mean"} : (tensor<?x4xf32>, tensor<?xi64>, tensor<?xi64>) -> tensor<?x4xf32>
%s = pd.segment_pool %x, %ids {pooltype = "max"} : (tensor<5x4xf32>, tensor<5xi32>) -> tensor<?x4xf32>
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import ArrayAttr, BoolAttr, IntegerAttr, StringAttr, TensorType
from xdsl.ir import Attribute
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from .base import (
    DYN,
    INT_TYPES,
    MultiResultNames,
    PdOp,
    PureOp,
    bool_attr,
    broadcast_shapes,
    dims_compatible,
    elem_of,
    expect_float,
    expect_same_elem,
    fmt_shape,
    i64_attr,
    shape_of,
    tensor_type,
)
from .dtypes import FLOAT_TYPES

GRAPH_REDUCE_OPS = ("sum", "mean", "max", "min")
"""How the messages arriving at a node (or the rows of a segment) are combined."""
GRAPH_MESSAGE_OPS = ("add", "sub", "mul", "div")
"""How `x[src[e]]` and the edge value `y[e]` make the message of `send_ue_recv`."""

_HOST_GRAPH = (
    "its result sizes are known only after reading the graph (and sampling draws from "
    "numpy's generator); a program using it runs on the host interpreter"
)


def _index(op: str, what: str, t: Attribute) -> int:
    """A 1-D int32/int64 index operand: its length."""
    if elem_of(t) not in INT_TYPES:
        raise VerifyException(f"'{op}': {what} must be int32 or int64, got {t}")
    shape = shape_of(t)
    if len(shape) != 1:
        raise VerifyException(f"'{op}': {what} must be 1-D, got shape {fmt_shape(shape)}")
    return shape[0]


def _same_length(op: str, what: str, a: int, b: int, other: str) -> None:
    if not dims_compatible(a, b):
        raise VerifyException(f"'{op}': {what} has {a} entries but {other} has {b}")


def _reduce(op: str, prop: str, value: str) -> None:
    if value not in GRAPH_REDUCE_OPS:
        raise VerifyException(f"'{op}': {prop} must be one of {list(GRAPH_REDUCE_OPS)}, got {value!r}")


def _numeric(op: str, t: Attribute) -> None:
    if elem_of(t) not in FLOAT_TYPES + INT_TYPES:
        raise VerifyException(f"'{op}': x must be a float or integer tensor, got {t}")


def message_shape(op: str, x: Sequence[int], y: Sequence[int] | None) -> tuple[int, ...]:
    """The feature dimensions of a message: x's, broadcast (right-aligned) with y's
    when there is an edge operand."""
    feat = tuple(x[1:])
    if y is None:
        return feat
    return broadcast_shapes(feat, tuple(y[1:]), op=op)


@irdl_op_definition
class SendRecvOp(PureOp):
    """Message passing on a graph given as edge lists (`paddle.geometric.send_u_recv`,
    `send_ue_recv`, `paddle.incubate.graph_send_recv`).

    For every edge `e`, the message `m[e] = x[src_index[e]]` (or, with the optional
    edge operand `y`, `x[src_index[e]] <message_op> y[e]`, the feature dimensions
    broadcast right-aligned) is combined into `out[dst_index[e]]` by `reduce_op`
    (`sum`, `mean`, `max`, `min`); rows nobody sends to are 0.  The result has
    `out_size` rows when `out_size > 0`, else as many as x (Paddle's `out_size=None`).
    Integer x divides `mean` by the count with truncation, as Paddle's kernel does.
    """

    name = "pd.send_recv"
    x = operand_def(TensorType)
    src_index = operand_def(TensorType)
    dst_index = operand_def(TensorType)
    y = opt_operand_def(TensorType)
    message_op = prop_def(StringAttr, default_value=StringAttr("add"))
    reduce_op = prop_def(StringAttr, default_value=StringAttr("sum"))
    out_size = prop_def(IntegerAttr, default_value=i64_attr(0))
    assembly_format = "$x `,` $src_index `,` $dst_index (`,` $y^)? attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, ts, td, *ty = operand_types
        _numeric(cls.name, tx)
        xs = shape_of(tx)
        if not xs:
            raise VerifyException(f"'{cls.name}': x must have rank >= 1")
        n = _index(cls.name, "src_index", ts)
        _same_length(cls.name, "src_index", n, _index(cls.name, "dst_index", td), "dst_index")
        _reduce(cls.name, "reduce_op", props["reduce_op"])
        ys = None
        if ty:
            expect_same_elem(cls.name, [tx, ty[0]])
            ys = shape_of(ty[0])
            if not ys:
                raise VerifyException(f"'{cls.name}': y must have rank >= 1")
            _same_length(cls.name, "y", ys[0], n, "src_index")
            if props["message_op"] not in GRAPH_MESSAGE_OPS:
                raise VerifyException(
                    f"'{cls.name}': message_op must be one of {list(GRAPH_MESSAGE_OPS)}, "
                    f"got {props['message_op']!r}")
        rows = props["out_size"] if props["out_size"] > 0 else xs[0]
        return [tensor_type(elem_of(tx), (rows, *message_shape(cls.name, xs, ys)))]


@irdl_op_definition
class SegmentPoolOp(PureOp):
    """Rows of `x` with equal segment ids reduced (`paddle.geometric.segment_sum`,
    `_mean`, `_max`, `_min`): `out[k] = pool(x[i] for i with segment_ids[i] == k)`,
    0 for an id that does not occur.  The ids must be sorted and non-negative; there
    are `segment_ids[-1] + 1` segments, known only from the values (dimension 0 of
    the result is dynamic)."""

    name = "pd.segment_pool"
    x = operand_def(TensorType)
    segment_ids = operand_def(TensorType)
    pooltype = prop_def(StringAttr, default_value=StringAttr("sum"))
    assembly_format = "$x `,` $segment_ids attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, ti = operand_types
        _numeric(cls.name, tx)
        xs = shape_of(tx)
        if not xs:
            raise VerifyException(f"'{cls.name}': x must have rank >= 1")
        _same_length(cls.name, "segment_ids", _index(cls.name, "segment_ids", ti), xs[0],
                     "dimension 0 of x")
        _reduce(cls.name, "pooltype", props["pooltype"])
        return [tensor_type(elem_of(tx), (DYN, *xs[1:]))]


class _HostGraphOp(PdOp, MultiResultNames):
    HOST_ONLY: ClassVar[str | None] = _HOST_GRAPH
    names = opt_prop_def(ArrayAttr)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)


@irdl_op_definition
class ReindexGraphOp(_HostGraphOp):
    """Renumber a sampled subgraph (`paddle.geometric.reindex_graph`): the nodes `x`
    become `0 .. len(x)-1`, the other nodes of `neighbors` follow in order of first
    appearance.  Results: `reindex_src` (the neighbors renumbered), `reindex_dst`
    (node `i` repeated `count[i]` times), `out_nodes` (x then the new nodes).
    `count` may hold several edge types' counts one after the other (`k * len(x)`
    entries, `reindex_heter_graph`): node `i` is then repeated by each type's count."""

    name = "pd.reindex_graph"
    x = operand_def(TensorType)
    neighbors = operand_def(TensorType)
    count = operand_def(TensorType)
    reindex_src = result_def(TensorType)
    reindex_dst = result_def(TensorType)
    out_nodes = result_def(TensorType)
    assembly_format = "$x `,` $neighbors `,` $count attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, tn, tc = operand_types
        _index(cls.name, "x", tx)
        n = _index(cls.name, "neighbors", tn)
        expect_same_elem(cls.name, [tx, tn])
        c, m = _index(cls.name, "count", tc), shape_of(tx)[0]
        if c != DYN and m != DYN and (m == 0 and c != 0 or m and c % m):
            raise VerifyException(
                f"'{cls.name}': count has {c} entries, not a multiple of the {m} nodes of x")
        e = elem_of(tx)
        return [tensor_type(e, (n,)), tensor_type(e, (n,)), tensor_type(e, (DYN,))]


class _SampleOp(_HostGraphOp):
    """Shared typing of the neighbor samplers."""

    sample_size = prop_def(IntegerAttr, default_value=i64_attr(-1))
    return_eids = prop_def(BoolAttr, default_value=bool_attr(False))
    seed = prop_def(IntegerAttr, default_value=i64_attr(0))
    out_neighbors = result_def(TensorType)
    out_count = result_def(TensorType)
    out_eids = result_def(TensorType)

    @classmethod
    def sample_types(cls, row: Attribute, colptr: Attribute, nodes: Attribute,
                     eids: Sequence[Attribute], props: Mapping[str, Any]) -> list[Attribute]:
        _index(cls.name, "row", row)
        _index(cls.name, "colptr", colptr)
        _index(cls.name, "input_nodes", nodes)
        expect_same_elem(cls.name, [row, colptr, nodes])
        if props["return_eids"] and not eids:
            raise VerifyException(f"'{cls.name}': return_eids needs eids")
        if eids:
            _same_length(cls.name, "eids", _index(cls.name, "eids", eids[0]), shape_of(row)[0], "row")
        e = elem_of(row)
        m = shape_of(nodes)[0]
        return [tensor_type(e, (DYN,)), tensor_type(elem_of(nodes), (m,)),
                tensor_type(elem_of(eids[0]) if eids else e, (DYN,))]


@irdl_op_definition
class SampleNeighborsOp(_SampleOp):
    """Up to `sample_size` neighbors of each input node drawn uniformly without
    replacement from a CSC graph (`row`, `colptr`), all of them when `sample_size`
    is -1 or at least the degree (`paddle.geometric.sample_neighbors`).  Results:
    the sampled neighbors, their count per input node, and their edge ids
    (empty unless `return_eids`)."""

    name = "pd.sample_neighbors"
    row = operand_def(TensorType)
    colptr = operand_def(TensorType)
    input_nodes = operand_def(TensorType)
    eids = opt_operand_def(TensorType)
    assembly_format = "$row `,` $colptr `,` $input_nodes (`,` $eids^)? attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        row, colptr, nodes, *eids = operand_types
        return cls.sample_types(row, colptr, nodes, eids, props)


@irdl_op_definition
class WeightedSampleNeighborsOp(_SampleOp):
    """`pd.sample_neighbors` with each neighbor drawn with probability proportional
    to its edge's weight (`paddle.geometric.weighted_sample_neighbors`)."""

    name = "pd.weighted_sample_neighbors"
    row = operand_def(TensorType)
    colptr = operand_def(TensorType)
    edge_weight = operand_def(TensorType)
    input_nodes = operand_def(TensorType)
    eids = opt_operand_def(TensorType)
    assembly_format = ("$row `,` $colptr `,` $edge_weight `,` $input_nodes (`,` $eids^)? attr-dict "
                       "`:` functional-type(operands, results)")

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        row, colptr, weight, nodes, *eids = operand_types
        expect_float(cls.name, "edge_weight", weight)
        ws = shape_of(weight)
        if len(ws) != 1:
            raise VerifyException(f"'{cls.name}': edge_weight must be 1-D, got shape {fmt_shape(ws)}")
        _same_length(cls.name, "edge_weight", ws[0], shape_of(row)[0], "row")
        return cls.sample_types(row, colptr, nodes, eids, props)


GEOMETRIC_OPS = [SendRecvOp, SegmentPoolOp, ReindexGraphOp, SampleNeighborsOp, WeightedSampleNeighborsOp]
