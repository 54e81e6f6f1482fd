"""Paddle's complex-number functions: `paddle.complex`, `real`, `imag`, `conj`,
`angle`, `as_complex`, `as_real` (and the `view_as_*` spellings), `is_complex`,
with the Tensor methods `real()`, `imag()`, `conj()`, `angle()`, `is_complex()`.

Each is one op of the `complex` family (`dialects/pd/complex.py`), computed on the
host; gradients follow Paddle's convention (`passes/vjp/complex.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pullback.dialects import pd
from pullback.dialects.pd.dtypes import COMPLEX_NAMES
from pullback.frontend.core import apply
from pullback.frontend.ops.elementwise import check_tensor

_PARTS = ("float32", "float64")


def _check_complex(fn: str, x: Any) -> None:
    check_tensor(fn, "x", x)
    if x.dtype not in COMPLEX_NAMES:
        raise TypeError(f"{fn}: 'x' must be complex64 or complex128, got {x.dtype}")


def _check_float_or_complex(fn: str, x: Any) -> None:
    check_tensor(fn, "x", x)
    if x.dtype not in (*_PARTS, *COMPLEX_NAMES):
        raise TypeError(f"{fn}: 'x' must be float32, float64, complex64 or complex128, got {x.dtype}")


def is_complex(x: Any) -> bool:
    """`paddle.is_complex`: whether x's dtype is complex64 or complex128."""
    check_tensor("is_complex", "x", x)
    return x.dtype in COMPLEX_NAMES


def complex(real: Any, imag: Any, name: str | None = None) -> Any:  # noqa: A001 (Paddle's name)
    """`paddle.complex`: `real + i * imag` (float32 parts make complex64, float64
    complex128; the two broadcast)."""
    check_tensor("complex", "real", real)
    check_tensor("complex", "imag", imag)
    for arg, v in (("real", real), ("imag", imag)):
        if v.dtype not in _PARTS:
            raise TypeError(f"complex: '{arg}' must be float32 or float64, got {v.dtype}")
    if real.dtype != imag.dtype:
        raise TypeError(f"complex: 'real' and 'imag' must have one dtype, got {real.dtype} and {imag.dtype}")
    return apply(pd.ComplexOp, [real, imag], prefix="complex", name=name)


def real(x: Any, name: str | None = None) -> Any:
    """`paddle.real`: the real part of a complex tensor (a float tensor)."""
    _check_complex("real", x)
    return apply(pd.RealOp, [x], prefix="real", name=name)


def imag(x: Any, name: str | None = None) -> Any:
    """`paddle.imag`: the imaginary part of a complex tensor."""
    _check_complex("imag", x)
    return apply(pd.ImagOp, [x], prefix="imag", name=name)


def conj(x: Any, name: str | None = None) -> Any:
    """`paddle.conj`: the complex conjugate (a float tensor is its own)."""
    _check_float_or_complex("conj", x)
    return apply(pd.ConjOp, [x], prefix="conj", name=name)


def angle(x: Any, name: str | None = None) -> Any:
    """`paddle.angle`: the argument in radians (of a float tensor: 0 or pi)."""
    _check_float_or_complex("angle", x)
    return apply(pd.AngleOp, [x], prefix="angle", name=name)


def as_complex(x: Any, name: str | None = None) -> Any:
    """`paddle.as_complex`: a float tensor `[*, 2]` as complex numbers `[*]`."""
    check_tensor("as_complex", "x", x)
    if x.dtype not in _PARTS:
        raise TypeError(f"as_complex: 'x' must be float32 or float64, got {x.dtype}")
    return apply(pd.AsComplexOp, [x], prefix="as_complex", name=name)


def as_real(x: Any, name: str | None = None) -> Any:
    """`paddle.as_real`: a complex tensor `[*]` as its parts `[*, 2]`."""
    _check_complex("as_real", x)
    return apply(pd.AsRealOp, [x], prefix="as_real", name=name)


def view_as_complex(input: Any) -> Any:
    """`paddle.view_as_complex` (a copy here, as every pullback tensor op makes)."""
    return as_complex(input)


def view_as_real(input: Any) -> Any:
    """`paddle.view_as_real` (a copy here)."""
    return as_real(input)


_ALL: list[Callable[..., Any]] = [complex, real, imag, conj, angle, as_complex, as_real, is_complex]

PADDLE: list[Callable[..., Any]] = [*_ALL, view_as_complex, view_as_real]
FUNCTIONAL: list[Callable[..., Any]] = []
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in (real, imag, conj, angle, as_complex, as_real, is_complex)
}
