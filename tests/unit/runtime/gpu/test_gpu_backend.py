"""The GPU backend: host plumbing everywhere (with a recording fake device), and
agreement with the CPU interpreter on a real GPU (skipped without one)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from pullback.benchmarks.programs import mlp_train
from pullback.runtime.gpu import backend as gpu_backend, cublas, cuda
from pullback.runtime.interpreter import run_module
import pullback_gpu_fakes as gpu_fakes


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


FakeBuffer = gpu_fakes.FakeBuffer
fake_backend = gpu_fakes.fake_backend


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


# ------------------------------------------------------- matrix products: cuBLAS


def _matmul_program(x_shape, y_shape, **props):
    from xdsl.dialects.builtin import ModuleOp

    from pullback.dialects import pd

    x = pd.DataOp.make("x", x_shape, "float32")
    y = pd.DataOp.make("y", y_shape, "float32")
    mm = pd.MatmulOp.make(x.out, y.out, **props)
    fetch = pd.FetchOp.create(operands=[mm.results[0]])
    return ModuleOp([x, y, mm, fetch]), [mm.results[0]]


@pytest.mark.parametrize(
    "x_shape, y_shape, props, batched",
    [
        ((5, 13), (13, 7), {}, 0),
        ((33, 17), (40, 17), {"transpose_y": True}, 0),
        ((2, 3, 4), (4, 5), {}, 2),            # a shared right operand: stride 0
        ((3, 6, 4), (3, 4, 2), {}, 3),         # a batch of products
        ((3, 4, 6), (3, 4, 2), {"transpose_x": True}, 3),
    ],
)
def test_products_go_to_cublas_with_the_right_arguments(monkeypatch, x_shape, y_shape, props, batched):
    """The host runtime sends the CPU path's gemm calls to cuBLAS (here the fake
    library, computing column-major products on host memory): the values are
    numpy's, and a batch loop becomes one strided-batched call."""
    module, fetches = _matmul_program(x_shape, y_shape, **props)
    backend = fake_backend(blas=True, monkeypatch=monkeypatch)
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal(x_shape).astype(np.float32),
             "y": rng.standard_normal(y_shape).astype(np.float32)}
    (got,) = backend.run(module, feeds, {}, fetches)
    want = run_module(module, feeds, {})[fetches[0]]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert backend.blas.lib.calls == [("S", batched or 1)]  # type: ignore[union-attr]
    # No kernel at all: the zero fill folded into beta = 0.
    assert backend.device.launches == []  # type: ignore[attr-defined]


def test_mlp_step_sends_every_product_to_cublas(monkeypatch) -> None:
    built = mlp_train((13, 8, 3), lr=0.1)
    backend = fake_backend(blas=True, monkeypatch=monkeypatch)
    feeds = {"x": np.ones((5, 13), np.float32), "label": np.zeros((5, 1), np.int64)}
    backend.run(built.module, feeds, built.scope, built.fetch)
    # Two layers: 2 forward products; backward 2 weight gradients, 1 input gradient.
    assert backend.blas.lib.calls == [("S", 1)] * 5  # type: ignore[union-attr]
    assert not any(b == (16, 16, 1) for _, _, b, _ in backend.device.launches)  # type: ignore[attr-defined]


@pytest.mark.parametrize("family", ["matmul", "nn", "rnn"])
def test_families_with_products_run_their_host_function_with_cublas(monkeypatch, family) -> None:
    """Forward and backward of the families whose programs hold products (batched,
    vector, convolution and recurrent ones) run on the fake device with cuBLAS: every
    host op is one the runtime executes, and the products become cuBLAS calls.
    Convolutions are made products here (`conv_direct.STRATEGY`): the cost rule
    sends these small ones to direct loop nests, tested below."""
    from pullback.lowering import conv_direct

    monkeypatch.setattr(conv_direct, "STRATEGY", "gemm")
    cat = _catalogue()
    specs = [s for s in cat.OPS if s.family == family]
    module = cat.autodiff(cat.program(specs))
    fetches = [op.operands[0] for op in module.body.block.ops if op.name == "pd.fetch"]
    backend = fake_backend(blas=True, monkeypatch=monkeypatch)
    got = backend.run(module, cat.feeds_for(specs), {}, fetches)
    assert len(got) == len(fetches)
    assert backend.stats["gemm_calls"] > 0 and backend.blas.lib.calls  # type: ignore[union-attr]


def test_direct_convolutions_run_as_kernels_without_products(monkeypatch) -> None:
    """The nn family with every convolution on the direct loop nests
    (`lowering/conv_direct.py`): its host function runs, the convolutions launch
    kernels and make no cuBLAS call."""
    from pullback.lowering import conv_direct

    monkeypatch.setattr(conv_direct, "STRATEGY", "direct")
    cat = _catalogue()
    specs = [s for s in cat.OPS if s.family == "nn" and "conv" in s.op.name]
    assert specs, "the nn family has convolutions"
    module = cat.autodiff(cat.program(specs))
    fetches = [op.operands[0] for op in module.body.block.ops if op.name == "pd.fetch"]
    backend = fake_backend(blas=True, monkeypatch=monkeypatch)
    got = backend.run(module, cat.feeds_for(specs), {}, fetches)
    assert len(got) == len(fetches)
    assert backend.stats["launches"] > 0 and backend.stats["gemm_calls"] == 0


