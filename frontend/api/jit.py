"""`paddle.jit`: dynamic-to-static conversion.  pullback does not translate Python
into static programs; `to_static` returns the function or layer unchanged, so it runs
eagerly with the same results and gradients the translated program computes (the
`input_spec` is checked and recorded, not used to trace)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pullback.frontend.input_spec import InputSpec


def to_static(function: Any = None, input_spec: Any = None, build_strategy: Any = None,
              backend: Any = None, **kwargs: Any) -> Any:
    """`@paddle.jit.to_static` / `paddle.jit.to_static(layer, input_spec=...)`: the
    function or layer itself, run eagerly (see the module docstring)."""
    if input_spec is not None:
        specs = input_spec if isinstance(input_spec, (list, tuple)) else [input_spec]
        for i, spec in enumerate(specs):
            if not isinstance(spec, InputSpec) and not hasattr(spec, "shape"):
                raise TypeError(
                    f"to_static: input_spec[{i}] must be an InputSpec or a Tensor, got {type(spec).__name__}"
                )

    def decorate(fn: Any) -> Any:
        if not callable(fn):
            raise TypeError(f"to_static: expected a function or a Layer, got {type(fn).__name__}")
        return fn

    return decorate if function is None else decorate(function)


def not_to_static(func: Callable[..., Any] | None = None) -> Any:
    """Mark a function as excluded from conversion (every function is, here)."""
    return func if func is not None else (lambda f: f)


def enable_to_static(enable_to_static_bool: bool) -> None:
    """Accepted for Paddle's API: conversion is never performed."""
    if not isinstance(enable_to_static_bool, bool):
        raise TypeError("enable_to_static expects a bool")


__all__ = ["enable_to_static", "not_to_static", "to_static"]
