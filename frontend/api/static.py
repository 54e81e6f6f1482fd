"""`paddle.static`: programs, feeds, executor, scope, backward and `paddle.static.nn`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from pullback.frontend.api import registry
from pullback.frontend.api import static_nn as nn
from pullback.frontend.api.base_framework import Parameter, Variable
from pullback.frontend.framework import (
    Program,
    default_main_program,
    default_startup_program,
    program_guard,
)
from pullback.frontend.host_calls import Print, py_func
from pullback.frontend.input_spec import InputSpec
from pullback.frontend.layers import create_global_var, create_parameter, data
from pullback.runtime.executor import Executor
from pullback.runtime.places import CPUPlace, CUDAPlace, cpu_places, cuda_places
from pullback.runtime.scope import Scope, global_scope, scope_guard

__path__: list[str] = []  # children (`paddle.static.nn`) come from the alias finder



@contextlib.contextmanager
def name_scope(prefix: str | None = None) -> Iterator[None]:
    """Paddle's `name_scope`: groups ops for visualization; it does not change
    variable names, so in pullback it has no effect."""
    yield


@contextlib.contextmanager
def device_guard(device: str | None = None) -> Iterator[None]:
    """Paddle's `device_guard`: pins ops to a device inside the block; pullback runs a
    whole program on the executor's place, so it has no effect."""
    if device is not None and not isinstance(device, str):
        raise TypeError(f"device_guard: device must be a str or None, got {type(device).__name__}")
    yield


class BuildStrategy:
    """Paddle's graph-build options for `CompiledProgram`: accepted and recorded;
    pullback's compiler has its own fixed pipeline."""

    def __init__(self) -> None:
        self.fuse_all_reduce_ops = False
        self.enable_inplace = False
        self.memory_optimize = False
        self.fuse_elewise_add_act_ops = False
        self.enable_addto = False


class ExecutionStrategy:
    """Paddle's execution options for `CompiledProgram`: accepted and recorded."""

    def __init__(self) -> None:
        self.num_threads = 1
        self.num_iteration_per_drop_scope = 100


class CompiledProgram:
    """`paddle.static.CompiledProgram(program)`: `Executor.run` runs the wrapped
    program (pullback compiles every program it runs)."""

    def __init__(self, program_or_graph: Program, build_strategy: BuildStrategy | None = None) -> None:
        if not isinstance(program_or_graph, Program):
            raise TypeError(
                f"CompiledProgram: expected a Program, got {type(program_or_graph).__name__}"
            )
        self._program = program_or_graph
        self._build_strategy = build_strategy or BuildStrategy()

    def with_data_parallel(self, loss_name: str | None = None, build_strategy: Any = None,
                           exec_strategy: Any = None, places: Any = None,
                           share_vars_from: Any = None) -> CompiledProgram:
        """Data parallelism over one place is the program itself."""
        return self

    def __getattr__(self, name: str) -> Any:
        return getattr(self._program, name)


__getattr__, __dir__ = registry.lazy_attributes(
    __name__,
    {
        "amp": "pullback.frontend.static_amp",
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
    "BuildStrategy",
    "CPUPlace",
    "CUDAPlace",
    "CompiledProgram",
    "ExecutionStrategy",
    "Executor",
    "InputSpec",
    "Parameter",
    "Print",
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
    "device_guard",
    "global_scope",
    "gradients",  # noqa: F822 - loaded on first use (module __getattr__)
    "load",
    "load_inference_model",
    "load_program_state",
    "name_scope",
    "nn",
    "normalize_program",
    "program_guard",
    "py_func",
    "save",
    "save_inference_model",
    "scope_guard",
    "set_program_state",
]
