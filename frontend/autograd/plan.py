"""Plans: a differentiated graph shape, ready to run on any graph of that shape.

`build_plan` writes the graph as IR (`materialize.py`), adds the seeds and a
`pd.backward` op, runs the `autodiff` pass (`differentiate`, the one static programs
use), folds the constants of the filled region (`fold.py`) and flattens what is left
into steps: templates over numbered value slots.  Slots read from the forward pass
(saved results, sources, seeds) are listed as externals, so running a plan
(`runner.py`) never looks at IR.  Plans are cached by graph shape (`plan_cache.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from pullback.dialects import pd
from pullback.frontend.autograd.fold import fold_constants
from pullback.frontend.autograd.graph import Enc, Graph
from pullback.frontend.autograd.materialize import materialize
from pullback.frontend import eager_native
from pullback.frontend.eager_native import NativeRegion
from pullback.frontend.eager import Template
from pullback.passes import activity
from pullback.passes.autodiff import AutodiffError, differentiate
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

Origin = tuple[str, int, int]
"""Where a plan reads an outside value: ('out', node, result), ('src', source, 0)
or ('seed', target, 0)."""


@dataclass
class Plan:
    """A differentiated graph shape, ready to run: the backward region's ops as
    templates over numbered value slots."""

    module: ModuleOp  # forward ops + the filled pd.backward (for dumps and inspection)
    steps: list[tuple[Template, list[int], list[int]]]  # template, input slots, output slots
    start: list[Any]  # initial slot values: the folded constants, None elsewhere
    externals: list[tuple[int, Origin]]  # slots filled from the forward pass
    results: list[int | None]  # per wanted gradient: its slot, None when unreached
    backward: pd.BackwardOp
    active: list[int]  # nodes on a path from a wanted input to a target: what it frees
    native: NativeRegion | None = None
    """The whole region as one native program (`frontend/eager_native.py`), compiled
    in the background once the reference run measured costly; None: no step writes
    a wanted slot."""
    lazy_meta: dict[int, Any] | None = None
    """Shape and dtype of each slot a step writes, once a backward was deferred
    (`frontend/eager_lazy.py`); `lazy_ok` says whether every step can be."""
    lazy_ok: bool = False


def build_plan(g: Graph, targets: list[Enc], seeded: list[bool], wrt: list[Enc | None]) -> Plan:
    """Differentiate `g`'s `targets` (seeded with given gradients where `seeded`,
    ones elsewhere) with respect to `wrt` (None: not wanted) and flatten the result
    into a plan.  Raises RuntimeError when the autodiff pass cannot differentiate."""
    module, src_vals, res_vals = materialize(g)
    block = module.body.block

    def value(e: Enc) -> SSAValue:
        return res_vals[e[1]][e[2]] if e[0] == "n" else src_vals[e[1]]

    target_vals = [value(e) for e in targets]
    seeds: list[SSAValue | None] = []
    origin: dict[SSAValue, Origin] = {}
    for i, (t, has_seed) in enumerate(zip(target_vals, seeded)):
        if has_seed:
            seed = pd.DataOp.make(f"seed_{i}", list(pd.shape_of(t.type)), pd.dtype_name(pd.elem_of(t.type)))
            block.add_op(seed)
            origin[seed.out] = ("seed", i, 0)
            seeds.append(seed.out)
        else:
            seeds.append(None)
    wanted: list[SSAValue] = []
    for e in wrt:
        if e is not None and value(e) not in wanted:
            wanted.append(value(e))
    bw = pd.BackwardOp.make(target_vals, wanted, seeds)
    block.add_op(bw)
    active = _active_nodes(res_vals, target_vals, wanted)
    try:
        bw = differentiate(bw)
    except AutodiffError as err:
        raise RuntimeError(f"backward: {err}") from None

    for k, v in enumerate(src_vals):
        origin[v] = ("src", k, 0)
    for p, outs in enumerate(res_vals):
        for i, v in enumerate(outs):
            origin[v] = ("out", p, i)
    slots: dict[SSAValue, int] = {}
    externals: list[tuple[int, Origin]] = []

    def slot(v: SSAValue) -> int:
        """The slot of `v`, numbered on first use; values from outside the region
        become externals."""
        s = slots.get(v)
        if s is None:
            s = slots[v] = len(slots)
            if v in origin:
                externals.append((s, origin[v]))
        return s

    region: list[Operation] = list(bw.body.block.ops)
    term = region.pop()
    assert isinstance(term, pd.YieldOp)
    consts = fold_constants(region)
    initial: dict[int, np.ndarray] = {}
    steps: list[tuple[Template, list[int], list[int]]] = []
    for op in region:
        if op.results and all(r in consts for r in op.results):
            continue  # folded: its results start in their slots
        ins = []
        for v in op.operands:
            ins.append(slot(v))
            if v in consts:
                initial[ins[-1]] = consts[v]
        steps.append((Template(op), ins, [slot(r) for r in op.results]))
    yielded = [slot(v) for v in term.values]
    for v, s in zip(term.values, yielded):
        if v in consts:
            initial[s] = consts[v]
    grad_slot = dict(zip(bw.wrt, yielded))
    results = [None if e is None else grad_slot.get(value(e)) for e in wrt]
    start: list[Any] = [None] * len(slots)
    for s, a in initial.items():
        start[s] = a
    written = {s for _, _, outs in steps for s in outs}
    fetch = sorted({s for s in results if s is not None and s in written})
    native = None
    if fetch and eager_native.enabled():
        native = NativeRegion(f"a backward of {len(steps)} ops", [(t.op, i, o) for t, i, o in steps], fetch)
    return Plan(module, steps, start, externals, results, bw, active, native)


def _active_nodes(res_vals: list[list[SSAValue]], targets: list[SSAValue], wrt: list[SSAValue]) -> list[int]:
    """Positions of the nodes the backward goes through, by the autodiff pass's own
    activity analysis on their ops: those depending on a wanted input that some
    target depends on (what `retain_graph=False` frees; nodes upstream of an
    intermediate input stay usable, as in PyTorch)."""
    node_ops = [results[0].owner for results in res_vals]
    active = {id(op) for op in activity.analyze(node_ops, targets, wrt).active}  # type: ignore[arg-type]
    return [p for p, op in enumerate(node_ops) if id(op) in active]
