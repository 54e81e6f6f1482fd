"""More of `paddle.nn.functional`, as composites of differentiable ops: the losses
`nll_loss`, `smooth_l1_loss`, `kl_div`, `margin_ranking_loss`, `cosine_similarity`,
`scaled_dot_product_attention`,
and the structured dropouts `dropout2d`, `dropout3d`, `alpha_dropout`.

`reduction` is `'mean'`, `'sum'` or `'none'` (`kl_div` also takes `'batchmean'`).

`scaled_dot_product_attention` takes Paddle's layout `[batch, seq, heads, head_dim]`
for query, key and value; `attn_mask` is a bool mask (True = attend) or an additive
float mask broadcasting against `[batch, heads, seq_q, seq_k]`; `is_causal` masks
the future.  The structured dropouts draw a Bernoulli mask per channel
(`pd.bernoulli`, seeded like every random op).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from pullback.frontend.ops.composite import check_reduction
from pullback.frontend.ops.creation import bernoulli
from pullback.frontend.ops.elementwise import (
    abs,
    cast,
    check_float_tensor,
    check_tensor,
    clip,
    divide,
    equal,
    exp,
    full,
    full_like,
    greater_than,
    is_scalar,
    less_than,
    log,
    relu,
    scale,
    sqrt,
    square,
    where,
)
from pullback.frontend.ops.indexing import gather, take_along_axis, triu
from pullback.frontend.ops.nn import dropout, matmul
from pullback.frontend.ops.reduction import mean, softmax, sum
from pullback.frontend.ops.shape import reshape, transpose, unsqueeze


def _reduce(loss: Any, reduction: str, name: str | None) -> Any:
    if reduction == "mean":
        return mean(loss, name=name)
    if reduction == "sum":
        return sum(loss, name=name)
    return loss


def nll_loss(input: Any, label: Any, weight: Any = None, ignore_index: int = -100,
             reduction: str = "mean", name: str | None = None) -> Any:
    """`paddle.nn.functional.nll_loss`: `-weight[y] * input[n, y]` for LOG-probabilities
    `input` `[N, C]` or `[N, C, d1, ...]` and int64 labels `[N]` / `[N, d1, ...]`;
    ignored labels contribute 0, and `'mean'` divides by the sum of their weights."""
    fn = "nll_loss"
    reduction = check_reduction(fn, reduction)
    check_float_tensor(fn, "input", input)
    check_tensor(fn, "label", label)
    if label.dtype != "int64":
        raise TypeError(f"{fn}: label must be int64, got {label.dtype}")
    rank = len(input.shape)
    if rank < 2 or len(label.shape) != rank - 1:
        raise ValueError(f"{fn}: input [N, C, ...] needs label [N, ...], got shapes "
                         f"{list(input.shape)} and {list(label.shape)}")
    x = input if rank == 2 else transpose(input, [0, *range(2, rank), 1])  # classes last
    ids = unsqueeze(label, [-1])
    ignored = equal(ids, full_like(ids, ignore_index))
    safe = where(ignored, full_like(ids, 0), ids)
    picked = sum(take_along_axis(x, safe, -1), axis=-1)
    keep = sum(scale(cast(ignored, input.dtype), -1.0, 1.0), axis=-1)  # 0 for ignored labels
    if weight is not None:
        check_float_tensor(fn, "weight", weight)
        keep = keep * reshape(gather(weight, reshape(safe, [-1])), [d if d >= 0 else -1 for d in label.shape])
    loss = -(picked * keep)
    if reduction == "mean":
        return divide(sum(loss), sum(keep), name=name)
    return _reduce(loss, reduction, name)


def smooth_l1_loss(input: Any, label: Any, reduction: str = "mean", delta: float = 1.0,
                   name: str | None = None) -> Any:
    """`paddle.nn.functional.smooth_l1_loss`: `0.5 d^2` where `|d| < delta`, else
    `delta * (|d| - 0.5 delta)`, with `d = input - label`, reduced."""
    fn = "smooth_l1_loss"
    reduction = check_reduction(fn, reduction)
    check_float_tensor(fn, "input", input)
    check_float_tensor(fn, "label", label)
    if not is_scalar(delta) or delta <= 0:
        raise ValueError(f"{fn}: delta must be a positive number, got {delta!r}")
    d = input - label
    ad = abs(d)
    quad = scale(square(d), 0.5)
    lin = scale(ad, float(delta), -0.5 * float(delta) ** 2)
    return _reduce(where(less_than(ad, full_like(ad, float(delta))), quad, lin), reduction, name)


def kl_div(input: Any, label: Any, reduction: str = "mean", log_target: bool = False,
           name: str | None = None) -> Any:
    """`paddle.nn.functional.kl_div`: `label * (log(label) - input)` for LOG-probability
    `input` (0 where `label <= 0`), or `exp(label) * (label - input)` with
    `log_target`; reduced by `'mean'`, `'batchmean'` (sum / N), `'sum'` or `'none'`."""
    fn = "kl_div"
    if reduction not in ("mean", "batchmean", "sum", "none"):
        raise ValueError(f"{fn}: reduction must be 'mean', 'batchmean', 'sum' or 'none', got {reduction!r}")
    check_float_tensor(fn, "input", input)
    check_float_tensor(fn, "label", label)
    if log_target:
        loss = exp(label) * (label - input)
    else:
        pos = greater_than(label, full_like(label, 0.0))
        safe = where(pos, label, full_like(label, 1.0))
        zero = label * 0.0 + input * 0.0  # broadcast shape, and a zero gradient
        loss = where(pos, label * (log(safe) - input), zero)
    if reduction == "batchmean":
        n = input.shape[0] if input.shape else 1
        if n < 0:
            raise ValueError(f"{fn}: 'batchmean' needs a static batch size")
        return scale(sum(loss), 1.0 / n, name=name)
    return _reduce(loss, reduction, name)


def margin_ranking_loss(input: Any, other: Any, label: Any, margin: float = 0.0,
                        reduction: str = "mean", name: str | None = None) -> Any:
    """`paddle.nn.functional.margin_ranking_loss`: `relu(-label * (input - other) + margin)`."""
    fn = "margin_ranking_loss"
    reduction = check_reduction(fn, reduction)
    for arg, v in (("input", input), ("other", other), ("label", label)):
        check_float_tensor(fn, arg, v)
    return _reduce(relu(scale(-label * (input - other), 1.0, float(margin))), reduction, name)


def cosine_similarity(x1: Any, x2: Any, axis: int = 1, eps: float = 1e-8) -> Any:
    """`paddle.nn.functional.cosine_similarity`: `sum(x1 x2) / sqrt(max(|x1|^2 |x2|^2, eps^2))`
    along `axis`."""
    fn = "cosine_similarity"
    check_float_tensor(fn, "x1", x1)
    check_float_tensor(fn, "x2", x2)
    w12 = sum(x1 * x2, axis=axis)
    w1 = sum(square(x1), axis=axis)
    w2 = sum(square(x2), axis=axis)
    return w12 / sqrt(clip(w1 * w2, min=float(eps) ** 2))


def scaled_dot_product_attention(query: Any, key: Any, value: Any, attn_mask: Any = None,
                                 dropout_p: float = 0.0, is_causal: bool = False,
                                 training: bool = True, name: str | None = None) -> Any:
    """`paddle.nn.functional.scaled_dot_product_attention` (module docstring):
    `softmax(q k^T / sqrt(d) + mask) v` per head, in `[batch, seq, heads, head_dim]`."""
    fn = "scaled_dot_product_attention"
    for arg, v in (("query", query), ("key", key), ("value", value)):
        check_float_tensor(fn, arg, v)
        if len(v.shape) != 4:
            raise ValueError(f"{fn}: {arg} must be 4-D [batch, seq, heads, head_dim], got {list(v.shape)}")
    d = query.shape[-1]
    if d <= 0:
        raise ValueError(f"{fn}: head_dim must be static, got {d}")
    q = transpose(query, [0, 2, 1, 3])
    k = transpose(key, [0, 2, 1, 3])
    v = transpose(value, [0, 2, 1, 3])
    scores = scale(matmul(q, k, transpose_y=True), 1.0 / math.sqrt(d))
    if is_causal:
        lq, lk = query.shape[1], key.shape[1]
        if lq < 0 or lk < 0:
            raise ValueError(f"{fn}: is_causal needs static sequence lengths")
        future = triu(full([lq, lk], 1.0, dtype=scores.dtype), diagonal=1)
        scores = where(greater_than(future, full_like(future, 0.0)),
                       full_like(scores, -math.inf), scores)
    if attn_mask is not None:
        check_tensor(fn, "attn_mask", attn_mask)
        if attn_mask.dtype == "bool":
            scores = where(attn_mask, scores, full_like(scores, -math.inf))
        else:
            scores = scores + attn_mask
    p = softmax(scores, axis=-1)
    if dropout_p:
        p = dropout(p, float(dropout_p), training=training)
    return transpose(matmul(p, v), [0, 2, 1, 3], name=name)


def _channel_dropout(fn: str, x: Any, p: float, training: bool, data_format: str, formats: tuple[str, str],
                     name: str | None) -> Any:
    """Zero whole channels with probability p, scaling the rest by `1 / (1 - p)`:
    Paddle's `dropout(x, p, axis=[batch, channel], training, 'upscale_in_train')`."""
    check_float_tensor(fn, "x", x)
    rank = len(formats[0])
    if len(x.shape) != rank:
        raise ValueError(f"{fn}: x must be {rank}-D, got {list(x.shape)}")
    if data_format not in formats:
        raise ValueError(f"{fn}: Attr(data_format) should be {formats[0]!r} or {formats[1]!r}, got {data_format!r}")
    channel = 1 if data_format == formats[0] else rank - 1
    return dropout(x, p, axis=[0, channel], training=training, mode="upscale_in_train", name=name)


