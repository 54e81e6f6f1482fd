"""Normalization functions: `F.batch_norm` (the `pd.batch_norm` op), and the
composite `F.group_norm` and `F.instance_norm`, built from differentiable frontend
functions (their gradients and second derivatives come from those ops' rules).

`F.layer_norm` lives with its op in `ops/nn.py`; the layers that own parameters
(`nn.BatchNorm2D`, `static.nn.batch_norm`, ...) build on these functions.

Running statistics: in static mode `pd.batch_norm`'s `mean_out`/`variance_out`
results take the names of the running-statistics variables, so the executor
writes them back to the scope (Paddle updates them in place); in eager mode the
running-statistics tensors get the new values after the op ran.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from pullback.dialects import pd
from pullback.frontend import core, unique_name
from pullback.frontend.framework import Variable
from pullback.frontend.ops.elementwise import (
    check_float_tensor,
    divide,
    full,
    is_scalar,
    multiply,
    sqrt,
    subtract,
)
from pullback.frontend.ops.elementwise import (
    scale as scale_fn,
)
from pullback.frontend.ops.reduction import mean
from pullback.frontend.ops.shape import reshape

BATCH_NORM_FORMATS = ("NC", "NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC")


def _number(fn: str, arg: str, v: Any) -> float:
    if not is_scalar(v):
        raise TypeError(f"{fn}: '{arg}' must be a number, got {type(v).__name__}")
    return float(v)


def batch_norm_layout(fn: str, data_format: str) -> str:
    """Paddle's `data_format` spellings as the op's layout (`NCHW` or `NHWC`)."""
    if data_format not in BATCH_NORM_FORMATS:
        raise ValueError(
            f"{fn}: data_format must be one of {', '.join(repr(f) for f in BATCH_NORM_FORMATS)}, "
            f"but received {data_format!r}"
        )
    return "NCHW" if data_format[1] == "C" else "NHWC"


def _channels(x: Any, layout: str) -> int:
    return x.shape[1] if layout == "NCHW" or len(x.shape) == 2 else x.shape[-1]


def _latest(v: Any) -> Any:
    """In static mode, the newest definition of a variable's name (a running
    statistic updated by an earlier batch_norm call of the same layer), so repeated
    calls chain their updates as Paddle's in-place ones do."""
    if isinstance(v, Variable) and not core.in_dynamic_mode():
        prog = v.block.program
        value = prog._lookup(v.name)
        if value is not None and value is not v.value:
            return v.block.wrap(value)
    return v


def apply_batch_norm(
    fn: str,
    x: Any,
    scale: Any,
    bias: Any,
    running_mean: Any,
    running_var: Any,
    *,
    momentum: float,
    epsilon: float,
    layout: str,
    is_test: bool,
    use_global_stats: bool,
    trainable_statistics: bool,
    base: str,
    reserve: tuple[int, int] = (0, 0),
) -> Any:
    """Add one `pd.batch_norm` and return `y`, updating the running statistics.

    Static mode names the results as Paddle's LayerHelper does (`<base>.tmp_k`:
    saved mean, saved variance, `reserve[0]` unused slots, `y`, `reserve[1]` more:
    Paddle's APIs create a reserve-space variable at different points) and
    gives `mean_out`/`variance_out` the running statistics' names; eager mode
    stores the new running statistics in the given tensors."""
    c = _channels(x, layout)
    for arg, t in (("running_mean", running_mean), ("running_var", running_var)):
        check_float_tensor(fn, arg, t)
        if list(t.shape) != [c]:
            raise ValueError(f"{fn}: {arg} must have shape [{c}] (the channels of x), got {list(t.shape)}")
    for arg, t in (("weight", scale), ("bias", bias)):
        if t is not None:
            check_float_tensor(fn, arg, t)
    if scale is None:
        scale = full([c], 1.0, dtype=x.dtype)
    if bias is None:
        bias = full([c], 0.0, dtype=x.dtype)
    props = {
        "momentum": float(momentum), "epsilon": float(epsilon), "data_layout": layout,
        "is_test": bool(is_test), "use_global_stats": bool(use_global_stats),
        "trainable_statistics": bool(trainable_statistics),
    }
    if core.in_dynamic_mode():
        y, mean_out, var_out, _, _ = core.apply(
            pd.BatchNormOp, [x, scale, bias, running_mean, running_var], prefix="batch_norm",
            name=base, **props)
        if not use_global_stats and not (is_test and not trainable_statistics):
            running_mean.set_value(mean_out._data)
            running_var.set_value(var_out._data)
        return y
    running_mean, running_var = _latest(running_mean), _latest(running_var)
    # LayerHelper numbering: saved mean, saved variance, then (per API) a reserve
    # space before or after the output.
    tmp = [unique_name.generate(f"{base}.tmp") for _ in range(2 + reserve[0])]
    y_name = unique_name.generate(f"{base}.tmp")
    for _ in range(reserve[1]):
        unique_name.generate(f"{base}.tmp")
    names = [y_name, running_mean.name, running_var.name, tmp[0], tmp[1]]
    outs = core.apply(pd.BatchNormOp, [x, scale, bias, running_mean, running_var],
                      prefix="batch_norm", out_names=names, **props)
    # The saved statistics keep stop_gradient=False (unlike Paddle's): the VJP reads
    # them, so a second derivative must be able to flow through them.
    return outs[0]


