"""`paddle.vision.ops`: detection and vision operators with Paddle 3.3.1's
signatures, defaults and results, in static and eager mode.

`roi_align`, `roi_pool`, `psroi_pool`, `deform_conv2d` (and their layers `RoIAlign`,
`RoIPool`, `PSRoIPool`, `DeformConv2D`) and `yolo_loss` have gradients: w.r.t. x for
the poolings and the loss; w.r.t. x, offset, mask, weight and bias for the
deformable convolution (the ops of the `vision` family, `dialects/pd/vision.py`).
`nms`, `box_coder`, `yolo_box`, `prior_box`, `generate_proposals`,
`distribute_fpn_proposals` and `matrix_nms` have none, as in Paddle.  `nms` is
Paddle's `nms` operator without scores and one `pd.scored_nms` op with them
(Paddle's Python sorting, per-category suppression and `top_k`); its result size is
known at run time only.  (`read_file` and `decode_jpeg` are not supported.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pullback.dialects import pd
from pullback.frontend.core import apply, in_dynamic_mode
from pullback.frontend.initializer import Normal
from pullback.frontend.nn_layers import Layer
from pullback.frontend.ops.elementwise import cast, check_float_tensor, check_tensor, full_like
from pullback.frontend.ops.indexing import to_constant
from pullback.frontend.ops.nn import int_pair, positive_int
from pullback.frontend.ops.reduction import sum as reduce_sum
from pullback.frontend.ops.shape import reshape, slice

__all__ = [
    "DeformConv2D",
    "PSRoIPool",
    "RoIAlign",
    "RoIPool",
    "box_coder",
    "deform_conv2d",
    "distribute_fpn_proposals",
    "generate_proposals",
    "matrix_nms",
    "nms",
    "prior_box",
    "psroi_pool",
    "roi_align",
    "roi_pool",
    "yolo_box",
    "yolo_loss",
]


def _check_boxes(fn: str, arg: str, boxes: Any) -> None:
    """A float `[num, 4]` tensor."""
    check_float_tensor(fn, arg, boxes)
    if len(boxes.shape) != 2 or boxes.shape[1] not in (4, -1):
        raise ValueError(f"{fn}: {arg} must be a [num_boxes, 4] tensor, got shape {list(boxes.shape)}")


# ------------------------------------------------------------------------ nms


def _nms_op(boxes: Any, iou_threshold: float) -> Any:
    """Paddle's `nms` operator: the kept indices of boxes taken in their order."""
    return apply(pd.NmsOp, [boxes], prefix="nms", iou_threshold=float(iou_threshold))


def nms(
    boxes: Any,
    iou_threshold: float = 0.3,
    scores: Any = None,
    category_idxs: Any = None,
    categories: Sequence[int] | None = None,
    top_k: int | None = None,
) -> Any:
    """`paddle.vision.ops.nms`: int64 indices of the boxes `[N, 4]` (x1, y1, x2, y2)
    kept by non-maximum suppression (a box is dropped when its IoU with a kept one
    exceeds `iou_threshold`).  Without scores, boxes are taken in their order;
    with scores, in descending score order, and the result is sorted by score.
    With `category_idxs`, suppression runs within each of `categories` (boxes of
    other categories are dropped) and the best `top_k` are returned; as in
    Paddle, `top_k` applies only then."""
    fn = "nms"
    _check_boxes(fn, "boxes", boxes)
    if not isinstance(iou_threshold, (int, float)):
        raise TypeError(f"{fn}: iou_threshold must be a float, got {type(iou_threshold).__name__}")
    if scores is None:
        return _nms_op(boxes, iou_threshold)
    check_float_tensor(fn, "scores", scores)
    if len(scores.shape) != 1:
        raise ValueError(f"{fn}: scores must be a 1-D tensor, got shape {list(scores.shape)}")
    if category_idxs is None:
        # one category holding every box: Paddle's sort, suppress, gather
        return apply(pd.ScoredNmsOp, [boxes, scores, full_like(scores, 0, dtype="int64")], prefix="nms",
                     iou_threshold=float(iou_threshold), categories=[0])
    check_tensor(fn, "category_idxs", category_idxs)
    if category_idxs.dtype not in ("int32", "int64"):
        raise TypeError(f"{fn}: category_idxs must be an int32/int64 tensor, got {category_idxs.dtype}")
    if categories is None:
        raise ValueError(f"{fn}: categories (the list of category ids) is required when category_idxs is given")
    if top_k is not None:
        if not isinstance(top_k, int) or top_k < 1:
            raise ValueError(f"{fn}: top_k must be a positive int, got {top_k!r}")
        if scores.shape[0] != -1 and top_k > scores.shape[0]:
            raise ValueError(f"{fn}: top_k ({top_k}) must not exceed the number of boxes ({scores.shape[0]})")
    return apply(pd.ScoredNmsOp, [boxes, scores, category_idxs], prefix="nms", iou_threshold=float(iou_threshold),
                 categories=[int(c) for c in categories], top_k=-1 if top_k is None else int(top_k))


