"""Eager autograd: `paddle.autograd.backward`, `paddle.grad`, `no_grad` and friends.

A backward call

1. collects the recorded nodes (`frontend/eager.py`) the targets depend on, in a
   deterministic topological order, and the *sources* they read: leaves that need a
   gradient and constants;
2. looks the graph's structural signature (templates, wiring, which gradients are
   wanted) up in a plan cache; on a miss it writes the graph as `pd` IR — `pd.data`
   per source, one op per node, then a `pd.backward` op (targets, seeds, wrt) — runs
   the `autodiff` pass (`differentiate`, the same one static programs use) and
   turns the filled region into a plan: its ops as templates over numbered slots;
3. runs the plan on the nodes' saved forward values (nothing is recomputed).  With
   `create_graph=True` the plan's ops run as eager ops instead, so they are recorded
   and their results can be differentiated again;
4. accumulates leaf gradients into `.grad` (`backward`) or returns them (`grad`), and
   without `retain_graph` releases the saved values of every node it went through.

The plan cache is what makes a training loop cheap: from the second step on, a
backward is a graph walk, a dictionary lookup and the gradient kernels.
"""

from __future__ import annotations

import functools
import inspect
import operator
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
from pullback.dialects import pd
from pullback.frontend import hooks
from pullback.frontend.api import registry
from pullback.frontend.ops.shape import reshape
from pullback.frontend.pylayer import EagerPyLayer, EagerPyLayerContext, PyLayer, PyLayerContext, PyNode
from pullback.frontend.eager import (
    DTYPE_BY_ELEM,
    DTYPE_NAMES,
    Node,
    Template,
    Tensor,
    _set_grad_enabled,
    execute,
    is_grad_enabled,
)
from pullback.passes import activity
from pullback.passes.autodiff import AutodiffError, differentiate
from pullback.runtime.native import blas_threads
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue

# --------------------------------------------------------------------- graphs

Enc = tuple[str, int, int]
"""An input's origin in a collected graph: `('n', node position, result index)` or
`('s', source position, 0)`."""


class Source:
    """A value the recorded ops read that no recorded op produced."""

    __slots__ = ("array", "key", "kind", "tensor")

    def __init__(self, kind: str, tensor: Tensor | None, array: np.ndarray, key: Any = None) -> None:
        self.kind = kind  # "leaf" (needs a gradient), "boundary" (an op result read as one) or "const"
        self.tensor = tensor  # the leaf itself; None for constants and boundaries
        self.array = array  # the value the recorded ops read
        self.key = key  # a boundary's (id(node), index)


@dataclass
class Graph:
    """The recorded nodes one backward call goes through."""

    nodes: list[Node]
    pos: dict[int, int]  # id(node) -> position in `nodes`
    inputs: list[tuple[Enc, ...]]  # per node, where each input comes from
    sources: list[Source]
    src_index: dict[Any, int]  # id(leaf tensor), id(constant array) or ("b", id(node), index)
    pynodes: dict[int, PyNode]  # PyLayer nodes whose outputs are read (boundary sources)


def _ref(t: Tensor) -> tuple[Any, int]:
    """Where a tensor that needs a gradient comes from: (node, result) or (leaf, -1)."""
    return (t._node, t._index) if t._node is not None else (t, -1)


_TWICE = (
    "The backward is computed twice for the same subgraph: its saved forward values "
    "were freed by the first backward call (retain_graph=False). Set retain_graph=True "
    "in the first call to backward through it again."
)


