"""`paddle.fluid` and `paddle.base` (Paddle >= 2.6's name for it): the Paddle 1.x API
(`fluid.layers`, `fluid.backward`, `fluid.Executor`, `fluid.dygraph`, `fluid.core`,
...).  Paddle 1.x was always static: its feed constructors (`fluid.data`,
`fluid.layers.data`) switch pullback to static mode."""

from __future__ import annotations

from pullback.frontend import clip, initializer, optimizer, param_attr, regularizer, unique_name
from pullback.frontend.api import base_framework as framework
from pullback.frontend.api import core, dygraph, registry
from pullback.frontend.api import fluid_layers as layers
from pullback.frontend.api.device import is_compiled_with_cuda
from pullback.frontend.api.dygraph import disable_dygraph, enable_dygraph
from pullback.frontend.data_feeder import DataFeeder
from pullback.frontend.flags import get_flags, set_flags
from pullback.frontend.core import in_dynamic_mode as in_dygraph_mode
from pullback.frontend.api.base_framework import Parameter, Variable
from pullback.frontend.framework import (
    Program,
    default_main_program,
    default_startup_program,
    program_guard,
)
from pullback.frontend.layers import embedding
from pullback.frontend.layers import fluid_data as data
from pullback.frontend.param_attr import ParamAttr
from pullback.runtime import executor
from pullback.runtime.executor import Executor
from pullback.runtime.places import CPUPlace, CUDAPlace, cpu_places, cuda_places
from pullback.runtime.scope import Scope, global_scope, scope_guard

__path__: list[str] = []  # children (`fluid.layers`, ...) come from the alias finder



__getattr__, __dir__ = registry.lazy_attributes(
    __name__,
    {
        "backward": "pullback.frontend.backward",
        "gradients": "pullback.frontend.backward:gradients",
        "append_backward": "pullback.frontend.backward:append_backward",
    },
)

__all__ = [
    "CPUPlace",
    "CUDAPlace",
    "Executor",
    "ParamAttr",
    "Parameter",
    "Program",
    "Scope",
    "Variable",
    "backward",  # noqa: F822 - loaded on first use (module __getattr__)
    "cpu_places",
    "cuda_places",
    "data",
    "default_main_program",
    "default_startup_program",
    "embedding",
    "executor",
    "framework",
    "global_scope",
    "gradients",  # noqa: F822 - loaded on first use (module __getattr__)
    "in_dygraph_mode",
    "initializer",
    "layers",
    "optimizer",
    "param_attr",
    "program_guard",
    "scope_guard",
    "unique_name",
    "DataFeeder",
    "clip",
    "core",
    "disable_dygraph",
    "dygraph",
    "enable_dygraph",
    "get_flags",
    "is_compiled_with_cuda",
    "regularizer",
    "set_flags",
]
