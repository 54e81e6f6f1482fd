"""`paddle.distribution.TransformedDistribution` (Paddle 3.3.1's definitions)."""

from __future__ import annotations

import typing
from collections.abc import Sequence
from typing import Any

from pullback.frontend.distribution import distribution, independent, transform
from pullback.frontend.distribution.distribution import sum_rightmost


class TransformedDistribution(distribution.Distribution):
    """The distribution of `transforms` (applied in order) of a `base` distribution's
    values; `log_prob` adds the inverse transforms' log-determinant Jacobians."""

    def __init__(self, base: distribution.Distribution, transforms: Sequence[transform.Transform]) -> None:
        if not isinstance(base, distribution.Distribution):
            raise TypeError(f"Expected type of 'base' is Distribution, but got {type(base)}.")
        if not isinstance(transforms, typing.Sequence):
            raise TypeError(
                f"Expected type of 'transforms' is Sequence[Transform] or Chain, but got {type(transforms)}."
            )
        if not all(isinstance(t, transform.Transform) for t in transforms):
            raise TypeError("All element of transforms must be Transform type.")
        self._base = base
        self._transforms = transforms
        if not transforms:
            super().__init__(base.batch_shape, base.event_shape)
            return
        chain = transform.ChainTransform(transforms)
        base_shape = tuple(base.batch_shape) + tuple(base.event_shape)
        if len(base_shape) < chain._domain.event_rank:
            raise ValueError(
                f"'base' needs to have shape with size at least {chain._domain.event_rank}, bug got {len(base_shape)}."
            )
        if chain._domain.event_rank > len(base.event_shape):
            base = independent.Independent(base, chain._domain.event_rank - len(base.event_shape))
        transformed_shape = chain.forward_shape(tuple(base.batch_shape) + tuple(base.event_shape))
        transformed_event_rank = chain._codomain.event_rank + max(
            len(base.event_shape) - chain._domain.event_rank, 0
        )
        cut = len(transformed_shape) - transformed_event_rank
        super().__init__(transformed_shape[:cut], transformed_shape[cut:])

    def sample(self, shape: Sequence[int] = ()) -> Any:
        """The transforms of the base distribution's samples."""
        x = self._base.sample(shape)
        for t in self._transforms:
            x = t.forward(x)
        return x

    def rsample(self, shape: Sequence[int] = ()) -> Any:
        """The transforms of the base distribution's reparameterized samples."""
        x = self._base.rsample(shape)
        for t in self._transforms:
            x = t.forward(x)
        return x

    def log_prob(self, value: Any) -> Any:
        """The base's log probability of the inverse-transformed `value`, minus the
        transforms' log-determinant Jacobians."""
        log_prob: Any = 0.0
        y = value
        event_rank = len(self.event_shape)
        for t in reversed(self._transforms):
            x = t.inverse(y)
            event_rank += t._domain.event_rank - t._codomain.event_rank
            log_prob = log_prob - sum_rightmost(t.forward_log_det_jacobian(x), event_rank - t._domain.event_rank)
            y = x
        return log_prob + sum_rightmost(self._base.log_prob(y), event_rank - len(self._base.event_shape))


transform.TRANSFORMED.append(TransformedDistribution)
