"""`paddle.distribution.Multinomial` (Paddle 3.3.1's definitions)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pullback as paddle
from pullback.frontend.distribution import categorical, distribution
from pullback.frontend.distribution.distribution import dtype_name


class Multinomial(distribution.Distribution):
    r"""The multinomial distribution: counts of `total_count` draws from the
    categories of `probs`' last axis.

    `probs` is a tensor (normalized over its last axis here); `total_count` an int
    >= 1.  `sample` returns counts of the parameters' dtype, of shape
    `shape + batch_shape + event_shape`, without gradient."""

    probs: Any  # type: ignore[assignment]  # a tensor here, as in Paddle (the base class's method)

    def __init__(self, total_count: int, probs: Any) -> None:
        if not isinstance(total_count, int) or total_count < 1:
            raise ValueError("input parameter total_count must be int type and grater than zero.")
        if len(probs.shape) < 1:
            raise ValueError("probs parameter should not be none and over one dimension")
        self.probs = probs / probs.sum(-1, keepdim=True)
        self.total_count = total_count
        self._categorical = categorical.Categorical(logits=self._probs_to_logits(probs))
        super().__init__(probs.shape[:-1], probs.shape[-1:])

    @property
    def mean(self) -> Any:
        """`total_count * probs`."""
        return self.probs * self.total_count

    @property
    def variance(self) -> Any:
        """`total_count * probs * (1 - probs)`."""
        return self.total_count * self.probs * (1 - self.probs)

    def prob(self, value: Any) -> Any:
        """`exp(log_prob(value))`."""
        return paddle.exp(self.log_prob(value))

    def log_prob(self, value: Any) -> Any:
        """The log probability of the counts `value`."""
        if dtype_name(value.dtype).startswith(("int", "uint")):
            value = paddle.cast(value, dtype_name(self.probs.dtype))
        logits, value = paddle.broadcast_tensors([paddle.log(self.probs), value])
        # 0 * log(0) counts as 0: a category of probability 0 never drawn
        logits = paddle.where(
            paddle.logical_and(value == 0, paddle.isinf(logits)), paddle.zeros_like(logits), logits
        )
        return paddle.lgamma(value.sum(-1) + 1) - paddle.lgamma(value + 1).sum(-1) + (value * logits).sum(-1)

    def sample(self, shape: Iterable[int] = ()) -> Any:
        """Counts of shape `shape + batch_shape + event_shape`."""
        if not isinstance(shape, Iterable):
            raise TypeError("sample shape must be Iterable object.")
        samples = self._categorical.sample([self.total_count, *list(shape)])
        return (
            paddle.nn.functional.one_hot(samples, self.probs.shape[-1])
            .cast(dtype_name(self.probs.dtype))
            .sum(0)
        )

    def entropy(self) -> Any:
        """The entropy, from the binomial marginals of the categories."""
        dtype = dtype_name(self.probs.dtype)
        n = paddle.full(shape=[], fill_value=self.total_count, dtype=dtype)
        support = paddle.arange(self.total_count + 1, dtype=dtype).reshape(
            [-1] + [1] * len(self.probs.shape)
        )[1:]
        binomial_pmf = paddle.exp(self._binomial_logpmf(n, support))
        return (
            n * self._categorical.entropy()
            - paddle.lgamma(n + 1)
            + (binomial_pmf * paddle.lgamma(support + 1)).sum([0, -1])
        )

    def _binomial_logpmf(self, count: Any, value: Any) -> Any:
        logits = self._probs_to_logits(self.probs, is_binary=True)
        factor_n = paddle.lgamma(count + 1)
        factor_k = paddle.lgamma(value + 1)
        factor_nmk = paddle.lgamma(count - value + 1)
        norm = count * _clip_by_zero(logits) + count * paddle.log1p(paddle.exp(-paddle.abs(logits))) - factor_n
        return value * logits - factor_k - factor_nmk - norm


def _clip_by_zero(x: Any) -> Any:
    return (x.clip(min=0) + x - x.clip(max=0)) / 2
