"""VJP rules of the shape ops: each moves the gradient back the way the op moved
the elements, with shape ops only, so second derivatives come for free.

    reshape / reshape_as -> reshape back        transpose -> inverse transpose
    concat -> split (split_as)                  split / split_as -> concat
    slice -> pad (concat of zero slices)        pad -> slice
    squeeze -> unsqueeze                        unsqueeze -> squeeze
    expand / expand_as -> reduce_sum over the broadcast axes

Attributes of the backward op are read off the forward op's static types.  Where a
dynamic dimension makes them unknowable, the rule switches to an op that takes the
shape from a forward value at run time: `reshape_as` (a forward input with several
`?`), `split_as` (concat of several operands of dynamic length along the axis), or
zeros sliced from `fill_any_like(x)` (slice of a dynamic dimension).  The gradients
may carry static dimensions where the operand's type says `?` (e.g. after squeezing
a `?` that the kernel checks to be 1); such types are refinements of the operand's.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue

from pullback.dialects import pd
from pullback.dialects.pd.base import DYN, shape_of
from pullback.dialects.pd.shape import (
    SLICE_END,
    pad_pairs,
    permutation,
    slice_bounds,
    squeezed_axes,
    unsqueeze_positions,
)
from pullback.passes.vjp import vjp
from pullback.passes.vjp.builder import VjpBuilder

Grads = list["SSAValue | None"]


def reshape_like(b: VjpBuilder, g: SSAValue, like: SSAValue) -> SSAValue:
    """`g` reshaped to `like`'s run-time shape: a Paddle `reshape` when `like` has at
    most one `?` (a -1 recovers it), else `reshape_as`."""
    target = [-1 if d == DYN else d for d in shape_of(like.type)]
    if target.count(-1) <= 1:
        return b.emit(pd.ReshapeOp, g, shape=target)
    return b.emit(pd.ReshapeAsOp, g, like)


def _rank(v: SSAValue) -> int:
    return len(shape_of(v.type))


@vjp(pd.ReshapeOp, pd.ReshapeAsOp)
def reshape_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """g reshaped back to x; `like` gets nothing (only its shape is read)."""
    (g,) = grads
    assert g is not None
    x = op.operands[0]
    return [reshape_like(b, g, x)] + [None] * (len(op.operands) - 1)


@vjp(pd.TransposeOp)
def transpose_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """g transposed by the inverse permutation."""
    (g,) = grads
    assert g is not None and isinstance(op, pd.TransposeOp)
    perm = permutation(op.prop("perm"), _rank(op.x))
    return [b.emit(pd.TransposeOp, g, perm=[perm.index(i) for i in range(len(perm))])]


@vjp(pd.ConcatOp)
def concat_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """g split into pieces as long as the operands: `split` with their sizes as
    sections (one `?` becomes -1), `split_as` when several are dynamic."""
    (g,) = grads
    assert g is not None
    xs = list(op.operands)
    if len(xs) == 1:
        return [g]
    axis = op.prop("axis") % _rank(xs[0])
    sizes = [shape_of(x.type)[axis] for x in xs]
    if sizes.count(DYN) <= 1:
        sections = [-1 if n == DYN else n for n in sizes]
        return b.emit_multi(pd.SplitOp, g, sections=sections, axis=axis)
    return b.emit_multi(pd.SplitAsOp, g, *xs, axis=axis)


@vjp(pd.SplitOp, pd.SplitAsOp)
def split_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """The pieces' gradients concatenated back (zeros for pieces without one)."""
    parts = [g if g is not None else b.full_like(r, 0.0) for g, r in zip(grads, op.results)]
    gx = parts[0] if len(parts) == 1 else b.emit(pd.ConcatOp, *parts, axis=op.prop("axis"))
    return [gx] + [None] * (len(op.operands) - 1)


