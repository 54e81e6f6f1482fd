"""Gradient clipping (`paddle.nn.ClipGradByValue`, `ClipGradByNorm`,
`ClipGradByGlobalNorm`, `fluid.clip.*`) and error clipping.

An optimizer's `grad_clip` is called on its `(param, grad)` pairs before
regularization and the updates.  The clipped gradients are computed with the ordinary
API functions, so the same code serves both modes: in static mode they are visible
`pd` IR between the backward region and the update ops, in eager mode they are
computed at once in `step()` (not recorded; `.grad` itself is left unchanged, as in
Paddle).  A parameter with `ParamAttr(need_clip=False)` keeps its gradient.

* `ClipGradByValue(max, min)`: `clip(g, min, max)`;
* `ClipGradByNorm(clip_norm)`: per gradient, `g * clip_norm / max(||g||, clip_norm)`;
* `ClipGradByGlobalNorm(clip_norm)`: every gradient times
  `clip_norm / max(global_norm, clip_norm)`, where `global_norm` is the square root of
  the summed squared L2 norms (one `pd.squared_l2_norm` per gradient), as Paddle
  builds it op for op.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pullback.dialects import pd
from pullback.frontend import core
from pullback.frontend.ops.elementwise import (
    cast,
    clip,
    divide,
    full,
    maximum,
    multiply,
    sqrt,
)
from pullback.frontend.ops.reduction import add_n

ParamsGrads = list[tuple[Any, Any]]


def _check_number(api: str, arg: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{api}: {arg} must be a float, got {type(v).__name__}")
    return float(v)


def _need_clip(param: Any) -> bool:
    return getattr(param, "need_clip", True) is not False


def squared_l2_norm(x: Any) -> Any:
    """`sum(x * x)` as a 0-d tensor (Paddle's `squared_l2_norm` op)."""
    return core.apply(pd.SquaredL2NormOp, [x], prefix="squared_l2_norm")


def clip_by_norm(x: Any, max_norm: float, name: str | None = None) -> Any:
    """`paddle.nn.clip.clip_by_norm`: `x * max_norm / norm(x)` when the L2 norm of
    `x` exceeds `max_norm`, else `x` (as `x * max_norm / max(norm, max_norm)`)."""
    max_norm = _check_number("clip_by_norm", "max_norm", max_norm)
    norm = sqrt(squared_l2_norm(x))
    limit = full([], max_norm, dtype=x.dtype)
    return multiply(x, divide(limit, maximum(norm, limit)), name=name)


def _scaled_in_place(grad: Any, factor: Any) -> Any:
    """`grad * factor`; in a static program the product keeps the gradient's name, as
    Paddle's in-place `elementwise_mul` does."""
    if core.in_dynamic_mode():
        return multiply(grad, factor)
    return core.apply(pd.ElementwiseMulOp, [grad, factor], prefix="elementwise_mul",
                      out_names=[grad.name])


class ClipGradBase:
    """Base class of gradient clipping strategies: `clip(params_grads)`."""

    def __str__(self) -> str:
        raise NotImplementedError

    def _clip(self, params_grads: ParamsGrads) -> ParamsGrads:
        raise NotImplementedError

    def __call__(self, params_grads: Sequence[tuple[Any, Any]]) -> ParamsGrads:
        """The clipped `(param, grad)` pairs (pairs without a gradient dropped)."""
        pairs = [(p, g) for p, g in params_grads if g is not None]
        return self._clip(pairs)


class ClipGradByValue(ClipGradBase):
    """Clip every gradient element into `[min, max]` (`min` defaults to `-max`)."""

    def __init__(self, max: float, min: float | None = None) -> None:
        hi = _check_number("ClipGradByValue", "max", max)
        if min is None:
            if hi <= 0.0:
                raise ValueError(
                    f"ClipGradByValue: max must be > 0 when min is not given, got {hi}"
                )
            lo = -hi
        else:
            lo = _check_number("ClipGradByValue", "min", min)
        if lo > hi:
            raise ValueError(f"ClipGradByValue: min ({lo}) must not exceed max ({hi})")
        self.max, self.min = hi, lo

    def __str__(self) -> str:
        return f"Clip Gradient By Value, min = {self.min:f}, max={self.max:f}"

    def _clip(self, params_grads: ParamsGrads) -> ParamsGrads:
        return [(p, clip(g, self.min, self.max) if _need_clip(p) else g) for p, g in params_grads]


class ClipGradByNorm(ClipGradBase):
    """Scale each gradient down to L2 norm `clip_norm` when it is larger."""

    def __init__(self, clip_norm: float) -> None:
        self.clip_norm = _check_number("ClipGradByNorm", "clip_norm", clip_norm)
        if self.clip_norm <= 0:
            raise ValueError(f"ClipGradByNorm: clip_norm must be > 0, got {self.clip_norm}")

    def __str__(self) -> str:
        return f"Gradient Clip By Norm, clip_norm={self.clip_norm:f}"

    def _clip(self, params_grads: ParamsGrads) -> ParamsGrads:
        return [
            (p, clip_by_norm(g, self.clip_norm) if _need_clip(p) else g) for p, g in params_grads
        ]


class ClipGradByGlobalNorm(ClipGradBase):
    """Scale all gradients by `clip_norm / max(global_norm, clip_norm)`.

    The squared norms are summed in float64 when some gradient is float64, else in
    float32.  With `auto_skip_clip=True`, eager mode multiplies only when the global
    norm exceeds `clip_norm` (Paddle's static mode always multiplies)."""

    def __init__(
        self, clip_norm: float, group_name: str = "default_group", auto_skip_clip: bool = False
    ) -> None:
        self.clip_norm = _check_number("ClipGradByGlobalNorm", "clip_norm", clip_norm)
        if self.clip_norm <= 0:
            raise ValueError(f"ClipGradByGlobalNorm: clip_norm must be > 0, got {self.clip_norm}")
        if not isinstance(auto_skip_clip, bool):
            raise TypeError("ClipGradByGlobalNorm: auto_skip_clip must be a bool")
        self.group_name = group_name
        self.auto_skip_clip = auto_skip_clip

    def __str__(self) -> str:
        return f"Gradient Clip By GlobalNorm, global_norm={self.clip_norm:f}"

    def global_norm(self, params_grads: ParamsGrads) -> Any:
        """The global L2 norm of the clipped gradients (None when there are none)."""
        squares = [squared_l2_norm(g) for p, g in params_grads if _need_clip(p)]
        if not squares:
            return None
        dtype = "float64" if any(s.dtype == "float64" for s in squares) else "float32"
        squares = [s if s.dtype == dtype else cast(s, dtype) for s in squares]
        return sqrt(add_n(squares) if len(squares) > 1 else squares[0])

    def _clip(self, params_grads: ParamsGrads) -> ParamsGrads:
        norm = self.global_norm(params_grads)
        if norm is None:
            return params_grads
        limit = full([], self.clip_norm, dtype=norm.dtype)
        if self.auto_skip_clip and core.in_dynamic_mode():
            if not float(norm) > self.clip_norm:
                return params_grads
            factor = divide(limit, norm)
        else:
            factor = divide(limit, maximum(norm, limit))
        out = []
        for p, g in params_grads:
            if not _need_clip(p):
                out.append((p, g))
                continue
            f = factor if factor.dtype == g.dtype else cast(factor, g.dtype)
            out.append((p, _scaled_in_place(g, f)))
        return out


# ------------------------------------------------------- program-level clipping


def set_gradient_clip(clip: ClipGradBase, param_list: Sequence[Any] | None = None,
                      program: Any = None) -> None:
    """Paddle 1.x's `set_gradient_clip`: clip the gradients of `param_list` (names or
    parameters; default: every parameter of `program`, the default main program)
    with `clip` when an optimizer without `grad_clip` (or
    `append_gradient_clip_ops`) updates them.  An optimizer's own `grad_clip` wins."""
    import warnings

    from pullback.frontend.framework import default_main_program

    warnings.warn(
        "Caution! 'set_gradient_clip' is not recommended and may be deprecated in future! "
        "We recommend a new strategy: set 'grad_clip' when initializing the 'optimizer'.",
        stacklevel=2,
    )
    if not isinstance(clip, ClipGradBase):
        raise TypeError("'clip' should be an instance of ClipGradBase's derived class")
    program = program or default_main_program()
    block = program.global_block()
    params = block.all_parameters() if param_list is None else [
        block.var(p) if isinstance(p, str) else p for p in param_list
    ]
    for p in params:
        p.gradient_clip_attr = clip


def append_gradient_clip_ops(params_grads: Sequence[tuple[Any, Any]]) -> ParamsGrads:
    """Clip each gradient with its parameter's `set_gradient_clip` strategy
    (parameters sharing a strategy are clipped together, as a global norm needs);
    pairs without one are left alone."""
    groups: dict[int, tuple[ClipGradBase, list[tuple[Any, Any]]]] = {}
    order: list[tuple[Any, Any]] = []
    for p, g in params_grads:
        if g is None:
            continue
        clip = getattr(p, "gradient_clip_attr", None)
        if clip is not None:
            groups.setdefault(id(clip), (clip, []))[1].append((p, g))
        order.append((p, g))
    clipped: dict[int, Any] = {}
    for clip, pairs in groups.values():
        for p, g in clip(pairs):
            clipped[id(p)] = g
    return [(p, clipped.get(id(p), g)) for p, g in order]


# --------------------------------------------------------------------- error clip


class BaseErrorClipAttr:
    """Base class of error clips: clip a variable's gradient as backward builds it."""

    def _append_clip_op(self, block: Any, grad_name: str) -> None:
        raise NotImplementedError


class ErrorClipByValue(BaseErrorClipAttr):
    """Clip the gradient of a variable into `[min, max]` while `append_backward`
    builds it (set with `var._set_error_clip(...)`, applied by
    `error_clip_callback`)."""

    def __init__(self, max: float, min: float | None = None) -> None:
        self.max = _check_number("ErrorClipByValue", "max", max)
        self.min = -self.max if min is None else _check_number("ErrorClipByValue", "min", min)

    def __str__(self) -> str:
        return f"ByValue, min={self.min:f}, max={self.max:f}"

    def _append_clip_op(self, block: Any, grad_name: str) -> None:
        block.append_op(
            type="clip", inputs={"X": [grad_name]}, outputs={"Out": [grad_name]},
            attrs={"min": self.min, "max": self.max},
        )


def error_clip_callback(block: Any, context: dict[str, Any]) -> None:
    """An `append_backward` callback clipping, after each gradient operator, the
    gradients of variables that carry an `error_clip` (`var._set_error_clip`)."""
    desc = context.get("__current_op_desc__")
    if desc is None:
        return
    for grad_name in desc.output_arg_names():
        var_name = context.get(grad_name)
        if var_name is None or not block.has_var(var_name):
            continue
        error_clip = getattr(block.var(var_name), "error_clip", None)
        if error_clip is None:
            continue
        if not isinstance(error_clip, BaseErrorClipAttr):
            raise TypeError(
                "Variable's error_clip should be an instance of BaseErrorClipAttr or None."
            )
        error_clip._append_clip_op(block, grad_name)


# Paddle 1.x (fluid.clip) spellings.
GradientClipBase = ClipGradBase
GradientClipByValue = ClipGradByValue
GradientClipByNorm = ClipGradByNorm
GradientClipByGlobalNorm = ClipGradByGlobalNorm

__all__ = [
    "BaseErrorClipAttr",
    "ClipGradBase",
    "ClipGradByGlobalNorm",
    "ClipGradByNorm",
    "ClipGradByValue",
    "ErrorClipByValue",
    "GradientClipBase",
    "GradientClipByGlobalNorm",
    "GradientClipByNorm",
    "GradientClipByValue",
    "append_gradient_clip_ops",
    "clip_by_norm",
    "error_clip_callback",
    "set_gradient_clip",
    "squared_l2_norm",
]
