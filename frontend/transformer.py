"""Paddle's attention layers: `nn.MultiHeadAttention`, `nn.TransformerEncoderLayer`,
`TransformerEncoder`, `TransformerDecoderLayer`, `TransformerDecoder` and
`nn.Transformer`, written as Paddle writes them (`python/paddle/nn/layer/transformer.py`):
the same sublayers and parameter names (`q_proj`, `k_proj`, `v_proj`, `out_proj`,
`linear1`, `norm1`, ...), the same post-/pre-norm (`normalize_before`) residual order
and dropout placement, `[batch, seq, d_model]` inputs.

Attention masks broadcast against `[batch, heads, seq_q, seq_k]`: a bool (or int)
mask keeps the True (non-zero) positions, the others get -1e9 added (Paddle's
`_convert_attention_mask`); a float mask is added (cast to the attention's dtype).

Incremental decoding follows Paddle's caches: `MultiHeadAttention.Cache(k, v)` holds
the keys/values of the steps decoded so far (`[batch, heads, steps, head_dim]`) and a
forward with it appends this step's along axis 2 and returns the grown cache;
`StaticCache(k, v)` holds keys/values precomputed once from the encoder memory and is
returned unchanged.  `gen_cache` on the attention, encoder and decoder layers/stacks
builds them as Paddle does, and `cache=` forwards return `(out, new_cache)`.
"""

from __future__ import annotations

import collections
import math
from typing import Any

from pullback.frontend.nn_layers import Dropout, Layer, LayerList, LayerNorm, Linear
from pullback.frontend.ops import activation as A
from pullback.frontend.ops import composite as C
from pullback.frontend.ops import elementwise as E
from pullback.frontend.ops import nn as N
from pullback.frontend.ops import reduction as R
from pullback.frontend.ops import shape as S
from pullback.frontend.ops.elementwise import cast, scale
from pullback.frontend.ops.indexing import triu
from pullback.frontend.ops.shape import concat


def convert_attention_mask(attn_mask: Any, dtype: str) -> Any:
    """Paddle's `_convert_attention_mask`: bool/int masks become 0 (keep) / -1e9 (drop)
    in `dtype`; float masks of another dtype (a float64 mask of float32 attention) are
    cast to `dtype`."""
    if attn_mask is None:
        return None
    mask_dtype = str(attn_mask.dtype).replace("paddle.", "")
    if mask_dtype == "bool" or "int" in mask_dtype:
        return scale(cast(attn_mask, dtype), 1e9, -1e9)
    if mask_dtype != str(dtype).replace("paddle.", ""):
        return cast(attn_mask, dtype)
    return attn_mask


def _param_attrs(attr: Any, n: int) -> list[Any]:
    """Paddle's `_convert_param_attr_to_list`: one attribute per sublayer group."""
    if isinstance(attr, (list, tuple)):
        if len(attr) == 1:
            return [attr[0]] * n
        if len(attr) != n:
            raise ValueError(f"expected {n} parameter attributes, got {len(attr)}")
        return list(attr)
    return [attr] * n


_ACTIVATIONS = {"relu": E.relu, "gelu": E.gelu, "sigmoid": E.sigmoid, "tanh": E.tanh,
                "silu": C.silu, "swish": C.swish, "relu6": A.relu6, "elu": C.elu, "mish": A.mish}


def _activation(name: str) -> Any:
    fn = _ACTIVATIONS.get(name)
    if fn is None:
        raise ValueError(f"unsupported activation {name!r}; expected one of {sorted(_ACTIVATIONS)}")
    return fn


