"""Fuzzer specs of the loss family: `one_hot`, the two class losses, square error
and accuracy.

The class losses' x is drawn from its declared domain (cross_entropy's `DOMAIN`:
the log of x needs x > 0; the fuzzer keeps it below 1, as probabilities), their
default axis is the one the op declares; the rest (label shapes, soft labels,
ignore_index) is the fuzzer's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from pullback.dialects import pd

from ..case import FLOAT
from ..gen import Draw, Gen, Spec, bounded, registry
from .reduction import axis_of

SPECS: dict[type[pd.PdOp], Spec] = {}
spec = registry(SPECS)

PROBABILITIES = Draw(margin=0.02, limit=1.0, fresh_margin=0.05, span=0.95)
"""How cross_entropy's x is drawn inside its domain: probabilities, below 1."""


def labels(g: Gen, shape: Sequence[int], classes: int, dynamic: bool) -> int:
    """A new int64 input of class ids in [0, classes)."""
    return g.add_input(g.ints(shape, classes), dynamic=dynamic)


@spec(pd.OneHotOp)
def _one_hot(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    ids = g.pick(lambda v: v.array.dtype == np.int64 and v.array.size > 0 and int(v.array.min()) >= 0, kind="i")
    if ids is None or g.coin(0.4):
        ids = labels(g, g.shape(g.randint(1, 2)), 4, g.coin(0.3))
    depth = int(g.val(ids).array.max()) + 1 + g.randint(0, 2)
    return (ids,), {"depth": depth, "dtype": FLOAT}


def _class_loss(op: type[pd.PdOp], probabilities: bool) -> Spec:
    domain = op.input_domain("x")
    pred, (low, high) = PROBABILITIES.pred(domain), PROBABILITIES.range(domain)
    default_axis = op.prop_specs()["axis"]

    def draw(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
        if probabilities:
            x = g.float_val(lambda v: v.array.ndim > 0 and pred(v),
                            make=lambda: g.floats(g.shape(g.randint(1, 3)), low, high))
        else:
            x = g.float_val(lambda v: v.array.ndim > 0 and bounded(50)(v))
        xv = g.val(x)
        axis = axis_of(g, x) if g.coin(0.5) else default_axis
        c = xv.array.shape[axis]
        dyn = xv.decl[0] is None and axis % xv.array.ndim != 0
        props: dict[str, Any] = {"axis": axis}
        if g.coin(0.25):
            props["soft_label"] = True
            soft = g.rng.uniform(0.05, 1.0, xv.array.shape)
            soft /= soft.sum(axis=axis, keepdims=True)
            y = g.add_input(soft, dynamic=dyn, grad=False)
        else:
            shape = list(xv.array.shape)
            shape[axis] = 1
            y = labels(g, shape, c, dyn)
            if g.coin(0.2):
                props["ignore_index"] = int(g.val(y).array.flat[0])
        return (x, y), props

    return draw


SPECS[pd.CrossEntropyOp] = _class_loss(pd.CrossEntropyOp, probabilities=True)
SPECS[pd.SoftmaxWithCrossEntropyOp] = _class_loss(pd.SoftmaxWithCrossEntropyOp, probabilities=False)


@spec(pd.SquareErrorCostOp)
def _square_error(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(bounded(30))
    y = g.pick(lambda v: v.array.shape == g.val(x).array.shape and bounded(30)(v))
    return (x, y if y is not None else g.like(x)), {}


@spec(pd.AccuracyOp)
def _accuracy(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    n, k, c = g.randint(1, 4), g.randint(1, 3), 5
    out = g.add_input(g.floats((n, k)), grad=False)
    idx = g.add_input(np.argsort(g.rng.random((n, c)), axis=1)[:, :k].astype(np.int64))
    return (out, idx, labels(g, (n, 1), c, False)), {}


__all__ = ["PROBABILITIES", "SPECS", "labels"]
