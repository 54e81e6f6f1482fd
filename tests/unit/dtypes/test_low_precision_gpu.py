"""GPU lowering of the 16-bit floats and uint8: the GPU test catalogue's programs
(`tests/unit/gpu_specs/`, one per op family, forward and backward) with their float32
inputs made float16 or bfloat16 lower to PTX that `ptxas -arch=sm_90` accepts (storage
in 16 bits, conversions on load and store, `lowering/widen.py`), and so does a
program of uint8/int8/int16 arithmetic and casts.  The numbers are checked on the
CPU (the same lowering and emitter); a CUDA device runs them in `test_gpu_cuda.py`'s
way where one is present."""

from __future__ import annotations

import dataclasses
import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp

from pullback.dialects import pd
from pullback.lowering.gpu.pipeline import lower_to_gpu
from pullback.lowering.llvm.nvptx import gpu_modules, module_to_ptx

PTXAS = shutil.which("ptxas")
needs_ptxas = pytest.mark.skipif(PTXAS is None, reason="ptxas (CUDA toolkit) is not on PATH")


def _catalogue():
    name = "pullback_gpu_programs"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).parents[1] / "lowering" / "gpu" / "gpu_programs.py")
        mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = mod
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return sys.modules[name]


_cat = _catalogue()
FAMILIES = ["elementwise", "reduction", "nn", "loss", "shape"]


def _narrow(spec, dtype: str):
    return dataclasses.replace(spec, inputs=[(s, dtype if d == "float32" else d) for s, d in spec.inputs])


def _lowerable(spec) -> bool:
    from pullback.lowering.convert_pd_to_linalg import lowerable_ops

    ops = {type(o) for o in _cat.autodiff(_cat.program([spec])).walk() if o.name.startswith("pd.")}
    return ops <= lowerable_ops()


def _ptxas(ptx: str, tmp: Path) -> None:
    src = tmp / "k.ptx"
    src.write_text(ptx)
    res = subprocess.run([PTXAS, "-arch=sm_90", str(src), "-o", str(tmp / "k.cubin")],
                         capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 0, f"ptxas rejected the PTX:\n{res.stderr}"


@needs_ptxas
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("family", FAMILIES)
def test_family_ptx_assembles_in_low_precision(family: str, dtype: str, tmp_path: Path) -> None:
    specs = []
    for s in _cat.OPS:
        if s.family != family or not any(d == "float32" for _, d in s.inputs):
            continue
        n = _narrow(s, dtype)
        try:
            if _lowerable(s):
                _cat.program([n])  # the typing rules take the narrow dtype
                specs.append(n)
        except Exception:  # noqa: BLE001 - an op whose typing needs float32 operands: not this test's
            continue
    assert specs
    module = lower_to_gpu(_cat.autodiff(_cat.program(specs)))
    (kernels,) = gpu_modules(module)
    ptx = module_to_ptx(kernels)
    assert ".entry" in ptx
    assert ".b16" in ptx or ".f16" in ptx or ".u16" in ptx or ".s16" in ptx  # 16-bit loads/stores
    _ptxas(ptx, tmp_path)


@needs_ptxas
def test_small_integer_program_ptx_assembles(tmp_path: Path) -> None:
    ops: list = []
    feeds = [pd.DataOp.make(f"x{i}", [4, 8], d) for i, d in enumerate(["uint8", "int8", "int16", "float16", "bfloat16"])]
    ops += feeds
    u, s8, s16, h, b = (f.out for f in feeds)
    div = pd.ElementwiseDivOp.make(u, u)
    mx = pd.ElementwiseMaxOp.make(s8, s8)
    gt = pd.GreaterThanOp.make(u, u)
    c1 = pd.CastOp.make(h, dtype="bfloat16")
    c2 = pd.CastOp.make(b, dtype="uint8")
    c3 = pd.CastOp.make(s16, dtype="float16")
    c4 = pd.CastOp.make(u, dtype="float32")
    ops += [div, mx, gt, c1, c2, c3, c4]
    ops += [pd.FetchOp.create(operands=[o.results[0]]) for o in (div, mx, gt, c1, c2, c3, c4)]
    module = lower_to_gpu(ModuleOp(ops))
    (kernels,) = gpu_modules(module)
    ptx = module_to_ptx(kernels)
    assert "cvt.rn.f16.f32" in ptx or "cvt.rn.f16" in ptx
    _ptxas(ptx, tmp_path)
