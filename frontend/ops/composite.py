"""Composite functional ops: losses and activations Paddle has as kernels of their
own, built here from existing differentiable frontend functions, so their gradients
(and second derivatives) come from the ops' VJP rules and no new op is needed.

Numerical forms (why each is written the way it is):

* `softplus(x) = m + log(exp(-m) + exp(x - m))` with `m = relu(x)`: both exponents
  are <= 0 (no overflow), the log's argument is >= 1, and the derivative with respect
  to `m` is exactly zero, so relu's kink at 0 does not leak into the gradient, which
  is `sigmoid(x)` everywhere.  `log_sigmoid` and `binary_cross_entropy_with_logits`
  are written with it.
* `elu` takes `exp(minimum(x, 0))`: `where` passes a zero gradient to the branch it
  did not pick, and `0 * exp(large)` would be NaN.
* `binary_cross_entropy` clamps `log` at -100, as Paddle's kernel does.

`reduction` is `'mean'`, `'sum'` or `'none'` everywhere, as in Paddle.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pullback.dialects import pd
from pullback.frontend.core import apply, in_dynamic_mode
from pullback.frontend.ops.elementwise import (
    abs,
    check_float_tensor,
    clip,
    exp,
    greater_than,
    is_scalar,
    log,
    maximum,
    minimum,
    pow,
    relu,
    scale,
    sigmoid,
    sqrt,
    square,
    where,
)
from pullback.frontend.ops.reduction import check_axes, mean, sum

_REDUCTIONS = ("mean", "sum", "none")

# --------------------------------------------------------------------- helpers


def _number(fn: str, arg: str, v: Any) -> float:
    """A Python/numpy number argument as a float."""
    if not is_scalar(v):
        raise TypeError(f"{fn}: '{arg}' must be a number, got {type(v).__name__}")
    return float(v)


def check_reduction(fn: str, reduction: Any) -> str:
    """`reduction` if it is one of Paddle's ('mean', 'sum', 'none'); else ValueError."""
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{fn}: reduction must be one of {list(_REDUCTIONS)}, got {reduction!r}")
    return reduction


def _reduce(loss: Any, reduction: str, name: str | None) -> Any:
    """Paddle's loss reduction: the mean or sum of all elements, or the loss itself."""
    if reduction == "mean":
        return mean(loss, name=name)
    if reduction == "sum":
        return sum(loss, name=name)
    return loss


def _check_pair(fn: str, x_arg: str, x: Any, label: Any) -> None:
    """Both float tensors of one dtype (labels broadcast against inputs in the ops)."""
    check_float_tensor(fn, x_arg, x)
    check_float_tensor(fn, "label", label)
    if x.dtype != label.dtype:
        raise TypeError(f"{fn}: {x_arg} ({x.dtype}) and label ({label.dtype}) must have one dtype")


def _softplus(x: Any) -> Any:
    """`log(1 + exp(x))`, overflow-free and with the exact gradient (module docstring)."""
    m = relu(x)
    return m + log(exp(-m) + exp(x - m))


# ---------------------------------------------------------------------- losses


def mse_loss(input: Any, label: Any, reduction: str = "mean", name: str | None = None) -> Any:
    """`paddle.nn.functional.mse_loss`: `(input - label) ** 2`, reduced."""
    _check_pair("mse_loss", "input", input, label)
    reduction = check_reduction("mse_loss", reduction)
    if in_dynamic_mode() and input.shape == label.shape:
        # Paddle's dygraph runs subtract and square; one `square_error_cost` computes
        # the same values (and gradients) with one recorded op instead of two.
        loss = apply(pd.SquareErrorCostOp, [input, label], prefix="square_error_cost",
                     name=name if reduction == "none" else None)
        return _reduce(loss, reduction, name) if reduction != "none" else loss
    return _reduce(square(input - label), reduction, name)


def l1_loss(input: Any, label: Any, reduction: str = "mean", name: str | None = None) -> Any:
    """`paddle.nn.functional.l1_loss`: `|input - label|`, reduced."""
    _check_pair("l1_loss", "input", input, label)
    return _reduce(abs(input - label), check_reduction("l1_loss", reduction), name)


def binary_cross_entropy(input: Any, label: Any, weight: Any = None,
                         reduction: str = "mean", name: str | None = None) -> Any:
    """`paddle.nn.functional.binary_cross_entropy` of PROBABILITIES `input` in [0, 1]:
    `-weight * (label * log(input) + (1 - label) * log(1 - input))`, each log
    clamped at -100 as in Paddle, then reduced."""
    fn = "binary_cross_entropy"
    _check_pair(fn, "input", input, label)
    reduction = check_reduction(fn, reduction)
    log_p = maximum(log(input), -100.0)
    log_q = maximum(log(scale(input, -1.0, 1.0)), -100.0)
    loss = -(label * log_p + scale(label, -1.0, 1.0) * log_q)
    if weight is not None:
        check_float_tensor(fn, "weight", weight)
        loss = loss * weight
    return _reduce(loss, reduction, name)


