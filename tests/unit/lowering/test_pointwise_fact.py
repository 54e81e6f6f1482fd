"""`POINTWISE` is declared on the op class (dialects/pd) and the lowering agrees:
it registers a scalar body exactly for the ops that declare it, and refuses one for
an op that does not (so the fact cannot drift between the dialect, the lowering and
`recompute`'s cost model, which reads it from the op)."""

from __future__ import annotations

import inspect

import pytest

import pullback.lowering.convert_pd_to_linalg  # noqa: F401  (registers the rules)
from pullback.dialects import pd
from pullback.lowering.registry import LOWERINGS, pointwise


def _op_classes() -> list[type]:
    return [c for c in vars(pd).values() if inspect.isclass(c) and issubclass(c, pd.PdOp) and hasattr(c, "name")]


def test_every_pointwise_op_has_a_scalar_body_and_no_other_op_does() -> None:
    declared = {c for c in _op_classes() if c.POINTWISE}
    with_body = {t for t, e in LOWERINGS.items() if e.is_pointwise}
    assert declared, "no op declares POINTWISE"
    assert declared == with_body, (
        f"declared without a body: {sorted(c.__name__ for c in declared - with_body)}; "
        f"a body without the declaration: {sorted(c.__name__ for c in with_body - declared)}"
    )


def test_a_scalar_body_for_an_op_not_declared_pointwise_is_refused() -> None:
    assert not pd.MatmulOp.POINTWISE
    with pytest.raises(TypeError, match="MatmulOp.*POINTWISE"):
        pointwise(pd.MatmulOp)(lambda *a: None)
