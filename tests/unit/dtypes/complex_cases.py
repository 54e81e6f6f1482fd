"""Complex-number cases written against the `paddle` API, run by real PaddlePaddle
3.3.1 (`gen_complex_reference.py` writes `data/complex_reference.npz`) and by
pullback (`test_complex_functions.py`, `test_complex_linalg.py`), which compare.

A case is `case(paddle) -> {key: array}`.  Values that depend on a choice LAPACK
leaves free (the phase of an eigen- or singular vector, the order of `eig`'s
eigenvalues) are reported in a form that does not: magnitudes, sorted values.
Gradients are not recorded here but checked against finite differences in the
tests, except `det`/`inv`/`slogdet`'s, which also show where Paddle agrees and
where it is wrong (`slogdet`'s sign).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

_RNG = np.random.default_rng(2026)


def _c(*shape: int) -> np.ndarray:
    return _RNG.standard_normal(shape) + 1j * _RNG.standard_normal(shape)


A = _c(3, 3) + 2 * np.eye(3)
"""A well-conditioned general complex matrix."""
B = _c(3, 2)
TALL = _c(4, 3)
H = A @ A.conj().T + 3 * np.eye(3)
"""Hermitian positive definite, distinct eigenvalues."""
Z = np.array([1 + 2j, -3 + 0.5j, 0j, 2 - 0j, -1j])


def _np(t: Any) -> np.ndarray:
    return np.asarray(t.numpy())


def _sorted(w: np.ndarray) -> np.ndarray:
    """Eigenvalues in a fixed order (by real, then imaginary part)."""
    return w[np.lexsort((np.round(w.imag, 6), np.round(w.real, 6)))]


def _grad(paddle: Any, fn: Callable[[Any], Any], a: np.ndarray) -> np.ndarray:
    """d loss / d re + i d loss / d im of the real scalar `fn(x)`."""
    x = paddle.to_tensor(a, stop_gradient=False)
    fn(x).backward()
    return _np(x.grad)


def elementwise(paddle: Any) -> dict[str, Any]:
    """sgn, polar, isreal, and their dtypes."""
    z128, z64 = paddle.to_tensor(Z), paddle.to_tensor(Z.astype(np.complex64))
    r = paddle.to_tensor(np.array([1.0, 2.5, 0.5]))
    t = paddle.to_tensor(np.array([0.3, -2.0, 4.0]))
    return {
        "sgn": _np(paddle.sgn(z128)), "sgn64": _np(paddle.sgn(z64)), "sgn64_dtype": str(paddle.sgn(z64).dtype),
        "sgn_real": _np(paddle.sgn(paddle.to_tensor(np.array([-2.0, 0.0, 3.0])))),
        "method_sgn": _np(z128.sgn()),
        "polar": _np(paddle.polar(r, t)), "polar_dtype": str(paddle.polar(r, t).dtype),
        "polar32": _np(paddle.polar(r.astype("float32"), t.astype("float32"))),
        "polar32_dtype": str(paddle.polar(r.astype("float32"), t.astype("float32")).dtype),
        "isreal": _np(paddle.isreal(z128)), "isreal_int": _np(paddle.isreal(paddle.to_tensor([1, 2]))),
        "method_isreal": _np(z64.isreal()),
        "is_complex": np.array([paddle.is_complex(z128), paddle.is_complex(r), z64.is_complex()]),
    }


def linalg(paddle: Any) -> dict[str, Any]:
    """Forward values of the complex linear algebra Paddle 3.3.1 computes on CPU."""
    L = paddle.linalg
    a, b, tall, h = (paddle.to_tensor(v) for v in (A, B, TALL, H))
    a64 = paddle.to_tensor(A.astype(np.complex64))
    u, s, vh = L.svd(tall)
    q, r = L.qr(tall)
    w, v = L.eig(a)
    wh, vh_ = L.eigh(h)
    return {
        "det": _np(L.det(a)), "det64": _np(L.det(a64)), "det64_dtype": str(L.det(a64).dtype),
        "inv": _np(L.inv(a)), "slogdet": _np(L.slogdet(a)),
        "matmul": _np(paddle.matmul(a, b)),
        "triangular_solve": _np(L.triangular_solve(a, b, upper=False)),
        "triangular_solve_t": _np(L.triangular_solve(a, b, transpose=True, unitriangular=True)),
        "svd_s": _np(s), "svd_s_dtype": str(s.dtype), "svd_abs_u": np.abs(_np(u)), "svd_abs_vh": np.abs(_np(vh)),
        "qr_abs_q": np.abs(_np(q)), "qr_abs_r": np.abs(_np(r)),
        "eig_w": _sorted(_np(w)), "eig_dtype": str(w.dtype), "eig_v_norms": np.linalg.norm(_np(v), axis=0),
        "eigvals": _sorted(_np(L.eigvals(a))), "eigvals_real": _sorted(_np(L.eigvals(paddle.to_tensor(A.real)))),
        "eigvals_real_dtype": str(L.eigvals(paddle.to_tensor(A.real)).dtype),
        "eigh_w": _np(wh), "eigh_w_dtype": str(wh.dtype), "eigh_abs_v": np.abs(_np(vh_)),
        "eigvalsh": _np(L.eigvalsh(h)),
        "matrix_power3": _np(L.matrix_power(a, 3)), "matrix_power_m2": _np(L.matrix_power(a, -2)),
        "norm_fro": _np(L.norm(a)), "norm_fro_dtype": str(L.norm(a).dtype),
        "norm_2": _np(L.norm(a, p=2, axis=[0, 1])), "norm_vec3": _np(L.norm(a.flatten(), p=3)),
        "norm_vec0": _np(L.norm(paddle.to_tensor(Z), p=0)), "norm_vec0_dtype": str(L.norm(paddle.to_tensor(Z), p=0).dtype),
        "norm_vec_inf": _np(L.norm(a.flatten(), p=float("inf"))), "norm_vec1": _np(L.norm(a.flatten(), p=1)),
        "pinv": _np(L.pinv(tall)),
        "cond": _np(L.cond(a)), "cond_dtype": str(L.cond(a).dtype), "cond_fro": _np(L.cond(a, p="fro")),
        "matrix_rank": _np(L.matrix_rank(tall)),
        "dot": _np(paddle.dot(a[0], a[1])), "outer": _np(paddle.outer(a[0], b[:, 0])),
        "kron": _np(paddle.kron(a, b)), "einsum": _np(paddle.einsum("ij,jk->ik", a, b)),
        "cross": _np(paddle.cross(a, a * a)), "trace": _np(paddle.trace(a)),
    }


def _re(paddle: Any, t: Any) -> Any:
    return paddle.real(t) if t.is_complex() else t


def linalg_grads(paddle: Any) -> dict[str, Any]:
    """Paddle's gradients of det, inv and slogdet (`(re, im)` weighted sums)."""
    L = paddle.linalg
    wr, wi = 0.7, -0.4

    def proj(t: Any) -> Any:
        return (paddle.real(t) * wr + paddle.imag(t) * wi).sum()

    def slogdet_log(x: Any) -> Any:
        return _re(paddle, L.slogdet(x)[1])

    def slogdet_sign(x: Any) -> Any:
        return proj(L.slogdet(x)[0]) + _re(paddle, L.slogdet(x)[1])

    return {
        "det": _grad(paddle, lambda x: proj(L.det(x)), A),
        "inv": _grad(paddle, lambda x: proj(L.inv(x)), A),
        "slogdet_log": _grad(paddle, slogdet_log, A),
        "slogdet_sign": _grad(paddle, slogdet_sign, A),
    }


CASES: dict[str, Callable[[Any], dict[str, Any]]] = {
    "elementwise": elementwise, "linalg": linalg, "linalg_grads": linalg_grads,
}
