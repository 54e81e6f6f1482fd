"""`paddle.incubate`: `paddle.incubate.optimizer.RecomputeOptimizer`, the
functional autograd API `paddle.incubate.autograd` (vjp, jvp, Jacobian, Hessian), and
the older graph spellings Paddle 3.3.1 keeps (`graph_send_recv`, `segment_sum`, ...:
`frontend/ops/geometric.py`'s `INCUBATE`)."""

from __future__ import annotations

from pullback.frontend.api import incubate_autograd as autograd
from pullback.frontend.api import incubate_optimizer as optimizer
from pullback.frontend.ops.geometric import INCUBATE

__path__: list[str] = []  # `paddle.incubate.optimizer`/`.autograd` come from the alias finder

globals().update({f.__name__: f for f in INCUBATE})

__all__ = ["autograd", "optimizer", *sorted(f.__name__ for f in INCUBATE)]