class MultiHeadAttention(Layer):
    """`paddle.nn.MultiHeadAttention`: `out_proj(softmax(q k^T / sqrt(d) + mask) v)`
    over `num_heads` heads of size `embed_dim // num_heads`."""

    # Paddle's namedtuples (class attributes, so `isinstance(c, m.Cache)` and
    # `type=nn.MultiHeadAttention.StaticCache` read as in Paddle).
    Cache = collections.namedtuple("Cache", ["k", "v"])
    StaticCache = collections.namedtuple("StaticCache", ["k", "v"])

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, kdim: int | None = None,
                 vdim: int | None = None, need_weights: bool = False, weight_attr: Any = None,
                 bias_attr: Any = None) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"MultiHeadAttention: embed_dim and num_heads must be positive, "
                             f"got {embed_dim} and {num_heads}")
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.kdim, self.vdim = kdim or embed_dim, vdim or embed_dim
        self.dropout, self.need_weights = dropout, need_weights
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise ValueError("MultiHeadAttention: embed_dim must be divisible by num_heads")
        self.q_proj = Linear(embed_dim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.k_proj = Linear(self.kdim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.v_proj = Linear(self.vdim, embed_dim, weight_attr, bias_attr=bias_attr)
        self.out_proj = Linear(embed_dim, embed_dim, weight_attr, bias_attr=bias_attr)

    def _heads(self, x: Any) -> Any:
        """`[B, L, E]` -> `[B, H, L, D]`."""
        return S.transpose(S.reshape(x, [0, 0, self.num_heads, self.head_dim]), [0, 2, 1, 3])

    def compute_kv(self, key: Any, value: Any) -> tuple[Any, Any]:
        """Paddle's `compute_kv`: the projected keys and values split into heads,
        `[batch, heads, seq, head_dim]` (what a `StaticCache` holds)."""
        k, v = self.k_proj(key), self.v_proj(value)
        return self._heads(k), self._heads(v)

    def gen_cache(self, key: Any, value: Any = None, type: Any = None) -> Any:  # noqa: A002 (Paddle's name)
        """Paddle's `gen_cache(key, value=None, type=Cache)`: a `StaticCache` of
        `compute_kv(key, value)`; an empty `Cache` (`[batch, heads, 0, head_dim]`, batch
        from `key`) when `value` is None; else `Cache(key, value)` as given (UniLM-style
        prefilled state)."""
        type = MultiHeadAttention.Cache if type is None else type  # noqa: A001
        if type is MultiHeadAttention.StaticCache:
            return self.StaticCache(*self.compute_kv(key, value))
        if value is None:
            shape = [int(key.shape[0]), self.num_heads, 0, self.head_dim]
            return self.Cache(E.full(shape, 0, key.dtype), E.full(shape, 0, key.dtype))
        return self.Cache(key, value)

    def forward(self, query: Any, key: Any = None, value: Any = None, attn_mask: Any = None,
                cache: Any = None) -> Any:
        """Attention of `query` over `key`/`value` (both default to `query`); returns the
        output, then the attention weights when `need_weights`, then the new cache
        when `cache` is given (one tensor when neither)."""
        key = query if key is None else key
        value = query if value is None else value
        # (Paddle's order, `_prepare_qkv`: q, then both projections, then k's and v's heads.)
        q = self._heads(self.q_proj(query))
        if isinstance(cache, self.StaticCache):
            k, v = cache.k, cache.v
        else:
            k, v = self.compute_kv(key, value)
        if isinstance(cache, self.Cache):
            k, v = concat([cache.k, k], axis=2), concat([cache.v, v], axis=2)
            cache = self.Cache(k, v)
        product = N.matmul(scale(q, self.head_dim ** -0.5), k, transpose_y=True)
        if attn_mask is not None:
            product = product + convert_attention_mask(attn_mask, product.dtype)
        weights = R.softmax(product)
        if self.dropout:
            weights = N.dropout(weights, self.dropout, training=self.training, mode="upscale_in_train")
        out = S.transpose(N.matmul(weights, v), [0, 2, 1, 3])
        out = self.out_proj(S.reshape(out, [0, 0, self.embed_dim]))
        outs = [out] + ([weights] if self.need_weights else []) + ([cache] if cache is not None else [])
        return out if len(outs) == 1 else tuple(outs)

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, dropout={self.dropout}"


class TransformerEncoderLayer(Layer):
    """`paddle.nn.TransformerEncoderLayer`: self-attention and a feed-forward block,
    each with a residual connection and layer norm (after, or before when
    `normalize_before`)."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int, dropout: float = 0.1,
                 activation: str = "relu", attn_dropout: float | None = None,
                 act_dropout: float | None = None, normalize_before: bool = False,
                 weight_attr: Any = None, bias_attr: Any = None, layer_norm_eps: float = 1e-5) -> None:
        config = {k: v for k, v in locals().items() if k not in ("self", "__class__")}
        super().__init__()
        self._config = config
        attn_dropout = dropout if attn_dropout is None else attn_dropout
        act_dropout = dropout if act_dropout is None else act_dropout
        self.normalize_before = normalize_before
        w, b = _param_attrs(weight_attr, 2), _param_attrs(bias_attr, 2)
        self.self_attn = MultiHeadAttention(d_model, nhead, dropout=attn_dropout,
                                            weight_attr=w[0], bias_attr=b[0])
        self.linear1 = Linear(d_model, dim_feedforward, w[1], bias_attr=b[1])
        self.dropout = Dropout(act_dropout, mode="upscale_in_train")
        self.linear2 = Linear(dim_feedforward, d_model, w[1], bias_attr=b[1])
        self.norm1 = LayerNorm(d_model, layer_norm_eps)
        self.norm2 = LayerNorm(d_model, layer_norm_eps)
        self.dropout1 = Dropout(dropout, mode="upscale_in_train")
        self.dropout2 = Dropout(dropout, mode="upscale_in_train")
        self.activation = _activation(activation)

    def forward(self, src: Any, src_mask: Any = None, cache: Any = None) -> Any:
        """One encoder block over `src` `[batch, seq, d_model]`."""
        mask = convert_attention_mask(src_mask, src.dtype)
        residual = src
        if self.normalize_before:
            src = self.norm1(src)
        if cache is None:
            attended = self.self_attn(src, src, src, mask)
        else:  # (Paddle's UniLM-style encoder cache: self-attention over past steps too)
            attended, cache = self.self_attn(src, src, src, mask, cache)
        src = residual + _drop(self.dropout1, attended)
        if not self.normalize_before:
            src = self.norm1(src)
        residual = src
        if self.normalize_before:
            src = self.norm2(src)
        src = self.linear2(_drop(self.dropout, self.activation(self.linear1(src))))
        src = residual + _drop(self.dropout2, src)
        if not self.normalize_before:
            src = self.norm2(src)
        return src if cache is None else (src, cache)

    def gen_cache(self, src: Any) -> Any:
        """An empty `MultiHeadAttention.Cache` for the self-attention (batch from `src`)."""
        return self.self_attn.gen_cache(src, type=self.self_attn.Cache)


def _drop(layer: Dropout, x: Any) -> Any:
    """`layer(x)`, skipped when its probability is 0 (the same result; it also keeps
    eager backward plans cacheable, since every dropout op carries a fresh seed)."""
    return x if not layer.p else layer(x)


def _clones(layer: Layer, n: int) -> LayerList:
    """`n` layers: `layer` itself, then new ones built from its constructor arguments
    (fresh parameters, as Paddle does)."""
    return LayerList([layer if i == 0 else type(layer)(**layer._config) for i in range(n)])


class TransformerEncoder(Layer):
    """`paddle.nn.TransformerEncoder`: `num_layers` encoder layers (the first is
    `encoder_layer`, the others fresh copies of its configuration), then `norm`."""

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Any = None) -> None:
        super().__init__()
        self.layers = _clones(encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src: Any, src_mask: Any = None, cache: Any = None) -> Any:
        """The layers in turn, then the final norm; with `cache` (one per layer, see
        `gen_cache`) also the list of grown caches."""
        mask = convert_attention_mask(src_mask, src.dtype)
        out, new_caches = src, []
        for i, layer in enumerate(self.layers):
            if cache is None:
                out = layer(out, src_mask=mask)
            else:
                out, c = layer(out, src_mask=mask, cache=cache[i])
                new_caches.append(c)
        out = self.norm(out) if self.norm is not None else out
        return out if cache is None else (out, new_caches)

    def gen_cache(self, src: Any) -> list[Any]:
        """One `TransformerEncoderLayer.gen_cache(src)` per layer."""
        return [layer.gen_cache(src) for layer in self.layers]


class TransformerDecoderLayer(Layer):
    """`paddle.nn.TransformerDecoderLayer`: self-attention, cross-attention over the
    encoder's `memory`, and a feed-forward block, each with residual and norm."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int, dropout: float = 0.1,
                 activation: str = "relu", attn_dropout: float | None = None,
                 act_dropout: float | None = None, normalize_before: bool = False,
                 weight_attr: Any = None, bias_attr: Any = None, layer_norm_eps: float = 1e-5) -> None:
        config = {k: v for k, v in locals().items() if k not in ("self", "__class__")}
        super().__init__()
        self._config = config
        attn_dropout = dropout if attn_dropout is None else attn_dropout
        act_dropout = dropout if act_dropout is None else act_dropout
        self.normalize_before = normalize_before
        w, b = _param_attrs(weight_attr, 3), _param_attrs(bias_attr, 3)
        self.self_attn = MultiHeadAttention(d_model, nhead, dropout=attn_dropout,
                                            weight_attr=w[0], bias_attr=b[0])
        self.cross_attn = MultiHeadAttention(d_model, nhead, dropout=attn_dropout,
                                             weight_attr=w[1], bias_attr=b[1])
        self.linear1 = Linear(d_model, dim_feedforward, w[2], bias_attr=b[2])
        self.dropout = Dropout(act_dropout, mode="upscale_in_train")
        self.linear2 = Linear(dim_feedforward, d_model, w[2], bias_attr=b[2])
        self.norm1 = LayerNorm(d_model, layer_norm_eps)
        self.norm2 = LayerNorm(d_model, layer_norm_eps)
        self.norm3 = LayerNorm(d_model, layer_norm_eps)
        self.dropout1 = Dropout(dropout, mode="upscale_in_train")
        self.dropout2 = Dropout(dropout, mode="upscale_in_train")
        self.dropout3 = Dropout(dropout, mode="upscale_in_train")
        self.activation = _activation(activation)

    def forward(self, tgt: Any, memory: Any, tgt_mask: Any = None, memory_mask: Any = None,
                cache: Any = None) -> Any:
        """One decoder block over `tgt` attending to `memory`; with `cache`
        (`(Cache, StaticCache)`, see `gen_cache`) returns `(out, (grown Cache,
        StaticCache))`, the cross-attention reading keys/values from the StaticCache."""
        tgt_mask = convert_attention_mask(tgt_mask, tgt.dtype)
        memory_mask = convert_attention_mask(memory_mask, memory.dtype)
        residual = tgt
        if self.normalize_before:
            tgt = self.norm1(tgt)
        if cache is None:
            attended = self.self_attn(tgt, tgt, tgt, tgt_mask)
        else:
            attended, incremental = self.self_attn(tgt, tgt, tgt, tgt_mask, cache[0])
        tgt = residual + _drop(self.dropout1, attended)
        if not self.normalize_before:
            tgt = self.norm1(tgt)
        residual = tgt
        if self.normalize_before:
            tgt = self.norm2(tgt)
        if cache is None:
            attended = self.cross_attn(tgt, memory, memory, memory_mask)
        else:
            attended, static = self.cross_attn(tgt, memory, memory, memory_mask, cache[1])
        tgt = residual + _drop(self.dropout2, attended)
        if not self.normalize_before:
            tgt = self.norm2(tgt)
        residual = tgt
        if self.normalize_before:
            tgt = self.norm3(tgt)
        tgt = self.linear2(_drop(self.dropout, self.activation(self.linear1(tgt))))
        tgt = residual + _drop(self.dropout3, tgt)
        if not self.normalize_before:
            tgt = self.norm3(tgt)
        return tgt if cache is None else (tgt, (incremental, static))

    def gen_cache(self, memory: Any) -> tuple[Any, Any]:
        """`(empty Cache for the self-attention, StaticCache of memory's keys/values
        for the cross-attention)`, as Paddle's `TransformerDecoderLayer.gen_cache`."""
        return (self.self_attn.gen_cache(memory, type=self.self_attn.Cache),
                self.cross_attn.gen_cache(memory, memory, type=self.cross_attn.StaticCache))


class TransformerDecoder(Layer):
    """`paddle.nn.TransformerDecoder`: `num_layers` decoder layers, then `norm`."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Any = None) -> None:
        super().__init__()
        self.layers = _clones(decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Any, memory: Any, tgt_mask: Any = None, memory_mask: Any = None,
                cache: Any = None) -> Any:
        """The layers in turn, then the final norm; with `cache` (one `(Cache,
        StaticCache)` per layer, see `gen_cache`) also the list of new caches."""
        tgt_mask = convert_attention_mask(tgt_mask, tgt.dtype)
        memory_mask = convert_attention_mask(memory_mask, memory.dtype)
        out, new_caches = tgt, []
        for i, layer in enumerate(self.layers):
            if cache is None:
                out = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask)
            else:
                out, c = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask, cache=cache[i])
                new_caches.append(c)
        out = self.norm(out) if self.norm is not None else out
        return out if cache is None else (out, new_caches)

    def gen_cache(self, memory: Any, do_zip: bool = False) -> list[Any]:
        """One `TransformerDecoderLayer.gen_cache(memory)` per layer; `do_zip` transposes
        that into `[all Caches, all StaticCaches]` (Paddle's `list(zip(*cache))`)."""
        cache = [layer.gen_cache(memory) for layer in self.layers]
        return list(zip(*cache)) if do_zip else cache


class Transformer(Layer):
    """`paddle.nn.Transformer`: an encoder and a decoder stack, each ending with a
    LayerNorm (or `custom_encoder` / `custom_decoder`)."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6,
                 num_decoder_layers: int = 6, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str = "relu", attn_dropout: float | None = None,
                 act_dropout: float | None = None, normalize_before: bool = False,
                 weight_attr: Any = None, bias_attr: Any = None, custom_encoder: Any = None,
                 custom_decoder: Any = None) -> None:
        super().__init__()
        enc_w = dec_w = weight_attr
        enc_b = dec_b = bias_attr
        # As Paddle: 2 attributes are (attention, FFN) of both parts, the decoder's
        # cross-attention taking the attention's; 3 are the decoder's (self-attention,
        # cross-attention, FFN), the encoder taking the first and the last.
        def split(attr: Any) -> tuple[Any, Any]:
            if isinstance(attr, (list, tuple)) and len(attr) == 2:
                return list(attr), [attr[0], attr[0], attr[1]]
            if isinstance(attr, (list, tuple)) and len(attr) == 3:
                return [attr[0], attr[2]], list(attr)
            return attr, attr

        enc_w, dec_w = split(weight_attr)
        enc_b, dec_b = split(bias_attr)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            layer = TransformerEncoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                            attn_dropout, act_dropout, normalize_before, enc_w, enc_b)
            self.encoder = TransformerEncoder(layer, num_encoder_layers, LayerNorm(d_model))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            layer = TransformerDecoderLayer(d_model, nhead, dim_feedforward, dropout, activation,
                                            attn_dropout, act_dropout, normalize_before, dec_w, dec_b)
            self.decoder = TransformerDecoder(layer, num_decoder_layers, LayerNorm(d_model))
        self.d_model, self.nhead = d_model, nhead

    def forward(self, src: Any, tgt: Any, src_mask: Any = None, tgt_mask: Any = None,
                memory_mask: Any = None) -> Any:
        """`decoder(tgt, encoder(src, src_mask), tgt_mask, memory_mask)`."""
        memory = self.encoder(src, src_mask=src_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask)

    @staticmethod
    def generate_square_subsequent_mask(length: int) -> Any:
        """A float32 `[length, length]` mask: 0 on and below the diagonal, -inf above."""
        return triu(E.full([length, length], -math.inf), 1)


__all__ = [
    "MultiHeadAttention", "Transformer", "TransformerDecoder", "TransformerDecoderLayer",
    "TransformerEncoder", "TransformerEncoderLayer",
]
