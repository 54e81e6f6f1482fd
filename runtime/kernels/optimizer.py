"""Kernels of the optimizer updates (Paddle's formulas; see the op docstrings).

The learning rate and the beta powers are one-element operands: they are read as
scalars, and a beta power's own shape (`[1]` or `[]`) is kept in its result."""

from __future__ import annotations

import numpy as np

from pullback.dialects import pd
from pullback.runtime.interpreter import kernel


def _scalar(a: np.ndarray) -> np.ndarray:
    return a.reshape(())


@kernel(pd.SgdOp)
def sgd(op, param: np.ndarray, grad: np.ndarray, lr: np.ndarray) -> np.ndarray:
    """`param - lr * grad`."""
    return param - _scalar(lr) * grad


@kernel(pd.MomentumOp)
def momentum(op, param, grad, lr, velocity):
    """Paddle's momentum step (rescaled gradient, fused L2 decay, plain or Nesterov)."""
    mu, lr = op.prop("mu"), _scalar(lr)
    g = grad * op.prop("rescale_grad")
    if op.prop("regularization_method") == "l2_decay":
        g = g + op.prop("regularization_coeff") * param
    velocity_out = mu * velocity + g
    if op.prop("use_nesterov"):
        return param - (g + mu * velocity_out) * lr, velocity_out
    return param - lr * velocity_out, velocity_out


def _adam_step(op, param, grad, lr, moment1, moment2, beta1_pow, beta2_pow):
    b1, b2, eps = (op.prop(k) for k in ("beta1", "beta2", "epsilon"))
    m1 = b1 * moment1 + (1 - b1) * grad
    m2 = b2 * moment2 + (1 - b2) * grad * grad
    b1p, b2p = _scalar(beta1_pow), _scalar(beta2_pow)
    lr_t = lr * np.sqrt(1 - b2p) / (1 - b1p)
    param_out = param - lr_t * (m1 / (np.sqrt(m2) + eps * np.sqrt(1 - b2p)))
    return param_out, m1, m2, beta1_pow * b1, beta2_pow * b2


def _skipped(skip: tuple[np.ndarray, ...]) -> bool:
    """Whether the optional `skip_update` operand (AMP's `found_inf`) holds true."""
    return bool(skip) and bool(skip[0].reshape(-1)[0])


@kernel(pd.AdamOp)
def adam(op, param, grad, lr, moment1, moment2, beta1_pow, beta2_pow, *skip):
    """Paddle's adam step (see `pd.AdamOp`); the state unchanged when skipping."""
    if _skipped(skip):
        return param, moment1, moment2, beta1_pow, beta2_pow
    return _adam_step(op, param, grad, _scalar(lr), moment1, moment2, beta1_pow, beta2_pow)


@kernel(pd.AdamwOp)
def adamw(op, param, grad, lr, moment1, moment2, beta1_pow, beta2_pow, *skip):
    """Paddle's adamw step: decoupled decay, then adam, both at `lr * lr_ratio`; the
    state unchanged (no decay either) when skipping."""
    if _skipped(skip):
        return param, moment1, moment2, beta1_pow, beta2_pow
    rate = _scalar(lr) * op.prop("lr_ratio")
    if op.prop("with_decay"):
        param = param - rate * op.prop("coeff") * param
    return _adam_step(op, param, grad, rate, moment1, moment2, beta1_pow, beta2_pow)


@kernel(pd.LambOp)
def lamb(op, param, grad, lr, moment1, moment2, beta1_pow, beta2_pow, *skip):
    """Paddle's lamb step (see `pd.LambOp`); the state unchanged when skipping."""
    if _skipped(skip):
        return param, moment1, moment2, beta1_pow, beta2_pow
    b1, b2, eps, wd = (op.prop(k) for k in ("beta1", "beta2", "epsilon", "weight_decay"))
    m1 = b1 * moment1 + (1 - b1) * grad
    m2 = b2 * moment2 + (1 - b2) * grad * grad
    b1p, b2p = _scalar(beta1_pow), _scalar(beta2_pow)
    r = (m1 / (1 - b1p)) / (np.sqrt(m2 / (1 - b2p)) + eps) + wd * param
    ratio = np.ones((), param.dtype)
    if wd > 0 or op.prop("always_adapt"):
        p_norm, r_norm = np.sqrt(np.sum(param * param)), np.sqrt(np.sum(r * r))
        if p_norm > 0 and r_norm > 0:
            ratio = p_norm / r_norm
    return param - _scalar(lr) * ratio * r, m1, m2, beta1_pow * b1, beta2_pow * b2


