"""`paddle.distribution.Beta` (Paddle 3.3.1's definitions): a two-category
Dirichlet."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import pullback as paddle
from pullback.frontend.distribution import dirichlet, exponential_family
from pullback.frontend.distribution.distribution import shape_list


class Beta(exponential_family.ExponentialFamily):
    r"""The beta distribution on [0, 1] with shapes `alpha` and `beta`:

    .. math:: f(x; \alpha, \beta) = \frac{x^{\alpha-1}(1-x)^{\beta-1}}{B(\alpha, \beta)}

    `alpha` and `beta` are numbers (float32 tensors of shape `[]`) or tensors,
    broadcast together.  As in Paddle 3.3.1, `sample` takes the first component of
    a Dirichlet sample and then squeezes a last axis of size 1 (so a batch shape
    ending in 1 loses that axis), has no gradient, and there is no `rsample`."""

    def __init__(self, alpha: Any, beta: Any) -> None:
        if isinstance(alpha, numbers.Real):
            alpha = paddle.full(shape=[], fill_value=alpha)
        if isinstance(beta, numbers.Real):
            beta = paddle.full(shape=[], fill_value=beta)
        self.alpha, self.beta = paddle.broadcast_tensors([alpha, beta])
        self._dirichlet = dirichlet.Dirichlet(paddle.stack([self.alpha, self.beta], -1))
        super().__init__(self._dirichlet._batch_shape)

    @property
    def mean(self) -> Any:
        """`alpha / (alpha + beta)`."""
        return self.alpha / (self.alpha + self.beta)

    @property
    def variance(self) -> Any:
        """`alpha beta / ((alpha + beta)^2 (alpha + beta + 1))`."""
        total = self.alpha + self.beta
        return self.alpha * self.beta / (total.pow(2) * (total + 1))

    def prob(self, value: Any) -> Any:
        """`exp(log_prob(value))`."""
        return paddle.exp(self.log_prob(value))

    def log_prob(self, value: Any) -> Any:
        """The log density at `value`."""
        return self._dirichlet.log_prob(paddle.stack([value, 1.0 - value], -1))

    def sample(self, shape: Sequence[int] = ()) -> Any:
        """Samples of shape `shape + batch_shape` (see the class for the squeeze)."""
        first = self._dirichlet.sample(shape_list(shape))[..., 0]
        return first if len(first.shape) == 0 else paddle.squeeze(first, axis=-1)  # Paddle: 0-D unchanged

    def entropy(self) -> Any:
        """The entropy (of the two-category Dirichlet)."""
        return self._dirichlet.entropy()

    @property
    def _natural_parameters(self) -> tuple[Any, Any]:
        return (self.alpha, self.beta)

    def _log_normalizer(self, *args: Any) -> Any:
        x, y = args
        return paddle.lgamma(x) + paddle.lgamma(y) - paddle.lgamma(x + y)
