"""`paddle.distribution.Dirichlet` (Paddle 3.3.1's definitions), and the gamma
sampler its `sample` needs (written with pullback's random ops)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pullback as paddle
from pullback.frontend.distribution import exponential_family
from pullback.frontend.distribution.distribution import dtype_name

GAMMA_ROUNDS = 12
"""Proposals per value in `log_standard_gamma`: Marsaglia and Tsang's method accepts
one with probability > 0.95, so twelve all fail with probability < 3e-16."""


def log_standard_gamma(alpha: Any) -> Any:
    """The logs of Gamma(alpha, 1) samples, one per element of `alpha` (no gradient).

    Marsaglia and Tsang's method (ACM TOMS 26(3), 2000) for shape `a + 1 >= 1`, with
    `GAMMA_ROUNDS` proposals drawn at once and the first accepted one kept, and the
    boost `G(a) = G(a + 1) * U ** (1 / a)` applied in log space, so that small shapes
    do not underflow."""
    shape = list(alpha.shape)
    dtype = dtype_name(alpha.dtype)
    with paddle.no_grad():
        a = alpha.detach()
        d = (a + 1.0) - 1.0 / 3.0
        c = 1.0 / paddle.sqrt(9.0 * d)
        rounds = [GAMMA_ROUNDS, *shape]
        x = paddle.randn(rounds, dtype=dtype)
        u = paddle.rand(rounds, dtype=dtype)
        v = (1.0 + c * x) ** 3
        v_pos = paddle.clip(v, min=1e-30)
        accept = paddle.logical_and(
            v > 0, paddle.log(u) < 0.5 * x * x + d - d * v_pos + d * paddle.log(v_pos)
        )
        first = paddle.argmax(paddle.cast(accept, "int32"), axis=0, keepdim=True)
        log_g1 = paddle.take_along_axis(paddle.log(d * v_pos), first, axis=0).squeeze(0)
        boost = paddle.log(paddle.rand(shape, dtype=dtype)) / a
        return log_g1 + boost


def _dirichlet(concentration: Any) -> Any:
    """Dirichlet samples, one per distribution of `concentration`'s last axis."""
    log_g = log_standard_gamma(concentration)
    with paddle.no_grad():
        return paddle.nn.functional.softmax(log_g, axis=-1)


class Dirichlet(exponential_family.ExponentialFamily):
    r"""The Dirichlet distribution over the simplex of `concentration`'s last axis:

    .. math:: f(x; \alpha) = \frac{\Gamma(\sum\alpha_i)}{\prod\Gamma(\alpha_i)} \prod x_i^{\alpha_i - 1}

    `concentration` is a tensor of at least one dimension.  `sample` has no gradient
    (Paddle 3.3.1 defines no `rsample`)."""

    def __init__(self, concentration: Any) -> None:
        if len(concentration.shape) < 1 or math.prod(concentration.shape) == 0:
            raise ValueError("`concentration` parameter must be at least one dimensional")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:])

    @property
    def mean(self) -> Any:
        """`concentration / concentration.sum(-1)`."""
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def variance(self) -> Any:
        """`a_i (a_0 - a_i) / (a_0^2 (a_0 + 1))` with `a_0` the total concentration."""
        concentration0 = self.concentration.sum(-1, keepdim=True)
        return (
            self.concentration
            * (concentration0 - self.concentration)
            / (concentration0.pow(2) * (concentration0 + 1))
        )

    def sample(self, shape: Sequence[int] = ()) -> Any:
        """Samples of shape `shape + batch_shape + event_shape`."""
        return _dirichlet(self.concentration.expand(list(self._extend_shape(shape))))

    def prob(self, value: Any) -> Any:
        """`exp(log_prob(value))`."""
        return paddle.exp(self.log_prob(value))

    def log_prob(self, value: Any) -> Any:
        """The log density at points `value` of the simplex."""
        return (
            (paddle.log(value) * (self.concentration - 1.0)).sum(-1)
            + paddle.lgamma(self.concentration.sum(-1))
            - paddle.lgamma(self.concentration).sum(-1)
        )

    def entropy(self) -> Any:
        """The entropy, of the batch shape."""
        concentration0 = self.concentration.sum(-1)
        k = self.concentration.shape[-1]
        return (
            paddle.lgamma(self.concentration).sum(-1)
            - paddle.lgamma(concentration0)
            - (k - concentration0) * paddle.digamma(concentration0)
            - ((self.concentration - 1.0) * paddle.digamma(self.concentration)).sum(-1)
        )

    @property
    def _natural_parameters(self) -> tuple[Any]:
        return (self.concentration,)

    def _log_normalizer(self, *args: Any) -> Any:
        (x,) = args
        return x.lgamma().sum(-1) - paddle.lgamma(x.sum(-1))
