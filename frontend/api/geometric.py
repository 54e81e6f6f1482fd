"""`paddle.geometric`: graph message passing, segment pooling and the host-only graph
utilities (the `GEOMETRIC` list of the `geometric` op family, `frontend/ops/geometric.py`).
Paddle's submodules (`paddle.geometric.message_passing`, `.math`, `.reindex`,
`.sampling`) come from the table of Paddle's module paths (`pullback.namespaces`)."""

from __future__ import annotations

from pullback.frontend.ops.geometric import GEOMETRIC

__path__: list[str] = []  # the submodules come from the fallback finder

globals().update({f.__name__: f for f in GEOMETRIC})

__all__ = sorted(f.__name__ for f in GEOMETRIC)
