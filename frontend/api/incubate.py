"""`paddle.incubate`: so far only `paddle.incubate.optimizer.RecomputeOptimizer`."""

from __future__ import annotations

from pullback.frontend.api import incubate_optimizer as optimizer

__path__: list[str] = []  # `paddle.incubate.optimizer` comes from the alias finder

__all__ = ["optimizer"]