# ------------------------------------------------------------------ box_coder


def box_coder(
    prior_box: Any,
    prior_box_var: Any,
    target_box: Any,
    code_type: str = "encode_center_size",
    box_normalized: bool = True,
    axis: int = 0,
    name: str | None = None,
) -> Any:
    """`paddle.vision.ops.box_coder`: encode target boxes `[N, 4]` against prior
    boxes `[M, 4]` as center/size offsets `[N, M, 4]` (`encode_center_size`), or
    decode offsets `[N, M, 4]` into boxes (`decode_center_size`; `axis` 0: prior
    `j` for column `j`, 1: prior `i` for row `i`).  `prior_box_var` is a `[M, 4]`
    tensor or 4 floats dividing (encode) or scaling (decode) the offsets.  No
    gradient, as in Paddle."""
    fn = "box_coder"
    _check_boxes(fn, "prior_box", prior_box)
    check_float_tensor(fn, "target_box", target_box)
    if code_type not in pd.BOX_CODE_TYPES:
        raise ValueError(f"{fn}: code_type must be one of {list(pd.BOX_CODE_TYPES)}, got {code_type!r}")
    if isinstance(prior_box_var, (list, tuple)):
        if len(prior_box_var) != 4 or not all(isinstance(v, (int, float)) for v in prior_box_var):
            raise ValueError(f"{fn}: prior_box_var as a list must hold 4 floats, got {prior_box_var!r}")
        var = to_constant(np.asarray(prior_box_var, dtype=np.float64), prior_box.dtype)
    elif prior_box_var is not None and hasattr(prior_box_var, "shape") and type(prior_box_var).__module__ != "numpy":
        var = prior_box_var
    else:
        raise TypeError(f"{fn}: prior_box_var must be a Tensor or a list of 4 floats, got {type(prior_box_var).__name__}")
    return apply(pd.BoxCoderOp, [prior_box, var, target_box], prefix="box_coder", name=name,
                 code_type=code_type, box_normalized=bool(box_normalized), axis=int(axis))


# --------------------------------------------------------- yolo_box, prior_box


def yolo_box(
    x: Any,
    img_size: Any,
    anchors: Sequence[int],
    class_num: int,
    conf_thresh: float,
    downsample_ratio: int,
    clip_bbox: bool = True,
    name: str | None = None,
    scale_x_y: float = 1.0,
    iou_aware: bool = False,
    iou_aware_factor: float = 0.5,
) -> tuple[Any, Any]:
    """`paddle.vision.ops.yolo_box`: decode a YOLOv3 head `x [N, A*(5+class_num), H,
    W]` (A anchor pairs in `anchors`; with `iou_aware`, A IoU channels first) into
    `(boxes [N, A*H*W, 4], scores [N, A*H*W, class_num])` in the pixels of
    `img_size [N, 2]` (height, width); boxes below `conf_thresh` are zeros.  No
    gradient, as in Paddle."""
    fn = "yolo_box"
    check_float_tensor(fn, "x", x)
    check_tensor(fn, "img_size", img_size)
    if not isinstance(anchors, (list, tuple)) or not anchors or len(anchors) % 2 or not all(
        isinstance(v, int) for v in anchors
    ):
        raise ValueError(f"{fn}: anchors must be a list of (width, height) int pairs, got {anchors!r}")
    if img_size.dtype not in ("int32", "int64"):
        raise TypeError(f"{fn}: img_size must be an int32/int64 tensor, got {img_size.dtype}")
    out = apply(pd.YoloBoxOp, [x, img_size], prefix=fn, name=name, anchors=[int(v) for v in anchors],
                class_num=positive_int(fn, "class_num", class_num), conf_thresh=float(conf_thresh),
                downsample_ratio=positive_int(fn, "downsample_ratio", downsample_ratio),
                clip_bbox=bool(clip_bbox), scale_x_y=float(scale_x_y), iou_aware=bool(iou_aware),
                iou_aware_factor=float(iou_aware_factor))
    return out[0], out[1]


