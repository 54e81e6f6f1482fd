"""Composite losses of `paddle.nn.functional`: `hinge_embedding_loss`,
`cosine_embedding_loss`, `triplet_margin_loss`, `multi_label_soft_margin_loss`,
`soft_margin_loss`, `poisson_nll_loss`, `gaussian_nll_loss`, `sigmoid_focal_loss`,
`log_loss`, `dice_loss` and `npair_loss`, each the formula of Paddle's Python
implementation written with existing differentiable ops.

`reduction` is `'mean'`, `'sum'` or `'none'` (`sigmoid_focal_loss` defaults to
`'sum'`, as in Paddle).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from pullback.frontend.ops.composite import (
    _number,
    _reduce,
    _softplus,
    binary_cross_entropy_with_logits,
    check_reduction,
)
from pullback.frontend.ops.composite_nn import _p_norm
from pullback.frontend.ops.elementwise import scale as scale_op  # `scale` is also an argument name
from pullback.frontend.ops.indexing import stack, take_along_axis, to_constant
from pullback.frontend.ops.elementwise import (
    cast,
    check_float_tensor,
    check_tensor,
    clip,
    equal,
    exp,
    full_like,
    greater_than,
    log,
    maximum,
    minimum,
    not_equal,
    pow,
    relu,
    scale,
    sigmoid,
    sqrt,
    square,
    where,
    zeros_like,
)
from pullback.frontend.ops.loss import cross_entropy, one_hot
from pullback.frontend.ops.nn import matmul
from pullback.frontend.ops.math import acos, cos
from pullback.frontend.ops.reduction import log_softmax, mean, softmax, sum
from pullback.frontend.ops.shape import concat, reshape, transpose, unsqueeze
from pullback.frontend.ops.shape import slice as pslice


def _same_shape(fn: str, a_arg: str, a: Any, b_arg: str, b: Any) -> None:
    """Static shapes of a and b agree (dynamic dimensions match anything)."""
    sa, sb = list(a.shape), list(b.shape)
    if len(sa) != len(sb) or any(x >= 0 and y >= 0 and x != y for x, y in zip(sa, sb)):
        raise ValueError(f"{fn}: {a_arg} {sa} and {b_arg} {sb} must have the same shape")


def _as(x: Any, like: Any) -> Any:
    """x cast to like's dtype (labels given as ints or another float width)."""
    return x if x.dtype == like.dtype else cast(x, like.dtype)


def hinge_embedding_loss(input: Any, label: Any, margin: float = 1.0, reduction: str = "mean",
                         name: str | None = None) -> Any:
    """`paddle.nn.functional.hinge_embedding_loss`: `input` where `label == 1`,
    `max(0, margin - input)` where `label == -1` (0 for other labels), reduced."""
    fn = "hinge_embedding_loss"
    reduction = check_reduction(fn, reduction)
    check_float_tensor(fn, "input", input)
    check_tensor(fn, "label", label)
    m = _number(fn, "margin", margin)
    label = _as(label, input)
    zero = zeros_like(input)
    loss = (where(equal(label, 1.0), input, zero)
            + where(equal(label, -1.0), relu(scale(input, -1.0, m)), zero))
    return _reduce(loss, reduction, name)


