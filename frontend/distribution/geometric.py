"""`paddle.distribution.Geometric` (Paddle 3.3.1's definitions)."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

import pullback as paddle
from pullback.frontend.distribution import distribution
from pullback.frontend.distribution.distribution import dtype_name, is_tensor


def _check_k(k: Any) -> None:
    if not isinstance(k, numbers.Integral) and not is_tensor(k):
        raise TypeError(f"Expected type of k is number.Real|framework.Variable|Value, but got {type(k)}")


class Geometric(distribution.Distribution):
    r"""The geometric distribution: the number of failures before the first success,
    `P(k) = (1 - probs)^k probs`, `k = 0, 1, ...`.

    `probs` is a real number (a float32 tensor) or a tensor.  Paddle 3.3.1's
    `kl_divergence` computes `p log(p/q) + (1-p) log((1-p)/(1-q))`, the Bernoulli
    KL, not the geometric one, which is that divided by p
    (`sum_k p (1-p)^k [log(p/q) + k log((1-p)/(1-q))]`, with `E[k] = (1-p)/p`);
    pullback returns the geometric KL."""

    def __init__(self, probs: Any) -> None:
        if isinstance(probs, numbers.Real):
            probs = paddle.full(shape=[], fill_value=probs, dtype="float32")
        elif not is_tensor(probs):
            raise TypeError(
                f"Expected type of probs is Number.Real|Tensor|framework.Variable|Value, but got {type(probs)}"
            )
        self.probs = probs
        super().__init__(tuple(probs.shape))

    probs: Any  # type: ignore[assignment]  # a tensor here, as in Paddle (the base class's method)

    @property
    def mean(self) -> Any:
        """`1 / probs - 1`."""
        return 1.0 / self.probs - 1.0

    @property
    def variance(self) -> Any:
        """`(1 / probs - 1) / probs`."""
        return (1.0 / self.probs - 1.0) / self.probs

    @property
    def stddev(self) -> Any:
        """`sqrt(variance)`."""
        return paddle.sqrt(self.variance)

    def pmf(self, k: Any) -> Any:
        """`(1 - probs)^k probs`."""
        _check_k(k)
        return paddle.pow(1.0 - self.probs, k) * self.probs

    def log_pmf(self, k: Any) -> Any:
        """`log(pmf(k))`."""
        _check_k(k)
        return paddle.log(self.pmf(k))

    def sample(self, shape: Sequence[int] = ()) -> Any:
        """`rsample(shape)` without gradient."""
        with paddle.no_grad():
            return self.rsample(shape)

    def rsample(self, shape: Sequence[int] = ()) -> Any:
        """`floor(log(u) / log1p(-probs))`: counts, of the parameters' dtype (their
        gradient is zero almost everywhere)."""
        uniform = paddle.uniform(
            shape=list(self._extend_shape(shape)),
            min=float(np.finfo(np.float32).tiny),
            max=1.0,
            dtype=dtype_name(self.probs.dtype),
        )
        return paddle.floor(paddle.log(uniform) / paddle.log1p(-self.probs))

    def entropy(self) -> Any:
        """`-((1 - p) log(1 - p) + p log p) / p`."""
        x = (1.0 - self.probs) * paddle.log(1.0 - self.probs)
        y = self.probs * paddle.log(self.probs)
        return -(x + y) / self.probs

    def cdf(self, k: Any) -> Any:
        """`1 - (1 - probs)^(k + 1)`."""
        _check_k(k)
        return 1.0 - paddle.pow(1.0 - self.probs, k + 1)

    def kl_divergence(self, other: Geometric) -> Any:
        """`KL(self || other) = log(p/q) + (1-p)/p log((1-p)/(1-q))` (Paddle's value
        divided by p, see the class)."""
        if not isinstance(other, Geometric):
            raise TypeError(f"Exacted type of other is geometric.Geometric, but got {type(other)}")
        p, q = self.probs, other.probs
        return paddle.log(p / q) + (1.0 - p) / p * paddle.log((1.0 - p) / (1.0 - q))
