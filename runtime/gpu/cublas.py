"""cuBLAS through ctypes: the GPU path's matrix products, when the library is there.

The library comes from NVIDIA's wheels (`pip install pullback[gpu]`: the
`nvidia-cublas` wheel for CUDA 13 installs `nvidia/cu13/lib/libcublas.so.13`,
`nvidia-cublas-cu12` installs `nvidia/cublas/lib/libcublas.so.12`), from the
system's loader path, or from `PULLBACK_LIBCUBLAS` (a path; `none` turns cuBLAS
off).  It is opened on first use, never at import.  When it cannot be opened the
GPU backend runs its own tiled kernel instead and says why (`unavailable_reason`).

Row-major products, column-major library: cuBLAS reads a matrix as column-major,
so a row-major `C = op(A) op(B)` (m x n) is computed as the column-major product
`C^T = op(B)^T op(A)^T` (n x m): the operands swap, m and n swap, each keeps its
transposition flag and its leading dimension (`column_major`, the one place the
mapping is written; tested against numpy through a fake library).

Float32 products run in float32 (`CUBLAS_DEFAULT_MATH`: no TF32 tensor-op
rounding, as Paddle's default); `PULLBACK_CUBLAS_TF32=1` allows TF32.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

LIBRARY_ENV = "PULLBACK_LIBCUBLAS"
"""Environment variable: a cuBLAS library to open, or `none` to use the tiled kernel."""

TF32_ENV = "PULLBACK_CUBLAS_TF32"
"""Environment variable: `1` lets float32 products use TF32 tensor cores."""

_OP_N, _OP_T = 0, 1
_DEFAULT_MATH, _TF32_TENSOR_OP_MATH = 0, 3

_STATUS = {
    0: "CUBLAS_STATUS_SUCCESS",
    1: "CUBLAS_STATUS_NOT_INITIALIZED",
    3: "CUBLAS_STATUS_ALLOC_FAILED",
    7: "CUBLAS_STATUS_INVALID_VALUE",
    8: "CUBLAS_STATUS_ARCH_MISMATCH",
    11: "CUBLAS_STATUS_MAPPING_ERROR",
    13: "CUBLAS_STATUS_EXECUTION_FAILED",
    14: "CUBLAS_STATUS_INTERNAL_ERROR",
    15: "CUBLAS_STATUS_NOT_SUPPORTED",
    16: "CUBLAS_STATUS_LICENSE_ERROR",
}
"""`cublasStatus_t` names (cublas_api.h), for libraries without `cublasGetStatusName`."""

_INT_MAX = 2**31 - 1

WORKSPACE_BYTES = 32 << 20
"""The workspace a handle gets with its stream (`Cublas.bind_stream`): 32 MiB, what
the cuBLAS documentation recommends for Hopper (4 MiB elsewhere).  An explicit
workspace keeps captured products from allocating a new one per capture (PyTorch
saw memory grow with each capture without it, pytorch/pytorch#83461)."""


class CublasError(RuntimeError):
    """A cuBLAS call failed; the message names the call and the status."""


# ------------------------------------------------------------------------- library


def wheel_candidates() -> list[Path]:
    """Where NVIDIA's wheels put libcublas, in every `nvidia` package directory
    on the path (CUDA 13's layout first, then CUDA 12's)."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return []
    roots = list(spec.submodule_search_locations or []) if spec is not None else []
    rels = ("cu13/lib/libcublas.so.13", "cublas/lib/libcublas.so.12")
    return [Path(r) / rel for r in roots for rel in rels if (Path(r) / rel).exists()]


def candidates() -> list[str]:
    """Libraries to try, in order: `PULLBACK_LIBCUBLAS`, else the wheels, then the
    loader's sonames."""
    named = os.environ.get(LIBRARY_ENV, "").strip()
    if named:
        return [named]
    return [*(str(p) for p in wheel_candidates()), "libcublas.so.13", "libcublas.so.12"]


def _open_library(name: str) -> Any:
    """Open a library (a seam for tests, which substitute fakes)."""
    return ctypes.CDLL(name)


@dataclass
class _Library:
    lib: Any
    """The opened library (None when none could be)."""
    path: str | None
    error: str | None


_library: _Library | None = None


def _load() -> _Library:
    """Open cuBLAS once; remember a failure as a one-line reason."""
    global _library
    if _library is None:
        names = candidates()
        if names == ["none"]:
            _library = _Library(None, None, f"cuBLAS turned off ({LIBRARY_ENV}=none)")
            return _library
        tried = []
        for name in names:
            try:
                _library = _Library(_open_library(name), name, None)
                return _library
            except OSError as e:
                tried.append(f"{name}: {str(e).split(':')[-1].strip() or 'not found'}")
        _library = _Library(
            None, None, "no cuBLAS library (pip install 'pullback[gpu]', or set "
            f"{LIBRARY_ENV}; tried {'; '.join(tried)})"
        )
    return _library


def _reset_for_tests() -> None:
    """Forget the opened library (tests substitute fakes)."""
    global _library
    _library = None


def unavailable_reason() -> str | None:
    """Why cuBLAS cannot be used (one line), or None when the library opened."""
    return _load().error


def library_path() -> str | None:
    """The library that was opened (None when none was)."""
    return _load().path


def status_text(lib: Any, status: int) -> str:
    """`CUBLAS_STATUS_X: description` for a status code."""
    name = _STATUS.get(status, f"cuBLAS status {status}")
    try:
        fn = lib.cublasGetStatusString
        if hasattr(fn, "restype"):  # a real library's function: declare the string result
            fn.restype = ctypes.c_char_p
        text = fn(status)
    except (AttributeError, OSError):
        text = None
    if isinstance(text, bytes):
        text = text.decode(errors="replace")
    return f"{name}: {text}" if text else name


# ------------------------------------------------------------- the layout mapping


@dataclass(frozen=True)
class ColumnMajorGemm:
    """The arguments of the column-major cuBLAS call computing a row-major product.

    `first`/`second` name which row-major operand (`'a'` or `'b'`) cuBLAS gets as
    its A and B."""

    transa: int
    transb: int
    m: int
    n: int
    k: int
    first: str
    lda: int
    second: str
    ldb: int
    ldc: int


def column_major(
    trans_a: bool, trans_b: bool, m: int, n: int, k: int, lda: int, ldb: int, ldc: int
) -> ColumnMajorGemm:
    """Row-major `C[m,n] = op(A) op(B)` (CBLAS's arguments) as cuBLAS's column-major
    call: `C^T = op(B)^T op(A)^T`, operands and m/n swapped (see the module doc).
    Raises ValueError for sizes cuBLAS's 32-bit interface cannot take."""
    if max(m, n, k, lda, ldb, ldc) > _INT_MAX:
        raise ValueError(f"matrix product too large for cuBLAS's 32-bit sizes (m={m}, n={n}, k={k})")
    return ColumnMajorGemm(
        transa=_OP_T if trans_b else _OP_N,
        transb=_OP_T if trans_a else _OP_N,
        m=n, n=m, k=k,
        first="b", lda=ldb,
        second="a", ldb=lda,
        ldc=ldc,
    )


# ------------------------------------------------------------------------- handles


_SCALARS = {np.dtype(np.float32): ("S", ctypes.c_float), np.dtype(np.float64): ("D", ctypes.c_double)}


class Cublas:
    """A cuBLAS handle bound to the current context, computing on the default
    stream (the one kernels launch on, so products and kernels stay ordered), or
    on the stream of replayed steps once `bind_stream` has moved it there."""

    def __init__(self, tf32: bool | None = None) -> None:
        state = _load()
        if state.error is not None:
            raise CublasError(state.error)
        self.lib = state.lib
        self.handle = ctypes.c_void_p()
        self._check(self.lib.cublasCreate_v2(ctypes.byref(self.handle)), "cublasCreate")
        self._check(self.lib.cublasSetStream_v2(self.handle, ctypes.c_void_p(None)), "cublasSetStream")
        if tf32 is None:
            tf32 = os.environ.get(TF32_ENV, "0") == "1"
        self.tf32 = tf32
        mode = _TF32_TENSOR_OP_MATH if tf32 else _DEFAULT_MATH
        self._check(self.lib.cublasSetMathMode(self.handle, ctypes.c_int(mode)), "cublasSetMathMode")
        self.stream: Any = None
        """The stream products are queued on (None: the legacy default stream)."""
        self.workspace: Any = None
        """The device buffer set as workspace with the stream (None: cuBLAS's own pool)."""

    def bind_stream(self, stream: Any, device: Any) -> None:
        """Queue products on `stream` from now on, with a `WORKSPACE_BYTES` workspace
        allocated on `device` (once).  `cublasSetStream` resets the workspace to
        cuBLAS's pool, so the workspace is set after it.  Products captured into a
        CUDA graph then use that workspace.  A stream the handle is on already is a no-op."""
        if self.stream is stream:
            return
        if not hasattr(self.lib, "cublasSetWorkspace_v2"):
            raise CublasError("cublasSetWorkspace_v2 missing: this cuBLAS is older than the stream path needs")
        self._check(self.lib.cublasSetStream_v2(self.handle, stream.handle), "cublasSetStream")
        if self.workspace is None:
            self.workspace = device.alloc(WORKSPACE_BYTES)
        self._check(
            self.lib.cublasSetWorkspace_v2(
                self.handle, ctypes.c_void_p(self.workspace.ptr.value), ctypes.c_size_t(self.workspace.nbytes)
            ),
            "cublasSetWorkspace",
        )
        self.stream = stream

    def _check(self, status: int, call: str) -> None:
        if status != 0:
            raise CublasError(f"{call} failed: {status_text(self.lib, status)}")

    def gemm(
        self, dtype: np.dtype[Any], trans_a: bool, trans_b: bool, m: int, n: int, k: int,
        alpha: float, a: int, lda: int, b: int, ldb: int, beta: float, c: int, ldc: int,
        batch: int = 1, stride_a: int = 0, stride_b: int = 0, stride_c: int = 0,
    ) -> None:
        """Row-major `C = alpha op(A) op(B) + beta C` on device addresses `a`, `b`,
        `c` (CBLAS's argument order); with `batch > 1` that many products at element
        strides `stride_*` (0: one operand shared by all) in one strided-batched call."""
        if m == 0 or n == 0 or batch == 0:
            return
        prefix, scalar = _SCALARS[np.dtype(dtype)]
        cm = column_major(trans_a, trans_b, m, n, k, lda, ldb, ldc)
        ptr = {"a": a, "b": b}
        stride = {"a": stride_a, "b": stride_b}
        args = [
            self.handle, ctypes.c_int(cm.transa), ctypes.c_int(cm.transb),
            ctypes.c_int(cm.m), ctypes.c_int(cm.n), ctypes.c_int(cm.k),
            ctypes.byref(scalar(alpha)),
            ctypes.c_void_p(ptr[cm.first]), ctypes.c_int(cm.lda),
        ]
        if batch > 1:
            args.append(ctypes.c_longlong(stride[cm.first]))
        args += [ctypes.c_void_p(ptr[cm.second]), ctypes.c_int(cm.ldb)]
        if batch > 1:
            args.append(ctypes.c_longlong(stride[cm.second]))
        args += [ctypes.byref(scalar(beta)), ctypes.c_void_p(c), ctypes.c_int(cm.ldc)]
        if batch > 1:
            args += [ctypes.c_longlong(stride_c), ctypes.c_int(batch)]
            name = f"cublas{prefix}gemmStridedBatched"
        else:
            name = f"cublas{prefix}gemm_v2"
        self._check(getattr(self.lib, name)(*args), name)

    def __del__(self) -> None:
        if getattr(self, "handle", None) is not None and self.handle.value:
            try:
                self.lib.cublasDestroy_v2(self.handle)
            except (AttributeError, OSError):
                pass
            self.handle = ctypes.c_void_p()


_HANDLES: dict[int, Cublas] = {}


def handle_for(device: Any) -> Cublas | None:
    """The cached cuBLAS handle of `device` (its context made current first), or
    None when cuBLAS is unavailable (`unavailable_reason` says why)."""
    if unavailable_reason() is not None:
        return None
    key = getattr(device, "index", id(device))
    if key not in _HANDLES:
        device.make_current()
        _HANDLES[key] = Cublas()
    return _HANDLES[key]


__all__ = [
    "ColumnMajorGemm", "Cublas", "CublasError", "LIBRARY_ENV", "TF32_ENV", "WORKSPACE_BYTES", "candidates",
    "column_major", "handle_for", "library_path", "status_text", "unavailable_reason",
    "wheel_candidates",
]
