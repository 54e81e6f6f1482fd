"""Write `data/flops_reference.json`: `flops_cases.CASES` computed by real PaddlePaddle
(3.3.1).  Run once, with the Python of an environment where PaddlePaddle is installed
(never a dependency of pullback):

    /path/to/paddle-venv/bin/python tests/unit/frontend/gen_flops_reference.py

Paddle 3.3.1's `flops` converts its `[1]`-shaped counter tensors with `int()`, which
NumPy >= 2.4 refuses for arrays that are not 0-d; with the NumPy Paddle was released
against it works.  Under NumPy >= 2.4 this script lets `int()` of a one-element
tensor read that element (the numbers are unchanged).  `test_flops.py` recomputes
the cases with pullback.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("paddle_reference", HERE / "paddle_reference.py")
assert _spec is not None and _spec.loader is not None
_shared = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_shared)  # (tests/unit/frontend/paddle_reference.py, by path)


def _int_of_one_element(paddle: Any) -> None:
    """`int()` of a one-element tensor reads that element (see the docstring)."""
    paddle.Tensor.__int__ = lambda t: int(np.asarray(t).reshape(-1)[0]) if np.asarray(t).size == 1 else int(np.asarray(t))


def main() -> None:
    _shared.write_reference(HERE / "flops_cases.py", HERE / "data" / "flops_reference.json", prepare=_int_of_one_element)


if __name__ == "__main__":
    main()
