"""`paddle.amp`: automatic mixed precision (`auto_cast`, `decorate`, `GradScaler`).

Inside `auto_cast(dtype='float16' | 'bfloat16', level='O1' | 'O2')` every op a Paddle API
adds (eager or static, through `frontend.core.apply`) first has its float inputs cast by
Paddle 3.3.1's op lists (`paddle/amp/amp_lists.py`, copied below as `WHITE_LIST`,
`FP16_BLACK_LIST`, `EXTRA_BLACK_LIST`, under pullback's op names):

* O1: a white-list op (matmul, conv2d, linear, ...) computes in the low precision (its
  float32 inputs cast down); a black-list op (softmax, losses, reductions, exp/log,
  layer_norm, ...) in float32 (its 16-bit inputs cast up); any other op in its inputs'
  dtype, float32 when they mix.
* O2: every op but the black-list ones (only `EXTRA_BLACK_LIST` at O2, as Paddle's) in
  the low precision; `decorate(level='O2')` casts the models' parameters to it (norm
  layers keep float32, as Paddle's `need_keep_fp32`) and gives the optimizers float32
  master weights.
* OD: the white list in the low precision, everything else in float32.

The casts are ordinary `pd.cast` ops: in eager mode they are recorded, so gradients
flow back through them (a float32 parameter used by a float16 matmul gets a float32
gradient), and in a static program they are visible in the printed IR.  The same
decision (`passes/amp.py`'s `amp_target`, with the lists) drives the program pass
`auto-mixed-precision` there (`paddle.static.amp.decorate`).

Unlike Paddle 3.3.1 on a CPU, where `auto_cast` leaves ops in float32 (there are no
CPU float16 kernels for most ops) and `GradScaler` warns and does nothing,
pullback's CPU really computes in float16/bfloat16 (storage in 16 bits, arithmetic in
float32 with each op's result rounded, as Paddle's GPU kernels), `GradScaler` scales,
unscales and skips steps on a CPU too, and `is_float16_supported()` /
`is_bfloat16_supported()` are True.
"""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from enum import Enum
from typing import Any

import numpy as np

from pullback.dialects import pd
from pullback.dialects.bfloat16 import host_cast
from pullback.dialects.pd.dtypes import DTYPE_BY_NAME, find_dtype
from pullback.frontend import core
from pullback.frontend.ops.loss_scaling import check_finite_and_unscale, update_loss_scaling
from pullback.passes.amp import (  # noqa: F401 (re-exported: Paddle's paddle.amp names)
    _FLOATS,
    EXTRA_BLACK_LIST,
    FP16_BLACK_LIST,
    KEEP_FLOAT32,
    LOW_DTYPES,
    NEVER_CAST,
    ONLY_FP16_WHITE_LIST,
    WHITE_LIST,
    AmpState,
    amp_target,
    black_list,
    white_list,
)

_STATE: list[AmpState | None] = [None]


def amp_state() -> AmpState | None:
    """The innermost `auto_cast`'s state (None outside one, or in a disabled one)."""
    return _STATE[0]


def is_autocast_enabled(device: str | None = None) -> bool:
    """`paddle.amp.is_autocast_enabled()`."""
    return _STATE[0] is not None


_DTYPE: list[str] = ["float16"]


def get_autocast_dtype(device: str | None = None) -> str:
    """`paddle.amp.get_autocast_dtype()`: the dtype of the innermost `auto_cast` (an
    enabled one or not), float16 outside any, as Paddle's on a GPU."""
    return _DTYPE[0]


get_autocast_cpu_dtype = get_autocast_gpu_dtype = get_autocast_dtype


def is_float16_supported(device: str | None = None) -> bool:
    """`paddle.amp.is_float16_supported()`: True (pullback computes float16 on CPU and GPU)."""
    return True


def is_bfloat16_supported(device: str | None = None) -> bool:
    """`paddle.amp.is_bfloat16_supported()`: True (pullback computes bfloat16 on CPU and GPU)."""
    return True


_CALLS: tuple[type[pd.PdOp], ...] = (pd.RunProgramOp, pd.RunProgramGradOp)
"""Calls of a traced program (`paddle.jit.to_static`): the program holds the casts of
the `auto_cast` it was traced under, so its inputs go in as they are (at O2 they
would otherwise be cast to the low dtype, which the program does not take)."""


