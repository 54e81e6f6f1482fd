"""Lowering of the program family (`dialects/pd/program.py`).

Feeds (`pd.data`) and persistables read with `pd.parameter` become arguments of the
entry function (`convert_pd_to_linalg.build_entry` binds their buffers), `pd.fetch`
picks its outputs, and `pd.backward`/`pd.yield` are spliced into straight-line order
(`abi.Program`): none of them emits code of its own.  Constants are pointwise.  The
random initializers are declared `HOST_ONLY` in the dialect: startup programs run
on the host interpreter.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from pullback.dialects import pd
from pullback.lowering.core import Lowerer, Scalar, elem_of_result, lowers, pointwise


@lowers(pd.DataOp, pd.ParameterOp)
def _bound_by_entry(low: Lowerer, op: pd.DataOp | pd.ParameterOp) -> None:
    """Nothing to emit: the value is an argument of the entry function."""


STRUCTURAL_OPS = (pd.FetchOp, pd.BackwardOp, pd.YieldOp)
"""Ops consumed by `abi.Program` when it flattens a module: they never reach a rule."""


@pointwise(pd.FillAnyLikeOp, maps=lambda op: [None])
def _fill_any_like(s: Scalar, op: pd.FillAnyLikeOp, args: list[SSAValue]) -> list[SSAValue]:
    # The operand gives only the result's shape (its map is None: never loaded).
    return [s.const(op.prop("value"), elem_of_result(op))]


@pointwise(pd.FillConstantOp, maps=lambda op: [])
def _fill_constant(s: Scalar, op: pd.FillConstantOp, args: list[SSAValue]) -> list[SSAValue]:
    return [s.const(op.prop("value"), elem_of_result(op))]


__all__ = ["STRUCTURAL_OPS"]
