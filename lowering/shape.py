"""Lowering of the shape family (`dialects/pd/shape.py`).

* Ops declared `VIEW` (`reshape`, `reshape_as`, `squeeze`, `unsqueeze`) only
  reinterpret a dense row-major buffer: they lower to a `memref.reinterpret_cast`
  view of their operand's buffer, no copy (a copy only when the result must land in
  a buffer of its own: a fetched or persisted value).
* `transpose`, `expand`, `expand_as` read their operand through projection maps:
  they are pointwise (one output element is one input element), so they fuse into
  their readers like arithmetic does.
* `slice`, `split`, `split_as`, `concat`, `pad` copy rectangular windows at offsets,
  which projection maps cannot express: each window is one `scf.parallel` copy
  (`loop_nest.copy_window`).

Dynamic sizes and offsets (a slice of a dynamic dimension, the `-1` of a reshape) are
computed with unsigned index arithmetic only (`addi`, `subi`, `divui`, `minui`):
values that are never negative, and ops the GPU host runtime also interprets.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.ir import SSAValue

from pullback.dialects import pd
from pullback.dialects.pd.base import DYN, shape_of
from pullback.dialects.pd.shape import (
    pad_pairs,
    permutation,
    slice_bounds,
    split_sizes,
    squeezed_axes,
    unsqueeze_positions,
)
from pullback.lowering.lowerer import Lowerer
from pullback.lowering.lowerer.sizes import Size
from pullback.lowering.registry import lowers, pointwise, result_sizes
from pullback.lowering.scalar import DimMap, Scalar, aligned_map, result_shape
from pullback.lowering.loop_nest import copy_window

# ------------------------------------------------------------ index arithmetic


def add_sizes(low: Lowerer, a: Size, b: Size) -> Size:
    """`a + b`, folded where both are static."""
    if isinstance(a, int) and isinstance(b, int):
        return a + b
    if a == 0 or b == 0:
        return b if a == 0 else a
    return low.emit(arith.AddiOp(low.as_value(a), low.as_value(b))).results[0]


def sub_sizes(low: Lowerer, a: Size, b: Size) -> Size:
    """`a - b` (never negative here), folded where both are static."""
    if isinstance(a, int) and isinstance(b, int):
        return a - b
    if b == 0:
        return a
    return low.emit(arith.SubiOp(low.as_value(a), low.as_value(b))).results[0]


def min_sizes(low: Lowerer, a: Size, b: Size) -> Size:
    """`min(a, b)` of non-negative sizes."""
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    return low.emit(arith.MinUIOp(low.as_value(a), low.as_value(b))).results[0]


def div_sizes(low: Lowerer, a: Size, b: Size) -> Size:
    """`a // b` of non-negative sizes."""
    if isinstance(a, int) and isinstance(b, int):
        return a // b
    if b == 1:
        return a
    return low.emit(arith.DivUIOp(low.as_value(a), low.as_value(b))).results[0]


def offsets_of(low: Lowerer, sizes: Sequence[Size]) -> list[Size]:
    """Prefix sums: where each of consecutive pieces of `sizes` starts."""
    out: list[Size] = []
    acc: Size = 0
    for n in sizes:
        out.append(acc)
        acc = add_sizes(low, acc, n)
    return out


def slice_range(low: Lowerer, dim: Size, start: int, end: int) -> tuple[Size, Size]:
    """`(offset, size)` of Paddle's slice `[start, end)` of a dimension of size `dim`:
    negative indices count from the end, both are clamped to `[0, dim]`, and an
    inverted range is empty (`slice_bounds`, at run time for a dynamic `dim`)."""
    if isinstance(dim, int):
        lo, hi = slice_bounds(dim, start, end)
        return lo, hi - lo

    def clamp(v: int) -> Size:
        return min_sizes(low, v, dim) if v >= 0 else sub_sizes(low, dim, min_sizes(low, -v, dim))

    lo, hi = clamp(start), clamp(end)
    return lo, sub_sizes(low, hi, min_sizes(low, lo, hi))


def _on_axis(rank: int, axis: int, value: Size) -> list[Size]:
    """Offsets that are `value` on `axis` and 0 elsewhere."""
    return [value if d == axis else 0 for d in range(rank)]


def _rank(v: SSAValue) -> int:
    return len(shape_of(v.type))


# ----------------------------------------------------------------------- views

VIEW_OPS = tuple(t for t in pd.ALL_OPS if getattr(t, "VIEW", False))
"""The ops the dialect declares `VIEW`: each is lowered to a view of operand 0."""


@lowers(*VIEW_OPS)
def _view(low: Lowerer, op: pd.PdOp) -> None:
    r = op.results[0]
    view = low.shape_view(low.read(op.operands[0]), low.sizes[r])
    if r in low.dest:
        low.copy_buffer(view, low.out(r))
    else:
        low.buf[r] = view


@result_sizes(pd.ReshapeOp)
def _reshape_size(low: Lowerer, op: pd.ReshapeOp, r: SSAValue, k: int) -> Size | None:
    x = low.sizes_of(op.operands[0])
    target = op.prop("shape")
    if target[k] == 0:
        return x[k]
    # The -1: all elements over the product of the other result dimensions.
    others = [x[i] if t == 0 else t for i, t in enumerate(target) if i != k]
    return div_sizes(low, low.mul_sizes(x), low.mul_sizes(others))


@result_sizes(pd.ReshapeAsOp)
def _reshape_as_size(low: Lowerer, op: pd.ReshapeAsOp, r: SSAValue, k: int) -> Size | None:
    return low.sizes_of(op.operands[1])[k]


@result_sizes(pd.SqueezeOp)
def _squeeze_size(low: Lowerer, op: pd.SqueezeOp, r: SSAValue, k: int) -> Size | None:
    x = op.operands[0]
    gone = squeezed_axes(shape_of(x.type), op.prop("axes"))
    kept = [i for i in range(_rank(x)) if i not in gone]
    return low.sizes_of(x)[kept[k]]


@result_sizes(pd.UnsqueezeOp)
def _unsqueeze_size(low: Lowerer, op: pd.UnsqueezeOp, r: SSAValue, k: int) -> Size | None:
    x = op.operands[0]
    marks = unsqueeze_positions(_rank(x), op.prop("axes"))
    return low.sizes_of(x)[sum(1 for new in marks[:k] if not new)]


# ------------------------------------------------------------ re-indexing ops


def _transpose_maps(op: pd.TransposeOp) -> list[DimMap | None]:
    """`transpose` reads input dimension `perm[k]` at result index `k`."""
    perm = permutation(op.prop("perm"), _rank(op.operands[0]))
    return [tuple(perm.index(j) for j in range(len(perm)))]


def _expand_maps(op: pd.ExpandOp | pd.ExpandAsOp) -> list[DimMap | None]:
    """`expand`/`expand_as` read their input right-aligned, static 1s broadcast; the
    `like` operand of `expand_as` gives only the shape."""
    x = shape_of(op.operands[0].type)
    out = result_shape(op)
    return [aligned_map(x, out, len(out) - len(x))] + [None] * (len(op.operands) - 1)


@pointwise(pd.TransposeOp, maps=_transpose_maps)
@pointwise(pd.ExpandOp, pd.ExpandAsOp, maps=_expand_maps)
def _reindex(s: Scalar, op: pd.PdOp, args: list[SSAValue]) -> list[SSAValue]:
    return [args[0]]


# ---------------------------------------------------------------------- slice


def _slice_ranges(low: Lowerer, op: pd.SliceOp) -> list[tuple[Size, Size]]:
    """`(offset, size)` per dimension of `pd.slice`'s operand."""
    sizes = low.sizes_of(op.operands[0])
    ranges: list[tuple[Size, Size]] = [(0, n) for n in sizes]
    for a, s, e in zip(op.prop("axes"), op.prop("starts"), op.prop("ends")):
        a %= len(sizes)
        ranges[a] = slice_range(low, sizes[a], s, e)
    return ranges


