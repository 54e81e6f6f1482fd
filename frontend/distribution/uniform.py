"""`paddle.distribution.Uniform`: the uniform distribution on `[low, high)` (Paddle
3.3.1's definitions)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import pullback as paddle
from pullback.frontend.distribution import distribution
from pullback.frontend.distribution.distribution import dtype_name, shape_list
from pullback.frontend.distribution.normal import _static_shape


class Uniform(distribution.Distribution):
    r"""The uniform distribution on `[low, high)`: `pdf(x) = 1 / (high - low)` inside.

    Arguments as for `Normal` (numbers and lists become float32 tensors).  As in
    Paddle 3.3.1, `Uniform` defines no `mean`, `variance`, `rsample` or
    `kl_divergence` (they raise NotImplementedError); `sample` lets gradients reach
    `low` and `high`; `log_prob` is `-inf` outside `(low, high)`."""

    def __init__(self, low: Any, high: Any, name: str | None = None) -> None:
        self.all_arg_is_float = False
        self.batch_size_unknown = False
        self.name = name if name is not None else "Uniform"
        self.dtype = "float32"
        if isinstance(low, int):
            low = float(low)
        if isinstance(high, int):
            high = float(high)
        if self._validate_args(low, high):
            self.low = low
            self.high = high
            self.dtype = dtype_name(low.dtype)
        else:
            if isinstance(low, float) and isinstance(high, float):
                self.all_arg_is_float = True
            if isinstance(low, np.ndarray) and str(low.dtype) in ("float32", "float64"):
                self.dtype = str(low.dtype)
            elif isinstance(high, np.ndarray) and str(high.dtype) in ("float32", "float64"):
                self.dtype = str(high.dtype)
            self.low, self.high = self._to_tensor(low, high)
            if self.dtype != dtype_name(self.low.dtype):
                self.low = paddle.cast(self.low, dtype=self.dtype)
                self.high = paddle.cast(self.high, dtype=self.dtype)
        super().__init__(self.low.shape)

    def sample(self, shape: Sequence[int] = (), seed: int = 0) -> Any:
        """Samples of shape `shape + batch_shape`: `low + u * (high - low)`."""
        shape = shape_list(shape)
        batch_shape = list((self.low + self.high).shape)
        _static_shape(batch_shape, "Uniform.sample")
        output_shape = shape + batch_shape
        output = paddle.uniform(output_shape, dtype=self.dtype, min=0.0, max=1.0, seed=seed) * (
            paddle.zeros(output_shape, dtype=self.dtype) + (self.high - self.low)
        )
        output = paddle.add(output, self.low)
        if self.all_arg_is_float:
            return paddle.reshape(output, shape)
        return output

    def _inside(self, value: Any) -> Any:
        lb = paddle.cast(self.low < value, dtype=value.dtype)
        ub = paddle.cast(value < self.high, dtype=value.dtype)
        return lb * ub

    def log_prob(self, value: Any) -> Any:
        """`log(1 / (high - low))` inside `(low, high)`, `-inf` outside."""
        value = self._check_values_dtype_in_probs(self.low, value)
        return paddle.log(self._inside(value)) - paddle.log(self.high - self.low)

    def probs(self, value: Any) -> Any:
        """`1 / (high - low)` inside `(low, high)`, 0 outside."""
        value = self._check_values_dtype_in_probs(self.low, value)
        return self._inside(value) / (self.high - self.low)

    def entropy(self) -> Any:
        """`log(high - low)`."""
        return paddle.log(self.high - self.low)
