"""Every op's forward and backward lowers to PTX that `ptxas -arch=sm_90` accepts.

One program (and one `ptxas` run) per op family keeps the suite fast.  Ops the
shared CPU lowering cannot lower yet must fail with an error naming the op.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp

from pullback.dialects import pd
from pullback.lowering.abi import LoweringError
from pullback.lowering.convert_pd_to_linalg import lowerable_ops
from pullback.lowering.gpu.pipeline import lower_to_gpu
from pullback.lowering.llvm.nvptx import gpu_modules, module_to_ptx


def _load_catalogue():
    # The suite runs with --import-mode=importlib: load the sibling module by path.
    import importlib.util
    import sys

    name = "pullback_gpu_programs"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("gpu_programs.py"))
        mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = mod
        spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return sys.modules[name]


_cat = _load_catalogue()
OPS, Spec, autodiff, family_names, program, spec_id = (
    _cat.OPS, _cat.Spec, _cat.autodiff, _cat.family_names, _cat.program, _cat.spec_id
)

PTXAS = shutil.which("ptxas")
needs_ptxas = pytest.mark.skipif(PTXAS is None, reason="ptxas (CUDA toolkit) is not on PATH")


def op_types(spec: Spec) -> set[type]:
    """Every op class of the spec's program after autodiff (forward and backward)."""
    return {type(o) for o in autodiff(program([spec])).walk() if o.name.startswith("pd.")}


def lowerable(spec: Spec) -> bool:
    """Whether the shared lowering has rules for every op of the spec's program."""
    return op_types(spec) <= lowerable_ops()


def ptxas(ptx: str, tmp: Path) -> None:
    """Assemble PTX for sm_90; fail the test with ptxas's message otherwise."""
    src = tmp / "k.ptx"
    src.write_text(ptx)
    res = subprocess.run(
        [PTXAS, "-arch=sm_90", str(src), "-o", str(tmp / "k.cubin")],
        capture_output=True, text=True, timeout=300, check=False,
    )
    assert res.returncode == 0, f"ptxas rejected the PTX:\n{res.stderr}"


@needs_ptxas
@pytest.mark.parametrize("family", family_names())
def test_family_ptx_assembles(family: str, tmp_path: Path) -> None:
    specs = [s for s in OPS if s.family == family and lowerable(s)]
    if not specs:
        pytest.skip(f"no op of family '{family}' is lowered by convert-pd-to-linalg yet")
    module = lower_to_gpu(autodiff(program(specs)))
    (kernels,) = gpu_modules(module)
    ptx = module_to_ptx(kernels)
    assert ".entry" in ptx and "__nv_" not in ptx.split(".entry")[0].replace("// ", "")
    ptxas(ptx, tmp_path)


def test_host_only_op_in_a_gpu_program_is_named() -> None:
    """Every compute op lowers; a random initializer inside a program does not (it
    runs on the host by design) and the error must name it."""
    b = pd.DataOp.make("x", [2, 2])
    r = pd.UniformRandomOp.make(shape=[2, 2])
    y = pd.ElementwiseAddOp.make(b.out, r.out)
    module = ModuleOp([b, r, y, pd.FetchOp.create(operands=[y.out])])
    with pytest.raises(LoweringError, match="'pd.uniform_random'"):
        lower_to_gpu(module)


def test_every_compute_op_has_a_spec() -> None:
    """New ops must be added to the catalogue (random initializers run on the host)."""
    host_only = {o.name for o in pd.ALL_OPS if getattr(o, "HOST_ONLY", None)} | {"pd.fill_constant", "pd.parameter"}
    # Gradient-only ops are exercised by the specs' backward programs.
    in_backward = {"pd.lookup_table_grad", "pd.conv2d_transpose", "pd.conv2d_filter_grad",
                   "pd.pool2d_grad", "pd.reshape_as", "pd.split_as", "pd.expand_as", "pd.rnn_grad"}
    structural = {"pd.data", "pd.fetch", "pd.backward", "pd.yield"}
    # Control flow stays on the host (the runtime reads predicates from device
    # memory): tested with programs of its own (tests/unit/runtime/gpu/test_gpu_control.py).
    control = {o.name for o in pd.CONTROL_OPS}
    # Collectives call MPI on host buffers (docs/distributed.md): data-parallel
    # jobs run on CPUPlace; there is no GPU-aware path to test here.
    collectives = {o.name for o in pd.DISTRIBUTED_OPS}
    # Segment pooling reads its row count from the ids on the host: refused by the
    # GPU lowering naming the op (`gpu.pipeline.reject_racy_combines`,
    # tests/unit/ops/geometric/test_geometric_ops.py).
    host_sized = {"pd.segment_pool"}
    covered = {s.op.name for s in OPS} | host_only | in_backward | structural | control | collectives | host_sized
    missing = [o for o in pd.ALL_OPS if o.name not in covered]
    assert not missing, "ops without a GPU test spec: " + ", ".join(
        f"'{o.name}' (add one to tests/unit/lowering/gpu/gpu_specs/{o.__module__.rsplit('.', 1)[-1]}.py)"
        for o in missing
    )
