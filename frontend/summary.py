"""`paddle.summary(net, input_size)`: run one eager forward pass on zeros, record the
input and output shape of every layer (containers and the network itself aside),
print Paddle's table and return `{'total_params', 'trainable_params'}`.

As Paddle's does, it counts the parameters each recorded layer owns (batch-norm
running statistics as non-trainable ones) and estimates memory in float32
megabytes.

In static mode (`paddle.enable_static()`) Paddle builds the forward pass as a
program on random inputs instead, warns that the summary may be inexact, leaves the
layers' train/eval mode alone, and its table reads each layer's inputs as `None`
(static values are not the tensors its hook recognises: `[None]` for one input)
while the output shapes are the static ones.  pullback prints the same; it builds
that pass in a scratch program, so the user's default program gains no ops.
"""

from __future__ import annotations

import numbers
import warnings
from typing import Any

import numpy as np
from pullback.dialects.pd.dtypes import to_numpy_dtype
from pullback.frontend import core


def _is_shape(x: Any) -> bool:
    return isinstance(x, (list, tuple)) and all(isinstance(d, (numbers.Integral, type(None))) for d in x)


def _shapes_of(x: Any) -> Any:
    """The shape (list) of a tensor, or the shapes of a structure of tensors."""
    if hasattr(x, "shape") and not isinstance(x, (list, tuple, dict)):
        return list(x.shape)
    if isinstance(x, (list, tuple)):
        return [_shapes_of(v) for v in x]
    if isinstance(x, dict):
        return [_shapes_of(v) for v in x.values()]
    return []


def _numel(shape: Any) -> int:
    if shape and isinstance(shape[0], list):
        return sum(_numel(s) for s in shape)
    return int(np.prod(shape)) if shape else 1


def _layer_params(layer: Any) -> tuple[int, int]:
    """(parameters, trainable parameters) the layer owns itself (running statistics
    count as parameters that are not trainable, as in Paddle)."""
    total = trainable = 0
    for p in layer._parameters.values():
        if p is None:
            continue
        n = int(np.prod(p.shape))
        total += n
        if not p.stop_gradient:
            trainable += n
    return total, trainable


def _row_key(layer: Any, seen: int) -> str:
    """Paddle's row name: class name and the full name's counter plus one
    (`Conv2D-1` for `conv2d_0`)."""
    try:
        idx = int(layer.full_name().split("_")[-1])
    except ValueError:
        idx = seen
    return f"{type(layer).__name__}-{idx + 1}"


def _check_shape(shape: Any) -> list[int]:
    unknown = 0
    out = []
    for d in shape:
        if d is None or d == -1:
            unknown += 1
            if unknown > 1:
                raise ValueError("Option input_size only the dim of batch_size can be None or -1.")
            d = 1
        elif d <= 0:
            raise ValueError(f"Expected element in input size greater than zero, but got {d}")
        out.append(int(d))
    return out


def _check_items(size: Any) -> None:
    """Paddle's TypeError for an item of `input_size` that is not a number (or None,
    or a nested shape)."""
    if isinstance(size, (list, tuple)):
        for item in size:
            _check_items(item)
    elif size is not None and not isinstance(size, numbers.Number):
        raise TypeError(f"Expected item in input size be a number, but got {type(size).__name__}")


def _is_nested_shape(x: Any) -> bool:
    return _is_shape(x) or (isinstance(x, (list, tuple)) and bool(x) and all(_is_nested_shape(s) for s in x))


def _check_nested(shape: Any) -> Any:
    return _check_shape(shape) if _is_shape(shape) else [_check_nested(s) for s in shape]


def _static_input(shape: list[int], dtype: Any) -> Any:
    """A random static input, Paddle's `paddle.cast(paddle.rand(shape), dtype)` (in
    the scratch program the caller guards)."""
    from pullback.frontend.ops.creation import rand
    from pullback.frontend.ops.elementwise import cast

    return cast(rand(shape), dtype)


