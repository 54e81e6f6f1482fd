"""Weight-decay regularizers (`paddle.regularizer.L1Decay` / `L2Decay`,
`fluid.regularizer.*`) and `append_regularization_ops`.

A regularizer turns a parameter into the term its gradient gains:

* `L2Decay(coeff)`: `coeff * param` (a `pd.scale`), the gradient of `coeff/2 * ||w||^2`;
* `L1Decay(coeff)`: `coeff * sign(param)` (`pd.sign`, then `pd.scale`).

The term is built with the ordinary API functions, so in static mode it is visible
`pd` IR placed between the backward region and the updates, and in eager mode it is
computed at once (not recorded).  A parameter's own regularizer
(`ParamAttr(regularizer=...)`) takes precedence over the optimizer's
(`weight_decay=`); in static mode the regularized gradient keeps the gradient's name
(`fc_0.w_0@GRAD`), as Paddle's in-place `sum` does.
"""

from __future__ import annotations

from typing import Any

from pullback.dialects import pd
from pullback.frontend import core
from pullback.frontend.framework import program_guard
from pullback.frontend.ops.elementwise import scale, sign


class WeightDecayRegularizer:
    """Base class of regularizers: `regularizer(param, grad, block)` is the term
    added to `grad`."""

    _coeff: float = 0.0

    def __init__(self, coeff: float = 0.0) -> None:
        if isinstance(coeff, bool) or not isinstance(coeff, (int, float)):
            raise TypeError(
                f"{type(self).__name__}: coeff must be a float, got {type(coeff).__name__}"
            )
        self._coeff = float(coeff)

    @property
    def _regularization_coeff(self) -> float:
        """The coefficient under Paddle 1.x's attribute name."""
        return self._coeff

    def __call__(self, param: Any, grad: Any, block: Any = None) -> Any:
        raise NotImplementedError(f"{type(self).__name__} does not define __call__")


class L2Decay(WeightDecayRegularizer):
    """L2 weight decay: the gradient gains `coeff * param`."""

    def __call__(self, param: Any, grad: Any, block: Any = None) -> Any:
        """The decay term `coeff * param`."""
        return scale(param, self._coeff)

    def __str__(self) -> str:
        return f"L2Decay, coeff={self._coeff:f}"

    __repr__ = __str__


class L1Decay(WeightDecayRegularizer):
    """L1 weight decay: the gradient gains `coeff * sign(param)`."""

    def __call__(self, param: Any, grad: Any, block: Any = None) -> Any:
        """The decay term `coeff * sign(param)`."""
        return scale(sign(param), self._coeff)

    def __str__(self) -> str:
        return f"L1Decay, coeff={self._coeff:f}"

    __repr__ = __str__


class L2DecayRegularizer(L2Decay):
    """`fluid.regularizer.L2DecayRegularizer(regularization_coeff)`."""

    def __init__(self, regularization_coeff: float = 0.0) -> None:
        super().__init__(regularization_coeff)


class L1DecayRegularizer(L1Decay):
    """`fluid.regularizer.L1DecayRegularizer(regularization_coeff)`."""

    def __init__(self, regularization_coeff: float = 0.0) -> None:
        super().__init__(regularization_coeff)


def as_regularizer(weight_decay: Any, api: str) -> WeightDecayRegularizer | None:
    """An optimizer's `weight_decay` argument as a regularizer: a float is an
    `L2Decay` of that coefficient, None is none."""
    if weight_decay is None:
        return None
    if isinstance(weight_decay, WeightDecayRegularizer):
        return weight_decay
    if isinstance(weight_decay, (int, float)) and not isinstance(weight_decay, bool):
        return L2Decay(float(weight_decay))
    raise TypeError(
        f"{api}: weight_decay must be a float or a regularizer (paddle.regularizer."
        f"L1Decay / L2Decay), got {type(weight_decay).__name__}"
    )


def regularized_grad(param: Any, grad: Any, regularization: WeightDecayRegularizer | None) -> Any:
    """`grad` plus the decay term of `param`'s own regularizer, else of
    `regularization`; `grad` itself when neither applies."""
    reg = getattr(param, "regularizer", None) or regularization
    if grad is None or reg is None:
        return grad
    if not callable(reg):
        raise TypeError(
            f"the regularizer of parameter '{param.name}' must be a paddle.regularizer "
            f"L1Decay or L2Decay, got {type(reg).__name__}"
        )
    if core.in_dynamic_mode():
        return core.apply(pd.SumOp, [grad, reg(param, grad)], prefix="sum")
    # As Paddle, the decay ops go to the gradient's program (not necessarily the
    # default one), the `sum` written to the gradient's own name.
    with program_guard(grad.block.program):
        term = reg(param, grad)
        return core.apply(pd.SumOp, [grad, term], prefix="sum", out_names=[grad.name])


def append_regularization_ops(
    parameters_and_grads: list[tuple[Any, Any]], regularization: WeightDecayRegularizer | None = None
) -> list[tuple[Any, Any]]:
    """Add each parameter's decay term to its gradient (see the module docstring);
    returns the `(param, grad)` pairs with the regularized gradients."""
    return [(p, regularized_grad(p, g, regularization)) for p, g in parameters_and_grads]


__all__ = [
    "L1Decay",
    "L1DecayRegularizer",
    "L2Decay",
    "L2DecayRegularizer",
    "WeightDecayRegularizer",
    "append_regularization_ops",
    "as_regularizer",
    "regularized_grad",
]
