"""`paddle.autograd.jacobian` / `hessian`: values against float64 central finite
differences and closed forms, lazy row evaluation, Paddle's nesting for tuples, the
batched layout, indexing rules and errors, in dynamic and static mode."""

from __future__ import annotations

import numpy as np
import pullback as paddle
import pytest
from pullback.frontend import core
from pullback.testing import fd_jacobian

R = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def eager():
    core.disable_static()
    yield
    core.disable_static()


def f_np(x: np.ndarray) -> np.ndarray:
    return np.tanh(x) * np.roll(x, 1) + x**3


def f_pd(x):
    return paddle.tanh(x) * paddle.roll(x, 1) + x**3


def test_jacobian_matches_finite_differences_and_evaluates_rows_lazily():
    xv = R.standard_normal(4)
    x = paddle.to_tensor(xv, stop_gradient=False)
    J = paddle.autograd.jacobian(f_pd(x), x)
    assert J.shape == [4, 4]
    row = J[2]  # one row: one backward pass
    assert list(J._jacobian.cache) == [2]
    expected = fd_jacobian(f_np, xv)
    np.testing.assert_allclose(row.numpy(), expected[2], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(J[:].numpy(), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(J[:, 1].numpy(), expected[:, 1], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(J[1:4:2, -2:].numpy(), expected[1:4:2, -2:], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(J[-1, 0].numpy(), expected[-1, 0], rtol=1e-6, atol=1e-8)
    # Arithmetic and attributes act on the evaluated matrix.
    np.testing.assert_allclose((J * 2).numpy(), 2 * expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(J.numpy(), expected, rtol=1e-6, atol=1e-8)


def test_tuples_nest_like_paddle_and_unused_inputs_give_zeros():
    x1 = paddle.to_tensor(R.standard_normal(3), stop_gradient=False)
    x2 = paddle.to_tensor(R.standard_normal(3), stop_gradient=False)
    unused = paddle.to_tensor(R.standard_normal(2), stop_gradient=False)
    y = x1 * x2
    J = paddle.autograd.jacobian(y, (x1, x2, unused))
    assert isinstance(J, tuple) and len(J) == 3
    np.testing.assert_allclose(J[0][:].numpy(), np.diag(x2.numpy()))
    np.testing.assert_allclose(J[1][:].numpy(), np.diag(x1.numpy()))
    np.testing.assert_array_equal(J[2][:].numpy(), np.zeros((3, 2)))
    JJ = paddle.autograd.jacobian((y, x1 + 1), (x1, x2))
    assert [[j.shape for j in row] for row in JJ] == [[[3, 3], [3, 3]], [[3, 3], [3, 3]]]
    np.testing.assert_allclose(JJ[1][0][:].numpy(), np.eye(3))
    np.testing.assert_array_equal(JJ[1][1][:].numpy(), np.zeros((3, 3)))
    assert len(paddle.autograd.jacobian((y, y), x1)) == 2


def test_zero_dimensional_sides_drop_their_axis():
    xv = R.standard_normal(3)
    x = paddle.to_tensor(xv, stop_gradient=False)
    J = paddle.autograd.jacobian(paddle.sum(x * x), x)  # 0-D ys: a gradient vector
    assert J.shape == [3]
    np.testing.assert_allclose(J[:].numpy(), 2 * xv)
    np.testing.assert_allclose(J[1].numpy(), 2 * xv[1])
    s = paddle.to_tensor(1.5, stop_gradient=False)
    Js = paddle.autograd.jacobian(s * s * s, s)
    assert Js.shape == []
    np.testing.assert_allclose(Js.numpy(), 3 * 1.5**2)
    with pytest.raises(IndexError, match="0-D tensor can not be indexed"):
        Js[0]


def test_batched_jacobian_against_per_entry_finite_differences():
    xv = R.standard_normal((3, 4))
    x = paddle.to_tensor(xv, stop_gradient=False)
    W = R.standard_normal((4, 2))
    y = paddle.tanh(paddle.matmul(x, paddle.to_tensor(W)))
    J = paddle.autograd.jacobian(y, x, batch_axis=0)
    assert J.shape == [3, 2, 4]
    for b in range(3):
        expected = fd_jacobian(lambda v: np.tanh(v @ W), xv[b])
        np.testing.assert_allclose(J[b].numpy(), expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(J[:, 1, :].numpy()[2], fd_jacobian(lambda v: np.tanh(v @ W), xv[2])[1],
                               rtol=1e-6, atol=1e-8)


def test_hessian_known_values_blocks_and_batches():
    xv = np.array([0.3, -1.2, 2.0])
    x = paddle.to_tensor(xv, stop_gradient=False)
    H = paddle.autograd.hessian(paddle.sum(x**3) + paddle.sum(x) ** 2, x)
    assert type(H).__name__ == "Hessian" and H.shape == [3, 3]
    np.testing.assert_allclose(H[:].numpy(), np.diag(6 * xv) + 2.0, rtol=1e-10)
    x1 = paddle.to_tensor(R.standard_normal(3), stop_gradient=False)
    x2 = paddle.to_tensor(R.standard_normal(4), stop_gradient=False)
    Hs = paddle.autograd.hessian(paddle.sum(x1) * paddle.sum(x2 * x2), (x1, x2))
    assert [[h.shape for h in row] for row in Hs] == [[[3, 3], [3, 4]], [[4, 3], [4, 4]]]
    np.testing.assert_allclose(Hs[0][1][:].numpy(), np.tile(2 * x2.numpy(), (3, 1)), rtol=1e-10)
    np.testing.assert_allclose(Hs[1][1][:].numpy(), 2 * float(np.sum(x1.numpy())) * np.eye(4), rtol=1e-10)
    xb = paddle.to_tensor(R.standard_normal((2, 3)), stop_gradient=False)
    Hb = paddle.autograd.hessian(paddle.sum(xb**3, axis=1), xb, batch_axis=0)
    assert Hb.shape == [2, 3, 3]
    np.testing.assert_allclose(Hb[:].numpy(), np.stack([np.diag(6 * r) for r in xb.numpy()]), rtol=1e-10)


def test_errors_are_paddles():
    x = paddle.to_tensor(R.standard_normal(3), stop_gradient=False)
    with pytest.raises(ValueError, match="batch_axis should be None or 0"):
        paddle.autograd.jacobian(x * 2, x, batch_axis=1)
    with pytest.raises(ValueError, match="xs.ndim should be 0 or 1 when is_batched=False"):
        paddle.autograd.jacobian(x * 2, paddle.reshape(x, [3, 1]))
    with pytest.raises(ValueError, match="ys.ndim should be 1 or 2 when is_batched=True"):
        paddle.autograd.jacobian(paddle.sum(x), x, batch_axis=0)
    with pytest.raises(ValueError, match=r"Only support ys.numel\(\)\(3\)==1"):
        paddle.autograd.hessian(x * 2, x)
    with pytest.raises(TypeError, match="jacobian: ys must be a Tensor/Variable"):
        paddle.autograd.jacobian(np.ones(3), x)
    J = paddle.autograd.jacobian(x * 2, x)
    with pytest.raises(IndexError, match="Ellipsis"):
        J[..., 0]
    with pytest.raises(TypeError, match="Not supported index type"):
        J["a"]


def test_static_mode_on_both_backends():
    core.enable_static()
    main, start = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, start):
        x = paddle.static.data("x", [3], "float64")
        x.stop_gradient = False
        y = paddle.tanh(x) * x
        full = paddle.autograd.jacobian(y, x)[:]
        hess = paddle.autograd.hessian(paddle.sum(y), x)[:]
    xv = np.array([0.1, -0.5, 2.0])
    t = np.tanh(xv)
    for exe in (paddle.static.Executor(paddle.CPUPlace()),
                paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")):
        j, h = exe.run(main, feed={"x": xv}, fetch_list=[full, hess])
        np.testing.assert_allclose(j, np.diag(t + xv * (1 - t * t)), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(h, np.diag(2 * (1 - t * t) * (1 - xv * t)), rtol=1e-10, atol=1e-12)


# ------------------------------------------------ paddle.incubate.autograd


def test_incubate_vjp_jvp_match_paddles_documented_values_and_finite_differences():
    ia = paddle.incubate.autograd
    x = paddle.ones([2, 2], dtype="float32")
    v = paddle.to_tensor([[1.0, 0.0], [0.0, 0.0]])
    # Paddle's docstring examples (func(x) = x @ x).
    np.testing.assert_allclose(ia.vjp(lambda a: paddle.matmul(a, a), x)[1].numpy(), np.full((2, 2), 4.0))
    np.testing.assert_allclose(ia.vjp(lambda a: paddle.matmul(a, a), x, v)[1].numpy(), [[2, 1], [1, 0]])
    np.testing.assert_allclose(ia.jvp(lambda a: paddle.matmul(a, a), x, v)[1].numpy(), [[2, 1], [1, 0]])
    xv, tv = R.standard_normal(4), R.standard_normal(4)
    J = fd_jacobian(f_np, xv)
    ys, jv = ia.jvp(f_pd, paddle.to_tensor(xv), paddle.to_tensor(tv))
    np.testing.assert_allclose(ys.numpy(), f_np(xv), rtol=1e-12)
    np.testing.assert_allclose(jv.numpy(), J @ tv, rtol=1e-6, atol=1e-8)
    _, vj = ia.vjp(f_pd, paddle.to_tensor(xv), paddle.to_tensor(tv))
    np.testing.assert_allclose(vj.numpy(), tv @ J, rtol=1e-6, atol=1e-8)
    with pytest.raises(RuntimeError, match="invalid shape"):
        ia.vjp(f_pd, paddle.to_tensor(xv), paddle.ones([3], dtype="float64"))


def test_incubate_jacobian_and_hessian_flatten_and_concatenate():
    ia = paddle.incubate.autograd
    x = paddle.to_tensor([[1.0, 2.0], [3.0, 4.0]])
    J = ia.Jacobian(lambda a, b: paddle.matmul(a, b), [x, x])
    assert J.shape == [4, 8]
    # Paddle's docstring example.
    np.testing.assert_allclose(J[:, :].numpy(), [[1, 3, 0, 0, 1, 0, 2, 0], [2, 4, 0, 0, 0, 1, 0, 2],
                                                 [0, 0, 1, 3, 3, 0, 4, 0], [0, 0, 2, 4, 0, 3, 0, 4]])
    np.testing.assert_allclose(J[:, 0].numpy(), [1, 2, 0, 0])
    H = ia.Hessian(lambda a, b: paddle.sum(a * b * b), [paddle.ones([2]), paddle.full([2], 2.0)])
    assert H.shape == [4, 4]
    np.testing.assert_allclose(H[:].numpy(), [[0, 0, 4, 0], [0, 0, 0, 4], [4, 0, 2, 0], [0, 4, 0, 2]])
    xb = paddle.to_tensor(R.standard_normal((2, 3)))
    Hb = ia.Hessian(lambda a: paddle.sum(a**3, axis=1, keepdim=True), xb, is_batched=True)
    assert Hb.shape == [2, 3, 3]
    np.testing.assert_allclose(Hb[:].numpy(), np.stack([np.diag(6 * r) for r in xb.numpy()]), rtol=1e-10)
    with pytest.raises(RuntimeError, match="single element"):
        ia.Hessian(lambda a: a * 2, paddle.ones([3]))[:]


def test_incubate_api_in_static_mode_on_both_backends():
    ia = paddle.incubate.autograd
    core.enable_static()
    main, start = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, start):
        a = paddle.static.data("a", [3], "float64")
        a.stop_gradient = False
        _, vj = ia.vjp(lambda t: t * t * t, a)
        _, jv = ia.jvp(lambda t: t * t * t, a)
        hess = ia.Hessian(lambda t: paddle.sum(t**3), a)[:]
    av = np.array([1.0, 2.0, 3.0])
    for exe in (paddle.static.Executor(paddle.CPUPlace()),
                paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")):
        got = exe.run(main, feed={"a": av}, fetch_list=[vj, jv, hess])
        np.testing.assert_allclose(got[0], 3 * av**2)
        np.testing.assert_allclose(got[1], 3 * av**2)
        np.testing.assert_allclose(got[2], np.diag(6 * av))
