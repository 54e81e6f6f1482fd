"""`paddle.summary` cases run by both real Paddle (`gen_summary_reference.py` writes
`data/summary_reference.json`) and pullback (`test_summary.py`), in dynamic and in
static mode: each takes the `paddle` module and returns the printed text and the
returned counts.  Layers are built under `unique_name.guard()` so their row names
(`Conv2D-1`) do not depend on what the process built before."""

from __future__ import annotations

import contextlib
import io
from typing import Any


def _run(paddle: Any, static: bool, build: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
    if static:
        paddle.enable_static()
    # (Static: in fresh programs, so the guard's reused parameter names cannot clash.)
    programs = paddle.static.program_guard(paddle.static.Program(), paddle.static.Program())
    try:
        with programs if static else contextlib.nullcontext(), paddle.utils.unique_name.guard():
            net = build(paddle.nn)
            net.train()
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                info = paddle.summary(net, *args, **kwargs)
        return {"text": buf.getvalue(), "info": {k: int(v) for k, v in info.items()},
                "training": net.training}
    finally:
        paddle.disable_static()


def _cnn(nn: Any) -> Any:
    return nn.Sequential(nn.Conv2D(1, 4, 3), nn.BatchNorm2D(4), nn.ReLU(), nn.Flatten(),
                         nn.Linear(4 * 6 * 6, 10))


def _two_inputs(nn: Any) -> Any:
    class Two(nn.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(3, 2)
            self.norm = nn.LayerNorm(2)

        def forward(self, x: Any, y: Any) -> Any:
            return self.fc(x) + self.norm(y)

    return Two()


def cnn_dynamic(paddle: Any) -> dict[str, Any]:
    return _run(paddle, False, _cnn, (None, 1, 8, 8))


def cnn_static(paddle: Any) -> dict[str, Any]:
    """Static mode: inputs read `[None]`, output shapes static, the mode untouched."""
    return _run(paddle, True, _cnn, (None, 1, 8, 8))


def two_inputs_static(paddle: Any) -> dict[str, Any]:
    return _run(paddle, True, _two_inputs, [(2, 3), (2, 2)])


def leaf_static(paddle: Any) -> dict[str, Any]:
    """A network without sublayers is its own only row."""
    return _run(paddle, True, lambda nn: nn.Linear(3, 2), (5, 3))


CASES = {"cnn_dynamic": cnn_dynamic, "cnn_static": cnn_static, "two_inputs_static": two_inputs_static,
         "leaf_static": leaf_static}
