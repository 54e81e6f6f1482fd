"""The staged backward: gradients through hooked tensors and PyLayers.

A hooked tensor's hooks must see its *complete* gradient, and what they return is
what flows on; a PyLayer's backward is Python that must see the complete gradients
of its outputs.  So each such tensor (and each PyLayer output) is a stage boundary:
the first stage runs from the targets and stops at every boundary (reading it as a
source whose gradient is wanted); then the boundaries are processed latest-created
first — every consumer of a boundary was created after it, so its gradient is
complete by then: the hook chain (or the PyLayer's backward) runs on the gradient
and a stage runs from the boundary with what it returns as seed.  Backward is
linear in the seeds, so the stages' contributions add up to the gradients of one
whole backward.  Each stage is an ordinary cached plan.

A retained tensor whose op took part but received no gradient (an unused output of
`split`) gets zeros, as in Paddle.  `retain_grads` is a hook in the chain, so what
it keeps depends on the hooks registered before it, as in Paddle.

`engine.run_backward` sends a call here only when some hook or PyLayer is involved;
the plain path never pays for this bookkeeping.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pullback.dialects.bfloat16 import host_cast
from pullback.frontend import hooks
from pullback.frontend.eager_lazy import resolve
from pullback.frontend.autograd.delivery import (
    check_used,
    deliver_ghost_zeros,
    deliver_leaf,
    ghost_zero_results,
)
from pullback.frontend.autograd.graph import FREED_TWICE, Enc, Ref, collect, cut_key, encode, ref_of
from pullback.frontend.autograd.plan_cache import plan_for
from pullback.frontend.autograd.runner import replay_plan, run_plan
from pullback.frontend.eager import Node, Tensor
from pullback.frontend.pylayer import PyNode

BoundaryKey = tuple[int, int]
"""A boundary: `(id(node), result index)` of a hooked result or a PyLayer output."""

Seeded = tuple[Ref, Any]
"""A root of a stage and the gradient flowing into it."""


@dataclass
class Special:
    """A recorded op result with gradient hooks or a retained gradient."""

    node: Node
    index: int
    hooks: list[Any]  # the chain, retain_grads' keeping hook in its place
    retained: bool  # a live tensor keeps this gradient


def special_refs(nodes: Sequence[Node]) -> dict[BoundaryKey, Special]:
    """The results of `nodes` that have hooks or retain their gradient."""
    out: dict[BoundaryKey, Special] = {}
    for node in nodes:
        for i in range(len(node.tpl.dtypes)):
            info = hooks.interior(node, i)
            if info is not None:
                out[(id(node), i)] = Special(node, i, *info)
    return out


def nodes_through_pylayers(roots: Sequence[Ref]) -> list[Node]:
    """Every recorded op `roots` depend on, PyLayer nodes looked through."""
    seen: dict[int, Any] = {}
    stack = [r for r, _ in roots if type(r) is Node or type(r) is PyNode]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen[id(node)] = node
        for p, _ in node.parents:
            if (type(p) is Node or type(p) is PyNode) and id(p) not in seen:
                stack.append(p)
    return [n for n in seen.values() if type(n) is Node]


def _same(a: Any) -> Any:
    return a


def _as_tensor(a: Any) -> Tensor:
    return Tensor._new(a, None, 0, True)


def _data(t: Tensor) -> Any:
    return t._data


def _add(a: Any, b: Any) -> Any:
    """Accumulate `b` into `a` (None: nothing yet)."""
    return b if a is None else a + b


class StagedBackward:
    """One staged backward call: the accumulators it fills and the steps that fill
    them.  `run` processes the targets and then every boundary; `finish` frees the
    saved values and hands the gradients out, as the plain engine does."""

    def __init__(
        self,
        inputs: list[Tensor] | None,
        special: dict[BoundaryKey, Special],
        retain_graph: bool,
        create_graph: bool,
        cut: frozenset[Any],
    ) -> None:
        self.inputs = inputs  # None: every leaf (`backward`), else `grad`'s inputs
        self.special = special
        self.boundary = frozenset(special)
        self.retain_graph = retain_graph
        self.create_graph = create_graph
        self.cut = cut
        # Gradients are arrays, wrapped as tensors only for hooks and PyLayer
        # backwards; with create_graph they are tensors throughout (recorded ops).
        self.wrap: Callable[[Any], Any] = _same if create_graph else _as_tensor
        self.unwrap: Callable[[Tensor], Any] = _same if create_graph else _data
        self.acc: dict[BoundaryKey, Any] = {}  # boundary -> its gradient so far
        self.leaf_acc: dict[int, tuple[Tensor, Any]] = {}  # id(leaf) -> (leaf, gradient)
        self.input_acc: list[Any] = [None] * (0 if inputs is None else len(inputs))
        # Inputs that are boundaries themselves get what flows on from them (their
        # gradient after their hooks), taken when their stage runs.
        self.special_inputs: dict[BoundaryKey, list[int]] = {}
        for i, x in enumerate(inputs or ()):
            if not x.stop_gradient and cut_key(x) not in cut and cut_key(x) in special:
                self.special_inputs.setdefault(cut_key(x), []).append(i)
        self.traversed: set[int] = set()  # ids of the nodes some stage went through
        self.active: dict[int, Node] = {}  # the nodes to free without retain_graph
        self.pynodes: dict[int, PyNode] = {}  # PyLayer nodes a gradient reached
        self.done: set[int] = set()  # PyLayer nodes whose backward ran

    # ------------------------------------------------------------ gradient flow

    def route(self, ref: Ref, val: Any, roots: list[Seeded]) -> None:
        """Send a gradient to where `ref` was produced: a boundary's accumulator
        (hooked tensor, PyLayer output) or `roots`, the roots of the next stage."""
        obj, idx = ref
        if obj is None:
            return
        if type(obj) is PyNode:
            key = (id(obj), idx)
            self.acc[key] = _add(self.acc.get(key), val)
            self.pynodes[id(obj)] = obj
        elif type(obj) is Node:
            key = (id(obj), idx)
            if key in self.cut:
                return
            if key in self.special:
                self.acc[key] = _add(self.acc.get(key), val)
            else:
                roots.append((ref, val))
        elif not obj.stop_gradient and id(obj) not in self.cut:
            roots.append((ref, val))

    def stage(self, root_seeds: list[Seeded], own: BoundaryKey | None) -> None:
        """Backward from `root_seeds` up to the boundaries (all but `own`, the
        boundary this stage starts from): leaves' and inputs' gradients are
        accumulated, boundaries' gradients collected for their own stages."""
        g = collect([r for r, _ in root_seeds], self.cut, self.boundary - {own} if own else self.boundary)
        targets: list[Enc] = []
        seeds: list[Any] = []
        for r, v in root_seeds:
            e = encode(g, r)
            if e is not None:
                targets.append(e)
                seeds.append(v)
        if not targets:
            return
        bsrc = [k for k, src in enumerate(g.sources) if src.kind == "boundary"]
        if self.inputs is None:
            front: list[Enc | None] = [("s", k, 0) for k, src in enumerate(g.sources) if src.kind == "leaf"]
        else:
            front = [
                None
                if (x.stop_gradient or cut_key(x) in self.cut or cut_key(x) in self.special)
                else encode(g, ref_of(x))
                for x in self.inputs
            ]
        wrt = front + [("s", k, 0) for k in bsrc]
        plan = plan_for(g, targets, [True] * len(targets), wrt)
        grads: list[Any] = replay_plan(plan, g, seeds) if self.create_graph else run_plan(plan, g, seeds)
        for p in plan.active:
            self.traversed.add(id(g.nodes[p]))
            self.active[id(g.nodes[p])] = g.nodes[p]
        for i, (e, grad) in enumerate(zip(front, grads)):
            if grad is None or e is None:
                continue
            if self.inputs is None:
                leaf = g.sources[e[1]].tensor
                assert leaf is not None
                prev = self.leaf_acc.get(id(leaf))
                self.leaf_acc[id(leaf)] = (leaf, _add(None if prev is None else prev[1], grad))
            else:
                self.input_acc[i] = _add(self.input_acc[i], grad)
        for k, grad in zip(bsrc, grads[len(front):]):
            if grad is not None:
                key = g.sources[k].key
                self.acc[key] = _add(self.acc.get(key), grad)
        self.pynodes.update(g.pynodes)

    def run_pylayer(self, pn: PyNode) -> None:
        """Call a PyLayer's backward on its outputs' complete gradients and carry
        what it returns on to its inputs."""
        if pn.freed:
            raise RuntimeError(FREED_TWICE)
        grads: list[Any] = []
        for i in range(len(pn.outputs)):
            val = self.acc.pop((id(pn), i), None)
            info = hooks.interior(pn, i)  # type: ignore[arg-type]
            if val is not None and info is not None:
                val = self.unwrap(hooks.run_hooks(info[0], self.wrap(val)))
            grads.append(val)
        if all(v is None for v in grads):
            return
        outs = pn.run_backward([None if v is None else self.wrap(v) for v in grads], self.create_graph)
        roots: list[Seeded] = []
        for ref, grad in zip(pn.parents, outs):
            if grad is not None:
                self.route(ref, self.unwrap(grad), roots)
        if not self.retain_graph:
            pn.free()
        if roots:
            self.stage(roots, None)

    def run_hooked(self, info: Special) -> None:
        """Run a hooked tensor's hook chain on its complete gradient and a stage
        from it with what the chain returns."""
        key = (id(info.node), info.index)
        val = self.acc.pop(key, None)
        if val is None:
            if info.retained and id(info.node) in self.traversed:
                # Paddle fills the missing gradient of a traversed op's output with
                # zeros; it flows nowhere, so only the chain (the keeping) runs.
                out = info.node.saved_out
                zeros = np.zeros_like(resolve(out[info.index])) if out is not None else None
                if zeros is not None:
                    hooks.run_hooks(info.hooks, Tensor._new(zeros, None, 0, True))
            return
        val = self.unwrap(hooks.run_hooks(info.hooks, self.wrap(val)))
        for i in self.special_inputs.get(key, ()):
            self.input_acc[i] = val
        self.stage([((info.node, info.index), val)], key)

    # ------------------------------------------------------------------ driver

    def run(self, live: list[tuple[Tensor, Tensor | None]]) -> None:
        """The first stage from the targets (seeded by `live`'s seeds, ones where
        None), then every boundary, latest-created first."""
        roots: list[Seeded] = []
        for t, s in live:
            if s is None:
                seed = self.unwrap(Tensor._new(host_cast(np.ones(t._arr.shape), t._arr.dtype), None, 0, True))
            else:
                seed = self.unwrap(
                    s if s.dtype == t.dtype else Tensor._new(s._data.astype(t._arr.dtype), None, 0, True)
                )
            self.route(ref_of(t), seed, roots)
        if roots:
            self.stage(roots, None)
        pending = sorted(self.special.values(), key=lambda sp: (sp.node.seq, sp.index))
        while True:
            # Latest-created first, hooked tensors and PyLayers alike: every consumer
            # of a boundary was created after it, so its gradient is complete by then.
            # Stages add PyLayers as they reach them, so look again after each step.
            waiting = [pn for pn in self.pynodes.values() if id(pn) not in self.done]
            pn = max(waiting, key=lambda n: n.seq) if waiting else None
            if pn is not None and (not pending or pn.seq > pending[-1].node.seq):
                self.done.add(id(pn))
                self.run_pylayer(pn)
            elif pending:
                self.run_hooked(pending.pop())
            else:
                break

    def finish(self, allow_unused: bool, ghosts: dict[int, Tensor]) -> list[Any] | None:
        """Free the saved values (without retain_graph) and hand the gradients out:
        into leaves' `.grad` (`backward`, returns None) or as `grad`'s result."""
        if not self.retain_graph:
            for node in self.active.values():
                node.free()
        if self.inputs is None:
            for leaf, grad in self.leaf_acc.values():
                deliver_leaf(leaf, grad)
            deliver_ghost_zeros(ghosts, set(self.leaf_acc))
            return None
        if not allow_unused:
            check_used([a is not None or id(x) in ghosts for a, x in zip(self.input_acc, self.inputs)])
        return ghost_zero_results(self.input_acc, self.inputs, ghosts, self.create_graph)


def run_staged(
    live: list[tuple[Tensor, Tensor | None]],
    inputs: list[Tensor] | None,
    special: dict[BoundaryKey, Special],
    retain_graph: bool,
    create_graph: bool,
    cut: frozenset[Any],
    allow_unused: bool,
    ghosts: dict[int, Tensor],
) -> list[Any] | None:
    """Backward through interior tensors with hooks or retained gradients, and
    through PyLayers, in stages (see the module docstring)."""
    engine = StagedBackward(inputs, special, retain_graph, create_graph, cut)
    engine.run(live)
    return engine.finish(allow_unused, ghosts)
