"""VJP rules of the indexing ops, each made of the family's ops (see the pairs in
`dialects/pd/indexing.py`), so second derivatives come for free.  Index operands
get no gradient.

Duplicate indices: gathers send each copy's gradient back (accumulated); for the
overwriting scatters (`scatter` with `overwrite`, `put_along_axis` with `assign`)
the updates' gradient is read at their index, which is exact when the indices are
distinct (as Paddle's kernels assume too).
"""

from __future__ import annotations

from collections.abc import Sequence

from pullback.dialects import pd
from pullback.passes.vjp import non_differentiable, vjp
from pullback.passes.vjp.builder import VjpBuilder
from xdsl.ir import Operation, SSAValue

Grads = list["SSAValue | None"]

non_differentiable(pd.NonzeroOp)


def _g(grads: Grads) -> SSAValue:
    (g,) = grads
    assert g is not None
    return g


def _zeros(b: VjpBuilder, like: SSAValue) -> SSAValue:
    return b.full_like(like, 0.0)


@vjp(pd.GatherOp)
def gather_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """dx = index_add(0, index, g, axis)."""
    assert isinstance(op, pd.GatherOp)
    axis = op.prop("axis")
    return [b.emit(pd.IndexAddOp, _zeros(b, op.x), op.index, _g(grads), axis=axis), None]


@vjp(pd.IndexAddOp)
def index_add_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """dx = g; dupdates = gather(g, index, axis)."""
    assert isinstance(op, pd.IndexAddOp)
    g = _g(grads)
    return [g, None, b.emit(pd.GatherOp, g, op.index, axis=op.prop("axis"))]


@vjp(pd.GatherNdOp)
def gather_nd_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """dx = scatter_nd_add(0, index, g)."""
    assert isinstance(op, pd.GatherNdOp)
    return [b.emit(pd.ScatterNdAddOp, _zeros(b, op.x), op.index, _g(grads)), None]


@vjp(pd.ScatterNdAddOp)
def scatter_nd_add_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """dx = g; dupdates = gather_nd(g, index)."""
    assert isinstance(op, pd.ScatterNdAddOp)
    g = _g(grads)
    return [g, None, b.emit(pd.GatherNdOp, g, op.index)]


@vjp(pd.ScatterOp)
def scatter_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """dx = g with the indexed rows zeroed (both modes); dupdates = gather(g, index)."""
    assert isinstance(op, pd.ScatterOp)
    g = _g(grads)
    dx = b.emit(pd.ScatterOp, g, op.index, _zeros(b, op.updates), overwrite=True)
    return [dx, None, b.emit(pd.GatherOp, g, op.index, axis=0)]


@vjp(pd.TakeAlongAxisOp)
def take_along_axis_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """dx = put_along_axis(0, index, g, axis, add)."""
    assert isinstance(op, pd.TakeAlongAxisOp)
    dx = b.emit(pd.PutAlongAxisOp, _zeros(b, op.x), op.index, _g(grads),
                axis=op.prop("axis"), reduce="add")
    return [dx, None]


@vjp(pd.PutAlongAxisOp)
def put_along_axis_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """add: dx = g.  assign: dx = g zeroed at index.  Both: dvalues = g at index.
    mul: dx = put_along_axis(g, index, values, mul), dvalues = g at index * x at
    index * (out / x at index) / values, i.e. the product of everything else; written
    for distinct indices as take(g * out) / values."""
    assert isinstance(op, pd.PutAlongAxisOp)
    g = _g(grads)
    axis, reduce = op.prop("axis"), op.prop("reduce")
    if reduce == "add":
        dx = g
    elif reduce == "assign":
        dx = b.emit(pd.PutAlongAxisOp, g, op.index, _zeros(b, op.values), axis=axis, reduce="assign")
    else:
        dx = b.emit(pd.PutAlongAxisOp, g, op.index, op.values, axis=axis, reduce="mul")
        gout = b.emit(pd.TakeAlongAxisOp, b.mul(g, op.out), op.index, axis=axis)
        return [dx, None, b.div(gout, op.values)]
    return [dx, None, b.emit(pd.TakeAlongAxisOp, g, op.index, axis=axis)]


def _strided_props(op: Operation) -> dict[str, list[int]]:
    return {k: op.prop(k) for k in ("axes", "starts", "ends", "strides")}  # type: ignore[attr-defined]


@vjp(pd.StridedSliceOp)
def strided_slice_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """dx = set_value(0, g) over the same slice."""
    assert isinstance(op, pd.StridedSliceOp)
    return [b.emit(pd.SetValueOp, _zeros(b, op.x), _g(grads), **_strided_props(op))]


@vjp(pd.SetValueOp)
def set_value_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """dx = g with the slice zeroed (it was overwritten); dvalue = g's slice."""
    assert isinstance(op, pd.SetValueOp)
    g = _g(grads)
    props = _strided_props(op)
    dx = b.emit(pd.SetValueOp, g, _zeros(b, op.value), **props)
    return [dx, b.emit(pd.StridedSliceOp, g, **props)]


@vjp(pd.TrilTriuOp)
def tril_triu_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """The same triangle of g."""
    assert isinstance(op, pd.TrilTriuOp)
    return [b.emit(pd.TrilTriuOp, _g(grads), diagonal=op.prop("diagonal"), lower=op.prop("lower"))]
