"""Input domains declared on the op classes (`OpFacts.DOMAIN`, `pd.Domain`): each
names an operand of its op, the op's values and gradients are finite inside it,
and `pullback.testing.input_range` (where tests draw inputs from) stays inside it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pullback.dialects import pd
from pullback.testing import check_vjp, input_range, run_op

DECLARED = [op for op in pd.ALL_OPS if getattr(op, "DOMAIN", None)]
UNARY = [op for op in DECLARED if issubclass(op, pd.ElementwiseUnaryOp)]


def test_the_documented_domains_are_declared() -> None:
    assert pd.LogOp.input_domain("x") == pd.SqrtOp.input_domain("x") == pd.Domain(0.0)
    assert pd.Log1pOp.input_domain("x") == pd.Domain(-1.0)
    assert pd.AsinOp.input_domain("x") == pd.AcosOp.input_domain("x") == pd.Domain(-1.0, 1.0)
    assert pd.ElementwiseDivOp.input_domain("y") == pd.Domain(excluded=(0.0,))
    assert pd.ElementwiseDivOp.input_domain("x") is pd.REALS and pd.ReluOp.input_domain("x").unbounded


@pytest.mark.parametrize("op", DECLARED, ids=[op.name for op in DECLARED])
def test_each_domain_names_an_operand_of_its_op(op: type[pd.PdOp]) -> None:
    irdl = op.get_irdl_definition()
    assert irdl is not None
    operands = {name for name, _ in irdl.operands}
    assert set(op.DOMAIN) <= operands, (op.name, sorted(op.DOMAIN), sorted(operands))


def test_domain_membership_interval_and_text() -> None:
    d = pd.Domain(-1.0, 1.0, hi_closed=True)
    np.testing.assert_array_equal(d.contains([-1.0, -0.99, 1.0, 1.01, np.nan]), [False, True, True, False, False])
    np.testing.assert_array_equal(d.contains([0.95, 0.9, -0.9], margin=0.05), [False, True, True])
    assert d.interval(0.1) == (-0.9, 0.9) and pd.Domain(0.0).interval(0.1, -3, 3) == (0.1, 3.0)
    nonzero = pd.Domain(excluded=(0.0,))
    np.testing.assert_array_equal(nonzero.contains([0.0, 0.2, -0.5], margin=0.3), [False, False, True])
    assert str(d) == "(-1, 1]" and str(nonzero) == "(-inf, inf) \\ {0}"
    with pytest.raises(ValueError, match="holds no interval"):
        pd.Domain(0.0, 0.1).interval(0.1)


def test_input_range_narrows_to_every_domain() -> None:
    assert input_range(pd.Log1pOp) == (-0.9, 3.0)
    assert input_range(pd.AsinOp, pd.AcosOp, pd.Log1pOp) == (-0.9, 0.9)
    assert input_range(pd.SinOp, lo=-2, hi=2) == (-2.0, 2.0)
    lo, hi = input_range(pd.TanOp)
    assert -math.pi / 2 < lo and hi < math.pi / 2


@pytest.mark.parametrize("op", UNARY, ids=[op.name for op in UNARY])
def test_unary_values_and_gradients_are_finite_inside_the_domain(op: type[pd.PdOp]) -> None:
    x = np.linspace(*input_range(op, margin=0.05), 24).reshape(4, 6)
    assert np.all(np.isfinite(run_op(op, x)))
    check_vjp(op, [x[:, ::2].copy()])


def test_binary_domains_keep_division_and_real_powers_finite() -> None:
    rng = np.random.default_rng(0)
    y = rng.uniform(*input_range(pd.ElementwiseDivOp, operand="y", lo=0.5, hi=2.0), (2, 3))
    x = rng.uniform(*input_range(pd.ElementwisePowOp, lo=-2, hi=2), (2, 3))
    for op, a, b in ((pd.ElementwiseDivOp, rng.standard_normal((2, 3)), y), (pd.ElementwisePowOp, x, y)):
        assert np.all(np.isfinite(run_op(op, a, b)))
        check_vjp(op, [a, b])
