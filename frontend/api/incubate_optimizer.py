"""`paddle.incubate.optimizer`: `RecomputeOptimizer` (activation checkpointing)."""

from __future__ import annotations

from pullback.frontend.recompute import RecomputeOptimizer

__all__ = ["RecomputeOptimizer"]
