"""`paddle.batch`: Paddle's reader decorator grouping samples into minibatches."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any


def batch(reader: Callable[[], Any], batch_size: int, drop_last: bool = False) -> Callable[[], Iterator[list[Any]]]:
    """A reader yielding lists of `batch_size` samples of `reader()` (the last,
    shorter one too unless `drop_last`)."""
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
        raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")

    def batch_reader() -> Iterator[list[Any]]:
        chunk: list[Any] = []
        for sample in reader():
            chunk.append(sample)
            if len(chunk) == batch_size:
                yield chunk
                chunk = []
        if chunk and not drop_last:
            yield chunk

    return batch_reader


__all__ = ["batch"]
