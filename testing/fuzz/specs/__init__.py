"""The fuzzer's coverage table, keyed by op class: `SPECS` (the ops it draws, each
with the function that draws its operands and options; one module per op family),
`BUILT` (the ops it builds into every program itself) and `EXCLUDED` (the ops it
leaves out, with the reason and where they are tested instead).  Every op of
`pd.ALL_OPS` is in one of the three; `uncovered()` names any other, and
`tests/unit/testing/test_fuzz.py` fails on it, so a new op cannot escape.
"""

from __future__ import annotations

from typing import Any

from xdsl.ir import Operation

from pullback.dialects import pd

from ..gen import Spec
from . import creation, elementwise, geometric, indexing, loss, nn, reduction, shape

SPECS: dict[type[pd.PdOp], Spec] = {
    **elementwise.SPECS, **reduction.SPECS, **loss.SPECS, **shape.SPECS, **nn.SPECS,
    **creation.SPECS, **indexing.SPECS, **geometric.SPECS,
}
"""Each fuzzed op's spec: draws its operands (value numbers) and properties."""

_ALL_OPS: list[Any] = list(pd.ALL_OPS)

BUILT: dict[type[Operation], str] = {
    pd.DataOp: "every program's feeds",
    pd.ParameterOp: "trainable inputs of static programs (scope values, gradients taken)",
    pd.BackwardOp: "every static program's gradients (filled by the autodiff pass)",
    pd.YieldOp: "ends every backward region",
}
"""Ops the fuzzer builds itself in every program, not drawn as steps."""

EXCLUDED: dict[type[Operation], str] = {
    pd.FetchOp: "the executor's fetch marker: backends receive fetch lists (tests/unit/runtime/test_executor.py)",
    **{op: "host-only random draw (HOST_ONLY): no native code to compare; seeded draws in tests/unit/frontend/test_random.py"
       for op in (pd.UniformRandomOp, pd.GaussianRandomOp, pd.TruncatedGaussianRandomOp, pd.RandintOp,
                  pd.RandpermOp, pd.BernoulliOp)},
    pd.NonzeroOp: "host-only (HOST_ONLY): its result shape depends on the data; tests/unit/ops/indexing/test_indexing_ops.py",
    **{op: "gradient op: the fuzzer reaches it through the VJP of "
       + {"pd.lookup_table_grad": "pd.lookup_table", "pd.conv2d_filter_grad": "pd.conv2d",
          "pd.pool2d_grad": "pd.pool2d"}[op.name]
       for op in (pd.LookupTableGradOp, pd.Conv2DFilterGradOp, pd.Pool2DGradOp)},
    **{op: "optimizer update (WRITES_PERSISTABLE): stateful, checked compiled vs interpreter in "
       "tests/unit/ops/optimizer/test_optimizer_ops.py" for op in _ALL_OPS if getattr(op, "WRITES_PERSISTABLE", False)},
    pd.CheckFiniteAndUnscaleOp: "AMP loss scaling: variadic, a float32 scale and a bool flag; compiled vs "
                                "interpreter vs Paddle in tests/unit/ops/optimizer/test_loss_scaling_ops.py",
    **{op: "collective: needs several ranks (tests/unit/distributed/test_distributed.py)" for op in pd.DISTRIBUTED_OPS},
    **{op: "control flow: the fuzzer builds no regions; compiled vs interpreter in "
       "tests/unit/ops/control/test_control_flow.py (stacks: tests/unit/lowering/test_compiled_ops.py)"
       for op in pd.CONTROL_OPS},
    **{op: "host-only call of a paddle.jit.to_static program (HOST_ONLY); its forward and backward are "
       "checked against eager, finite differences and the interpreter in tests/unit/frontend/jit/test_jit.py"
       for op in (pd.RunProgramOp, pd.RunProgramGradOp)},
    **{op: "fused recurrence: its reserve result is backward-only state that carries no gradient "
       "(as Paddle's Reserve), which a fuzzed step reading it would differentiate; checked against "
       "finite differences, the unrolled cells and compiled code in tests/unit/ops/rnn/test_rnn_ops.py"
       for op in (pd.RnnOp, pd.RnnGradOp)},
    pd.PyFuncOp: "host-only call of a registered Python function (HOST_ONLY); its values and Python "
                 "backward are checked against built-in ops in tests/unit/ops/program/test_host_calls.py",
    **{op: "integer-only (the fuzzer's programs are float); checked against numpy, eager and "
       "static on both backends, in tests/unit/frontend/test_math_surface.py"
       for op in pd.ELEMENTWISE_OPS if issubclass(op, pd.BitwiseOp)},
    **{op: "host-only LAPACK call (HOST_ONLY): no native code to compare; values against numpy and "
       "gradients against finite differences in tests/unit/ops/linalg/test_linalg.py" for op in pd.LINALG_OPS},
    pd.SegmentPoolOp: "its number of rows is read from the ids at run time, so compiled code cannot "
                      "fetch it (the caller allocates outputs) and the fuzzer fetches every step; values "
                      "and gradients against Paddle, finite differences and compiled code in "
                      "tests/unit/ops/geometric/test_geometric_ops.py",
    **{op: "host-only graph utility (HOST_ONLY): result sizes depend on the graph, sampling is random; "
       "tests/unit/ops/geometric/test_geometric_ops.py"
       for op in (pd.ReindexGraphOp, pd.SampleNeighborsOp, pd.WeightedSampleNeighborsOp)},
    **{op: "host-only detection op (HOST_ONLY): box-indexed gathers and scatters, no native code to "
       "compare; values and gradients against Paddle 3.3.1 and finite differences in "
       "tests/unit/ops/vision/test_vision_ops.py" for op in pd.VISION_OPS},
    **{op: "host-only complex numbers (HOST_ONLY; the fuzzer's programs are real and compiled): values and "
       "gradients against Paddle 3.3.1 and finite differences in tests/unit/ops/fft/test_fft_paddle.py"
       for op in (*pd.COMPLEX_OPS, *pd.FFT_OPS)},
    pd.PrintOp: "host-only printing (HOST_ONLY): the identity with a side effect; output and gradient "
                "printing in tests/unit/ops/program/test_host_calls.py",
}
"""Ops deliberately not fuzzed, with the reason and where they are tested instead."""


def uncovered() -> list[str]:
    """Names of dialect ops neither fuzzed, built by the fuzzer, nor excluded."""
    return [t.name for t in _ALL_OPS if t not in SPECS and t not in BUILT and t not in EXCLUDED]


__all__ = ["BUILT", "EXCLUDED", "SPECS", "uncovered"]
