"""Kernels of the recurrent family: `pd.rnn` and `pd.rnn_grad` in numpy.

The forward pass projects each layer's whole input sequence with one matmul per
direction (`[T*B, in] x [in, G*H]`) and runs the time loop with one `[B, H] x [H, G*H]`
product per step; it saves in `reserve` the activated gates and the states (layout:
`pullback.dialects.pd.rnn`).  The backward pass (BPTT) walks the steps in reverse
processing order computing the pre-activation gate gradients, then forms the weight
gradients and the input gradient with single matmuls over all steps.

Masks of `sequence_length`: with `m = t < length`, a step's new state is
`m * new + (1 - m) * old` and its output `m * h_new`; the reserve keeps the masked
states (where `m = 0` no gradient reaches the gate values, so they are never read).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pullback.dialects import pd
from pullback.dialects.pd.rnn import RnnLayout
from pullback.runtime.interpreter import kernel
from pullback.runtime.kernels.nn import dropout_keep


def _sigmoid(x: np.ndarray) -> np.ndarray:
    """The logistic function, without overflow warnings for large |x|."""
    return 0.5 * (np.tanh(0.5 * x) + 1.0)


def _masks(seq: np.ndarray | None, T: int, B: int, dtype: np.dtype) -> np.ndarray | None:
    """`[T, B, 1]` step masks (1 where `t < sequence_length`), or None."""
    if seq is None:
        return None
    lens = np.asarray(seq).reshape(-1)
    if lens.shape[0] != B:
        raise ValueError(f"pd.rnn: sequence_length has {lens.shape[0]} entries for a batch of {B}")
    return (np.arange(T)[:, None] < lens[None, :]).astype(dtype)[:, :, None]


def _weights(lay: RnnLayout, weights: Sequence[np.ndarray], blk: int):
    """(W_ih, W_hh, b_ih, b_hh) of block `blk` (layer * D + direction)."""
    nb = lay.blocks
    return weights[2 * blk], weights[2 * blk + 1], weights[2 * nb + 2 * blk], weights[2 * nb + 2 * blk + 1]


def _order(T: int, direction: int) -> range:
    """The steps in processing order."""
    return range(T - 1, -1, -1) if direction == 1 else range(T)


def _dropout_scale(lay: RnnLayout, layer: int, shape: tuple[int, ...], p: float, seed: int,
                   dtype: np.dtype) -> np.ndarray:
    """The inter-layer dropout scales of layer `layer`'s input (0 or `1/(1-p)`)."""
    keep = dropout_keep(seed + layer, shape, p)
    factor = 0.0 if p >= 1.0 else 1.0 / (1.0 - p)
    return keep.astype(dtype) * dtype.type(factor)


def rnn_forward(lay: RnnLayout, x: np.ndarray, pre: Sequence[np.ndarray],
                weights: Sequence[np.ndarray], seq: np.ndarray | None, p: float,
                seed: int) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """`(out, final_states, reserve)` of a `pd.rnn` with this layout."""
    T, B, _ = x.shape
    H, D, dt = lay.hidden_size, lay.directions, x.dtype
    G = lay.gates * H
    masks = _masks(seq, T, B, dt)
    reserve = np.zeros((T, B, lay.reserve_width), dt)
    finals = [np.empty_like(s) for s in pre]
    xin = x
    out = x
    for layer in range(lay.num_layers):
        if layer > 0 and lay.dropout:
            off = lay.dropout_offset(layer)
            scale = _dropout_scale(lay, layer, xin.shape, p, seed, dt)
            reserve[:, :, off:off + D * H] = scale
            xin = xin * scale
        out = np.zeros((T, B, D * H), dt)
        for d in range(D):
            blk = layer * D + d
            w_ih, w_hh, b_ih, b_hh = _weights(lay, weights, blk)
            xw = (xin.reshape(T * B, -1) @ w_ih.T + b_ih).reshape(T, B, G)
            res = reserve[:, :, lay.block_offset(layer, d):lay.block_offset(layer, d) + lay.block_width]
            h = pre[0][blk]
            c = pre[1][blk] if lay.mode == "LSTM" else None
            for t in _order(T, d):
                hw = h @ w_hh.T + b_hh
                if lay.mode == "LSTM":
                    a = xw[t] + hw
                    i, f = _sigmoid(a[:, :H]), _sigmoid(a[:, H:2 * H])
                    g, o = np.tanh(a[:, 2 * H:3 * H]), _sigmoid(a[:, 3 * H:])
                    c_new = f * c + i * g
                    h_new = o * np.tanh(c_new)
                    res[t, :, :4 * H] = np.concatenate([i, f, g, o], axis=1)
                elif lay.mode == "GRU":
                    r = _sigmoid(xw[t, :, :H] + hw[:, :H])
                    z = _sigmoid(xw[t, :, H:2 * H] + hw[:, H:2 * H])
                    hc = hw[:, 2 * H:]
                    cand = np.tanh(xw[t, :, 2 * H:] + r * hc)
                    h_new = (h - cand) * z + cand
                    res[t, :, :4 * H] = np.concatenate([r, z, cand, hc], axis=1)
                else:
                    a = xw[t] + hw
                    h_new = np.tanh(a) if lay.mode == "RNN_TANH" else np.maximum(a, 0)
                m = masks[t] if masks is not None else None
                if m is not None:
                    out[t, :, d * H:(d + 1) * H] = h_new * m
                    h = m * h_new + (1 - m) * h
                    if c is not None:
                        c = m * c_new + (1 - m) * c
                else:
                    out[t, :, d * H:(d + 1) * H] = h_new
                    h = h_new
                    if c is not None:
                        c = c_new
                if c is not None:
                    res[t, :, 4 * H:5 * H] = c
                res[t, :, -H:] = h
            finals[0][blk] = h
            if c is not None:
                finals[1][blk] = c
        xin = out
    return out, finals, reserve


