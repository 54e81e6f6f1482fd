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

ROOT = Path(__file__).resolve().parents[2]
SKIP = {"tests", ".venv", "build", "dist", ".git"}


def _sources() -> list[Path]:
    return [
        p for p in ROOT.rglob("*.py")
        if not SKIP & set(p.relative_to(ROOT).parts[:-1]) and "egg-info" not in str(p)
    ]


def environment_variables(tree: ast.AST) -> set[str]:
    """Names read with `os.environ.get(...)`, `os.environ[...]`, `os.getenv(...)`,
    or held by a module constant `*_ENV = "NAME"` (read through the constant)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        arg: ast.AST | None = None
        if isinstance(node, ast.Call):
            f = node.func
            text = ast.unparse(f)
            if text in ("os.environ.get", "os.getenv", "environ.get", "getenv") and node.args:
                arg = node.args[0]
        elif isinstance(node, ast.Subscript) and ast.unparse(node.value) in ("os.environ", "environ"):
            if isinstance(node.ctx, ast.Load):
                arg = node.slice
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            t = node.targets[0]
            if isinstance(t, ast.Name) and t.id.endswith("_ENV"):
                arg = node.value
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            names.add(arg.value)
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
    code = 'import os\nA_ENV = "X1"\nos.environ.get("X2")\nos.environ["X3"]\nos.getenv("X4")\nos.environ["X5"] = "1"'
    assert environment_variables(ast.parse(code)) == {"X1", "X2", "X3", "X4"}
