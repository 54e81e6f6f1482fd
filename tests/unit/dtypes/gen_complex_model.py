"""Write `data/complex_model.json`: an inference model real PaddlePaddle (3.3.1)
saves from a static program holding complex constants (`paddle.full` with a complex
value, which Paddle writes as two real fulls and `complex`, and `paddle.assign` of
a complex array, an `assign_value_` of complex scalars).  Run once, with the Python
of an environment where PaddlePaddle is installed (never a dependency of pullback):

    /path/to/paddle-venv/bin/python tests/unit/dtypes/gen_complex_model.py

`test_complex_functions.py` loads it with pullback: `y = x * (1+2j) + [1j, 2]`.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def main() -> None:
    warnings.simplefilter("ignore")
    os.chdir(tempfile.mkdtemp())  # importing Paddle writes http.log into the working directory
    import paddle

    paddle.enable_static()
    main_prog, start = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main_prog, start):
        x = paddle.static.data("x", [2], "complex64")
        y = x * paddle.full([2], 1 + 2j, dtype="complex64") + paddle.assign(np.array([1j, 2], np.complex64))
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(start)
    out = tempfile.mkdtemp()
    paddle.static.save_inference_model(os.path.join(out, "m"), [x], [y], exe, program=main_prog)
    shutil.copy(os.path.join(out, "m.json"), HERE / "data" / "complex_model.json")
    print(f"Paddle {paddle.__version__} -> {HERE / 'data' / 'complex_model.json'}")


if __name__ == "__main__":
    main()
