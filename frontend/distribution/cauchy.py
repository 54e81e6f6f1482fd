"""`paddle.distribution.Cauchy` (Paddle 3.3.1's definitions)."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any, NoReturn

import numpy as np

import pullback as paddle
from pullback.frontend.distribution import distribution
from pullback.frontend.distribution.distribution import dtype_name, is_tensor


class Cauchy(distribution.Distribution):
    r"""The Cauchy distribution: `pdf(x) = 1 / (pi scale (1 + ((x - loc) / scale)^2))`.

    `loc` and `scale` are real numbers (float32 tensors of shape `[]`) or tensors,
    broadcast together.  It has no mean, variance or stddev (ValueError);
    `rsample` is `loc + scale * tan(pi (u - 1/2))`, `sample` it without gradient;
    `prob`, `log_prob` and `cdf` take tensors only (TypeError otherwise)."""

    def __init__(self, loc: Any, scale: Any, name: str | None = None) -> None:
        self.name = name if name is not None else "Cauchy"
        if not isinstance(loc, numbers.Real) and not is_tensor(loc):
            raise TypeError(f"Expected type of loc is Real|Variable|Value, but got {type(loc)}")
        if not isinstance(scale, numbers.Real) and not is_tensor(scale):
            raise TypeError(f"Expected type of scale is Real|Variable|Value, but got {type(scale)}")
        if isinstance(loc, numbers.Real):
            loc = paddle.full(shape=[], fill_value=loc)
        if isinstance(scale, numbers.Real):
            scale = paddle.full(shape=[], fill_value=scale)
        if list(loc.shape) != list(scale.shape):
            self.loc, self.scale = paddle.broadcast_tensors([loc, scale])
        else:
            self.loc, self.scale = loc, scale
        self.dtype = dtype_name(self.loc.dtype)
        super().__init__(batch_shape=self.loc.shape, event_shape=())

    @property
    def mean(self) -> NoReturn:
        raise ValueError("Cauchy distribution has no mean.")

    @property
    def variance(self) -> NoReturn:
        raise ValueError("Cauchy distribution has no variance.")

    @property
    def stddev(self) -> NoReturn:
        raise ValueError("Cauchy distribution has no stddev.")

    def sample(self, shape: Sequence[int] = (), name: str | None = None) -> Any:
        """`rsample(shape)` without gradient."""
        with paddle.no_grad():
            return self.rsample(shape, name)

    def rsample(self, shape: Sequence[int] = (), name: str | None = None) -> Any:
        """Reparameterized samples of shape `shape + batch_shape`."""
        if not isinstance(shape, (np.ndarray, list, tuple)) and not is_tensor(shape):
            raise TypeError(f"Expected type of shape is Sequence[int], but got {type(shape)}")
        full = list(self._extend_shape(shape))
        loc = self.loc.expand(full)
        scale = self.scale.expand(full)
        uniforms = paddle.rand(full, dtype=self.dtype)
        return paddle.add(loc, paddle.multiply(scale, paddle.tan(np.pi * (uniforms - 0.5))))

    def _check_value(self, value: Any) -> None:
        if not is_tensor(value):
            raise TypeError(f"Expected type of value is Variable or Value, but got {type(value)}")

    def prob(self, value: Any) -> Any:
        """`exp(log_prob(value))`."""
        self._check_value(value)
        return self.log_prob(value).exp()

    def log_prob(self, value: Any) -> Any:
        """`-log1p(((value - loc) / scale)^2) - log(pi) - log(scale)`."""
        self._check_value(value)
        value = self._check_values_dtype_in_probs(self.loc, value)
        loc, scale, value = paddle.broadcast_tensors([self.loc, self.scale, value])
        return paddle.subtract(
            -paddle.square(paddle.divide(paddle.subtract(value, loc), scale)).log1p(),
            paddle.add(paddle.full(loc.shape, np.log(np.pi), dtype=self.dtype), scale.log()),
        )

    def cdf(self, value: Any) -> Any:
        """`atan((value - loc) / scale) / pi + 1/2`."""
        self._check_value(value)
        value = self._check_values_dtype_in_probs(self.loc, value)
        loc, scale, value = paddle.broadcast_tensors([self.loc, self.scale, value])
        return paddle.atan(paddle.divide(paddle.subtract(value, loc), scale)) / np.pi + 0.5

    def entropy(self) -> Any:
        """`log(4 pi scale)`."""
        return paddle.add(paddle.full(self.loc.shape, np.log(4 * np.pi), dtype=self.dtype), self.scale.log())

    def kl_divergence(self, other: Cauchy) -> Any:
        """KL(self || other) between two Cauchy distributions."""
        if not isinstance(other, Cauchy):
            raise TypeError(f"Expected type of other is Cauchy, but got {type(other)}")
        t1 = paddle.add(
            paddle.pow(paddle.add(self.scale, other.scale), 2), paddle.pow(paddle.subtract(self.loc, other.loc), 2)
        ).log()
        t2 = (4 * paddle.multiply(self.scale, other.scale)).log()
        return paddle.subtract(t1, t2)
