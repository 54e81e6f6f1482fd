"""User documentation that must follow the code: every environment variable the
package reads is documented in the README; the license matches pyproject.toml;
`.gitignore` does not ignore tracked files."""

from __future__ import annotations

import ast
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SKIP = {"tests", ".venv", "build", "dist", ".git"}


def _sources() -> list[Path]:
    return [
        p for p in ROOT.rglob("*.py")
        if not SKIP & set(p.relative_to(ROOT).parts[:-1]) and "egg-info" not in str(p)
    ]


_READS = ("os.environ.get", "os.getenv", "environ.get", "getenv")


def _strings(node: ast.AST | None) -> list[str]:
    """The string constants of `node`: a string, or a tuple/list of them."""
    items = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
    return [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]


def environment_variables(tree: ast.AST) -> set[str]:
    """Names read with `os.environ.get(...)`, `os.environ[...]`, `os.getenv(...)`,
    held by a module constant `*_ENV = "NAME"` or `*_VARS = ("A", "B")` (read
    through the constant), or looped over (`for v in ("A", "B"): os.environ.get(v)`)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and ast.unparse(node.func) in _READS and node.args:
            names.update(_strings(node.args[0]))
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value) in ("os.environ", "environ"):
            if isinstance(node.ctx, ast.Load):
                names.update(_strings(node.slice))
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            t = node.targets[0]
            if isinstance(t, ast.Name) and t.id.endswith(("_ENV", "_VARS")):
                names.update(_strings(node.value))
        elif isinstance(node, ast.For) and isinstance(node.target, ast.Name):
            reads = any(
                isinstance(c, ast.Call) and ast.unparse(c.func) in _READS and c.args
                and isinstance(c.args[0], ast.Name) and c.args[0].id == node.target.id
                for c in ast.walk(node)
            )
            if reads:
                names.update(_strings(node.iter))
    return names


def test_environment_variables_are_documented() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Environment variables", 1)[-1].split("\n## ", 1)[0]
    found: dict[str, str] = {}
    for path in _sources():
        if path.parts[len(ROOT.parts)] == "benchmarks":
            continue  # benchmarks pin thread counts for torch; they read nothing
        for name in environment_variables(ast.parse(path.read_text(encoding="utf-8"))):
            found.setdefault(name, str(path.relative_to(ROOT)))
    assert "PULLBACK_BACKEND" in found  # the scan itself works
    missing = {n: p for n, p in found.items() if f"`{n}`" not in section}
    assert not missing, f"environment variables read but not in README's table: {missing}"


def test_license_matches_pyproject() -> None:
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert meta["license"] == {"text": "Apache-2.0"}
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                    reason="needs git and a git checkout")
def test_gitignore_ignores_no_tracked_file() -> None:
    out = subprocess.run(
        ["git", "ls-files", "-ci", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True
    )
    if out.returncode != 0:
        pytest.skip(f"git ls-files failed: {out.stderr.strip()}")
    assert out.stdout.strip() == "", f"tracked files matched by .gitignore:\n{out.stdout}"


def test_environment_variable_scan_recognizes_each_form() -> None:
    code = (
        'import os\nA_ENV = "X1"\nos.environ.get("X2")\nos.environ["X3"]\nos.getenv("X4")\n'
        'os.environ["X5"] = "1"\nB_VARS = ("X6", "X7")\nfor v in ("X8", "X9"):\n    os.environ.get(v)\n'
        'for w in ("X10",):\n    print(w)\n'
    )
    assert environment_variables(ast.parse(code)) == {"X1", "X2", "X3", "X4", "X6", "X7", "X8", "X9"}
