"""Write `data/summary_reference.json`: `summary_cases.CASES` computed by real PaddlePaddle
(3.3.1).  Run once, with the Python of an environment where PaddlePaddle is installed
(never a dependency of pullback):

    /path/to/paddle-venv/bin/python tests/unit/frontend/gen_summary_reference.py

`test_summary.py` recomputes the cases with pullback.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUTPUT = HERE / "data" / "summary_reference.json"


def main() -> None:
    warnings.simplefilter("ignore")
    os.chdir(tempfile.mkdtemp())  # importing Paddle writes http.log into the working directory
    import paddle

    paddle.disable_static()
    spec = importlib.util.spec_from_file_location("cases", HERE / "summary_cases.py")
    assert spec is not None and spec.loader is not None
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    out = {"paddle_version": paddle.__version__}
    out.update({name: case(paddle) for name, case in cases.CASES.items()})
    OUTPUT.write_text(json.dumps(out, indent=1) + "\n")
    print(f"{len(out) - 1} cases from Paddle {paddle.__version__} -> {OUTPUT}", file=sys.stderr)


if __name__ == "__main__":
    main()