def _floats(fn: str, arg: str, v: Any) -> list[float]:
    """A float or a list of floats as a list (Paddle wraps a single value)."""
    vals = list(v) if isinstance(v, (list, tuple)) else [v]
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in vals):
        raise TypeError(f"{fn}: {arg} must be a float or a list of floats, got {v!r}")
    return [float(x) for x in vals]


def prior_box(
    input: Any,
    image: Any,
    min_sizes: Sequence[float] | float,
    max_sizes: Sequence[float] | float | None = None,
    aspect_ratios: Sequence[float] | float = (1.0,),
    variance: Sequence[float] | float = (0.1, 0.1, 0.2, 0.2),
    flip: bool = False,
    clip: bool = False,
    steps: Sequence[float] | float = (0.0, 0.0),
    offset: float = 0.5,
    min_max_aspect_ratios_order: bool = False,
    name: str | None = None,
) -> tuple[Any, Any]:
    """`paddle.vision.ops.prior_box` (SSD): prior boxes for every position of the
    feature map `input [N, C, H, W]`, normalized by the size of `image [N, C, IH,
    IW]`, and their variances, both `[H, W, num_priors, 4]`.  `steps` is `(step_w,
    step_h)` (0: the image size over the feature size).  No gradient."""
    fn = "prior_box"
    check_float_tensor(fn, "input", input)
    check_tensor(fn, "image", image)
    mins = _floats(fn, "min_sizes", min_sizes)
    maxs = [] if max_sizes is None else _floats(fn, "max_sizes", max_sizes)
    if maxs and maxs[0] <= 0:
        maxs = []  # Paddle ignores max_sizes whose first entry is not positive
    step = _floats(fn, "steps", steps)
    if len(step) != 2:
        raise ValueError(f"{fn}: steps should be (step_w, step_h), got {steps!r}")
    out = apply(pd.PriorBoxOp, [input, image], prefix=fn, name=name, min_sizes=mins, max_sizes=maxs,
                aspect_ratios=_floats(fn, "aspect_ratios", aspect_ratios), variances=_floats(fn, "variance", variance), flip=bool(flip), clip=bool(clip),
                step_w=step[0], step_h=step[1], offset=float(offset),
                min_max_aspect_ratios_order=bool(min_max_aspect_ratios_order))
    return out[0], out[1]


def generate_proposals(
    scores: Any,
    bbox_deltas: Any,
    img_size: Any,
    anchors: Any,
    variances: Any,
    pre_nms_top_n: int = 6000,
    post_nms_top_n: int = 1000,
    nms_thresh: float = 0.5,
    min_size: float = 0.1,
    eta: float = 1.0,
    pixel_offset: bool = False,
    return_rois_num: bool = False,
    name: str | None = None,
) -> Any:
    """`paddle.vision.ops.generate_proposals` (Faster R-CNN's RPN proposals): per
    image, the `pre_nms_top_n` best anchors `[H, W, A, 4]` of `scores [N, A, H, W]`
    decoded by `bbox_deltas [N, 4A, H, W]` and `variances`, clipped to `img_size [N,
    2]` (height, width), without boxes smaller than `min_size`, suppressed at
    `nms_thresh` (adaptive with `eta`) and cut to `post_nms_top_n`.  Returns
    `(rpn_rois [R, 4], rpn_roi_probs [R, 1], rpn_rois_num [N])`; as in Paddle,
    eager mode requires `return_rois_num=True`, and a static program without it
    gets the first two.  No gradient."""
    fn = "generate_proposals"
    for arg, v in (("scores", scores), ("bbox_deltas", bbox_deltas), ("anchors", anchors), ("variances", variances)):
        check_float_tensor(fn, arg, v)
    check_tensor(fn, "img_size", img_size)
    if in_dynamic_mode() and not return_rois_num:
        raise ValueError(f"{fn}: return_rois_num should be True in dygraph mode")
    if img_size.dtype != scores.dtype:
        img_size = cast(img_size, scores.dtype)
    out = apply(pd.GenerateProposalsOp, [scores, bbox_deltas, img_size, anchors, variances], prefix=fn,
                pre_nms_top_n=int(pre_nms_top_n), post_nms_top_n=int(post_nms_top_n),
                nms_thresh=float(nms_thresh), min_size=float(min_size), eta=float(eta),
                pixel_offset=bool(pixel_offset))
    return (out[0], out[1], out[2]) if return_rois_num else (out[0], out[1])


