"""Every differentiable elementwise, reduction, matmul/linear, convolution, pooling,
normalization and loss op: gradients computed in float16 and in bfloat16 (interpreter
and compiled code) against float64 finite differences, with each dtype's tolerance
(`pullback.testing.low_precision.TOLERANCES`).

The elementwise and reduction op lists are read from the dialect's registry
(`pd.ELEMENTWISE_OPS`, `pd.REDUCTION_OPS`), so a new op is checked in both dtypes
without a new test; ops that need arguments the registry cannot supply (shapes of
weights, labels) are listed with them below.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pullback.dialects import pd
from pullback.passes import vjp
from pullback.testing import input_range
from pullback.testing.low_precision import check_vjp_dtype

DTYPES = ["float16", "bfloat16"]

vjp.load_all()

# Ops with no gradient (integer, boolean or piecewise-constant results) are skipped:
# the registry says which (`NON_DIFFERENTIABLE`), and comparisons and bitwise ops
# have boolean or integer results.
_SKIP = {pd.CastOp, pd.WhereOp}
"""`pd.cast` changes dtype by design (tested in test_low_precision_values.py);
`pd.where` takes a boolean mask (its own case below)."""

UNARY = [
    op for op in pd.ELEMENTWISE_OPS
    if issubclass(op, pd.ElementwiseUnaryOp) and op not in _SKIP and op not in vjp.NON_DIFFERENTIABLE
]
BINARY = [
    op for op in pd.ELEMENTWISE_OPS
    if issubclass(op, pd.ElementwiseBinaryOp) and not issubclass(op, pd.BitwiseOp)
    and op not in vjp.NON_DIFFERENTIABLE
]
REDUCTIONS = [op for op in pd.REDUCTION_OPS if op not in vjp.NON_DIFFERENTIABLE]

_PROPS: dict[type[pd.PdOp], dict[str, Any]] = {
    pd.ClipOp: {"min": -0.5, "max": 0.7},
    pd.PowOp: {"factor": 3.0},
    pd.ScaleOp: {"scale": 1.5, "bias": 0.25},
    pd.CumsumOp: {"axis": 1},
    pd.CumprodOp: {"axis": 1},
    pd.TopKOp: {"k": 2},
}
# Piecewise-constant ops (floor, ceil, round, sign) have zero gradients: the check
# confirms them against finite differences away from the jumps.


def _rng() -> np.random.Generator:
    return np.random.default_rng(7)


def _away_from_integers(x: np.ndarray) -> np.ndarray:
    """x moved off the jumps of floor/ceil/round/sign (a 16-bit float rounds onto them)."""
    return np.floor(x) + 0.25 + 0.5 * (x - np.floor(x))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", UNARY, ids=[op.name for op in UNARY])
def test_unary_gradient(op: type[pd.PdOp], dtype: str) -> None:
    lo, hi = input_range(op, lo=-2.0, hi=2.0, margin=0.2)
    x = _rng().uniform(lo, hi, (3, 5))
    if op in (pd.FloorOp, pd.CeilOp, pd.RoundOp, pd.SignOp, pd.AbsOp, pd.ReluOp):
        x = _away_from_integers(x)
    check_vjp_dtype(op, [x], dtype, props=_PROPS.get(op))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", BINARY, ids=[op.name for op in BINARY])
def test_binary_gradient(op: type[pd.PdOp], dtype: str) -> None:
    rng = _rng()
    x = rng.uniform(*input_range(op, lo=-2.0, hi=2.0, margin=0.3), (3, 4))
    y = rng.uniform(*input_range(op, operand="y", lo=0.5, hi=2.0, margin=0.3), (3, 4))
    if op is pd.ElementwisePowOp:
        x = np.abs(x) + 0.5
    if op in (pd.ElementwiseMaxOp, pd.ElementwiseMinOp):
        y = x + np.where(rng.random(x.shape) < 0.5, -0.5, 0.5)  # no ties
    check_vjp_dtype(op, [x, y], dtype)
    # Broadcasting: y along the last axis (its gradient sums over the rows).
    check_vjp_dtype(op, [x, y[0]], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_where_gradient(dtype: str) -> None:
    rng = _rng()
    mask = rng.random((3, 4)) < 0.5
    check_vjp_dtype(pd.WhereOp, [mask, rng.standard_normal((3, 4)), rng.standard_normal((3, 4))], dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", REDUCTIONS, ids=[op.name for op in REDUCTIONS])
def test_reduction_gradient(op: type[pd.PdOp], dtype: str) -> None:
    rng = _rng()
    x = rng.uniform(0.5, 1.5, (4, 6)) * np.where(rng.random((4, 6)) < 0.5, -1, 1)
    if op in (pd.ReduceMaxOp, pd.ReduceMinOp, pd.TopKOp):
        x = np.arange(24.0).reshape(4, 6)[:, rng.permutation(6)] / 8.0  # distinct values
    if op is pd.SumOp:
        check_vjp_dtype(op, [x, rng.standard_normal((4, 6))], dtype)
        return
    check_vjp_dtype(op, [x], dtype, props=_PROPS.get(op))


def _r(*shape: int) -> np.ndarray:
    return _rng().uniform(-1.0, 1.0, shape)


NN_CASES: list[tuple[type[pd.PdOp], list[Any], dict[str, Any]]] = [
    (pd.MatmulOp, [_r(3, 4), _r(4, 5)], {}),
    (pd.MatmulOp, [_r(2, 3, 4), _r(5, 4)], {"transpose_y": True}),
    (pd.LinearOp, [_r(3, 4), _r(4, 5), _r(5)], {}),
    (pd.Conv2DOp, [_r(2, 3, 6, 6), _r(4, 3, 3, 3)], {"paddings": [1, 1]}),
    (pd.Conv2DOp, [_r(1, 4, 5, 5), _r(4, 2, 3, 3)], {"strides": [2, 2], "groups": 2}),
    (pd.Conv2DTransposeOp, [_r(1, 2, 3, 3), _r(2, 3, 3, 3)], {"strides": [2, 2]}),
    (pd.Pool2DOp, [_r(1, 2, 4, 4)], {"pooling_type": "avg", "ksize": [2, 2], "strides": [2, 2]}),
    (pd.Pool2DOp, [np.arange(32.0).reshape(1, 2, 4, 4)[..., [2, 0, 3, 1]] / 16], {"pooling_type": "max", "ksize": [2, 2], "strides": [2, 2]}),
    (pd.LayerNormOp, [_r(3, 8), _r(8) + 1.5, _r(8)], {"begin_norm_axis": 1}),
    (pd.BatchNormOp, [_r(4, 3, 2, 2), _r(3) + 1.5, _r(3), np.zeros(3), np.ones(3)], {}),
    (pd.SoftmaxWithCrossEntropyOp, [_r(3, 5), np.array([[0], [3], [4]])], {}),
    (pd.SquareErrorCostOp, [_r(4, 1), _r(4, 1)], {}),
    (pd.LookupTableOp, [np.array([[1], [3], [1]]), _r(5, 3)], {}),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", range(len(NN_CASES)), ids=[f"{c[0].name}-{i}" for i, c in enumerate(NN_CASES)])
def test_nn_gradient(case: int, dtype: str) -> None:
    op, inputs, props = NN_CASES[case]
    wrt = None
    if op is pd.BatchNormOp:
        wrt = [0, 1, 2]  # the running statistics are state, not differentiated
    check_vjp_dtype(op, inputs, dtype, props=props, wrt=wrt)
