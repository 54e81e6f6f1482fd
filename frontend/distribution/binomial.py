"""`paddle.distribution.Binomial` (Paddle 3.3.1's definitions)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import pullback as paddle
from pullback.frontend.distribution import distribution
from pullback.frontend.distribution.distribution import dtype_name, eps_of, inverse_cdf_sample


class Binomial(distribution.Distribution):
    r"""The number of successes in `total_count` independent trials of success
    probability `probs`:

    .. math:: P(X = k) = \binom{n}{k} p^k (1 - p)^{n - k}

    `total_count` (an int or a tensor) is cast to the dtype of `probs` (a float
    gives the default dtype) and both are broadcast.  As in Paddle, `log_prob`
    clips `probs` to `[eps, 1 - eps]` and turns `-inf` into `-eps`; `entropy` and
    `kl_divergence` sum over the support `0..max(total_count)`.  `sample` draws by
    inverse CDF over that support (Paddle calls its `binomial` kernel; the law is
    the same, the random stream is not)."""

    def __init__(self, total_count: Any, probs: Any) -> None:
        self.dtype = paddle.get_default_dtype()
        self.total_count, self.probs = self._to_tensor(total_count, probs)
        super().__init__(tuple(self.total_count.shape))

    probs: Any  # type: ignore[assignment]  # a tensor here, as in Paddle (the base class's method)

    def _to_tensor(self, total_count: Any, probs: Any) -> list[Any]:  # type: ignore[override]
        if isinstance(probs, float):
            probs = distribution.constant(probs, self.dtype)
        else:
            self.dtype = dtype_name(probs.dtype)
        if isinstance(total_count, int):
            total_count = distribution.constant(total_count, self.dtype)
        else:
            total_count = paddle.cast(total_count, self.dtype)
        return paddle.broadcast_tensors([total_count, probs])

    @property
    def mean(self) -> Any:
        """`total_count * probs`."""
        return self.total_count * self.probs

    @property
    def variance(self) -> Any:
        """`total_count * probs * (1 - probs)`."""
        return self.total_count * self.probs * (1 - self.probs)

    def _enumerate_support(self) -> Any:
        """`0, 1, ..., max(total_count)` shaped `[K, 1, ...]` against the batch."""
        top = int(paddle.max(self.total_count).item()) if paddle.in_dynamic_mode() else None
        if top is None:
            raise NotImplementedError(
                "Binomial: the support (entropy, kl_divergence, sample) depends on the values of "
                "total_count, which a static program does not know; use dynamic mode")
        values = paddle.arange(1 + top, dtype=self.dtype)
        return values.reshape([-1] + [1] * len(self.batch_shape))

    def sample(self, shape: Sequence[int] = ()) -> Any:
        """Counts of shape `shape + batch_shape`, in the parameters' dtype."""
        if not isinstance(shape, Sequence):
            raise TypeError("sample shape must be Sequence object.")
        with paddle.no_grad():
            support = self._enumerate_support()
            pmf = paddle.exp(self.log_prob(support))
            pmf = paddle.where(support <= self.total_count, pmf, paddle.zeros_like(pmf))  # (see log_prob)
            return inverse_cdf_sample(pmf, list(shape) + list(self.batch_shape), self.dtype)

    def entropy(self) -> Any:
        """`-sum_k p(k) log p(k)` over the support."""
        values = self._enumerate_support()
        log_prob = self.log_prob(values)
        return -(paddle.exp(log_prob) * log_prob).sum(0)

    def log_prob(self, value: Any) -> Any:
        """`log C(n, k) + k log p + (n - k) log(1 - p)` (see the class for clipping)."""
        value = paddle.cast(value, self.dtype)
        log_comb = (paddle.lgamma(self.total_count + 1.0) - paddle.lgamma(self.total_count - value + 1.0)
                    - paddle.lgamma(value + 1.0))
        eps = eps_of(self.probs.dtype)
        probs = paddle.clip(self.probs, min=eps, max=1 - eps)
        return paddle.nan_to_num(
            log_comb + value * paddle.log(probs) + (self.total_count - value) * paddle.log(1 - probs),
            neginf=-eps)

    def prob(self, value: Any) -> Any:
        """`exp(log_prob(value))`."""
        return paddle.exp(self.log_prob(value))

    def kl_divergence(self, other: Binomial) -> Any:
        """`sum_k p(k) (log p(k) - log q(k))` over this distribution's support.

        With equal total counts this is `n KL(Bernoulli(p) || Bernoulli(q))`, which
        pullback returns: Paddle's sum subtracts `log p(k)` and `log q(k)`, each an
        lgamma difference of size `n log n`, and in float32 loses about `1e-3` of the
        KL for `n` in the thousands (the exact binomial coefficients cancel)."""
        if paddle.in_dynamic_mode() and np.array_equal(
            np.broadcast_to(self.total_count.numpy(), np.broadcast_shapes(self.total_count.shape, other.total_count.shape)),
            np.broadcast_to(other.total_count.numpy(), np.broadcast_shapes(self.total_count.shape, other.total_count.shape)),
        ):
            eps = eps_of(self.probs.dtype)
            p = paddle.clip(self.probs, min=eps, max=1 - eps)
            q = paddle.clip(paddle.cast(other.probs, self.probs.dtype), min=eps, max=1 - eps)
            return self.total_count * (p * (paddle.log(p) - paddle.log(q))
                                       + (1 - p) * (paddle.log1p(-p) - paddle.log1p(-q)))
        support = self._enumerate_support()
        log_prob_1 = self.log_prob(support)
        log_prob_2 = other.log_prob(support)
        return (paddle.exp(log_prob_1) * (log_prob_1 - log_prob_2)).sum(0)
