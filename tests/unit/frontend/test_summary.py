"""`paddle.summary` (frontend/summary.py) prints exactly what real Paddle 3.3.1 prints
and returns the same counts, in dynamic and in static mode, for the cases of
`summary_cases.py` (`data/summary_reference.json`, written by `gen_summary_reference.py`)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pullback as paddle
import pytest
from pullback.frontend import core

HERE = Path(__file__).resolve().parent
REF = json.loads((HERE / "data" / "summary_reference.json").read_text())

_spec = importlib.util.spec_from_file_location("summary_cases", HERE / "summary_cases.py")
assert _spec is not None and _spec.loader is not None
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)


@pytest.fixture(autouse=True)
def eager() -> Any:
    core.disable_static()
    yield
    core.disable_static()


@pytest.mark.filterwarnings("ignore:Your model was created in static graph mode")
@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_summary_matches_paddle(name: str) -> None:
    assert cases.CASES[name](paddle) == REF[name]


def test_static_summary_warns_and_leaves_the_default_program_alone() -> None:
    paddle.enable_static()
    net = paddle.nn.Linear(3, 2)
    main = paddle.static.default_main_program()
    before = len(main.global_block().ops)
    with pytest.warns(UserWarning, match="static graph mode"):
        info = paddle.summary(net, (4, 3))
    assert info == {"total_params": 8, "trainable_params": 8}
    assert len(main.global_block().ops) == before
