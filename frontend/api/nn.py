"""`paddle.nn`: `paddle.nn.functional` and `paddle.nn.initializer` (layers classes of
eager mode are looked up in `pullback.frontend.eager` on first use)."""

from __future__ import annotations

from pullback.frontend import initializer
from pullback.frontend.api import nn_functional as functional
from pullback.frontend.api import registry

__path__: list[str] = []  # children come from the alias finder

__getattr__, __dir__ = registry.lazy_attributes(
    __name__,
    {name: f"pullback.frontend.eager:{name}" for name in ("Layer", "Linear", "ReLU", "Sequential")},
)

__all__ = ["functional", "initializer"]
