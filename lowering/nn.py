"""Lowering of the neural-network family (`dialects/pd/nn.py`): matrix products,
convolutions, pooling, embedding, layer and batch norm, and dropout.

Matrix products become `linalg.generic` contractions tagged `library_call = "gemm"`
(or `batch_gemm`); `convert-linalg-to-blas` turns those into BLAS calls, and
`convert-linalg-to-loops` lowers them to loops when BLAS is not wanted.

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

Where that formulation loses -- small channel counts, and on this CPU most unit-
stride convolutions, since OpenBLAS's sgemm is slow on these shapes -- the three
ops lower to direct loop nests instead (`lowering/conv_direct.py`, whose `choose`
is the one cost rule, with its measurements).

Pooling is a parallel loop over output pixels with `scf.for` loops over the clipped
window inside.  Scatter-adds, whose writes collide (`lookup_table_grad`, pooling
gradients with overlapping windows), add with `memref.atomic_rmw addf` inside
`scf.parallel` (see `lowering/loop_nest.py`: atomics on the GPU, plain adds once
the CPU runs the loops sequentially); pooling windows that cannot overlap store.
`lookup_table` is a gather loop, `layer_norm`, `batch_norm` and `dropout` are
`linalg.generic`s into which elementwise producers fuse.

The window geometry (channels, spatial and filter sizes) must be static; the batch
dimension stays dynamic.  Indices out of a table's range (which the interpreter
rejects) read as zero rows and add nowhere: native code never reads or writes out of
bounds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, memref
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import AnyFloat, IndexType, i1, i64
from xdsl.ir import Attribute, SSAValue

from pullback.dialects import pd
from pullback.dialects.pd.base import DYN, fmt_shape, shape_of
from pullback.dialects.pd.nn import (
    DROPOUT_BITS,
    SPLITMIX_GAMMA,
    SPLITMIX_LAST_SHIFT,
    SPLITMIX_MIX,
    ConvWindow,
    dropout_threshold,
)
from pullback.lowering import conv_direct
from pullback.lowering.abi import LoweringError
from pullback.lowering.lowerer import Lowerer
from pullback.lowering.lowerer.sizes import Size
from pullback.lowering.registry import (
    fuse_first_operand,
    lowers,
    range_check,
    result_sizes,
    sizes_of_first,
)
from pullback.lowering.scalar import REASSOC, DimMap, Scalar, identity_map
from pullback.lowering.views import elem_of_buffer
from pullback.lowering.loop_nest import (
    atomic_add,
    check_range,
    clamp,
    copy_window,
    for_range,
    if_then,
    in_range,
    load,
    parallel,
    store,
    to_float,
    to_index,
)
from pullback.lowering.reduction import reduce_into, scale_by_count

# ---------------------------------------------------------------------- matmul


def matmul_layout(low: Lowerer, op: pd.MatmulOp) -> tuple[list[Size], DimMap, DimMap, DimMap, int]:
    """The contraction of `pd.matmul` as a loop nest: `(domain, x map, y map, out map,
    reduction dim)`; the domain is `batch.. [M] [N] K` (M/N absent for vectors)."""
    x, y = op.operands
    xs, ys = list(shape_of(x.type)), list(shape_of(y.type))
    xz, yz = list(low.sizes_of(x)), list(low.sizes_of(y))
    tx, ty = bool(op.prop("transpose_x")), bool(op.prop("transpose_y"))
    x_vec, y_vec = len(xs) == 1, len(ys) == 1
    xb, yb = (xs[:-2] if not x_vec else []), (ys[:-2] if not y_vec else [])
    nb = max(len(xb), len(yb))
    batch: list[Size] = []
    for i in range(nb):
        jx, jy = i - (nb - len(xb)), i - (nb - len(yb))
        cand = [(xs[jx], xz[jx])] if jx >= 0 else []
        cand += [(ys[jy], yz[jy])] if jy >= 0 else []
        non1 = [z for s, z in cand if s != 1]
        batch.append(non1[0] if non1 else 1)
    dims: list[Size] = list(batch)
    m_dim = n_dim = None
    if not x_vec:
        m_dim = len(dims)
        dims.append(xz[-1] if tx else xz[-2])
    if not y_vec:
        n_dim = len(dims)
        dims.append(yz[-2] if ty else yz[-1])
    k_dim = len(dims)
    dims.append(xz[0] if x_vec else (xz[-2] if tx else xz[-1]))

    def bmap(own: list[int]) -> list[int | None]:
        off = nb - len(own)
        return [None if s == 1 and batch[off + j] != 1 else off + j for j, s in enumerate(own)]

    if x_vec:
        xmap: DimMap = (k_dim,)
    else:
        xmap = tuple(bmap(xb)) + ((k_dim, m_dim) if tx else (m_dim, k_dim))
    if y_vec:
        ymap: DimMap = (k_dim,)
    else:
        ymap = tuple(bmap(yb)) + ((n_dim, k_dim) if ty else (k_dim, n_dim))
    omap: DimMap = tuple(range(nb)) + tuple(d for d in (m_dim, n_dim) if d is not None)
    return dims, xmap, ymap, omap, k_dim


@lowers(pd.MatmulOp)
def _matmul(low: Lowerer, op: pd.MatmulOp) -> None:
    x, y = op.operands
    dims, xmap, ymap, omap, k = matmul_layout(low, op)
    out = low.out(op.results[0])
    contract(low, dims, [(x, xmap, False), (y, ymap, False)], (out, omap), [k])


@lowers(pd.LinearOp)
def _linear(low: Lowerer, op: pd.LinearOp) -> None:
    """The product as `pd.matmul` contracts it (x's leading dimensions as rows, a BLAS
    call), then the bias added in place over the result."""
    x, w, bias = op.operands
    xz, wz = list(low.sizes_of(x)), list(low.sizes_of(w))
    r = len(xz)
    lead = tuple(range(r - 1))
    n_dim, k_dim = r - 1, r
    out = low.out(op.results[0])
    omap: DimMap = (*lead, n_dim)
    contract(low, [*xz[:-1], wz[1], xz[-1]], [(x, (*lead, k_dim), False), (w, (k_dim, n_dim), False)],
             (out, omap), [k_dim])

    def add_bias(s: Scalar, a: list[SSAValue], o: list[SSAValue]) -> list[SSAValue]:
        return [s.add(o[0], a[0])]

    low.generic([*xz[:-1], wz[1]], [(bias, (n_dim,), False)], [(out, omap)], add_bias)


@result_sizes(pd.LinearOp)
def _linear_sizes(low: Lowerer, op: pd.LinearOp, r: SSAValue, k: int) -> Size | None:
    rank = len(shape_of(op.x.type))
    return low.sizes_of(op.x)[k] if k < rank - 1 else low.sizes_of(op.weight)[1]


def blas_tag(domain: Sequence[Size], maps: Sequence[DimMap], reductions: Sequence[int], elem: Attribute) -> str | None:
    """The `library_call` of a float contraction: `gemm` for a plain 2-D product
    (what the GPU path tiles), `batch_gemm` for any other (`convert-linalg-to-blas`)."""
    if not isinstance(elem, AnyFloat):
        return None
    plain = len(domain) == 3 and len(reductions) == 1 and all(len(m) == 2 for m in maps)
    return "gemm" if plain else "batch_gemm"


def contract(
    low: Lowerer,
    domain: Sequence[Size],
    reads: Sequence[tuple[SSAValue, DimMap, bool]],
    out: tuple[SSAValue, DimMap],
    reductions: Sequence[int],
) -> None:
    """`out = sum over reductions of reads[0] * reads[1]` (out is zeroed first), as a
    contraction tagged for BLAS."""
    mem, omap = out
    elem = elem_of_buffer(mem)
    low.fill(mem, 0.0 if isinstance(elem, AnyFloat) else 0)

    def body(s: Scalar, a: list[SSAValue], o: list[SSAValue]) -> list[SSAValue]:
        # (Narrow operands of a wide result -- a bfloat16 product summed in float32,
        # `widen._narrow_product` -- convert exactly before they multiply.)
        x, y = (v if v.type == elem else s.convert(v, elem) for v in a[:2])
        return [s.add(o[0], s.mul(x, y))]

    tag = blas_tag(domain, [m for _, m, _ in reads] + [omap], reductions, elem)
    low.generic(domain, reads, [out], body, reductions=reductions, library_call=tag)


@result_sizes(pd.MatmulOp)
def _matmul_sizes(low: Lowerer, op: pd.MatmulOp, r: SSAValue, k: int) -> Size | None:
    dims, _, _, omap, _ = matmul_layout(low, op)
    d = omap[k]
    return None if d is None else dims[d]


def static_dims(op: pd.PdOp, what: str, dims: Sequence[int]) -> list[int]:
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


def im2col(
    low: Lowerer, x: SSAValue, n: Size, c: int, hw: Sequence[int], khw: Sequence[int],
    win: ConvWindow, out_hw: Sequence[int],
) -> SSAValue:
    """Channel-major columns `[C, kh, kw, N, OH, OW]` of buffer `x` for window `win`:
    `cols[c, i, j, n, y, x] = x_pad[n, c, y*sh + i*dh, x*sw + j*dw]`."""
    elem = elem_of_buffer(x)
    (pt, pb), (pl, pr) = win.pads
    src = x
    if pt or pb or pl or pr:
        # Padding once up front keeps the unfolding free of bounds tests.
        src = low.temp(elem, [n, c, hw[0] + pt + pb, hw[1] + pl + pr])
        low.fill(src, 0.0)
        copy_window(low, x, src, [n, c, *hw], dst_offsets=[0, 0, pt, pl])
    cols = low.temp(elem, [c, *khw, n, *out_hw])
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
    over the value's own shape, so its elementwise producers fuse into it; made
    once for all readers (`Lowerer.shared`: an output gradient feeds both the filter
    gradient and the input gradient of a convolution)."""

    def make() -> SSAValue:
        n, c, h, w = low.sizes_of(v)
        out = low.temp(elem_of_buffer(v), [c, n, h, w])
        low.generic([n, c, h, w], [(v, (0, 1, 2, 3), True)], [(out, (1, 0, 2, 3))], lambda s, a, o: [a[0]])
        return out

    return low.shared("channel_major", v, make)


