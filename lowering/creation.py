"""Lowering of the creation family (`dialects/pd/creation.py`).

`arange`, `linspace` and `eye` are pointwise over their own index space (no operand:
each element is computed from its loop indices), so they fuse into their readers
like constants do.  `assign_value` selects its element from the stored values by
flat index (fine for the small constants it holds: list indices, diagonals).  The
random ops are declared `HOST_ONLY` in the dialect.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, i64
from xdsl.ir import SSAValue

from pullback.dialects import pd
from pullback.dialects.pd.base import shape_of
from pullback.lowering.registry import pointwise
from pullback.lowering.scalar import Scalar, elem_of_result


def _index_as(s: Scalar, i: SSAValue, elem: object) -> SSAValue:
    """A loop index converted to the result's element type."""
    as_int = s.emit(arith.IndexCastOp(i, i64))
    return s.convert(as_int, elem)  # type: ignore[arg-type]


@pointwise(pd.ArangeOp, maps=lambda op: [])
def _arange(s: Scalar, op: pd.ArangeOp, args: list[SSAValue]) -> list[SSAValue]:
    elem = elem_of_result(op)
    i = _index_as(s, s.index(0), elem)
    return [s.add(s.const(op.prop("start"), elem), s.mul(i, s.const(op.prop("step"), elem)))]


@pointwise(pd.LinspaceOp, maps=lambda op: [])
def _linspace(s: Scalar, op: pd.LinspaceOp, args: list[SSAValue]) -> list[SSAValue]:
    # Computed in f64 (as the kernel does), then converted to the result type.
    from xdsl.dialects.builtin import f64

    n = op.prop("num")
    start, stop = op.prop("start"), op.prop("stop")
    step = (stop - start) / (n - 1) if n > 1 else 0.0
    i = _index_as(s, s.index(0), f64)
    v = s.add(s.const(start, f64), s.mul(i, s.const(step, f64)))
    last = s.cmp("eq", s.index(0), s.const(max(n - 1, 0), IndexType()))
    v = s.select(last, s.const(stop if n > 1 else start, f64), v)
    return [s.convert(v, elem_of_result(op))]


@pointwise(pd.EyeOp, maps=lambda op: [])
def _eye(s: Scalar, op: pd.EyeOp, args: list[SSAValue]) -> list[SSAValue]:
    elem = elem_of_result(op)
    on = s.cmp("eq", s.index(0), s.index(1))
    return [s.select(on, s.const(1.0, elem), s.const(0.0, elem))]


@pointwise(pd.AssignValueOp, maps=lambda op: [])
def _assign_value(s: Scalar, op: pd.AssignValueOp, args: list[SSAValue]) -> list[SSAValue]:
    elem = elem_of_result(op)
    shape = shape_of(op.results[0].type)
    values = op.prop("values")
    flat: SSAValue = s.const(0, IndexType())
    for d, n in enumerate(shape):
        flat = s.add(s.mul(flat, s.const(n, IndexType())), s.index(d))
    out = s.const(values[0] if values else 0.0, elem)
    for k in range(1, len(values)):
        out = s.select(s.cmp("eq", flat, s.const(k, IndexType())), s.const(values[k], elem), out)
    return [out]


__all__: list[str] = []
