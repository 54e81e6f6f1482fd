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
import json
import os
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "data" / "flops_reference.json"


def main() -> None:
    warnings.simplefilter("ignore")
    os.chdir(tempfile.mkdtemp())  # importing Paddle writes http.log into the working directory
    import paddle

    paddle.disable_static()
    paddle.Tensor.__int__ = lambda t: int(np.asarray(t).reshape(-1)[0]) if np.asarray(t).size == 1 else int(np.asarray(t))
    spec = importlib.util.spec_from_file_location("cases", HERE / "flops_cases.py")
    assert spec is not None and spec.loader is not None
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    out = {"paddle_version": paddle.__version__}
    out.update({name: case(paddle) for name, case in cases.CASES.items()})
    OUTPUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"{len(out) - 1} cases from Paddle {paddle.__version__} -> {OUTPUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
