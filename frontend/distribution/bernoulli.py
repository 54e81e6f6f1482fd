"""`paddle.distribution.Bernoulli` (Paddle 3.3.1's definitions)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import pullback as paddle
from pullback.frontend.distribution import exponential_family
from pullback.frontend.distribution.distribution import dtype_name, is_tensor

EPS = {"float32": float(np.finfo("float32").eps), "float64": float(np.finfo("float64").eps)}
"""Machine epsilon per dtype: probabilities are clipped to `[eps, 1 - eps]`."""


def _clip_probs(probs: Any, dtype: str) -> Any:
    eps = EPS[dtype]
    return paddle.clip(probs, min=eps, max=1 - eps).astype(dtype)


class Bernoulli(exponential_family.ExponentialFamily):
    r"""The Bernoulli distribution: 1 with probability `probs`, 0 otherwise.

    `probs` is a float or a tensor; it is clipped to `[eps, 1 - eps]` (eps of its
    dtype) and `logits` are its log-odds.  As in Paddle 3.3.1, `rsample` returns the
    relaxed sample's *logits* `(logit(u) + logit(probs)) / temperature` (u uniform),
    not a value in (0, 1): apply a sigmoid to get the Gumbel-softmax (binary
    Concrete) sample."""

    probs: Any  # type: ignore[assignment]  # a tensor here, as in Paddle (the base class's method)

    def __init__(self, probs: Any, name: str | None = None) -> None:
        self.name = name or "Bernoulli"
        if not paddle.in_dynamic_mode() and not isinstance(probs, float) and not is_tensor(probs):
            raise TypeError(f"{self.name}: probs must be a float or a Tensor, got {type(probs).__name__}")
        if self._validate_args(probs):
            self.probs = probs
            self.dtype = dtype_name(probs.dtype)
        else:
            [self.probs] = self._to_tensor(probs)
            self.dtype = paddle.get_default_dtype()
        self.probs = _clip_probs(self.probs, self.dtype)
        self.logits = self._probs_to_logits(self.probs, is_binary=True)
        super().__init__(batch_shape=self.probs.shape, event_shape=())

    @property
    def mean(self) -> Any:
        """`probs`."""
        return self.probs

    @property
    def variance(self) -> Any:
        """`probs * (1 - probs)`."""
        return paddle.multiply(self.probs, 1 - self.probs)

    def sample(self, shape: Sequence[int] = ()) -> Any:
        """0/1 samples (of the parameters' dtype) of shape `shape + batch_shape`; no
        gradient."""
        shape = self._extend_shape(shape)
        with paddle.no_grad():
            return paddle.bernoulli(self.probs.expand(list(shape)))

    def rsample(self, shape: Sequence[int] = (), temperature: float = 1.0) -> Any:
        """Relaxed samples' logits (see the class), differentiable in `probs`."""
        shape = self._extend_shape(shape)
        temp = paddle.full(shape=[], fill_value=temperature, dtype=self.dtype)
        probs = self.probs.expand(list(shape))
        uniforms = paddle.rand(list(shape), dtype=self.dtype)
        return paddle.divide(
            paddle.add(
                paddle.subtract(uniforms.log(), (-uniforms).log1p()),
                paddle.subtract(probs.log(), (-probs).log1p()),
            ),
            temp,
        )

    def cdf(self, value: Any) -> Any:
        """0 below 0, `1 - probs` on [0, 1), 1 from 1."""
        value = self._check_values_dtype_in_probs(self.probs, value)
        probs, value = paddle.broadcast_tensors([self.probs, value])
        zeros = paddle.zeros_like(probs)
        ones = paddle.ones_like(probs)
        return paddle.where(value < 0, zeros, paddle.where(value < 1, paddle.subtract(ones, probs), ones))

    def log_prob(self, value: Any) -> Any:
        """`value * log(probs) + (1 - value) * log(1 - probs)` (through the logits)."""
        value = self._check_values_dtype_in_probs(self.probs, value)
        logits, value = paddle.broadcast_tensors([self.logits, value])
        return -paddle.nn.functional.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def prob(self, value: Any) -> Any:
        """`exp(log_prob(value))`."""
        return self.log_prob(value).exp()

    def entropy(self) -> Any:
        """`-probs * log(probs) - (1 - probs) * log(1 - probs)`."""
        return paddle.nn.functional.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def kl_divergence(self, other: Bernoulli) -> Any:
        """KL(self || other) between two Bernoulli distributions."""
        if not isinstance(other, Bernoulli):
            raise TypeError(f"kl_divergence: other must be a Bernoulli, got {type(other).__name__}")
        F = paddle.nn.functional
        a_logits, b_logits = self.logits, other.logits
        log_pa = -F.softplus(-a_logits)
        log_pb = -F.softplus(-b_logits)
        pa = F.sigmoid(a_logits)
        one_minus_pa = F.sigmoid(-a_logits)
        log_one_minus_pa = -F.softplus(a_logits)
        log_one_minus_pb = -F.softplus(b_logits)
        return paddle.add(
            paddle.subtract(paddle.multiply(log_pa, pa), paddle.multiply(log_pb, pa)),
            paddle.subtract(
                paddle.multiply(log_one_minus_pa, one_minus_pa), paddle.multiply(log_one_minus_pb, one_minus_pa)
            ),
        )
