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
from pullback.runtime.executor import (
    CPUPlace,
    CUDAPlace,
    Executor,
    cpu_places,
    cuda_places,
)
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
        "accuracy": "pullback.frontend.metric:static_accuracy",
        "save": "pullback.frontend.serialization:static_save",
        "load": "pullback.frontend.serialization:static_load",
        "load_program_state": "pullback.frontend.serialization:load_program_state",
        "set_program_state": "pullback.frontend.serialization:set_program_state",
        "save_inference_model": "pullback.frontend.serialization:save_inference_model",
        "load_inference_model": "pullback.frontend.serialization:load_inference_model",
        "normalize_program": "pullback.frontend.serialization:normalize_program",
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
    "accuracy",
    "append_backward",  # noqa: F822 - loaded on first use (module __getattr__)
    "cpu_places",
    "create_global_var",
    "create_parameter",
    "cuda_places",
    "data",
    "default_main_program",
    "default_startup_program",
    "global_scope",
    "gradients",  # noqa: F822 - loaded on first use (module __getattr__)
    "load",
    "load_inference_model",
    "load_program_state",
    "name_scope",
    "nn",
    "normalize_program",
    "program_guard",
    "save",
    "save_inference_model",
    "scope_guard",
    "set_program_state",
]
