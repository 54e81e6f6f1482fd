"""Kernels of the linear-algebra ops: `numpy.linalg` (LAPACK) over the last two
dimensions, the leading ones a batch.  A singular or not positive-definite matrix
raises `LinalgError` naming the op, rather than returning infinities."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from pullback.dialects import pd
from pullback.runtime.interpreter import InterpreterError, kernel


class LinalgError(InterpreterError, ValueError):
    """A matrix the op cannot handle (singular, not positive definite), naming the op."""


def _lapack(op: pd.PdOp, what: str, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
    """`fn(*args, **kw)` with numpy's LinAlgError turned into one naming the op."""
    try:
        return fn(*args, **kw)
    except np.linalg.LinAlgError as e:
        raise LinalgError(f"'{op.name}': {what} ({e})") from None


def _part(x: np.ndarray) -> np.dtype:
    """The real dtype of x's elements' parts (x's own dtype when real): of singular
    values and Hermitian eigenvalues, which are real."""
    return x.real.dtype


@kernel(pd.InverseOp)
def inverse(op: pd.InverseOp, x: np.ndarray) -> np.ndarray:
    """`numpy.linalg.inv`."""
    return np.asarray(_lapack(op, "x is singular", np.linalg.inv, x), dtype=x.dtype)


@kernel(pd.DeterminantOp)
def determinant(op: pd.DeterminantOp, x: np.ndarray) -> np.ndarray:
    """`numpy.linalg.det`."""
    return np.asarray(np.linalg.det(x), dtype=x.dtype)


@kernel(pd.SlogdetOp)
def slogdet(op: pd.SlogdetOp, x: np.ndarray) -> np.ndarray:
    """`numpy.linalg.slogdet`, sign and log stacked on a new leading axis."""
    sign, logabs = np.linalg.slogdet(x)
    return np.stack([sign, logabs]).astype(x.dtype)


@kernel(pd.CholeskyOp)
def cholesky(op: pd.CholeskyOp, x: np.ndarray) -> np.ndarray:
    """`numpy.linalg.cholesky` (reads the lower triangle), transposed when upper."""
    low = np.asarray(_lapack(op, "x is not positive definite", np.linalg.cholesky, x))
    return (np.swapaxes(low, -1, -2) if op.prop("upper") else low).astype(x.dtype)


@kernel(pd.SolveOp)
def solve(op: pd.SolveOp, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """`numpy.linalg.solve` (batch dimensions broadcast)."""
    return np.asarray(_lapack(op, "x is singular", np.linalg.solve, x, y), dtype=x.dtype)


@kernel(pd.TriangularSolveOp)
def triangular_solve(op: pd.TriangularSolveOp, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Solve with the triangle of x (unit diagonal if asked), transposed if asked."""
    a = np.triu(x) if op.prop("upper") else np.tril(x)
    if op.prop("unitriangular"):
        n = a.shape[-1]
        a = a.copy()
        a[..., np.arange(n), np.arange(n)] = 1
    if op.prop("transpose"):
        a = np.swapaxes(a, -1, -2)
    return np.asarray(_lapack(op, "x is singular", np.linalg.solve, a, y), dtype=x.dtype)


@kernel(pd.QrOp)
def qr(op: pd.QrOp, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`numpy.linalg.qr` (mode `r` computes the reduced Q as well)."""
    mode: Literal["complete", "reduced"] = "complete" if op.prop("mode") == "complete" else "reduced"
    q, r = np.linalg.qr(x, mode=mode)
    return q.astype(x.dtype), r.astype(x.dtype)


@kernel(pd.SvdOp)
def svd(op: pd.SvdOp, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`numpy.linalg.svd`: U, S (descending), VH."""
    u, s, vh = _lapack(op, "the SVD did not converge", np.linalg.svd, x,
                       full_matrices=op.prop("full_matrices"))
    return u.astype(x.dtype), s.astype(_part(x)), vh.astype(x.dtype)


@kernel(pd.EighOp)
def eigh(op: pd.EighOp, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`numpy.linalg.eigh` reading the `UPLO` triangle."""
    w, v = _lapack(op, "eigh did not converge", np.linalg.eigh, x,
                   UPLO=op.prop("UPLO"))
    return w.astype(_part(x)), v.astype(x.dtype)


@kernel(pd.EigOp)
def eig(op: pd.EigOp, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`numpy.linalg.eig` (LAPACK's geev): complex eigenvalues and unit-norm
    eigenvectors, complex even for a real matrix."""
    w, v = _lapack(op, "eig did not converge", np.linalg.eig, x)
    out = np.result_type(x.dtype, np.complex64)
    return np.asarray(w, dtype=out), np.asarray(v, dtype=out)


@kernel(pd.LuOp)
def lu(op: pd.LuOp, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Doolittle elimination with partial pivoting (LAPACK getrf's choices: the first
    row of largest magnitude), one matrix of the batch at a time."""
    *batch, m, n = x.shape
    k = min(m, n)
    a = x.reshape(-1, m, n).astype(x.dtype, copy=True)
    piv = np.zeros((a.shape[0], k), np.int32)
    info = np.zeros(a.shape[0], np.int32)
    for b in range(a.shape[0]):
        ab = a[b]
        for j in range(k):
            p = j + int(np.argmax(np.abs(ab[j:, j])))
            piv[b, j] = p + 1
            if p != j:
                ab[[j, p]] = ab[[p, j]]
            if ab[j, j] == 0:
                info[b] = info[b] or j + 1
                continue
            ab[j + 1:, j] /= ab[j, j]
            ab[j + 1:, j + 1:] -= np.outer(ab[j + 1:, j], ab[j, j + 1:])
    return a.reshape(x.shape), piv.reshape(*batch, k), info.reshape(batch)


@kernel(pd.LuUnpackOp)
def lu_unpack(op: pd.LuUnpackOp, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """P from the sequential row swaps (`A[perm[i]] = (L U)[i]`), L and U from the
    packed factors."""
    *batch, m, n = x.shape
    k = min(m, n)
    low = np.tril(x[..., :, :k], -1) + np.eye(m, k, dtype=x.dtype)
    up = np.triu(x[..., :k, :])
    flat = y.reshape(-1, k)
    perm = np.zeros((flat.shape[0], m, m), x.dtype)
    for b in range(flat.shape[0]):
        order = np.arange(m)
        for j in range(k):
            p = int(flat[b, j]) - 1
            if not 0 <= p < m:
                raise LinalgError(f"'{op.name}': pivot {p + 1} is out of range [1, {m}]")
            order[[j, p]] = order[[p, j]]
        perm[b, order, np.arange(m)] = 1
    return perm.reshape(*batch, m, m), low, up
