"""`paddle.tensor`: every tensor function of the `paddle` namespace, and Paddle's
submodules grouping them (`paddle.tensor.math`, `.random`, `.creation`,
`.manipulation`, `.linalg`, `.logic`, `.search`, `.stat`).

The functions are the op families' (`frontend/ops/*`); the submodules are made here
from the table `SUBMODULES` and registered as `pullback.frontend.api.tensor.<part>`
(what the package root's `paddle.tensor.<part>` aliases load), so each name has one
home, its family.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from pullback.frontend.api import registry
from pullback.frontend.layers import create_parameter
from pullback.frontend.ops import random

__path__: list[str] = []  # children (`paddle.tensor.math`, ...) are registered below

_EAGER = {"to_tensor": "pullback.frontend.eager:to_tensor"}

SUBMODULES: dict[str, list[str]] = {
    "math": [
        "abs", "add", "add_n", "clip", "divide", "erf", "exp", "log", "max", "maximum",
        "minimum", "multiply", "pow", "scale", "sigmoid", "sign", "sqrt", "square",
        "subtract", "sum", "tanh",
    ],
    "random": ["gaussian", "normal", "rand", "randn", "standard_normal", "uniform"],
    "creation": ["full", "full_like", "ones", "ones_like", "zeros", "zeros_like", "to_tensor",
                 "create_parameter"],
    "manipulation": ["broadcast_to", "cast", "concat", "expand", "expand_as", "flatten",
                     "reshape", "slice", "split", "squeeze", "transpose", "unsqueeze"],
    "linalg": ["matmul"],
    "logic": ["equal", "greater_equal", "greater_than", "less_equal", "less_than", "not_equal"],
    "search": ["where"],
    "stat": ["mean"],
}
"""Paddle's submodule of each function (those pullback has)."""


def _lookup(name: str) -> Any:
    if name in _EAGER:
        import importlib

        mod, _, attr = _EAGER[name].partition(":")
        return getattr(importlib.import_module(mod), attr)
    if name == "create_parameter":
        return create_parameter
    if name == "gaussian":
        return random.gaussian
    return registry.paddle()[name]


def _make_submodules() -> dict[str, types.ModuleType]:
    out = {}
    for part, names in SUBMODULES.items():
        full = f"{__name__}.{part}"
        mod = sys.modules.get(full)
        if mod is None:
            mod = types.ModuleType(full, f"`paddle.tensor.{part}` (see {__name__}).")
            for n in names:
                setattr(mod, n, _lookup(n))
            mod.__all__ = list(names)  # type: ignore[attr-defined]
            sys.modules[full] = mod
        out[part] = mod
    return out


globals().update(registry.paddle())
globals().update(_make_submodules())
gaussian = random.gaussian


def __getattr__(name: str) -> Any:
    if name in _EAGER:
        return _lookup(name)
    raise AttributeError(f"module '{__name__}' has no attribute '{name}'")


__all__ = [*SUBMODULES, *registry.paddle(), "create_parameter", "gaussian"]  # noqa: PLE0604
