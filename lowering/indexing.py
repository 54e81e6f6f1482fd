"""Lowering of the indexing family (`dialects/pd/indexing.py`): explicit loop nests
(`lowering/loop_nest.py`), since the indices are computed from index tensors.

* gathers (`gather`, `gather_nd`, `take_along_axis`, `strided_slice`) are one
  `scf.parallel` over the result, loading each element at its computed position;
* scatters (`index_add`, `scatter_nd_add`, `scatter`, `put_along_axis`,
  `set_value`) copy x into the result, then loop over the updates, adding with
  `atomic_add` (duplicates accumulate) or storing;
* `tril_triu` is pointwise (a select on the last two loop indices).

Out-of-range indices are found by a run-time range check before the op (one pass
over the index, `loop_nest.check_range`), so compiled code raises the interpreter's
`IndexOutOfRange` naming the op and the first bad index (for `gather_nd` and
`scatter_nd_add`, one check per coordinate column); the loops themselves still
clamp, so nothing reads or writes out of bounds before the check is reported.
`nonzero` is `HOST_ONLY`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IndexType
from xdsl.ir import SSAValue

from pullback.dialects import pd
from pullback.dialects.pd.base import DYN, shape_of
from pullback.lowering.abi import LoweringError
from pullback.lowering.lowerer import Lowerer
from pullback.lowering.lowerer.sizes import Size
from pullback.lowering.registry import lowers, pointwise, range_check, result_sizes, sizes_of_first
from pullback.lowering.scalar import Scalar, identity_maps
from pullback.lowering.views import elem_of_buffer
from pullback.lowering.loop_nest import (
    atomic_add,
    check_range,
    clamp,
    load,
    parallel,
    store,
    to_index,
)


def _idx(s: Scalar, v: SSAValue, size: SSAValue) -> SSAValue:
    """An index-tensor element as a safe (clamped) `index`."""
    return clamp(s, to_index(s, v), size)


def _rank(v: SSAValue) -> int:
    return len(shape_of(v.type))


# -------------------------------------------------------------------- checks


@range_check(pd.GatherOp, pd.IndexAddOp, pd.TakeAlongAxisOp, pd.PutAlongAxisOp, operand=1)
def _check_axis_index(low: Lowerer, op: pd.PdOp) -> None:
    """Every index in `[0, x.shape[axis])`, as the interpreter checks."""
    x = op.operands[0]
    axis = op.prop("axis") % _rank(x)
    check_range(low, op, "index", op.operands[1], low.sizes_of(x)[axis])


@range_check(pd.GatherNdOp, pd.ScatterNdAddOp, operand=1)
def _check_coordinates(low: Lowerer, op: pd.PdOp) -> None:
    """Column j of the coordinates in `[0, x.shape[j])`, one check per column, in
    the interpreter's order."""
    x, index = op.operands[:2]
    sizes = low.sizes_of(x)
    for j in range(shape_of(index.type)[-1]):
        check_range(low, op, f"index[..., {j}]", index, sizes[j], column=j)


@range_check(pd.ScatterOp, operand=1)
def _check_rows(low: Lowerer, op: pd.ScatterOp) -> None:
    """Every row index in `[0, x.shape[0])`."""
    check_range(low, op, "index", op.operands[1], low.sizes_of(op.operands[0])[0])


# -------------------------------------------------------------------- gathers


@lowers(pd.GatherOp)
def _gather(low: Lowerer, op: pd.GatherOp) -> None:
    x, index = op.operands
    r = op.results[0]
    axis = op.prop("axis") % _rank(x)
    k = _rank(index)
    xm, im, out = low.read(x), low.read(index), low.out(r)
    low.note_read(out)
    n = low.as_value(low.sizes_of(x)[axis])

    def body(s: Scalar, ivs: list[SSAValue]) -> None:
        i = _idx(s, load(s, im, ivs[axis: axis + k]), n)
        store(s, load(s, xm, [*ivs[:axis], i, *ivs[axis + k:]]), out, ivs)

    parallel(low, low.sizes[r], body)


@result_sizes(pd.GatherOp)
def _gather_sizes(low: Lowerer, op: pd.GatherOp, r: SSAValue, k: int) -> Size | None:
    x, index = op.operands
    axis = op.prop("axis") % _rank(x)
    n = _rank(index)
    if axis <= k < axis + n:
        return low.sizes_of(index)[k - axis]
    return low.sizes_of(x)[k if k < axis else k - n + 1]


