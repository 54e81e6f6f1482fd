"""`paddle.device.cuda`: the CUDA devices the driver reports."""

from __future__ import annotations

from pullback.runtime.gpu import cuda as _cuda


def device_count() -> int:
    """How many CUDA devices the driver sees (0 without a driver)."""
    return _cuda.device_count()


__all__ = ["device_count"]
