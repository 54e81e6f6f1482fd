"""Fuzzer specs of the nn family: matmul, linear, embedding lookup, convolutions,
pooling, layer and batch norm, dropout.

Operand shapes are drawn to fit each other (images NCHW, weights matching their
channels); batch norm's running variance is drawn from its declared domain, the
window ops' default padding algorithm is the one they declare.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pullback.dialects import pd

from ..gen import Draw, Gen, Rejected, Spec, bounded, registry

SPECS: dict[type[pd.PdOp], Spec] = {}
spec = registry(SPECS)

VARIANCE = Draw(fresh_margin=0.5, span=2.0)
"""Running variances: in batch norm's domain, well away from 0."""


@spec(pd.MatmulOp)
def _matmul(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: 1 <= v.array.ndim <= 4 and bounded(1e3)(v))
    xs = g.val(x).array.shape
    tx = len(xs) >= 2 and g.coin(0.3)
    ty = g.coin(0.3)
    k = xs[-2] if tx else xs[-1]
    n = g.randint(1, 3)
    batch = list(xs[:-2])
    if batch and g.coin(0.5):
        batch = batch[g.randint(0, len(batch)):]
        batch = [1 if g.coin(0.3) else b for b in batch]
    yshape = [k] if g.coin(0.2) else [*batch, *((n, k) if ty else (k, n))]
    if len(yshape) == 1:
        ty = False
    y = g.pick(lambda v: v.array.shape == tuple(yshape) and None not in v.decl)
    if y is None:
        y = g.add_input(g.floats(yshape), dynamic=False)
    if g.coin(0.2) and len(xs) <= len(yshape):
        return (y, x), {}  # swapped, untransposed: rejected unless the shapes agree
    return (x, y), {"transpose_x": tx, "transpose_y": ty}


@spec(pd.LinearOp)
def _linear(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: 2 <= v.array.ndim <= 4 and bounded(1e3)(v))
    k, n = g.val(x).array.shape[-1], g.randint(1, 3)
    w = g.pick(lambda v: v.array.shape[0] == k and v.array.ndim == 2 and None not in v.decl)
    if w is None:
        w = g.add_input(g.floats([k, n]), dynamic=False)
    n = g.val(w).array.shape[1]
    bias = g.pick(lambda v: v.array.shape == (n,) and None not in v.decl)
    if bias is None:
        bias = g.add_input(g.floats([n]), dynamic=False)
    return (x, w, bias), {}