def cast_inputs(op_cls: type[pd.PdOp], inputs: Sequence[Any]) -> Sequence[Any]:
    """`inputs` of an op about to be added, cast as the current `auto_cast` says (the
    hook `frontend.core.apply` calls)."""
    st = _STATE[0]
    if (st is None or not inputs or op_cls in NEVER_CAST or op_cls in _CALLS
            or getattr(op_cls, "WRITES_PERSISTABLE", False)):
        return inputs
    dtypes = [f"{getattr(x, 'dtype', '')}" for x in inputs]  # (plain names: `str` adds `paddle.`)
    to = amp_target(op_cls.name[3:], dtypes, st)
    if to is None:
        return inputs
    out = list(inputs)
    for i, (x, d) in enumerate(zip(inputs, dtypes)):
        if d in _FLOATS and d != to:
            out[i] = core.apply(pd.CastOp, [x], prefix="cast", dtype=to)
    return out


@contextlib.contextmanager
def auto_cast(
    enable: bool = True,
    custom_white_list: Iterable[str] | None = None,
    custom_black_list: Iterable[str] | None = None,
    level: str = "O1",
    dtype: str = "float16",
    use_promote: bool = True,
) -> Iterator[None]:
    """`paddle.amp.auto_cast`: ops added inside compute in `dtype` by the op lists (see
    the module's docstring); `enable=False` or `level='O0'` computes as written."""
    st = AmpState.of(dtype, level, custom_white_list, custom_black_list) if enable and level != "O0" else None
    prev, prev_dtype = _STATE[0], _DTYPE[0]
    found = find_dtype(dtype)
    _STATE[0], _DTYPE[0] = st, (found.name if found is not None else str(dtype))
    core.set_amp_hook(cast_inputs if st is not None else None)
    try:
        yield
    finally:
        _STATE[0], _DTYPE[0] = prev, prev_dtype
        core.set_amp_hook(cast_inputs if prev is not None else None)


amp_guard = autocast = auto_cast


# ------------------------------------------------------------------- decorate

_NORM_LAYERS = ("BatchNorm", "BatchNorm1D", "BatchNorm2D", "BatchNorm3D", "LayerNorm", "InstanceNorm1D",
                "InstanceNorm2D", "InstanceNorm3D", "GroupNorm", "SyncBatchNorm")


def _keeps_float32(layer: Any, excluded: Sequence[Any]) -> bool:
    if type(layer).__name__ in _NORM_LAYERS:
        return True
    return any(layer is e or (isinstance(e, type) and isinstance(layer, e)) for e in excluded)


def _cast_parameters(model: Any, dtype: str, excluded: Sequence[Any]) -> None:
    """Cast `model`'s float32 parameters (and buffers) to `dtype` in place: the same
    Parameter objects (optimizers hold them) get new data; norm layers and `excluded`
    layers keep float32."""
    want = DTYPE_BY_NAME[dtype].numpy
    for layer in model.sublayers(include_self=True):
        if _keeps_float32(layer, excluded):
            continue
        for p in list(layer._parameters.values()) + list(getattr(layer, "_buffers", {}).values()):
            if p is not None and p.dtype == "float32":
                p._data = host_cast(p._data, want)
                if getattr(p, "grad", None) is not None:
                    p.clear_gradient(False)


def decorate(
    models: Any,
    optimizers: Any = None,
    level: str = "O1",
    dtype: str = "float16",
    master_weight: bool | None = None,
    save_dtype: str | None = None,
    master_grad: bool = False,
    excluded_layers: Any = None,
) -> Any:
    """`paddle.amp.decorate`: at O1 nothing changes (`auto_cast` casts per op); at O2 the
    models' float32 parameters become `dtype` (norm layers and `excluded_layers` keep
    float32) and, unless `master_weight=False`, each optimizer keeps float32 master
    weights: it updates a float32 copy of each low-precision parameter with the
    gradient cast to float32 and stores it rounded into the parameter.  Returns
    `models`, or `(models, optimizers)` when optimizers are given (each as given: one
    or a list).  `save_dtype`: `state_dict()` of the models gives that dtype."""
    if level not in ("O1", "O2"):
        raise ValueError("level should be O1 or O2")
    found = find_dtype(dtype)
    if found is None or found.name not in LOW_DTYPES:
        raise ValueError(f"decorate: dtype must be 'float16' or 'bfloat16', got {dtype!r}")
    if not core.in_dynamic_mode():
        raise NotImplementedError(
            "paddle.amp.decorate works on eager models; for a static program use "
            "paddle.static.amp.decorate (O1) inside paddle.amp.auto_cast"
        )
    model_list = models if isinstance(models, (list, tuple)) else [models]
    opt_list = [] if optimizers is None else (optimizers if isinstance(optimizers, (list, tuple)) else [optimizers])
    excluded = [] if excluded_layers is None else (
        list(excluded_layers) if isinstance(excluded_layers, (list, tuple)) else [excluded_layers])
    if level == "O2":
        for m in model_list:
            _cast_parameters(m, found.name, excluded)
        if master_weight is not False:
            for opt in opt_list:
                opt._multi_precision = True
    if save_dtype is not None:
        sd = find_dtype(save_dtype)
        if sd is None or sd.name not in ("float16", "bfloat16", "float32", "float64"):
            raise ValueError(f"save_dtype can only be float16 float32 or float64, but your input save_dtype is {save_dtype}.")
        for m in model_list:
            m._amp_save_dtype = sd.name
    if optimizers is None:
        return models
    return models, optimizers


