"""Elementwise ops: binary arithmetic with Paddle's broadcasting, comparisons, select,
and unary activations.

Binary ops take Paddle's `axis` (default -1, numpy broadcasting); comparisons return
`i1` (Paddle's bool).  Unary ops compute in float32/float64; what each does with an
integer tensor is its `INT_INPUT` fact (Paddle 3.x's kernels: `abs`, `sign`,
`square`, `clip`, `pow` keep the integer dtype, the transcendental ones and `floor`/`ceil`
autocast to float32, the rest refuse it).  `pd.scale` and `pd.cast` take any
integer tensor.

```mlir
%z = pd.elementwise_add %x, %b {axis = 1 : i64} : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
%r = pd.relu %z : (tensor<?x3xf32>) -> tensor<?x3xf32>
```
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

import numpy as np
from xdsl.dialects.builtin import (
    BoolAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    prop_def,
)
from xdsl.utils.exceptions import VerifyException

from .base import (
    DTYPE_BY_ELEM,
    Domain,
    PureOp,
    tensor_type,
    FLOAT_TYPES,
    INT_TYPES,
    COMPLEX_TYPES,
    bool_attr,
    broadcast_shapes,
    declare_complex,
    dtype_from_name,
    dtype_name,
    elem_of,
    expect_float,
    expect_same_elem,
    f32,
    f64_attr,
    i1,
    i64_attr,
    shape_of,
)

_FORMAT = "operands attr-dict `:` functional-type(operands, results)"


class ElementwiseBinaryOp(PureOp):
    """`out = f(x, y)` with Paddle broadcasting (`axis = -1`: numpy rules; otherwise
    `y` is aligned with `x` from dimension `axis`). Both operands share one dtype."""

    POINTWISE: ClassVar[bool] = True

    x = operand_def(TensorType)
    y = operand_def(TensorType)
    axis = prop_def(IntegerAttr, default_value=i64_attr(-1))
    assembly_format = "$x `,` $y attr-dict `:` functional-type(operands, results)"

    FLOAT_ONLY: ClassVar[bool] = False

    @classmethod
    def result_elem(cls, elem: Attribute) -> Attribute:
        """Element type of the result given the operands' common element type."""
        return elem

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, ty = operand_types
        if tx is ty and not cls.FLOAT_ONLY and props["axis"] == -1 and cls.result_elem(elem_of(tx)) == elem_of(tx):
            return [tx]  # the common case, without rebuilding the (interned) type
        elem = expect_same_elem(cls.name, [tx, ty])
        if cls.FLOAT_ONLY:
            expect_float(cls.name, "x", tx)
        shape = broadcast_shapes(shape_of(tx), shape_of(ty), props["axis"], op=cls.name)
        return [tensor_type(cls.result_elem(elem), shape)]


@irdl_op_definition
class ElementwiseAddOp(ElementwiseBinaryOp):
    """`x + y` (`paddle.add`)."""

    name = "pd.elementwise_add"


@irdl_op_definition
class ElementwiseSubOp(ElementwiseBinaryOp):
    """`x - y` (`paddle.subtract`)."""

    name = "pd.elementwise_sub"


@irdl_op_definition
class ElementwiseMulOp(ElementwiseBinaryOp):
    """`x * y` (`paddle.multiply`)."""

    name = "pd.elementwise_mul"


@irdl_op_definition
class ElementwiseDivOp(ElementwiseBinaryOp):
    """`x / y` (`paddle.divide`)."""

    name = "pd.elementwise_div"
    EXPENSIVE: ClassVar[bool] = True
    DOMAIN: ClassVar[Mapping[str, Domain]] = {"y": Domain(excluded=(0.0,))}


@irdl_op_definition
class ElementwisePowOp(ElementwiseBinaryOp):
    """`x ** y` (`paddle.pow` with a tensor exponent); integer operands keep their
    dtype (Paddle's int kernel: the power in double, converted back)."""

    name = "pd.elementwise_pow"
    EXPENSIVE: ClassVar[bool] = True
    # A real power of any exponent, and its derivative in y (x ** y * log(x)), need x > 0.
    DOMAIN: ClassVar[Mapping[str, Domain]] = {"x": Domain(0.0)}


