"""`paddle.base.dygraph` / `fluid.dygraph`: Paddle's eager-mode helpers as 1.x and
Paddle's own tests spell them (`guard`, `to_variable`, `no_grad`, `grad`, ...)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from pullback.frontend import core, unique_name
from pullback.frontend.framework import Program, program_guard


@contextlib.contextmanager
def guard(place: Any = None) -> Iterator[None]:
    """Run the `with` block in eager mode with fresh default programs and names, then
    restore the previous mode (Paddle's `dygraph.guard`)."""
    was_dynamic = core.in_dynamic_mode()
    core.disable_static(place)
    try:
        with program_guard(Program(), Program()), unique_name.guard():
            yield
    finally:
        if not was_dynamic:
            core.enable_static()


def enabled() -> bool:
    """True in eager (dygraph) mode."""
    return core.in_dynamic_mode()


enable_dygraph = core.disable_static
"""Switch to eager mode: Paddle's `enable_dygraph` is `paddle.disable_static`."""

disable_dygraph = core.enable_static
"""Switch to static mode: Paddle's `disable_dygraph` is `paddle.enable_static`."""


def to_variable(value: Any, name: str | None = None, zero_copy: bool | None = None,
                dtype: Any = None) -> Any:
    """An eager Tensor holding `value` (a numpy array, a number, a list or a Tensor),
    with `stop_gradient=True`, as Paddle's `dygraph.to_variable`."""
    from pullback.frontend.eager import Tensor, to_tensor

    if isinstance(value, Tensor):
        return value
    t = to_tensor(value, dtype=dtype)
    if name is not None:
        t.name = name
    return t


def __getattr__(name: str) -> Any:
    # Eager-only names load the eager machinery on first use.
    if name in ("no_grad", "grad", "enable_grad", "set_grad_enabled"):
        from pullback.frontend import autograd

        return getattr(autograd, name)
    if name in ("Layer", "Linear", "Sequential", "LayerList"):
        from pullback.frontend import nn_layers

        return getattr(nn_layers, name)
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")


__all__ = [
    "disable_dygraph", "enable_dygraph", "enabled", "guard", "to_variable",
]
