"""`paddle.distribution.Poisson` (Paddle 3.3.1's definitions)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pullback as paddle
from pullback.frontend.distribution import distribution
from pullback.frontend.distribution.distribution import dtype_name, eps_of, inverse_cdf_sample


class Poisson(distribution.Distribution):
    r"""The number of events at rate `rate`:

    .. math:: P(X = k) = \frac{\lambda^k e^{-\lambda}}{k!}

    A number becomes a one-element tensor of the default dtype (`batch_shape`
    `(1,)`, as in Paddle).  `entropy`, `kl_divergence` and `sample` use Paddle's
    bounded support `0 .. max(rate + 30 sqrt(max(rate, 1)))` (mass beyond it is
    below float precision); `sample` draws by inverse CDF over it (Paddle calls its
    `poisson` kernel: the same law, another random stream).  These need the rate's
    values, so they run in dynamic mode."""

    def __init__(self, rate: Any) -> None:
        self.dtype = paddle.get_default_dtype()
        self.rate = self._to_tensor(rate)
        super().__init__(tuple(self.rate.shape))

    def _to_tensor(self, rate: Any) -> Any:  # type: ignore[override]
        if isinstance(rate, (float, int)):
            return distribution.constant([rate], self.dtype)
        self.dtype = dtype_name(rate.dtype)
        return rate

    @property
    def mean(self) -> Any:
        """`rate`."""
        return self.rate

    @property
    def variance(self) -> Any:
        """`rate`."""
        return self.rate

    def _enumerate_bounded_support(self, rate: Any) -> Any:
        """`0, 1, ..., upper - 1` with `upper = max(int(rate + 30 s))`, `s = sqrt(max
        rate)` when that is at least 1, else 1 (Paddle's bound)."""
        if not paddle.in_dynamic_mode():
            raise NotImplementedError(
                "Poisson: the support (entropy, kl_divergence, sample) depends on the values of "
                "rate, which a static program does not know; use dynamic mode")
        top = float(paddle.max(rate).item())
        s_max = top ** 0.5 if top >= 1.0 else 1.0
        upper = int(paddle.max(paddle.cast(rate + 30 * s_max, "int32")).item())
        return paddle.arange(0, upper, dtype=self.dtype)

    def sample(self, shape: Sequence[int] = ()) -> Any:
        """Counts of shape `shape + batch_shape`, in the rate's dtype."""
        if not isinstance(shape, Sequence):
            raise TypeError("sample shape must be Sequence object.")
        with paddle.no_grad():
            support = self._enumerate_bounded_support(self.rate).reshape([-1] + [1] * len(self.batch_shape))
            pmf = paddle.exp(self.log_prob(support))
            return inverse_cdf_sample(pmf, list(shape) + list(self.batch_shape), self.dtype)

    def entropy(self) -> Any:
        """`-sum_k p(k) log p(k)` over the bounded support (0 where `rate` is 0)."""
        values = self._enumerate_bounded_support(self.rate).reshape([-1] + [1] * len(self.batch_shape))
        log_prob = self.log_prob(values)
        proposed = -(paddle.exp(log_prob) * log_prob).sum(0)
        mask = paddle.cast(self.rate != 0.0, self.dtype)
        return proposed * mask

    def log_prob(self, value: Any) -> Any:
        """`-rate + k log(rate) - lgamma(k + 1)`, `-inf` read as `-eps` (Paddle's)."""
        value = paddle.cast(value, self.dtype)
        eps = eps_of(self.rate.dtype)
        return paddle.nan_to_num(-self.rate + value * paddle.log(self.rate) - paddle.lgamma(value + 1),
                                 neginf=-eps)

    def prob(self, value: Any) -> Any:
        """`exp(log_prob(value))`."""
        return paddle.exp(self.log_prob(value))

    def kl_divergence(self, other: Poisson) -> Any:
        """`sum_k p(k) (log p(k) - log q(k))` over the support bounded by both rates."""
        if tuple(self.batch_shape) != tuple(other.batch_shape):
            raise ValueError("KL divergence of two poisson distributions should share the same `batch_shape`.")
        rate_max = paddle.max(paddle.maximum(self.rate, other.rate))
        support_max = self._enumerate_bounded_support(rate_max)
        a_max = int(paddle.max(support_max).item())
        common = paddle.arange(0, a_max, dtype=self.dtype).reshape([-1] + [1] * len(self.batch_shape))
        log_prob_1 = self.log_prob(common)
        log_prob_2 = other.log_prob(common)
        return (paddle.exp(log_prob_1) * (log_prob_1 - log_prob_2)).sum(0)
