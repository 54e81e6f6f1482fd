"""`paddle.static.amp`: mixed precision for static programs, as a program pass, with
loss scaling as ops of the program.

`decorate(optimizer, amp_lists=None, level='O1', dtype='float16', ...)` wraps an
optimizer; its `minimize(loss)` does what Paddle 3.3.1's static decorator does:

1. rewrites the loss's program by the op lists (`passes/amp.py`'s
   `auto-mixed-precision` pass: `pd.cast`s before white-list ops' float32 inputs and
   black-list ops' 16-bit ones, visible in the printed program);
2. creates the persistable `loss_scaling_<k>` (float32 `[1]`, `init_loss_scaling`)
   and, with dynamic scaling, the int32 counters `num_good_steps_<k>` and
   `num_bad_steps_<k>`, and multiplies the loss by the scale;
3. builds the backward part of the scaled loss;
4. unless the scale is a constant 1 (`use_dynamic_loss_scaling=False` and
   `init_loss_scaling=1.0`), divides the gradients by the scale with
   `pd.check_finite_and_unscale`, which also says whether one holds an inf or nan;
5. with dynamic scaling (float16 only, as Paddle's), `pd.update_loss_scaling`
   zeroes the gradients of such a step and updates the scale and the counters in
   place (lowered by `decr_ratio` after `decr_every_n_nan_or_inf` such steps, raised
   by `incr_ratio` after `incr_every_n_steps` good ones);
6. appends the wrapped optimizer's updates on those gradients.

At `level='O2'` ("pure" float16/bfloat16) the pass casts the float inputs of every
op but the black-list ones (`EXTRA_BLACK_LIST` at O2, and batch norm) to the low
dtype, parameters included: a `pd.cast` of each float32 parameter before its use,
visible in the printed program, computes the model in the low precision, while the
scope keeps the parameters in float32: they are the master weights the optimizer
updates (Paddle's `multi_precision`), with the float32 gradients the casts give
back.  Paddle instead stores the parameters in the low dtype (`amp_init` casts them)
next to `<param>_fp32_master_0` copies; the arithmetic is the same: each step
computes with the rounded master weights.  So `amp_init` has nothing to cast.

A step with an inf or nan gradient so leaves the parameters of SGD and Momentum
unchanged (zero gradients), as Paddle's.  As Paddle's, the decorator also hands
`found_inf` to the optimizer (`_set_auxiliary_var('found_inf', ...)`): Adam, AdamW
and Lamb take it as their `skip_update` operand (Paddle's `SkipUpdate` input), so
that on such a step their moments and beta powers stay as they were too (zeroed
gradients alone would still decay the moments and advance the bias correction).

`use_dynamic_loss_scaling` defaults to True for float16 and False for bfloat16
(Paddle 3.3.1); the parameters stay float32 at O1 (their master weights), and their
gradients reach them through the casts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pullback.dialects import pd
from pullback.frontend import core, unique_name
from pullback.frontend.framework import default_startup_program, program_guard
from pullback.frontend.layers import create_global_var
from pullback.frontend.ops.loss_scaling import check_finite_and_unscale, update_loss_scaling
from pullback.passes.amp import AmpState, auto_mixed_precision


class AutoMixedPrecisionLists:
    """`paddle.static.amp.AutoMixedPrecisionLists`: Paddle's op lists with custom
    additions (op types, e.g. 'matmul', 'softmax')."""

    def __init__(self, custom_white_list: Iterable[str] | None = None,
                 custom_black_list: Iterable[str] | None = None,
                 custom_black_varnames: Iterable[str] | None = None, dtype: str = "float16") -> None:
        self.dtype = dtype
        self.custom_white_list = set(custom_white_list or ())
        self.custom_black_list = set(custom_black_list or ())
        if custom_black_varnames:
            raise NotImplementedError("AutoMixedPrecisionLists: custom_black_varnames is not supported")
        state = AmpState.of(dtype, "O1", self.custom_white_list, self.custom_black_list)
        self.white_list, self.black_list = set(state.white), set(state.black)


CustomOpLists = AutoMixedPrecisionLists


class OptimizerWithMixedPrecision:
    """What `decorate` returns: `minimize` applies the AMP pass, scales the loss,
    builds the backward part, unscales and checks the gradients and updates the
    loss scale (module docstring), then appends the optimizer's updates."""

    def __init__(self, optimizer: Any, state: AmpState, init_loss_scaling: float = 2.0**16,
                 use_dynamic_loss_scaling: bool = True, incr_every_n_steps: int = 2000,
                 decr_every_n_nan_or_inf: int = 1, incr_ratio: float = 2.0, decr_ratio: float = 0.5) -> None:
        if not incr_ratio > 1.0:
            raise ValueError(f"decorate: incr_ratio must be > 1.0, got {incr_ratio}")
        if not 0.0 < decr_ratio < 1.0:
            raise ValueError(f"decorate: decr_ratio must be in (0, 1), got {decr_ratio}")
        if int(incr_every_n_steps) < 1 or int(decr_every_n_nan_or_inf) < 1:
            raise ValueError("decorate: incr_every_n_steps and decr_every_n_nan_or_inf must be >= 1")
        self._optimizer = optimizer
        self._state = state
        self._casts = 0
        self._init_loss_scaling = float(init_loss_scaling)
        self._use_dynamic_loss_scaling = bool(use_dynamic_loss_scaling)
        self._incr_every_n_steps = int(incr_every_n_steps)
        self._decr_every_n_nan_or_inf = int(decr_every_n_nan_or_inf)
        self._incr_ratio, self._decr_ratio = float(incr_ratio), float(decr_ratio)
        self._loss_scaling: Any = None
        self._num_good_steps: Any = None
        self._num_bad_steps: Any = None
        self._scaled_loss: Any = None
        self._found_inf: Any = None

    # -- the steps of minimize ---------------------------------------------------------

    def _init_amp_var(self) -> None:
        """The scale and (dynamic scaling) the two counters, as Paddle names them."""
        self._loss_scaling = create_global_var(
            [1], self._init_loss_scaling, "float32", persistable=True, name=unique_name.generate("loss_scaling"))
        if self._use_dynamic_loss_scaling:
            self._num_good_steps = create_global_var(
                [1], 0, "int32", persistable=True, name=unique_name.generate("num_good_steps"))
            self._num_bad_steps = create_global_var(
                [1], 0, "int32", persistable=True, name=unique_name.generate("num_bad_steps"))

    def backward(self, loss: Any, startup_program: Any = None, parameter_list: Any = None,
                 no_grad_set: Any = None, callbacks: Any = None) -> list[tuple[Any, Any]]:
        """Rewrite `loss`'s program by the op lists, scale the loss and build the
        backward part; returns the `(param, scaled grad)` pairs."""
        if core.in_dynamic_mode():
            raise RuntimeError("paddle.static.amp.decorate's optimizer works on static programs "
                               "(eager mode: paddle.amp.auto_cast and paddle.amp.GradScaler)")
        program = loss.block.program
        with program_guard(program, startup_program or default_startup_program()):
            self._casts = auto_mixed_precision(program.module, self._state)
            self._init_amp_var()
            scaled = loss if loss.dtype == "float32" else loss.astype("float32")
            self._scaled_loss = core.apply(pd.ElementwiseMulOp, [scaled, self._loss_scaling], prefix="tmp")
            return self._optimizer.backward(self._scaled_loss, startup_program, parameter_list, no_grad_set,
                                            callbacks)

    def apply_gradients(self, params_grads: list[tuple[Any, Any]]) -> list[Any]:
        """Unscale and check the gradients, update the loss scale, then the
        optimizer's updates (module docstring)."""
        pairs = [(p, g) for p, g in params_grads if g is not None]
        if not pairs or (not self._use_dynamic_loss_scaling and self._init_loss_scaling == 1.0):
            return self._optimizer.apply_gradients(params_grads)
        program = pairs[0][0].block.program
        with program_guard(program, default_startup_program()):
            grads, found_inf = check_finite_and_unscale([g for _, g in pairs], self._loss_scaling)
            self._found_inf = found_inf
            if self._use_dynamic_loss_scaling and self._state.dtype == "float16":
                grads = update_loss_scaling(
                    grads, found_inf, self._loss_scaling, self._num_good_steps, self._num_bad_steps,
                    self._incr_every_n_steps, self._decr_every_n_nan_or_inf, self._incr_ratio, self._decr_ratio)
        # Paddle 3.3.1 hands the flag to the innermost optimizer (fleet wraps them in
        # `inner_opt`s): Adam, AdamW and Lamb skip such a step whole.
        real = self._optimizer
        while hasattr(real, "inner_opt"):
            real = real.inner_opt
        if hasattr(real, "_set_auxiliary_var"):
            real._set_auxiliary_var("found_inf", found_inf)
        return self._optimizer.apply_gradients([(p, g) for (p, _), g in zip(pairs, grads)])

    def apply_optimize(self, loss: Any, startup_program: Any, params_grads: list[tuple[Any, Any]]) -> list[Any]:
        """Paddle's name for `apply_gradients` after `backward`."""
        return self.apply_gradients(params_grads)

    def minimize(self, loss: Any, startup_program: Any = None, parameter_list: Any = None,
                 no_grad_set: Any = None) -> tuple[list[Any], list[tuple[Any, Any]]]:
        """`backward` then `apply_gradients`; returns `(optimize_ops, params_grads)`
        (the gradients of the scaled loss, as Paddle's)."""
        params_grads = self.backward(loss, startup_program, parameter_list, no_grad_set)
        with program_guard(loss.block.program, startup_program or default_startup_program()):
            ops = self.apply_gradients(params_grads)
        return ops, params_grads

    def amp_init(self, place: Any = None, scope: Any = None, test_program: Any = None,
                 use_fp16_test: bool = False, rewrite_master_weight: bool = False) -> None:
        """Paddle's hook to cast the scope's float32 parameters to the low dtype (O2):
        nothing to do here, at O1 or O2: the scope's parameters are the float32 master
        weights, and the program casts them at each use (module docstring)."""

    def get_loss_scaling(self) -> Any:
        """The loss-scale variable (a persistable `[1]` float32; fetch it to read the
        current scale); None before `minimize`."""
        return self._loss_scaling

    def get_scaled_loss(self) -> Any:
        """The loss times the scale (what the backward part differentiates)."""
        return self._scaled_loss

    def __getattr__(self, name: str) -> Any:
        return getattr(self._optimizer, name)


