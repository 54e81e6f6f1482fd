"""Discrete Fourier transforms, as Paddle's three kernels (`fft_c2c`, `fft_r2c`,
`fft_c2r`): every function of `paddle.fft` is one of them after its input is cut or
zero-padded to the lengths asked for (`frontend/ops/fft.py`).

`normalization` is numpy's and Paddle's `norm`: `"backward"` (the forward transform
unscaled, the inverse by 1/n), `"ortho"` (both by 1/sqrt(n)), `"forward"` (the forward
by 1/n).  `forward` picks the direction: c2c is fftn / ifftn; r2c is rfftn (`forward`)
or ihfftn (conjugated); c2r is irfftn or hfftn (`forward`, of the conjugate).  The
kernels are numpy's pocketfft (`np.fft`) on the host (`HOST_ONLY`).

```mlir
%y = pd.fft_r2c %x {axes = array<i64: 1>} : (tensor<2x8xf32>) -> tensor<2x5xcomplex<f32>>
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import BoolAttr, DenseArrayBase, IntegerAttr, StringAttr, TensorType
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition, operand_def, prop_def
from xdsl.utils.exceptions import VerifyException

from .base import (
    DYN,
    PureOp,
    bool_attr,
    declare_complex,
    fmt_shape,
    i64_attr,
    normalize_axis,
    shape_of,
    tensor_type,
)
from .complex import HOST, complex_of, expect_complex

NORMS = ("backward", "ortho", "forward")
"""The values of `normalization` (Paddle's and numpy's `norm=`)."""

_FORMAT = "$x attr-dict `:` functional-type(operands, results)"


def fft_axes(op: str, axes: Sequence[int], rank: int) -> list[int]:
    """The normalized, distinct, non-empty transformed axes; raises naming the op."""
    if not axes:
        raise VerifyException(f"'{op}': axes must not be empty")
    norm = [normalize_axis(a, rank, op) for a in axes]
    if len(set(norm)) != len(norm):
        raise VerifyException(f"'{op}': repeated axis in {list(axes)}")
    return norm


def _check_norm(op: str, props: Mapping[str, Any]) -> None:
    if props["normalization"] not in NORMS:
        raise VerifyException(
            f"'{op}': normalization must be one of {', '.join(NORMS)}, got {props['normalization']!r}"
        )


class _FftOp(PureOp):
    HOST_ONLY: ClassVar[str | None] = HOST
    EXPENSIVE: ClassVar[bool] = True
    x = operand_def(TensorType)
    axes = prop_def(DenseArrayBase)
    normalization = prop_def(StringAttr, default_value=StringAttr("backward"))
    forward = prop_def(BoolAttr, default_value=bool_attr(True))
    assembly_format = _FORMAT


@irdl_op_definition
class FftC2COp(_FftOp):
    """Complex to complex over `axes`: fftn (`forward`) or ifftn."""

    name = "pd.fft_c2c"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        expect_complex(cls.name, "x", tx)
        _check_norm(cls.name, props)
        fft_axes(cls.name, props["axes"], len(shape_of(tx)))
        return [tx]


@irdl_op_definition
class FftR2COp(_FftOp):
    """Real to complex over `axes`: rfftn (`forward`) or ihfftn; `onesided` keeps
    the `n // 2 + 1` non-negative frequencies of the last axis (else all `n`)."""

    name = "pd.fft_r2c"
    onesided = prop_def(BoolAttr, default_value=bool_attr(True))

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        elem = complex_of(cls.name, "x", tx)
        _check_norm(cls.name, props)
        s = list(shape_of(tx))
        axes = fft_axes(cls.name, props["axes"], len(s))
        if props["onesided"] and s[axes[-1]] != DYN:
            s[axes[-1]] = s[axes[-1]] // 2 + 1
        elif props["onesided"]:
            raise VerifyException(f"'{cls.name}': the last transformed axis must have a static size")
        return [tensor_type(elem, s)]


@irdl_op_definition
class FftC2ROp(_FftOp):
    """Hermitian complex to real over `axes`: irfftn or hfftn (`forward`), the last
    axis `last_dim_size` long (0: `2 * (m - 1)` of its `m` input frequencies)."""

    name = "pd.fft_c2r"
    forward = prop_def(BoolAttr, default_value=bool_attr(False))
    last_dim_size = prop_def(IntegerAttr, default_value=i64_attr(0))

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        elem = expect_complex(cls.name, "x", tx)
        _check_norm(cls.name, props)
        s = list(shape_of(tx))
        axes = fft_axes(cls.name, props["axes"], len(s))
        n = props["last_dim_size"]
        if n == 0:
            if s[axes[-1]] == DYN:
                raise VerifyException(f"'{cls.name}': the last transformed axis must have a static size")
            n = 2 * (s[axes[-1]] - 1)
        if n < 1:
            raise VerifyException(f"'{cls.name}': invalid output length {n} for input shape {fmt_shape(s)}")
        s[axes[-1]] = n
        return [tensor_type(elem.element_type, s)]


def c2r_length(op: FftC2ROp) -> int:
    """The length of a `pd.fft_c2r`'s last transformed axis in its result."""
    axes = op.prop("axes")
    return shape_of(op.results[0].type)[axes[-1]]


FFT_OPS = [FftC2COp, FftR2COp, FftC2ROp]

declare_complex(*FFT_OPS)

__all__ = ["FFT_OPS", "FftC2COp", "FftC2ROp", "FftR2COp", "NORMS", "c2r_length", "fft_axes"]
