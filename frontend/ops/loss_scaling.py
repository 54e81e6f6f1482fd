"""AMP's loss-scaling ops as program ops (static mode) or computed at once (eager):
the building blocks of `paddle.static.amp.decorate`'s loss scaling and of
`paddle.amp.GradScaler`, under Paddle's names in `paddle.static.amp.amp_nn`.

In a static program the new scale and step counters are results named after their
persistables (the executor writes them back, the native code in place); in eager
mode the state Tensors are given the new values at once, as Paddle's in-place
`_C_ops.update_loss_scaling_` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pullback.dialects import pd
from pullback.frontend import core


def check_finite_and_unscale(x: Sequence[Any], scale: Any, name: str | None = None,
                             float_status: Any = None) -> tuple[list[Any], Any]:
    """`paddle.static.amp.amp_nn.check_finite_and_unscale`: each of `x` divided by
    `scale`, and a `[1]` bool that is True when any holds an inf or nan (Paddle's CPU
    kernel: the tensors from the first such one on come out as `x * 0`).  Returns
    `(unscaled, found_inf)`; Paddle's op writes the unscaled values into `x` itself,
    which eager mode does too."""
    xs = list(x)
    if not xs:
        raise ValueError("check_finite_and_unscale: needs at least one tensor")
    outs = core.apply(pd.CheckFiniteAndUnscaleOp, [*xs, scale], prefix=name or "find_infinite_scale")
    *unscaled, found = outs
    if core.in_dynamic_mode():
        for t, u in zip(xs, unscaled):
            t._data = u._data
        return xs, found
    return unscaled, found


def update_loss_scaling(x: Sequence[Any], found_inf: Any, prev_loss_scaling: Any, num_good_steps: Any,
                        num_bad_steps: Any, incr_every_n_steps: int, decr_every_n_nan_or_inf: int,
                        incr_ratio: float, decr_ratio: float, stop_update: bool = False,
                        name: str | None = None) -> list[Any]:
    """`paddle.static.amp.amp_nn.update_loss_scaling`: dynamic loss scaling after one
    step (see `pd.UpdateLossScalingOp`): `x` zeroed when `found_inf`; unless
    `stop_update`, the scale and the counters updated in place.  Returns the new
    `x` (static: new values; eager: `x` itself, written in place)."""
    xs = list(x)
    state = [prev_loss_scaling, num_good_steps, num_bad_steps]
    props: dict[str, Any] = dict(incr_every_n_steps=int(incr_every_n_steps), decr_every_n_nan_or_inf=int(decr_every_n_nan_or_inf),
                 incr_ratio=float(incr_ratio), decr_ratio=float(decr_ratio), stop_update=bool(stop_update))
    if core.in_dynamic_mode():
        outs = core.apply(pd.UpdateLossScalingOp, [*xs, found_inf, *state], prefix=name or "update_loss_scaling",
                          **props)
        for t, o in zip([*xs, *state], outs):
            t._data = o._data
        return xs
    # The grads' results stay unnamed: only the state is written back.
    names = [""] * len(xs) + [v.name for v in state]
    outs = core.apply(pd.UpdateLossScalingOp, [*xs, found_inf, *state], prefix=name or "update_loss_scaling",
                      out_names=names, **props)
    return list(outs[: len(xs)])


__all__ = ["check_finite_and_unscale", "update_loss_scaling"]
