"""Reductions and normalizations: mean, reduce_sum/mean/max over axes, add_n (`sum`),
softmax and log_softmax.

```mlir
%m = pd.mean %x : (tensor<?x1xf32>) -> tensor<f32>
%s = pd.reduce_sum %x {axis = [1], keepdim = true} : (tensor<?x4xf32>) -> tensor<?x1xf32>
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from xdsl.dialects.builtin import BoolAttr, DenseArrayBase, StringAttr, TensorType
from xdsl.ir import Attribute
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from .base import (
    PdOp,
    bool_attr,
    elem_of,
    ints_attr,
    expect_float,
    expect_same_elem,
    fmt_shape,
    normalize_axis,
    shape_of,
    shapes_compatible,
)


def reduced_shape(
    shape: Sequence[int], axes: Sequence[int], keepdim: bool, op: str
) -> tuple[int, ...]:
    """The shape after reducing `axes` (all axes when empty)."""
    rank = len(shape)
    norm = {normalize_axis(a, rank, op) for a in axes} if axes else set(range(rank))
    if keepdim:
        return tuple(1 if i in norm else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in norm)


@irdl_op_definition
class MeanOp(PdOp):
    """The mean of all elements, a 0-D tensor (`paddle.mean` without axis)."""

    name = "pd.mean"
    x = operand_def(TensorType)
    var_name = opt_prop_def(StringAttr, prop_name="name")
    out = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        expect_float(cls.name, "x", tx)
        return [TensorType(elem_of(tx), [])]


class ReduceOp(PdOp):
    """Reduce over `axis` (every axis when empty), keeping them as 1 when `keepdim`."""

    x = operand_def(TensorType)
    axis = prop_def(DenseArrayBase, default_value=ints_attr([]))
    keepdim = prop_def(BoolAttr, default_value=bool_attr(False))
    var_name = opt_prop_def(StringAttr, prop_name="name")
    out = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        axes = list(props["axis"])
        if len(set(a % max(len(shape_of(tx)), 1) for a in axes)) != len(axes):
            raise VerifyException(f"'{cls.name}': repeated axis in {axes}")
        shape = reduced_shape(shape_of(tx), axes, props["keepdim"], cls.name)
        return [TensorType(elem_of(tx), shape)]


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    """Sum over axes (`paddle.sum`)."""

    name = "pd.reduce_sum"


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    """Mean over axes (`paddle.mean` with `axis`)."""

    name = "pd.reduce_mean"


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    """Maximum over axes (`paddle.max`)."""

    name = "pd.reduce_max"


@irdl_op_definition
class SumOp(PdOp):
    """The elementwise sum of same-shaped tensors (`paddle.add_n`, Paddle's `sum`).

    ```mlir
    %s = pd.sum %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    ```
    """

    name = "pd.sum"
    xs = var_operand_def(TensorType)
    var_name = opt_prop_def(StringAttr, prop_name="name")
    out = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$xs attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        if not operand_types:
            raise VerifyException("'pd.sum': needs at least one operand")
        expect_same_elem(cls.name, operand_types)
        first = shape_of(operand_types[0])
        for t in operand_types[1:]:
            if not shapes_compatible(first, shape_of(t)):
                raise VerifyException(
                    f"'pd.sum': operand shapes {fmt_shape(first)} and "
                    f"{fmt_shape(shape_of(t))} differ"
                )
        # Prefer static dimensions where any operand knows them.
        shape = [
            next((shape_of(t)[i] for t in operand_types if shape_of(t)[i] >= 0), first[i])
            for i in range(len(first))
        ]
        return [TensorType(elem_of(operand_types[0]), shape)]


REDUCTION_OPS = [MeanOp, ReduceSumOp, ReduceMeanOp, ReduceMaxOp, SumOp]
