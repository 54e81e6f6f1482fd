"""Activation functions of `paddle.nn.functional` built as composites of existing
differentiable ops (Paddle has a kernel for each; the values agree to rounding and
the gradients come from the ops' VJP rules, second order included).

Numerical forms:

* `mish(x) = x * tanh(softplus(x))` with the overflow-free softplus of `composite`,
  and Paddle's linear regime `softplus(x) = x` where `x > threshold` (20).
* `selu` and `celu` take `exp` of `minimum(x, 0)` only: `where` gives the branch it
  did not pick a zero gradient, and `0 * exp(large)` would be NaN.
* `relu6`, `hardsigmoid` and `hardswish` clamp with `clip`; at the clamp's bounds
  their gradient is the one-sided value the clip rule gives (Paddle's kernels pick
  0 exactly at the bounds; the two differ only on a measure-zero set).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pullback.frontend.ops.composite import _softplus
from pullback.frontend.ops.elementwise import (
    abs,
    check_float_tensor,
    clip,
    exp,
    greater_than,
    is_scalar,
    less_than,
    minimum,
    sigmoid,
    tanh,
    where,
)
from pullback.frontend.ops.elementwise import scale as _scale
from pullback.frontend.ops.shape import reshape, split

_SELU_SCALE = 1.0507009873554804934193349852946
_SELU_ALPHA = 1.6732632423543772848170429916717


def _number(fn: str, arg: str, v: Any) -> float:
    """A Python/numpy number argument as a float (TypeError otherwise)."""
    if not is_scalar(v):
        raise TypeError(f"{fn}: '{arg}' must be a number, got {type(v).__name__}")
    return float(v)


def relu6(x: Any, name: str | None = None) -> Any:
    """`paddle.nn.functional.relu6`: `min(max(x, 0), 6)`."""
    check_float_tensor("relu6", "x", x)
    return clip(x, 0.0, 6.0, name=name)


def hardsigmoid(x: Any, slope: float = 0.1666667, offset: float = 0.5,
                name: str | None = None) -> Any:
    """`paddle.nn.functional.hardsigmoid`: `clip(slope * x + offset, 0, 1)`."""
    check_float_tensor("hardsigmoid", "x", x)
    s = _number("hardsigmoid", "slope", slope)
    o = _number("hardsigmoid", "offset", offset)
    return clip(_scale(x, s, o), 0.0, 1.0, name=name)


def hardswish(x: Any, name: str | None = None) -> Any:
    """`paddle.nn.functional.hardswish`: `x * relu6(x + 3) / 6`."""
    check_float_tensor("hardswish", "x", x)
    return x * _scale(clip(_scale(x, 1.0, 3.0), 0.0, 6.0), 1.0 / 6.0)


def mish(x: Any, name: str | None = None) -> Any:
    """`paddle.nn.functional.mish`: `x * tanh(softplus(x))` (softplus is `x` above
    Paddle's threshold 20)."""
    check_float_tensor("mish", "x", x)
    sp = where(greater_than(x, 20.0), x, _softplus(x))
    return x * tanh(sp)


def selu(x: Any, scale: float = _SELU_SCALE, alpha: float = _SELU_ALPHA,
         name: str | None = None) -> Any:
    """`paddle.nn.functional.selu`: `scale * x` where `x > 0`, else
    `scale * alpha * (exp(x) - 1)`."""
    fn = "selu"
    check_float_tensor(fn, "x", x)
    s = _number(fn, "scale", scale)
    a = _number(fn, "alpha", alpha)
    if s <= 1.0:
        raise ValueError(f"{fn}: scale must be greater than 1.0, got {s}")
    if a < 0:
        raise ValueError(f"{fn}: alpha must be no less than zero, got {a}")
    negative = _scale(exp(minimum(x, 0.0)), s * a, -s * a)
    return where(greater_than(x, 0.0), _scale(x, s), negative, name=name)


def celu(x: Any, alpha: float = 1.0, name: str | None = None) -> Any:
    """`paddle.nn.functional.celu`: `max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`."""
    check_float_tensor("celu", "x", x)
    a = _number("celu", "alpha", alpha)
    if a == 0:
        raise ZeroDivisionError("celu: alpha cannot be 0")
    negative = _scale(exp(_scale(minimum(x, 0.0), 1.0 / a)), a, -a)
    return where(greater_than(x, 0.0), x, negative, name=name)


def softsign(x: Any, name: str | None = None) -> Any:
    """`paddle.nn.functional.softsign`: `x / (1 + |x|)`."""
    check_float_tensor("softsign", "x", x)
    return x / _scale(abs(x), 1.0, 1.0)


def tanhshrink(x: Any, name: str | None = None) -> Any:
    """`paddle.nn.functional.tanhshrink`: `x - tanh(x)`."""
    check_float_tensor("tanhshrink", "x", x)
    return x - tanh(x)


def hardshrink(x: Any, threshold: float = 0.5, name: str | None = None) -> Any:
    """`paddle.nn.functional.hardshrink`: `x` where `|x| > threshold`, else 0."""
    check_float_tensor("hardshrink", "x", x)
    t = _number("hardshrink", "threshold", threshold)
    return where(greater_than(abs(x), t), x, x * 0.0, name=name)


def softshrink(x: Any, threshold: float = 0.5, name: str | None = None) -> Any:
    """`paddle.nn.functional.softshrink`: `x - t` above `t`, `x + t` below `-t`, else 0."""
    check_float_tensor("softshrink", "x", x)
    t = _number("softshrink", "threshold", threshold)
    if t < 0:
        raise ValueError(f"softshrink: threshold must be non-negative, got {t}")
    inner = where(less_than(x, -t), _scale(x, 1.0, t), x * 0.0)
    return where(greater_than(x, t), _scale(x, 1.0, -t), inner, name=name)


def thresholded_relu(x: Any, threshold: float = 1.0, value: float = 0.0,
                     name: str | None = None) -> Any:
    """`paddle.nn.functional.thresholded_relu`: `x` where `x > threshold`, else `value`."""
    check_float_tensor("thresholded_relu", "x", x)
    t = _number("thresholded_relu", "threshold", threshold)
    v = _number("thresholded_relu", "value", value)
    return where(greater_than(x, t), x, _scale(x, 0.0, v), name=name)


def prelu(x: Any, weight: Any, data_format: str = "NCHW", name: str | None = None) -> Any:
    """`paddle.nn.functional.prelu`: `x` where `x > 0`, else `weight * x`; `weight` has
    1 element (shared) or one per channel (dimension 1 for `NC*` data formats, the
    last for `N*C`)."""
    fn = "prelu"
    check_float_tensor(fn, "x", x)
    check_float_tensor(fn, "weight", weight)
    if data_format not in ("NC", "NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC"):
        raise ValueError(f"{fn}: unsupported data_format {data_format!r}")
    if weight.dtype != x.dtype:
        raise TypeError(f"{fn}: weight ({weight.dtype}) must have the dtype of x ({x.dtype})")
    if len(weight.shape) != 1:
        raise ValueError(f"{fn}: weight must be 1-D, got shape {list(weight.shape)}")
    n = weight.shape[0]
    rank = len(x.shape)
    w = weight
    if n != 1:
        if rank < 2:
            raise ValueError(f"{fn}: a per-channel weight needs x of rank >= 2, got {rank}")
        c_axis = 1 if data_format[1] == "C" else rank - 1
        c = x.shape[c_axis]
        if c >= 0 and c != n:
            raise ValueError(f"{fn}: weight has {n} elements but x has {c} channels "
                             f"(axis {c_axis}, data_format {data_format})")
        w = reshape(weight, [n if i == c_axis else 1 for i in range(rank)])
    return where(greater_than(x, 0.0), x, x * w, name=name)


def glu(x: Any, axis: int = -1, name: str | None = None) -> Any:
    """`paddle.nn.functional.glu`: split x in halves `a, b` along `axis`,
    `a * sigmoid(b)`."""
    check_float_tensor("glu", "x", x)
    rank = len(x.shape)
    if isinstance(axis, bool) or not isinstance(axis, int) or not -rank <= axis < rank:
        raise ValueError(f"glu: axis {axis!r} is out of range for a {rank}-D input")
    size = x.shape[axis]
    if size >= 0 and size % 2:
        raise ValueError(f"glu: the size of axis {axis} must be even, got {size}")
    a, b = split(x, 2, axis=axis)
    return a * sigmoid(b)


def _fluid_hard_sigmoid(x: Any, slope: float = 0.2, offset: float = 0.5,
                        name: str | None = None) -> Any:
    """`fluid.layers.hard_sigmoid` (Paddle 1.x default slope 0.2)."""
    return hardsigmoid(x, slope, offset, name=name)


def _fluid_hard_swish(x: Any, threshold: float = 6.0, scale: float = 6.0,
                      offset: float = 3.0, name: str | None = None) -> Any:
    """`fluid.layers.hard_swish`: `x * min(max(x + offset, 0), threshold) / scale`."""
    check_float_tensor("hard_swish", "x", x)
    return x * _scale(clip(_scale(x, 1.0, float(offset)), 0.0, float(threshold)), 1.0 / float(scale))


def _fluid_relu6(x: Any, threshold: float = 6.0, name: str | None = None) -> Any:
    """`fluid.layers.relu6`: `min(max(x, 0), threshold)`."""
    check_float_tensor("relu6", "x", x)
    return clip(x, 0.0, _number("relu6", "threshold", threshold), name=name)


PADDLE: list[Callable[..., Any]] = []
FUNCTIONAL: list[Callable[..., Any]] = [
    relu6, hardsigmoid, hardswish, mish, selu, celu, softsign, tanhshrink, hardshrink,
    softshrink, thresholded_relu, prelu, glu,
]
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {
    "relu6": _fluid_relu6, "hard_sigmoid": _fluid_hard_sigmoid, "hard_swish": _fluid_hard_swish,
    "mish": mish, "selu": selu, "softsign": softsign, "tanh_shrink": tanhshrink,
    "hard_shrink": hardshrink, "softshrink": softshrink, "thresholded_relu": thresholded_relu,
}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {}
