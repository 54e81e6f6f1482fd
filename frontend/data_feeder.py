"""`paddle.base.DataFeeder`: Paddle 1.x's conversion of a minibatch (a list of
samples, one entry per feed variable) into the feed dict `Executor.run` takes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from pullback.dialects.bfloat16 import host_cast
from pullback.dialects.pd.dtypes import DTYPE_BY_NAME
from pullback.frontend.framework import Variable, default_main_program


class DataFeeder:
    """Builds feed dicts for `feed_list` (Variables or their names) from
    minibatches: `feeder.feed([(x0, y0), (x1, y1), ...])` stacks each variable's
    entries into one array of the variable's dtype, shaped `[batch, *shape[1:]]`."""

    def __init__(self, feed_list: Sequence[Any], place: Any = None, program: Any = None) -> None:
        program = program or default_main_program()
        self.feed_vars: list[Variable] = []
        for i, v in enumerate(feed_list):
            if isinstance(v, str):
                v = program.global_block().var(v)
            if not isinstance(v, Variable):
                raise TypeError(
                    f"DataFeeder: feed_list[{i}] must be a Variable or a name, got {type(v).__name__}"
                )
            self.feed_vars.append(v)
        self.place = place

    def feed(self, iterable: Iterable[Sequence[Any]]) -> dict[str, np.ndarray]:
        """The feed dict of one minibatch."""
        samples = list(iterable)
        out: dict[str, np.ndarray] = {}
        for i, var in enumerate(self.feed_vars):
            try:
                column = [sample[i] for sample in samples]
            except (IndexError, TypeError):
                raise ValueError(
                    f"DataFeeder: each sample must have {len(self.feed_vars)} entries, one per "
                    "feed variable"
                ) from None
            arr = host_cast(column, DTYPE_BY_NAME[f"{var.dtype}"].numpy)
            tail = var.shape[1:]
            if tail and all(d >= 0 for d in tail) and arr.size == len(samples) * int(np.prod(tail)):
                arr = arr.reshape([len(samples), *tail])
            out[var.name] = arr
        return out


__all__ = ["DataFeeder"]
