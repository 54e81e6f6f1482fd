"""Kernels of the optimizer updates (Paddle's formulas; see the op docstrings)."""

from __future__ import annotations

import numpy as np

from pullback.dialects import pd
from pullback.runtime.interpreter import kernel


@kernel(pd.SgdOp)
def sgd(op, param: np.ndarray, grad: np.ndarray) -> np.ndarray:
    """`param - lr * grad`."""
    return param - op.prop("learning_rate") * grad


@kernel(pd.MomentumOp)
def momentum(op, param: np.ndarray, grad: np.ndarray, velocity: np.ndarray):
    """Paddle's momentum step (plain or Nesterov)."""
    mu, lr = op.prop("mu"), op.prop("learning_rate")
    velocity_out = mu * velocity + grad
    if op.prop("use_nesterov"):
        return param - (grad + mu * velocity_out) * lr, velocity_out
    return param - lr * velocity_out, velocity_out


@kernel(pd.AdamOp)
def adam(op, param, grad, moment1, moment2, beta1_pow, beta2_pow):
    """Paddle's adam step (see `pd.AdamOp`)."""
    b1, b2, eps, lr = (op.prop(k) for k in ("beta1", "beta2", "epsilon", "learning_rate"))
    m1 = b1 * moment1 + (1 - b1) * grad
    m2 = b2 * moment2 + (1 - b2) * grad * grad
    # beta*_pow hold one element; their shape ([1] or []) stays theirs.
    b1p, b2p = beta1_pow.reshape(()), beta2_pow.reshape(())
    lr_t = lr * np.sqrt(1 - b2p) / (1 - b1p)
    param_out = param - lr_t * (m1 / (np.sqrt(m2) + eps * np.sqrt(1 - b2p)))
    return param_out, m1, m2, beta1_pow * b1, beta2_pow * b2
