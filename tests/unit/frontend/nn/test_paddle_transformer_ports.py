"""Ports of PaddlePaddle's own `nn.Transformer` unit tests that use the public API,
rewritten for pytest (PaddlePaddle/Paddle, Apache-2.0).  Paddle draws the sizes at
random on every run; here they come from a seeded generator.

* `test/legacy_test/test_transformer_api.py`: `MultiHeadAttention` against a numpy
  reference (self- and cross-attention, with and without `Cache` / `StaticCache`,
  int64 and float64 masks); `TransformerEncoderLayer` against the numpy
  composition of attention, layer norms and the FFN, with and without `gen_cache`;
  `TransformerDecoderLayer` likewise with the decoder's (incremental, static)
  caches; `TransformerEncoder` (with and without caches), `TransformerDecoder` and
  `Transformer` forward passes (with per-part weight/bias attributes), and
  `generate_square_subsequent_mask`.
"""

from __future__ import annotations

import numpy as np
import pytest

import pullback as paddle
from pullback.nn import (
    MultiHeadAttention,
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)

RNG = np.random.RandomState(2020)


def _attn_params(self_attention: bool):
    batch, qlen = (int(RNG.randint(2, 10)) for _ in range(2))
    d_head, heads = (int(RNG.randint(3, 10)) for _ in range(2))
    embed = d_head * heads
    if self_attention:
        return batch, qlen, qlen, embed, embed, embed, heads
    kdim, vdim = (int(RNG.randint(5, 20)) for _ in range(2))
    return batch, qlen, int(RNG.randint(2, 10)), embed, kdim, vdim, heads


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _sdpa(q, k, v, d_key, mask):
    qkt = q @ (k / np.sqrt(d_key)).transpose(0, 1, 3, 2)
    if mask is not None:
        qkt = qkt + ((mask.astype(np.float64) - 1.0) * 1e9 if mask.dtype == np.int64 else mask)
    heads = _softmax(qkt) @ v
    heads = heads.transpose(0, 2, 1, 3)
    return heads.reshape(heads.shape[0], heads.shape[1], -1)


def _split(x, heads):
    return x.reshape(x.shape[0], x.shape[1], heads, -1).transpose(0, 2, 1, 3)


@pytest.mark.parametrize("self_attention", [True, False])
@pytest.mark.parametrize("cache", [True, False])
@pytest.mark.parametrize("mask_type", ["int64", "float64"])
def test_multi_head_attention(dynamic_mode, self_attention: bool, cache: bool, mask_type: str) -> None:
    paddle.seed(2020)
    batch, qlen, klen, embed, kdim, vdim, heads = _attn_params(self_attention)
    hd = embed // heads
    query = RNG.rand(batch, qlen, embed).astype("float32")
    mask = np.tril(np.ones((batch, heads, qlen, klen), mask_type))
    if mask_type == "float64":
        mask = (mask - 1.0) * 1e9
    if self_attention:
        key = value = query
    else:
        key = RNG.rand(batch, klen, kdim).astype("float32")
        value = RNG.rand(batch, klen, vdim).astype("float32")
    mha = MultiHeadAttention(embed, heads, 0.0, kdim, vdim, False, None, None)
    cache_obj = cache_k = cache_v = None
    if cache:
        cache_k = RNG.rand(batch, heads, klen, hd).astype("float32")
        cache_v = RNG.rand(batch, heads, klen, hd).astype("float32")
        make = mha.Cache if self_attention else mha.StaticCache
        cache_obj = make(paddle.to_tensor(cache_k), paddle.to_tensor(cache_v))
        if self_attention:
            mask = np.concatenate((mask, mask), axis=3)
    out = mha(paddle.to_tensor(query), paddle.to_tensor(key), paddle.to_tensor(value), paddle.to_tensor(mask),
              cache_obj)
    out = out[0] if cache else out
    q = _split(query @ mha.q_proj.weight.numpy(), heads)
    if cache and not self_attention:
        k, v = cache_k, cache_v
    else:
        k = _split(key @ mha.k_proj.weight.numpy(), heads)
        v = _split(value @ mha.v_proj.weight.numpy(), heads)
        if cache:
            k, v = np.concatenate((cache_k, k), 2), np.concatenate((cache_v, v), 2)
    ref = _sdpa(q, k, v, hd, mask) @ mha.out_proj.weight.numpy()
    np.testing.assert_allclose(out.numpy(), ref, atol=1e-6)


