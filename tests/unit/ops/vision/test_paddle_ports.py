"""Ports of PaddlePaddle's own `paddle.vision.ops` unit tests (PaddlePaddle/Paddle,
Apache-2.0), rewritten for pytest with the public API.  OpTest-style cases become
"call the public function with the test's inputs and compare with the numpy
reference the test defines" (re-expressed below, one function per op).

Sources (all under `test/legacy_test/`):

* `test_nms_op.py` / `test_ops_nms.py`: `nms` without scores (input order) against the
  test's `nms` reference, with scores, multiclass (`category_idxs`, `categories`,
  `top_k`) against its `multiclass_nms`, eager and static; 64 random boxes, IoU 0.5,
  top_k 20; `test_multiclass_nms_dynamic_to_static` (jit.save/load of a function).
* `test_matrix_nms_op.py`: `TestMatrixNMSOp`, `...NoOutput`, `...Gaussian` against the
  test's `batched_multiclass_nms` (2 images of 150 boxes instead of 7 of 1200, for
  time), `TestMatrixNMSError`; `TestOpsNMS.test_matrix_nms_dynamic` (shapes,
  index/box consistency, score order); the linear decay of identical boxes by hand.
* `test_roi_pool_op.py`, `test_roi_align_op.py`, `test_psroi_pool_op.py`: x (3, 3, 8, 6)
  float64 with random rois per image, against the tests' numpy pooling loops; the
  Layer forms (`RoIPool`, `RoIAlign`, `PSRoIPool`) against the functions.
* `test_psroi_pool_op.py` in full: the OpTest case (3 images, scale 1/4), the function
  and class APIs (490 and 128 channels, float32/float64), static with boxes_num as a
  tensor (the LoD variant is not ported: pullback has no LoD tensors), the errors.
* `test_roi_pool_op.py`'s `TestROIPoolOp` (scale 1/4, half-up rounding) with its gradient.
* `test_roi_align_op.py`'s classes (`TestROIAlignOp`, `...FP16`, `...WithAligned`,
  `...WithMinusSample`: spatial scale 1/2, 1-3 rois per image) against its reference.
* `test_ops_roi_align.py`, `test_ops_roi_pool.py`: output shapes (int and pair sizes,
  eager, static, the layers) and `test_value`'s exact values on a 4x4 ramp.
* `test_box_coder_op.py`: `TestBoxCoderOp`, `...WithoutBoxVar`, `..._ZeroSize`, `...WithLoD` (encode;
  the LoD only splits rows, which are independent), `...WithAxis`, `...WithVariance`
  against the test's `box_encoder`/`box_decoder`, plus unnormalized encoding;
  `TestBoxCoderAPI` and `TestBoxCoderSupporttuple` (static == dygraph).
* `test_prior_box_op.py`: prior boxes and variances (min/max sizes, flip, clip, both
  orders of min-max aspect ratios) against the test's loops.
* `test_yolo_box_op.py`: boxes and scores (clip or not, scale_x_y) against `YoloBox`.
* `test_deform_conv2d.py`: the function against the `DeformConv2D` layer, static
  against eager; its configurations (padding/stride, dilation, deformable groups,
  groups, no bias, no mask) against a numpy deformable convolution (DCN v2 bilinear
  sampling, zero outside); zero offsets with a unit mask against `conv2d`, a
  whole-pixel offset against conv2d of the shifted input.
* `test_generate_proposals_v2_op.py`: `TestGenerateProposalsV2Op` (and the commented
  `...NoOffset`) against the test's `proposal_for_one_image` with
  `test_anchor_generator_op.py`'s anchors; and, on two images, proposals inside the
  image, at most post_nms_top_n each, rois_num consistent, scores sorted.
* `test_distribute_fpn_proposals_op.py`: `...WithRoisNum` and `...NoOffset` (300 rois
  in two images of 512x512): level assignment, per-level rois and counts, restore
  index against the test's reference; `TestDistributeFpnProposalsAPI` (static ==
  dygraph).
* `test_yolov3_loss_op.py`: `TestYolov3LossOp`, `...WithoutLabelSmooth`,
  `...NoGTScore`, `...WithScaleXY` against the test's `YOLOv3Loss` (atol 2e-3 as
  there), a finite gradient; `TestYolov3LossDygraph`/`...Static` (static == eager).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import pullback as paddle
from pullback.vision import ops

RNG = np.random.default_rng(2910)


@pytest.fixture(autouse=True)
def _seeded() -> None:
    """Sampling checks use a fixed stream (as Paddle's tests call `paddle.seed`)."""
    paddle.seed(2023)


def _run_static(build, feed):
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            fetch = build()
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        return exe.run(main, feed=feed, fetch_list=fetch)
    finally:
        paddle.disable_static()


# ---------------------------------------------------------------- nms
def _iou(a: np.ndarray, b: np.ndarray) -> float:
    area_a = (a[2] - a[0]) * (a[3] - a[1])
    area_b = (b[2] - b[0]) * (b[3] - b[1])
    w = max(min(a[2], b[2]) - max(a[0], b[0]), 0.0)
    h = max(min(a[3], b[3]) - max(a[1], b[1]), 0.0)
    inter = w * h
    return inter / (area_a + area_b - inter)


def _nms_ref(boxes: np.ndarray, thresh: float) -> np.ndarray:
    keep = np.ones(len(boxes), dtype=bool)
    selected = []
    for i in range(len(boxes)):
        if not keep[i]:
            continue
        selected.append(i)
        for j in range(i + 1, len(boxes)):
            if keep[j] and _iou(boxes[i], boxes[j]) > thresh:
                keep[j] = False
    return np.array(selected, dtype=np.int64)


def _multiclass_nms_ref(boxes, scores, cats, thresh, top_k):
    mask = np.zeros(len(scores), dtype=bool)
    for c in np.unique(cats):
        idx = np.nonzero(cats == c)[0]
        order = np.argsort(-scores[idx], kind="stable")
        mask[idx[order[_nms_ref(boxes[idx][order], thresh)]]] = True
    kept = np.nonzero(mask)[0]
    return kept[np.argsort(-scores[kept], kind="stable")[:top_k]]


def _gen_boxes(n: int = 64):
    boxes = RNG.random((n, 4)).astype("float32")
    boxes[:, 2] += boxes[:, 0]
    boxes[:, 3] += boxes[:, 1]
    return boxes, RNG.random(n).astype("float32"), RNG.choice([0, 1, 2, 3], n).astype("int64")


def test_nms() -> None:
    boxes, scores, _ = _gen_boxes()
    out = ops.nms(paddle.to_tensor(boxes), 0.5)
    np.testing.assert_array_equal(out.numpy(), _nms_ref(boxes, 0.5))
    # with scores: the boxes in descending score order, indices of the original
    order = np.argsort(-scores, kind="stable")
    out = ops.nms(paddle.to_tensor(boxes), 0.5, paddle.to_tensor(scores))
    np.testing.assert_array_equal(out.numpy(), order[_nms_ref(boxes[order], 0.5)])


def test_multiclass_nms_dynamic() -> None:
    boxes, scores, cats = _gen_boxes()
    out = ops.nms(paddle.to_tensor(boxes), 0.5, paddle.to_tensor(scores), paddle.to_tensor(cats), [0, 1, 2, 3], 20)
    np.testing.assert_array_equal(out.numpy(), _multiclass_nms_ref(boxes, scores, cats, 0.5, 20))


def test_multiclass_nms_static() -> None:
    boxes, scores, cats = _gen_boxes()

    def build():
        b = paddle.static.data("boxes", list(boxes.shape), "float32")
        s = paddle.static.data("scores", list(scores.shape), "float32")
        c = paddle.static.data("category_idxs", list(cats.shape), "int64")
        return [ops.nms(b, 0.5, s, c, [0, 1, 2, 3], 20)]

    (out,) = _run_static(build, {"boxes": boxes, "scores": scores, "category_idxs": cats})
    np.testing.assert_array_equal(np.squeeze(out), _multiclass_nms_ref(boxes, scores, cats, 0.5, 20))


def test_multiclass_nms_dynamic_to_static(tmp_path) -> None:
    # TestOpsNMS.test_multiclass_nms_dynamic_to_static: jit.save a function calling nms
    # with InputSpec [None, 4], load it back, same indices
    def fun(x):
        scores = np.arange(0, 64).astype("float32")
        categories = np.array([0, 1, 2, 3])
        return ops.nms(x, 0.1, paddle.to_tensor(scores), paddle.to_tensor(categories.repeat(16)), categories, 10)

    boxes, _, _ = _gen_boxes()
    origin = fun(paddle.to_tensor(boxes)).numpy()
    with warnings.catch_warnings():
        # pullback says the file is its own IR text (nms has no Paddle operator there)
        # and that nms runs on the host interpreter: both expected here
        warnings.simplefilter("ignore", UserWarning)
        paddle.jit.save(
            fun, str(tmp_path / "net"), input_spec=[paddle.static.InputSpec(shape=[None, 4], dtype="float32", name="x")]
        )
        res = paddle.jit.load(str(tmp_path / "net"))(paddle.to_tensor(boxes)).numpy()
    np.testing.assert_array_equal(origin, res)
    np.testing.assert_array_equal(
        origin, _multiclass_nms_ref(boxes, np.arange(64, dtype="float32"), np.arange(4).repeat(16), 0.1, 10)
    )


# ---------------------------------------------------------------- matrix_nms
def test_matrix_nms_random() -> None:
    boxes, _, _ = _gen_boxes()
    scores = RNG.random((1, 4, 64)).astype("float32")
    out, rois_num, index = ops.matrix_nms(
        paddle.to_tensor(boxes).unsqueeze(0),
        paddle.to_tensor(scores),
        0.5,
        post_threshold=0.0,
        nms_top_k=400,
        keep_top_k=100,
        return_index=True,
    )
    out, rois_num, index = out.numpy(), rois_num.numpy(), index.numpy().reshape(-1)
    assert out.shape[1] == 6 and out.shape[0] == rois_num.sum() == len(index) <= 100
    labels = out[:, 0].astype(int)
    assert np.all((labels >= 1) & (labels <= 3))  # background label 0 dropped
    np.testing.assert_allclose(out[:, 2:], boxes[index])
    # decayed scores never exceed the originals, and come sorted
    assert np.all(out[:, 1] <= scores[0, labels, index] + 1e-6)
    assert np.all(np.diff(out[:, 1]) <= 1e-7)


def _iou_matrix(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    tl = np.maximum(a[:, None, :2], b[:, :2])
    br = np.minimum(a[:, None, 2:], b[:, 2:])
    inter = np.prod(br - tl, axis=2) * (tl < br).all(axis=2)
    area_a = np.prod(a[:, 2:] - a[:, :2], axis=1)
    area_b = np.prod(b[:, 2:] - b[:, :2], axis=1)
    return inter / (area_a[:, None] + area_b - inter + 1e-10)


def _matrix_nms_class(boxes, scores, score_threshold, post_threshold, nms_top_k, use_gaussian, sigma):
    sel = np.nonzero(scores > score_threshold)[0]
    order = np.argsort(-scores[sel], kind="mergesort")
    idx = sel[order][: nms_top_k if nms_top_k > -1 else None]
    sc = scores[idx]
    b = boxes[idx]
    ious = np.triu(_iou_matrix(b, b), k=1)
    cmax = np.repeat(ious.max(0)[:, None], len(idx), axis=1)
    decay = np.exp((cmax**2 - ious**2) * sigma) if use_gaussian else (1 - ious) / (1 - cmax)
    ds = sc * decay.min(0)
    if post_threshold > 0:
        keep = ds > post_threshold
        return ds[keep], b[keep], idx[keep]
    return ds, b, idx


def _matrix_nms_ref(boxes, scores, score_threshold, post_threshold, nms_top_k, keep_top_k, use_gaussian, sigma=2.0):
    """The test's `batched_multiclass_nms` re-expressed (background class 0)."""
    outs, indices, nums = [], [], []
    for n in range(scores.shape[0]):
        pred, ind = [], []
        for c in range(1, scores.shape[1]):
            ds, b, idx = _matrix_nms_class(
                boxes[n], scores[n, c], score_threshold, post_threshold, nms_top_k, use_gaussian, sigma
            )
            pred.append(np.concatenate([np.full((len(ds), 1), c), ds[:, None], b], axis=1))
            ind.append(idx)
        pred, ind = np.concatenate(pred), np.concatenate(ind)
        order = np.argsort(-pred[:, 1], kind="mergesort")[: keep_top_k if keep_top_k > -1 else None]
        outs.append(pred[order])
        indices.append(ind[order] + n * scores.shape[2])
        nums.append(len(order))
    return np.concatenate(outs), np.concatenate(indices), np.array(nums)


@pytest.mark.parametrize(
    "post_threshold,use_gaussian",
    [(0.0, False), (2.0, False), (0.0, True)],
    ids=["TestMatrixNMSOp", "NoOutput", "Gaussian"],
)
def test_matrix_nms_op_cases(post_threshold: float, use_gaussian: bool) -> None:
    # TestMatrixNMSOp (and ...NoOutput, ...Gaussian), with N = 2 images and M = 150
    # boxes instead of 7 and 1200 (21 classes, softmax scores, nms_top_k 400,
    # keep_top_k 200, score_threshold 0.01, as in Paddle)
    n, m, c = 2, 150, 21
    scores = RNG.random((n * m, c)).astype("float32")
    scores = np.exp(scores - scores.max(1, keepdims=True))
    scores = (scores / scores.sum(1, keepdims=True)).reshape(n, m, c).transpose(0, 2, 1).copy()
    boxes = RNG.random((n, m, 4)).astype("float32")
    boxes[:, :, :2] *= 0.5
    boxes[:, :, 2:] = boxes[:, :, 2:] * 0.5 + 0.5
    out, num, index = ops.matrix_nms(
        paddle.to_tensor(boxes),
        paddle.to_tensor(scores),
        0.01,
        post_threshold,
        400,
        200,
        use_gaussian=use_gaussian,
        gaussian_sigma=2.0,
        background_label=0,
        normalized=True,
        return_index=True,
    )
    ref_out, ref_index, ref_num = _matrix_nms_ref(
        boxes.astype(np.float64), scores.astype(np.float64), 0.01, post_threshold, 400, 200, use_gaussian
    )
    np.testing.assert_array_equal(num.numpy(), ref_num)
    assert out.shape[0] == len(ref_out) and out.shape[1] == 6
    np.testing.assert_allclose(out.numpy(), ref_out.reshape(-1, 6), rtol=1e-4, atol=1e-6)
    np.testing.assert_array_equal(index.numpy().reshape(-1), ref_index)


def test_matrix_nms_errors() -> None:
    # TestMatrixNMSError: numpy bboxes or scores -> TypeError
    boxes = RNG.random((7, 12, 4)).astype("float32")
    scores = RNG.random((7, 3, 12)).astype("float32")
    with pytest.raises(TypeError):
        ops.matrix_nms(
            bboxes=boxes,
            scores=paddle.to_tensor(scores),
            score_threshold=0.01,
            post_threshold=0.0,
            nms_top_k=400,
            keep_top_k=200,
        )
    with pytest.raises(TypeError):
        ops.matrix_nms(
            bboxes=paddle.to_tensor(boxes),
            scores=scores,
            score_threshold=0.01,
            post_threshold=0.0,
            nms_top_k=400,
            keep_top_k=200,
        )


def test_matrix_nms_linear_decay() -> None:
    # two identical boxes of class 1 (0.9, 0.8) and a disjoint one (0.7): the second
    # decays by (1 - iou) / (1 - 0) = 0; the disjoint box keeps its score
    boxes = np.array([[[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3]]], dtype="float32")
    scores = np.array([[[0.0, 0.0, 0.0], [0.9, 0.8, 0.7]]], dtype="float32")
    out, rois_num, _ = ops.matrix_nms(paddle.to_tensor(boxes), paddle.to_tensor(scores), 0.1, 0.05, 10, 10)
    np.testing.assert_allclose(out.numpy(), [[1, 0.9, 0, 0, 1, 1], [1, 0.7, 2, 2, 3, 3]], rtol=1e-6)
    np.testing.assert_array_equal(rois_num.numpy(), [2])


def test_matrix_nms_duplicates_of_duplicates() -> None:
    # three identical boxes and a disjoint one, post_threshold -1 (keep everything):
    # the third box's decay against the second is 0/0, which Paddle's running minimum
    # skips; its decay against the first (0) stands.  Values from Paddle 3.3.1.
    boxes = np.array([[[0, 0, 1, 1], [0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3]]], dtype="float32")
    scores = np.array([[[0, 0, 0, 0], [0.9, 0.8, 0.7, 0.6]]], dtype="float32")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        out, rois_num, _ = ops.matrix_nms(paddle.to_tensor(boxes), paddle.to_tensor(scores), 0.1, -1.0, 10, 10)
    expected = [[1, 0.9, 0, 0, 1, 1], [1, 0.6, 2, 2, 3, 3], [1, 0, 0, 0, 1, 1], [1, 0, 0, 0, 1, 1]]
    np.testing.assert_allclose(out.numpy(), expected, rtol=1e-6)
    np.testing.assert_array_equal(rois_num.numpy(), [4])


# ---------------------------------------------------------------- roi pooling
X_ROI = RNG.random((3, 3, 8, 6))
ROIS_NUM = np.array([2, 1, 2], dtype="int32")


def _make_rois(scale: float = 1.0) -> np.ndarray:
    rois = []
    for _ in range(int(ROIS_NUM.sum())):
        x1 = RNG.integers(0, 6 // scale - 2)
        y1 = RNG.integers(0, 8 // scale - 2)
        x2 = RNG.integers(x1 + 2, 6 // scale)
        y2 = RNG.integers(y1 + 2, 8 // scale)
        rois.append([x1, y1, x2, y2])
    return np.array(rois, dtype="float64")


ROIS = _make_rois()
BATCH_OF = np.repeat(np.arange(3), ROIS_NUM)


def _roi_pool_ref(x, rois, ph, pw, scale):
    out = np.zeros((len(rois), x.shape[1], ph, pw))
    H, W = x.shape[2:]
    for i, roi in enumerate(rois):
        sw, sh, ew, eh = (int(np.floor(v * scale + 0.5)) for v in roi)
        rh, rw = max(eh - sh + 1, 1), max(ew - sw + 1, 1)
        bh, bw = rh / ph, rw / pw
        for p in range(ph):
            for q in range(pw):
                h0 = min(max(int(math.floor(p * bh)) + sh, 0), H)
                h1 = min(max(int(math.ceil((p + 1) * bh)) + sh, 0), H)
                w0 = min(max(int(math.floor(q * bw)) + sw, 0), W)
                w1 = min(max(int(math.ceil((q + 1) * bw)) + sw, 0), W)
                if h1 > h0 and w1 > w0:
                    out[i, :, p, q] = x[BATCH_OF[i], :, h0:h1, w0:w1].max(axis=(1, 2))
    return out


def _bilinear(img, y, x):
    H, W = img.shape[1:]
    if y < -1.0 or y > H or x < -1.0 or x > W:
        return np.zeros(img.shape[0])
    y, x = max(y, 0.0), max(x, 0.0)
    y0, x0 = int(y), int(x)
    if y0 >= H - 1:
        y0 = y1 = H - 1
        y = float(y0)
    else:
        y1 = y0 + 1
    if x0 >= W - 1:
        x0 = x1 = W - 1
        x = float(x0)
    else:
        x1 = x0 + 1
    ly, lx = y - y0, x - x0
    hy, hx = 1 - ly, 1 - lx
    return hy * hx * img[:, y0, x0] + hy * lx * img[:, y0, x1] + ly * hx * img[:, y1, x0] + ly * lx * img[:, y1, x1]


def _roi_align_ref(x, rois, ph, pw, scale, sampling_ratio, aligned, batch_of=None):
    batch_of = BATCH_OF if batch_of is None else batch_of
    out = np.zeros((len(rois), x.shape[1], ph, pw))
    off = 0.5 if aligned else 0.0
    for i, roi in enumerate(rois):
        sw, sh, ew, eh = (v * scale - off for v in roi)
        rw, rh = ew - sw, eh - sh
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph, rw / pw
        gh = sampling_ratio if sampling_ratio > 0 else int(math.ceil(rh / ph))
        gw = sampling_ratio if sampling_ratio > 0 else int(math.ceil(rw / pw))
        count = max(gh * gw, 1)
        img = x[batch_of[i]]
        for p in range(ph):
            for q in range(pw):
                acc = np.zeros(x.shape[1])
                for iy in range(gh):
                    y = sh + p * bh + (iy + 0.5) * bh / gh
                    for ix in range(gw):
                        acc += _bilinear(img, y, sw + q * bw + (ix + 0.5) * bw / gw)
                out[i, :, p, q] = acc / count
    return out


def _psroi_pool_ref(x, rois, ph, pw, scale, batch_of=None):
    batch_of = BATCH_OF if batch_of is None else batch_of
    c_out = x.shape[1] // (ph * pw)
    H, W = x.shape[2:]
    out = np.zeros((len(rois), c_out, ph, pw))
    for i, roi in enumerate(rois):
        sw, sh = np.floor(roi[0] + 0.5) * scale, np.floor(roi[1] + 0.5) * scale
        ew, eh = (np.floor(roi[2] + 0.5) + 1) * scale, (np.floor(roi[3] + 0.5) + 1) * scale
        rh, rw = max(eh - sh, 0.1), max(ew - sw, 0.1)
        bh, bw = rh / ph, rw / pw
        for c in range(c_out):
            for p in range(ph):
                for q in range(pw):
                    h0 = min(max(int(math.floor(bh * p + sh)), 0), H)
                    h1 = min(max(int(math.ceil(bh * (p + 1) + sh)), 0), H)
                    w0 = min(max(int(math.floor(bw * q + sw)), 0), W)
                    w1 = min(max(int(math.ceil(bw * (q + 1) + sw)), 0), W)
                    if h1 > h0 and w1 > w0:
                        region = x[batch_of[i], (c * ph + p) * pw + q, h0:h1, w0:w1]
                        out[i, c, p, q] = region.sum() / ((h1 - h0) * (w1 - w0))
    return out


def _roi_args():
    return paddle.to_tensor(X_ROI), paddle.to_tensor(ROIS), paddle.to_tensor(ROIS_NUM)


def test_roi_pool() -> None:
    x, boxes, num = _roi_args()
    out = ops.roi_pool(x, boxes, num, (2, 2), 1.0)
    np.testing.assert_allclose(out.numpy(), _roi_pool_ref(X_ROI, ROIS, 2, 2, 1.0), rtol=1e-12)
    np.testing.assert_allclose(ops.RoIPool((2, 2), 1.0)(x, boxes, num).numpy(), out.numpy())


def test_roi_pool_op_case() -> None:
    # TestROIPoolOp: 3 images (1, 2, 3 rois) of 3x6x4, spatial scale 1/4 (corners that
    # round half up), 2x2 bins; values against calc_roi_pool and check_grad(['X']) as
    # the gradient of sum(out * g): g to each bin's argmax
    x = RNG.random((3, 3, 6, 4))
    rois, batch = [], []
    for b in range(3):
        for _ in range(b + 1):
            x1, y1 = RNG.integers(0, 16 - 2), RNG.integers(0, 24 - 2)
            rois.append([x1, y1, RNG.integers(x1 + 2, 16), RNG.integers(y1 + 2, 24)])
            batch.append(b)
    rois = np.array(rois, dtype="float64")
    out_ref = np.zeros((len(rois), 3, 2, 2))
    arg = np.full((len(rois), 3, 2, 2, 2), -1)
    for i, roi in enumerate(rois):
        sw, sh, ew, eh = (int(np.floor(v * 0.25 + 0.5)) for v in roi)
        bh, bw = max(eh - sh + 1, 1) / 2, max(ew - sw + 1, 1) / 2
        for p in range(2):
            for q in range(2):
                h0, h1 = (min(max(int(f((p + k) * bh)) + sh, 0), 6) for k, f in ((0, math.floor), (1, math.ceil)))
                w0, w1 = (min(max(int(f((q + k) * bw)) + sw, 0), 4) for k, f in ((0, math.floor), (1, math.ceil)))
                if h1 > h0 and w1 > w0:
                    region = x[batch[i], :, h0:h1, w0:w1].reshape(3, -1)
                    out_ref[i, :, p, q] = region.max(1)
                    flat = region.argmax(1)
                    arg[i, :, p, q] = np.stack([h0 + flat // (w1 - w0), w0 + flat % (w1 - w0)], -1)
    xt = paddle.to_tensor(x, stop_gradient=False)
    out = ops.roi_pool(xt, paddle.to_tensor(rois), paddle.to_tensor(np.array([1, 2, 3], "int32")), (2, 2), 0.25)
    np.testing.assert_allclose(out.numpy(), out_ref, rtol=1e-12)
    g = RNG.random(out_ref.shape)
    (out * paddle.to_tensor(g)).sum().backward()
    grad = np.zeros_like(x)
    for i in range(len(rois)):
        for c in range(3):
            for p in range(2):
                for q in range(2):
                    hh, ww = arg[i, c, p, q]
                    if hh >= 0:
                        grad[batch[i], c, hh, ww] += g[i, c, p, q]
    np.testing.assert_allclose(xt.grad.numpy(), grad, rtol=1e-12)


@pytest.mark.parametrize("aligned", [True, False])
@pytest.mark.parametrize("sampling_ratio", [-1, 2])
def test_roi_align(aligned: bool, sampling_ratio: int) -> None:
    x, boxes, num = _roi_args()
    out = ops.roi_align(x, boxes, num, (2, 2), 1.0, sampling_ratio, aligned)
    ref = _roi_align_ref(X_ROI, ROIS, 2, 2, 1.0, sampling_ratio, aligned)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10, atol=1e-12)
    if aligned and sampling_ratio == -1:
        np.testing.assert_allclose(ops.RoIAlign((2, 2), 1.0)(x, boxes, num).numpy(), out.numpy())


ROI_ALIGN_OP_CASES = {
    # test_roi_align_op.py: (dtype, sampling_ratio, aligned); spatial scale 1/2 throughout
    "TestROIAlignOp": ("float32", 2, False),
    "FP16": ("float16", 2, False),
    "WithAligned": ("float64", 2, True),
    "WithMinusSample": ("float32", -1, False),
}


@pytest.mark.parametrize("case", list(ROI_ALIGN_OP_CASES))
def test_roi_align_op_cases(case: str) -> None:
    # 3 images with 1, 2, 3 rois of integer corners in the 2x larger input frame
    # (Paddle's FP16 class runs on a GPU; pullback computes float16 on the CPU)
    dtype, sampling_ratio, aligned = ROI_ALIGN_OP_CASES[case]
    x = RNG.random((3, 3, 8, 6)).astype(dtype)
    rois, batch = [], []
    for b in range(3):
        for _ in range(b + 1):
            x1, y1 = RNG.integers(0, 12 - 2 + 1), RNG.integers(0, 16 - 2 + 1)
            rois.append([x1, y1, RNG.integers(x1 + 2, 12 + 1), RNG.integers(y1 + 2, 16 + 1)])
            batch.append(b)
    rois = np.array(rois, dtype=dtype)
    xt = paddle.to_tensor(x, stop_gradient=False)
    out = ops.roi_align(
        xt, paddle.to_tensor(rois), paddle.to_tensor(np.array([1, 2, 3], "int32")), 2, 0.5, sampling_ratio, aligned
    )
    ref = _roi_align_ref(
        x.astype(np.float64), rois.astype(np.float64), 2, 2, 0.5, sampling_ratio, aligned, np.array(batch)
    )
    tol = {"float16": (1e-2, 1e-3), "float32": (1e-5, 1e-6), "float64": (1e-10, 1e-12)}[dtype]
    assert out.numpy().dtype == np.dtype(dtype)
    np.testing.assert_allclose(out.numpy().astype(np.float64), ref, rtol=tol[0], atol=tol[1])
    out.sum().backward()  # check_grad(['X']): a finite gradient of x's dtype
    assert xt.grad.numpy().dtype == np.dtype(dtype) and np.all(np.isfinite(xt.grad.numpy()))


def test_roi_align_static() -> None:
    def build():
        x = paddle.static.data("x", list(X_ROI.shape), "float64")
        b = paddle.static.data("boxes", list(ROIS.shape), "float64")
        n = paddle.static.data("num", [3], "int32")
        return [ops.roi_align(x, b, n, 2)]

    (out,) = _run_static(build, {"x": X_ROI, "boxes": ROIS, "num": ROIS_NUM})
    np.testing.assert_allclose(out, _roi_align_ref(X_ROI, ROIS, 2, 2, 1.0, -1, True), rtol=1e-10, atol=1e-12)


def test_psroi_pool() -> None:
    x_np = RNG.random((3, 8, 8, 6))  # 8 channels = 2 output channels x 2 x 2 bins
    out = ops.psroi_pool(paddle.to_tensor(x_np), paddle.to_tensor(ROIS), paddle.to_tensor(ROIS_NUM), 2, 1.0)
    np.testing.assert_allclose(out.numpy(), _psroi_pool_ref(x_np, ROIS, 2, 2, 1.0), rtol=1e-12)
    layer = ops.PSRoIPool(2, 1.0)
    np.testing.assert_allclose(
        layer(paddle.to_tensor(x_np), paddle.to_tensor(ROIS), paddle.to_tensor(ROIS_NUM)).numpy(), out.numpy()
    )


def _api_roi_inputs():
    data = RNG.random((1, 256, 32, 32)).astype("float32")
    boxes = RNG.random((3, 4))
    boxes[:, 2] += boxes[:, 0] + 3
    boxes[:, 3] += boxes[:, 1] + 4
    return data, boxes.astype("float32"), np.array([3], dtype="int32")


@pytest.mark.parametrize("which", ["align", "pool"])
def test_roi_api_shapes(which: str) -> None:
    # test_ops_roi_align.py / test_ops_roi_pool.py: functional (int and pair output
    # sizes, eager and static) and the layer
    data, boxes, num = _api_roi_inputs()
    fn = ops.roi_align if which == "align" else ops.roi_pool
    layer = ops.RoIAlign if which == "align" else ops.RoIPool
    t = paddle.to_tensor
    assert fn(t(data), t(boxes), boxes_num=t(num), output_size=3).shape == [3, 256, 3, 3]
    assert fn(t(data), t(boxes), boxes_num=t(num), output_size=(3, 4)).shape == [3, 256, 3, 4]
    assert layer(output_size=(4, 3))(t(data), t(boxes), t(num)).shape == [3, 256, 4, 3]

    def build():
        d = paddle.static.data("data", list(data.shape), "float32")
        b = paddle.static.data("boxes", list(boxes.shape), "float32")
        n = paddle.static.data("boxes_num", [1], "int32")
        return [fn(d, b, boxes_num=n, output_size=3)]

    (out,) = _run_static(build, {"data": data, "boxes": boxes, "boxes_num": num})
    assert out.shape == (3, 256, 3, 3)


@pytest.mark.parametrize("which,expected", [("align", [6.0, 9.75]), ("pool", [11.0, 16.0])])
def test_roi_api_value(which: str, expected: list[float]) -> None:
    # test_value: a 4x4 ramp 1..16, boxes [1, 1, 2, 2] and [1.5, 1.5, 3, 3], output 1x1
    data = np.arange(1, 17, dtype="float32").reshape(1, 1, 4, 4)
    boxes = np.array([[1.0, 1.0, 2.0, 2.0], [1.5, 1.5, 3.0, 3.0]], dtype="float32")
    layer = (ops.RoIAlign if which == "align" else ops.RoIPool)(output_size=1)
    out = layer(paddle.to_tensor(data), paddle.to_tensor(boxes), paddle.to_tensor(np.array([2], dtype="int32")))
    np.testing.assert_almost_equal(out.numpy(), np.array(expected, dtype="float32").reshape(2, 1, 1, 1))


def test_psroi_pool_op_case() -> None:
    # TestPSROIPoolOp: 3 images (1, 2, 3 rois), 12 channels, 6x4, scale 1/4, 2x2 bins
    x = RNG.random((3, 12, 6, 4))
    rois, batch = [], []
    for b in range(3):
        for _ in range(b + 1):
            x1 = RNG.integers(0, 16 - 2 + 1)
            y1 = RNG.integers(0, 24 - 2 + 1)
            rois.append([x1, y1, RNG.integers(x1 + 2, 16 + 1), RNG.integers(y1 + 2, 24 + 1)])
            batch.append(b)
    rois = np.array(rois, dtype="float64")
    num = np.array([1, 2, 3], dtype="int32")
    xt = paddle.to_tensor(x, stop_gradient=False)
    out = ops.psroi_pool(xt, paddle.to_tensor(rois), paddle.to_tensor(num), (2, 2), 0.25)
    np.testing.assert_allclose(out.numpy(), _psroi_pool_ref(x, rois, 2, 2, 0.25, np.array(batch)), rtol=1e-12)
    out.sum().backward()  # check_grad: every input cell gets 1/area of each bin it lies in
    assert np.all(np.isfinite(xt.grad.numpy()))


PSROI_BOXES = np.array([[1, 5, 8, 10], [4, 2, 6, 7], [12, 12, 19, 21]], dtype="float32")


@pytest.mark.parametrize("output_size", [7, (7, 7)], ids=["int", "tuple"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_psroi_pool_function_api(output_size: object, dtype: str) -> None:
    # TestPSROIPoolDynamicFunctionAPI: 490 channels, 7x7 bins -> 10 output channels
    x = RNG.random((2, 490, 28, 28)).astype("float32")
    out = ops.psroi_pool(
        paddle.to_tensor(x, dtype),
        paddle.to_tensor(PSROI_BOXES, dtype),
        paddle.to_tensor(np.array([1, 2], dtype="int32")),
        output_size,
    ).numpy()
    ref = _psroi_pool_ref(x.astype(np.float64), PSROI_BOXES, 7, 7, 1.0, np.array([0, 1, 1]))
    np.testing.assert_allclose(out, ref, rtol=1e-5)


def test_psroi_pool_class_api() -> None:
    # TestPSROIPoolDynamicClassAPI: PSRoIPool(8, 1.1) on 128 channels -> 2
    x = RNG.random((2, 128, 32, 32)).astype("float32")
    boxes = np.array([[3, 5, 6, 13], [7, 4, 22, 18], [4, 5, 7, 10], [5, 3, 25, 21]], dtype="float32")
    layer = ops.PSRoIPool(8, 1.1)
    for dtype in ("float32", "float64"):
        out = layer(
            paddle.to_tensor(x, dtype), paddle.to_tensor(boxes, dtype), paddle.to_tensor(np.array([2, 2], "int32"))
        )
        ref = _psroi_pool_ref(x.astype(np.float64), boxes, 8, 8, 1.1, np.array([0, 0, 1, 1]))
        np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5)


def test_psroi_pool_static() -> None:
    # TestPSROIPoolStaticAPI (_NOLOD): boxes_num given as a tensor
    x = RNG.random((2, 490, 28, 28)).astype("float32")

    def build():
        xs = paddle.static.data("x", [2, 490, 28, 28], "float32")
        bs = paddle.static.data("boxes", [3, 4], "float32")
        ns = paddle.static.data("boxes_num", [2], "int32")
        return [ops.psroi_pool(xs, bs, ns, 7)]

    (out,) = _run_static(build, {"x": x, "boxes": PSROI_BOXES, "boxes_num": np.array([1, 2], "int32")})
    np.testing.assert_allclose(
        out, _psroi_pool_ref(x.astype(np.float64), PSROI_BOXES, 7, 7, 1.0, np.array([0, 1, 1])), rtol=1e-5
    )


@pytest.mark.parametrize(
    "boxes_num,output_size",
    [([1, 5], 7), ([1, 1, 1], 7), ([2, 1], 4), ([1, 2], 0)],
    ids=["boxes_num_nums", "boxes_num_length", "channel", "zero_div"],
)
def test_psroi_pool_errors(boxes_num: list[int], output_size: int) -> None:
    # TestPSROIPoolBoxesNumError / ChannelError (490 not divisible by 16) / ZeroDivError
    x = paddle.uniform([2, 490, 28, 28], dtype="float32")
    with pytest.raises(ValueError):
        ops.psroi_pool(x, paddle.to_tensor(PSROI_BOXES), paddle.to_tensor(boxes_num, "int32"), output_size)


def test_roi_grad_runs() -> None:
    x = paddle.to_tensor(X_ROI, stop_gradient=False)
    ops.roi_align(x, paddle.to_tensor(ROIS), paddle.to_tensor(ROIS_NUM), 2).sum().backward()
    g = x.grad.numpy()
    # each roi's 2x2 bins average bilinear weights summing to 1 per bin and channel
    np.testing.assert_allclose(g.sum(), ROIS_NUM.sum() * 3 * 4, rtol=1e-10)


# ---------------------------------------------------------------- box_coder
def _centers(b, norm):
    w = b[..., 2] - b[..., 0] + (not norm)
    h = b[..., 3] - b[..., 1] + (not norm)
    return b[..., 0] + 0.5 * w, b[..., 1] + 0.5 * h, w, h


def _encode_ref(prior, var, target, norm):
    pcx, pcy, pw, ph = _centers(prior, norm)
    _, _, tw, th = _centers(target, norm)
    # the target's centre is the midpoint of its corners, without the +1 of an
    # unnormalized width (as Paddle's kernel and the test's reference compute it)
    tcx, tcy = (target[:, 0] + target[:, 2]) / 2, (target[:, 1] + target[:, 3]) / 2
    out = np.stack(
        [
            (tcx[:, None] - pcx[None]) / pw[None],
            (tcy[:, None] - pcy[None]) / ph[None],
            np.log(np.abs(tw[:, None] / pw[None])),
            np.log(np.abs(th[:, None] / ph[None])),
        ],
        axis=-1,
    )
    return out / np.broadcast_to(var, prior.shape)[None]


def _decode_ref(prior, var, target, norm, axis):
    pcx, pcy, pw, ph = _centers(prior, norm)
    var = np.broadcast_to(var, prior.shape)
    expand = (lambda a: a[None]) if axis == 0 else (lambda a: a[:, None])
    pcx, pcy, pw, ph = map(expand, (pcx, pcy, pw, ph))
    v = expand(var)
    cx = v[..., 0] * target[..., 0] * pw + pcx
    cy = v[..., 1] * target[..., 1] * ph + pcy
    w = np.exp(v[..., 2] * target[..., 2]) * pw
    h = np.exp(v[..., 3] * target[..., 3]) * ph
    return np.stack([cx - w / 2, cy - h / 2, cx + w / 2 - (not norm), cy + h / 2 - (not norm)], axis=-1)


def _rand_boxes(n):
    b = RNG.random((n, 4)) * 10
    b[:, 2:] = b[:, :2] + 1 + RNG.random((n, 2)) * 10
    return b.astype("float32")


BOX_CODER_CASES = {
    # name: (prior rows, variance kind, target shape, code type, normalized, axis)
    "TestBoxCoderOp": (81, "tensor", (20, 81, 4), "decode_center_size", False, 0),
    "WithoutBoxVar": (81, "ones", (20, 81, 4), "decode_center_size", False, 0),
    "WithLoD": (20, "tensor", (50, 4), "encode_center_size", True, 0),
    "WithAxis": (30, "tensor", (30, 81, 4), "decode_center_size", False, 1),
    "WithVariance": (30, "list", (30, 81, 4), "decode_center_size", False, 1),
    "EncodeUnnormalized": (20, "list", (50, 4), "encode_center_size", False, 0),
}


@pytest.mark.parametrize("case", list(BOX_CODER_CASES))
def test_box_coder(case: str) -> None:
    # random boxes in [0, 1) as the tests draw them (corners not ordered: |w| in the log)
    rows, var_kind, target_shape, code_type, norm, axis = BOX_CODER_CASES[case]
    prior = RNG.random((rows, 4)).astype("float32")
    target = RNG.random(target_shape).astype("float32")
    if var_kind == "list":
        var = RNG.random(4).astype("float32")
        pv = var.tolist()
    else:
        var = RNG.random((rows, 4)).astype("float32") if var_kind == "tensor" else np.ones((rows, 4), "float32")
        pv = paddle.to_tensor(var)
    out = ops.box_coder(paddle.to_tensor(prior), pv, paddle.to_tensor(target), code_type, norm, axis).numpy()
    p64, v64, t64 = prior.astype(np.float64), var.astype(np.float64), target.astype(np.float64)
    if code_type == "encode_center_size":
        ref = _encode_ref(p64, v64, t64, norm)
    else:
        ref = _decode_ref(p64, v64, t64, norm, axis)
    np.testing.assert_allclose(out, ref, rtol=2e-4, atol=2e-4)


def test_box_coder_zero_size() -> None:
    # TestBoxCoderOp_ZeroSize: no target boxes
    prior, var = RNG.random((81, 4)).astype("float32"), RNG.random((81, 4)).astype("float32")
    target = np.zeros((0, 81, 4), dtype="float32")
    out = ops.box_coder(
        paddle.to_tensor(prior), paddle.to_tensor(var), paddle.to_tensor(target), "decode_center_size", False
    )
    assert out.shape == [0, 81, 4]


@pytest.mark.parametrize("var", ["tensor", "tuple"], ids=["TestBoxCoderAPI", "TestBoxCoderSupporttuple"])
def test_box_coder_api_dygraph_with_static(var: str) -> None:
    prior = RNG.random((80, 4)).astype("float32")
    prior_var = RNG.random((80, 4)).astype("float32")
    target = RNG.random((20, 80, 4)).astype("float32")

    def build():
        p = paddle.static.data("prior_box", [80, 4], "float32")
        v = paddle.static.data("prior_box_var", [80, 4], "float32") if var == "tensor" else (1, 2, 3, 4)
        t = paddle.static.data("target_box", [20, 80, 4], "float32")
        return [
            ops.box_coder(
                prior_box=p, prior_box_var=v, target_box=t, code_type="decode_center_size", box_normalized=False
            )
        ]

    feed = {"prior_box": prior, "target_box": target}
    if var == "tensor":
        feed["prior_box_var"] = prior_var
    (static_out,) = _run_static(build, feed)
    v = paddle.to_tensor(prior_var) if var == "tensor" else (1, 2, 3, 4)
    dy = ops.box_coder(
        prior_box=paddle.to_tensor(prior),
        prior_box_var=v,
        target_box=paddle.to_tensor(target),
        code_type="decode_center_size",
        box_normalized=False,
    ).numpy()
    np.testing.assert_allclose(static_out, dy, rtol=1e-6)
    ref_var = prior_var if var == "tensor" else np.array([1, 2, 3, 4], dtype=np.float64)
    with np.errstate(over="ignore"):
        ref = _decode_ref(prior.astype(np.float64), ref_var, target.astype(np.float64), False, 0)
    finite = np.isfinite(ref)
    np.testing.assert_allclose(dy[finite], ref[finite], rtol=2e-4, atol=2e-4)


# ---------------------------------------------------------------- prior_box
def _prior_box_ref(fh, fw, ih, iw, min_sizes, max_sizes, ars, var, flip, clip, steps, offset, mm_order):
    real = [1.0]
    for ar in ars:
        if any(abs(ar - r) < 1e-6 for r in real):
            continue
        real.append(ar)
        if flip:
            real.append(1.0 / ar)
    step_w = steps[0] or iw / fw
    step_h = steps[1] or ih / fh
    boxes = []
    for h in range(fh):
        for w in range(fw):
            cx, cy = (w + offset) * step_w, (h + offset) * step_h
            cell = []
            for k, s in enumerate(min_sizes):
                sizes = []
                if mm_order:
                    sizes.append((s / 2, s / 2))
                    if max_sizes:
                        m = math.sqrt(s * max_sizes[k]) / 2
                        sizes.append((m, m))
                    sizes += [(s * math.sqrt(ar) / 2, s / math.sqrt(ar) / 2) for ar in real if abs(ar - 1) >= 1e-6]
                else:
                    sizes += [(s * math.sqrt(ar) / 2, s / math.sqrt(ar) / 2) for ar in real]
                    if max_sizes:
                        m = math.sqrt(s * max_sizes[k]) / 2
                        sizes.append((m, m))
                cell += [[(cx - bw) / iw, (cy - bh) / ih, (cx + bw) / iw, (cy + bh) / ih] for bw, bh in sizes]
            boxes.append(cell)
    out = np.array(boxes, dtype=np.float64).reshape(fh, fw, -1, 4)
    if clip:
        out = np.clip(out, 0.0, 1.0)
    return out, np.broadcast_to(np.array(var), out.shape)


@pytest.mark.parametrize("max_sizes", [[5.0, 10.0], []], ids=["max_sizes", "WithoutMaxSize"])
@pytest.mark.parametrize("mm_order", [False, True], ids=["default_order", "SpecifiedOutOrder"])
def test_prior_box(mm_order: bool, max_sizes: list[float]) -> None:
    # TestPriorBoxOp (commented out in Paddle, its reference kept): layer 32x32, image
    # 40x40, steps 40/32, min sizes [2, 4], aspect ratios [2, 3] flipped, clip
    feat = paddle.to_tensor(RNG.random((1, 2, 32, 32)).astype("float32"))
    image = paddle.to_tensor(RNG.random((1, 3, 40, 40)).astype("float32"))
    var = [0.1, 0.1, 0.2, 0.2]
    boxes, variances = ops.prior_box(
        feat,
        image,
        min_sizes=[2.0, 4.0],
        max_sizes=max_sizes or None,
        aspect_ratios=[2.0, 3.0],
        variance=var,
        flip=True,
        clip=True,
        steps=[1.25, 1.25],
        offset=0.5,
        min_max_aspect_ratios_order=mm_order,
    )
    ref_b, ref_v = _prior_box_ref(
        32, 32, 40, 40, [2.0, 4.0], max_sizes, [2.0, 3.0], var, True, True, [1.25, 1.25], 0.5, mm_order
    )
    assert ref_b.shape == (32, 32, 10 + len(max_sizes), 4)
    np.testing.assert_allclose(boxes.numpy(), ref_b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(variances.numpy(), ref_v, rtol=1e-6)


def test_prior_box_api_dygraph_with_static() -> None:
    # TestPriorBoxAPI: default steps (image / layer), clip and flip, static == dygraph
    input_np = RNG.random((2, 10, 32, 32)).astype("float32")
    image_np = RNG.random((2, 10, 40, 40)).astype("float32")

    def build():
        i = paddle.static.data("input", [2, 10, 32, 32], "float32")
        m = paddle.static.data("image", [2, 10, 40, 40], "float32")
        return list(ops.prior_box(input=i, image=m, min_sizes=[2.0, 4.0], clip=True, flip=True))

    box_s, var_s = _run_static(build, {"input": input_np, "image": image_np})
    box_d, var_d = ops.prior_box(
        input=paddle.to_tensor(input_np), image=paddle.to_tensor(image_np), min_sizes=[2.0, 4.0], clip=True, flip=True
    )
    np.testing.assert_allclose(box_s, box_d.numpy())
    np.testing.assert_allclose(var_s, var_d.numpy())
    ref_b, _ = _prior_box_ref(
        32, 32, 40, 40, [2.0, 4.0], [], [1.0], [0.1, 0.1, 0.2, 0.2], True, True, [0.0, 0.0], 0.5, False
    )
    np.testing.assert_allclose(box_d.numpy(), ref_b, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- yolo_box
def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _yolo_box_ref(
    x, img_size, anchors, class_num, conf_thresh, downsample, clip_bbox, scale_x_y, iou_aware=False, factor=0.5
):
    n, _, h, w = x.shape
    an = len(anchors) // 2
    bias = -0.5 * (scale_x_y - 1.0)
    if iou_aware:
        ioup = x[:, :an, :, :, None]
        x = x[:, an:]
    x = x.reshape(n, an, 5 + class_num, h, w).transpose(0, 1, 3, 4, 2)
    gx, gy = np.tile(np.arange(w), (h, 1)), np.tile(np.arange(h).reshape(-1, 1), (1, w))
    anchors = np.array(anchors, dtype=np.float64).reshape(an, 2)
    box = np.zeros((n, an, h, w, 4))
    box[..., 0] = (gx + _sigmoid(x[..., 0]) * scale_x_y + bias) / w
    box[..., 1] = (gy + _sigmoid(x[..., 1]) * scale_x_y + bias) / h
    box[..., 2] = np.exp(x[..., 2]) * anchors[:, 0].reshape(1, an, 1, 1) / (downsample * w)
    box[..., 3] = np.exp(x[..., 3]) * anchors[:, 1].reshape(1, an, 1, 1) / (downsample * h)
    conf = _sigmoid(x[..., 4:5])
    if iou_aware:
        conf = conf ** (1 - factor) * _sigmoid(ioup) ** factor
    conf[conf < conf_thresh] = 0.0
    score = _sigmoid(x[..., 5:]) * conf
    box = (box * (conf > 0)).reshape(n, -1, 4)
    corners = np.concatenate([box[..., :2] - box[..., 2:] / 2, box[..., :2] + box[..., 2:] / 2], -1)
    ih, iw = img_size[:, 0][:, None], img_size[:, 1][:, None]
    corners *= np.stack([iw, ih, iw, ih], -1)
    if clip_bbox:
        # as Paddle's kernel and its test: x1, y1 clipped below at 0, x2, y2 above at size - 1
        corners[..., 0] = np.maximum(corners[..., 0], 0)
        corners[..., 1] = np.maximum(corners[..., 1], 0)
        corners[..., 2] = np.minimum(corners[..., 2], iw - 1)
        corners[..., 3] = np.minimum(corners[..., 3], ih - 1)
    return corners, score.reshape(n, -1, class_num)


YOLO_BOX_CASES = {
    # TestYoloBoxOp and its variants (batch 4 here instead of 32)
    "TestYoloBoxOp": dict(clip_bbox=True, scale_x_y=1.0, iou_aware=False, hw=(13, 13)),
    "NoClipBbox": dict(clip_bbox=False, scale_x_y=1.0, iou_aware=False, hw=(13, 13)),
    "ScaleXY": dict(clip_bbox=True, scale_x_y=1.2, iou_aware=False, hw=(13, 13)),
    "IoUAware": dict(clip_bbox=True, scale_x_y=1.0, iou_aware=True, hw=(13, 13)),
    "HW": dict(clip_bbox=False, scale_x_y=1.0, iou_aware=False, hw=(13, 9)),
}


@pytest.mark.parametrize("case", list(YOLO_BOX_CASES))
def test_yolo_box(case: str) -> None:
    cfg = YOLO_BOX_CASES[case]
    anchors, class_num = [10, 13, 16, 30, 33, 23], 2
    per_anchor = (6 if cfg["iou_aware"] else 5) + class_num
    x = RNG.random((4, 3 * per_anchor, *cfg["hw"])).astype("float32")
    img_size = RNG.integers(10, 20, (4, 2)).astype("int32")
    boxes, scores = ops.yolo_box(
        paddle.to_tensor(x),
        paddle.to_tensor(img_size),
        anchors,
        class_num,
        0.5,
        32,
        cfg["clip_bbox"],
        scale_x_y=cfg["scale_x_y"],
        iou_aware=cfg["iou_aware"],
        iou_aware_factor=0.5,
    )
    ref_b, ref_s = _yolo_box_ref(
        x.astype(np.float64),
        img_size,
        anchors,
        class_num,
        0.5,
        32,
        cfg["clip_bbox"],
        cfg["scale_x_y"],
        cfg["iou_aware"],
    )
    np.testing.assert_allclose(boxes.numpy(), ref_b, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(scores.numpy(), ref_s, rtol=1e-4, atol=1e-6)


def test_yolo_box_dygraph_and_static() -> None:
    # TestYoloBoxDygraph / TestYoloBoxStatic: two anchors, with and without iou_aware
    kw = dict(
        anchors=[10, 13, 16, 30], class_num=2, conf_thresh=0.01, downsample_ratio=8, clip_bbox=True, scale_x_y=1.0
    )
    img = np.ones((2, 2), dtype="int32")
    for ch, aware in ((14, False), (16, True)):
        x = RNG.random((2, ch, 8, 8)).astype("float32")
        boxes, scores = ops.yolo_box(paddle.to_tensor(x), img_size=paddle.to_tensor(img), iou_aware=aware, **kw)
        assert list(boxes.shape) == [2, 128, 4] and list(scores.shape) == [2, 128, 2]

        def build(ch=ch, aware=aware):
            xs = paddle.static.data("x", [2, ch, 8, 8], "float32")
            im = paddle.static.data("img_size", [2, 2], "int32")
            return list(ops.yolo_box(xs, img_size=im, iou_aware=aware, **kw))

        sb, ss = _run_static(build, {"x": x, "img_size": img})
        np.testing.assert_allclose(sb, boxes.numpy(), rtol=1e-6)
        np.testing.assert_allclose(ss, scores.numpy(), rtol=1e-6)


# ---------------------------------------------------------------- deform_conv2d
def _deform_inputs(offset_value: float = 0.0):
    x = RNG.random((2, 4, 6, 6))
    w = RNG.random((5, 4, 3, 3))
    b = RNG.random(5)
    offset = np.full((2, 2 * 9, 4, 4), offset_value)
    return x, w, b, offset


def test_deform_conv2d_zero_offset_is_conv2d() -> None:
    x, w, b, offset = _deform_inputs()
    mask = np.ones((2, 9, 4, 4))
    t = paddle.to_tensor
    ref = paddle.nn.functional.conv2d(t(x), t(w), t(b)).numpy()
    np.testing.assert_allclose(ops.deform_conv2d(t(x), t(offset), t(w), t(b)).numpy(), ref, rtol=1e-10)
    np.testing.assert_allclose(ops.deform_conv2d(t(x), t(offset), t(w), t(b), mask=t(mask)).numpy(), ref, rtol=1e-10)


def test_deform_conv2d_whole_pixel_offset() -> None:
    # every sampling point moved one row down (dy = 1): conv2d of x shifted up, zero-filled
    x, w, _, _ = _deform_inputs()
    offset = np.zeros((2, 18, 4, 4))
    offset[:, 0::2] = 1.0  # (dy, dx) pairs per kernel point
    shifted = np.zeros_like(x)
    shifted[:, :, :-1] = x[:, :, 1:]
    t = paddle.to_tensor
    ref = paddle.nn.functional.conv2d(t(shifted), t(w)).numpy()
    np.testing.assert_allclose(ops.deform_conv2d(t(x), t(offset), t(w)).numpy(), ref, rtol=1e-10, atol=1e-12)


def _dcn_bilinear(img: np.ndarray, y: np.ndarray, x: np.ndarray) -> np.ndarray:
    """img [N, C, H, W], y/x [N, Ho, Wo] -> [N, C, Ho, Wo]; corners outside are 0."""
    n, c, h, w = img.shape
    inside = (y > -1) & (x > -1) & (y < h) & (x < w)
    y0, x0 = np.floor(y).astype(int), np.floor(x).astype(int)
    ly, lx = y - y0, x - x0
    out = np.zeros((n, c, *y.shape[1:]))
    bi = np.arange(n)[:, None, None]
    for dy, dx, wgt in ((0, 0, (1 - ly) * (1 - lx)), (0, 1, (1 - ly) * lx), (1, 0, ly * (1 - lx)), (1, 1, ly * lx)):
        yy, xx = y0 + dy, x0 + dx
        ok = inside & (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
        vals = img[bi, :, np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)]  # [N, Ho, Wo, C]
        out += np.moveaxis(vals * (wgt * ok)[..., None], -1, 1)
    return out


def _deform_conv2d_ref(x, offset, weight, bias, stride, padding, dilation, dg, groups, mask):
    n, c, h, w = x.shape
    oc, cpg, kh, kw = weight.shape
    ho, wo = offset.shape[2:]
    k = kh * kw
    cols = np.zeros((n, c, k, ho, wo))
    base_y = (np.arange(ho) * stride - padding)[None, :, None]
    base_x = (np.arange(wo) * stride - padding)[None, None, :]
    cdg = c // dg
    for g in range(dg):
        for i in range(kh):
            for j in range(kw):
                kk = i * kw + j
                y = base_y + i * dilation + offset[:, g * 2 * k + 2 * kk]
                xx = base_x + j * dilation + offset[:, g * 2 * k + 2 * kk + 1]
                v = _dcn_bilinear(x[:, g * cdg : (g + 1) * cdg], y, xx)
                if mask is not None:
                    v = v * mask[:, g * k + kk][:, None]
                cols[:, g * cdg : (g + 1) * cdg, kk] = v
    out = np.zeros((n, oc, ho, wo))
    opg = oc // groups
    for gi in range(groups):
        col = cols[:, gi * cpg : (gi + 1) * cpg].reshape(n, cpg * k, ho, wo)
        wt = weight[gi * opg : (gi + 1) * opg].reshape(opg, cpg * k)
        out[:, gi * opg : (gi + 1) * opg] = np.einsum("ok,nkhw->nohw", wt, col)
    if bias is not None:
        out += bias[None, :, None, None]
    return out


DEFORM_CASES = {
    # TestDeformConv2D and its subclasses: (stride, padding, dilation, deformable_groups, groups, bias, mask)
    "default": (1, 0, 1, 1, 1, True, True),
    "padding_stride": (2, 1, 1, 1, 1, True, True),
    "dilation": (1, 2, 2, 1, 1, True, True),
    "deformable_groups": (1, 1, 1, 2, 1, True, True),
    "groups": (1, 1, 1, 1, 2, True, True),
    "no_bias_no_mask": (1, 1, 1, 1, 1, False, False),
}


@pytest.mark.parametrize("case", list(DEFORM_CASES))
def test_deform_conv2d_reference(case: str) -> None:
    stride, padding, dilation, dg, groups, with_bias, with_mask = DEFORM_CASES[case]
    n, c, h, w, oc, ks = 2, 4, 6, 6, 4, 3
    ho = (h + 2 * padding - dilation * (ks - 1) - 1) // stride + 1
    x = RNG.random((n, c, h, w))
    offset = (RNG.random((n, 2 * dg * ks * ks, ho, ho)) - 0.5) * 3
    mask = RNG.random((n, dg * ks * ks, ho, ho)) if with_mask else None
    weight = RNG.random((oc, c // groups, ks, ks))
    bias = RNG.random(oc) if with_bias else None
    t = paddle.to_tensor
    out = ops.deform_conv2d(
        t(x),
        t(offset),
        t(weight),
        None if bias is None else t(bias),
        stride=stride,
        padding=padding,
        dilation=dilation,
        deformable_groups=dg,
        groups=groups,
        mask=None if mask is None else t(mask),
    )
    ref = _deform_conv2d_ref(x, offset, weight, bias, stride, padding, dilation, dg, groups, mask)
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-10, atol=1e-12)


def test_deform_conv2d_layer_and_static() -> None:
    # TestDeformConv2D: the layer with the function's weights; static against eager
    x = RNG.random((2, 4, 6, 6)).astype("float32")
    offset = (RNG.random((2, 18, 6, 6)).astype("float32") - 0.5) * 2
    mask = RNG.random((2, 9, 6, 6)).astype("float32")
    layer = ops.DeformConv2D(4, 5, 3, padding=1)
    t = paddle.to_tensor
    got = layer(t(x), t(offset), t(mask)).numpy()
    ref = ops.deform_conv2d(t(x), t(offset), layer.weight, layer.bias, padding=1, mask=t(mask)).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-6)
    w_np, b_np = layer.weight.numpy(), layer.bias.numpy()

    def build():
        xs = paddle.static.data("x", list(x.shape), "float32")
        os_ = paddle.static.data("offset", list(offset.shape), "float32")
        ms = paddle.static.data("mask", list(mask.shape), "float32")
        ws = paddle.static.data("w", list(w_np.shape), "float32")
        bs = paddle.static.data("b", list(b_np.shape), "float32")
        return [ops.deform_conv2d(xs, os_, ws, bs, padding=1, mask=ms)]

    (static_out,) = _run_static(build, {"x": x, "offset": offset, "mask": mask, "w": w_np, "b": b_np})
    np.testing.assert_allclose(static_out, ref, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- generate_proposals
def test_generate_proposals() -> None:
    n, a, h, w = 2, 3, 4, 4
    scores = RNG.random((n, a, h, w)).astype("float32")
    deltas = (RNG.random((n, 4 * a, h, w)).astype("float32") - 0.5) * 0.2
    img_size = np.array([[64, 64], [48, 56]], dtype="float32")
    anchors = np.zeros((h, w, a, 4), dtype="float32")
    for i in range(h):
        for j in range(w):
            for k, s in enumerate((8, 16, 24)):
                cx, cy = j * 16 + 8, i * 16 + 8
                anchors[i, j, k] = [cx - s / 2, cy - s / 2, cx + s / 2, cy + s / 2]
    variances = np.ones((h, w, a, 4), dtype="float32")
    rois, probs, num = ops.generate_proposals(
        paddle.to_tensor(scores),
        paddle.to_tensor(deltas),
        paddle.to_tensor(img_size),
        paddle.to_tensor(anchors),
        paddle.to_tensor(variances),
        pre_nms_top_n=20,
        post_nms_top_n=10,
        nms_thresh=0.5,
        min_size=0.1,
        return_rois_num=True,
    )
    rois, probs, num = rois.numpy(), probs.numpy().reshape(-1), num.numpy()
    assert rois.shape == (num.sum(), 4) and len(probs) == num.sum()
    assert np.all(num <= 10) and np.all(num > 0)
    start = 0
    for i, k in enumerate(num):
        r = rois[start : start + k]
        ih, iw = img_size[i]
        assert np.all(r[:, 0] >= 0) and np.all(r[:, 2] <= iw) and np.all(r[:, 1] >= 0) and np.all(r[:, 3] <= ih)
        assert np.all(np.diff(probs[start : start + k]) <= 0)
        # kept proposals overlap each other by at most the NMS threshold
        for p in range(k):
            for q in range(p + 1, k):
                assert _iou(r[p], r[q]) <= 0.5 + 1e-6
        start += k


def _anchor_generator(layer_h, layer_w, sizes, ratios, stride, offset):
    """test_anchor_generator_op.py's `anchor_generator_in_python`, re-expressed."""
    out = np.zeros((layer_h, layer_w, len(sizes) * len(ratios), 4), dtype="float32")
    for hi in range(layer_h):
        for wi in range(layer_w):
            cx = wi * stride[0] + offset * (stride[0] - 1)
            cy = hi * stride[1] + offset * (stride[1] - 1)
            k = 0
            for ar in ratios:
                for size in sizes:
                    base_w = np.round(np.sqrt(stride[0] * stride[1] / ar))
                    base_h = np.round(base_w * ar)
                    w, h = size / stride[0] * base_w, size / stride[1] * base_h
                    out[hi, wi, k] = [cx - 0.5 * (w - 1), cy - 0.5 * (h - 1), cx + 0.5 * (w - 1), cy + 0.5 * (h - 1)]
                    k += 1
    return out, np.ones_like(out)


def _proposals_one_image(
    im_shape, anchors, variances, deltas, scores, pre_n, post_n, thresh, min_size, eta, pixel_offset
):
    """The test's `proposal_for_one_image` (decode, clip, filter, greedy NMS)."""
    off = 1 if pixel_offset else 0
    deltas = deltas.transpose(1, 2, 0).reshape(-1, 4)
    scores = scores.transpose(1, 2, 0).reshape(-1)
    order = np.argsort(-scores, kind="stable")
    if 0 < pre_n < len(scores):
        order = order[:pre_n]
    scores, deltas, a, v = scores[order], deltas[order], anchors[order], variances[order]
    aw, ah = a[:, 2] - a[:, 0] + off, a[:, 3] - a[:, 1] + off
    acx, acy = a[:, 0] + 0.5 * aw, a[:, 1] + 0.5 * ah
    clip = math.log(1000 / 16.0)
    cx, cy = v[:, 0] * deltas[:, 0] * aw + acx, v[:, 1] * deltas[:, 1] * ah + acy
    w = np.exp(np.minimum(v[:, 2] * deltas[:, 2], clip)) * aw
    h = np.exp(np.minimum(v[:, 3] * deltas[:, 3], clip)) * ah
    boxes = np.stack([cx - w / 2, cy - h / 2, cx + w / 2 - off, cy + h / 2 - off], 1).astype("float32")
    boxes[:, 0::2] = np.maximum(np.minimum(boxes[:, 0::2], im_shape[1] - off), 0)
    boxes[:, 1::2] = np.maximum(np.minimum(boxes[:, 1::2], im_shape[0] - off), 0)
    ws, hs = boxes[:, 2] - boxes[:, 0] + off, boxes[:, 3] - boxes[:, 1] + off
    ms = max(min_size, 1.0)
    keep = (ws >= ms) & (hs >= ms)
    if pixel_offset:
        keep &= (boxes[:, 0] + ws / 2 < im_shape[1]) & (boxes[:, 1] + hs / 2 < im_shape[0])
    boxes, scores = boxes[keep], scores[keep]
    if len(boxes) == 0:
        return np.zeros((1, 4), "float32"), np.zeros((1,), "float32")

    def iou(p, q):
        area_p = (p[2] - p[0] + off) * (p[3] - p[1] + off)
        area_q = (q[2] - q[0] + off) * (q[3] - q[1] + off)
        iw = max(min(p[2], q[2]) - max(p[0], q[0]) + off, 0.0)
        ih = max(min(p[3], q[3]) - max(p[1], q[1]) + off, 0.0)
        return iw * ih / (area_p + area_q - iw * ih)

    selected, adaptive = [], thresh
    for i in np.argsort(-scores, kind="stable"):
        if all(iou(boxes[i], boxes[j]) <= adaptive for j in selected):
            selected.append(i)
            if eta < 1 and adaptive > 0.5:
                adaptive *= eta
    selected = selected[:post_n] if 0 < post_n < len(selected) else selected
    return boxes[selected], scores[selected]


@pytest.mark.parametrize("pixel_offset", [True, False], ids=["TestGenerateProposalsV2Op", "NoOffset"])
def test_generate_proposals_v2_op(pixel_offset: bool) -> None:
    # TestGenerateProposalsV2Op: a 16x16 layer, anchors of sizes 16/32 and ratios 0.5/1,
    # image 64x64, pre 12000, post 5000, NMS 0.7, min_size 3 (NoOffset is commented
    # out in Paddle; its parameters are ported too)
    anchors, variances = _anchor_generator(16, 16, [16.0, 32.0], [0.5, 1.0], [16.0, 16.0], 0.5)
    im_shape = np.array([[64, 64]], dtype="float32")
    scores = RNG.random((1, 4, 16, 16)).astype("float32")
    deltas = RNG.random((1, 16, 16, 16)).astype("float32")
    rois, probs, num = ops.generate_proposals(
        paddle.to_tensor(scores),
        paddle.to_tensor(deltas),
        paddle.to_tensor(im_shape),
        paddle.to_tensor(anchors),
        paddle.to_tensor(variances),
        pre_nms_top_n=12000,
        post_nms_top_n=5000,
        nms_thresh=0.7,
        min_size=3.0,
        eta=1.0,
        pixel_offset=pixel_offset,
        return_rois_num=True,
    )
    ref_rois, ref_probs = _proposals_one_image(
        im_shape[0],
        anchors.reshape(-1, 4),
        variances.reshape(-1, 4),
        deltas[0],
        scores[0],
        12000,
        5000,
        0.7,
        3.0,
        1.0,
        pixel_offset,
    )
    np.testing.assert_array_equal(num.numpy(), [len(ref_rois)])
    np.testing.assert_allclose(rois.numpy(), ref_rois, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(probs.numpy().reshape(-1), ref_probs, rtol=1e-6)


# ---------------------------------------------------------------- distribute_fpn_proposals
def _fpn_rois():
    # make_rois: two images with 100 and 200 rois inside 512x512
    rois = []
    for _ in range(300):
        xywh = RNG.random(4)
        xy1 = xywh[:2] * 20
        xy2 = xy1 + xywh[2:] * (np.array([512, 512]) - xy1)
        rois.append([*xy1, *xy2])
    return np.array(rois, dtype="float32"), np.array([100, 200], dtype="int32")


@pytest.mark.parametrize("pixel_offset", [True, False], ids=["WithRoisNum", "NoOffset"])
def test_distribute_fpn_proposals(pixel_offset: bool) -> None:
    rois, rois_num = _fpn_rois()
    lo, hi, refer_level, refer_scale = 2, 5, 4, 224
    multi, restore, nums = ops.distribute_fpn_proposals(
        paddle.to_tensor(rois), lo, hi, refer_level, refer_scale, pixel_offset, rois_num=paddle.to_tensor(rois_num)
    )
    off = 1 if pixel_offset else 0
    r64 = rois.astype(np.float64)
    area = (r64[:, 2] - r64[:, 0] + off) * (r64[:, 3] - r64[:, 1] + off)
    lvl = np.clip(np.floor(refer_level + np.log2(np.sqrt(area) / refer_scale + 1e-8)), lo, hi).astype(int)
    batch = np.repeat([0, 1], rois_num)
    order = []
    assert len(multi) == len(nums) == hi - lo + 1
    for k, level in enumerate(range(lo, hi + 1)):
        idx = np.nonzero(lvl == level)[0]
        order.append(idx)
        np.testing.assert_allclose(multi[k].numpy().reshape(-1, 4), rois[idx], rtol=1e-6)
        np.testing.assert_array_equal(nums[k].numpy(), [np.sum(batch[idx] == 0), np.sum(batch[idx] == 1)])
    np.testing.assert_array_equal(restore.numpy().reshape(-1), np.argsort(np.concatenate(order), kind="stable"))


def test_distribute_fpn_proposals_api_dygraph_with_static() -> None:
    # TestDistributeFpnProposalsAPI: 10 random rois in [0, 1), rois_num [4, 6]
    rois_np = RNG.random((10, 4)).astype("float32")
    num_np = np.array([4, 6], dtype="int32")
    kw = dict(min_level=2, max_level=5, refer_level=4, refer_scale=224)

    def build():
        r = paddle.static.data("rois", [10, 4], "float32")
        n = paddle.static.data("rois_num", [2], "int32")
        multi, restore, nums = ops.distribute_fpn_proposals(fpn_rois=r, rois_num=n, **kw)
        return [*multi, restore, *nums]

    static_out = _run_static(build, {"rois": rois_np, "rois_num": num_np})
    multi, restore, nums = ops.distribute_fpn_proposals(
        fpn_rois=paddle.to_tensor(rois_np), rois_num=paddle.to_tensor(num_np), **kw
    )
    dy = [*multi, restore, *nums]
    assert len(static_out) == len(dy)
    for a, b in zip(static_out, dy, strict=True):
        np.testing.assert_allclose(np.asarray(a), b.numpy(), rtol=1e-5)


# ---------------------------------------------------------------- yolo_loss
def _sce(x, label):
    sx = 1 / (1 + np.exp(-x))
    return -label * np.log(sx) - (1 - label) * np.log(1 - sx)


def _xywh_iou(b1, b2):
    """[n, p, 4] x [n, q, 4] (centre, size) -> [n, p, q], the test's `batch_xywh_box_iou`."""
    l1, r1 = b1[..., 0] - b1[..., 2] / 2, b1[..., 0] + b1[..., 2] / 2
    t1, d1 = b1[..., 1] - b1[..., 3] / 2, b1[..., 1] + b1[..., 3] / 2
    l2, r2 = b2[..., 0] - b2[..., 2] / 2, b2[..., 0] + b2[..., 2] / 2
    t2, d2 = b2[..., 1] - b2[..., 3] / 2, b2[..., 1] + b2[..., 3] / 2
    iw = np.clip(np.minimum(r1[:, :, None], r2[:, None]) - np.maximum(l1[:, :, None], l2[:, None]), 0, 1)
    ih = np.clip(np.minimum(d1[:, :, None], d2[:, None]) - np.maximum(t1[:, :, None], t2[:, None]), 0, 1)
    inter = iw * ih
    a1, a2 = (r1 - l1) * (d1 - t1), (r2 - l2) * (d2 - t2)
    return inter / (a1[:, :, None] + a2[:, None] - inter)


def _yolov3_loss_ref(
    x, gtbox, gtlabel, gtscore, anchors, anchor_mask, class_num, ignore_thresh, downsample, smooth, scale_x_y
):
    """The test's `YOLOv3Loss`, re-expressed (the loss only)."""
    n, _, h, w = x.shape
    nb, mask_num = gtbox.shape[1], len(anchor_mask)
    input_size = downsample * h
    x = x.reshape(n, mask_num, 5 + class_num, h, w).transpose(0, 1, 3, 4, 2)
    sw = min(1.0 / class_num, 1.0 / 40)
    pos, neg = (1.0 - sw, sw) if smooth else (1.0, 0.0)
    bias = -0.5 * (scale_x_y - 1.0)
    gx, gy = np.tile(np.arange(w), (h, 1)), np.tile(np.arange(h).reshape(-1, 1), (1, w))
    mask_anchors = [(anchors[2 * m], anchors[2 * m + 1]) for m in anchor_mask]
    aw = np.array([a[0] / input_size for a in mask_anchors]).reshape(1, mask_num, 1, 1)
    ah = np.array([a[1] / input_size for a in mask_anchors]).reshape(1, mask_num, 1, 1)
    pred = np.stack(
        [
            (gx + 1 / (1 + np.exp(-x[..., 0])) * scale_x_y + bias) / w,
            (gy + 1 / (1 + np.exp(-x[..., 1])) * scale_x_y + bias) / h,
            np.exp(x[..., 2]) * aw,
            np.exp(x[..., 3]) * ah,
        ],
        -1,
    ).reshape(n, -1, 4)
    obj_logit = x[..., 4].reshape(n, -1)
    objness = np.where(_xywh_iou(pred, gtbox).max(-1) > ignore_thresh, -1.0, 0.0)
    all_anchors = np.array(
        [(anchors[2 * i] / input_size, anchors[2 * i + 1] / input_size) for i in range(len(anchors) // 2)]
    )
    anchor_boxes = np.tile(np.concatenate([np.zeros_like(all_anchors), all_anchors], -1)[None], (n, 1, 1))
    shifted = gtbox.copy()
    shifted[..., :2] = 0
    best = np.argmax(_xywh_iou(shifted, anchor_boxes), -1)
    loss = np.zeros(n)
    for i in range(n):
        for j in range(nb):
            if gtbox[i, j, 2:].sum() == 0 or best[i, j] not in anchor_mask:
                continue
            a = anchor_mask.index(best[i, j])
            gi, gj = int(gtbox[i, j, 0] * w), int(gtbox[i, j, 1] * h)
            tx, ty = gtbox[i, j, 0] * w - gi, gtbox[i, j, 1] * h - gj
            tw = np.log(gtbox[i, j, 2] * input_size / mask_anchors[a][0])
            th = np.log(gtbox[i, j, 3] * input_size / mask_anchors[a][1])
            sc = (2.0 - gtbox[i, j, 2] * gtbox[i, j, 3]) * gtscore[i, j]
            cell = x[i, a, gj, gi]
            loss[i] += (_sce(cell[0], tx) + _sce(cell[1], ty) + abs(cell[2] - tw) + abs(cell[3] - th)) * sc
            objness[i, a * h * w + gj * w + gi] = gtscore[i, j]
            for k in range(class_num):
                loss[i] += _sce(cell[5 + k], pos if k == gtlabel[i, j] else neg) * gtscore[i, j]
        o = objness[i]
        loss[i] += (_sce(obj_logit[i], 1.0) * o)[o > 0].sum() + _sce(obj_logit[i], 0.0)[o == 0].sum()
    return loss


YOLO_LOSS_CASES = {
    # name: (gt_score given, use_label_smooth, scale_x_y)
    "TestYolov3LossOp": (True, True, 1.0),
    "WithoutLabelSmooth": (True, False, 1.0),
    "NoGTScore": (False, True, 1.0),
    "WithScaleXY": (True, True, 1.2),
}


@pytest.mark.parametrize("case", list(YOLO_LOSS_CASES))
def test_yolov3_loss_op(case: str) -> None:
    with_score, smooth, scale_x_y = YOLO_LOSS_CASES[case]
    anchors = [10, 13, 16, 30, 33, 23, 30, 61, 62, 45, 59, 119, 116, 90, 156, 198, 373, 326]
    mask, class_num = [0, 1, 2], 5
    u = RNG.uniform(0, 1, (3, 3 * (5 + class_num), 5, 5))
    x = np.log(u / (1 - u))  # logit of a uniform, as the test draws
    gtmask = RNG.integers(0, 2, (3, 5))
    gtbox = RNG.random((3, 5, 4)) * gtmask[..., None]
    gtlabel = (RNG.integers(0, class_num, (3, 5)) * gtmask).astype("int32")
    gtscore = RNG.random((3, 5)) if with_score else np.ones((3, 5))
    xt = paddle.to_tensor(x, stop_gradient=False)
    loss = ops.yolo_loss(
        xt,
        gt_box=paddle.to_tensor(gtbox),
        gt_label=paddle.to_tensor(gtlabel),
        anchors=anchors,
        anchor_mask=mask,
        class_num=class_num,
        ignore_thresh=0.7,
        downsample_ratio=32,
        gt_score=paddle.to_tensor(gtscore) if with_score else None,
        use_label_smooth=smooth,
        scale_x_y=scale_x_y,
    )
    ref = _yolov3_loss_ref(x, gtbox, gtlabel, gtscore, anchors, mask, class_num, 0.7, 32, smooth, scale_x_y)
    np.testing.assert_allclose(loss.numpy(), ref, rtol=1e-6, atol=2e-3)
    loss.sum().backward()
    assert np.all(np.isfinite(xt.grad.numpy()))


def test_yolov3_loss_dygraph_and_static() -> None:
    # TestYolov3LossDygraph / TestYolov3LossStatic: two anchors, with and without gt_score
    x = RNG.random((2, 14, 8, 8)).astype("float32")
    gt_box = RNG.random((2, 10, 4)).astype("float32")
    gt_label = np.zeros((2, 10), dtype="int32")  # the test's random [0, 1) cast to int32
    gt_score = RNG.random((2, 10)).astype("float32")
    kw = dict(
        anchors=[10, 13, 16, 30],
        anchor_mask=[0, 1],
        class_num=2,
        ignore_thresh=0.7,
        downsample_ratio=8,
        use_label_smooth=True,
        scale_x_y=1.0,
    )
    t = paddle.to_tensor
    eager = ops.yolo_loss(t(x), gt_box=t(gt_box), gt_label=t(gt_label), **kw)
    assert eager.shape == [2]
    eager_s = ops.yolo_loss(t(x), gt_box=t(gt_box), gt_label=t(gt_label), gt_score=t(gt_score), **kw)

    def build():
        xs = paddle.static.data("x", [2, 14, 8, 8], "float32")
        bs = paddle.static.data("gt_box", [2, 10, 4], "float32")
        ls = paddle.static.data("gt_label", [2, 10], "int32")
        ss = paddle.static.data("gt_score", [2, 10], "float32")
        return [
            ops.yolo_loss(xs, gt_box=bs, gt_label=ls, gt_score=ss, **kw),
            ops.yolo_loss(xs, gt_box=bs, gt_label=ls, **kw),
        ]

    with_score, without = _run_static(build, {"x": x, "gt_box": gt_box, "gt_label": gt_label, "gt_score": gt_score})
    np.testing.assert_allclose(with_score, eager_s.numpy(), rtol=1e-5)
    np.testing.assert_allclose(without, eager.numpy(), rtol=1e-5)
