"""dump_backward_graph_path: the directory handling, the two DOT graphs (parsed with a
small DOT parser) and the call-stack log naming the user's lines."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pullback.dialects import pd
from pullback.frontend import autograd, core
from pullback.frontend.eager import to_tensor
from pullback.frontend.ops import elementwise as ew
from pullback.frontend.ops import reduction as red

_STMT = re.compile(
    r'^\s*(?P<src>"(?:[^"\\]|\\.)*")\s*(?:->\s*(?P<dst>"(?:[^"\\]|\\.)*"))?\s*'
    r"(?:\[(?P<attrs>.*)\])?\s*;\s*$"
)
_ATTR = re.compile(r'(\w+)\s*=\s*("(?:[^"\\]|\\.)*"|[\w.]+)')


def _unquote(s: str) -> str:
    return s[1:-1].replace('\\"', '"').replace("\\\\", "\\") if s.startswith('"') else s


def parse_dot(text: str) -> tuple[str, dict[str, dict[str, str]], list[tuple[str, str, dict[str, str]]]]:
    """A small parser for the DOT subset the dump writes: `digraph NAME { ... }` with
    `graph/node` defaults, node statements and edge statements with attribute lists.
    Raises AssertionError on anything else, so malformed output fails the test."""
    lines = [l.strip() for l in text.strip().splitlines()]
    head = re.fullmatch(r"digraph\s+(\w+)\s*\{", lines[0])
    assert head and lines[-1] == "}", "not a digraph"
    nodes: dict[str, dict[str, str]] = {}
    edges: list[tuple[str, str, dict[str, str]]] = []
    for line in lines[1:-1]:
        if re.fullmatch(r"(rankdir\s*=\s*\w+|node\s*\[.*\])\s*;", line):
            continue
        m = _STMT.match(line)
        assert m, f"unparsable DOT statement: {line!r}"
        attrs = {k: _unquote(v) for k, v in _ATTR.findall(m["attrs"] or "")}
        if m["dst"]:
            edges.append((_unquote(m["src"]), _unquote(m["dst"]), attrs))
        else:
            nodes[_unquote(m["src"])] = attrs
    for s, d, _ in edges:
        assert s in nodes and d in nodes, f"edge {s} -> {d} names an undeclared node"
    return head[1], nodes, edges


@pytest.fixture(autouse=True)
def dynamic_mode():
    core.disable_static()
    yield


def _files(d: Path) -> dict[str, Path]:
    out = {}
    for p in d.iterdir():
        m = re.fullmatch(r"(\d{8}_\d{6}_\d{6})_(backward_graph\.dot|ref_forward_graph\.dot|call_stack\.log)", p.name)
        assert m, f"unexpected file {p.name}"
        out[m[2]] = p
    return out


def test_dump_writes_both_graphs_and_the_call_stacks(tmp_path):
    target = tmp_path / "a" / "b" / "c"  # nested directories are created
    x = to_tensor([[1.0, 2.0], [3.0, 4.0]], stop_gradient=False)
    x.name = "x"
    y = to_tensor([[3.0, 2.0], [3.0, 4.0]])
    z = core.apply(pd.MatmulOp, [x, y], prefix="matmul")  # LINE_MATMUL
    loss = red.mean(ew.relu(z))  # LINE_LOSS
    autograd.backward([loss], dump_backward_graph_path=str(target))
    files = _files(target)
    assert set(files) == {"backward_graph.dot", "ref_forward_graph.dot", "call_stack.log"}

    name, nodes, edges = parse_dot(files["backward_graph.dot"].read_text())
    assert name == "backward_graph"
    assert set(nodes) == {"matmul_0_grad", "relu_0_grad", "mean_0_grad", "x@GRAD"}
    # gradients flow from the loss back to the leaf, labelled dtype[shape]
    assert ("mean_0_grad", "relu_0_grad", {"label": "float32[2, 2]"}) in edges
    assert ("relu_0_grad", "matmul_0_grad", {"label": "float32[2, 2]"}) in edges
    assert ("matmul_0_grad", "x@GRAD", {"label": "float32[2, 2]"}) in edges
    assert len(edges) == 3  # the constant y receives nothing

    name, fnodes, fedges = parse_dot(files["ref_forward_graph.dot"].read_text())
    assert name == "ref_forward_graph"
    assert set(fnodes) == {"matmul_0", "relu_0", "mean_0", "x"}
    assert {(s, d) for s, d, _ in fedges} == {
        ("x", "matmul_0"), ("matmul_0", "relu_0"), ("relu_0", "mean_0")
    }

    log = files["call_stack.log"].read_text()
    src = Path(__file__).read_text().splitlines()
    line_of = {tag: i + 1 for i, l in enumerate(src) for tag in ("LINE_MATMUL", "LINE_LOSS") if l.endswith(tag)}
    assert f'File "{__file__}", line {line_of["LINE_MATMUL"]}' in log
    assert f'File "{__file__}", line {line_of["LINE_LOSS"]}' in log
    assert "z = core.apply(pd.MatmulOp" in log
    for n in ("matmul_0", "relu_0", "mean_0", "x (leaf"):
        assert n in log


def test_two_calls_write_two_sets(tmp_path):
    x = to_tensor([1.0], stop_gradient=False)
    y = x * x
    autograd.backward([y], retain_graph=True, dump_backward_graph_path=tmp_path)
    autograd.backward([y], dump_backward_graph_path=tmp_path)
    assert len(list(tmp_path.iterdir())) == 6


def test_dump_path_that_is_a_file_raises(tmp_path):
    f = tmp_path / "file.txt"
    f.write_text("x")
    x = to_tensor([1.0], stop_gradient=False)
    with pytest.raises(NotADirectoryError, match="file.txt"):
        autograd.backward([x * x], dump_backward_graph_path=str(f))
    assert x.grad is None  # checked before anything ran


@pytest.mark.skipif(__import__("shutil").which("dot") is None, reason="Graphviz `dot` is not installed")
def test_graphviz_renders_the_dump(tmp_path):
    import subprocess

    x = to_tensor([1.0, 2.0], stop_gradient=False)
    autograd.backward([red.sum(x * x)], dump_backward_graph_path=tmp_path)
    for f in tmp_path.glob("*.dot"):
        subprocess.run(["dot", "-Tsvg", str(f), "-o", str(f) + ".svg"], check=True)
        assert (tmp_path / (f.name + ".svg")).stat().st_size > 0
