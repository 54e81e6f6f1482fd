"""`paddle.distribution.ContinuousBernoulli` (Paddle 3.3.1's definitions)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pullback as paddle
from pullback.frontend.distribution import distribution
from pullback.frontend.distribution.distribution import constant, dtype_name, eps_of


class ContinuousBernoulli(distribution.Distribution):
    r"""The continuous Bernoulli distribution on `[0, 1]` with parameter `probs`:

    .. math:: f(x) = C(\lambda) \lambda^x (1 - \lambda)^{1 - x}

    `probs` is clipped to `[eps, 1 - eps]`; a number becomes a one-element tensor of
    the default dtype.  Within `lims` (around 1/2, where the closed forms lose
    precision) the normalizer, mean and variance use Paddle's Taylor expansions.
    `rsample` is the inverse CDF of uniforms, differentiable in `probs`."""

    def __init__(self, probs: Any, lims: tuple[float, float] = (0.499, 0.501)) -> None:
        self.dtype = paddle.get_default_dtype()
        self.probs = self._to_tensor(probs)
        self.lims = constant(list(lims), self.dtype)
        eps = eps_of(self.probs.dtype)
        self.probs = paddle.clip(self.probs, min=eps, max=1 - eps)
        super().__init__(tuple(self.probs.shape))

    probs: Any  # type: ignore[assignment]  # a tensor here, as in Paddle (the base class's method)

    def _to_tensor(self, probs: Any) -> Any:  # type: ignore[override]
        if isinstance(probs, (float, int)):
            return constant([probs], self.dtype)
        self.dtype = dtype_name(probs.dtype)
        return probs

    def _c(self, value: float) -> Any:
        return constant(value, self.dtype)

    def _cut_support_region(self) -> Any:
        """Where `probs` is outside `lims` (the closed forms apply)."""
        return paddle.logical_or(self.probs <= self.lims[0], self.probs > self.lims[1])

    def _cut_probs(self) -> Any:
        return paddle.where(self._cut_support_region(), self.probs, self.lims[0] * paddle.ones_like(self.probs))

    @staticmethod
    def _tanh_inverse(value: Any) -> Any:
        return 0.5 * (paddle.log1p(value) - paddle.log1p(-value))

    def _log_constant(self) -> Any:
        """`log C(probs)`, the log normalizer."""
        cut = self._cut_probs()
        half = self._c(0.5)
        below = paddle.where(cut <= half, cut, paddle.zeros_like(cut))
        above = paddle.where(cut >= half, cut, paddle.ones_like(cut))
        proposed = paddle.log(2.0 * paddle.abs(self._tanh_inverse(1.0 - 2.0 * cut))) - paddle.where(
            cut <= half, paddle.log1p(-2.0 * below), paddle.log(2.0 * above - 1.0))
        x = paddle.square(self.probs - 0.5)
        taylor = paddle.log(self._c(2.0)) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return paddle.where(self._cut_support_region(), proposed, taylor)

    @property
    def mean(self) -> Any:
        """`p / (2p - 1) + 1 / (2 artanh(1 - 2p))` (Taylor expansion near 1/2)."""
        cut = self._cut_probs()
        proposed = cut / (2.0 * cut - 1.0) + self._c(1.0) / (2.0 * self._tanh_inverse(1.0 - 2.0 * cut))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * paddle.square(x)) * x
        return paddle.where(self._cut_support_region(), proposed, taylor)

    @property
    def variance(self) -> Any:
        """`p (p - 1) / (1 - 2p)^2 + 1 / (log1p(-p) - log p)^2` (Taylor near 1/2)."""
        cut = self._cut_probs()
        proposed = (cut * (cut - 1.0) / paddle.square(1.0 - 2.0 * cut)
                    + self._c(1.0) / paddle.square(paddle.log1p(-cut) - paddle.log(cut)))
        x = paddle.square(self.probs - 0.5)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return paddle.where(self._cut_support_region(), proposed, taylor)

    def sample(self, shape: Sequence[int] = ()) -> Any:
        """`rsample(shape)` without gradient."""
        with paddle.no_grad():
            return self.rsample(shape)

    def rsample(self, shape: Sequence[int] = ()) -> Any:
        """`icdf(u)` for uniforms `u` of shape `shape + batch_shape`."""
        if not isinstance(shape, Sequence):
            raise TypeError("sample shape must be Sequence object.")
        u = paddle.uniform(list(shape) + list(self.batch_shape), dtype=self.dtype, min=0.0, max=1.0)
        return self.icdf(u)

    def log_prob(self, value: Any) -> Any:
        """`log C + x log p + (1 - x) log(1 - p)` (`-inf` read as `-eps`)."""
        value = paddle.cast(value, self.dtype)
        eps = eps_of(self.probs.dtype)
        cross_entropy = paddle.nan_to_num(
            value * paddle.log(self.probs) + (1.0 - value) * paddle.log(1 - self.probs), neginf=-eps)
        return self._log_constant() + cross_entropy

    def prob(self, value: Any) -> Any:
        """`exp(log_prob(value))`."""
        return paddle.exp(self.log_prob(value))

    def entropy(self) -> Any:
        """`-log C + mean (log(1 - p) - log p) - log(1 - p)` (0 at `p = 1/2`)."""
        log_p = paddle.log(self.probs)
        log_1_minus_p = paddle.log1p(-self.probs)
        return paddle.where(self.probs == self._c(0.5), paddle.full_like(self.probs, 0.0),
                            -self._log_constant() + self.mean * (log_1_minus_p - log_p) - log_1_minus_p)

    def cdf(self, value: Any) -> Any:
        """`(p^x (1 - p)^(1 - x) + p - 1) / (2p - 1)` on `[0, 1]` (`x` within lims)."""
        value = paddle.cast(value, self.dtype)
        cut = self._cut_probs()
        cdfs = (paddle.pow(cut, value) * paddle.pow(1.0 - cut, 1.0 - value) + cut - 1.0) / (2.0 * cut - 1.0)
        unbounded = paddle.where(self._cut_support_region(), cdfs, value)
        return paddle.where(value <= self._c(0.0), paddle.zeros_like(value),
                            paddle.where(value >= self._c(1.0), paddle.ones_like(value), unbounded))

    def icdf(self, value: Any) -> Any:
        """The inverse of `cdf`."""
        value = paddle.cast(value, self.dtype)
        cut = self._cut_probs()
        return paddle.where(
            self._cut_support_region(),
            (paddle.log1p(-cut + value * (2.0 * cut - 1.0)) - paddle.log1p(-cut))
            / (paddle.log(cut) - paddle.log1p(-cut)),
            value)

    def kl_divergence(self, other: ContinuousBernoulli) -> Any:
        """`-H(self) - (log C_q + mean_p (log q - log(1 - q)) + log(1 - q))`."""
        if tuple(self.batch_shape) != tuple(other.batch_shape):
            raise ValueError("KL divergence of two Continuous Bernoulli distributions should share the same "
                             "`batch_shape`.")
        log_q = paddle.log(other.probs)
        log_1_minus_q = paddle.log1p(-other.probs)
        return -self.entropy() - (other._log_constant() + self.mean * (log_q - log_1_minus_q) + log_1_minus_q)
