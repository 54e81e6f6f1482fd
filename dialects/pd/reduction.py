"""Reductions and normalizations: mean, reduce_sum/mean/max over axes,
squared_l2_norm, add_n (`sum`), softmax and log_softmax, and the index searches along an axis (arg_max, arg_min,
top_k).

```mlir
%m = pd.mean %x : (tensor<?x1xf32>) -> tensor<f32>
%s = pd.reduce_sum %x {axis = [1], keepdim = true} : (tensor<?x4xf32>) -> tensor<?x1xf32>
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    DenseArrayBase,
    IntegerAttr,
    StringAttr,
    TensorType,
)
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
    DYN,
    INT_TYPES,
    MultiResultNames,
    PdOp,
    PureOp,
    bool_attr,
    dtype_from_name,
    elem_of,
    expect_float,
    expect_inexact,
    declare_complex,
    expect_same_elem,
    fmt_shape,
    i64,
    i64_attr,
    ints_attr,
    normalize_axis,
    shape_of,
    shapes_compatible,
    tensor_type,
)


def reduced_axes(axes: Sequence[int], rank: int, op: str) -> list[int]:
    """The sorted, normalized axes of a reduction (all axes when `axes` is empty).

    Raises VerifyException for an out-of-range or repeated axis.
    """
    if not axes:
        return list(range(rank))
    norm = [normalize_axis(a, rank, op) for a in axes]
    if len(set(norm)) != len(norm):
        raise VerifyException(f"'{op}': repeated axis in {list(axes)}")
    return sorted(norm)


def reduced_shape(
    shape: Sequence[int], axes: Sequence[int], keepdim: bool, op: str
) -> tuple[int, ...]:
    """The shape after reducing `axes` (all axes when empty)."""
    norm = set(reduced_axes(axes, len(shape), op))
    if keepdim:
        return tuple(1 if i in norm else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in norm)


def merge_shapes(shapes: Sequence[Sequence[int]]) -> tuple[int, ...]:
    """Combine compatible shapes of one rank, preferring static dimensions."""
    return tuple(
        next((s[i] for s in shapes if s[i] != DYN), DYN) for i in range(len(shapes[0]))
    )


@irdl_op_definition
class MeanOp(PureOp):
    """The mean of all elements, a 0-D tensor (`paddle.mean` without axis)."""

    name = "pd.mean"
    x = operand_def(TensorType)
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        expect_inexact(cls.name, "x", tx)
        return [tensor_type(elem_of(tx), [])]


class ReduceOp(PureOp):
    """Reduce over `axis` (every axis when empty), keeping them as 1 when `keepdim`.

    ```mlir
    %m = pd.reduce_max %x {axis = array<i64: 0, 2>} : (tensor<2x?x4xf32>) -> tensor<?xf32>
    ```
    """

    x = operand_def(TensorType)
    axis = prop_def(DenseArrayBase, default_value=ints_attr([]))
    keepdim = prop_def(BoolAttr, default_value=bool_attr(False))
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        shape = reduced_shape(shape_of(tx), props["axis"], props["keepdim"], cls.name)
        return [tensor_type(elem_of(tx), shape)]


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    """Sum over axes (`paddle.sum`)."""

    name = "pd.reduce_sum"


class FloatReduceOp(ReduceOp):
    """A reduction that only makes sense in floating point."""

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (expect_inexact if cls.COMPLEX else expect_float)(cls.name, "x", operand_types[0])
        return super().infer(operand_types, props)


@irdl_op_definition
class ReduceMeanOp(FloatReduceOp):
    """Mean over axes (`paddle.mean` with `axis`)."""

    name = "pd.reduce_mean"


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    """Maximum over axes (`paddle.max`).  Its gradient is split evenly among ties."""

    name = "pd.reduce_max"


@irdl_op_definition
class ReduceMinOp(ReduceOp):
    """Minimum over axes (`paddle.min`).  Its gradient is split evenly among ties."""

    name = "pd.reduce_min"


@irdl_op_definition
class ReduceProdOp(FloatReduceOp):
    """Product over axes (`paddle.prod`)."""

    name = "pd.reduce_prod"


class ScanOp(PureOp):
    """An inclusive (or `exclusive`) running reduction along `axis`, from the end when
    `reverse`; same shape as x."""

    x = operand_def(TensorType)
    axis = prop_def(IntegerAttr, default_value=i64_attr(-1))
    exclusive = prop_def(BoolAttr, default_value=bool_attr(False))
    reverse = prop_def(BoolAttr, default_value=bool_attr(False))
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        rank = len(shape_of(tx))
        if not -max(rank, 1) <= props["axis"] < max(rank, 1):
            raise VerifyException(f"'{cls.name}': axis {props['axis']} is out of range for rank {rank}")
        return [tx]


@irdl_op_definition
class CumsumOp(ScanOp):
    """Running sum (`paddle.cumsum`).

    ```mlir
    %c = pd.cumsum %x {axis = 1 : i64, reverse = true} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    ```
    """

    name = "pd.cumsum"


@irdl_op_definition
class CumprodOp(ScanOp):
    """Running product (`paddle.cumprod`)."""

    name = "pd.cumprod"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        expect_float(cls.name, "x", operand_types[0])
        return super().infer(operand_types, props)


@irdl_op_definition
class SquaredL2NormOp(PureOp):
    """The sum of the squares of all elements, a 0-D tensor (Paddle's
    `squared_l2_norm`, what gradient clipping by global norm reduces with).

    ```mlir
    %n = pd.squared_l2_norm %g : (tensor<3x2xf32>) -> tensor<f32>
    ```
    """

    name = "pd.squared_l2_norm"
    x = operand_def(TensorType)
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        expect_float(cls.name, "x", tx)
        return [tensor_type(elem_of(tx), [])]


@irdl_op_definition
class SumOp(PureOp):
    """The elementwise sum of same-shaped tensors (`paddle.add_n`, Paddle's `sum`).

    ```mlir
    %s = pd.sum %a, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    ```
    """

    POINTWISE: ClassVar[bool] = True

    name = "pd.sum"
    xs = var_operand_def(TensorType)
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
        shape = merge_shapes([shape_of(t) for t in operand_types])
        return [tensor_type(elem_of(operand_types[0]), shape)]


class SoftmaxLikeOp(PureOp):
    """A normalization along one `axis` of a float tensor; same shape and dtype."""

    x = operand_def(TensorType)
    axis = prop_def(IntegerAttr, default_value=i64_attr(-1))
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        expect_float(cls.name, "x", tx)
        normalize_axis(props["axis"], len(shape_of(tx)), cls.name)
        return [tx]


@irdl_op_definition
class SoftmaxOp(SoftmaxLikeOp):
    """`exp(x) / sum(exp(x), axis)` (`paddle.nn.functional.softmax`).

    ```mlir
    %p = pd.softmax %x {axis = 1 : i64} : (tensor<?x4x3xf32>) -> tensor<?x4x3xf32>
    ```
    """

    name = "pd.softmax"


@irdl_op_definition
class LogSoftmaxOp(SoftmaxLikeOp):
    """`x - log(sum(exp(x), axis))` (`paddle.nn.functional.log_softmax`).

    ```mlir
    %lp = pd.log_softmax %x : (tensor<?x10xf64>) -> tensor<?x10xf64>
    ```
    """

    name = "pd.log_softmax"


# ------------------------------------------------------------------- index searches


class ArgOp(PureOp):
    """Shared typing of `arg_max`/`arg_min`: the index of the extreme element along
    `axis` (the first one on ties), as `dtype` (int64 or int32). `flatten` searches
    the flattened tensor (`axis` ignored), giving a 0-D result, or all-ones dimensions
    with `keepdim`."""

    x = operand_def(TensorType)
    axis = prop_def(IntegerAttr, default_value=i64_attr(0))
    keepdim = prop_def(BoolAttr, default_value=bool_attr(False))
    flatten = prop_def(BoolAttr, default_value=bool_attr(False))
    dtype = prop_def(StringAttr, default_value=StringAttr("int64"))
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        xs = shape_of(tx)
        elem = dtype_from_name(props["dtype"])
        if elem not in INT_TYPES:
            raise VerifyException(
                f"'{cls.name}': dtype must be 'int32' or 'int64', got '{props['dtype']}'"
            )
        if props["flatten"]:
            return [tensor_type(elem, [1] * len(xs) if props["keepdim"] else [])]
        if not xs:
            return [tensor_type(elem, [])]
        ax = normalize_axis(props["axis"], len(xs), cls.name)
        if xs[ax] == 0:
            raise VerifyException(f"'{cls.name}': axis {ax} of {fmt_shape(xs)} is empty")
        return [tensor_type(elem, reduced_shape(xs, [ax], props["keepdim"], cls.name))]


@irdl_op_definition
class ArgMaxOp(ArgOp):
    """`paddle.argmax`: index of the largest element along `axis` (no gradient).

    ```mlir
    %i = pd.arg_max %x {axis = 1 : i64} : (tensor<?x10xf32>) -> tensor<?xi64>
    ```
    """

    name = "pd.arg_max"


@irdl_op_definition
class ArgMinOp(ArgOp):
    """`paddle.argmin`: index of the smallest element along `axis` (no gradient).

    ```mlir
    %i = pd.arg_min %x {axis = -1 : i64, keepdim = true} : (tensor<?x10xf32>) -> tensor<?x1xi64>
    ```
    """

    name = "pd.arg_min"


@irdl_op_definition
class TopKOp(PdOp, MultiResultNames):
    """`paddle.topk` (Paddle's `top_k_v2`): the `k` largest (`largest`) or smallest
    elements along `axis` and their int64 indices; ties keep the lower index first.
    With `sorted=False` the order of the k elements is unspecified in Paddle; here it
    is always sorted. Only `values` is differentiable (it scatters back to the
    indices).

    ```mlir
    %v, %i = pd.top_k %x {k = 3 : i64} : (tensor<?x10xf32>) -> (tensor<?x3xf32>, tensor<?x3xi64>)
    ```
    """

    name = "pd.top_k"
    x = operand_def(TensorType)
    k = prop_def(IntegerAttr, default_value=i64_attr(1))
    axis = prop_def(IntegerAttr, default_value=i64_attr(-1))
    largest = prop_def(BoolAttr, default_value=bool_attr(True))
    sorted = prop_def(BoolAttr, default_value=bool_attr(True))
    names = opt_prop_def(ArrayAttr)
    values = result_def(TensorType)
    indices = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        xs = list(shape_of(tx))
        k = props["k"]
        if k < 1:
            raise VerifyException(f"'{cls.name}': k must be positive, got {k}")
        if not xs:
            if k != 1:
                raise VerifyException(f"'{cls.name}': k must be 1 for a 0-D input, got {k}")
            return [tx, tensor_type(i64, [])]
        ax = normalize_axis(props["axis"], len(xs), cls.name)
        if xs[ax] != DYN and k > xs[ax]:
            raise VerifyException(
                f"'{cls.name}': k ({k}) is larger than dimension {ax} of x {fmt_shape(xs)}"
            )
        xs[ax] = k
        return [tensor_type(elem_of(tx), xs), tensor_type(i64, xs)]


REDUCTION_OPS = [
    ReduceMinOp,
    ReduceProdOp,
    CumsumOp,
    CumprodOp,
    MeanOp,
    SquaredL2NormOp,
    ReduceSumOp,
    ReduceMeanOp,
    ReduceMaxOp,
    SumOp,
    SoftmaxOp,
    LogSoftmaxOp,
    ArgMaxOp,
    ArgMinOp,
    TopKOp,
]


# Linear in x (real coefficients): their VJP rules serve complex values unchanged.
declare_complex(MeanOp, ReduceSumOp, ReduceMeanOp, SumOp, CumsumOp)
