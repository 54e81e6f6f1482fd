"""Complex-number ops: the parts of a complex tensor and back (`paddle.real`, `imag`,
`complex`, `as_real`, `as_complex`), the conjugate and the argument (`paddle.conj`,
`angle`).

complex64 holds two float32 parts, complex128 two float64 ones
(`dtypes.COMPLEX_OF_FLOAT`).  The interpreter computes them with numpy's complex
arithmetic; they are declared `HOST_ONLY` because the lowering has no complex
scalar type: the compiled backends get them, and the other complex ops it has
rules for, from the `complex-to-real` pass (`passes/complex_to_real.py`), which
rewrites a complex program into real ops on pairs before lowering.  A complex op
without a rule (fft, complex linear algebra) keeps its program on the interpreter.

```mlir
%re = pd.real %z : (tensor<3xcomplex<f32>>) -> tensor<3xf32>
%z2 = pd.complex %re, %im : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xcomplex<f32>>
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import ComplexType, TensorType
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def
from xdsl.utils.exceptions import VerifyException

from .base import (
    COMPLEX_TYPES,
    PureOp,
    broadcast_shapes,
    declare_complex,
    dtype_name,
    elem_of,
    expect_same_elem,
    f32,
    f64,
    fmt_shape,
    is_float,
    shape_of,
    tensor_type,
)

HOST = "complex numbers are computed by numpy on the host interpreter"
"""Why the complex ops (and fft's) never compile to native code."""

_UNARY_FORMAT = "$x attr-dict `:` functional-type(operands, results)"


def expect_complex(op: str, what: str, t: Attribute) -> ComplexType:
    """Raise unless `t` is a complex64/complex128 tensor; return its element type."""
    elem = elem_of(t)
    if elem not in COMPLEX_TYPES:
        raise VerifyException(f"'{op}': {what} must be a complex64 or complex128 tensor, got {dtype_name(elem)}")
    assert isinstance(elem, ComplexType)
    return elem


def complex_of(op: str, what: str, t: Attribute) -> ComplexType:
    """The complex element type whose parts are `t`'s float32/float64 elements; raises
    naming the op for any other dtype (Paddle has no complex of float16 or ints)."""
    elem = elem_of(t)
    if elem not in (f32, f64):
        raise VerifyException(f"'{op}': {what} must be float32 or float64, got {dtype_name(elem)}")
    return ComplexType(elem)  # type: ignore[arg-type]


class _ComplexUnaryOp(PureOp):
    HOST_ONLY: ClassVar[str | None] = HOST
    x = operand_def(TensorType)
    assembly_format = _UNARY_FORMAT


class _PartOp(_ComplexUnaryOp):
    """A float tensor of a complex tensor's parts' dtype, same shape."""

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        elem = expect_complex(cls.name, "x", tx)
        return [tensor_type(elem.element_type, shape_of(tx))]


@irdl_op_definition
class RealOp(_PartOp):
    """The real part (`paddle.real`)."""

    name = "pd.real"


@irdl_op_definition
class ImagOp(_PartOp):
    """The imaginary part (`paddle.imag`)."""

    name = "pd.imag"


@irdl_op_definition
class ConjOp(_ComplexUnaryOp):
    """The complex conjugate (`paddle.conj`); a real tensor is its own conjugate."""

    name = "pd.conj"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        if elem_of(tx) not in COMPLEX_TYPES and not is_float(elem_of(tx)):
            raise VerifyException(f"'{cls.name}': x must be a float or complex tensor, got {dtype_name(elem_of(tx))}")
        return [tx]


@irdl_op_definition
class AngleOp(_ComplexUnaryOp):
    """The argument in radians, `atan2(imag, real)` (`paddle.angle`): a float tensor
    of the parts' dtype; of a float tensor, 0 or pi by its sign."""

    name = "pd.angle"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        elem = elem_of(tx)
        if isinstance(elem, ComplexType) and elem in COMPLEX_TYPES:
            return [tensor_type(elem.element_type, shape_of(tx))]
        if not is_float(elem):
            raise VerifyException(f"'{cls.name}': x must be a float or complex tensor, got {dtype_name(elem)}")
        return [tx]


@irdl_op_definition
class ComplexOp(PureOp):
    """`real + i * imag` from two float tensors of one dtype, broadcast
    (`paddle.complex`): complex64 of float32 parts, complex128 of float64."""

    name = "pd.complex"
    HOST_ONLY: ClassVar[str | None] = HOST
    real = operand_def(TensorType)
    imag = operand_def(TensorType)
    assembly_format = "$real `,` $imag attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tr, ti = operand_types
        expect_same_elem(cls.name, [tr, ti])
        elem = complex_of(cls.name, "real", tr)
        return [tensor_type(elem, broadcast_shapes(shape_of(tr), shape_of(ti), op=cls.name))]


@irdl_op_definition
class AsComplexOp(_ComplexUnaryOp):
    """A float tensor `[*, 2]` read as complex numbers `[*]` (`paddle.as_complex`:
    the last axis holds the real and the imaginary part)."""

    name = "pd.as_complex"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        elem = complex_of(cls.name, "x", tx)
        s = shape_of(tx)
        if not s or s[-1] != 2:
            raise VerifyException(f"'{cls.name}': x's last dimension must be 2, got shape {fmt_shape(s)}")
        return [tensor_type(elem, s[:-1])]


@irdl_op_definition
class AsRealOp(_ComplexUnaryOp):
    """A complex tensor `[*]` as its parts `[*, 2]` (`paddle.as_real`)."""

    name = "pd.as_real"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        elem = expect_complex(cls.name, "x", tx)
        return [tensor_type(elem.element_type, [*shape_of(tx), 2])]


COMPLEX_OPS = [RealOp, ImagOp, ConjOp, AngleOp, ComplexOp, AsComplexOp, AsRealOp]

declare_complex(*COMPLEX_OPS)

__all__ = [
    "AngleOp",
    "AsComplexOp",
    "AsRealOp",
    "COMPLEX_OPS",
    "ComplexOp",
    "ConjOp",
    "HOST",
    "ImagOp",
    "RealOp",
    "complex_of",
    "expect_complex",
]