def summary(net: Any, input_size: Any = None, dtypes: Any = None, input: Any = None) -> dict[str, int]:
    """`paddle.summary`: print the layer table of `net` (every sublayer except
    containers; the network itself only when it has no sublayers) for random inputs
    of `input_size` (a shape or a list of shapes; one `None`/-1 dimension becomes 1)
    or for the given `input`; returns `{'total_params', 'trainable_params'}`."""
    from pullback.frontend.autograd import no_grad
    from pullback.frontend.eager import to_tensor
    from pullback.frontend.framework import Program, program_guard
    from pullback.frontend.nn_layers import Layer, LayerList, Sequential

    if not isinstance(net, Layer):
        raise TypeError(f"summary: net must be a paddle.nn.Layer, got {type(net).__name__}")
    if input is None and input_size is None:
        raise ValueError("input_size and input cannot be None at the same time")
    static = not core.in_dynamic_mode()
    scratch = (Program(), Program())  # static mode: the summary's forward pass is built here
    if static:
        warnings.warn("Your model was created in static graph mode, this may not get correct summary information!",
                      stacklevel=2)
    if input is not None:
        inputs = list(input) if isinstance(input, (list, tuple)) else [input]
        sizes = [list(t.shape) for t in inputs]
    else:
        if isinstance(input_size, int):
            input_size = (input_size,)
        _check_items(input_size)
        shapes = [input_size] if _is_shape(input_size) else list(input_size)
        if not all(_is_nested_shape(s) for s in shapes):
            raise ValueError(f"summary: input_size must be a shape or a list of shapes, got {input_size!r}")
        sizes = [_check_nested(s) for s in shapes]
        if dtypes is None:
            dts = ["float32"] * len(sizes)
        else:
            dts = [dtypes] * len(sizes) if not isinstance(dtypes, (list, tuple)) else list(dtypes)
        rng = np.random.default_rng(0)

        def build(size: Any, spec: Any, dt: Any) -> Any:
            # A nested input (an RNN's `(h, c)` initial states) keeps its structure.
            if not _is_shape(spec):
                parts = [build(z, p, dt) for z, p in zip(size, spec)]
                return tuple(parts) if isinstance(spec, tuple) else parts
            if static:
                return _static_input(size, dt)
            return to_tensor(rng.random(size).astype(to_numpy_dtype(dt, "summary")))

        if static:
            with program_guard(*scratch):
                inputs = [build(z, p, dt) for z, p, dt in zip(sizes, shapes, dts)]
        else:
            inputs = [build(z, p, dt) for z, p, dt in zip(sizes, shapes, dts)]

    rows: dict[str, dict[str, Any]] = {}
    patched: list[Any] = []
    layers = net.sublayers()

    def wrap(layer: Any) -> None:
        original = layer.forward

        def forward(*args: Any, **kwargs: Any) -> Any:
            out = original(*args, **kwargs)
            params, trainable = _layer_params(layer)
            rows[_row_key(layer, len(rows))] = {
                "input": [None] * len(args) if static else _shapes_of(list(args)), "output": _shapes_of(out),
                "params": params, "trainable": trainable,
            }
            return out

        layer.__dict__["forward"] = forward
        patched.append(layer)

    for layer in [*layers, net]:
        plain = not isinstance(layer, (Sequential, LayerList)) and (layer is not net or not layers)
        # As Paddle, an LSTM/GRU/SimpleRNN (a LayerList whose fused forward does not
        # call its cells) gets its own row, with its flattened weights.
        if plain or getattr(layer, "could_use_cudnn", False):
            wrap(layer)
    was_training = net.training and not static  # (static: Paddle leaves the mode alone)
    if not static:
        net.eval()
    try:
        if static:
            with program_guard(*scratch):
                net(*inputs)
        else:
            with no_grad():
                net(*inputs)
    finally:
        for layer in patched:
            layer.__dict__.pop("forward", None)
        if was_training:
            net.train()

    w = {"layer": 15, "input": 20, "output": 20, "params": 15}
    for key, r in rows.items():
        w["layer"] = max(w["layer"], len(key))
        w["input"] = max(w["input"], len(str(r["input"])))
        w["output"] = max(w["output"], len(str(r["output"])))
        w["params"] = max(w["params"], len(str(r["params"])))
    width = max(75, sum(w.values()) + 5)
    header = (f"{'Layer (type)':^{w['layer']}} {'Input Shape':^{w['input']}} "
              f"{'Output Shape':^{w['output']}} {'Param #':^{w['params']}}")
    lines = ["-" * width, header, "=" * width]
    for key, r in rows.items():
        lines.append(f"{key:^{w['layer']}} {r['input']!s:^{w['input']}} "
                     f"{r['output']!s:^{w['output']}} {r['params']:^{w['params']},}")
    total = sum(r["params"] for r in rows.values())
    trainable = sum(r["trainable"] for r in rows.values())
    input_mb = sum(abs(_numel(s)) for s in sizes) * 4.0 / 1024**2
    out_mb = 2.0 * sum(_numel(r["output"]) for r in rows.values()) * 4.0 / 1024**2
    params_mb = total * 4.0 / 1024**2
    lines += ["=" * width,
              f"Total params: {total:,}",
              f"Trainable params: {trainable:,}",
              f"Non-trainable params: {total - trainable:,}",
              "-" * width,
              f"Input size (MB): {input_mb:0.2f}",
              f"Forward/backward pass size (MB): {out_mb:0.2f}",
              f"Params size (MB): {params_mb:0.2f}",
              f"Estimated Total Size (MB): {input_mb + out_mb + params_mb:0.2f}",
              "-" * width]
    print("\n".join(lines) + "\n")  # (Paddle prints its summary string, which ends in a newline)
    return {"total_params": total, "trainable_params": trainable}


__all__ = ["summary"]
