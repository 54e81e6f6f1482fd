"""Direct convolution loop nests, and the cost rule choosing them over im2col + GEMM.

`lowering/nn.py` lowers `conv2d`, `conv2d_filter_grad` and `conv2d_transpose` as
im2col + BLAS.  The GEMM shapes of small-channel layers are bad for BLAS (M = 6 or
16 output channels, K = 9..150), im2col's copy (K times the input) costs as much as
the product, and on this project's CPU (AMD EPYC, AVX-512) OpenBLAS's sgemm runs
even ResNet's 64->64 product at ~25 GFLOP/s where oneDNN's direct kernels run ~95.
These loop nests need no column buffer:

* `conv2d` (`direct_correlation`): parallel over `(n, o-block)`: a block of
  `BLOCK` output channels, one output row each, for every row in turn, summed
  in a buffer `[BLOCK, lanes(OW)]` of that iteration's own (reused over the
  rows, so it stays in L1; no stack buffer, which the GPU path lacks); per
  input channel of the group, one loop over the output columns adds every tap's
  `w[o, c, i, j] * x_pad[n, c, y*sh + i*dh, x*sw + j*dw]` (taps unrolled in its
  body, each input load feeding the block's sums).  LLVM vectorizes that loop
  (contiguous for `sw = 1`, no carried value), unrolls it (a row is a few
  vectors) and keeps the block's sums in registers across the channel loop (the
  buffers are `noalias`): a register-blocked micro-kernel with no packing.
  Rows up to 16 wide (one AVX-512 vector) are computed two at a time, for twice
  the independent sums (one row per block waited on its FMA chains).
* `conv2d_transpose` with unit strides: the same nest, since the input gradient of
  a stride-1 convolution is the correlation of the output gradient, re-padded,
  with the flipped, channel-swapped filter.  Strided transposes keep GEMM +
  col2im (their taps do not reach every output pixel).
* `conv2d_filter_grad` (`direct_filter_grad`): parallel over `(o-block, c, i)`
  filter rows; per output-column lane a running sum for each of the block's
  channels and `kw` taps (`[BLOCK, kw, lanes(OW)]` per iteration), added to by
  one vectorized loop per tap over `n`, `y` (one loop per tap: in a loop over
  all taps LLVM's load PRE carries loads from one column to the next, which the
  vectorizer rejects); the lanes `x < OW` summed at the end.

Rows are computed in whole vectors (`lanes`): the input is zero-padded once up
front (as `im2col` does) wide enough that the extra columns read zeros, so no
loop tests bounds and none has a scalar remainder (which, on LeNet's 28-wide rows,
cost as much as the vector body).  The extra columns are never stored (forward)
or never summed (filter gradient), so they cannot change a result.

The cost rule (`choose`, the one place deciding): direct when the horizontal
stride is 1 (all strides, for a transpose) and the output rows are at least
`DIRECT_MIN_OW` wide (filter gradients of rows under 10 wide only up to
`NARROW_FILTER_GRAD_MAX_K`), or each output sums at most `DIRECT_MAX_K`
products; GEMM otherwise, for the filter gradient of a 1x1 convolution, and for
bfloat16 operands of a float32 product (`widen._narrow_product`: the bfloat16
GEMM).  Measured with `benchmarks/bench_conv.py` (2026-11-28; one thread, `taskset
-c 1`, thread CPU time on the shared 2-core AMD EPYC at load 6-7), medians in ms,
GEMM -> direct (torch's oneDNN), forward / filter gradient / input gradient:

    LeNet 1->6 3x3 p1 28x28 b64     0.33->0.12 (0.46)  0.59->0.14 (0.41)  0.40->0.18 (2.9)
    LeNet 1->6 5x5 28x28 b64        0.73->0.18 (0.55)  0.97->0.15 (0.51)  1.10->0.39 (5.3)
    LeNet 6->16 5x5 14x14 b64       0.59->0.52 (0.41)  1.05->0.52 (0.85)  1.32->0.76 (1.13)
    16->16 3x3 p1 8x8 b64           0.44->0.22 (0.24)  0.62->0.27 (0.32)  0.92->0.22 (0.30)
    ResNet 3->64 3x3 p1 32x32 b32   4.5->1.7 (2.6)     4.1->1.6 (2.8)     3.6->2.3 (7.7)
    ResNet 64->64 3x3 p1 32x32 b32  91->28 (23)        82->42 (28)        87->28 (25)
    ResNet 128->128 3x3 16x16 b32   53->24 (21)        53->33 (25)        56->24 (22)
    64->64 3x3 p1 8x8 b32           2.6->1.7 (1.4)     2.7->2.0 (1.8)     3.1->1.7 (1.7)
    256->256 3x3 p1 8x8 b32         29->26 (20)        30 kept (26)       30->26 (20)
    1x1 64->64 32x32 b32            6.9->5.5 (5.2)     6.7 kept (6.0)     7.5->5.5 (6.1)
    kept on GEMM, forced direct:    128->128 3x3 on 4x4 b32 1.8->3.1, 1.9->3.9, 2.2->3.2;
      512->512 on 4x4 26->89; 64->128 3x3 stride 2 19->57 (filter gradient 19->153);
      256->256 filter gradient on 8x8 29->33; 1x1 filter gradient 7.2->11.1.

`STRATEGY` forces one path (tests exercise both, the benchmark times both).  It is
in neither the disk cache's key nor the program text, and programs of one text
share their linked machine code (`Jit.load`): a comparison of both paths in one
process must compile programs of different texts, with the disk cache off.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType
from xdsl.ir import SSAValue

from pullback.dialects import pd
from pullback.dialects.pd.base import DYN, shape_of
from pullback.lowering.lowerer import Lowerer
from pullback.lowering.lowerer.sizes import Size
from pullback.lowering.loop_nest import copy_window, for_range, load, parallel, store
from pullback.lowering.scalar import REASSOC, Scalar
from pullback.lowering.views import elem_of_buffer

STRATEGY: str | None = None
"""`"gemm"` or `"direct"` forces every convolution onto that path where it applies
(tests, `benchmarks/bench_conv.py`); None applies the cost rule."""

DIRECT_MIN_OW = 8
"""Output rows at least this wide are lowered directly whatever the channels: every
measured forward and input gradient ran faster, from LeNet's to ResNet's 256->256
on 8x8 (module doc); the columns rounded up to whole vectors cost at most 60%."""

DIRECT_MAX_K = 160
"""Narrower rows are lowered directly only when each output sums at most this many
products (`C/G*kh*kw`): 128->128 and 512->512 3x3 on 4x4 ran 1.5-3x slower."""

NARROW_FILTER_GRAD_MAX_K = 576
"""Filter gradients of rows under 10 wide are direct only up to this `K`: on 8x8,
64->64 3x3 (K = 576) ran faster directly, 256->256 (K = 2304) 1.15x slower."""

Taps = tuple[int, int]
WeightAt = Callable[[Scalar, SSAValue, SSAValue, int, int], SSAValue]
"""`weight(s, out_channel, k, i, j)`: the filter value multiplying source channel
`k` of the output channel's group at tap `(i, j)`."""


