"""`paddle.nn.functional`: the op families' `FUNCTIONAL` exports (`relu`, `softmax`,
`square_error_cost`, `cross_entropy`, ...)."""

from __future__ import annotations

from pullback.frontend.api import registry

globals().update(registry.functional())

__all__ = list(registry.functional())
