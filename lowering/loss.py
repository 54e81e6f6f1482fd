"""Lowering of the loss family (`dialects/pd/loss.py`): `cross_entropy`,
`softmax_with_cross_entropy` (a softmax's row statistics, then the loss), the
pointwise `one_hot` and `square_error_cost`, and `accuracy` (a loop over the rows).

The class losses reduce over the class dimension in one `linalg.generic` into which
the producers of the logits (or probabilities) fuse.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pullback.dialects import pd
from pullback.dialects.pd.base import shape_of
from pullback.lowering.lowerer import Lowerer
from pullback.lowering.registry import (
    fuse_first_operand,
    lowers,
    pointwise,
    range_check,
    result_sizes,
    sizes_of_first,
)
from pullback.lowering.scalar import (
    REASSOC,
    DimMap,
    Scalar,
    elem_of_result,
    identity_map,
    identity_maps,
    result_shape,
)
from pullback.lowering.loop_nest import check_range, for_range, load, parallel, store, to_float
from pullback.lowering.reduction import row_stats
from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import IndexType, i1
from xdsl.ir import SSAValue


def class_axis_of(op: pd.ClassificationLossOp, x: SSAValue) -> int:
    """The op's class dimension, non-negative."""
    return op.prop("axis") % len(shape_of(x.type))


def _label_map(x: SSAValue, label: SSAValue, a: int) -> DimMap:
    """How a hard label (the input's shape with a 1 at the class axis `a`, or without
    that dimension) is read over the input's loop."""
    rank = len(shape_of(x.type))
    if len(shape_of(label.type)) == rank:
        return tuple(None if d == a else d for d in range(rank))
    return tuple(d for d in range(rank) if d != a)


def _loss_map(rank: int, a: int) -> DimMap:
    return tuple(None if d == a else d for d in range(rank))


def class_loss(
    low: Lowerer, op: pd.ClassificationLossOp, x: SSAValue, label: SSAValue, out: SSAValue,
    logp: Callable[[Scalar, list[SSAValue]], SSAValue], extra: Sequence[tuple[SSAValue, DimMap, bool]],
) -> None:
    """`out[n] = -sum_c w(n, c) * logp(n, c)` over the class axis: w is the soft label,
    or for a hard label `c == label[n]` (and 0 where `label[n] == ignore_index`)."""
    rank = len(shape_of(x.type))
    a = class_axis_of(op, x)
    soft = bool(op.prop("soft_label"))
    ignore = op.prop("ignore_index")
    low.fill(out, 0.0)
    lmap = identity_map(rank) if soft else _label_map(x, label, a)

    def body(s: Scalar, args: list[SSAValue], outs: list[SSAValue]) -> list[SSAValue]:
        lab, rest = args[0], args[1:]
        lp = logp(s, rest)
        zero = s.const(0.0, lp.type)
        if soft:
            term = s.mul(lab, lp)
        else:
            cls = s.emit(arith.IndexCastOp(s.index(a), lab.type))
            hit = s.cmp("eq", lab, cls)
            hit = s.emit(arith.AndIOp(hit, s.cmp("ne", lab, s.const(ignore, lab.type))))
            term = s.select(hit, lp, zero)
        return [s.emit(arith.SubfOp(outs[0], term, REASSOC))]

    reads = [(label, lmap, soft)] + list(extra)
    low.generic(low.sizes_of(x), reads, [(out, _loss_map(rank, a))], body, reductions=[a])


@range_check(pd.SoftmaxWithCrossEntropyOp, pd.CrossEntropyOp, operand=1)
def _check_labels(low: Lowerer, op: pd.ClassificationLossOp) -> None:
    """Hard labels in `[0, classes)` or equal to `ignore_index` (the interpreter's
    `nll` rule)."""
    if not op.prop("soft_label"):
        x, label = op.operands
        check_range(low, op, "label", label, low.sizes_of(x)[class_axis_of(op, x)],
                    skip=op.prop("ignore_index"))


@range_check(pd.OneHotOp, operand=0)
def _check_one_hot(low: Lowerer, op: pd.OneHotOp) -> None:
    """Ids in `[0, depth)` unless `allow_out_of_range` (then a zero row)."""
    if not op.prop("allow_out_of_range"):
        check_range(low, op, "id", op.operands[0], op.prop("depth"))


