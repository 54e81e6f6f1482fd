"""`paddle.vision.ops` and the `vision` op family (dialects/pd/vision.py): values and
gradients against real Paddle 3.3.1 (`vision_ops_paddle.npz`, written by
`make_vision_fixtures.py` next to this file), every VJP rule against float64 finite
differences (`check_vjp`; second order where the gradient op has a VJP), static
programs against eager mode, and the errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pullback as paddle
import pytest
from pullback.dialects import pd
from pullback.frontend import core
from pullback.runtime.kernels import load_all
from pullback.runtime.kernels.vision import VisionOpError
from pullback.testing import check_eager_grad, check_vjp, run_op
from pullback.vision import ops

load_all()
F = np.load(Path(__file__).with_name("vision_ops_paddle.npz"))
R = np.random.default_rng(5)


@pytest.fixture(autouse=True)
def eager() -> Any:
    core.disable_static()
    yield
    core.disable_static()


def t(a: np.ndarray, grad: bool = False) -> Any:
    return paddle.to_tensor(a, stop_gradient=not grad)


def close(got: Any, want: np.ndarray, tol: float = 1e-10) -> None:
    np.testing.assert_allclose(np.asarray(got), want, rtol=tol, atol=tol)


def grads_of(out: Any, cot: np.ndarray, inputs: dict[str, Any]) -> dict[str, np.ndarray]:
    """The gradients of `sum(out * cot)` w.r.t. each input (eager)."""
    gs = paddle.grad([(out * t(cot)).sum()], list(inputs.values()))
    return {k: g.numpy() for k, g in zip(inputs, gs)}


# ---------------------------------------------------------- Paddle reference values


@pytest.mark.parametrize("case, args", [
    ("nms_plain", dict(iou_threshold=0.3)),
    ("nms_scores", dict(iou_threshold=0.2, scores=True)),
    ("nms_cat", dict(iou_threshold=0.2, scores=True, cat=[0, 1, 2], top_k=5)),
    ("nms_cat_sub", dict(iou_threshold=0.4, scores=True, cat=[0, 2])),
])
def test_nms_matches_paddle(case: str, args: dict[str, Any]) -> None:
    kw: dict[str, Any] = {"iou_threshold": args["iou_threshold"]}
    if args.get("scores"):
        kw["scores"] = t(F[f"{case}.scores"])
    if "cat" in args:
        kw.update(category_idxs=t(F[f"{case}.cat"]), categories=args["cat"], top_k=args.get("top_k"))
    got = ops.nms(t(F[f"{case}.boxes"]), **kw)
    assert got.dtype == "int64"
    np.testing.assert_array_equal(got.numpy(), F[f"{case}.out"])


def test_box_coder_matches_paddle() -> None:
    var = [0.1, 0.1, 0.2, 0.2]
    c = "bc_enc"
    close(ops.box_coder(t(F[f"{c}.p"]), t(F[f"{c}.v"]), t(F[f"{c}.t"])).numpy(), F[f"{c}.out"], 1e-5)
    c = "bc_enc_list"
    close(ops.box_coder(t(F[f"{c}.p"]), var, t(F[f"{c}.t"]), box_normalized=False).numpy(), F[f"{c}.out"], 1e-5)
    c = "bc_dec0"
    out = ops.box_coder(t(F[f"{c}.p"]), t(F[f"{c}.v"]), t(F[f"{c}.t"]), "decode_center_size")
    close(out.numpy(), F[f"{c}.out"], 1e-5)
    c = "bc_dec1"
    out = ops.box_coder(t(F[f"{c}.p"]), var, t(F[f"{c}.t"]), "decode_center_size", False, axis=1)
    close(out.numpy(), F[f"{c}.out"], 1e-5)
    assert out.stop_gradient


ROI_CASES = {
    "ra_default": (ops.roi_align, dict(output_size=3, spatial_scale=0.5)),
    "ra_unaligned": (ops.roi_align, dict(output_size=(2, 3), spatial_scale=0.5, sampling_ratio=2, aligned=False)),
    "ra_scale1": (ops.roi_align, dict(output_size=2, spatial_scale=1.0 / 1.7, sampling_ratio=-1, aligned=False)),
    "rp_a": (ops.roi_pool, dict(output_size=2, spatial_scale=0.5)),
    "rp_b": (ops.roi_pool, dict(output_size=(3, 2), spatial_scale=0.6)),
    "ps_a": (ops.psroi_pool, dict(output_size=2, spatial_scale=0.4)),
    "ps_b": (ops.psroi_pool, dict(output_size=(2, 1), spatial_scale=0.5)),
}


@pytest.mark.parametrize("case", sorted(ROI_CASES))
def test_roi_ops_match_paddle(case: str) -> None:
    fn, kw = ROI_CASES[case]
    x = t(F[f"{case}.x"], grad=True)
    out = fn(x, t(F[f"{case}.boxes"]), t(F[f"{case}.boxes_num"]), **kw)
    close(out.numpy(), F[f"{case}.out"])
    dx = grads_of(out, F[f"{case}.cot"], {"x": x})["x"]
    if case == "ra_default":
        # Paddle's aligned roi_align_grad disagrees with its own forward here: the
        # reference is the central differences of Paddle's forward.
        assert np.abs(F[f"{case}.dx"] - F[f"{case}.fd_dx"]).max() > 0.1
        close(dx, F[f"{case}.fd_dx"], 1e-7)
    else:
        close(dx, F[f"{case}.dx"])


@pytest.mark.parametrize("case", ["dc_v2", "dc_v1"])
def test_deform_conv2d_matches_paddle(case: str) -> None:
    names = ["x", "offset", "weight", "bias", "mask"] if case == "dc_v2" else ["x", "offset", "weight"]
    ts = {k: t(F[f"{case}.{k}"], grad=True) for k in names}
    if case == "dc_v2":
        out = ops.deform_conv2d(ts["x"], ts["offset"], ts["weight"], ts["bias"], padding=1,
                                deformable_groups=2, groups=2, mask=ts["mask"])
    else:
        out = ops.deform_conv2d(ts["x"], ts["offset"], ts["weight"], stride=2, padding=1, dilation=2)
    close(out.numpy(), F[f"{case}.out"])
    for k, g in grads_of(out, F[f"{case}.cot"], ts).items():
        close(g, F[f"{case}.d{k}"])


# -------------------------------------------------------- finite differences


X = R.standard_normal((2, 2, 6, 6))
BOXES = np.array([[0.5, 1.0, 4.2, 5.1], [2.0, 0.3, 5.5, 3.7], [1.2, 1.7, 3.9, 4.4]])
NUM = np.array([1, 2], dtype=np.int32)


@pytest.mark.parametrize("op_cls, props, order", [
    (pd.RoiAlignOp, dict(pooled_height=2, pooled_width=3, spatial_scale=0.9), 2),
    (pd.RoiAlignOp, dict(pooled_height=2, pooled_width=2, sampling_ratio=2, aligned=False), 2),
    (pd.RoiPoolOp, dict(pooled_height=2, pooled_width=2, spatial_scale=0.8), 1),
    (pd.PsroiPoolOp, dict(pooled_height=1, pooled_width=2, spatial_scale=0.7), 2),
])
def test_roi_vjps_against_finite_differences(op_cls: type[pd.PdOp], props: dict[str, Any], order: int) -> None:
    check_vjp(op_cls, [X, BOXES, NUM], props=props, wrt=[0], order=order, dynamic_batch=[1])


DX = R.standard_normal((1, 4, 5, 5))
DW = R.standard_normal((4, 2, 3, 3)) * 0.5
DOFF = R.normal(0, 1.2, (1, 2 * 2 * 9, 3, 3))
DMASK = R.uniform(0.2, 1.0, (1, 2 * 9, 3, 3))


def test_deformable_conv_vjp_against_finite_differences() -> None:
    props = dict(strides=[2, 2], paddings=[1, 1], groups=2, deformable_groups=2)
    check_vjp(pd.DeformConvOp, [DX, DOFF, DMASK, DW], props=props, rtol=1e-5, atol=1e-6)


def test_deform_conv2d_bias_and_v1_gradients_through_the_api() -> None:
    """v1 (no mask), a bias and unequal dilations: gradients of every input."""

    def fn(x: Any, offset: Any, w: Any, b: Any) -> Any:
        return ops.deform_conv2d(x, offset, w, b, stride=1, padding=1, dilation=(2, 1))

    check_eager_grad(fn, [DX, R.normal(0, 1.2, (1, 18, 3, 5)), DW.repeat(2, axis=1), R.standard_normal(4)])


def test_second_derivatives_paddle_lacks_say_so() -> None:
    x = t(DX, grad=True)
    out = ops.deform_conv2d(x, t(DOFF[:, :18]), t(DW.repeat(2, axis=1)), padding=1, stride=2)
    (gx,) = paddle.grad([(out * out).sum()], [x], create_graph=True)
    with pytest.raises(RuntimeError, match="deformable_conv_grad has no double gradient"):
        paddle.grad([gx.sum()], [x])
    x2 = t(X, grad=True)
    out = ops.roi_pool(x2, t(BOXES), t(NUM), 2)
    (g2,) = paddle.grad([(out * out).sum()], [x2], create_graph=True)
    with pytest.raises(RuntimeError, match="roi_pool_grad has no double gradient"):
        paddle.grad([g2.sum()], [x2])


# ------------------------------------------------------------ static programs


def test_static_programs_match_eager() -> None:
    eager_out = [
        ops.roi_align(t(X), t(BOXES), t(NUM), 2, 0.9).numpy(),
        ops.psroi_pool(t(X), t(BOXES), t(NUM), (1, 2)).numpy(),
        ops.deform_conv2d(t(DX), t(DOFF), t(DW), padding=1, stride=2, groups=2, deformable_groups=2,
                          mask=t(DMASK)).numpy(),
        ops.nms(t(BOXES), 0.1, t(np.array([0.2, 0.9, 0.5]))).numpy(),
        ops.box_coder(t(BOXES), [0.1, 0.1, 0.2, 0.2], t(BOXES[:2])).numpy(),
    ]
    xg = t(X, grad=True)
    (eager_dx,) = paddle.grad([ops.roi_align(xg, t(BOXES), t(NUM), 2, 0.9).sum()], [xg])
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [None, 2, 6, 6], "float64")
        x.stop_gradient = False
        b = paddle.static.data("b", [None, 4], "float64")
        n = paddle.static.data("n", [None], "int32")
        dx = paddle.static.data("dx", [None, 4, 5, 5], "float64")
        off = paddle.static.data("off", [None, 36, 3, 3], "float64")
        m = paddle.static.data("m", [None, 18, 3, 3], "float64")
        w = paddle.static.data("w", [4, 2, 3, 3], "float64")
        s = paddle.static.data("s", [None], "float64")
        ra = ops.roi_align(x, b, n, 2, 0.9)
        outs = [ra, ops.psroi_pool(x, b, n, (1, 2)),
                ops.deform_conv2d(dx, off, w, padding=1, stride=2, groups=2, deformable_groups=2, mask=m),
                ops.nms(b, 0.1, s), ops.box_coder(b, [0.1, 0.1, 0.2, 0.2], b)]
        (gx,) = paddle.static.gradients([paddle.sum(ra)], [x])
    feed = {"x": X, "b": BOXES, "n": NUM, "dx": DX, "off": DOFF, "m": DMASK, "w": DW,
            "s": np.array([0.2, 0.9, 0.5])}
    got = paddle.static.Executor(paddle.CPUPlace()).run(main, feed=feed, fetch_list=[*outs[:4], gx])
    for g, want in zip(got, [*eager_out[:4], eager_dx.numpy()]):
        np.testing.assert_allclose(g, want, rtol=1e-12, atol=1e-12)
    assert list(outs[4].shape) == [-1, -1, 4]


def test_layers() -> None:
    x, b, n = t(X), t(BOXES), t(NUM)
    close(ops.RoIAlign(2, 0.9)(x, b, n).numpy(), ops.roi_align(x, b, n, 2, 0.9).numpy())
    close(ops.RoIPool((2, 1))(x, b, n).numpy(), ops.roi_pool(x, b, n, (2, 1)).numpy())
    close(ops.PSRoIPool(1)(x, b, n).numpy(), ops.psroi_pool(x, b, n, 1).numpy())
    layer = ops.DeformConv2D(4, 6, 3, padding=1, deformable_groups=2, groups=2)
    assert layer.weight.shape == [6, 2, 3, 3] and layer.bias.shape == [6]
    off = t(R.standard_normal((1, 36, 5, 5)).astype("float32"))
    out = layer(t(DX.astype("float32")), off)
    assert out.shape == [1, 6, 5, 5]
    assert ops.DeformConv2D(4, 6, 3, bias_attr=False).bias is None
    assert paddle.vision.ops.roi_align is ops.roi_align


# -------------------------------------------------------------------- errors


def test_errors() -> None:
    x, b = t(X), t(BOXES)
    with pytest.raises(VisionOpError, match="boxes_num .* sum to the 3 boxes"):
        ops.roi_align(x, b, t(np.array([1, 1], np.int32)), 2)
    with pytest.raises(VisionOpError, match="boxes_num has 1 entries, but x has 2 images"):
        ops.roi_pool(x, b, t(np.array([3], np.int32)), 2)
    with pytest.raises(ValueError, match="output_size"):
        ops.roi_align(x, b, t(NUM), 0)
    with pytest.raises(TypeError, match="boxes_num must be a 1-D int32/int64"):
        ops.roi_align(x, b, t(NUM.astype(np.float64)), 2)
    with pytest.raises(ValueError, match=r"boxes must be a \[num_boxes, 4\]"):
        ops.roi_pool(x, t(BOXES[:, :3]), t(NUM), 2)
    with pytest.raises(ValueError, match="2 channels must be divisible by output_size's 2 x 2 bins"):
        ops.psroi_pool(x, b, t(NUM), 2)
    with pytest.raises(ValueError, match="offset must be"):
        ops.deform_conv2d(t(DX), t(DOFF[:, :30]), t(DW), padding=1, stride=2, groups=2, deformable_groups=2)
    with pytest.raises(ValueError, match="weight expects groups"):
        ops.deform_conv2d(t(DX), t(DOFF[:, :18]), t(DW), padding=1, stride=2)
    with pytest.raises(ValueError, match="code_type"):
        ops.box_coder(b, [0.1] * 4, b, "encode")
    with pytest.raises(TypeError, match="prior_box_var"):
        ops.box_coder(b, None, b)
    with pytest.raises(ValueError, match="categories"):
        ops.nms(b, 0.3, t(np.ones(3)), t(np.zeros(3, np.int64)))
    with pytest.raises(ValueError, match="top_k"):
        ops.nms(b, 0.3, t(np.ones(3)), t(np.zeros(3, np.int64)), [0], top_k=4)


def test_run_op_types() -> None:
    """Each kernel's results fit the op's static type (shape and dtype)."""
    run_op(pd.RoiAlignOp, X, BOXES, NUM, pooled_height=2, pooled_width=2)
    run_op(pd.NmsOp, BOXES)
    run_op(pd.BoxCoderOp, BOXES, np.ones(4), BOXES[:2])


# ------------------------------------------------------------ yolo_box, prior_box


@pytest.mark.parametrize("case, kw", [
    ("yb_a", dict(conf_thresh=0.4, clip_bbox=True)),
    ("yb_b", dict(conf_thresh=0.4, clip_bbox=False, scale_x_y=1.2)),
    ("yb_iou", dict(conf_thresh=0.3, iou_aware=True, iou_aware_factor=0.4)),
])
def test_yolo_box_matches_paddle(case: str, kw: dict[str, Any]) -> None:
    boxes, scores = ops.yolo_box(t(F[f"{case}.x"]), t(F[f"{case}.img"]), [10, 13, 16, 30], 3,
                                 downsample_ratio=16, **kw)
    close(boxes.numpy(), F[f"{case}.boxes"], 2e-4)
    close(scores.numpy(), F[f"{case}.scores"], 1e-6)
    assert (F[f"{case}.scores"] == 0).any() and (F[f"{case}.scores"] > 0).any()  # the threshold bites


@pytest.mark.parametrize("case, kw", [
    ("pb_a", dict(min_sizes=[4.0, 8.0], max_sizes=[6.0, 12.0], aspect_ratios=[2.0, 1.0, 3.0], flip=True, clip=True)),
    ("pb_b", dict(min_sizes=5.0, aspect_ratios=[2.0], steps=[7.0, 6.0], offset=0.3, variance=[0.1, 0.2, 0.3, 0.4])),
    ("pb_c", dict(min_sizes=[4.0], max_sizes=[9.0], aspect_ratios=[0.5, 2.0], min_max_aspect_ratios_order=True)),
])
def test_prior_box_matches_paddle(case: str, kw: dict[str, Any]) -> None:
    feat, image = t(np.zeros((1, 3, 3, 4), np.float32)), t(np.zeros((1, 3, 24, 30), np.float32))
    boxes, var = ops.prior_box(feat, image, **kw)
    close(boxes.numpy(), F[f"{case}.boxes"], 1e-6)
    close(var.numpy(), F[f"{case}.var"], 1e-7)


def test_yolo_box_and_prior_box_static() -> None:
    x, img = F["yb_a.x"], F["yb_a.img"]
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        xs = paddle.static.data("x", [None, 16, 4, 5], "float32")
        ims = paddle.static.data("im", [None, 2], "int32")
        boxes, scores = ops.yolo_box(xs, ims, [10, 13, 16, 30], 3, 0.4, 16)
        pb, pv = ops.prior_box(xs, paddle.static.data("image", [None, 3, 24, 30], "float32"), [4.0], flip=True,
                               aspect_ratios=[2.0])
    assert list(pb.shape) == [4, 5, 3, 4] and list(boxes.shape) == [-1, 40, 4]
    got = paddle.static.Executor(paddle.CPUPlace()).run(
        main, feed={"x": x, "im": img, "image": np.zeros((2, 3, 24, 30), np.float32)}, fetch_list=[boxes, scores, pb])
    close(got[0], F["yb_a.boxes"], 2e-4)
    close(got[1], F["yb_a.scores"], 1e-6)
    core.disable_static()
    want, _ = ops.prior_box(t(x), t(np.zeros((1, 3, 24, 30), np.float32)), [4.0], flip=True, aspect_ratios=[2.0])
    close(got[2], want.numpy(), 0)


def test_yolo_box_and_prior_box_errors() -> None:
    x, img = t(F["yb_a.x"]), t(F["yb_a.img"])
    with pytest.raises(ValueError, match=r"x must have 18 channels \(2 anchors x \(5 \+ 4 classes\)\), got 16"):
        ops.yolo_box(x, img, [10, 13, 16, 30], 4, 0.4, 16)
    with pytest.raises(ValueError, match="anchors must be"):
        ops.yolo_box(x, img, [10, 13, 16], 3, 0.4, 16)
    with pytest.raises(TypeError, match="img_size must be an int32/int64"):
        ops.yolo_box(x, t(F["yb_a.img"].astype(np.float32)), [10, 13, 16, 30], 3, 0.4, 16)
    feat = t(np.zeros((1, 3, 3, 4), np.float32))
    with pytest.raises(ValueError, match="steps should be"):
        ops.prior_box(feat, feat, [4.0], steps=[1.0])
    with pytest.raises(ValueError, match="max_sizes must pair"):
        ops.prior_box(feat, feat, [4.0], max_sizes=[3.0])


# ---------------------------------------------------------- generate_proposals

GP_CASES = {
    "gp_a": dict(pre_nms_top_n=40, post_nms_top_n=10, nms_thresh=0.5, min_size=2.0),
    "gp_b": dict(pre_nms_top_n=50, post_nms_top_n=30, nms_thresh=0.6, min_size=0.5, eta=0.9, pixel_offset=True),
    "gp_c": dict(pre_nms_top_n=100, post_nms_top_n=100, nms_thresh=0.3),
}
GP_INPUTS = ["scores", "deltas", "im", "anchors", "var"]


@pytest.mark.parametrize("case", sorted(GP_CASES))
def test_generate_proposals_matches_paddle(case: str) -> None:
    rois, probs, num = ops.generate_proposals(*(t(F[f"gp.{k}"]) for k in GP_INPUTS), **GP_CASES[case],
                                              return_rois_num=True)
    np.testing.assert_array_equal(num.numpy(), F[f"{case}.num"])
    close(rois.numpy(), F[f"{case}.rois"], 2e-5)
    close(probs.numpy(), F[f"{case}.probs"], 0)


def test_generate_proposals_static_and_errors() -> None:
    with pytest.raises(ValueError, match="return_rois_num should be True in dygraph mode"):
        ops.generate_proposals(*(t(F[f"gp.{k}"]) for k in GP_INPUTS))
    with pytest.raises(ValueError, match=r"bbox_deltas must be \[2, 12, 4, 5\]"):
        ops.generate_proposals(*(t(F[f"gp.{k}"][:, :8] if k == "deltas" else F[f"gp.{k}"]) for k in GP_INPUTS),
                               return_rois_num=True)
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        vs = [paddle.static.data(k, [None, *F[f"gp.{k}"].shape[1:]] if k in ("scores", "deltas", "im")
                                 else list(F[f"gp.{k}"].shape), "float32") for k in GP_INPUTS]
        outs = ops.generate_proposals(*vs, **GP_CASES["gp_b"])
    assert len(outs) == 2 and list(outs[0].shape) == [-1, 4]
    got = paddle.static.Executor(paddle.CPUPlace()).run(
        main, feed={k: F[f"gp.{k}"] for k in GP_INPUTS}, fetch_list=list(outs))
    close(got[0], F["gp_b.rois"], 2e-5)
    close(got[1], F["gp_b.probs"], 0)


# ---------------------------------------------------- distribute_fpn_proposals


@pytest.mark.parametrize("case, pixel_offset", [("fpn_a", False), ("fpn_b", True)])
def test_distribute_fpn_proposals_matches_paddle(case: str, pixel_offset: bool) -> None:
    rois = t(F["fpn.rois"])
    multi, restore, nums = ops.distribute_fpn_proposals(rois, 2, 5, 3, 16, pixel_offset, rois_num=t(F["fpn.num"]))
    assert len(multi) == len(nums) == 4
    for i, (m, n) in enumerate(zip(multi, nums)):
        close(m.numpy(), F[f"{case}.rois{i}"], 0)
        np.testing.assert_array_equal(n.numpy(), F[f"{case}.num{i}"])
    np.testing.assert_array_equal(restore.numpy(), F[f"{case}.restore"])
    # restore_ind puts the concatenated levels back in the input order
    close(np.concatenate([m.numpy() for m in multi])[restore.numpy()[:, 0]], F["fpn.rois"], 0)


def test_distribute_fpn_proposals_static_and_errors() -> None:
    with pytest.raises(ValueError, match="rois_num should not be None in dygraph mode"):
        ops.distribute_fpn_proposals(t(F["fpn.rois"]), 2, 5, 3, 16)
    with pytest.raises(ValueError, match="max_level .* should be greater than min_level"):
        ops.distribute_fpn_proposals(t(F["fpn.rois"]), 3, 3, 3, 16, rois_num=t(F["fpn.num"]))
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        r = paddle.static.data("r", [None, 4], "float32")
        multi, restore, nums = ops.distribute_fpn_proposals(r, 2, 5, 3, 16)
    assert nums is None and len(multi) == 4
    got = paddle.static.Executor(paddle.CPUPlace()).run(main, feed={"r": F["fpn.rois"]}, fetch_list=[*multi, restore])
    # one image: the levels hold the rois of both fixture images in input order
    for i in range(4):
        close(got[i], F[f"fpn_a.rois{i}"], 0)
    np.testing.assert_array_equal(got[4], F["fpn_a.restore"])


# ------------------------------------------------------------------ matrix_nms

MN_CASES = {
    "mn_a": dict(score_threshold=0.2, post_threshold=0.3, nms_top_k=6, keep_top_k=8),
    "mn_b": dict(score_threshold=0.1, post_threshold=0.15, nms_top_k=-1, keep_top_k=-1, use_gaussian=True,
                 gaussian_sigma=1.5, background_label=-1, normalized=False),
}


@pytest.mark.parametrize("case", sorted(MN_CASES))
def test_matrix_nms_matches_paddle(case: str) -> None:
    out, num, index = ops.matrix_nms(t(F["mn.boxes"]), t(F["mn.scores"]), **MN_CASES[case], return_index=True)
    close(out.numpy(), F[f"{case}.out"], 1e-6)
    np.testing.assert_array_equal(num.numpy(), F[f"{case}.num"])
    np.testing.assert_array_equal(index.numpy(), F[f"{case}.index"])


def test_matrix_nms_static_defaults_and_errors() -> None:
    out, num, index = ops.matrix_nms(t(F["mn.boxes"]), t(F["mn.scores"]), 0.2, 0.3, 6, 8)
    assert index is None and num is not None
    with pytest.raises(TypeError, match="keep_top_k must be an int"):
        ops.matrix_nms(t(F["mn.boxes"]), t(F["mn.scores"]), 0.2, 0.3, 6, 8.0)
    with pytest.raises(ValueError, match=r"scores must be \[N, C, M\]"):
        ops.matrix_nms(t(F["mn.boxes"]), t(F["mn.scores"][:, :, :5]), 0.2, 0.3, 6, 8)
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        b = paddle.static.data("b", [None, 10, 4], "float32")
        s = paddle.static.data("s", [None, 3, 10], "float32")
        so, sn, _ = ops.matrix_nms(b, s, **MN_CASES["mn_a"])
    got = paddle.static.Executor(paddle.CPUPlace()).run(main, feed={"b": F["mn.boxes"], "s": F["mn.scores"]},
                                                         fetch_list=[so, sn])
    close(got[0], F["mn_a.out"], 1e-6)
    np.testing.assert_array_equal(got[1], F["mn_a.num"])


def test_deform_conv2d_static_gradients_match_paddle() -> None:
    """A static program's gradients of every deform_conv2d input (the fixture's
    random cotangent fed as data) equal Paddle's."""
    c = "dc_v2"
    names = ["x", "offset", "weight", "bias", "mask"]
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        vs = {k: paddle.static.data(k, [None, *F[f"{c}.{k}"].shape[1:]] if k in ("x", "offset", "mask")
                                    else list(F[f"{c}.{k}"].shape), "float64") for k in names}
        for v in vs.values():
            v.stop_gradient = False
        cot = paddle.static.data("cot", list(F[f"{c}.cot"].shape), "float64")
        out = ops.deform_conv2d(vs["x"], vs["offset"], vs["weight"], vs["bias"], padding=1, deformable_groups=2,
                                groups=2, mask=vs["mask"])
        grads = paddle.static.gradients([paddle.sum(out * cot)], list(vs.values()))
    feed = {k: F[f"{c}.{k}"] for k in [*names, "cot"]}
    got = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter").run(main, feed=feed, fetch_list=[out, *grads])
    close(got[0], F[f"{c}.out"])
    for k, g in zip(names, got[1:]):
        close(g, F[f"{c}.d{k}"])


