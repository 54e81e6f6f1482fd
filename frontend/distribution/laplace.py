"""`paddle.distribution.Laplace` (Paddle 3.3.1's definitions)."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

import pullback as paddle
from pullback.frontend.distribution import distribution
from pullback.frontend.distribution.distribution import dtype_name, is_tensor


class Laplace(distribution.Distribution):
    r"""The Laplace distribution: `pdf(x) = exp(-|x - loc| / scale) / (2 scale)`.

    `loc` and `scale` are real numbers (float32 tensors of shape `[]`) or tensors;
    they are broadcast together when either has axes and their dtypes agree.
    `sample` is `rsample` without gradient."""

    def __init__(self, loc: Any, scale: Any) -> None:
        if not isinstance(loc, numbers.Real) and not is_tensor(loc):
            raise TypeError(f"Expected type of loc is Real|Variable, but got {type(loc)}")
        if not isinstance(scale, numbers.Real) and not is_tensor(scale):
            raise TypeError(f"Expected type of scale is Real|Variable, but got {type(scale)}")
        if isinstance(loc, numbers.Real):
            loc = paddle.full(shape=[], fill_value=loc)
        if isinstance(scale, numbers.Real):
            scale = paddle.full(shape=[], fill_value=scale)
        if (len(scale.shape) > 0 or len(loc.shape) > 0) and dtype_name(loc.dtype) == dtype_name(scale.dtype):
            self.loc, self.scale = paddle.broadcast_tensors([loc, scale])
        else:
            self.loc, self.scale = loc, scale
        super().__init__(self.loc.shape)

    @property
    def mean(self) -> Any:
        """`loc`."""
        return self.loc

    @property
    def stddev(self) -> Any:
        """`sqrt(2) * scale`."""
        return 2**0.5 * self.scale

    @property
    def variance(self) -> Any:
        """`2 * scale ** 2`."""
        return self.stddev.pow(2)

    def _validate_value(self, value: Any) -> tuple[Any, Any, Any]:
        """`loc`, `scale` and `value` (cast to the scale's dtype) broadcast together."""
        if isinstance(value, numbers.Real):
            value = paddle.full(shape=[], fill_value=value)
        if dtype_name(value.dtype) != dtype_name(self.scale.dtype):
            value = paddle.cast(value, dtype_name(self.scale.dtype))
        if len(self.scale.shape) > 0 or len(self.loc.shape) > 0 or len(value.shape) > 0:
            loc, scale, value = paddle.broadcast_tensors([self.loc, self.scale, value])
        else:
            loc, scale = self.loc, self.scale
        return loc, scale, value

    def log_prob(self, value: Any) -> Any:
        """`-log(2 scale) - |value - loc| / scale`."""
        loc, scale, value = self._validate_value(value)
        return -paddle.log(2 * scale) - paddle.abs(value - loc) / scale

    def entropy(self) -> Any:
        """`1 + log(2 scale)`."""
        return 1 + paddle.log(2 * self.scale)

    def cdf(self, value: Any) -> Any:
        """`0.5 - 0.5 sign(value - loc) expm1(-|value - loc| / scale)`."""
        loc, scale, value = self._validate_value(value)
        item = 0.5 * (value - loc).sign() * paddle.expm1(-(value - loc).abs() / scale)
        return 0.5 - item

    def icdf(self, value: Any) -> Any:
        """The quantile function: `loc - scale sign(p - 0.5) log1p(-2 |p - 0.5|)`."""
        loc, scale, value = self._validate_value(value)
        term = value - 0.5
        return loc - scale * term.sign() * paddle.log1p(-2 * term.abs())

    def sample(self, shape: Sequence[int] = ()) -> Any:
        """`rsample(shape)` without gradient."""
        with paddle.no_grad():
            return self.rsample(shape)

    def rsample(self, shape: Sequence[int] = ()) -> Any:
        """Reparameterized samples of shape `shape + batch_shape`: the inverse CDF of
        uniform values in (-1, 1)."""
        eps = self._get_eps()
        uniform = paddle.uniform(
            shape=list(self._extend_shape(shape)),
            min=float(np.nextafter(-1, 1)) + eps / 2,
            max=1.0 - eps / 2,
            dtype=dtype_name(self.loc.dtype),
        )
        return self.loc - self.scale * uniform.sign() * paddle.log1p(-uniform.abs())

    def _get_eps(self) -> float:
        """The float32 or float64 machine epsilon, per the parameters' dtype."""
        return 2.22045e-16 if dtype_name(self.loc.dtype) == "float64" else 1.19209e-07

    def kl_divergence(self, other: Laplace) -> Any:
        """KL(self || other) between two Laplace distributions."""
        var_ratio = other.scale / self.scale
        t = paddle.abs(self.loc - other.loc)
        term1 = (self.scale * paddle.exp(-t / self.scale) + t) / other.scale
        term2 = paddle.log(var_ratio)
        return term1 + term2 - 1
