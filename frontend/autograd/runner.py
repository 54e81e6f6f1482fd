"""Running a plan on one graph's saved forward values.

`run_plan` evaluates the steps on numpy arrays (the usual backward: nothing is
recomputed, nothing recorded), or, once compiled, the whole region as one native
program (`Plan.native`, `frontend/eager_native.py`).  `replay_plan` runs them as eager ops instead, so
they are recorded and their results can be differentiated again
(`create_graph=True`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
from pullback.frontend import eager_native
from pullback.frontend.eager_lazy import resolve
from pullback.frontend.autograd.graph import Graph
from pullback.frontend.autograd.plan import Origin, Plan
from pullback.frontend.eager import Tensor, execute


def outside_value(g: Graph, origin: Origin, seeds: Sequence[Any]) -> Any:
    """The value of an external slot in this run: an array, or a pending value
    of a deferred op (`frontend/eager_lazy.py`)."""
    kind, a, b = origin
    if kind == "out":
        saved = g.nodes[a].saved_out
        assert saved is not None
        return saved[b]
    if kind == "src":
        return g.sources[a].array
    return seeds[a]


def _outside(g: Graph, origin: Origin, seeds: Sequence[Any]) -> Any:
    """The array of an external slot in this run (a graph collected before a
    flush holds pending values: their arrays now)."""
    return resolve(outside_value(g, origin, seeds))


def run_plan(plan: Plan, g: Graph, seeds: Sequence[np.ndarray | None]) -> list[np.ndarray | None]:
    """Evaluate the backward region on saved forward values; gradients per wanted input."""
    vals = plan.start.copy()
    for s, origin in plan.externals:
        vals[s] = _outside(g, origin, seeds)
    nat = plan.native
    if nat is not None and nat.state is not eager_native.OFF:
        if nat.ready():
            outs = nat.call([vals[s] for s in nat.feeds])
            if outs is not None:
                for s, v in zip(nat.fetch, outs):
                    vals[s] = v
                return [None if s is None else vals[s] for s in plan.results]
        t = time.perf_counter()
        _run_steps(plan, vals)
        nat.reference(time.perf_counter() - t)
    else:
        _run_steps(plan, vals)
    return [None if s is None else vals[s] for s in plan.results]


def _run_steps(plan: Plan, vals: list[Any]) -> None:
    """The reference evaluation: each step's template kernel, in order."""
    with np.errstate(all="ignore"):  # as every kernel does, once for the whole region
        for tpl, ins, outs in plan.steps:
            for s, v in zip(outs, tpl.run([vals[i] for i in ins], quiet=True)):
                vals[s] = v


def replay_plan(plan: Plan, g: Graph, seeds: Sequence[Tensor | None]) -> list[Tensor | None]:
    """Run the backward region as eager ops, recording them (`create_graph=True`)."""
    vals: list[Any] = [None if a is None else Tensor._new(a, None, 0, True) for a in plan.start]
    for s, (kind, a, b) in plan.externals:
        if kind == "out":
            node = g.nodes[a]
            assert node.saved_out is not None
            needs = node.tpl.float_out[b]
            vals[s] = Tensor._new(node.saved_out[b], node if needs else None, b, not needs)
        elif kind == "src":
            src = g.sources[a]
            vals[s] = src.tensor if src.kind == "leaf" else Tensor._new(src.array, None, 0, True)
        else:
            vals[s] = seeds[a]
    for tpl, ins, outs in plan.steps:
        for s, t in zip(outs, execute(tpl, [vals[i] for i in ins])):
            vals[s] = t
    results = [None if s is None else vals[s] for s in plan.results]
    # Paddle records one gradient node per forward op, reading all of that op's
    # inputs: a leaf input of a differentiated op takes part in the recorded
    # gradients even where their values do not depend on it, and a later backward
    # through them gives it a zero gradient.
    leaves: dict[int, Tensor] = {}
    for p in plan.active:
        for kind, j, _ in g.inputs[p]:
            if kind == "s" and g.sources[j].kind == "leaf":
                leaf = g.sources[j].tensor
                assert leaf is not None
                leaves[id(leaf)] = leaf
    if leaves:
        for r in results:
            if isinstance(r, Tensor) and r._node is not None:
                known = {id(t) for t in r._node.ghosts}
                r._node.ghosts += tuple(t for k, t in leaves.items() if k not in known)
    return results