def _conv_shapes(op: pd.Conv2DOp | pd.Conv2DTransposeOp) -> tuple[list[int], list[int], int]:
    """`([C, H, W] of the input, the filter's shape, groups)`, all static."""
    x, w = op.operands[0], op.operands[1]
    c_hw = static_dims(op, "input channels and spatial sizes", shape_of(x.type)[1:])
    filt = static_dims(op, "filter sizes", shape_of(w.type))
    return c_hw, filt, op.prop("groups")


@lowers(pd.Conv2DOp)
def _conv2d(low: Lowerer, op: pd.Conv2DOp) -> None:
    x, w = op.operands
    r = op.results[0]
    n = low.sizes_of(x)[0]
    (c, h, wd), (o, cg, kh, kw), g = _conv_shapes(op)
    oh, ow = static_dims(op, "output spatial sizes", shape_of(r.type)[2:])
    win = op.window((h, wd), (kh, kw))
    if conv_direct.choose(op) == "direct":
        (pt, _), (pl, _) = win.pads
        wm = low.read(w)

        def weight(s: Scalar, o_: SSAValue, k: SSAValue, i: int, j: int) -> SSAValue:
            return load(s, wm, [o_, k, s.const(i, IndexType()), s.const(j, IndexType())])

        conv_direct.direct_correlation(low, low.read(x), (h, wd), (pt, pl), low.out(r), n, c, o, o // g, cg,
                                       weight, (kh, kw), win.strides, win.dilations, (oh, ow))
        return
    cols = im2col(low, low.read(x), n, c, (h, wd), (kh, kw), win, (oh, ow))
    og, rr, p = o // g, cg * kh * kw, oh * ow
    q = low.mul_sizes([n, p])
    prod = low.temp(r.type.get_element_type(), [o, n, p])  # type: ignore[attr-defined]  # (float32 for bfloat16 cols)
    # Loops (g, o, q, r): prod[g, o, q] += W[g, o, r] * cols[g, r, q].
    contract(
        low, [g, og, q, rr],
        [
            low.buffer_read(low.shape_view(low.read(w), [g, og, rr]), (0, 1, 3)),
            low.buffer_read(low.shape_view(cols, [g, rr, q]), (0, 3, 2)),
        ],
        (low.shape_view(prod, [g, og, q]), (0, 1, 2)),
        [3],
    )
    out = low.shape_view(low.out(r), [n, o, p])
    low.generic([o, n, p], [low.buffer_read(prod, (0, 1, 2))], [(out, (1, 0, 2))], lambda s, a, _o: [a[0]])