amp_decorate = decorate


# ----------------------------------------------------------------- GradScaler


class OptimizerState(Enum):
    """Where an optimizer is between two `update()`s (Paddle's enum)."""

    INIT = 0
    UNSCALED = 1
    STEPPED = 2


def _no_grad() -> Any:
    """`paddle.no_grad()` (imported late: the autograd package imports this module's
    users)."""
    from pullback.frontend.autograd import no_grad

    return no_grad()


def _refresh_optimizer_state() -> dict[str, OptimizerState]:
    return {"state": OptimizerState.INIT}


class AmpScaler:
    """Loss scaling (Paddle's `AmpScaler`; `GradScaler` is the one to use): `scale`
    multiplies the loss, `minimize`/`step` unscale the gradients, skip the update when
    one is inf or nan, and (dynamic scaling) lower the scale by `decr_ratio` after
    `decr_every_n_nan_or_inf` such steps or raise it by `incr_ratio` after
    `incr_every_n_steps` good ones.  It works in eager mode (pullback's CPU included;
    Paddle's disables itself on a CPU), with a `to_static` model too.  The unscaling
    and the scale update are the ops static programs use
    (`pd.check_finite_and_unscale`, one per gradient dtype as Paddle's, and
    `pd.update_loss_scaling`; `frontend/ops/loss_scaling.py`)."""

    def __init__(
        self,
        enable: bool = True,
        init_loss_scaling: float = 2.0**15,
        incr_ratio: float = 2.0,
        decr_ratio: float = 0.5,
        incr_every_n_steps: int = 1000,
        decr_every_n_nan_or_inf: int = 1,
        use_dynamic_loss_scaling: bool = True,
    ) -> None:
        if not core.in_dynamic_mode():
            raise NotImplementedError("GradScaler works in eager mode (static programs: paddle.static.amp)")
        self._enable = bool(enable)
        self._use_dynamic_loss_scaling = False
        self._init_loss_scaling = 1.0
        self._scale: Any = None
        self._found_inf = False
        self._cache_found_inf: bool | None = None
        self._optimizer_states: defaultdict[int, dict[str, OptimizerState]] = defaultdict(_refresh_optimizer_state)
        self._incr_ratio, self._decr_ratio = incr_ratio, decr_ratio
        self._incr_every_n_steps, self._decr_every_n_nan_or_inf = incr_every_n_steps, decr_every_n_nan_or_inf
        self._incr_count = self._decr_count = 0
        if self._enable:
            if not incr_ratio > 1.0:
                raise AssertionError("The incr_ratio must be > 1.0.")
            if not decr_ratio < 1.0:
                raise AssertionError("The decr_ratio must be < 1.0.")
            self._init_loss_scaling = float(init_loss_scaling)
            self._use_dynamic_loss_scaling = bool(use_dynamic_loss_scaling)
            self._scale = self._scale_tensor(self._init_loss_scaling)

    @staticmethod
    def _scale_tensor(value: float) -> Any:
        from pullback.frontend.eager import Tensor

        return Tensor._new(np.array([value], np.float32), None, 0, True)

    def scale(self, var: Any) -> Any:
        """`var` times the loss scale (unchanged when disabled); a 16-bit loss is
        scaled in float32, as Paddle's float32 scale promotes it."""
        if not self._enable:
            return var
        if var.dtype in LOW_DTYPES:
            var = var.astype("float32")
        return var * self._scale

    def _grads(self, optimizer: Any) -> list[Any]:
        params = optimizer._eager_params("unscale_")
        return [p for p in params if not p.stop_gradient and p.grad is not None]

    def _unscale(self, optimizer: Any) -> None:
        if not self._enable:
            return
        state = self._optimizer_states[id(optimizer)]
        if state["state"] is OptimizerState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the last update().")
        if state["state"] is OptimizerState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        # As Paddle's: one `check_finite_and_unscale` per gradient dtype, in place.
        groups: dict[str, list[Any]] = {}
        for p in self._grads(optimizer):
            groups.setdefault(f"{p.grad.dtype}", []).append(p.grad)
        found = False
        with _no_grad():
            for grads in groups.values():
                _, found_inf = check_finite_and_unscale(grads, self._scale)
                found = found or bool(found_inf._data.reshape(-1)[0])
        self._found_inf = found
        state["state"] = OptimizerState.UNSCALED

    def _update(self) -> None:
        """The scale and the counters after a step, by `pd.update_loss_scaling` (the op
        static programs use; unlike Paddle's eager Python update, it never lowers the
        scale below 1 nor raises it to inf)."""
        if not self._enable:
            return
        from pullback.frontend.eager import Tensor

        old = float(self._scale._data[0])
        found = Tensor._new(np.array([bool(self._cache_found_inf)]), None, 0, True)
        good = Tensor._new(np.array([self._incr_count], np.int32), None, 0, True)
        bad = Tensor._new(np.array([self._decr_count], np.int32), None, 0, True)
        scale = Tensor._new(self._scale._data.copy(), None, 0, True)  # a new Tensor: recorded graphs keep theirs
        with _no_grad():
            update_loss_scaling([], found, scale, good, bad, self._incr_every_n_steps,
                                self._decr_every_n_nan_or_inf, self._incr_ratio, self._decr_ratio)
        self._incr_count, self._decr_count = int(good._data[0]), int(bad._data[0])
        new = float(scale._data[0])
        if self._cache_found_inf and new != old:
            print(f"Found inf or nan, current scale is: {old}, decrease to: {old}*{float(self._decr_ratio)}")
        self._scale = scale

    def minimize(self, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        """`optimizer.minimize(*args)` on unscaled gradients, skipped when one is inf or
        nan; then the scale is updated (dynamic scaling)."""
        if not self._enable:
            return optimizer.minimize(*args, **kwargs)
        state = self._optimizer_states[id(optimizer)]
        if state["state"] is OptimizerState.INIT:
            self._unscale(optimizer)
        result: Any = (None, None)
        if self._found_inf:
            self._cache_found_inf = True
        else:
            result = optimizer.minimize(*args, **kwargs)
            self._cache_found_inf = False
        if self._use_dynamic_loss_scaling:
            self._update()
        self._optimizer_states = defaultdict(_refresh_optimizer_state)
        return result

    # -- Paddle's getters and setters --------------------------------------------

    def is_enable(self) -> bool:
        return self._enable

    def is_use_dynamic_loss_scaling(self) -> bool:
        return self._use_dynamic_loss_scaling

    def get_init_loss_scaling(self) -> float:
        return self._init_loss_scaling

    def set_init_loss_scaling(self, new_init_loss_scaling: float) -> None:
        self._init_loss_scaling = float(new_init_loss_scaling)
        self._scale = self._scale_tensor(self._init_loss_scaling)

    def get_incr_ratio(self) -> float:
        return self._incr_ratio

    def set_incr_ratio(self, new_incr_ratio: float) -> None:
        if not new_incr_ratio > 1.0:
            raise AssertionError("The new_incr_ratio must be > 1.0.")
        self._incr_ratio = new_incr_ratio

    def get_decr_ratio(self) -> float:
        return self._decr_ratio

    def set_decr_ratio(self, new_decr_ratio: float) -> None:
        if not new_decr_ratio < 1.0:
            raise AssertionError("The new_decr_ratio must be < 1.0.")
        self._decr_ratio = new_decr_ratio

    def get_incr_every_n_steps(self) -> int:
        return self._incr_every_n_steps

    def set_incr_every_n_steps(self, new_incr_every_n_steps: int) -> None:
        self._incr_every_n_steps = new_incr_every_n_steps

    def get_decr_every_n_nan_or_inf(self) -> int:
        return self._decr_every_n_nan_or_inf

    def set_decr_every_n_nan_or_inf(self, new_decr_every_n_nan_or_inf: int) -> None:
        self._decr_every_n_nan_or_inf = new_decr_every_n_nan_or_inf

    def state_dict(self) -> dict[str, Any]:
        """The scaler's state (empty when disabled), as Paddle's."""
        if not self._enable:
            return {}
        return {
            "scale": self._scale.numpy(),
            "incr_ratio": self._incr_ratio,
            "decr_ratio": self._decr_ratio,
            "incr_every_n_steps": self._incr_every_n_steps,
            "decr_every_n_nan_or_inf": self._decr_every_n_nan_or_inf,
            "incr_count": self._incr_count,
            "decr_count": self._decr_count,
            "use_dynamic_loss_scaling": self._use_dynamic_loss_scaling,
        }

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load what `state_dict` gave."""
        if not self._enable:
            return
        if len(state_dict) == 0:
            raise RuntimeError(
                "The input state dict is empty, possibly because it was saved "
                "from a disabled instance of GradScaler."
            )
        self._init_loss_scaling = float(np.asarray(state_dict["scale"]).reshape(-1)[0])
        self._scale = self._scale_tensor(self._init_loss_scaling)
        self._incr_ratio = state_dict["incr_ratio"]
        self._decr_ratio = state_dict["decr_ratio"]
        self._incr_every_n_steps = state_dict["incr_every_n_steps"]
        self._decr_every_n_nan_or_inf = state_dict["decr_every_n_nan_or_inf"]
        self._incr_count = state_dict["incr_count"]
        self._decr_count = state_dict["decr_count"]
        self._use_dynamic_loss_scaling = state_dict["use_dynamic_loss_scaling"]


class GradScaler(AmpScaler):
    """`paddle.amp.GradScaler`: `AmpScaler` with Paddle 3.3.1's defaults (scale 2**16,
    raised every 2000 good steps) and the `unscale_` / `step` / `update` protocol:

        scaled = scaler.scale(loss); scaled.backward()
        scaler.step(opt); scaler.update(); opt.clear_grad()
    """

    def __init__(
        self,
        enable: bool = True,
        init_loss_scaling: float = 2.0**16,
        incr_ratio: float = 2.0,
        decr_ratio: float = 0.5,
        incr_every_n_steps: int = 2000,
        decr_every_n_nan_or_inf: int = 1,
        use_dynamic_loss_scaling: bool = True,
    ) -> None:
        super().__init__(enable, init_loss_scaling, incr_ratio, decr_ratio, incr_every_n_steps,
                         decr_every_n_nan_or_inf, use_dynamic_loss_scaling)

    def step(self, optimizer: Any) -> None:
        """`optimizer.step()` on unscaled gradients, skipped when one is inf or nan."""
        if not self._enable:
            optimizer.step()
            return
        state = self._optimizer_states[id(optimizer)]
        if state["state"] is OptimizerState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["state"] is OptimizerState.INIT:
            self._unscale(optimizer)
        if self._found_inf:
            self._cache_found_inf = True
        else:
            optimizer.step()
            self._cache_found_inf = False
        state["state"] = OptimizerState.STEPPED
        if not self._use_dynamic_loss_scaling:
            self._optimizer_states = defaultdict(_refresh_optimizer_state)

    def update(self) -> None:
        """Update the loss scale after `step` (dynamic scaling)."""
        if not self._enable:
            return
        if self._use_dynamic_loss_scaling:
            self._update()
            self._optimizer_states = defaultdict(_refresh_optimizer_state)

    def unscale_(self, optimizer: Any) -> None:
        """Divide the optimizer's gradients by the scale now (to clip them before
        `step`), noting whether one is inf or nan."""
        self._unscale(optimizer)


__all__ = [
    "AmpScaler",
    "GradScaler",
    "OptimizerState",
    "amp_decorate",
    "amp_guard",
    "amp_state",
    "amp_target",
    "auto_cast",
    "autocast",
    "black_list",
    "decorate",
    "get_autocast_cpu_dtype",
    "get_autocast_dtype",
    "get_autocast_gpu_dtype",
    "is_autocast_enabled",
    "is_bfloat16_supported",
    "is_float16_supported",
    "white_list",
]
