"""Losses: one_hot, cross_entropy, softmax_with_cross_entropy, square_error_cost,
and the classification metric `accuracy`.

Class scores live in the LAST dimension (`C`).  A hard label is an int64 class id per
row, shaped `[N.., 1]` (Paddle's operator layout) or `[N..]` (Paddle 2.x's
`F.cross_entropy` layout); a soft label is a float distribution shaped like the input.
Per-row losses are always shaped `[N.., 1]`.

```mlir
%sm, %loss = pd.softmax_with_cross_entropy %logits, %label
    : (tensor<?x10xf32>, tensor<?x1xi64>) -> (tensor<?x10xf32>, tensor<?x1xf32>)
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
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
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from .base import (
    FLOAT_TYPES,
    Domain,
    INT_TYPES,
    MultiResultNames,
    PdOp,
    PureOp,
    Shape,
    bool_attr,
    dims_compatible,
    dtype_from_name,
    dtype_name,
    elem_of,
    expect_float,
    expect_same_elem,
    f32,
    fmt_shape,
    i32,
    i64,
    i64_attr,
    shape_of,
    shapes_compatible,
    tensor_type,
)
from .reduction import merge_shapes

_BINARY_FORMAT = "$x `,` $label attr-dict `:` functional-type(operands, results)"


@irdl_op_definition
class OneHotOp(PureOp):
    """One-hot encoding with Paddle 2.x semantics (`F.one_hot`, op `one_hot_v2`):
    integer ids shaped `[N..]` give `dtype` rows shaped `[N.., depth]` (a new last
    dimension is APPENDED; the legacy `fluid.layers.one_hot` replaced a trailing 1,
    which the frontend expresses as one_hot followed by a sum over that axis).

    An id outside `[0, depth)` is a runtime error unless `allow_out_of_range`, in
    which case its row is all zeros (the gradients of the losses rely on that).

    ```mlir
    %oh = pd.one_hot %ids {depth = 10 : i64} : (tensor<?xi64>) -> tensor<?x10xf32>
    ```
    """

    POINTWISE: ClassVar[bool] = True

    name = "pd.one_hot"
    x = operand_def(TensorType)
    depth = prop_def(IntegerAttr)
    dtype = prop_def(StringAttr, default_value=StringAttr("float32"))
    allow_out_of_range = prop_def(BoolAttr, default_value=bool_attr(False))
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        if elem_of(tx) not in INT_TYPES:
            raise VerifyException(f"'pd.one_hot': ids must be int32 or int64, got {tx}")
        if props["depth"] < 1:
            raise VerifyException(f"'pd.one_hot': depth must be positive, got {props['depth']}")
        elem = dtype_from_name(props["dtype"])
        if elem not in FLOAT_TYPES:
            raise VerifyException(
                f"'pd.one_hot': dtype must be float32 or float64, got '{props['dtype']}'"
            )
        return [tensor_type(elem, (*shape_of(tx), props["depth"]))]


def class_axis(op: str, rank: int, axis: int) -> int:
    """The class dimension `axis` of a rank-`rank` input, non-negative (checked)."""
    if rank < 1:
        raise VerifyException(f"'{op}': input must have rank >= 1 (it holds the classes), got []")
    if not -rank <= axis < rank:
        raise VerifyException(f"'{op}': axis {axis} is out of range for rank {rank}")
    return axis % rank


def loss_shape(op: str, tx: Attribute, tl: Attribute, soft_label: bool, axis: int = -1) -> Shape:
    """Check `(input, label)` of a classification loss over the class dimension
    `axis`; return the loss shape: the input's with a 1 at `axis`.

    The input is float, `C` classes at `axis`; a soft label has the input's dtype
    and shape; a hard label is int64, the input's shape with a 1 at `axis`, or
    without that dimension.
    """
    expect_float(op, "input", tx)
    xs, ls = shape_of(tx), shape_of(tl)
    a = class_axis(op, len(xs), axis)
    lead = xs[:a] + xs[a + 1:]

    def with_one(dims: Shape) -> Shape:
        return (*dims[:a], 1, *dims[a:])

    if soft_label:
        expect_same_elem(op, [tx, tl])
        if not shapes_compatible(xs, ls):
            raise VerifyException(
                f"'{op}': a soft label must have the input's shape {fmt_shape(xs)}, "
                f"got {fmt_shape(ls)}"
            )
        return with_one(merge_shapes([lead, ls[:a] + ls[a + 1:]]))
    if elem_of(tl) != i64:
        raise VerifyException(
            f"'{op}': hard labels must be int64, got {dtype_name(elem_of(tl))}"
        )
    if len(ls) == len(xs) and dims_compatible(ls[a], 1):
        label_lead = ls[:a] + ls[a + 1:]
    elif len(ls) == len(lead):
        label_lead = ls
    else:
        raise VerifyException(
            f"'{op}': a hard label for input {fmt_shape(xs)} must be shaped "
            f"{fmt_shape(with_one(lead))} or {fmt_shape(lead)}, got {fmt_shape(ls)}"
        )
    if not shapes_compatible(lead, label_lead):
        raise VerifyException(
            f"'{op}': label shape {fmt_shape(ls)} does not match input shape "
            f"{fmt_shape(xs)} outside the class dimension"
        )
    return with_one(merge_shapes([lead, label_lead]))


class ClassificationLossOp(PdOp):
    """Shared properties of the cross-entropy ops.

    `axis` is the class dimension (default the last, as Paddle's); `ignore_index`
    (hard labels only): positions whose label equals it get loss 0 and no gradient.
    """

    soft_label = prop_def(BoolAttr, default_value=bool_attr(False))
    ignore_index = prop_def(IntegerAttr, default_value=i64_attr(-100))
    axis = prop_def(IntegerAttr, default_value=i64_attr(-1))
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)


@irdl_op_definition
class CrossEntropyOp(ClassificationLossOp):
    """`-log(x[label])` (hard) or `-sum(label * log(x))` (soft) over the class
    dimension `axis` (default the last) of PROBABILITIES `x` (Paddle's
    `cross_entropy` operator, `fluid.layers.cross_entropy`, and
    `F.cross_entropy(use_softmax=False)`).

    ```mlir
    %l = pd.cross_entropy %p, %y : (tensor<?x10xf32>, tensor<?x1xi64>) -> tensor<?x1xf32>
    ```
    """

    name = "pd.cross_entropy"
    DOMAIN: ClassVar[Mapping[str, Domain]] = {"x": Domain(0.0)}  # log(x)
    x = operand_def(TensorType)
    label = operand_def(TensorType)
    var_name = opt_prop_def(StringAttr, prop_name="name")
    out = result_def(TensorType)
    assembly_format = _BINARY_FORMAT

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, tl = operand_types
        shape = loss_shape(cls.name, tx, tl, props["soft_label"], props["axis"])
        return [tensor_type(elem_of(tx), shape)]


@irdl_op_definition
class SoftmaxWithCrossEntropyOp(ClassificationLossOp, MultiResultNames):
    """Softmax over the class dimension `axis` of `logits`, then cross entropy
    (Paddle's `softmax_with_cross_entropy`).

    Two results, as in Paddle: `softmax` (shaped like the logits) and `loss` (the
    logits' shape with a 1 at `axis`).  The gradient rule reuses `softmax`
    (`softmax - one_hot(label)`), and a gradient flowing into `softmax` is handled
    too.

    ```mlir
    %sm, %l = pd.softmax_with_cross_entropy %z, %y {names = ["sm", "loss"]}
        : (tensor<?x10xf32>, tensor<?xi64>) -> (tensor<?x10xf32>, tensor<?x1xf32>)
    ```
    """

    name = "pd.softmax_with_cross_entropy"
    logits = operand_def(TensorType)
    label = operand_def(TensorType)
    names = opt_prop_def(ArrayAttr)
    softmax = result_def(TensorType)
    loss = result_def(TensorType)
    assembly_format = "$logits `,` $label attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, tl = operand_types
        shape = loss_shape(cls.name, tx, tl, props["soft_label"], props["axis"])
        return [tx, tensor_type(elem_of(tx), shape)]


@irdl_op_definition
class SquareErrorCostOp(PureOp):
    """`(x - label) ** 2`, elementwise, for same-shaped float tensors
    (`paddle.nn.functional.square_error_cost`).

    ```mlir
    %c = pd.square_error_cost %y, %t : (tensor<?x1xf32>, tensor<?x1xf32>) -> tensor<?x1xf32>
    ```
    """

    POINTWISE: ClassVar[bool] = True

    name = "pd.square_error_cost"
    x = operand_def(TensorType)
    label = operand_def(TensorType)
    assembly_format = _BINARY_FORMAT

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, tl = operand_types
        expect_float(cls.name, "input", tx)
        elem = expect_same_elem(cls.name, [tx, tl])
        xs, ls = shape_of(tx), shape_of(tl)
        if not shapes_compatible(xs, ls):
            raise VerifyException(
                f"'{cls.name}': input shape {fmt_shape(xs)} and label shape "
                f"{fmt_shape(ls)} differ"
            )
        return [tensor_type(elem, merge_shapes([xs, ls]))]


@irdl_op_definition
class AccuracyOp(PdOp, MultiResultNames):
    """Top-k classification accuracy (Paddle's `accuracy` operator): given the top-k
    scores `out` and their `indices` (both `[N, k]`, from `pd.top_k`) and int64
    labels `[N, 1]`, a row is correct when its label is among its k indices.
    Results (0-D): `accuracy = correct / N` (float32), `correct` and `total = N`
    (int32). Not differentiable.

    ```mlir
    %acc, %correct, %total = pd.accuracy %v, %i, %label : (tensor<?x5xf32>, tensor<?x5xi64>, tensor<?x1xi64>) -> (tensor<f32>, tensor<i32>, tensor<i32>)
    ```
    """

    name = "pd.accuracy"
    out = operand_def(TensorType)
    indices = operand_def(TensorType)
    label = operand_def(TensorType)
    names = opt_prop_def(ArrayAttr)
    accuracy = result_def(TensorType)
    correct = result_def(TensorType)
    total = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        to, ti, tl = operand_types
        os_, is_, ls = shape_of(to), shape_of(ti), shape_of(tl)
        if len(os_) != 2 or not shapes_compatible(os_, is_):
            raise VerifyException(
                f"'{cls.name}': out and indices must be [N, k] of one shape, got "
                f"{fmt_shape(os_)} and {fmt_shape(is_)}"
            )
        if elem_of(ti) not in INT_TYPES or elem_of(tl) not in INT_TYPES:
            raise VerifyException(f"'{cls.name}': indices and label must be integer tensors")
        if len(ls) != 2 or not dims_compatible(ls[1], 1):
            raise VerifyException(
                f"'{cls.name}': label's dimensions must be 2 ([N, 1]), got {fmt_shape(ls)}"
            )
        if not dims_compatible(ls[0], os_[0]):
            raise VerifyException(
                f"'{cls.name}': out has {os_[0]} rows but label has {ls[0]}"
            )
        return [tensor_type(f32, []), tensor_type(i32, []), tensor_type(i32, [])]


LOSS_OPS = [OneHotOp, CrossEntropyOp, SoftmaxWithCrossEntropyOp, SquareErrorCostOp, AccuracyOp]

__all__ = [
    "LOSS_OPS",
    "AccuracyOp",
    "ClassificationLossOp",
    "CrossEntropyOp",
    "OneHotOp",
    "SoftmaxWithCrossEntropyOp",
    "SquareErrorCostOp",
    "class_axis",
    "loss_shape",
]