def batch_norm(x: Any, running_mean: Any, running_var: Any, weight: Any = None, bias: Any = None,
               training: bool = False, momentum: float = 0.9, epsilon: float = 1e-05,
               data_format: str = "NCHW", use_global_stats: bool | None = None,
               name: str | None = None) -> Any:
    """`paddle.nn.functional.batch_norm`: normalize `x` per channel with the batch's
    statistics (`training`) or the running ones, which training updates as
    `running = momentum * running + (1 - momentum) * batch` (biased variance).

    `use_global_stats=None` means "running statistics unless training"; True or
    False forces them on or off (then the batch statistics are used even in
    inference, Paddle's `trainable_statistics`). `weight`/`bias` default to ones
    and zeros."""
    fn = "batch_norm"
    check_float_tensor(fn, "x", x)
    if len(x.shape) < 2:
        raise ValueError(f"{fn}: input dim must be larger than 1, got shape {list(x.shape)}")
    layout = batch_norm_layout(fn, data_format)
    if use_global_stats is None:
        use_global_stats, trainable_statistics = not training, False
    else:
        trainable_statistics = not use_global_stats
    return apply_batch_norm(
        fn, x, weight, bias, running_mean, running_var,
        momentum=_number(fn, "momentum", momentum), epsilon=_number(fn, "epsilon", epsilon),
        layout=layout, is_test=not training, use_global_stats=bool(use_global_stats),
        trainable_statistics=trainable_statistics,
        base=name or unique_name.generate("batch_norm"),
        reserve=(0, 1 if training or trainable_statistics else 0))


# --------------------------------------------------------------- composite norms


def _affine(y: Any, weight: Any, bias: Any, channel_axis: int) -> Any:
    """`y * weight + bias` with 1-D parameters aligned at the channel axis."""
    if weight is not None:
        y = core.apply(pd.ElementwiseMulOp, [y, weight], prefix="elementwise_mul", axis=channel_axis)
    if bias is not None:
        y = core.apply(pd.ElementwiseAddOp, [y, bias], prefix="elementwise_add", axis=channel_axis)
    return y


def _normalize_over(x: Any, axes: list[int], epsilon: float) -> Any:
    """`(x - mean) / sqrt(var + epsilon)` over `axes` (biased variance)."""
    centered = subtract(x, mean(x, axis=axes, keepdim=True))
    var = mean(multiply(centered, centered), axis=axes, keepdim=True)
    return divide(centered, sqrt(scale_fn(var, 1.0, float(epsilon))))


def _check_affine(fn: str, x: Any, c: int, weight: Any, bias: Any) -> None:
    for arg, t in (("weight", weight), ("bias", bias)):
        if t is not None:
            check_float_tensor(fn, arg, t)
            if c >= 0 and list(t.shape) != [c]:
                raise ValueError(f"{fn}: {arg} must have shape [{c}], got {list(t.shape)}")


