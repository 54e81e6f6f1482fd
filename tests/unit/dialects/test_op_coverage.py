"""Guardrail for adding ops: every op of the `pd` dialect has an interpreter kernel,
a VJP rule (or is declared non-differentiable) and a CPU lowering (or is declared
host-only), each registered by op class in the module named by the op's family.

The structural ops (`pd.STRUCTURAL_OPS`: data, parameter, fetch, backward, yield)
are handled by every consumer itself and need none of the three.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import pytest
from xdsl.dialects.builtin import TensorType
from xdsl.irdl import irdl_op_definition, operand_def

from pullback.dialects import pd
from pullback.lowering.convert_pd_to_linalg import lowering_gap
from pullback.passes.vjp import NON_DIFFERENTIABLE, VJP_RULES
from pullback.passes.vjp import load_all as load_vjp_rules
from pullback.runtime.interpreter import KERNELS, REGION_KERNELS
from pullback.runtime.kernels import load_all as load_kernels


def family(op_type: type) -> str:
    """The family of an op: the name of its dialect module (`dialects/pd/nn.py`)."""
    return op_type.__module__.rsplit(".", 1)[-1]


def coverage_gaps(op_types: Iterable[type]) -> list[str]:
    """One message per missing piece, naming the op and where the piece belongs."""
    load_kernels()
    load_vjp_rules()
    gaps: list[str] = []
    for t in op_types:
        if t in pd.STRUCTURAL_OPS:
            continue
        if t is pd.ConditionOp:
            continue  # pd.while's terminator: its loop's kernel, rule and lowering handle it
        fam, cls = family(t), t.__name__
        if t not in KERNELS and t not in REGION_KERNELS:
            gaps.append(
                f"'{t.name}' has no interpreter kernel: add one to runtime/kernels/{fam}.py "
                f"with @kernel(pd.{cls})"
            )
        if t not in VJP_RULES and t not in NON_DIFFERENTIABLE:
            gaps.append(
                f"'{t.name}' has no VJP rule: add one to passes/vjp/{fam}.py with "
                f"@vjp(pd.{cls}), or declare non_differentiable(pd.{cls}) there"
            )
        if getattr(t, "HOST_ONLY", None) is None and lowering_gap(t) is not None:
            gaps.append(
                f"'{t.name}' has no CPU lowering: add one to lowering/{fam}.py with "
                f"@lowers(pd.{cls}) or @pointwise(pd.{cls}), or declare HOST_ONLY on the op"
            )
    return gaps


def test_every_dialect_op_has_a_kernel_a_vjp_and_a_lowering() -> None:
    gaps = coverage_gaps(pd.ALL_OPS)
    assert not gaps, "\n".join(gaps)


def test_registries_hold_only_dialect_ops() -> None:
    """A rule registered for a class outside `pd.ALL_OPS` is dead (or its op was
    left out of the family's `*_OPS` list, so the dialect does not know it)."""
    from pullback.lowering.registry import LOWERINGS

    known = set(pd.ALL_OPS)
    for name, registry in [("kernel", KERNELS), ("VJP rule", VJP_RULES), ("lowering", LOWERINGS)]:
        stray = sorted(t.__name__ for t in registry if t not in known)
        assert not stray, f"{name}s registered for ops outside pd.ALL_OPS: {stray}"


def test_host_only_ops_have_no_lowering() -> None:
    """`HOST_ONLY` means the lowering refuses the op: a rule for it would be dead."""
    from pullback.lowering.registry import LOWERINGS

    for t in pd.ALL_OPS:
        if getattr(t, "HOST_ONLY", None) is not None:
            assert t not in LOWERINGS, f"'{t.name}' is HOST_ONLY but has a lowering"


@irdl_op_definition
class _UncoveredOp(pd.PureOp):
    """An op a contributor has defined but not yet given a kernel, VJP or lowering."""

    name = "pd.test_uncovered"
    x = operand_def(TensorType)

    @classmethod
    def infer(cls, operand_types: Sequence[Any], props: Any) -> list[Any]:
        return [operand_types[0]]


def test_a_missing_piece_is_named() -> None:
    gaps = coverage_gaps([_UncoveredOp])
    assert len(gaps) == 3
    assert all(g.startswith("'pd.test_uncovered' has no") for g in gaps)
    family_name = family(_UncoveredOp)
    assert f"runtime/kernels/{family_name}.py" in gaps[0]
    assert f"passes/vjp/{family_name}.py" in gaps[1]
    assert f"lowering/{family_name}.py" in gaps[2]


@pytest.mark.parametrize("op_type", [pd.ReluOp, pd.MatmulOp, pd.UniformRandomOp])
def test_covered_ops_have_no_gaps(op_type: type) -> None:
    assert coverage_gaps([op_type]) == []


def test_one_list_of_families() -> None:
    """`pd.FAMILIES` is the one list: every dialect module defining ops is in it, and
    the dialect, the kernels, the VJP rules and the lowerings load from it."""
    from pathlib import Path

    from pullback.lowering import convert_pd_to_linalg
    from pullback.passes import vjp
    from pullback.runtime import kernels

    modules = {p.stem for p in Path(pd.__file__).parent.glob("*.py")} - {"__init__", "base", "dtypes"}
    assert set(pd.FAMILIES) == modules
    assert {family(t) for t in pd.ALL_OPS} == set(pd.FAMILIES)
    assert kernels.FAMILIES is vjp.FAMILIES is pd.FAMILIES
    lowered = [m.__name__.rsplit(".", 1)[-1] for m in convert_pd_to_linalg.FAMILIES]
    host_only = {"linalg", "vision", "complex", "fft"}  # families whose every op is HOST_ONLY: no lowering module
    assert lowered == [f for f in pd.FAMILIES if f not in host_only]
