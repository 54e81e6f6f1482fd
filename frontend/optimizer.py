"""Optimizers (`paddle.optimizer.*`, `fluid.optimizer.*`): SGD, Momentum, Adam, AdamW,
Adamax, Adagrad, Adadelta, RMSProp and Lamb, static and eager.

One code path serves both modes.  An update step takes the `(param, grad)` pairs
and

1. clips them (`grad_clip=`, `frontend/clip.py`),
2. adds the decay terms (`weight_decay=` or `ParamAttr(regularizer=...)`,
   `frontend/regularizer.py`),
3. appends one update op per parameter (`pd.sgd`, `pd.adam`, ...), reading the
   learning rate and the optimizer's state (accumulators),

all through `core.apply`: in a static program these are visible `pd` ops between the
backward region and the updates, whose results carry the names of the state they
overwrite (`fc_0.w_0`, `fc_0.w_0_moment1_0`: how the executor knows to store them);
in eager mode (`step()`) the same ops run at once on the parameters' arrays, and the
results replace the parameters' and accumulators' values in place.

State follows Paddle: accumulators are named `<param>_<kind>_<k>`
(`velocity`, `moment1`, `beta1_pow_acc`, ...; prefixed with the optimizer's `name`
when given), and are what `state_dict()` holds, with the scheduler's state under
`LR_Scheduler`.  The learning rate is a persistable `[1]` variable
`learning_rate_<k>` in static programs (scaled by a `pd.scale` for a parameter with
`ParamAttr(learning_rate=m)`); with an `LRScheduler`, the program carries it
(`program.lr_scheduler`) and the executor writes `scheduler()` into the scope
before each run.
"""

from __future__ import annotations

import builtins
import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from pullback.dialects import pd
from pullback.dialects.bfloat16 import host_cast
from pullback.dialects.pd.dtypes import DTYPE_BY_NAME, to_dtype_name
from pullback.frontend import core, eager_lazy, lr, unique_name
from pullback.frontend.clip import (
    ClipGradBase,
    append_gradient_clip_ops,
    error_clip_callback,
)
from pullback.frontend.framework import (
    Program,
    Variable,
    default_main_program,
    default_startup_program,
    program_guard,
)
from pullback.frontend.initializer import Constant
from pullback.frontend.layers import add_parameter
from pullback.frontend.operator import Operator
from pullback.frontend.param_attr import ParamAttr
from pullback.runtime.interrupts import deferred_interrupts
from pullback.frontend.regularizer import (
    L2Decay,
    WeightDecayRegularizer,
    as_regularizer,
    regularized_grad,
)

ParamsGrads = list[tuple[Any, Any]]
_logger = logging.getLogger(__name__)

__path__: list[str] = []  # `paddle.optimizer.lr` comes from the alias finder


def _log_shadowed_regularization(pairs: ParamsGrads, regularization: Any) -> None:
    if regularization is not None and any(getattr(p, "regularizer", None) is not None for p, _ in pairs):
        _logger.info(
            "If regularizer of a Parameter has been set by 'paddle.ParamAttr' already, the "
            "Regularization[%s] in Optimizer will not take effect, and it will only be "
            "applied to other Parameters!", regularization,
        )


def _number(cls: str, arg: str, v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.floating, np.integer)):
        raise TypeError(f"{cls}: {arg} must be a float, got {type(v).__name__}")
    return float(v)


def _in_unit(cls: str, arg: str, v: Any) -> float:
    v = _number(cls, arg, v)
    if not 0.0 <= v < 1.0:
        raise ValueError(f"Invalid value of {arg}, expect {arg} in [0,1).")
    return v


def _nonnegative(cls: str, arg: str, v: Any) -> float:
    v = _number(cls, arg, v)
    if v < 0:
        raise ValueError(f"Invalid value of {arg}, expect {arg} >= 0.")
    return v


