"""Grad mode: `paddle.no_grad`, `paddle.enable_grad`, `paddle.set_grad_enabled`.

Whether eager ops are recorded is a flag of `frontend/eager.py`
(`_set_grad_enabled`, `is_grad_enabled`); these are the context managers and
decorators Paddle users set it with.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from pullback.frontend.eager import _set_grad_enabled

_F = TypeVar("_F", bound=Callable[..., Any])


class _GradModeGuard:
    """A context manager and decorator that sets eager recording on or off."""

    _mode: bool = False

    def __enter__(self) -> None:
        self._prev = _set_grad_enabled(self._mode)

    def __exit__(self, *exc: object) -> None:
        _set_grad_enabled(self._prev)

    def __call__(self, func: _F) -> _F:
        mode = self._mode
        if inspect.isgeneratorfunction(func):

            @functools.wraps(func)
            def gen_wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
                gen = func(*args, **kwargs)
                # Each resumption runs under the mode, the caller's code between
                # them does not.
                value = None
                while True:
                    prev = _set_grad_enabled(mode)
                    try:
                        item = gen.send(value)
                    except StopIteration as stop:
                        return stop.value
                    finally:
                        _set_grad_enabled(prev)
                    value = yield item

            return _same_signature(gen_wrapper, func)  # type: ignore[return-value]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            prev = _set_grad_enabled(mode)
            try:
                return func(*args, **kwargs)
            finally:
                _set_grad_enabled(prev)

        return _same_signature(wrapper, func)  # type: ignore[return-value]


def _same_signature(wrapper: Callable[..., Any], func: Callable[..., Any]) -> Callable[..., Any]:
    """`wrapper` reporting `func`'s signature to `inspect` (getfullargspec included,
    which does not follow `__wrapped__`), as Paddle's decorators do."""
    try:
        wrapper.__signature__ = inspect.signature(func)  # type: ignore[attr-defined]
    except (TypeError, ValueError):  # builtins without a signature
        pass
    return wrapper


class no_grad(_GradModeGuard):
    """`paddle.no_grad()`: inside it (a `with` block or a decorated function) eager
    ops are not recorded and their results need no gradient.  `@paddle.no_grad` and
    `@paddle.no_grad()` both work."""

    _mode = False

    def __new__(cls, func: Callable[..., Any] | None = None) -> Any:
        self = super().__new__(cls)
        if func is not None and callable(func):
            return self(func)
        return self

    def __init__(self, func: Callable[..., Any] | None = None) -> None:
        pass


class enable_grad(no_grad):
    """`paddle.enable_grad()`: record eager ops again inside a `no_grad` region."""

    _mode = True


class set_grad_enabled(_GradModeGuard):
    """`paddle.set_grad_enabled(mode)`: switch recording now; as a context manager,
    restore the previous setting on exit."""

    def __init__(self, mode: bool) -> None:
        self._mode = bool(mode)
        self._prev = _set_grad_enabled(self._mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _set_grad_enabled(self._prev)
