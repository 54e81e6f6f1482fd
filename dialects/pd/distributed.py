"""Collective communication between the ranks of a data-parallel job (Paddle's
`c_allreduce_*`, `c_broadcast`, `c_reduce_*`, `c_allgather`, `c_reducescatter`,
`barrier`).

Every rank runs the same program; a collective op is a point where all ranks meet
and exchange the operand's buffer (through MPI at run time).  The ops are not
`Pure`: DCE, CSE and `prune` keep them and never reorder them across each other, so
every rank issues the same collectives in the same order (anything else deadlocks).

```mlir
%g1, %g2 = pd.allreduce %g_w, %g_b {reduce_op = "sum", names = ["w@GRAD", "b@GRAD"]} : (tensor<4x3xf32>, tensor<3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>)
%w0 = pd.broadcast %w {root = 0 : i64, name = "w"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
%s = pd.reduce %w {root = 1 : i64} : (tensor<4x3xf32>) -> tensor<4x3xf32>
%all = pd.allgather %x {nranks = 2 : i64} : (tensor<3x4xf32>) -> tensor<6x4xf32>
%part = pd.reduce_scatter %x {nranks = 2 : i64} : (tensor<6x4xf32>) -> tensor<3x4xf32>
%y = pd.barrier %x : (tensor<3xf32>) -> tensor<3xf32>
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, StringAttr, TensorType
from xdsl.ir import Attribute
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
    var_result_def,
)
from xdsl.utils.exceptions import VerifyException

from .base import (
    DYN,
    MultiResultNames,
    PdOp,
    elem_of,
    expect_same_elem,
    fmt_shape,
    i64_attr,
    is_float,
    shape_of,
    tensor_type,
)

REDUCE_OPS = ("sum", "max", "min", "prod", "avg")
"""Reductions of `pd.allreduce` (Paddle's `ReduceOp.SUM/MAX/MIN/PROD/AVG`)."""

_FORMAT = "operands attr-dict `:` functional-type(operands, results)"


class CollectiveOp(PdOp):
    """Base of the collectives: one result named by `name`, not `Pure` (it
    communicates), parsed with its properties in the attribute dictionary."""

    var_name = opt_prop_def(StringAttr, prop_name="name")
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _FORMAT


def expect_nranks(op: str, nranks: int) -> None:
    """Raise unless `nranks` is a positive number of ranks."""
    if nranks < 1:
        raise VerifyException(f"'{op}': nranks must be >= 1, got {nranks}")


@irdl_op_definition
class AllReduceOp(PdOp, MultiResultNames):
    """Reduce each operand elementwise over all ranks; every rank gets the result
    (`paddle.distributed.all_reduce`, Paddle's `c_allreduce_<op>`).

    Several operands are reduced in one message (a fused gradient bucket, Paddle's
    `coalesce_tensor` + `c_allreduce_sum`); results match operands one to one.
    `avg` is the sum divided by the number of ranks.

    ```mlir
    %s = pd.allreduce %x {reduce_op = "max"} : (tensor<3xf32>) -> tensor<3xf32>
    ```
    """

    name = "pd.allreduce"
    xs = var_operand_def(TensorType)
    outs = var_result_def(TensorType)
    reduce_op = prop_def(StringAttr, default_value=StringAttr("sum"))
    names = opt_prop_def(ArrayAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _FORMAT

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        if not operand_types:
            raise VerifyException("'pd.allreduce': needs at least one operand")
        red = props["reduce_op"]
        if red not in REDUCE_OPS:
            raise VerifyException(
                f"'pd.allreduce': reduce_op must be one of {', '.join(REDUCE_OPS)}, got '{red}'"
            )
        elem = expect_same_elem(cls.name, operand_types)
        if red == "avg" and not is_float(elem):
            raise VerifyException("'pd.allreduce': reduce_op 'avg' needs float32 or float64 operands")
        return list(operand_types)


@irdl_op_definition
class BroadcastOp(CollectiveOp):
    """Every rank receives rank `root`'s value of `x` (`paddle.distributed.broadcast`,
    Paddle's `c_broadcast`); the parameters' start-up broadcast uses it."""

    name = "pd.broadcast"
    x = operand_def(TensorType)
    root = prop_def(IntegerAttr, default_value=i64_attr(0))
    out = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        if props["root"] < 0:
            raise VerifyException(f"'pd.broadcast': root must be >= 0, got {props['root']}")
        return [tx]


@irdl_op_definition
class ReduceToRootOp(CollectiveOp):
    """Reduce `x` elementwise over all ranks into rank `root`; the other ranks get
    zeros (`paddle.distributed.reduce`, Paddle's `c_reduce_<op>`, whose non-root
    outputs are unspecified: zeros make it the transpose of `pd.broadcast`)."""

    name = "pd.reduce"
    x = operand_def(TensorType)
    root = prop_def(IntegerAttr, default_value=i64_attr(0))
    reduce_op = prop_def(StringAttr, default_value=StringAttr("sum"))
    out = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        if props["root"] < 0:
            raise VerifyException(f"'pd.reduce': root must be >= 0, got {props['root']}")
        red = props["reduce_op"]
        if red not in REDUCE_OPS or red == "avg":
            raise VerifyException(
                f"'pd.reduce': reduce_op must be one of sum, max, min, prod, got '{red}'"
            )
        return [tx]


@irdl_op_definition
class AllGatherOp(CollectiveOp):
    """Concatenate every rank's `x` along axis 0, in rank order (Paddle's
    `c_allgather`); `nranks` is the size of the job the program is built for."""

    name = "pd.allgather"
    x = operand_def(TensorType)
    nranks = prop_def(IntegerAttr)
    out = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        n = props["nranks"]
        expect_nranks(cls.name, n)
        shape = shape_of(tx)
        if not shape:
            raise VerifyException("'pd.allgather': x must have rank >= 1 (it is gathered along axis 0)")
        d0 = DYN if shape[0] == DYN else shape[0] * n
        return [tensor_type(elem_of(tx), (d0, *shape[1:]))]


@irdl_op_definition
class ReduceScatterOp(CollectiveOp):
    """Sum `x` over all ranks and give rank r the r-th of `nranks` equal chunks
    along axis 0 (Paddle's `c_reducescatter`)."""

    name = "pd.reduce_scatter"
    x = operand_def(TensorType)
    nranks = prop_def(IntegerAttr)
    out = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        n = props["nranks"]
        expect_nranks(cls.name, n)
        shape = shape_of(tx)
        if not shape:
            raise VerifyException("'pd.reduce_scatter': x must have rank >= 1 (it is split along axis 0)")
        if shape[0] != DYN and shape[0] % n:
            raise VerifyException(
                f"'pd.reduce_scatter': dimension 0 of x {fmt_shape(shape)} is not divisible "
                f"by nranks={n}"
            )
        d0 = DYN if shape[0] == DYN else shape[0] // n
        return [tensor_type(elem_of(tx), (d0, *shape[1:]))]


@irdl_op_definition
class BarrierOp(CollectiveOp):
    """Wait until every rank reaches this point; `x` passes through unchanged, so
    the barrier sits where its operand's producers and users put it (Paddle's
    `barrier` op, `paddle.distributed.barrier`)."""

    name = "pd.barrier"
    x = operand_def(TensorType)
    out = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        return [tx]


DISTRIBUTED_OPS = [AllReduceOp, BroadcastOp, ReduceToRootOp, AllGatherOp, ReduceScatterOp, BarrierOp]

__all__ = [
    "DISTRIBUTED_OPS",
    "REDUCE_OPS",
    "AllGatherOp",
    "AllReduceOp",
    "BarrierOp",
    "BroadcastOp",
    "CollectiveOp",
    "ReduceScatterOp",
    "ReduceToRootOp",
]