def _static(shape: Sequence[int]) -> bool:
    return DYN not in shape


def choose(op: pd.PdOp) -> str:
    """`"direct"` or `"gemm"` for a convolution op (`conv2d`, `conv2d_filter_grad`,
    `conv2d_transpose`): the cost rule of the module doc, or `STRATEGY`."""
    x, w = op.operands[0], op.operands[1]
    r = op.results[0]
    xs, ws, rs = shape_of(x.type), shape_of(w.type), shape_of(r.type)
    filter_grad = isinstance(op, pd.Conv2DFilterGradOp)
    # (The filter gradient's second operand is the batched output gradient, its
    # result the filter; the other two read a filter and give a batched result.)
    if not _static([*xs[1:], *(ws[1:] if filter_grad else ws), *(rs if filter_grad else rs[1:])]):
        return "gemm"  # (the GEMM path reports what must be static)
    if pd.elem_of(x.type) != pd.elem_of(r.type):
        return "gemm"  # bfloat16 operands of a float32 product: the bfloat16 GEMM
    strides = op.prop("strides")
    g = op.prop("groups")
    if isinstance(op, pd.Conv2DTransposeOp):
        if tuple(strides) != (1, 1):
            return "gemm"  # (its taps do not reach every output pixel)
        k = ws[0] // g * ws[2] * ws[3]  # (Ci/G) * kh * kw: summed per input-gradient pixel
        ow = rs[3]
        taps = ws[2] * ws[3]
    else:
        kh, kw = op.prop("filter_size") if filter_grad else ws[2:]
        k = xs[1] // g * kh * kw
        ow = ws[3] if filter_grad else rs[3]
        taps = kh * kw
    if STRATEGY is not None:
        return STRATEGY
    if strides[1] != 1:
        return "gemm"  # (strided columns would be gathered)
    if filter_grad and taps == 1:
        return "gemm"  # (measured slower: module doc)
    if ow >= DIRECT_MIN_OW:
        narrow_and_deep = filter_grad and ow < 10 and k > NARROW_FILTER_GRAD_MAX_K
        return "gemm" if narrow_and_deep else "direct"
    return "direct" if k <= DIRECT_MAX_K else "gemm"


