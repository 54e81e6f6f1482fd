"""The root `paddle` namespace: `paddle.enable_static()`, `paddle.mean`, `paddle.ParamAttr`...

Functions come from the op families' `PADDLE` export lists; eager-mode entry points
(`paddle.to_tensor`, `paddle.grad`, ...) are looked up in `pullback.frontend.eager`
and `pullback.frontend.autograd` on first use.  The sub-namespaces (`paddle.static`, `paddle.fluid`, ...) are
resolved by the package root (see `pullback.frontend.api.ALIASES`).
"""

from __future__ import annotations

from pullback.frontend.api import registry
from pullback.frontend.core import disable_static, enable_static, in_dynamic_mode
from pullback.frontend.framework import (
    Program,
    default_main_program,
    default_startup_program,
)
from pullback.frontend.flags import get_flags, set_flags
from pullback.frontend.layers import create_parameter
from pullback.frontend.param_attr import ParamAttr
from pullback.frontend.reader import batch
from pullback.frontend.api.device import get_device, is_compiled_with_cuda, set_device
from pullback.runtime.executor import CPUPlace, CUDAPlace

globals().update(registry.paddle())

from pullback.frontend.dtype import bool_ as bool  # noqa: A001, E402 - Paddle's dtype name
from pullback.frontend.dtype import float32, float64, int32, int64  # noqa: E402
"""Dtypes are spelled by their Paddle names (`dtype=paddle.float32`)."""


def seed(value: int) -> None:
    """Seed parameter initialization: sets the `random_seed` of the default main and
    startup programs (`paddle.seed`)."""
    if not isinstance(value, int) or isinstance(value, type(True)) or value < 0:
        raise ValueError(f"paddle.seed: expected a non-negative int, got {value!r}")
    default_main_program().random_seed = value
    default_startup_program().random_seed = value
    # Eager parameters draw their seeds from a sequence that restarts here too.
    from pullback.frontend.nn_layers import EAGER_SEEDS

    EAGER_SEEDS.reset()


def get_default_dtype() -> str:
    """The default floating-point dtype (always float32 in pullback)."""
    return "float32"


__getattr__, __dir__ = registry.lazy_attributes(
    __name__,
    {
        "to_tensor": "pullback.frontend.eager:to_tensor",
        "Tensor": "pullback.frontend.eager:Tensor",
        "is_grad_enabled": "pullback.frontend.eager:is_grad_enabled",
        "grad": "pullback.frontend.autograd:grad",
        "no_grad": "pullback.frontend.autograd:no_grad",
        "enable_grad": "pullback.frontend.autograd:enable_grad",
        "set_grad_enabled": "pullback.frontend.autograd:set_grad_enabled",
    },
)

__all__ = [
    "get_device",
    "is_compiled_with_cuda",
    "set_device",
    "CPUPlace",
    "CUDAPlace",
    "ParamAttr",
    "Program",
    "batch",
    "create_parameter",
    "get_flags",
    "set_flags",
    "disable_static",
    "enable_static",
    "get_default_dtype",
    "in_dynamic_mode",
    "seed",
    *registry.paddle(),
]