def test_float32_int64_counts_and_empty_inputs() -> None:
    x = t(X.astype(np.float32), grad=True)
    out = ops.roi_pool(x, t(BOXES.astype(np.float32)), t(NUM.astype(np.int64)), 2, 0.8)
    assert out.dtype == "float32" and out.shape == [3, 2, 2, 2]
    (dx,) = paddle.grad([out.sum()], [x])
    assert dx.numpy().sum() == pytest.approx(3 * 2 * 2 * 2)  # each bin's unit gradient lands on its maximum
    empty = ops.roi_align(x, t(np.zeros((0, 4), np.float32)), t(np.zeros(2, np.int32)), 2)
    assert empty.shape == [0, 2, 2, 2]
    assert ops.nms(t(np.zeros((0, 4), np.float32)), 0.5, t(np.zeros(0, np.float32))).shape == [0]


# ------------------------------------------------------------------- yolo_loss

YL_ANCHORS = [10, 13, 16, 30, 33, 23]
YL_CASES = {"yl_a": dict(use_label_smooth=True), "yl_b": dict(use_label_smooth=False, scale_x_y=1.1),
            "yl_c": dict(gt_score=True)}


@pytest.mark.parametrize("case", sorted(YL_CASES))
def test_yolo_loss_matches_paddle(case: str) -> None:
    kw = dict(YL_CASES[case])
    score = t(F["yl.score"]) if kw.pop("gt_score", False) else None
    x = t(F["yl.x"], grad=True)
    loss = ops.yolo_loss(x, t(F["yl.gt"]), t(F["yl.label"]), YL_ANCHORS, [0, 1], 3, 0.5, 8, gt_score=score, **kw)
    close(loss.numpy(), F[f"{case}.out"])
    close(grads_of(loss, F[f"{case}.cot"], {"x": x})["x"], F[f"{case}.dx"])


