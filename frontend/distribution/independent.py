"""`paddle.distribution.Independent` (Paddle 3.3.1's definitions)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pullback.frontend.distribution import distribution
from pullback.frontend.distribution.distribution import sum_rightmost


class Independent(distribution.Distribution):
    """`base` with its `reinterpreted_batch_rank` rightmost batch axes made event
    axes: `log_prob` and `entropy` sum over them."""

    def __init__(self, base: distribution.Distribution, reinterpreted_batch_rank: int) -> None:
        if not isinstance(base, distribution.Distribution):
            raise TypeError(f"Expected type of 'base' is Distribution, but got {type(base)}")
        if not 0 < reinterpreted_batch_rank <= len(base.batch_shape):
            raise ValueError(
                f"Expected 0 < reinterpreted_batch_rank <= {len(base.batch_shape)}, but got "
                f"{reinterpreted_batch_rank}"
            )
        self._base = base
        self._reinterpreted_batch_rank = reinterpreted_batch_rank
        shape = tuple(base.batch_shape) + tuple(base.event_shape)
        cut = len(base.batch_shape) - reinterpreted_batch_rank
        super().__init__(batch_shape=shape[:cut], event_shape=shape[cut:])

    @property
    def mean(self) -> Any:
        return self._base.mean

    @property
    def variance(self) -> Any:
        return self._base.variance

    def sample(self, shape: Sequence[int] = ()) -> Any:
        """The base distribution's samples."""
        return self._base.sample(shape)

    def log_prob(self, value: Any) -> Any:
        """The base's log probability summed over the reinterpreted axes."""
        return sum_rightmost(self._base.log_prob(value), self._reinterpreted_batch_rank)

    def prob(self, value: Any) -> Any:
        return self.log_prob(value).exp()

    def entropy(self) -> Any:
        """The base's entropy summed over the reinterpreted axes."""
        return sum_rightmost(self._base.entropy(), self._reinterpreted_batch_rank)

    def _sum_rightmost(self, value: Any, n: int) -> Any:
        return sum_rightmost(value, n)
