"""Shape ops: reshape, transpose, concat, split, slice, pad, squeeze/unsqueeze, expand.

Every op moves elements around without arithmetic, so it accepts any dtype.  Shape
rules are written once, as the functions below, over shapes whose dimensions may be
`DYN` (`?`): the typing rules apply them to static types, and the interpreter kernels
apply the very same functions to the run-time shapes (where nothing is dynamic, so
every check becomes exact).

Three ops are pullback's own, not Paddle's: `reshape_as`, `split_as` and (as in
Paddle 2.x's API) `expand_as` take their target shape from *run-time* shapes of
`like` operands.  They exist so that VJP rules stay closed under differentiation
when a dimension is dynamic: the gradient of a reshape of `tensor<?x?x4xf32>` must be
reshaped back to a shape no attribute can spell.  VJP rules use the Paddle op when
the static types determine its attributes, and the `_as` op only otherwise.

```mlir
%f = pd.reshape %x {shape = array<i64: 0, -1>} : (tensor<?x3x4xf32>) -> tensor<?x12xf32>
%a, %b = pd.split %f {sections = array<i64: 4, -1>, axis = 1 : i64}
    : (tensor<?x12xf32>) -> (tensor<?x4xf32>, tensor<?x8xf32>)
```
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    TensorType,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from .base import (
    declare_complex,
    PureOp,
    tensor_type,
    DYN,
    MultiResultNames,
    PdOp,
    Shape,
    dims_compatible,
    elem_of,
    expect_operands,
    expect_same_elem,
    f64_attr,
    fmt_shape,
    i64_attr,
    ints_attr,
    shape_of,
)
from .reduction import merge_shapes

SLICE_END = 2**31 - 1
"""An `ends` entry meaning "to the end of the dimension" (Paddle's INT_MAX)."""

_FORMAT = "$x attr-dict `:` functional-type(operands, results)"

# --------------------------------------------------------------------- shape rules
# Each rule takes shapes with possibly dynamic (`DYN`) dimensions and raises a
# VerifyException naming `op` when the arguments cannot fit.


def _axis(axis: int, rank: int, op: str, what: str = "axis") -> int:
    """`axis` mapped into `[0, rank)`; negative axes count from the end."""
    if not -rank <= axis < rank:
        raise VerifyException(f"'{op}': {what} {axis} is out of range for rank {rank}")
    return axis % rank


def _axes(axes: Sequence[int], rank: int, op: str) -> list[int]:
    """Distinct axes mapped into `[0, rank)`."""
    norm = [_axis(a, rank, op) for a in axes]
    if len(set(norm)) != len(norm):
        raise VerifyException(f"'{op}': repeated axis in {list(axes)}")
    return norm


def reshaped_shape(x: Sequence[int], shape: Sequence[int], op: str = "pd.reshape") -> Shape:
    """Paddle's `reshape`: `0` copies the input dimension at the same index, one
    `-1` is inferred from the element count.

    The dimensions copied by `0` appear on both sides, so they cancel: the element
    counts are compared (and `-1` inferred) over the other dimensions, which keeps
    `[?, 3, 4] -> [0, -1]` static (`[?, 12]`) despite the dynamic batch.
    """
    if list(shape).count(-1) > 1:
        raise VerifyException(f"'{op}': at most one -1 is allowed in shape {list(shape)}")
    for i, s in enumerate(shape):
        if s < -1:
            raise VerifyException(f"'{op}': invalid dimension {s} in shape {list(shape)}")
        if s == 0 and i >= len(x):
            raise VerifyException(
                f"'{op}': shape {list(shape)} copies dimension {i} (a 0), "
                f"but the input {fmt_shape(x)} has rank {len(x)}"
            )
    out = [x[i] if s == 0 else s for i, s in enumerate(shape)]
    rest_in = [d for i, d in enumerate(x) if i >= len(shape) or shape[i] != 0]
    if DYN in rest_in:
        return tuple(DYN if s == -1 else d for s, d in zip(shape, out))
    n_in, n_out = math.prod(rest_in), math.prod(s for s in shape if s > 0)
    if -1 in shape:
        if n_out == 0 or n_in % n_out:
            raise VerifyException(
                f"'{op}': cannot reshape {fmt_shape(x)} to {list(shape)}: "
                f"{n_in} elements do not divide into groups of {n_out}"
            )
        out[list(shape).index(-1)] = n_in // n_out
    elif n_in != n_out:
        raise VerifyException(
            f"'{op}': cannot reshape {fmt_shape(x)} to {list(shape)}: "
            f"element counts differ ({n_in} vs {n_out})"
        )
    return tuple(out)


def permutation(perm: Sequence[int], rank: int, op: str = "pd.transpose") -> list[int]:
    """`perm` (negative entries count from the end) checked to permute `range(rank)`."""
    if len(perm) != rank:
        raise VerifyException(
            f"'{op}': perm {list(perm)} has {len(perm)} entries for an input of rank {rank}"
        )
    norm = [_axis(p, rank, op, "perm entry") for p in perm]
    if sorted(norm) != list(range(rank)):
        raise VerifyException(f"'{op}': perm {list(perm)} is not a permutation")
    return norm


def concat_shape(shapes: Sequence[Sequence[int]], axis: int, op: str = "pd.concat") -> Shape:
    """Shapes joined along `axis`; the other dimensions must agree."""
    rank = len(shapes[0])
    ax = _axis(axis, rank, op)
    for s in shapes[1:]:
        if len(s) != rank or not all(
            dims_compatible(a, b) for i, (a, b) in enumerate(zip(shapes[0], s)) if i != ax
        ):
            raise VerifyException(
                f"'{op}': operand shapes {fmt_shape(shapes[0])} and {fmt_shape(s)} "
                f"differ outside axis {axis}"
            )
    sizes = [s[ax] for s in shapes]
    out = list(merge_shapes(shapes))
    out[ax] = DYN if DYN in sizes else sum(sizes)
    return tuple(out)


def split_sizes(dim: int, num: int, sections: Sequence[int], op: str = "pd.split") -> list[int]:
    """The sizes of `split`'s pieces along a dimension of size `dim`: `num` equal
    pieces, or the given `sections` (one of them may be -1: the rest)."""
    if (num > 0) == bool(sections):
        raise VerifyException(f"'{op}': give either num > 0 or sections, not both or neither")
    if num < 0:
        raise VerifyException(f"'{op}': num must not be negative, got {num}")
    if num:
        if dim == DYN:
            return [DYN] * num
        if dim % num:
            raise VerifyException(f"'{op}': dimension of size {dim} does not split into {num} pieces")
        return [dim // num] * num
    if list(sections).count(-1) > 1 or any(s < -1 for s in sections):
        raise VerifyException(f"'{op}': invalid sections {list(sections)} (one -1 at most)")
    known = sum(s for s in sections if s != -1)
    if dim == DYN:
        return [DYN if s == -1 else s for s in sections]
    if -1 in sections:
        if known > dim:
            raise VerifyException(f"'{op}': sections {list(sections)} exceed the dimension size {dim}")
        return [dim - known if s == -1 else s for s in sections]
    if known != dim:
        raise VerifyException(
            f"'{op}': sections {list(sections)} add up to {known}, not to the dimension size {dim}"
        )
    return list(sections)


def slice_bounds(dim: int, start: int, end: int) -> tuple[int, int]:
    """Paddle's slice of a static dimension: negative indices count from the end,
    both are clamped into `[0, dim]`, and an empty range gives `(start, start)`."""
    s = min(max(start + dim if start < 0 else start, 0), dim)
    e = min(max(end + dim if end < 0 else end, 0), dim)
    return s, max(s, e)


def sliced_shape(
    x: Sequence[int],
    axes: Sequence[int],
    starts: Sequence[int],
    ends: Sequence[int],
    op: str = "pd.slice",
) -> Shape:
    """The shape after slicing `axes` to `[starts, ends)` (dynamic stays dynamic)."""
    if not len(axes) == len(starts) == len(ends):
        raise VerifyException(
            f"'{op}': axes, starts and ends differ in length "
            f"({len(axes)}, {len(starts)}, {len(ends)})"
        )
    out = list(x)
    for a, s, e in zip(_axes(axes, len(x), op), starts, ends):
        if x[a] != DYN:
            lo, hi = slice_bounds(x[a], s, e)
            out[a] = hi - lo
    return tuple(out)


def pad_pairs(paddings: Sequence[int], rank: int, op: str = "pd.pad") -> list[tuple[int, int]]:
    """`paddings` (`[before_0, after_0, before_1, ...]`) as one pair per dimension."""
    if len(paddings) != 2 * rank or any(p < 0 for p in paddings):
        raise VerifyException(
            f"'{op}': paddings {list(paddings)} must be {2 * rank} non-negative "
            f"integers (before/after per dimension) for rank {rank}"
        )
    return [(paddings[2 * i], paddings[2 * i + 1]) for i in range(rank)]


def padded_shape(x: Sequence[int], paddings: Sequence[int], op: str = "pd.pad") -> Shape:
    """The shape after padding (dynamic stays dynamic)."""
    pairs = pad_pairs(paddings, len(x), op)
    return tuple(DYN if d == DYN else d + b + a for d, (b, a) in zip(x, pairs))


def squeezed_axes(x: Sequence[int], axes: Sequence[int], op: str = "pd.squeeze") -> list[int]:
    """The axes `squeeze` removes, decided by the *static* type as Paddle's compile
    time does: with no axes, every dimension of static size 1; otherwise the listed
    axes of size 1 or `?` (a `?` must then be 1 at run time).  A listed axis of
    another static size stays, as in Paddle."""
    if not axes:
        return [i for i, d in enumerate(x) if d == 1]
    norm = sorted({_axis(a, len(x), op) for a in axes})
    return [a for a in norm if x[a] in (1, DYN)]


def unsqueeze_positions(rank: int, axes: Sequence[int], op: str = "pd.unsqueeze") -> list[bool]:
    """Which result dimensions `unsqueeze` inserts (True) after inserting a 1 at each
    axis in turn, each counted in the shape built so far (Paddle's rule)."""
    marks = [False] * rank
    for a in axes:
        cur = len(marks)
        pos = a + cur + 1 if a < 0 else a
        if not 0 <= pos <= cur:
            raise VerifyException(f"'{op}': axis {a} is out of range for rank {cur}")
        marks.insert(pos, True)
    return marks


def unsqueezed_shape(x: Sequence[int], axes: Sequence[int], op: str = "pd.unsqueeze") -> Shape:
    """The shape with size-1 dimensions inserted at `axes`."""
    dims = iter(x)
    return tuple(1 if new else next(dims) for new in unsqueeze_positions(len(x), axes, op))


def broadcast_to_shape(x: Sequence[int], target: Sequence[int], op: str) -> Shape:
    """`x` broadcast to `target` (right-aligned; `target` may hold `?`).

    A dimension of `x` expands only if it is 1; otherwise it must match.  The result
    keeps whatever is known: a `?` in `target` facing a static `n != 1` of `x` is `n`.
    """
    if len(target) < len(x):
        raise VerifyException(
            f"'{op}': cannot broadcast {fmt_shape(x)} to the lower rank {fmt_shape(target)}"
        )
    lead = len(target) - len(x)
    out = list(target[:lead])
    for i, (d, t) in enumerate(zip(x, target[lead:])):
        if d != 1 and not dims_compatible(d, t):
            raise VerifyException(
                f"'{op}': cannot broadcast dimension {i} of {fmt_shape(x)} "
                f"(size {d}) to {t} in {fmt_shape(target)}"
            )
        out.append(t if t != DYN or d == 1 else d)
    return tuple(out)


def expand_target(x: Sequence[int], shape: Sequence[int], op: str = "pd.expand") -> list[int]:
    """`expand`'s `shape` with each -1 replaced by the input dimension it keeps."""
    lead = len(shape) - len(x)
    for i, t in enumerate(shape):
        if t == 0 or t < -1 or (t == -1 and i < lead):
            raise VerifyException(
                f"'{op}': invalid target dimension {t} at index {i} of {list(shape)} "
                "(positive, or -1 to keep an existing dimension)"
            )
    return [x[i - lead] if t == -1 else t for i, t in enumerate(shape)]


# ----------------------------------------------------------------------------- ops


class _ShapeOp(PureOp):
    """Shared definition of the one-input, one-result shape ops."""

    x = operand_def(TensorType)
    assembly_format = _FORMAT


def _like(operand_types: Sequence[Attribute], shape: Sequence[int]) -> list[Attribute]:
    """The single result type: the first operand's dtype with `shape`."""
    return [tensor_type(elem_of(operand_types[0]), list(shape))]


def _pieces(operand_types: Sequence[Attribute], axis: int, sizes: Sequence[int]) -> list[Attribute]:
    """The result types of a split: the first operand cut along `axis` into `sizes`."""
    x = shape_of(operand_types[0])
    return [_like(operand_types, x[:axis] + (n,) + x[axis + 1 :])[0] for n in sizes]


@irdl_op_definition
class ReshapeOp(_ShapeOp):
    """Reshape to `shape` (`paddle.reshape`, Paddle's `reshape2`): `0` copies the
    input dimension at that index, one `-1` is inferred.

    ```mlir
    %y = pd.reshape %x {shape = array<i64: 0, -1>} : (tensor<?x3x4xf32>) -> tensor<?x12xf32>
    ```
    """

    name = "pd.reshape"
    VIEW: ClassVar[bool] = True
    shape = prop_def(DenseArrayBase)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        return _like(operand_types, reshaped_shape(shape_of(operand_types[0]), props["shape"]))


@irdl_op_definition
class ReshapeAsOp(PureOp):
    """Reshape `x` to the run-time shape of `like` (whose values are not read).

    pullback's own op: the VJP of a reshape whose input has several dynamic
    dimensions, which no `shape` attribute can express.

    ```mlir
    %y = pd.reshape_as %g, %x : (tensor<?x12xf32>, tensor<?x?x4xf32>) -> tensor<?x?x4xf32>
    ```
    """

    name = "pd.reshape_as"
    VIEW: ClassVar[bool] = True
    x = operand_def(TensorType)
    like = operand_def(TensorType)
    assembly_format = "$x `,` $like attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        expect_operands(cls.name, operand_types, 2)
        x, like = (shape_of(t) for t in operand_types)
        if DYN not in x + like and math.prod(x) != math.prod(like):
            raise VerifyException(
                f"'{cls.name}': cannot reshape {fmt_shape(x)} ({math.prod(x)} elements) "
                f"like {fmt_shape(like)} ({math.prod(like)} elements)"
            )
        return _like(operand_types, like)


@irdl_op_definition
class TransposeOp(_ShapeOp):
    """Permute dimensions: result dimension `i` is input dimension `perm[i]`
    (`paddle.transpose`, Paddle's `transpose2`).

    ```mlir
    %y = pd.transpose %x {perm = array<i64: 1, 0>} : (tensor<?x3xf32>) -> tensor<3x?xf32>
    ```
    """

    POINTWISE: ClassVar[bool] = True

    name = "pd.transpose"
    perm = prop_def(DenseArrayBase)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        x = shape_of(operand_types[0])
        return _like(operand_types, [x[p] for p in permutation(props["perm"], len(x))])


@irdl_op_definition
class ConcatOp(PureOp):
    """Join tensors of one dtype along `axis` (`paddle.concat`).

    ```mlir
    %y = pd.concat %a, %b {axis = 1 : i64} : (tensor<?x2xf32>, tensor<?x3xf32>) -> tensor<?x5xf32>
    ```
    """

    name = "pd.concat"
    xs = var_operand_def(TensorType)
    axis = prop_def(IntegerAttr, default_value=i64_attr(0))
    assembly_format = "$xs attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        if not operand_types:
            raise VerifyException(f"'{cls.name}': needs at least one operand")
        expect_same_elem(cls.name, operand_types)
        return _like(operand_types, concat_shape([shape_of(t) for t in operand_types], props["axis"]))


@irdl_op_definition
class SplitOp(PdOp, MultiResultNames):
    """Split along `axis` into `num` equal pieces or pieces of sizes `sections`
    (one of which may be -1) (`paddle.split`).

    ```mlir
    %a, %b = pd.split %x {num = 2 : i64, axis = 1 : i64} : (tensor<?x4xf32>) -> (tensor<?x2xf32>, tensor<?x2xf32>)
    ```
    """

    name = "pd.split"
    x = operand_def(TensorType)
    num = prop_def(IntegerAttr, default_value=i64_attr(0))
    sections = prop_def(DenseArrayBase, default_value=ints_attr([]))
    axis = prop_def(IntegerAttr, default_value=i64_attr(0))
    names = opt_prop_def(ArrayAttr)
    outs = var_result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _FORMAT

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        x = shape_of(operand_types[0])
        ax = _axis(props["axis"], len(x), cls.name)
        sizes = split_sizes(x[ax], props["num"], props["sections"], cls.name)
        return _pieces(operand_types, ax, sizes)


@irdl_op_definition
class SplitAsOp(PdOp, MultiResultNames):
    """Split `x` along `axis` into pieces as long as each `like` operand is along
    that axis at run time (their values are not read).

    pullback's own op: the VJP of a concat of several operands with a dynamic
    size along the axis, which no `sections` attribute can express.

    ```mlir
    %ga, %gb = pd.split_as %g, %a, %b {axis = 0 : i64}
        : (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>)
    ```
    """

    name = "pd.split_as"
    x = operand_def(TensorType)
    likes = var_operand_def(TensorType)
    axis = prop_def(IntegerAttr, default_value=i64_attr(0))
    names = opt_prop_def(ArrayAttr)
    outs = var_result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$x `,` $likes attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        if len(operand_types) < 2:
            raise VerifyException(f"'{cls.name}': needs x and at least one like operand")
        x = shape_of(operand_types[0])
        ax = _axis(props["axis"], len(x), cls.name)
        likes = [shape_of(t) for t in operand_types[1:]]
        if any(len(s) != len(x) for s in likes):
            raise VerifyException(
                f"'{cls.name}': like operands must have the rank of x {fmt_shape(x)}, got "
                + ", ".join(fmt_shape(s) for s in likes)
            )
        sizes = [s[ax] for s in likes]
        if DYN not in sizes and x[ax] != DYN and sum(sizes) != x[ax]:
            raise VerifyException(
                f"'{cls.name}': pieces of sizes {sizes} do not add up to dimension "
                f"{ax} of {fmt_shape(x)}"
            )
        return _pieces(operand_types, ax, sizes)


@irdl_op_definition
class SliceOp(_ShapeOp):
    """Take `[starts[i], ends[i])` along each of `axes` (`paddle.slice`): negative
    indices count from the end and out-of-range ones are clamped, as in Paddle.

    ```mlir
    %y = pd.slice %x {axes = array<i64: 1>, starts = array<i64: 1>, ends = array<i64: -1>}
        : (tensor<?x5xf32>) -> tensor<?x3xf32>
    ```
    """

    name = "pd.slice"
    axes = prop_def(DenseArrayBase)
    starts = prop_def(DenseArrayBase)
    ends = prop_def(DenseArrayBase)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        x = shape_of(operand_types[0])
        return _like(operand_types, sliced_shape(x, props["axes"], props["starts"], props["ends"]))


@irdl_op_definition
class PadOp(_ShapeOp):
    """Constant padding: `paddings = [before_0, after_0, before_1, after_1, ...]`,
    one non-negative pair per dimension, filled with `value` (Paddle's `pad`).

    ```mlir
    %y = pd.pad %x {paddings = array<i64: 0, 0, 1, 2>, value = 0.0 : f64}
        : (tensor<?x3xf32>) -> tensor<?x6xf32>
    ```
    """

    name = "pd.pad"
    paddings = prop_def(DenseArrayBase)
    value = prop_def(FloatAttr, default_value=f64_attr(0.0))

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        return _like(operand_types, padded_shape(shape_of(operand_types[0]), props["paddings"]))


@irdl_op_definition
class SqueezeOp(_ShapeOp):
    """Remove size-1 dimensions (`paddle.squeeze`, Paddle's `squeeze2`): all of
    them when `axes` is empty, else those of `axes` (see `squeezed_axes`).

    ```mlir
    %y = pd.squeeze %x {axes = array<i64: -1>} : (tensor<?x1xf32>) -> tensor<?xf32>
    ```
    """

    name = "pd.squeeze"
    VIEW: ClassVar[bool] = True
    axes = prop_def(DenseArrayBase, default_value=ints_attr([]))

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        x = shape_of(operand_types[0])
        gone = squeezed_axes(x, props["axes"])
        return _like(operand_types, [d for i, d in enumerate(x) if i not in gone])


@irdl_op_definition
class UnsqueezeOp(_ShapeOp):
    """Insert size-1 dimensions at `axes`, one after the other (`paddle.unsqueeze`,
    Paddle's `unsqueeze2`).

    ```mlir
    %y = pd.unsqueeze %x {axes = array<i64: 0, -1>} : (tensor<?xf32>) -> tensor<1x?x1xf32>
    ```
    """

    name = "pd.unsqueeze"
    VIEW: ClassVar[bool] = True
    axes = prop_def(DenseArrayBase)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        return _like(operand_types, unsqueezed_shape(shape_of(operand_types[0]), props["axes"]))


@irdl_op_definition
class ExpandOp(_ShapeOp):
    """Broadcast to `shape` (`paddle.expand`/`broadcast_to`, Paddle's `expand_v2`):
    new dimensions are prepended, a -1 keeps the input dimension, and only size-1
    dimensions expand.

    A dynamic input dimension facing a static target is taken to equal it (not to
    be broadcast), which the interpreter checks at run time: the gradient rule
    relies on the static types to know which dimensions were broadcast.

    ```mlir
    %y = pd.expand %x {shape = array<i64: 4, -1, 3>} : (tensor<?x1xf32>) -> tensor<4x?x3xf32>
    ```
    """

    POINTWISE: ClassVar[bool] = True

    name = "pd.expand"
    shape = prop_def(DenseArrayBase)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        x = shape_of(operand_types[0])
        return _like(operand_types, broadcast_to_shape(x, expand_target(x, props["shape"]), cls.name))


@irdl_op_definition
class ExpandAsOp(PureOp):
    """Broadcast `x` to the run-time shape of `y`, whose values are not read
    (`paddle.expand_as`, Paddle's `expand_as_v2`).  The same static-type rule as
    `pd.expand` decides which dimensions are broadcast.

    ```mlir
    %y = pd.expand_as %b, %x : (tensor<1x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
    ```
    """

    POINTWISE: ClassVar[bool] = True

    name = "pd.expand_as"
    x = operand_def(TensorType)
    y = operand_def(TensorType)
    assembly_format = "$x `,` $y attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        expect_operands(cls.name, operand_types, 2)
        x, y = (shape_of(t) for t in operand_types)
        return _like(operand_types, broadcast_to_shape(x, y, cls.name))


SHAPE_OPS: list[type[PdOp]] = [
    ReshapeOp,
    ReshapeAsOp,
    TransposeOp,
    ConcatOp,
    SplitOp,
    SplitAsOp,
    SliceOp,
    PadOp,
    SqueezeOp,
    UnsqueezeOp,
    ExpandOp,
    ExpandAsOp,
]

__all__ = [
    "SHAPE_OPS",
    "SLICE_END",
    "ConcatOp",
    "ExpandAsOp",
    "ExpandOp",
    "PadOp",
    "ReshapeAsOp",
    "ReshapeOp",
    "SliceOp",
    "SplitAsOp",
    "SplitOp",
    "SqueezeOp",
    "TransposeOp",
    "UnsqueezeOp",
]


# Data movement: any dtype, complex included (their VJP rules are data movement too).
declare_complex(ReshapeOp, ReshapeAsOp, TransposeOp, ConcatOp, SplitOp, SplitAsOp, SliceOp, PadOp, SqueezeOp, UnsqueezeOp, ExpandOp, ExpandAsOp)
