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
    return u.astype(x.dtype), s.astype(x.dtype), vh.astype(x.dtype)


@kernel(pd.EighOp)
def eigh(op: pd.EighOp, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`numpy.linalg.eigh` reading the `UPLO` triangle."""
    w, v = _lapack(op, "eigh did not converge", np.linalg.eigh, x,
                   UPLO=op.prop("UPLO"))
    return w.astype(x.dtype), v.astype(x.dtype)