def cosine_embedding_loss(input1: Any, input2: Any, label: Any, margin: float = 0,
                          reduction: str = "mean", name: str | None = None) -> Any:
    """`paddle.nn.functional.cosine_embedding_loss`: `1 - cos(x1, x2)` where
    `label == 1`, `max(0, cos(x1, x2) - margin)` where `label == -1`; the cosine
    along the last axis with `1e-11` added to each squared magnitude (Paddle's)."""
    fn = "cosine_embedding_loss"
    reduction = check_reduction(fn, reduction)
    check_float_tensor(fn, "input1", input1)
    check_float_tensor(fn, "input2", input2)
    check_tensor(fn, "label", label)
    _same_shape(fn, "input1", input1, "input2", input2)
    if len(label.shape) != 1:
        raise ValueError(f"{fn}: 1D target tensor expected, multi-target not supported; got label shape "
                         f"{list(label.shape)}")
    if len(input1.shape) not in (1, 2):
        raise ValueError(f"{fn}: 1D target tensor expects 2D input tensors, but found inputs with "
                         f"shape {list(input1.shape)}")
    m = _number(fn, "margin", margin)
    if not -1 <= m <= 1:
        raise ValueError(f"{fn}: margin should be in [-1, 1], got {m}")
    prod = sum(input1 * input2, axis=-1)
    mag1 = scale(sum(square(input1), axis=-1), 1.0, 10e-12)
    mag2 = scale(sum(square(input2), axis=-1), 1.0, 10e-12)
    cos = prod / sqrt(mag1 * mag2)
    label = _as(label, cos)
    zero = zeros_like(cos)
    loss = (where(equal(label, 1.0), scale(cos, -1.0, 1.0), zero)
            + where(equal(label, -1.0), clip(scale(cos, 1.0, -m), min=0.0), zero))
    return _reduce(loss, reduction, name)


def triplet_margin_loss(input: Any, positive: Any, negative: Any, margin: float = 1.0, p: float = 2,
                        epsilon: float = 1e-6, swap: bool = False, reduction: str = "mean",
                        name: str | None = None) -> Any:
    """`paddle.nn.functional.triplet_margin_loss`:
    `max(0, d(a, p) - d(a, n) + margin)` with `d(u, v) = ||u - v + epsilon||_p` along
    the last axis; `swap` uses `min(d(a, n), d(p, n))` for the negative distance."""
    fn = "triplet_margin_loss"
    reduction = check_reduction(fn, reduction)
    for arg, v in (("input", input), ("positive", positive), ("negative", negative)):
        check_float_tensor(fn, arg, v)
    _same_shape(fn, "input", input, "positive", positive)
    _same_shape(fn, "input", input, "negative", negative)
    m, order, eps = _number(fn, "margin", margin), _number(fn, "p", p), _number(fn, "epsilon", epsilon)
    if order <= 0:
        raise ValueError(f"{fn}: The p order of norm should be positive, got {order}")

    def dist(u: Any, v: Any) -> Any:
        return _p_norm(scale(u - v, 1.0, eps), order, -1, False)

    pos, neg = dist(input, positive), dist(input, negative)
    if swap:
        neg = minimum(neg, dist(positive, negative))
    return _reduce(clip(scale(pos - neg, 1.0, m), min=0.0), reduction, name)


def multi_label_soft_margin_loss(input: Any, label: Any, weight: Any = None, reduction: str = "mean",
                                 name: str | None = None) -> Any:
    """`paddle.nn.functional.multi_label_soft_margin_loss`:
    `-mean_c(weight * (y log sigmoid(x) + (1 - y) log sigmoid(-x)))` per sample, reduced."""
    fn = "multi_label_soft_margin_loss"
    reduction = check_reduction(fn, reduction)
    check_float_tensor(fn, "input", input)
    check_tensor(fn, "label", label)
    _same_shape(fn, "input", input, "label", label)
    label = _as(label, input)
    loss = label * _softplus(-input) + scale(label, -1.0, 1.0) * _softplus(input)
    if weight is not None:
        check_float_tensor(fn, "weight", weight)
        loss = loss * weight
    return _reduce(mean(loss, axis=-1), reduction, name)


