"""VJP rules of the losses.

Hard labels enter the gradients as a one-hot target distribution (`target_of`) in
which ignored rows are all zeros, so `ignore_index` needs no separate masking of the
cross-entropy terms.  Labels get no gradient unless they are soft (float) labels.
"""

from __future__ import annotations

from collections.abc import Sequence

from pullback.dialects import pd
from pullback.dialects.pd.base import DYN, dtype_name, elem_of, shape_of
from pullback.passes.vjp import non_differentiable, vjp
from pullback.passes.vjp.builder import VjpBuilder
from pullback.passes.vjp.reduction import softmax_vjp_of
from xdsl.ir import Operation, SSAValue

Grads = list["SSAValue | None"]

non_differentiable(pd.OneHotOp)


def _class_axis(op: Operation, x: SSAValue) -> int:
    return op.prop("axis") % len(shape_of(x.type))  # type: ignore[attr-defined]


def target_of(b: VjpBuilder, op: Operation, x: SSAValue, label: SSAValue) -> SSAValue:
    """The hard label as a distribution shaped like `x` (classes at the op's `axis`,
    x's dtype): `one_hot(label)`, with all-zero rows where the label is
    `ignore_index`."""
    rank = len(shape_of(x.type))
    a = _class_axis(op, x)
    classes = shape_of(x.type)[a]
    if classes == DYN:
        return _dynamic_target(b, op, x, label, a)
    ignore = op.prop("ignore_index")  # type: ignore[attr-defined]
    ids = label
    if 0 <= ignore < classes:
        # An in-range ignore_index would get a one; send those rows out of range.
        ignored = b.emit(pd.EqualOp, label, b.full_like(label, ignore))
        ids = b.emit(pd.WhereOp, ignored, b.full_like(label, -1), label)
    onehot = b.emit(pd.OneHotOp, ids, depth=classes, dtype=dtype_name(elem_of(x.type)),
                    allow_out_of_range=True)
    if len(shape_of(label.type)) == rank:
        # A label with a 1 at the class axis: drop that 1 (a sum over it).
        onehot = b.emit(pd.ReduceSumOp, onehot, axis=[a])
    if a != rank - 1:
        # one_hot appends the classes: move them to the class axis.
        perm = [*range(a), rank - 1, *range(a, rank - 1)]
        onehot = b.emit(pd.TransposeOp, onehot, perm=perm)
    return onehot


def _dynamic_target(b: VjpBuilder, op: Operation, x: SSAValue, label: SSAValue, a: int) -> SSAValue:
    """`target_of` for a class dimension known only at run time (one_hot needs a
    static depth): `iota == label` along the class axis, where `iota` (0, 1, ...)
    is a running sum of ones shaped like x (found by the fuzzer: 1-D logits of
    dynamic length had no gradient)."""
    dt = dtype_name(elem_of(x.type))
    iota = b.scale(b.emit(pd.CumsumOp, b.full_like(x, 1.0), axis=a), 1.0, -1.0)
    if len(shape_of(label.type)) < len(shape_of(x.type)):
        label = b.emit(pd.UnsqueezeOp, label, axes=[a])
    ids = b.emit(pd.CastOp, label, dtype=dt)
    target = b.emit(pd.CastOp, b.emit(pd.EqualOp, iota, ids), dtype=dt)
    ignore = op.prop("ignore_index")  # type: ignore[attr-defined]
    if ignore >= 0:
        kept = b.emit(pd.NotEqualOp, ids, b.full_like(ids, float(ignore)))
        target = b.mul(target, b.emit(pd.CastOp, kept, dtype=dt))
    return target


def _row_sum(b: VjpBuilder, t: SSAValue, axis: int) -> SSAValue:
    """Sum over the class dimension, kept as 1."""
    return b.emit(pd.ReduceSumOp, t, axis=[axis], keepdim=True)


@vjp(pd.CrossEntropyOp)
def cross_entropy_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """loss = -sum(t * log(x)): dx = -g * t / x; a soft label t gets -g * log(x)."""
    assert isinstance(op, pd.CrossEntropyOp)
    (g,) = grads
    assert g is not None
    x, label = op.x, op.label
    if op.prop("soft_label"):
        dx = b.neg(b.div(b.mul(label, g), x))
        return [dx, b.neg(b.mul(b.emit(pd.LogOp, x), g))]
    return [b.neg(b.div(b.mul(target_of(b, op, x, label), g), x)), None]


@vjp(pd.SoftmaxWithCrossEntropyOp)
def softmax_with_cross_entropy_vjp(
    b: VjpBuilder, op: Operation, grads: Grads
) -> Sequence[SSAValue | None]:
    """loss = -sum(t * log_softmax(z)): dz = g * (softmax * sum(t) - t), where
    `sum(t)` is 1 for a kept hard label, 0 for an ignored one (and the soft label's
    total); a soft label gets -g * log_softmax(z).  A gradient reaching the softmax
    result adds the softmax VJP."""
    assert isinstance(op, pd.SoftmaxWithCrossEntropyOp)
    g_softmax, g_loss = grads
    logits, label, softmax = op.logits, op.label, op.softmax
    soft = op.prop("soft_label")
    parts: list[SSAValue] = []
    d_label: SSAValue | None = None
    if g_loss is not None:
        target = label if soft else target_of(b, op, logits, label)
        a = _class_axis(op, logits)
        parts.append(b.mul(b.sub(b.mul(softmax, _row_sum(b, target, a)), target), g_loss))
        if soft:
            log_p = b.emit(pd.LogSoftmaxOp, logits, axis=a)
            d_label = b.neg(b.mul(log_p, g_loss))
    if g_softmax is not None:
        parts.append(softmax_vjp_of(b, softmax, g_softmax, _class_axis(op, logits)))
    d_logits = parts[0] if len(parts) == 1 else b.add(parts[0], parts[1])
    return [d_logits, d_label]


@vjp(pd.SquareErrorCostOp)
def square_error_cost_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Sequence[SSAValue | None]:
    """d (x - l)^2 = (2 (x - l) g, -2 (x - l) g)."""
    assert isinstance(op, pd.SquareErrorCostOp)
    (g,) = grads
    assert g is not None
    d = b.scale(b.mul(g, b.sub(op.x, op.label)), 2.0)
    return [d, b.neg(d)]


non_differentiable(pd.AccuracyOp)
