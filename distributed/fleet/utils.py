"""`paddle.distributed.fleet.utils`: the eager `recompute` (activation checkpointing
of a function; see `pullback.frontend.recompute`)."""

from __future__ import annotations

from pullback.frontend.recompute import recompute

__all__ = ["recompute"]

from pullback.namespaces import adopt_real  # noqa: E402 - names of Paddle's module it lacks

adopt_real(__name__)
