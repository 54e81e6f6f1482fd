"""`paddle.base.framework` (`paddle.fluid.framework`): the program classes, plus the
mode helpers Paddle's own tests import from it (`in_dygraph_mode`,
`_dygraph_tracer`, `dygraph_not_support`, ...)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pullback.frontend.api.wrapped_decorator import wrap_decorator
from pullback.frontend.core import in_dynamic_mode
from pullback.frontend.eager import _set_grad_enabled, is_grad_enabled
from pullback.frontend import framework as _framework
from pullback.frontend.framework import (
    Block,
    Program,
    default_main_program,
    default_startup_program,
    program_guard,
    switch_main_program,
    switch_startup_program,
)


in_dygraph_mode = in_dynamic_mode
"""True in eager (dygraph) mode (Paddle's `in_dygraph_mode` is `in_dynamic_mode`)."""


class Tracer:
    """The eager tracer's switches as Paddle exposes them: `_has_grad` is whether
    eager ops are recorded for autograd (what `paddle.no_grad` turns off),
    `_train_mode` a flag Paddle's tests set and read back."""

    def __init__(self) -> None:
        self._train_mode = True

    @property
    def _has_grad(self) -> bool:
        return is_grad_enabled()

    @_has_grad.setter
    def _has_grad(self, value: bool) -> None:
        _set_grad_enabled(bool(value))


_TRACER = Tracer()


class VariableMetaClass(type):
    """Paddle's rule for `isinstance(x, Variable)`: in dygraph mode, whether `x` is an
    eager Tensor; in static mode, whether it is a static Variable.

    Paddle 3.3.1's static mode builds PIR programs whose values are not Variables
    (`isinstance(paddle.static.data(...), Variable)` is False there); pullback's
    static programs hold Variables, as Paddle's programs did before PIR, so a static
    Variable is an instance in static mode."""

    def __instancecheck__(cls, instance: Any) -> bool:
        if in_dynamic_mode():
            from pullback.frontend.eager import Tensor

            return isinstance(instance, Tensor)
        return isinstance(instance, _framework.Variable)


class Variable(_framework.Variable, metaclass=VariableMetaClass):
    """`paddle.static.Variable` / `paddle.base.framework.Variable` as user code sees
    it: a static program's variable, and the class of eager Tensors in dygraph mode
    (`isinstance(paddle.to_tensor(1.0), paddle.base.framework.Variable)` is True, as
    in Paddle).  pullback's own code tests against `pullback.frontend.framework.Variable`."""


class ParameterMetaClass(VariableMetaClass):
    """Paddle's rule for `isinstance(x, Parameter)`: an eager parameter in dygraph
    mode, a static Parameter in static mode."""

    def __instancecheck__(cls, instance: Any) -> bool:
        if in_dynamic_mode():
            from pullback.frontend.parameter import EagerParamBase

            return isinstance(instance, EagerParamBase)
        return isinstance(instance, _framework.Parameter)


class Parameter(_framework.Parameter, Variable, metaclass=ParameterMetaClass):
    """`paddle.static.Parameter` / `paddle.base.framework.Parameter` as user code sees
    it (see `Variable`)."""


def _dygraph_tracer() -> Tracer | None:
    """The eager tracer in dygraph mode, None in static mode (as Paddle)."""
    return _TRACER if in_dynamic_mode() else None


def _mode_guard(dynamic: bool, what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def guard(func: Callable[..., Any]) -> Callable[..., Any]:
        def checked(*args: Any, **kwargs: Any) -> Any:
            assert in_dynamic_mode() == dynamic, f"We don't support {func.__name__} in {what} mode"
            return func(*args, **kwargs)

        return checked

    return guard


dygraph_not_support = wrap_decorator(_mode_guard(False, "dynamic graph"))
"""Decorator: the function asserts it runs in static mode."""

dygraph_only = wrap_decorator(_mode_guard(True, "static graph"))
"""Decorator: the function asserts it runs in dygraph mode."""

static_only = dygraph_not_support

__all__ = [
    "Block",
    "Parameter",
    "Program",
    "Tracer",
    "Variable",
    "default_main_program",
    "default_startup_program",
    "dygraph_not_support",
    "dygraph_only",
    "in_dygraph_mode",
    "program_guard",
    "static_only",
    "switch_main_program",
    "switch_startup_program",
]
