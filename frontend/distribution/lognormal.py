"""`paddle.distribution.LogNormal` (Paddle 3.3.1's definitions): `exp` of a Normal."""

from __future__ import annotations

from typing import Any

import pullback as paddle
from pullback.frontend.distribution.normal import Normal
from pullback.frontend.distribution.transform import ExpTransform
from pullback.frontend.distribution.transformed_distribution import TransformedDistribution


class LogNormal(TransformedDistribution):
    """The distribution of `exp(X)` with `X ~ Normal(loc, scale)` (arguments as for
    `Normal`)."""

    def __init__(self, loc: Any, scale: Any) -> None:
        self._base = Normal(loc=loc, scale=scale)
        self.loc = self._base.loc
        self.scale = self._base.scale
        super().__init__(self._base, [ExpTransform()])

    @property
    def mean(self) -> Any:
        """`exp(loc + scale^2 / 2)`."""
        return paddle.exp(self._base.mean + self._base.variance / 2)

    @property
    def variance(self) -> Any:
        """`expm1(scale^2) exp(2 loc + scale^2)`."""
        return paddle.expm1(self._base.variance) * paddle.exp(2 * self._base.mean + self._base.variance)

    def entropy(self) -> Any:
        """The normal's entropy plus `loc`."""
        return self._base.entropy() + self._base.mean

    def probs(self, value: Any) -> Any:
        """`exp(log_prob(value))`."""
        return paddle.exp(self.log_prob(value))

    def kl_divergence(self, other: LogNormal) -> Any:
        """KL of the underlying normal distributions."""
        return self._base.kl_divergence(other._base)