def distribute_fpn_proposals(
    fpn_rois: Any,
    min_level: int,
    max_level: int,
    refer_level: int,
    refer_scale: int,
    pixel_offset: bool = False,
    rois_num: Any = None,
    name: str | None = None,
) -> tuple[list[Any], Any, list[Any] | None]:
    """`paddle.vision.ops.distribute_fpn_proposals`: each roi of `fpn_rois [R, 4]`
    goes to pyramid level `floor(log2(sqrt(area) / refer_scale) + refer_level)`,
    clipped to `[min_level, max_level]`.  Returns `(multi_rois, restore_ind,
    rois_num_per_level)`: the rois of each level, the int32 `[R, 1]` position of
    each roi in their concatenation, and (with `rois_num`, the rois per image) the
    per-image count of each level; as in Paddle, eager mode requires `rois_num`.
    No gradient."""
    fn = "distribute_fpn_proposals"
    _check_boxes(fn, "fpn_rois", fpn_rois)
    if min_level <= 0 or max_level <= 0:
        raise ValueError(f"{fn}: min_level and max_level should be greater than 0, got {min_level}, {max_level}")
    levels = max_level - min_level + 1
    if levels <= 1:
        raise ValueError(f"{fn}: max_level ({max_level}) should be greater than min_level ({min_level})")
    if rois_num is None:
        if in_dynamic_mode():
            raise ValueError(f"{fn}: rois_num should not be None in dygraph mode")
        # one image: every roi (pullback's static programs have no LoD)
        counts = cast(reshape(reduce_sum(slice(full_like(fpn_rois, 1.0), [1], [0], [1])), [1]), "int32")
    else:
        check_tensor(fn, "rois_num", rois_num)
        counts = rois_num
    out = apply(pd.DistributeFpnProposalsOp, [fpn_rois, counts], prefix=fn, name=name, min_level=int(min_level),
                max_level=int(max_level), refer_level=int(refer_level), refer_scale=int(refer_scale),
                pixel_offset=bool(pixel_offset))
    return list(out[:levels]), out[levels], (list(out[levels + 1:]) if rois_num is not None else None)


def matrix_nms(
    bboxes: Any,
    scores: Any,
    score_threshold: float,
    post_threshold: float,
    nms_top_k: int,
    keep_top_k: int,
    use_gaussian: bool = False,
    gaussian_sigma: float = 2.0,
    background_label: int = 0,
    normalized: bool = True,
    return_index: bool = False,
    return_rois_num: bool = True,
    name: str | None = None,
) -> tuple[Any, Any, Any]:
    """`paddle.vision.ops.matrix_nms` (SOLOv2's Matrix NMS) of `bboxes [N, M, 4]`
    with `scores [N, C, M]`: per image and class (but `background_label`), scores
    above `score_threshold` (the best `nms_top_k`) decay by their overlaps with
    higher-scoring boxes (linear, or Gaussian with `gaussian_sigma`), those above
    `post_threshold` are kept, the best `keep_top_k` per image.  Returns `(out
    [R, 6] (label, score, x1, y1, x2, y2), rois_num [N] or None, index [R, 1] or
    None)`, as Paddle.  No gradient."""
    fn = "matrix_nms"
    check_float_tensor(fn, "bboxes", bboxes)
    check_float_tensor(fn, "scores", scores)
    for arg, v in (("nms_top_k", nms_top_k), ("keep_top_k", keep_top_k), ("background_label", background_label)):
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"{fn}: {arg} must be an int, got {v!r}")
    out, index, rois_num = apply(
        pd.MatrixNmsOp, [bboxes, scores], prefix=fn, name=name, score_threshold=float(score_threshold),
        post_threshold=float(post_threshold), nms_top_k=nms_top_k, keep_top_k=keep_top_k,
        use_gaussian=bool(use_gaussian), gaussian_sigma=float(gaussian_sigma), background_label=background_label,
        normalized=bool(normalized))
    return out, (rois_num if return_rois_num else None), (index if return_index else None)


