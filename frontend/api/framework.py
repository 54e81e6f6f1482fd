"""`paddle.framework`: mode switches, seeds and dtype defaults as Paddle's tests reach
for them (`paddle.framework.random._manual_program_seed`, `use_pir_api`, ...)."""

from __future__ import annotations

import sys
import types

from pullback.frontend.core import in_dynamic_mode
from pullback.frontend.framework import default_main_program, default_startup_program
from pullback.frontend.param_attr import ParamAttr

__path__: list[str] = []  # `paddle.framework.random` is registered below


def use_pir_api() -> bool:
    """False: pullback's static programs are `pd` IR, not Paddle's PIR."""
    return False


in_dygraph_mode = in_dynamic_mode
"""True in eager mode (Paddle's `in_dygraph_mode` is `in_dynamic_mode`)."""


def _manual_program_seed(seed: int) -> None:
    """Seed the default main and startup programs' random ops (Paddle's helper)."""
    default_main_program().random_seed = seed
    default_startup_program().random_seed = seed


random = sys.modules.get(f"{__name__}.random")
if random is None:
    random = types.ModuleType(f"{__name__}.random", "`paddle.framework.random`.")
    random._manual_program_seed = _manual_program_seed  # type: ignore[attr-defined]
    sys.modules[random.__name__] = random

__all__ = ["ParamAttr", "in_dygraph_mode", "in_dynamic_mode", "random", "use_pir_api"]
