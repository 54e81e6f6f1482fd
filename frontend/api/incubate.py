"""`paddle.incubate`: `paddle.incubate.optimizer.RecomputeOptimizer` and the
functional autograd API `paddle.incubate.autograd` (vjp, jvp, Jacobian, Hessian)."""

from __future__ import annotations

from pullback.frontend.api import incubate_autograd as autograd
from pullback.frontend.api import incubate_optimizer as optimizer

__path__: list[str] = []  # `paddle.incubate.optimizer`/`.autograd` come from the alias finder

__all__ = ["autograd", "optimizer"]