@irdl_op_definition
class ElementwiseMaxOp(ElementwiseBinaryOp):
    """`maximum(x, y)` (`paddle.maximum`)."""

    name = "pd.elementwise_max"


@irdl_op_definition
class ElementwiseMinOp(ElementwiseBinaryOp):
    """`minimum(x, y)` (`paddle.minimum`)."""

    name = "pd.elementwise_min"


class BitwiseOp(ElementwiseBinaryOp):
    """A broadcasting bitwise op on integer (or bool) tensors; no gradient."""

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (out,) = super().infer(operand_types, props)
        if not isinstance(elem_of(out), IntegerType):
            raise VerifyException(
                f"'{cls.name}': operands must be integer or bool tensors, got {dtype_name(elem_of(out))}")
        return [out]


@irdl_op_definition
class BitwiseAndOp(BitwiseOp):
    """`x & y` (`paddle.bitwise_and`)."""

    name = "pd.bitwise_and"


@irdl_op_definition
class BitwiseOrOp(BitwiseOp):
    """`x | y` (`paddle.bitwise_or`)."""

    name = "pd.bitwise_or"


@irdl_op_definition
class BitwiseXorOp(BitwiseOp):
    """`x ^ y` (`paddle.bitwise_xor`)."""

    name = "pd.bitwise_xor"


class CompareOp(ElementwiseBinaryOp):
    """A broadcasting comparison; the result is `i1` (Paddle's bool)."""

    @classmethod
    def result_elem(cls, elem: Attribute) -> Attribute:
        return i1


@irdl_op_definition
class GreaterThanOp(CompareOp):
    """`x > y` (`paddle.greater_than`)."""

    name = "pd.greater_than"


@irdl_op_definition
class GreaterEqualOp(CompareOp):
    """`x >= y` (`paddle.greater_equal`)."""

    name = "pd.greater_equal"


@irdl_op_definition
class LessThanOp(CompareOp):
    """`x < y` (`paddle.less_than`)."""

    name = "pd.less_than"


@irdl_op_definition
class LessEqualOp(CompareOp):
    """`x <= y` (`paddle.less_equal`)."""

    name = "pd.less_equal"


@irdl_op_definition
class EqualOp(CompareOp):
    """`x == y` (`paddle.equal`)."""

    name = "pd.equal"


@irdl_op_definition
class NotEqualOp(CompareOp):
    """`x != y` (`paddle.not_equal`)."""

    name = "pd.not_equal"


