"""Paddle's in-place Tensor methods (`x.add_(y)`, `x.zero_()`, `x.uniform_()`, ...).

Each computes the out-of-place result with the family function and makes `x` hold
it (`indexing._rebind`): in eager mode `x` takes the new value and its gradient
history, as in Paddle's eager in-place ops; in static mode `x` is renamed to the new
Variable.  As in Paddle, a leaf Tensor that requires grad refuses (ValueError) while
gradients are recorded; under `paddle.no_grad()` its value is overwritten and it stays
a leaf (how parameters are re-initialized).  The result is cast back to x's dtype.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from pullback.frontend.core import in_dynamic_mode
from pullback.frontend.eager import is_grad_enabled
from pullback.frontend.ops import elementwise as E
from pullback.frontend.ops import indexing as X
from pullback.frontend.ops import math as M
from pullback.frontend.ops import shape as S
from pullback.frontend.ops.creation import _gaussian, uniform


def _assign(fn: str, x: Any, new: Any) -> Any:
    """Make x hold `new` (cast to x's dtype) and return x."""
    E.check_tensor(fn, "x", x)
    if new.dtype != x.dtype:
        new = E.cast(new, x.dtype)
    if in_dynamic_mode() and not is_grad_enabled():
        # No recording: overwrite the value; x keeps its place in the graph (a
        # parameter stays a leaf).
        x._data = np.array(new._data, dtype=x._arr.dtype)
        return x
    X._rebind(x, new, fn)
    return x


def _inplace(f: Callable[..., Any], name: str) -> Callable[..., Any]:
    """The in-place method `name` of the out-of-place function f."""

    def method(x: Any, *args: Any, **kwargs: Any) -> Any:
        return _assign(name, x, f(x, *args, **kwargs))

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"`Tensor.{name}`: the in-place version of `{f.__name__}` (x is returned)."
    return method


def fill_(x: Any, value: Any) -> Any:
    """`Tensor.fill_`: set every element to `value`."""
    if not E.is_scalar(value) and not isinstance(value, bool):
        raise TypeError(f"fill_: value must be a number, got {type(value).__name__}")
    return _assign("fill_", x, E.full_like(x, float(value)))


def zero_(x: Any) -> Any:
    """`Tensor.zero_`: set every element to 0."""
    return _assign("zero_", x, E.zeros_like(x))


def _static_shape(fn: str, x: Any) -> list[int]:
    dims = list(x.shape)
    if any(d < 0 for d in dims):
        raise ValueError(f"{fn}: x must have a static shape, got {dims}")
    return dims


def uniform_(x: Any, min: float = -1.0, max: float = 1.0, seed: int = 0,  # noqa: A002
             name: str | None = None) -> Any:
    """`Tensor.uniform_`: fill with samples of `U[min, max)`."""
    E.check_float_tensor("uniform_", "x", x)
    return _assign("uniform_", x, uniform(_static_shape("uniform_", x), x.dtype, min, max, seed))


def normal_(x: Any, mean: float = 0.0, std: float = 1.0, name: str | None = None) -> Any:
    """`Tensor.normal_`: fill with samples of `N(mean, std^2)`."""
    E.check_float_tensor("normal_", "x", x)
    return _assign("normal_", x, _gaussian("normal_", _static_shape("normal_", x), float(mean),
                                           float(std), x.dtype, 0, None))


def exponential_(x: Any, lam: float = 1.0, name: str | None = None) -> Any:
    """`Tensor.exponential_`: fill with samples of the exponential distribution of
    rate `lam` (`-log(1 - u) / lam`, u uniform in [0, 1))."""
    E.check_float_tensor("exponential_", "x", x)
    if not E.is_scalar(lam) or float(lam) <= 0:
        raise ValueError(f"exponential_: lam must be a positive number, got {lam!r}")
    u = uniform(_static_shape("exponential_", x), x.dtype, 0.0, 1.0)
    return _assign("exponential_", x, E.scale(M.log1p(E.scale(u, -1.0)), -1.0 / float(lam)))


def copy_(x: Any, src: Any, blocking: bool = True) -> Any:
    """`Tensor.copy_`: copy `src` (broadcast to x's shape, cast to its dtype) into x."""
    E.check_tensor("copy_", "src", src)
    if list(src.shape) != list(x.shape):
        try:
            np.broadcast_shapes(tuple(src.shape), tuple(x.shape))
        except ValueError:
            raise ValueError(
                f"copy_: src of shape {list(src.shape)} cannot be copied into x of shape "
                f"{list(x.shape)}") from None
        src = S.expand(src, list(x.shape))
    return _assign("copy_", x, X.assign(src))


_FROM: dict[str, Callable[..., Any]] = {
    "add_": E.add, "subtract_": E.subtract, "multiply_": E.multiply, "divide_": E.divide,
    "pow_": E.pow, "scale_": E.scale, "clip_": E.clip, "exp_": E.exp, "sqrt_": E.sqrt,
    "tanh_": E.tanh, "sigmoid_": E.sigmoid, "abs_": E.abs, "square_": E.square,
    "rsqrt_": M.rsqrt, "reciprocal_": M.reciprocal, "round_": M.round, "floor_": M.floor,
    "ceil_": M.ceil, "neg_": M.neg, "trunc_": M.trunc, "frac_": M.frac, "remainder_": M.remainder,
    "mod_": M.mod, "floor_divide_": M.floor_divide, "nan_to_num_": M.nan_to_num,
    "logit_": M.logit, "log_": E.log, "sin_": M.sin, "cos_": M.cos,
    "reshape_": S.reshape, "squeeze_": S.squeeze, "unsqueeze_": S.unsqueeze,
    "flatten_": S.flatten, "tril_": X.tril, "triu_": X.triu, "masked_fill_": X.masked_fill,
}
"""Generated in-place methods and the out-of-place function each one applies."""

_GENERATED = {name: _inplace(f, name) for name, f in _FROM.items()}

PADDLE: list[Callable[..., Any]] = [
    f for n, f in _GENERATED.items() if n not in ("log_", "sin_", "cos_", "abs_", "sigmoid_",
                                                   "square_", "masked_fill_")
]
FUNCTIONAL: list[Callable[..., Any]] = []
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    **_GENERATED, "fill_": fill_, "zero_": zero_, "uniform_": uniform_, "normal_": normal_,
    "exponential_": exponential_, "copy_": copy_,
}
