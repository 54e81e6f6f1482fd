"""Sequence layers (frontend/transformer.py, frontend/rnn.py): MultiHeadAttention and
the Transformer layers against numpy implementations of Paddle's equations (post-
and pre-norm, masks), the recurrent cells and layers against numpy recurrences
(bidirectional, stacked, initial states, sequence_length), gradients through time
against float64 finite differences, static programs that train and grow linearly
with the sequence length."""

from __future__ import annotations

from typing import Any

import numpy as np
import pullback as paddle
import pytest
from pullback.frontend import core
from pullback.testing import fd_grad

nn = paddle.nn
R = np.random.default_rng(4)


@pytest.fixture(autouse=True)
def eager() -> Any:
    core.disable_static()
    paddle.seed(7)
    yield
    core.disable_static()
    paddle.seed(0)


def to_f64(layer: Any) -> None:
    """Make a layer's parameters float64 (test helper: finite differences need it)."""
    for p in layer.parameters():
        p._data = p._data.astype(np.float64)


def P(t: Any) -> np.ndarray:
    return t.numpy().astype(np.float64)


def ln(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    m = x.mean(-1, keepdims=True)
    v = x.var(-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * w + b


def softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def mha_ref(m: Any, q: np.ndarray, k: np.ndarray, v: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    h, d = m.num_heads, m.head_dim

    def proj(lin: Any, x: np.ndarray) -> np.ndarray:
        y = x @ P(lin.weight) + P(lin.bias)
        return y.reshape(*y.shape[:2], h, d).transpose(0, 2, 1, 3)

    s = proj(m.q_proj, q) * d**-0.5 @ proj(m.k_proj, k).transpose(0, 1, 3, 2)
    if mask is not None:
        s = s + (np.where(mask, 0.0, -1e9) if mask.dtype == bool else mask)
    o = (softmax(s) @ proj(m.v_proj, v)).transpose(0, 2, 1, 3).reshape(q.shape[0], q.shape[1], -1)
    return o @ P(m.out_proj.weight) + P(m.out_proj.bias)


def enc_ref(layer: Any, x: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
    def n1(t):
        return ln(t, P(layer.norm1.weight), P(layer.norm1.bias))
    def n2(t):
        return ln(t, P(layer.norm2.weight), P(layer.norm2.bias))
    def ff(t):
        return np.maximum(t @ P(layer.linear1.weight) + P(layer.linear1.bias), 0) @ P(
            layer.linear2.weight) + P(layer.linear2.bias)
    if layer.normalize_before:
        y = x + mha_ref(layer.self_attn, n1(x), n1(x), n1(x), mask)
        return y + ff(n2(y))
    y = n1(x + mha_ref(layer.self_attn, x, x, x, mask))
    return n2(y + ff(y))


def test_multi_head_attention_matches_numpy():
    m = nn.MultiHeadAttention(8, 2, kdim=6, vdim=5, need_weights=True)
    q, k, v = R.standard_normal((2, 3, 8)), R.standard_normal((2, 4, 6)), R.standard_normal((2, 4, 5))
    mask = R.standard_normal((2, 1, 3, 4)) > -0.7
    mask[..., 0] = True
    out, w = m(*[paddle.to_tensor(a.astype("float32")) for a in (q, k, v)], attn_mask=paddle.to_tensor(mask))
    np.testing.assert_allclose(out.numpy(), mha_ref(m, q, k, v, mask), rtol=1e-4, atol=1e-5)
    assert w.shape == [2, 2, 3, 4]
    np.testing.assert_allclose(w.numpy().sum(-1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("normalize_before", [False, True])
def test_encoder_layer_matches_numpy(normalize_before):
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, normalize_before=normalize_before)
    x = R.standard_normal((2, 5, 8))
    causal = nn.Transformer.generate_square_subsequent_mask(5)
    np.testing.assert_array_equal(np.isinf(causal.numpy()), np.triu(np.ones((5, 5)), 1) > 0)
    got = layer(paddle.to_tensor(x.astype("float32")), causal)
    want = enc_ref(layer, x, np.where(np.triu(np.ones((5, 5)), 1) > 0, -np.inf, 0.0))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)


def test_encoder_decoder_transformer_structure_and_gradients():
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2, nn.LayerNorm(8))
    assert len(enc.layers) == 2 and enc.layers[0] is not enc.layers[1]
    assert enc.layers[0].linear1.weight is not enc.layers[1].linear1.weight
    keys = list(enc.state_dict())
    assert "layers.1.self_attn.q_proj.weight" in keys and "norm.weight" in keys
    dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(8, 2, 16, dropout=0.0, normalize_before=True), 2)
    t = nn.Transformer(8, 2, 1, 1, 16, dropout=0.0)
    src, tgt = paddle.rand([2, 5, 8]), paddle.rand([2, 3, 8])
    out = t(src, tgt, tgt_mask=nn.Transformer.generate_square_subsequent_mask(3))
    assert out.shape == [2, 3, 8]
    assert dec(tgt, enc(src)).shape == [2, 3, 8]
    # gradients reach every parameter of the full model
    out.sum().backward()
    assert all(p.grad is not None for p in t.parameters())
    # float64 finite differences through one encoder layer
    layer = nn.TransformerEncoderLayer(4, 2, 8, dropout=0.0)
    to_f64(layer)
    x = R.standard_normal((1, 3, 4))
    proj = R.standard_normal((1, 3, 4))
    xt = paddle.to_tensor(x, stop_gradient=False)
    (g,) = paddle.grad((layer(xt) * paddle.to_tensor(proj)).sum(), [xt])
    num = fd_grad(lambda a: float((enc_ref(layer, a) * proj).sum()), x)
    np.testing.assert_allclose(g.numpy(), num, rtol=1e-5, atol=1e-7)


# --------------------------------------------------------------------- RNNs


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def cell_ref(cell: Any, x: np.ndarray, state: Any) -> tuple[np.ndarray, Any]:
    xw = x @ P(cell.weight_ih).T + P(cell.bias_ih)
    if isinstance(cell, nn.LSTMCell):
        h, c = state
        i, f, g, o = np.split(xw + h @ P(cell.weight_hh).T + P(cell.bias_hh), 4, -1)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        return h, (h, c)
    if isinstance(cell, nn.GRUCell):
        h = state
        xr, xz, xc = np.split(xw, 3, -1)
        hr, hz, hc = np.split(state @ P(cell.weight_hh).T + P(cell.bias_hh), 3, -1)
        r, z = sigmoid(xr + hr), sigmoid(xz + hz)
        c = np.tanh(xc + r * hc)
        h = (h - c) * z + c
        return h, h
    act = np.tanh if cell.activation == "tanh" else (lambda v: np.maximum(v, 0))
    h = act(xw + state @ P(cell.weight_hh).T + P(cell.bias_hh))
    return h, h


def seq_ref(cell: Any, x: np.ndarray, state: Any, reverse: bool, lens: np.ndarray | None) -> tuple[np.ndarray, Any]:
    """Run one direction sample by sample over each sample's own length."""
    b, t, _ = x.shape
    outs = np.zeros((b, t, cell.hidden_size))
    finals = []
    for n in range(b):
        L = t if lens is None else int(lens[n])
        s = tuple(v[n:n + 1] for v in state) if isinstance(state, tuple) else state[n:n + 1]
        order = range(L - 1, -1, -1) if reverse else range(L)
        for k in order:
            o, s = cell_ref(cell, x[n:n + 1, k], s)
            outs[n, k] = o[0]
        finals.append(s)
    if isinstance(state, tuple):
        return outs, tuple(np.concatenate([f[i] for f in finals]) for i in range(2))
    return outs, np.concatenate(finals)


@pytest.mark.parametrize("cls", ["SimpleRNN", "LSTM", "GRU"])
@pytest.mark.parametrize("direction,num_layers,use_lens", [("forward", 1, False), ("bidirect", 2, True),
                                                           ("forward", 2, True)])
def test_recurrent_layers_match_numpy(cls, direction, num_layers, use_lens):
    m = getattr(nn, cls)(3, 4, num_layers=num_layers, direction=direction)
    to_f64(m)
    x = R.standard_normal((3, 5, 3))
    lens = np.array([5, 2, 4]) if use_lens else None
    nd = 2 if direction == "bidirect" else 1
    lstm = cls == "LSTM"
    h0 = R.standard_normal((num_layers * nd, 3, 4))
    c0 = R.standard_normal((num_layers * nd, 3, 4))
    init = (paddle.to_tensor(h0), paddle.to_tensor(c0)) if lstm else paddle.to_tensor(h0)
    y, final = m(paddle.to_tensor(x), init,
                 sequence_length=paddle.to_tensor(lens) if use_lens else None)
    inp = x
    finals = []
    for layer in range(num_layers):
        cells = [m[layer].cell] if nd == 1 else [m[layer].cell_fw, m[layer].cell_bw]
        outs = []
        for d, cell in enumerate(cells):
            k = layer * nd + d
            st = (h0[k], c0[k]) if lstm else h0[k]
            o, f = seq_ref(cell, inp, st, d == 1, lens)
            outs.append(o)
            finals.append(f)
        inp = np.concatenate(outs, -1)
    np.testing.assert_allclose(y.numpy(), inp, rtol=1e-10, atol=1e-12)
    if lstm:
        np.testing.assert_allclose(final[0].numpy(), np.stack([f[0] for f in finals]), rtol=1e-10)
        np.testing.assert_allclose(final[1].numpy(), np.stack([f[1] for f in finals]), rtol=1e-10)
    else:
        np.testing.assert_allclose(final.numpy(), np.stack(finals), rtol=1e-10)


def test_lstm_gradients_through_time_match_finite_differences():
    m = nn.LSTM(2, 3, direction="bidirect", time_major=True)
    to_f64(m)
    x = R.standard_normal((4, 2, 2))  # time-major
    proj = R.standard_normal((4, 2, 6))
    w = m[0].cell_bw.weight_hh

    def loss(xv: np.ndarray) -> float:
        with paddle.no_grad():
            return float((m(paddle.to_tensor(xv))[0].numpy() * proj).sum())

    xt = paddle.to_tensor(x, stop_gradient=False)
    gx, gw = paddle.grad((m(xt)[0] * paddle.to_tensor(proj)).sum(), [xt, w])
    np.testing.assert_allclose(gx.numpy(), fd_grad(loss, x), rtol=1e-5, atol=1e-8)
    w0 = w.numpy()

    def loss_w(v: np.ndarray) -> float:
        w._data = v
        return loss(x)

    numw = fd_grad(loss_w, w0)
    w._data = w0
    np.testing.assert_allclose(gw.numpy(), numw, rtol=1e-5, atol=1e-8)


def test_cells_and_rnn_wrappers():
    x = R.standard_normal((2, 4, 3))
    for cell in (nn.SimpleRNNCell(3, 5, activation="relu"), nn.LSTMCell(3, 5), nn.GRUCell(3, 5)):
        to_f64(cell)
        out, _ = cell(paddle.to_tensor(x[:, 0]))
        zero = (np.zeros((2, 5)), np.zeros((2, 5))) if isinstance(cell, nn.LSTMCell) else np.zeros((2, 5))
        np.testing.assert_allclose(out.numpy(), cell_ref(cell, x[:, 0], zero)[0], rtol=1e-12)
        y, _ = nn.RNN(cell, is_reverse=True)(paddle.to_tensor(x))
        np.testing.assert_allclose(y.numpy(), seq_ref(cell, x, zero, True, None)[0], rtol=1e-10)
    fw, bw = nn.GRUCell(3, 2), nn.GRUCell(3, 2)
    y, (sf, sb) = nn.BiRNN(fw, bw)(paddle.rand([2, 4, 3]))
    assert y.shape == [2, 4, 4] and sf.shape == [2, 2] and sb.shape == [2, 2]
    with pytest.raises(ValueError, match="LSTM: direction must be"):
        nn.LSTM(3, 4, direction="both")
    with pytest.raises(ValueError, match="SimpleRNNCell: activation must be 'tanh' or 'relu'"):
        nn.SimpleRNNCell(3, 4, activation="gelu")


def _static_lstm_program(steps: int) -> tuple[Any, Any, Any, Any]:
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [None, steps, 3], "float32")
        lstm = nn.LSTM(3, 4)
        y, (h, c) = lstm(x)
        loss = paddle.mean(y) + paddle.mean(h) + paddle.mean(c)
        paddle.optimizer.SGD(0.1).minimize(loss)
    return main, startup, loss, x


def test_static_lstm_and_transformer_train_and_stay_linear_in_length():
    paddle.enable_static()
    sizes = [len(_static_lstm_program(t)[0].global_block().ops) for t in (4, 8, 16)]
    assert sizes[2] - sizes[1] == 2 * (sizes[1] - sizes[0])  # a constant number of ops per step
    main, startup, loss, _ = _static_lstm_program(5)
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    exe.run(startup)
    feed = {"x": R.standard_normal((2, 5, 3)).astype("float32")}
    first = exe.run(main, feed=feed, fetch_list=[loss])[0]
    for _ in range(5):
        last = exe.run(main, feed=feed, fetch_list=[loss])[0]
    assert last < first
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        src = paddle.static.data("src", [None, 6, 8], "float32")
        enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0), 2)
        out = enc(src, nn.Transformer.generate_square_subsequent_mask(6))
        loss = paddle.mean(paddle.square(out - 1.0))
        paddle.optimizer.Adam(0.01).minimize(loss)
    exe.run(startup)
    feed = {"src": R.standard_normal((3, 6, 8)).astype("float32")}
    first = exe.run(main, feed=feed, fetch_list=[loss])[0]
    for _ in range(5):
        last = exe.run(main, feed=feed, fetch_list=[loss])[0]
    assert last < first
