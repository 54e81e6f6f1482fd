"""Graph collection: which recorded nodes one backward call goes through.

`collect` walks the nodes `frontend/eager.py` recorded, from the targets back, and
returns them as a `Graph` in a deterministic topological order (creation order)
together with the *sources* they read: leaves that need a gradient, constants, and
boundaries (values read as inputs whose gradient is wanted without going through
their node: PyLayer outputs and the hooked tensors of a staged backward).  Every
input of every node is encoded as an `Enc`, a position in this graph, so that two
graphs of the same shape encode identically — what the plan cache keys on.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from pullback.frontend.eager import Node, Tensor
from pullback.frontend.pylayer import PyNode

Enc = tuple[str, int, int]
"""An input's origin in a collected graph: `('n', node position, result index)` or
`('s', source position, 0)`."""

Ref = tuple[Any, int]
"""Where a tensor that needs a gradient comes from: `(node, result index)` for a
recorded op's (or PyLayer's) result, `(leaf, -1)` for a leaf."""

FREED_TWICE = (
    "The backward is computed twice for the same subgraph: its saved forward values "
    "were freed by the first backward call (retain_graph=False). Set retain_graph=True "
    "in the first call to backward through it again."
)
"""The error of a backward through nodes whose saved values are gone (Paddle's words)."""


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


def ref_of(t: Tensor) -> Ref:
    """Where a tensor that needs a gradient comes from: (node, result) or (leaf, -1)."""
    return (t._node, t._index) if t._node is not None else (t, -1)


def cut_key(x: Tensor) -> Any:
    """How `cut` sets and boundary tables name a tensor: `(id(node), index)` for a
    recorded result, `id(leaf)` for a leaf."""
    return (id(x._node), x._index) if x._node is not None else id(x)


_by_seq = operator.attrgetter("seq")


def collect(
    roots: Sequence[Ref],
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
            raise RuntimeError(FREED_TWICE)
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
    key: Any
    for node in nodes:
        enc: list[Enc] = []
        for (p, k), arr in zip(node.parents, node.saved_in):  # type: ignore[arg-type]
            if type(p) is Node and (not cut or (id(p), k) not in cut):
                enc.append(("n", pos[id(p)], k))
                continue
            if type(p) is PyNode:
                # A PyLayer's output: its gradient is collected here and carried on
                # by the layer's own backward (the staged engine, `staged.py`).
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
            sources.append(Source("leaf", root, root._arr))
    return Graph(nodes, pos, inputs, sources, src_index, pynodes)


def encode(g: Graph, ref: Ref) -> Enc | None:
    """A tensor reference's place in the graph (None when the graph does not have it)."""
    obj, idx = ref
    if type(obj) is Node:
        p = g.pos.get(id(obj))
        if p is not None:
            return ("n", p, idx)
        k = g.src_index.get(("b", id(obj), idx))
        return None if k is None else ("s", k, 0)
    k = g.src_index.get(id(obj))
    return None if k is None or g.sources[k].kind != "leaf" else ("s", k, 0)