@spec(pd.LookupTableOp)
def _lookup(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    w = g.float_val(lambda v: v.array.ndim == 2 and None not in v.decl, make=lambda: g.floats((g.randint(2, 5), g.randint(1, 3))))
    vocab = g.val(w).array.shape[0]
    ids = g.add_input(g.ints(g.shape(g.randint(1, 2), 8), vocab))
    props: dict[str, Any] = {}
    if g.coin(0.3):
        props["padding_idx"] = g.randint(-vocab, vocab - 1)
    return (ids, w), props


def _image(g: Gen, channels: int | None = None) -> int:
    def make() -> np.ndarray:
        return g.floats((g.randint(1, 2), channels or g.randint(1, 3), g.randint(3, 5), g.randint(3, 5)))

    return g.float_val(lambda v: v.array.ndim == 4 and (channels is None or v.decl[1] == channels)
                       and v.decl[1] is not None and v.array.size <= 120 and bounded(1e3)(v), make=make)


def _window(g: Gen, op: type[pd.PdOp]) -> dict[str, Any]:
    props: dict[str, Any] = {"strides": [g.randint(1, 2), g.randint(1, 2)]}
    algo = g.choice(["EXPLICIT", "EXPLICIT", "SAME", "VALID"])
    if algo != op.prop_specs()["padding_algorithm"]:
        props["padding_algorithm"] = algo
    props["paddings"] = [g.randint(0, 1) for _ in range(g.choice([2, 4]))]
    return props


@spec(pd.Conv2DOp)
def _conv2d(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = _image(g)
    c = g.val(x).array.shape[1]
    groups = g.choice([d for d in (1, 2, 3) if c % d == 0])
    o = groups * g.randint(1, 2)
    kh, kw = g.randint(1, 3), g.randint(1, 3)
    if max(kh, kw) > min(g.val(x).array.shape[2:]):
        raise Rejected("window larger than the image")
    w = g.add_input(g.floats((o, c // groups, kh, kw)) * 0.5)
    props = _window(g, pd.Conv2DOp)
    props["groups"] = groups
    if g.coin(0.2):
        props["dilations"] = [g.randint(1, 2), 1]
    return (x, w), props


@spec(pd.Conv2DTransposeOp)
def _conv2d_transpose(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = _image(g)
    c = g.val(x).array.shape[1]
    groups = g.choice([d for d in (1, 2, 3) if c % d == 0])
    w = g.add_input(g.floats((c, g.randint(1, 2), g.randint(1, 3), g.randint(1, 3))) * 0.5)
    props: dict[str, Any] = {"strides": [g.randint(1, 2), g.randint(1, 2)], "paddings": [g.randint(0, 1), g.randint(0, 1)],
                             "groups": groups}
    if g.coin(0.3):
        props["output_padding"] = [g.randint(0, props["strides"][0] - 1), g.randint(0, props["strides"][1] - 1)]
    return (x, w), props


@spec(pd.Pool2DOp)
def _pool2d(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = _image(g)
    props = _window(g, pd.Pool2DOp)
    props["pooling_type"] = g.choice(["max", "avg"])
    props["ksize"] = [g.randint(1, 3), g.randint(1, 3)]
    if props.get("padding_algorithm") != "VALID" and g.coin(0.3):
        props["ceil_mode"] = True
    if g.coin(0.3):
        props["exclusive"] = False
    if g.coin(0.1):
        props["global_pooling"] = True
    elif g.coin(0.15):
        props = {"pooling_type": props["pooling_type"], "ksize": [g.randint(1, 3), g.randint(1, 3)], "adaptive": True}
    return (x,), props


@spec(pd.LayerNormOp)
def _layer_norm(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim >= 2 and None not in v.decl[1:] and bounded(1e3)(v))
    shape = g.val(x).array.shape
    begin = g.randint(1, len(shape) - 1)
    n = int(np.prod(shape[begin:]))
    params = [g.add_input(g.floats((n,), 0.5, 1.5)) for _ in range(g.choice([0, 1, 2, 2]))]
    return (x, *params), {"begin_norm_axis": begin, "epsilon": g.choice([1e-5, 1e-3])}


@spec(pd.BatchNormOp)
def _batch_norm(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: 2 <= v.array.ndim <= 4 and v.decl[1] is not None and v.array.shape[0] * int(
        np.prod(v.array.shape[2:])) > 1 and bounded(1e3)(v), make=lambda: g.floats((g.randint(2, 3), g.randint(1, 3), 2)))
    c = g.val(x).array.shape[1]
    scale, bias = g.add_input(g.floats((c,), 0.5, 1.5)), g.add_input(g.floats((c,)))
    mean = g.add_input(g.floats((c,)), grad=False)
    var = g.add_input(g.floats((c,), *VARIANCE.range(pd.BatchNormOp.input_domain("variance"))), grad=False)
    props: dict[str, Any] = {"momentum": g.choice([0.9, 0.5])}
    if g.coin(0.3):
        props["is_test"] = True
    elif g.coin(0.2):
        props["use_global_stats"] = True
    return (x, scale, bias, mean, var), props


@spec(pd.DropoutOp)
def _dropout(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(bounded(1e3))
    props: dict[str, Any] = {"dropout_prob": g.choice([0.0, 0.25, 0.5]), "seed": g.randint(1, 1000)}
    if g.coin(0.3):
        props["dropout_implementation"] = "downgrade_in_infer"
    if g.coin(0.2):
        props["is_test"] = True
    if g.coin(0.3):
        return (x, g.add_input(np.array(g.randint(1, 1000), dtype=np.int64))), props
    return (x,), props


__all__ = ["SPECS", "VARIANCE"]
