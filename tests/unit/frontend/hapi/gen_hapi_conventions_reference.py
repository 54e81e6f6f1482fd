"""Run `hapi_conventions_cases.py` under real Paddle 3.3.1 and record the results:

    /work/venv-paddle/bin/python tests/unit/frontend/hapi/gen_hapi_conventions_reference.py
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import paddle

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("hapi_conventions_cases", HERE / "hapi_conventions_cases.py")
assert spec is not None and spec.loader is not None
cases = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cases)

if __name__ == "__main__":
    paddle.set_device("cpu")
    result = {"paddle_version": paddle.__version__}
    for name, fn in cases.CASES.items():
        result[name] = fn(paddle)
    (HERE / "data").mkdir(exist_ok=True)
    (HERE / "data" / "hapi_conventions_reference.json").write_text(json.dumps(result, indent=1) + "\n")
