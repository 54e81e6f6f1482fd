"""Incremental-decoding cases run by both real Paddle (`gen_transformer_cache_reference.py`
writes `data/transformer_cache_reference.npz`) and pullback (`test_transformer_cache.py`):
each takes the `paddle` module, builds layers with weights drawn from a fixed numpy
generator (so both frameworks hold the same weights) and returns numpy arrays."""

from __future__ import annotations

from typing import Any

import numpy as np

D_MODEL, NHEAD, FF, SRC, TGT, BATCH = 8, 2, 16, 5, 4, 2


def _set_weights(paddle: Any, layer: Any, seed: int) -> None:
    """Every parameter, in name order, from one generator (float32)."""
    rng = np.random.default_rng(seed)
    for _name, p in sorted(layer.named_parameters()):
        p.set_value(paddle.to_tensor(rng.normal(0, 0.4, p.shape).astype("float32")))


def _inputs(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(BATCH, TGT, D_MODEL)).astype("float32"),
            rng.normal(size=(BATCH, SRC, D_MODEL)).astype("float32"))


def decoder(paddle: Any) -> dict[str, np.ndarray]:
    """A 2-layer post-norm TransformerDecoder: full causal decoding, then step by step
    with `gen_cache` (Cache for self-attention, StaticCache of the memory)."""
    nn = paddle.nn
    dec = nn.TransformerDecoder(nn.TransformerDecoderLayer(D_MODEL, NHEAD, FF, dropout=0.0), 2,
                                nn.LayerNorm(D_MODEL))
    dec.eval()
    _set_weights(paddle, dec, 1)
    tgt_np, mem_np = _inputs(2)
    tgt, memory = paddle.to_tensor(tgt_np), paddle.to_tensor(mem_np)
    # (Paddle's generate_square_subsequent_mask is an instance method: the mask by hand.)
    mask = paddle.to_tensor(np.triu(np.full((TGT, TGT), -np.inf, 'float32'), 1))
    full = dec(tgt, memory, tgt_mask=mask).numpy()
    cache = dec.gen_cache(memory)
    steps, lengths = [], []
    for t in range(TGT):
        out, cache = dec(tgt[:, t:t + 1], memory, cache=cache)
        steps.append(out.numpy())
        lengths.append(cache[0][0].k.shape[2])
    return {"full": full, "incremental": np.concatenate(steps, axis=1),
            "cache_lengths": np.array(lengths), "static_k": cache[1][1].k.numpy()}


def attention(paddle: Any) -> dict[str, np.ndarray]:
    """MultiHeadAttention with `need_weights`: an empty Cache grown by two steps (the
    outputs `(out, weights, cache)`), a prefilled `Cache(k, v)`, and a StaticCache."""
    nn = paddle.nn
    m = nn.MultiHeadAttention(D_MODEL, NHEAD, need_weights=True)
    _set_weights(paddle, m, 3)
    x_np, mem_np = _inputs(4)
    x, memory = paddle.to_tensor(x_np), paddle.to_tensor(mem_np)
    cache = m.gen_cache(x)
    out0, w0, cache = m(x[:, :1], cache=cache)
    out1, w1, cache = m(x[:, 1:3], cache=cache)
    pre = m.gen_cache(cache.k, cache.v)  # Cache(key, value) as given
    out2, _, pre = m(x[:, 3:], cache=pre)
    static = m.gen_cache(memory, memory, type=nn.MultiHeadAttention.StaticCache)
    out3, w3, static2 = m(x, cache=static)
    return {"out0": out0.numpy(), "w0": w0.numpy(), "out1": out1.numpy(), "w1": w1.numpy(),
            "k": cache.k.numpy(), "v": cache.v.numpy(), "out2": out2.numpy(),
            "pre_len": np.array(pre.k.shape[2]), "out3": out3.numpy(), "w3": w3.numpy(),
            "static_same": np.array(static2.k is static.k)}


def encoder(paddle: Any) -> dict[str, np.ndarray]:
    """TransformerEncoder with per-layer caches (Paddle's UniLM-style use): two chunks
    fed one after the other, each attending to everything fed so far."""
    nn = paddle.nn
    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(D_MODEL, NHEAD, FF, dropout=0.0,
                                                           normalize_before=True), 2)
    enc.eval()
    _set_weights(paddle, enc, 5)
    x = paddle.to_tensor(_inputs(6)[0])
    cache = enc.gen_cache(x)
    a, cache = enc(x[:, :2], cache=cache)
    b, cache = enc(x[:, 2:], cache=cache)
    return {"a": a.numpy(), "b": b.numpy(), "k1": cache[1].k.numpy()}


CASES = {"decoder": decoder, "attention": attention, "encoder": encoder}