def margin_cross_entropy(logits: Any, label: Any, margin1: float = 1.0, margin2: float = 0.5,
                         margin3: float = 0.0, scale: float = 64.0, group: Any = None,
                         return_softmax: bool = False, reduction: str | None = "mean") -> Any:
    """`paddle.nn.functional.margin_cross_entropy` (ArcFace/CosFace/SphereFace) on one
    device: the target logit `cos(t)` becomes `cos(margin1 * t + margin2) - margin3`,
    all logits are multiplied by `scale`, then softmax cross entropy.  `logits` are
    cosines `[N, C]`; `'none'`/None returns `[N, 1]`; `return_softmax` also
    returns the softmax.  `group` (model parallelism) must be None."""
    fn = "margin_cross_entropy"
    if reduction not in ("mean", "sum", "none", None):
        raise ValueError(f"{fn}: reduction must be one of 'mean', 'sum', 'none' or None, got {reduction!r}")
    if group is not None and group is not False:
        raise NotImplementedError(f"{fn}: a model-parallel group is not supported (one device only)")
    check_float_tensor(fn, "logits", logits)
    check_tensor(fn, "label", label)
    if label.dtype not in ("int32", "int64"):
        raise TypeError(f"{fn}: label must be int32 or int64, got {label.dtype}")
    if len(logits.shape) != 2:
        raise ValueError(f"{fn}: logits must be 2-D [N, C], got {list(logits.shape)}")
    if len(label.shape) == 2 and label.shape[1] == 1:
        label = sum(label, axis=1)
    if len(label.shape) != 1:
        raise ValueError(f"{fn}: label must be [N] or [N, 1], got {list(label.shape)}")
    c = int(logits.shape[1])
    m1, m2, m3 = (_number(fn, a, v) for a, v in (("margin1", margin1), ("margin2", margin2), ("margin3", margin3)))
    s = _number(fn, "scale", scale)
    target = scale_op(cos(scale_op(acos(clip(logits, -1.0, 1.0)), m1, m2)), 1.0, -m3)
    is_target = equal(cast(one_hot(cast(label, "int64"), c), logits.dtype), 1.0)
    z = scale_op(where(is_target, target, logits), s)
    loss = unsqueeze(cross_entropy(z, cast(label, "int64"), reduction="none"), [1])  # [N, 1]
    if reduction == "mean":
        loss = mean(loss)
    elif reduction == "sum":
        loss = sum(loss)
    if return_softmax:
        return loss, softmax(z, axis=1)
    return loss


def multi_margin_loss(input: Any, label: Any, p: int = 1, margin: float = 1.0, weight: Any = None,
                      reduction: str = "mean", name: str | None = None) -> Any:
    """`paddle.nn.functional.multi_margin_loss`: per sample `n` with class `y`,
    `(sum_i w[y] max(0, margin - x[y] + x[i])^p - w[y] margin^p) / C` (the
    subtraction removes the `i = y` term, as Paddle writes it), reduced."""
    fn = "multi_margin_loss"
    reduction = check_reduction(fn, reduction)
    check_float_tensor(fn, "input", input)
    check_tensor(fn, "label", label)
    if label.dtype not in ("int32", "int64"):
        raise TypeError(f"{fn}: label must be int32 or int64, got {label.dtype}")
    if len(input.shape) != 2 or len(label.shape) != 1:
        raise ValueError(f"{fn}: expected input [N, C] and label [N], got {list(input.shape)} and "
                         f"{list(label.shape)}")
    if input.shape[0] >= 0 and label.shape[0] >= 0 and input.shape[0] != label.shape[0]:
        raise ValueError(f"{fn}: The label's shape[0] should be equal to input's shape[0], but received "
                         f"input's shape[0] {input.shape[0]} and label's shape[0]: {label.shape[0]}.")
    c = int(input.shape[1])
    if c < 0:
        raise ValueError(f"{fn}: the class dimension of input must be static")
    m, order = _number(fn, "margin", margin), _number(fn, "p", p)
    ids = unsqueeze(cast(label, "int64"), [1])  # [N, 1]
    picked = take_along_axis(input, ids, axis=1)
    hinge = pow(clip(scale(input - picked, 1.0, m), min=0.0), order)
    w: Any = None
    if weight is not None:
        check_float_tensor(fn, "weight", weight)
        if len(weight.shape) != 1 or (weight.shape[0] >= 0 and weight.shape[0] != c):
            raise ValueError(f"{fn}: weight must have shape [{c}], got {list(weight.shape)}")
        w = take_along_axis(unsqueeze(weight, [0]), ids, axis=1)  # [N, 1]
        hinge = hinge * w
    loss = sum(hinge, axis=1, keepdim=True) - (scale(w, m**order) if w is not None else m**order)
    return _reduce(scale(sum(loss, axis=1), 1.0 / c), reduction, name)


