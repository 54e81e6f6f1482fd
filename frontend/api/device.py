"""`paddle.device`: which devices exist and which one eager/static code targets.

CUDA support is reported truthfully: pullback always *emits* PTX (llvmlite's NVPTX
target), but running it needs NVIDIA's driver, so `is_compiled_with_cuda()` is True
exactly when the driver library loads, and `cuda.device_count()` asks the driver.
"""

from __future__ import annotations

from pullback.frontend.api import device_cuda as cuda
from pullback.runtime.gpu import cuda as _cuda
from pullback.runtime.places import place_kind

__path__: list[str] = []  # `paddle.device.cuda` comes from the alias finder

_current = "cpu"


def is_compiled_with_cuda() -> bool:
    """True when CUDA programs can run here (the driver library loads)."""
    return _cuda.driver_version() is not None


def get_device() -> str:
    """The current device: `'cpu'` or `'gpu:N'`."""
    return _current


def set_device(device: str) -> str:
    """Select `'cpu'`, `'gpu'` or `'gpu:N'`; a GPU that is not there raises a one-line
    RuntimeError saying why."""
    global _current
    if not isinstance(device, str):
        raise TypeError(f"set_device: expected a string like 'cpu' or 'gpu:0', got {device!r}")
    found = place_kind(device)
    if found is None:
        raise ValueError(f"set_device: unknown device '{device}' (expected 'cpu', 'gpu' or 'gpu:N')")
    kind, index = found
    if kind == "gpu":
        _cuda.require_device(index)
    _current = "cpu" if kind == "cpu" else f"gpu:{index}"
    return _current


__all__ = ["cuda", "get_device", "is_compiled_with_cuda", "set_device"]
