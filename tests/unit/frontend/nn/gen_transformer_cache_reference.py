"""Write `data/transformer_cache_reference.npz`: `transformer_cache_cases.CASES`
computed by real PaddlePaddle (3.3.1).  Run once, with the Python of an environment
where PaddlePaddle is installed (never a dependency of pullback):

    /path/to/paddle-venv/bin/python tests/unit/frontend/nn/gen_transformer_cache_reference.py

`test_transformer_cache.py` recomputes the cases with pullback.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "data" / "transformer_cache_reference.npz"


def main() -> None:
    warnings.simplefilter("ignore")
    os.chdir(tempfile.mkdtemp())  # importing Paddle writes http.log into the working directory
    import paddle

    paddle.disable_static()
    spec = importlib.util.spec_from_file_location("cases", HERE / "transformer_cache_cases.py")
    assert spec is not None and spec.loader is not None
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    out: dict[str, np.ndarray] = {"paddle_version": np.array(paddle.__version__)}
    for name, case in cases.CASES.items():
        for key, value in case(paddle).items():
            out[f"{name}/{key}"] = np.asarray(value)
    np.savez_compressed(OUTPUT, **out)
    print(f"{len(out) - 1} arrays from Paddle {paddle.__version__} -> {OUTPUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
