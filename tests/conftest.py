"""Suite-wide pytest configuration."""

from __future__ import annotations

import os
from typing import Any

# Most tests check semantics, which the interpreter (the reference) decides; compiling
# every little test program with LLVM would only make the suite slow.  Tests of the
# native backends choose it explicitly (`Executor(place, backend="compiled")`), and
# tests of the default choice clear this variable.
os.environ.setdefault("PULLBACK_BACKEND", "interpreter")


def pytest_make_parametrize_id(config: Any, val: object, argname: str) -> str | None:
    """Stable test ids for callables (a lambda's default id holds its address, which
    differs between pytest-xdist workers and breaks parallel collection)."""
    if callable(val) and hasattr(val, "__name__"):
        name = getattr(val, "name", None)  # pd op classes: their op name
        return name if isinstance(name, str) else val.__name__
    return None