def test_without_cublas_the_tiled_kernel_runs_and_says_why(monkeypatch) -> None:
    cublas._reset_for_tests()
    monkeypatch.setenv(cublas.LIBRARY_ENV, "libcublas-absent.so.0")
    try:
        handle, note = gpu_backend.gemm_library(gpu_fakes.FakeDevice())
    finally:
        cublas._reset_for_tests()
    assert handle is None
    assert note.startswith("tiled kernel (no cuBLAS library") and "libcublas-absent.so.0" in note
    module, fetches = _matmul_program((5, 13), (13, 7))
    backend = gpu_backend.GpuBackend(None, device=gpu_fakes.FakeDevice(), gemm=(handle, note))
    backend.run(module, {"x": np.ones((5, 13), np.float32), "y": np.ones((13, 7), np.float32)}, {}, fetches)
    # A fill of zeros, then the tiled product.
    assert [b for _, _, b, _ in backend.device.launches] == [(256, 1, 1), (16, 16, 1)]  # type: ignore[attr-defined]


def test_rnn_time_loop_runs_on_the_host_launching_per_step() -> None:
    """`pd.rnn`'s time loop is a host `scf.for` around kernel launches: the runtime
    runs it, so each kernel in the loop is launched once per time step."""
    from xdsl.dialects import gpu, scf

    cat = _catalogue()
    (lstm,) = [s for s in cat.OPS if s.family == "rnn" and s.props.get("mode") == "LSTM"]
    module = cat.autodiff(cat.program([lstm]))
    fetches = [op.operands[0] for op in module.body.block.ops if op.name == "pd.fetch"]
    backend = fake_backend()
    got = backend.run(module, cat.feeds_for([lstm]), {}, fetches)
    assert len(got) == len(fetches)
    prog = next(p for _, p in backend._programs.values() if p is not None)
    loops = [op for op in prog.host.walk() if isinstance(op, scf.ForOp)]
    in_loops = sum(1 for lp in loops for op in lp.body.walk() if isinstance(op, gpu.LaunchFuncOp))
    static = sum(1 for op in prog.host.walk() if isinstance(op, gpu.LaunchFuncOp))
    assert loops and in_loops > 0
    steps = lstm.inputs[0][0][0]  # the sequence length (time-major input)
    # Every launch outside loops once, the ones inside once per step (forward and
    # backward loops both run `steps` times).
    assert backend.stats["launches"] == static - in_loops + in_loops * steps


def test_cuda_place_backend_needs_a_device(monkeypatch) -> None:
    monkeypatch.setattr(cuda, "unavailable_reason", lambda index=0: "no CUDA driver (test)")
    with pytest.raises(RuntimeError, match=r"^CUDAPlace\(0\): no CUDA driver \(test\)"):
        gpu_backend.make_backend(type("P", (), {"device_id": 0})())


# ------------------------------------------------------------------ on a real GPU

def absolute_tolerance(arrays, per_unit: float = 2e-6) -> float:
    """The absolute tolerance of a comparison of float32 results: `per_unit` times
    the largest magnitude among the values involved (every feed and reference
    result of the program), at least `per_unit`.  A result that is zero in exact
    arithmetic but computed as a sum of large terms (batch norm's scale gradient is
    the sum of normalized outputs: the interpreter itself gives about 1e-5) carries
    rounding noise proportional to those terms, not to itself; a fixed atol failed
    on it (docs/gpu.md, the first real-GPU run)."""
    scale = max((float(np.max(np.abs(a))) for a in map(np.asarray, arrays)
                 if a.size and a.dtype.kind == "f"), default=0.0)
    return per_unit * max(1.0, scale)


def test_absolute_tolerance_follows_the_values_involved() -> None:
    assert absolute_tolerance([np.ones(3, np.float32)]) == 2e-6
    assert absolute_tolerance([np.array([48.0, -3.0], np.float32), np.arange(4)]) == pytest.approx(9.6e-5)
    assert absolute_tolerance([np.zeros(0, np.float32)]) == 2e-6


requires_gpu = gpu_fakes.requires_gpu


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
    atol = absolute_tolerance([*feeds.values(), *(env[v] for v in fetches)])
    for v, g in zip(fetches, got):
        np.testing.assert_allclose(g, env[v], rtol=2e-5, atol=atol)


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


@requires_gpu
@pytest.mark.parametrize(
    "x_shape, y_shape, props",
    [((65, 33), (33, 17), {}), ((33, 17), (40, 17), {"transpose_y": True}), ((3, 6, 4), (3, 4, 2), {}),
     ((2, 3, 4), (4, 5), {})],
)
def test_products_agree_on_cublas_and_the_tiled_kernel(x_shape, y_shape, props) -> None:
    module, fetches = _matmul_program(x_shape, y_shape, **props)
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal(x_shape).astype(np.float32),
             "y": rng.standard_normal(y_shape).astype(np.float32)}
    want = run_module(module, feeds, {})[fetches[0]]
    place = type("P", (), {"device_id": 0})()
    for gemm in (None, (None, "tiled kernel (forced)")):
        backend = gpu_backend.GpuBackend(place, gemm=gemm)
        (got,) = backend.run(module, feeds, {}, fetches)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=backend.gemm_engine)
