"""`paddle.distribution.Distribution`: the base class of the distributions, with the
argument handling Paddle 3.3.1's distributions share.

Every distribution of `paddle.distribution` is written with pullback's public tensor
ops (`import pullback as paddle`), so it runs in eager and static mode, on every
backend, and differentiates wherever its ops do: `rsample` reparameterizes through
the ops, so gradients reach the parameters.  pullback has no complex dtypes: the
complex Gaussian of Paddle's `Normal` is not supported.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

import pullback as paddle


def is_tensor(x: Any) -> bool:
    """Whether `x` is a tensor of either mode (an eager Tensor or a static Variable)."""
    from pullback.frontend.eager import Tensor
    from pullback.frontend.framework import Variable

    return isinstance(x, (Tensor, Variable))


def dtype_name(dtype: Any) -> str:
    """`'float32'` for a dtype given as a pullback dtype, a numpy dtype or a string
    (Paddle's `convert_dtype`)."""
    name = getattr(dtype, "name", None)
    if isinstance(name, str):
        return name
    text = str(dtype)
    return text[len("paddle."):] if text.startswith("paddle.") else text


def constant(array: Any, dtype: str | None = None) -> Any:
    """A tensor holding `array` in the current mode (a constant of the program in
    static mode)."""
    arr = np.asarray(array) if dtype is None else np.asarray(array, dtype=dtype)
    if paddle.in_dynamic_mode():
        return paddle.to_tensor(arr, dtype=dtype_name(arr.dtype))
    return paddle.assign(arr)


def shape_list(shape: Any) -> list[int]:
    """A sample shape (a sequence of ints, or an eager int Tensor as Paddle accepts) as
    a list of ints."""
    if is_tensor(shape):
        return [int(d) for d in np.asarray(shape.numpy()).reshape(-1)]
    return [int(d) for d in shape]


def eps_of(dtype: Any) -> float:
    """Machine epsilon of a float dtype (Paddle's `paddle.finfo(dtype).eps`)."""
    return float(np.finfo(np.dtype(dtype_name(dtype))).eps)


def inverse_cdf_sample(pmf: Any, shape: Sequence[int], dtype: str) -> Any:
    """Draws of shape `shape` (sample shape + batch shape) from discrete distributions
    on `0, 1, ..., K-1` given by `pmf` (`[K, *batch]`, summing to about 1 along axis
    0): a uniform `u` per draw, the draw being the number of CDF values below `u`
    (at most K - 1).  Exact for distributions of finite support (Binomial) and for
    supports cut where the remaining mass is below float precision (Poisson); it
    builds on uniform, cumsum and comparisons, so it runs in both modes."""
    k = int(pmf.shape[0])
    batch_rank = len(pmf.shape) - 1
    cdf = paddle.cumsum(pmf, axis=0)
    extra = len(shape) - batch_rank  # the sample dimensions, between K and the batch
    cdf = cdf.reshape([k] + [1] * extra + [int(d) for d in pmf.shape[1:]])
    u = paddle.uniform(list(shape), dtype=dtype, min=0.0, max=1.0)
    below = paddle.cast(paddle.unsqueeze(u, 0) > cdf, dtype).sum(0)
    return paddle.clip(below, max=float(k - 1))


def sum_rightmost(value: Any, n: int) -> Any:
    """`value` summed over its `n` rightmost axes."""
    return value.sum(list(range(-n, 0))) if n > 0 else value


class Distribution:
    """The abstract base class of probability distributions.

    `batch_shape`: independent, not identically distributed draws (a batch of
    distributions); `event_shape`: the shape of one draw (`[]` for a scalar
    distribution, `[n]` for an `n`-dimensional multivariate one)."""

    def __init__(self, batch_shape: Sequence[int] = (), event_shape: Sequence[int] = ()) -> None:
        self._batch_shape = tuple(batch_shape)
        self._event_shape = tuple(event_shape)
        super().__init__()

    @property
    def batch_shape(self) -> Sequence[int]:
        """The batch shape."""
        return self._batch_shape

    @property
    def event_shape(self) -> Sequence[int]:
        """The event shape."""
        return self._event_shape

    @property
    def mean(self) -> Any:
        """The mean of the distribution."""
        raise NotImplementedError

    @property
    def variance(self) -> Any:
        """The variance of the distribution."""
        raise NotImplementedError

    def sample(self, shape: Sequence[int] = ()) -> Any:
        """Samples of shape `shape + batch_shape + event_shape`."""
        raise NotImplementedError

    def rsample(self, shape: Sequence[int] = ()) -> Any:
        """Reparameterized samples (differentiable with respect to the parameters)."""
        raise NotImplementedError

    def entropy(self) -> Any:
        """The entropy."""
        raise NotImplementedError

    def kl_divergence(self, other: Any) -> Any:
        """KL(self || other)."""
        raise NotImplementedError

    def prob(self, value: Any) -> Any:
        """The probability density (mass) at `value`: `exp(log_prob(value))`."""
        return self.log_prob(value).exp()

    def log_prob(self, value: Any) -> Any:
        """The log probability density (mass) at `value`."""
        raise NotImplementedError

    def probs(self, value: Any) -> Any:
        """The probability density (mass) at `value` (Paddle's older name of `prob`)."""
        raise NotImplementedError

    def _extend_shape(self, sample_shape: Sequence[int]) -> tuple[int, ...]:
        """`sample_shape + batch_shape + event_shape`."""
        return tuple(shape_list(sample_shape)) + tuple(self._batch_shape) + tuple(self._event_shape)

    def _validate_args(self, *args: Any) -> bool:
        """True when every argument is a tensor, False when none is; a mix raises
        ValueError (as Paddle)."""
        tensors = [is_tensor(a) for a in args]
        if any(tensors) and not all(tensors):
            raise ValueError("if one argument is Tensor, all arguments should be Tensor")
        return any(tensors)

    def _to_tensor(self, *args: Any) -> tuple[Any, ...]:
        """Numbers, lists and arrays as float32 tensors broadcast to one shape, as
        Paddle 3.3.1's (`float64` input too: Paddle casts every non-float32 argument
        to float32, warning for the non-float ones)."""
        arrays = []
        total: Any = 0.0
        for arg in args:
            if not isinstance(arg, (float, list, tuple, np.ndarray)) and not is_tensor(arg):
                raise TypeError(
                    "Type of input args must be float, list, tuple, numpy.ndarray or Tensor, but "
                    f"received type {type(arg)}"
                )
            arr = np.array(arg)
            if str(arr.dtype) != "float32":
                if str(arr.dtype) != "float64":
                    warnings.warn(
                        "data type of argument only support float32 and float64, your argument will be "
                        "convert to float32.",
                        stacklevel=3,
                    )
                arr = arr.astype("float32")
            total = total + arr
            arrays.append(arr)
        dtype = np.asarray(total).dtype
        return tuple(constant(np.broadcast_arrays(a, total)[0].astype(dtype)) for a in arrays)

    def _check_values_dtype_in_probs(self, param: Any, value: Any) -> Any:
        """`value` cast to `param`'s dtype when it is the other float dtype (with a
        warning, as Paddle)."""
        if dtype_name(value.dtype) != dtype_name(param.dtype) and dtype_name(value.dtype) in (
            "float32",
            "float64",
        ):
            warnings.warn(
                "dtype of input 'value' needs to be the same as parameters of distribution class. "
                "dtype of 'value' will be converted.",
                stacklevel=3,
            )
            return paddle.cast(value, dtype_name(param.dtype))
        return value

    def _probs_to_logits(self, probs: Any, is_binary: bool = False) -> Any:
        """Logits of probabilities: log-odds when `is_binary`, else their log."""
        return (paddle.log(probs) - paddle.log1p(-probs)) if is_binary else paddle.log(probs)

    def _logits_to_probs(self, logits: Any, is_binary: bool = False) -> Any:
        """Probabilities of logits: a sigmoid when `is_binary`, else a softmax over the
        last axis."""
        F = paddle.nn.functional
        return F.sigmoid(logits) if is_binary else F.softmax(logits, axis=-1)

    def _broadcast_all(self, *args: Any) -> tuple[Any, ...]:
        """The arguments as tensors broadcast together; numbers take the dtype of the
        first tensor argument (the default dtype when none is a tensor)."""
        for arg in args:
            if not isinstance(arg, (float, list, tuple, np.ndarray)) and not is_tensor(arg):
                raise TypeError(
                    "Type of input args must be float, list, tuple, numpy.ndarray or Tensor, but "
                    f"received type {type(arg)}"
                )
        if not all(is_tensor(a) for a in args):
            dtype = paddle.get_default_dtype()
            for arg in args:
                if is_tensor(arg):
                    dtype = dtype_name(arg.dtype)
                    break
            args = tuple(a if is_tensor(a) else constant(a, dtype) for a in args)
        return tuple(paddle.broadcast_tensors(list(args)))