def group_norm(x: Any, num_groups: int, epsilon: float = 1e-05, weight: Any = None, bias: Any = None,
               data_format: str = "NCHW", name: str | None = None) -> Any:
    """`paddle.nn.functional.group_norm`: the channels split into `num_groups`
    groups, each normalized over its channels and the spatial axes (biased
    variance), then `weight`/`bias` per channel."""
    fn = "group_norm"
    check_float_tensor(fn, "x", x)
    if data_format not in ("NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC"):
        raise ValueError(f"{fn}: unsupported data layout: {data_format}")
    rank = len(x.shape)
    if rank < 2:
        raise ValueError(f"{fn}: x must have rank >= 2, got shape {list(x.shape)}")
    channel_last = data_format[1] != "C"
    c = x.shape[-1] if channel_last else x.shape[1]
    if not isinstance(num_groups, int) or isinstance(num_groups, bool) or num_groups < 1:
        raise ValueError(f"{fn}: num_groups must be a positive int, got {num_groups!r}")
    if c < 0:
        raise ValueError(f"{fn}: the channel dimension of x must be static, got {list(x.shape)}")
    if c % num_groups:
        raise ValueError(f"{fn}: the channels of x ({c}) must be divisible by num_groups ({num_groups})")
    _check_affine(fn, x, c, weight, bias)
    eps = _number(fn, "epsilon", epsilon)
    if channel_last:
        # [N, *S, C] -> [N, *S, G, C/G]: normalize over the spatial axes and C/G.
        grouped = reshape(x, [0] * (rank - 1) + [num_groups, c // num_groups])
        axes = [*range(1, rank - 1), rank]
    else:
        # [N, C, *S] -> [N, G, C/G * prod(S)]: normalize over the last axis.
        spatial = x.shape[2:]
        inner = -1 if any(d < 0 for d in spatial) else c // num_groups * math.prod(spatial)
        grouped = reshape(x, [0, num_groups, inner])
        axes = [2]
    y = reshape(_normalize_over(grouped, axes, eps), _shape_of_like(x))
    return _affine(y, weight, bias, rank - 1 if channel_last else 1)


def _shape_of_like(x: Any) -> list[int]:
    """A reshape target giving back `x`'s shape: 0 copies the batch dimension
    (dynamic or not), the others are static."""
    dims = list(x.shape)
    if any(d < 0 for d in dims[1:]):
        raise ValueError(f"normalization: only the batch dimension of x may be dynamic, got {dims}")
    return [0, *dims[1:]]


def instance_norm(x: Any, running_mean: Any = None, running_var: Any = None, weight: Any = None,
                  bias: Any = None, use_input_stats: bool = True, momentum: float = 0.9,
                  eps: float = 1e-05, data_format: str = "NCHW", name: str | None = None) -> Any:
    """`paddle.nn.functional.instance_norm`: each channel of each sample normalized
    over its spatial axes (biased variance), then `weight`/`bias` per channel.
    `running_mean`/`running_var` are obsolete in Paddle and unused here too."""
    fn = "instance_norm"
    check_float_tensor(fn, "x", x)
    rank = len(x.shape)
    if rank < 3:
        raise ValueError(f"{fn}: x must have rank >= 3 (N, C and spatial axes), got shape {list(x.shape)}")
    channel_last = data_format in ("NLC", "NHWC", "NDHWC")
    if data_format not in ("NC", "NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC"):
        raise ValueError(f"{fn}: unsupported data_format {data_format!r}")
    c = x.shape[-1] if channel_last else x.shape[1]
    _check_affine(fn, x, c, weight, bias)
    axes = list(range(1, rank - 1)) if channel_last else list(range(2, rank))
    y = _normalize_over(x, axes, _number(fn, "eps", eps))
    return _affine(y, weight, bias, rank - 1 if channel_last else 1)


PADDLE: list[Callable[..., Any]] = []
FUNCTIONAL: list[Callable[..., Any]] = [batch_norm, group_norm, instance_norm]
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {}

__all__ = ["apply_batch_norm", "batch_norm", "batch_norm_layout", "group_norm", "instance_norm"]
