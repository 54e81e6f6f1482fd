"""The backward engine shared by `backward` and `paddle.grad`.

`run_backward` fits the seeds to their targets, collects the graph
(`graph.collect`), and either hands the call to the staged engine (`staged.py`:
some tensor has gradient hooks or a PyLayer is involved) or runs one cached plan
(`plan_cache.plan_for`, `runner.py`) on the saved forward values.  Then it frees
what the backward went through (without `retain_graph`) and delivers the gradients
(`delivery.py`).  It is the hot path of an eager training loop: keep it free of
per-call work beyond the graph walk, the cache lookup and the kernels.
"""

from __future__ import annotations

from typing import Any

from pullback.dialects.pd.dtypes import is_inexact_data
from pullback.frontend import eager_lazy, hooks
from pullback.frontend.autograd.delivery import (
    check_used,
    deliver_ghost_zeros,
    deliver_leaf,
    ghost_leaves,
    ghost_zero_results,
)
from pullback.frontend.autograd.graph import Enc, collect, cut_key, encode, ref_of
from pullback.frontend.autograd.plan_cache import plan_for
from pullback.frontend.autograd.plan import Plan
from pullback.frontend.autograd.runner import outside_value, replay_plan, run_plan
from pullback.frontend.autograd.staged import nodes_through_pylayers, run_staged, special_refs
from pullback.frontend.eager import Tensor
from pullback.frontend.ops.shape import reshape
from pullback.runtime.native import blas_threads


def fit_seeds(
    outputs: list[Tensor],
    seeds: list[Tensor | None],
    seed_name: str,
    target_name: str,
    create_graph: bool = False,
) -> list[Tensor | None]:
    """Check each seed's shape against its target's; a one-element seed of shape
    `[1]` for a 0-d target is accepted (and reshaped), as Paddle accepts it.  With
    `create_graph` the reshape is a recorded op, so the gradients computed from
    the seed can be differentiated with respect to it (a double backward asking
    for the seed's gradient)."""
    out: list[Tensor | None] = []
    for i, (t, s) in enumerate(zip(outputs, seeds)):
        if s is not None and s.shape != t.shape:
            if t.shape == [] and s.shape == [1]:
                s = reshape(s, []) if create_graph else Tensor._new(s._data.reshape(()), None, 0, True)
            else:
                raise ValueError(
                    f"The shape of {seed_name}[{i}] {s.shape} does not match the shape of "
                    f"{target_name}[{i}] {t.shape}"
                )
        out.append(s)
    return out


