"""`paddle.distribution.Normal`: the Gaussian distribution (Paddle 3.3.1's
definitions, real-valued: pullback has no complex dtype)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

import pullback as paddle
from pullback.frontend.distribution import distribution
from pullback.frontend.distribution.distribution import dtype_name, shape_list


def gaussian(shape: Sequence[int], dtype: str, seed: int = 0) -> Any:
    """Standard normal samples of `shape` and `dtype`."""
    from pullback.frontend.api.tensor import gaussian as _gaussian

    return _gaussian(list(shape), mean=0.0, std=1.0, seed=seed, dtype=dtype)


def _static_shape(shape: Sequence[int], what: str) -> None:
    if -1 in list(shape):
        raise NotImplementedError(
            f"{what}: a batch shape with an unknown dimension ({list(shape)}) is not supported by "
            "pullback; give the parameters a static shape"
        )


class Normal(distribution.Distribution):
    r"""The normal distribution with location `loc` and scale `scale`:

    .. math:: pdf(x) = \frac{1}{\sqrt{2\pi}\sigma} e^{-\frac{(x-\mu)^2}{2\sigma^2}}

    `loc` and `scale` are numbers, lists, numpy arrays or tensors (all tensors or
    none).  As in Paddle, numbers and lists become float32 tensors, float64 arrays
    stay float64; `sample` (which, like Paddle's, lets gradients through) and
    `rsample` draw `shape + batch_shape` values.  Complex `loc` (Paddle's complex
    Gaussian) is not supported by pullback."""

    def __init__(self, loc: Any, scale: Any, name: str | None = None) -> None:
        self.all_arg_is_float = False
        self.name = name if name is not None else "Normal"
        self.dtype = "float32"
        self._complex_gaussian = False
        if isinstance(loc, complex) or (isinstance(loc, np.ndarray) and np.iscomplexobj(loc)):
            raise NotImplementedError("Normal with a complex loc is not supported by pullback")
        if isinstance(loc, int):
            loc = float(loc)
        if isinstance(scale, int):
            scale = float(scale)
        if isinstance(loc, (tuple, list)):
            loc = np.array(loc)
            if loc.dtype == np.float64:
                loc = loc.astype("float32")
        if isinstance(scale, (tuple, list)):
            scale = np.array(scale, dtype=np.float32)
        if self._validate_args(loc, scale):
            self.loc = loc
            self.scale = scale
            self.dtype = dtype_name(loc.dtype)
        else:
            if isinstance(loc, float) and isinstance(scale, float):
                self.all_arg_is_float = True
            if isinstance(loc, np.ndarray) and str(loc.dtype) in ("float32", "float64"):
                self.dtype = str(loc.dtype)
            elif isinstance(scale, np.ndarray) and str(scale.dtype) in ("float32", "float64"):
                self.dtype = str(scale.dtype)
            self.loc, self.scale = self._to_tensor(loc, scale)
            if self.dtype != dtype_name(self.loc.dtype):
                self.loc = paddle.cast(self.loc, dtype=self.dtype)
                self.scale = paddle.cast(self.scale, dtype=self.dtype)
        super().__init__(self.loc.shape)

    @property
    def mean(self) -> Any:
        """`loc`."""
        return self.loc

    @property
    def variance(self) -> Any:
        """`scale ** 2`."""
        return self.scale.pow(2)

    def sample(self, shape: Sequence[int] = (), seed: int = 0) -> Any:
        """Samples of shape `shape + batch_shape`: `loc + scale * eps`, so that, as in
        Paddle, gradients reach `loc` and `scale`."""
        if not isinstance(shape, Iterable):
            raise TypeError("sample shape must be Iterable object.")
        shape = shape_list(shape)
        batch_shape = list((self.loc + self.scale).shape)
        _static_shape(batch_shape, "Normal.sample")
        output_shape = shape + batch_shape
        output = gaussian(output_shape, self.dtype, seed) * (
            paddle.zeros(output_shape, dtype=self.dtype) + self.scale
        )
        output = paddle.add(output, self.loc)
        if self.all_arg_is_float:
            return paddle.reshape(output, shape)
        return output

    def rsample(self, shape: Sequence[int] = ()) -> Any:
        """Reparameterized samples of shape `shape + batch_shape`: `loc + eps * scale`
        with `eps` standard normal (of the parameters' dtype; Paddle draws float32)."""
        if not isinstance(shape, Iterable):
            raise TypeError("sample shape must be Iterable object.")
        eps = gaussian(self._extend_shape(shape), self.dtype)
        return self.loc + eps * self.scale

    def entropy(self) -> Any:
        r"""`0.5 + 0.5 * log(2 pi) + log(scale)`, of the batch shape."""
        zero_tmp = paddle.zeros_like(self.loc + self.scale)
        return paddle.add(0.5 + zero_tmp, 0.5 * math.log(2 * math.pi) + paddle.log(self.scale + zero_tmp))

    def log_prob(self, value: Any) -> Any:
        """The log density at `value` (cast to the parameters' dtype)."""
        value = self._check_values_dtype_in_probs(self.loc, value)
        var = self.scale * self.scale
        log_scale = paddle.log(self.scale)
        return paddle.subtract(
            -1.0 * ((value - self.loc) * (value - self.loc)) / (2.0 * var),
            log_scale + math.log(math.sqrt(2.0 * math.pi)),
        )

    def probs(self, value: Any) -> Any:
        """The density at `value` (computed directly, not as `exp(log_prob)`)."""
        value = self._check_values_dtype_in_probs(self.loc, value)
        var = self.scale * self.scale
        return paddle.divide(
            paddle.exp(-1.0 * ((value - self.loc) * (value - self.loc)) / (2.0 * var)),
            math.sqrt(2 * math.pi) * self.scale,
        )

    def kl_divergence(self, other: Normal) -> Any:
        """KL(self || other) between two normal distributions."""
        if not isinstance(other, Normal):
            raise TypeError(f"kl_divergence: other must be a Normal, got {type(other).__name__}")
        var_ratio = self.scale / other.scale
        var_ratio = var_ratio * var_ratio
        t1 = (self.loc - other.loc) / other.scale
        t1 = t1 * t1
        return paddle.add(0.5 * var_ratio, 0.5 * (t1 - 1.0 - paddle.log(var_ratio)))