def test_yolo_loss_vjp_against_finite_differences_and_errors() -> None:
    props = dict(anchors=YL_ANCHORS, anchor_mask=[0, 1], class_num=3, ignore_thresh=0.5, downsample_ratio=8)
    # (the ignore mask and the matches are piecewise constant: small steps keep them)
    one = slice(0, 1)  # one image keeps the finite differences quick
    check_vjp(pd.YoloLossOp, [F["yl.x"][one], F["yl.gt"][one], F["yl.label"][one], F["yl.score"][one]],
              props=props, wrt=[0])
    with pytest.raises(TypeError, match="gt_label must be an int32"):
        ops.yolo_loss(t(F["yl.x"]), t(F["yl.gt"]), t(F["yl.label"].astype(np.int64)), YL_ANCHORS, [0, 1], 3, 0.5, 8)
    with pytest.raises(ValueError, match="anchor_mask must index the 3 anchors"):
        ops.yolo_loss(t(F["yl.x"]), t(F["yl.gt"]), t(F["yl.label"]), YL_ANCHORS, [0, 3], 3, 0.5, 8)
    with pytest.raises(ValueError, match=r"x must have 14 channels \(2 masked anchors x \(5 \+ 2 classes\)\), got 16"):
        ops.yolo_loss(t(F["yl.x"]), t(F["yl.gt"]), t(F["yl.label"]), YL_ANCHORS, [0, 1], 2, 0.5, 8)


def test_float_list_properties_never_alias_int_lists() -> None:
    """prior_box's float-list properties: `[0.0, 0.0]` and `[0, 0]` are equal Python
    keys, but a float array must never be handed out for a reshape's int shape."""
    from pullback.dialects.pd.base import from_attr, to_attr

    assert from_attr(to_attr([0.0, 2.0])) == [0.0, 2.0]
    ints = to_attr([0, 2])
    assert from_attr(ints) == [0, 2] and all(isinstance(v, int) for v in from_attr(ints))