def run_backward(
    outputs: list[Tensor],
    seeds: list[Tensor | None],
    inputs: list[Tensor] | None,
    retain_graph: bool,
    create_graph: bool,
    cut: frozenset[Any] = frozenset(),
    allow_unused: bool = True,
    dump_dir: str | None = None,
    seed_name: str = "grad_tensors",
    target_name: str = "tensors",
) -> list[Any] | None:
    """The shared engine of `backward` (inputs=None: every leaf, accumulated into
    `.grad`; returns None) and `grad` (gradients of `inputs`, returned; None where
    unreached).  `cut` holds the `graph.cut_key`s of tensors treated as constants;
    `dump_dir` receives the graphs (`frontend/eager_dump.py`); `seed_name` and
    `target_name` name the arguments in error messages."""
    blas_threads.maybe_apply()  # once a second at most: BLAS threads follow the load
    # Only `backward` joins a deferred trace (`frontend/eager_lazy.py`): `grad`
    # hands its results to Python, a dump and a recorded backward read values.
    lazy = inputs is None and not create_graph and dump_dir is None and eager_lazy.capturing()
    if not lazy:
        eager_lazy.flush()
    seeds = fit_seeds(outputs, seeds, seed_name, target_name, create_graph)
    # Tensors that need no gradient contribute nothing (as a constant would).
    live = [
        (t, s) for t, s in zip(outputs, seeds)
        if not t.stop_gradient and is_inexact_data(t._arr.dtype)
    ]
    if not live:
        return None if inputs is None else [None] * len(inputs)
    roots = [ref_of(t) for t, _ in live]
    g = collect(roots, cut)
    if dump_dir is not None:
        from pullback.frontend import eager_dump

        eager_dump.write(dump_dir, g, [t for t, _ in live])
    ghosts = ghost_leaves(g, cut)
    if g.pynodes:
        # Hooked tensors behind a PyLayer are not in `g`: look through the layers.
        special = special_refs(nodes_through_pylayers(roots)) if hooks.has_interior() else {}
    else:
        special = special_refs(g.nodes) if hooks.has_interior() else {}
    if special or g.pynodes:
        eager_lazy.flush()  # hooks and PyLayers see values
        return run_staged(live, inputs, special, retain_graph, create_graph, cut, allow_unused, ghosts)
    targets: list[Enc] = []
    for r in roots:
        e = encode(g, r)
        assert e is not None
        targets.append(e)
    seeded = [s is not None for _, s in live]
    if inputs is None:
        wrt: list[Enc | None] = [("s", k, 0) for k, s in enumerate(g.sources) if s.kind == "leaf"]
    else:
        wrt = [
            None if (x.stop_gradient or cut_key(x) in cut) else encode(g, ref_of(x)) for x in inputs
        ]
    plan = plan_for(g, targets, seeded, wrt)
    if inputs is not None and not allow_unused:
        check_used([s is not None or id(x) in ghosts for s, x in zip(plan.results, inputs)])
    grads: list[Any]
    if lazy and not ghosts and _deferrable(plan, g, wrt, live):
        grads = _defer(plan, g, live)
    elif create_graph:
        seed_ts = [
            None if s is None else (s if s.dtype == t.dtype else Tensor._new(s._data.astype(t._arr.dtype), None, 0, True))
            for t, s in live
        ]
        grads = replay_plan(plan, g, seed_ts)
    else:
        eager_lazy.flush()
        seed_arrays = [None if s is None else s._data.astype(t._arr.dtype, copy=False) for t, s in live]
        grads = run_plan(plan, g, seed_arrays)
    if not retain_graph:
        for p in plan.active:
            g.nodes[p].free()
    if inputs is None:
        delivered: set[int] = set()
        grad: Any  # arrays: `backward` never records its gradients
        for e, grad in zip(wrt, grads):
            if grad is not None:
                assert e is not None
                leaf = g.sources[e[1]].tensor
                assert leaf is not None
                deliver_leaf(leaf, grad)
                delivered.add(id(leaf))
        deliver_ghost_zeros(ghosts, delivered)
        # The forward and its backward run now, or with the optimizer step that
        # follows (`eager_lazy.end_backward`), as one program once compiled.
        if lazy:
            eager_lazy.end_backward()
        eager_lazy.tick()
        return None
    return ghost_zero_results(grads, inputs, ghosts, create_graph)


def _deferrable(plan: Plan, g: Any, wrt: list[Enc | None], live: list[tuple[Tensor, Tensor | None]]) -> bool:
    """Whether a backward may join the deferred trace: every step deferrable, no
    leaf with hooks, seeds of their targets' dtypes (`frontend/eager_lazy.py`)."""
    if plan.lazy_meta is None:
        meta: dict[int, Any] = {}
        ok = True
        for tpl, _, outs in plan.steps:
            if tpl.shapes is None:
                ok = False
                break
            for o, shape, dt in zip(outs, tpl.shapes, tpl.dtypes):
                meta[o] = (shape, dt)
        plan.lazy_meta = meta if ok else {}
        plan.lazy_ok = ok
    if not plan.lazy_ok:
        return False
    for t, s in live:
        if s is not None and s._arr.dtype != t._arr.dtype:
            return False
    for e in wrt:
        if e is not None:
            leaf = g.sources[e[1]].tensor
            d = leaf.__dict__
            if d and ("_grad_hooks" in d or "_void_hooks" in d) and (
                hooks.leaf_hooks(leaf) or hooks.void_hooks(leaf)
            ):
                return False
    return True


def _defer(plan: Plan, g: Any, live: list[tuple[Tensor, Tensor | None]]) -> list[Any]:
    """Append the plan's steps to the deferred trace: its gradients are pending."""
    seeds = [None if s is None else s._arr for _, s in live]
    externals = [(s, outside_value(g, origin, seeds)) for s, origin in plan.externals]
    assert plan.lazy_meta is not None
    return eager_lazy.defer_plan(plan.steps, plan.start, externals, plan.results, plan.native, plan.lazy_meta)