def collect(
    roots: Sequence[tuple[Any, int]],
    cut: frozenset[Any] = frozenset(),
    boundary: frozenset[tuple[int, int]] = frozenset(),
) -> Graph:
    """The nodes `roots` depend on, in creation order (parents first), and the
    sources they read.  Runs on every backward call, so it is kept tight: one visit
    per node, then a sort by creation number.  `cut` holds `(id(node), index)` pairs
    and leaf ids whose values are treated as constants (paddle.grad's `no_grad_vars`).
    `boundary` holds `(id(node), index)` pairs read as sources whose gradient is
    wanted, without going through their node (the stages of a hooked backward).
    """
    if boundary:
        cut = cut | boundary
    seen: dict[int, Node] = {}
    stack = [r for r, i in roots if type(r) is Node and (id(r), i) not in cut]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        if node.freed:
            raise RuntimeError(_TWICE)
        seen[id(node)] = node
        for p, k in node.parents:
            if type(p) is Node and id(p) not in seen and (not cut or (id(p), k) not in cut):
                stack.append(p)
    nodes = sorted(seen.values(), key=_by_seq)
    pos = {id(n): i for i, n in enumerate(nodes)}
    inputs: list[tuple[Enc, ...]] = []
    sources: list[Source] = []
    src_index: dict[Any, int] = {}
    pynodes: dict[int, PyNode] = {}
    for node in nodes:
        enc: list[Enc] = []
        for (p, k), arr in zip(node.parents, node.saved_in):  # type: ignore[arg-type]
            if type(p) is Node and (not cut or (id(p), k) not in cut):
                enc.append(("n", pos[id(p)], k))
                continue
            if type(p) is PyNode:
                # A PyLayer's output: its gradient is collected here and carried on
                # by the layer's own backward (`_run_staged`).
                kind, key, tensor = "boundary", ("b", id(p), k), None
                pynodes[id(p)] = p
            elif p is not None and type(p) is not Node and not p.stop_gradient and id(p) not in cut:
                kind, key, tensor = "leaf", id(p), p
            elif boundary and type(p) is Node and (id(p), k) in boundary:
                kind, key, tensor = "boundary", ("b", id(p), k), None
            else:
                kind, key, tensor = "const", id(arr), None
            j = src_index.get(key)
            if j is None:
                j = src_index[key] = len(sources)
                sources.append(Source(kind, tensor, arr, key[1:] if kind == "boundary" else None))
            enc.append(("s", j, 0))
        inputs.append(tuple(enc))
    for root, _ in roots:  # leaves that are targets themselves
        if type(root) is PyNode:
            pynodes[id(root)] = root
        elif type(root) is not Node and id(root) not in src_index:
            src_index[id(root)] = len(sources)
            sources.append(Source("leaf", root, root._data))
    return Graph(nodes, pos, inputs, sources, src_index, pynodes)


_by_seq = operator.attrgetter("seq")


def encode(g: Graph, ref: tuple[Any, int]) -> Enc | None:
    """A tensor reference's place in the graph (None when the graph does not have it)."""
    obj, idx = ref
    if type(obj) is Node:
        p = g.pos.get(id(obj))
        if p is not None:
            return ("n", p, idx)
        k = g.src_index.get(("b", id(obj), idx))  # type: ignore[call-overload]
        return None if k is None else ("s", k, 0)
    k = g.src_index.get(id(obj))
    return None if k is None or g.sources[k].kind != "leaf" else ("s", k, 0)


# ------------------------------------------------------------ recorded IR


def materialize(g: Graph) -> tuple[ModuleOp, list[SSAValue], list[list[SSAValue]]]:
    """The recorded graph as `pd` IR: a `pd.data` per source (`leaf_<k>`,
    `const_<k>`), then one op per node, named `<type>_<position>.tmp_<i>`.
    Returns the module, the sources' values and each node's results."""
    module = ModuleOp([])
    block = module.body.block
    src_vals: list[SSAValue] = []
    for k, s in enumerate(g.sources):
        op = pd.DataOp.make(f"{s.kind}_{k}", list(s.array.shape), DTYPE_NAMES[s.array.dtype])
        block.add_op(op)
        src_vals.append(op.out)
    res_vals: list[list[SSAValue]] = []
    for k, node in enumerate(g.nodes):
        tpl = node.tpl.op
        operands = [res_vals[a][b] if kind == "n" else src_vals[a] for kind, a, b in g.inputs[k]]
        # `create`, not `make`: the template was verified already, and `make` costs
        # a type inference per op.
        op = type(tpl).create(
            operands=operands,
            result_types=[r.type for r in tpl.results],
            properties=dict(tpl.properties),
            attributes=dict(tpl.attributes),
        )
        if isinstance(op, pd.PdOp) and (len(op.results) == 1 or isinstance(op, pd.MultiResultNames)):
            pd.set_result_names(op, [f"{node.tpl.type}_{k}.tmp_{i}" for i in range(len(op.results))])
        block.add_op(op)
        res_vals.append(list(op.results))
    return module, src_vals, res_vals


def recorded_program(tensors: Tensor | Sequence[Tensor]) -> ModuleOp:
    """The `pd` IR recorded for `tensors` (their graph up to leaves and constants)."""
    ts = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    roots = [_ref(t) for t in ts if not t.stop_gradient]
    return materialize(collect(roots))[0]


# ----------------------------------------------------------------- plans

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


def _build_plan(
    g: Graph, targets: list[Enc], seeded: list[bool], wrt: list[Enc | None]
) -> Plan:
    module, src_vals, res_vals = materialize(g)
    block = module.body.block

    def value(e: Enc) -> SSAValue:
        return res_vals[e[1]][e[2]] if e[0] == "n" else src_vals[e[1]]

    target_vals = [value(e) for e in targets]
    seeds: list[SSAValue | None] = []
    origin: dict[SSAValue, Origin] = {}
    for i, (t, s) in enumerate(zip(target_vals, seeded)):
        if s:
            op = pd.DataOp.make(f"seed_{i}", list(pd.shape_of(t.type)), pd.dtype_name(pd.elem_of(t.type)))
            block.add_op(op)
            origin[op.out] = ("seed", i, 0)
            seeds.append(op.out)
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
    for p, results in enumerate(res_vals):
        for i, v in enumerate(results):
            origin[v] = ("out", p, i)
    slots: dict[SSAValue, int] = {}
    externals: list[tuple[int, Origin]] = []

    def slot(v: SSAValue) -> int:
        s = slots.get(v)
        if s is None:
            s = slots[v] = len(slots)
            if v in origin:
                externals.append((s, origin[v]))
        return s

    region = list(bw.body.block.ops)
    term = region.pop()
    assert isinstance(term, pd.YieldOp)
    consts = _fold_constants(region)
    initial: dict[int, np.ndarray] = {}
    steps: list[tuple[Template, list[int], list[int]]] = []
    for op in region:
        if op.results and all(r in consts for r in op.results):
            continue
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
    return Plan(module, steps, start, externals, results, bw, active)


