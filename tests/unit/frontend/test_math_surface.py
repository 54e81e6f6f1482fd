"""The Tensor / paddle.* math surface built from composites: `%` and `//` (Python's
sign conventions, ints and floats), the logic family, atan2 and the other
elementwise composites, manipulation (diagonal, trace, meshgrid, rot90, ...),
products (addmm, tensordot, ...), the search family (sort, median, quantile,
searchsorted, ...) and in-place Tensor methods.

Values are checked against numpy in eager mode and in static mode on both the
compiled backend and the interpreter; gradients against float64 finite differences
(`pullback.testing.check_eager_grad`); errors by their messages."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pullback as paddle
import pytest
from pullback.frontend import core
from pullback.testing import check_eager_grad

RNG = np.random.default_rng(11)


@pytest.fixture(autouse=True)
def eager() -> Any:
    core.disable_static()
    yield
    core.disable_static()


def run_static(fn: Callable[..., Any], *arrays: np.ndarray) -> list[list[np.ndarray]]:
    """Build `fn` over static data inputs shaped like `arrays` and run it on the
    compiled backend and the interpreter: `[compiled outputs, interpreter outputs]`."""
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            vs = [paddle.static.data(f"x{i}", list(a.shape), str(a.dtype)) for i, a in enumerate(arrays)]
            out = fn(*vs)
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
        feed = {f"x{i}": a for i, a in enumerate(arrays)}
        results = []
        for backend in ("compiled", "interpreter"):
            exe = (paddle.static.Executor(paddle.CPUPlace()) if backend == "compiled"
                   else paddle.static.Executor(paddle.CPUPlace(), backend="interpreter"))
            results.append([np.asarray(r) for r in exe.run(main, feed=feed, fetch_list=outs)])
        return results
    finally:
        paddle.disable_static()


def check_everywhere(fn: Callable[..., Any], ref: Callable[..., Any], *arrays: np.ndarray,
                     rtol: float = 1e-6, atol: float = 0.0) -> None:
    """fn over Tensors (eager) and static Variables (compiled and interpreter)
    agrees with `ref` over the arrays."""
    want = ref(*arrays)
    wants = list(want) if isinstance(want, (list, tuple)) else [want]
    got = fn(*[paddle.to_tensor(a) for a in arrays])
    gots = list(got) if isinstance(got, (list, tuple)) else [got]
    for g, w in zip(gots, wants, strict=True):
        np.testing.assert_allclose(g.numpy(), w, rtol=rtol, atol=atol)
        assert g.numpy().dtype == np.asarray(w).dtype, (g.numpy().dtype, np.asarray(w).dtype)
    for backend_outs in run_static(fn, *arrays):
        for g, w in zip(backend_outs, wants, strict=True):
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


# ------------------------------------------------------------------ % and //


SIGNS_X = np.array([7.0, -7.0, 7.0, -7.0, 5.5, -0.5, 6.0])
SIGNS_Y = np.array([2.0, 2.0, -2.0, -2.0, 2.0, 3.0, 3.0])


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32"])
def test_mod_and_floordiv_follow_python_signs(dtype):
    x, y = SIGNS_X.astype(dtype), SIGNS_Y.astype(dtype)
    if dtype.startswith("int"):
        x, y = np.trunc(SIGNS_X).astype(dtype), SIGNS_Y.astype(dtype)
    check_everywhere(lambda a, b: a % b, np.mod, x, y)
    check_everywhere(lambda a, b: a // b, np.floor_divide, x, y)
    check_everywhere(paddle.remainder, np.mod, x, y)
    check_everywhere(paddle.mod, np.mod, x, y)
    check_everywhere(paddle.floor_divide, np.floor_divide, x, y)
    t = paddle.to_tensor(x)
    np.testing.assert_array_equal((t % 3).numpy(), np.mod(x, x.dtype.type(3)))
    np.testing.assert_array_equal((t // -3).numpy(), np.floor_divide(x, x.dtype.type(-3)))
    np.testing.assert_array_equal((10 % paddle.to_tensor(y)).numpy(), np.mod(y.dtype.type(10), y))
    np.testing.assert_array_equal((10 // paddle.to_tensor(y)).numpy(), np.floor_divide(y.dtype.type(10), y))


def test_int_tensor_with_python_float_computes_in_float32():
    x = paddle.to_tensor([7, -7])
    out = x % 1.5
    assert out.dtype == "float32"
    np.testing.assert_allclose(out.numpy(), np.mod([7.0, -7.0], 1.5))
    np.testing.assert_allclose((x // 2.0).numpy(), [3.0, -4.0])
    np.testing.assert_allclose((7.5 % x).numpy(), np.mod(7.5, [7.0, -7.0]))
    assert (x % 2).dtype == "int64"


def test_remainder_gradient_matches_finite_differences():
    x = RNG.uniform(-5, 5, (3, 4))
    y = RNG.uniform(0.7, 2.0, (3, 4)) * np.where(RNG.uniform(size=(3, 4)) < 0.5, -1, 1)
    check_eager_grad(paddle.remainder, [x, y])
    # Paddle's rule: dx = dout, dy = -floor(x / y) * dout
    tx, ty = paddle.to_tensor(x, stop_gradient=False), paddle.to_tensor(y, stop_gradient=False)
    gx, gy = paddle.grad((tx % ty).sum(), [tx, ty])
    np.testing.assert_allclose(gx.numpy(), np.ones_like(x))
    np.testing.assert_allclose(gy.numpy(), -np.floor(x / y))


def test_mod_dtype_mismatch_is_reported():
    with pytest.raises(TypeError, match=r"remainder: x \(float32\) and y \(int64\)"):
        paddle.remainder(paddle.to_tensor([1.0]), paddle.to_tensor([1]))


# ------------------------------------------------------------------ logic


def test_nan_inf_predicates_and_logical_ops():
    x = np.array([1.0, np.nan, np.inf, -np.inf, 0.0])
    check_everywhere(paddle.isnan, np.isnan, x)
    check_everywhere(paddle.isinf, np.isinf, x)
    check_everywhere(paddle.isfinite, np.isfinite, x)
    t = paddle.to_tensor(x)
    np.testing.assert_array_equal(t.isnan().numpy(), np.isnan(x))
    assert not paddle.isnan(paddle.to_tensor([1, 2])).numpy().any()
    a = np.array([True, False, True, False])
    b = np.array([True, True, False, False])
    check_everywhere(paddle.logical_and, np.logical_and, a, b)
    check_everywhere(paddle.logical_or, np.logical_or, a, b)
    check_everywhere(paddle.logical_xor, np.logical_xor, a, b)
    check_everywhere(paddle.logical_not, np.logical_not, a)
    ints = np.array([2, 0, -1, 0])
    np.testing.assert_array_equal(paddle.to_tensor(ints).logical_and(paddle.to_tensor(b)).numpy(),
                                  np.logical_and(ints, b))


def test_any_all_isclose_allclose_equal_all():
    x = np.array([[0.0, 1.0, 2.0], [0.0, 0.0, 0.0]])
    check_everywhere(lambda t: paddle.any(t), np.any, x)
    check_everywhere(lambda t: paddle.all(t > -1), lambda a: np.all(a > -1), x)
    check_everywhere(lambda t: t.any(axis=1), lambda a: a.any(axis=1), x)
    check_everywhere(lambda t: t.all(axis=0, keepdim=True), lambda a: a.all(axis=0, keepdims=True), x)
    y = x + np.array([[1e-9, 1e-3, 0.0], [0.0, np.nan, 0.0]])
    x2 = x.copy()
    x2[1, 1] = np.nan
    check_everywhere(paddle.isclose, np.isclose, x2, y)
    check_everywhere(lambda a, b: paddle.isclose(a, b, equal_nan=True),
                     lambda a, b: np.isclose(a, b, equal_nan=True), x2, y)
    assert bool(paddle.allclose(paddle.to_tensor(x), paddle.to_tensor(x + 1e-9)))
    assert not bool(paddle.allclose(paddle.to_tensor(x), paddle.to_tensor(y)))
    assert bool(paddle.equal_all(paddle.to_tensor([1, 2]), paddle.to_tensor([1, 2])))
    assert not bool(paddle.equal_all(paddle.to_tensor([1, 2]), paddle.to_tensor([1, 3])))
    assert not bool(paddle.equal_all(paddle.to_tensor([1, 2]), paddle.to_tensor([1, 2, 3])))
    assert paddle.is_tensor(paddle.to_tensor([1.0])) and not paddle.is_tensor(np.ones(1))
    assert paddle.is_floating_point(paddle.to_tensor([1.0]))
    assert not paddle.to_tensor([1]).is_floating_point()


# ---------------------------------------------------------- elementwise math


def test_atan2_values_quadrants_and_gradient():
    xs = np.array([1.0, -1.0, 0.0, 2.0, -3.0, 0.5, -0.5, 3.0, 1.0])
    ys = np.array([1.0, -2.0, 1.0, 0.0, 0.0, -1.0, -1.0, 0.1, -0.1])
    check_everywhere(paddle.atan2, np.arctan2, xs, ys, atol=1e-15)
    out = paddle.atan2(paddle.to_tensor([1, -1]), paddle.to_tensor([-1, -1]))
    assert out.dtype == "float64"  # integers compute in float64, as in Paddle
    x = RNG.uniform(-2, 2, (3, 4))
    y = RNG.uniform(-2, 2, (3, 4))
    check_eager_grad(paddle.atan2, [x, y], order=2)


def test_elementwise_composites():
    x = np.array([-2.5, -1.0, -0.0, 0.0, 0.3, 1.7])
    check_everywhere(paddle.trunc, np.trunc, x)
    check_everywhere(paddle.frac, lambda a: a - np.trunc(a), x)
    check_everywhere(paddle.neg, np.negative, x)
    check_everywhere(paddle.signbit, np.signbit, x)
    y = np.array([3.0, 4.0, 1.0, -2.0, 0.5, 2.0])
    check_everywhere(paddle.hypot, np.hypot, x, y)
    check_everywhere(paddle.heaviside, np.heaviside, x, y)
    p = np.array([0.1, 0.5, 0.9, 0.999])
    check_everywhere(paddle.logit, lambda a: np.log(a / (1 - a)), p)
    check_everywhere(lambda t: paddle.logit(t, eps=0.2), lambda a: np.log(np.clip(a, 0.2, 0.8) / (1 - np.clip(a, 0.2, 0.8))), p)
    n = np.array([np.nan, np.inf, -np.inf, 1.5])
    check_everywhere(paddle.nan_to_num, np.nan_to_num, n)
    check_everywhere(lambda t: paddle.nan_to_num(t, 1.0, 9.0, -9.0),
                     lambda a: np.nan_to_num(a, nan=1.0, posinf=9.0, neginf=-9.0), n)
    m = np.array([[1.0, np.nan, 3.0], [np.nan, 0.0, 2.0]])
    check_everywhere(paddle.nansum, np.nansum, m)
    check_everywhere(lambda t: paddle.nanmean(t, axis=1), lambda a: np.nanmean(a, axis=1), m)
    check_everywhere(lambda t: paddle.count_nonzero(t, axis=0),
                     lambda a: np.count_nonzero(a, axis=0).astype(np.int64), m)


def test_elementwise_composite_gradients():
    x = RNG.uniform(-2, 2, (2, 3))
    y = RNG.uniform(0.5, 2, (2, 3))
    check_eager_grad(paddle.hypot, [x, y], order=2)
    check_eager_grad(paddle.frac, [x])
    check_eager_grad(paddle.logit, [RNG.uniform(0.1, 0.9, (2, 3))], order=2)
    check_eager_grad(paddle.nansum, [x])
    n = np.array([np.nan, np.inf, 1.5, -2.0])
    t = paddle.to_tensor(n, stop_gradient=False)
    (g,) = paddle.grad(paddle.nan_to_num(t).sum(), [t])
    np.testing.assert_array_equal(g.numpy(), [0.0, 0.0, 1.0, 1.0])


# ------------------------------------------------------------- manipulation


def test_diagonal_trace_and_gradients():
    a = RNG.standard_normal((2, 3, 4))
    for off in (-2, -1, 0, 1, 3):
        check_everywhere(lambda t, o=off: paddle.diagonal(t, o, 1, 2),
                         lambda v, o=off: np.diagonal(v, o, 1, 2), a)
        check_everywhere(lambda t, o=off: t.diagonal(o, axis1=2, axis2=0),
                         lambda v, o=off: np.diagonal(v, o, 2, 0), a)
    m = RNG.standard_normal((3, 4))
    check_everywhere(paddle.trace, np.trace, m)
    check_everywhere(lambda t: t.trace(1), lambda v: np.trace(v, 1), m)
    check_eager_grad(lambda t: paddle.diagonal(t, 1, 0, 2), [a])
    check_eager_grad(paddle.trace, [m])
    with pytest.raises(ValueError, match="diagonal: x must be at least 2-D"):
        paddle.diagonal(paddle.to_tensor([1.0, 2.0]))


def test_axis_moves_unbind_meshgrid_rot90():
    a = RNG.standard_normal((2, 3, 4))
    check_everywhere(lambda t: paddle.moveaxis(t, [0, 1], [2, 0]),
                     lambda v: np.moveaxis(v, [0, 1], [2, 0]), a)
    check_everywhere(lambda t: t.swapaxes(0, 2), lambda v: np.swapaxes(v, 0, 2), a)
    check_everywhere(lambda t: t.unbind(1), lambda v: [v[:, i] for i in range(3)], a)
    m = a[0]
    check_everywhere(paddle.t, np.transpose, m)
    with pytest.raises(ValueError, match="only support N-D"):
        paddle.t(paddle.to_tensor(a))
    for k in (-1, 0, 1, 2, 3, 5):
        check_everywhere(lambda t, k=k: paddle.rot90(t, k, [1, 2]),
                         lambda v, k=k: np.rot90(v, k, (1, 2)), a)
    u, v = np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0])
    check_everywhere(lambda p, q: paddle.meshgrid(p, q),
                     lambda p, q: np.meshgrid(p, q, indexing="ij"), u, v)
    got = paddle.meshgrid([paddle.to_tensor(u), paddle.to_tensor(v)])
    np.testing.assert_array_equal(got[1].numpy(), np.meshgrid(u, v, indexing="ij")[1])
    check_eager_grad(lambda t: paddle.rot90(t, 1, [0, 2]) * 2.0, [a])


def test_splits_unflatten_diff_take_and_constants():
    a = RNG.standard_normal((2, 3, 5))
    check_everywhere(lambda t: paddle.tensor_split(t, 3, axis=2),
                     lambda v: np.array_split(v, 3, axis=2), a)
    check_everywhere(lambda t: paddle.tensor_split(t, [1, -1], axis=2),
                     lambda v: np.split(v, [1, 4], axis=2), a)
    check_everywhere(lambda t: paddle.hsplit(t, 3), lambda v: np.array_split(v, 3, axis=1), a)
    check_everywhere(lambda t: paddle.vsplit(t, [1]), lambda v: np.split(v, [1], axis=0), a)
    check_everywhere(lambda t: paddle.dsplit(t, 5), lambda v: np.split(v, 5, axis=2), a)
    check_everywhere(lambda t: paddle.unflatten(t, 1, [3, 1]), lambda v: v.reshape(2, 3, 1, 5), a)
    check_everywhere(lambda t: paddle.diff(t, n=2, axis=2), lambda v: np.diff(v, n=2, axis=2), a)
    check_everywhere(lambda t: paddle.diff(t, axis=1, prepend=t[:, :1]),
                     lambda v: np.diff(v, axis=1, prepend=v[:, :1]), a)
    idx = np.array([[0, -1], [7, 3]])
    check_everywhere(lambda t, i: paddle.take(t, i), lambda v, i: np.take(v, i), a, idx)
    np.testing.assert_array_equal(paddle.take(paddle.to_tensor(a), paddle.to_tensor([31]), mode="wrap").numpy(),
                                  np.take(a, [31], mode="wrap"))
    with pytest.raises(IndexError, match="take: index out of range"):
        paddle.take(paddle.to_tensor(a), paddle.to_tensor([30]))
    np.testing.assert_array_equal(paddle.tril_indices(4, 3, -1).numpy(), np.array(np.tril_indices(4, -1, 3)))
    np.testing.assert_array_equal(paddle.triu_indices(3, 4, 1).numpy(), np.array(np.triu_indices(3, 1, 4)))
    v = np.array([1.0, 2.0, 3.0])
    check_everywhere(paddle.vander, np.vander, v)
    check_everywhere(lambda t: paddle.vander(t, 4, increasing=True),
                     lambda x: np.vander(x, 4, increasing=True), v)
    np.testing.assert_array_equal(paddle.shape(paddle.to_tensor(a)).numpy(), [2, 3, 5])
    assert int(paddle.rank(paddle.to_tensor(a))) == 3
    assert paddle.tolist(paddle.to_tensor([[1, 2]])) == [[1, 2]]
    m1, m2 = np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([[5.0, 6.0], [7.0, 8.0]])
    out = paddle.multiplex([paddle.to_tensor(m1), paddle.to_tensor(m2)], paddle.to_tensor([[1], [0]]))
    np.testing.assert_array_equal(out.numpy(), [[5.0, 6.0], [3.0, 4.0]])


def test_top_level_pad_is_functional_pad():
    a = RNG.standard_normal((1, 1, 2, 3))
    out = paddle.pad(paddle.to_tensor(a), [1, 1, 0, 2], value=0.5)
    np.testing.assert_allclose(out.numpy(), np.pad(a, [(0, 0), (0, 0), (0, 2), (1, 1)], constant_values=0.5))


# ------------------------------------------------------------------ products


def test_products_against_numpy_and_gradients():
    a, b = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((4, 3, 5))
    check_everywhere(lambda x, y: paddle.tensordot(x, y, [[1, 2], [1, 0]]),
                     lambda x, y: np.tensordot(x, y, [[1, 2], [1, 0]]), a, b, rtol=1e-12)
    check_everywhere(lambda x, y: paddle.tensordot(x, y, 1), lambda x, y: np.tensordot(x, y, 1), a, b,
                     rtol=1e-12)
    m, n, i = RNG.standard_normal((3, 4)), RNG.standard_normal((4, 2)), RNG.standard_normal((3, 2))
    check_everywhere(lambda p, x, y: paddle.addmm(p, x, y, beta=0.5, alpha=2.0),
                     lambda p, x, y: 0.5 * p + 2.0 * x @ y, i, m, n, rtol=1e-12)
    check_everywhere(paddle.mv, lambda x, v: x @ v, m, n[:, 0], rtol=1e-12)
    check_everywhere(paddle.inner, np.inner, m, a, rtol=1e-12)
    bi, bx, by = RNG.standard_normal((2, 3, 2)), RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4, 2))
    check_everywhere(lambda p, x, y: paddle.baddbmm(p, x, y, 2.0, 3.0),
                     lambda p, x, y: 2.0 * p + 3.0 * x @ y, bi, bx, by, rtol=1e-12)
    check_eager_grad(lambda x, y: paddle.tensordot(x, y, [[1, 2], [1, 0]]), [a, b])
    check_eager_grad(lambda p, x, y: paddle.addmm(p, x, y, 0.5, 2.0), [i, m, n])
    with pytest.raises(ValueError, match="addmm: the column of x"):
        paddle.addmm(paddle.to_tensor(i), paddle.to_tensor(m), paddle.to_tensor(m))


# -------------------------------------------------------------------- search


def test_sort_argsort_kthvalue_and_gradient():
    a = RNG.standard_normal((3, 5))
    check_everywhere(lambda t: paddle.sort(t, axis=0), lambda v: np.sort(v, axis=0), a)
    check_everywhere(lambda t: t.sort(descending=True), lambda v: -np.sort(-v), a)
    check_everywhere(lambda t: t.argsort(), lambda v: np.argsort(v, kind="stable"), a)
    ties = np.array([3.0, 1.0, 3.0, 1.0, 2.0])
    check_everywhere(lambda t: paddle.argsort(t, descending=True),
                     lambda v: np.argsort(-v, kind="stable"), ties)
    check_everywhere(lambda t: paddle.kthvalue(t, 2, axis=1),
                     lambda v: (np.sort(v, 1)[:, 1], np.argsort(v, 1, kind="stable")[:, 1]), a)
    check_eager_grad(lambda t: paddle.sort(t, axis=1) * paddle.to_tensor(np.arange(5.0)), [a])


def test_median_and_quantile():
    a = RNG.standard_normal((4, 6))
    check_everywhere(paddle.median, np.median, a)
    check_everywhere(lambda t: paddle.median(t, axis=1), lambda v: np.median(v, axis=1), a)
    check_everywhere(lambda t: paddle.median(t, axis=0, keepdim=True),
                     lambda v: np.median(v, axis=0, keepdims=True), a)
    check_everywhere(lambda t: paddle.median(t[:3], axis=0, mode="min"),
                     lambda v: (np.sort(v[:3], 0)[1], np.argsort(v[:3], 0)[1]), a)
    for method in ("linear", "lower", "higher", "nearest", "midpoint"):
        check_everywhere(lambda t, m=method: paddle.quantile(t, [0.25, 0.6], axis=1, interpolation=m),
                         lambda v, m=method: np.quantile(v, [0.25, 0.6], axis=1, method=m), a, rtol=1e-12)
    check_everywhere(lambda t: paddle.quantile(t, 0.3), lambda v: np.quantile(v, 0.3), a, rtol=1e-12)
    check_eager_grad(lambda t: paddle.median(t, axis=1), [a])
    check_eager_grad(lambda t: paddle.quantile(t, 0.3, axis=0), [a])
    with pytest.raises(ValueError, match=r"quantile: q must be in \[0, 1\]"):
        paddle.quantile(paddle.to_tensor(a), 1.5)


def test_searchsorted_and_bucketize():
    seq = np.array([1.0, 3.0, 5.0, 7.0, 9.0])
    vals = np.array([[3.0, 6.0, 9.0], [0.0, 1.0, 10.0]])
    check_everywhere(paddle.searchsorted, lambda s, v: np.searchsorted(s, v).astype(np.int64), seq, vals)
    check_everywhere(lambda s, v: paddle.searchsorted(s, v, right=True, out_int32=True),
                     lambda s, v: np.searchsorted(s, v, side="right").astype(np.int32), seq, vals)
    seq2 = np.sort(RNG.standard_normal((2, 5)), axis=1)
    check_everywhere(paddle.searchsorted,
                     lambda s, v: np.stack([np.searchsorted(s[i], v[i]) for i in range(2)]).astype(np.int64),
                     seq2, vals)
    check_everywhere(lambda v, s: paddle.bucketize(v, s), lambda v, s: np.searchsorted(s, v).astype(np.int64),
                     vals, seq)


# ------------------------------------------------------------------ in place


def test_inplace_methods_change_the_tensor():
    x = paddle.to_tensor([1.0, 2.0, 3.0])
    assert x.add_(paddle.to_tensor([1.0, 1.0, 1.0])) is x
    np.testing.assert_array_equal(x.numpy(), [2.0, 3.0, 4.0])
    x.subtract_(paddle.to_tensor(1.0)).multiply_(paddle.to_tensor([2.0, 2.0, 2.0]))
    np.testing.assert_array_equal(x.numpy(), [2.0, 4.0, 6.0])
    x.scale_(0.5, bias=1.0).clip_(0.0, 3.5)
    np.testing.assert_array_equal(x.numpy(), [2.0, 3.0, 3.5])
    x.zero_()
    np.testing.assert_array_equal(x.numpy(), [0.0, 0.0, 0.0])
    x.fill_(7)
    np.testing.assert_array_equal(x.numpy(), [7.0, 7.0, 7.0])
    y = paddle.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    y.copy_(paddle.to_tensor([5.0, 6.0]))
    np.testing.assert_array_equal(y.numpy(), [[5.0, 6.0], [5.0, 6.0]])
    r = paddle.to_tensor(np.zeros((200,), np.float32))
    r.uniform_(2.0, 3.0)
    assert ((r.numpy() >= 2.0) & (r.numpy() < 3.0)).all()
    r.exponential_(2.0)
    assert (r.numpy() >= 0).all() and abs(r.numpy().mean() - 0.5) < 0.2
    r.normal_(10.0, 0.1)
    assert abs(r.numpy().mean() - 10.0) < 0.1


def test_inplace_on_leaf_requiring_grad_raises_and_no_grad_overwrites():
    w = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    with pytest.raises(ValueError, match=r"zero_: Leaf Tensor .* can't use inplace strategy"):
        w.zero_()
    with paddle.no_grad():
        w.fill_(3.0)
    assert w.is_leaf and not w.stop_gradient
    np.testing.assert_array_equal(w.numpy(), [3.0, 3.0])


def test_inplace_gradient_flows_through_the_new_value():
    a = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    b = a * 2
    b.multiply_(b)  # b = 4 a^2
    (g,) = paddle.grad(b.sum(), [a])
    np.testing.assert_allclose(g.numpy(), [8.0, 16.0])


def test_inplace_in_static_mode_renames_the_variable():
    def build(v: Any) -> Any:
        v.scale_(2.0)
        v.add_(v)
        return v

    x = np.array([1.0, -2.0])
    for outs in run_static(build, x):
        np.testing.assert_array_equal(outs[0], 4 * x)


# ---------------------------------------------------------- cumulative, diag


def test_logcumsumexp_cummax_cummin():
    a = RNG.standard_normal((3, 5))
    check_everywhere(lambda t: paddle.logcumsumexp(t, axis=1),
                     lambda v: np.logaddexp.accumulate(v, axis=1), a, rtol=1e-12)
    check_everywhere(paddle.logcumsumexp, lambda v: np.logaddexp.accumulate(v.ravel()), a, rtol=1e-12)
    big = np.array([1000.0, 1000.0, -np.inf])
    np.testing.assert_allclose(paddle.logcumsumexp(paddle.to_tensor(big)).numpy(),
                               np.logaddexp.accumulate(big))
    check_eager_grad(lambda t: paddle.logcumsumexp(t, axis=0), [a], order=2)
    ties = RNG.integers(0, 3, (3, 6)).astype(np.float64)

    def last_index(v: np.ndarray, op: Callable[..., Any]) -> np.ndarray:
        out = np.zeros(v.shape, np.int64)
        for r in range(v.shape[0]):
            best = 0
            for i in range(v.shape[1]):
                if op(v[r, i], v[r, best]):
                    best = i
                out[r, i] = best
        return out

    check_everywhere(lambda t: paddle.cummax(t, axis=1),
                     lambda v: (np.maximum.accumulate(v, 1), last_index(v, np.greater_equal)), ties)
    check_everywhere(lambda t: t.cummin(axis=-1),
                     lambda v: (np.minimum.accumulate(v, 1), last_index(v, np.less_equal)), ties)
    check_eager_grad(lambda t: paddle.cummax(t, axis=1)[0], [a])


def test_diag_embed():
    a = RNG.standard_normal((2, 3))

    def ref(v: np.ndarray, off: int, d1: int, d2: int) -> np.ndarray:
        n = v.shape[-1]
        m = n + abs(off)
        out = np.zeros(v.shape[:-1] + (m, m))
        for i in range(n):
            r, c = (i, i + off) if off >= 0 else (i - off, i)
            out[..., r, c] = v[..., i]
        return np.moveaxis(out, [-2, -1], [d1, d2])

    for off, d1, d2 in ((0, -2, -1), (1, 0, 2), (-2, 2, 0), (2, 1, 0)):
        check_everywhere(lambda t, o=off, p=d1, q=d2: paddle.diag_embed(t, o, p, q),
                         lambda v, o=off, p=d1, q=d2: ref(v, o, p, q), a)
    check_eager_grad(lambda t: paddle.diag_embed(t, 1), [a])


# ------------------------------------------------------------------- bitwise


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_bitwise_ops_on_integers(dtype):
    info = np.iinfo(dtype)
    a = np.array([0, 5, -5, 12, -1, info.min, info.max], dtype)
    b = np.array([3, -6, 9, 10, 7, -1, 1], dtype)
    check_everywhere(paddle.bitwise_and, np.bitwise_and, a, b)
    check_everywhere(paddle.bitwise_or, np.bitwise_or, a, b)
    check_everywhere(paddle.bitwise_xor, np.bitwise_xor, a, b)
    check_everywhere(paddle.bitwise_not, np.invert, a)
    check_everywhere(lambda x, y: (x & y) | (~x ^ y), lambda x, y: (x & y) | (~x ^ y), a, b)
    check_everywhere(lambda x: x & 6, lambda x: x & 6, a)


def test_bitwise_ops_on_bools_and_errors():
    a, b = np.array([True, False, True]), np.array([True, True, False])
    check_everywhere(lambda x, y: x & y, np.logical_and, a, b)
    check_everywhere(lambda x, y: x | y, np.logical_or, a, b)
    check_everywhere(lambda x, y: x ^ y, np.logical_xor, a, b)
    check_everywhere(lambda x: ~x, np.logical_not, a)
    with pytest.raises(TypeError, match="bitwise_and: x must be bool or an integer type"):
        paddle.bitwise_and(paddle.to_tensor([1.0]), paddle.to_tensor([1.0]))


# ------------------------------------------------------------------ counting


def test_histogram():
    a = RNG.standard_normal(40)
    check_everywhere(lambda t: paddle.histogram(t, bins=7), lambda v: np.histogram(v, 7)[0].astype(np.int64), a)
    check_everywhere(lambda t: paddle.histogram(t, bins=4, min=-1, max=1),
                     lambda v: np.histogram(v, 4, (-1, 1))[0].astype(np.int64), a)
    check_everywhere(lambda t: paddle.histogram(t, bins=4, min=-1, max=1, density=True),
                     lambda v: np.histogram(v, 4, (-1, 1), density=True)[0], a, rtol=1e-12)
    np.testing.assert_array_equal(paddle.histogram(paddle.to_tensor([1, 2, 1]), bins=4, min=0, max=3).numpy(),
                                  [0, 2, 1, 0])  # Paddle's documented example


def test_bincount_and_unique_eager_and_static_error():
    x = np.array([1, 1, 3, 0, 3, 3])
    np.testing.assert_array_equal(paddle.bincount(paddle.to_tensor(x)).numpy(), np.bincount(x))
    w = np.array([0.5, 1.0, 2.0, 0.1, 0.2, 0.3])
    np.testing.assert_allclose(paddle.bincount(paddle.to_tensor(x), paddle.to_tensor(w), minlength=6).numpy(),
                               np.bincount(x, w, 6))
    vals, index, inverse, counts = paddle.unique(paddle.to_tensor(x), return_index=True,
                                                 return_inverse=True, return_counts=True)
    ref = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    for got, want in zip((vals, index, inverse, counts), ref, strict=True):
        np.testing.assert_array_equal(got.numpy(), want)
    m = np.array([[1, 2], [0, 1], [1, 2]])
    np.testing.assert_array_equal(paddle.unique(paddle.to_tensor(m), axis=0).numpy(), np.unique(m, axis=0))
    with pytest.raises(NotImplementedError, match="bincount: the result's shape depends on the values"):
        run_static(paddle.bincount, x)


def test_multinomial_frequencies_and_errors():
    paddle.seed(5)
    p = paddle.to_tensor([0.1, 0.2, 0.7])
    draws = paddle.multinomial(p, 4000, replacement=True).numpy()
    np.testing.assert_allclose(np.bincount(draws, minlength=3) / 4000, [0.1, 0.2, 0.7], atol=0.03)
    rows = paddle.multinomial(paddle.to_tensor([[0.0, 1.0, 1.0, 0.0], [1.0, 1.0, 1.0, 1.0]]), 2).numpy()
    assert set(rows[0]) == {1, 2} and len(set(rows[1])) == 2
    with pytest.raises(ValueError, match="multinomial: num_samples"):
        paddle.multinomial(p, 4)


# ------------------------------------------------------------------- special


def test_lgamma_digamma_values_and_gradients():
    import math

    x = np.array([0.1, 0.5, 1.0, 1.5, 2.0, 3.7, 10.0, 55.5, -0.5, -1.5, -2.3, 1e-3])
    check_everywhere(paddle.lgamma, lambda v: np.array([math.lgamma(e) for e in v]), x, rtol=1e-11, atol=5e-12)
    poles = paddle.lgamma(paddle.to_tensor([0.0, -1.0, -4.0])).numpy()
    assert np.isposinf(poles).all()
    euler = 0.5772156649015329
    known = np.array([1.0, 0.5, 4.0])  # digamma(1) = -g, digamma(1/2) = -g - 2 ln 2, digamma(4) = -g + 11/6
    check_everywhere(paddle.digamma, lambda v: np.array([-euler, -euler - 2 * math.log(2), -euler + 11 / 6]),
                     known, rtol=1e-11)
    # digamma is lgamma's derivative; its own derivative (trigamma) by finite differences
    y = RNG.uniform(0.2, 6.0, (2, 3))
    t = paddle.to_tensor(y, stop_gradient=False)
    (g,) = paddle.grad(paddle.lgamma(t).sum(), [t])
    np.testing.assert_allclose(g.numpy(), paddle.digamma(paddle.to_tensor(y)).numpy(), rtol=1e-10)
    check_eager_grad(paddle.digamma, [y], rtol=1e-5)
    check_eager_grad(paddle.lgamma, [-y + 0.05], rtol=1e-5)


def test_erfinv_values_edges_and_gradient():
    import math

    y = np.array([-0.999, -0.9, -0.3, 0.0, 0.2, 0.7, 0.99999])
    got = paddle.erfinv(paddle.to_tensor(y)).numpy()
    np.testing.assert_allclose([math.erf(v) for v in got], y, rtol=1e-14, atol=1e-15)
    check_everywhere(paddle.erfinv, lambda v: paddle.erfinv(paddle.to_tensor(v)).numpy(), y, rtol=1e-12)
    edges = paddle.erfinv(paddle.to_tensor([1.0, -1.0, 1.5])).numpy()
    assert edges[0] == np.inf and edges[1] == -np.inf and np.isnan(edges[2])
    check_eager_grad(paddle.erfinv, [RNG.uniform(-0.95, 0.95, (2, 3))], rtol=1e-6)


def test_gcd_lcm():
    a = np.array([0, 0, 12, -18, 7, 100, -21])
    b = np.array([0, 5, 8, 24, -13, 75, -14])
    check_everywhere(paddle.gcd, np.gcd, a, b)
    check_everywhere(paddle.lcm, np.lcm, a, b)
    np.testing.assert_array_equal(paddle.to_tensor(a).gcd(paddle.to_tensor(6)).numpy(), np.gcd(a, 6))
    with pytest.raises(TypeError, match="gcd: x must be an integer type"):
        paddle.gcd(paddle.to_tensor([True]), paddle.to_tensor([False]))


def test_mode_values_indices_and_gradient():
    x = np.array([[2.0, 1.0, 2.0, 1.0, 3.0], [5.0, 5.0, 4.0, 4.0, 4.0], [7.0, 6.0, 6.0, 7.0, 6.0]])

    def ref(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        vals, idx = [], []
        for row in v:
            uniq, counts = np.unique(row, return_counts=True)
            m = uniq[np.argmax(counts)]  # the smallest of the most frequent
            vals.append(m)
            idx.append(np.nonzero(row == m)[0][-1])
        return np.array(vals), np.array(idx, np.int64)

    check_everywhere(paddle.mode, ref, x)
    check_everywhere(lambda t: paddle.mode(t, axis=0, keepdim=True),
                     lambda v: tuple(r[None] for r in ref(v.T)), x)
    t = paddle.to_tensor(x, stop_gradient=False)
    (g,) = paddle.grad(paddle.mode(t)[0].sum(), [t])
    want = np.zeros_like(x)
    want[np.arange(3), ref(x)[1]] = 1.0
    np.testing.assert_array_equal(g.numpy(), want)


def test_median_and_quantile_propagate_nan():
    a = np.array([[1.0, np.nan, 3.0, 2.0], [4.0, 1.0, 2.0, 3.0]])
    check_everywhere(lambda t: paddle.median(t, axis=1), lambda v: np.median(v, axis=1), a)
    check_everywhere(lambda t: paddle.quantile(t, 0.4, axis=1), lambda v: np.quantile(v, 0.4, axis=1), a)
    assert np.isnan(paddle.median(paddle.to_tensor(a)).numpy())


DYNAMIC_BATCH = {
    "mod": (lambda v: v % 1.5, lambda x: np.mod(x, 1.5)),
    "isnan_any": (lambda v: paddle.any(paddle.isnan(v), axis=1), lambda x: np.isnan(x).any(1)),
    "sort": (lambda v: paddle.sort(v, axis=-1), lambda x: np.sort(x, -1)),
    "trace": (lambda v: paddle.trace(v, 1, 1, 2), lambda x: np.trace(x, 1, 1, 2)),
    "cummax": (lambda v: paddle.cummax(v, axis=2)[0], lambda x: np.maximum.accumulate(x, 2)),
    "median": (lambda v: paddle.median(v, axis=2), lambda x: np.median(x, 2)),
    "diag_embed": (lambda v: paddle.diag_embed(v[:, 0], 1),
                   lambda x: np.stack([np.diag(r, 1) for r in x[:, 0]])),
    "unflatten": (lambda v: paddle.unflatten(v, 2, [2, 2]), lambda x: x.reshape(-1, 4, 2, 2)),
}


@pytest.mark.parametrize("case", sorted(DYNAMIC_BATCH))
def test_static_programs_with_a_dynamic_batch(case):
    fn, ref = DYNAMIC_BATCH[case]
    a = RNG.standard_normal((3, 4, 4))
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        v = paddle.static.data("x", [None, 4, 4], "float64")
        out = fn(v)
    for exe in (paddle.static.Executor(paddle.CPUPlace()),
                paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")):
        (got,) = exe.run(main, feed={"x": a}, fetch_list=[out])
        np.testing.assert_allclose(got, ref(a), rtol=1e-12)
