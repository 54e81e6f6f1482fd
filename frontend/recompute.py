"""Recomputation (activation checkpointing) in Paddle's spellings.

* `RecomputeOptimizer(optimizer)` (`paddle.incubate.optimizer`,
  `paddle.fluid.optimizer`): static mode; `_set_checkpoints([...])` then `minimize`
  appends the backward with `append_backward(..., checkpoints=...)`, i.e. the
  `recompute` pass (`passes/recompute.py`) rewrites the backward region so that only
  the checkpoints are kept, and the wrapped optimizer appends its updates.
* `recompute(function, *args, preserve_rng_state=True, use_reentrant=True)`: eager
  (`paddle.distributed.fleet.utils.recompute`), as Paddle builds it: a `PyLayer`
  (frontend/pylayer.py) whose forward runs `function` with recording off, so none of
  its intermediate values outlive the call (only the arguments are kept), and whose
  backward runs it again with recording on, from the generator state of the first
  run (the same dropout masks), and backpropagates through that replay: the
  arguments' gradients flow on, and parameters used inside receive theirs directly
  (accumulated into `.grad`, as in Paddle, so use it with `backward()`, not
  `paddle.grad`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pullback.frontend import core
from pullback.frontend.autograd import enable_grad
from pullback.frontend.autograd.engine import run_backward
from pullback.frontend.eager import Tensor
from pullback.frontend.framework import Program, Variable
from pullback.frontend.pylayer import PyLayer
from pullback.frontend.random import get_rng_state, set_rng_state


class RecomputeOptimizer:
    """Wraps an optimizer so that its backward pass recomputes activations between
    checkpoints instead of keeping them (Paddle's `RecomputeOptimizer`)."""

    def __init__(self, optimizer: Any) -> None:
        if core.in_dynamic_mode():
            raise Exception("In dygraph, don't support RecomputeOptimizer.")  # noqa: TRY002 - Paddle's type
        if not hasattr(optimizer, "apply_gradients") or not hasattr(optimizer, "backward"):
            raise TypeError(
                f"RecomputeOptimizer: optimizer must be an Optimizer, got {type(optimizer).__name__}"
            )
        self._optimizer = optimizer
        self._checkpoints: list[Variable | str] | None = None
        self._learning_rate = getattr(optimizer, "_learning_rate", None)
        self._enable_offload = False

    def _set_checkpoints(self, checkpoints: Sequence[Variable | str]) -> None:
        """The Variables (or names) to keep for the backward pass."""
        if not isinstance(checkpoints, list):
            raise TypeError(
                f"RecomputeOptimizer._set_checkpoints: checkpoints must be a list, got "
                f"{type(checkpoints).__name__}"
            )
        for c in checkpoints:
            if not isinstance(c, (Variable, str)):
                raise TypeError(
                    "RecomputeOptimizer._set_checkpoints: checkpoints must be Variables or "
                    f"names, got {type(c).__name__}"
                )
        self._checkpoints = list(checkpoints)

    def _set_enable_offload(self, enable: bool) -> None:
        """Offloading checkpoints to host memory: pullback runs on the host already,
        so this is accepted and changes nothing."""
        self._enable_offload = bool(enable)

    def load(self, state_dict: Any) -> None:
        """Not supported (as in Paddle)."""
        raise NotImplementedError("load function is not supported by Recompute Optimizer for now")

    def get_lr(self) -> Any:
        """The wrapped optimizer's learning rate."""
        return self._optimizer.get_lr()

    def backward(
        self,
        loss: Variable,
        startup_program: Program | None = None,
        parameter_list: Sequence[Any] | None = None,
        no_grad_set: Iterable[Any] | None = None,
        callbacks: Sequence[Any] | None = None,
    ) -> list[tuple[Any, Any]]:
        """Append the backward part of `loss` with recomputation between the
        checkpoints; returns `[(param, grad)]`."""
        from pullback.frontend.backward import append_backward

        if self._checkpoints is None:
            raise ValueError("You should call _set_checkpoints first")
        params = parameter_list if parameter_list is not None else self._optimizer._parameter_list
        if not self._checkpoints:
            return append_backward(loss, params, no_grad_set, callbacks)
        params_grads, _ = append_backward(
            loss, params, no_grad_set, callbacks, checkpoints=self._checkpoints
        )
        return params_grads

    def apply_gradients(self, params_grads: list[tuple[Any, Any]], startup_program: Program | None = None) -> list[Any]:
        """The wrapped optimizer's updates."""
        return self._optimizer.apply_gradients(params_grads, startup_program)

    def apply_optimize(
        self, loss: Variable, startup_program: Program | None, params_grads: list[tuple[Any, Any]]
    ) -> list[Any]:
        """The wrapped optimizer's updates (Paddle's spelling with `loss`)."""
        return self.apply_gradients(params_grads, startup_program)

    def minimize(
        self,
        loss: Variable,
        startup_program: Program | None = None,
        parameter_list: Sequence[Any] | None = None,
        no_grad_set: Iterable[Any] | None = None,
    ) -> tuple[list[Any], list[tuple[Any, Any]]]:
        """Backward with recomputation, then the wrapped optimizer's updates;
        returns `(optimize_ops, params_grads)`."""
        if not isinstance(loss, Variable):
            raise TypeError(
                f"RecomputeOptimizer.minimize: loss must be a Variable, got {type(loss).__name__}"
            )
        params_grads = self.backward(loss, startup_program, parameter_list, no_grad_set)
        return self.apply_gradients(params_grads, startup_program), params_grads


class _RecomputeFunction(PyLayer):
    """The PyLayer behind eager `recompute` (see the module docstring).  It is
    recorded even when no argument needs a gradient (Paddle's then skips the
    block's parameters with a warning): the parameters used inside need theirs."""

    _reads_parameters = True

    @staticmethod
    def forward(ctx: Any, function: Callable[..., Any], preserve: bool, *args: Any, **kwargs: Any) -> Any:
        ctx.function, ctx.preserve, ctx.kwargs = function, preserve, kwargs
        ctx.args = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        ctx.kw_tensors = [k for k, v in kwargs.items() if isinstance(v, Tensor)]
        ctx.rng = get_rng_state() if preserve else None
        return function(*args, **kwargs)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        saved = iter(ctx.saved_tensor() or ())
        replay_in: list[Tensor] = []

        def fresh(t: Tensor) -> Tensor:
            d = t.detach()
            d.stop_gradient = t.stop_gradient
            replay_in.append(d)
            return d

        args = [fresh(next(saved)) if a is None else a for a in ctx.args]
        kwargs = {k: fresh(v) if k in ctx.kw_tensors else v for k, v in ctx.kwargs.items()}
        now = get_rng_state() if ctx.preserve else None
        if ctx.rng is not None:
            set_rng_state(ctx.rng)
        try:
            with enable_grad():
                outs = ctx.function(*args, **kwargs)
        finally:
            if now is not None:
                set_rng_state(now)
        outs = list(outs) if isinstance(outs, (tuple, list)) else [outs]
        pairs = [
            (o, g) for o, g in zip([o for o in outs if isinstance(o, Tensor)], grads)
            if not o.stop_gradient and g is not None
        ]
        if pairs:
            # The engine itself, not `backward()`: post-backward hooks (data-parallel
            # all-reduces) belong to the user's backward call, not to this replay.
            run_backward([o for o, _ in pairs], [g for _, g in pairs], None, False, False)
        return tuple(None if d.stop_gradient else d.grad for d in replay_in)


def recompute(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Eager recompute of `function(*args)`: its intermediate values are not kept;
    they are computed again during the backward (see the module docstring).
    Options: `preserve_rng_state` (bool, default True: the replay draws the same
    random numbers, e.g. dropout masks), `use_reentrant` (bool, default True; keyword
    arguments for `function` need `use_reentrant=False`)."""
    if not callable(function):
        raise TypeError(f"recompute: function must be callable, got {type(function).__name__}")
    preserve = kwargs.pop("preserve_rng_state", True)
    reentrant = kwargs.pop("use_reentrant", True)
    for name, v in (("preserve_rng_state", preserve), ("use_reentrant", reentrant)):
        if not isinstance(v, bool):
            raise TypeError(f"recompute: {name} must be a bool, got {type(v).__name__}")
    if reentrant and kwargs:
        raise ValueError("Error, if you want to send kwargs(dict parameter) to function, please set use_reentrant=False.")
    if not core.in_dynamic_mode():
        raise RuntimeError(
            "recompute(function, *args) is the eager (dygraph) form; in static mode use "
            "RecomputeOptimizer or append_backward(..., checkpoints=[...])"
        )
    return _RecomputeFunction.apply(function, preserve, *args, **kwargs)


__all__ = ["RecomputeOptimizer", "recompute"]
