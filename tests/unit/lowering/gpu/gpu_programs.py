"""Small `pd` programs covering every op, forward and backward, for the GPU tests.

`OPS` lists one spec per op (inputs and properties), gathered from
`gpu_specs/<family>.py` (one file per op family); `program(specs)` builds one
module computing all of them, with a `pd.backward` region differentiating every
float result with respect to every float input (the `autodiff` pass fills it), and
fetches of every result and gradient.  Family-sized programs keep the number of
`ptxas` runs small.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.irdl import VarOperandDef

from pullback.dialects import pd
from pullback.dialects.pd.base import is_float


@dataclass(frozen=True)
class Spec:
    """One op applied to fed inputs `(shape, dtype)` (`-1`: a dynamic batch)."""

    op: type[pd.PdOp]
    inputs: Sequence[tuple[Sequence[int], str]]
    props: dict[str, Any] = field(default_factory=dict)
    grad: bool = True
    family: str = ""
    """The program group: specs of one group are compiled together (one `ptxas` run)."""
    ids_below: int = 4
    """Integer inputs are drawn from `[0, ids_below)`."""


FAMILIES = tuple(f for f in pd.FAMILIES if (Path(__file__).with_name("gpu_specs") / f"{f}.py").exists())
"""The dialect's op families that have specs: `gpu_specs/<family>.py` lists each's
(linalg is host-only; control flow and collectives are not lowered for the GPU)."""


def _load_family(family: str) -> list[Spec]:
    """The specs of `gpu_specs/<family>.py` (loaded by path: the suite runs with
    `--import-mode=importlib`, so test directories are not packages)."""
    path = Path(__file__).with_name("gpu_specs") / f"{family}.py"
    loader = importlib.util.spec_from_file_location(f"pullback_gpu_specs_{family}", path)
    assert loader is not None and loader.loader is not None
    module = importlib.util.module_from_spec(loader)
    loader.loader.exec_module(module)
    specs = []
    for op, inputs, group, options in module.SPECS:
        props = dict(options)
        grad, ids_below = props.pop("grad", True), props.pop("ids_below", 4)
        specs.append(Spec(op, inputs, props, grad, group, ids_below))
    return specs


OPS: list[Spec] = [s for family in FAMILIES for s in _load_family(family)]
"""One spec per op (and more where properties change the code), all families."""


def family_names() -> list[str]:
    """The families of `OPS`, in order of first appearance."""
    return list(dict.fromkeys(s.family for s in OPS))


def spec_id(s: Spec) -> str:
    """A readable test id."""
    extra = ",".join(f"{k}={v}" for k, v in s.props.items())
    return f"{s.op.name}({extra})" if extra else s.op.name


def program(specs: Sequence[Spec]) -> ModuleOp:
    """One module computing every spec, with its backward region (unfilled)."""
    ops: list[Any] = []
    targets, wrt = [], []
    fetched = []
    for i, s in enumerate(specs):
        feeds = [pd.DataOp.make(f"in{i}_{j}", shape, dtype) for j, (shape, dtype) in enumerate(s.inputs)]
        ops += feeds
        op = s.op.make(*[f.out for f in feeds], **s.props)
        ops.append(op)
        fetched += list(op.results)
        if s.grad:
            targets += [r for r in op.results if is_float(pd.elem_of(r.type))]
            wrt += [f.out for f in feeds if is_float(pd.elem_of(f.out.type))]
    module = ModuleOp(ops)
    if targets and wrt:
        bw = pd.BackwardOp.make(targets, wrt)
        module.body.block.add_op(bw)
        fetched += list(bw.grads)
    for v in fetched:
        module.body.block.add_op(pd.FetchOp.create(operands=[v]))
    return module


def autodiff(module: ModuleOp) -> ModuleOp:
    """Fill the module's backward regions (in place) and return it."""
    from pullback.passes import PASSES

    if not any(isinstance(op, pd.BackwardOp) for op in module.walk()):
        return module  # nothing differentiable (the pass would warn)
    ctx = Context()
    ctx.load_dialect(pd.PD)
    PASSES["autodiff"]()().apply(ctx, module)
    return module


def operand_domains(op: type[pd.PdOp], n: int) -> list[pd.Domain]:
    """The declared input domain of each of an op's `n` operands (`pd.REALS` where
    none is declared; operands after a variadic one are matched to no name)."""
    irdl = op.get_irdl_definition()
    assert irdl is not None
    domains: list[pd.Domain] = []
    for name, d in irdl.operands:
        if isinstance(d, VarOperandDef):
            break
        domains.append(op.input_domain(name))
    return (domains + [pd.REALS] * n)[:n]


def feeds_for(specs: Sequence[Spec], batch: int = 3, seed: int = 0) -> dict[str, np.ndarray]:
    """Random feeds for `program(specs)` (dynamic dimensions get `batch`)."""
    rng = np.random.default_rng(seed)
    out: dict[str, np.ndarray] = {}
    for i, s in enumerate(specs):
        domains = operand_domains(s.op, len(s.inputs))
        for j, (shape, dtype) in enumerate(s.inputs):
            concrete = tuple(batch if d < 0 else d for d in shape)
            if dtype in ("int64", "int32"):
                out[f"in{i}_{j}"] = rng.integers(0, s.ids_below, concrete).astype(dtype)
            elif dtype == "bool":
                out[f"in{i}_{j}"] = rng.random(concrete) < 0.5
            else:
                # Small positive values (real powers), narrowed into the operand's
                # declared domain (log's x > 0, a beta power below 1: `pd.Domain`).
                lo, hi = domains[j].interval(0.1, 0.1, 0.9)
                out[f"in{i}_{j}"] = rng.uniform(lo, hi, concrete).astype(dtype)
    return out


__all__ = ["OPS", "Spec", "autodiff", "family_names", "feeds_for", "program", "spec_id"]
