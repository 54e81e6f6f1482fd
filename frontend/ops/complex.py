"""Paddle's complex-number functions: `paddle.complex`, `real`, `imag`, `conj`,
`angle`, `as_complex`, `as_real` (and the `view_as_*` spellings), `is_complex`,
`sgn`, `polar`, `isreal`, with the Tensor methods of the same names where Paddle
has them.

Each of the first seven is one op of the `complex` family
(`dialects/pd/complex.py`), computed on the host; gradients follow Paddle's
convention (`passes/vjp/complex.py`).  `sgn`, `polar` and `isreal` are composites
of those and elementwise ops, so their gradients come from those ops' rules.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pullback.dialects import pd
from pullback.dialects.pd.dtypes import COMPLEX_NAMES
from pullback.frontend.core import apply
from pullback.frontend.ops.math import cos, sin
from pullback.frontend.ops.elementwise import (
    abs,
    cast,
    check_tensor,
    constant_like,
    divide,
    equal,
    multiply,
    sign,
    where,
    zeros_like,
)

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


def sgn(x: Any, name: str | None = None) -> Any:
    """`paddle.sgn`: `x / |x|` of a complex tensor (0 where x is 0), `sign(x)` of a
    float one.  Its gradient at x = 0 is 0 here; Paddle 3.3.1's is NaN there (the
    function is discontinuous at 0, so neither is a derivative; 0 is the
    subgradient convention `abs` uses too)."""
    _check_float_or_complex("sgn", x)
    if x.dtype not in COMPLEX_NAMES:
        return sign(x, name=name)
    r = abs(x)
    at_zero = equal(r, constant_like(r, 0.0))
    # Divide by 1 where |x| == 0, and select 0 there: no 0/0 in the value, and the
    # selection gives the division (and |x|) a zero gradient at 0, never NaN.
    safe = where(at_zero, constant_like(r, 1.0), r)
    return where(at_zero, zeros_like(x), divide(x, cast(safe, x.dtype)), name=name)


def polar(abs: Any, angle: Any, name: str | None = None) -> Any:  # noqa: A002 (Paddle's argument names)
    """`paddle.polar`: `abs * (cos(angle) + i sin(angle))` from two float tensors
    (float32 parts make complex64, float64 complex128; mixed ones promote to
    float64, as Paddle's; the two broadcast)."""
    for arg, v in (("abs", abs), ("angle", angle)):
        check_tensor("polar", arg, v)
        if v.dtype not in _PARTS:
            raise TypeError(f"polar: '{arg}' must be float32 or float64, got {v.dtype}")
    if abs.dtype != angle.dtype:
        abs, angle = cast(abs, "float64"), cast(angle, "float64")
    return complex(multiply(abs, cos(angle)), multiply(abs, sin(angle)), name=name)


def isreal(x: Any, name: str | None = None) -> Any:
    """`paddle.isreal`: a bool tensor, True where x's imaginary part is 0 (always, for
    a tensor of a real dtype)."""
    check_tensor("isreal", "x", x)
    if x.dtype not in COMPLEX_NAMES:
        return constant_like(x if x.dtype == "bool" else cast(x, "bool"), 1)
    im = imag(x)
    return equal(im, constant_like(im, 0.0), name=name)


_ALL: list[Callable[..., Any]] = [complex, real, imag, conj, angle, as_complex, as_real, is_complex, sgn, polar, isreal]

PADDLE: list[Callable[..., Any]] = [*_ALL, view_as_complex, view_as_real]
FUNCTIONAL: list[Callable[..., Any]] = []
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in (real, imag, conj, angle, as_complex, as_real, is_complex, sgn, polar, isreal)
}
