"""`paddle.distribution.MultivariateNormal` (Paddle 3.3.1's definitions)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pullback as paddle
from pullback.frontend.distribution import distribution
from pullback.frontend.distribution.distribution import dtype_name


def _swap_last(ndim: int) -> list[int]:
    perm = list(range(ndim))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return perm


class MultivariateNormal(distribution.Distribution):
    r"""The multivariate normal distribution with mean `loc` and exactly one of
    `covariance_matrix`, `precision_matrix` or `scale_tril` (lower-triangular with
    positive diagonal), each with optional leading batch axes.  Everything is
    computed from the (unbroadcast) Cholesky factor; `sample` is `rsample` without
    gradient."""

    def __init__(
        self,
        loc: Any,
        covariance_matrix: Any = None,
        precision_matrix: Any = None,
        scale_tril: Any = None,
    ) -> None:
        self.dtype = paddle.get_default_dtype()
        if isinstance(loc, (float, int)):
            loc = paddle.to_tensor([loc], dtype=self.dtype) if paddle.in_dynamic_mode() else paddle.full(
                [1], float(loc), self.dtype
            )
        else:
            self.dtype = dtype_name(loc.dtype)
        if len(loc.shape) < 1:
            loc = loc.reshape((1,))
        self.covariance_matrix = None
        self.precision_matrix = None
        self.scale_tril = None
        if (covariance_matrix is not None) + (scale_tril is not None) + (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or scale_tril may be specified.")
        given = scale_tril if scale_tril is not None else (
            covariance_matrix if covariance_matrix is not None else precision_matrix
        )
        what = ("scale_tril matrix" if scale_tril is not None else
                "covariance_matrix" if covariance_matrix is not None else "precision_matrix")
        if len(given.shape) < 2:
            raise ValueError(f"{what} must be at least two-dimensional, with optional leading batch dimensions")
        given = paddle.cast(given, dtype=self.dtype)
        batch_shape = paddle.broadcast_shape(list(given.shape[:-2]), list(loc.shape[:-1]))
        expanded = given.expand([*batch_shape, given.shape[-2], given.shape[-1]])
        if scale_tril is not None:
            self.scale_tril = expanded
            self._unbroadcasted_scale_tril = given
        elif covariance_matrix is not None:
            self.covariance_matrix = expanded
            self._unbroadcasted_scale_tril = paddle.linalg.cholesky(given)
        else:
            self.precision_matrix = expanded
            self._unbroadcasted_scale_tril = precision_to_scale_tril(given)
        self.loc = loc.expand([*batch_shape, -1])
        super().__init__(batch_shape, self.loc.shape[-1:])

    @property
    def mean(self) -> Any:
        """`loc`."""
        return self.loc

    @property
    def variance(self) -> Any:
        """The diagonal of the covariance, of shape `batch_shape + event_shape`."""
        return (
            paddle.square(self._unbroadcasted_scale_tril)
            .sum(-1)
            .expand(list(self._batch_shape + self._event_shape))
        )

    def sample(self, shape: Sequence[int] = ()) -> Any:
        """`rsample(shape)` without gradient."""
        with paddle.no_grad():
            return self.rsample(shape)

    def rsample(self, shape: Sequence[int] = ()) -> Any:
        """Reparameterized samples `loc + L eps` of shape
        `shape + batch_shape + event_shape`."""
        if not isinstance(shape, Sequence):
            raise TypeError("sample shape must be Sequence object.")
        output_shape = list(self._extend_shape(shape))
        eps = paddle.cast(paddle.normal(shape=output_shape), dtype=self.dtype)
        return self.loc + paddle.matmul(self._unbroadcasted_scale_tril, eps.unsqueeze(-1)).squeeze(-1)

    def _half_log_det(self) -> Any:
        return self._unbroadcasted_scale_tril.diagonal(axis1=-2, axis2=-1).log().sum(-1)

    def log_prob(self, value: Any) -> Any:
        """The log density at `value`."""
        value = paddle.cast(value, dtype=self.dtype)
        diff = value - self.loc
        M = batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - self._half_log_det()

    def prob(self, value: Any) -> Any:
        """`exp(log_prob(value))`."""
        return paddle.exp(self.log_prob(value))

    def entropy(self) -> Any:
        """The entropy, of the batch shape."""
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        if len(self._batch_shape) == 0:
            return H
        return H.expand(list(self._batch_shape))

    def kl_divergence(self, other: MultivariateNormal) -> Any:
        """KL(self || other) between two multivariate normal distributions."""
        if self._batch_shape != other._batch_shape and self._event_shape != other._event_shape:
            raise ValueError(
                "KL divergence of two Multivariate Normal distributions should share the same `batch_shape` "
                "and `event_shape`."
            )
        L1, L2 = self._unbroadcasted_scale_tril, other._unbroadcasted_scale_tril
        perm = _swap_last(len(L1.shape))
        cov_mat_1 = paddle.matmul(L1, L1.transpose(perm))
        cov_mat_2 = paddle.matmul(L2, L2.transpose(perm))
        expectation = paddle.linalg.solve(cov_mat_2, cov_mat_1).diagonal(axis1=-2, axis2=-1).sum(-1)
        expectation = expectation + batch_mahalanobis(L2, self.loc - other.loc)
        return other._half_log_det() - self._half_log_det() + 0.5 * (expectation - self._event_shape[0])


def precision_to_scale_tril(P: Any) -> Any:
    """The lower Cholesky factor of the inverse of the precision matrix `P`."""
    Lf = paddle.linalg.cholesky(paddle.flip(P, (-2, -1)))
    tmp = paddle.flip(Lf, (-2, -1))
    L_inv = paddle.transpose(tmp, _swap_last(len(tmp.shape)))
    Id = paddle.eye(P.shape[-1], dtype=dtype_name(P.dtype))
    return paddle.linalg.triangular_solve(L_inv, Id, upper=False)


def batch_mahalanobis(bL: Any, bx: Any) -> Any:
    """The squared Mahalanobis distance `x^T (L L^T)^-1 x` for a batch of
    lower-triangular `bL` and points `bx` whose batch shape extends `bL`'s."""
    n = bx.shape[-1]
    bx_batch_shape = list(bx.shape[:-1])
    bx_batch_dims = len(bx_batch_shape)
    bL_batch_dims = len(bL.shape) - 2
    outer_batch_dims = bx_batch_dims - bL_batch_dims
    old_batch_dims = outer_batch_dims + bL_batch_dims
    new_batch_dims = outer_batch_dims + 2 * bL_batch_dims
    bx_new_shape = list(bx.shape[:outer_batch_dims])
    for sL, sx in zip(bL.shape[:-2], bx.shape[outer_batch_dims:-1]):
        bx_new_shape += [sx // sL, sL]
    bx_new_shape += [n]
    bx = bx.reshape(bx_new_shape)
    permute_dims = (
        list(range(outer_batch_dims))
        + list(range(outer_batch_dims, new_batch_dims, 2))
        + list(range(outer_batch_dims + 1, new_batch_dims, 2))
        + [new_batch_dims]
    )
    bx = bx.transpose(permute_dims)
    flat_L = bL.reshape((-1, n, n))
    flat_x = bx.reshape((-1, flat_L.shape[0], n))
    flat_x_swap = flat_x.transpose((1, 2, 0))
    M_swap = paddle.linalg.triangular_solve(flat_L, flat_x_swap, upper=False).pow(2).sum(-2)
    M = M_swap.t()
    permuted_M = M.reshape(bx.shape[:-1])
    permute_inv_dims = list(range(outer_batch_dims))
    for i in range(bL_batch_dims):
        permute_inv_dims += [outer_batch_dims + i, old_batch_dims + i]
    reshaped_M = permuted_M.transpose(permute_inv_dims)
    return reshaped_M.reshape(bx_batch_shape)