def _active_nodes(res_vals: list[list[SSAValue]], targets: list[SSAValue], wrt: list[SSAValue]) -> list[int]:
    """Positions of the nodes the backward goes through, by the autodiff pass's own
    activity analysis on their ops: those depending on a wanted input that some
    target depends on (what `retain_graph=False` frees; nodes upstream of an
    intermediate input stay usable, as in PyTorch)."""
    node_ops = [results[0].owner for results in res_vals]
    active = {id(op) for op in activity.analyze(node_ops, targets, wrt).active}  # type: ignore[arg-type]
    return [p for p, op in enumerate(node_ops) if id(op) in active]


_SHAPE_ONLY = (pd.FillAnyLikeOp,)
"""Ops that read their operands' shapes, never their values."""


def _fold_constants(region: list[Operation]) -> dict[SSAValue, np.ndarray]:
    """Evaluate, once per plan, the region's ops that do not depend on run-time
    values: constants (`fill_constant`, `fill_any_like` — shapes are static in a
    plan) and ops computed from constants only.  VJP rules make several per op
    (zeros for relu's `where`, ones for seeds and means).  The arrays are shared by
    every run of the plan, so they are made read-only."""
    consts: dict[SSAValue, np.ndarray] = {}
    for op in region:
        if isinstance(op, _SHAPE_ONLY):
            if not all(isinstance(v.type, TensorType) and v.type.has_static_shape() for v in op.operands):
                continue
            args = [np.empty(pd.shape_of(v.type), DTYPE_BY_ELEM[str(pd.elem_of(v.type))]) for v in op.operands]
        elif isinstance(op, pd.FillConstantOp) or (
            op.operands
            and all(v in consts for v in op.operands)
            and not isinstance(op, (pd.UniformRandomOp, pd.GaussianRandomOp))
        ):
            args = [consts[v] for v in op.operands]
        else:
            continue
        for r, a in zip(op.results, Template(op).run(args)):
            a.flags.writeable = False
            consts[r] = a
    return consts


def _plan_for(g: Graph, targets: list[Enc], seeded: list[bool], wrt: list[Enc | None]) -> Plan:
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
            del _PLANS[next(iter(_PLANS))]
        plan = _PLANS[sig] = _build_plan(g, targets, seeded, wrt)
    else:
        _stats["hits"] += 1
    return plan


def _outside(g: Graph, origin: Origin, seeds: Sequence[Any]) -> Any:
    kind, a, b = origin
    if kind == "out":
        saved = g.nodes[a].saved_out
        assert saved is not None
        return saved[b]
    if kind == "src":
        return g.sources[a].array
    return seeds[a]


def run_plan(plan: Plan, g: Graph, seeds: Sequence[np.ndarray | None]) -> list[np.ndarray | None]:
    """Evaluate the backward region on saved forward values; gradients per wanted input."""
    vals = plan.start.copy()
    for s, origin in plan.externals:
        vals[s] = _outside(g, origin, seeds)
    with np.errstate(all="ignore"):  # as every kernel does, once for the whole region
        for tpl, ins, outs in plan.steps:
            for s, v in zip(outs, tpl.run([vals[i] for i in ins], quiet=True)):
                vals[s] = v
    return [None if s is None else vals[s] for s in plan.results]


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


# ------------------------------------------------------------------ engine


def _check_tensors(xs: Any, what: str) -> list[Tensor]:
    assert xs is not None, f"{what} should not be None"
    if isinstance(xs, (list, tuple)):
        assert len(xs) > 0, f"{what} cannot be empty"
        for x in xs:
            assert isinstance(x, Tensor), f"Elements of {what} must be paddle.Tensor"
        return list(xs)
    assert isinstance(xs, Tensor), f"{what} must be Tensor or list of Tensor"
    return [xs]


def _check_seeds(seeds: Any, n: int, what: str, message: str, length_message: str) -> list[Tensor | None]:
    if seeds is None:
        return [None] * n
    if not isinstance(seeds, (list, tuple)):
        seeds = [seeds]
    for s in seeds:
        assert s is None or isinstance(s, Tensor), message
    if len(seeds) == 0:
        return [None] * n
    assert len(seeds) == n, length_message
    return list(seeds)