def rnn_backward(lay: RnnLayout, x: np.ndarray, pre: Sequence[np.ndarray],
                 weights: Sequence[np.ndarray], seq: np.ndarray | None, reserve: np.ndarray,
                 g_out: np.ndarray, g_states: Sequence[np.ndarray], input_grad: bool = True,
                 ) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
    """`(d input, d pre_states, d weights)` by backpropagation through time (the input
    gradient left zero unless `input_grad`)."""
    T, B, _ = x.shape
    H, D, dt = lay.hidden_size, lay.directions, x.dtype
    G = lay.gates * H
    masks = _masks(seq, T, B, dt)
    d_pre = [np.zeros_like(s) for s in pre]
    d_w = [np.zeros_like(w) for w in weights]
    one = dt.type(1)

    def block(layer: int, d: int) -> np.ndarray:
        off = lay.block_offset(layer, d)
        return reserve[:, :, off:off + lay.block_width]

    def layer_output(layer: int) -> np.ndarray:
        """The (masked) outputs of `layer`, from its saved states."""
        hs = [block(layer, d)[:, :, -H:] for d in range(D)]
        y = np.concatenate(hs, axis=2) if D > 1 else hs[0]
        return y * masks if masks is not None else y

    def layer_input(layer: int) -> np.ndarray:
        if layer == 0:
            return x
        xin = layer_output(layer - 1)
        if lay.dropout:
            off = lay.dropout_offset(layer)
            xin = xin * reserve[:, :, off:off + D * H]
        return xin

    d_out = g_out.astype(dt, copy=True)
    d_x = np.zeros_like(x)
    for layer in range(lay.num_layers - 1, -1, -1):
        xin = layer_input(layer)
        d_xin = np.zeros_like(xin)
        for d in range(D):
            blk = layer * D + d
            w_ih, w_hh, _, _ = _weights(lay, weights, blk)
            res = block(layer, d)
            h0 = pre[0][blk]
            c0 = pre[1][blk] if lay.mode == "LSTM" else None
            order = list(_order(T, d))
            # The state each step starts from, in time order.
            h_prev = np.empty((T, B, H), dt)
            c_prev = np.empty((T, B, H), dt) if c0 is not None else None
            for k, t in enumerate(order):
                h_prev[t] = h0 if k == 0 else res[order[k - 1], :, -H:]
                if c_prev is not None:
                    c_prev[t] = c0 if k == 0 else res[order[k - 1], :, 4 * H:5 * H]
            dg_x = np.zeros((T, B, G), dt)  # pre-activation gradients (input side)
            dg_h = dg_x if lay.mode != "GRU" else np.zeros((T, B, G), dt)
            dH = g_states[0][blk].astype(dt, copy=True)
            dC = g_states[1][blk].astype(dt, copy=True) if c0 is not None else None
            dO = d_out[:, :, d * H:(d + 1) * H]
            for t in reversed(order):
                m = masks[t] if masks is not None else None
                dh_new = dH + dO[t]
                if m is not None:
                    dh_new = dh_new * m
                    dH = dH * (1 - m)
                else:
                    dH = np.zeros_like(dH)
                if lay.mode == "LSTM":
                    assert dC is not None and c_prev is not None
                    i, f = res[t, :, :H], res[t, :, H:2 * H]
                    g, o = res[t, :, 2 * H:3 * H], res[t, :, 3 * H:4 * H]
                    tc = np.tanh(res[t, :, 4 * H:5 * H])
                    dc_new = dC * m if m is not None else dC
                    dC = dC * (1 - m) if m is not None else np.zeros_like(dC)
                    dc_new = dc_new + dh_new * o * (one - tc * tc)
                    dg_x[t, :, :H] = dc_new * g * i * (one - i)
                    dg_x[t, :, H:2 * H] = dc_new * c_prev[t] * f * (one - f)
                    dg_x[t, :, 2 * H:3 * H] = dc_new * i * (one - g * g)
                    dg_x[t, :, 3 * H:] = dh_new * tc * o * (one - o)
                    dC = dC + dc_new * f
                elif lay.mode == "GRU":
                    r, z = res[t, :, :H], res[t, :, H:2 * H]
                    cand, hc = res[t, :, 2 * H:3 * H], res[t, :, 3 * H:4 * H]
                    dcand = dh_new * (one - z) * (one - cand * cand)
                    dz = dh_new * (h_prev[t] - cand) * z * (one - z)
                    dr = dcand * hc * r * (one - r)
                    dg_x[t, :, :H] = dr
                    dg_x[t, :, H:2 * H] = dz
                    dg_x[t, :, 2 * H:] = dcand
                    dg_h[t, :, :2 * H] = dg_x[t, :, :2 * H]
                    dg_h[t, :, 2 * H:] = dcand * r
                    dH = dH + dh_new * z
                else:
                    h_new = res[t, :, -H:]
                    act = one - h_new * h_new if lay.mode == "RNN_TANH" else (h_new > 0).astype(dt)
                    dg_x[t] = dh_new * act
                dH = dH + dg_h[t] @ w_hh
            d_pre[0][blk] = dH
            if dC is not None:
                d_pre[1][blk] = dC
            nb = lay.blocks
            # Weight gradients: one product over all steps each.
            d_w[2 * blk] = dg_x.reshape(T * B, G).T @ xin.reshape(T * B, -1)
            d_w[2 * blk + 1] = dg_h.reshape(T * B, G).T @ h_prev.reshape(T * B, H)
            d_w[2 * nb + 2 * blk] = dg_x.sum(axis=(0, 1))
            d_w[2 * nb + 2 * blk + 1] = dg_h.sum(axis=(0, 1))
            if layer > 0 or input_grad:
                d_xin += (dg_x.reshape(T * B, G) @ w_ih).reshape(d_xin.shape)
        if layer == 0:
            d_x = d_xin
        else:
            if lay.dropout:
                off = lay.dropout_offset(layer)
                d_xin = d_xin * reserve[:, :, off:off + D * H]
            d_out = d_xin
    return d_x, d_pre, d_w


