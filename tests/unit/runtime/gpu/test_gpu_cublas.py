"""The cuBLAS binding: discovery and error paths without a GPU, and the row-major
-> column-major argument mapping checked against numpy through a fake library that
computes what cuBLAS's column-major gemm computes, on host memory."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from pullback.runtime.gpu import cublas, cuda
import pullback_gpu_fakes as gpu_fakes


FakeCublas = gpu_fakes.FakeCublas


@pytest.fixture
def fresh(monkeypatch):
    """Forget the opened library before and after the test."""
    cublas._reset_for_tests()
    cublas._HANDLES.clear()
    yield monkeypatch
    cublas._reset_for_tests()
    cublas._HANDLES.clear()


def use_fake(monkeypatch, fake) -> None:
    monkeypatch.setattr(cublas, "_open_library", lambda name: fake)


def _addr(x: np.ndarray) -> int:
    return x.ctypes.data


def test_absent_library_is_a_stated_reason(fresh):
    fresh.setenv(cublas.LIBRARY_ENV, "libcublas-does-not-exist.so.99")
    reason = cublas.unavailable_reason()
    assert reason is not None and reason.startswith("no cuBLAS library")
    assert "libcublas-does-not-exist.so.99" in reason and "\n" not in reason
    assert cublas.handle_for(object()) is None
    with pytest.raises(cublas.CublasError, match="no cuBLAS library"):
        cublas.Cublas()


def test_library_can_be_turned_off(fresh):
    fresh.setenv(cublas.LIBRARY_ENV, "none")
    assert cublas.unavailable_reason() == f"cuBLAS turned off ({cublas.LIBRARY_ENV}=none)"


def test_wheel_locations_come_first(fresh, tmp_path):
    lib = tmp_path / "nvidia" / "cu13" / "lib"
    lib.mkdir(parents=True)
    (lib / "libcublas.so.13").write_bytes(b"")
    (tmp_path / "nvidia" / "__init__.py").write_text("")
    fresh.syspath_prepend(str(tmp_path))
    fresh.delenv(cublas.LIBRARY_ENV, raising=False)
    sys.modules.pop("nvidia", None)
    try:
        names = cublas.candidates()
    finally:
        sys.modules.pop("nvidia", None)
    assert names[0] == str(lib / "libcublas.so.13")
    assert names[-2:] == ["libcublas.so.13", "libcublas.so.12"]


def test_tf32_is_off_by_default(fresh):
    fake = FakeCublas()
    use_fake(fresh, fake)
    fresh.delenv(cublas.TF32_ENV, raising=False)
    cublas.Cublas()
    assert fake.math_mode == 0  # CUBLAS_DEFAULT_MATH
    fresh.setenv(cublas.TF32_ENV, "1")
    assert cublas.Cublas().tf32 and fake.math_mode == 3  # CUBLAS_TF32_TENSOR_OP_MATH


@pytest.mark.parametrize("trans_a", [False, True])
@pytest.mark.parametrize("trans_b", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_major_products_match_numpy(fresh, trans_a, trans_b, dtype):
    use_fake(fresh, FakeCublas())
    rng = np.random.default_rng(0)
    m, n, k = 5, 7, 3
    a = rng.standard_normal((k, m) if trans_a else (m, k)).astype(dtype)
    b = rng.standard_normal((n, k) if trans_b else (k, n)).astype(dtype)
    c = rng.standard_normal((m, n)).astype(dtype)
    want = 2.0 * ((a.T if trans_a else a) @ (b.T if trans_b else b)) + 0.5 * c
    cublas.Cublas().gemm(np.dtype(dtype), trans_a, trans_b, m, n, k, 2.0, _addr(a), a.shape[1],
                         _addr(b), b.shape[1], 0.5, _addr(c), n)
    np.testing.assert_allclose(c, want, rtol=1e-5)


def test_strided_batched_with_a_shared_operand(fresh):
    fake = FakeCublas()
    use_fake(fresh, fake)
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 3, 6)).astype(np.float32)   # a batch of 4
    b = rng.standard_normal((6, 2)).astype(np.float32)      # shared: stride 0
    c = np.zeros((4, 3, 2), np.float32)
    cublas.Cublas().gemm(np.dtype(np.float32), False, False, 3, 2, 6, 1.0, _addr(a), 6, _addr(b), 2,
                         0.0, _addr(c), 2, batch=4, stride_a=18, stride_b=0, stride_c=6)
    assert fake.calls == [("S", 4)]
    np.testing.assert_allclose(c, a @ b, rtol=1e-5)


def test_error_status_names_the_call(fresh):
    use_fake(fresh, FakeCublas(status=7))
    with pytest.raises(cublas.CublasError,
                       match=r"cublasCreate failed: CUBLAS_STATUS_INVALID_VALUE: an invalid value"):
        cublas.Cublas()


def test_too_large_for_32_bit_sizes():
    with pytest.raises(ValueError, match="32-bit"):
        cublas.column_major(False, False, 2**31, 1, 1, 1, 1, 1)


def test_import_opens_nothing():
    import subprocess
    import sys

    code = "import pullback.runtime.gpu.cublas as c; assert c._library is None"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


# ------------------------------------------------------------------ on a real GPU


@pytest.mark.skipif(not cuda.is_available() or cublas.unavailable_reason() is not None,
                    reason=f"needs a GPU and cuBLAS: {cuda.unavailable_reason(0) or cublas.unavailable_reason()}")
def test_real_gemm_matches_numpy():
    dev = cuda.get_device(0)
    handle = cublas.handle_for(dev)
    assert handle is not None
    rng = np.random.default_rng(0)
    a = rng.standard_normal((65, 33)).astype(np.float32)
    b = rng.standard_normal((17, 33)).astype(np.float32)
    bufs = [dev.to_device(a), dev.to_device(b), dev.alloc(65 * 17 * 4)]
    handle.gemm(np.dtype(np.float32), False, True, 65, 17, 33, 1.0, bufs[0].ptr.value, 33,
                bufs[1].ptr.value, 33, 0.0, bufs[2].ptr.value, 17)
    dev.synchronize()
    np.testing.assert_allclose(bufs[2].download(np.empty((65, 17), np.float32)), a @ b.T, rtol=1e-4, atol=1e-5)