def _layer_norm(x, norm, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * norm.weight.numpy() + norm.bias.numpy()


def _ffn(x, layer):
    return np.maximum(x @ layer.linear1.weight.numpy(), 0) @ layer.linear2.weight.numpy()


def _enc_inputs():
    batch, seq = (int(RNG.randint(2, 10)) for _ in range(2))
    d_head, heads = (int(RNG.randint(3, 10)) for _ in range(2))
    d_model, dff = d_head * heads, int(RNG.randint(128, 1024))
    src = RNG.rand(batch, seq, d_model).astype("float32")
    mask = np.zeros((batch, heads, seq, seq), "float32")
    mask[0][0][0][0] = -np.inf
    return src, mask, d_model, heads, dff


@pytest.mark.parametrize("cache", [False, True])
def test_encoder_layer(dynamic_mode, cache: bool) -> None:
    paddle.seed(2020)
    src, mask, d_model, heads, dff = _enc_inputs()
    layer = TransformerEncoderLayer(d_model, heads, dff, 0.0, "relu", 0.0, 0.0)
    caches = layer.gen_cache(paddle.to_tensor(src)) if cache else None
    out = layer(paddle.to_tensor(src), paddle.to_tensor(mask), caches)
    out = out[0].numpy() if cache else out.numpy()
    # Paddle's reference builds a fresh MultiHeadAttention whose weights equal the
    # layer's only through its fixed program seed; here the weights are copied.
    self_attn = MultiHeadAttention(d_model, heads, dropout=0.0)
    self_attn.set_state_dict(layer.self_attn.state_dict())
    attn = self_attn(*(paddle.to_tensor(src),) * 3, paddle.to_tensor(mask), caches)
    attn = attn[0].numpy() if cache else attn.numpy()
    x = _layer_norm(attn + src, layer.norm1)
    ref = _layer_norm(x + _ffn(x, layer), layer.norm2)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


def _dec_inputs():
    batch, src_len, tgt_len = (int(RNG.randint(2, 10)) for _ in range(3))
    d_head, heads = (int(RNG.randint(3, 10)) for _ in range(2))
    d_model, dff = d_head * heads, int(RNG.randint(128, 1024))
    tgt = RNG.rand(batch, tgt_len, d_model).astype("float32")
    memory = RNG.rand(batch, src_len, d_model).astype("float32")
    tgt_mask = np.zeros((batch, heads, tgt_len, tgt_len), "float32")
    tgt_mask[0][0][0][0] = -1e9
    memory_mask = np.zeros((batch, heads, tgt_len, src_len), "float32")
    memory_mask[0][0][0][0] = -1e9
    return tgt, memory, tgt_mask, memory_mask, d_model, heads, dff


@pytest.mark.parametrize("cache", [True, False])
def test_decoder_layer(dynamic_mode, cache: bool) -> None:
    paddle.seed(2020)
    tgt, memory, tgt_mask, memory_mask, d_model, heads, dff = _dec_inputs()
    self_attn = MultiHeadAttention(d_model, heads, dropout=0.0)
    cross_attn = MultiHeadAttention(d_model, heads, dropout=0.0)
    layer = TransformerDecoderLayer(d_model, heads, dff, 0.0, "relu", 0.0, 0.0, False)
    self_attn.set_state_dict(layer.self_attn.state_dict())  # (see test_encoder_layer)
    cross_attn.set_state_dict(layer.cross_attn.state_dict())
    caches = layer.gen_cache(paddle.to_tensor(memory)) if cache else None
    t = paddle.to_tensor
    out = layer(t(tgt), t(memory), t(tgt_mask), t(memory_mask), caches)
    out = out[0].numpy() if cache else out.numpy()
    a = self_attn(t(tgt), t(tgt), t(tgt), t(tgt_mask), caches[0] if cache else None)
    a = a[0].numpy() if cache else a.numpy()
    x = _layer_norm(tgt + a, layer.norm1)
    c = cross_attn(t(x), t(memory), t(memory), t(memory_mask), caches[1] if cache else None)
    c = c[0].numpy() if cache else c.numpy()
    x = _layer_norm(c + x, layer.norm2)
    ref = _layer_norm(x + _ffn(x, layer), layer.norm3)
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cache", [None, False, True])
def test_encoder(dynamic_mode, cache) -> None:
    src, mask, d_model, heads, dff = _enc_inputs()
    encoder = TransformerEncoder(TransformerEncoderLayer(d_model, heads, dff, 0.0), 6 if cache is None else 2)
    if cache is None:
        out = encoder(paddle.to_tensor(src), paddle.to_tensor(mask))
    else:
        caches = encoder.gen_cache(paddle.to_tensor(src)) if cache else None
        out = encoder(paddle.to_tensor(src), paddle.to_tensor(mask), caches)
        out = out[0] if cache else out
    assert list(out.shape) == list(src.shape)
    assert np.isfinite(out.numpy()).all()


def test_decoder(dynamic_mode) -> None:
    tgt, memory, tgt_mask, memory_mask, d_model, heads, dff = _dec_inputs()
    decoder = TransformerDecoder(TransformerDecoderLayer(d_model, heads, dff, 0.0), 6)
    t = paddle.to_tensor
    out = decoder(t(tgt), t(memory), t(tgt_mask), t(memory_mask))
    assert list(out.shape) == list(tgt.shape)


@pytest.mark.parametrize("attrs", [None, ([None], [False]), ([None, None], [False, False]),
                                   ([None, None, None], [False, False, False])])
def test_transformer(dynamic_mode, attrs) -> None:
    tgt, _, tgt_mask, memory_mask, d_model, heads, dff = _dec_inputs()
    src_len = memory_mask.shape[-1]
    src = RNG.rand(tgt.shape[0], src_len, d_model).astype("float32")
    src_mask = np.zeros((tgt.shape[0], heads, src_len, src_len), "float32")
    src_mask[0][0][0][0] = -np.inf
    kwargs = {} if attrs is None else {"weight_attr": attrs[0], "bias_attr": attrs[1]}
    model = Transformer(d_model, heads, dim_feedforward=dff, dropout=0.0, **kwargs)
    t = paddle.to_tensor
    out = model(t(src), t(tgt), t(src_mask), t(tgt_mask), t(memory_mask))
    assert list(out.shape) == list(tgt.shape)


def test_generate_square_subsequent_mask(dynamic_mode) -> None:
    length = 5
    want = np.array([[0, -np.inf, -np.inf, -np.inf, -np.inf], [0, 0, -np.inf, -np.inf, -np.inf],
                     [0, 0, 0, -np.inf, -np.inf], [0, 0, 0, 0, -np.inf], [0, 0, 0, 0, 0]])
    got = Transformer(512, 8, 1, 1).generate_square_subsequent_mask(length)
    np.testing.assert_array_equal(got.numpy(), want)