def padded(
    low: Lowerer, src: SSAValue, n: Size, c: int, hw: Sequence[int], before: Sequence[int], size: Sequence[int],
) -> SSAValue:
    """`src` (`[n, c, *hw]`) placed at offset `before` (negative: cropped) in a
    zero `[n, c, *size]` buffer; `src` itself when that is the identity."""
    if list(before) == [0, 0] and list(size) == list(hw):
        return src
    out = low.temp(elem_of_buffer(src), [n, c, *size])
    low.fill(out, 0.0)
    lo = [max(0, -b) for b in before]  # first source row/column kept
    hi = [min(h, z - b) for h, z, b in zip(hw, size, before)]
    if all(a < b for a, b in zip(lo, hi)):
        copy_window(low, src, out, [n, c, hi[0] - lo[0], hi[1] - lo[1]],
                    src_offsets=[0, 0, *lo], dst_offsets=[0, 0, lo[0] + before[0], lo[1] + before[1]])
    return out


LANES = 8
"""Output columns are computed in whole multiples of this (AVX2's float32 vector):
the column loop then has no scalar remainder, which on LeNet's 28- and 10-wide
rows cost as much as its vector body; the extra columns read zero padding and are
never stored (forward) or never summed (filter gradient)."""


BLOCK = 4
"""Output channels computed together by `direct_correlation` (at most; a divisor of
the channels per group): each input load feeds that many independent sums, where
one sum per row waited on the latency of its chain of FMAs (ResNet's 64->64 3x3
ran at 5 cycles an FMA)."""


def out_block(channels: int) -> int:
    """The largest divisor of `channels` up to `BLOCK`."""
    return next(b for b in range(min(BLOCK, channels), 0, -1) if channels % b == 0)


