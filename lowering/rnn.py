"""Lowering of the recurrent family: `pd.rnn` and `pd.rnn_grad` as native time loops.

Forward, per layer and direction:

* the input projection of the whole sequence is ONE BLAS product
  `[T*B, in] x W_ih^T` into a `[T, B, G*H]` buffer;
* an `scf.for` over the steps runs one BLAS product `h x W_hh^T` (`[B, H] x [H, G*H]`)
  and one fused pointwise loop over `[B, H]` computing the gates (biases, activations,
  the `sequence_length` mask), writing the output step, the new state in place and
  the reserve (layout: `pullback.dialects.pd.rnn`, the same the numpy kernel uses).

Backward (BPTT), per layer (top first) and direction:

* the state each step started from is gathered into `[T, B, H]` buffers (h, and c for
  LSTM) from the reserve;
* an `scf.for` over the steps in reverse processing order runs one fused pointwise
  loop computing the pre-activation gate gradients of the step (kept for all steps)
  and one BLAS product carrying the state gradient back, `dgates x W_hh`;
* then the weight gradients and the input gradient are single BLAS products over
  all steps (`dgates^T x input`, `dgates^T x h_prev`, `dgates x W_ih`) and the bias
  gradients one reduction each.

The memory model has no offset views, so per-step slices are never views: step `t`
is read and written by computed indices inside the pointwise loops, and the
recurrent products use whole `[B, ...]` step buffers.  Inter-layer dropout draws
`pd.dropout`'s hash (`lowering.nn.dropout_keep`, seed `seed + layer`) as the kernel
does, keeps the scales in the reserve and reads them back in the backward pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import IndexType, IntegerAttr, i64
from xdsl.ir import Attribute, SSAValue

from pullback.dialects import pd
from pullback.dialects.pd.rnn import RESERVE_GATES, RnnLayout
from pullback.lowering import loop_nest
from pullback.lowering.lowerer import Lowerer
from pullback.lowering.lowerer.sizes import Size
from pullback.lowering.registry import lowers, result_sizes
from pullback.lowering.scalar import DimMap, Scalar
from pullback.lowering.views import elem_of_buffer
from pullback.lowering.elementwise import sigmoid
from pullback.lowering.nn import blas_tag, contract, dropout_keep

Read = tuple[SSAValue, DimMap, bool]


# ------------------------------------------------------------------ helpers


def _raw(low: Lowerer, mem: SSAValue, m: DimMap) -> Read:
    """A generic read of a buffer that is not a `pd` value."""
    return low.buffer_read(mem, m)


def _matmul(low: Lowerer, domain: Sequence[Size], a: Read, b: Read, out: SSAValue,
            accumulate: bool = False) -> None:
    """`out[d0, d1] (+)= sum_d2 a * b` as a BLAS-tagged contraction (`accumulate`:
    added to what `out` holds, BLAS `beta = 1`)."""
    if not accumulate:
        contract(low, domain, [a, b], (out, (0, 1)), [2])
        return

    def body(s: Scalar, r: list[SSAValue], o: list[SSAValue]) -> list[SSAValue]:
        return [s.add(o[0], s.mul(r[0], r[1]))]

    tag = blas_tag(domain, [a[1], b[1], (0, 1)], [2], elem_of_buffer(out))
    low.generic(domain, [a, b], [(out, (0, 1))], body, reductions=[2], library_call=tag)


def _column_sum(low: Lowerer, rows: Size, cols: int, src: SSAValue, out: SSAValue) -> None:
    """`out[j] = sum_i src[i, j]` (a bias gradient)."""
    low.fill(out, 0.0)

    def body(s: Scalar, r: list[SSAValue], o: list[SSAValue]) -> list[SSAValue]:
        return [s.add(o[0], r[0])]

    # Rows outer, columns inner: the inner loop runs along contiguous memory.
    low.generic([rows, cols], [_raw(low, src, (0, 1))], [(out, (1,))], body, reductions=[0])


def _time_loop(low: Lowerer, steps: Size, body: Callable[[Scalar, SSAValue], None]) -> None:
    """`scf.for k in [0, steps)`, the lowerer emitting into its body meanwhile (so
    that BLAS contractions and pointwise loops land inside the loop)."""
    outer = low.b

    def run(s: Scalar, k: SSAValue, _: list[SSAValue]) -> list[SSAValue]:
        low.b = s.b
        try:
            body(s, k)
        finally:
            low.b = outer
        return []

    loop_nest.for_range(Scalar(outer), low.index(0), low.as_value(steps), [], run)


def _ld(s: Scalar, mem: SSAValue, *idx: SSAValue) -> SSAValue:
    return loop_nest.load(s, mem, list(idx))


def _st(s: Scalar, v: SSAValue, mem: SSAValue, *idx: SSAValue) -> None:
    loop_nest.store(s, v, mem, list(idx))


def _at(s: Scalar, base: SSAValue | int, off: int) -> SSAValue:
    """`base + off` as an index (a constant when `base` is)."""
    if isinstance(base, int):
        return s.const(base + off, IndexType())
    return base if off == 0 else s.add(base, s.const(off, IndexType()))


def _step_time(s: Scalar, k: SSAValue, steps: SSAValue, reverse: bool) -> SSAValue:
    """Step `t` of iteration `k`: `k`, or `steps - 1 - k` when `reverse`."""
    if not reverse:
        return k
    return s.sub(s.sub(steps, s.const(1, IndexType())), k)


def _mask(s: Scalar, seq: SSAValue | None, t: SSAValue, b: SSAValue) -> SSAValue | None:
    """`t < sequence_length[b]` (an `i1`), or None without sequence lengths."""
    if seq is None:
        return None
    n = loop_nest.to_index(s, _ld(s, seq, b))
    return s.cmp("lt", t, n)


def _pick(s: Scalar, m: SSAValue | None, a: SSAValue, b: SSAValue) -> SSAValue:
    """`a` where the step is valid, else `b`."""
    return a if m is None else s.select(m, a, b)


def _tanh(s: Scalar, x: SSAValue) -> SSAValue:
    return s.math(xmath.TanhOp, x)


def _dropout_scales(low: Lowerer, op: pd.PdOp, layer: int, sizes: Sequence[Size], elem: Attribute,
                    body: Callable[[Scalar, list[SSAValue], SSAValue], None]) -> None:
    """Over `[T, B, D*H]`, the inter-layer dropout scale of `layer`'s input (0 or
    `1/(1-p)`: `pd.dropout`'s hash with seed `seed + layer` over the row-major flat
    index, as the kernel draws it), handed to `body(s, ivs, scale)`."""
    _, B, DH = sizes
    p = op.prop("dropout_prob")
    seed = op.prop("seed") + layer

    def run(s: Scalar, ivs: list[SSAValue]) -> None:
        t, b, k = ivs
        flat = s.add(s.mul(s.add(s.mul(t, low.as_value(B)), b), low.as_value(DH)), k)
        factor = s.const(0.0 if p >= 1.0 else 1.0 / (1.0 - p), elem)
        body(s, ivs, s.select(dropout_keep(s, flat, seed, p), factor, s.const(0.0, elem)))

    loop_nest.parallel(low, sizes, run)


def _h_slot(lay: RnnLayout) -> int:
    """Where a reserve block keeps the (masked) state h, in units of H: its last slot."""
    return RESERVE_GATES[lay.mode] - 1


def _weights(lay: RnnLayout, weights: Sequence[SSAValue], blk: int) -> tuple[SSAValue, ...]:
    """(W_ih, W_hh, b_ih, b_hh) of block `blk` (pd values or buffers, in list order)."""
    nb = lay.blocks
    return weights[2 * blk], weights[2 * blk + 1], weights[2 * nb + 2 * blk], weights[2 * nb + 2 * blk + 1]


# ------------------------------------------------------------------ forward


@lowers(pd.RnnOp)
def _rnn(low: Lowerer, op: pd.RnnOp) -> None:
    lay = op.layout()
    x, pre, weights, seq_v, _ = op.parts()
    T, B, _ = low.sizes_of(x)
    H, D, G, S = lay.hidden_size, lay.directions, lay.gates * lay.hidden_size, lay.states
    res = list(op.results)
    out_mem = low.out(res[0])
    finals = [low.out(r) for r in res[1:1 + S]]
    reserve = low.out(res[1 + S])
    seed_mem = low.out(res[2 + S])
    elem = elem_of_buffer(out_mem)
    pre_m = [low.read(p) for p in pre]
    w_m = [low.read(w) for w in weights]
    seq = low.read(seq_v) if seq_v is not None else None
    TB = low.mul_sizes([T, B])

    def store_seed(s: Scalar, ivs: list[SSAValue]) -> None:
        c = s.emit(arith.ConstantOp(IntegerAttr(op.prop("seed"), i64)))
        _st(s, c, seed_mem, s.const(0, IndexType()))

    loop_nest.parallel(low, [1], store_seed)
    xw = low.temp(elem, [T, B, G])
    hw = low.temp(elem, [B, G])
    h = low.temp(elem, [B, H])
    c = low.temp(elem, [B, H]) if lay.mode == "LSTM" else None
    xin = low.read(x)
    dropped = low.temp(elem, [T, B, D * H]) if lay.dropout else None
    steps = low.as_value(T)
    for layer in range(lay.num_layers):
        last = layer == lay.num_layers - 1
        y = out_mem if last else low.temp(elem, [T, B, D * H])
        width = lay.layer_input(layer)
        if layer > 0 and lay.dropout:
            assert dropped is not None
            off_d = lay.dropout_offset(layer)

            def drop(s: Scalar, ivs: list[SSAValue], scale: SSAValue, xin: SSAValue = xin,
                     off_d: int = off_d) -> None:
                t, b, k = ivs
                _st(s, scale, reserve, t, b, _at(s, k, off_d))
                _st(s, s.mul(_ld(s, xin, t, b, k), scale), dropped, t, b, k)

            _dropout_scales(low, op, layer, [T, B, D * H], elem, drop)
            xin = dropped
        for d in range(D):
            blk = layer * D + d
            w_ih, w_hh, b_ih, b_hh = _weights(lay, w_m, blk)
            # The input projection of all steps: one product.
            _matmul(low, [TB, G, width], _raw(low, low.shape_view(xin, [TB, width]), (0, 2)),
                    _raw(low, w_ih, (1, 2)), low.shape_view(xw, [TB, G]))

            def init(s: Scalar, ivs: list[SSAValue], blk: int = blk) -> None:
                b, j = ivs
                bi = s.const(blk, IndexType())
                _st(s, _ld(s, pre_m[0], bi, b, j), h, b, j)
                if c is not None:
                    _st(s, _ld(s, pre_m[1], bi, b, j), c, b, j)

            loop_nest.parallel(low, [B, H], init)
            off = lay.block_offset(layer, d)

            def step(s: Scalar, k: SSAValue, d: int = d, w_hh: SSAValue = w_hh, b_ih: SSAValue = b_ih,
                     b_hh: SSAValue = b_hh, off: int = off, y: SSAValue = y) -> None:
                t = _step_time(s, k, steps, d == 1)
                _matmul(low, [B, G, H], _raw(low, h, (0, 2)), _raw(low, w_hh, (1, 2)), hw)

                def gates(s: Scalar, ivs: list[SSAValue]) -> None:
                    b, j = ivs
                    zero = s.const(0.0, elem)

                    def xg(g: int) -> SSAValue:
                        col = _at(s, j, g * H)
                        return s.add(_ld(s, xw, t, b, col), _ld(s, b_ih, col))

                    def hg(g: int) -> SSAValue:
                        col = _at(s, j, g * H)
                        return s.add(_ld(s, hw, b, col), _ld(s, b_hh, col))

                    def keep(g: int, v: SSAValue) -> None:
                        _st(s, v, reserve, t, b, _at(s, j, off + g * H))

                    m = _mask(s, seq, t, b)
                    h_old = _ld(s, h, b, j)
                    if lay.mode == "LSTM":
                        assert c is not None
                        i_g = sigmoid(s, s.add(xg(0), hg(0)))
                        f_g = sigmoid(s, s.add(xg(1), hg(1)))
                        g_g = _tanh(s, s.add(xg(2), hg(2)))
                        o_g = sigmoid(s, s.add(xg(3), hg(3)))
                        c_old = _ld(s, c, b, j)
                        c_new = s.add(s.mul(f_g, c_old), s.mul(i_g, g_g))
                        h_new = s.mul(o_g, _tanh(s, c_new))
                        c_keep = _pick(s, m, c_new, c_old)
                        for g, v in enumerate((i_g, f_g, g_g, o_g, c_keep)):
                            keep(g, v)
                        _st(s, c_keep, c, b, j)
                    elif lay.mode == "GRU":
                        r = sigmoid(s, s.add(xg(0), hg(0)))
                        z = sigmoid(s, s.add(xg(1), hg(1)))
                        hc = hg(2)
                        cand = _tanh(s, s.add(xg(2), s.mul(r, hc)))
                        h_new = s.add(s.mul(s.sub(h_old, cand), z), cand)
                        for g, v in enumerate((r, z, cand, hc)):
                            keep(g, v)
                    else:
                        a = s.add(xg(0), hg(0))
                        h_new = _tanh(s, a) if lay.mode == "RNN_TANH" else s.max(a, zero)
                    h_keep = _pick(s, m, h_new, h_old)
                    keep(_h_slot(lay), h_keep)
                    _st(s, h_keep, h, b, j)
                    _st(s, _pick(s, m, h_new, zero), y, t, b, _at(s, j, d * H))

                loop_nest.parallel(low, [B, H], gates)

            _time_loop(low, T, step)

            def final(s: Scalar, ivs: list[SSAValue], blk: int = blk) -> None:
                b, j = ivs
                bi = s.const(blk, IndexType())
                _st(s, _ld(s, h, b, j), finals[0], bi, b, j)
                if c is not None:
                    _st(s, _ld(s, c, b, j), finals[1], bi, b, j)

            loop_nest.parallel(low, [B, H], final)
        xin = y


@result_sizes(pd.RnnOp)
def _rnn_sizes(low: Lowerer, op: pd.RnnOp, r: SSAValue, k: int) -> Size | None:
    x = op.args[0]
    if 1 <= r.index <= op.layout().states:  # type: ignore[attr-defined]
        return low.sizes_of(x)[1] if k == 1 else None  # a state [L*D, batch, H]
    return low.sizes_of(x)[k] if k < 2 else None  # out and reserve [T, batch, ...]


# ------------------------------------------------------------------ backward


@lowers(pd.RnnGradOp)
def _rnn_grad(low: Lowerer, op: pd.RnnGradOp) -> None:
    lay = op.layout()
    x, pre, weights, seq_v, tail = op.parts()
    _, reserve_v, g_out_v, *g_states_v = tail
    T, B, _ = low.sizes_of(x)
    H, D, G, S = lay.hidden_size, lay.directions, lay.gates * lay.hidden_size, lay.states
    res = list(op.results)
    want_dx = low.needed(res[0])
    d_x = low.out(res[0])
    d_pre = [low.out(r) for r in res[1:1 + S]]
    d_w = [low.out(r) for r in res[1 + S:]]
    elem = elem_of_buffer(d_x)
    x_m = low.read(x)
    pre_m = [low.read(p) for p in pre]
    w_m = [low.read(w) for w in weights]
    seq = low.read(seq_v) if seq_v is not None else None
    reserve = low.read(reserve_v)
    g_out = low.read(g_out_v)
    g_states = [low.read(g) for g in g_states_v]
    TB = low.mul_sizes([T, B])
    steps = low.as_value(T)
    HI = _h_slot(lay)

    dgx = low.temp(elem, [T, B, G])
    dgh = low.temp(elem, [T, B, G]) if lay.mode == "GRU" else dgx
    dg_step = low.temp(elem, [B, G])
    h_prev = low.temp(elem, [T, B, H])
    c_prev = low.temp(elem, [T, B, H]) if lay.mode == "LSTM" else None
    dH = low.temp(elem, [B, H])
    dH_rec = low.temp(elem, [B, H])
    dC = low.temp(elem, [B, H]) if lay.mode == "LSTM" else None
    xin_t = low.temp(elem, [T, B, D * H]) if lay.num_layers > 1 else None

    d_out = g_out
    for layer in range(lay.num_layers - 1, -1, -1):
        width = lay.layer_input(layer)
        if layer == 0:
            xin = x_m
        else:
            assert xin_t is not None
            xin = xin_t

            def gather_input(s: Scalar, ivs: list[SSAValue], layer: int = layer, xin: SSAValue = xin) -> None:
                t, b, j = ivs
                zero = s.const(0.0, elem)
                m = _mask(s, seq, t, b)
                for dd in range(D):
                    hv = _pick(s, m, _ld(s, reserve, t, b, _at(s, j, lay.block_offset(layer - 1, dd) + HI * H)),
                               zero)
                    col = _at(s, j, dd * H)
                    if lay.dropout:  # the scale the forward pass drew, from the reserve
                        hv = s.mul(hv, _ld(s, reserve, t, b, _at(s, col, lay.dropout_offset(layer))))
                    _st(s, hv, xin, t, b, col)

            loop_nest.parallel(low, [T, B, H], gather_input)
        d_xin = d_x if layer == 0 else low.temp(elem, [T, B, D * H])
        for d in range(D):
            blk = layer * D + d
            w_ih, w_hh, _, _ = _weights(lay, w_m, blk)
            off = lay.block_offset(layer, d)
            rev = d == 1

            def prev_states(s: Scalar, ivs: list[SSAValue], blk: int = blk, off: int = off,
                            rev: bool = rev) -> None:
                t, b, j = ivs
                one_i = s.const(1, IndexType())
                tp = s.add(t, one_i) if rev else s.sub(t, one_i)
                ok = loop_nest.in_range(s, tp, steps)
                tc = loop_nest.clamp(s, tp, steps)
                bi = s.const(blk, IndexType())
                hv = _ld(s, reserve, tc, b, _at(s, j, off + HI * H))
                _st(s, s.select(ok, hv, _ld(s, pre_m[0], bi, b, j)), h_prev, t, b, j)
                if c_prev is not None:
                    cv = _ld(s, reserve, tc, b, _at(s, j, off + 4 * H))
                    _st(s, s.select(ok, cv, _ld(s, pre_m[1], bi, b, j)), c_prev, t, b, j)

            loop_nest.parallel(low, [T, B, H], prev_states)

            def init(s: Scalar, ivs: list[SSAValue], blk: int = blk) -> None:
                b, j = ivs
                bi = s.const(blk, IndexType())
                _st(s, _ld(s, g_states[0], bi, b, j), dH, b, j)
                _st(s, s.const(0.0, elem), dH_rec, b, j)
                if dC is not None:
                    _st(s, _ld(s, g_states[1], bi, b, j), dC, b, j)

            loop_nest.parallel(low, [B, H], init)

            def step(s: Scalar, k: SSAValue, d: int = d, off: int = off, rev: bool = rev,
                     w_hh: SSAValue = w_hh, d_out: SSAValue = d_out) -> None:
                # Reverse processing order: the forward direction walks t = T-1 .. 0.
                t = _step_time(s, k, steps, not rev)

                def grads(s: Scalar, ivs: list[SSAValue]) -> None:
                    b, j = ivs
                    one = s.const(1.0, elem)
                    zero = s.const(0.0, elem)

                    def rv(g: int) -> SSAValue:
                        return _ld(s, reserve, t, b, _at(s, j, off + g * H))

                    def put(g: int, v: SSAValue, v_h: SSAValue | None = None) -> None:
                        col = _at(s, j, g * H)
                        _st(s, v, dgx, t, b, col)
                        if dgh is not dgx:
                            _st(s, v if v_h is None else v_h, dgh, t, b, col)
                        _st(s, v if v_h is None else v_h, dg_step, b, col)

                    m = _mask(s, seq, t, b)
                    dh_all = s.add(_ld(s, dH, b, j), _ld(s, dH_rec, b, j))
                    dh_new = _pick(s, m, s.add(dh_all, _ld(s, d_out, t, b, _at(s, j, d * H))), zero)
                    carry = _pick(s, m, zero, dh_all)
                    if lay.mode == "LSTM":
                        assert dC is not None and c_prev is not None
                        i_g, f_g, g_g, o_g = rv(0), rv(1), rv(2), rv(3)
                        tc = _tanh(s, rv(4))
                        dc_all = _ld(s, dC, b, j)
                        dc_new = s.add(_pick(s, m, dc_all, zero),
                                       s.mul(s.mul(dh_new, o_g), s.sub(one, s.mul(tc, tc))))
                        put(0, s.mul(s.mul(dc_new, g_g), s.mul(i_g, s.sub(one, i_g))))
                        put(1, s.mul(s.mul(dc_new, _ld(s, c_prev, t, b, j)), s.mul(f_g, s.sub(one, f_g))))
                        put(2, s.mul(s.mul(dc_new, i_g), s.sub(one, s.mul(g_g, g_g))))
                        put(3, s.mul(s.mul(dh_new, tc), s.mul(o_g, s.sub(one, o_g))))
                        _st(s, s.add(_pick(s, m, zero, dc_all), s.mul(dc_new, f_g)), dC, b, j)
                    elif lay.mode == "GRU":
                        r, z, cand, hc = rv(0), rv(1), rv(2), rv(3)
                        dcand = s.mul(s.mul(dh_new, s.sub(one, z)), s.sub(one, s.mul(cand, cand)))
                        dz = s.mul(s.mul(dh_new, s.sub(_ld(s, h_prev, t, b, j), cand)), s.mul(z, s.sub(one, z)))
                        dr = s.mul(s.mul(dcand, hc), s.mul(r, s.sub(one, r)))
                        put(0, dr)
                        put(1, dz)
                        put(2, dcand, s.mul(dcand, r))
                        carry = s.add(carry, s.mul(dh_new, z))
                    else:
                        hv = rv(0)
                        if lay.mode == "RNN_TANH":
                            act = s.sub(one, s.mul(hv, hv))
                        else:
                            act = s.select(s.cmp("gt", hv, zero), one, zero)
                        put(0, s.mul(dh_new, act))
                    _st(s, carry, dH, b, j)

                loop_nest.parallel(low, [B, H], grads)
                _matmul(low, [B, H, G], _raw(low, dg_step, (0, 2)), _raw(low, w_hh, (2, 1)), dH_rec)

            _time_loop(low, T, step)

            def finish(s: Scalar, ivs: list[SSAValue], blk: int = blk) -> None:
                b, j = ivs
                bi = s.const(blk, IndexType())
                _st(s, s.add(_ld(s, dH, b, j), _ld(s, dH_rec, b, j)), d_pre[0], bi, b, j)
                if dC is not None:
                    _st(s, _ld(s, dC, b, j), d_pre[1], bi, b, j)

            loop_nest.parallel(low, [B, H], finish)
            # Weight, bias and input gradients: one product (or reduction) each.
            nb = lay.blocks
            dgx2 = low.shape_view(dgx, [TB, G])
            dgh2 = low.shape_view(dgh, [TB, G]) if dgh is not dgx else dgx2
            _matmul(low, [G, width, TB], _raw(low, dgx2, (2, 0)),
                    _raw(low, low.shape_view(xin, [TB, width]), (2, 1)), d_w[2 * blk])
            _matmul(low, [G, H, TB], _raw(low, dgh2, (2, 0)),
                    _raw(low, low.shape_view(h_prev, [TB, H]), (2, 1)), d_w[2 * blk + 1])
            _column_sum(low, TB, G, dgx2, d_w[2 * nb + 2 * blk])
            _column_sum(low, TB, G, dgh2, d_w[2 * nb + 2 * blk + 1])
            if layer > 0 or want_dx:  # (an input that needs no gradient: no product)
                _matmul(low, [TB, width, G], _raw(low, dgx2, (0, 2)), _raw(low, w_ih, (2, 1)),
                        low.shape_view(d_xin, [TB, width]), accumulate=d == 1)
        if layer > 0 and lay.dropout:
            # Back through the dropout of this layer's input: the same scales.
            def undrop(s: Scalar, ivs: list[SSAValue], layer: int = layer, d_xin: SSAValue = d_xin) -> None:
                t, b, k = ivs
                scale = _ld(s, reserve, t, b, _at(s, k, lay.dropout_offset(layer)))
                _st(s, s.mul(_ld(s, d_xin, t, b, k), scale), d_xin, t, b, k)

            loop_nest.parallel(low, [T, B, D * H], undrop)
        d_out = d_xin


@result_sizes(pd.RnnGradOp)
def _rnn_grad_sizes(low: Lowerer, op: pd.RnnGradOp, r: SSAValue, k: int) -> Size | None:
    return low.sizes_of(op.args[r.index])[k]  # type: ignore[attr-defined]