@lowers(pd.SliceOp)
def _slice(low: Lowerer, op: pd.SliceOp) -> None:
    ranges = _slice_ranges(low, op)
    r = op.results[0]
    copy_window(low, low.read(op.operands[0]), low.out(r), low.sizes[r], [lo for lo, _ in ranges])


@result_sizes(pd.SliceOp)
def _slice_size(low: Lowerer, op: pd.SliceOp, r: SSAValue, k: int) -> Size | None:
    return _slice_ranges(low, op)[k][1]


# ------------------------------------------------------------- split and concat

AxisOp = pd.SplitOp | pd.SplitAsOp | pd.ConcatOp


def _axis(op: AxisOp) -> int:
    return op.prop("axis") % _rank(op.operands[0])


def split_pieces(low: Lowerer, op: pd.SplitOp | pd.SplitAsOp) -> list[Size]:
    """Sizes of the pieces of `pd.split`/`pd.split_as` along their axis."""
    x, axis = op.operands[0], _axis(op)
    if isinstance(op, pd.SplitAsOp):
        return [low.sizes_of(like)[axis] for like in op.operands[1:]]
    dim = low.sizes_of(x)[axis]
    num, sections = op.prop("num"), op.prop("sections")
    static = split_sizes(dim if isinstance(dim, int) else DYN, num, sections, op.name)
    if DYN not in static:
        return list(static)
    if num:
        return [div_sizes(low, dim, num)] * num
    known = sum(n for n in sections if n != -1)
    return [sub_sizes(low, dim, known) if n == -1 else n for n in sections]


