"""`paddle.utils`: `paddle.utils.unique_name` (`generate`, `guard`, `switch`)."""

from __future__ import annotations

from pullback.frontend import unique_name

__path__: list[str] = []  # `paddle.utils.unique_name` comes from the alias finder

__all__ = ["unique_name"]