def lanes(ow: int) -> int:
    """`ow` rounded up to a whole number of `LANES`."""
    return -(-ow // LANES) * LANES


def direct_correlation(
    low: Lowerer, x: SSAValue, hw: Taps, before: Taps, out: SSAValue, n: Size, in_c: int, out_c: int,
    group_out: int, group_in: int, weight: WeightAt, khw: Taps, strides: Taps, dilations: Taps, out_hw: Taps,
) -> None:
    """`out[n, o, y, x] = sum_{k, i, j} weight(o, k, i, j) * x_pad[n, g*group_in + k,
    y*sh + i*dh, x*sw + j*dw]` with `g = o // group_out`, where `x_pad` is `x`
    (`[n, in_c, *hw]`) placed at offset `before` in zeros: the loop nest of the
    module doc.  Each output row is summed in `lanes(OW)` columns, then stored."""
    elem = elem_of_buffer(out)
    (kh, kw), (sh, sw), (dh, dw), (oh, ow) = khw, strides, dilations, out_hw
    wide = lanes(ow)
    size = ((oh - 1) * sh + (kh - 1) * dh + 1, (wide - 1) * sw + (kw - 1) * dw + 1)
    src = padded(low, x, n, in_c, hw, before, size)
    low.note_read(src)
    low.note_read(out)
    index = IndexType()

    block = out_block(group_out)
    # A row block's sums, in memory each parallel iteration owns (the GPU path has
    # no private arrays, so no stack buffer) and reuses for every row: it stays in
    # L1, and LLVM keeps it in registers over the channel loop (the buffers are
    # `noalias`).  Parallel over (image, o-block), rows inside: consecutive
    # iterations read the same image, which stays in L2 (a loop over the images
    # inside, one row of every image and channel in turn, ran 1x1 64->64 on 32x32
    # at 2.2x the GEMM's time).
    # Rows narrower than two vectors are computed two at a time: twice the
    # independent sums per input load (one 8-wide row per channel block waited on
    # its FMA chains: ResNet-18's 64->64 on 8x8 ran slower than the GEMM).
    pair = 2 if wide <= 2 * LANES and oh % 2 == 0 else 1
    sums = low.temp(elem, [n, out_c // block, block, pair, wide])
    low.note_read(sums)

    def rows(s: Scalar, ivs: list[SSAValue]) -> None:
        bn, ob = ivs
        zero_i = s.const(0, index)
        bo = s.mul(ob, s.const(block, index)) if block != 1 else ob
        outs = [_offset(s, bo, b) for b in range(block)]
        slots = [(s.const(b, index), s.const(r, index)) for b in range(block) for r in range(pair)]
        first = s.mul(group_of(s, bo, group_out), s.const(group_in, index))

        def row(s0: Scalar, yp: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
            y = s0.mul(yp, s0.const(pair, index)) if pair != 1 else yp
            ybase = s0.mul(y, s0.const(sh, index)) if sh != 1 else y

            def clear(s1: Scalar, xx: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
                for b, r in slots:
                    store(s1, s1.const(0.0, elem), sums, [bn, ob, b, r, xx])
                return []

            for_range(s0, zero_i, s0.const(wide, index), [], clear)

            def channel(s1: Scalar, k: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
                c = s1.add(first, k)
                taps = [([weight(s1, o_, k, i, j) for o_ in outs],
                         [_offset(s1, ybase, i * dh + r * sh) for r in range(pair)], j * dw)
                        for i in range(kh) for j in range(kw)]

                def column(s2: Scalar, xx: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
                    accs = [load(s2, sums, [bn, ob, b, r, xx]) for b, r in slots]
                    xb = s2.mul(xx, s2.const(sw, index)) if sw != 1 else xx
                    for ws, yys, dx in taps:
                        vs = [load(s2, src, [bn, c, yy, _offset(s2, xb, dx)]) for yy in yys]
                        accs = [s2.add(accs[q], s2.mul(ws[q // pair], vs[q % pair])) for q in range(len(slots))]
                    for (b, r), a in zip(slots, accs):
                        store(s2, a, sums, [bn, ob, b, r, xx])
                    return []

                for_range(s1, s1.const(0, index), s1.const(wide, index), [], column)
                return []

            for_range(s0, zero_i, s0.const(group_in, index), [], channel)

            def emit(s1: Scalar, xx: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
                for (b, r), q in zip(slots, range(len(slots))):
                    store(s1, load(s1, sums, [bn, ob, b, r, xx]), out, [bn, outs[q // pair], _offset(s1, y, q % pair), xx])
                return []

            for_range(s0, zero_i, s0.const(ow, index), [], emit)
            return []

        for_range(s, zero_i, s.const(oh // pair, index), [], row)

    parallel(low, [n, out_c // block], rows)


def direct_filter_grad(
    low: Lowerer, x: SSAValue, hw: Taps, before: Taps, grad: SSAValue, out: SSAValue, n: Size, in_c: int,
    out_c: int, group_out: int, group_in: int, khw: Taps, strides: Taps, dilations: Taps, out_hw: Taps,
) -> None:
    """`out[o, k, i, j] = sum_{n, y, x} grad[n, o, y, x] * x_pad[n, g*group_in + k,
    y*sh + i*dh, x*sw + j*dw]` (`g = o // group_out`; `x_pad` as in
    `direct_correlation`): parallel over filter rows `(o-block, k, i)`; per output
    column lane a running sum for each of the block's channels and the `kw` taps
    (`[BLOCK, kw, lanes(OW)]` of the iteration's own), added to by one vectorizable
    loop per tap with no carried value, the lanes `x < OW` summed at the end.  (A
    block per `(o-block, k)` with all taps inside, reading each row once, measured
    slower: LeNet's 6->16 filter gradient 2.6x.)  The gradient is read zero-padded
    to `lanes(OW)` columns."""
    elem = elem_of_buffer(out)
    (kh, kw), (sh, sw), (dh, dw), (oh, ow) = khw, strides, dilations, out_hw
    wide = lanes(ow)
    size = ((oh - 1) * sh + (kh - 1) * dh + 1, (wide - 1) * sw + (kw - 1) * dw + 1)
    src = padded(low, x, n, in_c, hw, before, size)
    gpad = padded(low, grad, n, out_c, (oh, ow), (0, 0), (oh, wide))
    low.note_read(src)
    low.note_read(gpad)
    low.note_read(out)
    index = IndexType()
    batch = low.as_value(n)

    block = out_block(group_out)
    # Per-lane sums in memory each parallel iteration owns (as `direct_correlation`).
    sums = low.temp(elem, [out_c // block, group_in, kh, block, kw, wide])
    low.note_read(sums)

    def filter_row(s: Scalar, ivs: list[SSAValue]) -> None:
        ob, k, i = ivs
        bo = s.mul(ob, s.const(block, index)) if block != 1 else ob
        outs = [_offset(s, bo, b) for b in range(block)]
        c = s.add(s.mul(group_of(s, bo, group_out), s.const(group_in, index)), k)
        zero_i, wide_i = s.const(0, index), s.const(wide, index)
        row0 = s.mul(i, s.const(dh, index)) if dh != 1 else i
        bs = [s.const(b, index) for b in range(block)]
        js = [s.const(j, index) for j in range(kw)]

        def clear(s1: Scalar, xx: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
            for b in bs:
                for j in js:
                    store(s1, s1.const(0.0, elem), sums, [ob, k, i, b, j, xx])
            return []

        for_range(s, zero_i, wide_i, [], clear)

        def image(s1: Scalar, bn: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
            def out_row(s2: Scalar, y: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
                yy = s2.add(s2.mul(y, s2.const(sh, index)) if sh != 1 else y, row0)
                # One loop per tap: in a loop over all taps LLVM's load PRE carries
                # x_pad[.., x + j*dw] from one column to the next (a recurrence
                # the loop vectorizer rejects).
                for j, jv in enumerate(js):

                    def column(s3: Scalar, xx: SSAValue, _: list[SSAValue], j: int = j, jv: SSAValue = jv) -> list[SSAValue]:
                        xb = s3.mul(xx, s3.const(sw, index)) if sw != 1 else xx
                        v = load(s3, src, [bn, c, yy, _offset(s3, xb, j * dw)])
                        for b, o_ in zip(bs, outs):
                            gv = load(s3, gpad, [bn, o_, y, xx])
                            store(s3, s3.add(load(s3, sums, [ob, k, i, b, jv, xx]), s3.mul(gv, v)), sums, [ob, k, i, b, jv, xx])
                        return []

                    for_range(s2, s2.const(0, index), wide_i, [], column)
                return []

            for_range(s1, zero_i, s1.const(oh, index), [], out_row)
            return []

        for_range(s, zero_i, batch, [], image)
        for b, o_ in zip(bs, outs):
            for jv in js:

                def total(s1: Scalar, xx: SSAValue, carried: list[SSAValue], b: SSAValue = b,
                          jv: SSAValue = jv) -> list[SSAValue]:
                    return [s1.emit(arith.AddfOp(carried[0], load(s1, sums, [ob, k, i, b, jv, xx]), REASSOC))]

                (v,) = for_range(s, zero_i, s.const(ow, index), [s.const(0.0, elem)], total)
                store(s, v, out, [o_, k, i, jv])

    parallel(low, [out_c // block, group_in, kh], filter_row)


def group_of(s: Scalar, a: SSAValue, b: int) -> SSAValue:
    """`a // b` for a non-negative index (`b` static): the group of channel `a` when
    groups have `b` channels."""
    return a if b == 1 else s.emit(arith.DivUIOp(a, s.const(b, IndexType())))


def group_rest(s: Scalar, a: SSAValue, b: int) -> SSAValue:
    """`a % b` for a non-negative index (`b` static): channel `a`'s place in its group."""
    return s.const(0, IndexType()) if b == 1 else s.emit(arith.RemUIOp(a, s.const(b, IndexType())))


def _offset(s: Scalar, a: SSAValue, k: int) -> SSAValue:
    """`a + k` (static `k`, 0 folded)."""
    return a if k == 0 else s.add(a, s.const(k, IndexType()))


__all__ = ["DIRECT_MAX_K", "DIRECT_MIN_OW", "NARROW_FILTER_GRAD_MAX_K", "STRATEGY", "choose", "direct_correlation", "direct_filter_grad", "group_of", "group_rest", "lanes", "padded"]
