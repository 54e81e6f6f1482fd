"""How large one tensor of a `pd` program may be, checked the same way on every backend.

A value of 10^15 elements (a `pd.fill_constant` of shape [10^6, 10^6, 10^3]) or of
2^64 elements cannot be held by any machine running pullback.  Without a check the
interpreter failed at once (numpy's MemoryError) but the compiled backend, whose
fused loops need no buffer for it, ran 10^15 iterations for hours, and a 2^64-element
shape overflowed its 64-bit index arithmetic.  `check_tensor_size` refuses such a
value before anything is allocated or run, with one message on every backend:

- the interpreter checks each op's statically shaped results before running its
  kernel, and every result's actual size after it;
- the compiled backends check every value's shape once per feed shapes, when they
  plan the output shapes (`lowering/shapes.py`'s `plan_shapes`), before the native
  code runs.

The bound is `PULLBACK_MAX_TENSOR_BYTES` bytes if set, else this machine's
physical memory (a tensor larger than that cannot be held at once).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence

from xdsl.ir import Attribute, Operation

from pullback.dialects.pd.dtypes import DTYPE_BY_ELEM

_FALLBACK_BYTES = 1 << 48
"""The bound where the physical memory cannot be read (256 TiB)."""


class TensorTooLarge(ValueError):
    """A value of the program would exceed `max_tensor_bytes()`; `failed_op` is the
    op that makes it."""

    def __init__(self, message: str, failed_op: Operation | None = None) -> None:
        super().__init__(message)
        self.failed_op = failed_op


@functools.cache
def _physical_memory() -> int:
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return _FALLBACK_BYTES


def max_tensor_bytes() -> int:
    """The bound in bytes (`PULLBACK_MAX_TENSOR_BYTES`, else the physical memory)."""
    raw = os.environ.get("PULLBACK_MAX_TENSOR_BYTES", "").strip()
    if raw:
        try:
            value = int(raw)
        except ValueError:
            raise ValueError(f"PULLBACK_MAX_TENSOR_BYTES must be a number of bytes, got {raw!r}") from None
        if value < 1:
            raise ValueError(f"PULLBACK_MAX_TENSOR_BYTES must be a number of bytes, got {raw!r}")
        return value
    return _physical_memory()


def _bytes(n: int) -> str:
    """`3.55 PiB`, `512 bytes`: a size in words."""
    if n < 1024:
        return f"{n} bytes"
    x = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        x /= 1024
        if x < 1024:
            return f"{x:.3g} {unit}"
    return f"{x / 1024:.3g} EiB"


def _itemsize(elem: Attribute) -> int:
    info = DTYPE_BY_ELEM.get(elem)
    return 8 if info is None else int(info.numpy.itemsize)


def check_tensor_size(op: Operation, index: int, shape: Sequence[int], elem: Attribute,
                      limit: int | None = None) -> None:
    """Raise `TensorTooLarge` if result `index` of `op`, of this concrete `shape` and
    element type, exceeds the bound (`limit`, default `max_tensor_bytes()`).
    Dynamic (negative) dimensions are not counted."""
    n = 1
    for d in shape:
        if d > 0:
            n *= d
    size = n * _itemsize(elem)
    bound = max_tensor_bytes() if limit is None else limit
    if size <= bound:
        return
    name = op.results[index].name_hint if index < len(op.results) else None
    what = f"result {index} (%{name})" if name else f"result {index}"
    info = DTYPE_BY_ELEM.get(elem)
    dtype = info.name if info is not None else str(elem)
    raise TensorTooLarge(
        f"'{op.name}': {what} would be a {dtype} tensor of shape {list(shape)}: {_bytes(size)}, more than the "
        f"{_bytes(bound)} one tensor may take (PULLBACK_MAX_TENSOR_BYTES; default: this machine's memory)",
        op,
    )


__all__ = ["TensorTooLarge", "check_tensor_size", "max_tensor_bytes"]
