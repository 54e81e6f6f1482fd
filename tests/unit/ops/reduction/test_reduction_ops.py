"""Reductions, add_n, softmax and log_softmax: interpreter kernels against numpy
formulas (float32/float64, dynamic batch), typing rules, VJP rules against finite
differences (first and second order, static and dynamic batch), and the Paddle
frontend (`paddle.mean/sum/max/add_n`, `F.softmax/log_softmax`, fluid `reduce_*`)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from pullback.dialects import pd
from pullback.frontend.backward import gradients
from pullback.frontend.ops import reduction as R
from pullback.runtime.kernels import load_all
from pullback.testing import check_vjp, run_fetch, run_op
from xdsl.utils.exceptions import VerifyException

load_all()
RNG = np.random.default_rng(11)
_NAMES = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64",
          np.dtype(np.int64): "int64", np.dtype(np.int32): "int32"}


def rand(*shape: int, dtype: Any = np.float64) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)




def result_type(op_cls: type[pd.PdOp], *types: tuple[list[int | None], str], **props: Any) -> str:
    vals = [pd.DataOp.make(f"t{i}", s, d).out for i, (s, d) in enumerate(types)]
    return str(op_cls.make(*vals, **props).results[0].type)




def softmax_ref(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


# =================================================================== kernels


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dynamic", [False, True])
def test_reduction_kernels(dtype, dynamic):
    x = rand(2, 3, 4, dtype=dtype)
    tol = dict(rtol=1e-5) if dtype == np.float32 else dict(rtol=1e-12)
    np.testing.assert_allclose(run_op(pd.MeanOp, x, dynamic=dynamic), x.sum() / 24, **tol)
    np.testing.assert_allclose(run_op(pd.ReduceSumOp, x, dynamic=dynamic, axis=[1]),
                               x[:, 0] + x[:, 1] + x[:, 2], **tol)
    np.testing.assert_allclose(run_op(pd.ReduceSumOp, x, dynamic=dynamic, axis=[0, -1], keepdim=True),
                               x.sum(axis=(0, 2)).reshape(1, 3, 1), **tol)
    np.testing.assert_allclose(run_op(pd.ReduceSumOp, x, dynamic=dynamic), x.sum(), **tol)
    np.testing.assert_allclose(run_op(pd.ReduceMeanOp, x, dynamic=dynamic, axis=[2]),
                               x.sum(axis=2) / 4, **tol)
    np.testing.assert_allclose(run_op(pd.ReduceMaxOp, x, dynamic=dynamic, axis=[0]),
                               np.where(x[0] > x[1], x[0], x[1]), **tol)
    np.testing.assert_allclose(run_op(pd.SumOp, x, 2 * x, dynamic=dynamic), 3 * x, **tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_kernels(dtype, axis):
    x = rand(3, 5, dtype=dtype) * 10
    tol = 1e-5 if dtype == np.float32 else 1e-12
    p = run_op(pd.SoftmaxOp, x, dynamic=True, axis=axis)
    np.testing.assert_allclose(p.sum(axis=axis), 1.0, rtol=tol)
    np.testing.assert_allclose(p, np.exp(x) / np.exp(x).sum(axis=axis, keepdims=True), rtol=tol)
    lp = run_op(pd.LogSoftmaxOp, x, dynamic=True, axis=axis)
    np.testing.assert_allclose(lp, x - np.log(np.exp(x).sum(axis=axis, keepdims=True)), rtol=tol, atol=tol)


def test_softmax_is_stable_for_large_logits():
    x = np.array([[1000.0, 1000.0, -1000.0]])
    np.testing.assert_allclose(run_op(pd.SoftmaxOp, x), [[0.5, 0.5, 0.0]])
    np.testing.assert_allclose(run_op(pd.LogSoftmaxOp, x), [[-np.log(2), -np.log(2), -2000 - np.log(2)]])


def test_integer_sum_and_max():
    ids = np.array([[1, 5], [7, 2]], dtype=np.int64)
    np.testing.assert_array_equal(run_op(pd.ReduceSumOp, ids, axis=[0]), [8, 7])
    np.testing.assert_array_equal(run_op(pd.ReduceMaxOp, ids, axis=[1]), [5, 7])


# ================================================================ typing rules


def test_typing_rules():
    assert result_type(pd.MeanOp, ([None, 4], "float32")) == "tensor<f32>"
    assert result_type(pd.ReduceSumOp, ([None, 4, 3], "float32"), axis=[1]) == "tensor<?x3xf32>"
    assert result_type(pd.ReduceMeanOp, ([None, 4, 3], "float64"), axis=[-1], keepdim=True) == "tensor<?x4x1xf64>"
    assert result_type(pd.ReduceMaxOp, ([2, 3], "int64")) == "tensor<i64>"
    assert result_type(pd.SumOp, ([None, 3], "float32"), ([5, 3], "float32")) == "tensor<5x3xf32>"
    assert result_type(pd.SoftmaxOp, ([None, 3], "float32"), axis=0) == "tensor<?x3xf32>"


@pytest.mark.parametrize(
    "op_cls,types,props,message",
    [
        (pd.ReduceSumOp, [([2, 3], "float32")], {"axis": [2]}, "'pd.reduce_sum': axis 2 is out of range for rank 2"),
        (pd.ReduceMaxOp, [([2, 3], "float32")], {"axis": [1, -1]}, "'pd.reduce_max': repeated axis in [1, -1]"),
        (pd.MeanOp, [([2, 3], "int64")], {}, "'pd.mean': x must be a float or complex tensor"),
        (pd.ReduceMeanOp, [([2, 3], "int32")], {}, "'pd.reduce_mean': x must be a float or complex tensor"),
        (pd.SumOp, [([2, 3], "float32"), ([2, 4], "float32")], {}, "'pd.sum': operand shapes [2, 3] and [2, 4] differ"),
        (pd.SumOp, [([3], "float32"), ([3], "float64")], {}, "'pd.sum': operands must have the same dtype"),
        (pd.SoftmaxOp, [([2, 3], "float32")], {"axis": -3}, "'pd.softmax': axis -3 is out of range for rank 2"),
        (pd.LogSoftmaxOp, [([2, 3], "int64")], {}, "'pd.log_softmax': x must be float32 or float64"),
    ],
)
def test_typing_rules_reject(op_cls, types, props, message):
    with pytest.raises(VerifyException) as e:
        result_type(op_cls, *types, **props)
    assert message in str(e.value)


def test_sum_needs_an_operand():
    with pytest.raises(VerifyException, match="'pd.sum': needs at least one operand"):
        pd.SumOp.make()


# ================================================================ VJP rules

_VJP_CASES: list[tuple[type[pd.PdOp], tuple[int, ...], dict[str, Any]]] = [
    (pd.MeanOp, (3, 4), {}),
    (pd.ReduceSumOp, (3, 4), {}),
    (pd.ReduceSumOp, (2, 3, 4), {"axis": [1]}),  # kept axes 0 and 2: not contiguous
    (pd.ReduceSumOp, (2, 3, 4), {"axis": [1], "keepdim": True}),
    (pd.ReduceSumOp, (2, 3, 4), {"axis": [0, 2]}),
    (pd.ReduceSumOp, (2, 3, 4), {"axis": [-1]}),
    (pd.ReduceMeanOp, (2, 3, 4), {"axis": [0]}),  # the (dynamic) batch is averaged
    (pd.ReduceMeanOp, (2, 3, 4), {"axis": [0, 1], "keepdim": True}),
    (pd.ReduceMeanOp, (2, 3, 4), {"axis": [-1]}),
    (pd.ReduceMaxOp, (2, 3, 4), {"axis": [1]}),
    (pd.ReduceMaxOp, (3, 4), {}),
    (pd.SoftmaxOp, (2, 3, 4), {"axis": 1}),
    (pd.SoftmaxOp, (3, 5), {}),
    (pd.LogSoftmaxOp, (3, 5), {}),
    (pd.LogSoftmaxOp, (3, 5), {"axis": 0}),
]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic_batch"])
@pytest.mark.parametrize("op_cls,shape,props", _VJP_CASES,
                         ids=lambda v: getattr(v, "name", None) or str(v))
def test_vjp_first_and_second_order(op_cls, shape, props, dynamic):
    check_vjp(op_cls, [rand(*shape)], props=props, order=2, dynamic_batch=dynamic)


def test_add_n_vjp():
    check_vjp(pd.SumOp, [rand(2, 3), rand(2, 3), rand(2, 3)], order=2, dynamic_batch=True)


def test_mean_gradient_uses_runtime_batch_size(static):
    """One backward program serves every batch size: counts come from the run-time
    shape, never from a baked-in constant."""
    main, feed = static
    x = feed("x", [-1, 13], "float64")
    x.stop_gradient = False
    (g_all,) = gradients([R.mean(x)], [x])
    (g_batch,) = gradients([R.mean(x, axis=0)], [x])
    for batch in (2, 5):
        got = run_fetch(main, {"x": rand(batch, 13)}, g_all, g_batch)
        np.testing.assert_allclose(got[0], np.full((batch, 13), 1 / (13 * batch)))
        np.testing.assert_allclose(got[1], np.full((batch, 13), 1 / batch))


def test_reduce_max_splits_ties_evenly(static):
    main, feed = static
    x = feed("x", [2, 3], "float64")
    x.stop_gradient = False
    (gx,) = gradients([R.max(x, axis=1)], [x])
    (got,) = run_fetch(main, {"x": np.array([[1.0, 3.0, 3.0], [5.0, 0.0, 1.0]])}, gx)
    np.testing.assert_array_equal(got, [[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]])


# ============================================================ frontend


def test_frontend_reductions(static):
    main, feed = static
    x = feed("x", [-1, 3, 4])
    b = feed("b", [-1, 3], "bool")
    i = feed("i", [-1, 3], "int32")
    outs = [
        R.mean(x), R.mean(x, axis=1), R.mean(x, axis=[0, 2], keepdim=True), R.sum(x),
        R.sum(x, axis=-1, keepdim=True), R.sum(x, dtype="float64"), R.max(x, axis=(0, 1)),
        R.sum(b), R.sum(i, axis=0), R.add_n([x, x, x]), R.add_n(x),
        R.reduce_sum(x, dim=1), R.reduce_mean(x, dim=[1, 2], keep_dim=True), R.reduce_max(x),
        R.FLUID_LAYERS["mean"](x),
        R.softmax(x, axis=1), R.log_softmax(x), R.FLUID_LAYERS["softmax"](x, axis=0),
        R.softmax(x, dtype="float64"),
    ]
    xv = rand(2, 3, 4, dtype=np.float32)
    bv = np.array([[True, False, True], [True, True, False]])
    iv = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32)
    got = run_fetch(main, {"x": xv, "b": bv, "i": iv}, *outs)
    want = [
        xv.mean(), xv.mean(axis=1), xv.mean(axis=(0, 2), keepdims=True), xv.sum(),
        xv.sum(axis=-1, keepdims=True), xv.astype(np.float64).sum(), xv.max(axis=(0, 1)),
        4, [5, 7, 9], 3 * xv, xv, xv.sum(axis=1), xv.mean(axis=(1, 2), keepdims=True), xv.max(),
        xv.mean(), softmax_ref(xv, 1), np.log(softmax_ref(xv, -1)), softmax_ref(xv, 0),
        softmax_ref(xv.astype(np.float64), -1),
    ]
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=f"output #{k}")
    assert got[7].dtype == np.int64 and got[8].dtype == np.int64  # Paddle sums bool/int32 in int64
    assert got[5].dtype == np.float64 and got[18].dtype == np.float64
    assert outs[0].op.type == "reduce_mean" and outs[0].shape == []  # Paddle's type for paddle.mean
    assert outs[0].name == "mean_0.tmp_0"


def test_frontend_errors(static):
    main, feed = static
    x = feed("x", [-1, 3])
    ids = feed("ids", [-1, 3], "int64")
    with pytest.raises(ValueError, match="reduce_sum: axis 2 is out of range for a 2-D input"):
        R.sum(x, axis=2)
    with pytest.raises(ValueError, match="reduce_max: repeated axis in \\[0, -2\\]"):
        R.max(x, axis=[0, -2])
    with pytest.raises(TypeError, match="reduce_sum: axis must be an int or a list of ints"):
        R.sum(x, axis="1")
    with pytest.raises(TypeError, match="mean: 'x' must be float32 or float64, got int64"):
        R.mean(ids)
    with pytest.raises(TypeError, match="softmax: axis must be an int"):
        R.softmax(x, axis=[1])
    with pytest.raises(ValueError, match="add_n: inputs must not be empty"):
        R.add_n([])
    with pytest.raises(ValueError, match="'pd.sum': operand shapes"):
        R.add_n([x, feed("y", [-1, 4])])


# ============================================== products with exact zeros (fuzzer)


@pytest.mark.parametrize("zeros", [[], [1], [1, 3], [0, 1, 2, 3]])
@pytest.mark.parametrize("axis,keepdim", [([], False), ([1], True), ([0], False)])
def test_reduce_prod_gradient_is_exact_at_zeros(zeros, axis, keepdim):
    """prod's gradient is the product of the others, also where x has zeros (Paddle
    gives NaN there, 0/0): one zero in the reduced set, several, all."""
    x = rand(2, 4) + 1.0
    x[0, zeros] = 0.0
    # Second order is exact with at most one zero per reduced set.
    order = 2 if len(zeros) <= 1 or axis == [0] else 1
    check_vjp(pd.ReduceProdOp, [x], props={"axis": axis, "keepdim": keepdim}, order=order)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("zeros", [[0], [2], [1, 3], [0, 1, 2, 3, 4]])
def test_cumprod_gradient_is_exact_at_zeros(zeros, exclusive, reverse):
    """cumprod's gradient before, at and after the first zero of a line in scan
    order (a `cumprod(x - x)` found by the differential fuzzer gave NaN)."""
    x = rand(2, 5) + 1.0
    x[1, zeros] = 0.0
    x[0, zeros[-1]] = 0.0
    check_vjp(pd.CumprodOp, [x], props={"axis": 1, "exclusive": exclusive, "reverse": reverse},
              order=2 if len(zeros) == 1 else 1)
    check_vjp(pd.CumprodOp, [x.T.copy()], props={"axis": 0, "exclusive": exclusive, "reverse": reverse})


@pytest.mark.parametrize("op_cls", [pd.ReduceSumOp, pd.ReduceMeanOp, pd.ReduceMaxOp, pd.ReduceMinOp, pd.ReduceProdOp])
@pytest.mark.parametrize("axis", [[0], [-1]])
def test_reducing_a_0d_value_over_its_only_axis_is_the_value(op_cls, axis):
    """Axis 0 / -1 of a 0-d value names the value itself (Paddle), not numpy's AxisError."""
    x = np.array(2.5)
    for keepdim in (False, True):
        got = run_op(op_cls, x, axis=axis, keepdim=keepdim)
        assert got.shape == () and got == 2.5
