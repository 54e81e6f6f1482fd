"""Write `data/complex_reference.npz`: `complex_cases.CASES` computed by real
PaddlePaddle (3.3.1).  Run once, with the Python of an environment where
PaddlePaddle is installed (never a dependency of pullback):

    /path/to/paddle-venv/bin/python tests/unit/dtypes/gen_complex_reference.py

`test_complex_functions.py` and `test_complex_linalg.py` recompute the cases with
pullback.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("paddle_reference", HERE.parent / "frontend" / "paddle_reference.py")
assert _spec is not None and _spec.loader is not None
_shared = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_shared)  # (tests/unit/frontend/paddle_reference.py, by path)


def main() -> None:
    _shared.write_reference(HERE / "complex_cases.py", HERE / "data" / "complex_reference.npz")


if __name__ == "__main__":
    main()
