"""Indexing ops: gathers and scatters by integer index tensors, strided slices and
their in-place counterpart `set_value`, lower/upper triangles, and `nonzero`.

The ops come in pairs that are each other's gradients, so every VJP rule is built
from ops of this family and second derivatives come for free:

    gather(x, i, axis)            <->  index_add(x, i, u, axis)
    gather_nd(x, i)               <->  scatter_nd_add(x, i, u)
    take_along_axis(x, i, axis)   <->  put_along_axis(x, i, v, axis)
    strided_slice(x, ...)         <->  set_value(x, v, ...)
    scatter(x, i, u)              ->   scatter (zeroing rows) and gather
    tril_triu(x)                  ->   tril_triu of the gradient

Index operands are int32 or int64 tensors; `pd.nonzero` has a dynamic result size.

```mlir
%g = pd.gather %x, %i {axis = 0 : i64} : (tensor<?x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
%s = pd.strided_slice %x {axes = array<i64: 1>, starts = array<i64: 3>, ends = array<i64: -2147483648>,
    strides = array<i64: -1>} : (tensor<?x4xf32>) -> tensor<?x4xf32>
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    IntegerAttr,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, prop_def
from xdsl.utils.exceptions import VerifyException

from .base import (
    declare_complex,
    DYN,
    INT_TYPES,
    PureOp,
    Shape,
    bool_attr,
    dims_compatible,
    elem_of,
    expect_same_elem,
    fmt_shape,
    i64,
    i64_attr,
    shape_of,
    shapes_compatible,
    tensor_type,
)

STRIDED_END_POS = 2**31 - 1
"""An `ends` entry meaning "past the last element" (a positive stride's open end)."""
STRIDED_END_NEG = -(2**31)
"""An `ends` entry meaning "before the first element" (a negative stride's open end)."""


def _axis(op: str, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise VerifyException(f"'{op}': axis {axis} is out of range for rank {rank}")
    return axis % rank


def _expect_index(op: str, t: Attribute) -> Shape:
    if elem_of(t) not in INT_TYPES:
        raise VerifyException(f"'{op}': index must be int32 or int64, got {t}")
    return shape_of(t)


def _expect_shape(op: str, what: str, got: Sequence[int], want: Sequence[int]) -> None:
    if not shapes_compatible(got, want):
        raise VerifyException(
            f"'{op}': {what} has shape {fmt_shape(got)}, expected {fmt_shape(want)}")


# ------------------------------------------------------------------ gather pair


def gather_shape(op: str, x: Sequence[int], index: Sequence[int], axis: int) -> Shape:
    """`x[:axis] + index + x[axis+1:]` for a 0-D or 1-D index."""
    if len(index) > 1:
        raise VerifyException(f"'{op}': index must be 0-D or 1-D, got shape {fmt_shape(index)}")
    a = _axis(op, axis, len(x))
    return tuple(x[:a]) + tuple(index) + tuple(x[a + 1:])


@irdl_op_definition
class GatherOp(PureOp):
    """Select entries `index` along `axis` (`paddle.gather`, `index_select`); a 0-D
    index removes the dimension."""

    name = "pd.gather"
    x = operand_def(TensorType)
    index = operand_def(TensorType)
    axis = prop_def(IntegerAttr, default_value=i64_attr(0))
    assembly_format = "$x `,` $index attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, ti = operand_types
        shape = gather_shape(cls.name, shape_of(tx), _expect_index(cls.name, ti), props["axis"])
        return [tensor_type(elem_of(tx), shape)]


@irdl_op_definition
class IndexAddOp(PureOp):
    """`x` with `updates` added at entries `index` along `axis`, duplicates
    accumulating (`paddle.index_add`; the gradient of `pd.gather`)."""

    name = "pd.index_add"
    x = operand_def(TensorType)
    index = operand_def(TensorType)
    updates = operand_def(TensorType)
    axis = prop_def(IntegerAttr, default_value=i64_attr(0))
    assembly_format = "$x `,` $index `,` $updates attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, ti, tu = operand_types
        expect_same_elem(cls.name, [tx, tu])
        want = gather_shape(cls.name, shape_of(tx), _expect_index(cls.name, ti), props["axis"])
        _expect_shape(cls.name, "updates", shape_of(tu), want)
        return [tx]


# --------------------------------------------------------------- gather_nd pair


def gather_nd_shape(op: str, x: Sequence[int], index: Sequence[int]) -> Shape:
    """`index[:-1] + x[k:]` with `k = index[-1]` (static)."""
    if not index:
        raise VerifyException(f"'{op}': index must have rank >= 1")
    k = index[-1]
    if k == DYN or k > len(x):
        raise VerifyException(
            f"'{op}': the last dimension of index ({'?' if k == DYN else k}) must be static "
            f"and at most the rank of x ({len(x)})")
    return tuple(index[:-1]) + tuple(x[k:])


@irdl_op_definition
class GatherNdOp(PureOp):
    """`out[i...] = x[index[i..., :]]` (`paddle.gather_nd`)."""

    name = "pd.gather_nd"
    x = operand_def(TensorType)
    index = operand_def(TensorType)
    assembly_format = "$x `,` $index attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, ti = operand_types
        shape = gather_nd_shape(cls.name, shape_of(tx), _expect_index(cls.name, ti))
        return [tensor_type(elem_of(tx), shape)]


@irdl_op_definition
class ScatterNdAddOp(PureOp):
    """`x` with `updates[i...]` added at `x[index[i..., :]]`, duplicates accumulating
    (`paddle.scatter_nd_add`; the gradient of `pd.gather_nd`)."""

    name = "pd.scatter_nd_add"
    x = operand_def(TensorType)
    index = operand_def(TensorType)
    updates = operand_def(TensorType)
    assembly_format = "$x `,` $index `,` $updates attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, ti, tu = operand_types
        expect_same_elem(cls.name, [tx, tu])
        want = gather_nd_shape(cls.name, shape_of(tx), _expect_index(cls.name, ti))
        _expect_shape(cls.name, "updates", shape_of(tu), want)
        return [tx]


@irdl_op_definition
class ScatterOp(PureOp):
    """Rows `index` of `x` replaced by `updates` (`paddle.scatter`).  With
    `overwrite = false` the indexed rows are first zeroed and then every update
    added, so duplicate indices accumulate (Paddle's rule)."""

    name = "pd.scatter"
    x = operand_def(TensorType)
    index = operand_def(TensorType)
    updates = operand_def(TensorType)
    overwrite = prop_def(BoolAttr, default_value=bool_attr(True))
    assembly_format = "$x `,` $index `,` $updates attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, ti, tu = operand_types
        expect_same_elem(cls.name, [tx, tu])
        idx = _expect_index(cls.name, ti)
        if len(idx) != 1:
            raise VerifyException(f"'{cls.name}': index must be 1-D, got shape {fmt_shape(idx)}")
        x = shape_of(tx)
        if not x:
            raise VerifyException(f"'{cls.name}': x must have rank >= 1")
        _expect_shape(cls.name, "updates", shape_of(tu), tuple(idx) + tuple(x[1:]))
        return [tx]


# --------------------------------------------------------- take/put along axis


def along_axis_check(op: str, x: Sequence[int], index: Sequence[int], axis: int) -> int:
    """Same rank, and every dimension but `axis` equal (the frontend broadcasts)."""
    if len(x) != len(index):
        raise VerifyException(
            f"'{op}': index must have the rank of x ({len(x)}), got shape {fmt_shape(index)}")
    a = _axis(op, axis, len(x))
    for d, (m, n) in enumerate(zip(x, index)):
        if d != a and not dims_compatible(m, n):
            raise VerifyException(
                f"'{op}': index shape {fmt_shape(index)} and x shape {fmt_shape(x)} differ "
                f"in dimension {d} (only axis {a} may differ)")
    return a


@irdl_op_definition
class TakeAlongAxisOp(PureOp):
    """`out[..., j, ...] = x[..., index[..., j, ...], ...]` along `axis`
    (`paddle.take_along_axis`)."""

    name = "pd.take_along_axis"
    x = operand_def(TensorType)
    index = operand_def(TensorType)
    axis = prop_def(IntegerAttr)
    assembly_format = "$x `,` $index attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, ti = operand_types
        idx = _expect_index(cls.name, ti)
        along_axis_check(cls.name, shape_of(tx), idx, props["axis"])
        return [tensor_type(elem_of(tx), idx)]


PUT_REDUCTIONS = ("assign", "add", "mul")


@irdl_op_definition
class PutAlongAxisOp(PureOp):
    """`x` with `values` written at `index` along `axis` (`paddle.put_along_axis`):
    `reduce` is `assign` (overwrite), `add` or `mul` (accumulate)."""

    name = "pd.put_along_axis"
    x = operand_def(TensorType)
    index = operand_def(TensorType)
    values = operand_def(TensorType)
    axis = prop_def(IntegerAttr)
    reduce = prop_def(StringAttr, default_value=StringAttr("assign"))
    assembly_format = "$x `,` $index `,` $values attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, ti, tv = operand_types
        expect_same_elem(cls.name, [tx, tv])
        if props["reduce"] not in PUT_REDUCTIONS:
            raise VerifyException(
                f"'{cls.name}': reduce must be one of {list(PUT_REDUCTIONS)}, got {props['reduce']!r}")
        idx = _expect_index(cls.name, ti)
        along_axis_check(cls.name, shape_of(tx), idx, props["axis"])
        _expect_shape(cls.name, "values", shape_of(tv), idx)
        return [tx]


# -------------------------------------------------------------- strided slices


def strided_dim(dim: int, start: int, end: int, stride: int) -> tuple[int, int, int]:
    """`(first, count, stride)` of Python's `slice(start, end, stride)` on a
    dimension of size `dim` (negative indices count from the end, bounds clamp)."""
    lo, hi, st = slice(start, end, stride).indices(dim)
    return lo, len(range(lo, hi, st)), st


def strided_shape(op: str, x: Sequence[int], axes: Sequence[int], starts: Sequence[int],
                  ends: Sequence[int], strides: Sequence[int]) -> Shape:
    """The shape of a strided slice (a dynamic sliced dimension stays dynamic)."""
    if not len(axes) == len(starts) == len(ends) == len(strides):
        raise VerifyException(
            f"'{op}': axes, starts, ends and strides differ in length "
            f"({len(axes)}, {len(starts)}, {len(ends)}, {len(strides)})")
    out = list(x)
    seen: set[int] = set()
    for a, s, e, st in zip(axes, starts, ends, strides):
        a = _axis(op, a, len(x))
        if a in seen:
            raise VerifyException(f"'{op}': repeated axis {a}")
        seen.add(a)
        if st == 0:
            raise VerifyException(f"'{op}': strides must not be 0")
        if x[a] != DYN:
            out[a] = strided_dim(x[a], s, e, st)[1]
    return tuple(out)


class _StridedOp(PureOp):
    axes = prop_def(DenseArrayBase)
    starts = prop_def(DenseArrayBase)
    ends = prop_def(DenseArrayBase)
    strides = prop_def(DenseArrayBase)

    @classmethod
    def sliced(cls, x: Attribute, props: Mapping[str, Any]) -> Shape:
        """The strided-slice shape of operand type `x` under `props`."""
        return strided_shape(cls.name, shape_of(x), props["axes"], props["starts"],
                             props["ends"], props["strides"])


@irdl_op_definition
class StridedSliceOp(_StridedOp):
    """`x[starts:ends:strides]` along `axes`, Python's slice rules (Paddle's
    `strided_slice`, `x[::-1]`); `ends` may be `STRIDED_END_POS/NEG` for an open end."""

    name = "pd.strided_slice"
    x = operand_def(TensorType)
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        return [tensor_type(elem_of(tx), cls.sliced(tx, props))]


@irdl_op_definition
class SetValueOp(_StridedOp):
    """`x` with the strided slice `x[starts:ends:strides]` replaced by `value`
    (shaped like the slice) (Paddle's `set_value`, `x[1:3] = v`)."""

    name = "pd.set_value"
    x = operand_def(TensorType)
    value = operand_def(TensorType)
    assembly_format = "$x `,` $value attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, tv = operand_types
        expect_same_elem(cls.name, [tx, tv])
        _expect_shape(cls.name, "value", shape_of(tv), cls.sliced(tx, props))
        return [tx]


# ------------------------------------------------------------------- the rest


@irdl_op_definition
class TrilTriuOp(PureOp):
    """The lower (`lower = true`, `paddle.tril`) or upper (`paddle.triu`) triangle of
    the last two dimensions, relative to diagonal `diagonal`; the rest is zero."""

    POINTWISE: ClassVar[bool] = True

    name = "pd.tril_triu"
    x = operand_def(TensorType)
    diagonal = prop_def(IntegerAttr, default_value=i64_attr(0))
    lower = prop_def(BoolAttr, default_value=bool_attr(True))
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        if len(shape_of(tx)) < 2:
            raise VerifyException(f"'{cls.name}': x must have rank >= 2, got {tx}")
        return [tx]


@irdl_op_definition
class NonzeroOp(PureOp):
    """The int64 coordinates `[count, rank]` of the non-zero (true) entries of x, in
    row-major order (`paddle.nonzero`); `count` is known at run time only."""

    HOST_ONLY: ClassVar[str | None] = (
        "its result size is known only after reading x; a program using it runs on the "
        "host interpreter"
    )


    name = "pd.nonzero"
    x = operand_def(TensorType)
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        return [tensor_type(i64, (DYN, len(shape_of(tx))))]



INDEXING_OPS = [
    GatherOp, IndexAddOp, GatherNdOp, ScatterNdAddOp, ScatterOp, TakeAlongAxisOp,
    PutAlongAxisOp, StridedSliceOp, SetValueOp, TrilTriuOp, NonzeroOp,
]


# Data movement by indices: complex values too (the indices stay integers).
declare_complex(GatherOp, IndexAddOp, GatherNdOp, ScatterNdAddOp, ScatterOp, TakeAlongAxisOp, PutAlongAxisOp, StridedSliceOp, SetValueOp, TrilTriuOp)
