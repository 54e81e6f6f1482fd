"""Runs the lit + FileCheck suite under `tests/filecheck` as one pytest test, so a
single `pytest tests` proves everything.  lit's own report is shown on failure."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SUITE = Path(__file__).parent / "filecheck"
SUITE_TIMEOUT_S = 1800


def test_lit_suite() -> None:
    """Every `.mlir` test under tests/filecheck passes."""
    cmd = [sys.executable, "-c", "from lit.main import main; main()", "-v", str(SUITE)]
    proc = subprocess.run(
        cmd, capture_output=True, text=True, timeout=SUITE_TIMEOUT_S, check=False
    )
    report = proc.stdout + proc.stderr
    assert "Total Discovered Tests" in report, f"lit did not run:\n{report}"
    assert proc.returncode == 0, f"lit failed (exit {proc.returncode}):\n{report}"
