"""`paddle.nn`: `paddle.nn.functional` and `paddle.nn.initializer`."""

from __future__ import annotations

from pullback.frontend import initializer
from pullback.frontend.api import nn_functional as functional

__path__: list[str] = []  # children (`functional`, `initializer`) come from the alias finder

__all__ = ["functional", "initializer"]
