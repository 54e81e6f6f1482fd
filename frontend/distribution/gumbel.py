"""`paddle.distribution.Gumbel` (Paddle 3.3.1's definitions)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

import pullback as paddle
from pullback.frontend.distribution.distribution import dtype_name, is_tensor
from pullback.frontend.distribution.transform import AffineTransform, ExpTransform
from pullback.frontend.distribution.transformed_distribution import TransformedDistribution
from pullback.frontend.distribution.uniform import Uniform


class Gumbel(TransformedDistribution):
    r"""The Gumbel distribution: `cdf(x) = exp(-exp(-(x - loc) / scale))`.

    `loc` and `scale` are real numbers (float32 tensors of shape `[]`) or tensors,
    broadcast together.  `rsample` transforms uniform samples by
    `loc - scale * log(-log(u))`, so gradients reach `loc` and `scale`; `sample` is
    it without gradient."""

    def __init__(self, loc: Any, scale: Any) -> None:
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
        finfo = np.finfo(np.float32)
        self.base_dist = Uniform(
            paddle.full_like(self.loc, float(finfo.tiny)), paddle.full_like(self.loc, float(1 - finfo.eps))
        )
        self.transforms = ()
        super().__init__(self.base_dist, self.transforms)

    @property
    def mean(self) -> Any:
        """`loc + scale * euler_gamma`."""
        return self.loc + self.scale * np.euler_gamma

    @property
    def variance(self) -> Any:
        """`scale^2 pi^2 / 6`."""
        temp = paddle.full(shape=self.loc.shape, fill_value=math.pi * math.pi, dtype=dtype_name(self.scale.dtype))
        return paddle.pow(self.scale, 2) * temp / 6

    @property
    def stddev(self) -> Any:
        """`sqrt(variance)`."""
        return paddle.sqrt(self.variance)

    def prob(self, value: Any) -> Any:
        """The density at `value`."""
        dtype = dtype_name(self.loc.dtype)
        y = (self.loc - value.astype(dtype)) / self.scale.astype(dtype)
        return paddle.exp(y - paddle.exp(y)) / self.scale.astype(dtype_name(y.dtype))

    def log_prob(self, value: Any) -> Any:
        """`log(prob(value))`."""
        return paddle.log(self.prob(value))

    def cdf(self, value: Any) -> Any:
        """`exp(-exp(-(value - loc) / scale))`."""
        dtype = dtype_name(value.dtype)
        return paddle.exp(-paddle.exp(-(value - self.loc.astype(dtype)) / self.scale.astype(dtype)))

    def entropy(self) -> Any:
        """`log(scale) + 1 + euler_gamma`."""
        return paddle.log(self.scale) + 1 + np.euler_gamma

    def sample(self, shape: Sequence[int] = ()) -> Any:
        """`rsample(shape)` without gradient."""
        with paddle.no_grad():
            return self.rsample(shape)

    def rsample(self, shape: Sequence[int] = ()) -> Any:
        """Reparameterized samples of shape `shape + batch_shape`."""
        dtype = dtype_name(self.loc.dtype)
        exp_trans = ExpTransform()
        affine_trans_1 = AffineTransform(
            paddle.full(shape=self.scale.shape, fill_value=0, dtype=dtype), -paddle.ones_like(self.scale)
        )
        affine_trans_2 = AffineTransform(self.loc, -self.scale)
        return affine_trans_2.forward(
            exp_trans.inverse(affine_trans_1.forward(exp_trans.inverse(self._base.sample(shape))))
        )