class Optimizer:
    """Base class: argument checks, parameter groups, the learning rate, state,
    `minimize` / `step` and state dicts.  Subclasses declare `type` (the update op's
    Paddle type), their accumulators (`_create_accumulators`) and the update
    (`_append_optimize_op`)."""

    type = ""

    def __init__(
        self,
        learning_rate: float | lr.LRScheduler,
        parameters: Sequence[Any] | None = None,
        weight_decay: float | WeightDecayRegularizer | None = None,
        grad_clip: ClipGradBase | None = None,
        name: str | None = None,
    ) -> None:
        cls = type(self).__name__
        if learning_rate is None:
            raise ValueError("learning_rate is not set")
        if not isinstance(learning_rate, lr.LRScheduler) and (
            isinstance(learning_rate, bool) or not isinstance(learning_rate, (int, float))
        ):
            raise TypeError(
                f"learning rate should be float or LRScheduler, got {type(learning_rate)} here"
            )
        if not isinstance(learning_rate, lr.LRScheduler) and learning_rate < 0:
            raise ValueError(f"{cls}: learning_rate must be >= 0, got {learning_rate}")
        if parameters is not None:
            if isinstance(parameters, (Variable, dict)) or hasattr(parameters, "_data"):
                raise TypeError(
                    "`parameters` argument given to the optimizer should be an iterable of "
                    f"paddle Tensors, but got argument type is `{type(parameters)}`."
                )
            parameters = list(parameters)
        if grad_clip is not None and not isinstance(grad_clip, ClipGradBase):
            raise TypeError("'grad_clip' should be an instance of GradientClipBase's derived class")
        if core.in_dynamic_mode() and parameters is None:
            raise AttributeError(
                "parameters argument given to the Optimizer should not be None in dygraph mode."
            )
        self._learning_rate: float | lr.LRScheduler = (
            learning_rate if isinstance(learning_rate, lr.LRScheduler) else float(learning_rate)
        )
        self.regularization = as_regularizer(weight_decay, cls)
        self._grad_clip = grad_clip
        self._name = name
        self._parameter_list = parameters
        self._accumulators: dict[str, dict[str, Any]] = {}
        self._accumulators_holder: dict[str, Any] = {}
        self._opti_name_list: list[str] = []
        self._lr_vars: dict[Program, Variable] = {}
        self._default_dict: dict[str, Any] = {"weight_decay": self.regularization, "grad_clip": grad_clip}
        self._param_groups: list[dict[str, Any]] = []
        self._group_of: dict[int, dict[str, Any]] = {}
        self._pending_groups = (
            list(parameters) if parameters and isinstance(parameters[0], dict) else None
        )
        self.clear_gradients = self.clear_grad
        self._auxiliary_vars: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        # Paddle keeps each hyperparameter as `_<name>` (`_momentum`, `_use_nesterov`,
        # `_beta1`, `_epsilon`) and its tests read them; here they live in the
        # defaults parameter groups start from.
        defaults = self.__dict__.get("_default_dict")
        if name.startswith("_") and not name.startswith("__") and defaults and name[1:] in defaults:
            return defaults[name[1:]]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def _set_defaults(self, **hyper: Any) -> None:
        """Record the hyperparameters parameter groups may override, then register
        the groups (subclasses call this at the end of `__init__`)."""
        self._default_dict.update(hyper)
        if self._pending_groups is not None:
            for group in self._pending_groups:
                self._add_param_group(dict(group))
        elif self._parameter_list is not None:
            self._param_groups = [{"params": self._parameter_list, **self._default_dict}]

    def _add_param_group(self, group: dict[str, Any]) -> None:
        """Register a parameter group: its options default to the optimizer's, its
        `weight_decay` becomes its parameters' regularizer and its `learning_rate`
        their learning-rate multiplier (as Paddle does)."""
        if "params" not in group:
            raise ValueError(
                "params should be set in parameters if parameter groups are optimized in different options"
            )
        params = group["params"]
        if isinstance(params, set):
            raise TypeError(
                "optimizer parameters should be in ordered collections,but received set, "
                "please use list instead."
            )
        group["params"] = [params] if hasattr(params, "name") and not isinstance(params, (list, tuple)) else list(params)
        for k, v in self._default_dict.items():
            group.setdefault(k, v)
        seen = {id(p) for g in self._param_groups for p in g["params"]}
        if any(id(p) in seen for p in group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        reg = as_regularizer(group["weight_decay"], type(self).__name__)
        for p in group["params"]:
            p.regularizer = reg
            attr = getattr(p, "optimize_attr", None)
            if attr is None:
                p.optimize_attr = attr = {}
            attr["learning_rate"] = float(group.get("learning_rate", 1.0))
            self._group_of[id(p)] = group
        self._param_groups.append(group)

    def _hp(self, param: Any, key: str) -> Any:
        """Hyperparameter `key` for `param`: its group's value, else the default."""
        group = self._group_of.get(id(param))
        return group[key] if group is not None and key in group else self._default_dict[key]

    # -- the learning rate ---------------------------------------------------------

    def get_lr(self) -> float:
        """The current learning rate (the scheduler's current value with one)."""
        if isinstance(self._learning_rate, lr.LRScheduler):
            return self._learning_rate()
        return self._learning_rate

    def set_lr(self, value: float) -> None:
        """Set a float learning rate (RuntimeError with a scheduler).  Static programs
        already built read it from their learning-rate variable, which is updated in
        the global scope and in the startup program's initializer."""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(
                f"The type of 'value' in optimizer.set_lr must be float, but received {type(value)}."
            )
        if isinstance(self._learning_rate, lr.LRScheduler):
            raise RuntimeError(  # noqa: TRY004 - Paddle's exception type
                "optimizer's learning rate can't be LRScheduler when invoke this API, because "
                "this will lead to conflict."
            )
        self._learning_rate = float(value)
        if self._lr_vars:
            from pullback.runtime.scope import global_scope

            scope = global_scope()
            for var in self._lr_vars.values():
                if var.name in scope:
                    scope[var.name] = np.full([1], value, dtype=np.dtype(f"{var.dtype}"))
                init = getattr(var, "_initializer_op", None)
                if init is not None:
                    init.properties["value"] = pd.f64_attr(float(value))

    def set_lr_scheduler(self, scheduler: lr.LRScheduler) -> None:
        """Use `scheduler` as the learning rate from now on."""
        if not isinstance(scheduler, lr.LRScheduler):
            raise TypeError(
                "The type of 'scheduler' in optimizer.set_lr_schduler must be LRScheduler, but "
                f"received {type(scheduler)}."
            )
        self._learning_rate = scheduler

    def _global_learning_rate(self, program: Program | None = None) -> Variable | None:
        """The learning-rate variable of `program` (the default main program)."""
        return self._lr_vars.get(program or default_main_program())

    def _create_global_learning_rate(self, dtype: str) -> Variable:
        """The persistable `[1]` learning-rate variable of the current program."""
        program = default_main_program()
        var = self._lr_vars.get(program)
        if var is None:
            name = unique_name.generate("learning_rate")
            var = add_parameter(name, [1], dtype, ParamAttr(trainable=False), Constant(self.get_lr()))
            startup = default_startup_program()
            var._initializer_op = next(  # type: ignore[attr-defined]
                op for op in reversed(list(startup.global_block().ir.ops)) if pd.value_name(op.results[0]) == name
            )
            self._lr_vars[program] = var
            if isinstance(self._learning_rate, lr.LRScheduler):
                self._learning_rate._var_name = name
                program.lr_scheduler = self._learning_rate  # type: ignore[attr-defined]
                program.lr_var = var  # type: ignore[attr-defined]
        return var

    def _param_lr(self, param: Any) -> Any:
        """The learning rate the update of `param` reads: the global rate times the
        parameter's `ParamAttr(learning_rate=m)`, in the parameter's dtype."""
        mult = float((getattr(param, "optimize_attr", None) or {}).get("learning_rate", 1.0))
        if core.in_dynamic_mode():
            from pullback.frontend.eager import Tensor

            # One Tensor per rate and dtype, shared by the step's updates (and the
            # next steps' while the rate holds): never written, so safe to share.
            key = (self.get_lr() * mult, param._arr.dtype)
            cache = self.__dict__.setdefault("_lr_tensors", {})
            t = cache.get(key)
            if t is None:
                if len(cache) >= 64:  # (a schedule: a new rate every step)
                    cache.clear()
                t = cache[key] = Tensor._new(host_cast(np.full([1], key[0], np.float64), key[1]), None, 0, True)
            return t
        base = self._create_global_learning_rate(f"{param.dtype}")
        if base.dtype != param.dtype:
            base = core.apply(pd.CastOp, [base], prefix="cast", dtype=f"{param.dtype}")
        if mult == 1.0:
            return base
        return core.apply(pd.ScaleOp, [base], prefix="scale", scale=mult)

    # -- accumulators --------------------------------------------------------------

    def _add_accumulator(
        self, name: str, param: Any, fill_value: float = 0.0, shape: Sequence[int] | None = None,
        dtype: str | None = None,
    ) -> Any:
        """State `<param>_<name>_<k>` of `param` (a non-trainable persistable in
        static programs, a Tensor in eager mode), filled with `fill_value`."""
        if self._name is not None:
            name = f"{self._name}_{name}"
        table = self._accumulators.setdefault(name, {})
        if param.name in table:
            return table[param.name]
        var_name = unique_name.generate(f"{param.name}_{name}")
        self._opti_name_list.append(var_name)
        shape = list(param.shape) if shape is None else list(shape)
        dtype = to_dtype_name(dtype, "add_accumulator", default=param.dtype)
        if core.in_dynamic_mode():
            from pullback.frontend.eager import Tensor

            t = Tensor._new(host_cast(np.full(shape, fill_value, np.float64), DTYPE_BY_NAME[dtype].numpy), None, 0, True)
            t._name = var_name
            t.persistable = True
            if self._accumulators_holder:
                if var_name not in self._accumulators_holder:
                    raise ValueError(f"Optimizer set error, {var_name} should in state dict")
                self._load_into(t, self._accumulators_holder[var_name])
            var: Any = t
        else:
            var = add_parameter(var_name, shape, dtype, ParamAttr(trainable=False), Constant(fill_value))
        table[param.name] = var
        return var

    def _get_accumulator(self, name: str, param: Any) -> Any:
        """The accumulator `name` of `param`."""
        if self._name is not None:
            name = f"{self._name}_{name}"
        try:
            return self._accumulators[name][param.name]
        except KeyError:
            raise ValueError(f"Accumulator {name} does not exist for parameter {param.name}") from None

    def get_opti_var_name_list(self) -> list[str]:
        """The names of every accumulator created so far."""
        return list(self._opti_name_list)

    def _create_accumulators(self, param: Any) -> None:
        """Create `param`'s accumulators (none by default)."""

    # -- the update ----------------------------------------------------------------

    def _append_optimize_op(self, param: Any, grad: Any, lr_value: Any) -> Any:
        raise NotImplementedError(
            'Class "Optimizer" connot be used directly as an optimizer, please use its '
            'subclasses such as "Adam"'
        )

    def _finish_update(self, params_grads: ParamsGrads) -> list[Any]:
        """Updates after all parameters' (Adamax's beta-power scale); returns ops."""
        return []

    def _set_auxiliary_var(self, key: str, val: Any) -> None:
        """Paddle's hook for values an optimizer's caller hands it: `found_inf` (set
        by `paddle.static.amp.decorate`) is the step's overflow flag, a `[1]` bool
        variable that Adam, AdamW and Lamb read as their `skip_update` operand."""
        self.__dict__.setdefault("_auxiliary_vars", {})[key] = val

    def _get_auxiliary_var(self, key: str) -> Any:
        """The value `_set_auxiliary_var` gave `key`, None if none."""
        # (Through __dict__: an optimizer copied without __init__ has none yet, and
        # `__getattr__` would raise for the missing attribute.)
        return self.__dict__.get("_auxiliary_vars", {}).get(key)

    def _skip_update_operand(self, param: Any) -> list[Any]:
        """Static: `[found_inf]` when one was set (`_set_auxiliary_var`), the extra
        operand of the Adam-like updates (Paddle's `SkipUpdate` input); else `[]`.
        Eager steps are skipped whole instead (`_apply`)."""
        found_inf = self._get_auxiliary_var("found_inf")
        if core.in_dynamic_mode() or found_inf is None or found_inf is False:
            return []
        if not isinstance(found_inf, Variable):
            raise TypeError(
                f"{type(self).__name__}: the auxiliary variable 'found_inf' of a static program must be a "
                f"[1] bool Variable (check_finite_and_unscale's), got {type(found_inf).__name__}"
            )
        if found_inf.block.program is not param.block.program:
            raise ValueError(
                f"{type(self).__name__}: the auxiliary variable 'found_inf' ({found_inf.name}) belongs to another "
                f"program than parameter '{param.name}' (an optimizer decorated by paddle.static.amp.decorate "
                "for one program, reused for another): set it again, or to None"
            )
        return [found_inf]

    def _update(self, op_cls: builtins.type[pd.PdOp], inputs: list[Any], outputs: list[Any], **props: Any) -> Any:
        """Append (static) or run (eager) one update: `outputs[i]` is the state that
        result `i` overwrites.  Static results are named after it; eager results
        replace its value (a new array, so graphs recorded earlier keep theirs)."""
        if core.in_dynamic_mode():
            outs = core.apply(op_cls, inputs, prefix=op_cls.name[3:], **props)
            outs = outs if isinstance(outs, list) else [outs]
            for target, out in zip(outputs, outs):
                self._write(target, out._arr)  # (a deferred update's pending value is not run here)
            return None
        out = core.apply(op_cls, inputs, prefix=op_cls.name[3:], out_names=[v.name for v in outputs], **props)
        first = out[0] if isinstance(out, list) else out
        return Operator(first.block, first.value.owner)

    def _write(self, target: Any, value: np.ndarray) -> None:
        """Eager: give `target` (a parameter or accumulator) its new array, noting
        the old one first in the step's journal (`_apply`)."""
        journal = self.__dict__.get("_journal")
        if journal is not None:
            journal.append((target, target._arr))
        if not isinstance(value, np.ndarray):
            # A deferred update's pending value: the step's trace runs after this
            # step returns (`eager_lazy.end_step`), and should it fail, the old
            # value comes back, as the journal gives it back here.
            eager_lazy.note_undo(target, "_arr", target._arr)
        target._data = value

    def _apply(self, params_grads: ParamsGrads) -> list[Any]:
        """Clip, regularize and update the pairs of one parameter group (or all).

        Eager, a step is applied whole or not at all: every write (`_write`) is
        journaled, and when the step does not finish (Ctrl-C's KeyboardInterrupt
        arriving anywhere in it, or an error in a later parameter's update) every
        parameter and accumulator gets its old array back before the exception goes
        on, with further interrupts held back meanwhile (issue 32; Paddle 3.3.1
        leaves a step half-applied).  Writes replace arrays, never change them in
        place, so the journal holds references, not copies."""
        if not core.in_dynamic_mode():
            return self._apply_pairs(params_grads)
        found_inf = self._get_auxiliary_var("found_inf")
        if found_inf is not None and not isinstance(found_inf, bool):
            # As Paddle's dygraph step: a flag Tensor is read once, kept as a bool.
            found_inf = bool(np.asarray(getattr(found_inf, "_data", found_inf)).reshape(-1)[0])
            self._set_auxiliary_var("found_inf", found_inf)
        if found_inf:
            return []  # an overflowed step: nothing is updated
        journal: list[tuple[Any, np.ndarray]] = []
        self.__dict__["_journal"] = journal
        try:
            ops = self._apply_pairs(params_grads)
            # The step's end: its deferred ops (forward, backward, updates) run at
            # the clear_grad() that follows, or the next op or read, as one native
            # program once compiled (`frontend/eager_lazy.py`).
            eager_lazy.end_step()
            return ops
        except BaseException:
            with deferred_interrupts():
                for target, old in reversed(journal):
                    target._data = old
            raise
        finally:
            self.__dict__["_journal"] = None

    def _apply_pairs(self, params_grads: ParamsGrads) -> list[Any]:
        ops: list[Any] = []
        groups: dict[int, list[tuple[Any, Any]]] = {}
        for p, g in params_grads:
            groups.setdefault(id(self._group_of.get(id(p))), []).append((p, g))
        for pairs in groups.values():
            group = self._group_of.get(id(pairs[0][0]))
            clip = group["grad_clip"] if group is not None else self._grad_clip
            regularization = self.regularization if group is None else None
            if clip is not None:
                pairs = clip(pairs)
            else:
                pairs = append_gradient_clip_ops(pairs)  # `set_gradient_clip` strategies
            _log_shadowed_regularization(pairs, regularization)
            pairs = [(p, self._regularize(p, g, regularization)) for p, g in pairs]
            block = None if core.in_dynamic_mode() else default_main_program().global_block()
            start = 0 if block is None else len(block.ops)
            updates: list[Any] = []
            for p, g in pairs:
                if g is None or p.stop_gradient:
                    continue
                master = self._master_weight(p)
                if master is not None:  # paddle.amp.decorate(level='O2'): update the float32 copy
                    self._create_accumulators(master)
                    updates.append(self._append_optimize_op(master, g.astype("float32"), self._param_lr(master)))
                    self._write(p, master.astype(p.dtype)._arr)  # (deferred: the step stays one trace)
                    continue
                self._create_accumulators(p)
                updates.append(self._append_optimize_op(p, g, self._param_lr(p)))
            updates.extend(self._finish_update(pairs))
            # Static: as Paddle's optimization pass, every op the updates appended
            # (a parameter's learning-rate `scale` included), not only the updates.
            ops.extend(updates if block is None else block.ops[start:])
        return [op for op in ops if op is not None]

    def _master_weight(self, param: Any) -> Any:
        """The float32 master weight of a float16/bfloat16 eager parameter when the
        optimizer keeps them (`_multi_precision`, set by `paddle.amp.decorate`), made
        from the parameter on first use and named `<param>_fp32_master_0` as Paddle's;
        None otherwise."""
        if not getattr(self, "_multi_precision", False) or not core.in_dynamic_mode():
            return None
        if f"{param.dtype}" not in ("float16", "bfloat16"):
            return None
        masters = self.__dict__.setdefault("_master_weights", {})
        m = masters.get(param.name)
        if m is None:
            from pullback.frontend.eager import Tensor

            m = Tensor._new(host_cast(param._data, np.dtype(np.float32)), None, 0, True)
            m._name = f"{param.name}_fp32_master_0"
            m.optimize_attr = getattr(param, "optimize_attr", None)  # type: ignore[attr-defined]
            masters[param.name] = m
        return m

    def _regularize(self, param: Any, grad: Any, regularization: WeightDecayRegularizer | None) -> Any:
        """`grad` with `param`'s decay term added by gradient ops (Momentum fuses L2
        decay into its update instead)."""
        return regularized_grad(param, grad, regularization)

    # -- Paddle's API ----------------------------------------------------------------

    def append_regularization_ops(
        self, parameters_and_grads: ParamsGrads, regularization: WeightDecayRegularizer | None = None
    ) -> ParamsGrads:
        """Add each parameter's decay term (its own regularizer, else `regularization`,
        else the optimizer's) to its gradient; returns the new pairs."""
        reg = regularization if regularization is not None else self.regularization
        _log_shadowed_regularization(parameters_and_grads, reg)
        return [(p, self._regularize(p, g, reg)) for p, g in parameters_and_grads]

    def backward(
        self,
        loss: Any,
        startup_program: Program | None = None,
        parameters: Sequence[Any] | None = None,
        no_grad_set: Iterable[Any] | None = None,
        callbacks: Sequence[Callable[..., Any]] | None = None,
    ) -> ParamsGrads:
        """Static: append the backward part of `loss` (`append_backward`, with the
        error-clip callback by default); eager: the `(param, grad)` pairs of the
        parameters that have a gradient."""
        if core.in_dynamic_mode():
            params = self._eager_params("backward", parameters)
            return [(p, p.grad) for p in params if not p.stop_gradient and p.grad is not None]
        from pullback.frontend.backward import append_backward

        static_params = list(parameters) if parameters is not None else self._static_params()
        if callbacks is None:
            callbacks = [error_clip_callback]
        program = loss.block.program
        with program_guard(program, startup_program or default_startup_program()):
            return append_backward(loss, static_params, no_grad_set, callbacks)

    def apply_gradients(self, params_grads: ParamsGrads, startup_program: Program | None = None) -> list[Any]:
        """Static: append clipping, regularization and one update op per
        `(param, grad)` (sorted by parameter name, as Paddle does), state
        initializers going to `startup_program` (the default startup program);
        returns the update operators."""
        pairs = sorted([(p, g) for p, g in params_grads if g is not None], key=lambda pg: pg[0].name)
        if not pairs:
            if not core.in_dynamic_mode():
                # As Paddle's optimization pass, the learning-rate variable exists
                # even with nothing to update: programs fetch it, schedules drive it.
                with program_guard(default_main_program(), startup_program or default_startup_program()):
                    self._create_global_learning_rate("float32")
            return []
        program = pairs[0][0].block.program
        with program_guard(program, startup_program or default_startup_program()):
            return self._apply(pairs)

    def minimize(
        self,
        loss: Any,
        startup_program: Program | None = None,
        parameters: Sequence[Any] | None = None,
        no_grad_set: Iterable[Any] | None = None,
    ) -> tuple[list[Any], ParamsGrads]:
        """Update the parameters to reduce `loss`; returns `(optimize_ops,
        params_grads)`.  Static: appends backward and update ops.  Eager (as Paddle's
        dygraph): the gradients must be there already (`loss.backward()`); it is
        `step()` on those parameters, and `optimize_ops` is empty."""
        if core.in_dynamic_mode():
            from pullback.frontend.eager import Tensor

            if not isinstance(loss, Tensor):
                raise TypeError(
                    f"{type(self).__name__}.minimize: loss must be a Tensor in eager mode, "
                    f"got {type(loss).__name__}"
                )
            params_grads = self.backward(loss, parameters=parameters)
            from pullback.frontend.autograd import no_grad

            with no_grad():
                self._apply(params_grads)
            return [], params_grads
        if not isinstance(loss, Variable):
            raise TypeError(
                f"{type(self).__name__}.minimize: loss must be a Variable, got {type(loss).__name__}"
            )
        params_grads = self.backward(loss, startup_program, parameters, no_grad_set)
        ops = self.apply_gradients(params_grads, startup_program)
        return ops, params_grads

    def step(self) -> None:
        """Eager mode: update every trainable parameter that has a gradient, in place
        (the same Tensor objects get the new values), by Paddle's formula.  Not
        recorded for autograd."""
        from pullback.frontend.autograd import no_grad

        params = self._eager_params("step")
        pairs = [(p, p.grad) for p in params if not p.stop_gradient and p.grad is not None]
        with no_grad():
            self._apply(pairs)

    def clear_grad(self, set_to_zero: bool = True) -> None:
        """Eager mode: reset the gradients of the trainable parameters (to zeros, or
        to None with `set_to_zero=False`)."""
        for p in self._eager_params("clear_grad"):
            if not p.stop_gradient:
                p.clear_gradient(set_to_zero)
        eager_lazy.end_clear()  # the step's trace runs now, without the cleared gradients

    def state_dict(self) -> dict[str, Any]:
        """The optimizer's state: every accumulator by name (Tensors in eager mode,
        Variables in static programs) and, with a scheduler, its state under
        `LR_Scheduler`."""
        out: dict[str, Any] = {}
        for table in self._accumulators.values():
            for var in table.values():
                out[var.name] = var
        if isinstance(self._learning_rate, lr.LRScheduler):
            out["LR_Scheduler"] = self._learning_rate.state_dict()
        return out

    def set_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a state saved by `state_dict` (accumulators not created yet are
        loaded when they are).  Every accumulator is checked (name, shape, dtype)
        before any is assigned, and the scheduler's state before either: an error
        leaves the optimizer as it was (Paddle raises after loading those before the
        bad one)."""
        state = {k: v for k, v in state_dict.items() if k not in ("LR_Scheduler", "master_weights")}
        loads = []
        for table in self._accumulators.values():
            for var in table.values():
                if var.name not in state:
                    raise ValueError(f"optimizer Tensor {var.name} not found")
                loads.append((var, self._checked(var, state[var.name])))
        if isinstance(self._learning_rate, lr.LRScheduler) and "LR_Scheduler" in state_dict:
            self._learning_rate.set_state_dict(state_dict["LR_Scheduler"])  # checks its keys first
        self._accumulators_holder = state
        for var, arr in loads:
            if core.in_dynamic_mode():
                var._data = arr
            else:
                from pullback.runtime.scope import global_scope

                global_scope()[var.name] = arr

    set_dict = set_state_dict

    @staticmethod
    def _checked(var: Any, value: Any) -> np.ndarray:
        arr = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
        shape, dtype = list(var.shape), np.dtype(f"{var.dtype}")
        if list(arr.shape) != shape:
            raise ValueError(
                f"Parameter shape not match, Dygraph Parameter [ {var.name} ] need tensor with "
                f"shape {shape} but load tensor with shape {list(arr.shape)}"
            )
        if arr.dtype != dtype:
            raise ValueError(
                f"Parameter dtype not match, Dygraph Parameter [ {var.name} ] need tensor with "
                f"dtype {dtype.name}  but load tensor with dtype {arr.dtype.name}"
            )
        return np.array(arr, copy=True)

    def _load_into(self, tensor: Any, value: Any) -> None:
        tensor._data = self._checked(tensor, value)

    # -- helpers ---------------------------------------------------------------------

    def _static_params(self) -> list[Any] | None:
        if self._parameter_list is None:
            return None
        return [p for g in self._param_groups for p in g["params"]] if self._param_groups else self._parameter_list

    def _eager_params(self, api: str, parameters: Sequence[Any] | None = None) -> list[Any]:
        """The eager parameters this optimizer updates (checked)."""
        from pullback.frontend.eager import Tensor

        cls = type(self).__name__
        if not core.in_dynamic_mode():
            raise RuntimeError(f"{cls}.{api}() is for eager mode; in static mode use minimize(loss)")
        if parameters is not None:
            params = list(parameters)
        elif self._param_groups:
            params = [p for g in self._param_groups for p in g["params"]]
        else:
            params = list(self._parameter_list or [])
        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise TypeError(f"{cls}: parameters[{i}] must be an eager Tensor, got {type(p).__name__}")
        return params


# ------------------------------------------------------------------------ SGD


class SGD(Optimizer):
    """Stochastic gradient descent: `param -= lr * grad` (`pd.sgd`)."""

    type = "sgd"

    def __init__(
        self,
        learning_rate: float | lr.LRScheduler = 0.001,
        parameters: Sequence[Any] | None = None,
        weight_decay: Any = None,
        grad_clip: ClipGradBase | None = None,
        multi_precision: bool = False,
        name: str | None = None,
        *,
        parameter_list: Sequence[Any] | None = None,
        regularization: Any = None,
    ) -> None:
        super().__init__(learning_rate, parameters if parameters is not None else parameter_list,
                         weight_decay if weight_decay is not None else regularization, grad_clip, name)
        self._multi_precision = bool(multi_precision)  # float32 master weights of 16-bit parameters
        self._set_defaults()

    def _append_optimize_op(self, param: Any, grad: Any, lr_value: Any) -> Any:
        return self._update(pd.SgdOp, [param, grad, lr_value], [param])


# -------------------------------------------------------------------- Momentum


class Momentum(Optimizer):
    """Momentum SGD (`pd.momentum`), plain or Nesterov; state `<param>_velocity_<k>`.

    As in Paddle, an L2 decay (`weight_decay=` a float or `L2Decay`, or a parameter's
    `L2Decay` regularizer) is fused into the update (`regularization_method =
    "l2_decay"`), after `rescale_grad` scales the gradient; other regularizers go
    through gradient ops."""

    type = "momentum"
    _velocity_acc_str = "velocity"

    def __init__(
        self,
        learning_rate: float | lr.LRScheduler = 0.001,
        momentum: float = 0.9,
        parameters: Sequence[Any] | None = None,
        use_nesterov: bool = False,
        weight_decay: Any = None,
        grad_clip: ClipGradBase | None = None,
        multi_precision: bool = False,
        rescale_grad: float = 1.0,
        use_multi_tensor: bool = False,
        name: str | None = None,
        *,
        parameter_list: Sequence[Any] | None = None,
        regularization: Any = None,
    ) -> None:
        if momentum is None:
            raise ValueError("momentum is not set")
        super().__init__(learning_rate, parameters if parameters is not None else parameter_list,
                         weight_decay if weight_decay is not None else regularization, grad_clip, name)
        self._multi_precision = bool(multi_precision)  # float32 master weights of 16-bit parameters
        self._set_defaults(momentum=_number("Momentum", "momentum", momentum),
                           use_nesterov=bool(use_nesterov),
                           rescale_grad=_number("Momentum", "rescale_grad", rescale_grad))

    def _fused_l2(self, param: Any) -> WeightDecayRegularizer | None:
        """The L2 decay fused into `param`'s update: its own `L2Decay`, else (when it
        has no regularizer) the optimizer's or its group's."""
        own = getattr(param, "regularizer", None)
        if own is not None:
            return own if isinstance(own, L2Decay) else None
        group = self._group_of.get(id(param))
        wide = self.regularization if group is None else as_regularizer(group["weight_decay"], "Momentum")
        return wide if isinstance(wide, L2Decay) else None

    def _regularize(self, param: Any, grad: Any, regularization: WeightDecayRegularizer | None) -> Any:
        if self._fused_l2(param) is not None:
            return grad
        return regularized_grad(param, grad, regularization)

    def _create_accumulators(self, param: Any) -> None:
        self._add_accumulator(self._velocity_acc_str, param)

    def _append_optimize_op(self, param: Any, grad: Any, lr_value: Any) -> Any:
        velocity = self._get_accumulator(self._velocity_acc_str, param)
        props: dict[str, Any] = {
            "mu": self._hp(param, "momentum"), "use_nesterov": self._hp(param, "use_nesterov"),
            "rescale_grad": self._hp(param, "rescale_grad"),
        }
        l2 = self._fused_l2(param)
        if l2 is not None:
            props.update(regularization_method="l2_decay", regularization_coeff=l2._coeff)
        return self._update(pd.MomentumOp, [param, grad, lr_value, velocity], [param, velocity], **props)


# ----------------------------------------------------------------------- Adam


class Adam(Optimizer):
    """Adam (`pd.adam`). State: `<param>_moment1_<k>`, `<param>_moment2_<k>` (zeros),
    `<param>_beta1_pow_acc_<k>`, `<param>_beta2_pow_acc_<k>` (`[1]`, starting at
    beta1 and beta2, as in Paddle)."""

    type = "adam"
    _moment1_acc_str = "moment1"
    _moment2_acc_str = "moment2"
    _beta1_pow_acc_str = "beta1_pow_acc"
    _beta2_pow_acc_str = "beta2_pow_acc"

    def __init__(
        self,
        learning_rate: float | lr.LRScheduler = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-8,
        parameters: Sequence[Any] | None = None,
        weight_decay: Any = None,
        grad_clip: ClipGradBase | None = None,
        lazy_mode: bool = False,
        multi_precision: bool = False,
        use_multi_tensor: bool = False,
        amsgrad: bool = False,
        name: str | None = None,
        *,
        parameter_list: Sequence[Any] | None = None,
        regularization: Any = None,
    ) -> None:
        cls = type(self).__name__
        if amsgrad:
            raise NotImplementedError(f"{cls}: amsgrad=True is not supported by pullback")
        beta1, beta2 = _in_unit(cls, "beta1", beta1), _in_unit(cls, "beta2", beta2)
        epsilon = _nonnegative(cls, "epsilon", epsilon)
        super().__init__(learning_rate, parameters if parameters is not None else parameter_list,
                         weight_decay if weight_decay is not None else regularization, grad_clip, name)
        self._multi_precision = bool(multi_precision)  # float32 master weights of 16-bit parameters
        self._set_defaults(beta1=beta1, beta2=beta2, epsilon=epsilon, lazy_mode=bool(lazy_mode))

    def _create_accumulators(self, param: Any) -> None:
        self._add_accumulator(self._moment1_acc_str, param)
        self._add_accumulator(self._moment2_acc_str, param)
        self._add_accumulator(self._beta1_pow_acc_str, param, self._hp(param, "beta1"), [1])
        self._add_accumulator(self._beta2_pow_acc_str, param, self._hp(param, "beta2"), [1])

    def _adam_state(self, param: Any) -> list[Any]:
        return [self._get_accumulator(k, param) for k in (
            self._moment1_acc_str, self._moment2_acc_str, self._beta1_pow_acc_str, self._beta2_pow_acc_str)]

    def _append_optimize_op(self, param: Any, grad: Any, lr_value: Any) -> Any:
        state = self._adam_state(param)
        return self._update(
            pd.AdamOp, [param, grad, lr_value, *state, *self._skip_update_operand(param)], [param, *state],
            beta1=self._hp(param, "beta1"), beta2=self._hp(param, "beta2"),
            epsilon=self._hp(param, "epsilon"),
        )


class AdamW(Adam):
    """AdamW (`pd.adamw`): Adam with decoupled weight decay
    `param -= lr * lr_ratio * weight_decay * param` before the Adam step, skipped for
    parameters `apply_decay_param_fun(name)` rejects.  `weight_decay` is the
    coefficient (a float), not a regularizer; `lr_ratio(param)` scales the rate per
    parameter."""

    type = "adamw"

    def __init__(
        self,
        learning_rate: float | lr.LRScheduler = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-8,
        parameters: Sequence[Any] | None = None,
        weight_decay: float = 0.01,
        lr_ratio: Callable[[Any], float] | None = None,
        apply_decay_param_fun: Callable[[str], bool] | None = None,
        grad_clip: ClipGradBase | None = None,
        lazy_mode: bool = False,
        multi_precision: bool = False,
        amsgrad: bool = False,
        name: str | None = None,
    ) -> None:
        if weight_decay is None or isinstance(weight_decay, bool) or not isinstance(weight_decay, (int, float)):
            raise TypeError("weight_decay should be float or Tensor.")
        if lr_ratio is not None and not callable(lr_ratio):
            raise TypeError("'lr_ratio' should be None or a callable")
        if apply_decay_param_fun is not None and not callable(apply_decay_param_fun):
            raise TypeError("'apply_decay_param_fun' should be None or a callable")
        super().__init__(learning_rate, beta1, beta2, epsilon, parameters, None, grad_clip,
                         lazy_mode, multi_precision, False, amsgrad, name)
        self._multi_precision = bool(multi_precision)  # float32 master weights of 16-bit parameters
        self._default_dict["coeff"] = float(weight_decay)
        if self._pending_groups is not None:
            for g in self._param_groups:
                # A group's `weight_decay` is its AdamW coefficient, not a regularizer.
                g["coeff"] = float(g["weight_decay"]) if isinstance(g.get("weight_decay"), (int, float)) else float(weight_decay)
                for p in g["params"]:
                    p.regularizer = None
        self._coeff = float(weight_decay)
        self._lr_ratio = lr_ratio
        self._apply_decay_param_fun = apply_decay_param_fun

    def _append_optimize_op(self, param: Any, grad: Any, lr_value: Any) -> Any:
        state = self._adam_state(param)
        with_decay = self._apply_decay_param_fun is None or bool(self._apply_decay_param_fun(param.name))
        ratio = 1.0 if self._lr_ratio is None else float(self._lr_ratio(param))
        return self._update(
            pd.AdamwOp, [param, grad, lr_value, *state, *self._skip_update_operand(param)], [param, *state],
            beta1=self._hp(param, "beta1"), beta2=self._hp(param, "beta2"),
            epsilon=self._hp(param, "epsilon"), coeff=self._hp(param, "coeff"),
            lr_ratio=ratio, with_decay=with_decay,
        )


class Lamb(Adam):
    """Lamb (`pd.lamb`): Adam moments, the update scaled per layer by the trust ratio
    `||param|| / ||r||`; `lamb_weight_decay` is added to `r` (not a regularizer),
    except for parameters `exclude_from_weight_decay_fn(param)` selects."""

    type = "lamb"

    def __init__(
        self,
        learning_rate: float | lr.LRScheduler = 0.001,
        lamb_weight_decay: float = 0.01,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-6,
        parameters: Sequence[Any] | None = None,
        grad_clip: ClipGradBase | None = None,
        exclude_from_weight_decay_fn: Callable[[Any], bool] | None = None,
        multi_precision: bool = False,
        always_adapt: bool = False,
        name: str | None = None,
        *,
        parameter_list: Sequence[Any] | None = None,
        regularization: Any = None,
    ) -> None:
        super().__init__(learning_rate, beta1, beta2, epsilon,
                         parameters if parameters is not None else parameter_list,
                         regularization, grad_clip, name=name)
        self._multi_precision = bool(multi_precision)  # float32 master weights of 16-bit parameters
        self._default_dict["lamb_weight_decay"] = _number("Lamb", "lamb_weight_decay", lamb_weight_decay)
        self._exclude_from_weight_decay_fn = exclude_from_weight_decay_fn
        self._always_adapt = bool(always_adapt)

    def _append_optimize_op(self, param: Any, grad: Any, lr_value: Any) -> Any:
        state = self._adam_state(param)
        decay = self._hp(param, "lamb_weight_decay")
        if self._exclude_from_weight_decay_fn is not None and self._exclude_from_weight_decay_fn(param):
            decay = 0.0
        return self._update(
            pd.LambOp, [param, grad, lr_value, *state, *self._skip_update_operand(param)], [param, *state],
            beta1=self._hp(param, "beta1"), beta2=self._hp(param, "beta2"),
            epsilon=self._hp(param, "epsilon"), weight_decay=decay, always_adapt=self._always_adapt,
        )


# ----------------------------------------------------------------- Adamax


class Adamax(Optimizer):
    """Adamax (`pd.adamax`, then a `pd.scale` advancing the beta1 power, as Paddle
    appends one). State: `<param>_moment_<k>`, `<param>_inf_norm_<k>`,
    `<param>_beta1_pow_acc_<k>`."""

    type = "adamax"
    _moment_acc_str = "moment"
    _inf_norm_acc_str = "inf_norm"
    _beta1_pow_acc_str = "beta1_pow_acc"

    def __init__(
        self,
        learning_rate: float | lr.LRScheduler = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-8,
        parameters: Sequence[Any] | None = None,
        weight_decay: Any = None,
        grad_clip: ClipGradBase | None = None,
        name: str | None = None,
        *,
        parameter_list: Sequence[Any] | None = None,
        regularization: Any = None,
    ) -> None:
        beta1, beta2 = _in_unit("Adamax", "beta1", beta1), _in_unit("Adamax", "beta2", beta2)
        epsilon = _nonnegative("Adamax", "epsilon", epsilon)
        super().__init__(learning_rate, parameters if parameters is not None else parameter_list,
                         weight_decay if weight_decay is not None else regularization, grad_clip, name)
        self._set_defaults(beta1=beta1, beta2=beta2, epsilon=epsilon)

    def _create_accumulators(self, param: Any) -> None:
        self._add_accumulator(self._moment_acc_str, param)
        self._add_accumulator(self._inf_norm_acc_str, param)
        self._add_accumulator(self._beta1_pow_acc_str, param, self._hp(param, "beta1"), [1])

    def _append_optimize_op(self, param: Any, grad: Any, lr_value: Any) -> Any:
        m = self._get_accumulator(self._moment_acc_str, param)
        u = self._get_accumulator(self._inf_norm_acc_str, param)
        b1p = self._get_accumulator(self._beta1_pow_acc_str, param)
        return self._update(
            pd.AdamaxOp, [param, grad, lr_value, m, u, b1p], [param, m, u],
            beta1=self._hp(param, "beta1"), beta2=self._hp(param, "beta2"),
            epsilon=self._hp(param, "epsilon"),
        )

    def _finish_update(self, params_grads: ParamsGrads) -> list[Any]:
        ops = []
        for p, g in params_grads:
            if g is None or p.stop_gradient:
                continue
            b1p = self._get_accumulator(self._beta1_pow_acc_str, p)
            ops.append(self._update(pd.ScaleOp, [b1p], [b1p], scale=self._hp(p, "beta1")))
        return ops


# ---------------------------------------------------------------- Adagrad


class Adagrad(Optimizer):
    """Adagrad (`pd.adagrad`). State: `<param>_moment_<k>`, starting at
    `initial_accumulator_value`."""

    type = "adagrad"
    _moment_acc_str = "moment"

    def __init__(
        self,
        learning_rate: float | lr.LRScheduler,
        epsilon: float = 1e-6,
        parameters: Sequence[Any] | None = None,
        weight_decay: Any = None,
        grad_clip: ClipGradBase | None = None,
        name: str | None = None,
        initial_accumulator_value: float = 0.0,
        *,
        parameter_list: Sequence[Any] | None = None,
        regularization: Any = None,
    ) -> None:
        if epsilon is None:
            raise ValueError("epsilon is not set.")
        super().__init__(learning_rate, parameters if parameters is not None else parameter_list,
                         weight_decay if weight_decay is not None else regularization, grad_clip, name)
        self.initial_accumulator_value = _number("Adagrad", "initial_accumulator_value", initial_accumulator_value)
        self._set_defaults(epsilon=_nonnegative("Adagrad", "epsilon", epsilon),
                           initial_accumulator_value=self.initial_accumulator_value)

    def _create_accumulators(self, param: Any) -> None:
        self._add_accumulator(self._moment_acc_str, param, self._hp(param, "initial_accumulator_value"))

    def _append_optimize_op(self, param: Any, grad: Any, lr_value: Any) -> Any:
        m = self._get_accumulator(self._moment_acc_str, param)
        return self._update(pd.AdagradOp, [param, grad, lr_value, m], [param, m],
                            epsilon=self._hp(param, "epsilon"))


# --------------------------------------------------------------- Adadelta


class Adadelta(Optimizer):
    """Adadelta (`pd.adadelta`). State: `<param>__avg_squared_grad_<k>`,
    `<param>__avg_squared_update_<k>` (Paddle's names, with the double underscore)."""

    type = "adadelta"
    _avg_squared_grad_acc_str = "_avg_squared_grad"
    _avg_squared_update_acc_str = "_avg_squared_update"

    def __init__(
        self,
        learning_rate: float | lr.LRScheduler = 0.001,
        epsilon: float = 1e-6,
        rho: float = 0.95,
        parameters: Sequence[Any] | None = None,
        weight_decay: Any = None,
        grad_clip: ClipGradBase | None = None,
        name: str | None = None,
        *,
        parameter_list: Sequence[Any] | None = None,
        regularization: Any = None,
    ) -> None:
        if epsilon is None:
            raise ValueError("epsilon is not set.")
        if rho is None:
            raise ValueError("rho is not set.")
        super().__init__(learning_rate, parameters if parameters is not None else parameter_list,
                         weight_decay if weight_decay is not None else regularization, grad_clip, name)
        self._set_defaults(epsilon=_nonnegative("Adadelta", "epsilon", epsilon),
                           rho=_in_unit("Adadelta", "rho", rho))

    def _create_accumulators(self, param: Any) -> None:
        self._add_accumulator(self._avg_squared_grad_acc_str, param)
        self._add_accumulator(self._avg_squared_update_acc_str, param)

    def _append_optimize_op(self, param: Any, grad: Any, lr_value: Any) -> Any:
        g2 = self._get_accumulator(self._avg_squared_grad_acc_str, param)
        u2 = self._get_accumulator(self._avg_squared_update_acc_str, param)
        return self._update(pd.AdadeltaOp, [param, grad, lr_value, g2, u2], [param, g2, u2],
                            rho=self._hp(param, "rho"), epsilon=self._hp(param, "epsilon"))


# ---------------------------------------------------------------- RMSProp


class RMSProp(Optimizer):
    """RMSProp (`pd.rmsprop`). State: `<param>_momentum_<k>`,
    `<param>_mean_square_<k>`, `<param>_mean_grad_<k>`."""

    type = "rmsprop"
    _momentum_acc_str = "momentum"
    _mean_square_acc_str = "mean_square"
    _mean_grad_acc_str = "mean_grad"

    def __init__(
        self,
        learning_rate: float | lr.LRScheduler,
        rho: float = 0.95,
        epsilon: float = 1e-6,
        momentum: float = 0.0,
        centered: bool = False,
        parameters: Sequence[Any] | None = None,
        weight_decay: Any = None,
        grad_clip: ClipGradBase | None = None,
        name: str | None = None,
        *,
        parameter_list: Sequence[Any] | None = None,
        regularization: Any = None,
    ) -> None:
        for arg, v in (("rho", rho), ("epsilon", epsilon), ("momentum", momentum)):
            if v is None:
                raise ValueError(f"{arg} is not set.")
        super().__init__(learning_rate, parameters if parameters is not None else parameter_list,
                         weight_decay if weight_decay is not None else regularization, grad_clip, name)
        self._set_defaults(rho=_nonnegative("RMSProp", "rho", rho),
                           epsilon=_nonnegative("RMSProp", "epsilon", epsilon),
                           momentum=_nonnegative("RMSProp", "momentum", momentum),
                           centered=bool(centered))

    def _create_accumulators(self, param: Any) -> None:
        for k in (self._momentum_acc_str, self._mean_square_acc_str, self._mean_grad_acc_str):
            self._add_accumulator(k, param)

    def _append_optimize_op(self, param: Any, grad: Any, lr_value: Any) -> Any:
        state = [self._get_accumulator(k, param) for k in (
            self._momentum_acc_str, self._mean_square_acc_str, self._mean_grad_acc_str)]
        return self._update(
            pd.RmspropOp, [param, grad, lr_value, *state], [param, *state],
            decay=self._hp(param, "rho"), epsilon=self._hp(param, "epsilon"),
            momentum=self._hp(param, "momentum"), centered=self._hp(param, "centered"),
        )


# Paddle 1.x (fluid.optimizer) spellings.
SGDOptimizer = SGD
MomentumOptimizer = Momentum
AdamOptimizer = Adam
AdamaxOptimizer = Adamax
AdagradOptimizer = Adagrad
AdadeltaOptimizer = Adadelta
RMSPropOptimizer = RMSProp
LambOptimizer = Lamb

__all__ = [
    "SGD",
    "Adadelta",
    "AdadeltaOptimizer",
    "Adagrad",
    "AdagradOptimizer",
    "Adam",
    "AdamOptimizer",
    "AdamW",
    "Adamax",
    "AdamaxOptimizer",
    "Lamb",
    "LambOptimizer",
    "Momentum",
    "MomentumOptimizer",
    "Optimizer",
    "RMSProp",
    "RMSPropOptimizer",
    "SGDOptimizer",
    "lr",
]