def soft_margin_loss(input: Any, label: Any, reduction: str = "mean", name: str | None = None) -> Any:
    """`paddle.nn.functional.soft_margin_loss`: `log(1 + exp(-label * input))`, reduced."""
    fn = "soft_margin_loss"
    reduction = check_reduction(fn, reduction)
    check_float_tensor(fn, "input", input)
    check_tensor(fn, "label", label)
    _same_shape(fn, "input", input, "label", label)
    return _reduce(_softplus(-_as(label, input) * input), reduction, name)


def poisson_nll_loss(input: Any, label: Any, log_input: bool = True, full: bool = False,
                     epsilon: float = 1e-8, reduction: str = "mean", name: str | None = None) -> Any:
    """`paddle.nn.functional.poisson_nll_loss`: `exp(input) - label * input` for a
    log-rate `input`, else `input - label * log(input + epsilon)`; `full` adds
    Stirling's `label log(label) - label + 0.5 log(2 pi label)` where `label > 1`."""
    fn = "poisson_nll_loss"
    reduction = check_reduction(fn, reduction)
    check_float_tensor(fn, "input", input)
    check_float_tensor(fn, "label", label)
    _same_shape(fn, "input", input, "label", label)
    eps = _number(fn, "epsilon", epsilon)
    if eps <= 0:
        raise ValueError(f"{fn}: The value of `epsilon` in poisson_nll_loss should be positive, "
                         f"but received {eps}, which is not allowed.")
    label = _as(label, input)
    if log_input:
        loss = exp(input) - label * input
    else:
        loss = input - label * log(scale(input, 1.0, eps))
    if full:
        safe = maximum(label, 1.0)  # the term is 0 where label <= 1; keep log finite there
        stirling = safe * log(safe) - safe + scale(log(scale(safe, 2.0 * math.pi)), 0.5)
        loss = loss + where(greater_than(label, 1.0), stirling, zeros_like(stirling))
    return _reduce(loss, reduction, name)


def gaussian_nll_loss(input: Any, label: Any, variance: Any, full: bool = False, epsilon: float = 1e-6,
                      reduction: str = "mean", name: str | None = None) -> Any:
    """`paddle.nn.functional.gaussian_nll_loss`:
    `0.5 * (log(max(var, eps)) + (input - label)^2 / max(var, eps))` (+ `0.5 log(2 pi)`
    with `full`), reduced.  `variance` has input's shape, or lacks its last
    dimension, or has 1 there (homoscedastic)."""
    fn = "gaussian_nll_loss"
    reduction = check_reduction(fn, reduction)
    for arg, v in (("input", input), ("label", label), ("variance", variance)):
        check_float_tensor(fn, arg, v)
    si, sv = list(input.shape), list(variance.shape)
    if sv != si:
        if sv == si[:-1]:
            variance = unsqueeze(variance, [-1])
        elif not (len(sv) == len(si) and sv[-1] == 1 and sv[:-1] == si[:-1]):
            raise ValueError(f"{fn}: variance {sv} is of incorrect size for input {si}")
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{fn}: {reduction} is not valid")
    if hasattr(variance, "numpy") and (variance.numpy() < 0).any():
        raise ValueError(f"{fn}: variance has negative entry/entries")
    var = clip(variance, min=_number(fn, "epsilon", epsilon))
    loss = scale(log(var) + square(input - label) / var, 0.5)
    if full:
        loss = scale(loss, 1.0, 0.5 * math.log(2 * math.pi))
    return _reduce(loss, reduction, name)


