"""paddle.is_compiled_with_cuda / paddle.device report the truth about CUDA."""

from __future__ import annotations

import pytest

import pullback as paddle
from pullback.runtime.gpu import cuda


def test_reports_agree_with_the_driver():
    has_driver = cuda.driver_version() is not None
    assert paddle.is_compiled_with_cuda() is has_driver
    assert paddle.device.cuda.device_count() == cuda.device_count()
    if not has_driver:
        assert paddle.device.cuda.device_count() == 0


def test_set_device_cpu_and_bad_names():
    assert paddle.device.set_device("cpu") == "cpu"
    assert paddle.device.get_device() == "cpu"
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        paddle.device.set_device("tpu")
    with pytest.raises(TypeError):
        paddle.device.set_device(0)


@pytest.mark.skipif(cuda.device_count() > 0, reason="a GPU is present: nothing to refuse")
def test_gpu_without_device_is_a_one_line_error():
    with pytest.raises(RuntimeError) as err:
        paddle.set_device("gpu:0")
    assert "\n" not in str(err.value) and "CUDAPlace(0)" in str(err.value)
    assert paddle.device.get_device() == "cpu"
