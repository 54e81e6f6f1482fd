"""Paddle's special functions `lgamma`, `digamma` and `erfinv`, as composites of
elementwise ops (so static mode and the compiled backend work).

* `lgamma(x)`: for x >= 1/2, shift up by 8 (`lgamma(x) = lgamma(x + 8) -
  log(x (x+1) ... (x+7))`) and apply Stirling's series to 4 correction terms (error about
  1e-12 in float64); for x < 1/2 the reflection formula
  `lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x)`.  Its gradient, digamma, comes
  from differentiating the composite (accurate to the same order).
* `digamma(x)`: the same shift (`digamma(x) = digamma(x + 8) - sum 1 / (x + k)`), the
  asymptotic series, and the reflection `digamma(1 - x) - pi / tan(pi x)`.
* `erfinv(y)`: Giles' single-precision approximation refined by two Newton steps on
  `erf`, the steps' values detached, plus one differentiable correction step whose
  derivative is exactly Paddle's `sqrt(pi)/2 * exp(erfinv(y)^2)` (first order; a
  second derivative through erfinv is not available and comes out as zero's).
  `erfinv(+-1)` is +-inf and |y| > 1 gives NaN, as in Paddle.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from pullback.frontend.ops.elementwise import (
    abs,
    add,
    check_float_tensor,
    constant_like,
    divide,
    equal,
    erf,
    exp,
    greater_than,
    less_than,
    log,
    multiply,
    scale,
    sign,
    sqrt,
    subtract,
    where,
)
from pullback.frontend.ops.logic import logical_and
from pullback.frontend.ops.math import floor, sin, tan

_SHIFT = 8


def _reflect_operand(x: Any) -> tuple[Any, Any]:
    """The mask `x < 1/2` and the operand `1 - x` there (x elsewhere), >= 1/2."""
    small = less_than(x, constant_like(x, 0.5))
    return small, where(small, scale(x, -1.0, 1.0), x)


def _lgamma_large(z: Any) -> Any:
    """lgamma for z >= 1/2: the shift by 8 and Stirling's series."""
    prod = z
    for k in range(1, _SHIFT):
        prod = multiply(prod, scale(z, 1.0, float(k)))
    w = scale(z, 1.0, float(_SHIFT))
    inv = divide(constant_like(w, 1.0), w)
    inv2 = multiply(inv, inv)
    series = multiply(inv, scale(multiply(inv2, scale(multiply(inv2, scale(
        multiply(inv2, constant_like(inv2, -1.0 / 1680.0)), 1.0, 1.0 / 1260.0)), 1.0, -1.0 / 360.0)), 1.0,
        1.0 / 12.0))
    stirling = add(subtract(multiply(scale(w, 1.0, -0.5), log(w)), w),
                   scale(series, 1.0, 0.5 * math.log(2 * math.pi)))
    return subtract(stirling, log(prod))


def lgamma(x: Any, name: str | None = None) -> Any:
    """`paddle.lgamma`: `log|Gamma(x)|` (inf at the poles 0, -1, -2, ...)."""
    check_float_tensor("lgamma", "x", x)
    small, z = _reflect_operand(x)
    large = _lgamma_large(z)
    # sin(pi x) only where the reflection is used (elsewhere an exact zero at an
    # integer would send a NaN through the unselected branch's gradient)
    s = where(small, abs(sin(scale(x, math.pi))), constant_like(x, 1.0))
    reflected = subtract(log(divide(constant_like(x, math.pi), s)), large)
    out = where(small, reflected, large)
    # the poles 0, -1, -2, ...: sin(pi x) is not exactly 0 there in floating point
    pole = logical_and(equal(floor(x), x), less_than(x, constant_like(x, 0.5)))
    return where(pole, constant_like(x, math.inf), out, name=name)


def _digamma_large(z: Any) -> Any:
    """digamma for z >= 1/2: the shift by 8 and the asymptotic series."""
    acc = divide(constant_like(z, 1.0), z)
    for k in range(1, _SHIFT):
        acc = add(acc, divide(constant_like(z, 1.0), scale(z, 1.0, float(k))))
    w = scale(z, 1.0, float(_SHIFT))
    inv = divide(constant_like(w, 1.0), w)
    inv2 = multiply(inv, inv)
    # log w - 1/(2w) - 1/(12w^2) + 1/(120w^4) - 1/(252w^6) + 1/(240w^8)
    poly = multiply(inv2, scale(multiply(inv2, scale(multiply(inv2, scale(
        multiply(inv2, constant_like(inv2, 1.0 / 240.0)), 1.0, -1.0 / 252.0)), 1.0, 1.0 / 120.0)), 1.0,
        -1.0 / 12.0))
    return subtract(add(subtract(log(w), scale(inv, 0.5)), poly), acc)


def digamma(x: Any, name: str | None = None) -> Any:
    """`paddle.digamma`: the derivative of lgamma (NaN/inf at the poles)."""
    check_float_tensor("digamma", "x", x)
    small, z = _reflect_operand(x)
    large = _digamma_large(z)
    t = where(small, tan(scale(x, math.pi)), constant_like(x, 1.0))
    reflected = subtract(large, divide(constant_like(x, math.pi), t))
    return where(small, reflected, large, name=name)


def _giles(y: Any) -> Any:
    """Giles' approximation of erfinv (single-precision accurate) for |y| < 1."""
    w = scale(log(multiply(scale(y, -1.0, 1.0), scale(y, 1.0, 1.0))), -1.0)
    central = [2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
               -0.00125372503, -0.00417768164, 0.246640727, 1.50140941]
    tail = [-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
            -0.0076224613, 0.00943887047, 1.00167406, 2.83297682]

    def horner(t: Any, coeffs: list[float]) -> Any:
        p = constant_like(t, coeffs[0])
        for c in coeffs[1:]:
            p = scale(multiply(p, t), 1.0, c)
        return p

    near = less_than(w, constant_like(w, 5.0))
    w_near = where(near, scale(w, 1.0, -2.5), constant_like(w, 0.0))
    w_far = scale(sqrt(where(near, constant_like(w, 5.0), w)), 1.0, -3.0)
    return multiply(where(near, horner(w_near, central), horner(w_far, tail)), y)


def erfinv(x: Any, name: str | None = None) -> Any:
    """`paddle.erfinv`: the inverse error function on [-1, 1] (see the module
    docstring for the gradient)."""
    check_float_tensor("erfinv", "x", x)
    one = constant_like(x, 1.0)
    edge = equal(abs(x), one)
    outside = greater_than(abs(x), one)
    inner = where(edge, constant_like(x, 0.0), where(outside, constant_like(x, 0.0), x))
    v = _giles(inner)
    half_root_pi = math.sqrt(math.pi) / 2
    for _ in range(2):
        step = multiply(subtract(erf(v), inner), scale(exp(multiply(v, v)), half_root_pi))
        v = subtract(v, step)
    v = v.detach()
    slope = scale(exp(multiply(v, v)), half_root_pi).detach()
    refined = add(v, multiply(subtract(inner, erf(v)), slope))
    out = where(edge, scale(sign(x), math.inf), refined)
    return where(outside, constant_like(x, math.nan), out, name=name)


_ALL: list[Callable[..., Any]] = [lgamma, digamma, erfinv]

PADDLE: list[Callable[..., Any]] = list(_ALL)
FUNCTIONAL: list[Callable[..., Any]] = []
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {f.__name__: f for f in _ALL}
