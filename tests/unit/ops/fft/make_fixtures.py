"""Makes `paddle_fixtures.npz`: the outputs and input gradients of every case of
`fft_cases.py` computed by real PaddlePaddle 3.3.1 (eager, CPU), which
`test_fft_paddle.py` checks pullback against.  Run with a Paddle install (not a
dependency of pullback):

    python tests/unit/ops/fft/make_fixtures.py
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np

warnings.filterwarnings("ignore")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import paddle  # noqa: E402
from fft_cases import cases, run  # noqa: E402


def main() -> None:
    arrays: dict[str, np.ndarray] = {}
    for name, (fn, inputs) in cases().items():
        out, grads = run(paddle, fn, inputs)
        arrays[f"{name}/out"] = out
        for i, g in enumerate(grads):
            if g is not None:
                arrays[f"{name}/grad{i}"] = g
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "paddle_fixtures.npz")
    np.savez_compressed(path, **arrays)
    print(f"wrote {path} ({len(arrays)} arrays, paddle {paddle.__version__})")


if __name__ == "__main__":
    main()
