"""`paddle.jit`: `to_static` traces eager functions and Layers into compiled `pd`
programs that take part in eager autograd; `save`/`load` write and read inference
models (`frontend/jit/`)."""

from __future__ import annotations

from pullback.frontend.jit.save_load import TranslatedLayer, load, save
from pullback.frontend.jit.static_function import (
    StaticFunction,
    enable_to_static,
    ignore_module,
    not_to_static,
    set_code_level,
    set_verbosity,
    to_static,
)

declarative = to_static
"""Paddle 2.0's name of `to_static`."""

__all__ = [
    "StaticFunction",
    "TranslatedLayer",
    "declarative",
    "enable_to_static",
    "ignore_module",
    "load",
    "not_to_static",
    "save",
    "set_code_level",
    "set_verbosity",
    "to_static",
]
