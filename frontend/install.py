"""The one place where the frontend's pieces are wired together.

The op families (`frontend/ops/<family>.py`) build on `core.apply`, static
`Variable`s (`framework`) and eager `Tensor`s (`eager`); none of those modules imports
the families, and `core` does not import `eager`, so there is no import cycle.  What
connects them at run time is done here, once, when the `pullback.frontend` package is
imported (its `__init__` calls `install()`):

* eager mode's implementation of `core.apply` (`eager.eager_apply`);
* on `Variable` and `Tensor`: each family's Python operators (`install_operators`)
  and its `TENSOR_METHODS` (`x.mean()`, `x[0]`, ...), never replacing what the class
  defines itself;
* `Tensor.backward` (`autograd.tensor_backward`) and the gradient hooks
  (`hooks.TENSOR_METHODS`: `register_hook`, `retain_grads`, ...);
* `Block.create_parameter` (`layers.block_create_parameter`);
* the executor's programs (`runtime/executor.py`, a layer below, which never imports
  the frontend): `Program`, `Variable` and `default_main_program`
  (`executor.register_frontend`).
"""

from __future__ import annotations

import functools

from pullback.frontend import autograd, core, eager, hooks, layers
from pullback.frontend.api import registry
from pullback.frontend.framework import Block, Program, Variable, default_main_program
from pullback.runtime import executor


def install_methods(cls: type) -> list[str]:
    """Attach every family's operators and `TENSOR_METHODS` to `cls` (Variable or
    Tensor); returns what was attached, for debugging."""
    added: list[str] = []
    for mod in registry.families():
        install_operators = getattr(mod, "install_operators", None)
        if callable(install_operators):
            install_operators(cls)
            added.append(f"{mod.__name__}.install_operators")
    registry.install_tensor_methods(cls)
    added.extend(registry.tensor_methods())
    return added


@functools.cache
def install() -> None:
    """Wire the frontend together (idempotent; see the module docstring)."""
    core.set_eager_apply(eager.eager_apply)
    install_methods(Variable)
    install_methods(eager.Tensor)
    eager.Tensor.backward = autograd.tensor_backward  # type: ignore[attr-defined]
    for name, fn in hooks.TENSOR_METHODS.items():
        setattr(eager.Tensor, name, fn)
    Block.create_parameter = layers.block_create_parameter  # type: ignore[attr-defined]
    executor.register_frontend(Program, Variable, default_main_program)
