"""Neural-network ops: matmul, embedding, convolution, pooling, layer norm, dropout,
and the few dedicated gradient ops their VJPs need (each differentiable in turn).

```mlir
%y = pd.matmul %x, %w : (tensor<?x13xf32>, tensor<13x1xf32>) -> tensor<?x1xf32>
%e = pd.lookup_table %ids, %table {padding_idx = 0 : i64} : (tensor<?x5xi64>, tensor<100x8xf32>) -> tensor<?x5x8xf32>
%c = pd.conv2d %img, %filter {strides = array<i64: 2, 2>, paddings = array<i64: 1, 1>} : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x4x4xf32>
%p = pd.pool2d %c {pooling_type = "max", ksize = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<?x4x4x4xf32>) -> tensor<?x4x2x2xf32>
```

Layouts are Paddle's NCHW. Spatial windows follow Paddle's `UpdatePaddingAndDilation`:
`paddings` is `[p_h, p_w]` or `[top, bottom, left, right]`, `padding_algorithm` is
`"EXPLICIT"` (use `paddings`), `"VALID"` (no padding) or `"SAME"` (output size
`ceil(in / stride)`, the padding split with the smaller half first, dilation 1).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    BoolAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from .base import (
    declare_complex,
    DYN,
    Domain,
    INT_TYPES,
    MultiResultNames,
    PdOp,
    PureOp,
    bool_attr,
    broadcast_shapes,
    dims_compatible,
    elem_of,
    expect_float,
    expect_rank,
    expect_same_elem,
    f64_attr,
    fmt_shape,
    i64_attr,
    ints_attr,
    shape_of,
    tensor_type,
)

_FORMAT = "operands attr-dict `:` functional-type(operands, results)"
PADDING_ALGORITHMS = ("EXPLICIT", "SAME", "VALID")


# ------------------------------------------------------------------ window geometry


def pair(op: str, what: str, values: Sequence[int], minimum: int) -> tuple[int, int]:
    """Check a `[h, w]` property (every entry at least `minimum`) and return it."""
    if len(values) != 2 or any(v < minimum for v in values):
        raise VerifyException(
            f"'{op}': {what} must be 2 integers >= {minimum}, got {list(values)}"
        )
    return values[0], values[1]


def explicit_pads(op: str, paddings: Sequence[int]) -> tuple[int, int, int, int]:
    """`[p_h, p_w]` or `[top, bottom, left, right]` as `(top, bottom, left, right)`."""
    if len(paddings) == 2:
        paddings = [paddings[0], paddings[0], paddings[1], paddings[1]]
    if len(paddings) != 4 or any(p < 0 for p in paddings):
        raise VerifyException(
            f"'{op}': paddings must be 2 or 4 non-negative integers, got {list(paddings)}"
        )
    t, b, l, r = paddings
    return t, b, l, r


def resolve_window(
    algorithm: str, pads: tuple[int, int], size: int, k: int, s: int, d: int
) -> tuple[int, int, int]:
    """`(pad_before, pad_after, dilation)` of one spatial dimension of static `size`
    under Paddle's padding algorithm (`SAME` resets the dilation to 1)."""
    if algorithm == "SAME":
        out = -(-size // s)
        total = max((out - 1) * s + k - size, 0)
        return total // 2, total - total // 2, 1
    if algorithm == "VALID":
        return 0, 0, d
    return pads[0], pads[1], d


def conv_out_dim(size: int, k: int, s: int, p0: int, p1: int, d: int) -> int:
    """Paddle's `ConvOutputSize`: `(size + p0 + p1 - (d*(k-1)+1)) // s + 1`."""
    return (size + p0 + p1 - (d * (k - 1) + 1)) // s + 1


@dataclass(frozen=True)
class ConvWindow:
    """A convolution window resolved for static spatial sizes: what the interpreter
    kernels, the lowering and (through it) the GPU path all compute with."""

    pads: tuple[tuple[int, int], tuple[int, int]]
    """`((top, bottom), (left, right))` after the padding algorithm."""
    strides: tuple[int, int]
    dilations: tuple[int, int]
    """Dilations after the padding algorithm (`SAME` resets them to 1)."""


def _check_algorithm(op: str, algorithm: str) -> None:
    if algorithm not in PADDING_ALGORITHMS:
        raise VerifyException(
            f"'{op}': padding_algorithm must be one of {list(PADDING_ALGORITHMS)}, "
            f"got '{algorithm}'"
        )


# --------------------------------------------------------------------------- matmul


@irdl_op_definition
class MatmulOp(PureOp):
    """`paddle.matmul` (Paddle's `matmul_v2`): batched matrix product with numpy-style
    batch broadcasting, optional transposes of the last two dimensions, and 1-D vector
    operands (a leading/trailing 1 is inserted and removed again, as numpy does;
    the transpose flag of a 1-D operand is ignored).

    ```mlir
    %y = pd.matmul %x, %w {transpose_y = true} : (tensor<2x?x4x3xf32>, tensor<5x3xf32>) -> tensor<2x?x4x5xf32>
    ```
    """

    name = "pd.matmul"
    x = operand_def(TensorType)
    y = operand_def(TensorType)
    transpose_x = prop_def(BoolAttr, default_value=bool_attr(False))
    transpose_y = prop_def(BoolAttr, default_value=bool_attr(False))
    assembly_format = "$x `,` $y attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, ty = operand_types
        elem = expect_same_elem(cls.name, [tx, ty])
        xs, ys = list(shape_of(tx)), list(shape_of(ty))
        if not xs or not ys:
            raise VerifyException("'pd.matmul': operands must have rank >= 1")
        x_vec, y_vec = len(xs) == 1, len(ys) == 1
        if x_vec:
            xs = [1] + xs
        elif props["transpose_x"]:
            xs[-2], xs[-1] = xs[-1], xs[-2]
        if y_vec:
            ys = ys + [1]
        elif props["transpose_y"]:
            ys[-2], ys[-1] = ys[-1], ys[-2]
        if not dims_compatible(xs[-1], ys[-2]):
            raise VerifyException(
                f"'pd.matmul': contraction dimensions differ: x {fmt_shape(shape_of(tx))} "
                f"and y {fmt_shape(shape_of(ty))} (transpose_x={props['transpose_x']}, "
                f"transpose_y={props['transpose_y']})"
            )
        batch = broadcast_shapes(xs[:-2], ys[:-2], op=cls.name)
        out = list(batch)
        if not x_vec:
            out.append(xs[-2])
        if not y_vec:
            out.append(ys[-1])
        return [tensor_type(elem, out)]


@irdl_op_definition
class LinearOp(PureOp):
    """Paddle's fused dygraph `linear` (`_C_ops.linear`): `x @ weight + bias` for x of
    rank >= 2 (`[*, K]`), weight `[K, N]` and a 1-D bias `[N]`, giving `[*, N]`.

    Eager `paddle.nn.functional.linear` records this one op where a static program
    appends Paddle's `matmul_v2` and `elementwise_add` (their op types are part of a
    saved program); the VJP is written with `pd.matmul` and `pd.reduce_sum`.

    ```mlir
    %y = pd.linear %x, %w, %b : (tensor<?x13xf32>, tensor<13x5xf32>, tensor<5xf32>) -> tensor<?x5xf32>
    ```
    """

    name = "pd.linear"
    x = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = operand_def(TensorType)
    assembly_format = "$x `,` $weight `,` $bias attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, tw, tb = operand_types
        elem = expect_same_elem(cls.name, [tx, tw, tb])
        expect_float(cls.name, "x", tx)
        xs = shape_of(tx)
        if len(xs) < 2:
            raise VerifyException(f"'pd.linear': x must have rank >= 2, got {fmt_shape(xs)}")
        ws = expect_rank(cls.name, "weight", tw, 2)
        bs = expect_rank(cls.name, "bias", tb, 1)
        if not dims_compatible(xs[-1], ws[0]):
            raise VerifyException(
                f"'pd.linear': x {fmt_shape(xs)} has {xs[-1]} features but weight "
                f"{fmt_shape(ws)} expects {ws[0]}"
            )
        if not dims_compatible(bs[0], ws[1]):
            raise VerifyException(
                f"'pd.linear': bias {fmt_shape(bs)} does not match weight {fmt_shape(ws)}'s "
                f"{ws[1]} output features"
            )
        return [tensor_type(elem, [*xs[:-1], ws[1]])]


# ------------------------------------------------------------------------ embedding


def _expect_ids(op: str, t: Attribute) -> None:
    if elem_of(t) not in INT_TYPES:
        raise VerifyException(f"'{op}': ids must be int32 or int64, got {t}")


def _check_padding_idx(op: str, padding_idx: int | None, rows: int) -> None:
    if padding_idx is not None and rows != DYN and not -rows <= padding_idx < rows:
        raise VerifyException(
            f"'{op}': padding_idx {padding_idx} is out of range for {rows} rows"
        )


@irdl_op_definition
class LookupTableOp(PureOp):
    """Embedding lookup, `out[i..., :] = w[ids[i...], :]` (`paddle.nn.functional.embedding`).

    Paddle 2.x semantics (its `lookup_table_v2` op): ids of any shape, the result
    shape is `ids.shape + [D]` (the legacy fluid op's trailing `1` in ids is not
    required). Rows looked up with `padding_idx` (negative: counted from the end,
    `V + padding_idx`) give zeros and receive no gradient.

    ```mlir
    %e = pd.lookup_table %ids, %w {padding_idx = -1 : i64} : (tensor<?x4xi64>, tensor<10x3xf32>) -> tensor<?x4x3xf32>
    ```
    """

    name = "pd.lookup_table"
    ids = operand_def(TensorType)
    w = operand_def(TensorType)
    padding_idx = opt_prop_def(IntegerAttr)
    assembly_format = "$ids `,` $w attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tids, tw = operand_types
        _expect_ids(cls.name, tids)
        expect_float(cls.name, "w", tw)
        rows, dim = expect_rank(cls.name, "w", tw, 2)
        _check_padding_idx(cls.name, props["padding_idx"], rows)
        return [tensor_type(elem_of(tw), [*shape_of(tids), dim])]


@irdl_op_definition
class LookupTableGradOp(PureOp):
    """Scatter-add of embedding gradients into a `[num_rows, D]` table:
    `out[r] = sum of grad[i...] over ids[i...] == r`, zero for the `padding_idx` row.

    It is the VJP of `pd.lookup_table` w.r.t. the table; its own VJP w.r.t. `grad`
    is `pd.lookup_table` again (the pair is closed under differentiation).

    ```mlir
    %dw = pd.lookup_table_grad %ids, %g {num_rows = 10 : i64} : (tensor<?x4xi64>, tensor<?x4x3xf32>) -> tensor<10x3xf32>
    ```
    """

    name = "pd.lookup_table_grad"
    ids = operand_def(TensorType)
    grad = operand_def(TensorType)
    num_rows = prop_def(IntegerAttr)
    padding_idx = opt_prop_def(IntegerAttr)
    assembly_format = "$ids `,` $grad attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tids, tg = operand_types
        _expect_ids(cls.name, tids)
        expect_float(cls.name, "grad", tg)
        ids, gs = shape_of(tids), shape_of(tg)
        rows = props["num_rows"]
        if rows < 1:
            raise VerifyException(f"'{cls.name}': num_rows must be positive, got {rows}")
        if len(gs) != len(ids) + 1 or not all(
            dims_compatible(a, b) for a, b in zip(ids, gs)
        ):
            raise VerifyException(
                f"'{cls.name}': grad shape {fmt_shape(gs)} must be ids shape "
                f"{fmt_shape(ids)} plus the embedding dimension"
            )
        _check_padding_idx(cls.name, props["padding_idx"], rows)
        return [tensor_type(elem_of(tg), [rows, gs[-1]])]


# ---------------------------------------------------------------------- convolution


class ConvWindowOp(PureOp):
    """Shared properties and geometry of `conv2d` and its gradient ops (NCHW)."""

    strides = prop_def(DenseArrayBase, default_value=ints_attr([1, 1]))
    paddings = prop_def(DenseArrayBase, default_value=ints_attr([0, 0]))
    dilations = prop_def(DenseArrayBase, default_value=ints_attr([1, 1]))
    groups = prop_def(IntegerAttr, default_value=i64_attr(1))
    padding_algorithm = prop_def(StringAttr, default_value=StringAttr("EXPLICIT"))
    assembly_format = _FORMAT

    @classmethod
    def check_window(cls, props: Mapping[str, Any]) -> None:
        """Validate the window properties (shapes aside)."""
        pair(cls.name, "strides", props["strides"], 1)
        pair(cls.name, "dilations", props["dilations"], 1)
        explicit_pads(cls.name, props["paddings"])
        _check_algorithm(cls.name, props["padding_algorithm"])
        if props["groups"] < 1:
            raise VerifyException(f"'{cls.name}': groups must be positive, got {props['groups']}")

    @classmethod
    def conv_out(cls, props: Mapping[str, Any], hw: Sequence[int], khw: Sequence[int]) -> list[int]:
        """Spatial output size of the forward convolution of an `hw` input
        (`DYN` where unknown); raises when the window does not fit."""
        t, b, l, r = explicit_pads(cls.name, props["paddings"])
        out = []
        for size, k, s, d, pads in zip(hw, khw, props["strides"], props["dilations"], [(t, b), (l, r)]):
            if size == DYN or k == DYN:
                out.append(DYN)
                continue
            p0, p1, d = resolve_window(props["padding_algorithm"], pads, size, k, s, d)
            o = conv_out_dim(size, k, s, p0, p1, d)
            if o < 1:
                raise VerifyException(
                    f"'{cls.name}': the {k}-wide window (dilation {d}) does not fit an "
                    f"input of size {size} with paddings ({p0}, {p1})"
                )
            out.append(o)
        return out

    def window(self, hw: Sequence[int], khw: Sequence[int]) -> ConvWindow:
        """The window of this op over a static `hw` input with `khw` filter taps (the
        padding algorithm applied to the input's spatial size)."""
        t, b, l, r = explicit_pads(self.name, self.prop("paddings"))
        algo, strides, dils = self.prop("padding_algorithm"), self.prop("strides"), self.prop("dilations")
        h = resolve_window(algo, (t, b), hw[0], khw[0], strides[0], dils[0])
        w = resolve_window(algo, (l, r), hw[1], khw[1], strides[1], dils[1])
        return ConvWindow((h[:2], w[:2]), (strides[0], strides[1]), (h[2], w[2]))

    @classmethod
    def check_channels(cls, op_what: str, channels: int, per_group: int, groups: int) -> None:
        """`channels == groups * per_group` where both are known."""
        if channels != DYN and per_group != DYN and channels != groups * per_group:
            raise VerifyException(
                f"'{cls.name}': {op_what} has {channels} channels, but the filter expects "
                f"groups ({groups}) x {per_group}"
            )


@irdl_op_definition
class Conv2DOp(ConvWindowOp):
    """2-D convolution (cross-correlation) of an NCHW input with an `[O, C/groups, kh, kw]`
    filter (`paddle.nn.functional.conv2d` without bias).

    ```mlir
    %y = pd.conv2d %x, %w {paddings = array<i64: 1, 1>, groups = 2 : i64} : (tensor<?x4x5x5xf32>, tensor<6x2x3x3xf32>) -> tensor<?x6x5x5xf32>
    ```
    """

    name = "pd.conv2d"
    input = operand_def(TensorType)
    filter = operand_def(TensorType)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, tw = operand_types
        elem = expect_same_elem(cls.name, [tx, tw])
        expect_float(cls.name, "input", tx)
        n, c, h, w = expect_rank(cls.name, "input", tx, 4)
        o, cg, kh, kw = expect_rank(cls.name, "filter", tw, 4)
        cls.check_window(props)
        g = props["groups"]
        cls.check_channels("input", c, cg, g)
        if o != DYN and o % g:
            raise VerifyException(
                f"'{cls.name}': filter count {o} is not divisible by groups ({g})"
            )
        return [tensor_type(elem, [n, o, *cls.conv_out(props, (h, w), (kh, kw))])]


@irdl_op_definition
class Conv2DTransposeOp(ConvWindowOp):
    """Transposed 2-D convolution (`paddle.nn.functional.conv2d_transpose`): the
    adjoint of `pd.conv2d` in its input. The filter is `[C_in, C_out/groups, kh, kw]`;
    the output size is `(in-1)*stride - pad_before - pad_after + dilation*(k-1) + 1`
    plus `output_padding` (each `< max(stride, dilation)`), or `output_size` when given
    (which must lie in `[that size, that size + stride)`). `SAME` pads are computed
    from this op's input size, as Paddle does.

    ```mlir
    %dx = pd.conv2d_transpose %g, %w {strides = array<i64: 2, 2>, output_size = array<i64: 8, 8>} : (tensor<?x4x4x4xf32>, tensor<4x3x3x3xf32>) -> tensor<?x3x8x8xf32>
    ```
    """

    name = "pd.conv2d_transpose"
    input = operand_def(TensorType)
    filter = operand_def(TensorType)
    output_padding = prop_def(DenseArrayBase, default_value=ints_attr([]))
    output_size = prop_def(DenseArrayBase, default_value=ints_attr([]))

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, tw = operand_types
        elem = expect_same_elem(cls.name, [tx, tw])
        expect_float(cls.name, "input", tx)
        n, c, h, w = expect_rank(cls.name, "input", tx, 4)
        ci, cog, kh, kw = expect_rank(cls.name, "filter", tw, 4)
        cls.check_window(props)
        g = props["groups"]
        if not dims_compatible(c, ci):
            raise VerifyException(
                f"'{cls.name}': input has {c} channels, but the filter expects {ci}"
            )
        strides, dilations = props["strides"], props["dilations"]
        extra = props["output_padding"]
        if extra:
            pair(cls.name, "output_padding", extra, 0)
            if any(e >= max(s, d) for e, s, d in zip(extra, strides, dilations)):
                raise VerifyException(
                    f"'{cls.name}': output_padding {list(extra)} must be smaller than "
                    f"max(stride, dilation)"
                )
        sizes = props["output_size"]
        if sizes:
            pair(cls.name, "output_size", sizes, 1)
        t, b, l, r = explicit_pads(cls.name, props["paddings"])
        out = []
        for i, (size, k, pads) in enumerate(zip((h, w), (kh, kw), [(t, b), (l, r)])):
            s = strides[i]
            if size == DYN or k == DYN:
                out.append(sizes[i] if sizes else DYN)
                continue
            p0, p1, d = resolve_window(props["padding_algorithm"], pads, size, k, s, dilations[i])
            base = (size - 1) * s - p0 - p1 + d * (k - 1) + 1
            if sizes:
                if not base <= sizes[i] < base + s:
                    raise VerifyException(
                        f"'{cls.name}': output_size {list(sizes)} is not reachable: "
                        f"dimension {i} must lie in [{base}, {base + s})"
                    )
                out.append(sizes[i])
            else:
                out.append(base + (extra[i] if extra else 0))
            if out[-1] < 1:
                raise VerifyException(f"'{cls.name}': empty output (dimension {i})")
        co = cog if cog == DYN else cog * g
        return [tensor_type(elem, [n, co, *out])]


@irdl_op_definition
class Conv2DFilterGradOp(ConvWindowOp):
    """The gradient of `pd.conv2d` w.r.t. its filter: given the forward `input`
    `[N, C, H, W]` and the output gradient `[N, O, Ho, Wo]`, the `[O, C/groups, kh, kw]`
    correlation `sum_{n,y,x} grad[n,o,y,x] * input_padded[n, c, y*s + i*d, x*s + j*d]`.
    The window properties are those of the forward conv (`SAME` pads computed from
    the input); `filter_size` gives `[kh, kw]`. Bilinear in its operands, so its VJPs
    are `pd.conv2d` and `pd.conv2d_transpose`.

    ```mlir
    %dw = pd.conv2d_filter_grad %x, %g {filter_size = array<i64: 3, 3>} : (tensor<?x3x8x8xf32>, tensor<?x4x6x6xf32>) -> tensor<4x3x3x3xf32>
    ```
    """

    name = "pd.conv2d_filter_grad"
    input = operand_def(TensorType)
    grad = operand_def(TensorType)
    filter_size = prop_def(DenseArrayBase)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, tg = operand_types
        elem = expect_same_elem(cls.name, [tx, tg])
        expect_float(cls.name, "input", tx)
        n, c, h, w = expect_rank(cls.name, "input", tx, 4)
        gn, o, gh, gw = expect_rank(cls.name, "grad", tg, 4)
        cls.check_window(props)
        kh, kw = pair(cls.name, "filter_size", props["filter_size"], 1)
        g = props["groups"]
        want = cls.conv_out(props, (h, w), (kh, kw))
        if not all(dims_compatible(a, b) for a, b in zip([n, *want], [gn, gh, gw])):
            raise VerifyException(
                f"'{cls.name}': grad shape {fmt_shape(shape_of(tg))} does not match the "
                f"conv output {fmt_shape([n, o, *want])}"
            )
        for what, ch in (("input", c), ("grad", o)):
            if ch != DYN and ch % g:
                raise VerifyException(
                    f"'{cls.name}': {what} channels {ch} are not divisible by groups ({g})"
                )
        return [tensor_type(elem, [o, c if c == DYN else c // g, kh, kw])]


# -------------------------------------------------------------------------- pooling


class PoolWindowOp(PureOp):
    """Shared properties and geometry of `pool2d` and `pool2d_grad` (NCHW).

    Windows start at `i*stride - pad_top` and are clipped to the input; `ceil_mode`
    rounds the output size up. Average pooling divides by the clipped window size
    when `exclusive` (or `adaptive`), else by the window clipped to the input
    *padded by the top (left) padding on both sides*: Paddle's CPU kernel keeps
    only the top/left paddings for the window geometry, so neither a larger
    bottom/right padding nor a `ceil_mode` overhang counts (see `window`).
    `global_pooling` pools the whole plane; `adaptive` reads `ksize` as the output
    size, with windows `[floor(i*H/oh), ceil((i+1)*H/oh))`.
    """

    pooling_type = prop_def(StringAttr, default_value=StringAttr("max"))
    ksize = prop_def(DenseArrayBase)
    strides = prop_def(DenseArrayBase, default_value=ints_attr([1, 1]))
    paddings = prop_def(DenseArrayBase, default_value=ints_attr([0, 0]))
    global_pooling = prop_def(BoolAttr, default_value=bool_attr(False))
    ceil_mode = prop_def(BoolAttr, default_value=bool_attr(False))
    exclusive = prop_def(BoolAttr, default_value=bool_attr(True))
    adaptive = prop_def(BoolAttr, default_value=bool_attr(False))
    padding_algorithm = prop_def(StringAttr, default_value=StringAttr("EXPLICIT"))
    assembly_format = _FORMAT

    @classmethod
    def pool_out(cls, props: Mapping[str, Any], x: Attribute) -> list[int]:
        """The `[N, C, oh, ow]` output shape of pooling a tensor of type `x`."""
        expect_float(cls.name, "x", x)
        n, c, h, w = expect_rank(cls.name, "x", x, 4)
        if props["pooling_type"] not in ("max", "avg"):
            raise VerifyException(
                f"'{cls.name}': pooling_type must be 'max' or 'avg', got "
                f"'{props['pooling_type']}'"
            )
        ks = pair(cls.name, "ksize", props["ksize"], 1)
        strides = pair(cls.name, "strides", props["strides"], 1)
        t, b, l, r = explicit_pads(cls.name, props["paddings"])
        _check_algorithm(cls.name, props["padding_algorithm"])
        if props["global_pooling"]:
            return [n, c, 1, 1]
        if props["adaptive"]:
            return [n, c, *ks]
        out = []
        for size, k, s, pads in zip((h, w), ks, strides, [(t, b), (l, r)]):
            if size == DYN:
                out.append(DYN)
                continue
            p0, p1, _ = resolve_window(props["padding_algorithm"], pads, size, k, s, 1)
            span = size + p0 + p1 - k + (s - 1 if props["ceil_mode"] else 0)
            if size + p0 + p1 < k:
                raise VerifyException(
                    f"'{cls.name}': ksize {list(ks)} is larger than the padded input "
                    f"{fmt_shape([h, w])}"
                )
            out.append(span // s + 1)
        return [n, c, *out]

    def mode(self) -> str:
        """`global` (the whole plane), `adaptive` (`ksize` is the output size) or
        `window` (strided, padded windows clipped to the input)."""
        if self.prop("global_pooling"):
            return "global"
        return "adaptive" if self.prop("adaptive") else "window"

    @staticmethod
    def window(i: int, size: int, k: int, stride: int, pad: int) -> tuple[int, int, int]:
        """Output index `i`'s window along one spatial axis of a strided, padded
        pooling: `(lo, hi, span)`, the input range `[lo, hi)` it reads and the
        divisor factor of non-exclusive average pooling, `span = min(start + k,
        size + pad) - start` with `start = i*stride - pad` (Paddle's Pool2dFunctor
        on CPU; `pad` is the top/left padding)."""
        start = i * stride - pad
        end = min(start + k, size + pad)
        return max(start, 0), min(end, size), end - start

    def pads_before(self, hw: Sequence[int]) -> tuple[int, int]:
        """`(top, left)`: where window 0 starts before the input, per spatial axis of a
        static `hw` input (the padding algorithm applied; windows start at
        `i*stride - pad`)."""
        t, b, l, r = explicit_pads(self.name, self.prop("paddings"))
        algo, ks, strides = self.prop("padding_algorithm"), self.prop("ksize"), self.prop("strides")
        top = resolve_window(algo, (t, b), hw[0], ks[0], strides[0], 1)[0]
        left = resolve_window(algo, (l, r), hw[1], ks[1], strides[1], 1)[0]
        return top, left


@irdl_op_definition
class Pool2DOp(PoolWindowOp):
    """2-D max or average pooling (`paddle.nn.functional.max_pool2d/avg_pool2d`,
    `fluid.layers.pool2d`, `adaptive_avg_pool2d`).

    ```mlir
    %p = pd.pool2d %x {pooling_type = "avg", ksize = array<i64: 3, 3>, strides = array<i64: 2, 2>, ceil_mode = true} : (tensor<?x2x6x6xf32>) -> tensor<?x2x3x3xf32>
    ```
    """

    name = "pd.pool2d"
    x = operand_def(TensorType)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        return [tensor_type(elem_of(tx), cls.pool_out(props, tx))]


@irdl_op_definition
class Pool2DGradOp(PoolWindowOp):
    """The gradient of `pd.pool2d` w.r.t. its input, given the forward input `x` and
    the output gradient: max pooling routes each gradient to the first maximum of its
    window (row-major, as Paddle), average pooling spreads it over the window divided
    by the same count as the forward op. Linear in `grad`.

    ```mlir
    %dx = pd.pool2d_grad %x, %g {ksize = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<?x2x4x4xf32>, tensor<?x2x2x2xf32>) -> tensor<?x2x4x4xf32>
    ```
    """

    name = "pd.pool2d_grad"
    x = operand_def(TensorType)
    grad = operand_def(TensorType)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, tg = operand_types
        expect_same_elem(cls.name, [tx, tg])
        want = cls.pool_out(props, tx)
        gs = shape_of(tg)
        if len(gs) != 4 or not all(dims_compatible(a, b) for a, b in zip(want, gs)):
            raise VerifyException(
                f"'{cls.name}': grad shape {fmt_shape(gs)} does not match the pooling "
                f"output {fmt_shape(want)}"
            )
        return [tx]


# ------------------------------------------------------------------------ layer norm


@irdl_op_definition
class LayerNormOp(PureOp):
    """Layer normalization over the dimensions from `begin_norm_axis` on:
    `y = (x - mean) / sqrt(var + epsilon) * scale + bias` with the biased variance.

    `params` is `[]`, `[scale]` or `[scale, bias]`, each 1-D of size
    `prod(x.shape[begin_norm_axis:])` (Paddle's layout); a bias without a scale is
    expressed with a scale of ones. Paddle's Mean/Variance outputs are not produced.

    ```mlir
    %y = pd.layer_norm %x, %scale, %bias {begin_norm_axis = 1 : i64} : (tensor<?x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
    ```
    """

    name = "pd.layer_norm"
    x = operand_def(TensorType)
    params = var_operand_def(TensorType)
    begin_norm_axis = prop_def(IntegerAttr, default_value=i64_attr(1))
    epsilon = prop_def(FloatAttr, default_value=f64_attr(1e-5))
    assembly_format = _FORMAT

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, *params = operand_types
        if len(params) > 2:
            raise VerifyException(
                f"'{cls.name}': expected x, scale and bias at most, got {len(operand_types)} operands"
            )
        expect_float(cls.name, "x", tx)
        expect_same_elem(cls.name, operand_types)
        xs = shape_of(tx)
        axis = props["begin_norm_axis"]
        if not 0 <= axis < len(xs):
            raise VerifyException(
                f"'{cls.name}': begin_norm_axis {axis} is out of range for rank {len(xs)}"
            )
        if props["epsilon"] < 0:
            raise VerifyException(f"'{cls.name}': epsilon must be non-negative")
        tail = xs[axis:]
        size = DYN if DYN in tail else math.prod(tail)
        for what, t in zip(("scale", "bias"), params):
            (n,) = expect_rank(cls.name, what, t, 1)
            if not dims_compatible(n, size):
                raise VerifyException(
                    f"'{cls.name}': {what} has {n} elements, but x {fmt_shape(xs)} "
                    f"normalizes {size} from axis {axis}"
                )
        return [tx]


# ------------------------------------------------------------------------ batch norm

BATCH_NORM_LAYOUTS = ("NCHW", "NHWC")


@irdl_op_definition
class BatchNormOp(PdOp, MultiResultNames):
    """Batch normalization with Paddle's `batch_norm` operator conventions.

    Operands (Paddle's order): `x` of rank 2 to 5, and the per-channel `scale`,
    `bias`, running `mean` and running `variance`, each 1-D of the channel count
    (`x.shape[1]` for `data_layout = "NCHW"`, `x.shape[-1]` for `"NHWC"`; a 2-D `x`
    is `[N, C]` either way). Results: `y`, `mean_out`, `variance_out`,
    `saved_mean`, `saved_variance`.

    The statistics are global (running) when `use_global_stats`, or when `is_test`
    and not `trainable_statistics`; otherwise they are the batch's, over every axis
    but the channel (`M = N * spatial` values each):

        mu = sum(x) / M,   var = sum((x - mu)^2) / M          (biased, as Paddle)
        y  = (x - mu) / sqrt(var + epsilon) * scale + bias
        mean_out     = momentum * mean + (1 - momentum) * mu      (Paddle's direction:
        variance_out = momentum * variance + (1 - momentum) * var  momentum weighs the past)
        saved_mean = mu,  saved_variance = 1 / sqrt(var + epsilon)  (the inverse std)

    With global statistics `y` uses `mean`/`variance`, `mean_out`/`variance_out`
    equal them (nothing is updated), and the saved results hold the mean and inverse
    std that were used (Paddle leaves them unspecified there). With batch
    statistics and a single value per channel (`M == 1`) Paddle's kernel returns
    `y = x`, leaves the statistics alone and saves zeros; so does this op. Paddle
    names `mean_out`/`variance_out` after the running statistics, which is how the
    executor writes them back to the scope.

    ```mlir
    %y, %m, %v, %sm, %sv = pd.batch_norm %x, %scale, %bias, %mean, %var {momentum = 0.9 : f64} : (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<?x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
    ```
    """

    name = "pd.batch_norm"
    DOMAIN: ClassVar[Mapping[str, Domain]] = {"variance": Domain(0.0, lo_closed=True)}
    x = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    mean = operand_def(TensorType)
    variance = operand_def(TensorType)
    momentum = prop_def(FloatAttr, default_value=f64_attr(0.9))
    epsilon = prop_def(FloatAttr, default_value=f64_attr(1e-5))
    data_layout = prop_def(StringAttr, default_value=StringAttr("NCHW"))
    is_test = prop_def(BoolAttr, default_value=bool_attr(False))
    use_global_stats = prop_def(BoolAttr, default_value=bool_attr(False))
    trainable_statistics = prop_def(BoolAttr, default_value=bool_attr(False))
    names = opt_prop_def(ArrayAttr)
    y = result_def(TensorType)
    mean_out = result_def(TensorType)
    variance_out = result_def(TensorType)
    saved_mean = result_def(TensorType)
    saved_variance = result_def(TensorType)
    traits = traits_def(Pure())
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = _FORMAT

    def global_stats(self) -> bool:
        """Whether `y` is normalized with the running statistics (Paddle's rule:
        `use_global_stats or (is_test and not trainable_statistics)`)."""
        return bool(self.prop("use_global_stats")) or (
            bool(self.prop("is_test")) and not self.prop("trainable_statistics")
        )

    def channel_axis(self) -> int:
        """The axis of `x` holding the channels."""
        rank = len(shape_of(self.x.type))
        return 1 if self.prop("data_layout") == "NCHW" or rank == 2 else rank - 1

    def reduced_axes(self) -> list[int]:
        """The axes the batch statistics reduce over (all but the channel)."""
        rank, c = len(shape_of(self.x.type)), self.channel_axis()
        return [a for a in range(rank) if a != c]

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, *params = operand_types
        expect_float(cls.name, "x", tx)
        expect_same_elem(cls.name, operand_types)
        xs = expect_rank(cls.name, "x", tx, 2, 3, 4, 5)
        layout = props["data_layout"]
        if layout not in BATCH_NORM_LAYOUTS:
            raise VerifyException(
                f"'{cls.name}': data_layout must be one of {list(BATCH_NORM_LAYOUTS)}, "
                f"got '{layout}'"
            )
        if props["epsilon"] < 0:
            raise VerifyException(f"'{cls.name}': epsilon must be non-negative")
        if not 0.0 <= props["momentum"] <= 1.0:
            raise VerifyException(
                f"'{cls.name}': momentum must be in [0, 1], got {props['momentum']}"
            )
        c = xs[1] if layout == "NCHW" or len(xs) == 2 else xs[-1]
        for what, t in zip(("scale", "bias", "mean", "variance"), params):
            (n,) = expect_rank(cls.name, what, t, 1)
            if not dims_compatible(n, c):
                raise VerifyException(
                    f"'{cls.name}': {what} has {n} elements, but x {fmt_shape(xs)} has "
                    f"{'?' if c == DYN else c} channels ({layout})"
                )
        vec = tensor_type(elem_of(tx), [c if c != DYN else shape_of(params[0])[0]])
        return [tx, vec, vec, vec, vec]


# --------------------------------------------------------------------------- dropout

DROPOUT_IMPLEMENTATIONS = ("downgrade_in_infer", "upscale_in_train")

SPLITMIX_GAMMA = 0x9E3779B97F4A7C15
"""splitmix64's increment: element `i` of the dropout mask hashes `seed + (i+1)*GAMMA`."""
SPLITMIX_MIX = ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB))
"""splitmix64's finalizer: for each `(shift, multiplier)`, `z = (z ^ (z >> shift)) * multiplier`."""
SPLITMIX_LAST_SHIFT = 31
"""The finalizer ends with `z ^= z >> 31`."""
DROPOUT_BITS = 24
"""The top 24 bits of the hash are the uniform `u = (z >> 40) * 2**-24` (exact in float32)."""


def dropout_threshold(p: float) -> int:
    """The keep test `u >= p` as an integer test on the top `DROPOUT_BITS` bits:
    `(z >> (64 - DROPOUT_BITS)) >= ceil(p * 2**DROPOUT_BITS)`, exactly."""
    return math.ceil(p * 2.0**DROPOUT_BITS)


@irdl_op_definition
class DropoutOp(PureOp):
    """Dropout with a deterministic, counter-based mask (`paddle.nn.functional.dropout`).

    Element `i` (row-major flat index) is kept when `u(seed, i) >= dropout_prob`, with
    `u` a splitmix64 hash of `(seed, i)` mapped to 24-bit uniforms (the constants
    `SPLITMIX_*` and `DROPOUT_BITS` above, used by the interpreter kernel and the
    lowering alike), so that compiled backends reproduce the mask
    bit for bit. Training: `x * keep` (`downgrade_in_infer`) or `x * keep / (1 - p)`
    (`upscale_in_train`, zero when `p == 1`). `is_test`: `x * (1 - p)` or `x`.
    The op is linear in `x`, so its VJP is the same op applied to the gradient.

    The seed is the `seed` property, or — taking precedence, like Paddle's `Seed`
    input — the value of the optional one-element integer operand `seed_tensor`.
    Eager mode passes each call's seed as that operand, so the op (and every
    backward plan built from it) is the same from step to step while the mask
    changes.  Unlike Paddle, a static program's mask does not change between runs.

    ```mlir
    %y = pd.dropout %x {dropout_prob = 0.25 : f64, seed = 7 : i64, dropout_implementation = "upscale_in_train"} : (tensor<?x8xf32>) -> tensor<?x8xf32>
    %z = pd.dropout %x, %s {dropout_prob = 0.5 : f64} : (tensor<?x8xf32>, tensor<i64>) -> tensor<?x8xf32>
    ```
    """

    name = "pd.dropout"
    x = operand_def(TensorType)
    seed_tensor = opt_operand_def(TensorType)
    dropout_prob = prop_def(FloatAttr, default_value=f64_attr(0.5))
    is_test = prop_def(BoolAttr, default_value=bool_attr(False))
    seed = prop_def(IntegerAttr, default_value=i64_attr(0))
    dropout_implementation = prop_def(
        StringAttr, default_value=StringAttr("downgrade_in_infer")
    )
    assembly_format = _FORMAT

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, *seed = operand_types
        expect_float(cls.name, "x", tx)
        for ts in seed:
            if elem_of(ts) not in INT_TYPES or shape_of(ts) not in ((), (1,)):
                raise VerifyException(
                    f"'{cls.name}': seed_tensor must be an int32 or int64 tensor of one "
                    f"element (shape [] or [1]), got {ts}"
                )
        p = props["dropout_prob"]
        if not 0.0 <= p <= 1.0:
            raise VerifyException(f"'{cls.name}': dropout_prob must be in [0, 1], got {p}")
        impl = props["dropout_implementation"]
        if impl not in DROPOUT_IMPLEMENTATIONS:
            raise VerifyException(
                f"'{cls.name}': dropout_implementation must be one of "
                f"{list(DROPOUT_IMPLEMENTATIONS)}, got '{impl}'"
            )
        return [tx]


NN_OPS: list[type[PdOp]] = [
    MatmulOp,
    LinearOp,
    LookupTableOp,
    LookupTableGradOp,
    Conv2DOp,
    Conv2DTransposeOp,
    Conv2DFilterGradOp,
    Pool2DOp,
    Pool2DGradOp,
    LayerNormOp,
    BatchNormOp,
    DropoutOp,
]

__all__ = [
    "BATCH_NORM_LAYOUTS",
    "DROPOUT_BITS",
    "NN_OPS",
    "SPLITMIX_GAMMA",
    "SPLITMIX_LAST_SHIFT",
    "SPLITMIX_MIX",
    "BatchNormOp",
    "Conv2DFilterGradOp",
    "Conv2DOp",
    "Conv2DTransposeOp",
    "ConvWindow",
    "ConvWindowOp",
    "DropoutOp",
    "LayerNormOp",
    "LinearOp",
    "LookupTableGradOp",
    "LookupTableOp",
    "MatmulOp",
    "Pool2DGradOp",
    "Pool2DOp",
    "PoolWindowOp",
    "conv_out_dim",
    "dropout_threshold",
    "explicit_pads",
    "resolve_window",
]


# Bilinear products: complex too (the VJP rules conjugated around, passes/vjp).
declare_complex(MatmulOp, LinearOp)