@lowers(pd.SoftmaxWithCrossEntropyOp, fusible=fuse_first_operand)
def _softmax_ce(low: Lowerer, op: pd.SoftmaxWithCrossEntropyOp) -> None:
    x, label = op.operands
    rank = len(shape_of(x.type))
    m, total, row = row_stats(low, x, class_axis_of(op, x))
    sm_res, loss_res = op.results
    ident = identity_map(rank)
    stats = [low.buffer_read(m, row), low.buffer_read(total, row)]
    if low.needed(sm_res):
        sm = low.out(sm_res)
        low.generic(
            low.sizes_of(x), [(x, ident, True), *stats], [(sm, ident)],
            lambda s, a, o: [s.div(s.math(xmath.ExpOp, s.sub(a[0], a[1])), a[2])],
        )
    loss = low.out(loss_res)

    def logp(s: Scalar, a: list[SSAValue]) -> SSAValue:
        return s.sub(s.sub(a[0], a[1]), s.math(xmath.LogOp, a[2]))

    class_loss(low, op, x, label, loss, logp, [(x, ident, True), *stats])


@lowers(pd.CrossEntropyOp, fusible=fuse_first_operand)
def _cross_entropy(low: Lowerer, op: pd.CrossEntropyOp) -> None:
    x, label = op.operands
    rank = len(shape_of(x.type))
    loss = low.out(op.results[0])
    class_loss(
        low, op, x, label, loss,
        lambda s, a: s.math(xmath.LogOp, a[0]),
        [(x, identity_map(rank), True)],
    )


result_sizes(pd.SoftmaxWithCrossEntropyOp, pd.CrossEntropyOp)(sizes_of_first)


@pointwise(pd.SquareErrorCostOp, maps=identity_maps)
def _square_error_cost(s: Scalar, op: pd.SquareErrorCostOp, args: list[SSAValue]) -> list[SSAValue]:
    d = s.sub(args[0], args[1])
    return [s.mul(d, d)]


def _one_hot_maps(op: pd.OneHotOp) -> list[DimMap | None]:
    """`one_hot` reads its id at every position of the appended class dimension."""
    return [identity_map(len(shape_of(op.operands[0].type)))]


@pointwise(pd.OneHotOp, maps=_one_hot_maps)
def _one_hot(s: Scalar, op: pd.OneHotOp, args: list[SSAValue]) -> list[SSAValue]:
    # Out-of-range ids give an all-zero row (with allow_out_of_range; otherwise the
    # run-time check `_check_one_hot` reports them as the interpreter raises).
    cls_dim = len(result_shape(op)) - 1
    idx = s.emit(arith.IndexCastOp(s.index(cls_dim), args[0].type))
    hit = s.cmp("eq", args[0], idx)
    elem = elem_of_result(op)
    return [s.select(hit, s.const(1.0, elem), s.const(0.0, elem))]


@lowers(pd.AccuracyOp)
def _accuracy(low: Lowerer, op: pd.AccuracyOp) -> None:
    """One loop over the rows counting those whose label is among their indices."""
    _, indices, label = op.operands
    im, lm = low.read(indices), low.read(label)
    acc_r, correct_r, total_r = op.results
    n, k = low.sizes_of(indices)
    index = IndexType()

    def body(s: Scalar, _ivs: list[SSAValue]) -> None:
        zero = s.const(0, index)

        def row(s1: Scalar, i: SSAValue, c: list[SSAValue]) -> list[SSAValue]:
            lab = load(s1, lm, [i, zero])

            def tap(s2: Scalar, j: SSAValue, hit: list[SSAValue]) -> list[SSAValue]:
                got = s2.convert(load(s2, im, [i, j]), lab.type)
                return [s2.emit(arith.OrIOp(hit[0], s2.cmp("eq", got, lab)))]

            (hit,) = for_range(s1, zero, low.as_value(k), [s1.const(0, i1)], tap)
            return [s1.add(c[0], s1.select(hit, s1.const(1, index), zero))]

        (correct,) = for_range(s, zero, low.as_value(n), [zero], row)
        rows = low.as_value(n)
        f32 = elem_of_result(op, 0)
        # 0 rows give accuracy 0 (the interpreter's choice), not 0/0.
        denom = s.select(s.cmp("eq", rows, zero), s.const(1, index), rows)
        ratio = s.div(to_float(s, correct, f32), to_float(s, denom, f32))
        for r, v in ((acc_r, ratio), (correct_r, s.emit(arith.IndexCastOp(correct, elem_of_result(op, 1)))),
                     (total_r, s.emit(arith.IndexCastOp(rows, elem_of_result(op, 2))))):
            if low.needed(r):
                store(s, v, low.out(r), [])

    parallel(low, [], body)


__all__ = ["class_loss"]