@irdl_op_definition
class WhereOp(PureOp):
    """`condition ? x : y`, broadcasting all three (`paddle.where`).

    ```mlir
    %r = pd.where %c, %x, %y : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    POINTWISE: ClassVar[bool] = True

    name = "pd.where"
    condition = operand_def(TensorType)
    x = operand_def(TensorType)
    y = operand_def(TensorType)
    assembly_format = "$condition `,` $x `,` $y attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tc, tx, ty = operand_types
        if elem_of(tc) != i1:
            raise VerifyException(f"'pd.where': condition must be bool (i1), got {tc}")
        elem = expect_same_elem(cls.name, [tx, ty])
        shape = broadcast_shapes(shape_of(tx), shape_of(ty), op=cls.name)
        shape = broadcast_shapes(shape_of(tc), shape, op=cls.name)
        return [tensor_type(elem, shape)]


# ------------------------------------------------------------------------ unary


IntInput = Literal["reject", "same", "float32"]
"""What a unary op does with an int32/int64 tensor: refuse it (`expect_float`'s
error), compute in and return its integer dtype, or compute in and return float32
(Paddle 3.x's type autocast of integer inputs)."""


class ElementwiseUnaryOp(PureOp):
    """`out = f(x)`, same shape; a float tensor keeps its dtype, an integer one is
    handled as the op's `INT_INPUT` says."""

    POINTWISE: ClassVar[bool] = True

    x = operand_def(TensorType)
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    INT_INPUT: ClassVar[IntInput] = "reject"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        if elem_of(tx) in INT_TYPES and cls.INT_INPUT != "reject":
            if cls.INT_INPUT == "same":
                return [tx]
            return [tensor_type(f32, shape_of(tx))]
        if cls.COMPLEX and elem_of(tx) in COMPLEX_TYPES:
            return [tx]
        expect_float(cls.name, "x", tx)
        return [tx]


@irdl_op_definition
class ReluOp(ElementwiseUnaryOp):
    """`max(x, 0)`."""

    name = "pd.relu"


@irdl_op_definition
class SigmoidOp(ElementwiseUnaryOp):
    """`1 / (1 + exp(-x))`."""

    name = "pd.sigmoid"
    INT_INPUT: ClassVar[IntInput] = "float32"
    EXPENSIVE: ClassVar[bool] = True


@irdl_op_definition
class TanhOp(ElementwiseUnaryOp):
    """`tanh(x)`."""

    name = "pd.tanh"
    INT_INPUT: ClassVar[IntInput] = "float32"
    EXPENSIVE: ClassVar[bool] = True


@irdl_op_definition
class ExpOp(ElementwiseUnaryOp):
    """`exp(x)`."""

    name = "pd.exp"
    INT_INPUT: ClassVar[IntInput] = "float32"
    EXPENSIVE: ClassVar[bool] = True


@irdl_op_definition
class LogOp(ElementwiseUnaryOp):
    """Natural logarithm."""

    name = "pd.log"
    INT_INPUT: ClassVar[IntInput] = "float32"
    EXPENSIVE: ClassVar[bool] = True
    DOMAIN: ClassVar[Mapping[str, Domain]] = {"x": Domain(0.0)}


@irdl_op_definition
class SqrtOp(ElementwiseUnaryOp):
    """Square root."""

    name = "pd.sqrt"
    INT_INPUT: ClassVar[IntInput] = "float32"
    EXPENSIVE: ClassVar[bool] = True
    DOMAIN: ClassVar[Mapping[str, Domain]] = {"x": Domain(0.0)}


@irdl_op_definition
class SquareOp(ElementwiseUnaryOp):
    """`x * x`."""

    name = "pd.square"
    INT_INPUT: ClassVar[IntInput] = "same"


@irdl_op_definition
class AbsOp(ElementwiseUnaryOp):
    """`|x|`; of a complex tensor, its modulus as a float tensor of the parts' dtype
    (`paddle.abs` of complex64 is float32)."""

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        if elem_of(tx) in COMPLEX_TYPES:
            return [tensor_type(elem_of(tx).element_type, shape_of(tx))]  # type: ignore[attr-defined]
        return super().infer(operand_types, props)

    name = "pd.abs"
    INT_INPUT: ClassVar[IntInput] = "same"


@irdl_op_definition
class SignOp(ElementwiseUnaryOp):
    """`sign(x)` in {-1, 0, 1} (its derivative is zero)."""

    name = "pd.sign"
    INT_INPUT: ClassVar[IntInput] = "same"


@irdl_op_definition
class ErfOp(ElementwiseUnaryOp):
    """The error function (needed by exact GELU and its derivative)."""

    name = "pd.erf"
    INT_INPUT: ClassVar[IntInput] = "float32"
    EXPENSIVE: ClassVar[bool] = True


@irdl_op_definition
class SinOp(ElementwiseUnaryOp):
    """`sin(x)` (`paddle.sin`)."""

    name = "pd.sin"
    INT_INPUT: ClassVar[IntInput] = "float32"


@irdl_op_definition
class CosOp(ElementwiseUnaryOp):
    """`cos(x)` (`paddle.cos`)."""

    name = "pd.cos"
    INT_INPUT: ClassVar[IntInput] = "float32"


@irdl_op_definition
class TanOp(ElementwiseUnaryOp):
    """`tan(x)` (`paddle.tan`)."""

    name = "pd.tan"
    INT_INPUT: ClassVar[IntInput] = "float32"
    # One period, around 0: tan has poles at pi/2 + k*pi.
    DOMAIN: ClassVar[Mapping[str, Domain]] = {"x": Domain(-math.pi / 2, math.pi / 2)}


@irdl_op_definition
class AsinOp(ElementwiseUnaryOp):
    """`arcsin(x)` (`paddle.asin`), NaN outside [-1, 1]."""

    name = "pd.asin"
    INT_INPUT: ClassVar[IntInput] = "float32"
    DOMAIN: ClassVar[Mapping[str, Domain]] = {"x": Domain(-1.0, 1.0)}


@irdl_op_definition
class AcosOp(ElementwiseUnaryOp):
    """`arccos(x)` (`paddle.acos`), NaN outside [-1, 1]."""

    name = "pd.acos"
    INT_INPUT: ClassVar[IntInput] = "float32"
    DOMAIN: ClassVar[Mapping[str, Domain]] = {"x": Domain(-1.0, 1.0)}


@irdl_op_definition
class AtanOp(ElementwiseUnaryOp):
    """`arctan(x)` (`paddle.atan`)."""

    name = "pd.atan"
    INT_INPUT: ClassVar[IntInput] = "float32"


@irdl_op_definition
class SinhOp(ElementwiseUnaryOp):
    """`sinh(x)` (`paddle.sinh`)."""

    name = "pd.sinh"
    INT_INPUT: ClassVar[IntInput] = "float32"


@irdl_op_definition
class CoshOp(ElementwiseUnaryOp):
    """`cosh(x)` (`paddle.cosh`)."""

    name = "pd.cosh"
    INT_INPUT: ClassVar[IntInput] = "float32"


@irdl_op_definition
class Log1pOp(ElementwiseUnaryOp):
    """`log(1 + x)`, accurate for small x (`paddle.log1p`)."""

    name = "pd.log1p"
    INT_INPUT: ClassVar[IntInput] = "float32"
    DOMAIN: ClassVar[Mapping[str, Domain]] = {"x": Domain(-1.0)}


@irdl_op_definition
class Expm1Op(ElementwiseUnaryOp):
    """`exp(x) - 1`, accurate for small x (`paddle.expm1`)."""

    name = "pd.expm1"
    INT_INPUT: ClassVar[IntInput] = "float32"


@irdl_op_definition
class FloorOp(ElementwiseUnaryOp):
    """Round toward -inf (`paddle.floor`); zero gradient."""

    name = "pd.floor"
    INT_INPUT: ClassVar[IntInput] = "float32"


@irdl_op_definition
class CeilOp(ElementwiseUnaryOp):
    """Round toward +inf (`paddle.ceil`); zero gradient."""

    name = "pd.ceil"
    INT_INPUT: ClassVar[IntInput] = "float32"


@irdl_op_definition
class RoundOp(ElementwiseUnaryOp):
    """Round to the nearest integer, halves away from zero as C's `round` does
    (`paddle.round`: round(-0.5) = -1, round(2.5) = 3); zero gradient."""

    name = "pd.round"


@irdl_op_definition
class GeluOp(ElementwiseUnaryOp):
    """GELU: exact `x * Phi(x)`, or the tanh approximation when `approximate`."""

    name = "pd.gelu"
    EXPENSIVE: ClassVar[bool] = True
    approximate = prop_def(BoolAttr, default_value=bool_attr(False))


@irdl_op_definition
class ScaleOp(ElementwiseUnaryOp):
    """`scale * x + bias` (or `scale * (x + bias)` when not `bias_after_scale`).

    ```mlir
    %y = pd.scale %x {scale = 2.0 : f64, bias = 1.0 : f64} : (tensor<3xf32>) -> tensor<3xf32>
    ```
    """

    name = "pd.scale"
    scale = prop_def(FloatAttr, default_value=f64_attr(1.0))
    bias = prop_def(FloatAttr, default_value=f64_attr(0.0))
    bias_after_scale = prop_def(BoolAttr, default_value=bool_attr(True))

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        # Paddle scales integer tensors too (`ids * 2`); the result keeps x's dtype.
        (tx,) = operand_types
        if elem_of(tx) not in (*FLOAT_TYPES, *INT_TYPES, *COMPLEX_TYPES):
            raise VerifyException(f"'pd.scale': x must be a float, complex or int tensor, got {tx}")
        return [tx]


@irdl_op_definition
class PowOp(ElementwiseUnaryOp):
    """`x ** factor` for a scalar exponent (`paddle.pow(x, 2.0)`); an integer x keeps
    its dtype (Paddle's int pow kernel: the power in double, truncated back)."""

    name = "pd.pow"
    INT_INPUT: ClassVar[IntInput] = "same"
    EXPENSIVE: ClassVar[bool] = True
    factor = prop_def(FloatAttr, default_value=f64_attr(1.0))


@irdl_op_definition
class ClipOp(ElementwiseUnaryOp):
    """Clamp into `[min, max]` (`paddle.clip`)."""

    name = "pd.clip"
    INT_INPUT: ClassVar[IntInput] = "same"
    min = prop_def(FloatAttr)
    max = prop_def(FloatAttr)

    def bounds(self) -> tuple[float, float] | tuple[int, int]:
        """`(min, max)` in the result's dtype: for an integer tensor each bound is
        truncated toward zero and saturated into the dtype's range (Paddle's int
        kernel casts its float attributes to the element type; an absent bound,
        stored as +-float max, becomes the dtype's extreme)."""
        lo, hi = self.prop("min"), self.prop("max")
        elem = elem_of(self.results[0].type)
        if elem not in INT_TYPES:
            return lo, hi
        info = np.iinfo(DTYPE_BY_ELEM[elem].numpy)

        def saturate(v: float) -> int:
            if math.isinf(v):
                return int(info.max if v > 0 else info.min)
            return int(min(max(math.trunc(v), info.min), info.max))

        return saturate(lo), saturate(hi)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        if props["min"] > props["max"]:
            raise VerifyException(
                f"'pd.clip': min ({props['min']}) must not exceed max ({props['max']})"
            )
        return super().infer(operand_types, props)


@irdl_op_definition
class CastOp(PureOp):
    """Convert to another dtype (`paddle.cast`).

    ```mlir
    %y = pd.cast %x {dtype = "float64"} : (tensor<3xf32>) -> tensor<3xf64>
    ```
    """

    POINTWISE: ClassVar[bool] = True

    name = "pd.cast"
    x = operand_def(TensorType)
    dtype = prop_def(StringAttr)
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        try:
            elem = dtype_from_name(props["dtype"])
        except ValueError as e:
            raise VerifyException(f"'pd.cast': {e}") from None
        return [tensor_type(elem, shape_of(tx))]


ELEMENTWISE_OPS = [
    ElementwiseAddOp,
    ElementwiseSubOp,
    ElementwiseMulOp,
    ElementwiseDivOp,
    ElementwisePowOp,
    ElementwiseMaxOp,
    ElementwiseMinOp,
    BitwiseAndOp,
    BitwiseOrOp,
    BitwiseXorOp,
    GreaterThanOp,
    GreaterEqualOp,
    LessThanOp,
    LessEqualOp,
    EqualOp,
    NotEqualOp,
    WhereOp,
    ReluOp,
    SigmoidOp,
    TanhOp,
    ExpOp,
    LogOp,
    SqrtOp,
    SquareOp,
    AbsOp,
    SignOp,
    ErfOp,
    SinOp,
    CosOp,
    TanOp,
    AsinOp,
    AcosOp,
    AtanOp,
    SinhOp,
    CoshOp,
    Log1pOp,
    Expm1Op,
    FloorOp,
    CeilOp,
    RoundOp,
    GeluOp,
    ScaleOp,
    PowOp,
    ClipOp,
    CastOp,
]


# Holomorphic (or real-linear) on complex numbers: their VJP rules serve complex
# values conjugated around (passes/vjp); `pd.abs` has a complex rule of its own;
# `pd.equal`/`not_equal` compare both parts.  Ordering comparisons, max/min and the
# activations Paddle defines on reals only stay refused.
declare_complex(
    ElementwiseAddOp, ElementwiseSubOp, ElementwiseMulOp, ElementwiseDivOp, EqualOp, NotEqualOp, WhereOp,
    ExpOp, LogOp, SqrtOp, SquareOp, AbsOp, SinOp, CosOp, TanOp, SinhOp, CoshOp, TanhOp, Log1pOp, Expm1Op,
    ScaleOp, PowOp, CastOp,
)
