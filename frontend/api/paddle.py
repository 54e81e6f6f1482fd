"""The root `paddle` namespace: `paddle.enable_static()`, `paddle.mean`, `paddle.ParamAttr`...

Functions come from the op families' `PADDLE` export lists; eager-mode entry points
(`paddle.to_tensor`, `paddle.grad`, ...) are looked up in `pullback.frontend.eager`
and `pullback.frontend.autograd` on first use.  The sub-namespaces (`paddle.static`, `paddle.fluid`, ...) are
resolved by the package root (see `pullback.frontend.api.ALIASES`).
"""

from __future__ import annotations

from pullback.frontend.api import registry
from pullback.frontend.api.device import get_device, is_compiled_with_cuda, set_device
from pullback.frontend.core import disable_static, enable_static, in_dynamic_mode
from pullback.frontend.framework import Program
from pullback.frontend.flags import get_flags, set_flags
from pullback.frontend.layers import create_parameter
from pullback.frontend.param_attr import ParamAttr
from pullback.frontend.reader import batch
from pullback.runtime.places import CPUPlace, CUDAPlace

globals().update(registry.paddle())

from pullback.dialects.pd.dtypes import DTYPE_TABLE, DType  # noqa: E402

globals().update({d.name: d for d in DTYPE_TABLE})
"""Dtypes are spelled by their Paddle names (`dtype=paddle.float32`; `paddle.bool`): one
object per row of the dtype table, those pullback does not compute in yet included
(`paddle.float16`: using it says so)."""
dtype = DType
"""The class of the dtype objects (`isinstance(x.dtype, paddle.dtype)`)."""
from pullback.frontend.random import get_rng_state, seed, set_rng_state  # noqa: E402
"""`paddle.seed` reseeds the global generator every unseeded random op draws from."""


from pullback.dialects.pd.dtypes import get_default_dtype, set_default_dtype  # noqa: E402


__getattr__, __dir__ = registry.lazy_attributes(
    __name__,
    {
        "is_autocast_enabled": "pullback.frontend.amp:is_autocast_enabled",
        "get_autocast_dtype": "pullback.frontend.amp:get_autocast_dtype",
        "get_autocast_gpu_dtype": "pullback.frontend.amp:get_autocast_gpu_dtype",
        "to_tensor": "pullback.frontend.ops.creation:to_tensor",
        "Tensor": "pullback.frontend.eager:Tensor",
        "is_grad_enabled": "pullback.frontend.eager:is_grad_enabled",
        "grad": "pullback.frontend.autograd:grad",
        "no_grad": "pullback.frontend.autograd:no_grad",
        "enable_grad": "pullback.frontend.autograd:enable_grad",
        "set_grad_enabled": "pullback.frontend.autograd:set_grad_enabled",
        "save": "pullback.frontend.serialization:save",
        "load": "pullback.frontend.serialization:load",
        "summary": "pullback.frontend.summary:summary",
        "flops": "pullback.frontend.flops:flops",
        "core": "pullback.frontend.api.core",  # (Paddle: `paddle.core` is `paddle.base.core`)
        "Model": "pullback.frontend.hapi.model:Model",
        "DataParallel": "pullback.distributed.parallel:DataParallel",
    },
)

__all__ = [
    "get_device",
    "is_compiled_with_cuda",
    "set_device",
    "CPUPlace",
    "CUDAPlace",
    "ParamAttr",
    "batch",
    "create_parameter",
    "get_flags",
    "set_flags",
    "Program",
    "disable_static",
    "enable_static",
    "get_default_dtype",
    "set_default_dtype",
    "in_dynamic_mode",
    "get_rng_state",
    "seed",
    "set_rng_state",
    *registry.paddle(),
]
