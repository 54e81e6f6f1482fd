"""Paddle's places, one hierarchy for the executor and eager mode.

`CPUPlace()` and `CUDAPlace(i)` are what `Executor(place)` runs on and what
`Tensor.place` answers (eager tensors live on the CPU).  As in Paddle, places are
equal when they are the same kind of device with the same id
(`paddle.CPUPlace() == x.place`), never equal to a string, and print as
`Place(cpu)` / `Place(gpu:0)`.  `to_place` reads the `place=` / `device=` arguments
Paddle takes (a place, `'cpu'`, `'gpu'`, `'gpu:1'`, `'cuda:1'`).
"""

from __future__ import annotations

import importlib
import os
import re
from collections.abc import Sequence
from typing import Any


class Place:
    """Where a program runs or a tensor lives (Paddle's `Place`)."""

    kind = "undefined"
    """`'cpu'` or `'gpu'`, as the place prints."""

    device_id = 0
    """The device's index among those of its kind (0 for the CPU)."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Place) and (self.kind, self.device_id) == (other.kind, other.device_id)

    def __hash__(self) -> int:
        return hash((self.kind, self.device_id))

    def is_cpu_place(self) -> bool:
        """True for `CPUPlace`."""
        return self.kind == "cpu"

    def is_gpu_place(self) -> bool:
        """True for `CUDAPlace`."""
        return self.kind == "gpu"

    def is_cuda_pinned_place(self) -> bool:
        """False: pullback has no pinned host memory."""
        return False

    def is_xpu_place(self) -> bool:
        """False: pullback has no XPU support."""
        return False

    def gpu_device_id(self) -> int:
        """The GPU index (Paddle's spelling)."""
        return self.device_id

    def __repr__(self) -> str:
        return f"Place({self.kind})" if self.kind == "cpu" else f"Place({self.kind}:{self.device_id})"

    __str__ = __repr__


class CPUPlace(Place):
    """The host CPU."""

    kind = "cpu"


class CUDAPlace(Place):
    """GPU number `device_id`; raises RuntimeError when there is no such GPU."""

    kind = "gpu"

    def __init__(self, device_id: int = 0) -> None:
        if not isinstance(device_id, int) or isinstance(device_id, bool) or device_id < 0:
            raise ValueError(f"CUDAPlace: device_id must be an int >= 0, got {device_id!r}")
        try:
            cuda = importlib.import_module("pullback.runtime.gpu.cuda")
        except ImportError:
            raise RuntimeError(
                f"CUDAPlace({device_id}): this pullback has no CUDA support; use CPUPlace()"
            ) from None
        cuda.require_device(device_id)  # one-line RuntimeError naming the reason
        self.device_id = device_id

    def get_device_id(self) -> int:
        """The GPU index."""
        return self.device_id


CPU = CPUPlace()
"""The place of every eager tensor."""


def cuda_device_count() -> int:
    """GPUs usable through `pullback.runtime.gpu.cuda` (0 when that support is absent)."""
    try:
        cuda = importlib.import_module("pullback.runtime.gpu.cuda")
    except ImportError:
        return 0
    try:
        return int(cuda.device_count())
    except Exception:  # noqa: BLE001 - a broken driver means no usable GPU
        return 0


def cpu_places(device_count: int | None = None) -> list[CPUPlace]:
    """`device_count` CPU places (default: `CPU_NUM` or 1)."""
    n = device_count if device_count is not None else int(os.environ.get("CPU_NUM", "1"))
    return [CPUPlace() for _ in range(n)]


def cuda_places(device_ids: Sequence[int] | None = None) -> list[CUDAPlace]:
    """A CUDA place per GPU id (default: every visible GPU)."""
    ids = list(device_ids) if device_ids is not None else list(range(cuda_device_count()))
    return [CUDAPlace(i) for i in ids]


_GPU = re.compile(r"(?:gpu|cuda)(?::(\d+))?")


def place_kind(spec: Any) -> tuple[str, int] | None:
    """`(kind, device_id)` of a place or of a string Paddle reads as one (`'cpu'`,
    `'gpu'`, `'gpu:1'`, `'cuda:1'`, any case), without making the place (a
    `CUDAPlace` checks for its GPU); None for anything else."""
    if isinstance(spec, Place):
        return spec.kind, spec.device_id
    if not isinstance(spec, str):
        return None
    text = spec.strip().lower()
    if text == "cpu":
        return "cpu", 0
    m = _GPU.fullmatch(text)
    if m is not None:
        return "gpu", int(m.group(1) or 0)
    return None


def to_cpu_place(spec: Any, api: str) -> CPUPlace | None:
    """The place a CPU-only API was given (`to_tensor(place=...)`, `Layer.to(device=...)`):
    None for None, the CPU for `'cpu'` or `CPUPlace()`; ValueError for another
    device or what is no place (as Paddle)."""
    if spec is None:
        return None
    found = place_kind(spec)
    if found is None or found[0] != "cpu":
        raise ValueError(
            f"{api}: eager tensors live on the CPU; place must be None, 'cpu' or CPUPlace(), got {spec!r}"
        )
    return CPU


__all__ = [
    "CPU",
    "CPUPlace",
    "CUDAPlace",
    "Place",
    "cpu_places",
    "cuda_device_count",
    "cuda_places",
    "place_kind",
    "to_cpu_place",
]
