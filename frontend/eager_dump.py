"""`dump_backward_graph_path`: the graphs of one eager backward call, for debugging.

Each call writes three files into the directory:

* `<timestamp>_backward_graph.dot` — one node per gradient operator (`matmul_0_grad`)
  and per leaf that receives a gradient (`x@GRAD`); edges go the way gradients flow
  (from a consumer's gradient op to its producer's), labelled with the gradient's
  dtype and shape;
* `<timestamp>_ref_forward_graph.dot` — the same nodes as forward ops and leaves
  (`matmul_0`, `x`), edges the way values flow;
* `<timestamp>_call_stack.log` — for each node, the user's file, line and source text
  that created the forward op (or the leaf).
"""

from __future__ import annotations

import datetime
import linecache
import os
from typing import TYPE_CHECKING, Any

from pullback.dialects import pd

if TYPE_CHECKING:
    from pullback.frontend.autograd.graph import Graph
    from pullback.frontend.eager import Tensor, Where


def prepare_dir(path: str | os.PathLike[str]) -> str:
    """Create the dump directory (parents too); NotADirectoryError when the path
    exists and is not a directory."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(
            f"dump_backward_graph_path must be a str path, got {type(path).__name__}"
        )
    path = os.fspath(path)
    if os.path.exists(path) and not os.path.isdir(path):
        raise NotADirectoryError(
            f"dump_backward_graph_path '{path}' exists and is not a directory"
        )
    os.makedirs(path, exist_ok=True)
    return path


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _label(dtype: Any, shape: Any) -> str:
    return f"{dtype}{list(shape)}"


def _where_text(where: Where | None) -> str:
    if where is None:
        return "  (created inside pullback; no user frame)"
    file, line, func = where
    src = linecache.getline(file, line).strip()
    text = f'  File "{file}", line {line}, in {func}'
    return text + (f"\n    {src}" if src else "")


def write(directory: str, g: Graph, targets: list[Tensor]) -> dict[str, str]:
    """Write the three files for graph `g`; returns their paths by kind."""
    stamp = datetime.datetime.now().strftime("%Y%m%d_%H%M%S_%f")
    paths = {
        kind: os.path.join(directory, f"{stamp}_{kind}")
        for kind in ("backward_graph.dot", "ref_forward_graph.dot", "call_stack.log")
    }
    # Forward names: `<op type>_<k>` numbered per type in graph order; leaves by name.
    counters: dict[str, int] = {}
    fwd_names: list[str] = []
    for node in g.nodes:
        n = counters.get(node.tpl.type, 0)
        counters[node.tpl.type] = n + 1
        fwd_names.append(f"{node.tpl.type}_{n}")
    leaf_names = {
        k: s.tensor.name for k, s in enumerate(g.sources) if s.kind == "leaf" and s.tensor is not None
    }

    def fwd(kind: str, a: int) -> str:
        return fwd_names[a] if kind == "n" else leaf_names[a]

    def bwd(kind: str, a: int) -> str:
        return f"{fwd_names[a]}_grad" if kind == "n" else f"{leaf_names[a]}@GRAD"

    edges: list[tuple[tuple[str, int], tuple[str, int], str]] = []  # producer, consumer, label
    for c, ins in enumerate(g.inputs):
        for kind, a, b in ins:
            if kind == "s" and a not in leaf_names:
                continue  # constants receive no gradient
            if kind == "n":
                ty = g.nodes[a].tpl.op.results[b].type
                label = _label(pd.dtype_name(ty.get_element_type()), ty.get_shape())  # type: ignore[attr-defined]
            else:
                s = g.sources[a]
                label = _label(s.array.dtype, s.array.shape)
            edges.append(((kind, a), ("n", c), label))
    nodes = [("n", p) for p in range(len(g.nodes))] + [("s", k) for k in leaf_names]
    target_ids = {id(t) for t in targets}

    def graph(name: str, node_name: Any, forward: bool) -> str:
        lines = [f"digraph {name} {{", "  rankdir=TB;", "  node [shape=box];"]
        for kind, a in nodes:
            shape = "" if kind == "n" else ", shape=ellipse"
            lines.append(f"  {_quote(node_name(kind, a))} [label={_quote(node_name(kind, a))}{shape}];")
        for (pk, pa), (ck, ca), label in edges:
            src, dst = (node_name(pk, pa), node_name(ck, ca))
            if not forward:
                src, dst = dst, src
            lines.append(f"  {_quote(src)} -> {_quote(dst)} [label={_quote(label)}];")
        lines.append("}")
        return "\n".join(lines) + "\n"

    with open(paths["backward_graph.dot"], "w") as f:
        f.write(graph("backward_graph", bwd, forward=False))
    with open(paths["ref_forward_graph.dot"], "w") as f:
        f.write(graph("ref_forward_graph", fwd, forward=True))
    with open(paths["call_stack.log"], "w") as f:
        for p, node in enumerate(g.nodes):
            f.write(f"{fwd_names[p]} (gradient node {fwd_names[p]}_grad):\n{_where_text(node.where)}\n")
        for k, name in leaf_names.items():
            t = g.sources[k].tensor
            kind = "target leaf" if id(t) in target_ids else "leaf"
            f.write(f"{name} ({kind}, gradient node {name}@GRAD):\n{_where_text(t._where if t is not None else None)}\n")
    return paths


__all__ = ["prepare_dir", "write"]
