"""`paddle.static.amp`: mixed precision for static programs, as a program pass.

`decorate(optimizer, amp_lists=None, level='O1', dtype='float16')` wraps an optimizer;
its `minimize(loss)` first rewrites the loss's program by the op lists
(`passes/amp.py`'s `auto-mixed-precision` pass: `pd.cast`s before white-list ops'
float32 inputs and black-list ops' 16-bit ones, visible in the printed program),
then builds the backward part and the updates as the wrapped optimizer does.  The
parameters stay float32 (their master weights); gradients reach them through the
casts.  Loss scaling is not applied in static programs yet (`get_loss_scaling()` is
1.0): use bfloat16, whose range is float32's, or `paddle.amp.GradScaler` in eager mode.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

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


class OptimizerWithMixedPrecision:
    """What `decorate` returns: `minimize` applies the AMP pass, then the optimizer."""

    def __init__(self, optimizer: Any, state: AmpState) -> None:
        self._optimizer = optimizer
        self._state = state
        self._casts = 0

    def minimize(self, loss: Any, startup_program: Any = None, parameter_list: Any = None,
                 no_grad_set: Any = None) -> Any:
        """Rewrite `loss`'s program by the op lists, then `optimizer.minimize`."""
        self._casts = auto_mixed_precision(loss.block.program.module, self._state)
        return self._optimizer.minimize(loss, startup_program, parameter_list, no_grad_set)

    def amp_init(self, place: Any = None, scope: Any = None, test_program: Any = None,
                 use_fp16_test: bool = False) -> None:
        """Paddle's hook to cast float32 parameters for pure float16 (O2): nothing to do
        at O1, where parameters stay float32."""

    def get_loss_scaling(self) -> float:
        """The loss scale (1.0: static loss scaling is not applied)."""
        return 1.0

    def __getattr__(self, name: str) -> Any:
        return getattr(self._optimizer, name)


def decorate(optimizer: Any, amp_lists: AutoMixedPrecisionLists | None = None, level: str = "O1",
             dtype: str = "float16", master_weight: bool | None = None, init_loss_scaling: float = 2.0**15,
             incr_every_n_steps: int = 1000, decr_every_n_nan_or_inf: int = 2, incr_ratio: float = 2.0,
             decr_ratio: float = 0.8, use_dynamic_loss_scaling: bool | None = None, use_amp_guard: bool = False,
             use_promote: bool = False, **kwargs: Any) -> OptimizerWithMixedPrecision:
    """`paddle.static.amp.decorate` (O1; see the module's docstring)."""
    if level != "O1":
        raise NotImplementedError("paddle.static.amp.decorate: only level='O1' is supported for static programs")
    if amp_lists is not None:
        dtype = amp_lists.dtype
        state = AmpState.of(dtype, level, amp_lists.custom_white_list, amp_lists.custom_black_list)
    else:
        state = AmpState.of(dtype, level)
    return OptimizerWithMixedPrecision(optimizer, state)


def bf16_decorate(optimizer: Any, amp_lists: AutoMixedPrecisionLists | None = None, **kwargs: Any) -> Any:
    """`decorate(..., dtype='bfloat16')`."""
    return decorate(optimizer, amp_lists, dtype="bfloat16")


__all__ = ["AutoMixedPrecisionLists", "OptimizerWithMixedPrecision", "bf16_decorate", "decorate"]
