"""Kernels of the Fourier transforms: numpy's pocketfft (`np.fft`), as Paddle's CPU
kernels (pocketfft too).  numpy computes in double precision; the interpreter stores
each result in the op's dtype (complex64 / float32 for single-precision inputs)."""

from __future__ import annotations

import numpy as np

from typing import Any

from pullback.dialects import pd
from pullback.runtime.interpreter import kernel

_SWAP: dict[str, Any] = {"backward": "forward", "forward": "backward", "ortho": "ortho"}
"""A norm seen from the other direction: ihfft(x, norm) is conj(rfft(x, swap(norm)))."""


def _params(op: pd.PdOp) -> tuple[list[int], Any]:
    """The transformed axes and the norm (one of `pd.NORMS`, numpy's spelling)."""
    return list(op.prop("axes")), op.prop("normalization")


@kernel(pd.FftC2COp)
def fft_c2c(op: pd.FftC2COp, x: np.ndarray) -> np.ndarray:
    axes, norm = _params(op)
    fn = np.fft.fftn if op.prop("forward") else np.fft.ifftn
    return fn(x, axes=axes, norm=norm)


@kernel(pd.FftR2COp)
def fft_r2c(op: pd.FftR2COp, x: np.ndarray) -> np.ndarray:
    axes, norm = _params(op)
    if op.prop("forward"):
        full = np.fft.fftn(x, axes=axes, norm=norm)
    else:  # ihfftn: the conjugate of the forward transform, scaled as the inverse
        full = np.conj(np.fft.fftn(x, axes=axes, norm=_SWAP[norm]))
    if op.prop("onesided"):
        last = axes[-1] % x.ndim
        full = full[(slice(None),) * last + (slice(0, x.shape[last] // 2 + 1),)]
    return full


@kernel(pd.FftC2ROp)
def fft_c2r(op: pd.FftC2ROp, x: np.ndarray) -> np.ndarray:
    axes, norm = _params(op)
    s = [x.shape[a] for a in axes[:-1]] + [pd.c2r_length(op)]
    if op.prop("forward"):  # hfftn: irfftn of the conjugate, scaled as the forward
        return np.fft.irfftn(np.conj(x), s=s, axes=axes, norm=_SWAP[norm])
    return np.fft.irfftn(x, s=s, axes=axes, norm=norm)
