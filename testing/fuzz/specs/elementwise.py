"""Fuzzer specs of the elementwise family.

Which ops the two generic specs cover is read from the dialect: every
`ElementwiseBinaryOp` but the integer-only bitwise ops, and every
`ElementwiseUnaryOp` without a spec of its own (`pd.pow`, `pd.clip`).  Each operand
is drawn from the op's declared domain (`DOMAIN`: log's x > 0, a divisor away from
0), a unary op takes integer inputs when its `INT_INPUT` fact keeps their dtype, and
a unary op's boolean properties are drawn from their declared type.  What is left
here is what the op classes cannot say: how far from a domain's edge to stay
(`Draw`), magnitudes that keep results in range, and the values of float options.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from pullback.dialects import pd

from ..case import FLOAT
from ..gen import Draw, Gen, Pred, Rejected, Spec, bounded, registry

SPECS: dict[type[pd.PdOp], Spec] = {}
spec = registry(SPECS)

# ------------------------------------------------------------------------ binary

BINARY_DRAWS: dict[type[pd.PdOp], dict[str, Draw]] = {
    # Divisors far from 0 (the quotient stays in range), positive when new.
    pd.ElementwiseDivOp: {"y": Draw(margin=0.3, limit=1e3, fresh=(0.5, 2.0))},
    pd.ElementwisePowOp: {"x": Draw(margin=0.2, limit=5, fresh_margin=0.3, span=2.0), "y": Draw(limit=3, span=2.0)},
}
"""How each binary op's operands are drawn; by default x within +-1e3 (normal when
new) and y anything that broadcasts."""

_X, _Y = Draw(limit=1e3), Draw()


def _second_operand(g: Gen, x: int, pred: Pred, low: float | None, high: float | None
                    ) -> tuple[int, dict[str, Any], bool]:
    """A y broadcasting against x: (y, props, swap x and y).  Same shape, a suffix
    with some dimensions 1, 0-d, Paddle's `axis` alignment, or the reverse."""
    xs = g.val(x).array.shape
    mode = g.choice(["same", "same", "suffix", "scalar", "axis", "reverse"])
    props: dict[str, Any] = {}
    if mode == "same":
        y = g.pick(lambda v: v.array.shape == xs and pred(v))
        if y is not None and g.coin(0.7):
            return y, props, False
        return g.like(x, low=low, high=high), props, False
    if mode == "axis" and len(xs) >= 2:
        a = g.randint(0, len(xs) - 2)
        n = g.randint(1, len(xs) - a - 1)
        ys = xs[a:a + n]
        props["axis"] = a
        return g.add_input(g.floats(ys, low, high), dynamic=False), props, False
    if mode == "scalar" or not xs:
        return g.add_input(g.floats((), low, high)), props, False
    k = g.randint(0, len(xs))
    ys = tuple(1 if g.coin(0.3) else d for d in xs[k:])
    y = g.add_input(g.floats(ys, low, high), dynamic=False)
    return y, props, mode == "reverse"


