"""Kernels of the complex-number ops: numpy's complex arithmetic."""

from __future__ import annotations

import numpy as np

from pullback.dialects import pd
from pullback.runtime.interpreter import kernel


@kernel(pd.RealOp)
def real(op: pd.RealOp, x: np.ndarray) -> np.ndarray:
    # A contiguous copy; `np.ascontiguousarray` would make a 0-D x's part 1-D.
    return x.real.copy()


@kernel(pd.ImagOp)
def imag(op: pd.ImagOp, x: np.ndarray) -> np.ndarray:
    return x.imag.copy()


@kernel(pd.ConjOp)
def conj(op: pd.ConjOp, x: np.ndarray) -> np.ndarray:
    return np.conj(x)


@kernel(pd.AngleOp)
def angle(op: pd.AngleOp, x: np.ndarray) -> np.ndarray:
    return np.angle(x)


@kernel(pd.ComplexOp)
def complex_(op: pd.ComplexOp, re: np.ndarray, im: np.ndarray) -> np.ndarray:
    out = pd.DTYPE_BY_ELEM[pd.elem_of(op.results[0].type)].numpy
    return np.asarray(re + 1j * im, dtype=out)


@kernel(pd.AsComplexOp)
def as_complex(op: pd.AsComplexOp, x: np.ndarray) -> np.ndarray:
    out = pd.DTYPE_BY_ELEM[pd.elem_of(op.results[0].type)].numpy
    return np.asarray(x[..., 0] + 1j * x[..., 1], dtype=out)


@kernel(pd.AsRealOp)
def as_real(op: pd.AsRealOp, x: np.ndarray) -> np.ndarray:
    return np.stack([x.real, x.imag], axis=-1)