def sigmoid_focal_loss(logit: Any, label: Any, normalizer: Any = None, alpha: float = 0.25,
                       gamma: float = 2.0, reduction: str = "sum", name: str | None = None) -> Any:
    """`paddle.nn.functional.sigmoid_focal_loss`:
    `a_t * (1 - p_t)^gamma * bce_with_logits(logit, label)` with `p = sigmoid(logit)`,
    `p_t = p y + (1 - p)(1 - y)`, `a_t = alpha y + (1 - alpha)(1 - y)`, divided by
    `normalizer` when given, reduced (default `'sum'`)."""
    fn = "sigmoid_focal_loss"
    reduction = check_reduction(fn, reduction)
    check_float_tensor(fn, "logit", logit)
    check_float_tensor(fn, "label", label)
    _same_shape(fn, "logit", logit, "label", label)
    a, g = _number(fn, "alpha", alpha), _number(fn, "gamma", gamma)
    loss = binary_cross_entropy_with_logits(logit, label, reduction="none")
    p = sigmoid(logit)
    p_t = p * label + scale(p, -1.0, 1.0) * scale(label, -1.0, 1.0)
    alpha_t = scale(label, 2 * a - 1.0, 1.0 - a)
    loss = alpha_t * loss * pow(scale(p_t, -1.0, 1.0), g)
    if normalizer is not None:
        check_float_tensor(fn, "normalizer", normalizer)
        if len(normalizer.shape) > 1 or (normalizer.shape and normalizer.shape[0] not in (1, -1)):
            raise ValueError(f"{fn}: Expected one dimension of normalizer in sigmoid_focal_loss but "
                             f"got {list(normalizer.shape)}.")
        loss = loss / normalizer
    return _reduce(loss, reduction, name)


def log_loss(input: Any, label: Any, epsilon: float = 1e-4, name: str | None = None) -> Any:
    """`paddle.nn.functional.log_loss`: `-label log(input + eps) - (1 - label) log(1 - input + eps)`,
    elementwise (no reduction)."""
    fn = "log_loss"
    check_float_tensor(fn, "input", input)
    check_float_tensor(fn, "label", label)
    eps = _number(fn, "epsilon", epsilon)
    return -(label * log(scale(input, 1.0, eps))) - scale(label, -1.0, 1.0) * log(scale(input, -1.0, 1.0 + eps))


def dice_loss(input: Any, label: Any, epsilon: float = 0.00001, name: str | None = None) -> Any:
    """`paddle.nn.functional.dice_loss`: `mean_n(1 - 2 |X n Y| / (|X| + |Y| + eps))`
    of probabilities `input [N, ..., C]` and int labels `label [N, ..., 1]` (one-hot
    over C), the sums over all but the batch dimension."""
    fn = "dice_loss"
    check_float_tensor(fn, "input", input)
    check_tensor(fn, "label", label)
    if label.dtype not in ("int32", "int64"):
        raise TypeError(f"{fn}: label must be int32 or int64, got {label.dtype}")
    rank = len(input.shape)
    if len(label.shape) != rank:
        raise ValueError(f"{fn}: The rank of input and label should be equal, but received input: "
                         f"{rank}, label: {len(label.shape)}.")
    if label.shape[-1] != 1:
        raise ValueError(f"{fn}: The last dimension of label should be 1, but received "
                         f"{label.shape[-1]}.")
    c = int(input.shape[-1])
    if c < 0:
        raise ValueError(f"{fn}: the class dimension of input must be static")
    oh = cast(one_hot(sum(label, axis=-1), c), input.dtype)
    dims = list(range(1, rank))
    inse = sum(input * oh, axis=dims)
    denom = sum(input, axis=dims) + sum(oh, axis=dims)
    score = scale(scale(inse, 2.0) / scale(denom, 1.0, _number(fn, "epsilon", epsilon)), -1.0, 1.0)
    return mean(score)


