"""`paddle.static`: programs, feeds, executor, scope, backward and `paddle.static.nn`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from pullback.frontend.api import registry
from pullback.frontend.api import static_nn as nn
from pullback.frontend.framework import (
    Parameter,
    Program,
    Variable,
    default_main_program,
    default_startup_program,
    program_guard,
)
from pullback.frontend.layers import create_global_var, create_parameter, data
from pullback.runtime.executor import CPUPlace, CUDAPlace, Executor, cpu_places, cuda_places
from pullback.runtime.scope import Scope, global_scope, scope_guard

__path__: list[str] = []  # children (`paddle.static.nn`) come from the alias finder



@contextlib.contextmanager
def name_scope(prefix: str | None = None) -> Iterator[None]:
    """Paddle's `name_scope`: groups ops for visualization; it does not change
    variable names, so in pullback it has no effect."""
    yield


__getattr__, __dir__ = registry.lazy_attributes(
    __name__,
    {
        "append_backward": "pullback.frontend.backward:append_backward",
        "gradients": "pullback.frontend.backward:gradients",
    },
)

__all__ = [
    "CPUPlace",
    "CUDAPlace",
    "Executor",
    "Parameter",
    "Program",
    "Scope",
    "Variable",
    "append_backward",
    "cpu_places",
    "create_global_var",
    "create_parameter",
    "cuda_places",
    "data",
    "default_main_program",
    "default_startup_program",
    "global_scope",
    "gradients",
    "name_scope",
    "nn",
    "program_guard",
    "scope_guard",
]