def yolo_loss(
    x: Any,
    gt_box: Any,
    gt_label: Any,
    anchors: Sequence[int],
    anchor_mask: Sequence[int],
    class_num: int,
    ignore_thresh: float,
    downsample_ratio: int,
    gt_score: Any = None,
    use_label_smooth: bool = True,
    name: str | None = None,
    scale_x_y: float = 1.0,
) -> Any:
    """`paddle.vision.ops.yolo_loss` (YOLOv3): the loss `[N]` of the head `x [N,
    len(anchor_mask)*(5+class_num), H, W]` against `gt_box [N, B, 4]` (center x,
    y, width, height relative to the input image; boxes without area are padding),
    `gt_label [N, B]` (int32) and `gt_score [N, B]` (default ones).
    Differentiable w.r.t. x (the ignore mask and the anchor matches are constants,
    as in Paddle)."""
    fn = "yolo_loss"
    check_float_tensor(fn, "x", x)
    check_float_tensor(fn, "gt_box", gt_box)
    check_tensor(fn, "gt_label", gt_label)
    if gt_label.dtype != "int32":
        raise TypeError(f"{fn}: gt_label must be an int32 tensor, got {gt_label.dtype}")
    for arg, v in (("anchors", anchors), ("anchor_mask", anchor_mask)):
        if not isinstance(v, (list, tuple)) or not all(isinstance(a, int) for a in v):
            raise TypeError(f"{fn}: {arg} must be a list of ints, got {v!r}")
    if not isinstance(ignore_thresh, float):
        raise TypeError(f"{fn}: ignore_thresh must be a float, got {ignore_thresh!r}")
    if gt_score is None:
        gt_score = reshape(full_like(slice(gt_box, [2], [0], [1]), 1.0), [0, 0])  # ones [N, B]
    else:
        check_float_tensor(fn, "gt_score", gt_score)
    return apply(pd.YoloLossOp, [x, gt_box, gt_label, gt_score], prefix="yolov3_loss", name=name,
                 anchors=[int(a) for a in anchors], anchor_mask=[int(a) for a in anchor_mask],
                 class_num=positive_int(fn, "class_num", class_num), ignore_thresh=float(ignore_thresh),
                 downsample_ratio=positive_int(fn, "downsample_ratio", downsample_ratio),
                 use_label_smooth=bool(use_label_smooth), scale_x_y=float(scale_x_y))


# -------------------------------------------------------------- RoI pooling


def _roi(op_cls: type[pd.RoiForwardOp], fn: str, x: Any, boxes: Any, boxes_num: Any, output_size: Any,
         spatial_scale: float, name: str | None, **props: Any) -> Any:
    """Check the shared arguments of the region-of-interest ops and add the op."""
    check_float_tensor(fn, "x", x)
    if len(x.shape) != 4:
        raise ValueError(f"{fn}: x must be a 4-D [N, C, H, W] tensor, got shape {list(x.shape)}")
    _check_boxes(fn, "boxes", boxes)
    check_tensor(fn, "boxes_num", boxes_num)
    if boxes_num.dtype not in ("int32", "int64") or len(boxes_num.shape) != 1:
        raise TypeError(f"{fn}: boxes_num must be a 1-D int32/int64 tensor, got {boxes_num.dtype} {list(boxes_num.shape)}")
    ph, pw = int_pair(fn, "output_size", output_size)
    if not isinstance(spatial_scale, (int, float)) or spatial_scale <= 0:
        raise ValueError(f"{fn}: spatial_scale must be a positive float, got {spatial_scale!r}")
    return apply(op_cls, [x, boxes, boxes_num], prefix=fn, name=name, pooled_height=ph, pooled_width=pw,
                 spatial_scale=float(spatial_scale), **props)


