"""ruff on the whole checkout, with the rules configured in pyproject.toml, so that
the README's test command lints too."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def _ruff() -> list[str] | None:
    exe = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    return [exe] if exe else None


@pytest.mark.skipif(_ruff() is None, reason="ruff is not installed (pip install '.[test]')")
def test_ruff_is_clean() -> None:
    cmd = _ruff()
    assert cmd is not None
    proc = subprocess.run(
        [*cmd, "check", "--no-cache", "--output-format", "concise", str(ROOT)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, (
        "ruff found problems (`ruff check --fix .` fixes the mechanical ones; the rules "
        f"are in pyproject.toml):\n{proc.stdout[-8000:]}{proc.stderr[-2000:]}"
    )