@vjp(pd.SliceOp)
def slice_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """g padded with zeros back to x's shape: one `pad` when the sliced dimensions
    are static, else `unslice` with run-time shapes."""
    (g,) = grads
    assert g is not None and isinstance(op, pd.SliceOp)
    x = shape_of(op.x.type)
    axes = [a % len(x) for a in op.prop("axes")]
    starts, ends = op.prop("starts"), op.prop("ends")
    if any(x[a] == DYN for a in axes):
        return [unslice(b, g, op.x, axes, starts, ends)]
    paddings = [0] * (2 * len(x))
    for a, s, e in zip(axes, starts, ends):
        lo, hi = slice_bounds(x[a], s, e)
        paddings[2 * a : 2 * a + 2] = [lo, x[a] - hi]
    return [b.emit(pd.PadOp, g, paddings=paddings)]


def unslice(
    b: VjpBuilder,
    g: SSAValue,
    x: SSAValue,
    axes: Sequence[int],
    starts: Sequence[int],
    ends: Sequence[int],
) -> SSAValue:
    """Embed `g = slice(x)` in zeros shaped like `x` at run time.

    Axis by axis, `g` is framed by the zeros before and after the slice, cut from
    `zeros_like(x)` with the very same start/end (so Paddle's negative indices and
    clamping resolve identically) and sliced like `g` on the axes still to do.
    An empty forward slice (end before start) is not framed correctly; its
    gradient is empty anyway.
    """
    zeros = b.full_like(x, 0.0)
    for i, (a, s, e) in enumerate(zip(axes, starts, ends)):
        later = {"axes": list(axes[i + 1 :]), "starts": list(starts[i + 1 :]), "ends": list(ends[i + 1 :])}
        z = b.emit(pd.SliceOp, zeros, **later) if later["axes"] else zeros
        pieces = [g]
        if s != 0:
            pieces.insert(0, b.emit(pd.SliceOp, z, axes=[a], starts=[0], ends=[s]))
        if e < SLICE_END:
            pieces.append(b.emit(pd.SliceOp, z, axes=[a], starts=[e], ends=[SLICE_END]))
        if len(pieces) > 1:
            g = b.emit(pd.ConcatOp, *pieces, axis=a)
    return g


@vjp(pd.PadOp)
def pad_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """The padded-in region cut off again: a slice of the padded axes."""
    (g,) = grads
    assert g is not None and isinstance(op, pd.PadOp)
    pairs = pad_pairs(op.prop("paddings"), _rank(op.x))
    axes = [i for i, (lo, hi) in enumerate(pairs) if lo or hi]
    if not axes:
        return [g]
    starts = [pairs[a][0] for a in axes]
    ends = [-pairs[a][1] if pairs[a][1] else SLICE_END for a in axes]
    return [b.emit(pd.SliceOp, g, axes=axes, starts=starts, ends=ends)]


@vjp(pd.SqueezeOp)
def squeeze_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """The removed size-1 axes put back (ascending, so each lands where it was)."""
    (g,) = grads
    assert g is not None and isinstance(op, pd.SqueezeOp)
    gone = squeezed_axes(shape_of(op.x.type), op.prop("axes"))
    return [b.emit(pd.UnsqueezeOp, g, axes=gone) if gone else g]


@vjp(pd.UnsqueezeOp)
def unsqueeze_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """The inserted axes squeezed away by their positions in the result."""
    (g,) = grads
    assert g is not None and isinstance(op, pd.UnsqueezeOp)
    marks = unsqueeze_positions(_rank(op.x), op.prop("axes"))
    added = [i for i, new in enumerate(marks) if new]
    return [b.emit(pd.SqueezeOp, g, axes=added) if added else g]


@vjp(pd.ExpandOp, pd.ExpandAsOp)
def expand_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """g summed over the broadcast axes (prepended ones and static 1s of x);
    `expand_as`'s `y` gets nothing (only its shape is read)."""
    (g,) = grads
    assert g is not None
    x = op.operands[0]
    return [b.unbroadcast(g, x)] + [None] * (len(op.operands) - 1)