def roi_align(
    x: Any,
    boxes: Any,
    boxes_num: Any,
    output_size: int | Sequence[int],
    spatial_scale: float = 1.0,
    sampling_ratio: int = -1,
    aligned: bool = True,
    name: str | None = None,
) -> Any:
    """`paddle.vision.ops.roi_align`: `[num_boxes, C, *output_size]`, each bin the
    mean of bilinear samples of x `[N, C, H, W]` inside the box (boxes `(x1, y1,
    x2, y2)` scaled by `spatial_scale`; `boxes_num[i]` boxes belong to image i).
    `sampling_ratio` samples per bin side (-1: adaptive); `aligned` shifts by half
    a pixel.  Differentiable w.r.t. x.

    With `aligned=True`, Paddle 3.3.1's CPU gradient can disagree with its own
    forward (by up to 1.9 on the test fixture); pullback's is the exact adjoint of
    the forward, checked against central differences of Paddle's forward."""
    if not isinstance(sampling_ratio, int) or isinstance(sampling_ratio, bool):
        raise TypeError(f"roi_align: sampling_ratio must be an int, got {sampling_ratio!r}")
    return _roi(pd.RoiAlignOp, "roi_align", x, boxes, boxes_num, output_size, spatial_scale, name,
                sampling_ratio=sampling_ratio, aligned=bool(aligned))


def roi_pool(
    x: Any,
    boxes: Any,
    boxes_num: Any,
    output_size: int | Sequence[int],
    spatial_scale: float = 1.0,
    name: str | None = None,
) -> Any:
    """`paddle.vision.ops.roi_pool`: `[num_boxes, C, *output_size]`, each bin the
    maximum of x over the box's bin (the box rounded to pixels after scaling; 0
    for an empty bin).  Differentiable w.r.t. x (to each bin's maximum)."""
    return _roi(pd.RoiPoolOp, "roi_pool", x, boxes, boxes_num, output_size, spatial_scale, name)


def psroi_pool(
    x: Any,
    boxes: Any,
    boxes_num: Any,
    output_size: int | Sequence[int],
    spatial_scale: float = 1.0,
    name: str | None = None,
) -> Any:
    """`paddle.vision.ops.psroi_pool`: position-sensitive RoI average pooling,
    `[num_boxes, C / (ph * pw), ph, pw]`; bin `(i, j)` of output channel c averages
    input channel `(c * ph + i) * pw + j`.  Differentiable w.r.t. x."""
    if len(getattr(x, "shape", ())) == 4:
        ph, pw = int_pair("psroi_pool", "output_size", output_size)
        if x.shape[1] != -1 and x.shape[1] % (ph * pw):
            raise ValueError(
                f"psroi_pool: x's {x.shape[1]} channels must be divisible by output_size's {ph} x {pw} bins"
            )
    return _roi(pd.PsroiPoolOp, "psroi_pool", x, boxes, boxes_num, output_size, spatial_scale, name)


class _RoiLayer(Layer):
    """A layer holding a region-of-interest op's output size and scale."""

    _fn: Any = None

    def __init__(self, output_size: int | Sequence[int], spatial_scale: float = 1.0) -> None:
        super().__init__()
        self._output_size = output_size
        self._spatial_scale = spatial_scale

    def forward(self, x: Any, boxes: Any, boxes_num: Any) -> Any:
        """The functional op with the layer's settings."""
        return type(self)._fn(x, boxes, boxes_num, self._output_size, self._spatial_scale)

    def extra_repr(self) -> str:
        return f"output_size={self._output_size}, spatial_scale={self._spatial_scale}"


class RoIAlign(_RoiLayer):
    """`paddle.vision.ops.RoIAlign`: `roi_align` with default `sampling_ratio` and
    `aligned`."""

    _fn = staticmethod(roi_align)


class RoIPool(_RoiLayer):
    """`paddle.vision.ops.RoIPool`: `roi_pool`."""

    _fn = staticmethod(roi_pool)


class PSRoIPool(_RoiLayer):
    """`paddle.vision.ops.PSRoIPool`: `psroi_pool`."""

    _fn = staticmethod(psroi_pool)


# ------------------------------------------------------- deformable convolution