def _fit_seeds(
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


def _deliver_leaf(leaf: Tensor, grad: np.ndarray) -> None:
    """Accumulate a leaf's gradient of one backward call, after its hooks."""
    hs = hooks.leaf_hooks(leaf)
    if hs:
        grad = hooks.run_hooks(hs, Tensor._new(grad, None, 0, True))._data
    leaf._accumulate_grad(grad)
    for hook in hooks.void_hooks(leaf):
        hook()


def _run(
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
    `.grad`) and `grad` (gradients of `inputs`, returned; None where unreached)."""
    blas_threads.maybe_apply()  # once a second at most: BLAS threads follow the load
    seeds = _fit_seeds(outputs, seeds, seed_name, target_name, create_graph)
    # Tensors that need no gradient contribute nothing (as a constant would).
    live = [
        (t, s) for t, s in zip(outputs, seeds)
        if not t.stop_gradient and t._data.dtype.kind == "f"
    ]
    if not live:
        return None if inputs is None else [None] * len(inputs)
    roots = [_ref(t) for t, _ in live]
    g = collect(roots, cut)
    if dump_dir is not None:
        from pullback.frontend import eager_dump

        eager_dump.write(dump_dir, g, [t for t, _ in live])
    ghosts = _ghost_leaves(g, cut)
    if g.pynodes:
        # Hooked tensors behind a PyLayer are not in `g`: look through the layers.
        special = _special_refs(_nodes_through_pylayers(roots)) if hooks.has_interior() else {}
    else:
        special = _special_refs(g.nodes) if hooks.has_interior() else {}
    if special or g.pynodes:
        return _run_staged(live, inputs, special, retain_graph, create_graph, cut, allow_unused, ghosts)
    targets = [encode(g, r) for r in roots]
    assert all(e is not None for e in targets)
    seeded = [s is not None for _, s in live]
    if inputs is None:
        wrt: list[Enc | None] = [("s", k, 0) for k, s in enumerate(g.sources) if s.kind == "leaf"]
    else:
        wrt = [
            None if (x.stop_gradient or _key(x) in cut) else encode(g, _ref(x)) for x in inputs
        ]
    plan = _plan_for(g, targets, seeded, wrt)  # type: ignore[arg-type]
    if inputs is not None and not allow_unused:
        _check_used([s is not None or id(x) in ghosts for s, x in zip(plan.results, inputs)])
    if create_graph:
        seed_ts = [
            None if s is None else (s if s.dtype == t.dtype else Tensor._new(s._data.astype(t._data.dtype), None, 0, True))
            for t, s in live
        ]
        grads: list[Any] = replay_plan(plan, g, seed_ts)
    else:
        seed_arrays = [None if s is None else s._data.astype(t._data.dtype, copy=False) for t, s in live]
        grads = run_plan(plan, g, seed_arrays)
    if not retain_graph:
        for p in plan.active:
            g.nodes[p].free()
    if inputs is None:
        delivered: set[int] = set()
        for e, grad in zip(wrt, grads):
            if grad is not None:
                leaf = g.sources[e[1]].tensor  # type: ignore[index]
                assert leaf is not None
                _deliver_leaf(leaf, grad)
                delivered.add(id(leaf))
        _deliver_ghost_zeros(ghosts, delivered)
        return None
    return _ghost_zero_results(grads, inputs, ghosts, create_graph)


def _ghost_leaves(g: Graph, cut: frozenset[Any]) -> dict[int, Tensor]:
    """The leaves that took part in `g` through recorded gradients (`Node.ghosts`)
    and may receive a gradient."""
    out: dict[int, Tensor] = {}
    for node in g.nodes:
        for t in node.ghosts:
            if not t.stop_gradient and id(t) not in cut:
                out[id(t)] = t
    return out


def _deliver_ghost_zeros(ghosts: dict[int, Tensor], delivered: set[int]) -> None:
    """Zero gradients for the leaves that took part but received none (Paddle's
    double-grad nodes fill them with zeros)."""
    for k, leaf in ghosts.items():
        if k not in delivered:
            _deliver_leaf(leaf, np.zeros_like(leaf._data))


def _ghost_zero_results(
    grads: list[Any], inputs: list[Tensor], ghosts: dict[int, Tensor], create_graph: bool
) -> list[Any]:
    """`grads` with zeros for the inputs that took part but received none."""
    out = list(grads)
    for i, (gr, x) in enumerate(zip(grads, inputs)):
        if gr is None and id(x) in ghosts:
            zeros = np.zeros_like(x._data)
            out[i] = Tensor._new(zeros, None, 0, False) if create_graph else zeros
    return out


def _check_used(used: Sequence[bool]) -> None:
    for i, u in enumerate(used):
        if not u:
            raise ValueError(
                f"The {i}-th input does not appear in the backward graph. Please check "
                "the input tensor or set allow_unused=True to get None result."
            )


@dataclass
class _Special:
    """A recorded op result with gradient hooks or a retained gradient."""

    node: Node
    index: int
    hooks: list[Any]  # the chain, retain_grads' keeping hook in its place
    retained: bool  # a live tensor keeps this gradient


def _special_refs(nodes: Sequence[Node]) -> dict[tuple[int, int], _Special]:
    """The results of `nodes` that have hooks or retain their gradient."""
    out: dict[tuple[int, int], _Special] = {}
    for node in nodes:
        for i in range(len(node.tpl.dtypes)):
            info = hooks.interior(node, i)
            if info is not None:
                out[(id(node), i)] = _Special(node, i, *info)
    return out


def _nodes_through_pylayers(roots: Sequence[tuple[Any, int]]) -> list[Node]:
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


def _run_staged(
    live: list[tuple[Tensor, Tensor | None]],
    inputs: list[Tensor] | None,
    special: dict[tuple[int, int], _Special],
    retain_graph: bool,
    create_graph: bool,
    cut: frozenset[Any],
    allow_unused: bool,
    ghosts: dict[int, Tensor],
) -> list[Any] | None:
    """Backward through interior tensors with hooks or retained gradients, in stages.

    A hooked tensor's hooks must see its *complete* gradient and their result must
    be what flows on, so each such tensor is a stage boundary: the first stage runs
    from the targets and stops at every boundary (reading it as a source whose
    gradient is wanted); then the boundaries are processed latest-created first (all
    their consumers were created after them, so their gradients are complete): the
    hook chain runs on the gradient and a stage runs from the boundary with what it
    returns as seed.  Backward is linear in the seeds, so the stage
    contributions add up to the gradients of one whole backward.  Each stage is an
    ordinary cached plan.

    A retained tensor whose op took part but received no gradient (an unused output
    of `split`) gets zeros, as in Paddle.  `retain_grads` is a hook in the chain, so
    what it keeps depends on the hooks registered before it, as in Paddle.
    """
    if create_graph:
        def wrap(a: Any) -> Any:
            return a

        def unwrap(t: Tensor) -> Any:
            return t
    else:
        def wrap(a: Any) -> Any:
            return Tensor._new(a, None, 0, True)

        def unwrap(t: Tensor) -> Any:
            return t._data

    def add(a: Any, b: Any) -> Any:
        return b if a is None else a + b

    def ones(t: Tensor) -> Any:
        return unwrap(Tensor._new(np.ones_like(t._data), None, 0, True))

    boundary = frozenset(special)
    acc: dict[tuple[int, int], Any] = {}
    leaf_acc: dict[int, tuple[Tensor, Any]] = {}
    n_in = 0 if inputs is None else len(inputs)
    input_acc: list[Any] = [None] * n_in
    special_inputs: dict[tuple[int, int], list[int]] = {}
    for i, x in enumerate(inputs or ()):
        if not x.stop_gradient and _key(x) not in cut and _key(x) in special:
            special_inputs.setdefault(_key(x), []).append(i)
    traversed: set[int] = set()
    active: dict[int, Node] = {}

    pynodes: dict[int, PyNode] = {}  # PyLayer nodes a gradient reached
    done: set[int] = set()

    def route(ref: tuple[Any, int], val: Any, roots: list[tuple[tuple[Any, int], Any]]) -> None:
        """Send a gradient to where `ref` was produced: a boundary's accumulator
        (hooked tensor, PyLayer output) or the roots of the next stage."""
        obj, idx = ref
        if obj is None:
            return
        if type(obj) is PyNode:
            key = (id(obj), idx)
            acc[key] = add(acc.get(key), val)
            pynodes[id(obj)] = obj
        elif type(obj) is Node:
            key = (id(obj), idx)
            if key in cut:
                return
            if key in special:
                acc[key] = add(acc.get(key), val)
            else:
                roots.append((ref, val))
        elif not obj.stop_gradient and id(obj) not in cut:
            roots.append((ref, val))

    roots0: list[tuple[tuple[Any, int], Any]] = []
    for t, s in live:
        seed = ones(t) if s is None else unwrap(
            s if s.dtype == t.dtype else Tensor._new(s._data.astype(t._data.dtype), None, 0, True)
        )
        route(_ref(t), seed, roots0)

    def stage(root_seeds: list[tuple[tuple[Any, int], Any]], own: tuple[int, int] | None) -> None:
        g = collect([r for r, _ in root_seeds], cut, boundary - {own} if own else boundary)
        pairs = [(encode(g, r), v) for r, v in root_seeds]
        pairs = [(e, v) for e, v in pairs if e is not None]
        if not pairs:
            return
        targets = [e for e, _ in pairs]
        bsrc = [(k, src) for k, src in enumerate(g.sources) if src.kind == "boundary"]
        if inputs is None:
            front: list[Enc | None] = [("s", k, 0) for k, src in enumerate(g.sources) if src.kind == "leaf"]
        else:
            # An input that is itself a boundary gets what flows on from it (its
            # gradient after its hooks), taken when its stage runs.
            front = [
                None if (x.stop_gradient or _key(x) in cut or _key(x) in special) else encode(g, _ref(x))
                for x in inputs
            ]
        wrt = front + [("s", k, 0) for k, _ in bsrc]
        plan = _plan_for(g, targets, [True] * len(targets), wrt)
        seeds = [v for _, v in pairs]
        grads = replay_plan(plan, g, seeds) if create_graph else run_plan(plan, g, seeds)
        for p in plan.active:
            traversed.add(id(g.nodes[p]))
            active[id(g.nodes[p])] = g.nodes[p]
        for i, (e, grad) in enumerate(zip(front, grads)):
            if grad is None or e is None:
                continue
            if inputs is None:
                leaf = g.sources[e[1]].tensor
                assert leaf is not None
                prev = leaf_acc.get(id(leaf))
                leaf_acc[id(leaf)] = (leaf, add(None if prev is None else prev[1], grad))
            else:
                input_acc[i] = add(input_acc[i], grad)
        for (k, _), grad in zip(bsrc, grads[len(front):]):
            if grad is not None:
                key = g.sources[k].key  # type: ignore[attr-defined]
                acc[key] = add(acc.get(key), grad)
        pynodes.update(g.pynodes)

    def run_pylayer(pn: PyNode) -> None:
        """Call a PyLayer's backward on its outputs' complete gradients and carry
        what it returns on to its inputs."""
        if pn.freed:
            raise RuntimeError(_TWICE)
        grads: list[Any] = []
        for i in range(len(pn.outputs)):
            val = acc.pop((id(pn), i), None)
            info = hooks.interior(pn, i)  # type: ignore[arg-type]
            if val is not None and info is not None:
                val = unwrap(hooks.run_hooks(info[0], wrap(val)))
            grads.append(val)
        if all(v is None for v in grads):
            return
        outs = pn.run_backward([None if v is None else wrap(v) for v in grads], create_graph)
        roots: list[tuple[tuple[Any, int], Any]] = []
        for ref, grad in zip(pn.parents, outs):
            if grad is not None:
                route(ref, unwrap(grad), roots)
        if not retain_graph:
            pn.free()
        if roots:
            stage(roots, None)

    if roots0:
        stage(roots0, None)
    pending = sorted(special.values(), key=lambda sp: (sp.node.seq, sp.index))
    while True:
        # Latest-created first, hooked tensors and PyLayers alike: every consumer of
        # a boundary was created after it, so its gradient is complete by then.
        waiting = [pn for pn in pynodes.values() if id(pn) not in done]
        pn = max(waiting, key=lambda n: n.seq) if waiting else None
        if pn is not None and (not pending or pn.seq > pending[-1].node.seq):
            done.add(id(pn))
            run_pylayer(pn)
            continue
        if not pending:
            break
        info = pending.pop()
        key = (id(info.node), info.index)
        val = acc.pop(key, None)
        if val is None:
            if info.retained and id(info.node) in traversed:
                # Paddle fills the missing gradient of a traversed op's output with
                # zeros; it flows nowhere, so only the chain (the keeping) runs.
                out = info.node.saved_out
                zeros = np.zeros_like(out[info.index]) if out is not None else None
                if zeros is not None:
                    hooks.run_hooks(info.hooks, Tensor._new(zeros, None, 0, True))
            continue
        val = unwrap(hooks.run_hooks(info.hooks, wrap(val)))
        for i in special_inputs.get(key, ()):
            input_acc[i] = val
        stage([((info.node, info.index), val)], key)

    if not retain_graph:
        for node in active.values():
            node.free()
    if inputs is None:
        for leaf, grad in leaf_acc.values():
            _deliver_leaf(leaf, grad)
        _deliver_ghost_zeros(ghosts, set(leaf_acc))
        return None
    if not allow_unused:
        _check_used([a is not None or id(x) in ghosts for a, x in zip(input_acc, inputs)])
    return _ghost_zero_results(input_acc, inputs, ghosts, create_graph)


def _key(x: Tensor) -> Any:
    return (id(x._node), x._index) if x._node is not None else id(x)


def backward(
    tensors: Tensor | Sequence[Tensor],
    grad_tensors: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool = False,
    *,
    dump_backward_graph_path: str | os.PathLike[str] | None = None,
) -> None:
    """`paddle.autograd.backward`: accumulate the gradients of `tensors` into the
    `.grad` of every leaf they depend on.

    `grad_tensors` seed the tensors (None, or None entries: ones); `retain_graph=False`
    frees the saved forward values once used; `dump_backward_graph_path` names a
    directory receiving the backward and forward graphs as DOT and the call stacks
    of the recorded ops.
    """
    tensors = _check_tensors(tensors, "tensors")
    assert len({id(t) for t in tensors}) == len(tensors), (
        "The argument 'tensors' of paddle.autograd.backward contains duplicate paddle.Tensor object."
    )
    seeds = _check_seeds(
        grad_tensors,
        len(tensors),
        "grad_tensors",
        "The argument 'grad_tensors' of paddle.autograd.backward is invalid, it can be "
        "'None', 'paddle.Tensor' or 'list[None/paddle.Tensor]'.",
        "The length of grad_tensors must be equal to tensors",
    )
    assert isinstance(retain_graph, bool), "retain_graph must be True or False"
    dump_dir = None
    if dump_backward_graph_path is not None:
        from pullback.frontend import eager_dump

        dump_dir = eager_dump.prepare_dir(dump_backward_graph_path)
    _run(tensors, seeds, None, retain_graph, False, dump_dir=dump_dir)
    for hook in list(_POST_BACKWARD_HOOKS):
        hook()
    final, _FINAL_HOOKS[:] = list(_FINAL_HOOKS), []
    for hook in final:
        hook()


_POST_BACKWARD_HOOKS: list[Callable[[], None]] = []
_FINAL_HOOKS: list[Callable[[], None]] = []


def add_backward_final_hook(hook: Callable[[], None]) -> None:
    """Paddle's `core.eager._add_backward_final_hook`: call `hook()` once, at the
    end of the next `backward` (Paddle clears these hooks after running them)."""
    if not callable(hook):
        raise TypeError(f"_add_backward_final_hook: the hook must be callable, got {type(hook).__name__}")
    _FINAL_HOOKS.append(hook)


def register_post_backward_hook(hook: Callable[[], None]) -> Callable[[], None]:
    """Call `hook()` after every `backward` has accumulated its gradients (how
    `paddle.DataParallel` all-reduces them); returns a function removing the hook."""
    _POST_BACKWARD_HOOKS.append(hook)

    def remove() -> None:
        if hook in _POST_BACKWARD_HOOKS:
            _POST_BACKWARD_HOOKS.remove(hook)

    return remove


def tensor_backward(
    self: Tensor,
    grad_tensor: Tensor | None = None,
    retain_graph: bool = False,
    *,
    dump_backward_graph_path: str | os.PathLike[str] | None = None,
) -> None:
    """`Tensor.backward`: accumulate the gradients of this tensor into the leaves'
    `.grad` (`paddle.autograd.backward([self], [grad_tensor], retain_graph)`;
    `grad_tensor` defaults to ones, and a `[1]` one is accepted for a 0-d tensor).
    Attached to Tensor by `frontend/install.py` (eager cannot import this module)."""
    if grad_tensor is not None and not isinstance(grad_tensor, Tensor):
        raise TypeError(
            f"Tensor.backward: grad_tensor must be a Tensor or None, got {type(grad_tensor).__name__}"
        )
    backward([self], None if grad_tensor is None else [grad_tensor], retain_graph,
             dump_backward_graph_path=dump_backward_graph_path)


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Tensor | Sequence[Tensor | None] | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool = False,
    no_grad_vars: Tensor | Sequence[Tensor] | None = None,
) -> list[Tensor | None]:
    """`paddle.grad`: the gradients of `outputs` with respect to `inputs`, returned
    as a list (leaves' `.grad` is left alone).

    `grad_outputs` seed the outputs (None entries: ones).  `create_graph=True` records
    the gradient computation so its results can be differentiated again;
    `retain_graph` defaults to `create_graph`.  An input the outputs do not depend on
    raises ValueError unless `allow_unused=True` (then its gradient is None).
    `no_grad_vars` are treated as constants.
    """
    outs = _check_tensors(outputs, "outputs")
    ins = _check_tensors(inputs, "inputs")
    seeds = _check_seeds(
        grad_outputs,
        len(outs),
        "grad_outputs",
        "grad_outputs must be None, a Variable or a list containing None or Variables",
        "The length of grad_outputs must be equal to outputs",
    )
    if no_grad_vars is None:
        cut_list: list[Tensor] = []
    elif isinstance(no_grad_vars, Tensor):
        cut_list = [no_grad_vars]
    elif isinstance(no_grad_vars, (list, tuple, set)):
        cut_list = list(no_grad_vars)
        for v in cut_list:
            assert isinstance(v, Tensor), "no_grad_vars can only contains Tensor"
    else:
        raise AssertionError("no_grad_vars must be None, Tensor or list/tuple/set of Tensors")
    if retain_graph is None:
        retain_graph = create_graph
    assert isinstance(create_graph, bool), "create_graph must be True or False"
    assert isinstance(retain_graph, bool), "retain_graph must be None, True or False"
    assert isinstance(allow_unused, bool), "allow_unused must be True or False"
    assert isinstance(only_inputs, bool), "only_inputs must be True or False"
    assert only_inputs, "only_inputs=False is not supported yet"
    cut = frozenset(_key(v) for v in cut_list)
    result = _run(
        outs, seeds, ins, retain_graph, create_graph, cut, allow_unused,
        seed_name="grad_outputs", target_name="outputs",
    )
    assert result is not None
    out: list[Tensor | None] = []
    for r in result:
        if r is None:
            out.append(None)
        elif isinstance(r, Tensor):
            # With create_graph the results take part in further differentiation:
            # Paddle gives them stop_gradient=False even when they are constants.
            out.append(r if r._node is not None else Tensor._new(r._data, None, 0, False))
        else:
            out.append(Tensor._new(r, None, 0, True))
    return out


# ------------------------------------------------------------- grad mode

_F = TypeVar("_F", bound=Callable[..., Any])


class _GradModeGuard:
    """A context manager and decorator that sets eager recording on or off."""

    _mode: bool = False

    def __enter__(self) -> None:
        self._prev = _set_grad_enabled(self._mode)

    def __exit__(self, *exc: object) -> None:
        _set_grad_enabled(self._prev)

    def __call__(self, func: _F) -> _F:
        mode = self._mode
        if inspect.isgeneratorfunction(func):

            @functools.wraps(func)
            def gen_wrapper(*args: Any, **kwargs: Any) -> Iterator[Any]:
                gen = func(*args, **kwargs)
                # Each resumption runs under the mode, the caller's code between
                # them does not.
                value = None
                while True:
                    prev = _set_grad_enabled(mode)
                    try:
                        item = gen.send(value)
                    except StopIteration as stop:
                        return stop.value
                    finally:
                        _set_grad_enabled(prev)
                    value = yield item

            return _same_signature(gen_wrapper, func)  # type: ignore[return-value]

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            prev = _set_grad_enabled(mode)
            try:
                return func(*args, **kwargs)
            finally:
                _set_grad_enabled(prev)

        return _same_signature(wrapper, func)  # type: ignore[return-value]


def _same_signature(wrapper: Callable[..., Any], func: Callable[..., Any]) -> Callable[..., Any]:
    """`wrapper` reporting `func`'s signature to `inspect` (getfullargspec included,
    which does not follow `__wrapped__`), as Paddle's decorators do."""
    try:
        wrapper.__signature__ = inspect.signature(func)  # type: ignore[attr-defined]
    except (TypeError, ValueError):  # builtins without a signature
        pass
    return wrapper


class no_grad(_GradModeGuard):
    """`paddle.no_grad()`: inside it (a `with` block or a decorated function) eager
    ops are not recorded and their results need no gradient.  `@paddle.no_grad` and
    `@paddle.no_grad()` both work."""

    _mode = False

    def __new__(cls, func: Callable[..., Any] | None = None) -> Any:
        self = super().__new__(cls)
        if func is not None and callable(func):
            return self(func)
        return self

    def __init__(self, func: Callable[..., Any] | None = None) -> None:
        pass


class enable_grad(no_grad):
    """`paddle.enable_grad()`: record eager ops again inside a `no_grad` region."""

    _mode = True


class set_grad_enabled(_GradModeGuard):
    """`paddle.set_grad_enabled(mode)`: switch recording now; as a context manager,
    restore the previous setting on exit."""

    def __init__(self, mode: bool) -> None:
        self._mode = bool(mode)
        self._prev = _set_grad_enabled(self._mode)

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        _set_grad_enabled(self._prev)


__path__: list[str] = []  # `paddle.autograd.backward_mode` comes from the alias finder

__getattr__, __dir__ = registry.lazy_attributes(
    __name__,
    {
        "backward_mode": "pullback.frontend.api.backward_mode",
        "jacobian": "pullback.frontend.jacobian:jacobian",
        "hessian": "pullback.frontend.jacobian:hessian",
        "Jacobian": "pullback.frontend.jacobian:Jacobian",
        "Hessian": "pullback.frontend.jacobian:Hessian",
    },
)

__all__ = [
    "EagerPyLayer",
    "EagerPyLayerContext",
    "Hessian",  # noqa: F822 - loaded on first use (module __getattr__)
    "Jacobian",  # noqa: F822 - loaded on first use (module __getattr__)
    "PyLayer",
    "PyLayerContext",
    "add_backward_final_hook",
    "backward",
    "backward_mode",  # noqa: F822 - loaded on first use (module __getattr__)
    "cache_info",
    "clear_cache",
    "enable_grad",
    "grad",
    "hessian",  # noqa: F822 - loaded on first use (module __getattr__)
    "is_grad_enabled",
    "jacobian",  # noqa: F822 - loaded on first use (module __getattr__)
    "no_grad",
    "recorded_program",
    "set_grad_enabled",
]
