"""What the `gen_*_reference.py` scripts share: run a `*_cases.py` module's `CASES`
with real PaddlePaddle (3.3.1) and write what they return.  Loaded by path (the
scripts run in Paddle's interpreter, where pullback need not be installed).

A case is `case(paddle) -> value`; a `.json` output stores the values as they are,
an `.npz` output stores each case's dict of arrays under `"<case>/<key>"`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any


def load_module(path: Path, name: str = "cases") -> Any:
    """The Python file `path`, imported as a module named `name`."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_reference(cases_file: Path, output: Path, prepare: Callable[[Any], None] | None = None) -> None:
    """Run `cases_file`'s `CASES` on Paddle (dynamic mode) and write them to `output`
    (`.json` or `.npz`, with Paddle's version); `prepare(paddle)` runs first."""
    warnings.simplefilter("ignore")
    os.chdir(tempfile.mkdtemp())  # importing Paddle writes http.log into the working directory
    import paddle

    paddle.disable_static()
    if prepare is not None:
        prepare(paddle)
    cases = load_module(cases_file)
    if output.suffix == ".json":
        out: dict[str, Any] = {"paddle_version": paddle.__version__}
        out.update({name: case(paddle) for name, case in cases.CASES.items()})
        output.write_text(json.dumps(out, indent=1) + "\n")
    else:
        import numpy as np

        out = {"paddle_version": np.array(paddle.__version__)}
        for name, case in cases.CASES.items():
            for key, value in case(paddle).items():
                out[f"{name}/{key}"] = np.asarray(value)
        np.savez_compressed(output, **out)
    print(f"{len(out) - 1} entries from Paddle {paddle.__version__} -> {output}", file=sys.stderr)
