"""Places: one hierarchy (`runtime/places.py`) for the Executor and eager tensors,
compared as Paddle 3.3.1 compares them (kind and device id; never equal to a string)."""

from __future__ import annotations

from typing import Any

import pytest

import pullback as paddle
from pullback.runtime import places
from pullback.runtime.executor import Executor


def test_places_compare_by_kind_and_device(dynamic_mode: None):
    x = paddle.to_tensor([1.0])
    cpu = paddle.CPUPlace()
    assert cpu == paddle.CPUPlace() and x.place == cpu and cpu == x.place and not (cpu != x.place)
    assert hash(cpu) == hash(x.place) and {cpu: 1}[x.place] == 1
    assert x.place != "cpu" and cpu != "Place(cpu)"  # not by string, as in Paddle
    assert repr(x.place) == str(cpu) == "Place(cpu)" and x.place.is_cpu_place() and not cpu.is_gpu_place()
    assert paddle.static.CPUPlace is paddle.CPUPlace is paddle.fluid.CPUPlace is places.CPUPlace
    assert isinstance(x.place, paddle.CPUPlace)


def test_cuda_places_compare_by_device_id(monkeypatch: pytest.MonkeyPatch):
    class FakeCuda:
        @staticmethod
        def require_device(index: int) -> None:
            return None

    class FakeImportlib:
        @staticmethod
        def import_module(name: str) -> Any:
            return FakeCuda

    cuda_place = paddle.CUDAPlace
    monkeypatch.setattr(places, "importlib", FakeImportlib)
    assert cuda_place(1) == cuda_place(1) and cuda_place(0) != cuda_place(1)
    assert cuda_place(0) != paddle.CPUPlace() and repr(cuda_place(1)) == "Place(gpu:1)"
    assert cuda_place(1).is_gpu_place() and cuda_place(1).get_device_id() == 1
    assert hash(cuda_place(1)) == hash(cuda_place(1))


@pytest.mark.parametrize("spec, kind", [
    ("cpu", ("cpu", 0)), ("CPU", ("cpu", 0)), ("gpu", ("gpu", 0)), ("gpu:1", ("gpu", 1)), ("cuda:2", ("gpu", 2)),
    (paddle.CPUPlace(), ("cpu", 0)), ("xpu:0", None), ("cpu:0", None), (3, None),
])
def test_place_spellings(spec: Any, kind: Any):
    assert places.place_kind(spec) == kind


def test_eager_places_are_the_cpu(dynamic_mode: None):
    for spec in (None, "cpu", paddle.CPUPlace()):
        assert paddle.to_tensor([1.0], place=spec).place == paddle.CPUPlace()
    for spec in ("gpu:0", "xpu", 3):
        with pytest.raises(ValueError, match="to_tensor: eager tensors live on the CPU"):
            paddle.to_tensor([1.0], place=spec)
    with pytest.raises(ValueError, match="Layer.to: this build runs on the CPU only"):
        paddle.nn.Linear(2, 2).to(device="gpu")


def test_executor_takes_a_place():
    assert Executor(paddle.CPUPlace()).place == paddle.CPUPlace()
    with pytest.raises(TypeError, match="place must be CPUPlace"):
        Executor("cpu")


def test_places():
    assert repr(paddle.CPUPlace()) == "Place(cpu)" and paddle.CPUPlace() == paddle.static.CPUPlace()
    assert paddle.static.cpu_places(2) == [paddle.CPUPlace(), paddle.CPUPlace()]


def test_cuda_place_without_a_gpu_is_one_clear_error():
    from pullback.runtime import executor

    if executor.importlib.util.find_spec("pullback.runtime.gpu.cuda") is not None:
        from pullback.runtime.gpu import cuda

        if cuda.is_available():
            pytest.skip("a CUDA device is present")
    with pytest.raises(RuntimeError) as e:
        paddle.CUDAPlace(0)
    assert str(e.value).startswith("CUDAPlace(0): ") and "\n" not in str(e.value)