def deform_conv2d(
    x: Any,
    offset: Any,
    weight: Any,
    bias: Any = None,
    stride: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1,
    deformable_groups: int = 1,
    groups: int = 1,
    mask: Any = None,
    name: str | None = None,
) -> Any:
    """`paddle.vision.ops.deform_conv2d`: deformable convolution of x `[N, C, H, W]`
    with weight `[O, C/groups, kh, kw]`: each tap reads x bilinearly at its grid
    position shifted by `offset [N, 2*dg*kh*kw, Ho, Wo]` (zero outside x), scaled
    by `mask [N, dg*kh*kw, Ho, Wo]` when given (v2; v1 without), plus bias `[O]`.
    Differentiable w.r.t. x, offset, mask, weight and bias."""
    fn = "deform_conv2d"
    for arg, t in (("x", x), ("offset", offset), ("weight", weight)):
        check_float_tensor(fn, arg, t)
        if len(t.shape) != 4:
            raise ValueError(f"{fn}: {arg} must be a 4-D tensor, got shape {list(t.shape)}")
    strides = int_pair(fn, "stride", stride)
    paddings = int_pair(fn, "padding", padding, minimum=0)
    dilations = int_pair(fn, "dilation", dilation)
    dg = positive_int(fn, "deformable_groups", deformable_groups)
    g = positive_int(fn, "groups", groups)
    if mask is None:
        # v1: unit modulation (no gradient flows to a constant)
        taps = offset.shape[1] // 2 if offset.shape[1] != -1 else -1
        if taps == -1:
            taps = dg * weight.shape[2] * weight.shape[3]
        mask = full_like(slice(offset, [1], [0], [taps]), 1.0)
    else:
        check_float_tensor(fn, "mask", mask)
    out = apply(pd.DeformConvOp, [x, offset, mask, weight], prefix="deformable_conv",
                name=None if bias is not None else name, strides=strides, paddings=paddings,
                dilations=dilations, groups=g, deformable_groups=dg)
    if bias is None:
        return out
    check_float_tensor(fn, "bias", bias)
    if len(bias.shape) != 1:
        raise ValueError(f"{fn}: bias must be a 1-D [out_channels] tensor, got shape {list(bias.shape)}")
    return out + reshape(bias, [1, -1, 1, 1])


class DeformConv2D(Layer):
    """`paddle.vision.ops.DeformConv2D`: a deformable convolution layer; weight
    `[out, in/groups, kh, kw]` (normal, std `sqrt(2 / (kh * kw * in_channels))`, as
    Paddle), bias `[out]` (zeros; none with `bias_attr=False`).  `forward(x,
    offset, mask=None)`."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] = 1,
        padding: int | Sequence[int] = 0,
        dilation: int | Sequence[int] = 1,
        deformable_groups: int = 1,
        groups: int = 1,
        weight_attr: Any = None,
        bias_attr: Any = None,
    ) -> None:
        super().__init__()
        fn = "DeformConv2D"
        self._in = positive_int(fn, "in_channels", in_channels)
        self._out = positive_int(fn, "out_channels", out_channels)
        self._groups = positive_int(fn, "groups", groups)
        self._deformable_groups = positive_int(fn, "deformable_groups", deformable_groups)
        if self._in % self._groups or self._out % self._groups:
            raise ValueError(
                f"{fn}: in_channels ({self._in}) and out_channels ({self._out}) must be divisible by groups ({self._groups})"
            )
        kh, kw = int_pair(fn, "kernel_size", kernel_size)
        self._stride, self._padding, self._dilation = stride, padding, dilation
        std = (2.0 / (kh * kw * self._in)) ** 0.5
        self.weight = self.create_parameter(
            [self._out, self._in // self._groups, kh, kw], weight_attr, default_initializer=Normal(0.0, std)
        )
        self.bias = self.create_parameter([self._out], bias_attr, is_bias=True)

    def forward(self, x: Any, offset: Any, mask: Any = None) -> Any:
        """`deform_conv2d` with the layer's weight, bias and settings."""
        return deform_conv2d(x, offset, self.weight, self.bias, self._stride, self._padding, self._dilation,
                             self._deformable_groups, self._groups, mask)

    def extra_repr(self) -> str:
        return f"{self._in}, {self._out}, kernel_size={list(self.weight.shape[2:])}"
