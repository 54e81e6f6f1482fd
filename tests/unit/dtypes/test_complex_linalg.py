"""Complex linear algebra: forward values against Paddle 3.3.1's
(`complex_cases.linalg`, `data/complex_reference.npz`), gradients in Paddle's
convention (`d/d re + i d/d im`) against float64 finite differences, the places
where Paddle 3.3.1 is wrong (complex `pinv`, `slogdet`'s sign gradient), static
programs, and the clear refusals of what is not supported.

Which functions Paddle 3.3.1 computes on complex CPU tensors (read off it):
det, inv, matmul, slogdet, triangular_solve, svd, eig, eigvals, eigh, eigvalsh,
matrix_power, norm, pinv, cond, matrix_rank, dot, outer, kron, einsum, cross and
trace, all with gradients except eigvals; it has no complex CPU kernel for solve,
bmm, cholesky, cholesky_solve, multi_dot and lstsq, and its complex qr gradient
crashes.  pullback computes solve, bmm and qr (with gradients) too, and refuses
the other four by name.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pullback as paddle
import pullback_complex_cases as CASES
from pullback.testing import check_complex_grad

HERE = Path(__file__).resolve().parent
REF = np.load(HERE / "data" / "complex_reference.npz")

L = paddle.linalg
RNG = np.random.default_rng(11)


def _c(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)


A = _c(3, 3) + 3 * np.eye(3)
B = _c(3, 2)
TALL = _c(4, 3)


def _check(key: str, got: Any) -> None:
    want = REF[f"linalg/{key}"]
    if want.dtype.kind == "U":
        assert str(got) == str(want), key
    else:
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6, atol=1e-7, err_msg=key)


def test_forward_values_match_paddle() -> None:
    got = CASES.CASES["linalg"](paddle)
    for key, value in got.items():
        if key not in ("pinv", "cond_fro"):  # Paddle 3.3.1 is wrong there (below)
            _check(key, value)


def test_pinv_is_right_where_paddle_returns_its_conjugate() -> None:
    """Paddle 3.3.1's complex `pinv` is the conjugate of the pseudo-inverse (its
    product with x is not the identity); pullback's is numpy's."""
    tall = CASES.TALL
    paddle_pinv = REF["linalg/pinv"]
    ours = L.pinv(paddle.to_tensor(tall)).numpy()
    np.testing.assert_allclose(ours, np.linalg.pinv(tall), rtol=1e-10)
    np.testing.assert_allclose(ours @ tall, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(ours, paddle_pinv.conj(), rtol=1e-6)
    assert np.abs(paddle_pinv @ tall - np.eye(3)).max() > 0.1


def test_frobenius_cond_is_real_where_paddle_returns_a_complex_number() -> None:
    """A condition number is real and positive; Paddle 3.3.1's `cond(x, p='fro')` of a
    complex matrix is a complex number (its magnitude is not numpy's either)."""
    a = CASES.A
    ours = L.cond(paddle.to_tensor(a), p="fro")
    assert ours.dtype == paddle.float64
    np.testing.assert_allclose(ours.numpy(), np.linalg.cond(a, "fro"), rtol=1e-10)
    paddle_cond = REF["linalg/cond_fro"]
    assert np.iscomplexobj(paddle_cond) and abs(paddle_cond.imag) > 1


def test_gradients_that_paddle_has_match_paddle() -> None:
    got = CASES.CASES["linalg_grads"](paddle)
    for key in ("det", "inv", "slogdet_log"):
        np.testing.assert_allclose(got[key], REF[f"linalg_grads/{key}"], rtol=1e-6, atol=1e-8, err_msg=key)


def test_slogdet_sign_gradient_is_right_where_paddle_drops_it() -> None:
    """Paddle 3.3.1 differentiates only slogdet's log row; for a complex matrix the
    sign `det/|det|` varies too.  pullback's gradient matches finite differences,
    Paddle's does not."""
    from pullback.testing.finite_differences import fd_complex_grad

    a = CASES.A

    def loss(m: np.ndarray) -> float:
        sign, logabs = np.linalg.slogdet(m)
        return float(sign.real * 0.7 + sign.imag * -0.4 + logabs)

    want = fd_complex_grad(loss, a)
    ours = CASES.CASES["linalg_grads"](paddle)["slogdet_sign"]
    np.testing.assert_allclose(ours, want, rtol=1e-6, atol=1e-8)
    assert np.abs(REF["linalg_grads/slogdet_sign"] - want).max() > 0.1


def _herm(a: Any) -> Any:
    """`(a + a^H) / 2`: the Hermitian matrix eigh reads, made a function of all of a
    so finite differences see what the gradient means."""
    return (a + paddle.conj(paddle.transpose(a, [1, 0]))) * 0.5


def _outer_h(w: Any, v: Any) -> Any:
    """`V diag(sin w) V^H`: independent of the eigenvectors' arbitrary phases."""
    return paddle.matmul(v * paddle.cast(paddle.sin(w), v.dtype), paddle.conj(paddle.transpose(v, [1, 0])))


# Each: (function of the inputs, inputs).  Functions of eigen- or singular vectors
# read them through quantities their arbitrary phases do not change (|V|, U VH, ...).
GRAD_CASES: dict[str, tuple[Any, list[np.ndarray]]] = {
    "det": (lambda a: L.det(a), [A]),
    "inv": (lambda a: L.inv(a), [A]),
    "slogdet": (lambda a: L.slogdet(a), [A]),
    "solve": (lambda a, b: L.solve(a, b), [A, B]),
    "solve_vector": (lambda a, b: L.solve(a, b[:, 0]), [A, B]),
    "triangular_solve": (lambda a, b: L.triangular_solve(a, b, upper=False), [A, B]),
    "triangular_solve_t_unit": (lambda a, b: L.triangular_solve(a, b, transpose=True, unitriangular=True), [A, B]),
    "matmul_bmm": (lambda a, b: paddle.bmm(a[None], b[None]), [A, B]),
    "matrix_power_3": (lambda a: L.matrix_power(a, 3), [A]),
    "matrix_power_m2": (lambda a: L.matrix_power(a, -2), [A]),
    "norm_fro": (lambda a: L.norm(a), [A]),
    "norm_2": (lambda a: L.norm(a, p=2, axis=[0, 1]), [A]),
    "norm_nuc": (lambda a: L.norm(a, p="nuc", axis=[0, 1]), [A]),
    "norm_vector_3": (lambda a: L.norm(a.flatten(), p=3), [A]),
    "svdvals": (lambda a: L.svd(a)[1], [TALL]),
    "svd_u_vh": (lambda a: (lambda u, s, vh: paddle.matmul(u, vh))(*L.svd(a)), [TALL]),
    "svd_abs": (lambda a: (lambda u, s, vh: paddle.abs(u).sum(0) + paddle.abs(vh).sum(0))(*L.svd(a)), [TALL]),
    "pinv": (lambda a: L.pinv(a), [TALL]),
    "pinv_hermitian": (lambda a: L.pinv(_herm(a), hermitian=True), [A]),
    "eigvalsh": (lambda a: L.eigvalsh(_herm(a)), [A]),
    "eigh_abs_v": (lambda a: paddle.abs(L.eigh(_herm(a))[1]), [A]),
    "eigh_outer": (lambda a: _outer_h(*L.eigh(_herm(a))), [A]),
    "qr_q": (lambda a: L.qr(a)[0], [TALL]),
    "qr_r": (lambda a: L.qr(a)[1], [TALL]),
    "eigvals": (lambda a: L.eigvals(a), [A]),
    "eigvals_of_real": (lambda a: L.eigvals(a), [A.real]),
    "eig_abs_v": (lambda a: paddle.abs(L.eig(a)[1]), [A]),
    "eig_abs_v_of_real": (lambda a: paddle.abs(L.eig(a)[1]), [A.real]),
    "cond": (lambda a: L.cond(a), [A]),
    "cond_fro": (lambda a: L.cond(a, p="fro"), [A]),
    "dot_rows": (lambda a: paddle.dot(a, a * a), [A]),
    "outer": (lambda a, b: paddle.outer(a[0], b[:, 1]), [A, B]),
    "kron": (lambda a, b: paddle.kron(a, b), [A, B]),
    "einsum": (lambda a, b: paddle.einsum("ij,jk->ik", a * a, b), [A, B]),
    "cross": (lambda a, b: paddle.cross(a, b[:, :1] * a), [A, B]),
    "trace": (lambda a: paddle.trace(a * a), [A]),
    "batched_det_inv": (lambda a: L.det(L.inv(paddle.stack([a, a * 0.5]))), [A]),
    "batched_eigvals_svdvals": (lambda a: paddle.abs(L.eigvals(paddle.stack([a, a * a]))).sum(1)
                                + L.svd(paddle.stack([a, a * a]))[1].sum(1), [A]),
    "batched_qr_eigh": (lambda a: paddle.abs(L.qr(paddle.stack([a, a * a]))[0]).sum(1)
                        + L.eigvalsh(paddle.stack([_herm(a), _herm(a * a)])), [A]),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_gradients_match_finite_differences(name: str) -> None:
    fn, inputs = GRAD_CASES[name]
    check_complex_grad(fn, inputs)


@pytest.mark.parametrize("name", ["det", "inv", "solve"])
def test_second_order_gradients_match_finite_differences(name: str) -> None:
    fn, inputs = GRAD_CASES[name]
    check_complex_grad(fn, inputs, order=2)


def test_complex64_keeps_its_dtypes() -> None:
    a = paddle.to_tensor(A.astype(np.complex64))
    assert L.det(a).dtype == paddle.complex64 and L.inv(a).dtype == paddle.complex64
    assert L.svd(a)[1].dtype == paddle.float32 and L.eigvalsh(a).dtype == paddle.float32
    assert L.eig(a)[0].dtype == paddle.complex64
    assert L.eigvals(paddle.to_tensor(A.real.astype(np.float32))).dtype == paddle.complex64
    np.testing.assert_allclose(L.det(a).numpy(), np.linalg.det(A), rtol=1e-5)


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_static_program_with_gradients_matches_eager(backend: str) -> None:
    """On the compiled backend the program (complex, and host-only LAPACK ops) runs
    on the interpreter, saying so in a warning."""
    def eager() -> list[np.ndarray]:
        x = paddle.to_tensor(A, stop_gradient=False)
        w = L.eigvals(x)
        loss = paddle.abs(L.det(x)) + paddle.real(w).sum() + L.svd(x)[1].sum()
        loss.backward()
        return [loss.numpy(), x.grad.numpy()]

    paddle.enable_static()
    try:
        main, start = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, start):
            x = paddle.static.data("x", [3, 3], dtype="complex128")
            x.stop_gradient = False
            w = L.eigvals(x)
            loss = paddle.abs(L.det(x)) + paddle.real(w).sum() + L.svd(x)[1].sum()
            (gx,) = paddle.static.gradients([loss], [x])
        exe = paddle.static.Executor(paddle.CPUPlace(), backend=backend)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = exe.run(main, feed={"x": A}, fetch_list=[loss, gx])
    finally:
        paddle.disable_static()
    fell_back = [str(w.message) for w in caught if "running this program on the interpreter" in str(w.message)]
    assert bool(fell_back) == (backend == "compiled"), fell_back
    for g, w_ in zip(got, eager()):
        np.testing.assert_allclose(g, w_, rtol=1e-10)


def test_unsupported_complex_combinations_are_clear_errors() -> None:
    from xdsl.utils.exceptions import VerifyException

    from pullback.dialects import pd

    z = paddle.to_tensor(A)
    with pytest.raises(TypeError, match="cholesky: 'x' is complex128; cholesky does not take complex matrices"):
        L.cholesky(z)
    with pytest.raises(TypeError, match="lu: 'x' is complex128; lu does not take complex matrices"):
        L.lu(z)
    with pytest.raises(TypeError, match="cholesky_solve: 'x' is complex128; cholesky_solve does not take complex"):
        L.cholesky_solve(paddle.to_tensor(B), z)
    with pytest.raises(TypeError, match="lstsq: 'x' is complex128; lstsq does not take complex"):
        L.lstsq(z, paddle.to_tensor(B))
    with pytest.raises(TypeError, match="multi_dot: 'x.0.' must be float32 or float64, got complex128"):
        L.multi_dot([z, z])
    with pytest.raises(ValueError, match="elementwise_max.*complex128"):
        paddle.maximum(z, z)
    # The dialect refuses a complex operand of an op that does not declare complex
    # numbers, naming op and dtype, however the op is built.
    v = pd.DataOp.make("z", [3, 3], dtype="complex64").results[0]
    with pytest.raises(VerifyException, match="'pd.cholesky': x must be float32 or float64, got .*complex<f32>"):
        pd.CholeskyOp.make(v)
    # Operands of two dtypes are not silently cast.
    with pytest.raises((TypeError, ValueError), match="solve"):
        L.solve(z, paddle.to_tensor(B.real))
