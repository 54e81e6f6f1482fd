"""What `pip install .` (not editable, as CI does) installs: every package of the
checkout is listed in pyproject.toml's `[tool.setuptools] packages`, and nothing
listed is missing.  An editable install hides a forgotten entry; a regular install
then fails at import (`cannot import name 'pd' from 'pullback.dialects'`)."""

from __future__ import annotations

from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from Python 3.11")

ROOT = Path(__file__).resolve().parents[3]
SKIP = {"tests", "build", "dist", ".venv", ".git"}


def _packages_on_disk() -> set[str]:
    found = {"pullback"}
    for init in ROOT.rglob("__init__.py"):
        rel = init.parent.relative_to(ROOT)
        if not rel.parts or rel.parts[0] in SKIP or any(p.startswith(".") or p.endswith(".egg-info") for p in rel.parts):
            continue
        found.add(".".join(("pullback", *rel.parts)))
    return found


def test_every_package_is_installed_and_every_listed_one_exists() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    listed = set(config["tool"]["setuptools"]["packages"])
    on_disk = _packages_on_disk()
    assert not on_disk - listed, f"packages missing from pyproject.toml (a non-editable install drops them): {sorted(on_disk - listed)}"
    assert not listed - on_disk, f"pyproject.toml lists packages that do not exist: {sorted(listed - on_disk)}"
