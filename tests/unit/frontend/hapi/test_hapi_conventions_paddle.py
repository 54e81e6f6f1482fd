"""hapi and layer conventions against real Paddle 3.3.1 (issue 29): `Model.predict`
and `evaluate` without `inputs=` (inputs taken from `forward`'s arguments; the loss
`evaluate` reports is the last batch's, as Paddle's), `Model.fit` stepping an LR
scheduler every batch (Paddle's default `LRScheduler` callback), `spectral_norm`'s
`dim` (1 for Linear and the transposed convolutions) and `weight_norm`'s 1-D
`weight_g`, and the parameter names/shapes of common layers.  The cases are in
`hapi_conventions_cases.py`; Paddle's results were recorded once by
`gen_hapi_conventions_reference.py` into `data/hapi_conventions_reference.json`."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pullback as paddle

HERE = Path(__file__).resolve().parent
REFERENCE = json.loads((HERE / "data" / "hapi_conventions_reference.json").read_text())

_spec = importlib.util.spec_from_file_location("hapi_conventions_cases", HERE / "hapi_conventions_cases.py")
assert _spec is not None and _spec.loader is not None
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)


def _compare(got: Any, want: Any, where: str) -> None:
    if isinstance(want, dict):
        assert isinstance(got, dict) and sorted(got) == sorted(want), where
        for k in want:
            _compare(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, str) or (isinstance(want, list) and want and isinstance(want[0], (str, list))
                                   and _has_str(want)):
        assert got == want, where
    elif isinstance(want, list) or isinstance(want, float):
        np.testing.assert_allclose(np.asarray(got, dtype="float64"), np.asarray(want, dtype="float64"),
                                   rtol=2e-5, atol=2e-6, err_msg=where)
    else:
        assert got == want, where


def _has_str(x: Any) -> bool:
    if isinstance(x, str):
        return True
    return isinstance(x, list) and any(_has_str(y) for y in x)


def test_reference_is_paddle_3_3_1():
    assert REFERENCE["paddle_version"] == "3.3.1"


@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_matches_paddle(name, dynamic_mode):
    # The cases are dygraph code (as recorded under Paddle), with fresh names and a
    # fresh scope: whatever an earlier test on this worker left behind must not leak.
    _compare(cases.CASES[name](paddle), REFERENCE[name], name)
