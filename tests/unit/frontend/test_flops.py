"""`paddle.flops` (frontend/flops.py): totals, per-layer rows (shapes, parameters,
FLOPs) and the printed summary equal real Paddle 3.3.1's for the cases of
`flops_cases.py` (`data/flops_reference.json`, written by `gen_flops_reference.py`)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pullback as paddle
import pytest
from pullback.frontend import core

HERE = Path(__file__).resolve().parent
REF = json.loads((HERE / "data" / "flops_reference.json").read_text())

_spec = importlib.util.spec_from_file_location("flops_cases", HERE / "flops_cases.py")
assert _spec is not None and _spec.loader is not None
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)


@pytest.fixture(autouse=True)
def eager() -> Any:
    core.disable_static()
    yield
    core.disable_static()


@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_flops_match_paddle(name: str) -> None:
    assert cases.CASES[name](paddle) == REF[name]


def test_flops_leaves_the_network_as_it_was() -> None:
    net = paddle.nn.Sequential(paddle.nn.Linear(3, 4), paddle.nn.ReLU())
    net.train()
    assert paddle.flops(net, [2, 3]) == 24
    assert net.training and all(not hasattr(m, "total_ops") for m in net.sublayers(include_self=True))
    assert not net[0]._forward_post_hooks
    assert paddle.hapi.flops is paddle.flops is paddle.hapi.dynamic_flops.flops
    # Paddle's counters, importable from Paddle's module, serve as custom_ops
    from pullback.hapi.dynamic_flops import count_leaky_relu
    assert paddle.flops(net, [2, 3], custom_ops={paddle.nn.ReLU: count_leaky_relu}) == 24 + 8


def test_flops_of_a_to_static_forward_counts_the_dygraph_code() -> None:
    class Net(paddle.nn.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.fc = paddle.nn.Linear(5, 2)

        @paddle.jit.to_static
        def forward(self, x: Any) -> Any:
            return self.fc(x)

    assert paddle.flops(Net(), [1, 5]) == 10


def test_flops_of_something_else_warns_and_returns_minus_one() -> None:
    with pytest.warns(UserWarning, match="nn.Layer"):
        assert paddle.flops(object(), [1]) == -1


def test_flops_in_static_mode_counts_static_shapes_in_a_scratch_program() -> None:
    paddle.enable_static()
    net = paddle.nn.Sequential(paddle.nn.Linear(3, 4), paddle.nn.ReLU())
    main = paddle.static.default_main_program()
    before = len(main.global_block().ops)
    assert paddle.flops(net, [2, 3]) == 24
    assert len(main.global_block().ops) == before
