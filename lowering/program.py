"""Lowering of the program family (`dialects/pd/program.py`).

The structural ops (`pd.STRUCTURAL_OPS`) emit no code of their own: feeds
(`pd.data`) and persistables read with `pd.parameter` become arguments of the entry
function (`convert_pd_to_linalg.build_entry` binds their buffers), `pd.fetch` picks
its outputs, and `pd.backward`/`pd.yield` are spliced into straight-line order
(`abi.Program`).  Constants are pointwise.  The
random initializers are declared `HOST_ONLY` in the dialect: startup programs run
on the host interpreter.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from pullback.dialects import pd
from pullback.lowering.registry import pointwise
from pullback.lowering.scalar import Scalar, elem_of_result


@pointwise(pd.FillAnyLikeOp, maps=lambda op: [None])
def _fill_any_like(s: Scalar, op: pd.FillAnyLikeOp, args: list[SSAValue]) -> list[SSAValue]:
    # The operand gives only the result's shape (its map is None: never loaded).
    return [s.const(op.prop("value"), elem_of_result(op))]


@pointwise(pd.FillConstantOp, maps=lambda op: [])
def _fill_constant(s: Scalar, op: pd.FillConstantOp, args: list[SSAValue]) -> list[SSAValue]:
    return [s.const(op.prop("value"), elem_of_result(op))]


__all__: list[str] = []
