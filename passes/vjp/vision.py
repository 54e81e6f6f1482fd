"""VJP rules of the detection and vision ops.

The region-of-interest poolings and the deformable convolution take their gradient
op (Paddle's `*_grad` operators); boxes, box counts, `nms`, `box_coder`, `yolo_box` and `prior_box` get no
gradient, as in Paddle (nor does `scored_nms`).  `roi_align_grad` and `psroi_pool_grad` are linear in the
output gradient with the forward op as their adjoint (the forward is `A x`, the
gradient `A^T g`), so their own VJP is the forward op again and second derivatives
through them come free; `roi_pool_grad` (the adjoint of a gather at the maxima),
`deformable_conv_grad` and `yolov3_loss_grad` have no VJP, as Paddle's have none, and say so.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from pullback.dialects import pd
from pullback.passes.autodiff import AutodiffError
from pullback.passes.vjp import non_differentiable, vjp
from pullback.passes.vjp.builder import VjpBuilder

Grads = list["SSAValue | None"]
Out = Sequence["SSAValue | None"]

non_differentiable(pd.NmsOp, pd.ScoredNmsOp, pd.BoxCoderOp, pd.YoloBoxOp, pd.PriorBoxOp,
                   pd.GenerateProposalsOp, pd.DistributeFpnProposalsOp, pd.MatrixNmsOp)

_GRAD_OF: dict[type[pd.RoiForwardOp], type[pd.RoiGradOp]] = {pd.RoiAlignOp: pd.RoiAlignGradOp, pd.RoiPoolOp: pd.RoiPoolGradOp, pd.PsroiPoolOp: pd.PsroiPoolGradOp}
_FORWARD_OF: dict[type[pd.RoiGradOp], type[pd.RoiForwardOp]] = {pd.RoiAlignGradOp: pd.RoiAlignOp, pd.PsroiPoolGradOp: pd.PsroiPoolOp}


@vjp(pd.RoiAlignOp, pd.RoiPoolOp, pd.PsroiPoolOp)
def roi_vjp(b: VjpBuilder, op, grads: Grads) -> Out:
    """The op's gradient op for x; none for the boxes and their counts."""
    assert isinstance(op, pd.RoiForwardOp)
    (g,) = grads
    assert g is not None
    x, boxes, num = op.operands
    dx = b.emit(_GRAD_OF[type(op)], x, boxes, num, g, **op.py_props())
    return [dx, None, None]


@vjp(pd.RoiAlignGradOp, pd.PsroiPoolGradOp)
def roi_grad_vjp(b: VjpBuilder, op, grads: Grads) -> Out:
    """The forward op applied to the cotangent (the adjoint of a linear map `A^T`);
    x is read only for its shape and gets none."""
    assert isinstance(op, pd.RoiGradOp)
    (g,) = grads
    assert g is not None
    _, boxes, num, _ = op.operands
    dg = b.emit(_FORWARD_OF[type(op)], g, boxes, num, **op.py_props())
    return [None, None, None, dg]


@vjp(pd.YoloLossOp)
def yolov3_loss_vjp(b: VjpBuilder, op, grads: Grads) -> Out:
    """`yolov3_loss_grad` for x; the ground truths get none (as in Paddle)."""
    assert isinstance(op, pd.YoloLossOp)
    (g,) = grads
    assert g is not None
    dx = b.emit(pd.YoloLossGradOp, *op.operands, g, **op.py_props())
    return [dx, None, None, None]


@vjp(pd.RoiPoolGradOp, pd.DeformConvGradOp, pd.YoloLossGradOp)
def no_second_order(b: VjpBuilder, op, grads: Grads) -> Out:
    """No second derivative (Paddle has none): a clear error naming the op."""
    raise AutodiffError(
        f"no VJP rule for '{op.name}': Paddle's {op.name[3:]} has no double gradient, so "
        "a second derivative through this op is not supported", op,
    )


@vjp(pd.DeformConvOp)
def deformable_conv_vjp(b: VjpBuilder, op, grads: Grads) -> Out:
    """One `deformable_conv_grad` for x, offset, mask and weight together."""
    assert isinstance(op, pd.DeformConvOp)
    (g,) = grads
    assert g is not None
    return b.emit_multi(pd.DeformConvGradOp, *op.operands, g, **op.py_props())
