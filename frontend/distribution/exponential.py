"""`paddle.distribution.Exponential` (Paddle 3.3.1's definitions)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import pullback as paddle
from pullback.frontend.distribution import exponential_family
from pullback.frontend.distribution.distribution import dtype_name, is_tensor


class Exponential(exponential_family.ExponentialFamily):
    r"""The exponential distribution with rate `rate`: `pdf(x) = rate * exp(-rate x)`.

    `rate` is a float or a tensor.  As in Paddle 3.3.1, a float `rate` becomes a
    float64 tensor while `dtype` says `'float32'`, and `sample` is `rsample`
    (`-log(u) / rate`) without gradient."""

    def __init__(self, rate: Any) -> None:
        if not paddle.in_dynamic_mode() and not isinstance(rate, float) and not is_tensor(rate):
            raise TypeError(f"Exponential: rate must be a float or a Tensor, got {type(rate).__name__}")
        if self._validate_args(rate):
            self.rate = rate
            self.dtype = dtype_name(rate.dtype)
        else:
            [self.rate] = self._to_tensor(rate)
            self.dtype = paddle.get_default_dtype()
        super().__init__(self.rate.shape)

    @property
    def mean(self) -> Any:
        """`1 / rate`."""
        return self.rate.reciprocal()

    @property
    def variance(self) -> Any:
        """`rate ** -2`."""
        return self.rate.pow(-2)

    def sample(self, shape: Sequence[int] = ()) -> Any:
        """`rsample(shape)` without gradient."""
        with paddle.no_grad():
            return self.rsample(shape)

    def rsample(self, shape: Sequence[int] = ()) -> Any:
        """Reparameterized samples `-log(u) / rate` of shape `shape + batch_shape`."""
        uniform = paddle.uniform(
            shape=list(self._extend_shape(shape)),
            min=float(np.finfo(np.float32).tiny),
            max=1.0,
            dtype=dtype_name(self.rate.dtype),
        )
        return -paddle.log(uniform) / self.rate

    def prob(self, value: Any) -> Any:
        """`rate * exp(-rate * value)`."""
        return self.rate * paddle.exp(-self.rate * value)

    def log_prob(self, value: Any) -> Any:
        """`log(rate) - rate * value`."""
        return paddle.log(self.rate) - self.rate * value

    def entropy(self) -> Any:
        """`1 - log(rate)`."""
        return 1.0 - paddle.log(self.rate)

    def cdf(self, value: Any) -> Any:
        """`1 - exp(-rate * value)`."""
        return 1.0 - paddle.exp(-self.rate * value)

    def icdf(self, value: Any) -> Any:
        """`-log1p(-value) / rate`."""
        return -paddle.log1p(-value) / self.rate

    def kl_divergence(self, other: Exponential) -> Any:
        """KL(self || other) between two exponential distributions."""
        if not isinstance(other, Exponential):
            raise TypeError(f"Expected type of other is Exponential, but got {type(other)}")
        rate_ratio = other.rate / self.rate
        return -paddle.log(rate_ratio) + rate_ratio - 1

    @property
    def _natural_parameters(self) -> tuple[Any]:
        return (-self.rate,)

    def _log_normalizer(self, *args: Any) -> Any:
        (x,) = args
        return -paddle.log(-x)
