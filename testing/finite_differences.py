"""Float64 central finite differences: the one numeric-gradient helper of the tests,
`check_vjp`, `check_eager_grad` and the differential fuzzer.

* `fd_grad(f, x)`: the gradient of a scalar function `f` at the array `x`, shaped
  like `x` (`(f(x + h e_j) - f(x - h e_j)) / 2h` for each element `j`);
* `fd_jacobian(f, x)`: the `[f(x).size, x.size]` Jacobian of an array function;
* `fd_complex_grad(f, z)`: the gradient of a real scalar function of a complex
  array in Paddle's convention (`d/d re + i d/d im`), each part perturbed in turn;
* `central_differences(f, x)`: the evaluations both are made of, one element at a
  time, for callers that judge each element themselves (the fuzzer skips kinks,
  where the one-sided differences disagree).

`x` is copied to float64 and each evaluation gets a fresh copy with one element
moved, so `f` may keep or change the array it is given.  The step is `eps`, or
`eps * max(1, |x_j|)` with `relative=True`.  For a function of several arrays,
differentiate in one of them: `fd_grad(lambda a: f(a, y), x)`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np


def central_differences(f: Callable[[np.ndarray], Any], x: Any, eps: float = 1e-6, *,
                        relative: bool = False) -> Iterator[tuple[int, Any, Any, float]]:
    """For each element `j` of `x` in row-major order: `(j, f(x - h e_j), f(x + h e_j), h)`
    (`f` evaluated at `x + h e_j` first)."""
    x0 = np.array(x, dtype=np.float64)
    for j in range(x0.size):
        h = eps * max(1.0, abs(float(x0.flat[j]))) if relative else eps
        up = x0.copy()
        up.flat[j] += h
        hi = f(up)
        down = x0.copy()
        down.flat[j] -= h
        lo = f(down)
        yield j, lo, hi, h


def _scalar(v: Any) -> float:
    """A scalar function's value as a float (a number, or an array of one element)."""
    a = np.asarray(v, dtype=np.float64)
    if a.size != 1:
        raise ValueError(f"fd_grad: the function returned {a.size} values, not one (fd_jacobian takes arrays)")
    return float(a.reshape(()))


def fd_grad(f: Callable[[np.ndarray], Any], x: Any, eps: float = 1e-6, *, relative: bool = False) -> np.ndarray:
    """The float64 gradient of the scalar function `f` at `x` by central
    differences, shaped like `x`."""
    g = np.zeros(np.shape(x), dtype=np.float64)
    for j, lo, hi, h in central_differences(f, x, eps, relative=relative):
        g.flat[j] = (_scalar(hi) - _scalar(lo)) / (2 * h)
    return g


def fd_jacobian(f: Callable[[np.ndarray], Any], x: Any, eps: float = 1e-6) -> np.ndarray:
    """The float64 Jacobian `[f(x).size, x.size]` of the array function `f` at `x`
    (both flattened row-major) by central differences."""
    cols = [(np.asarray(hi, dtype=np.float64).ravel() - np.asarray(lo, dtype=np.float64).ravel()) / (2 * h)
            for _, lo, hi, h in central_differences(f, x, eps)]
    return np.stack(cols, axis=1)


def fd_complex_grad(f: Callable[[np.ndarray], Any], z: Any, eps: float = 1e-6) -> np.ndarray:
    """The gradient of the real scalar function `f` at the complex array `z` in
    Paddle's convention, `df/d re(z) + i df/d im(z)`, by central differences in the
    real and then the imaginary part of each element (complex128)."""
    z0 = np.array(z, dtype=np.complex128)
    re = fd_grad(lambda a: f(a + 1j * z0.imag), z0.real, eps)
    im = fd_grad(lambda b: f(z0.real + 1j * b), z0.imag, eps)
    return re + 1j * im


__all__ = ["central_differences", "fd_complex_grad", "fd_grad", "fd_jacobian"]