def decorate(optimizer: Any, amp_lists: AutoMixedPrecisionLists | None = None, level: str = "O1",
             dtype: str = "float16", master_weight: bool | None = None, master_grad: bool = False,
             init_loss_scaling: float = 2.0**16, incr_every_n_steps: int = 2000, decr_every_n_nan_or_inf: int = 1,
             incr_ratio: float = 2.0, decr_ratio: float = 0.5, use_dynamic_loss_scaling: bool | None = None,
             use_amp_guard: bool = False, use_promote: bool = False, **kwargs: Any) -> OptimizerWithMixedPrecision:
    """`paddle.static.amp.decorate` (Paddle 3.3.1's signature and defaults; see the
    module's docstring).  `use_dynamic_loss_scaling=None` means True for float16,
    False for bfloat16."""
    if kwargs.pop("use_pure_fp16", False) or kwargs.pop("use_pure_bf16", False):
        level = "O2"  # the older `decorate(use_pure_fp16=True)` / `decorate_bf16(use_pure_bf16=True)`
    if kwargs.pop("use_bf16", False):
        dtype = "bfloat16"
    kwargs.pop("use_fp16_guard", None)
    if kwargs:
        raise TypeError(f"paddle.static.amp.decorate: unexpected arguments {sorted(kwargs)}")
    level = level.upper()
    if level not in ("O0", "OD", "O1", "O2"):
        raise ValueError("level should be O0, OD, O1 or O2.")
    if level == "O2" and master_weight is False:
        raise NotImplementedError(
            "paddle.static.amp.decorate(level='O2', master_weight=False): static O2 keeps float32 master "
            "weights (the scope's parameters) and casts them at each use")
    if amp_lists is not None:
        dtype = amp_lists.dtype
        state = AmpState.of(dtype, level, amp_lists.custom_white_list, amp_lists.custom_black_list)
    else:
        state = AmpState.of(dtype, level)
    if use_dynamic_loss_scaling is None:
        use_dynamic_loss_scaling = state.dtype == "float16"
    return OptimizerWithMixedPrecision(
        optimizer, state, init_loss_scaling, use_dynamic_loss_scaling, incr_every_n_steps,
        decr_every_n_nan_or_inf, incr_ratio, decr_ratio)


def bf16_decorate(optimizer: Any, amp_lists: AutoMixedPrecisionLists | None = None, **kwargs: Any) -> Any:
    """`decorate(..., dtype='bfloat16')`."""
    return decorate(optimizer, amp_lists, dtype="bfloat16", **kwargs)


__all__ = ["AutoMixedPrecisionLists", "CustomOpLists", "OptimizerWithMixedPrecision", "bf16_decorate", "decorate",
           "check_finite_and_unscale", "update_loss_scaling"]