@lowers(pd.GatherNdOp)
def _gather_nd(low: Lowerer, op: pd.GatherNdOp) -> None:
    x, index = op.operands
    r = op.results[0]
    kk = shape_of(index.type)[-1]
    lead = _rank(index) - 1
    xm, im, out = low.read(x), low.read(index), low.out(r)
    low.note_read(out)
    xs = [low.as_value(d) for d in low.sizes_of(x)]

    def body(s: Scalar, ivs: list[SSAValue]) -> None:
        coords = [_idx(s, load(s, im, [*ivs[:lead], s.const(j, IndexType())]), xs[j]) for j in range(kk)]
        store(s, load(s, xm, [*coords, *ivs[lead:]]), out, ivs)

    parallel(low, low.sizes[r], body)


@result_sizes(pd.GatherNdOp)
def _gather_nd_sizes(low: Lowerer, op: pd.GatherNdOp, r: SSAValue, k: int) -> Size | None:
    x, index = op.operands
    lead = _rank(index) - 1
    if k < lead:
        return low.sizes_of(index)[k]
    return low.sizes_of(x)[shape_of(index.type)[-1] + k - lead]


@lowers(pd.TakeAlongAxisOp)
def _take_along_axis(low: Lowerer, op: pd.TakeAlongAxisOp) -> None:
    x, index = op.operands
    r = op.results[0]
    axis = op.prop("axis") % _rank(x)
    xm, im, out = low.read(x), low.read(index), low.out(r)
    low.note_read(out)
    n = low.as_value(low.sizes_of(x)[axis])

    def body(s: Scalar, ivs: list[SSAValue]) -> None:
        i = _idx(s, load(s, im, ivs), n)
        store(s, load(s, xm, [i if d == axis else iv for d, iv in enumerate(ivs)]), out, ivs)

    parallel(low, low.sizes[r], body)


@result_sizes(pd.TakeAlongAxisOp)
def _take_sizes(low: Lowerer, op: pd.TakeAlongAxisOp, r: SSAValue, k: int) -> Size | None:
    return low.sizes_of(op.operands[1])[k]


def _strided(op: pd.StridedSliceOp | pd.SetValueOp, x_shape: Sequence[int]) -> list[tuple[int, int]]:
    """Per dimension of x, `(first, stride)` of the slice (static dimensions only)."""
    out = [(0, 1)] * len(x_shape)
    for a, st, en, sd in zip(op.prop("axes"), op.prop("starts"), op.prop("ends"), op.prop("strides")):
        a %= len(x_shape)
        if x_shape[a] == DYN:
            raise LoweringError(f"'{op.name}': a strided slice of dynamic dimension {a} is not lowered yet")
        lo, _, step = pd.strided_dim(x_shape[a], st, en, sd)
        out[a] = (lo, step)
    return out


def _strided_indices(s: Scalar, ivs: list[SSAValue], spec: list[tuple[int, int]]) -> list[SSAValue]:
    t = IndexType()
    return [iv if (lo, st) == (0, 1) else s.add(s.const(lo, t), s.mul(iv, s.const(st, t)))
            for iv, (lo, st) in zip(ivs, spec)]


@lowers(pd.StridedSliceOp)
def _strided_slice(low: Lowerer, op: pd.StridedSliceOp) -> None:
    x, r = op.operands[0], op.results[0]
    spec = _strided(op, shape_of(x.type))
    xm, out = low.read(x), low.out(r)
    low.note_read(out)

    def body(s: Scalar, ivs: list[SSAValue]) -> None:
        store(s, load(s, xm, _strided_indices(s, ivs, spec)), out, ivs)

    parallel(low, low.sizes[r], body)


@result_sizes(pd.StridedSliceOp)
def _strided_sizes(low: Lowerer, op: pd.StridedSliceOp, r: SSAValue, k: int) -> Size | None:
    return low.sizes_of(op.operands[0])[k]  # only unsliced dimensions can be dynamic


# ------------------------------------------------------------------- scatters


def _copy_x(low: Lowerer, op: pd.PdOp) -> SSAValue:
    """The result buffer, holding a copy of operand 0."""
    out = low.out(op.results[0])
    low.copy_value(op.operands[0], out)
    low.note_read(out)
    return out


@lowers(pd.IndexAddOp)
def _index_add(low: Lowerer, op: pd.IndexAddOp) -> None:
    x, index, updates = op.operands
    axis = op.prop("axis") % _rank(x)
    k = _rank(index)
    out = _copy_x(low, op)
    im, um = low.read(index), low.read(updates)
    n = low.as_value(low.sizes_of(x)[axis])

    def body(s: Scalar, ivs: list[SSAValue]) -> None:
        i = _idx(s, load(s, im, ivs[axis: axis + k]), n)
        atomic_add(s, load(s, um, ivs), out, [*ivs[:axis], i, *ivs[axis + k:]])

    parallel(low, low.sizes_of(updates), body)


