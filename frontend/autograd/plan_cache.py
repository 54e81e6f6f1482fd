"""The plan cache: one plan per graph shape, built on the first backward of it.

What makes a training loop cheap: from the second step on, a backward is a graph
walk (`graph.collect`), a dictionary lookup here and the gradient kernels
(`runner.py`); the IR, the autodiff pass and the folding run once per shape.
"""

from __future__ import annotations

from typing import Any

from pullback.frontend.autograd.graph import Enc, Graph
from pullback.frontend.autograd.plan import Plan, build_plan

_PLANS: dict[Any, Plan] = {}
MAX_PLANS = 512
"""Plans kept (oldest dropped first): a plan is specialized to shapes, so a workload
with ever-changing shapes must not grow the cache without bound."""
_stats = {"hits": 0, "misses": 0}


def cache_info() -> dict[str, int]:
    """Plan cache statistics: `hits`, `misses` and `size`."""
    return {**_stats, "size": len(_PLANS)}


def clear_cache() -> None:
    """Forget every cached plan (they are rebuilt on demand)."""
    _PLANS.clear()
    _stats.update(hits=0, misses=0)


def plan_for(g: Graph, targets: list[Enc], seeded: list[bool], wrt: list[Enc | None]) -> Plan:
    """The cached plan of this graph shape (built on a miss).  The signature holds
    everything the plan depends on: each node's template (op, properties, input
    types) and wiring, the sources' kinds and types, targets, seeds and inputs."""
    sig = (
        tuple((n.tpl.uid, ins) for n, ins in zip(g.nodes, g.inputs)),
        tuple((s.kind, s.array.shape, s.array.dtype) for s in g.sources),
        tuple(targets),
        tuple(seeded),
        tuple(wrt),
    )
    plan = _PLANS.get(sig)
    if plan is None:
        _stats["misses"] += 1
        if len(_PLANS) >= MAX_PLANS:
            # Dicts keep insertion order: the first key is the oldest plan.
            del _PLANS[next(iter(_PLANS))]
        plan = _PLANS[sig] = build_plan(g, targets, seeded, wrt)
    else:
        _stats["hits"] += 1
    return plan
