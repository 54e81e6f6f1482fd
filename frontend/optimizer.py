"""Optimizers for static programs: `SGD`, `Momentum`, `Adam` (`paddle.optimizer.*`,
`fluid.optimizer.*`).

`minimize(loss)` appends the backward part (`append_backward`) and then one update op
per parameter (`pd.sgd`, `pd.momentum`, `pd.adam`).  Update results carry the names
of the state they overwrite (`fc_0.w_0`, `fc_0.w_0_velocity_0`, ...), which is how the
executor knows to store them in the scope.  Optimizer state is a non-trainable
`pd.parameter` in the main program with a `pd.fill_constant` initializer in the
startup program, named as Paddle names accumulators: `<param>_<kind>_<k>`.

The learning rate is a constant of the update op; a per-parameter
`ParamAttr(learning_rate=m)` multiplies it.

Eager mode (`step()`, `clear_grad()`): each parameter given as `parameters=` with a
`.grad` is updated by the SAME op, computed on numpy arrays by its interpreter kernel
(through an eager template, `eager.template_for`), so each formula exists once.  The
state (velocity, moments, beta powers) is kept per parameter as arrays initialized as
the static accumulators are.  Updates are not recorded for autograd.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from pullback.dialects import pd
from pullback.frontend import core, lr, unique_name
from pullback.frontend.framework import (
    Parameter,
    Program,
    Variable,
    default_startup_program,
    program_guard,
)
from pullback.frontend.initializer import Constant
from pullback.frontend.layers import add_parameter
from pullback.frontend.param_attr import ParamAttr

ParamsGrads = list[tuple[Parameter, Variable]]


def _unsupported(cls: str, **options: Any) -> None:
    given = [k for k, v in options.items() if v not in (None, False)]
    if given:
        raise NotImplementedError(
            f"{cls}: {', '.join(given)} {'is' if len(given) == 1 else 'are'} not supported "
            "by pullback yet"
        )


class Optimizer:
    """Base class: argument checks, `minimize`, and state creation."""

    op_type = ""

    def __init__(
        self,
        learning_rate: float,
        parameters: Sequence[Any] | None = None,
        name: str | None = None,
    ) -> None:
        if isinstance(learning_rate, bool) or not isinstance(learning_rate, (int, float)):
            raise TypeError(
                f"{type(self).__name__}: learning_rate must be a float (learning-rate "
                f"schedulers are not supported), got {type(learning_rate).__name__}"
            )
        if learning_rate < 0:
            raise ValueError(f"{type(self).__name__}: learning_rate must be >= 0, got {learning_rate}")
        self._learning_rate = float(learning_rate)
        self._parameter_list = list(parameters) if parameters is not None else None
        self._name = name
        self._accumulators: dict[tuple[str, str], Parameter] = {}
        self._eager_state: dict[int, list[np.ndarray]] = {}

    # -- Paddle's API ----------------------------------------------------------------

    def get_lr(self) -> float:
        """The base learning rate."""
        return self._learning_rate

    def set_lr(self, value: float) -> None:
        """Change the learning rate of update ops appended from now on."""
        self._learning_rate = float(value)

    def backward(
        self,
        loss: Variable,
        startup_program: Program | None = None,
        parameters: Sequence[Any] | None = None,
        no_grad_set: Iterable[Any] | None = None,
        callbacks: Sequence[Any] | None = None,
    ) -> ParamsGrads:
        """Append the backward part of `loss` (see `append_backward`)."""
        from pullback.frontend.backward import append_backward

        params = parameters if parameters is not None else self._parameter_list
        return append_backward(loss, params, no_grad_set, callbacks)

    def apply_gradients(
        self, params_grads: ParamsGrads, startup_program: Program | None = None
    ) -> list[Any]:
        """Append one update op per `(param, grad)`; returns the ops."""
        ops = []
        for param, grad in params_grads:
            if grad is None:
                continue
            program = param.block.program
            startup = startup_program or default_startup_program()
            with program_guard(program, startup):
                ops.append(self._append_update(param, grad))
        return ops

    def minimize(
        self,
        loss: Any,
        startup_program: Program | None = None,
        parameters: Sequence[Any] | None = None,
        no_grad_set: Iterable[Any] | None = None,
    ) -> tuple[list[Any], ParamsGrads]:
        """Append backward and update ops minimizing `loss`; returns
        `(optimize_ops, params_grads)`.  In eager mode (as in Paddle's dygraph) the
        gradients must already be there (`loss.backward()`): it is `step()`, and
        returns `([], [(param, grad), ...])`."""
        if core.in_dynamic_mode():
            from pullback.frontend.eager import Tensor

            if not isinstance(loss, Tensor):
                raise TypeError(
                    f"{type(self).__name__}.minimize: loss must be a Tensor in eager mode, "
                    f"got {type(loss).__name__}"
                )
            params = self._eager_params("minimize", parameters)
            pairs = [(p, p.grad) for p in params if p.grad is not None and not p.stop_gradient]
            self._step(params)
            return [], pairs
        if not isinstance(loss, Variable):
            raise TypeError(
                f"{type(self).__name__}.minimize: loss must be a Variable, got "
                f"{type(loss).__name__}"
            )
        params_grads = self.backward(loss, startup_program, parameters, no_grad_set)
        ops = self.apply_gradients(params_grads, startup_program)
        return ops, params_grads

    def step(self) -> None:
        """Eager mode: update every trainable parameter that has a gradient, in place
        (the same Tensor objects get the new values), by Paddle's formula.  Not
        recorded for autograd."""
        self._step(self._eager_params("step"))

    def clear_grad(self, set_to_zero: bool = True) -> None:
        """Eager mode: reset the parameters' gradients (to zeros, or to None)."""
        for p in self._eager_params("clear_grad"):
            p.clear_gradient(set_to_zero)

    clear_gradients = clear_grad

    # -- eager updates -------------------------------------------------------------------

    def _eager_params(self, api: str, parameters: Sequence[Any] | None = None) -> list[Any]:
        """The eager parameters this optimizer updates (checked)."""
        from pullback.frontend.eager import Tensor

        cls = type(self).__name__
        if not core.in_dynamic_mode():
            raise RuntimeError(
                f"{cls}.{api}() is for eager mode; in static mode use minimize(loss)"
            )
        params = list(parameters) if parameters is not None else self._parameter_list
        if params is None:
            raise ValueError(
                f"{cls}.{api}(): in eager mode the optimizer needs its parameters: "
                f"{cls}(learning_rate, parameters=model.parameters())"
            )
        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise TypeError(
                    f"{cls}: parameters[{i}] must be an eager Tensor, got {type(p).__name__} "
                    "(parameter groups are not supported)"
                )
        return params

    def _step(self, params: list[Any]) -> None:
        from pullback.frontend.eager import template_for

        for p in params:
            if p.stop_gradient or p.grad is None:
                continue
            state = self._eager_state.get(id(p))
            if state is None:
                state = self._eager_state[id(p)] = self._init_state(p._data)
            arrays = [p._data, p.grad._data, *state]
            # One cached template per (op, props, shapes): the kernel of the op the
            # static optimizer appends, run on this parameter's arrays.
            outs = template_for(self._update_op(), arrays, self._update_props(p)).run(arrays)
            # The tensor gets a new array rather than an overwritten one: graphs
            # recorded before the step keep the values they saved (as set_value does).
            p._data = outs[0]
            state[:] = outs[1:]

    def _update_op(self) -> type[pd.PdOp]:
        raise NotImplementedError

    def _update_props(self, param: Any) -> dict[str, Any]:
        raise NotImplementedError

    def _init_state(self, param: np.ndarray) -> list[np.ndarray]:
        """The optimizer state of one parameter (the accumulators' initial values)."""
        return []

    # -- helpers for subclasses --------------------------------------------------------

    def _lr_for(self, param: Parameter) -> float:
        attr = getattr(param, "optimize_attr", None) or {}
        return self._learning_rate * float(attr.get("learning_rate", 1.0))

    def _add_accumulator(
        self, kind: str, param: Parameter, fill_value: float = 0.0, shape: Sequence[int] | None = None
    ) -> Parameter:
        """Non-trainable state `<param>_<kind>_<k>` of `param`'s dtype, filled with
        `fill_value` by the startup program."""
        key = (kind, param.name)
        if key not in self._accumulators:
            self._accumulators[key] = add_parameter(
                unique_name.generate(f"{param.name}_{kind}"),
                list(shape) if shape is not None else param.shape, param.dtype,
                ParamAttr(trainable=False), Constant(fill_value),
            )
        return self._accumulators[key]

    def _append_update(self, param: Parameter, grad: Variable) -> Any:
        raise NotImplementedError


def _append(op_cls: type[pd.PdOp], inputs: list[Variable], names: list[str], **props: Any) -> Any:
    """Append an update op whose results are named after the state they overwrite."""
    out = core.apply(op_cls, inputs, prefix=op_cls.name, out_names=names, **props)
    first = out[0] if isinstance(out, list) else out
    return first.value.owner


def _op_class(name: str) -> type[pd.PdOp]:
    cls = getattr(pd, name, None)
    if cls is None:
        raise NotImplementedError(f"the pd dialect has no {name} yet")
    return cls


class SGD(Optimizer):
    """Stochastic gradient descent: `param -= lr * grad` (`pd.sgd`)."""

    def __init__(
        self,
        learning_rate: float = 0.001,
        parameters: Sequence[Any] | None = None,
        weight_decay: Any = None,
        grad_clip: Any = None,
        name: str | None = None,
        parameter_list: Sequence[Any] | None = None,
        regularization: Any = None,
    ) -> None:
        _unsupported("SGD", weight_decay=weight_decay, grad_clip=grad_clip, regularization=regularization)
        super().__init__(learning_rate, parameters if parameters is not None else parameter_list, name)

    def _append_update(self, param: Parameter, grad: Variable) -> Any:
        return _append(pd.SgdOp, [param, grad], [param.name], learning_rate=self._lr_for(param))

    def _update_op(self) -> type[pd.PdOp]:
        return pd.SgdOp

    def _update_props(self, param: Any) -> dict[str, Any]:
        return {"learning_rate": self._lr_for(param)}


class Momentum(Optimizer):
    """Momentum SGD (`pd.momentum`): `v = mu * v + grad; param -= lr * v` (or Nesterov).
    State: `<param>_velocity_<k>` (zeros)."""

    def __init__(
        self,
        learning_rate: float = 0.001,
        momentum: float = 0.9,
        parameters: Sequence[Any] | None = None,
        use_nesterov: bool = False,
        weight_decay: Any = None,
        grad_clip: Any = None,
        multi_precision: bool = False,
        rescale_grad: float = 1.0,
        use_multi_tensor: bool = False,
        name: str | None = None,
        parameter_list: Sequence[Any] | None = None,
        regularization: Any = None,
    ) -> None:
        _unsupported("Momentum", weight_decay=weight_decay, grad_clip=grad_clip, regularization=regularization)
        if rescale_grad != 1.0:
            raise NotImplementedError("Momentum: rescale_grad is not supported by pullback yet")
        super().__init__(learning_rate, parameters if parameters is not None else parameter_list, name)
        self._momentum = float(momentum)
        self._use_nesterov = bool(use_nesterov)

    def _append_update(self, param: Parameter, grad: Variable) -> Any:
        velocity = self._add_accumulator("velocity", param)
        return _append(
            _op_class("MomentumOp"), [param, grad, velocity], [param.name, velocity.name],
            mu=self._momentum, use_nesterov=self._use_nesterov, learning_rate=self._lr_for(param),
        )

    def _update_op(self) -> type[pd.PdOp]:
        return _op_class("MomentumOp")

    def _update_props(self, param: Any) -> dict[str, Any]:
        return {"mu": self._momentum, "use_nesterov": self._use_nesterov,
                "learning_rate": self._lr_for(param)}

    def _init_state(self, param: np.ndarray) -> list[np.ndarray]:
        return [np.zeros_like(param)]  # velocity


class Adam(Optimizer):
    """Adam (`pd.adam`). State: `<param>_moment1_<k>`, `<param>_moment2_<k>` (zeros),
    `<param>_beta1_pow_acc_<k>`, `<param>_beta2_pow_acc_<k>` (`[1]`, starting at
    beta1 and beta2, as in Paddle)."""

    def __init__(
        self,
        learning_rate: float = 0.001,
        beta1: float = 0.9,
        beta2: float = 0.999,
        epsilon: float = 1e-8,
        parameters: Sequence[Any] | None = None,
        weight_decay: Any = None,
        grad_clip: Any = None,
        lazy_mode: bool = False,
        multi_precision: bool = False,
        use_multi_tensor: bool = False,
        name: str | None = None,
        parameter_list: Sequence[Any] | None = None,
        regularization: Any = None,
    ) -> None:
        _unsupported("Adam", weight_decay=weight_decay, grad_clip=grad_clip, regularization=regularization)
        for arg, v in (("beta1", beta1), ("beta2", beta2)):
            if not 0.0 <= v < 1.0:
                raise ValueError(f"Adam: {arg} must be in [0, 1), got {v}")
        if epsilon < 0:
            raise ValueError(f"Adam: epsilon must be >= 0, got {epsilon}")
        super().__init__(learning_rate, parameters if parameters is not None else parameter_list, name)
        self._beta1, self._beta2, self._epsilon = float(beta1), float(beta2), float(epsilon)

    def _append_update(self, param: Parameter, grad: Variable) -> Any:
        m1 = self._add_accumulator("moment1", param)
        m2 = self._add_accumulator("moment2", param)
        b1 = self._add_accumulator("beta1_pow_acc", param, self._beta1, [1])
        b2 = self._add_accumulator("beta2_pow_acc", param, self._beta2, [1])
        return _append(
            _op_class("AdamOp"), [param, grad, m1, m2, b1, b2],
            [param.name, m1.name, m2.name, b1.name, b2.name],
            beta1=self._beta1, beta2=self._beta2, epsilon=self._epsilon,
            learning_rate=self._lr_for(param),
        )

    def _update_op(self) -> type[pd.PdOp]:
        return _op_class("AdamOp")

    def _update_props(self, param: Any) -> dict[str, Any]:
        return {"beta1": self._beta1, "beta2": self._beta2, "epsilon": self._epsilon,
                "learning_rate": self._lr_for(param)}

    def _init_state(self, param: np.ndarray) -> list[np.ndarray]:
        # moment1, moment2 (zeros); beta1_pow, beta2_pow ([1], starting at beta1/beta2).
        return [np.zeros_like(param), np.zeros_like(param),
                np.full([1], self._beta1, param.dtype), np.full([1], self._beta2, param.dtype)]


# Paddle 1.x (fluid.optimizer) spellings.
SGDOptimizer = SGD
MomentumOptimizer = Momentum
AdamOptimizer = Adam

__all__ = [
    "SGD",
    "Adam",
    "AdamOptimizer",
    "Momentum",
    "MomentumOptimizer",
    "Optimizer",
    "SGDOptimizer",
]
