"""Run `static_amp_cases.py` under real Paddle 3.3.1 (legacy static IR) and record it:

    FLAGS_enable_pir_api=0 /work/venv-paddle/bin/python tests/unit/dtypes/gen_static_amp_reference.py
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

os.environ.setdefault("FLAGS_enable_pir_api", "0")
import paddle  # noqa: E402

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("static_amp_cases", HERE / "static_amp_cases.py")
assert spec is not None and spec.loader is not None
cases = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cases)

if __name__ == "__main__":
    paddle.set_device("cpu")
    result = {"paddle_version": paddle.__version__,
              "sgd": cases.run(paddle), "momentum": cases.run(paddle, optimizer="momentum")}
    result.update({name: cases.run(paddle, optimizer=name) for name in cases.ADAM_LIKE})
    (HERE / "data" / "static_amp_reference.json").write_text(json.dumps(result, indent=1) + "\n")
