"""`convert-pd-to-linalg` rules for the shape ops.

* `reshape`, `reshape_as`, `squeeze`, `unsqueeze` only reinterpret a dense row-major
  buffer: they lower to a `memref.reinterpret_cast` view of their operand's buffer,
  no copy (a copy only when the result must land in a buffer of its own: a fetched
  or persisted value).
* `transpose`, `expand`, `expand_as` read their operand through projection maps:
  they are entries of the elementwise table (`lowering/scalar.py`), so they fuse
  into their readers like any elementwise op.
* `slice`, `split`, `split_as`, `concat`, `pad` copy rectangular windows at offsets,
  which projection maps cannot express: each window is one `scf.parallel` copy
  (`lowering/loop_nest.py`), innermost dimension contiguous in both buffers.

Dynamic sizes and offsets (a slice of a dynamic dimension, the `-1` of a reshape) are
computed with unsigned index arithmetic only (`addi`, `subi`, `divui`, `minui`):
values that are never negative, and ops the GPU host runtime also interprets.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Operation, SSAValue

from pullback.dialects.pd.base import DYN, shape_of
from pullback.dialects.pd.shape import (
    pad_pairs,
    slice_bounds,
    split_sizes,
    squeezed_axes,
    unsqueeze_positions,
)
from pullback.lowering.convert_pd_to_linalg import SIZE_RULES, VIEW_OPS, Lowerer, Size, rule
from pullback.lowering.loop_nest import load, parallel, store
from pullback.lowering.scalar import Scalar, prop

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


# -------------------------------------------------------------- window copies


def copy_window(
    low: Lowerer,
    src: SSAValue,
    dst: SSAValue,
    sizes: Sequence[Size],
    src_offsets: Sequence[Size] = (),
    dst_offsets: Sequence[Size] = (),
) -> None:
    """`dst[i + dst_offsets] = src[i + src_offsets]` for `i` in `sizes` (buffers)."""
    low.note_read(src)
    low.note_read(dst)
    rank = len(sizes)
    src_off = list(src_offsets) or [0] * rank
    dst_off = list(dst_offsets) or [0] * rank

    def shifted(s: Scalar, ivs: list[SSAValue], offsets: Sequence[Size]) -> list[SSAValue]:
        # Offsets are index values of the entry function, or constants.
        return [
            iv if off == 0 else s.add(iv, off if isinstance(off, SSAValue) else s.const(off, IndexType()))
            for iv, off in zip(ivs, offsets)
        ]

    def body(s: Scalar, ivs: list[SSAValue]) -> None:
        store(s, load(s, src, shifted(s, ivs, src_off)), dst, shifted(s, ivs, dst_off))

    parallel(low, sizes, body)


def _on_axis(rank: int, axis: int, value: Size) -> list[Size]:
    """Offsets that are `value` on `axis` and 0 elsewhere."""
    return [value if d == axis else 0 for d in range(rank)]


def _rank(v: SSAValue) -> int:
    return len(shape_of(v.type))


# ----------------------------------------------------------------------- views

@rule(*VIEW_OPS)
def _view(low: Lowerer, op: Operation) -> None:
    r = op.results[0]
    view = low.shape_view(low.read(op.operands[0]), low.sizes[r])
    if r in low.dest:
        low.copy_buffer(view, low.out(r))
    else:
        low.buf[r] = view


def _reshape_size(low: Lowerer, op: Operation, r: SSAValue, k: int) -> Size | None:
    x = low.sizes_of(op.operands[0])
    target = list(prop(op, "shape"))  # type: ignore[arg-type]
    if target[k] == 0:
        return x[k]
    # The -1: all elements over the product of the other result dimensions.
    others = [x[i] if t == 0 else t for i, t in enumerate(target) if i != k]
    return div_sizes(low, low.mul_sizes(x), low.mul_sizes(others))


def _reshape_as_size(low: Lowerer, op: Operation, r: SSAValue, k: int) -> Size | None:
    return low.sizes_of(op.operands[1])[k]


def _squeeze_size(low: Lowerer, op: Operation, r: SSAValue, k: int) -> Size | None:
    x = op.operands[0]
    gone = squeezed_axes(shape_of(x.type), list(prop(op, "axes", [])))  # type: ignore[arg-type]
    kept = [i for i in range(_rank(x)) if i not in gone]
    return low.sizes_of(x)[kept[k]]


def _unsqueeze_size(low: Lowerer, op: Operation, r: SSAValue, k: int) -> Size | None:
    x = op.operands[0]
    marks = unsqueeze_positions(_rank(x), list(prop(op, "axes")))  # type: ignore[arg-type]
    return low.sizes_of(x)[sum(1 for new in marks[:k] if not new)]


SIZE_RULES.update(
    {
        "pd.reshape": _reshape_size,
        "pd.reshape_as": _reshape_as_size,
        "pd.squeeze": _squeeze_size,
        "pd.unsqueeze": _unsqueeze_size,
    }
)


# ---------------------------------------------------------------------- slice


def _slice_ranges(low: Lowerer, op: Operation) -> list[tuple[Size, Size]]:
    """`(offset, size)` per dimension of `pd.slice`'s operand."""
    x = op.operands[0]
    sizes = low.sizes_of(x)
    ranges: list[tuple[Size, Size]] = [(0, n) for n in sizes]
    for a, s, e in zip(prop(op, "axes"), prop(op, "starts"), prop(op, "ends")):  # type: ignore[call-overload]
        a %= len(sizes)
        ranges[a] = slice_range(low, sizes[a], s, e)
    return ranges