def dropout2d(x: Any, p: float = 0.5, training: bool = True, data_format: str = "NCHW",
              name: str | None = None) -> Any:
    """`paddle.nn.functional.dropout2d`: drop whole channels of a 4-D x."""
    return _channel_dropout("dropout2d", x, p, training, data_format, ("NCHW", "NHWC"), name)


def dropout3d(x: Any, p: float = 0.5, training: bool = True, data_format: str = "NCDHW",
              name: str | None = None) -> Any:
    """`paddle.nn.functional.dropout3d`: drop whole channels of a 5-D x."""
    return _channel_dropout("dropout3d", x, p, training, data_format, ("NCDHW", "NDHWC"), name)


def alpha_dropout(x: Any, p: float = 0.5, training: bool = True, name: str | None = None) -> Any:
    """`paddle.nn.functional.alpha_dropout`: dropout that keeps SELU's mean and
    variance (dropped entries become `-alpha'`, then an affine correction)."""
    fn = "alpha_dropout"
    check_float_tensor(fn, "x", x)
    if not is_scalar(p) or not 0.0 <= float(p) <= 1.0:
        raise ValueError(f"{fn}: p must be in [0, 1], got {p!r}")
    if not training or p == 0:
        return x
    alpha_p = -1.7580993408473766
    q = 1.0 - float(p)
    a = (q + alpha_p**2 * q * float(p)) ** -0.5
    b = -a * alpha_p * float(p)
    if any(d < 0 for d in x.shape):
        raise ValueError(f"{fn}: x must have a static shape, got {list(x.shape)}")
    keep = bernoulli(full(list(x.shape), q, dtype=x.dtype))
    y = x * keep + scale(keep, -alpha_p, alpha_p)  # alpha_p where dropped
    return scale(y, a, b)


PADDLE: list[Callable[..., Any]] = []
FUNCTIONAL: list[Callable[..., Any]] = [
    nll_loss, smooth_l1_loss, kl_div, margin_ranking_loss, cosine_similarity,
    scaled_dot_product_attention, dropout2d, dropout3d, alpha_dropout,
]
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {}