def binary_cross_entropy_with_logits(logit: Any, label: Any, weight: Any = None,
                                     reduction: str = "mean", pos_weight: Any = None,
                                     name: str | None = None) -> Any:
    """`paddle.nn.functional.binary_cross_entropy_with_logits`: sigmoid cross entropy
    of LOGITS, `softplus(logit) - label * logit`, or with `pos_weight`
    `(1 - label) * logit + lw * softplus(-logit)` with
    `lw = (pos_weight - 1) * label + 1`, times `weight`, reduced.  Equal to Paddle's `max(x, 0) - x*z + log(1 + exp(-|x|))` form, and as
    stable (see the module docstring)."""
    fn = "binary_cross_entropy_with_logits"
    _check_pair(fn, "logit", logit, label)
    reduction = check_reduction(fn, reduction)
    if pos_weight is None:
        # the same value as `(1 - label) * logit + softplus(-logit)`, without its
        # cancellation of two large terms when the logit is very negative and the
        # label small (Paddle's form has none either)
        m = relu(logit)
        loss = (m - label * logit) + log(exp(-m) + exp(logit - m))  # softplus(logit) - label * logit
    else:
        check_float_tensor(fn, "pos_weight", pos_weight)
        sp = (label * scale(pos_weight, 1.0, -1.0) + 1.0) * _softplus(-logit)
        loss = scale(label, -1.0, 1.0) * logit + sp
    if weight is not None:
        check_float_tensor(fn, "weight", weight)
        loss = loss * weight
    return _reduce(loss, reduction, name)


# ----------------------------------------------------------------- activations


def leaky_relu(x: Any, negative_slope: float = 0.01, name: str | None = None) -> Any:
    """`paddle.nn.functional.leaky_relu`: `x` where `x > 0`, else `negative_slope * x`."""
    check_float_tensor("leaky_relu", "x", x)
    slope = _number("leaky_relu", "negative_slope", negative_slope)
    return where(greater_than(x, 0.0), x, scale(x, slope), name=name)


def elu(x: Any, alpha: float = 1.0, name: str | None = None) -> Any:
    """`paddle.nn.functional.elu`: `x` where `x > 0`, else `alpha * (exp(x) - 1)`."""
    check_float_tensor("elu", "x", x)
    a = _number("elu", "alpha", alpha)
    negative = scale(exp(minimum(x, 0.0)), a, -a)
    return where(greater_than(x, 0.0), x, negative, name=name)


def softplus(x: Any, beta: float = 1, threshold: float = 20, name: str | None = None) -> Any:
    """`paddle.nn.functional.softplus`: `log(1 + exp(beta * x)) / beta`, and `x`
    itself where `beta * x > threshold` (Paddle's linear regime)."""
    check_float_tensor("softplus", "x", x)
    b = _number("softplus", "beta", beta)
    t = _number("softplus", "threshold", threshold)
    if b == 0:
        raise ValueError("softplus: beta must not be 0")
    bx = scale(x, b)
    return where(greater_than(bx, t), x, scale(_softplus(bx), 1.0 / b), name=name)


def silu(x: Any, name: str | None = None) -> Any:
    """`paddle.nn.functional.silu`: `x * sigmoid(x)`."""
    check_float_tensor("silu", "x", x)
    return x * sigmoid(x)


def swish(x: Any, name: str | None = None) -> Any:
    """`paddle.nn.functional.swish`: `x * sigmoid(x)` (the same function as `silu`)."""
    check_float_tensor("swish", "x", x)
    return x * sigmoid(x)


def log_sigmoid(x: Any, name: str | None = None) -> Any:
    """`paddle.nn.functional.log_sigmoid`: `log(sigmoid(x)) = -softplus(-x)`."""
    check_float_tensor("log_sigmoid", "x", x)
    return -_softplus(-x)


def hardtanh(x: Any, min: float = -1.0, max: float = 1.0, name: str | None = None) -> Any:
    """`paddle.nn.functional.hardtanh`: `x` clamped into `[min, max]`."""
    check_float_tensor("hardtanh", "x", x)
    return clip(x, _number("hardtanh", "min", min), _number("hardtanh", "max", max), name=name)


def normalize(x: Any, p: float = 2, axis: int = 1, epsilon: float = 1e-12,
              name: str | None = None) -> Any:
    """`paddle.nn.functional.normalize`: `x / max(||x||_p, epsilon)`, the p-norm taken
    along `axis` (kept as a size-1 dimension so it broadcasts back)."""
    fn = "normalize"
    check_float_tensor(fn, "x", x)
    order = _number(fn, "p", p)
    if order <= 0:
        raise ValueError(f"{fn}: p must be positive, got {p!r}")
    if not isinstance(axis, int) or isinstance(axis, bool):
        raise TypeError(f"{fn}: axis must be an int, got {axis!r}")
    check_axes(fn, x, axis)
    eps = _number(fn, "epsilon", epsilon)
    if order == 2:
        norm = sqrt(sum(square(x), axis=axis, keepdim=True))
    elif order == 1:
        norm = sum(abs(x), axis=axis, keepdim=True)
    else:
        norm = pow(sum(pow(abs(x), order), axis=axis, keepdim=True), 1.0 / order)
    return x / clip(norm, min=eps)


def fluid_leaky_relu(x: Any, alpha: float = 0.02, name: str | None = None) -> Any:
    """`fluid.layers.leaky_relu(x, alpha=0.02)`: Paddle 1.x's default slope."""
    return leaky_relu(x, alpha, name=name)


PADDLE: list[Callable[..., Any]] = []
FUNCTIONAL: list[Callable[..., Any]] = [
    mse_loss, l1_loss, binary_cross_entropy, binary_cross_entropy_with_logits,
    leaky_relu, elu, softplus, silu, swish, log_sigmoid, hardtanh, normalize,
]
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {
    "leaky_relu": fluid_leaky_relu, "elu": elu, "softplus": softplus,
    "logsigmoid": log_sigmoid,
}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {}