def npair_loss(anchor: Any, positive: Any, labels: Any, l2_reg: float = 0.002) -> Any:
    """`paddle.nn.functional.npair_loss`: softmax cross entropy of the similarity
    matrix `anchor positive^T` against the row-normalized same-label matrix, plus
    `0.25 * l2_reg * (mean ||anchor||^2 + mean ||positive||^2)`."""
    fn = "npair_loss"
    check_float_tensor(fn, "anchor", anchor)
    check_float_tensor(fn, "positive", positive)
    check_tensor(fn, "labels", labels)
    b = int(labels.shape[0])
    if b < 0:
        raise ValueError(f"{fn}: the batch size of labels must be static")
    lab = reshape(labels, [b, 1])
    same = cast(equal(lab, transpose(lab, [1, 0])), anchor.dtype)
    same = same / sum(same, axis=1, keepdim=True)
    l2 = mean(sum(square(anchor), axis=1)) + mean(sum(square(positive), axis=1))
    l2 = scale(l2, 0.25 * _number(fn, "l2_reg", l2_reg))
    sim = matmul(anchor, positive, transpose_y=True)
    ce = cross_entropy(sim, same, soft_label=True)
    return l2 + mean(sum(same * ce, axis=0))


_NEG = -1e30  # log(0) for CTC paths; finite so that exp(x - max) and its gradient stay 0, not NaN


def _logsumexp(*xs: Any) -> Any:
    """`log(sum(exp(x)))` of same-shaped tensors, stabilized by their maximum."""
    m = xs[0]
    for x in xs[1:]:
        m = maximum(m, x)
    total = exp(xs[0] - m)
    for x in xs[1:]:
        total = total + exp(x - m)
    return m + log(total)


