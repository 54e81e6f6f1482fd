"""`paddle.flops(net, input_size, custom_ops=None, print_detail=False)`: Paddle's
FLOPs count of a dygraph network (`python/paddle/hapi/dynamic_flops.py`).

One eager forward pass in eval mode on `paddle.randn(input_size)`; every leaf layer
(one without sublayers) of a type in `COUNTERS` (or in `custom_ops`, which wins) adds
that counter's number; the others count zero.  The counters are Paddle's, quirks
included, because users compare these numbers with Paddle's:

- convolutions: `output numel * (in_channels / groups * kernel numel + has_bias)`;
- `Linear`: `in_features * output numel` (no bias term);
- `BatchNorm2D` / `BatchNorm`: `2 * input numel` (BatchNorm1D/3D are not counted);
- `LeakyReLU`: input numel; `ReLU`, `ReLU6`, `Dropout`: zero;
- average pools: output numel; adaptive ones `(prod(in // out) + 1) * output numel`.

The total sums the network's sublayers only, so a network that is itself a leaf
(a bare `nn.Linear`) counts 0 FLOPs and 0 parameters, as in Paddle.  A counter is
`fn(layer, inputs, output)` adding to `layer.total_ops` (an int while counting).

Paddle also accepts a static `Program` (its legacy op-desc counter); under Paddle
3.3.1's default PIR programs that path fails with an AttributeError, so pullback
does not offer it.  A Layer in static mode (where Paddle 3.3.1 fails too) is counted
over its static shapes, its pass built in a scratch program.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

Counter = Callable[[Any, tuple[Any, ...], Any], None]


def _numel(t: Any) -> int:
    return int(np.prod(t.shape)) if len(t.shape) else 1


def count_convNd(m: Any, x: tuple[Any, ...], y: Any) -> None:  # noqa: N802 (Paddle's name)
    """`output numel * (in_channels / groups * kernel numel + has_bias)`."""
    kernel_ops = int(np.prod(m.weight.shape[2:]))
    bias_ops = 1 if m.bias is not None else 0
    m.total_ops += abs(int(_numel(y) * (x[0].shape[1] / m._groups * kernel_ops + bias_ops)))


def count_leaky_relu(m: Any, x: tuple[Any, ...], y: Any) -> None:
    """One operation per input element."""
    m.total_ops += _numel(x[0])


def count_bn(m: Any, x: tuple[Any, ...], y: Any) -> None:
    """Normalise and scale: two operations per input element (eval mode)."""
    m.total_ops += 2 * _numel(x[0])


def count_linear(m: Any, x: tuple[Any, ...], y: Any) -> None:
    """`in_features` multiply-adds per output element."""
    m.total_ops += abs(int(m.weight.shape[0] * _numel(y)))


def count_avgpool(m: Any, x: tuple[Any, ...], y: Any) -> None:
    """One operation per output element (Paddle's count, whatever the kernel)."""
    m.total_ops += _numel(y)


def count_adap_avgpool(m: Any, x: tuple[Any, ...], y: Any) -> None:
    """`prod(input spatial // output spatial)` adds and one divide per output element."""
    kernel = np.array(x[0].shape[2:]) // np.array(y.shape[2:])
    m.total_ops += abs(int((int(np.prod(kernel)) + 1) * _numel(y)))


def count_zero_ops(m: Any, x: tuple[Any, ...], y: Any) -> None:
    """Counted, as zero."""
    m.total_ops += 0


def _counters() -> dict[type, Counter]:
    """Paddle's `register_hooks` table (built on first use: the layer classes live in
    modules that import much of the frontend)."""
    from pullback.frontend.api import nn  # `paddle.nn`: the classes live in several modules

    kinds: dict[Counter, tuple[str, ...]] = {
        count_convNd: ("Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose"),
        count_bn: ("BatchNorm2D", "BatchNorm"),
        count_zero_ops: ("ReLU", "ReLU6", "Dropout"),
        count_leaky_relu: ("LeakyReLU",),
        count_linear: ("Linear",),
        count_avgpool: ("AvgPool1D", "AvgPool2D", "AvgPool3D"),
        count_adap_avgpool: ("AdaptiveAvgPool1D", "AdaptiveAvgPool2D", "AdaptiveAvgPool3D"),
    }
    table = {getattr(nn, name): fn for fn, names in kinds.items() for name in names}
    return table


class Table:
    """Paddle's plain-text table (`paddle.hapi.static_flops.Table`): columns as wide
    as their longest cell plus two, cells centred."""

    def __init__(self, table_heads: list[str]) -> None:
        self.table_heads = table_heads
        self.table_len = [len(h) for h in table_heads]
        self.data: list[list[Any]] = []
        self.col_num = len(table_heads)

    def add_row(self, row_str: list[Any]) -> None:
        if len(row_str) != self.col_num:
            raise ValueError(f"a row of {len(row_str)} cells for {self.col_num} columns")
        self.table_len = [max(n, len(str(c))) for n, c in zip(self.table_len, row_str)]
        self.data.append(row_str)

    def _row(self, row: list[Any]) -> str:
        return "".join("|" + str(c).center(n + 2) for c, n in zip(row, self.table_len)) + "|"

    def _shelf(self) -> str:
        return "".join("+" + "-" * (n + 2) for n in self.table_len) + "+"

    def print_table(self) -> None:
        lines = [self._shelf(), self._row(self.table_heads), self._shelf()]
        lines += [self._row(r) for r in self.data] + [self._shelf()]
        print("\n".join(lines))


def _is_leaf(m: Any) -> bool:
    return not any(True for _ in m.children())


def dynamic_flops(model: Any, inputs: Any, custom_ops: dict[type, Counter] | None = None,
                  print_detail: bool = False) -> int:
    """Count `model`'s FLOPs on one forward pass of `inputs` (see the module docstring)."""
    from pullback.frontend.autograd import no_grad

    custom_ops = custom_ops or {}
    counters = _counters()
    handles: list[Any] = []
    records: dict[int, dict[str, Any]] = {}
    seen: set[type] = set()

    def record(m: Any, x: tuple[Any, ...], y: Any) -> None:
        out = y[0] if isinstance(y, (list, tuple)) else y
        records[id(m)] = {"input_shape": list(x[0].shape), "output_shape": list(out.shape),
                          "params": sum(_numel(p) for p in m.parameters())}

    def add_hooks(m: Any) -> None:
        if not _is_leaf(m):
            return
        m.total_ops = 0
        kind = type(m)
        fn = custom_ops.get(kind) or counters.get(kind)
        if kind not in seen:
            if kind in custom_ops:
                print(f"Customize Function has been applied to {kind}")
            elif fn is not None:
                print(f"{kind}'s flops has been counted")
            else:
                print(f"Cannot find suitable count function for {kind}. Treat it as zero FLOPs.")
        seen.add(kind)
        if fn is not None:
            handles.append(m.register_forward_post_hook(fn))
        handles.append(m.register_forward_post_hook(record))

    training = model.training
    model.eval()
    model.apply(add_hooks)
    try:
        with no_grad():
            model(inputs)
    finally:
        for h in handles:
            h.remove()
        if training:
            model.train()
    table = Table(["Layer Name", "Input Shape", "Output Shape", "Params", "Flops"])
    total_ops = total_params = 0
    for m in model.sublayers():
        if not _is_leaf(m) or id(m) not in records:
            continue
        r = records[id(m)]
        ops = int(m.total_ops)
        total_ops += ops
        total_params += r["params"]
        table.add_row([m.full_name(), r["input_shape"], r["output_shape"], r["params"], ops])
    model.apply(lambda m: m.__dict__.pop("total_ops", None))
    if print_detail:
        table.print_table()
    print(f"Total Flops: {total_ops}     Total Params: {total_params}")
    return total_ops


def flops(net: Any, input_size: list[int], custom_ops: dict[type, Counter] | None = None,
          print_detail: bool = False) -> int:
    """`paddle.flops`: the FLOPs of `net` (an `nn.Layer`) on a `paddle.randn(input_size)`
    input; prints the total (and the per-layer table when `print_detail`)."""
    from pullback.frontend.ops.creation import randn
    from pullback.frontend import core
    from pullback.frontend.framework import Program, program_guard
    from pullback.frontend.jit.static_function import StaticFunction
    from pullback.frontend.nn_layers import Layer

    if isinstance(net, Layer):
        forward = net.__dict__.get("forward", getattr(type(net), "forward", None))
        if isinstance(forward, StaticFunction):  # Paddle's unwrap_decorators: count the dygraph code
            net.__dict__["forward"] = forward.__get__(net).dygraph_function
        if core.in_dynamic_mode():
            return dynamic_flops(net, randn(list(input_size)), custom_ops=custom_ops, print_detail=print_detail)
        # Static mode (Paddle 3.3.1 fails here: its counters register buffers of static
        # values): the same count over static shapes, built in a scratch program so the
        # user's default program gains no ops.
        with program_guard(Program(), Program()):
            return dynamic_flops(net, randn(list(input_size)), custom_ops=custom_ops, print_detail=print_detail)
    if isinstance(net, Program):
        raise NotImplementedError(
            "paddle.flops of a static Program is not supported (Paddle 3.3.1's own static "
            "counter reads legacy op descs and fails on PIR programs); pass the nn.Layer")
    warnings.warn("Your model must be an instance of paddle.nn.Layer or paddle.static.Program.", stacklevel=2)
    return -1


__all__ = ["Table", "dynamic_flops", "flops"]
