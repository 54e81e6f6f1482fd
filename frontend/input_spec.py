"""`paddle.static.InputSpec`: the description of a model input (shape, dtype, name)
as `paddle.jit` and high-level APIs take it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from pullback.dialects.pd.dtypes import to_dtype


def _norm_shape(shape: Any) -> tuple[int, ...]:
    if isinstance(shape, int) and not isinstance(shape, bool):
        shape = [shape]
    if not isinstance(shape, (list, tuple)):
        raise TypeError(f"Type of `shape` in InputSpec should be one of (tuple, list), but received {type(shape).__name__}.")
    out = []
    for d in shape:
        if d is None:
            out.append(-1)
        elif isinstance(d, (int, np.integer)) and not isinstance(d, bool):
            if d < -1:
                raise ValueError(f"InputSpec: invalid dimension {d} in shape {list(shape)}")
            out.append(int(d))
        else:
            raise ValueError(
                f"Type of elements in `shape` of InputSpec should be int or None, but received {d!r}"
            )
    return tuple(out)


class InputSpec:
    """A model input's shape (`None`/-1 for a dynamic dimension), dtype and name."""

    def __init__(self, shape: Sequence[int | None], dtype: Any = "float32", name: str | None = None,
                 stop_gradient: bool = False) -> None:
        self.shape = _norm_shape(shape)
        self.dtype = to_dtype(dtype, "InputSpec")
        if name is not None and not isinstance(name, str):
            raise TypeError(f"InputSpec: name must be a str, got {type(name).__name__}")
        self.name = name
        self.stop_gradient = bool(stop_gradient)

    @classmethod
    def from_tensor(cls, tensor: Any, name: str | None = None) -> InputSpec:
        """The spec of a Tensor or Variable (its shape, dtype and, unless given, name)."""
        if not hasattr(tensor, "shape") or not hasattr(tensor, "dtype"):
            raise ValueError(
                f"Input `tensor` should be a Tensor, but received {type(tensor).__name__}."
            )
        return cls(list(tensor.shape), f"{tensor.dtype}", name or getattr(tensor, "name", None))

    @classmethod
    def from_numpy(cls, ndarray: np.ndarray, name: str | None = None) -> InputSpec:
        """The spec of a numpy array."""
        return cls(list(ndarray.shape), ndarray.dtype.name, name)

    def batch(self, batch_size: int | Sequence[int]) -> InputSpec:
        """Prepend a batch dimension (in place; returns self)."""
        if isinstance(batch_size, (list, tuple)):
            if len(batch_size) != 1:
                raise ValueError(
                    f"Length of batch_size: {list(batch_size)} shall be 1, but received {len(batch_size)}."
                )
            batch_size = batch_size[0]
        if not isinstance(batch_size, int) or isinstance(batch_size, bool):
            raise TypeError(f"type(batch_size) shall be `int`, but received {type(batch_size).__name__}.")
        self.shape = (batch_size, *self.shape)
        return self

    def unbatch(self) -> InputSpec:
        """Drop the leading (batch) dimension (in place; returns self)."""
        if not self.shape:
            raise ValueError("Not support to unbatch a InputSpec when len(shape) == 0.")
        self.shape = self.shape[1:]
        return self

    def _key(self) -> tuple[Any, ...]:
        return (self.shape, str.__str__(self.dtype), self.name, self.stop_gradient)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, InputSpec) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"InputSpec(shape={self.shape}, dtype={self.dtype!s}, name={self.name}, "
            f"stop_gradient={self.stop_gradient})"
        )


__all__ = ["InputSpec"]
