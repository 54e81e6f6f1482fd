"""Writes `vision_ops_paddle.npz`: outputs and gradients of `paddle.vision.ops` from
real Paddle 3.3.1 on random inputs, the reference values of `test_vision_ops.py`.

Run with Paddle's interpreter (not pullback's):
    /work/venv-paddle/bin/python tests/unit/ops/vision/make_vision_fixtures.py
Each case stores its inputs (`<case>.<input>`), the output (`<case>.out`) and, for
differentiable ops, the gradients of `sum(out * cot)` (`<case>.d<input>`) for a
random cotangent `<case>.cot`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import paddle
from paddle.vision import ops

rng = np.random.default_rng(29)
OUT: dict[str, np.ndarray] = {}


def boxes(n: int, size: float, dtype: str = "float64") -> np.ndarray:
    """n random boxes (x1, y1, x2, y2) inside [0, size]."""
    xy = rng.uniform(0, size * 0.7, (n, 2))
    wh = rng.uniform(0.5, size * 0.5, (n, 2))
    return np.concatenate([xy, xy + wh], axis=1).astype(dtype)


def record(case: str, fn, inputs: dict[str, np.ndarray], grads: tuple[str, ...] = ()) -> None:
    """Run fn on tensors of inputs; store inputs, output and gradients."""
    ts = {k: paddle.to_tensor(v, stop_gradient=k not in grads) for k, v in inputs.items()}
    out = fn(**ts)
    for k, v in inputs.items():
        OUT[f"{case}.{k}"] = v
    OUT[f"{case}.out"] = out.numpy()
    if grads:
        cot = rng.standard_normal(out.shape).astype(out.numpy().dtype)
        OUT[f"{case}.cot"] = cot
        gs = paddle.grad((out * paddle.to_tensor(cot)).sum(), [ts[k] for k in grads], allow_unused=True)
        for k, g in zip(grads, gs):
            OUT[f"{case}.d{k}"] = np.zeros_like(inputs[k]) if g is None else g.numpy()


# nms: plain (box order), by score, by category with top_k
b = boxes(12, 10.0, "float32")
s = rng.uniform(0, 1, 12).astype("float32")
cat = rng.integers(0, 3, 12).astype("int64")
record("nms_plain", lambda boxes: ops.nms(boxes, 0.3), {"boxes": b})
record("nms_scores", lambda boxes, scores: ops.nms(boxes, 0.2, scores), {"boxes": b, "scores": s})
record("nms_cat", lambda boxes, scores, cat: ops.nms(boxes, 0.2, scores, cat, [0, 1, 2], 5),
       {"boxes": b, "scores": s, "cat": cat})
record("nms_cat_sub", lambda boxes, scores, cat: ops.nms(boxes, 0.4, scores, cat, [0, 2]),
       {"boxes": b, "scores": s, "cat": cat})

# box_coder
prior = boxes(3, 1.0, "float32")
pvar = rng.uniform(0.1, 0.3, (3, 4)).astype("float32")
tgt = boxes(2, 1.0, "float32")
record("bc_enc", lambda p, v, t: ops.box_coder(p, v, t), {"p": prior, "v": pvar, "t": tgt})
record("bc_enc_list", lambda p, t: ops.box_coder(p, [0.1, 0.1, 0.2, 0.2], t, box_normalized=False),
       {"p": prior * 10, "t": tgt * 10})
dec = rng.normal(0, 0.5, (2, 3, 4)).astype("float32")
record("bc_dec0", lambda p, v, t: ops.box_coder(p, v, t, "decode_center_size"), {"p": prior, "v": pvar, "t": dec})
dec1 = rng.normal(0, 0.5, (3, 2, 4)).astype("float32")
record("bc_dec1", lambda p, t: ops.box_coder(p, [0.1, 0.1, 0.2, 0.2], t, "decode_center_size", False, axis=1),
       {"p": prior * 10, "t": dec1})

# region-of-interest poolings: x [2, C, 8, 8], 5 boxes (2 + 3)
x = rng.standard_normal((2, 3, 8, 8))
rb = boxes(5, 14.0)
num = np.array([2, 3], dtype="int32")
for name, kw in {
    "ra_default": dict(output_size=3, spatial_scale=0.5),
    "ra_unaligned": dict(output_size=(2, 3), spatial_scale=0.5, sampling_ratio=2, aligned=False),
    "ra_scale1": dict(output_size=2, spatial_scale=1.0 / 1.7, sampling_ratio=-1, aligned=False),
}.items():
    record(name, lambda x, boxes, boxes_num, kw=kw: ops.roi_align(x, boxes, boxes_num, **kw),
           {"x": x, "boxes": rb, "boxes_num": num}, grads=("x",))
# Paddle's roi_align_grad disagrees with its own forward in the aligned case here:
# store the central differences of Paddle's float64 forward, the gradient pullback
# must give (`ra_default.fd_dx`).
c = "ra_default"


def _ra_loss(xx: np.ndarray) -> float:
    out = ops.roi_align(paddle.to_tensor(xx), paddle.to_tensor(rb), paddle.to_tensor(num), 3, 0.5)
    return float((out.numpy() * OUT[c + ".cot"]).sum())


fd = np.zeros_like(x)
for i in np.ndindex(*x.shape):
    e = np.zeros_like(x)
    e[i] = 1e-6
    fd[i] = (_ra_loss(x + e) - _ra_loss(x - e)) / 2e-6
OUT[c + ".fd_dx"] = fd
for name, kw in {"rp_a": dict(output_size=2, spatial_scale=0.5), "rp_b": dict(output_size=(3, 2), spatial_scale=0.6)}.items():
    record(name, lambda x, boxes, boxes_num, kw=kw: ops.roi_pool(x, boxes, boxes_num, **kw),
           {"x": x, "boxes": rb, "boxes_num": num}, grads=("x",))
xp = rng.standard_normal((2, 8, 6, 6))
for name, kw in {"ps_a": dict(output_size=2, spatial_scale=0.4), "ps_b": dict(output_size=(2, 1), spatial_scale=0.5)}.items():
    record(name, lambda x, boxes, boxes_num, kw=kw: ops.psroi_pool(x, boxes, boxes_num, **kw),
           {"x": xp, "boxes": rb, "boxes_num": num}, grads=("x",))

# deformable convolution: v2 (mask) with groups and deformable groups, v1 strided/dilated
xd = rng.standard_normal((2, 4, 6, 6))
wd = rng.standard_normal((6, 2, 3, 3)) * 0.5
bd = rng.standard_normal(6)
off = rng.normal(0, 1.5, (2, 2 * 2 * 9, 6, 6))
msk = rng.uniform(0, 1, (2, 2 * 9, 6, 6))
record("dc_v2", lambda x, offset, weight, bias, mask: ops.deform_conv2d(
    x, offset, weight, bias, padding=1, deformable_groups=2, groups=2, mask=mask),
    {"x": xd, "offset": off, "weight": wd, "bias": bd, "mask": msk}, grads=("x", "offset", "weight", "bias", "mask"))
w1 = rng.standard_normal((3, 4, 3, 3)) * 0.5
off1 = rng.normal(0, 1.5, (2, 18, 2, 2))
record("dc_v1", lambda x, offset, weight: ops.deform_conv2d(x, offset, weight, stride=2, padding=1, dilation=2),
       {"x": xd, "offset": off1, "weight": w1}, grads=("x", "offset", "weight"))

# yolo_box: plain and iou-aware heads (2 anchors, 3 classes, 4x5 cells)
xy = rng.normal(0, 1.5, (2, 2 * 8, 4, 5)).astype("float32")
img = np.array([[64, 80], [50, 70]], dtype="int32")
for name, kw in {"yb_a": dict(clip_bbox=True), "yb_b": dict(clip_bbox=False, scale_x_y=1.2)}.items():
    b, sc = ops.yolo_box(paddle.to_tensor(xy), paddle.to_tensor(img), [10, 13, 16, 30], 3, 0.4, 16, **kw)
    OUT[f"{name}.x"], OUT[f"{name}.img"], OUT[f"{name}.boxes"], OUT[f"{name}.scores"] = xy, img, b.numpy(), sc.numpy()
xi = rng.normal(0, 1.5, (2, 2 * 8 + 2, 4, 5)).astype("float32")
b, sc = ops.yolo_box(paddle.to_tensor(xi), paddle.to_tensor(img), [10, 13, 16, 30], 3, 0.3, 16,
                     iou_aware=True, iou_aware_factor=0.4)
OUT["yb_iou.x"], OUT["yb_iou.img"], OUT["yb_iou.boxes"], OUT["yb_iou.scores"] = xi, img, b.numpy(), sc.numpy()

# prior_box: two orders, flips, max sizes, clipping, explicit steps
feat = paddle.to_tensor(rng.standard_normal((1, 3, 3, 4)).astype("float32"))
image = paddle.to_tensor(rng.standard_normal((1, 3, 24, 30)).astype("float32"))
for name, kw in {
    "pb_a": dict(min_sizes=[4.0, 8.0], max_sizes=[6.0, 12.0], aspect_ratios=[2.0, 1.0, 3.0], flip=True, clip=True),
    "pb_b": dict(min_sizes=5.0, aspect_ratios=[2.0], steps=[7.0, 6.0], offset=0.3,
                 variance=[0.1, 0.2, 0.3, 0.4]),
    "pb_c": dict(min_sizes=[4.0], max_sizes=[9.0], aspect_ratios=[0.5, 2.0], flip=False,
                 min_max_aspect_ratios_order=True),
}.items():
    pb, pv = ops.prior_box(feat, image, **kw)
    OUT[f"{name}.boxes"], OUT[f"{name}.var"] = pb.numpy(), pv.numpy()

# generate_proposals: 2 images, 3 anchors on a 4x5 map; pixel offsets or not, eta
ga = rng.uniform(0, 40, (4, 5, 3, 2))
anc = np.concatenate([ga, ga + rng.uniform(4, 30, (4, 5, 3, 2))], axis=-1).astype("float32")
gv = rng.uniform(0.5, 1.5, (4, 5, 3, 4)).astype("float32")
gs = rng.uniform(0, 1, (2, 3, 4, 5)).astype("float32")
gd = rng.normal(0, 0.5, (2, 12, 4, 5)).astype("float32")
gim = np.array([[48.0, 60.0], [40.0, 64.0]], dtype="float32")
OUT.update({"gp.scores": gs, "gp.deltas": gd, "gp.im": gim, "gp.anchors": anc, "gp.var": gv})
for name, kw in {
    "gp_a": dict(pre_nms_top_n=40, post_nms_top_n=10, nms_thresh=0.5, min_size=2.0),
    "gp_b": dict(pre_nms_top_n=50, post_nms_top_n=30, nms_thresh=0.6, min_size=0.5, eta=0.9, pixel_offset=True),
    "gp_c": dict(pre_nms_top_n=100, post_nms_top_n=100, nms_thresh=0.3),
}.items():
    r, pr, rn = ops.generate_proposals(*(paddle.to_tensor(v) for v in (gs, gd, gim, anc, gv)), **kw,
                                       return_rois_num=True)
    OUT[f"{name}.rois"], OUT[f"{name}.probs"], OUT[f"{name}.num"] = r.numpy(), pr.numpy(), rn.numpy()

# distribute_fpn_proposals: 12 rois of 2 images over levels 2..5
fr = boxes(12, 160.0).astype("float32")
fr[3] = [10, 10, 12, 11]  # tiny: the lowest level
fn = np.array([5, 7], dtype="int32")
OUT["fpn.rois"], OUT["fpn.num"] = fr, fn
for name, kw in {"fpn_a": dict(pixel_offset=False), "fpn_b": dict(pixel_offset=True)}.items():
    mr, ri, rn = ops.distribute_fpn_proposals(paddle.to_tensor(fr), 2, 5, 3, 16, rois_num=paddle.to_tensor(fn), **kw)
    for i, (m, n) in enumerate(zip(mr, rn)):
        OUT[f"{name}.rois{i}"], OUT[f"{name}.num{i}"] = m.numpy(), n.numpy()
    OUT[f"{name}.restore"] = ri.numpy()

# matrix_nms: 2 images, 3 classes (0: background), 10 boxes; linear and Gaussian decay
mb = np.stack([boxes(10, 1.0) for _ in range(2)]).astype("float32")
ms = rng.uniform(0, 1, (2, 3, 10)).astype("float32")
OUT["mn.boxes"], OUT["mn.scores"] = mb, ms
for name, kw in {
    "mn_a": dict(score_threshold=0.2, post_threshold=0.3, nms_top_k=6, keep_top_k=8),
    "mn_b": dict(score_threshold=0.1, post_threshold=0.15, nms_top_k=-1, keep_top_k=-1, use_gaussian=True,
                 gaussian_sigma=1.5, background_label=-1, normalized=False),
}.items():
    o, rn, ix = ops.matrix_nms(paddle.to_tensor(mb), paddle.to_tensor(ms), **kw, return_index=True)
    OUT[f"{name}.out"], OUT[f"{name}.num"], OUT[f"{name}.index"] = o.numpy(), rn.numpy(), ix.numpy()

# yolo_loss: 2 masked anchors of 3, 3 classes, a 4x4 head; a padding ground truth
yx = rng.normal(0, 1, (2, 2 * (5 + 3), 4, 4))
ygt = np.concatenate([rng.uniform(0.2, 0.8, (2, 3, 2)), rng.uniform(0.1, 0.7, (2, 3, 2))], axis=-1)
ygt[1, 2] = 0
ylab = rng.integers(0, 3, (2, 3)).astype("int32")
ysc = rng.uniform(0.5, 1, (2, 3))
OUT.update({"yl.x": yx, "yl.gt": ygt, "yl.label": ylab, "yl.score": ysc})
for name, kw in {"yl_a": dict(use_label_smooth=True), "yl_b": dict(use_label_smooth=False, scale_x_y=1.1),
                 "yl_c": dict(gt_score=True)}.items():
    xt = paddle.to_tensor(yx, stop_gradient=False)
    with_score = kw.pop("gt_score", False)
    loss = ops.yolo_loss(xt, paddle.to_tensor(ygt), paddle.to_tensor(ylab), [10, 13, 16, 30, 33, 23], [0, 1], 3,
                         0.5, 8, gt_score=paddle.to_tensor(ysc) if with_score else None, **kw)
    cot = rng.standard_normal(loss.shape)
    (dx,) = paddle.grad((loss * paddle.to_tensor(cot)).sum(), [xt])
    OUT[f"{name}.out"], OUT[f"{name}.cot"], OUT[f"{name}.dx"] = loss.numpy(), cot, dx.numpy()

np.savez_compressed(Path(__file__).with_name("vision_ops_paddle.npz"), **OUT)
print(f"wrote {len(OUT)} arrays")
