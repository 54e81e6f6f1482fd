"""`paddle.distribution.Categorical` (Paddle 3.3.1's definitions)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import pullback as paddle
from pullback.frontend.distribution import distribution
from pullback.frontend.distribution.distribution import dtype_name, shape_list


class Categorical(distribution.Distribution):
    r"""The categorical distribution over the last axis of `logits`.

    Paddle 3.3.1 is inconsistent about what `logits` are, and pullback follows it:

    * `sample`, `entropy` and `kl_divergence` read them as logits (a softmax gives
      the probabilities);
    * `probs` and `log_prob` read them as unnormalized probabilities
      (`logits / logits.sum(-1)`).

    `kl_divergence` keeps the last axis (`[..., 1]`), `entropy` does not.  Paddle
    does not set `batch_shape`/`event_shape` for a Categorical (reading them fails);
    pullback sets them to `logits.shape[:-1]` and `[]`."""

    def __init__(self, logits: Any, name: str | None = None) -> None:
        self.name = name if name is not None else "Categorical"
        self.dtype = "float32"
        if self._validate_args(logits):
            self.logits = logits
            self.dtype = dtype_name(logits.dtype)
        else:
            if isinstance(logits, np.ndarray) and str(logits.dtype) in ("float32", "float64"):
                self.dtype = str(logits.dtype)
            self.logits = self._to_tensor(logits)[0]
            if self.dtype != dtype_name(self.logits.dtype):
                self.logits = paddle.cast(self.logits, dtype=self.dtype)
        dist_sum = paddle.sum(self.logits, axis=-1, keepdim=True)
        self._prob = self.logits / dist_sum
        super().__init__(self.logits.shape[:-1], ())

    def sample(self, shape: Sequence[int] = ()) -> Any:
        """Category indices (int64) of shape `shape + batch_shape`, drawn from
        `softmax(logits)`."""
        shape = shape_list(shape)
        num_samples = int(np.prod(np.array(shape)))
        logits_shape = list(self.logits.shape)
        if len(logits_shape) > 1:
            sample_shape = shape + logits_shape[:-1]
            logits = paddle.reshape(self.logits, [int(np.prod(logits_shape[:-1])), logits_shape[-1]])
        else:
            sample_shape = shape
            logits = self.logits
        sample_index = paddle.multinomial(self._logits_to_probs(logits), num_samples, True)
        permute = list(range(len(sample_index.shape)))
        permute.insert(0, permute.pop(-1))
        sample_index = sample_index.transpose(permute)
        return paddle.reshape(sample_index, sample_shape)

    def kl_divergence(self, other: Categorical) -> Any:
        """KL(self || other) of the softmax probabilities, shape `batch_shape + [1]`."""
        if not isinstance(other, Categorical):
            raise TypeError(f"kl_divergence: other must be a Categorical, got {type(other).__name__}")
        logits = self.logits - paddle.max(self.logits, axis=-1, keepdim=True)
        other_logits = other.logits - paddle.max(other.logits, axis=-1, keepdim=True)
        e_logits = paddle.exp(logits)
        other_e_logits = paddle.exp(other_logits)
        z = paddle.sum(e_logits, axis=-1, keepdim=True)
        other_z = paddle.sum(other_e_logits, axis=-1, keepdim=True)
        prob = e_logits / z
        return paddle.sum(
            prob * (logits - paddle.log(z) - other_logits + paddle.log(other_z)), axis=-1, keepdim=True
        )

    def entropy(self) -> Any:
        """The entropy of the softmax probabilities, shape `batch_shape`."""
        logits = self.logits - paddle.max(self.logits, axis=-1, keepdim=True)
        e_logits = paddle.exp(logits)
        z = paddle.sum(e_logits, axis=-1, keepdim=True)
        prob = e_logits / z
        neg_entropy = paddle.sum(prob * (logits - paddle.log(z)), axis=-1)
        return paddle.scale(neg_entropy, scale=-1.0)

    def probs(self, value: Any) -> Any:
        """The probabilities (`logits / logits.sum(-1)`) of the categories `value`:
        for 1-D logits, gathered at every index of `value`; else a 1-D `value` is
        looked up in every distribution of the batch, and an N-D one along the
        last axis."""
        if len(self._prob.shape) == 1:
            return paddle.gather(self._prob, value.reshape([-1])).reshape(value.shape)
        if len(value.shape) == 1:
            return paddle.take_along_axis(
                self._prob, paddle.reshape(value, (len(self._prob.shape) - 1) * [1] + [-1]), axis=-1
            )
        return paddle.take_along_axis(self._prob, value, axis=-1)

    def log_prob(self, value: Any) -> Any:
        """`log(probs(value))`."""
        return paddle.log(self.probs(value))
