"""The package's import structure: no import cycles, and every module imports alone.

A cycle (top-level or function-local imports alike) means some module can only be
imported after another one, or fails in a fresh interpreter with a half-initialized
module: `python -c "import pullback.X"` must work for every X.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
"""The package directory (the repository root is the `pullback` package)."""

SKIP_DIRS = {"tests", "build", "dist", ".git", ".venv", "__pycache__"}

PENDING_CYCLES: set[str] = set()
"""Modules known to be in a cycle while a fix is under way (none now: keep it empty)."""


def package_modules() -> dict[str, Path]:
    """Every module of the package: dotted name -> file."""
    mods: dict[str, Path] = {}
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = sorted(
            d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".egg-info")
            and (Path(dirpath, d, "__init__.py").exists())
        )
        rel = Path(dirpath).relative_to(ROOT).parts
        for f in sorted(filenames):
            if f.endswith(".py"):
                parts = ["pullback", *rel] + ([] if f == "__init__.py" else [f[:-3]])
                mods[".".join(parts)] = Path(dirpath, f)
    return mods


def _imported(mod: str, path: Path, node: ast.Import | ast.ImportFrom, mods: dict[str, Path]) -> list[str]:
    """The package modules an import statement loads."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in mods]
    if node.level:
        base = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
        for _ in range(node.level - 1):
            base = base.rsplit(".", 1)[0]
        target = base + ("." + node.module if node.module else "")
    else:
        target = node.module or ""
    out = []
    for a in node.names:
        if f"{target}.{a.name}" in mods:
            out.append(f"{target}.{a.name}")
        elif target in mods:
            out.append(target)
    return out


def import_graph(mods: dict[str, Path]) -> dict[str, set[str]]:
    """module -> package modules it imports anywhere (function bodies included,
    `if TYPE_CHECKING:` blocks excluded), plus the packages whose `__init__` such an
    import runs (a module's own ancestors aside: they are already running)."""
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, path in mods.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
                node.body = []
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in _imported(mod, path, node, mods):
                parts = target.split(".")
                for k in range(1, len(parts) + 1):
                    t = ".".join(parts[:k])
                    if t in mods and t != mod and not mod.startswith(t + "."):
                        graph[mod].add(t)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 10 * len(graph) + 100))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(old)
    return out


def test_cycle_finder_finds_a_cycle() -> None:
    """The checker itself: a two-module cycle through a function-local import."""
    graph = {"a": {"b"}, "b": {"a"}, "c": {"a"}}
    assert cycles(graph) == [["a", "b"]]


def test_no_import_cycles() -> None:
    mods = package_modules()
    stale = PENDING_CYCLES - set(mods)
    assert not stale, f"remove {sorted(stale)} from PENDING_CYCLES: they no longer exist"
    found = [c for c in cycles(import_graph(mods)) if not set(c) <= PENDING_CYCLES]
    assert not found, "import cycles:\n" + "\n".join(" -> ".join(c) for c in found)


# Fresh interpreters are what we test, but starting ~100 of them would cost a minute:
# one child preloads the third-party libraries (no pullback module), then forks once
# per module, so each module is imported into an interpreter holding no other module
# of the package.
_FORK_SERVER = r"""
import importlib, os, sys, traceback
import numpy, llvmlite.binding, xdsl.ir, xdsl.dialects.builtin, xdsl.dialects.arith
import xdsl.dialects.func, xdsl.dialects.linalg, xdsl.dialects.llvm, xdsl.dialects.memref
import xdsl.dialects.scf, xdsl.xdsl_opt_main, xdsl.transforms
assert not [m for m in sys.modules if m == "pullback" or m.startswith("pullback.")]
failed = []
for name in sys.argv[1:]:
    pid = os.fork()
    if pid == 0:
        try:
            importlib.import_module(name)
        except BaseException:
            traceback.print_exc()
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    if status != 0:
        failed.append(name)
print("FAILED:" + ",".join(failed))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork to import each module in a fresh process")
def test_every_module_imports_alone() -> None:
    mods = [m for m in package_modules() if m not in PENDING_CYCLES]
    proc = subprocess.run(
        [sys.executable, "-c", _FORK_SERVER, *mods],
        capture_output=True, text=True, timeout=600, cwd=ROOT.parent,
    )
    assert proc.returncode == 0, proc.stderr[-5000:]
    failed = proc.stdout.strip().rsplit("FAILED:", 1)[-1]
    assert not failed, f"modules that fail to import alone: {failed}\n{proc.stderr[-5000:]}"


def test_import_pullback_does_not_load_the_frontend() -> None:
    """`import pullback` (pullback-opt, xDSL's plugin discovery) stays cheap."""
    code = "import sys, pullback; print(sorted(m for m in sys.modules if m.startswith('pullback.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pullback.frontend" not in out.stdout, out.stdout


def test_real_subpackages_load_on_first_attribute_access() -> None:
    """`import paddle; paddle.distributed.X` works without importing the subpackage
    first, as in Paddle; unknown names are still AttributeErrors."""
    code = (
        "import pullback\n"
        "print(pullback.distributed.__name__, pullback.dialects.__name__)\n"
        "print(hasattr(pullback, 'no_such_name'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["pullback.distributed", "pullback.dialects", "False"], out.stdout


def test_the_runtime_does_not_import_the_frontend() -> None:
    """The runtime is a layer below the frontend: no module of `pullback.runtime`
    imports `pullback.frontend`, function-local imports included (the frontend
    registers its program classes with the executor instead,
    `executor.register_frontend`)."""
    graph = import_graph(package_modules())
    upward = {
        mod: sorted(t for t in targets if t == "pullback.frontend" or t.startswith("pullback.frontend."))
        for mod, targets in graph.items()
        if mod.startswith("pullback.runtime.") or mod == "pullback.runtime"
    }
    upward = {mod: targets for mod, targets in upward.items() if targets}
    assert not upward, f"runtime modules importing the frontend: {upward}"
