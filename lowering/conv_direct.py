"""Direct convolution loop nests, and the cost rule choosing them over im2col + GEMM.

`lowering/nn.py` lowers `conv2d`, `conv2d_filter_grad` and `conv2d_transpose` as
im2col + BLAS.  With few channels the GEMM is a bad shape for BLAS (M = 6 or 16
output channels, K = 9..150) and im2col's copy (K times the input) costs as much
as the product; there these loop nests, which need no column buffer, are faster:

* `conv2d` (`direct_correlation`): parallel over `(n, o, y)` output rows; per input
  channel of the group the `kh*kw` weights are loaded once and one loop over the
  output columns `x` adds every tap's `w * x_pad[n, c, y*sh + i*dh, x*sw + j*dw]`
  into the output row, taps unrolled in its body.  That loop is contiguous (for
  `sw = 1`) and has no carried value, so LLVM's loop vectorizer turns it into
  vector loads and FMAs; the row it accumulates into stays in L1.
* `conv2d_transpose` with unit strides: the same loop nest, since the input
  gradient of a stride-1 convolution is the correlation of the (re-padded) output
  gradient with the flipped, channel-swapped filter.  Strided transposes keep
  GEMM + col2im (their taps do not reach every output pixel).
* `conv2d_filter_grad` (`direct_filter_grad`): parallel over `(o, c, i)` filter
  rows, carrying `kw` accumulators over `n`, `y` and an innermost loop over `x`
  whose sums are reassociable (`REASSOC`): vectorized reductions, no columns.

Padding is applied once up front (a zero-padded copy, as `im2col` does), so no
loop tests bounds.  The cost rule (`choose`, one place) picks the direct nest when
the product's reduction per output is small -- `K = C/G*kh*kw` (forward, filter
gradient) or `Co/G*kh*kw` (input gradient) at most `DIRECT_MAX_K` -- or the
output channels per group are few (`DIRECT_MAX_M`), with unit horizontal stride
(strided columns would gather); narrow operands read by the bfloat16 GEMM
(`widen._narrow_product`: a float32 result of bfloat16 operands) stay on GEMM.

Measured with `benchmarks/bench_conv.py` (one thread, `taskset -c 1`, a shared
2-core AMD EPYC with AVX2), medians, microseconds, GEMM -> direct:

    (filled in from the benchmark; see benchmarks/RESULTS.md)

`STRATEGY` forces one path (tests exercise both; the benchmark times both).  It
is not part of the disk cache's key: set it only with the cache off or in tests
that compare against the interpreter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Attribute, SSAValue

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

DIRECT_MAX_K = 160
"""The largest per-output reduction (`C/G*kh*kw`) lowered directly: measured on
the LeNet and ResNet shapes (module doc)."""

DIRECT_MAX_M = 16
"""Output channels per group up to which the direct nest is used whatever `K`."""

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
            return "gemm"
        k = ws[0] // g * ws[2] * ws[3]  # (Ci/G) * kh * kw: the input gradient's channels
        m = ws[1]
    elif filter_grad:
        kh, kw = op.prop("filter_size")
        k = xs[1] // g * kh * kw
        m = ws[1] // g
    else:
        k = ws[1] * ws[2] * ws[3]
        m = ws[0] // g
    if STRATEGY is not None:
        return STRATEGY
    if strides[1] != 1:
        return "gemm"
    return "direct" if k <= DIRECT_MAX_K or m <= DIRECT_MAX_M else "gemm"


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


def _row_buffer(s: Scalar, elem: Attribute, shape: Sequence[int]) -> SSAValue:
    """A small stack buffer private to one parallel iteration (static: LLVM places
    it in the entry block of the function running the iteration)."""
    return s.emit(memref.AllocaOp.get(elem, shape=list(shape)))


def direct_correlation(
    low: Lowerer, x: SSAValue, hw: Taps, before: Taps, out: SSAValue, n: Size, in_c: int, out_c: int,
    group_out: int, group_in: int, weight: WeightAt, khw: Taps, strides: Taps, dilations: Taps, out_hw: Taps,
) -> None:
    """`out[n, o, y, x] = sum_{k, i, j} weight(o, k, i, j) * x_pad[n, g*group_in + k,
    y*sh + i*dh, x*sw + j*dw]` with `g = o // group_out`, where `x_pad` is `x`
    (`[n, in_c, *hw]`) placed at offset `before` in zeros: the loop nest of the
    module doc.  Each output row is summed in a stack row of `lanes(OW)` columns
    and then stored."""
    elem = elem_of_buffer(out)
    (kh, kw), (sh, sw), (dh, dw), (oh, ow) = khw, strides, dilations, out_hw
    wide = lanes(ow)
    size = ((oh - 1) * sh + (kh - 1) * dh + 1, (wide - 1) * sw + (kw - 1) * dw + 1)
    src = padded(low, x, n, in_c, hw, before, size)
    low.note_read(src)
    low.note_read(out)
    index = IndexType()

    block = out_block(group_out)

    def row(s: Scalar, ivs: list[SSAValue]) -> None:
        bn, ob, y = ivs
        zero_i = s.const(0, index)
        bo = s.mul(ob, s.const(block, index)) if block != 1 else ob
        outs = [_offset(s, bo, b) for b in range(block)]
        bs = [s.const(b, index) for b in range(block)]
        acc_rows = _row_buffer(s, elem, [block, wide])

        def clear(s1: Scalar, xx: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
            for b in bs:
                store(s1, s1.const(0.0, elem), acc_rows, [b, xx])
            return []

        for_range(s, zero_i, s.const(wide, index), [], clear)
        first = s.mul(group_of(s, bo, group_out), s.const(group_in, index))
        ybase = s.mul(y, s.const(sh, index)) if sh != 1 else y

        def channel(s1: Scalar, k: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
            c = s1.add(first, k)
            taps = [([weight(s1, o_, k, i, j) for o_ in outs], _offset(s1, ybase, i * dh), j * dw)
                    for i in range(kh) for j in range(kw)]

            def column(s2: Scalar, xx: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
                accs = [load(s2, acc_rows, [b, xx]) for b in bs]
                xb = s2.mul(xx, s2.const(sw, index)) if sw != 1 else xx
                for ws, yy, dx in taps:
                    v = load(s2, src, [bn, c, yy, _offset(s2, xb, dx)])
                    accs = [s2.add(a, s2.mul(wv, v)) for a, wv in zip(accs, ws)]
                for b, a in zip(bs, accs):
                    store(s2, a, acc_rows, [b, xx])
                return []

            for_range(s1, s1.const(0, index), s1.const(wide, index), [], column)
            return []

        for_range(s, zero_i, s.const(group_in, index), [], channel)

        def emit(s1: Scalar, xx: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
            for b, o_ in zip(bs, outs):
                store(s1, load(s1, acc_rows, [b, xx]), out, [bn, o_, y, xx])
            return []

        for_range(s, zero_i, s.const(ow, index), [], emit)

    parallel(low, [n, out_c // block, oh], row)


def direct_filter_grad(
    low: Lowerer, x: SSAValue, hw: Taps, before: Taps, grad: SSAValue, out: SSAValue, n: Size, in_c: int,
    out_c: int, group_out: int, group_in: int, khw: Taps, strides: Taps, dilations: Taps, out_hw: Taps,
) -> None:
    """`out[o, k, i, j] = sum_{n, y, x} grad[n, o, y, x] * x_pad[n, g*group_in + k,
    y*sh + i*dh, x*sw + j*dw]` (`g = o // group_out`; `x_pad` as in
    `direct_correlation`): parallel over filter rows `(o, k, i)`; per output column
    lane a running sum for each of the `kw` taps (a stack `[kw, lanes(OW)]`, added
    to by a vectorizable loop with no carried value), the lanes `x < OW` summed at
    the end.  The gradient is read zero-padded to `lanes(OW)` columns."""
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

    def filter_row(s: Scalar, ivs: list[SSAValue]) -> None:
        bo, k, i = ivs
        c = s.add(s.mul(group_of(s, bo, group_out), s.const(group_in, index)), k)
        zero_i, wide_i = s.const(0, index), s.const(wide, index)
        row0 = s.mul(i, s.const(dh, index)) if dh != 1 else i
        acc = _row_buffer(s, elem, [kw, wide])
        js = [s.const(j, index) for j in range(kw)]

        def clear(s1: Scalar, xx: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
            for j in js:
                store(s1, s1.const(0.0, elem), acc, [j, xx])
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
                        gv = load(s3, gpad, [bn, bo, y, xx])
                        xb = s3.mul(xx, s3.const(sw, index)) if sw != 1 else xx
                        v = load(s3, src, [bn, c, yy, _offset(s3, xb, j * dw)])
                        store(s3, s3.add(load(s3, acc, [jv, xx]), s3.mul(gv, v)), acc, [jv, xx])
                        return []

                    for_range(s2, s2.const(0, index), s2.const(wide, index), [], column)
                return []

            for_range(s1, zero_i, s1.const(oh, index), [], out_row)
            return []

        for_range(s, zero_i, batch, [], image)
        for j, jv in enumerate(js):

            def total(s1: Scalar, xx: SSAValue, carried: list[SSAValue], jv: SSAValue = jv) -> list[SSAValue]:
                return [s1.emit(arith.AddfOp(carried[0], load(s1, acc, [jv, xx]), REASSOC))]

            (v,) = for_range(s, zero_i, s.const(ow, index), [s.const(0.0, elem)], total)
            store(s, v, out, [bo, k, i, jv])

    parallel(low, [out_c, group_in, kh], filter_row)


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


__all__ = ["DIRECT_MAX_K", "DIRECT_MAX_M", "STRATEGY", "choose", "direct_correlation", "direct_filter_grad", "group_of", "group_rest", "lanes", "padded"]
