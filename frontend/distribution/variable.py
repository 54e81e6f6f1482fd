"""The domains and codomains of transforms (`paddle.distribution.variable`, Paddle
3.3.1's classes): whether values are discrete, their event rank and constraint."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pullback as paddle
from pullback.frontend.distribution import constraint as _constraint


class Variable:
    """A random variable's kind: `is_discrete`, `event_rank`, and a constraint."""

    def __init__(
        self, is_discrete: bool = False, event_rank: int = 0, constraint: _constraint.Constraint | None = None
    ) -> None:
        self._is_discrete = is_discrete
        self._event_rank = event_rank
        self._constraint = constraint

    @property
    def is_discrete(self) -> bool:
        return self._is_discrete

    @property
    def event_rank(self) -> int:
        return self._event_rank

    def constraint(self, value: Any) -> Any:
        """Whether `value` satisfies the constraint (a boolean tensor)."""
        assert self._constraint is not None
        return self._constraint.check(value)


class Real(Variable):
    """Real values."""

    def __init__(self, event_rank: int = 0) -> None:
        super().__init__(False, event_rank, _constraint.real)


class Positive(Variable):
    """Non-negative values."""

    def __init__(self, event_rank: int = 0) -> None:
        super().__init__(False, event_rank, _constraint.positive)


class Independent(Variable):
    """`base` with its `reinterpreted_batch_rank` rightmost batch axes made event axes.
    (Paddle's `constraint` reads a misspelt attribute and fails; pullback's works.)"""

    def __init__(self, base: Variable, reinterpreted_batch_rank: int) -> None:
        self._base = base
        self._reinterpreted_batch_rank = reinterpreted_batch_rank
        super().__init__(base.is_discrete, base.event_rank + reinterpreted_batch_rank)

    def constraint(self, value: Any) -> Any:
        ret = self._base.constraint(value)
        if len(ret.shape) < self._reinterpreted_batch_rank:
            raise ValueError(f"Input dimensions must be equal or grater than  {self._reinterpreted_batch_rank}")
        return ret.reshape([*ret.shape[: len(ret.shape) - self._reinterpreted_batch_rank], -1]).all(-1)


class Stack(Variable):
    """Variables stacked along `axis`.  (Paddle's `constraint` calls a `check` method
    its variables lack; pullback's calls their `constraint`.)"""

    def __init__(self, vars: Sequence[Variable], axis: int = 0) -> None:
        self._vars = vars
        self._axis = axis

    @property
    def is_discrete(self) -> bool:
        return any(var.is_discrete for var in self._vars)

    @property
    def event_rank(self) -> int:
        rank = max(var.event_rank for var in self._vars)
        if self._axis + rank < 0:
            rank += 1
        return rank

    def constraint(self, value: Any) -> Any:
        if not -len(value.shape) <= self._axis < len(value.shape):
            raise ValueError(
                f"Input dimensions {len(value.shape)} should be grater than stack constraint axis {self._axis}."
            )
        return paddle.stack(
            [var.constraint(v) for var, v in zip(self._vars, paddle.unstack(value, self._axis))], self._axis
        )


real = Real()
positive = Positive()
