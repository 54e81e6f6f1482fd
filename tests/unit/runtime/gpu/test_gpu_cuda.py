"""The CUDA driver loader: clear answers without a GPU, real calls with one."""

from __future__ import annotations

import ctypes

import numpy as np
import pytest

from pullback.runtime.gpu import cuda
import pullback_gpu_fakes as gpu_fakes


@pytest.fixture
def fresh_driver(monkeypatch):
    """Forget the loaded driver before and after the test."""
    cuda._reset_for_tests()
    yield monkeypatch
    cuda._reset_for_tests()


class FakeDriver:
    """Just enough of libcuda for the device queries."""

    def __init__(self, init: int = 0, count: int = 0) -> None:
        self.init, self.count = init, count

    def cuInit(self, flags):
        return self.init

    def cuDeviceGetCount(self, ref):
        ref._obj.value = self.count
        return 0

    def cuGetErrorName(self, res, ref):
        ref._obj.value = b"CUDA_ERROR_NO_DEVICE" if res == 100 else b"CUDA_ERROR_UNKNOWN"
        return 0

    def cuGetErrorString(self, res, ref):
        ref._obj.value = b"no CUDA-capable device is detected"
        return 0


def use_fake(monkeypatch, fake):
    monkeypatch.setattr(cuda, "_open_library", lambda name: fake)


def test_no_driver_means_no_device(fresh_driver):
    fresh_driver.setenv(cuda.LIBRARY_ENV, "libcuda-does-not-exist.so.1")
    assert cuda.device_count() == 0
    assert not cuda.is_available()
    assert cuda.driver_version() is None
    with pytest.raises(RuntimeError) as e:
        cuda.require_device(0)
    msg = str(e.value)
    assert msg.startswith("CUDAPlace(0): no CUDA driver (libcuda-does-not-exist.so.1 not found)")
    assert "\n" not in msg


def test_driver_that_fails_to_initialize(fresh_driver):
    use_fake(fresh_driver, FakeDriver(init=100))
    assert cuda.device_count() == 0
    with pytest.raises(RuntimeError, match=r"^CUDAPlace\(0\): the CUDA driver failed to "
                       r"initialize \(CUDA_ERROR_NO_DEVICE: no CUDA-capable device"):
        cuda.require_device(0)


def test_driver_without_devices(fresh_driver):
    use_fake(fresh_driver, FakeDriver(count=0))
    assert cuda.device_count() == 0
    with pytest.raises(RuntimeError, match=r"CUDAPlace\(0\): the CUDA driver reports no device"):
        cuda.require_device(0)


def test_device_index_out_of_range(fresh_driver):
    use_fake(fresh_driver, FakeDriver(count=2))
    assert cuda.device_count() == 2 and cuda.is_available()
    cuda.require_device(1)
    with pytest.raises(RuntimeError, match=r"CUDAPlace\(2\): no such CUDA device \(the driver reports 2\)"):
        cuda.require_device(2)


def test_device_constructor_reports_the_reason(fresh_driver):
    fresh_driver.setenv(cuda.LIBRARY_ENV, "libcuda-does-not-exist.so.1")
    with pytest.raises(RuntimeError, match=r"CUDAPlace\(0\): no CUDA driver"):
        cuda.Device(0)


def test_import_needs_no_gpu():
    """Importing pullback (and the loader) never opens the driver by itself."""
    import subprocess
    import sys

    code = "import pullback, pullback.runtime.gpu.cuda as c; assert c._driver is None"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


# ------------------------------------------------------------------ on a real GPU

requires_gpu = gpu_fakes.requires_gpu


@requires_gpu
def test_launch_roundtrip():
    dev = cuda.get_device(0)
    mod = dev.load_module(gpu_fakes.SCALE_ADD_PTX)
    x = np.arange(100, dtype=np.float32)
    buf = dev.to_device(x)
    mod.function("scale_add").launch((1, 1, 1), (128, 1, 1), [buf, x.size])
    dev.synchronize()
    np.testing.assert_array_equal(buf.download(np.empty_like(x)), 2 * x + 1)


@requires_gpu
def test_bad_ptx_shows_the_jit_log():
    dev = cuda.get_device(0)
    with pytest.raises(cuda.CudaError, match="JIT log"):
        dev.load_module(".version 8.0\n.target sm_90\n.address_size 64\nthis is not ptx\n")


@requires_gpu
def test_device_facts():
    dev = cuda.get_device(0)
    assert dev.name and dev.compute_capability[0] >= 5
    assert isinstance(ctypes.c_int(cuda.driver_version() or 0).value, int)