def binary(op: type[pd.PdOp]) -> Spec:
    """The spec of a broadcasting binary op: x, then a y broadcasting against it
    (`_second_operand`), each inside its declared domain."""
    draws = BINARY_DRAWS.get(op, {})
    dx, dy = draws.get("x", _X), draws.get("y", _Y)
    px, py = dx.pred(op.input_domain("x")), dy.pred(op.input_domain("y"))
    x_low, x_high = dx.range(op.input_domain("x"))
    low, high = dy.range(op.input_domain("y"))

    def draw(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
        x = g.float_val(px, make=lambda: g.floats(g.shape(), x_low, x_high))
        y, props, swap = _second_operand(g, x, py, low, high)
        if swap and not props:
            if not (px(g.val(y)) and py(g.val(x))):
                raise Rejected("operands swap out of their domains")
            return (y, x), props
        return (x, y), props

    return draw


for _binary_op in pd.ELEMENTWISE_OPS:
    if issubclass(_binary_op, pd.ElementwiseBinaryOp) and not issubclass(_binary_op, pd.BitwiseOp):
        SPECS[_binary_op] = binary(_binary_op)


@spec(pd.WhereOp)
def _where(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(bounded(1e3))
    xs = g.val(x).array.shape
    c = g.pick(lambda v: v.array.shape == xs, kind="b")
    if c is None:
        c = g.add_input(g.rng.random(xs) < 0.5, dynamic=g.val(x).decl[:1] == (None,))
    y = g.pick(lambda v: v.array.shape == xs and bounded(1e3)(v))
    if y is None or g.coin(0.3):
        y = g.like(x)
    return (c, x, y), {}


# ------------------------------------------------------------------------- unary

UNARY_DRAWS: dict[type[pd.PdOp], Draw] = {
    **{op: Draw(limit=8) for op in (pd.ExpOp, pd.SinhOp, pd.CoshOp, pd.Expm1Op)},  # exp(8) ~ 3e3
    pd.SquareOp: Draw(limit=30),
    pd.TanOp: Draw(limit=1.3, span=1.2),  # tan is steep near its poles
    pd.Log1pOp: Draw(margin=0.1, limit=1e3, fresh_margin=0.2),
}
"""How each unary op's x is drawn; by default inside its domain and within +-1e3."""

UNARY_OPTIONS: dict[type[pd.PdOp], dict[str, Sequence[Any]]] = {
    pd.ScaleOp: {"scale": [2.0, -0.5, 0.0, 1.5], "bias": [0.0, 1.0, -0.25]},
}
"""The values drawn for unary ops' non-boolean properties (booleans: a coin)."""


def unary(op: type[pd.ElementwiseUnaryOp]) -> Spec:
    """The spec of a unary op: an x inside its declared domain (uniform in it when
    new, where it is bounded), sometimes an integer x when its `INT_INPUT` keeps the
    dtype; its declared properties in declaration order, booleans by a coin."""
    d = UNARY_DRAWS.get(op, _X)
    pred, (low, high) = d.pred(op.input_domain("x")), d.range(op.input_domain("x"))
    ints = op.INT_INPUT == "same"
    options = UNARY_OPTIONS.get(op, {})
    for name, default in op.prop_specs().items():
        if name not in options and not isinstance(default, bool):
            raise TypeError(f"{op.name}: the fuzzer has no values for its property {name!r} (UNARY_OPTIONS)")

    def props(g: Gen) -> dict[str, Any]:
        return {name: g.choice(options[name]) if name in options else g.coin() for name in op.prop_specs()}

    def draw(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
        if ints and g.coin(0.2):
            return (g.int_val(),), props(g)
        return (g.float_val(pred, make=lambda: g.floats(g.shape(), low, high)),), props(g)

    return draw


@spec(pd.PowOp)
def _pow(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    factor = g.choice([2.0, 3.0, 0.5, 1.5, -1.0, -0.5, 0.0, 1.0])
    if g.coin(0.2) and factor >= 0:
        return (g.int_val(20),), {"factor": factor}  # int pow keeps the dtype
    if factor == int(factor) and factor >= 0:
        return (g.float_val(bounded(30)),), {"factor": factor}
    # Any other power is real for a positive base only: elementwise_pow's x domain.
    d, domain = Draw(margin=0.2, limit=1e3, fresh_margin=0.3, span=2.0), pd.ElementwisePowOp.input_domain("x")
    low, high = d.range(domain)
    return (g.float_val(d.pred(domain), make=lambda: g.floats(g.shape(), low, high)),), {"factor": factor}


@spec(pd.ClipOp)
def _clip(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    lo, hi = sorted(g.rng.uniform(-1.5, 1.5, 2).tolist())
    props: dict[str, Any] = {"min": lo, "max": hi}
    drop = g.choice([None, None, "min", "max"])
    if drop:
        # paddle.clip's missing bound: +-DBL_MAX, which float32 code must hold as inf.
        props[drop] = float(np.finfo(np.float64).max) * (1 if drop == "max" else -1)
    if g.coin(0.2):
        # An integer x: the bounds are truncated and saturated into its dtype.
        return (g.int_val(),), {k: v * 4 for k, v in props.items()}
    return (g.float_val(bounded(1e3)),), props


for _unary_op in pd.ELEMENTWISE_OPS:
    if issubclass(_unary_op, pd.ElementwiseUnaryOp) and _unary_op not in SPECS:
        SPECS[_unary_op] = unary(cast(type[pd.ElementwiseUnaryOp], _unary_op))


@spec(pd.CastOp)
def _cast(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    src = g.choice(["f", "f", "i", "b"])
    v = g.pick(kind=src) if src != "f" else g.pick(bounded(1e3))
    if v is None:
        v = g.float_val(bounded(1e3))
    kind = g.val(v).array.dtype.kind
    targets = [FLOAT, "int64", "int32", "bool"] if kind == "f" else [FLOAT, FLOAT, "int64"]
    return (v,), {"dtype": g.choice(targets)}


__all__ = ["BINARY_DRAWS", "SPECS", "UNARY_DRAWS", "UNARY_OPTIONS", "binary", "unary"]
