"""Kernels of the detection and vision ops, following Paddle 3.3.1's CPU kernels
(`nms`, `box_coder`, `yolo_box`, `yolov3_loss`, `prior_box`, `generate_proposals`,
`distribute_fpn_proposals`, `matrix_nms`, `roi_align`, `roi_pool`, `psroi_pool`,
`deformable_conv` and their `*_grad`) step for step, including where they compute
box geometry in the input's dtype and round with C's `round` (half away from zero);
every output is checked against Paddle's in `tests/unit/ops/vision/`.

`roi_align` is separable: every sample of a bin row shares its row weights and every
sample of a bin column its column weights (a sample outside the map is dropped in
both), so one box is `A_y @ x @ A_x^T` with interpolation matrices `A_y [ph, H]`,
`A_x [pw, W]`, and its gradient `A_y^T @ g @ A_x`.  The deformable convolution
gathers its bilinear samples for all taps at once (`_Samples`) and multiplies
them with the weights per group, as Paddle's im2col + GEMM does.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pullback.dialects import pd
from pullback.runtime.interpreter import InterpreterError, kernel


class VisionOpError(InterpreterError, ValueError):
    """Inputs a vision op cannot use (boxes_num not matching the boxes), naming the op."""


def _c_round(v: Any) -> Any:
    """C's `round`: half away from zero (numpy's rounds half to even)."""
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def roi_batch_ids(op_name: str, boxes_num: np.ndarray, rois: int, batch: int) -> np.ndarray:
    """The image of each box from the per-image counts; raises naming the op when the
    counts do not describe the boxes and images."""
    counts = np.asarray(boxes_num).astype(np.int64).reshape(-1)
    if counts.shape[0] != batch:
        raise VisionOpError(
            f"'{op_name}': boxes_num has {counts.shape[0]} entries, but x has {batch} images"
        )
    if (counts < 0).any() or int(counts.sum()) != rois:
        raise VisionOpError(
            f"'{op_name}': boxes_num {counts.tolist()} must be non-negative and sum to the "
            f"{rois} boxes"
        )
    return np.repeat(np.arange(batch), counts)


# ------------------------------------------------------------------------ nms


def _iou_over(box: np.ndarray, others: np.ndarray, threshold: float) -> np.ndarray:
    """Whether each of `others` overlaps `box` by more than `threshold` (IoU of the
    corner boxes, no pixel offset, as Paddle's kernel)."""
    x1 = np.maximum(box[0], others[:, 0])
    y1 = np.maximum(box[1], others[:, 1])
    x2 = np.minimum(box[2], others[:, 2])
    y2 = np.minimum(box[3], others[:, 3])
    inter = np.maximum(x2 - x1, 0) * np.maximum(y2 - y1, 0)
    area = (box[2] - box[0]) * (box[3] - box[1])
    areas = (others[:, 2] - others[:, 0]) * (others[:, 3] - others[:, 1])
    with np.errstate(divide="ignore", invalid="ignore"):
        return inter / (area + areas - inter) > threshold


@kernel(pd.NmsOp)
def nms(op: pd.NmsOp, boxes: np.ndarray) -> np.ndarray:
    """Greedy suppression in the boxes' order: a box not yet suppressed is kept and
    suppresses every later box overlapping it by more than the threshold."""
    return _greedy(boxes, float(np.float32(op.prop("iou_threshold"))))  # a float attribute in Paddle


def _greedy(boxes: np.ndarray, threshold: float) -> np.ndarray:
    """The indices of boxes kept by greedy suppression in their order."""
    n = boxes.shape[0]
    dropped = np.zeros(n, dtype=bool)
    for i in range(n):
        if dropped[i]:
            continue
        later = np.arange(i + 1, n)
        later = later[~dropped[later]]
        if later.size:
            dropped[later[_iou_over(boxes[i], boxes[later], threshold)]] = True
    return np.flatnonzero(~dropped).astype(np.int64)


@kernel(pd.ScoredNmsOp)
def scored_nms(op: pd.ScoredNmsOp, boxes: np.ndarray, scores: np.ndarray, cats: np.ndarray) -> np.ndarray:
    """Paddle's Python `nms` with scores: suppression per category in descending
    score order, the union of the kept boxes sorted by descending score."""
    threshold = float(np.float32(op.prop("iou_threshold")))
    keep = np.zeros(boxes.shape[0], dtype=bool)
    for c in op.prop("categories"):
        members = np.flatnonzero(cats == c)
        order = members[np.argsort(-scores[members], kind="stable")]
        keep[order[_greedy(boxes[order], threshold)]] = True
    kept = np.flatnonzero(keep)
    kept = kept[np.argsort(-scores[kept], kind="stable")]
    top_k = op.prop("top_k")
    return (kept if top_k < 0 else kept[:top_k]).astype(np.int64)


# ------------------------------------------------------------------ box_coder


def _sizes(boxes: np.ndarray, pixel: Any) -> tuple[np.ndarray, np.ndarray]:
    """Widths and heights of `[..., 4]` boxes (`+ 1` pixel when not normalized)."""
    return boxes[..., 2] - boxes[..., 0] + pixel, boxes[..., 3] - boxes[..., 1] + pixel


@kernel(pd.BoxCoderOp)
def box_coder(op: pd.BoxCoderOp, prior: np.ndarray, var: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Center/size encoding of `[N, 4]` targets against `[M, 4]` priors, or its inverse."""
    dt = target.dtype.type
    pixel = dt(0 if op.prop("box_normalized") else 1)
    pw, ph = _sizes(prior, pixel)
    pcx, pcy = prior[:, 0] + pw / dt(2), prior[:, 1] + ph / dt(2)
    var = np.broadcast_to(var, prior.shape)
    if op.prop("code_type") == "encode_center_size":
        tw, th = _sizes(target, pixel)
        tcx, tcy = (target[:, 2] + target[:, 0]) / dt(2), (target[:, 3] + target[:, 1]) / dt(2)
        with np.errstate(divide="ignore"):
            out = np.stack([
                (tcx[:, None] - pcx) / pw,
                (tcy[:, None] - pcy) / ph,
                np.log(np.abs(tw[:, None] / pw)),
                np.log(np.abs(th[:, None] / ph)),
            ], axis=-1)
        return (out / var[None]).astype(target.dtype)
    # decode: prior j pairs with column j (axis 0) or row i (axis 1)
    expand = (lambda a: a[None, :]) if op.prop("axis") == 0 else (lambda a: a[:, None])
    pw, ph, pcx, pcy = expand(pw), expand(ph), expand(pcx), expand(pcy)
    v = [expand(var[:, k]) for k in range(4)]
    cx = v[0] * target[..., 0] * pw + pcx
    cy = v[1] * target[..., 1] * ph + pcy
    w = np.exp(v[2] * target[..., 2]) * pw
    h = np.exp(v[3] * target[..., 3]) * ph
    half = dt(2)
    out = np.stack([cx - w / half, cy - h / half, cx + w / half - pixel, cy + h / half - pixel], axis=-1)
    return out.astype(target.dtype)


# --------------------------------------------------------- yolo_box, prior_box


def _sigmoid(v: np.ndarray) -> np.ndarray:
    """The logistic function in v's dtype."""
    one = v.dtype.type(1)
    return one / (one + np.exp(-v))


@kernel(pd.YoloBoxOp)
def yolo_box(op: pd.YoloBoxOp, x: np.ndarray, img_size: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """YOLOv3 boxes and class scores per anchor and cell (anchor-major order)."""
    n, _, h, w = x.shape
    dt = x.dtype.type
    anchors = np.asarray(op.prop("anchors"), dtype=x.dtype).reshape(-1, 2)
    a, classes = anchors.shape[0], op.prop("class_num")
    iou_aware = op.prop("iou_aware")
    body = x[:, a:] if iou_aware else x
    body = body.reshape(n, a, 5 + classes, h, w)
    conf = _sigmoid(body[:, :, 4])  # [N, A, H, W]
    if iou_aware:
        f = dt(op.prop("iou_aware_factor"))
        conf = conf ** (dt(1) - f) * _sigmoid(x[:, :a]) ** f
    keep = conf >= dt(np.float32(op.prop("conf_thresh")))
    scale = dt(np.float32(op.prop("scale_x_y")))
    bias = dt(-0.5) * (scale - dt(1))
    ratio = op.prop("downsample_ratio")
    img = img_size.astype(x.dtype)
    ih, iw = img[:, 0, None, None, None], img[:, 1, None, None, None]
    cols = np.arange(w, dtype=x.dtype)[None, None, None, :]
    rows = np.arange(h, dtype=x.dtype)[None, None, :, None]
    cx = (cols + _sigmoid(body[:, :, 0]) * scale + bias) * iw / dt(w)
    cy = (rows + _sigmoid(body[:, :, 1]) * scale + bias) * ih / dt(h)
    bw = np.exp(body[:, :, 2]) * anchors[None, :, 0, None, None] * iw / dt(ratio * w)
    bh = np.exp(body[:, :, 3]) * anchors[None, :, 1, None, None] * ih / dt(ratio * h)
    two = dt(2)
    x1, y1, x2, y2 = cx - bw / two, cy - bh / two, cx + bw / two, cy + bh / two
    if op.prop("clip_bbox"):
        x1, y1 = np.where(x1 > 0, x1, dt(0)), np.where(y1 > 0, y1, dt(0))
        x2 = np.where(x2 < iw - dt(1), x2, np.broadcast_to(iw - dt(1), x2.shape))
        y2 = np.where(y2 < ih - dt(1), y2, np.broadcast_to(ih - dt(1), y2.shape))
    boxes = np.stack([x1, y1, x2, y2], axis=-1) * keep[..., None]
    scores = conf[:, :, None] * _sigmoid(body[:, :, 5:]) * keep[:, :, None]  # [N, A, classes, H, W]
    return (boxes.reshape(n, a * h * w, 4).astype(x.dtype),
            scores.transpose(0, 1, 3, 4, 2).reshape(n, a * h * w, classes).astype(x.dtype))


@kernel(pd.PriorBoxOp)
def prior_box(op: pd.PriorBoxOp, feature: np.ndarray, image: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SSD prior boxes (Paddle's order: per min size, the aspect-ratio boxes then
    the max-size box, or with `min_max_aspect_ratios_order` the min, max, then the
    other ratios), normalized by the image size."""
    dt = feature.dtype.type
    h, w = feature.shape[2:]
    ih, iw = image.shape[2:]
    step_w, step_h = dt(np.float32(op.prop("step_w"))), dt(np.float32(op.prop("step_h")))
    if step_w == 0 or step_h == 0:
        step_w, step_h = dt(iw) / dt(w), dt(ih) / dt(h)
    offset = dt(np.float32(op.prop("offset")))
    ratios = [dt(np.float32(r)) for r in pd.expand_aspect_ratios(op.prop("aspect_ratios"), op.prop("flip"))]
    mins = [dt(np.float32(v)) for v in op.prop("min_sizes")]
    maxs = [dt(np.float32(v)) for v in op.prop("max_sizes")]
    half = dt(2)
    sizes: list[tuple[Any, Any]] = []  # (half width, half height) of each prior
    for k, m in enumerate(mins):
        by_ratio = [(m * np.sqrt(r) / half, m / np.sqrt(r) / half) for r in ratios]
        big = [(np.sqrt(m * maxs[k]) / half,) * 2] if maxs else []
        if op.prop("min_max_aspect_ratios_order"):
            sizes += [(m / half, m / half), *big,
                      *[s for s, r in zip(by_ratio, ratios) if abs(float(r) - 1.0) >= 1e-6]]
        else:
            sizes += [*by_ratio, *big]
    half_w = np.array([s[0] for s in sizes], dtype=feature.dtype)
    half_h = np.array([s[1] for s in sizes], dtype=feature.dtype)
    cx = ((np.arange(w, dtype=feature.dtype) + offset) * step_w)[None, :, None]
    cy = ((np.arange(h, dtype=feature.dtype) + offset) * step_h)[:, None, None]
    boxes = np.stack(np.broadcast_arrays(
        (cx - half_w) / dt(iw), (cy - half_h) / dt(ih), (cx + half_w) / dt(iw), (cy + half_h) / dt(ih)
    ), axis=-1)
    if op.prop("clip"):
        boxes = np.clip(boxes, dt(0), dt(1))
    var = np.broadcast_to(np.asarray(op.prop("variances"), dtype=np.float32).astype(feature.dtype), boxes.shape)
    return boxes.astype(feature.dtype), np.ascontiguousarray(var)


# ---------------------------------------------------------- generate_proposals

_BBOX_CLIP = float(np.log(1000.0 / 16.0))
"""Paddle's kBBoxClipDefault: the largest log-scale a delta may apply."""


def _decode_anchors(anchors: np.ndarray, deltas: np.ndarray, var: np.ndarray, offset: Any) -> np.ndarray:
    """Paddle's detection BoxCoder: anchors moved and scaled by (variance-weighted)
    deltas, the scale clipped at `_BBOX_CLIP`."""
    dt = anchors.dtype.type
    aw = anchors[:, 2] - anchors[:, 0] + offset
    ah = anchors[:, 3] - anchors[:, 1] + offset
    acx, acy = anchors[:, 0] + dt(0.5) * aw, anchors[:, 1] + dt(0.5) * ah
    cx = var[:, 0] * deltas[:, 0] * aw + acx
    cy = var[:, 1] * deltas[:, 1] * ah + acy
    w = np.exp(np.minimum(var[:, 2] * deltas[:, 2], dt(_BBOX_CLIP))) * aw
    h = np.exp(np.minimum(var[:, 3] * deltas[:, 3], dt(_BBOX_CLIP))) * ah
    two = dt(2)
    return np.stack([cx - w / two, cy - h / two, cx + w / two - offset, cy + h / two - offset], axis=1)


def _jaccard(a: np.ndarray, others: np.ndarray, normalized: bool) -> np.ndarray:
    """Paddle's JaccardOverlap of box a with each of others (pixel areas `+1` when
    not normalized; disjoint or inverted boxes overlap 0)."""
    pix = 0 if normalized else 1

    def area(b: np.ndarray) -> np.ndarray:
        bad = (b[..., 2] < b[..., 0]) | (b[..., 3] < b[..., 1])
        return np.where(bad, 0, (b[..., 2] - b[..., 0] + pix) * (b[..., 3] - b[..., 1] + pix))

    disjoint = (others[:, 0] > a[2]) | (others[:, 2] < a[0]) | (others[:, 1] > a[3]) | (others[:, 3] < a[1])
    iw = np.minimum(a[2], others[:, 2]) - np.maximum(a[0], others[:, 0]) + pix
    ih = np.minimum(a[3], others[:, 3]) - np.maximum(a[1], others[:, 1]) + pix
    inter = iw * ih
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / (area(a) + area(others) - inter)
    return np.where(disjoint, 0, iou)


def _adaptive_nms(boxes: np.ndarray, threshold: float, eta: float, normalized: bool) -> list[int]:
    """Paddle's detection NMS over boxes already in score order: the threshold
    shrinks by `eta` after each kept box while above 0.5."""
    kept: list[int] = []
    thr = threshold
    for i in range(boxes.shape[0]):
        keep = not kept or bool((_jaccard(boxes[i], boxes[kept], normalized) <= thr).all())
        if keep:
            kept.append(i)
            if eta < 1 and thr > 0.5:
                thr *= eta
    return kept


@kernel(pd.GenerateProposalsOp)
def generate_proposals(
    op: pd.GenerateProposalsOp, scores: np.ndarray, deltas: np.ndarray, img_size: np.ndarray,
    anchors: np.ndarray, variances: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per image: top scores, decode, clip, filter by size, suppress, keep the best;
    rois and scores concatenated over images, with the count of each."""
    n, a, h, w = scores.shape
    dt = scores.dtype.type
    pixel = op.prop("pixel_offset")
    offset = dt(1 if pixel else 0)
    anc, var = anchors.reshape(-1, 4), variances.reshape(-1, 4)
    pre, post = op.prop("pre_nms_top_n"), op.prop("post_nms_top_n")
    min_size = max(dt(np.float32(op.prop("min_size"))), dt(1))
    rois, probs, counts = [], [], []
    for b in range(n):
        sc = scores[b].transpose(1, 2, 0).reshape(-1)  # [H*W*A], anchor fastest
        dl = deltas[b].reshape(a, 4, h, w).transpose(2, 3, 0, 1).reshape(-1, 4)
        order = np.argsort(-sc, kind="stable")
        if 0 < pre < order.size:
            order = order[:pre]
        props = _decode_anchors(anc[order], dl[order], var[order], offset)
        im_h, im_w = dt(img_size[b, 0]), dt(img_size[b, 1])
        props[:, 0::2] = np.clip(props[:, 0::2], dt(0), im_w - offset)
        props[:, 1::2] = np.clip(props[:, 1::2], dt(0), im_h - offset)
        ws, hs = props[:, 2] - props[:, 0] + offset, props[:, 3] - props[:, 1] + offset
        ok = (ws >= min_size) & (hs >= min_size)
        if pixel:
            ok &= (props[:, 0] + ws / dt(2) <= im_w) & (props[:, 1] + hs / dt(2) <= im_h)
        keep = np.flatnonzero(ok)
        if keep.size == 0:
            rois.append(np.zeros((1, 4), scores.dtype))
            probs.append(np.zeros((1, 1), scores.dtype))
            counts.append(1)
            continue
        props, sel = props[keep], sc[order][keep]
        if op.prop("nms_thresh") > 0:
            kept = _adaptive_nms(props, float(np.float32(op.prop("nms_thresh"))),
                                 float(np.float32(op.prop("eta"))), normalized=not pixel)
            if 0 < post < len(kept):
                kept = kept[:post]
            props, sel = props[kept], sel[kept]
        rois.append(props)
        probs.append(sel[:, None])
        counts.append(props.shape[0])
    return (np.concatenate(rois).astype(scores.dtype), np.concatenate(probs).astype(scores.dtype),
            np.asarray(counts, dtype=np.int32))


@kernel(pd.DistributeFpnProposalsOp)
def distribute_fpn_proposals(op: pd.DistributeFpnProposalsOp, rois: np.ndarray, rois_num: np.ndarray) -> tuple[np.ndarray, ...]:
    """Each roi's pyramid level from its scale; the rois per level (image-major,
    input order), where each went, and the per-image count of each level."""
    lo, hi = op.prop("min_level"), op.prop("max_level")
    dt = rois.dtype.type
    pix = dt(1 if op.prop("pixel_offset") else 0)
    w, h = rois[:, 2] - rois[:, 0] + pix, rois[:, 3] - rois[:, 1] + pix
    area = np.where((rois[:, 2] < rois[:, 0]) | (rois[:, 3] < rois[:, 1]), dt(0), w * h)
    scale = np.sqrt(area)
    level = np.floor(np.log2(scale / dt(op.prop("refer_scale")) + dt(1e-8)) + dt(op.prop("refer_level")))
    level = np.clip(level, lo, hi).astype(np.int64)
    image = roi_batch_ids(op.name, rois_num, rois.shape[0], rois_num.shape[0])
    outs, counts, where = [], [], np.zeros(rois.shape[0], dtype=np.int32)
    start = 0
    for lvl in range(lo, hi + 1):
        members = np.flatnonzero(level == lvl)  # image-major already: rois come image by image
        outs.append(rois[members])
        where[members] = start + np.arange(members.size, dtype=np.int32)
        start += members.size
        counts.append(np.bincount(image[members], minlength=rois_num.shape[0]).astype(np.int32))
    return (*outs, where[:, None], *counts)


def _matrix_nms_class(op: pd.MatrixNmsOp, boxes: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One class of one image: the kept box indices and their decayed scores."""
    dt = scores.dtype.type
    cand = np.flatnonzero(scores > dt(np.float32(op.prop("score_threshold"))))
    if cand.size == 0:
        return cand, scores[cand]
    order = cand[np.argsort(-scores[cand], kind="stable")]
    top_k = op.prop("nms_top_k")
    if top_k > -1:
        order = order[:top_k]
    k = order.size
    normalized = op.prop("normalized")
    iou = np.zeros((k, k), dtype=scores.dtype)  # iou[i, j]: box i with a higher-scoring box j < i
    for i in range(1, k):
        iou[i, :i] = _jaccard(boxes[order[i]], boxes[order[:i]], normalized)
    iou_max = iou.max(axis=1)  # row 0: 0
    sigma = dt(np.float32(op.prop("gaussian_sigma")))
    post = dt(np.float32(op.prop("post_threshold")))
    kept, decayed = [], []
    if scores[order[0]] > post:
        kept.append(order[0])
        decayed.append(scores[order[0]])
    for i in range(1, k):
        m, o = iou_max[:i], iou[i, :i]
        if op.prop("use_gaussian"):
            decay = np.exp((m * m - o * o) * sigma)
        else:
            # a higher box j that was itself a duplicate (m = 1) gives (1 - o) / 0: inf,
            # or nan when box i duplicates it too; Paddle's running std::min(min, decay)
            # skips both (a nan never compares smaller), so they do not decay box i
            with np.errstate(divide="ignore", invalid="ignore"):
                decay = (dt(1) - o) / (dt(1) - m)
        ds = min(dt(1), np.nanmin(decay, initial=dt(1))) * scores[order[i]]
        if ds > post:
            kept.append(order[i])
            decayed.append(ds)
    return np.asarray(kept, dtype=np.int64), np.asarray(decayed, dtype=scores.dtype)


@kernel(pd.MatrixNmsOp)
def matrix_nms(op: pd.MatrixNmsOp, bboxes: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Matrix NMS per image and class; each image's detections sorted by decayed
    score and cut to `keep_top_k`."""
    n, c, m = scores.shape
    outs, index, counts = [], [], []
    for b in range(n):
        rows = []
        for cls in range(c):
            if cls == op.prop("background_label"):
                continue
            kept, ds = _matrix_nms_class(op, bboxes[b], scores[b, cls])
            rows += [(float(d), cls, int(i), d) for i, d in zip(kept, ds)]
        order = sorted(range(len(rows)), key=lambda r: -rows[r][0])
        if op.prop("keep_top_k") > -1:
            order = order[: op.prop("keep_top_k")]
        for r in order:
            _, cls, i, d = rows[r]
            outs.append(np.concatenate([[scores.dtype.type(cls), d], bboxes[b, i]]))
            index.append(b * m + i)
        counts.append(len(order))
    out = np.asarray(outs, dtype=scores.dtype).reshape(-1, 6)
    return out, np.asarray(index, dtype=np.int32).reshape(-1, 1), np.asarray(counts, dtype=np.int32)


# ------------------------------------------------------------------- yolo_loss


def _sce(x: Any, target: Any) -> Any:
    """Sigmoid cross entropy of logits x, stable for large |x|."""
    return np.maximum(x, 0) - x * target + np.log1p(np.exp(-np.abs(x)))


def _center_iou(b1: np.ndarray, b2: np.ndarray) -> np.ndarray:
    """IoU of center-format boxes `[..., 4]` (x, y, w, h), broadcast."""
    def overlap(c1: np.ndarray, w1: np.ndarray, c2: np.ndarray, w2: np.ndarray) -> np.ndarray:
        return np.minimum(c1 + w1 / 2, c2 + w2 / 2) - np.maximum(c1 - w1 / 2, c2 - w2 / 2)

    iw = overlap(b1[..., 0], b1[..., 2], b2[..., 0], b2[..., 2])
    ih = overlap(b1[..., 1], b1[..., 3], b2[..., 1], b2[..., 3])
    inter = np.where((iw < 0) | (ih < 0), 0, iw * ih)
    return inter / (b1[..., 2] * b1[..., 3] + b2[..., 2] * b2[..., 3] - inter)


def _yolo_loss(op: pd.YoloLossBase, x: np.ndarray, gt: np.ndarray, labels: np.ndarray, score: np.ndarray,
               loss_grad: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """The loss `[N]` and (with `loss_grad`) the gradient of x, as Paddle's
    yolov3_loss kernels compute them (in float64, cast back)."""
    n, _, h, w = x.shape
    xd, gt, score = x.astype(np.float64), gt.astype(np.float64), score.astype(np.float64)
    anchors = np.asarray(op.prop("anchors"), dtype=np.float64).reshape(-1, 2)
    mask = list(op.prop("anchor_mask"))
    classes = op.prop("class_num")
    m = len(mask)
    xr = xd.reshape(n, m, 5 + classes, h, w)
    dx = np.zeros_like(xr)
    ratio = op.prop("downsample_ratio")
    in_h, in_w = ratio * h, ratio * w
    pos, neg = 1.0, 0.0
    if op.prop("use_label_smooth"):
        smooth = min(1.0 / classes, 1.0 / 40)
        pos, neg = 1.0 - smooth, smooth
    sxy = float(np.float32(op.prop("scale_x_y")))
    bias = -0.5 * (sxy - 1.0)
    ignore = float(np.float32(op.prop("ignore_thresh")))
    g = np.ones(n) if loss_grad is None else loss_grad.astype(np.float64)
    loss = np.zeros(n)

    def sig(v: Any) -> Any:
        return 1.0 / (1.0 + np.exp(-v))

    cols, rows = np.arange(w)[None, None, :], np.arange(h)[None, :, None]
    aw, ah = anchors[mask, 0][:, None, None], anchors[mask, 1][:, None, None]
    for i in range(n):
        valid = (gt[i, :, 2] > 1e-6) & (gt[i, :, 3] > 1e-6)
        pred = np.stack([(cols + sig(xr[i, :, 0]) * sxy + bias) / w, (rows + sig(xr[i, :, 1]) * sxy + bias) / h,
                         np.exp(xr[i, :, 2]) * aw / in_w, np.exp(xr[i, :, 3]) * ah / in_h], axis=-1)  # [M, H, W, 4]
        obj = np.zeros((m, h, w))
        if valid.any():
            best = _center_iou(pred[..., None, :], gt[i, valid][None, None, None]).max(axis=-1)
            obj[best > ignore] = -1
        for t in np.flatnonzero(valid):
            gx, gy, gw, gh = gt[i, t]
            gi, gj = int(gx * w), int(gy * h)
            shapes = np.concatenate([np.zeros((len(anchors), 2)), anchors / [in_w, in_h]], axis=1)
            best_n = int(np.argmax(_center_iou(shapes, np.array([0.0, 0.0, gw, gh]))))
            if best_n not in mask:
                continue
            k = mask.index(best_n)
            s = score[i, t]
            wgt = (2.0 - gw * gh) * s
            tx, ty = gx * w - gi, gy * h - gj
            tw, th = np.log(gw * in_w / anchors[best_n, 0]), np.log(gh * in_h / anchors[best_n, 1])
            p = xr[i, k, :, gj, gi]
            loss[i] += (_sce(p[0], tx) + _sce(p[1], ty) + abs(p[2] - tw) + abs(p[3] - th)) * wgt
            dx[i, k, 0, gj, gi] += (sig(p[0]) - tx) * wgt * g[i]
            dx[i, k, 1, gj, gi] += (sig(p[1]) - ty) * wgt * g[i]
            dx[i, k, 2, gj, gi] += np.sign(p[2] - tw) * wgt * g[i]
            dx[i, k, 3, gj, gi] += np.sign(p[3] - th) * wgt * g[i]
            target = np.where(np.arange(classes) == labels[i, t], pos, neg)
            loss[i] += (_sce(p[5:], target) * s).sum()
            dx[i, k, 5:, gj, gi] += (sig(p[5:]) - target) * s * g[i]
            obj[k, gj, gi] = s
        po = xr[i, :, 4]
        positive, negative = obj > 1e-5, (obj <= 1e-5) & (obj > -0.5)
        loss[i] += (_sce(po, 1.0) * obj)[positive].sum() + _sce(po, 0.0)[negative].sum()
        dx[i, :, 4] += (np.where(positive, (sig(po) - 1.0) * obj, 0.0) + np.where(negative, sig(po), 0.0)) * g[i]
    return loss.astype(x.dtype), dx.reshape(x.shape).astype(x.dtype)


@kernel(pd.YoloLossOp)
def yolov3_loss(op: pd.YoloLossOp, x: np.ndarray, gt: np.ndarray, labels: np.ndarray, score: np.ndarray) -> np.ndarray:
    """The YOLOv3 loss of each image."""
    return _yolo_loss(op, x, gt, labels, score, None)[0]


@kernel(pd.YoloLossGradOp)
def yolov3_loss_grad(op: pd.YoloLossGradOp, x: np.ndarray, gt: np.ndarray, labels: np.ndarray, score: np.ndarray,
                     g: np.ndarray) -> np.ndarray:
    """The gradient of x (the ignore mask and the matches are constants, as in Paddle)."""
    return _yolo_loss(op, x, gt, labels, score, g)[1]


# ------------------------------------------------------------------- roi_align


def _align_axis(start: Any, bin_size: Any, pooled: int, grid: int, size: int, dt: type) -> np.ndarray:
    """`[pooled, size]`: the summed bilinear weights each bin's `grid` samples along
    one axis put on each input position (samples outside `[-1, size]` weigh 0)."""
    a: np.ndarray = np.zeros((pooled, size), dtype=dt)
    for p in range(pooled):
        for i in range(grid):
            y = start + dt(p) * bin_size + (dt(i) + dt(0.5)) * bin_size / dt(grid)
            if y < -1.0 or y > size:
                continue
            y = max(y, dt(0))
            low = int(y)
            if low >= size - 1:
                a[p, size - 1] += 1
                continue
            frac = y - dt(low)
            a[p, low] += dt(1) - frac
            a[p, low + 1] += frac
    return a


def _align_matrices(op: pd.RoiAlignOp | pd.RoiAlignGradOp, box: np.ndarray, hw: tuple[int, int]) -> tuple[np.ndarray, np.ndarray, Any]:
    """`A_y [ph, H]`, `A_x [pw, W]` and the sample count of one box."""
    dt = box.dtype.type
    scale = dt(np.float32(op.prop("spatial_scale")))
    aligned = op.prop("aligned")
    shift = dt(0.5) if aligned else dt(0)
    x1, y1, x2, y2 = (box * scale) - shift
    rw, rh = x2 - x1, y2 - y1
    if not aligned:
        rw, rh = max(rw, dt(1)), max(rh, dt(1))
    ph, pw = op.prop("pooled_height"), op.prop("pooled_width")
    bh, bw = rh / dt(ph), rw / dt(pw)
    ratio = op.prop("sampling_ratio")
    gh = ratio if ratio > 0 else max(math.ceil(rh / dt(ph)), 0)
    gw = ratio if ratio > 0 else max(math.ceil(rw / dt(pw)), 0)
    count = dt(max(gh * gw, 1))
    return _align_axis(y1, bh, ph, gh, hw[0], dt), _align_axis(x1, bw, pw, gw, hw[1], dt), count


@kernel(pd.RoiAlignOp)
def roi_align(op: pd.RoiAlignOp, x: np.ndarray, boxes: np.ndarray, boxes_num: np.ndarray) -> np.ndarray:
    """Each bin the mean of its bilinear samples (`A_y @ x @ A_x^T / count` per box)."""
    n, c, h, w = x.shape
    ids = roi_batch_ids(op.name, boxes_num, boxes.shape[0], n)
    out = np.zeros((boxes.shape[0], c, op.prop("pooled_height"), op.prop("pooled_width")), dtype=x.dtype)
    for r, b in enumerate(ids):
        ay, ax, count = _align_matrices(op, boxes[r].astype(x.dtype), (h, w))
        out[r] = ay @ x[b] @ ax.T / count
    return out


@kernel(pd.RoiAlignGradOp)
def roi_align_grad(op: pd.RoiAlignGradOp, x: np.ndarray, boxes: np.ndarray, boxes_num: np.ndarray, g: np.ndarray) -> np.ndarray:
    """The adjoint of `roi_align` in x: `A_y^T @ g @ A_x / count` summed per image."""
    n, c, h, w = x.shape
    ids = roi_batch_ids(op.name, boxes_num, boxes.shape[0], n)
    dx = np.zeros_like(x)
    for r, b in enumerate(ids):
        ay, ax, count = _align_matrices(op, boxes[r].astype(x.dtype), (h, w))
        dx[b] += ay.T @ g[r] @ ax / count
    return dx


# -------------------------------------------------------------------- roi_pool


def _pool_bins(op: pd.RoiPoolOp | pd.RoiPoolGradOp, box: np.ndarray, hw: tuple[int, int]) -> list[tuple[int, int, int, int, int, int]]:
    """`(ph, pw, hstart, hend, wstart, wend)` of each bin of one box (clipped to the
    map; empty when `end <= start`)."""
    scale = box.dtype.type(np.float32(op.prop("spatial_scale")))
    x1, y1, x2, y2 = (int(v) for v in _c_round(box * scale))
    rh, rw = max(y2 - y1 + 1, 1), max(x2 - x1 + 1, 1)
    ph, pw = op.prop("pooled_height"), op.prop("pooled_width")
    bh, bw = np.float32(rh) / np.float32(ph), np.float32(rw) / np.float32(pw)
    h, w = hw
    bins = []
    for i in range(ph):
        hs = min(max(int(np.floor(np.float32(i) * bh)) + y1, 0), h)
        he = min(max(int(np.ceil(np.float32(i + 1) * bh)) + y1, 0), h)
        for j in range(pw):
            ws = min(max(int(np.floor(np.float32(j) * bw)) + x1, 0), w)
            we = min(max(int(np.ceil(np.float32(j + 1) * bw)) + x1, 0), w)
            bins.append((i, j, hs, he, ws, we))
    return bins


@kernel(pd.RoiPoolOp)
def roi_pool(op: pd.RoiPoolOp, x: np.ndarray, boxes: np.ndarray, boxes_num: np.ndarray) -> np.ndarray:
    """Each bin the maximum over its pixels (0 when empty)."""
    n, c, h, w = x.shape
    ids = roi_batch_ids(op.name, boxes_num, boxes.shape[0], n)
    out = np.zeros((boxes.shape[0], c, op.prop("pooled_height"), op.prop("pooled_width")), dtype=x.dtype)
    for r, b in enumerate(ids):
        for i, j, hs, he, ws, we in _pool_bins(op, boxes[r].astype(x.dtype), (h, w)):
            if he > hs and we > ws:
                out[r, :, i, j] = x[b, :, hs:he, ws:we].max(axis=(1, 2))
    return out


@kernel(pd.RoiPoolGradOp)
def roi_pool_grad(op: pd.RoiPoolGradOp, x: np.ndarray, boxes: np.ndarray, boxes_num: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Each bin's gradient added at its maximum (the first, row-major, on ties)."""
    n, c, h, w = x.shape
    ids = roi_batch_ids(op.name, boxes_num, boxes.shape[0], n)
    dx = np.zeros_like(x)
    chans = np.arange(c)
    for r, b in enumerate(ids):
        for i, j, hs, he, ws, we in _pool_bins(op, boxes[r].astype(x.dtype), (h, w)):
            if he > hs and we > ws:
                k = x[b, :, hs:he, ws:we].reshape(c, -1).argmax(axis=1)
                np.add.at(dx[b], (chans, hs + k // (we - ws), ws + k % (we - ws)), g[r, :, i, j])
    return dx


# ------------------------------------------------------------------ psroi_pool


def _ps_bins(op: pd.PsroiPoolOp | pd.PsroiPoolGradOp, box: np.ndarray, hw: tuple[int, int]) -> list[tuple[int, int, int, int, int, int]]:
    """`(ph, pw, hstart, hend, wstart, wend)` of each bin of one box: the box's
    corners rounded, then scaled (the end corner one pixel further), in x's dtype."""
    dt = box.dtype.type
    scale = dt(np.float32(op.prop("spatial_scale")))
    r = _c_round(box).astype(box.dtype)
    x1, y1 = r[0] * scale, r[1] * scale
    x2, y2 = (r[2] + dt(1)) * scale, (r[3] + dt(1)) * scale
    rh, rw = max(y2 - y1, dt(0.1)), max(x2 - x1, dt(0.1))
    ph, pw = op.prop("pooled_height"), op.prop("pooled_width")
    bh, bw = rh / dt(ph), rw / dt(pw)
    h, w = hw
    bins = []
    for i in range(ph):
        hs = min(max(int(np.floor(dt(i) * bh + y1)), 0), h)
        he = min(max(int(np.ceil(dt(i + 1) * bh + y1)), 0), h)
        for j in range(pw):
            ws = min(max(int(np.floor(dt(j) * bw + x1)), 0), w)
            we = min(max(int(np.ceil(dt(j + 1) * bw + x1)), 0), w)
            bins.append((i, j, hs, he, ws, we))
    return bins


def _ps_channels(op: pd.PsroiPoolOp | pd.PsroiPoolGradOp, c: int, i: int, j: int) -> np.ndarray:
    """The input channel of bin `(i, j)` for each output channel."""
    ph, pw = op.prop("pooled_height"), op.prop("pooled_width")
    return (np.arange(c // (ph * pw)) * ph + i) * pw + j


@kernel(pd.PsroiPoolOp)
def psroi_pool(op: pd.PsroiPoolOp, x: np.ndarray, boxes: np.ndarray, boxes_num: np.ndarray) -> np.ndarray:
    """Each bin the mean of its own input channel over the bin (0 when empty)."""
    n, c, h, w = x.shape
    ph, pw = op.prop("pooled_height"), op.prop("pooled_width")
    ids = roi_batch_ids(op.name, boxes_num, boxes.shape[0], n)
    out = np.zeros((boxes.shape[0], c // (ph * pw), ph, pw), dtype=x.dtype)
    for r, b in enumerate(ids):
        for i, j, hs, he, ws, we in _ps_bins(op, boxes[r].astype(x.dtype), (h, w)):
            if he > hs and we > ws:
                region = x[b, _ps_channels(op, c, i, j), hs:he, ws:we]
                out[r, :, i, j] = region.sum(axis=(1, 2)) / x.dtype.type((he - hs) * (we - ws))
    return out


@kernel(pd.PsroiPoolGradOp)
def psroi_pool_grad(op: pd.PsroiPoolGradOp, x: np.ndarray, boxes: np.ndarray, boxes_num: np.ndarray, g: np.ndarray) -> np.ndarray:
    """Each bin's gradient spread evenly over its bin of its input channel."""
    n, c, h, w = x.shape
    ids = roi_batch_ids(op.name, boxes_num, boxes.shape[0], n)
    dx = np.zeros_like(x)
    for r, b in enumerate(ids):
        for i, j, hs, he, ws, we in _ps_bins(op, boxes[r].astype(x.dtype), (h, w)):
            if he > hs and we > ws:
                share = g[r, :, i, j] / x.dtype.type((he - hs) * (we - ws))
                dx[b, _ps_channels(op, c, i, j), hs:he, ws:we] += share[:, None, None]
    return dx


# ------------------------------------------------------- deformable convolution


class _Samples:
    """The bilinear samples of every tap of a deformable convolution.

    Shapes: positions `[N, dg, K, Ho, Wo]` (K = kh * kw taps); `val` the sampled
    values `[N, dg, C/dg, K, Ho, Wo]`; per corner its flat index into the map, its
    weight and whether it lies inside the map."""

    def __init__(self, op: pd.DeformConvBase, x: np.ndarray, offset: np.ndarray, kh: int, kw: int) -> None:
        n, c, h, w = x.shape
        dg = op.prop("deformable_groups")
        (sh, sw), (ph, pw), (dh, dw) = op.prop("strides"), op.prop("paddings"), op.prop("dilations")
        ho, wo = offset.shape[2:]
        k = kh * kw
        off = offset.reshape(n, dg, k, 2, ho, wo)
        ti, tj = np.divmod(np.arange(k), kw)
        base_h = (np.arange(ho) * sh - ph)[None, :, None] + (ti * dh)[:, None, None]  # [K, Ho, 1]
        base_w = (np.arange(wo) * sw - pw)[None, None, :] + (tj * dw)[:, None, None]  # [K, 1, Wo]
        dt = x.dtype.type
        self.h = base_h.astype(x.dtype) + off[:, :, :, 0]
        self.w = base_w.astype(x.dtype) + off[:, :, :, 1]
        self.inside = (self.h > -1) & (self.w > -1) & (self.h < h) & (self.w < w)
        hl, wl = np.floor(self.h), np.floor(self.w)
        self.lh, self.lw = self.h - hl, self.w - wl
        hl, wl = hl.astype(np.int64), wl.astype(np.int64)
        self.corners = []  # (flat index, valid, dy, dx) of (low, low), (low, high), (high, low), (high, high)
        for dy in (0, 1):
            for dx in (0, 1):
                yy, xx = hl + dy, wl + dx
                valid = self.inside & (yy >= 0) & (yy <= h - 1) & (xx >= 0) & (xx <= w - 1)
                flat = np.where(valid, np.clip(yy, 0, h - 1) * w + np.clip(xx, 0, w - 1), 0)
                self.corners.append((flat, valid, dy, dx))
        self.xg = x.reshape(n, dg, c // dg, h * w)
        self.dt = dt
        self.val = sum(
            (self.weight(dy, dx) * valid)[:, :, None] * self.gather(flat)
            for flat, valid, dy, dx in self.corners
        )

    def weight(self, dy: int, dx: int) -> np.ndarray:
        """The bilinear weight of a corner at every sample."""
        one = self.dt(1)
        return (self.lh if dy else one - self.lh) * (self.lw if dx else one - self.lw)

    def gather(self, flat: np.ndarray) -> np.ndarray:
        """x at one corner of every sample, `[N, dg, C/dg, K, Ho, Wo]`."""
        n, dg, cdg, hw = self.xg.shape
        idx = flat.reshape(n, dg, 1, -1)
        return np.take_along_axis(self.xg, np.broadcast_to(idx, (n, dg, cdg, idx.shape[-1])), axis=3).reshape(
            n, dg, cdg, *flat.shape[2:]
        )


def _grouped_cols(op: pd.DeformConvBase, cols: np.ndarray) -> np.ndarray:
    """`[N, dg, C/dg, K, Ho, Wo]` -> `[N, groups, C/groups * K, Ho * Wo]`."""
    n, dg, cdg, k, ho, wo = cols.shape
    g = op.prop("groups")
    return cols.reshape(n, g, dg * cdg // g * k, ho * wo)


@kernel(pd.DeformConvOp)
def deformable_conv(op: pd.DeformConvOp, x: np.ndarray, offset: np.ndarray, mask: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """im2col of the modulated bilinear samples, then one product per group."""
    n, dg = x.shape[0], op.prop("deformable_groups")
    o, _, kh, kw = weight.shape
    s = _Samples(op, x, offset, kh, kw)
    m = mask.reshape(n, dg, 1, kh * kw, *mask.shape[2:])
    cols = _grouped_cols(op, s.val * m)
    g = op.prop("groups")
    wg = weight.reshape(g, o // g, -1)
    out = np.einsum("gok,ngkl->ngol", wg, cols)
    return out.reshape(n, o, *offset.shape[2:]).astype(x.dtype)


@kernel(pd.DeformConvGradOp)
def deformable_conv_grad(
    op: pd.DeformConvGradOp, x: np.ndarray, offset: np.ndarray, mask: np.ndarray, weight: np.ndarray, gout: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The gradients of x (bilinear weights scattered to the corners), offset (the
    bilinear interpolant's slope), mask (the unmodulated sample) and weight."""
    n, c, h, w = x.shape
    dg, g = op.prop("deformable_groups"), op.prop("groups")
    o, _, kh, kw = weight.shape
    k = kh * kw
    ho, wo = offset.shape[2:]
    s = _Samples(op, x, offset, kh, kw)
    m = mask.reshape(n, dg, 1, k, ho, wo)
    go = gout.reshape(n, g, o // g, ho * wo)
    wg = weight.reshape(g, o // g, -1)
    cols = _grouped_cols(op, s.val * m)
    dweight = np.einsum("ngol,ngkl->gok", go, cols).reshape(weight.shape)
    dcol = np.einsum("gok,ngol->ngkl", wg, go).reshape(s.val.shape)  # d out / d (val * mask)
    dmask = (dcol * s.val).sum(axis=2).reshape(mask.shape)
    dval = dcol * m
    dxg = np.zeros((n, dg, h * w, c // dg), dtype=x.dtype)
    dh = np.zeros(s.h.shape, dtype=x.dtype)
    dw = np.zeros(s.w.shape, dtype=x.dtype)
    one = x.dtype.type(1)
    for flat, valid, cy, cx in s.corners:
        contrib = dval * (s.weight(cy, cx) * valid)[:, :, None]  # [N, dg, C/dg, K, Ho, Wo]
        for b in range(n):
            for q in range(dg):
                np.add.at(dxg[b, q], flat[b, q].reshape(-1), contrib[b, q].reshape(c // dg, -1).T)
        vals = (dval * s.gather(flat)).sum(axis=2) * valid  # [N, dg, K, Ho, Wo]
        dh += vals * (s.lw if cx else one - s.lw) * (1 if cy else -1)
        dw += vals * (s.lh if cy else one - s.lh) * (1 if cx else -1)
    dx = dxg.transpose(0, 1, 3, 2).reshape(x.shape)
    doffset = np.stack([dh, dw], axis=3).reshape(offset.shape)
    return dx, doffset.astype(x.dtype), dmask.astype(x.dtype), dweight.astype(x.dtype)
