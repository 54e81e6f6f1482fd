"""`paddle.base.wrapped_decorator`: turning a function transformer into a decorator
that keeps the decorated function's name, docstring and signature (Paddle's tests
build their `dygraph_guard` / `prog_scope` helpers with it)."""

from __future__ import annotations

import contextlib
import functools
import inspect
from collections.abc import Callable, Iterator
from typing import Any


def wrap_decorator(decorator_func: Callable[[Callable[..., Any]], Callable[..., Any]]) -> Callable[..., Any]:
    """A decorator that applies `decorator_func` to the function it decorates while
    keeping that function's name, docstring and signature (`functools.wraps`)."""

    @functools.wraps(decorator_func)
    def decorator(func: Callable[..., Any]) -> Callable[..., Any]:
        wrapped = decorator_func(func)

        @functools.wraps(func)
        def call(*args: Any, **kwargs: Any) -> Any:
            return wrapped(*args, **kwargs)

        try:  # `inspect.getfullargspec` reads this, it does not follow __wrapped__
            call.__signature__ = inspect.signature(func)  # type: ignore[attr-defined]
        except (TypeError, ValueError):
            pass
        return call

    return decorator


def signature_safe_contextmanager(func: Callable[..., Iterator[Any]]) -> Callable[..., Any]:
    """`contextlib.contextmanager` (its result keeps `func`'s signature already)."""
    return contextlib.contextmanager(func)


__all__ = ["signature_safe_contextmanager", "wrap_decorator"]
