"""Indexing ops (dialects/pd/indexing.py, frontend/ops/indexing.py): VJP rules of
every op against float64 finite differences to second order (static and dynamic
batch), kernels' index checks, the Paddle functions against numpy with gradients
checked by finite differences (eager), `x[index]` with steps and advanced indices,
`x[index] = value` in place with Paddle's gradients, and static programs.

`Tensor.__getitem__` (eager) and `Variable.__getitem__` (static), the basic forms:
values against numpy indexing, gradients scattered back to the indexed places,
static programs through the Executor, and errors for the forms that are not
supported."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pullback as paddle
import pytest
from pullback.dialects import pd
from pullback.frontend import core
from pullback.runtime.kernels import load_all
from pullback.testing import check_vjp, fd_grad, run_fetch, run_op
from xdsl.utils.exceptions import VerifyException

load_all()
R = np.random.default_rng(5)
X = R.standard_normal((3, 4))
E = pd.STRIDED_END_NEG


@pytest.fixture(autouse=True)
def eager() -> Any:
    core.disable_static()
    yield
    core.disable_static()


VJP_CASES = [
    (pd.GatherOp, lambda: [X, np.array([2, 0, 2])], {"axis": 0}),
    (pd.GatherOp, lambda: [X, np.array([3, 1])], {"axis": 1}),
    (pd.GatherOp, lambda: [X, np.array(1)], {"axis": 1}),
    (pd.IndexAddOp, lambda: [X, np.array([1, 1]), R.standard_normal((3, 2))], {"axis": 1}),
    (pd.GatherNdOp, lambda: [X, np.array([[0, 1], [2, 3], [0, 1]])], {}),
    (pd.GatherNdOp, lambda: [X, np.array([[2], [0]])], {}),
    (pd.ScatterNdAddOp, lambda: [X, np.array([[0, 1], [2, 3], [0, 1]]), R.standard_normal(3)], {}),
    (pd.ScatterOp, lambda: [X, np.array([2, 0]), R.standard_normal((2, 4))], {}),
    (pd.ScatterOp, lambda: [X, np.array([2, 0]), R.standard_normal((2, 4))], {"overwrite": False}),
    (pd.TakeAlongAxisOp, lambda: [X, np.array([[0, 3], [1, 1], [2, 0]])], {"axis": 1}),
    (pd.PutAlongAxisOp, lambda: [X, np.array([[0, 3], [1, 2], [2, 0]]), R.standard_normal((3, 2))], {"axis": 1}),
    (pd.PutAlongAxisOp, lambda: [X, np.array([[0, 3], [1, 2], [2, 0]]), R.standard_normal((3, 2))],
     {"axis": 1, "reduce": "add"}),
    (pd.PutAlongAxisOp, lambda: [X, np.array([[0, 3], [1, 2], [2, 0]]), R.standard_normal((3, 2))],
     {"axis": 1, "reduce": "mul"}),
    (pd.StridedSliceOp, lambda: [X], {"axes": [1], "starts": [-1], "ends": [E], "strides": [-2]}),
    (pd.StridedSliceOp, lambda: [X], {"axes": [0, 1], "starts": [0, 1], "ends": [3, 4], "strides": [2, 2]}),
    (pd.SetValueOp, lambda: [X, R.standard_normal((3, 2))],
     {"axes": [1], "starts": [-1], "ends": [E], "strides": [-2]}),
    (pd.TrilTriuOp, lambda: [X], {"diagonal": 1, "lower": False}),
    (pd.TrilTriuOp, lambda: [X], {"diagonal": -1}),
]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic_batch"])
@pytest.mark.parametrize("op_cls,make,props", VJP_CASES, ids=lambda v: getattr(v, "name", None) or (
    str(v) if isinstance(v, dict) else ""))
def test_vjp_first_and_second_order(op_cls, make, props, dynamic):
    check_vjp(op_cls, make(), props=props, order=2, dynamic_batch=dynamic)


def test_kernels_reject_out_of_range_indices():
    with pytest.raises(IndexError, match="'pd.gather': index -?[0-9]+ is out of range \\[0, 3\\)"):
        run_op(pd.GatherOp, X, np.array([3]), axis=0)
    with pytest.raises(IndexError, match="'pd.take_along_axis'"):
        run_op(pd.TakeAlongAxisOp, X, np.array([[-1]] * 3), axis=1)
    with pytest.raises(VerifyException, match="'pd.scatter_nd_add': updates has shape \\[3\\], expected \\[2\\]"):
        pd.ScatterNdAddOp.make(*[pd.DataOp.make(n, s, d).out for n, s, d in
                                 (("x", [3, 4], "float64"), ("i", [2, 2], "int64"), ("u", [3], "float64"))])


# ------------------------------------------------------------------ frontend


def check(fn: Callable[[Any], Any], x: np.ndarray, ref: Callable[[np.ndarray], np.ndarray]) -> None:
    """fn(x) equals ref(x), and paddle.grad of sum(fn(x) * P) equals finite differences."""
    out = fn(paddle.to_tensor(x))
    np.testing.assert_allclose(out.numpy(), ref(x), rtol=1e-12)
    proj = R.uniform(0.5, 1.5, out.shape)

    def scalar(a: np.ndarray) -> float:
        return float((ref(a) * proj).sum())

    t = paddle.to_tensor(x, stop_gradient=False)
    (g,) = paddle.grad((fn(t) * paddle.to_tensor(proj)).sum(), [t])
    np.testing.assert_allclose(g.numpy(), fd_grad(scalar, x), rtol=1e-6, atol=1e-8)


I = paddle.to_tensor


def _put(x: np.ndarray, idx: np.ndarray, v: float) -> np.ndarray:
    out = x.copy()
    np.put_along_axis(out, idx, v, 1)
    return out


def _scatter(x: np.ndarray) -> np.ndarray:
    out = x.copy()
    out[[2, 0]] = 0
    out[[2, 0]] += np.ones((2, 4))
    return out


FRONTEND = [
    ("gather", lambda t: paddle.gather(t, I([2, 0, 2])), lambda a: a[[2, 0, 2]]),
    ("gather_axis", lambda t: paddle.gather(t, I([3, 1]), axis=1), lambda a: a[:, [3, 1]]),
    ("index_select", lambda t: paddle.index_select(t, I([1, 1]), axis=-1), lambda a: a[:, [1, 1]]),
    ("gather_nd", lambda t: paddle.gather_nd(t, I([[0, 1], [2, 3]])), lambda a: a[[0, 2], [1, 3]]),
    ("take_along_axis", lambda t: paddle.take_along_axis(t, I([[0, 3]]), 1),
     lambda a: np.take_along_axis(a, np.array([[0, 3]] * 3), 1)),
    ("put_along_axis", lambda t: paddle.put_along_axis(t, I([[1], [2], [0]]), 0.5, 1),
     lambda a: _put(a, np.array([[1], [2], [0]]), 0.5)),
    ("scatter_accumulate", lambda t: paddle.scatter(t, I([2, 0]), paddle.ones([2, 4], "float64"), overwrite=False),
     _scatter),
    ("masked_select", lambda t: paddle.masked_select(t, I(X > 0)), lambda a: a[X > 0]),
    ("masked_fill", lambda t: paddle.masked_fill(t, I(X > 0), 2.0), lambda a: np.where(X > 0, 2.0, a)),
    ("triu", lambda t: paddle.triu(t, 1), lambda a: np.triu(a, 1)),
    ("tril", lambda t: t.tril(-1), lambda a: np.tril(a, -1)),
    ("diag2d", lambda t: paddle.diag(t, offset=1), lambda a: np.diag(a, 1)),
    ("diag1d", lambda t: paddle.diag(t[0], offset=-1, padding_value=3.0),
     lambda a: np.diag(a[0], -1) + 3.0 * (1 - np.diag(np.ones(4), -1))),
    ("flip", lambda t: paddle.flip(t, [0, 1]), lambda a: a[::-1, ::-1]),
    ("roll", lambda t: paddle.roll(t, [1, -1], [0, 1]), lambda a: np.roll(a, [1, -1], [0, 1])),
    ("roll_flat", lambda t: paddle.roll(t, 5), lambda a: np.roll(a, 5)),
    ("stack", lambda t: paddle.stack([t, t * 2.0], axis=1), lambda a: np.stack([a, 2 * a], 1)),
    ("unstack", lambda t: paddle.unstack(t, 1)[2], lambda a: a[:, 2]),
    ("chunk", lambda t: paddle.chunk(t, 2, axis=1)[1], lambda a: a[:, 2:]),
    ("tile", lambda t: paddle.tile(t, [2, 1, 3]), lambda a: np.tile(a, [2, 1, 3])),
    ("repeat_interleave", lambda t: paddle.repeat_interleave(t, 2, axis=0), lambda a: np.repeat(a, 2, 0)),
    ("repeat_interleave_flat", lambda t: t.repeat_interleave(3), lambda a: np.repeat(a, 3)),
    ("repeat_interleave_tensor", lambda t: paddle.repeat_interleave(t, I([1, 0, 2]), 0),
     lambda a: np.repeat(a, [1, 0, 2], 0)),
    ("broadcast_tensors", lambda t: paddle.broadcast_tensors([t[:1], t])[0], lambda a: np.broadcast_to(a[:1], a.shape)),
    ("T", lambda t: t.T, lambda a: a.T),
    ("clone", lambda t: t.clone(), lambda a: a),
    ("steps", lambda t: t[::-1, 1::2], lambda a: a[::-1, 1::2]),
    ("negative_steps", lambda t: t[2:0:-1, -1::-3], lambda a: a[2:0:-1, -1::-3]),
    ("int_then_step", lambda t: t[1, ::2], lambda a: a[1, ::2]),
    ("list_index", lambda t: t[[2, 0]], lambda a: a[[2, 0]]),
    ("tensor_index_axis1", lambda t: t[:, I([3, 0, 3])], lambda a: a[:, [3, 0, 3]]),
    ("tensor_index_2d", lambda t: t[I([[0, 1], [2, 2]])], lambda a: a[np.array([[0, 1], [2, 2]])]),
    ("two_tensor_indices", lambda t: t[I([0, 2]), I([3, 1])], lambda a: a[[0, 2], [3, 1]]),
    ("bool_mask", lambda t: t[I(X > 0.5)], lambda a: a[X > 0.5]),
    ("row_mask", lambda t: t[I(np.array([True, False, True]))], lambda a: a[[True, False, True]]),
]


@pytest.mark.parametrize("name,fn,ref", FRONTEND, ids=[c[0] for c in FRONTEND])
def test_frontend_values_and_gradients(name, fn, ref):
    check(fn, X.copy(), ref)


def test_setitem_in_place_with_paddle_gradients():
    a = paddle.to_tensor(X, stop_gradient=False)
    v = paddle.to_tensor(np.array([5.0, 6.0, 7.0]), stop_gradient=False)
    b = a * 1.0
    b[:, 1] = v
    b[0, ::2] = 0.5
    b[b > 6.5] = -1.0
    want = X.copy()
    want[:, 1] = [5, 6, 7]
    want[0, ::2] = 0.5
    want[want > 6.5] = -1
    np.testing.assert_allclose(b.numpy(), want)
    (b * b).sum().backward()
    ga = 2 * X
    ga[:, 1] = 0
    ga[0, ::2] = 0
    np.testing.assert_allclose(a.grad.numpy(), ga, rtol=1e-12)
    np.testing.assert_allclose(v.grad.numpy(), [10, 12, 0], rtol=1e-12)  # 7 was overwritten by -1
    leaf = paddle.to_tensor(X, stop_gradient=False)
    with pytest.raises(ValueError, match="Leaf Tensor .* can't use inplace strategy"):
        leaf[0] = 1.0
    c = paddle.zeros([2, 3])
    c[1] = paddle.to_tensor([1.0, 2.0, 3.0])
    c[:, 0] = 9
    np.testing.assert_array_equal(c.numpy(), [[9, 0, 0], [9, 2, 3]])


def test_numel_nonzero_assign_broadcast_shape():
    assert int(paddle.numel(paddle.to_tensor(X))) == 12
    nz = paddle.nonzero(paddle.to_tensor(X > 0))
    np.testing.assert_array_equal(nz.numpy(), np.argwhere(X > 0))
    rows, cols = paddle.nonzero(paddle.to_tensor(X > 0), as_tuple=True)
    np.testing.assert_array_equal(rows.numpy(), np.nonzero(X > 0)[0])
    np.testing.assert_array_equal(cols.numpy(), np.nonzero(X > 0)[1])
    np.testing.assert_array_equal(paddle.assign(np.array([[1, 2]])).numpy(), [[1, 2]])
    assert paddle.assign([1.5]).dtype == "float32"
    assert paddle.broadcast_shape([2, 1, 3], [4, 1]) == [2, 4, 3]
    idx = paddle.index_add(paddle.zeros([3, 2]), I([0, 0]), 0, paddle.ones([2, 2]))
    np.testing.assert_array_equal(idx.numpy(), [[2, 2], [0, 0], [0, 0]])
    nd = paddle.scatter_nd(I([[1], [1]]), paddle.ones([2, 3]), [3, 3])
    np.testing.assert_array_equal(nd.numpy(), [[0, 0, 0], [2, 2, 2], [0, 0, 0]])


def test_argument_errors():
    x = paddle.to_tensor(X)
    with pytest.raises(TypeError, match="gather: 'index' must be int32 or int64"):
        paddle.gather(x, paddle.to_tensor([0.0]))
    with pytest.raises(ValueError, match="chunk: dimension 1 of size 4 is not divisible by 3"):
        paddle.chunk(x, 3, axis=1)
    with pytest.raises(ValueError, match="stack: every input must have the same shape"):
        paddle.stack([x, x[:2]])
    with pytest.raises(ValueError, match="put_along_axis: reduce must be"):
        paddle.put_along_axis(x, I([[0]]), 1.0, 1, reduce="mean")
    with pytest.raises(ValueError, match="triu: x must have at least 2 dimensions"):
        paddle.triu(x[0])
    with pytest.raises(ValueError, match="__getitem__: slice step cannot be zero"):
        x[::0]
    with pytest.raises(TypeError, match="masked_fill: mask must be bool"):
        paddle.masked_fill(x, x, 1.0)


def test_static_program_through_the_executor():
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        v = paddle.static.data("v", [None, 4], "float64")
        v.stop_gradient = False
        idx = paddle.static.data("i", [2], "int64")
        g = paddle.gather(v, idx, axis=1)
        f = v[:, ::-1]
        m = paddle.triu(v)
        s = paddle.stack([v, v], 0)
        w = v * 1.0
        w[:, 0] = 3.0
        sel = paddle.masked_select(v, v > 0)
        (gv,) = paddle.static.gradients([(w * w).sum() + (f * g.sum()).sum()], [v])
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    out = exe.run(main, feed={"v": X, "i": np.array([3, 1])}, fetch_list=[g, f, m, s, w, sel, gv])
    np.testing.assert_allclose(out[0], X[:, [3, 1]])
    np.testing.assert_allclose(out[1], X[:, ::-1])
    np.testing.assert_allclose(out[2], np.triu(X))
    np.testing.assert_allclose(out[3], np.stack([X, X]))
    want_w = X.copy()
    want_w[:, 0] = 3
    np.testing.assert_allclose(out[4], want_w)
    np.testing.assert_allclose(out[5], X[X > 0])
    # d/dv [sum(w^2) + sum(flip(v)) * sum(gather(v))]
    gw = 2 * want_w
    gw[:, 0] = 0
    gfl = np.full_like(X, X[:, [3, 1]].sum())
    ggat = np.zeros_like(X)
    ggat[:, [3, 1]] = X.sum()
    np.testing.assert_allclose(out[6], gw + gfl + ggat, rtol=1e-12)


def test_static_detach_stops_the_gradient():
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [2, 2], "float64")
        x.stop_gradient = False
        y = (x * x).detach() * x + x * x
        (g,) = paddle.static.gradients([y.sum()], [x])
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    (got,) = exe.run(main, feed={"x": X[:2, :2]}, fetch_list=[g])
    np.testing.assert_allclose(got, X[:2, :2] ** 2 + 2 * X[:2, :2], rtol=1e-12)


# ------------------------------------------- x[index]: Tensor / Variable __getitem__
# (the autouse `eager` fixture above puts every test in eager mode; the static
# ones switch with the `static` fixture of conftest.py)

A = np.arange(24.0).reshape(2, 3, 4)

INDICES = [
    1, -1, (1, 0), (slice(1, None), 0), (Ellipsis, 1), (None, 0, slice(-2, None)),
    (0, 1, 2), (-1, -1, -1), slice(None), Ellipsis, (0, None, slice(1, 3), None),
    (slice(None), slice(-2, 10), slice(-100, 2)), (slice(2, 1),), (np.int64(1), Ellipsis, None),
]


@pytest.mark.parametrize("index", INDICES, ids=[repr(i) for i in INDICES])
def test_eager_values_and_gradients_match_numpy(index):
    x = paddle.to_tensor(A, dtype="float64", stop_gradient=False)
    y = x[index]
    ref = A[index]
    assert y.shape == list(ref.shape)
    np.testing.assert_array_equal(y.numpy(), ref)
    # The gradient of sum(y * w) puts w where numpy's indexing reads.
    w = np.arange(1.0, ref.size + 1).reshape(ref.shape)
    (g,) = paddle.grad((y * paddle.to_tensor(w)).sum(), x) if ref.size else (None,)
    if g is not None:
        expected = np.zeros_like(A)
        expected[index] += w
        np.testing.assert_array_equal(g.numpy(), expected)


def test_backward_puts_ones_in_the_indexed_places():
    x = paddle.to_tensor(A, stop_gradient=False)
    x[1:, 0].sum().backward()
    expected = np.zeros_like(A)
    expected[1, 0, :] = 1.0
    np.testing.assert_array_equal(x.grad.numpy(), expected)


def test_int_index_gives_0d_and_iteration_stops_at_the_end():
    x = paddle.to_tensor([1.0, 2.0, 3.0])
    assert x[0].shape == [] and float(x[-1]) == 3.0
    assert [float(v) for v in x] == [1.0, 2.0, 3.0]  # iteration ends on IndexError


def test_indexing_a_copy_is_a_new_tensor_on_the_graph():
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    y = x[:]
    assert y is not x and not y.is_leaf
    (g,) = paddle.grad((y * y).sum(), x)
    np.testing.assert_array_equal(g.numpy(), [2.0, 4.0])
    s = paddle.to_tensor(5.0, stop_gradient=False)
    assert s[...].shape == [] and float(s[None]) == 5.0


@pytest.mark.parametrize(
    "index,exc,fragment",
    [
        (True, TypeError, "got a bool index"),
        (1.0, TypeError, "got a float index"),
        ((0, 0, 0, 0), IndexError, "too many indices for a 3-D tensor"),
        (2, IndexError, "index 2 is out of range for dimension 0 of size 2"),
        ((0, -4), IndexError, "index -4 is out of range for dimension 1 of size 3"),
        ((Ellipsis, Ellipsis), IndexError, "single ellipsis"),
        (slice("a", None), TypeError, "slice bounds must be ints"),
    ],
)
def test_unsupported_indices_raise(index, exc, fragment):
    x = paddle.to_tensor(A)
    with pytest.raises(exc, match=fragment):
        x[index]


def test_static_indexing_through_the_executor(static):
    main, feed = static
    v = feed("v", [-1, 3, 4])
    y = v[-1, 1:, None]
    z = v[0]
    w = v[:, -2:]
    assert y.shape == [2, 1, 4] and z.shape == [3, 4] and w.shape == [-1, 2, 4]
    a = A.astype("float32")
    got = run_fetch(main, {"v": a}, y, z, w)
    for g, ref in zip(got, [a[-1, 1:, None], a[0], a[:, -2:]]):
        np.testing.assert_array_equal(g, ref)


def test_static_indexing_gradient(static):
    main, feed = static
    v = feed("v", [2, 3, 4])
    v.stop_gradient = False
    loss = paddle.sum(v[1:, 0])
    (gv,) = paddle.static.gradients([loss], [v])
    (g,) = run_fetch(main, {"v": A.astype("float32")}, gv)
    expected = np.zeros_like(A)
    expected[1, 0, :] = 1.0
    np.testing.assert_array_equal(g, expected)


def test_static_errors(static):
    _, feed = static
    v = feed("v", [-1, 3])
    with pytest.raises(IndexError, match="index 3 is out of range"):
        v[:, 3]
    with pytest.raises(TypeError, match="tensor indices must be int32/int64 or bool, got float32"):
        v[v]


def test_static_iteration_needs_a_static_first_dimension(static):
    main, feed = static
    v = feed("v", [2, 3])
    rows = list(v)
    assert len(rows) == 2 and rows[1].shape == [3]
    (r1,) = run_fetch(main, {"v": A[0, :2, :3].astype("float32")}, rows[1])
    np.testing.assert_array_equal(r1, A[0, 1, :3])
    with pytest.raises(TypeError, match="first dimension must be static"):
        list(feed("w", [-1, 3]))
