"""`paddle.distribution.Gamma` (Paddle 3.3.1's definitions)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pullback as paddle
from pullback.frontend.distribution import exponential_family
from pullback.frontend.distribution.dirichlet import log_standard_gamma
from pullback.frontend.distribution.distribution import dtype_name, is_tensor


class Gamma(exponential_family.ExponentialFamily):
    r"""The gamma distribution with shape `concentration` and rate `rate`:

    .. math:: f(x) = \frac{\beta^\alpha}{\Gamma(\alpha)} x^{\alpha-1} e^{-\beta x}

    Floats or tensors (all of one kind).  `rsample` divides standard-gamma samples
    by `rate`: gradients reach `rate`, not `concentration` (Paddle's
    `standard_gamma` has no gradient either); `sample` is it without gradient.  As
    in Paddle 3.3.1, `_natural_parameters` is a method, not a property, so the
    generic ExponentialFamily entropy does not apply (Gamma has its own)."""

    def __init__(self, concentration: Any, rate: Any) -> None:
        if not paddle.in_dynamic_mode():
            for what, v in (("concentration", concentration), ("rate", rate)):
                if not isinstance(v, float) and not is_tensor(v):
                    raise TypeError(f"Gamma: {what} must be a float or a Tensor, got {type(v).__name__}")
        if self._validate_args(concentration, rate):
            self.concentration = concentration
            self.rate = rate
            self.dtype = dtype_name(concentration.dtype)
        else:
            [self.concentration, self.rate] = self._to_tensor(concentration, rate)
            self.dtype = paddle.get_default_dtype()
        super().__init__(self.concentration.shape)

    @property
    def mean(self) -> Any:
        """`concentration / rate`."""
        return self.concentration / self.rate

    @property
    def variance(self) -> Any:
        """`concentration / rate ** 2`."""
        return self.concentration / self.rate.pow(2)

    def prob(self, value: Any) -> Any:
        """`exp(log_prob(value))`."""
        return paddle.exp(self.log_prob(value))

    def log_prob(self, value: Any) -> Any:
        """The log density at `value`."""
        return (
            self.concentration * paddle.log(self.rate)
            + (self.concentration - 1) * paddle.log(value)
            - self.rate * value
            - paddle.lgamma(self.concentration)
        )

    def entropy(self) -> Any:
        """`a - log(rate) + lgamma(a) + (1 - a) digamma(a)`."""
        return (
            self.concentration
            - paddle.log(self.rate)
            + paddle.lgamma(self.concentration)
            + (1.0 - self.concentration) * paddle.digamma(self.concentration)
        )

    def sample(self, shape: Sequence[int] = ()) -> Any:
        """`rsample(shape)` without gradient."""
        with paddle.no_grad():
            return self.rsample(shape)

    def rsample(self, shape: Sequence[int] = ()) -> Any:
        """Samples of shape `shape + batch_shape` (see the class for gradients)."""
        full = list(self._extend_shape(shape))
        return paddle.exp(log_standard_gamma(self.concentration.expand(full))) / self.rate.expand(full)

    def kl_divergence(self, other: Gamma) -> Any:
        """KL(self || other) between two gamma distributions."""
        if not isinstance(other, Gamma):
            raise TypeError(f"Expected type of other is Exponential, but got {type(other)}")
        t1 = other.concentration * paddle.log(self.rate / other.rate)
        t2 = paddle.lgamma(other.concentration) - paddle.lgamma(self.concentration)
        t3 = (self.concentration - other.concentration) * paddle.digamma(self.concentration)
        t4 = (other.rate - self.rate) * (self.concentration / self.rate)
        return t1 + t2 + t3 + t4

    def _natural_parameters(self) -> tuple[Any, Any]:  # type: ignore[override]
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, *args: Any) -> Any:
        x, y = args
        return paddle.lgamma(x + 1) + (x + 1) * paddle.log(-y.reciprocal())
