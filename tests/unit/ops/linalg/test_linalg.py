"""`paddle.linalg` and the `linalg` op family (dialects/pd/linalg.py): kernels against
numpy, every VJP rule against float64 finite differences (`check_vjp`, and through
symmetrizing composites for the ops that read one triangle), the composites
(norms, pinv, cond, lstsq, cov, ...) against numpy with their gradients, static
programs on both backends, and Paddle's errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pullback as paddle
import pytest
from pullback.dialects import pd
from pullback.frontend import core
from pullback.passes.autodiff import AutodiffError
from pullback.runtime.kernels import load_all
from pullback.runtime.kernels.linalg import LinalgError
from pullback.testing import check_eager_grad, check_vjp, run_op

load_all()
R = np.random.default_rng(11)
A = R.standard_normal((2, 3, 3)) + 3 * np.eye(3)  # well conditioned, batched
B = R.standard_normal((2, 3, 2))
TALL = R.standard_normal((4, 3))
WIDE = R.standard_normal((2, 3, 5))
SPD = A @ np.swapaxes(A, -1, -2) + np.eye(3)
INF = float("inf")


@pytest.fixture(autouse=True)
def eager() -> Any:
    core.disable_static()
    yield
    core.disable_static()


def t(a: np.ndarray, grad: bool = False) -> Any:
    return paddle.to_tensor(a, stop_gradient=not grad)


def sym(x: Any) -> Any:
    """A symmetric matrix from any (so finite differences see every entry)."""
    return x + paddle.transpose(x, [*range(len(x.shape) - 2), len(x.shape) - 1, len(x.shape) - 2])


# ------------------------------------------------------------------- kernels


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_kernels_match_numpy(dtype: str) -> None:
    a, b, tall = A.astype(dtype), B.astype(dtype), TALL.astype(dtype)
    tol = 1e-4 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(run_op(pd.InverseOp, a, dynamic=True), np.linalg.inv(a), rtol=tol, atol=tol)
    np.testing.assert_allclose(run_op(pd.DeterminantOp, a), np.linalg.det(a), rtol=tol)
    sign, logabs = np.linalg.slogdet(a)
    np.testing.assert_allclose(run_op(pd.SlogdetOp, a), np.stack([sign, logabs]), rtol=tol)
    spd = SPD.astype(dtype)
    low = np.linalg.cholesky(spd)
    np.testing.assert_allclose(run_op(pd.CholeskyOp, spd), low, rtol=tol, atol=tol)
    np.testing.assert_allclose(run_op(pd.CholeskyOp, spd, upper=True), np.swapaxes(low, -1, -2), rtol=tol, atol=tol)
    np.testing.assert_allclose(run_op(pd.SolveOp, a, b), np.linalg.solve(a, b), rtol=tol, atol=tol)
    np.testing.assert_allclose(run_op(pd.SolveOp, a[0], b), np.linalg.solve(a[0], b), rtol=tol, atol=tol)
    tri = np.tril(a, -1) + np.eye(3, dtype=dtype)
    np.testing.assert_allclose(
        run_op(pd.TriangularSolveOp, a, b, upper=False, transpose=True, unitriangular=True),
        np.linalg.solve(np.swapaxes(tri, -1, -2), b), rtol=tol, atol=tol)
    q, r = run_op(pd.QrOp, tall)
    np.testing.assert_allclose(q @ r, tall, rtol=tol, atol=tol)
    assert q.shape == (4, 3) and np.allclose(np.triu(r), r)
    q, r = run_op(pd.QrOp, tall, mode="complete")
    assert q.shape == (4, 4) and r.shape == (4, 3)
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=tol * 10)
    u, s, vh = run_op(pd.SvdOp, WIDE.astype(dtype))
    assert u.shape == (2, 3, 3) and s.shape == (2, 3) and vh.shape == (2, 3, 5)
    np.testing.assert_allclose((u * s[:, None, :]) @ vh, WIDE, rtol=tol * 10, atol=tol * 10)
    np.testing.assert_allclose(s, np.linalg.svd(WIDE, compute_uv=False), rtol=tol)
    w, v = run_op(pd.EighOp, spd, UPLO="U")
    np.testing.assert_allclose(w, np.linalg.eigvalsh(spd, UPLO="U"), rtol=tol)
    np.testing.assert_allclose((v * w[:, None, :]) @ np.swapaxes(v, -1, -2), spd, rtol=tol * 10, atol=tol * 10)


@pytest.mark.parametrize("shape", [(3, 3), (2, 4, 4), (4, 3), (3, 5)])
def test_lu_and_lu_unpack_rebuild_the_matrix(shape: tuple[int, ...]) -> None:
    a = R.standard_normal(shape)
    packed, piv, info = run_op(pd.LuOp, a)
    p, low, up = run_op(pd.LuUnpackOp, packed, piv)
    k = min(shape[-2:])
    np.testing.assert_allclose(p @ low @ up, a, atol=1e-12)
    assert np.all(np.abs(np.tril(low, -1)) <= 1 + 1e-12)  # partial pivoting bounds the multipliers
    assert piv.shape == (*shape[:-2], k) and piv.dtype == np.int32 and np.all(info == 0)
    # LAPACK's determinant identity: det = prod(diag U) * (-1)^(number of swaps).
    if shape[-1] == shape[-2]:
        swaps = (piv != np.arange(1, k + 1)).sum(-1)
        np.testing.assert_allclose(np.prod(np.diagonal(up, axis1=-2, axis2=-1), -1) * (-1.0) ** swaps,
                                   np.linalg.det(a))


def test_lu_frontend_and_singular_info() -> None:
    lu_, piv, info = paddle.linalg.lu(t(A), get_infos=True)
    p, low, up = paddle.linalg.lu_unpack(lu_, piv)
    np.testing.assert_allclose((p @ low @ up).numpy(), A)
    assert len(paddle.linalg.lu(t(A))) == 2 and info.dtype == paddle.int32
    _, _, info = paddle.linalg.lu(t(np.array([[1.0, 2.0], [2.0, 4.0]])), get_infos=True)
    assert int(info.numpy()) == 2  # U[1, 1] is exactly zero
    with pytest.raises(NotImplementedError, match="pivot=False"):
        paddle.linalg.lu(t(A), pivot=False)
    check_eager_grad(lambda x: paddle.linalg.lu_unpack(*paddle.linalg.lu(x))[2], [A])


def test_singular_and_indefinite_matrices_raise_naming_the_op() -> None:
    singular = np.ones((3, 3))
    with pytest.raises(LinalgError, match="'pd.inverse': x is singular"):
        run_op(pd.InverseOp, singular)
    with pytest.raises(LinalgError, match="'pd.cholesky': x is not positive definite"):
        run_op(pd.CholeskyOp, -np.eye(3))
    with pytest.raises(ValueError, match="'pd.solve': x is singular"):  # a ValueError, as in Paddle
        paddle.linalg.solve(t(singular), t(np.ones((3, 1))))
    sign, logabs = run_op(pd.SlogdetOp, singular)
    assert sign == 0 and logabs == -INF  # Paddle's (0, -inf)


# --------------------------------------------------------------- VJP rules

VJP_CASES: list[tuple[type[pd.PdOp], Callable[[], list[np.ndarray]], dict[str, Any], int]] = [
    (pd.InverseOp, lambda: [A], {}, 2),
    (pd.DeterminantOp, lambda: [A], {}, 2),
    (pd.SlogdetOp, lambda: [A], {}, 2),
    (pd.SolveOp, lambda: [A, B], {}, 2),
    (pd.SolveOp, lambda: [A[0], B], {}, 1),  # broadcast batch: x's gradient summed
    (pd.TriangularSolveOp, lambda: [A, B], {}, 2),
    (pd.TriangularSolveOp, lambda: [A, B], {"upper": False, "transpose": True, "unitriangular": True}, 1),
    (pd.TriangularSolveOp, lambda: [A[0], B], {"transpose": True}, 1),
    (pd.QrOp, lambda: [TALL], {}, 1),
    (pd.QrOp, lambda: [A], {"mode": "complete"}, 1),
    (pd.QrOp, lambda: [TALL], {"mode": "r"}, 1),
    (pd.SvdOp, lambda: [TALL], {}, 1),
    (pd.SvdOp, lambda: [WIDE], {}, 1),
    (pd.SvdOp, lambda: [A], {"full_matrices": True}, 1),
    (pd.LuOp, lambda: [A], {}, 1),
    (pd.LuUnpackOp, lambda: list(run_op(pd.LuOp, A)[:2]), {}, 1),
]


@pytest.mark.parametrize("op_cls,inputs,props,order", VJP_CASES,
                         ids=[f"{c.name}-{i}" for i, (c, *_rest) in enumerate(VJP_CASES)])
def test_vjp_against_finite_differences(op_cls: type[pd.PdOp], inputs: Callable[[], list[np.ndarray]],
                                        props: dict[str, Any], order: int) -> None:
    # SVD/QR vectors are projected by random weights: their signs are fixed by LAPACK
    # and do not flip under the small perturbations of finite differences.
    check_vjp(op_cls, inputs(), props=props, order=order, rtol=1e-4, atol=1e-6)


def test_dynamic_batch_vjp() -> None:
    check_vjp(pd.InverseOp, [A], dynamic_batch=True)
    check_vjp(pd.SolveOp, [A, B], dynamic_batch=True)


def test_cholesky_gradient_murray() -> None:
    # Only the lower triangle is read: differentiate through a symmetric input.
    spd = R.standard_normal((2, 3, 3))
    check_eager_grad(lambda x: paddle.linalg.cholesky(sym(x) + 6 * paddle.eye(3, dtype="float64")), [spd])
    check_eager_grad(lambda x: paddle.linalg.cholesky(sym(x) + 6 * paddle.eye(3, dtype="float64"), upper=True),
                     [spd[0]])


def test_eigh_gradient_distinct_eigenvalues() -> None:
    x0 = R.standard_normal((3, 3))
    check_eager_grad(lambda x: paddle.linalg.eigvalsh(sym(x)), [x0])
    # Eigenvector signs are arbitrary: check a sign-invariant function of them.
    check_eager_grad(lambda x: paddle.linalg.eigh(sym(x), UPLO="U")[1] ** 2, [x0])


def test_svd_gradient_through_values_and_squared_vectors() -> None:
    check_eager_grad(lambda x: paddle.linalg.svdvals(x), [WIDE])
    check_eager_grad(lambda x: paddle.linalg.svd(x)[0] ** 2, [TALL])


def test_undefined_gradients_are_refused_with_a_reason() -> None:
    x = t(WIDE[0], grad=True)
    q, r = paddle.linalg.qr(x)
    with pytest.raises(RuntimeError, match="'pd.qr': .* at least as many rows as columns"):
        paddle.grad([r.sum()], [x])
    y = t(TALL, grad=True)
    u, s, vh = paddle.linalg.svd(y, full_matrices=True)
    with pytest.raises(RuntimeError, match="'pd.svd': with full_matrices=True"):
        paddle.grad([u.sum()], [y])
    with pytest.raises(AutodiffError, match="mode='complete'"):
        check_vjp(pd.QrOp, [TALL], props={"mode": "complete"})


# ------------------------------------------------------------ the frontend


def _norm_cases() -> list[tuple[Any, Any, Callable[[np.ndarray], np.ndarray]]]:
    cases: list[tuple[Any, Any, Callable[[np.ndarray], np.ndarray]]] = [
        (None, None, lambda a: np.linalg.norm(a.reshape(-1))),
        ("fro", None, lambda a: np.linalg.norm(a.reshape(-1))),
        (3, 1, lambda a: np.linalg.norm(a, 3, axis=1)),
        (1, -1, lambda a: np.abs(a).sum(-1)),
        (INF, 0, lambda a: np.abs(a).max(0)),
        (-INF, 0, lambda a: np.abs(a).min(0)),
        (0, 1, lambda a: (a != 0).sum(1).astype(a.dtype)),
    ]
    for p in ["fro", "nuc", 1, -1, 2, -2, INF, -INF]:
        cases.append((p, [0, 1], lambda a, p=p: np.linalg.norm(a, p, axis=(0, 1))))
    cases.append((2, [1, 0], lambda a: np.linalg.norm(a, 2, axis=(1, 0))))
    return cases


@pytest.mark.parametrize("p,axis,ref", _norm_cases())
def test_norm_matches_numpy(p: Any, axis: Any, ref: Callable[[np.ndarray], np.ndarray]) -> None:
    a = TALL
    np.testing.assert_allclose(paddle.linalg.norm(t(a), p=p, axis=axis).numpy(), ref(a), rtol=1e-10)


def test_vector_and_matrix_norm_keepdim_and_batch() -> None:
    x = R.standard_normal((2, 3, 4))
    got = paddle.linalg.vector_norm(t(x), p=2.5, axis=[0, 2], keepdim=True).numpy()
    np.testing.assert_allclose(got, (np.abs(x) ** 2.5).sum((0, 2), keepdims=True) ** 0.4)
    got = paddle.linalg.matrix_norm(t(x), p="nuc", axis=[0, 2], keepdim=True).numpy()
    want = np.linalg.norm(np.moveaxis(x, 1, 0), "nuc", axis=(1, 2)).reshape(1, 3, 1)
    np.testing.assert_allclose(got, want)
    np.testing.assert_allclose(paddle.linalg.matrix_norm(t(x), p=-1).numpy(), np.linalg.norm(x, -1, axis=(1, 2)))


def test_norm_gradients() -> None:
    check_eager_grad(lambda x: paddle.linalg.norm(x, p="nuc", axis=[0, 1]), [TALL])
    check_eager_grad(lambda x: paddle.linalg.norm(x, p=2, axis=[-2, -1]), [WIDE])
    check_eager_grad(lambda x: paddle.linalg.vector_norm(x, p=3, axis=1), [TALL])


def test_inverse_det_slogdet_solve_frontend() -> None:
    x = t(A)
    np.testing.assert_allclose(paddle.linalg.inv(x).numpy(), np.linalg.inv(A))
    np.testing.assert_allclose(paddle.inverse(x).numpy(), np.linalg.inv(A))
    np.testing.assert_allclose(x.inverse().numpy(), np.linalg.inv(A))
    np.testing.assert_allclose(paddle.linalg.det(x).numpy(), np.linalg.det(A))
    np.testing.assert_allclose(paddle.linalg.slogdet(x).numpy(), np.stack(np.linalg.slogdet(A)))
    np.testing.assert_allclose(paddle.linalg.solve(x, t(B)).numpy(), np.linalg.solve(A, B))
    vec = R.standard_normal(3)
    np.testing.assert_allclose(paddle.linalg.solve(t(A[0]), t(vec)).numpy(), np.linalg.solve(A[0], vec))
    np.testing.assert_allclose(paddle.linalg.solve(x, t(np.swapaxes(B, -1, -2)), left=False).numpy(),
                               np.swapaxes(B, -1, -2) @ np.linalg.inv(A))
    np.testing.assert_allclose(paddle.linalg.solve(t(A[0]), t(vec), left=False).numpy(), vec @ np.linalg.inv(A[0]))
    low = np.linalg.cholesky(SPD)
    np.testing.assert_allclose(paddle.linalg.cholesky_solve(t(B), t(low)).numpy(), np.linalg.solve(SPD, B))
    np.testing.assert_allclose(
        paddle.linalg.cholesky_solve(t(B), t(np.swapaxes(low, -1, -2)), upper=True).numpy(),
        np.linalg.solve(SPD, B))
    np.testing.assert_allclose(t(SPD).cholesky().numpy(), low)
    check_eager_grad(lambda l, b: paddle.linalg.cholesky_solve(b, l), [low, B])


def test_decompositions_frontend() -> None:
    q, r = paddle.linalg.qr(t(TALL))
    np.testing.assert_allclose((q @ r).numpy(), TALL)
    r_only = paddle.linalg.qr(t(TALL), mode="r")
    np.testing.assert_allclose(np.abs(r_only.numpy()), np.abs(np.linalg.qr(TALL, mode="r")))
    u, s, vh = paddle.linalg.svd(t(TALL), full_matrices=True)
    assert u.shape == [4, 4] and vh.shape == [3, 3]
    np.testing.assert_allclose(paddle.linalg.svdvals(t(TALL)).numpy(), np.linalg.svd(TALL, compute_uv=False))
    w, v = paddle.linalg.eigh(t(SPD), UPLO="U")
    np.testing.assert_allclose(w.numpy(), np.linalg.eigvalsh(SPD))
    np.testing.assert_allclose(paddle.linalg.eigvalsh(t(SPD)).numpy(), np.linalg.eigvalsh(SPD))


def test_pinv_rank_cond_lstsq() -> None:
    rank2 = TALL[:, :2] @ R.standard_normal((2, 3))  # rank 2
    np.testing.assert_allclose(paddle.linalg.pinv(t(rank2), rcond=1e-10).numpy(),
                               np.linalg.pinv(rank2, rcond=1e-10), atol=1e-10)
    np.testing.assert_allclose(paddle.linalg.pinv(t(SPD), hermitian=True).numpy(), np.linalg.inv(SPD), rtol=1e-8)
    assert paddle.linalg.matrix_rank(t(rank2)).numpy() == 2
    assert paddle.linalg.matrix_rank(t(rank2)).dtype == paddle.int64
    np.testing.assert_array_equal(paddle.linalg.matrix_rank(t(A), tol=1e9).numpy(), [0, 0])
    s = np.linalg.svd(A, compute_uv=False)  # a per-matrix tolerance between two singular values
    np.testing.assert_array_equal(
        paddle.linalg.matrix_rank(t(A), tol=t(np.array([s[0, 1] + 1e-9, s[1, 2] + 1e-9]))).numpy(), [1, 2])
    np.testing.assert_array_equal(paddle.linalg.matrix_rank(t(A), atol=s[0, 0] + 1.0, rtol=0.0).numpy(), [0, 0])
    np.testing.assert_array_equal(paddle.linalg.matrix_rank(t(SPD), hermitian=True).numpy(), [3, 3])
    for p in [None, 2, -2, "fro", "nuc", 1, -1, INF, -INF]:
        np.testing.assert_allclose(paddle.linalg.cond(t(A), p=p).numpy(), np.linalg.cond(A, p), rtol=1e-8)
    y = R.standard_normal((4, 2))
    sol, res, rank, sv = paddle.linalg.lstsq(t(TALL), t(y))
    want_sol, want_res, want_rank, want_sv = np.linalg.lstsq(TALL, y, rcond=None)
    np.testing.assert_allclose(sol.numpy(), want_sol)
    np.testing.assert_allclose(res.numpy(), want_res)
    assert int(rank.numpy()) == want_rank
    np.testing.assert_allclose(sv.numpy(), want_sv)
    check_eager_grad(lambda x: paddle.linalg.pinv(x), [TALL])


def test_matrix_power_multi_dot_cross() -> None:
    for n in [-3, -1, 0, 1, 2, 5]:
        np.testing.assert_allclose(paddle.linalg.matrix_power(t(A), n).numpy(), np.linalg.matrix_power(A, n),
                                   rtol=1e-9, atol=1e-12)
    mats = [R.standard_normal(3), R.standard_normal((3, 4)), R.standard_normal((4, 2)), R.standard_normal(2)]
    np.testing.assert_allclose(paddle.linalg.multi_dot([t(m) for m in mats]).numpy(), np.linalg.multi_dot(mats))
    x, y = R.standard_normal((2, 3, 4)), R.standard_normal((2, 3, 4))
    np.testing.assert_allclose(paddle.cross(t(x), t(y)).numpy(), np.cross(x, y, axis=1))
    np.testing.assert_allclose(t(x[:, :, :3]).cross(t(y[:, :, :3]), axis=-1).numpy(),
                               np.cross(x[:, :, :3], y[:, :, :3]))
    check_eager_grad(lambda a, b: paddle.cross(a, b), [x, y])
    check_eager_grad(lambda a: paddle.linalg.matrix_power(a, -2), [A])


def test_cov_and_corrcoef() -> None:
    x = R.standard_normal((3, 6))
    np.testing.assert_allclose(paddle.linalg.cov(t(x)).numpy(), np.cov(x))
    np.testing.assert_allclose(paddle.linalg.cov(t(x.T), rowvar=False, ddof=False).numpy(), np.cov(x, ddof=0))
    fw, aw = np.array([1, 2, 1, 3, 1, 2]), R.uniform(0.5, 2.0, 6)
    np.testing.assert_allclose(
        paddle.linalg.cov(t(x), fweights=t(fw), aweights=t(aw)).numpy(), np.cov(x, fweights=fw, aweights=aw))
    np.testing.assert_allclose(paddle.linalg.cov(t(x[0])).numpy(), np.cov(x[0]))
    np.testing.assert_allclose(paddle.linalg.corrcoef(t(x)).numpy(), np.corrcoef(x))
    np.testing.assert_allclose(t(x).corrcoef(rowvar=True).numpy(), np.corrcoef(x))
    check_eager_grad(lambda a: paddle.linalg.corrcoef(a), [x])


def test_errors_name_the_function_and_argument() -> None:
    with pytest.raises(ValueError, match=r"inverse: 'x' must be square matrices .* got shape \[4, 3\]"):
        paddle.linalg.inv(t(TALL))
    with pytest.raises(ValueError, match="det: 'x' must be a matrix or a batch of matrices"):
        paddle.linalg.det(t(np.ones(3)))
    with pytest.raises(TypeError, match="cholesky: 'x' must be float32 or float64"):
        paddle.linalg.cholesky(paddle.to_tensor(np.eye(3, dtype=np.int64)))
    with pytest.raises(ValueError, match="do not fit: y needs 3 rows"):
        paddle.linalg.solve(t(A), t(np.ones((2, 4, 1))))
    with pytest.raises(ValueError, match="matrix_norm: p must be one of"):
        paddle.linalg.norm(t(TALL), p=3, axis=[0, 1])
    with pytest.raises(ValueError, match="qr: mode must be one of"):
        paddle.linalg.qr(t(TALL), mode="economic")
    with pytest.raises(ValueError, match="eigh: UPLO must be 'L' or 'U'"):
        paddle.linalg.eigh(t(SPD), UPLO="l")
    # eig/eigvals compute complex results (tests/unit/dtypes/test_complex_linalg.py);
    # cholesky of a complex matrix is refused, as Paddle 3.3.1's CPU kernel refuses it.
    with pytest.raises(TypeError, match="cholesky: 'x' is complex128; cholesky does not take complex"):
        paddle.linalg.cholesky(paddle.to_tensor(A.astype(np.complex128)))
    with pytest.raises(ValueError, match="cross: dimension 0 of x"):
        paddle.cross(t(TALL), t(TALL), axis=0)
    with pytest.raises(TypeError, match="matrix_power: n must be an int"):
        paddle.linalg.matrix_power(t(A), 1.5)


def test_namespaces() -> None:
    import pullback.linalg as linalg

    for n in ["norm", "vector_norm", "matrix_norm", "inv", "det", "slogdet", "solve", "cholesky",
              "cholesky_solve", "triangular_solve", "qr", "svd", "svdvals", "eigh", "eigvalsh", "eig",
              "eigvals", "pinv", "matrix_power", "matrix_rank", "multi_dot", "cond", "lstsq", "cov",
              "corrcoef"]:
        assert n in linalg.__all__ and callable(getattr(paddle.linalg, n)), n
    assert paddle.tensor.linalg.cholesky is paddle.linalg.cholesky
    assert paddle.norm is paddle.linalg.norm


# ------------------------------------------------------------- static programs


@pytest.mark.parametrize("backend", ["compiled", "interpreter"])
def test_static_program_values_and_gradients(backend: str) -> None:
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [None, 3, 3], "float64")
        x.stop_gradient = False
        u, s, vh = paddle.linalg.svd(x)
        outs = [paddle.linalg.inv(x), paddle.linalg.det(x), s,
                paddle.linalg.norm(x, p="nuc", axis=[-2, -1]), paddle.linalg.solve(x, x)]
        loss = paddle.add_n([paddle.sum(paddle.linalg.det(x)), paddle.sum(s)])
        (gx,) = paddle.static.gradients([loss], [x])
    kw = {} if backend == "compiled" else {"backend": "interpreter"}
    exe = paddle.static.Executor(paddle.CPUPlace(), **kw)
    # (the compiled backend runs a program with host-only ops on the interpreter)
    got = exe.run(main, feed={"x": A}, fetch_list=[*outs, gx])
    uu, ss, vv = np.linalg.svd(A)
    want = [np.linalg.inv(A), np.linalg.det(A), ss, ss.sum(-1), np.broadcast_to(np.eye(3), A.shape),
            np.linalg.det(A)[:, None, None] * np.swapaxes(np.linalg.inv(A), -1, -2) + uu @ vv]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-10)



def test_composites_compile_natively_and_agree_with_the_interpreter() -> None:
    """cross, cov, corrcoef, multi_dot, matrix_power (n > 0) and the vector norms use
    no host-only op: the compiled backend runs them and must match the interpreter."""
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [3, 3], "float64")
        x.stop_gradient = False
        outs = [paddle.cross(x, x * 2.0 + 1.0), paddle.linalg.cov(x), paddle.linalg.corrcoef(x),
                paddle.linalg.multi_dot([x, x, x]), paddle.linalg.matrix_power(x, 3),
                paddle.linalg.vector_norm(x, p=3, axis=1), paddle.linalg.matrix_norm(x, p=1)]
        loss = paddle.add_n([paddle.sum(o) for o in outs])
        (gx,) = paddle.static.gradients([loss], [x])
    feed = {"x": A[0]}
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback to the interpreter
        compiled = paddle.static.Executor(paddle.CPUPlace()).run(main, feed=feed, fetch_list=[*outs, gx])
    reference = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter").run(
        main, feed=feed, fetch_list=[*outs, gx])
    for c, r in zip(compiled, reference):
        np.testing.assert_allclose(c, r, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(reference[1], np.cov(A[0]))
