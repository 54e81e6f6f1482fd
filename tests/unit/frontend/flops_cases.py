"""`paddle.flops` cases run by both real Paddle (`gen_flops_reference.py` writes
`data/flops_reference.json`) and pullback (`test_flops.py`): each takes the `paddle`
module and returns the total and the detail table's rows (without the layer-name
column, whose counters depend on what the process built before)."""

from __future__ import annotations

import contextlib
import io
from typing import Any


def _count(paddle: Any, net: Any, size: list[int], **kw: Any) -> dict[str, Any]:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        total = paddle.flops(net, size, print_detail=True, **kw)
    rows = [[c.strip() for c in line.strip("|").split("|")][1:]
            for line in buf.getvalue().splitlines() if line.startswith("|")]
    summary = [line for line in buf.getvalue().splitlines() if line.startswith("Total Flops")]
    return {"total": int(total), "rows": rows[1:], "summary": summary}


def lenet(paddle: Any) -> dict[str, Any]:
    """The LeNet of Paddle's `flops` docstring (conv, ReLU, max pool, three Linears)."""
    nn = paddle.nn

    class LeNet(nn.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.features = nn.Sequential(
                nn.Conv2D(1, 6, 3, stride=1, padding=1), nn.ReLU(), nn.MaxPool2D(2, 2),
                nn.Conv2D(6, 16, 5, stride=1, padding=0), nn.ReLU(), nn.MaxPool2D(2, 2))
            self.fc = nn.Sequential(nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10))

        def forward(self, x: Any) -> Any:
            return self.fc(paddle.flatten(self.features(x), 1))

    return _count(paddle, LeNet(), [1, 1, 28, 28])


def small_cnn(paddle: Any) -> dict[str, Any]:
    """Grouped and bias-free convolutions, batch norms (2D counted, 1D not), LeakyReLU,
    ReLU6, average and adaptive pools, a transposed convolution, dropout."""
    nn = paddle.nn
    net = nn.Sequential(
        nn.Conv2D(4, 8, 3, groups=2, bias_attr=False), nn.BatchNorm2D(8), nn.LeakyReLU(),
        nn.Conv2DTranspose(8, 4, 2, stride=2), nn.ReLU6(), nn.AvgPool2D(2),
        nn.AdaptiveAvgPool2D(3), nn.Flatten(), nn.BatchNorm1D(36), nn.Dropout(0.5), nn.Linear(36, 10))
    return _count(paddle, net, [2, 4, 10, 10])


def conv1d(paddle: Any) -> dict[str, Any]:
    """1-D convolution and pools."""
    nn = paddle.nn
    net = nn.Sequential(nn.Conv1D(3, 6, 5, padding=2), nn.AvgPool1D(2), nn.AdaptiveAvgPool1D(4),
                        nn.Flatten(), nn.Linear(24, 3))
    return _count(paddle, net, [1, 3, 16])


def mlp_custom(paddle: Any) -> dict[str, Any]:
    """Linear layers with a custom counter for Tanh (input numel)."""
    nn = paddle.nn

    def count_tanh(m: Any, x: Any, y: Any) -> None:
        m.total_ops += int(x[0].numel())

    net = nn.Sequential(nn.Linear(16, 32), nn.Tanh(), nn.Linear(32, 4))
    return _count(paddle, net, [3, 16], custom_ops={nn.Tanh: count_tanh})


def bare_linear(paddle: Any) -> dict[str, Any]:
    """A network that is itself a leaf: Paddle sums sublayers only, so 0."""
    return _count(paddle, paddle.nn.Linear(4, 5), [1, 4])


CASES = {"lenet": lenet, "small_cnn": small_cnn, "conv1d": conv1d, "mlp_custom": mlp_custom,
         "bare_linear": bare_linear}
