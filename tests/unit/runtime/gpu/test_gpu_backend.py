"""The GPU backend: host plumbing everywhere (with a recording fake device), and
agreement with the CPU interpreter on a real GPU (skipped without one)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from pullback.benchmarks.programs import mlp_train
from pullback.runtime.gpu import backend as gpu_backend, cuda
from pullback.runtime.interpreter import run_module


def _catalogue():
    name = "pullback_gpu_programs"
    if name not in sys.modules:
        # The GPU test programs live beside the PTX test (tests/unit/lowering/gpu).
        path = Path(__file__).parents[2] / "lowering" / "gpu" / "gpu_programs.py"
        spec = importlib.util.spec_from_file_location(name, path)
        mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = mod
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return sys.modules[name]


# ------------------------------------------------------------ a recording device


class FakeBuffer:
    def __init__(self, nbytes: int) -> None:
        self.nbytes = nbytes
        self.data = np.zeros(max(nbytes, 1), np.uint8)

    def upload(self, array: np.ndarray) -> None:
        self.data[: self.nbytes] = np.ascontiguousarray(array).reshape(-1).view(np.uint8)

    def download(self, out: np.ndarray) -> np.ndarray:
        out.reshape(-1).view(np.uint8)[:] = self.data[: self.nbytes]
        return out


class FakeFunction:
    def __init__(self, log: list, name: str) -> None:
        self.log, self.name = log, name

    def launch(self, grid, block, args, shared_bytes: int = 0) -> None:
        self.log.append((self.name, tuple(grid), tuple(block), list(args)))


class FakeModule:
    def __init__(self, log: list) -> None:
        self.log = log

    def function(self, name: str) -> FakeFunction:
        return FakeFunction(self.log, name)


class FakeDevice:
    def __init__(self) -> None:
        self.launches: list = []
        self.uploads = 0

    def alloc(self, nbytes: int) -> FakeBuffer:
        return FakeBuffer(nbytes)

    def to_device(self, array: np.ndarray) -> FakeBuffer:
        self.uploads += 1
        buf = FakeBuffer(np.asarray(array).nbytes)
        buf.upload(array)
        return buf

    def load_module(self, ptx: str) -> FakeModule:
        assert ".entry" in ptx
        return FakeModule(self.launches)

    def synchronize(self) -> None:
        pass


def fake_backend() -> gpu_backend.GpuBackend:
    backend = object.__new__(gpu_backend.GpuBackend)
    backend.device = FakeDevice()  # type: ignore[assignment]
    backend.pool = gpu_backend._Pool(backend.device)  # type: ignore[arg-type]
    backend._programs, backend._params = {}, {}
    return backend


def test_host_runtime_launches_kernels_with_their_abi() -> None:
    built = mlp_train((13, 8, 3), lr=0.1)
    backend = fake_backend()
    x = np.ones((5, 13), np.float32)
    y = np.zeros((5, 1), np.int64)
    (loss,) = backend.run(built.module, {"x": x, "label": y}, built.scope, built.fetch)
    assert loss.shape == () and loss.dtype == np.float32
    launches = backend.device.launches  # type: ignore[attr-defined]
    assert launches, "no kernel was launched"
    for name, grid, block, args in launches:
        assert name.startswith("main_kernel_")
        assert all(isinstance(g, int) and g > 0 for g in grid)
        assert block in ((256, 1, 1), (16, 16, 1)), block
        assert all(isinstance(a, (FakeBuffer, int)) or hasattr(a, "value") for a in args)
    # Tiled products launch 16x16 blocks over ceil(5/16) x ceil(8/16) tiles.
    assert any(b == (16, 16, 1) and g == (1, 1, 1) for _, g, b, _ in launches)


def test_parameters_are_uploaded_once() -> None:
    built = mlp_train((13, 8, 3), lr=0.1)
    backend = fake_backend()
    feeds = {"x": np.ones((4, 13), np.float32), "label": np.zeros((4, 1), np.int64)}
    backend.run(built.module, feeds, built.scope, built.fetch)
    first = backend.device.uploads  # type: ignore[attr-defined]
    backend.run(built.module, feeds, built.scope, built.fetch)
    # The second run uploads the two feeds only: parameters stayed on the device.
    assert backend.device.uploads - first == 2  # type: ignore[attr-defined]


def test_cuda_place_backend_needs_a_device(monkeypatch) -> None:
    monkeypatch.setattr(cuda, "unavailable_reason", lambda index=0: "no CUDA driver (test)")
    with pytest.raises(RuntimeError, match=r"^CUDAPlace\(0\): no CUDA driver \(test\)"):
        gpu_backend.make_backend(type("P", (), {"device_id": 0})())


# ------------------------------------------------------------------ on a real GPU

requires_gpu = pytest.mark.skipif(
    not cuda.is_available(), reason=f"no usable GPU: {cuda.unavailable_reason(0)}"
)


@requires_gpu
@pytest.mark.parametrize("family", _catalogue().family_names())
def test_ops_match_the_interpreter(family: str) -> None:
    from pullback.lowering.convert_pd_to_linalg import lowerable_ops

    cat = _catalogue()
    specs = [s for s in cat.OPS if s.family == family]
    specs = [s for s in specs if {type(o) for o in cat.autodiff(cat.program([s])).walk()
                                  if o.name.startswith("pd.")} <= lowerable_ops()]
    if not specs:
        pytest.skip(f"no op of family '{family}' is lowered yet")
    module = cat.autodiff(cat.program(specs))
    fetches = [op.operands[0] for op in module.body.block.ops if op.name == "pd.fetch"]
    feeds = cat.feeds_for(specs)
    env = run_module(module, feeds, {})
    got = gpu_backend.GpuBackend(type("P", (), {"device_id": 0})()).run(module, feeds, {}, fetches)
    for v, g in zip(fetches, got):
        np.testing.assert_allclose(g, env[v], rtol=2e-5, atol=2e-6)


@requires_gpu
def test_mlp_trains_to_the_interpreters_loss_curve() -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 20)).astype(np.float32)
    y = rng.integers(0, 4, (64, 1)).astype(np.int64)
    curves = []
    for backend in ("interpreter", "gpu"):
        built = mlp_train((20, 32, 32, 4), lr=0.1)
        scope = {k: v.copy() for k, v in built.scope.items()}
        run = gpu_backend.GpuBackend(type("P", (), {"device_id": 0})()) if backend == "gpu" else None
        losses = []
        for _ in range(20):
            if run is None:
                env = run_module(built.module, {"x": x, "label": y}, scope)
                for op in built.module.body.block.ops:
                    if op.name == "pd.sgd":
                        scope[op.properties["name"].data] = env[op.results[0]]
                losses.append(float(env[built.fetch[0]]))
            else:
                losses.append(float(run.run(built.module, {"x": x, "label": y}, scope, built.fetch)[0]))
        curves.append(losses)
    np.testing.assert_allclose(curves[1], curves[0], rtol=1e-4)
    assert curves[1][-1] < curves[1][0]