# On the GEMM path conv2d_filter_grad reads its output gradient (operand 1),
# conv2d_transpose its input (operand 0), through `channel_major`: their producers
# fuse into that copy.  The direct path reads them as they are (nothing fused).
@lowers(pd.Conv2DFilterGradOp, fusible=lambda op: () if conv_direct.choose(op) == "direct" else (1,))
def _conv2d_filter_grad(low: Lowerer, op: pd.Conv2DFilterGradOp) -> None:
    x, gr = op.operands
    r = op.results[0]
    n = low.sizes_of(x)[0]
    c, h, wd = static_dims(op, "input channels and spatial sizes", shape_of(x.type)[1:])
    o, oh, ow = static_dims(op, "gradient channels and spatial sizes", shape_of(gr.type)[1:])
    kh, kw = op.prop("filter_size")
    g = op.prop("groups")
    win = op.window((h, wd), (kh, kw))
    if conv_direct.choose(op) == "direct":
        (pt, _), (pl, _) = win.pads
        conv_direct.direct_filter_grad(low, low.read(x), (h, wd), (pt, pl), low.read(gr), low.out(r), n, c, o,
                                       o // g, c // g, (kh, kw), win.strides, win.dilations, (oh, ow))
        return
    cols = im2col(low, low.read(x), n, c, (h, wd), (kh, kw), win, (oh, ow))
    grad = channel_major(low, gr)
    og, rr = o // g, (c // g) * kh * kw
    q = low.mul_sizes([n, oh * ow])
    # Loops (g, o, r, q): dW[g, o, r] += grad[g, o, q] * cols[g, r, q].
    contract(
        low, [g, og, rr, q],
        [
            low.buffer_read(low.shape_view(grad, [g, og, q]), (0, 1, 3)),
            low.buffer_read(low.shape_view(cols, [g, rr, q]), (0, 2, 3)),
        ],
        (low.shape_view(low.out(r), [g, og, rr]), (0, 1, 2)),
        [3],
    )


@lowers(pd.Conv2DTransposeOp, fusible=lambda op: () if conv_direct.choose(op) == "direct" else (0,))
def _conv2d_transpose(low: Lowerer, op: pd.Conv2DTransposeOp) -> None:
    x, w = op.operands
    r = op.results[0]
    n = low.sizes_of(x)[0]
    (ci, h, wd), (_, cog, kh, kw), g = _conv_shapes(op)
    oh, ow = static_dims(op, "output spatial sizes", shape_of(r.type)[2:])
    win = op.window((h, wd), (kh, kw))
    co, cig, rr = cog * g, ci // g, cog * kh * kw
    if conv_direct.choose(op) == "direct":
        # Stride 1: the correlation of the output gradient, re-padded so that tap
        # (i, j) of output pixel (y, x) reads row y + i*dh, with the flipped filter
        # (module doc of `lowering/conv_direct.py`).
        (pt, _), (pl, _) = win.pads
        (dh, dw) = win.dilations
        before = ((kh - 1) * dh - pt, (kw - 1) * dw - pl)
        wm = low.read(w)

        def weight(s: Scalar, c_: SSAValue, k: SSAValue, i: int, j: int) -> SSAValue:
            index = IndexType()
            cin = s.add(s.mul(conv_direct.group_of(s, c_, cog), s.const(cig, index)), k)
            at = [cin, conv_direct.group_rest(s, c_, cog), s.const(kh - 1 - i, index), s.const(kw - 1 - j, index)]
            return load(s, wm, at)

        conv_direct.direct_correlation(low, low.read(x), (h, wd), before, low.out(r), n, ci, co, cog, cig,
                                       weight, (kh, kw), (1, 1), win.dilations, (oh, ow))
        return
    q = low.mul_sizes([n, h * wd])
    image = channel_major(low, x)
    cols = low.temp(r.type.get_element_type(), [co, kh, kw, n, h, wd])  # type: ignore[attr-defined]  # (float32 for bfloat16 operands)
    # Loops (g, r, q, c): cols[g, r, q] += W[g, c, r] * x[g, c, q].
    contract(
        low, [g, rr, q, cig],
        [
            low.buffer_read(low.shape_view(low.read(w), [g, cig, rr]), (0, 3, 1)),
            low.buffer_read(low.shape_view(image, [g, cig, q]), (0, 3, 2)),
        ],
        (low.shape_view(cols, [g, rr, q]), (0, 1, 2)),
        [3],
    )
    col2im(low, cols, low.out(r), n, co, (kh, kw), (h, wd), (oh, ow), win)


def col2im(
    low: Lowerer, cols: SSAValue, out: SSAValue, n: Size, c: int, khw: Sequence[int],
    hw: Sequence[int], out_hw: Sequence[int], win: ConvWindow,
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


@result_sizes(pd.Conv2DOp, pd.Conv2DTransposeOp)
def _batch_size(low: Lowerer, op: pd.Conv2DOp | pd.Conv2DTransposeOp, r: SSAValue, k: int) -> Size | None:
    """Only the batch dimension of a convolution's result may be dynamic."""
    if k:
        static_dims(op, "channel and spatial sizes", shape_of(r.type)[1:])
    return low.sizes_of(op.operands[0])[0]


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

    def span(self, s: Scalar, o: SSAValue) -> SSAValue:
        """Non-exclusive average pooling's divisor factor at output index `o`:
        `min(start + k, size + pad) - start` (`PoolWindowOp.window`)."""
        start = lin(s, [(o, self.stride)], -self.pad)
        end = s.min(lin(s, [(start, 1)], self.k), s.const(self.size + self.pad, IndexType()))
        return s.sub(end, start)


def pool_axes(op: pd.PoolWindowOp, pooled: SSAValue) -> tuple[PoolAxis, PoolAxis]:
    """Both spatial axes of a `pool2d`/`pool2d_grad` whose input is operand 0 and
    whose pooled (output-shaped) value is `pooled`."""
    hw = static_dims(op, "spatial sizes", shape_of(op.operands[0].type)[2:])
    out_hw = static_dims(op, "pooled spatial sizes", shape_of(pooled.type)[2:])
    ks, strides, mode = op.prop("ksize"), op.prop("strides"), op.mode()
    axes = [
        PoolAxis(size, out, k, st, p0, mode)
        for size, out, k, st, p0 in zip(hw, out_hw, ks, strides, op.pads_before(hw))
    ]
    return axes[0], axes[1]


def _window(
    s: Scalar, axes: tuple[PoolAxis, PoolAxis], oy: SSAValue, ox: SSAValue
) -> tuple[tuple[SSAValue, SSAValue], tuple[SSAValue, SSAValue]]:
    return axes[0].bounds(s, oy), axes[1].bounds(s, ox)


def _divisor(
    s: Scalar, op: pd.PoolWindowOp, axes: tuple[PoolAxis, PoolAxis],
    win: tuple[tuple[SSAValue, SSAValue], tuple[SSAValue, SSAValue]], elem: Attribute,
    oy: SSAValue, ox: SSAValue,
) -> SSAValue:
    """Average pooling's divisor: the clipped window's area when exclusive (or
    adaptive), else the product of the axes' spans (the interpreter's `_divisor`)."""
    (h0, h1), (w0, w1) = win
    if op.prop("exclusive") or axes[0].mode != "window":
        return to_float(s, s.mul(s.sub(h1, h0), s.sub(w1, w0)), elem)
    return to_float(s, s.mul(axes[0].span(s, oy), axes[1].span(s, ox)), elem)


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


@lowers(pd.Pool2DOp)
def _pool2d(low: Lowerer, op: pd.Pool2DOp) -> None:
    x, r = op.operands[0], op.results[0]
    xm, out = low.read(x), low.out(r)
    low.note_read(out)
    axes = pool_axes(op, r)
    elem = elem_of_buffer(xm)
    is_max = op.prop("pooling_type") == "max"

    def body(s: Scalar, ivs: list[SSAValue]) -> None:
        bn, bc, oy, ox = ivs
        win = _window(s, axes, oy, ox)
        init = s.const(-math.inf if is_max else 0.0, elem)

        def step(s1: Scalar, hh: SSAValue, ww: SSAValue, c: list[SSAValue]) -> list[SSAValue]:
            v = load(s1, xm, [bn, bc, hh, ww])
            return [s1.max(c[0], v) if is_max else s1.add(c[0], v)]

        (acc,) = _over_window(s, win, [init], step)
        if not is_max:
            acc = s.div(acc, _divisor(s, op, axes, win, elem, oy, ox))
        store(s, acc, out, ivs)

    parallel(low, low.sizes[r], body)


@lowers(pd.Pool2DGradOp)
def _pool2d_grad(low: Lowerer, op: pd.Pool2DGradOp) -> None:
    x, gr = op.operands
    r = op.results[0]
    xm, gm, dx = low.read(x), low.read(gr), low.out(r)
    axes = pool_axes(op, gr)
    # Windows that cannot overlap own their pixels: plain stores, no atomics.
    disjoint = all(a.mode == "global" or a.mode == "window" and a.stride >= a.k for a in axes)
    # Windows that tile the input exactly (LeNet's 2x2/2) store every pixel once
    # (max pooling stores the zeros too): no zero fill first, one pass over dx.
    tiled = all(a.mode == "global" or a.mode == "window" and a.stride == a.k and a.pad == 0
                and a.out * a.k == a.size for a in axes)
    if not tiled:
        low.fill(dx, 0.0)
    low.note_read(dx)
    elem = elem_of_buffer(xm)
    is_max = op.prop("pooling_type") == "max"
    write = store if disjoint else atomic_add

    def body(s: Scalar, ivs: list[SSAValue]) -> None:
        bn, bc, oy, ox = ivs
        win = _window(s, axes, oy, ox)
        g = load(s, gm, ivs)
        zero = s.const(0.0, elem)
        if not is_max:
            share = s.div(g, _divisor(s, op, axes, win, elem, oy, ox))

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


@result_sizes(pd.Pool2DOp)
def _pool_size(low: Lowerer, op: pd.Pool2DOp, r: SSAValue, k: int) -> Size | None:
    """Batch and channels come from the input; pooled sizes must be static."""
    if k >= 2:
        static_dims(op, "pooled spatial sizes", shape_of(r.type)[2:])
    return low.sizes_of(op.operands[0])[k]


result_sizes(pd.Pool2DGradOp)(sizes_of_first)


# ------------------------------------------------------------------ embedding


def _row_of(s: Scalar, op: pd.LookupTableOp | pd.LookupTableGradOp, id_value: SSAValue, rows: SSAValue) -> tuple[SSAValue, SSAValue]:
    """`(row, ok)`: an id as a row index (clamped) and whether it is a valid id that
    is not `padding_idx` (negative: counted from the end)."""
    i = to_index(s, id_value)
    ok = in_range(s, i, rows)
    pad = op.prop("padding_idx")
    if pad is not None:
        pad_row = s.add(s.const(pad, IndexType()), rows) if pad < 0 else s.const(pad, IndexType())
        ok = s.emit(arith.AndIOp(ok, s.cmp("ne", i, pad_row)))
    return clamp(s, i, rows), ok


@range_check(pd.LookupTableOp, pd.LookupTableGradOp, operand=0)
def _check_ids(low: Lowerer, op: pd.LookupTableOp | pd.LookupTableGradOp) -> None:
    """Every id in `[0, rows)` (padding_idx included), as the interpreter checks."""
    rows = low.sizes_of(op.operands[1])[0] if isinstance(op, pd.LookupTableOp) else op.prop("num_rows")
    check_range(low, op, "id", op.operands[0], rows)


@lowers(pd.LookupTableOp)
def _lookup_table(low: Lowerer, op: pd.LookupTableOp) -> None:
    ids, w = op.operands
    r = op.results[0]
    idm, wm, out = low.read(ids), low.read(w), low.out(r)
    low.note_read(out)
    rows = low.as_value(low.sizes_of(w)[0])
    elem = elem_of_buffer(wm)

    def body(s: Scalar, ivs: list[SSAValue]) -> None:
        row, ok = _row_of(s, op, load(s, idm, ivs[:-1]), rows)
        v = load(s, wm, [row, ivs[-1]])
        store(s, s.select(ok, v, s.const(0.0, elem)), out, ivs)

    parallel(low, low.sizes[r], body)


@lowers(pd.LookupTableGradOp)
def _lookup_table_grad(low: Lowerer, op: pd.LookupTableGradOp) -> None:
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


@result_sizes(pd.LookupTableOp)
def _lookup_size(low: Lowerer, op: pd.LookupTableOp, r: SSAValue, k: int) -> Size | None:
    ids = low.sizes_of(op.operands[0])
    return ids[k] if k < len(ids) else low.sizes_of(op.operands[1])[1]


@result_sizes(pd.LookupTableGradOp)
def _lookup_grad_size(low: Lowerer, op: pd.LookupTableGradOp, r: SSAValue, k: int) -> Size | None:
    return low.sizes_of(op.operands[1])[-1] if k == 1 else None


# ----------------------------------------------------------------- layer norm


@lowers(pd.LayerNormOp, fusible=fuse_first_operand)
def _layer_norm(low: Lowerer, op: pd.LayerNormOp) -> None:
    x, *params = op.operands
    r = op.results[0]
    rank = len(shape_of(x.type))
    begin = op.prop("begin_norm_axis")
    sizes = low.sizes_of(x)
    elem = elem_of_buffer(r)
    tail = list(range(begin, rank))
    tail_sizes = [sizes[d] for d in tail]
    kept = [1 if d >= begin else z for d, z in enumerate(sizes)]
    row: DimMap = tuple(None if d >= begin else d for d in range(rank))
    ident = identity_map(rank)
    # Two passes as the interpreter computes them: mean, then the biased variance.
    mean = low.temp(elem, kept)
    reduce_into(low, x, mean, tail, True, "sum")
    scale_by_count(low, mean, kept, tail_sizes)
    var = low.temp(elem, kept)
    low.fill(var, 0.0)

    def square(s: Scalar, a: list[SSAValue], o: list[SSAValue]) -> list[SSAValue]:
        d = s.sub(a[0], a[1])
        return [s.emit(arith.AddfOp(o[0], s.mul(d, d), REASSOC))]

    low.generic(sizes, [(x, ident, True), low.buffer_read(mean, row)], [(var, row)], square, reductions=tail)
    scale_by_count(low, var, kept, tail_sizes)
    eps = op.prop("epsilon")
    # Scale and bias are 1-D over the normalized dimensions: read through a view.
    affine = [
        low.buffer_read(low.shape_view(low.read(p), tail_sizes), tuple(tail)) for p in params
    ]

    def normalize(s: Scalar, a: list[SSAValue], o: list[SSAValue]) -> list[SSAValue]:
        xv, m, v, *ps = a
        y = s.div(s.sub(xv, m), s.math(xmath.SqrtOp, s.add(v, s.const(eps, xv.type))))
        if ps:
            y = s.mul(y, ps[0])
        if len(ps) == 2:
            y = s.add(y, ps[1])
        return [y]

    reads = [(x, ident, True), low.buffer_read(mean, row), low.buffer_read(var, row), *affine]
    low.generic(sizes, reads, [(low.out(r), ident)], normalize)


# ----------------------------------------------------------------- batch norm


@lowers(pd.BatchNormOp, fusible=fuse_first_operand)
def _batch_norm(low: Lowerer, op: pd.BatchNormOp) -> None:
    """Batch statistics in two passes over x (mean, then the biased variance, as the
    interpreter computes them), per-channel coefficients `a = scale * rstd`,
    `b = bias - mu * a`, and one pass `y = x * a + b`; the [C] results (running
    statistics, saved mean and inverse std) in one loop over the channels.  Global
    statistics skip the two passes.  When the reduced sizes are only known at run
    time and may give one value per channel, selects on the [C] coefficients make
    `y = x` and leave the statistics alone there (the interpreter's pass-through)."""
    x, scale, bias, mean, variance = op.operands
    y, mean_out, var_out, saved_mean, saved_var = op.results
    sizes = low.sizes_of(x)
    rank = len(sizes)
    ch, axes = op.channel_axis(), op.reduced_axes()
    channels = sizes[ch]
    elem = elem_of_buffer(low.read(scale))
    eps, mom = op.prop("epsilon"), op.prop("momentum")
    ident, per_ch, vec = identity_map(rank), (ch,), (0,)
    reduced = [sizes[a] for a in axes]
    global_stats = op.global_stats()

    mu = var = None
    single: SSAValue | None = None  # i1: one value per channel (run-time check)
    if not global_stats:
        mu = low.temp(elem, [channels])
        reduce_into(low, x, mu, axes, False, "sum")
        scale_by_count(low, mu, [channels], reduced)
        var = low.temp(elem, [channels])
        low.fill(var, 0.0)

        def square(s: Scalar, a: list[SSAValue], o: list[SSAValue]) -> list[SSAValue]:
            d = s.sub(a[0], a[1])
            return [s.emit(arith.AddfOp(o[0], s.mul(d, d), REASSOC))]

        low.generic(sizes, [(x, ident, True), low.buffer_read(mu, per_ch)], [(var, per_ch)], square,
                    reductions=axes)
        scale_by_count(low, var, [channels], reduced)
        static = [n for n in reduced if isinstance(n, int)]
        if math.prod(static) == 1:
            count = low.count_as_float(reduced, elem)
            single = low.emit(arith.CmpfOp(count, Scalar(low.b).const(1.0, elem), "oeq")).results[0]

    def stats(s: Scalar, a: list[SSAValue]) -> tuple[SSAValue, SSAValue]:
        """(mean, variance) used for y, from the reads `[mu, var]` or the operands."""
        return a[0], a[1]

    stat_reads = ([low.buffer_read(mu, vec), low.buffer_read(var, vec)] if mu is not None and var is not None
                  else [(mean, vec, False), (variance, vec, False)])
    scalars = [single] if single is not None else []

    # Per-channel coefficients of y = x * a + b.
    coef_a, coef_b = low.temp(elem, [channels]), low.temp(elem, [channels])

    def coefficients(s: Scalar, a: list[SSAValue], o: list[SSAValue]) -> list[SSAValue]:
        sc = a[: len(scalars)]
        m, v, sc_w, sc_b = a[len(scalars):]
        rstd = s.div(s.const(1.0, elem), s.math(xmath.SqrtOp, s.add(v, s.const(eps, elem))))
        ca = s.mul(sc_w, rstd)
        cb = s.sub(sc_b, s.mul(m, ca))
        if sc:
            ca = s.select(sc[0], s.const(1.0, elem), ca)
            cb = s.select(sc[0], s.const(0.0, elem), cb)
        return [ca, cb]

    low.generic([channels], [*stat_reads, (scale, vec, False), (bias, vec, False)],
                [(coef_a, vec), (coef_b, vec)], coefficients, scalars=scalars)
    if low.needed(y):
        low.generic(sizes, [(x, ident, True), low.buffer_read(coef_a, per_ch), low.buffer_read(coef_b, per_ch)],
                    [(low.out(y), ident)], lambda s, a, o: [s.add(s.mul(a[0], a[1]), a[2])])

    # The [C] results, each only when something reads it (running statistics are
    # persistable updates, written in place where nothing reads the old value).
    outs = [r for r in (mean_out, var_out, saved_mean, saved_var) if low.needed(r)]
    if not outs:
        return
    which = [r in outs for r in (mean_out, var_out, saved_mean, saved_var)]
    reads = [*stat_reads, (mean, vec, False), (variance, vec, False)]

    def channel_results(s: Scalar, a: list[SSAValue], o: list[SSAValue]) -> list[SSAValue]:
        sc = a[: len(scalars)]
        m, v, old_m, old_v = a[len(scalars):]
        rstd = s.div(s.const(1.0, elem), s.math(xmath.SqrtOp, s.add(v, s.const(eps, elem))))
        if global_stats:
            vals = [old_m, old_v, old_m, rstd]
        else:
            keep, take = s.const(mom, elem), s.const(1.0 - mom, elem)
            vals = [s.add(s.mul(keep, old_m), s.mul(take, m)), s.add(s.mul(keep, old_v), s.mul(take, v)), m, rstd]
            if sc:
                zero = s.const(0.0, elem)
                vals = [s.select(sc[0], old_m, vals[0]), s.select(sc[0], old_v, vals[1]),
                        s.select(sc[0], zero, vals[2]), s.select(sc[0], zero, vals[3])]
        return [val for val, w in zip(vals, which) if w]

    low.generic([channels], reads, [(low.out(r), vec) for r in outs], channel_results, scalars=scalars)


@result_sizes(pd.BatchNormOp)
def _batch_norm_sizes(low: Lowerer, op: pd.BatchNormOp, r: SSAValue, k: int) -> Size | None:
    """`y` has x's sizes; the [C] results x's channel count."""
    xs = low.sizes_of(op.operands[0])
    return xs[k] if r is op.results[0] else xs[op.channel_axis()]


# -------------------------------------------------------------------- dropout

def _signed64(v: int) -> int:
    """An unsigned 64-bit constant as the signed value of the same bits."""
    v %= 1 << 64
    return v - (1 << 64) if v >= 1 << 63 else v


def dropout_keep(s: Scalar, flat: SSAValue, seed: int | SSAValue, p: float) -> SSAValue:
    """Whether element `flat` (row-major flat index) survives dropout: the
    interpreter's `dropout_uniform` (splitmix64 of `(seed, flat + 1)`, top
    `DROPOUT_BITS` bits) compared with `p` exactly, as an integer threshold
    (`dropout_threshold`); the constants are `pd.DropoutOp`'s.  `seed` is the
    property's value or an i64 scalar (the seed operand's, read at run time)."""
    i = s.emit(arith.IndexCastOp(flat, i64))

    def c(v: int) -> SSAValue:
        return s.const(_signed64(v), i64)

    def xorshift(z: SSAValue, k: int) -> SSAValue:
        return s.emit(arith.XOrIOp(z, s.emit(arith.ShRUIOp(z, c(k)))))

    z = s.add(seed if isinstance(seed, SSAValue) else c(seed), s.mul(s.add(i, c(1)), c(SPLITMIX_GAMMA)))
    for shift, mult in SPLITMIX_MIX:
        z = s.mul(xorshift(z, shift), c(mult))
    z = xorshift(z, SPLITMIX_LAST_SHIFT)
    top = s.emit(arith.ShRUIOp(z, c(64 - DROPOUT_BITS)))
    return s.cmp("ge", top, c(dropout_threshold(p)))


@lowers(pd.DropoutOp, fusible=fuse_first_operand)
def _dropout(low: Lowerer, op: pd.DropoutOp) -> None:
    x, r = op.operands[0], op.results[0]
    sizes = low.sizes_of(x)
    rank = len(sizes)
    p = op.prop("dropout_prob")
    upscale = op.prop("dropout_implementation") == "upscale_in_train"
    is_test = bool(op.prop("is_test"))
    # Dynamic sizes of the inner dimensions enter the flat index as loop invariants,
    # and so does a seed operand (read once, before the loops).
    dynamic = [z for z in sizes[1:] if isinstance(z, SSAValue)]
    invariants = list(dynamic)
    if op.seed_tensor is not None and not is_test:
        mem = low.read(op.seed_tensor)
        zeros = [low.index(0)] * len(shape_of(op.seed_tensor.type))
        seed_v = low.emit(memref.LoadOp.get(mem, zeros)).results[0]
        if seed_v.type != i64:
            seed_v = low.emit(arith.ExtSIOp(seed_v, i64)).results[0]
        invariants.append(seed_v)

    def body(s: Scalar, args: list[SSAValue], _outs: list[SSAValue]) -> list[SSAValue]:
        v = args[len(invariants)]
        elem = v.type
        if is_test:
            return [v if upscale else s.mul(v, s.const(1.0 - p, elem))]
        seed = args[len(dynamic)] if len(invariants) > len(dynamic) else op.prop("seed")
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
    low.generic(sizes, [(x, ident, True)], [(low.out(r), ident)], body, scalars=invariants)


result_sizes(pd.LayerNormOp, pd.DropoutOp)(sizes_of_first)

__all__ = [
    "blas_tag",
    "col2im",
    "contract",
    "dropout_keep",
    "im2col",
    "matmul_layout",
    "pool_axes",
    "static_dims",
]