@rule("pd.slice")
def _slice(low: Lowerer, op: Operation) -> None:
    ranges = _slice_ranges(low, op)
    r = op.results[0]
    copy_window(low, low.read(op.operands[0]), low.out(r), low.sizes[r], [lo for lo, _ in ranges])


SIZE_RULES["pd.slice"] = lambda low, op, r, k: _slice_ranges(low, op)[k][1]


# ------------------------------------------------------------- split and concat


def _axis(op: Operation) -> int:
    return int(prop(op, "axis", 0)) % _rank(op.operands[0])  # type: ignore[arg-type]


def split_pieces(low: Lowerer, op: Operation) -> list[Size]:
    """Sizes of the pieces of `pd.split`/`pd.split_as` along their axis."""
    x, axis = op.operands[0], _axis(op)
    if op.name == "pd.split_as":
        return [low.sizes_of(like)[axis] for like in op.operands[1:]]
    dim = low.sizes_of(x)[axis]
    num, sections = int(prop(op, "num", 0)), list(prop(op, "sections", []))  # type: ignore[arg-type]
    static = split_sizes(dim if isinstance(dim, int) else DYN, num, sections, op.name)
    if DYN not in static:
        return list(static)
    if num:
        return [div_sizes(low, dim, num)] * num
    known = sum(n for n in sections if n != -1)
    return [sub_sizes(low, dim, known) if n == -1 else n for n in sections]


@rule("pd.split", "pd.split_as")
def _split(low: Lowerer, op: Operation) -> None:
    axis, x = _axis(op), op.operands[0]
    offsets = offsets_of(low, split_pieces(low, op))
    for r, off in zip(op.results, offsets):
        if low.needed(r):
            copy_window(low, low.read(x), low.out(r), low.sizes[r], _on_axis(_rank(x), axis, off))


def _split_size(low: Lowerer, op: Operation, r: SSAValue, k: int) -> Size | None:
    if k == _axis(op):
        return split_pieces(low, op)[r.index]  # type: ignore[attr-defined]
    return low.sizes_of(op.operands[0])[k]


@rule("pd.concat")
def _concat(low: Lowerer, op: Operation) -> None:
    axis, r = _axis(op), op.results[0]
    out = low.out(r)
    offsets = offsets_of(low, [low.sizes_of(x)[axis] for x in op.operands])
    for x, off in zip(op.operands, offsets):
        copy_window(low, low.read(x), out, low.sizes_of(x), dst_offsets=_on_axis(_rank(x), axis, off))


def _concat_size(low: Lowerer, op: Operation, r: SSAValue, k: int) -> Size | None:
    if k != _axis(op):
        return low.sizes_of(op.operands[0])[k]
    total: Size = 0
    for x in op.operands:
        total = add_sizes(low, total, low.sizes_of(x)[k])
    return total


SIZE_RULES.update({"pd.split": _split_size, "pd.split_as": _split_size, "pd.concat": _concat_size})


# ------------------------------------------------------------------------- pad


@rule("pd.pad")
def _pad(low: Lowerer, op: Operation) -> None:
    x, r = op.operands[0], op.results[0]
    out = low.out(r)
    low.fill(out, float(prop(op, "value", 0.0)))  # type: ignore[arg-type]
    pairs = pad_pairs(list(prop(op, "paddings")), _rank(x))  # type: ignore[arg-type]
    copy_window(low, low.read(x), out, low.sizes_of(x), dst_offsets=[lo for lo, _ in pairs])


def _pad_size(low: Lowerer, op: Operation, r: SSAValue, k: int) -> Size | None:
    lo, hi = pad_pairs(list(prop(op, "paddings")), _rank(op.operands[0]))[k]  # type: ignore[arg-type]
    return add_sizes(low, low.sizes_of(op.operands[0])[k], lo + hi)


SIZE_RULES["pd.pad"] = _pad_size

__all__ = [
    "add_sizes",
    "copy_window",
    "div_sizes",
    "min_sizes",
    "offsets_of",
    "slice_range",
    "split_pieces",
    "sub_sizes",
]