@kernel(pd.AdamaxOp)
def adamax(op, param, grad, lr, moment, inf_norm, beta1_pow):
    """Paddle's adamax step (the beta1 power is advanced by a separate scale)."""
    b1, b2, eps = (op.prop(k) for k in ("beta1", "beta2", "epsilon"))
    m = b1 * moment + (1 - b1) * grad
    u = np.maximum(b2 * inf_norm + eps, np.abs(grad))
    lr_t = _scalar(lr) / (1 - _scalar(beta1_pow))
    return param - lr_t * (m / u), m, u


@kernel(pd.AdagradOp)
def adagrad(op, param, grad, lr, moment):
    """Paddle's adagrad step."""
    m = moment + grad * grad
    return param - _scalar(lr) * grad / (np.sqrt(m) + op.prop("epsilon")), m


@kernel(pd.AdadeltaOp)
def adadelta(op, param, grad, lr, avg_squared_grad, avg_squared_update):
    """Paddle's adadelta step."""
    rho, eps = op.prop("rho"), op.prop("epsilon")
    asg = rho * avg_squared_grad + (1 - rho) * grad * grad
    update = -np.sqrt((avg_squared_update + eps) / (asg + eps)) * grad
    asu = rho * avg_squared_update + (1 - rho) * update * update
    return param + _scalar(lr) * update, asg, asu


@kernel(pd.RmspropOp)
def rmsprop(op, param, grad, lr, moment, mean_square, mean_grad):
    """Paddle's rmsprop step (plain or centered)."""
    rho, eps, mu = op.prop("decay"), op.prop("epsilon"), op.prop("momentum")
    ms = rho * mean_square + (1 - rho) * grad * grad
    if op.prop("centered"):
        mg = rho * mean_grad + (1 - rho) * grad
        denom = np.sqrt(ms - mg * mg + eps)
    else:
        mg = mean_grad
        denom = np.sqrt(ms + eps)
    mom = mu * moment + _scalar(lr) * grad / denom
    return param - mom, mom, ms, mg


@kernel(pd.CheckFiniteAndUnscaleOp)
def check_finite_and_unscale(op, *args):
    """Paddle's CPU kernel: `x / scale` until the first `x` holding an inf or nan,
    `x * 0` from it on; `found_inf` `[1]` bool."""
    *xs, scale = args
    inv = np.float32(1.0) / scale.reshape(()).astype(np.float32)
    found = False
    outs = []
    for x in xs:
        found = found or not bool(np.all(np.isfinite(x)))
        with np.errstate(invalid="ignore"):  # inf * 0 is nan, as in Paddle's kernel
            outs.append(x * x.dtype.type(0) if found else (x * inv).astype(x.dtype))
    return (*outs, np.array([found]))


@kernel(pd.UpdateLossScalingOp)
def update_loss_scaling(op, *args):
    """Paddle's dynamic loss scaling step (see `pd.UpdateLossScalingOp`)."""
    *xs, found_inf, scale, good, bad = args
    found = bool(found_inf.reshape(-1)[0])
    outs = [np.zeros_like(x) if found else x for x in xs]
    if op.prop("stop_update"):
        return (*outs, scale, good, bad)
    s = np.float32(scale.reshape(-1)[0])
    g, b = int(good.reshape(-1)[0]), int(bad.reshape(-1)[0])
    if found:
        g, b = 0, b + 1
        if b == op.prop("decr_every_n_nan_or_inf"):
            s, b = max(s * np.float32(op.prop("decr_ratio")), np.float32(1.0)), 0
    else:
        b, g = 0, g + 1
        if g == op.prop("incr_every_n_steps"):
            with np.errstate(over="ignore"):  # an infinite scale is not taken
                up = s * np.float32(op.prop("incr_ratio"))
            s, g = (up if np.isfinite(up) else s), 0
    return (*outs, np.full(scale.shape, s, np.float32), np.full(good.shape, g, np.int32),
            np.full(bad.shape, b, np.int32))
