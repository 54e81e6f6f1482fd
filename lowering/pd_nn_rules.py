"""`convert-pd-to-linalg` rules for the neural-network ops (matmul aside, which lives
with the other contractions in `pd_rules.py`).

Convolutions are im2col + BLAS, the standard CPU formulation, laid out so that one
`gemm` per group covers the whole batch (few large calls keep BLAS efficient, and its
threads busy, where one small call per image spends its time in overheads):

* `conv2d`: the (zero-padded) input is unfolded into channel-major columns
  `cols[c, i, j, n, y, x] = x_pad[n, c, y*sh + i*dh, x*sw + j*dw]` by one
  `scf.parallel` copy (contiguous along `x` for stride 1, so it vectorizes), then a
  `batch_gemm` contraction `prod[g] = W[g] @ cols[g]` (`[O/G, C/G*kh*kw] @
  [C/G*kh*kw, N*OH*OW]`), which `convert-linalg-to-blas` turns into `sgemm`/`dgemm`
  calls, then a copy of `prod[o, n, p]` to `out[n, o, p]`;
* `conv2d_filter_grad`: the same columns and the output gradient copied to
  channel-major (its elementwise producers fuse into that copy):
  `dW[g] = grad[g] @ cols[g]^T`;
* `conv2d_transpose` (the input gradient): `cols[g] = W[g]^T @ x[g]` (x channel-major),
  then col2im adds every column back into its output pixel.  The col2im loop is
  parallel over output rows `(n, c, h)` and each iteration adds only into its own
  row, so it needs no atomics on the GPU; along `w` it runs over exactly the columns
  that land in the row (bounds computed per filter tap, no per-pixel tests).

Pooling is a parallel loop over output pixels with `scf.for` loops over the clipped
window inside.  Scatter-adds, whose writes collide (`lookup_table_grad`, pooling
gradients with overlapping windows), add with `memref.atomic_rmw addf` inside
`scf.parallel` (see `lowering/loop_nest.py`: atomics on the GPU, plain adds once
the CPU runs the loops sequentially); pooling windows that cannot overlap store.
`lookup_table` is a gather loop, `layer_norm` and `dropout` are `linalg.generic`s
into which elementwise producers fuse.

The window geometry (channels, spatial and filter sizes) must be static; the batch
dimension stays dynamic.  Indices out of a table's range (which the interpreter
rejects) read as zero rows and add nowhere: native code never reads or writes out of
bounds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import IndexType, i1, i64
from xdsl.ir import Attribute, Operation, SSAValue

from pullback.dialects.pd.base import DYN, fmt_shape, shape_of
from pullback.dialects.pd.nn import explicit_pads, resolve_window
from pullback.lowering.convert_pd_to_linalg import SIZE_RULES, Lowerer, LoweringError, Size, rule
from pullback.lowering.loop_nest import (
    atomic_add,
    clamp,
    for_range,
    if_then,
    in_range,
    load,
    parallel,
    store,
    to_float,
    to_index,
)
from pullback.lowering.pd_rules import (
    buffer_read,
    fuse_first_operand,
    identity_map,
    contract,
    reduce_into,
    scale_by_count,
    sizes_of_first,
    temp,
)
from pullback.lowering.pd_shape_rules import copy_window
from pullback.lowering.scalar import REASSOC, DimMap, Scalar, prop


def _elem(v: SSAValue) -> Attribute:
    return v.type.get_element_type()  # type: ignore[attr-defined]


def static_dims(op: Operation, what: str, dims: Sequence[int]) -> list[int]:
    """`dims`, which native code needs static (LoweringError naming the op otherwise)."""
    if DYN in dims:
        raise LoweringError(
            f"cannot lower '{op.name}' to native code: it needs static {what}, got {fmt_shape(dims)}"
        )
    return list(dims)


def lin(s: Scalar, terms: Sequence[tuple[SSAValue, int]], const: int = 0) -> SSAValue:
    """`sum(iv * coef) + const` on indices (unit coefficients and zero folded)."""
    acc: SSAValue | None = None
    for iv, coef in terms:
        if coef == 0:
            continue
        term = iv if coef == 1 else s.mul(iv, s.const(coef, IndexType()))
        acc = term if acc is None else s.add(acc, term)
    if acc is None:
        return s.const(const, IndexType())
    return acc if const == 0 else s.add(acc, s.const(const, IndexType()))


def floordiv(s: Scalar, a: SSAValue, b: int) -> SSAValue:
    """`floor(a / b)` for a signed index `a` and `b > 0`."""
    return a if b == 1 else s.emit(arith.FloorDivSIOp(a, s.const(b, IndexType())))


def divide(s: Scalar, a: SSAValue, b: SSAValue) -> SSAValue:
    """`a / b` for non-negative indices."""
    return s.emit(arith.DivSIOp(a, b))


# ---------------------------------------------------------------- convolution


@dataclass(frozen=True)
class Window:
    """A convolution window resolved for static sizes (Paddle's padding algorithm)."""

    pads: tuple[tuple[int, int], tuple[int, int]]
    strides: tuple[int, int]
    dilations: tuple[int, int]


def conv_window(op: Operation, hw: Sequence[int], khw: Sequence[int]) -> Window:
    """The window of a conv-family op whose padding algorithm applies to spatial
    size `hw` (the interpreter's `conv_window`, for static sizes)."""
    t, b, l, r = explicit_pads(op.name, list(prop(op, "paddings")))  # type: ignore[arg-type]
    algo = str(prop(op, "padding_algorithm", "EXPLICIT"))
    strides, dils = list(prop(op, "strides")), list(prop(op, "dilations"))  # type: ignore[call-overload]
    dims = [
        resolve_window(algo, pads, size, k, st, d)
        for pads, size, k, st, d in zip([(t, b), (l, r)], hw, khw, strides, dils)
    ]
    return Window(
        ((dims[0][0], dims[0][1]), (dims[1][0], dims[1][1])),
        (strides[0], strides[1]),
        (dims[0][2], dims[1][2]),
    )


def im2col(
    low: Lowerer, x: SSAValue, n: Size, c: int, hw: Sequence[int], khw: Sequence[int],
    win: Window, out_hw: Sequence[int],
) -> SSAValue:
    """Channel-major columns `[C, kh, kw, N, OH, OW]` of buffer `x` for window `win`:
    `cols[c, i, j, n, y, x] = x_pad[n, c, y*sh + i*dh, x*sw + j*dw]`."""
    elem = _elem(x)
    (pt, pb), (pl, pr) = win.pads
    src = x
    if pt or pb or pl or pr:
        # Padding once up front keeps the unfolding free of bounds tests.
        src = temp(low, elem, [n, c, hw[0] + pt + pb, hw[1] + pl + pr])
        low.fill(src, 0.0)
        copy_window(low, x, src, [n, c, *hw], dst_offsets=[0, 0, pt, pl])
    cols = temp(low, elem, [c, *khw, n, *out_hw])
    low.note_read(src)
    (sh, sw), (dh, dw) = win.strides, win.dilations

    def body(s: Scalar, ivs: list[SSAValue]) -> None:
        bc, i, j, bn, y, xx = ivs
        row, col = lin(s, [(y, sh), (i, dh)]), lin(s, [(xx, sw), (j, dw)])
        store(s, load(s, src, [bn, bc, row, col]), cols, ivs)

    parallel(low, [c, *khw, n, *out_hw], body)
    return cols


def channel_major(low: Lowerer, v: SSAValue) -> SSAValue:
    """An `[N, C, H, W]` value copied to a `[C, N, H, W]` temporary.  The copy runs
    over the value's own shape, so its elementwise producers fuse into it."""
    n, c, h, w = low.sizes_of(v)
    out = temp(low, v.type.get_element_type(), [c, n, h, w])  # type: ignore[attr-defined]
    low.generic([n, c, h, w], [(v, (0, 1, 2, 3), True)], [(out, (1, 0, 2, 3))], lambda s, a, o: [a[0]])
    return out


def _fuse_image_operands(op: Operation) -> Sequence[int]:
    # conv2d_transpose reads its input, conv2d_filter_grad its output gradient,
    # through `channel_major`.
    return (0,) if op.name == "pd.conv2d_transpose" else (1,)


def _conv_shapes(op: Operation) -> tuple[list[int], list[int], int]:
    """`([C, H, W] of the input, the filter's shape, groups)`, all static."""
    x, w = op.operands[0], op.operands[1]
    c_hw = static_dims(op, "input channels and spatial sizes", shape_of(x.type)[1:])
    filt = static_dims(op, "filter sizes", shape_of(w.type))
    return c_hw, filt, int(prop(op, "groups", 1))  # type: ignore[arg-type]


@rule("pd.conv2d")
def _conv2d(low: Lowerer, op: Operation) -> None:
    x, w = op.operands
    r = op.results[0]
    n = low.sizes_of(x)[0]
    (c, h, wd), (o, cg, kh, kw), g = _conv_shapes(op)
    oh, ow = static_dims(op, "output spatial sizes", shape_of(r.type)[2:])
    win = conv_window(op, (h, wd), (kh, kw))
    cols = im2col(low, low.read(x), n, c, (h, wd), (kh, kw), win, (oh, ow))
    og, rr, p = o // g, cg * kh * kw, oh * ow
    q = low.mul_sizes([n, p])
    prod = temp(low, _elem(cols), [o, n, p])
    # Loops (g, o, q, r): prod[g, o, q] += W[g, o, r] * cols[g, r, q].
    contract(
        low, [g, og, q, rr],
        [
            buffer_read(low, low.shape_view(low.read(w), [g, og, rr]), (0, 1, 3)),
            buffer_read(low, low.shape_view(cols, [g, rr, q]), (0, 3, 2)),
        ],
        (low.shape_view(prod, [g, og, q]), (0, 1, 2)),
        [3],
    )
    out = low.shape_view(low.out(r), [n, o, p])
    low.generic([o, n, p], [buffer_read(low, prod, (0, 1, 2))], [(out, (1, 0, 2))], lambda s, a, _o: [a[0]])


@rule("pd.conv2d_filter_grad", fusible=_fuse_image_operands)
def _conv2d_filter_grad(low: Lowerer, op: Operation) -> None:
    x, gr = op.operands
    r = op.results[0]
    n = low.sizes_of(x)[0]
    c, h, wd = static_dims(op, "input channels and spatial sizes", shape_of(x.type)[1:])
    o, oh, ow = static_dims(op, "gradient channels and spatial sizes", shape_of(gr.type)[1:])
    kh, kw = (int(k) for k in prop(op, "filter_size"))  # type: ignore[union-attr]
    g = int(prop(op, "groups", 1))  # type: ignore[arg-type]
    win = conv_window(op, (h, wd), (kh, kw))
    cols = im2col(low, low.read(x), n, c, (h, wd), (kh, kw), win, (oh, ow))
    grad = channel_major(low, gr)
    og, rr = o // g, (c // g) * kh * kw
    q = low.mul_sizes([n, oh * ow])
    # Loops (g, o, r, q): dW[g, o, r] += grad[g, o, q] * cols[g, r, q].
    contract(
        low, [g, og, rr, q],
        [
            buffer_read(low, low.shape_view(grad, [g, og, q]), (0, 1, 3)),
            buffer_read(low, low.shape_view(cols, [g, rr, q]), (0, 2, 3)),
        ],
        (low.shape_view(low.out(r), [g, og, rr]), (0, 1, 2)),
        [3],
    )


@rule("pd.conv2d_transpose", fusible=_fuse_image_operands)
def _conv2d_transpose(low: Lowerer, op: Operation) -> None:
    x, w = op.operands
    r = op.results[0]
    n = low.sizes_of(x)[0]
    (ci, h, wd), (_, cog, kh, kw), g = _conv_shapes(op)
    oh, ow = static_dims(op, "output spatial sizes", shape_of(r.type)[2:])
    win = conv_window(op, (h, wd), (kh, kw))
    co, cig, rr = cog * g, ci // g, cog * kh * kw
    q = low.mul_sizes([n, h * wd])
    image = channel_major(low, x)
    cols = temp(low, _elem(image), [co, kh, kw, n, h, wd])
    # Loops (g, r, q, c): cols[g, r, q] += W[g, c, r] * x[g, c, q].
    contract(
        low, [g, rr, q, cig],
        [
            buffer_read(low, low.shape_view(low.read(w), [g, cig, rr]), (0, 3, 1)),
            buffer_read(low, low.shape_view(image, [g, cig, q]), (0, 3, 2)),
        ],
        (low.shape_view(cols, [g, rr, q]), (0, 1, 2)),
        [3],
    )
    col2im(low, cols, low.out(r), n, co, (kh, kw), (h, wd), (oh, ow), win)


def col2im(
    low: Lowerer, cols: SSAValue, out: SSAValue, n: Size, c: int, khw: Sequence[int],
    hw: Sequence[int], out_hw: Sequence[int], win: Window,
) -> None:
    """`out[n, c, y*sh - pt + i*dh, x*sw - pl + j*dw] += cols[c, i, j, n, y, x]`
    (`out` is zeroed first), parallel over output rows (see the module doc)."""
    low.fill(out, 0.0)
    low.note_read(cols)
    low.note_read(out)
    (kh, kw), (h, wd), (_, ow) = khw, hw, out_hw
    (pt, _), (pl, _) = win.pads
    (sh, sw), (dh, dw) = win.strides, win.dilations
    index = IndexType()

    def row(s: Scalar, ivs: list[SSAValue]) -> None:
        bn, bc, oy = ivs

        def tap_row(s1: Scalar, i: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
            t = lin(s1, [(oy, 1), (i, -dh)], pt)  # = y*sh when tap i reaches row oy
            y = floordiv(s1, t, sh)
            ok = in_range(s1, y, s1.const(h, index))
            if sh > 1:
                ok = s1.emit(arith.AndIOp(ok, s1.cmp("eq", lin(s1, [(y, sh)]), t)))

            def taps(s2: Scalar) -> None:
                def tap_col(s3: Scalar, j: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
                    # Columns x with 0 <= x*sw - pl + j*dw < OW, as a loop range.
                    base = lin(s3, [(j, -dw)], pl)
                    zero = s3.const(0, index)
                    lo = s3.max(s3.sub(zero, floordiv(s3, s3.sub(zero, base), sw)), zero)
                    hi = s3.min(s3.add(floordiv(s3, lin(s3, [(base, 1)], ow - 1), sw), s3.const(1, index)),
                                s3.const(wd, index))

                    def pixel(s4: Scalar, xx: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
                        at = [bn, bc, oy, s4.sub(lin(s4, [(xx, sw)]), base)]
                        v = load(s4, cols, [bc, i, j, bn, y, xx])
                        store(s4, s4.add(load(s4, out, at), v), out, at)
                        return []

                    for_range(s3, lo, hi, [], pixel)
                    return []

                for_range(s2, s2.const(0, index), s2.const(kw, index), [], tap_col)

            if_then(s1, ok, taps)
            return []

        for_range(s, s.const(0, index), s.const(kh, index), [], tap_row)

    parallel(low, [n, c, out_hw[0]], row)


def _batch_size(low: Lowerer, op: Operation, r: SSAValue, k: int) -> Size | None:
    """Only the batch dimension of a convolution's result may be dynamic."""
    if k:
        static_dims(op, "channel and spatial sizes", shape_of(r.type)[1:])
    return low.sizes_of(op.operands[0])[0]


SIZE_RULES.update({"pd.conv2d": _batch_size, "pd.conv2d_transpose": _batch_size})


# -------------------------------------------------------------------- pooling


@dataclass(frozen=True)
class PoolAxis:
    """Pooling geometry along one spatial dimension (static sizes)."""

    size: int
    out: int
    k: int
    stride: int
    pad: int
    mode: str
    """`window` (strided, padded, clipped), `adaptive` or `global`."""

    def bounds(self, s: Scalar, o: SSAValue) -> tuple[SSAValue, SSAValue]:
        """The clipped input range `[lo, hi)` of output index `o` (as `pool_windows`)."""
        index = IndexType()
        if self.mode == "global":
            return s.const(0, index), s.const(self.size, index)
        if self.mode == "adaptive":
            lo = divide(s, lin(s, [(o, self.size)]), s.const(self.out, index))
            hi = divide(s, lin(s, [(o, self.size)], self.size + self.out - 1), s.const(self.out, index))
            return lo, hi
        start = lin(s, [(o, self.stride)], -self.pad)
        lo = s.max(start, s.const(0, index))
        hi = s.min(lin(s, [(start, 1)], self.k), s.const(self.size, index))
        return lo, hi


def pool_axes(op: Operation, pooled: SSAValue) -> tuple[PoolAxis, PoolAxis]:
    """Both spatial axes of a `pool2d`/`pool2d_grad` whose input is operand 0 and
    whose pooled (output-shaped) value is `pooled`."""
    hw = static_dims(op, "spatial sizes", shape_of(op.operands[0].type)[2:])
    out_hw = static_dims(op, "pooled spatial sizes", shape_of(pooled.type)[2:])
    t, b, l, r = explicit_pads(op.name, list(prop(op, "paddings")))  # type: ignore[arg-type]
    ks, strides = list(prop(op, "ksize")), list(prop(op, "strides"))  # type: ignore[call-overload]
    mode = "global" if prop(op, "global_pooling") else "adaptive" if prop(op, "adaptive") else "window"
    algo = str(prop(op, "padding_algorithm", "EXPLICIT"))
    axes = []
    for size, out, k, st, pads in zip(hw, out_hw, ks, strides, [(t, b), (l, r)]):
        p0, _, _ = resolve_window(algo, pads, size, k, st, 1)
        axes.append(PoolAxis(size, out, k, st, p0, mode))
    return axes[0], axes[1]


def _window(
    s: Scalar, axes: tuple[PoolAxis, PoolAxis], oy: SSAValue, ox: SSAValue
) -> tuple[tuple[SSAValue, SSAValue], tuple[SSAValue, SSAValue]]:
    return axes[0].bounds(s, oy), axes[1].bounds(s, ox)


def _divisor(
    s: Scalar, op: Operation, axes: tuple[PoolAxis, PoolAxis],
    win: tuple[tuple[SSAValue, SSAValue], tuple[SSAValue, SSAValue]], elem: Attribute,
) -> SSAValue:
    """Average pooling's divisor: the clipped window's area when exclusive (or
    adaptive), else `kh*kw` (the interpreter's `_divisor`)."""
    (h0, h1), (w0, w1) = win
    if prop(op, "exclusive", True) or axes[0].mode != "window":
        return to_float(s, s.mul(s.sub(h1, h0), s.sub(w1, w0)), elem)
    return s.const(float(axes[0].k * axes[1].k), elem)


def _over_window(
    s: Scalar,
    win: tuple[tuple[SSAValue, SSAValue], tuple[SSAValue, SSAValue]],
    inits: list[SSAValue],
    step: Callable[[Scalar, SSAValue, SSAValue, list[SSAValue]], list[SSAValue]],
) -> list[SSAValue]:
    """Row-major loops over a window, carrying `inits`; `step(s, h, w, carried)`."""
    (h0, h1), (w0, w1) = win
    return for_range(
        s, h0, h1, inits,
        lambda s1, hh, c: for_range(s1, w0, w1, c, lambda s2, ww, c2: step(s2, hh, ww, c2)),
    )


@rule("pd.pool2d")
def _pool2d(low: Lowerer, op: Operation) -> None:
    x, r = op.operands[0], op.results[0]
    xm, out = low.read(x), low.out(r)
    low.note_read(out)
    axes = pool_axes(op, r)
    elem = _elem(xm)
    is_max = prop(op, "pooling_type") == "max"

    def body(s: Scalar, ivs: list[SSAValue]) -> None:
        bn, bc, oy, ox = ivs
        win = _window(s, axes, oy, ox)
        init = s.const(-math.inf if is_max else 0.0, elem)

        def step(s1: Scalar, hh: SSAValue, ww: SSAValue, c: list[SSAValue]) -> list[SSAValue]:
            v = load(s1, xm, [bn, bc, hh, ww])
            return [s1.max(c[0], v) if is_max else s1.add(c[0], v)]

        (acc,) = _over_window(s, win, [init], step)
        if not is_max:
            acc = s.div(acc, _divisor(s, op, axes, win, elem))
        store(s, acc, out, ivs)

    parallel(low, low.sizes[r], body)


@rule("pd.pool2d_grad")
def _pool2d_grad(low: Lowerer, op: Operation) -> None:
    x, gr = op.operands
    r = op.results[0]
    xm, gm, dx = low.read(x), low.read(gr), low.out(r)
    low.fill(dx, 0.0)
    low.note_read(dx)
    axes = pool_axes(op, gr)
    elem = _elem(xm)
    is_max = prop(op, "pooling_type") == "max"
    # Windows that cannot overlap own their pixels: plain stores, no atomics.
    disjoint = all(a.mode == "global" or a.mode == "window" and a.stride >= a.k for a in axes)
    write = store if disjoint else atomic_add

    def body(s: Scalar, ivs: list[SSAValue]) -> None:
        bn, bc, oy, ox = ivs
        win = _window(s, axes, oy, ox)
        g = load(s, gm, ivs)
        zero = s.const(0.0, elem)
        if not is_max:
            share = s.div(g, _divisor(s, op, axes, win, elem))

            def spread(s1: Scalar, hh: SSAValue, ww: SSAValue, c: list[SSAValue]) -> list[SSAValue]:
                write(s1, share, dx, [bn, bc, hh, ww])
                return []

            _over_window(s, win, [], spread)
            return
        (m,) = _over_window(
            s, win, [s.const(-math.inf, elem)],
            lambda s1, hh, ww, c: [s1.max(c[0], load(s1, xm, [bn, bc, hh, ww]))],
        )
        m_nan = s.emit(arith.CmpfOp(m, m, "uno"))

        # The first pixel equal to the maximum in row-major order takes the gradient
        # (np.argmax; a NaN is the maximum), the others add zero.  A carried flag and
        # selects of floats keep this free of data-dependent branches, into which
        # LLVM turns an argmax's integer selects (a misprediction per window).
        def route(s1: Scalar, hh: SSAValue, ww: SSAValue, c: list[SSAValue]) -> list[SSAValue]:
            v = load(s1, xm, [bn, bc, hh, ww])
            both_nan = s1.emit(arith.AndIOp(s1.emit(arith.CmpfOp(v, v, "uno")), m_nan))
            hit = s1.emit(arith.OrIOp(s1.emit(arith.CmpfOp(v, m, "oeq")), both_nan))
            not_found = s1.emit(arith.XOrIOp(c[0], s1.const(1, i1)))
            write(s1, s1.select(s1.emit(arith.AndIOp(hit, not_found)), g, zero), dx, [bn, bc, hh, ww])
            return [s1.emit(arith.OrIOp(c[0], hit))]

        _over_window(s, win, [s.const(0, i1)], route)

    parallel(low, low.sizes_of(gr), body)


def _pool_size(low: Lowerer, op: Operation, r: SSAValue, k: int) -> Size | None:
    """Batch and channels come from the input; pooled sizes must be static."""
    if k >= 2:
        static_dims(op, "pooled spatial sizes", shape_of(r.type)[2:])
    return low.sizes_of(op.operands[0])[k]


SIZE_RULES.update({"pd.pool2d": _pool_size, "pd.pool2d_grad": sizes_of_first})


# ------------------------------------------------------------------ embedding


def _row_of(s: Scalar, op: Operation, id_value: SSAValue, rows: SSAValue) -> tuple[SSAValue, SSAValue]:
    """`(row, ok)`: an id as a row index (clamped) and whether it is a valid id that
    is not `padding_idx` (negative: counted from the end)."""
    i = to_index(s, id_value)
    ok = in_range(s, i, rows)
    pad = prop(op, "padding_idx")
    if pad is not None:
        pad_row = s.add(s.const(int(pad), IndexType()), rows) if int(pad) < 0 else s.const(int(pad), IndexType())  # type: ignore[arg-type]
        ok = s.emit(arith.AndIOp(ok, s.cmp("ne", i, pad_row)))
    return clamp(s, i, rows), ok


@rule("pd.lookup_table")
def _lookup_table(low: Lowerer, op: Operation) -> None:
    ids, w = op.operands
    r = op.results[0]
    idm, wm, out = low.read(ids), low.read(w), low.out(r)
    low.note_read(out)
    rows = low.as_value(low.sizes_of(w)[0])
    elem = _elem(wm)

    def body(s: Scalar, ivs: list[SSAValue]) -> None:
        row, ok = _row_of(s, op, load(s, idm, ivs[:-1]), rows)
        v = load(s, wm, [row, ivs[-1]])
        store(s, s.select(ok, v, s.const(0.0, elem)), out, ivs)

    parallel(low, low.sizes[r], body)


@rule("pd.lookup_table_grad")
def _lookup_table_grad(low: Lowerer, op: Operation) -> None:
    ids, gr = op.operands
    r = op.results[0]
    idm, gm, out = low.read(ids), low.read(gr), low.out(r)
    low.fill(out, 0.0)
    low.note_read(out)
    rows = low.as_value(low.sizes[r][0])

    def body(s: Scalar, ivs: list[SSAValue]) -> None:
        row, ok = _row_of(s, op, load(s, idm, ivs[:-1]), rows)
        if_then(s, ok, lambda s1: atomic_add(s1, load(s1, gm, ivs), out, [row, ivs[-1]]))

    parallel(low, low.sizes_of(gr), body)


def _lookup_size(low: Lowerer, op: Operation, r: SSAValue, k: int) -> Size | None:
    ids = low.sizes_of(op.operands[0])
    return ids[k] if k < len(ids) else low.sizes_of(op.operands[1])[1]


SIZE_RULES.update({
    "pd.lookup_table": _lookup_size,
    "pd.lookup_table_grad": lambda low, op, r, k: low.sizes_of(op.operands[1])[-1] if k == 1 else None,
})


# ----------------------------------------------------------------- layer norm


@rule("pd.layer_norm", fusible=fuse_first_operand)
def _layer_norm(low: Lowerer, op: Operation) -> None:
    x, *params = op.operands
    r = op.results[0]
    rank = len(shape_of(x.type))
    begin = int(prop(op, "begin_norm_axis", 1))  # type: ignore[arg-type]
    sizes = low.sizes_of(x)
    elem = r.type.get_element_type()  # type: ignore[attr-defined]
    tail = list(range(begin, rank))
    tail_sizes = [sizes[d] for d in tail]
    kept = [1 if d >= begin else z for d, z in enumerate(sizes)]
    row: DimMap = tuple(None if d >= begin else d for d in range(rank))
    ident = identity_map(rank)
    # Two passes as the interpreter computes them: mean, then the biased variance.
    mean = temp(low, elem, kept)
    reduce_into(low, x, mean, tail, True, "sum")
    scale_by_count(low, mean, kept, tail_sizes)
    var = temp(low, elem, kept)
    low.fill(var, 0.0)

    def square(s: Scalar, a: list[SSAValue], o: list[SSAValue]) -> list[SSAValue]:
        d = s.sub(a[0], a[1])
        return [s.emit(arith.AddfOp(o[0], s.mul(d, d), REASSOC))]

    low.generic(sizes, [(x, ident, True), buffer_read(low, mean, row)], [(var, row)], square, reductions=tail)
    scale_by_count(low, var, kept, tail_sizes)
    eps = float(prop(op, "epsilon", 1e-5))  # type: ignore[arg-type]
    # Scale and bias are 1-D over the normalized dimensions: read through a view.
    affine = [
        buffer_read(low, low.shape_view(low.read(p), tail_sizes), tuple(tail)) for p in params
    ]

    def normalize(s: Scalar, a: list[SSAValue], o: list[SSAValue]) -> list[SSAValue]:
        xv, m, v, *ps = a
        y = s.div(s.sub(xv, m), s.math(xmath.SqrtOp, s.add(v, s.const(eps, xv.type))))
        if ps:
            y = s.mul(y, ps[0])
        if len(ps) == 2:
            y = s.add(y, ps[1])
        return [y]

    reads = [(x, ident, True), buffer_read(low, mean, row), buffer_read(low, var, row), *affine]
    low.generic(sizes, reads, [(low.out(r), ident)], normalize)


# -------------------------------------------------------------------- dropout

_GOLDEN, _MIX1, _MIX2 = 0x9E3779B97F4A7C15, 0xBF58476D1CE4E5B9, 0x94D049BB133111EB


def _signed64(v: int) -> int:
    """An unsigned 64-bit constant as the signed value of the same bits."""
    v %= 1 << 64
    return v - (1 << 64) if v >= 1 << 63 else v


def dropout_keep(s: Scalar, flat: SSAValue, seed: int, p: float) -> SSAValue:
    """Whether element `flat` (row-major flat index) survives dropout: the
    interpreter's `dropout_uniform` (splitmix64 of `(seed, flat + 1)`, top 24 bits)
    compared with `p` exactly, as an integer threshold `ceil(p * 2**24)`."""
    i = s.emit(arith.IndexCastOp(flat, i64))

    def c(v: int) -> SSAValue:
        return s.const(_signed64(v), i64)

    def xorshift(z: SSAValue, k: int) -> SSAValue:
        return s.emit(arith.XOrIOp(z, s.emit(arith.ShRUIOp(z, c(k)))))

    z = s.add(c(seed), s.mul(s.add(i, c(1)), c(_GOLDEN)))
    z = s.mul(xorshift(z, 30), c(_MIX1))
    z = s.mul(xorshift(z, 27), c(_MIX2))
    z = xorshift(z, 31)
    top24 = s.emit(arith.ShRUIOp(z, c(40)))
    return s.cmp("ge", top24, c(math.ceil(p * 2.0**24)))


@rule("pd.dropout", fusible=fuse_first_operand)
def _dropout(low: Lowerer, op: Operation) -> None:
    x, r = op.operands[0], op.results[0]
    sizes = low.sizes_of(x)
    rank = len(sizes)
    p = float(prop(op, "dropout_prob", 0.5))  # type: ignore[arg-type]
    upscale = prop(op, "dropout_implementation") == "upscale_in_train"
    is_test = bool(prop(op, "is_test", False))
    seed = int(prop(op, "seed", 0))  # type: ignore[arg-type]
    # Dynamic sizes of the inner dimensions enter the flat index as loop invariants.
    dynamic = [z for z in sizes[1:] if not isinstance(z, int)]

    def body(s: Scalar, args: list[SSAValue], _outs: list[SSAValue]) -> list[SSAValue]:
        v = args[len(dynamic)]
        elem = v.type
        if is_test:
            return [v if upscale else s.mul(v, s.const(1.0 - p, elem))]
        given = iter(args[: len(dynamic)])
        flat = s.index(0) if rank else s.const(0, IndexType())
        for d in range(1, rank):
            n = sizes[d]
            flat = s.add(s.mul(flat, s.const(n, IndexType()) if isinstance(n, int) else next(given)), s.index(d))
        kept = v
        if upscale:
            kept = s.mul(v, s.const(0.0 if p >= 1.0 else 1.0 / (1.0 - p), elem))
        return [s.select(dropout_keep(s, flat, seed, p), kept, s.const(0.0, elem))]

    ident = identity_map(rank)
    low.generic(sizes, [(x, ident, True)], [(low.out(r), ident)], body, scalars=dynamic)  # type: ignore[arg-type]


SIZE_RULES.update({"pd.layer_norm": sizes_of_first, "pd.dropout": sizes_of_first})

__all__ = ["Window", "col2im", "conv_window", "dropout_keep", "im2col", "pool_axes", "static_dims"]
