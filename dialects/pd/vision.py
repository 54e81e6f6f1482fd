"""Detection and vision ops (`paddle.vision.ops`): non-maximum suppression, box
coding, region-of-interest pooling (`roi_align`, `roi_pool`, `psroi_pool`) and
deformable convolution, each with Paddle's operator semantics.

They are gathers and scatters at positions computed from box coordinates and
offsets, or inherently sequential (`nms` decides box by box), so their kernels are
numpy on the host interpreter (`HOST_ONLY`), the same on every backend.  The pooling
and convolution ops have gradient ops of their own (Paddle's `*_grad` operators:
scatters of the output gradient back through the same sampling positions); each
gradient op is linear in the output gradient it reads.

Region-of-interest ops read boxes `[R, 4]` as `(x1, y1, x2, y2)` in input
coordinates and `boxes_num [B]` (int32/int64), the number of boxes of each image:
box `r` belongs to the image whose running count first exceeds `r`.

```mlir
%keep = pd.nms %boxes {iou_threshold = 0.5 : f64} : (tensor<6x4xf32>) -> tensor<?xi64>
%y = pd.roi_align %x, %boxes, %num {pooled_height = 2 : i64, pooled_width = 2 : i64} : (tensor<2x3x8x8xf32>, tensor<4x4xf32>, tensor<2xi32>) -> tensor<4x3x2x2xf32>
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import ArrayAttr, BoolAttr, DenseArrayBase, FloatAttr, IntegerAttr, StringAttr, TensorType
from xdsl.ir import Attribute
from xdsl.irdl import (
    ParsePropInAttrDict,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_result_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from .base import (
    DYN,
    INT_TYPES,
    MultiResultNames,
    PdOp,
    PureOp,
    bool_attr,
    dims_compatible,
    elem_of,
    expect_float,
    expect_rank,
    expect_same_elem,
    f64,
    f64_attr,
    fmt_shape,
    i32,
    i64,
    i64_attr,
    ints_attr,
    shape_of,
    tensor_type,
)

_HOST = (
    "it reads and writes at positions computed from box coordinates (or decides box by "
    "box); a program using it runs on the host interpreter"
)


def expect_boxes(op: str, what: str, t: Attribute) -> int:
    """A float `[R, 4]` box tensor; returns R (raises naming the op otherwise)."""
    expect_float(op, what, t)
    s = shape_of(t)
    if len(s) != 2 or s[1] not in (4, DYN):
        raise VerifyException(f"'{op}': {what} must be [num_boxes, 4], got {fmt_shape(s)}")
    return s[0]


def expect_boxes_num(op: str, t: Attribute) -> None:
    """`boxes_num`: a 1-D int32/int64 tensor (one count per image)."""
    if elem_of(t) not in INT_TYPES or len(shape_of(t)) != 1:
        raise VerifyException(f"'{op}': boxes_num must be a 1-D int32/int64 tensor, got {t}")


# ------------------------------------------------------------------------ nms


@irdl_op_definition
class NmsOp(PureOp):
    """Paddle's `nms` operator: the int64 indices of the boxes `[N, 4]` kept by greedy
    non-maximum suppression in the given order (box i is dropped when its IoU with
    an earlier kept box exceeds `iou_threshold`).  The count is known at run time
    only.  Sorting by score and per-category suppression are the frontend's
    (`paddle.vision.ops.nms`), as in Paddle.

    ```mlir
    %keep = pd.nms %boxes {iou_threshold = 0.5 : f64} : (tensor<6x4xf32>) -> tensor<?xi64>
    ```
    """

    HOST_ONLY: ClassVar[str | None] = _HOST
    name = "pd.nms"
    boxes = operand_def(TensorType)
    iou_threshold = prop_def(FloatAttr, default_value=f64_attr(0.3))
    assembly_format = "$boxes attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tb,) = operand_types
        expect_boxes(cls.name, "boxes", tb)
        return [tensor_type(i64, (DYN,))]


@irdl_op_definition
class ScoredNmsOp(PureOp):
    """`paddle.vision.ops.nms` with scores: within each of `categories` (the boxes
    whose `category_idxs` equal it; other boxes are dropped), greedy suppression in
    descending score order; the kept indices sorted by descending score, the first
    `top_k` of them (`-1`: all).  Paddle composes this in Python around its `nms`
    operator with sorts of run-time-sized tensors; one op keeps it a single host
    step in static programs whose box count is dynamic.  Without categories the
    frontend passes one category for every box.

    ```mlir
    %keep = pd.scored_nms %boxes, %scores, %cats {iou_threshold = 0.5 : f64, categories = array<i64: 0, 1>} : (tensor<6x4xf32>, tensor<6xf32>, tensor<6xi64>) -> tensor<?xi64>
    ```
    """

    HOST_ONLY: ClassVar[str | None] = _HOST
    name = "pd.scored_nms"
    boxes = operand_def(TensorType)
    scores = operand_def(TensorType)
    category_idxs = operand_def(TensorType)
    iou_threshold = prop_def(FloatAttr, default_value=f64_attr(0.3))
    categories = prop_def(DenseArrayBase, default_value=ints_attr([0]))
    top_k = prop_def(IntegerAttr, default_value=i64_attr(-1))
    assembly_format = "$boxes `,` $scores `,` $category_idxs attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tb, ts, tc = operand_types
        n = expect_boxes(cls.name, "boxes", tb)
        expect_float(cls.name, "scores", ts)
        for what, t in (("scores", ts), ("category_idxs", tc)):
            s = shape_of(t)
            if len(s) != 1 or not dims_compatible(s[0], n):
                raise VerifyException(f"'{cls.name}': {what} must be [{n}] (one per box), got {fmt_shape(s)}")
        if elem_of(tc) not in INT_TYPES:
            raise VerifyException(f"'{cls.name}': category_idxs must be integers, got {tc}")
        if props["top_k"] < -1 or props["top_k"] == 0:
            raise VerifyException(f"'{cls.name}': top_k must be positive (or -1: all), got {props['top_k']}")
        return [tensor_type(i64, (DYN,))]


# ------------------------------------------------------------------ box_coder

BOX_CODE_TYPES = ("encode_center_size", "decode_center_size")


@irdl_op_definition
class BoxCoderOp(PureOp):
    """Paddle's `box_coder`: encodes target boxes `[N, 4]` against prior boxes
    `[M, 4]` as center/size offsets `[N, M, 4]`, or decodes offsets `[N, M, 4]`
    back to boxes.  `prior_box_var` is `[M, 4]` or `[4]` (the frontend passes ones
    when Paddle's argument is None); in decoding, `axis` 0 pairs prior `j` with
    column `j`, axis 1 pairs prior `i` with row `i`.  Without `box_normalized`,
    widths and heights count pixels (`x2 - x1 + 1`).  No gradient (Paddle's has none).

    ```mlir
    %o = pd.box_coder %p, %v, %t : (tensor<3x4xf32>, tensor<3x4xf32>, tensor<2x4xf32>) -> tensor<2x3x4xf32>
    ```
    """

    HOST_ONLY: ClassVar[str | None] = _HOST
    name = "pd.box_coder"
    prior_box = operand_def(TensorType)
    prior_box_var = operand_def(TensorType)
    target_box = operand_def(TensorType)
    code_type = prop_def(StringAttr, default_value=StringAttr("encode_center_size"))
    box_normalized = prop_def(BoolAttr, default_value=bool_attr(True))
    axis = prop_def(IntegerAttr, default_value=i64_attr(0))
    assembly_format = "$prior_box `,` $prior_box_var `,` $target_box attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tp, tv, tt = operand_types
        elem = expect_same_elem(cls.name, [tp, tv, tt])
        m = expect_boxes(cls.name, "prior_box", tp)
        vs = shape_of(tv)
        if not (vs in ((4,), (DYN,)) or (len(vs) == 2 and dims_compatible(vs[0], m) and vs[1] in (4, DYN))):
            raise VerifyException(
                f"'{cls.name}': prior_box_var must be [4] or [M, 4] with M = {m} priors, got {fmt_shape(vs)}"
            )
        code, axis = props["code_type"], props["axis"]
        if code not in BOX_CODE_TYPES:
            raise VerifyException(f"'{cls.name}': code_type must be one of {list(BOX_CODE_TYPES)}, got {code!r}")
        if axis not in (0, 1):
            raise VerifyException(f"'{cls.name}': axis must be 0 or 1, got {axis}")
        ts = shape_of(tt)
        if code == "encode_center_size":
            n = expect_boxes(cls.name, "target_box", tt)
            return [tensor_type(elem, (n, m, 4))]
        if len(ts) != 3 or ts[2] not in (4, DYN) or not dims_compatible(ts[1 - axis], m):
            raise VerifyException(
                f"'{cls.name}': to decode, target_box must be [N, M, 4] with M = {m} priors on "
                f"axis {1 - axis} (axis = {axis}), got {fmt_shape(ts)}"
            )
        return [tensor_type(elem, ts)]


# --------------------------------------------------------- yolo_box, prior_box


def floats_attr(vs: Sequence[float]) -> DenseArrayBase[Any]:
    """An array of floats, printed as `array<f64: 1.0, 2.0>`."""
    return DenseArrayBase.from_list(f64, [float(v) for v in vs])


@irdl_op_definition
class YoloBoxOp(PdOp, MultiResultNames):
    """Paddle's `yolo_box`: decodes a YOLOv3 head `x [N, A*(5+classes), H, W]`
    (`A = len(anchors) / 2`; with `iou_aware`, A IoU channels first) into boxes
    `[N, A*H*W, 4]` in the pixels of `img_size [N, 2]` (height, width) and scores
    `[N, A*H*W, classes]`; boxes whose confidence is below `conf_thresh` are zeros.
    No gradient (Paddle's has none).

    ```mlir
    %b, %s = pd.yolo_box %x, %im {anchors = array<i64: 10, 13, 16, 30>, class_num = 2 : i64, downsample_ratio = 8 : i64} : (tensor<1x14x4x4xf32>, tensor<1x2xi32>) -> (tensor<1x32x4xf32>, tensor<1x32x2xf32>)
    ```
    """

    HOST_ONLY: ClassVar[str | None] = _HOST
    name = "pd.yolo_box"
    x = operand_def(TensorType)
    img_size = operand_def(TensorType)
    anchors = prop_def(DenseArrayBase, default_value=ints_attr([]))
    class_num = prop_def(IntegerAttr, default_value=i64_attr(1))
    conf_thresh = prop_def(FloatAttr, default_value=f64_attr(0.01))
    downsample_ratio = prop_def(IntegerAttr, default_value=i64_attr(32))
    clip_bbox = prop_def(BoolAttr, default_value=bool_attr(True))
    scale_x_y = prop_def(FloatAttr, default_value=f64_attr(1.0))
    iou_aware = prop_def(BoolAttr, default_value=bool_attr(False))
    iou_aware_factor = prop_def(FloatAttr, default_value=f64_attr(0.5))
    names = opt_prop_def(ArrayAttr)
    traits = traits_def(Pure())
    boxes_out = result_def(TensorType)
    scores_out = result_def(TensorType)
    assembly_format = "$x `,` $img_size attr-dict `:` functional-type(operands, results)"
    irdl_options = (ParsePropInAttrDict(),)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, ti = operand_types
        expect_float(cls.name, "x", tx)
        n, c, h, w = expect_rank(cls.name, "x", tx, 4)
        anchors, classes = props["anchors"], props["class_num"]
        if not anchors or len(anchors) % 2:
            raise VerifyException(f"'{cls.name}': anchors must be (width, height) pairs, got {list(anchors)}")
        if classes < 1 or props["downsample_ratio"] < 1:
            raise VerifyException(
                f"'{cls.name}': class_num and downsample_ratio must be positive, got {classes}, {props['downsample_ratio']}"
            )
        a = len(anchors) // 2
        want = a * (5 + classes) + (a if props["iou_aware"] else 0)
        if c != DYN and c != want:
            raise VerifyException(
                f"'{cls.name}': x must have {want} channels ({a} anchors x (5 + {classes} classes)"
                f"{' + ' + str(a) + ' IoU channels' if props['iou_aware'] else ''}), got {c}"
            )
        si = shape_of(ti)
        if elem_of(ti) not in INT_TYPES or len(si) != 2 or si[1] not in (2, DYN) or not dims_compatible(si[0], n):
            raise VerifyException(f"'{cls.name}': img_size must be an int32/int64 [N, 2] tensor (N = {n}), got {ti}")
        boxes = DYN if DYN in (h, w) else a * h * w
        elem = elem_of(tx)
        return [tensor_type(elem, (n, boxes, 4)), tensor_type(elem, (n, boxes, classes))]


def expand_aspect_ratios(ratios: Sequence[float], flip: bool) -> list[float]:
    """Paddle's prior_box aspect ratios: 1 first, each new ratio (and its inverse
    when flipped) once."""
    out = [1.0]
    for r in ratios:
        if any(abs(r - o) < 1e-6 for o in out):
            continue
        out.append(r)
        if flip:
            out.append(1.0 / r)
    return out


@irdl_op_definition
class PriorBoxOp(PdOp, MultiResultNames):
    """Paddle's `prior_box` (SSD): for every position of the feature map `input [N,
    C, H, W]`, prior boxes normalized by the size of `image [N, C, IH, IW]`, and
    their variances; both `[H, W, num_priors, 4]`.  No gradient.

    ```mlir
    %b, %v = pd.prior_box %f, %im {min_sizes = array<f64: 2.0>} : (tensor<1x3x2x2xf32>, tensor<1x3x8x8xf32>) -> (tensor<2x2x1x4xf32>, tensor<2x2x1x4xf32>)
    ```
    """

    HOST_ONLY: ClassVar[str | None] = _HOST
    name = "pd.prior_box"
    input = operand_def(TensorType)
    image = operand_def(TensorType)
    min_sizes = prop_def(DenseArrayBase, default_value=floats_attr([]))
    max_sizes = prop_def(DenseArrayBase, default_value=floats_attr([]))
    aspect_ratios = prop_def(DenseArrayBase, default_value=floats_attr([1.0]))
    variances = prop_def(DenseArrayBase, default_value=floats_attr([0.1, 0.1, 0.2, 0.2]))
    flip = prop_def(BoolAttr, default_value=bool_attr(False))
    clip = prop_def(BoolAttr, default_value=bool_attr(False))
    step_w = prop_def(FloatAttr, default_value=f64_attr(0.0))
    step_h = prop_def(FloatAttr, default_value=f64_attr(0.0))
    offset = prop_def(FloatAttr, default_value=f64_attr(0.5))
    min_max_aspect_ratios_order = prop_def(BoolAttr, default_value=bool_attr(False))
    names = opt_prop_def(ArrayAttr)
    traits = traits_def(Pure())
    boxes_out = result_def(TensorType)
    variances_out = result_def(TensorType)
    assembly_format = "$input `,` $image attr-dict `:` functional-type(operands, results)"
    irdl_options = (ParsePropInAttrDict(),)

    @classmethod
    def num_priors(cls, props: Mapping[str, Any]) -> int:
        """Priors per feature-map position."""
        ratios = expand_aspect_ratios(props["aspect_ratios"], props["flip"])
        return len(ratios) * len(props["min_sizes"]) + len(props["max_sizes"])

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        ti, tm = operand_types
        _, _, h, w = expect_rank(cls.name, "input", ti, 4)
        expect_rank(cls.name, "image", tm, 4)
        expect_float(cls.name, "input", ti)
        mins, maxs = props["min_sizes"], props["max_sizes"]
        if not mins or min(mins) <= 0:
            raise VerifyException(f"'{cls.name}': min_sizes must be positive, got {list(mins)}")
        if maxs and (len(maxs) != len(mins) or any(b <= a for a, b in zip(mins, maxs))):
            raise VerifyException(
                f"'{cls.name}': max_sizes must pair each min size with a larger one, got {list(maxs)} for {list(mins)}"
            )
        if len(props["variances"]) != 4:
            raise VerifyException(f"'{cls.name}': variance must hold 4 floats, got {list(props['variances'])}")
        if any(r <= 0 for r in props["aspect_ratios"]):
            raise VerifyException(f"'{cls.name}': aspect_ratios must be positive, got {list(props['aspect_ratios'])}")
        t = tensor_type(elem_of(ti), (h, w, cls.num_priors(props), 4))
        return [t, t]


@irdl_op_definition
class GenerateProposalsOp(PdOp, MultiResultNames):
    """Paddle's `generate_proposals` (v2, Faster R-CNN's RPN): per image, the
    `pre_nms_top_n` best-scoring anchors `[H, W, A, 4]` decoded by `bbox_deltas [N,
    4A, H, W]` (with `variances`), clipped to `img_size [N, 2]` (height, width),
    filtered by `min_size`, suppressed (`nms_thresh`, adaptive with `eta < 1`) and
    cut to `post_nms_top_n`.  Results: rois `[R, 4]`, their scores `[R, 1]` and the
    int32 count per image `[N]` (R is known at run time only).  No gradient.

    ```mlir
    %r, %p, %n = pd.generate_proposals %s, %d, %im, %a, %v : (tensor<1x2x3x3xf32>, tensor<1x8x3x3xf32>, tensor<1x2xf32>, tensor<3x3x2x4xf32>, tensor<3x3x2x4xf32>) -> (tensor<?x4xf32>, tensor<?x1xf32>, tensor<1xi32>)
    ```
    """

    HOST_ONLY: ClassVar[str | None] = _HOST
    name = "pd.generate_proposals"
    scores = operand_def(TensorType)
    bbox_deltas = operand_def(TensorType)
    img_size = operand_def(TensorType)
    anchors = operand_def(TensorType)
    variances = operand_def(TensorType)
    pre_nms_top_n = prop_def(IntegerAttr, default_value=i64_attr(6000))
    post_nms_top_n = prop_def(IntegerAttr, default_value=i64_attr(1000))
    nms_thresh = prop_def(FloatAttr, default_value=f64_attr(0.5))
    min_size = prop_def(FloatAttr, default_value=f64_attr(0.1))
    eta = prop_def(FloatAttr, default_value=f64_attr(1.0))
    pixel_offset = prop_def(BoolAttr, default_value=bool_attr(False))
    names = opt_prop_def(ArrayAttr)
    traits = traits_def(Pure())
    rpn_rois = result_def(TensorType)
    rpn_roi_probs = result_def(TensorType)
    rpn_rois_num = result_def(TensorType)
    assembly_format = (
        "$scores `,` $bbox_deltas `,` $img_size `,` $anchors `,` $variances attr-dict `:` "
        "functional-type(operands, results)"
    )
    irdl_options = (ParsePropInAttrDict(),)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        ts, td, ti, ta, tv = operand_types
        elem = expect_same_elem(cls.name, [ts, td, ta, tv])
        expect_float(cls.name, "scores", ts)
        n, a, h, w = expect_rank(cls.name, "scores", ts, 4)
        want = [n, DYN if a == DYN else 4 * a, h, w]
        sd = expect_rank(cls.name, "bbox_deltas", td, 4)
        if not all(dims_compatible(x, y) for x, y in zip(sd, want)):
            raise VerifyException(f"'{cls.name}': bbox_deltas must be {fmt_shape(want)} (4 per anchor), got {fmt_shape(sd)}")
        si = shape_of(ti)
        if len(si) != 2 or not dims_compatible(si[0], n) or si[1] not in (2, 3, DYN):
            raise VerifyException(f"'{cls.name}': img_size must be [N, 2] (height, width), got {fmt_shape(si)}")
        for what, t in (("anchors", ta), ("variances", tv)):
            sa = shape_of(t)
            wa = [h, w, a, 4]
            if len(sa) != 4 or not all(dims_compatible(x, y) for x, y in zip(sa, wa)):
                raise VerifyException(f"'{cls.name}': {what} must be {fmt_shape(wa)}, got {fmt_shape(sa)}")
        if props["nms_thresh"] > 1:
            raise VerifyException(f"'{cls.name}': nms_thresh must be at most 1, got {props['nms_thresh']}")
        return [tensor_type(elem, (DYN, 4)), tensor_type(elem, (DYN, 1)), tensor_type(i32, (n,))]


@irdl_op_definition
class DistributeFpnProposalsOp(PdOp, MultiResultNames):
    """Paddle's `distribute_fpn_proposals`: assigns each roi `[R, 4]` to the
    feature-pyramid level `floor(log2(sqrt(area) / refer_scale) + refer_level)`
    clipped to `[min_level, max_level]`.  Results: one `[R_l, 4]` tensor per level
    (image by image, in input order), the int32 `restore_ind [R, 1]` (the position
    of each roi in the levels' concatenation) and one int32 count per image `[N]`
    per level (`rois_num [N]`: the rois of each image).  No gradient.

    ```mlir
    %l2, %l3, %ri, %n2, %n3 = pd.distribute_fpn_proposals %r, %n {min_level = 2 : i64, max_level = 3 : i64, refer_level = 2 : i64, refer_scale = 32 : i64} : (tensor<5x4xf32>, tensor<1xi32>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<5x1xi32>, tensor<1xi32>, tensor<1xi32>)
    ```
    """

    HOST_ONLY: ClassVar[str | None] = _HOST
    name = "pd.distribute_fpn_proposals"
    fpn_rois = operand_def(TensorType)
    rois_num = operand_def(TensorType)
    min_level = prop_def(IntegerAttr, default_value=i64_attr(2))
    max_level = prop_def(IntegerAttr, default_value=i64_attr(5))
    refer_level = prop_def(IntegerAttr, default_value=i64_attr(4))
    refer_scale = prop_def(IntegerAttr, default_value=i64_attr(224))
    pixel_offset = prop_def(BoolAttr, default_value=bool_attr(False))
    names = opt_prop_def(ArrayAttr)
    traits = traits_def(Pure())
    outs = var_result_def(TensorType)
    assembly_format = "$fpn_rois `,` $rois_num attr-dict `:` functional-type(operands, results)"
    irdl_options = (ParsePropInAttrDict(),)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tr, tn = operand_types
        r = expect_boxes(cls.name, "fpn_rois", tr)
        expect_boxes_num(cls.name, tn)
        lo, hi = props["min_level"], props["max_level"]
        if lo < 1 or hi <= lo or hi - lo + 1 >= 100:
            raise VerifyException(
                f"'{cls.name}': levels must satisfy 0 < min_level < max_level < min_level + 99, got {lo}, {hi}"
            )
        if props["refer_scale"] <= 0:
            raise VerifyException(f"'{cls.name}': refer_scale must be positive, got {props['refer_scale']}")
        levels = hi - lo + 1
        counts = tensor_type(i32, shape_of(tn))
        return [*[tensor_type(elem_of(tr), (DYN, 4))] * levels, tensor_type(i32, (r, 1)), *[counts] * levels]


@irdl_op_definition
class MatrixNmsOp(PdOp, MultiResultNames):
    """Paddle's `matrix_nms` (SOLOv2's Matrix NMS): per image and class (but
    `background_label`), the `nms_top_k` boxes scoring above `score_threshold`
    have their scores decayed by their overlaps with higher-scoring boxes (linear,
    or Gaussian with `gaussian_sigma`); those above `post_threshold` are kept, the
    best `keep_top_k` per image.  Results: detections `[R, 6]` (label, score, x1,
    y1, x2, y2), their int32 box indices `[R, 1]` into the flattened `[N*M]` boxes
    and the int32 count per image `[N]`.  No gradient.

    ```mlir
    %o, %i, %n = pd.matrix_nms %b, %s {score_threshold = 0.1 : f64, post_threshold = 0.2 : f64} : (tensor<1x5x4xf32>, tensor<1x3x5xf32>) -> (tensor<?x6xf32>, tensor<?x1xi32>, tensor<1xi32>)
    ```
    """

    HOST_ONLY: ClassVar[str | None] = _HOST
    name = "pd.matrix_nms"
    bboxes = operand_def(TensorType)
    scores = operand_def(TensorType)
    score_threshold = prop_def(FloatAttr, default_value=f64_attr(0.0))
    post_threshold = prop_def(FloatAttr, default_value=f64_attr(0.0))
    nms_top_k = prop_def(IntegerAttr, default_value=i64_attr(-1))
    keep_top_k = prop_def(IntegerAttr, default_value=i64_attr(-1))
    use_gaussian = prop_def(BoolAttr, default_value=bool_attr(False))
    gaussian_sigma = prop_def(FloatAttr, default_value=f64_attr(2.0))
    background_label = prop_def(IntegerAttr, default_value=i64_attr(0))
    normalized = prop_def(BoolAttr, default_value=bool_attr(True))
    names = opt_prop_def(ArrayAttr)
    traits = traits_def(Pure())
    out = result_def(TensorType)
    index = result_def(TensorType)
    rois_num = result_def(TensorType)
    assembly_format = "$bboxes `,` $scores attr-dict `:` functional-type(operands, results)"
    irdl_options = (ParsePropInAttrDict(),)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tb, ts = operand_types
        elem = expect_same_elem(cls.name, [tb, ts])
        expect_float(cls.name, "bboxes", tb)
        n, m, four = expect_rank(cls.name, "bboxes", tb, 3)
        if four not in (4, DYN):
            raise VerifyException(f"'{cls.name}': bboxes must be [N, M, 4], got {fmt_shape(shape_of(tb))}")
        sn, _, sm = expect_rank(cls.name, "scores", ts, 3)
        if not dims_compatible(sn, n) or not dims_compatible(sm, m):
            raise VerifyException(
                f"'{cls.name}': scores must be [N, C, M] = [{n}, C, {m}] for bboxes "
                f"{fmt_shape(shape_of(tb))}, got {fmt_shape(shape_of(ts))}"
            )
        return [tensor_type(elem, (DYN, 6)), tensor_type(i32, (DYN, 1)), tensor_type(i32, (n,))]


class YoloLossBase(PureOp):
    """Shared operands, properties and typing of `yolov3_loss` and its gradient:
    the head `x [N, M*(5+class_num), H, W]` (M = `len(anchor_mask)`), ground-truth
    boxes `gt_box [N, B, 4]` (center x, y, width, height, relative to the input
    image; a box without area is padding), `gt_label [N, B]` (int32) and
    `gt_score [N, B]` (the frontend passes ones when Paddle's is None)."""

    HOST_ONLY: ClassVar[str | None] = _HOST
    EXPENSIVE: ClassVar[bool] = True
    anchors = prop_def(DenseArrayBase, default_value=ints_attr([]))
    anchor_mask = prop_def(DenseArrayBase, default_value=ints_attr([]))
    class_num = prop_def(IntegerAttr, default_value=i64_attr(1))
    ignore_thresh = prop_def(FloatAttr, default_value=f64_attr(0.7))
    downsample_ratio = prop_def(IntegerAttr, default_value=i64_attr(32))
    use_label_smooth = prop_def(BoolAttr, default_value=bool_attr(True))
    scale_x_y = prop_def(FloatAttr, default_value=f64_attr(1.0))

    @classmethod
    def check_loss(cls, types: Sequence[Attribute], props: Mapping[str, Any]) -> tuple[Attribute, int]:
        """Validate the four forward operands; returns the element type and N."""
        tx, tb, tl, ts = types
        elem = expect_same_elem(cls.name, [tx, tb, ts])
        expect_float(cls.name, "x", tx)
        n, c, _, _ = expect_rank(cls.name, "x", tx, 4)
        anchors, mask, classes = props["anchors"], props["anchor_mask"], props["class_num"]
        if not anchors or len(anchors) % 2:
            raise VerifyException(f"'{cls.name}': anchors must be (width, height) pairs, got {list(anchors)}")
        if not mask or any(not 0 <= a < len(anchors) // 2 for a in mask):
            raise VerifyException(
                f"'{cls.name}': anchor_mask must index the {len(anchors) // 2} anchors, got {list(mask)}"
            )
        if classes < 1 or props["downsample_ratio"] < 1:
            raise VerifyException(f"'{cls.name}': class_num and downsample_ratio must be positive")
        want = len(mask) * (5 + classes)
        if c != DYN and c != want:
            raise VerifyException(
                f"'{cls.name}': x must have {want} channels ({len(mask)} masked anchors x (5 + {classes} classes)), got {c}"
            )
        sb = shape_of(tb)
        if len(sb) != 3 or sb[2] not in (4, DYN) or not dims_compatible(sb[0], n):
            raise VerifyException(f"'{cls.name}': gt_box must be [N, B, 4], got {fmt_shape(sb)}")
        for what, t in (("gt_label", tl), ("gt_score", ts)):
            st = shape_of(t)
            if len(st) != 2 or not all(dims_compatible(a, b) for a, b in zip(st, sb[:2])):
                raise VerifyException(f"'{cls.name}': {what} must be {fmt_shape(sb[:2])}, got {fmt_shape(st)}")
        if elem_of(tl) not in INT_TYPES:
            raise VerifyException(f"'{cls.name}': gt_label must be integers, got {tl}")
        return elem, n


@irdl_op_definition
class YoloLossOp(YoloLossBase):
    """Paddle's `yolov3_loss`: per image, sigmoid cross entropy of the box centers,
    L1 of the log sizes (weighted by `2 - w*h`), class and objectness losses at the
    cell and best anchor of each ground-truth box; predictions overlapping a
    ground truth by more than `ignore_thresh` add no objectness loss.  `[N]`.

    ```mlir
    %l = pd.yolov3_loss %x, %b, %c, %s {anchors = array<i64: 10, 13, 16, 30>, anchor_mask = array<i64: 0, 1>, class_num = 2 : i64, downsample_ratio = 8 : i64} : (tensor<1x14x4x4xf32>, tensor<1x3x4xf32>, tensor<1x3xi32>, tensor<1x3xf32>) -> tensor<1xf32>
    ```
    """

    name = "pd.yolov3_loss"
    x = operand_def(TensorType)
    gt_box = operand_def(TensorType)
    gt_label = operand_def(TensorType)
    gt_score = operand_def(TensorType)
    assembly_format = "$x `,` $gt_box `,` $gt_label `,` $gt_score attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        elem, n = cls.check_loss(operand_types, props)
        return [tensor_type(elem, (n,))]


@irdl_op_definition
class YoloLossGradOp(YoloLossBase):
    """Paddle's `yolov3_loss_grad`: the gradient of x from the loss gradient `[N]`
    (the ground truths get none).

    ```mlir
    %dx = pd.yolov3_loss_grad %x, %b, %c, %s, %g {anchors = array<i64: 10, 13, 16, 30>, anchor_mask = array<i64: 0, 1>, class_num = 2 : i64} : (tensor<1x14x4x4xf32>, tensor<1x3x4xf32>, tensor<1x3xi32>, tensor<1x3xf32>, tensor<1xf32>) -> tensor<1x14x4x4xf32>
    ```
    """

    name = "pd.yolov3_loss_grad"
    x = operand_def(TensorType)
    gt_box = operand_def(TensorType)
    gt_label = operand_def(TensorType)
    gt_score = operand_def(TensorType)
    loss_grad = operand_def(TensorType)
    assembly_format = (
        "$x `,` $gt_box `,` $gt_label `,` $gt_score `,` $loss_grad attr-dict `:` functional-type(operands, results)"
    )

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        elem, n = cls.check_loss(operand_types[:4], props)
        tg = operand_types[4]
        if elem_of(tg) != elem or len(shape_of(tg)) != 1 or not dims_compatible(shape_of(tg)[0], n):
            raise VerifyException(f"'{cls.name}': loss_grad must be [{n}] of x's dtype, got {tg}")
        return [operand_types[0]]


# -------------------------------------------------------------- RoI pooling


class RoiOp(PureOp):
    """Shared operands, properties and typing of the region-of-interest ops: the
    feature map `x [N, C, H, W]`, `boxes [R, 4]`, `boxes_num [N]`; results
    `[R, C_out, pooled_height, pooled_width]`."""

    HOST_ONLY: ClassVar[str | None] = _HOST
    x = operand_def(TensorType)
    boxes = operand_def(TensorType)
    boxes_num = operand_def(TensorType)
    pooled_height = prop_def(IntegerAttr, default_value=i64_attr(1))
    pooled_width = prop_def(IntegerAttr, default_value=i64_attr(1))
    spatial_scale = prop_def(FloatAttr, default_value=f64_attr(1.0))

    @classmethod
    def out_channels(cls, c: int, props: Mapping[str, Any]) -> int:
        """Output channels for `c` input channels."""
        return c

    @classmethod
    def check_roi(cls, tx: Attribute, tb: Attribute, tn: Attribute, props: Mapping[str, Any]) -> tuple[Attribute, list[int]]:
        """Validate x, boxes, boxes_num and the pooled size; returns the element type
        and the pooled result's shape."""
        elem = expect_same_elem(cls.name, [tx, tb])
        expect_float(cls.name, "x", tx)
        _, c, _, _ = expect_rank(cls.name, "x", tx, 4)
        r = expect_boxes(cls.name, "boxes", tb)
        expect_boxes_num(cls.name, tn)
        ph, pw = props["pooled_height"], props["pooled_width"]
        if ph < 1 or pw < 1:
            raise VerifyException(f"'{cls.name}': output_size must be positive, got ({ph}, {pw})")
        if props["spatial_scale"] <= 0:
            raise VerifyException(f"'{cls.name}': spatial_scale must be positive, got {props['spatial_scale']}")
        return elem, [r, cls.out_channels(c, props), ph, pw]


class RoiForwardOp(RoiOp):
    """A region-of-interest pooling: `(x, boxes, boxes_num) -> pooled`."""

    assembly_format = "$x `,` $boxes `,` $boxes_num attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, tb, tn = operand_types
        elem, shape = cls.check_roi(tx, tb, tn, props)
        return [tensor_type(elem, shape)]


class RoiGradOp(RoiOp):
    """The gradient of a region-of-interest pooling: `(x, boxes, boxes_num,
    out_grad) -> x_grad`, the output gradient scattered back through the forward's
    sampling (x is read for its shape, and by `roi_pool` for its maxima)."""

    # (all four declared here: xDSL orders a subclass's own operands before inherited ones)
    x = operand_def(TensorType)
    boxes = operand_def(TensorType)
    boxes_num = operand_def(TensorType)
    out_grad = operand_def(TensorType)
    assembly_format = "$x `,` $boxes `,` $boxes_num `,` $out_grad attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, tb, tn, tg = operand_types
        elem, shape = cls.check_roi(tx, tb, tn, props)
        if elem_of(tg) != elem or len(shape_of(tg)) != 4 or not all(
            dims_compatible(a, b) for a, b in zip(shape_of(tg), shape)
        ):
            raise VerifyException(
                f"'{cls.name}': out_grad must be {fmt_shape(shape)} of x's dtype, got {tg}"
            )
        return [tx]


@irdl_op_definition
class RoiAlignOp(RoiForwardOp):
    """Paddle's `roi_align`: each bin the mean of bilinear samples on a
    `sampling_ratio` grid (`-1`: `ceil(roi_size / pooled_size)` per box); `aligned`
    shifts box coordinates by half a pixel and allows boxes smaller than one.

    ```mlir
    %y = pd.roi_align %x, %boxes, %num {pooled_height = 2 : i64, pooled_width = 2 : i64} : (tensor<2x3x8x8xf32>, tensor<4x4xf32>, tensor<2xi32>) -> tensor<4x3x2x2xf32>
    ```
    """

    name = "pd.roi_align"
    sampling_ratio = prop_def(IntegerAttr, default_value=i64_attr(-1))
    aligned = prop_def(BoolAttr, default_value=bool_attr(True))


@irdl_op_definition
class RoiAlignGradOp(RoiGradOp):
    """Paddle's `roi_align_grad`: the output gradient spread over the four
    neighbours of each sample with its bilinear weights.

    ```mlir
    %dx = pd.roi_align_grad %x, %boxes, %num, %g {pooled_height = 2 : i64, pooled_width = 2 : i64} : (tensor<2x3x8x8xf32>, tensor<4x4xf32>, tensor<2xi32>, tensor<4x3x2x2xf32>) -> tensor<2x3x8x8xf32>
    ```
    """

    name = "pd.roi_align_grad"
    sampling_ratio = prop_def(IntegerAttr, default_value=i64_attr(-1))
    aligned = prop_def(BoolAttr, default_value=bool_attr(True))


@irdl_op_definition
class RoiPoolOp(RoiForwardOp):
    """Paddle's `roi_pool`: the maximum of each bin of the box (rounded to whole
    pixels after scaling), 0 for an empty bin.

    ```mlir
    %y = pd.roi_pool %x, %boxes, %num {pooled_height = 2 : i64, pooled_width = 2 : i64} : (tensor<2x3x8x8xf32>, tensor<4x4xf32>, tensor<2xi32>) -> tensor<4x3x2x2xf32>
    ```
    """

    name = "pd.roi_pool"


@irdl_op_definition
class RoiPoolGradOp(RoiGradOp):
    """Paddle's `roi_pool_grad`: each bin's gradient goes to the position of its
    maximum (the first in row-major order on ties), found again from x.

    ```mlir
    %dx = pd.roi_pool_grad %x, %boxes, %num, %g {pooled_height = 2 : i64, pooled_width = 2 : i64} : (tensor<2x3x8x8xf32>, tensor<4x4xf32>, tensor<2xi32>, tensor<4x3x2x2xf32>) -> tensor<2x3x8x8xf32>
    ```
    """

    name = "pd.roi_pool_grad"


class _PsRoi(RoiOp):
    """Position-sensitive output channels: `C / (pooled_height * pooled_width)`."""

    @classmethod
    def out_channels(cls, c: int, props: Mapping[str, Any]) -> int:
        bins = props["pooled_height"] * props["pooled_width"]
        if c == DYN:
            return DYN
        if c % bins:
            raise VerifyException(
                f"'{cls.name}': x's {c} channels must be divisible by output_size's "
                f"{props['pooled_height']} x {props['pooled_width']} bins"
            )
        return c // bins


@irdl_op_definition
class PsroiPoolOp(_PsRoi, RoiForwardOp):
    """Paddle's `psroi_pool`: position-sensitive average pooling; bin `(i, j)` of
    output channel `c` averages input channel `(c * pooled_height + i) *
    pooled_width + j` over the bin.

    ```mlir
    %y = pd.psroi_pool %x, %boxes, %num {pooled_height = 2 : i64, pooled_width = 2 : i64} : (tensor<2x8x6x6xf32>, tensor<3x4xf32>, tensor<2xi32>) -> tensor<3x2x2x2xf32>
    ```
    """

    name = "pd.psroi_pool"


@irdl_op_definition
class PsroiPoolGradOp(_PsRoi, RoiGradOp):
    """Paddle's `psroi_pool_grad`: each bin's gradient spread evenly over its bin of
    its input channel.

    ```mlir
    %dx = pd.psroi_pool_grad %x, %boxes, %num, %g {pooled_height = 2 : i64, pooled_width = 2 : i64} : (tensor<2x8x6x6xf32>, tensor<3x4xf32>, tensor<2xi32>, tensor<3x2x2x2xf32>) -> tensor<2x8x6x6xf32>
    ```
    """

    name = "pd.psroi_pool_grad"


# ------------------------------------------------------- deformable convolution


class DeformConvBase(PdOp):
    """Shared operands, properties and typing of `deformable_conv` and its gradient:
    `x [N, C, H, W]`, `offset [N, 2*dg*kh*kw, Ho, Wo]` (per deformable group and
    tap, the row then the column shift), `mask [N, dg*kh*kw, Ho, Wo]` (the
    modulation; ones for deformable convolution v1), `weight [O, C/groups, kh, kw]`."""

    HOST_ONLY: ClassVar[str | None] = _HOST
    EXPENSIVE: ClassVar[bool] = True
    x = operand_def(TensorType)
    offset = operand_def(TensorType)
    mask = operand_def(TensorType)
    weight = operand_def(TensorType)
    strides = prop_def(DenseArrayBase, default_value=ints_attr([1, 1]))
    paddings = prop_def(DenseArrayBase, default_value=ints_attr([0, 0]))
    dilations = prop_def(DenseArrayBase, default_value=ints_attr([1, 1]))
    groups = prop_def(IntegerAttr, default_value=i64_attr(1))
    deformable_groups = prop_def(IntegerAttr, default_value=i64_attr(1))
    irdl_options = (ParsePropInAttrDict(),)

    @classmethod
    def check_deform(cls, types: Sequence[Attribute], props: Mapping[str, Any]) -> tuple[Attribute, list[int]]:
        """Validate the four forward operands and the window; returns the element
        type and the output's shape."""
        tx, to, tm, tw = types
        elem = expect_same_elem(cls.name, list(types))
        expect_float(cls.name, "x", tx)
        n, c, h, w = expect_rank(cls.name, "x", tx, 4)
        o, cg, kh, kw = expect_rank(cls.name, "weight", tw, 4)
        for key in ("strides", "paddings", "dilations"):
            v = props[key]
            if len(v) != 2 or min(v) < (0 if key == "paddings" else 1):
                raise VerifyException(f"'{cls.name}': {key} must be 2 {'non-negative' if key == 'paddings' else 'positive'} integers, got {list(v)}")
        g, dg = props["groups"], props["deformable_groups"]
        if g < 1 or dg < 1:
            raise VerifyException(f"'{cls.name}': groups and deformable_groups must be positive, got {g}, {dg}")
        if c != DYN and cg != DYN and c != g * cg:
            raise VerifyException(
                f"'{cls.name}': x has {c} channels, but weight expects groups ({g}) x {cg}"
            )
        if o != DYN and o % g:
            raise VerifyException(f"'{cls.name}': weight count {o} is not divisible by groups ({g})")
        if c != DYN and c % dg:
            raise VerifyException(f"'{cls.name}': x's {c} channels are not divisible by deformable_groups ({dg})")
        out_hw = []
        for size, k, s, p, d in zip((h, w), (kh, kw), props["strides"], props["paddings"], props["dilations"]):
            if DYN in (size, k):
                out_hw.append(DYN)
                continue
            oo = (size + 2 * p - (d * (k - 1) + 1)) // s + 1
            if oo < 1:
                raise VerifyException(
                    f"'{cls.name}': the {k}-wide window (dilation {d}) does not fit an input of size {size} with padding {p}"
                )
            out_hw.append(oo)
        taps = DYN if DYN in (kh, kw) else dg * kh * kw
        for what, t, ch in (("offset", to, DYN if taps == DYN else 2 * taps), ("mask", tm, taps)):
            s = shape_of(t)
            want = [n, ch, *out_hw]
            if len(s) != 4 or not all(dims_compatible(a, b) for a, b in zip(s, want)):
                raise VerifyException(
                    f"'{cls.name}': {what} must be {fmt_shape(want)} (deformable_groups {dg}, a "
                    f"{kh}x{kw} kernel, output {fmt_shape(out_hw)}), got {fmt_shape(s)}"
                )
        return elem, [n, o, *out_hw]


@irdl_op_definition
class DeformConvOp(DeformConvBase, PureOp):
    """Paddle's `deformable_conv` (modulated deformable convolution v2, without
    bias): each tap reads x bilinearly at its grid position plus its offset (zero
    outside x), scaled by its mask.

    ```mlir
    %y = pd.deformable_conv %x, %off, %m, %w : (tensor<1x2x4x4xf32>, tensor<1x18x2x2xf32>, tensor<1x9x2x2xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x2x2xf32>
    ```
    """

    name = "pd.deformable_conv"
    assembly_format = "$x `,` $offset `,` $mask `,` $weight attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        elem, shape = cls.check_deform(operand_types, props)
        return [tensor_type(elem, shape)]


@irdl_op_definition
class DeformConvGradOp(DeformConvBase, MultiResultNames):
    """Paddle's `deformable_conv_grad`: the gradients of x, offset, mask and weight
    from the output gradient (the last operand).

    ```mlir
    %dx, %doff, %dm, %dw = pd.deformable_conv_grad %x, %off, %m, %w, %g : (tensor<1x2x4x4xf32>, tensor<1x18x2x2xf32>, tensor<1x9x2x2xf32>, tensor<3x2x3x3xf32>, tensor<1x3x2x2xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x18x2x2xf32>, tensor<1x9x2x2xf32>, tensor<3x2x3x3xf32>)
    ```
    """

    name = "pd.deformable_conv_grad"
    # (all five declared here: xDSL orders a subclass's own operands before inherited ones)
    x = operand_def(TensorType)
    offset = operand_def(TensorType)
    mask = operand_def(TensorType)
    weight = operand_def(TensorType)
    out_grad = operand_def(TensorType)
    names = opt_prop_def(ArrayAttr)
    traits = traits_def(Pure())
    x_grad = result_def(TensorType)
    offset_grad = result_def(TensorType)
    mask_grad = result_def(TensorType)
    weight_grad = result_def(TensorType)
    assembly_format = "$x `,` $offset `,` $mask `,` $weight `,` $out_grad attr-dict `:` functional-type(operands, results)"

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        elem, shape = cls.check_deform(operand_types[:4], props)
        tg = operand_types[4]
        if elem_of(tg) != elem or len(shape_of(tg)) != 4 or not all(
            dims_compatible(a, b) for a, b in zip(shape_of(tg), shape)
        ):
            raise VerifyException(f"'{cls.name}': out_grad must be {fmt_shape(shape)} of x's dtype, got {tg}")
        return list(operand_types[:4])


VISION_OPS = [
    NmsOp, ScoredNmsOp, YoloBoxOp, PriorBoxOp, GenerateProposalsOp, DistributeFpnProposalsOp,
    MatrixNmsOp, YoloLossOp, YoloLossGradOp, BoxCoderOp, RoiAlignOp, RoiAlignGradOp, RoiPoolOp, RoiPoolGradOp, PsroiPoolOp,
    PsroiPoolGradOp, DeformConvOp, DeformConvGradOp,
]

__all__ = [
    "BOX_CODE_TYPES",
    "VISION_OPS",
    "BoxCoderOp",
    "DeformConvBase",
    "DeformConvGradOp",
    "DeformConvOp",
    "DistributeFpnProposalsOp",
    "GenerateProposalsOp",
    "MatrixNmsOp",
    "NmsOp",
    "PriorBoxOp",
    "YoloBoxOp",
    "YoloLossBase",
    "YoloLossGradOp",
    "YoloLossOp",
    "expand_aspect_ratios",
    "floats_attr",
    "PsroiPoolGradOp",
    "PsroiPoolOp",
    "RoiAlignGradOp",
    "RoiAlignOp",
    "RoiForwardOp",
    "RoiGradOp",
    "RoiOp",
    "RoiPoolGradOp",
    "RoiPoolOp",
    "ScoredNmsOp",
]
