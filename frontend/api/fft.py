"""`paddle.fft`: the discrete Fourier transforms and their helpers (the `FFT` list
of `frontend/ops/fft.py`)."""

from __future__ import annotations

from pullback.frontend.ops.fft import FFT

globals().update({f.__name__: f for f in FFT})

__all__ = sorted(f.__name__ for f in FFT)
