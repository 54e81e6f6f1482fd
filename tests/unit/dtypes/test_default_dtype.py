"""`paddle.set_default_dtype` / `get_default_dtype`: what Paddle 3.3.1 accepts, and the
dtypes of Python floats, creation ops and new parameters under float32 and float64
defaults read off Paddle (`data/paddle_dtype_facts.json`); float16 and bfloat16
defaults (which Paddle's CPU kernels do not all take) give those dtypes too."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator

import numpy as np
import pytest

import pullback as paddle
from pullback.frontend import core

FACTS = json.load(open(os.path.join(os.path.dirname(__file__), "data", "paddle_dtype_facts.json")))

CREATIONS = {
    "to_tensor(1.0)": lambda: paddle.to_tensor(1.0), "to_tensor([1.5])": lambda: paddle.to_tensor([1.5]),
    "to_tensor(float64 array)": lambda: paddle.to_tensor(np.array([1.5])), "ones": lambda: paddle.ones([1]),
    "full": lambda: paddle.full([1], 1.0), "zeros": lambda: paddle.zeros([1]), "rand": lambda: paddle.rand([1]),
    "randn": lambda: paddle.randn([1]), "Linear.weight": lambda: paddle.nn.Linear(2, 2).weight,
    "arange(3)": lambda: paddle.arange(3), "arange(0.,3.)": lambda: paddle.arange(0.0, 3.0),
    "eye": lambda: paddle.eye(2), "linspace": lambda: paddle.linspace(0, 1, 3), "empty": lambda: paddle.empty([1]),
    "int tensor + 1.5": lambda: paddle.to_tensor([1]) + 1.5,
}


@pytest.fixture(autouse=True)
def _restore() -> Iterator[None]:
    core.disable_static()
    yield
    paddle.set_default_dtype("float32")
    core.disable_static()


def test_accepted_dtypes_are_paddles() -> None:
    assert paddle.get_default_dtype() == "float32"
    for d, want in FACTS["set_default_dtype"].items():
        if want is None:
            with pytest.raises(TypeError, match=r"set_default_dtype only supports \[float16, float32, float64, bfloat16\]"):
                paddle.set_default_dtype(d)
        else:
            paddle.set_default_dtype(d)
            assert paddle.get_default_dtype() == want
    paddle.set_default_dtype(np.float64)
    assert paddle.get_default_dtype() == "float64"
    paddle.set_default_dtype(paddle.float16)
    assert paddle.get_default_dtype() == "float16"


@pytest.mark.parametrize("default", ["float32", "float64"])
def test_created_dtypes_follow_the_default_as_paddles(default: str) -> None:
    paddle.set_default_dtype(default)
    want = FACTS["created_under_default"][default]
    got = {k: fn().dtype for k, fn in CREATIONS.items()}
    assert got == want


@pytest.mark.parametrize("default", ["float16", "bfloat16"])
def test_low_precision_defaults(default: str) -> None:
    paddle.set_default_dtype(default)
    for k, fn in CREATIONS.items():
        if k in ("arange(3)",):
            continue
        want = {"to_tensor(float64 array)": "float64", "int tensor + 1.5": "float32"}.get(k, default)
        assert fn().dtype == want, k
    paddle.enable_static()
    with paddle.static.program_guard(paddle.static.Program(), paddle.static.Program()):
        assert paddle.static.data("x", [2]).dtype == default
        assert paddle.static.nn.fc(paddle.static.data("y", [2, 3]), 4).dtype == default
