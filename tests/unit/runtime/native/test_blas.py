"""runtime/native/blas.py: which library `pullback_sgemm`/`_dgemm` call, and the size router."""

from __future__ import annotations

import ctypes
from typing import Any

import numpy as np
import pytest

from pullback.runtime.native import blas

_GEMM_ARGS = [
    ctypes.c_int32, ctypes.c_int32, ctypes.c_int32, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
]


def _recording_gemm(calls: list[tuple[str, int, int, int]], tag: str, real: Any, float_t: Any) -> tuple[Any, Any]:
    """A CBLAS-shaped callback that notes who was called, then forwards to `real`."""
    proto = ctypes.CFUNCTYPE(
        None, *_GEMM_ARGS, float_t, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64,
        float_t, ctypes.c_void_p, ctypes.c_int64,
    )

    def fn(*args):  # type: ignore[no-untyped-def]
        calls.append((tag, args[3], args[4], args[5]))
        if real is not None:
            real(*args)

    return proto(fn), proto


def test_choose_rejects_unknown_and_missing_libraries() -> None:
    lib = blas.Library("OpenBLAS", "x", 1, 2)
    with pytest.raises(ValueError, match="PULLBACK_BLAS='fastest': expected one of auto, openblas, mkl"):
        blas.choose("fastest", lib, None)
    with pytest.raises(ValueError, match=r"PULLBACK_BLAS=mkl: the library is not installed \(pip install pullback\[mkl\]\)"):
        blas.choose("mkl", lib, None)
    with pytest.raises(ValueError, match="PULLBACK_BLAS=openblas: the library is not installed"):
        blas.choose("openblas", None, lib)


def test_choose_auto_routes_when_both_are_found() -> None:
    ob, mkl = blas.Library("OpenBLAS", "a", 1, 2), blas.Library("MKL", "b", 3, 4)
    assert blas.choose("auto", ob, None) == blas.Binding((ob,), blas.MKL_MIN_MACS)
    assert blas.choose("auto", None, mkl).libraries == (mkl,)
    both = blas.choose("auto", ob, mkl)
    assert both is not None and both.libraries == (ob, mkl) and both.min_macs == blas.MKL_MIN_MACS
    assert both.describe() == (f"MKL from {blas.MKL_MIN_MACS} multiply-adds with k >= {blas.MKL_MIN_K} "
                               f"or m, n, k >= {blas.MKL_MIN_SIDE}, OpenBLAS for the others")
    assert blas.choose("openblas", ob, mkl) == blas.Binding((ob,), 0)
    assert blas.choose("auto", None, None) is None
    # Multi-threaded BLAS: one library, never two spinning thread pools.
    ob2 = blas.Library("OpenBLAS", "a", 1, 2, threads=2)
    mkl2 = blas.Library("MKL", "b", 3, 4, threads=2)
    assert blas.choose("auto", ob2, mkl) == blas.Binding((ob2,), 0)
    assert blas.choose("auto", ob, mkl2) == blas.Binding((ob,), 0)
    assert blas.choose("mkl", ob2, mkl2) == blas.Binding((mkl2,), 0)


def test_router_sends_each_call_by_size_and_computes_the_product() -> None:
    """The LLVM router with two recording 'libraries' in front of numpy's OpenBLAS:
    calls below the threshold reach the first, the others the second, and the
    product is right in both cases."""
    llvm = pytest.importorskip("llvmlite.binding")
    openblas = blas.find_openblas()
    if openblas is None:
        pytest.skip("numpy has no bundled ILP64 OpenBLAS here (another numpy build)")
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    calls: list[tuple[str, int, int, int]] = []
    keep = []
    libs = []
    for tag in ("small", "large"):
        fns = {}
        for letter, float_t in (("s", ctypes.c_float), ("d", ctypes.c_double)):
            real_addr = getattr(openblas, letter + "gemm")
            _, proto = _recording_gemm(calls, tag, None, float_t)
            cb, _ = _recording_gemm(calls, tag, proto(real_addr), float_t)
            keep.append(cb)
            fns[letter] = ctypes.cast(cb, ctypes.c_void_p).value
        libs.append(blas.Library(tag, "-", fns["s"], fns["d"]))
    router = blas._Router(blas.Binding(tuple(libs), 8 * 8 * 8, min_k=8, min_side=6))
    rng = np.random.default_rng(0)
    for letter, dtype, float_t in (("s", np.float32, ctypes.c_float), ("d", np.float64, ctypes.c_double)):
        _, proto = _recording_gemm(calls, "", None, float_t)
        gemm = proto(router.addresses[blas.SYMBOLS[letter]])
        cases = ((4, 4, 4, "small"), (8, 8, 7, "small"), (8, 8, 8, "large"), (16, 9, 12, "large"),
                 (64, 64, 5, "small"),  # enough multiply-adds, but k is short...
                 (64, 64, 6, "large"),  # ... unless every side is long enough
                 (64, 5, 6, "small"), (5, 64, 6, "small"))
        for m, n, k, expect in cases:
            a = rng.standard_normal((m, k)).astype(dtype)
            b = rng.standard_normal((k, n)).astype(dtype)
            c = np.full((m, n), np.nan, dtype)
            del calls[:]
            gemm(101, 111, 111, m, n, k, 1.0, a.ctypes.data, k, b.ctypes.data, n, 0.0, c.ctypes.data, n)
            assert calls == [(expect, m, n, k)]
            np.testing.assert_allclose(c, a @ b, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)


def test_compiled_matmuls_agree_with_numpy_on_both_sides_of_the_threshold() -> None:
    """Whatever this process bound (OpenBLAS alone in CI; OpenBLAS + MKL where MKL is
    installed), products below and above `MKL_MIN_MACS` are right."""
    import pullback as paddle

    paddle.enable_static()
    try:
        rng = np.random.default_rng(1)
        for m, k, n in ((8, 16, 4), (128, 256, 128)):
            assert (m * k * n >= blas.MKL_MIN_MACS) == (m == 128)
            main, startup = paddle.static.Program(), paddle.static.Program()
            with paddle.static.program_guard(main, startup):
                x = paddle.static.data("x", [m, k], "float32")
                w = paddle.static.data("w", [k, n], "float32")
                y = paddle.matmul(x, w)
            exe = paddle.static.Executor(paddle.CPUPlace(), backend="compiled")
            xv = rng.standard_normal((m, k)).astype(np.float32)
            wv = rng.standard_normal((k, n)).astype(np.float32)
            (out,) = exe.run(main, feed={"x": xv, "w": wv}, fetch_list=[y])
            np.testing.assert_allclose(out, xv @ wv, rtol=1e-4, atol=1e-4)
    finally:
        paddle.disable_static()
    assert blas.bound() is not None, "the compiled backend bound no BLAS although numpy bundles OpenBLAS"
