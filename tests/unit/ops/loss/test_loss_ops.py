"""Loss ops (one_hot, cross_entropy, softmax_with_cross_entropy, square_error_cost):
interpreter kernels against numpy formulas, typing rules, VJP rules against finite
differences (first and second order, hard/soft labels, ignore_index, dynamic batch),
and the Paddle frontend (`F.cross_entropy` on logits with reductions, fluid
`cross_entropy` on probabilities, `F.one_hot` and the legacy `fluid.layers.one_hot`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from pullback.dialects import pd
from pullback.frontend.backward import gradients
from pullback.frontend.ops import loss as L
from pullback.passes.vjp import NON_DIFFERENTIABLE
from pullback.runtime.interpreter import InterpreterError
from pullback.runtime.kernels import load_all
from pullback.testing import check_vjp, run_fetch, run_op
from xdsl.utils.exceptions import VerifyException

load_all()
RNG = np.random.default_rng(5)
_NAMES = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64",
          np.dtype(np.int64): "int64", np.dtype(np.int32): "int32"}


def rand(*shape: int, dtype: Any = np.float64) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def probs(*shape: int, dtype: Any = np.float64) -> np.ndarray:
    """Rows of positive numbers summing to 1 along the last axis."""
    p = RNG.uniform(0.2, 1.0, shape)
    return (p / p.sum(axis=-1, keepdims=True)).astype(dtype)




def result_type(op_cls: type[pd.PdOp], *types: tuple[list[int | None], str], **props: Any) -> str:
    vals = [pd.DataOp.make(f"t{i}", s, d).out for i, (s, d) in enumerate(types)]
    return str(op_cls.make(*vals, **props).results[-1].type)


def log_softmax_ref(z: np.ndarray) -> np.ndarray:
    m = z.max(axis=-1, keepdims=True)
    return z - m - np.log(np.exp(z - m).sum(axis=-1, keepdims=True))


def pick(a: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """`a[..., ids]` row by row, as a column `[N.., 1]`."""
    return np.take_along_axis(a, ids.reshape(a.shape[:-1] + (1,)), axis=-1)


# =================================================================== kernels


def test_one_hot_appends_a_dimension():
    ids = np.array([2, 0, 3], dtype=np.int64)
    np.testing.assert_array_equal(run_op(pd.OneHotOp, ids, dynamic=True, depth=4), np.eye(4)[ids])
    ids2 = np.array([[1, 0]], dtype=np.int32)
    got = run_op(pd.OneHotOp, ids2, depth=3, dtype="float64")
    assert got.shape == (1, 2, 3) and got.dtype == np.float64
    np.testing.assert_array_equal(got, np.eye(3)[ids2])


def test_one_hot_out_of_range():
    ids = np.array([1, 4, -1], dtype=np.int64)
    with pytest.raises(InterpreterError, match="'pd.one_hot': id 4 is out of range \\[0, 4\\)"):
        run_op(pd.OneHotOp, ids, depth=4)
    got = run_op(pd.OneHotOp, ids, depth=4, allow_out_of_range=True)
    np.testing.assert_array_equal(got, [[0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("label_rank", ["N1", "N"])
def test_cross_entropy_hard_labels(dtype, label_rank):
    p = probs(4, 5, dtype=dtype)
    ids = np.array([[1], [0], [4], [2]], dtype=np.int64)
    label = ids if label_rank == "N1" else ids[:, 0]
    got = run_op(pd.CrossEntropyOp, p, label, dynamic=True)
    np.testing.assert_allclose(got, -np.log(pick(p, ids)), rtol=1e-6)
    ignored = run_op(pd.CrossEntropyOp, p, label, ignore_index=0)
    np.testing.assert_allclose(ignored, np.where(ids == 0, 0.0, -np.log(pick(p, ids))), rtol=1e-6)


def test_cross_entropy_soft_labels_and_higher_rank():
    p, t = probs(2, 3, 4), probs(2, 3, 4)
    np.testing.assert_allclose(run_op(pd.CrossEntropyOp, p, t, soft_label=True),
                               -(t * np.log(p)).sum(axis=-1, keepdims=True))
    ids = np.array([[0, 3, 1], [2, 2, 0]], dtype=np.int64)
    np.testing.assert_allclose(run_op(pd.CrossEntropyOp, p, ids), -np.log(pick(p, ids)))


def test_cross_entropy_rejects_bad_labels_at_run_time():
    with pytest.raises(InterpreterError, match="'pd.cross_entropy': label 5 is out of range \\[0, 5\\)"):
        run_op(pd.CrossEntropyOp, probs(2, 5), np.array([[5], [0]], dtype=np.int64))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_with_cross_entropy(dtype):
    z = (rand(4, 5) * 3).astype(dtype)
    ids = np.array([[1], [0], [-100], [2]], dtype=np.int64)
    sm, loss = run_op(pd.SoftmaxWithCrossEntropyOp, z, ids, dynamic=True)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(sm, np.exp(log_softmax_ref(z.astype(np.float64))), rtol=tol)
    want = -pick(log_softmax_ref(z.astype(np.float64)), np.maximum(ids, 0))
    np.testing.assert_allclose(loss, np.where(ids == -100, 0.0, want), rtol=tol)
    t = probs(4, 5, dtype=dtype)
    _, soft = run_op(pd.SoftmaxWithCrossEntropyOp, z, t, soft_label=True)
    np.testing.assert_allclose(soft, -(t * log_softmax_ref(z.astype(np.float64))).sum(-1, keepdims=True), rtol=tol)


def test_softmax_with_cross_entropy_is_stable():
    z = np.array([[1000.0, -1000.0]])
    _, loss = run_op(pd.SoftmaxWithCrossEntropyOp, z, np.array([[1]], dtype=np.int64))
    np.testing.assert_allclose(loss, [[2000.0]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_square_error_cost(dtype):
    x, y = rand(4, 1, dtype=dtype), rand(4, 1, dtype=dtype)
    np.testing.assert_allclose(run_op(pd.SquareErrorCostOp, x, y, dynamic=True), (x - y) * (x - y), rtol=1e-6)


# ================================================================ typing rules


def test_typing_rules():
    assert result_type(pd.OneHotOp, ([None], "int64"), depth=7) == "tensor<?x7xf32>"
    assert result_type(pd.CrossEntropyOp, ([None, 10], "float32"), ([None, 1], "int64")) == "tensor<?x1xf32>"
    assert result_type(pd.CrossEntropyOp, ([None, 10], "float64"), ([8], "int64")) == "tensor<8x1xf64>"
    assert result_type(pd.SoftmaxWithCrossEntropyOp, ([None, 3, 10], "float32"),
                       ([None, 3, 10], "float32"), soft_label=True) == "tensor<?x3x1xf32>"
    assert result_type(pd.SquareErrorCostOp, ([None, 1], "float32"), ([4, 1], "float32")) == "tensor<4x1xf32>"
    # Classes along axis 1 (NCHW logits): the loss keeps a 1 there.
    assert result_type(pd.SoftmaxWithCrossEntropyOp, ([None, 10, 4, 4], "float32"),
                       ([None, 1, 4, 4], "int64"), axis=1) == "tensor<?x1x4x4xf32>"
    assert result_type(pd.CrossEntropyOp, ([None, 10, 4], "float32"), ([None, 4], "int64"),
                       axis=-2) == "tensor<?x1x4xf32>"


@pytest.mark.parametrize(
    "op_cls,types,props,message",
    [
        (pd.OneHotOp, [([3], "float32")], {"depth": 2}, "'pd.one_hot': ids must be int32 or int64"),
        (pd.OneHotOp, [([3], "int64")], {"depth": 0}, "'pd.one_hot': depth must be positive, got 0"),
        (pd.CrossEntropyOp, [([4, 3], "float32"), ([4, 1], "int32")], {}, "'pd.cross_entropy': hard labels must be int64, got int32"),
        (pd.CrossEntropyOp, [([4, 3], "float32"), ([4, 2], "int64")], {}, "must be shaped [4, 1] or [4], got [4, 2]"),
        (pd.CrossEntropyOp, [([4, 3], "float32"), ([5, 1], "int64")], {}, "label shape [5, 1] does not match input shape [4, 3]"),
        (pd.CrossEntropyOp, [([4, 3], "float32"), ([4, 2], "float32")], {"soft_label": True}, "a soft label must have the input's shape [4, 3], got [4, 2]"),
        (pd.SoftmaxWithCrossEntropyOp, [([4, 3], "float32"), ([4, 1], "int64")], {"axis": 0}, "must be shaped [1, 3] or [3], got [4, 1]"),
        (pd.CrossEntropyOp, [([4, 3], "float32"), ([4, 1], "int64")], {"axis": 2}, "axis 2 is out of range for rank 2"),
        (pd.SquareErrorCostOp, [([4, 1], "float32"), ([4], "float32")], {}, "input shape [4, 1] and label shape [4] differ"),
        (pd.SquareErrorCostOp, [([4], "float32"), ([4], "float64")], {}, "'pd.square_error_cost': operands must have the same dtype"),
    ],
)
def test_typing_rules_reject(op_cls, types, props, message):
    with pytest.raises(VerifyException) as e:
        result_type(op_cls, *types, **props)
    assert message in str(e.value)


# ================================================================ VJP rules

_IDS = np.array([[1], [0], [4], [2]], dtype=np.int64)
_VJP_CASES: list[tuple[type[pd.PdOp], Any, dict[str, Any]]] = [
    (pd.CrossEntropyOp, lambda: [probs(4, 5), _IDS], {}),
    (pd.CrossEntropyOp, lambda: [probs(4, 5), _IDS[:, 0].copy()], {"ignore_index": 0}),
    (pd.CrossEntropyOp, lambda: [probs(2, 3, 4), np.array([[[3], [0], [1]], [[2], [2], [0]]])], {}),
    (pd.CrossEntropyOp, lambda: [probs(4, 5), probs(4, 5)], {"soft_label": True}),
    (pd.SoftmaxWithCrossEntropyOp, lambda: [rand(4, 5), _IDS], {}),
    (pd.SoftmaxWithCrossEntropyOp, lambda: [rand(4, 5), np.array([1, -100, 4, 2])], {}),
    (pd.SoftmaxWithCrossEntropyOp, lambda: [rand(4, 5), _IDS], {"ignore_index": 4}),
    (pd.SoftmaxWithCrossEntropyOp, lambda: [rand(2, 3, 4), np.array([[3, 0, 1], [2, 2, 0]])], {}),
    (pd.SoftmaxWithCrossEntropyOp, lambda: [rand(4, 5), probs(4, 5)], {"soft_label": True}),
    (pd.SquareErrorCostOp, lambda: [rand(4, 1), rand(4, 1)], {}),
    # Classes along another axis: NCHW logits (axis 1), negative axes, both label forms.
    (pd.SoftmaxWithCrossEntropyOp, lambda: [rand(2, 3, 2, 2), np.array([[[[0, 2], [1, 1]]], [[[2, 0], [0, 1]]]])], {"axis": 1}),
    (pd.SoftmaxWithCrossEntropyOp, lambda: [rand(2, 3, 2), np.array([[0, 2], [1, 1]])], {"axis": -2, "ignore_index": 1}),
    (pd.SoftmaxWithCrossEntropyOp, lambda: [rand(3, 4), np.moveaxis(probs(4, 3), -1, 0).copy()], {"axis": 0, "soft_label": True}),
    (pd.CrossEntropyOp, lambda: [np.moveaxis(probs(2, 2, 3), -1, 1).copy(), np.array([[[0, 2]], [[1, 1]]])], {"axis": 1}),
    (pd.CrossEntropyOp, lambda: [np.moveaxis(probs(4, 3), -1, 0).copy(), np.moveaxis(probs(4, 3), -1, 0).copy()], {"axis": -2, "soft_label": True}),
]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic_batch"])
@pytest.mark.parametrize("op_cls,make_inputs,props", _VJP_CASES,
                         ids=lambda v: getattr(v, "name", None) or (str(v) if isinstance(v, dict) else ""))
def test_vjp_first_and_second_order(op_cls, make_inputs, props, dynamic):
    check_vjp(op_cls, make_inputs(), props=props, order=2, dynamic_batch=dynamic)


def test_one_hot_is_non_differentiable_and_labels_get_no_gradient():
    assert pd.OneHotOp in NON_DIFFERENTIABLE
    bw = check_vjp(pd.SoftmaxWithCrossEntropyOp, [rand(3, 4), np.array([[0], [3], [1]])])
    assert len(bw.grads) == 1


# ============================================================ frontend




def test_functional_cross_entropy_reductions(static):
    main, feed = static
    z = feed("z", [-1, 5], "float64")
    y = feed("y", [-1], "int64")
    y1 = feed("y1", [-1, 1], "int64")
    t = feed("t", [-1, 5], "float64")
    p = feed("p", [-1, 5], "float64")
    outs = [
        L.cross_entropy(z, y), L.cross_entropy(z, y, reduction="none"),
        L.cross_entropy(z, y1, reduction="none"), L.cross_entropy(z, y, reduction="sum"),
        L.cross_entropy(z, y, ignore_index=2), L.cross_entropy(z, t, soft_label=True),
        L.cross_entropy(p, y, use_softmax=False, reduction="none"),
        L.softmax_with_cross_entropy(z, y1), L.fluid_cross_entropy(p, y1),
    ]
    sl, sm = L.softmax_with_cross_entropy(z, y1, return_softmax=True)  # Paddle: (loss, softmax)
    zv, tv, pv = rand(4, 5), probs(4, 5), probs(4, 5)
    yv = np.array([1, 2, 4, 2], dtype=np.int64)
    got = run_fetch(main, {"z": zv, "y": yv, "y1": yv[:, None], "t": tv, "p": pv}, *outs, sm, sl)
    per_row = -pick(log_softmax_ref(zv), yv)
    want = [
        per_row.mean(), per_row[:, 0], per_row, per_row.sum(),
        per_row[yv != 2].sum() / 2,  # a non-negative ignore_index averages the kept rows
        (-(tv * log_softmax_ref(zv)).sum(-1)).mean(), -np.log(pick(pv, yv))[:, 0], per_row,
        -np.log(pick(pv, yv)), np.exp(log_softmax_ref(zv)), per_row,
    ]
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-10, err_msg=f"output #{k}")
    assert [o.shape for o in outs[:3]] == [[], [-1], [-1, 1]]


def test_cross_entropy_gradient_is_softmax_minus_one_hot(static):
    main, feed = static
    z = feed("z", [-1, 3], "float64")
    y = feed("y", [-1, 1], "int64")
    z.stop_gradient = False
    (gz,) = gradients([L.cross_entropy(z, y)], [z])
    zv, yv = rand(5, 3), np.array([[0], [2], [1], [1], [0]])
    (got,) = run_fetch(main, {"z": zv, "y": yv}, gz)
    np.testing.assert_allclose(got, (np.exp(log_softmax_ref(zv)) - np.eye(3)[yv[:, 0]]) / 5, rtol=1e-10)


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_cross_entropy_along_the_channel_axis(static, backend):
    """F.cross_entropy / softmax_with_cross_entropy with NCHW logits (axis=1) and a
    negative axis: values against numpy, gradients as softmax minus one-hot."""
    import pullback as paddle

    main, feed = static
    z = feed("z", [-1, 3, 2, 4], "float64")
    y = feed("y", [-1, 2, 4], "int64")
    y1 = feed("y1", [-1, 1, 2, 4], "int64")
    z.stop_gradient = False
    mean = L.cross_entropy(z, y, axis=1)
    none = L.cross_entropy(z, y, axis=1, reduction="none")
    keep = L.cross_entropy(z, y1, axis=-3, reduction="none")
    swce = L.softmax_with_cross_entropy(z, y1, axis=1)
    ign = L.cross_entropy(z, y, axis=1, ignore_index=0)
    (gz,) = gradients([mean], [z])
    zv = rand(2, 3, 2, 4)
    yv = RNG.integers(0, 3, (2, 2, 4))
    exe = paddle.static.Executor(paddle.CPUPlace(), backend=backend)
    got = exe.run(main, feed={"z": zv, "y": yv, "y1": yv[:, None]}, fetch_list=[mean, none, keep, swce, ign, gz])
    logp = np.moveaxis(log_softmax_ref(np.moveaxis(zv, 1, -1)), -1, 1)
    per = -np.take_along_axis(logp, yv[:, None], axis=1)  # [N, 1, H, W]
    kept = yv != 0
    want = [per.mean(), per[:, 0], per, per, per[:, 0][kept].sum() / kept.sum()]
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-10, err_msg=f"output #{k}")
    onehot = np.moveaxis(np.eye(3)[yv], -1, 1)
    np.testing.assert_allclose(got[-1], (np.exp(logp) - onehot) / per.size, rtol=1e-10)
    assert none.shape == [-1, 2, 4] and keep.shape == [-1, 1, 2, 4]


def test_square_error_cost_and_one_hot(static):
    main, feed = static
    x, y = feed("x", [-1, 1]), feed("y", [-1, 1])
    ids = feed("ids", [-1], "int64")
    ids1 = feed("ids1", [-1, 1], "int64")
    outs = [L.square_error_cost(x, y), L.one_hot(ids, num_classes=4), L.fluid_one_hot(ids1, 4)]
    xv, yv = rand(3, 1, dtype=np.float32), rand(3, 1, dtype=np.float32)
    iv = np.array([3, 0, 1], dtype=np.int64)
    got = run_fetch(main, {"x": xv, "y": yv, "ids": iv, "ids1": iv[:, None]}, *outs)
    np.testing.assert_allclose(got[0], (xv - yv) ** 2, rtol=1e-6)
    np.testing.assert_array_equal(got[1], np.eye(4)[iv])
    np.testing.assert_array_equal(got[2], np.eye(4)[iv])
    assert outs[1].shape == [-1, 4] and outs[2].shape == [-1, 4] and outs[1].dtype == "float32"


def test_frontend_errors(static):
    main, feed = static
    z = feed("z", [-1, 5])
    y = feed("y", [-1, 1], "int64")
    with pytest.raises(ValueError, match="cross_entropy: weight must have shape \\[5\\]"):
        L.cross_entropy(z, y, weight=z)
    with pytest.raises(ValueError, match="reduction must be one of"):
        L.cross_entropy(z, y, reduction="avg")
    with pytest.raises(ValueError, match="cross_entropy: axis 2 is out of range"):
        L.cross_entropy(z, y, axis=2)
    with pytest.raises(TypeError, match="cross_entropy: hard labels must be int64, got int32"):
        L.cross_entropy(z, feed("y32", [-1, 1], "int32"))
    with pytest.raises(ValueError, match="must be shaped \\[\\?, 1\\] or \\[\\?\\], got \\[\\?, 3\\]"):
        L.cross_entropy(z, feed("y3", [-1, 3], "int64"))
    with pytest.raises(TypeError, match="one_hot: x must be int32 or int64, got float32"):
        L.one_hot(z, 3)
    with pytest.raises(ValueError, match="one_hot: num_classes must be a positive int"):
        L.one_hot(y, 0)
    with pytest.raises(ValueError, match="fluid.layers.one_hot needs ids shaped \\[..., 1\\]"):
        L.fluid_one_hot(feed("ids", [-1, 2], "int64"), 3)
    with pytest.raises(TypeError, match="square_error_cost: 'label' must be float32 or float64"):
        L.square_error_cost(z, y)