@lowers(pd.ScatterNdAddOp)
def _scatter_nd_add(low: Lowerer, op: pd.ScatterNdAddOp) -> None:
    x, index, updates = op.operands
    kk = shape_of(index.type)[-1]
    lead = _rank(index) - 1
    out = _copy_x(low, op)
    im, um = low.read(index), low.read(updates)
    xs = [low.as_value(d) for d in low.sizes_of(x)]

    def body(s: Scalar, ivs: list[SSAValue]) -> None:
        coords = [_idx(s, load(s, im, [*ivs[:lead], s.const(j, IndexType())]), xs[j]) for j in range(kk)]
        atomic_add(s, load(s, um, ivs), out, [*coords, *ivs[lead:]])

    parallel(low, low.sizes_of(updates), body)


@lowers(pd.ScatterOp)
def _scatter(low: Lowerer, op: pd.ScatterOp) -> None:
    x, index, updates = op.operands
    out = _copy_x(low, op)
    im, um = low.read(index), low.read(updates)
    n = low.as_value(low.sizes_of(x)[0])
    usizes = low.sizes_of(updates)
    if op.prop("overwrite"):
        def put(s: Scalar, ivs: list[SSAValue]) -> None:
            i = _idx(s, load(s, im, ivs[:1]), n)
            store(s, load(s, um, ivs), out, [i, *ivs[1:]])

        parallel(low, usizes, put)
        return
    elem = elem_of_buffer(out)

    def zero(s: Scalar, ivs: list[SSAValue]) -> None:
        i = _idx(s, load(s, im, ivs[:1]), n)
        store(s, s.const(0.0, elem), out, [i, *ivs[1:]])

    def add(s: Scalar, ivs: list[SSAValue]) -> None:
        i = _idx(s, load(s, im, ivs[:1]), n)
        atomic_add(s, load(s, um, ivs), out, [i, *ivs[1:]])

    parallel(low, usizes, zero)
    parallel(low, usizes, add)


@lowers(pd.PutAlongAxisOp)
def _put_along_axis(low: Lowerer, op: pd.PutAlongAxisOp) -> None:
    x, index, values = op.operands
    axis = op.prop("axis") % _rank(x)
    out = _copy_x(low, op)
    im, vm = low.read(index), low.read(values)
    n = low.as_value(low.sizes_of(x)[axis])
    reduce = op.prop("reduce")

    def body(s: Scalar, ivs: list[SSAValue]) -> None:
        i = _idx(s, load(s, im, ivs), n)
        at = [i if d == axis else iv for d, iv in enumerate(ivs)]
        v = load(s, vm, ivs)
        if reduce == "add":
            atomic_add(s, v, out, at)
        elif reduce == "mul":
            store(s, s.mul(load(s, out, at), v), out, at)
        else:
            store(s, v, out, at)

    parallel(low, low.sizes_of(index), body)


@lowers(pd.SetValueOp)
def _set_value(low: Lowerer, op: pd.SetValueOp) -> None:
    x, value = op.operands
    spec = _strided(op, shape_of(x.type))
    out = _copy_x(low, op)
    vm = low.read(value)

    def body(s: Scalar, ivs: list[SSAValue]) -> None:
        store(s, load(s, vm, ivs), out, _strided_indices(s, ivs, spec))

    parallel(low, low.sizes_of(value), body)


result_sizes(pd.IndexAddOp, pd.ScatterNdAddOp, pd.ScatterOp, pd.PutAlongAxisOp, pd.SetValueOp)(
    sizes_of_first)


# --------------------------------------------------------------- triangles


@pointwise(pd.TrilTriuOp, maps=identity_maps)
def _tril_triu(s: Scalar, op: pd.TrilTriuOp, args: list[SSAValue]) -> list[SSAValue]:
    rank = len(shape_of(op.results[0].type))
    i, j = s.index(rank - 2), s.index(rank - 1)
    t = IndexType()
    # j - i compared with the diagonal, in signed index arithmetic.
    diff = s.sub(j, i)
    keep = s.cmp("le" if op.prop("lower") else "ge", diff, s.const(op.prop("diagonal"), t))
    x = args[0]
    return [s.select(keep, x, s.const(0.0, x.type))]


__all__: list[str] = []
