"""`DataLoader.from_generator` (frontend/reader.py): iterable loaders yield what real
Paddle 3.3.1's yield (`data/generator_loader_reference.json`, written by
`gen_generator_loader_reference.py` from `generator_loader_cases.py`); the
non-iterable static loader follows Paddle's documented start()/run/EOFException/
reset() loop (Paddle 3.3.1 cannot build one under PIR, so no reference values)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import numpy as np
import pullback as paddle
import pytest
from pullback.frontend import core

HERE = Path(__file__).resolve().parent
REF = json.loads((HERE / "data" / "generator_loader_reference.json").read_text())

_spec = importlib.util.spec_from_file_location("generator_loader_cases", HERE / "generator_loader_cases.py")
assert _spec is not None and _spec.loader is not None
cases = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases)


@pytest.fixture(autouse=True)
def eager() -> Any:
    core.disable_static()
    yield
    core.disable_static()


@pytest.mark.filterwarnings("ignore:Please NOTE")  # Paddle's warning for dygraph's return_list=False
@pytest.mark.parametrize("name", sorted(cases.CASES))
def test_iterable_loaders_match_paddle(name: str) -> None:
    assert cases.CASES[name](paddle) == REF[name]


def test_names_and_argument_checks() -> None:
    assert paddle.base.io.DataLoader is paddle.fluid.io.DataLoader is paddle.base.reader.DataLoader
    assert paddle.core.EOFException is paddle.base.core.EOFException is paddle.fluid.core.EOFException
    with pytest.raises(ValueError, match="capacity"):
        paddle.base.io.DataLoader.from_generator()
    with pytest.warns(UserWarning, match="iterable mode only"):
        loader = paddle.io.DataLoader.from_generator(capacity=2, iterable=False)
    assert loader.iterable and loader() is loader
    with pytest.raises(AssertionError, match="not set yet"):
        iter(loader).__next__()
    paddle.enable_static()
    with pytest.raises(ValueError, match="Feed list must be given"):
        paddle.base.io.DataLoader.from_generator(capacity=2)
    x = paddle.static.data("x", [None, 2], "float32")
    loader = paddle.base.io.DataLoader.from_generator(feed_list=[x], capacity=2)
    with pytest.raises(AssertionError, match="Places cannot be None"):
        loader.set_batch_generator(lambda: iter([]))
    with pytest.raises(AssertionError, match="cannot be called when DataLoader is iterable"):
        loader.start()


def _batches(n: int) -> Any:
    def reader() -> Any:
        for i in range(n):
            yield np.full([2, 3], i, "float32"), np.full([2, 1], 10 * i, "int64")
    return reader


def test_non_iterable_loader_runs_epochs_until_eof() -> None:
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [None, 3], "float32")
        y = paddle.static.data("y", [None, 1], "int64")
        total = paddle.sum(x) + paddle.sum(paddle.cast(y, "float32"))
        loader = paddle.base.io.DataLoader.from_generator(feed_list=[x, y], capacity=4, iterable=False)
    loader.set_batch_generator(_batches(3))
    assert not loader.iterable
    with pytest.raises(AssertionError, match="not iterable"):
        next(iter(loader))
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    with pytest.raises(paddle.core.EOFException):  # not started
        exe.run(main, fetch_list=[total])
    test_prog = main.clone(for_test=True)
    for _ in range(2):
        loader.start()
        sums = []
        try:
            while True:
                sums.append(float(exe.run(main, fetch_list=[total])[0]))
        except paddle.core.EOFException:
            loader.reset()
        assert sums == [0.0, 2 * 3 * 1 + 2 * 10, 2 * 3 * 2 + 2 * 20]
    # a feed given explicitly wins; a clone reads from the same loader
    fed = exe.run(main, feed={"x": np.ones([1, 3], "float32"), "y": np.ones([1, 1], "int64")}, fetch_list=[total])
    assert float(fed[0]) == 4.0
    loader.start()
    assert float(exe.run(test_prog, fetch_list=[total])[0]) == 0.0
    loader.reset()


def test_non_iterable_sample_generator_converts_to_the_feed_dtypes() -> None:
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [None, 2], "float32")
        out = paddle.sum(x, axis=1)
        loader = paddle.base.io.DataLoader.from_generator(feed_list=[x], capacity=2, iterable=False)

    def samples() -> Any:
        for i in range(5):
            yield ([i, i],)  # python ints: the DataFeeder makes float32 [batch, 2]

    loader.set_sample_generator(samples, batch_size=2, drop_last=True)
    exe = paddle.static.Executor(paddle.CPUPlace())
    loader.start()
    got = []
    with pytest.raises(paddle.core.EOFException):
        while True:
            got.append(exe.run(main, fetch_list=[out])[0].tolist())
    assert got == [[0.0, 2.0], [4.0, 6.0]]
