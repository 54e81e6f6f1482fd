"""`paddle.distribution.StudentT` (Paddle 3.3.1's definitions)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pullback as paddle
from pullback.frontend.distribution import distribution
from pullback.frontend.distribution.distribution import dtype_name, is_tensor
from pullback.frontend.distribution.gamma import Gamma


class StudentT(distribution.Distribution):
    r"""Student's t distribution with `df` degrees of freedom, location `loc` and
    scale `scale`:

    .. math:: f(x) = \frac{\Gamma(\frac{\nu+1}{2})}{\sigma\sqrt{\nu\pi}\,\Gamma(\frac{\nu}{2})}
              \left(1 + \frac{1}{\nu}\left(\frac{x-\mu}{\sigma}\right)^2\right)^{-\frac{\nu+1}{2}}

    Floats or tensors, broadcast together.  `mean` is NaN where `df <= 1`;
    `variance` is inf where `1 < df <= 2` and NaN where `df <= 1`.  `sample` is
    `loc + scale z / sqrt(chi2 / df)` with `chi2 ~ Gamma(df / 2, 1 / 2)`; Paddle has no
    `rsample` for it."""

    def __init__(self, df: Any, loc: Any, scale: Any, name: str | None = None) -> None:
        if not paddle.in_dynamic_mode():
            for what, v in (("df", df), ("loc", loc), ("scale", scale)):
                if not isinstance(v, float) and not is_tensor(v):
                    raise TypeError(f"StudentT: {what} must be a float or a Tensor, got {type(v).__name__}")
        self.name = name if name is not None else "StudentT"
        self.df, self.loc, self.scale = self._broadcast_all(df, loc, scale)
        if paddle.in_dynamic_mode():  # (a static program's values are not known yet)
            if not bool((self.df >= 0.0).all()):
                raise ValueError("Every element of input parameter `df` should be nonnegative.")
            if not bool((self.scale >= 0.0).all()):
                raise ValueError("Every element of input parameter `scale` should be nonnegative.")
        self.dtype = dtype_name(self.df.dtype)
        super().__init__(tuple(self.df.shape))
        self._chi2 = Gamma(0.5 * self.df, paddle.full_like(self.df, 0.5))

    @property
    def mean(self) -> Any:
        """`loc` where `df > 1`, else NaN."""
        return paddle.where(self.df > 1.0, self.loc, paddle.full_like(self.loc, float("nan")))

    @property
    def variance(self) -> Any:
        """`scale^2 df / (df - 2)` where `df > 2`, inf where `1 < df <= 2`, else NaN."""
        var = self.df.detach()
        var = paddle.where(self.df > 2.0, self.scale.pow(2) * var / (var - 2),
                           paddle.full_like(var, float("nan")))
        infinite = paddle.logical_and(self.df <= 2.0, self.df > 1.0)
        return paddle.where(infinite, paddle.full_like(var, float("inf")), var)

    def sample(self, shape: Sequence[int] = ()) -> Any:
        """Draws of shape `shape + batch_shape`."""
        if not isinstance(shape, Sequence):
            raise TypeError("sample shape must be Sequence object.")
        z = paddle.randn(list(self._extend_shape(shape)), dtype=self.dtype)
        chi2 = self._chi2.sample(shape)
        return self.loc + self.scale * (z * paddle.rsqrt(chi2 / self.df))

    def entropy(self) -> Any:
        """`log scale + (df+1)/2 (digamma((df+1)/2) - digamma(df/2)) + log(df)/2 +
        log B(df/2, 1/2)`."""
        lbeta = paddle.lgamma(0.5 * self.df) + math.lgamma(0.5) - paddle.lgamma(0.5 * (self.df + 1))
        return (self.scale.log()
                + 0.5 * (self.df + 1) * (paddle.digamma(0.5 * (self.df + 1)) - paddle.digamma(0.5 * self.df))
                + 0.5 * self.df.log() + lbeta)

    def log_prob(self, value: Any) -> Any:
        """The log density at `value`."""
        value = self._check_values_dtype_in_probs(self.df, value)
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * self.df.log() + 0.5 * math.log(math.pi)
             + paddle.lgamma(0.5 * self.df) - paddle.lgamma(0.5 * (self.df + 1.0)))
        return -0.5 * (self.df + 1.0) * paddle.log1p(y**2.0 / self.df) - z

    def prob(self, value: Any) -> Any:
        """`exp(log_prob(value))`."""
        return paddle.exp(self.log_prob(value))
