"""`paddle.linalg`: norms, inverses, determinants, solves and decompositions (the
`LINALG` list of the `linalg` op family, `frontend/ops/linalg.py`)."""

from __future__ import annotations

from pullback.frontend.ops.linalg import LINALG

globals().update({f.__name__: f for f in LINALG})

__all__ = sorted(f.__name__ for f in LINALG)