def ctc_loss(log_probs: Any, labels: Any, input_lengths: Any, label_lengths: Any, blank: int = 0,
             reduction: str = "mean", norm_by_times: bool = False) -> Any:
    """`paddle.nn.functional.ctc_loss` (warpctc): the CTC negative log-likelihood of
    `labels [B, L]` (int32/int64, padded; `label_lengths [B]` used) under the
    UNSCALED scores `log_probs [T, B, C]` (softmax is applied inside, as warpctc
    does; `input_lengths [B]` frames used).  `reduction='mean'` averages
    `loss / label_lengths`, `'sum'` adds, `'none'` returns `[B]`.  `norm_by_times`
    divides only the gradient by the input length (the loss value is unchanged),
    which is what warpctc does.

    Built from ops: the CTC forward (alpha) recursion over the blank-extended labels
    in log space, one step per frame (T must be static)."""
    fn = "ctc_loss"
    reduction = check_reduction(fn, reduction)
    check_float_tensor(fn, "log_probs", log_probs)
    for arg, v in (("labels", labels), ("input_lengths", input_lengths), ("label_lengths", label_lengths)):
        check_tensor(fn, arg, v)
        if v.dtype not in ("int32", "int64"):
            raise TypeError(f"{fn}: {arg} must be int32 or int64, got {v.dtype}")
    if len(log_probs.shape) != 3 or len(labels.shape) != 2:
        raise ValueError(f"{fn}: log_probs must be [max_logit_length, batch_size, num_classes + 1] and "
                         f"labels [batch_size, max_label_length], got {list(log_probs.shape)} and "
                         f"{list(labels.shape)}")
    t_max, classes, l_max = int(log_probs.shape[0]), int(log_probs.shape[2]), int(labels.shape[1])
    if t_max < 0 or classes < 0 or l_max < 0:
        raise ValueError(f"{fn}: the time, class and label dimensions must be static, got "
                         f"{list(log_probs.shape)} and {list(labels.shape)}")
    if isinstance(blank, bool) or not isinstance(blank, int) or not 0 <= blank < classes:
        raise ValueError(f"{fn}: blank must be in [0, {classes}), got {blank!r}")
    s_len = 2 * l_max + 1
    lp = transpose(log_softmax(log_probs, axis=2), [1, 0, 2])  # [B, T, C]
    lab = cast(labels, "int64")
    ext = reshape(stack([full_like(lab, blank), lab], axis=2), [-1, 2 * l_max])
    ext = concat([ext, pslice(full_like(lab, blank), [1], [0], [1])], axis=1)  # [B, S]
    em = take_along_axis(lp, unsqueeze(ext, [1]), axis=2)  # [B, T, S]
    # The skip s-2 -> s is allowed onto a label that differs from the label two back.
    prev2 = concat([full_like(pslice(ext, [1], [0], [2]), -1), pslice(ext, [1], [0], [s_len - 2])], axis=1)
    allowed = cast(not_equal(ext, full_like(ext, blank)), lp.dtype) * cast(not_equal(ext, prev2), lp.dtype)
    skip_pen = unsqueeze(scale(allowed, -_NEG, _NEG), [1])  # 0 where allowed, NEG elsewhere; [B, 1, S]
    start = to_constant(np.array([0.0] * min(2, s_len) + [_NEG] * (s_len - 2)).reshape(1, 1, s_len), lp.dtype)
    alpha = pslice(em, [1], [0], [1]) + start
    # Each sequence's length spread over alpha's shape (a blend `a + m (new - a)` would
    # cancel catastrophically against the -1e30 entries).
    lengths = unsqueeze(cast(input_lengths, lp.dtype), [1, 2]) + zeros_like(alpha)
    for t in range(1, t_max):
        neg = full_like(pslice(alpha, [2], [0], [1]), _NEG)
        a1 = concat([neg, pslice(alpha, [2], [0], [s_len - 1])], axis=2)
        a2 = concat([neg, neg, pslice(alpha, [2], [0], [s_len - 2])], axis=2) + skip_pen if s_len > 2 else None
        terms = [alpha, a1] if a2 is None else [alpha, a1, a2]
        new = _logsumexp(*terms) + pslice(em, [1], [t], [t + 1])
        alpha = where(greater_than(lengths, float(t)), new, alpha)  # frames past a sequence's end keep it
    ends = unsqueeze(scale(cast(label_lengths, "int64"), 2, 0), [1, 2])  # index S_b - 1 = 2 * len
    last = take_along_axis(alpha, ends, axis=2)
    before = take_along_axis(alpha, maximum(ends - 1, 0), axis=2)
    empty = cast(equal(ends, full_like(ends, 0)), lp.dtype)  # no label: only the all-blank path
    loss = -sum(_logsumexp(last, before + scale(empty, _NEG)), axis=[1, 2])  # [B]
    if norm_by_times:
        frames = cast(input_lengths, lp.dtype)
        fixed = loss.detach()
        loss = fixed + (loss - fixed) / frames
    if reduction == "mean":
        return mean(loss / cast(label_lengths, lp.dtype))
    if reduction == "sum":
        return sum(loss)
    return loss


PADDLE: list[Callable[..., Any]] = []
FUNCTIONAL: list[Callable[..., Any]] = [
    hinge_embedding_loss, cosine_embedding_loss, triplet_margin_loss, multi_label_soft_margin_loss,
    soft_margin_loss, poisson_nll_loss, gaussian_nll_loss, sigmoid_focal_loss, log_loss, dice_loss,
    npair_loss, ctc_loss, multi_margin_loss, margin_cross_entropy,
]
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {
    "log_loss": log_loss, "dice_loss": dice_loss, "npair_loss": npair_loss,
}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {}