@kernel(pd.RnnOp)
def rnn(op, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """The fused recurrence: `(out, *final_states, reserve, dropout_state)`."""
    assert isinstance(op, pd.RnnOp)
    lay = op.layout()
    x, pre, weights, seq = arrays[0], arrays[1:1 + lay.states], arrays[1 + lay.states:1 + lay.states + lay.weight_count], None
    if len(arrays) > 1 + lay.states + lay.weight_count:
        seq = arrays[-1]
    seed = op.prop("seed")
    out, finals, reserve = rnn_forward(lay, x, pre, weights, seq, op.prop("dropout_prob"), seed)
    return (out, *finals, reserve, np.array([seed], np.int64))


@kernel(pd.RnnGradOp)
def rnn_grad(op, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """Backpropagation through time: `(d input, *d pre_states, *d weights)`."""
    assert isinstance(op, pd.RnnGradOp)
    lay = op.layout()
    n = 1 + lay.states + lay.weight_count
    tail = 3 + lay.states
    x, pre, weights = arrays[0], arrays[1:1 + lay.states], arrays[1 + lay.states:n]
    seq = arrays[n] if len(arrays) > n + tail else None
    _, reserve, g_out, *g_states = arrays[len(arrays) - tail:]
    # As Paddle's kernel skips Input@GRAD when no one asks for it (and the lowering
    # when nothing reads it), the input gradient is computed only when it is read.
    wanted = bool(op.results[0].uses)
    d_x, d_pre, d_w = rnn_backward(lay, x, pre, weights, seq, reserve, g_out, g_states, wanted)
    return (d_x, *d_pre, *d_w)


__all__ = ["rnn_backward", "rnn_forward"]
