"""`DataLoader.from_generator` cases run by both real Paddle
(`gen_generator_loader_reference.py` writes `data/generator_loader_reference.json`)
and pullback (`test_generator_loader.py`): each takes the `paddle` module, reads an
iterable loader to the end and returns what every batch holds (kind, names, dtypes,
shapes, values).  Paddle 3.3.1's non-iterable static loader fails under its default
PIR programs (`set_dtypes()` TypeError), so those cases are pullback-only tests."""

from __future__ import annotations

from typing import Any

import numpy as np


def _samples() -> Any:
    for i in range(5):
        yield np.full([3], i, "float32"), np.array([i], "int64")


def _batches() -> Any:
    for i in range(3):
        yield np.full([2, 3], i, "float64"), np.full([2, 1], i, "int32")


def _describe(paddle: Any, item: Any) -> Any:
    """A JSON-able account of one yielded item."""
    if isinstance(item, dict):
        return {"dict": {k: _describe(paddle, v) for k, v in sorted(item.items())}}
    if isinstance(item, (list, tuple)):
        return {"list": [_describe(paddle, v) for v in item]}
    arr = np.array(item)
    return {"tensor": isinstance(item, paddle.Tensor), "dtype": str(arr.dtype), "shape": list(arr.shape),
            "values": arr.tolist()}


def _read(paddle: Any, loader: Any) -> list[Any]:
    return [_describe(paddle, data) for data in loader()]


def dygraph(paddle: Any) -> dict[str, Any]:
    """Dygraph: lists of Tensors from each of the three data-source setters."""
    loader = paddle.base.io.DataLoader.from_generator(capacity=4)
    out = {"sample": _read(paddle, loader.set_sample_generator(_samples, batch_size=2, drop_last=False)),
           "sample_drop": _read(paddle, loader.set_sample_generator(_samples, batch_size=2))}
    loader.set_sample_list_generator(paddle.batch(_samples, 3))
    out["sample_list"] = _read(paddle, loader)
    loader.set_batch_generator(_batches)
    out["batch"] = _read(paddle, loader)
    out["iterable"] = loader.iterable
    return out


def static(paddle: Any) -> dict[str, Any]:
    """Static, iterable: one-place feed dicts (or lists), fed to an executor."""
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [None, 3], "float32")
            y = paddle.static.data("y", [None, 1], "int64")
            total = paddle.sum(x) + paddle.sum(paddle.cast(y, "float32"))
            loader = paddle.base.io.DataLoader.from_generator(feed_list=[x, y], capacity=4)
            as_list = paddle.base.io.DataLoader.from_generator(feed_list=[x, y], capacity=4, return_list=True)
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        place = paddle.CPUPlace()
        out: dict[str, Any] = {}
        loader.set_sample_generator(_samples, batch_size=2, drop_last=False, places=place)
        out["sample"] = _read(paddle, loader)
        out["sums"] = [float(exe.run(main, feed=d, fetch_list=[total])[0]) for d in loader()]
        loader.set_sample_list_generator(paddle.batch(_samples, 3), places=[place])
        out["sample_list"] = _read(paddle, loader)
        as_list.set_sample_generator(_samples, batch_size=4, places=place)
        out["list"] = _read(paddle, as_list)
        out["iterable"] = loader.iterable
        return out
    finally:
        paddle.disable_static()


CASES = {"dygraph": dygraph, "static": static}