@lowers(pd.SplitOp, pd.SplitAsOp)
def _split(low: Lowerer, op: pd.SplitOp | pd.SplitAsOp) -> None:
    axis, x = _axis(op), op.operands[0]
    offsets = offsets_of(low, split_pieces(low, op))
    for r, off in zip(op.results, offsets):
        if low.needed(r):
            copy_window(low, low.read(x), low.out(r), low.sizes[r], _on_axis(_rank(x), axis, off))


@result_sizes(pd.SplitOp, pd.SplitAsOp)
def _split_size(low: Lowerer, op: pd.SplitOp | pd.SplitAsOp, r: SSAValue, k: int) -> Size | None:
    if k == _axis(op):
        return split_pieces(low, op)[list(op.results).index(r)]
    return low.sizes_of(op.operands[0])[k]


@lowers(pd.ConcatOp)
def _concat(low: Lowerer, op: pd.ConcatOp) -> None:
    axis, r = _axis(op), op.results[0]
    out = low.out(r)
    offsets = offsets_of(low, [low.sizes_of(x)[axis] for x in op.operands])
    for x, off in zip(op.operands, offsets):
        copy_window(low, low.read(x), out, low.sizes_of(x), dst_offsets=_on_axis(_rank(x), axis, off))


@result_sizes(pd.ConcatOp)
def _concat_size(low: Lowerer, op: pd.ConcatOp, r: SSAValue, k: int) -> Size | None:
    if k != _axis(op):
        return low.sizes_of(op.operands[0])[k]
    total: Size = 0
    for x in op.operands:
        total = add_sizes(low, total, low.sizes_of(x)[k])
    return total


# ------------------------------------------------------------------------- pad


@lowers(pd.PadOp)
def _pad(low: Lowerer, op: pd.PadOp) -> None:
    x, r = op.operands[0], op.results[0]
    out = low.out(r)
    low.fill(out, op.prop("value"))
    pairs = pad_pairs(op.prop("paddings"), _rank(x))
    copy_window(low, low.read(x), out, low.sizes_of(x), dst_offsets=[lo for lo, _ in pairs])


@result_sizes(pd.PadOp)
def _pad_size(low: Lowerer, op: pd.PadOp, r: SSAValue, k: int) -> Size | None:
    lo, hi = pad_pairs(op.prop("paddings"), _rank(op.operands[0]))[k]
    return add_sizes(low, low.sizes_of(op.operands[0])[k], lo + hi)


__all__ = [
    "VIEW_OPS",
    "add_sizes",
    "div_sizes",
    "min_sizes",
    "offsets_of",
    "slice_range",
    "split_pieces",
    "sub_sizes",
]
