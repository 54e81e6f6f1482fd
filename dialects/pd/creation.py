"""Creation ops: ranges, identity matrices and seeded random tensors whose shape is
known when the op is built (`paddle.arange`, `linspace`, `eye`, `randint`,
`randperm`), and `pd.bernoulli`, which samples a tensor of probabilities.

None of them is differentiable.  Random ops carry their `seed`: the frontend draws
it from `paddle.seed`'s generator (eager mode) or derives it from the op's unique
name and the program's `random_seed` (static mode), so a seeded program repeats.

```mlir
%r = pd.arange {start = 0.0 : f64, end = 5.0 : f64, step = 1.0 : f64, dtype = "int64"} : tensor<5xi64>
%e = pd.eye {num_rows = 2 : i64, num_columns = 3 : i64} : tensor<2x3xf32>
%b = pd.bernoulli %p {seed = 7 : i64} : (tensor<?x4xf32>) -> tensor<?x4xf32>
```
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def
from xdsl.utils.exceptions import VerifyException

from .base import (
    COMPLEX_TYPES,
    INT_TYPES,
    PureOp,
    declare_complex,
    dtype_from_name,
    expect_float,
    i64_attr,
    tensor,
)

_NO_OPERANDS = "attr-dict `:` type($out)"


@irdl_op_definition
class AssignValueOp(PureOp):
    """A constant tensor of the given `shape` holding `values` in row-major order
    (Paddle's `assign_value`: `paddle.assign(ndarray)`, list indices, static
    `to_tensor`).  Values are stored as f64, exact for ints up to 2**53; a complex
    constant stores its imaginary parts in `imag_values` (absent for other dtypes).

    ```mlir
    %c = pd.assign_value {shape = array<i64: 2>, values = [1.0 : f64, 3.0 : f64], dtype = "int64"} : tensor<2xi64>
    %z = pd.assign_value {shape = array<i64: 1>, values = [1.0 : f64], imag_values = [2.0 : f64], dtype = "complex64"} : tensor<1xcomplex<f32>>
    ```
    """

    POINTWISE: ClassVar[bool] = True

    name = "pd.assign_value"
    shape = prop_def(DenseArrayBase)
    values = prop_def(ArrayAttr)
    imag_values = opt_prop_def(ArrayAttr)
    dtype = prop_def(StringAttr, default_value=StringAttr("float32"))
    assembly_format = _NO_OPERANDS

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        shape = list(props["shape"])
        if any(d < 0 for d in shape):
            raise VerifyException(f"'pd.assign_value': shape must be static, got {shape}")
        if len(props["values"]) != math.prod(shape):
            raise VerifyException(
                f"'pd.assign_value': {len(props['values'])} values do not fill shape {shape}")
        elem = _dtype(cls.name, props)
        imags = props.get("imag_values")
        if imags is not None:
            if elem not in COMPLEX_TYPES:
                raise VerifyException(
                    f"'pd.assign_value': imaginary parts need a complex dtype, not {props['dtype']}")
            if len(imags) != len(props["values"]):
                raise VerifyException(
                    f"'pd.assign_value': {len(imags)} imaginary parts for {len(props['values'])} values")
        return [tensor(shape, elem)]


def _dtype(op: str, props: Mapping[str, Any]) -> Attribute:
    """The element type named by the `dtype` property, as a VerifyException if unknown."""
    try:
        return dtype_from_name(props["dtype"])
    except ValueError as e:
        raise VerifyException(f"'{op}': {e}") from None


def arange_size(start: float, end: float, step: float) -> int:
    """Number of elements of `[start, end)` by `step` (Paddle's `ceil(|end - start| / |step|)`,
    0 when the range runs the other way)."""
    return max(0, math.ceil((end - start) / step))


@irdl_op_definition
class ArangeOp(PureOp):
    """`[start, start + step, ...)` below `end` (above it for a negative step)
    (`paddle.arange`)."""

    POINTWISE: ClassVar[bool] = True

    name = "pd.arange"
    start = prop_def(FloatAttr)
    end = prop_def(FloatAttr)
    step = prop_def(FloatAttr)
    dtype = prop_def(StringAttr, default_value=StringAttr("int64"))
    assembly_format = _NO_OPERANDS

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        if props["step"] == 0:
            raise VerifyException("'pd.arange': step must not be 0")
        return [tensor([arange_size(props["start"], props["end"], props["step"])],
                       _dtype(cls.name, props))]


@irdl_op_definition
class LinspaceOp(PureOp):
    """`num` evenly spaced values from `start` to `stop`, both included (`paddle.linspace`)."""

    POINTWISE: ClassVar[bool] = True

    name = "pd.linspace"
    start = prop_def(FloatAttr)
    stop = prop_def(FloatAttr)
    num = prop_def(IntegerAttr)
    dtype = prop_def(StringAttr, default_value=StringAttr("float32"))
    assembly_format = _NO_OPERANDS

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        if props["num"] < 0:
            raise VerifyException(f"'pd.linspace': num must be non-negative, got {props['num']}")
        return [tensor([props["num"]], _dtype(cls.name, props))]


@irdl_op_definition
class EyeOp(PureOp):
    """A `num_rows x num_columns` matrix with ones on the diagonal (`paddle.eye`)."""

    POINTWISE: ClassVar[bool] = True

    name = "pd.eye"
    num_rows = prop_def(IntegerAttr)
    num_columns = prop_def(IntegerAttr)
    dtype = prop_def(StringAttr, default_value=StringAttr("float32"))
    assembly_format = _NO_OPERANDS

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        rows, cols = props["num_rows"], props["num_columns"]
        if rows < 0 or cols < 0:
            raise VerifyException(f"'pd.eye': sizes must be non-negative, got {rows} x {cols}")
        return [tensor([rows, cols], _dtype(cls.name, props))]


@irdl_op_definition
class RandintOp(PureOp):
    """Uniform random integers in `[low, high)` of a static `shape` (`paddle.randint`)."""

    HOST_ONLY: ClassVar[str | None] = (
        "random ops draw from numpy's generator, which native code does not reproduce; "
        "a program using one runs on the host interpreter"
    )


    name = "pd.randint"
    low = prop_def(IntegerAttr)
    high = prop_def(IntegerAttr)
    shape = prop_def(DenseArrayBase)
    dtype = prop_def(StringAttr, default_value=StringAttr("int64"))
    seed = prop_def(IntegerAttr, default_value=i64_attr(0))
    assembly_format = _NO_OPERANDS

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        if props["low"] >= props["high"]:
            raise VerifyException(
                f"'pd.randint': low ({props['low']}) must be less than high ({props['high']})")
        shape = list(props["shape"])
        if any(d < 0 for d in shape):
            raise VerifyException(f"'pd.randint': shape must be static, got {shape}")
        elem = _dtype(cls.name, props)
        if elem not in INT_TYPES:
            raise VerifyException(f"'pd.randint': dtype must be int32 or int64, got {props['dtype']}")
        return [tensor(shape, elem)]


@irdl_op_definition
class RandpermOp(PureOp):
    """A random permutation of `0 .. n-1` (`paddle.randperm`)."""

    HOST_ONLY: ClassVar[str | None] = (
        "random ops draw from numpy's generator, which native code does not reproduce; "
        "a program using one runs on the host interpreter"
    )


    name = "pd.randperm"
    n = prop_def(IntegerAttr)
    dtype = prop_def(StringAttr, default_value=StringAttr("int64"))
    seed = prop_def(IntegerAttr, default_value=i64_attr(0))
    assembly_format = _NO_OPERANDS

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        if props["n"] < 1:
            raise VerifyException(f"'pd.randperm': n must be positive, got {props['n']}")
        return [tensor([props["n"]], _dtype(cls.name, props))]


@irdl_op_definition
class BernoulliOp(PureOp):
    """1 with probability `x`, else 0, elementwise (`paddle.bernoulli`).

    ```mlir
    %b = pd.bernoulli %p {seed = 7 : i64} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    ```
    """

    HOST_ONLY: ClassVar[str | None] = (
        "random ops draw from numpy's generator, which native code does not reproduce; "
        "a program using one runs on the host interpreter"
    )


    name = "pd.bernoulli"
    x = operand_def(TensorType)
    seed = prop_def(IntegerAttr, default_value=i64_attr(0))
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        expect_float(cls.name, "x", tx)
        return [tx]


CREATION_OPS = [AssignValueOp, ArangeOp, LinspaceOp, EyeOp, RandintOp, RandpermOp, BernoulliOp]

# A constant may be complex (`imag_values`); the other creation ops make real tensors.
declare_complex(AssignValueOp)
