"""Constraints on the values of random variables (`paddle.distribution.constraint`,
Paddle 3.3.1's classes)."""

from __future__ import annotations

from typing import Any

import pullback as paddle


class Constraint:
    """A predicate on values: `constraint(value)` is a boolean tensor."""

    def __call__(self, value: Any) -> Any:
        raise NotImplementedError

    def check(self, value: Any) -> Any:
        """`self(value)`."""
        return self(value)


class Real(Constraint):
    """Real numbers (not NaN)."""

    def __call__(self, value: Any) -> Any:
        return value == value


class Range(Constraint):
    """`lower <= value <= upper` (Paddle chains the comparisons, which only works for
    one-element tensors; pullback combines them elementwise)."""

    def __init__(self, lower: Any, upper: Any) -> None:
        self._lower = lower
        self._upper = upper
        super().__init__()

    def __call__(self, value: Any) -> Any:
        return paddle.logical_and(self._lower <= value, value <= self._upper)


class Positive(Constraint):
    """`value >= 0`."""

    def __call__(self, value: Any) -> Any:
        return value >= 0.0


class Simplex(Constraint):
    """Non-negative along the last axis, summing to 1 (within 1e-6)."""

    def __call__(self, value: Any) -> Any:
        return paddle.logical_and(paddle.all(value >= 0, axis=-1), (value.sum(-1) - 1).abs() < 1e-6)


real = Real()
positive = Positive()
simplex = Simplex()
