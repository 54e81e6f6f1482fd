"""Reductions (min, amax/amin, prod, logsumexp, var, std, norm, cumsum, cumprod) and
products (mm, bmm, dot, outer, kron, einsum): VJP rules of the new ops against
float64 finite differences to second order, the Paddle functions against numpy with
finite-difference gradients (eager), maximum/minimum ties as Paddle, static mode."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pullback as paddle
import pytest
from pullback.dialects import pd
from pullback.frontend import core
from pullback.runtime.kernels import load_all
from pullback.testing import check_vjp, fd_grad, run_op

load_all()
R = np.random.default_rng(11)
X = R.uniform(0.5, 1.5, (3, 4)) * np.where(R.standard_normal((3, 4)) > 0, 1, -1)


@pytest.fixture(autouse=True)
def eager() -> Any:
    core.disable_static()
    yield
    core.disable_static()


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic_batch"])
@pytest.mark.parametrize("op_cls,props", [
    (pd.ReduceMinOp, {"axis": [1]}), (pd.ReduceMinOp, {}),
    (pd.ReduceProdOp, {"axis": [0], "keepdim": True}), (pd.ReduceProdOp, {}),
    (pd.CumsumOp, {"axis": 1}), (pd.CumsumOp, {"axis": 0, "reverse": True, "exclusive": True}),
    (pd.CumprodOp, {"axis": 1}), (pd.CumprodOp, {"axis": 0, "reverse": True}),
    (pd.CumprodOp, {"axis": 1, "exclusive": True}),
], ids=lambda v: getattr(v, "name", None) or str(v))
def test_vjp_first_and_second_order(op_cls, props, dynamic):
    check_vjp(op_cls, [X], props=props, order=2, dynamic_batch=dynamic)


def test_scan_kernels():
    x = np.arange(1.0, 7.0).reshape(2, 3)
    np.testing.assert_array_equal(run_op(pd.CumsumOp, x, axis=1, exclusive=True), [[0, 1, 3], [0, 4, 9]])
    np.testing.assert_array_equal(run_op(pd.CumsumOp, x, axis=1, reverse=True), [[6, 5, 3], [15, 11, 6]])
    np.testing.assert_array_equal(run_op(pd.CumprodOp, x, axis=0), [[1, 2, 3], [4, 10, 18]])


def check(fn: Callable[..., Any], xs: list[np.ndarray], ref: Callable[..., np.ndarray], rtol: float = 1e-6) -> None:
    """fn(*xs) equals ref(*xs) and its gradients equal finite differences."""
    out = fn(*[paddle.to_tensor(a) for a in xs])
    np.testing.assert_allclose(out.numpy(), ref(*xs), rtol=1e-10, atol=1e-12)
    proj = R.uniform(0.5, 1.5, np.shape(ref(*xs)))
    ts = [paddle.to_tensor(a, stop_gradient=False) for a in xs]
    grads = paddle.grad((fn(*ts) * paddle.to_tensor(proj)).sum(), ts)
    for i, g in enumerate(grads):
        def scalar(a: np.ndarray, i: int = i) -> float:
            args = list(xs)
            args[i] = a
            return float((ref(*args) * proj).sum())
        np.testing.assert_allclose(g.numpy(), fd_grad(scalar, xs[i]), rtol=rtol, atol=1e-8)


A3 = R.standard_normal((2, 3, 4))
B3 = R.standard_normal((2, 4, 5))
V = R.standard_normal(5)

CASES = [
    ("min", lambda x: paddle.min(x, axis=1), lambda x: x.min(1), [X]),
    ("amin_all", lambda x: x.amin(), lambda x: x.min(), [X]),
    ("amax_keepdim", lambda x: paddle.amax(x, 0, keepdim=True), lambda x: x.max(0, keepdims=True), [X]),
    ("prod", lambda x: paddle.prod(x, axis=-1), lambda x: x.prod(-1), [X]),
    ("logsumexp", lambda x: paddle.logsumexp(x, axis=1), lambda x: np.log(np.exp(x).sum(1)), [X]),
    ("logsumexp_all_keepdim", lambda x: paddle.logsumexp(x, keepdim=True),
     lambda x: np.log(np.exp(x).sum(keepdims=True)), [X]),
    ("var", lambda x: paddle.var(x, axis=0), lambda x: x.var(0, ddof=1), [X]),
    ("var_biased", lambda x: x.var(unbiased=False), lambda x: x.var(), [X]),
    ("std", lambda x: paddle.std(x, axis=1, keepdim=True), lambda x: x.std(1, ddof=1, keepdims=True), [X]),
    ("norm_fro", lambda x: paddle.norm(x), lambda x: np.sqrt((x**2).sum()), [X]),
    ("norm_1", lambda x: paddle.norm(x, p=1, axis=1), lambda x: np.abs(x).sum(1), [X]),
    ("norm_inf", lambda x: paddle.norm(x, p=float("inf"), axis=0), lambda x: np.abs(x).max(0), [X]),
    ("norm_3", lambda x: paddle.norm(x, p=3, axis=-1), lambda x: (np.abs(x) ** 3).sum(-1) ** (1 / 3), [X]),
    ("cumsum", lambda x: paddle.cumsum(x, axis=1), lambda x: np.cumsum(x, 1), [X]),
    ("cumsum_flat", lambda x: x.cumsum(), lambda x: np.cumsum(x), [X]),
    ("cumprod", lambda x: paddle.cumprod(x, dim=0), lambda x: np.cumprod(x, 0), [X]),
    ("mm", lambda a, b: paddle.mm(a, b), lambda a, b: a @ b, [X, X.T.copy()]),
    ("bmm", paddle.bmm, lambda a, b: a @ b, [A3, B3]),
    ("dot", paddle.dot, lambda a, b: (a * b).sum(-1), [X, X[::-1].copy()]),
    ("outer", paddle.outer, np.outer, [X[0].copy(), V]),
    ("kron", paddle.kron, np.kron, [X[:2, :2].copy(), X[1:, 1:3].copy()]),
    ("einsum_bmm", lambda a, b: paddle.einsum("bij,bjk->bik", a, b), lambda a, b: np.einsum("bij,bjk->bik", a, b), [A3, B3]),
    ("einsum_three", lambda a, b, v: paddle.einsum("bij,bjk,k->ib", a, b, v),
     lambda a, b, v: np.einsum("bij,bjk,k->ib", a, b, v), [A3, B3, V]),
    ("einsum_implicit", lambda a, b: paddle.einsum("bij,bjk", a, b), lambda a, b: np.einsum("bij,bjk", a, b), [A3, B3]),
    ("einsum_ellipsis", lambda a, b: paddle.einsum("...ij,...jk->...ik", a, b),
     lambda a, b: np.einsum("...ij,...jk->...ik", a, b), [A3, B3]),
    ("einsum_trace_out", lambda a: paddle.einsum("bij->jb", a), lambda a: np.einsum("bij->jb", a), [A3]),
    ("einsum_attention", lambda q, k: paddle.einsum("bhqd,bhkd->bhqk", q, k),
     lambda q, k: np.einsum("bhqd,bhkd->bhqk", q, k), [R.standard_normal((2, 2, 3, 4)), R.standard_normal((2, 2, 5, 4))]),
]


@pytest.mark.parametrize("name,fn,ref,xs", CASES, ids=[c[0] for c in CASES])
def test_values_and_gradients(name, fn, ref, xs):
    check(fn, xs, ref)


def test_min_max_ties_and_maximum_minimum_ties_as_paddle():
    x = paddle.to_tensor([[1.0, 3.0, 3.0], [2.0, 0.0, 0.0]], dtype="float64", stop_gradient=False)
    (g,) = paddle.grad(paddle.amax(x, axis=1).sum(), [x])
    np.testing.assert_allclose(g.numpy(), [[0, 0.5, 0.5], [1, 0, 0]])
    (g,) = paddle.grad(paddle.min(x, axis=1).sum(), [x])
    np.testing.assert_allclose(g.numpy(), [[1, 0, 0], [0, 0.5, 0.5]])
    a = paddle.to_tensor([1.0, 2.0, 3.0], dtype="float64", stop_gradient=False)
    b = paddle.to_tensor([1.0, 1.0, 3.0], dtype="float64", stop_gradient=False)
    # Paddle: maximum sends the gradient to x where x > y, else (ties too) to y;
    # minimum to x where x < y, else to y.
    ga, gb = paddle.grad(paddle.maximum(a, b).sum(), [a, b])
    np.testing.assert_array_equal(ga.numpy(), [0, 1, 0])
    np.testing.assert_array_equal(gb.numpy(), [1, 0, 1])
    ga, gb = paddle.grad(paddle.minimum(a, b).sum(), [a, b])
    np.testing.assert_array_equal(ga.numpy(), [0, 0, 0])
    np.testing.assert_array_equal(gb.numpy(), [1, 1, 1])


def test_errors():
    x = paddle.to_tensor(X)
    with pytest.raises(ValueError, match="bmm: x and y must be 3-D"):
        paddle.bmm(x, x)
    with pytest.raises(ValueError, match="einsum: subscript 'j' has sizes 4 and 3"):
        paddle.einsum("ij,jk->ik", x, x)
    with pytest.raises(NotImplementedError, match="repeated subscripts"):
        paddle.einsum("ii->i", paddle.to_tensor(X[:, :3].copy()))
    with pytest.raises(ValueError, match="cumsum: axis 2 is out of range"):
        paddle.cumsum(x, axis=2)
    with pytest.raises(ValueError, match="norm: p must be an int or a float for a vector norm"):
        paddle.norm(x, p="nuc")  # as Paddle: 'nuc' needs two axes


def test_static_mode():
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        v = paddle.static.data("v", [None, 4], "float64")
        outs = [paddle.logsumexp(v, axis=1), paddle.var(v, axis=1), paddle.cumsum(v, axis=1),
                paddle.einsum("ij,kj->ik", v, v), paddle.norm(v, p=1, axis=1), paddle.prod(v, axis=1)]
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    got = exe.run(main, feed={"v": X}, fetch_list=outs)
    for g, w in zip(got, [np.log(np.exp(X).sum(1)), X.var(1, ddof=1), np.cumsum(X, 1), X @ X.T,
                          np.abs(X).sum(1), X.prod(1)]):
        np.testing.assert_allclose(g, w, rtol=1e-12)
