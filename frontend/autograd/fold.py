"""Constant folding of a differentiated region, once per plan.

VJP rules emit several constants per op (zeros for relu's `where`, ones for seeds
and means), and in a plan every shape is static, so they — and every op computed
from constants only — can be evaluated when the plan is built instead of on every
backward.  `plan.build_plan` drops the folded ops and starts their result slots
with the arrays computed here.
"""

from __future__ import annotations

import numpy as np
from pullback.dialects import pd
from pullback.frontend.eager import DTYPE_BY_ELEM, Template
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

SHAPE_ONLY = (pd.FillAnyLikeOp,)
"""Ops that read their operands' shapes, never their values."""

NEVER_FOLDED = (pd.UniformRandomOp, pd.GaussianRandomOp)
"""Ops that must run on every backward though their operands are constant: each run
draws new values."""


def fold_constants(region: list[Operation]) -> dict[SSAValue, np.ndarray]:
    """Evaluate the region's ops that do not depend on run-time values: constants
    (`fill_constant`, `fill_any_like` — shapes are static in a plan) and ops
    computed from constants only.  The arrays are shared by every run of the plan,
    so they are made read-only."""
    consts: dict[SSAValue, np.ndarray] = {}
    for op in region:
        if isinstance(op, SHAPE_ONLY):
            if not all(isinstance(v.type, TensorType) and v.type.has_static_shape() for v in op.operands):
                continue
            # Only the shapes are read: uninitialised arrays of the right shape do.
            args = [np.empty(pd.shape_of(v.type), DTYPE_BY_ELEM[str(pd.elem_of(v.type))]) for v in op.operands]
        elif isinstance(op, pd.FillConstantOp) or (
            op.operands
            and all(v in consts for v in op.operands)
            and not isinstance(op, NEVER_FOLDED)
        ):
            args = [consts[v] for v in op.operands]
        else:
            continue
        for r, a in zip(op.results, Template(op).run(args)):
            a.flags.writeable = False
            consts[r] = a
    return consts
