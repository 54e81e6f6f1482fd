"""`paddle.distribution.LKJCholesky` (Paddle 3.3.1's definitions)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import pullback as paddle
from pullback.frontend.distribution import distribution
from pullback.frontend.distribution.beta import Beta
from pullback.frontend.distribution.distribution import constant, is_tensor

__all__ = ["LKJCholesky"]


def mvlgamma(a: Any, p: int) -> Any:
    """The multivariate log-gamma `log Gamma_p(a)`, over `a`'s elements."""
    j = paddle.arange(1, p + 1, dtype=a.dtype)
    terms = paddle.lgamma(a.unsqueeze(-1) + (1 - j) / 2)
    return (p * (p - 1) / 4) * math.log(math.pi) + paddle.sum(terms, axis=-1)


def _tril_placement(dim: int, dtype: str) -> Any:
    """A constant `[dim (dim - 1) / 2, dim * dim]` 0/1 matrix: `vec @ it`, reshaped
    `[dim, dim]`, puts `vec` on the strictly lower triangle in row-major order
    ((1, 0), (2, 0), (2, 1), ...), the order Paddle's `vec_to_tril_matrix` fills."""
    rows, cols = np.tril_indices(dim, -1)
    place = np.zeros((len(rows), dim * dim), dtype=dtype)
    place[np.arange(len(rows)), rows * dim + cols] = 1.0
    return constant(place)


class LKJCholesky(distribution.Distribution):
    r"""The LKJ distribution over Cholesky factors `L` of `dim x dim` correlation
    matrices, `p(L) ∝ prod_i L_ii^(dim - i + 2 (concentration - 1))` (rows from 2).

    `concentration` is a float (a one-element tensor: `batch_shape` `(1,)`, as in
    Paddle) or a tensor; `event_shape` is `(dim, dim)`.  `sample_method` "onion"
    or "cvine" chooses the sampler (Beta draws, then the onion construction or the
    C-vine of partial correlations), as Paddle's; samples carry no gradient."""

    def __init__(self, dim: int = 2, concentration: Any = 1.0, sample_method: str = "onion") -> None:
        if not paddle.in_dynamic_mode() and not isinstance(concentration, (float, list, tuple)) \
                and not is_tensor(concentration):
            raise TypeError(f"LKJCholesky: concentration must be a float or a Tensor, got "
                            f"{type(concentration).__name__}")
        if self._validate_args(concentration):
            self.concentration = concentration
        else:
            [self.concentration] = self._to_tensor(concentration)
        self.dtype = distribution.dtype_name(self.concentration.dtype)
        if not isinstance(dim, int):
            raise TypeError(f"Expected dim to be an integer. Found dim={dim}.")
        if dim < 2:
            raise ValueError(f"Expected dim greater than or equal to 2. Found dim={dim}.")
        self.dim = dim
        if paddle.in_dynamic_mode() and not bool(paddle.all(self.concentration > 0)):
            raise ValueError("The arg of `concentration` must be positive.")
        self.sample_method = sample_method
        marginal_conc = self.concentration + 0.5 * (dim - 2)
        offset = np.arange(dim - 1, dtype=self.dtype)
        if sample_method == "onion":
            offset = np.concatenate([np.zeros(1, self.dtype), offset])
            self._beta = Beta(constant(offset + 0.5), marginal_conc.unsqueeze(-1) - constant(0.5 * offset))
        elif sample_method == "cvine":
            # Column j of the strictly lower triangle (row-major) has concentration
            # marginal - j / 2.
            cols = np.tril_indices(dim, -1)[1].astype(self.dtype)
            conc = marginal_conc.unsqueeze(-1) - constant(0.5 * cols)
            self._beta = Beta(conc, conc)
        else:
            raise ValueError("`method` should be one of 'cvine' or 'onion'.")
        super().__init__(tuple(self.concentration.shape), (dim, dim))

    def _onion(self, sample_shape: Sequence[int]) -> Any:
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u = paddle.randn(list(self._extend_shape(sample_shape)), dtype=self.dtype).tril(-1)
        u = u[..., 1:, :] / u[..., 1:, :].norm(axis=-1, keepdim=True)  # (row 0 is all zero)
        zero_row = paddle.zeros([*u.shape[:-2], 1, self.dim], dtype=self.dtype)
        w = paddle.sqrt(y) * paddle.concat([zero_row, u], axis=-2)
        tiny = float(np.finfo(np.dtype(self.dtype)).tiny)
        diag = paddle.clip(1 - paddle.sum(w**2, axis=-1), min=tiny).sqrt()
        return w + paddle.diag_embed(diag)

    def _cvine(self, sample_shape: Sequence[int]) -> Any:
        n = self.dim * (self.dim - 1) // 2
        lead = [*sample_shape, *self.concentration.shape]
        partial = (2 * self._beta.sample(sample_shape) - 1).reshape([*lead, n])
        r = paddle.matmul(partial, _tril_placement(self.dim, self.dtype)).reshape([*lead, self.dim, self.dim])
        tiny = float(np.finfo(np.dtype(self.dtype)).tiny)
        r = paddle.clip(r, min=-1 + tiny, max=1 - tiny)
        # L_ij = r_ij prod_{k<j} sqrt(1 - r_ik^2); the diagonal is that product with r_ii = 1.
        cumprod = paddle.cumprod(paddle.sqrt(1 - r**2), dim=-1)
        ones = paddle.ones([*lead, self.dim, 1], dtype=self.dtype)
        shifted = paddle.concat([ones, cumprod[..., :-1]], axis=-1)
        return (r + paddle.eye(self.dim, self.dim, dtype=self.dtype)) * shifted

    def sample(self, sample_shape: Sequence[int] = ()) -> Any:
        """Cholesky factors of shape `sample_shape + batch_shape + [dim, dim]`."""
        if not isinstance(sample_shape, Sequence):
            raise TypeError("sample shape must be Sequence object.")
        with paddle.no_grad():
            res = self._onion(sample_shape) if self.sample_method == "onion" else self._cvine(sample_shape)
            return res.reshape([*sample_shape, *self.concentration.shape, self.dim, self.dim])

    def log_prob(self, value: Any) -> Any:
        """The log density of Cholesky factors `value` (`[..., dim, dim]`)."""
        diag = paddle.diagonal(value, offset=0, axis1=-1, axis2=-2)[..., 1:]
        order = paddle.arange(2, self.dim + 1, dtype=self.dtype)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = paddle.sum(order * paddle.log(diag), axis=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalize = 0.5 * dm1 * math.log(math.pi) + mvlgamma(alpha - 0.5, dm1) - paddle.lgamma(alpha) * dm1
        return unnormalized - normalize
