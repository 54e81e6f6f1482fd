"""Complex programs on the GPU path: `complex-to-real` runs inside the shared
`build_entry`, so a complex program (forward and backward) lowers to PTX that
`ptxas -arch=sm_90` accepts; its host function runs on the recording fake device
with complex feeds and fetches (the ABI keeps the complex types; the buffers are
the pairs' bytes); on a real GPU its values match the interpreter's."""

from __future__ import annotations

import shutil
import subprocess
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pullback as paddle
from pullback.frontend import core, unique_name
from pullback.lowering.gpu.pipeline import lower_to_gpu
from pullback.lowering.llvm.nvptx import gpu_modules, module_to_ptx
from pullback.runtime.executor import prepare
from pullback.runtime.gpu import backend as gpu_backend, cuda
from pullback.runtime.interpreter import run_module
import pullback_gpu_fakes as gpu_fakes

PTXAS = shutil.which("ptxas")


def _complex_program() -> tuple[Any, list[Any]]:
    """Products, quotients, exp/log, abs/angle, a matrix product and reductions of
    complex64 values with a dynamic batch, and the gradients of a real loss: the
    prepared module (backward filled) and its fetches."""
    was_dynamic = core.in_dynamic_mode()
    core.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup), unique_name.guard():
            x = paddle.static.data("x", [-1, 3], dtype="complex64")
            y = paddle.static.data("y", [3], dtype="complex64")
            w = paddle.static.data("w", [3, 2], dtype="complex64")
            for v in (x, y, w):
                v.stop_gradient = False
            z = paddle.matmul(x * y + x / y - paddle.conj(x), w)
            z = paddle.exp(z * 0.1) + paddle.log(z)
            loss = paddle.abs(z).sum() + paddle.angle(z).mean() + paddle.real(z * z).sum()
            grads = paddle.static.gradients([loss], [x, y, w])
        prepared = prepare(main, [v.value for v in (z, loss, *grads)])
    finally:
        if was_dynamic:
            core.disable_static()
    return prepared.module, prepared.fetches


def _feeds(n: int = 4) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)

    def c(*shape: int) -> np.ndarray:
        return (rng.uniform(0.5, 1.5, shape) + 1j * rng.uniform(-1, 1, shape)).astype(np.complex64)

    return {"x": c(n, 3), "y": c(3), "w": c(3, 2)}


@pytest.mark.skipif(PTXAS is None, reason="ptxas (CUDA toolkit) is not on PATH")
def test_complex_program_ptx_assembles(tmp_path: Path) -> None:
    module, _ = _complex_program()
    lowered = lower_to_gpu(module)
    (kernels,) = gpu_modules(lowered)
    ptx = module_to_ptx(kernels)
    assert ".entry" in ptx and "complex" not in str(kernels)  # (the ABI keeps the complex types)
    src = tmp_path / "k.ptx"
    src.write_text(ptx)
    res = subprocess.run([PTXAS, "-arch=sm_90", str(src), "-o", str(tmp_path / "k.cubin")],
                         capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 0, f"ptxas rejected the PTX:\n{res.stderr}"


def test_complex_feeds_and_fetches_on_the_fake_device() -> None:
    """The host function runs with complex feeds and gives complex results of the
    interpreter's dtypes and shapes (the fake device computes no values)."""
    module, fetches = _complex_program()
    backend = gpu_backend.GpuBackend(None, device=gpu_fakes.FakeDevice(), gemm=(None, "tiled kernel (test)"))
    feeds = _feeds()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # compiled, not the interpreter's fallback
        got = backend.run(module, feeds, {}, fetches)
    env = run_module(module, feeds, {})
    assert [(g.dtype, g.shape) for g in got] == [(env[v].dtype, env[v].shape) for v in fetches]
    assert got[0].dtype == np.complex64 and got[0].shape == (4, 2)
    assert backend.device.launches  # type: ignore[attr-defined]


@pytest.mark.skipif(not cuda.is_available(), reason=f"no usable GPU: {cuda.unavailable_reason(0)}")
def test_complex_program_matches_the_interpreter_on_a_gpu() -> None:
    module, fetches = _complex_program()
    feeds = _feeds()
    env = run_module(module, feeds, {})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = gpu_backend.GpuBackend(type("P", (), {"device_id": 0})()).run(module, feeds, {}, fetches)
    for v, g in zip(fetches, got):
        assert g.dtype == env[v].dtype
        np.testing.assert_allclose(g, env[v], rtol=1e-4, atol=1e-4)
