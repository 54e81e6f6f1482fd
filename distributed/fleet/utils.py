"""`paddle.distributed.fleet.utils`: the eager `recompute` (activation checkpointing
of a function; see `pullback.frontend.recompute`)."""

from __future__ import annotations

from pullback.frontend.recompute import recompute

__all__ = ["recompute"]
