"""Lowering of the optimizer family (`dialects/pd/optimizer.py`): `sgd`, `momentum`,
`adam`.

Updates are pointwise over the parameter: they fuse with the gradient computation
that feeds them and write the parameter (and its state) in place (the ops declare
`WRITES_PERSISTABLE`; `convert_pd_to_linalg.build_entry` chooses the buffers).
"""

from __future__ import annotations

from xdsl.dialects import math as xmath
from xdsl.ir import SSAValue

from pullback.dialects import pd
from pullback.dialects.pd.base import shape_of
from pullback.lowering.core import (
    DimMap,
    Lowerer,
    Scalar,
    identity_map,
    identity_maps,
    lowers,
    pointwise,
)


@pointwise(pd.SgdOp, maps=identity_maps)
def _sgd(s: Scalar, op: pd.SgdOp, args: list[SSAValue]) -> list[SSAValue]:
    p, g = args[0], args[1]
    return [s.sub(p, s.mul(s.const(op.prop("learning_rate"), p.type), g))]


@pointwise(pd.MomentumOp, maps=identity_maps)
def _momentum(s: Scalar, op: pd.MomentumOp, args: list[SSAValue]) -> list[SSAValue]:
    # Paddle: v' = mu*v + g; p' = p - lr*(g + mu*v') if nesterov else p - lr*v'.
    p, g, v = args[0], args[1], args[2]
    t = p.type
    mu = s.const(op.prop("mu"), t)
    lr = s.const(op.prop("learning_rate"), t)
    v_new = s.add(s.mul(mu, v), g)
    step = s.add(g, s.mul(mu, v_new)) if op.prop("use_nesterov") else v_new
    return [s.sub(p, s.mul(lr, step)), v_new]


def adam_body(s: Scalar, op: pd.AdamOp, args: list[SSAValue]) -> list[SSAValue]:
    """Adam's five results for one element; operands: param, grad, moment1,
    moment2, beta1_pow, beta2_pow."""
    p, g, m1, m2, b1p, b2p = args
    t = p.type
    one = s.const(1.0, t)
    b1 = s.const(op.prop("beta1"), t)
    b2 = s.const(op.prop("beta2"), t)
    eps = s.const(op.prop("epsilon"), t)
    lr = s.const(op.prop("learning_rate"), t)
    m1n = s.add(s.mul(b1, m1), s.mul(s.sub(one, b1), g))
    m2n = s.add(s.mul(b2, m2), s.mul(s.mul(s.sub(one, b2), g), g))
    # Paddle: lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t);
    #         p' = p - lr_t * m1' / (sqrt(m2') + eps * sqrt(1 - beta2^t)).
    c2 = s.math(xmath.SqrtOp, s.sub(one, b2p))
    lr_t = s.div(s.mul(lr, c2), s.sub(one, b1p))
    denom = s.add(s.math(xmath.SqrtOp, m2n), s.mul(eps, c2))
    p_new = s.sub(p, s.div(s.mul(lr_t, m1n), denom))
    return [p_new, m1n, m2n, s.mul(b1p, b1), s.mul(b2p, b2)]


@lowers(pd.AdamOp, fusible=lambda op: (1,))
def _adam(low: Lowerer, op: pd.AdamOp) -> None:
    p, g, m1, m2, b1p, b2p = op.operands
    ident = identity_map(len(shape_of(p.type)))
    # The beta powers are 1-element tensors read at index 0 of every loop dimension.
    scalar: DimMap = tuple(None for _ in shape_of(b1p.type))
    reads = [(p, ident, False), (g, ident, True), (m1, ident, False), (m2, ident, False),
             (b1p, scalar, False), (b2p, scalar, False)]
    outs = [(low.out(r), ident) for r in op.results[:3]]
    low.generic(low.sizes_of(p), reads, outs, lambda s, a, o: adam_body(s, op, a)[:3])
    # The beta powers advance once per step, after the update has read them.
    one = identity_map(len(shape_of(b1p.type)))
    pow_outs = [(low.out(r), one) for r in op.results[3:]]
    b1, b2 = op.prop("beta1"), op.prop("beta2")
    low.generic(
        low.sizes_of(b1p), [(b1p, one, False), (b2p, one, False)], pow_outs,
        lambda s, a, o: [s.mul(a[0], s.const(b1, a[0].type)), s.mul(a[1], s.const(b2, a[1].type))],
    )


__all__ = ["adam_body"]
