"""Optimizer updates: interpreter steps against Paddle's formulas written out by hand
(scalar Python, independent of the kernels' numpy), typing, result names, and their
place in AD (no gradient flows through them)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from pullback.dialects import pd
from pullback.passes import vjp as vjp_rules
from pullback.runtime.interpreter import evaluate
from pullback.runtime.kernels import load_all

load_all()
RNG = np.random.default_rng(7)


def step(op_cls: type[pd.PdOp], *arrays: np.ndarray, **props: Any) -> list[np.ndarray]:
    """Run one update on parameters holding `arrays`; returns every result."""
    dtype = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64"}
    ins = [pd.ParameterOp.make(f"s{i}", list(a.shape), dtype[a.dtype]) for i, a in enumerate(arrays)]
    op = op_cls.make(*[p.out for p in ins], **props)
    op.verify()
    env = evaluate([op], {p.out: a for p, a in zip(ins, arrays)})
    outs = [env[r] for r in op.results]
    for r, v in zip(op.results, outs):
        assert v.dtype == arrays[0].dtype and v.shape == tuple(pd.shape_of(r.type))
    return outs


def lr_(v: float, dtype: Any = np.float64) -> np.ndarray:
    return np.array([v], dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sgd(dtype):
    w, g = RNG.standard_normal((3, 2)).astype(dtype), RNG.standard_normal((3, 2)).astype(dtype)
    (out,) = step(pd.SgdOp, w, g, lr_(0.1, dtype))
    np.testing.assert_allclose(out, w - 0.1 * g, rtol=1e-6)


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_steps(nesterov):
    w = np.array([1.0, -2.0, 0.5])
    v = np.zeros(3)
    grads = [np.array([0.5, 1.0, -1.0]), np.array([0.25, -0.5, 2.0])]
    # Hand-computed with Paddle's formulas for the first element over two steps.
    # step 1: v = 0.5;        w = 1 - 0.1*0.5 = 0.95  (nesterov: 1 - 0.1*(0.5 + 0.45) = 0.905)
    # step 2: v = 0.45+0.25 = 0.7; w -= 0.1*0.7  (nesterov: w -= 0.1*(0.25 + 0.63))
    want_w0 = 0.905 - 0.1 * (0.25 + 0.9 * 0.7) if nesterov else 0.95 - 0.07
    for g in grads:
        w, v = step(pd.MomentumOp, w, g, lr_(0.1), v, mu=0.9, use_nesterov=nesterov)
    assert math.isclose(v[0], 0.7, rel_tol=1e-12)
    assert math.isclose(w[0], want_w0, rel_tol=1e-12)


def test_momentum_fused_l2_decay_and_rescale():
    # Paddle's kernel: g = rescale * grad + coeff * param, then the momentum step.
    w, g, v = np.array([2.0]), np.array([1.0]), np.array([0.5])
    w1, v1 = step(pd.MomentumOp, w, g, lr_(0.1), v, mu=0.9, rescale_grad=0.5,
                  regularization_method="l2_decay", regularization_coeff=0.1)
    # g' = 0.5 + 0.2 = 0.7; v = 0.45 + 0.7 = 1.15; w = 2 - 0.115
    assert math.isclose(v1[0], 1.15, rel_tol=1e-12) and math.isclose(w1[0], 1.885, rel_tol=1e-12)


def adam_reference(w, g, m1, m2, b1p, b2p, lr, b1, b2, eps):
    """Paddle's adam step, scalar by scalar in Python floats."""
    out = []
    for p, gi, a, b in zip(w, g, m1, m2):
        a = b1 * a + (1 - b1) * gi
        b = b2 * b + (1 - b2) * gi * gi
        lr_t = lr * math.sqrt(1 - b2p) / (1 - b1p)
        out.append((p - lr_t * a / (math.sqrt(b) + eps * math.sqrt(1 - b2p)), a, b))
    ws, a1, a2 = (np.array(c) for c in zip(*out))
    return ws, a1, a2, b1p * b1, b2p * b2


@pytest.mark.parametrize("pow_shape", [(1,), ()])
def test_adam_steps(pow_shape):
    props = {"beta1": 0.8, "beta2": 0.95, "epsilon": 1e-3}
    w = np.array([0.5, -1.0, 2.0])
    m1, m2 = np.zeros(3), np.zeros(3)
    b1p, b2p = np.full(pow_shape, 0.8), np.full(pow_shape, 0.95)  # Paddle starts at beta
    ref = (w.copy(), m1.copy(), m2.copy(), 0.8, 0.95)
    for t in range(3):
        g = np.array([0.1, -0.3, 1.5]) * (t + 1)
        w, m1, m2, b1p, b2p = step(pd.AdamOp, w, g, lr_(0.01), m1, m2, b1p, b2p, **props)
        ref = adam_reference(ref[0], g, ref[1], ref[2], ref[3], ref[4], 0.01, 0.8, 0.95, 1e-3)
        for got, want in zip((w, m1, m2), ref[:3]):
            np.testing.assert_allclose(got, want, rtol=1e-12)
        assert b1p.shape == pow_shape
        assert math.isclose(float(b1p.reshape(())), ref[3]) and math.isclose(float(b2p.reshape(())), ref[4])


def test_adam_first_step_by_hand():
    # One element, float32: g = 1, m = v = 0, beta pows = beta.
    # m1 = 0.1, m2 = 0.001, lr_t = 0.001 * sqrt(0.001) / 0.1, eps' = 1e-8 * sqrt(0.001)
    w, m1, m2, b1p, b2p = step(
        pd.AdamOp, *(np.array(v, np.float32) for v in ([1.0], [1.0], [0.001], [0.0], [0.0], [0.9], [0.999]))
    )
    lr_t = 0.001 * math.sqrt(0.001) / 0.1
    want = 1.0 - lr_t * 0.1 / (math.sqrt(0.001) + 1e-8 * math.sqrt(0.001))
    assert math.isclose(float(w[0]), want, rel_tol=1e-6)
    assert math.isclose(float(m1[0]), 0.1, rel_tol=1e-6) and math.isclose(float(m2[0]), 0.001, rel_tol=1e-5)
    assert math.isclose(float(b1p[0]), 0.81, rel_tol=1e-6) and math.isclose(float(b2p[0]), 0.998001, rel_tol=1e-6)


@pytest.mark.parametrize("with_decay", [True, False])
def test_adamw_decays_before_the_adam_step(with_decay):
    w, g = np.array([0.5, -1.0]), np.array([0.2, 0.4])
    zeros = np.zeros(2)
    outs = step(pd.AdamwOp, w, g, lr_(0.1), zeros, zeros, lr_(0.9), lr_(0.999),
                coeff=0.5, lr_ratio=0.4, with_decay=with_decay)
    rate = 0.1 * 0.4
    decayed = w - rate * 0.5 * w if with_decay else w
    want = adam_reference(decayed, g, zeros, zeros, 0.9, 0.999, rate, 0.9, 0.999, 1e-8)
    for got, ref in zip(outs, want):
        np.testing.assert_allclose(got.reshape(-1), np.reshape(ref, -1), rtol=1e-12)


@pytest.mark.parametrize("weight_decay,always_adapt", [(0.01, False), (0.0, False), (0.0, True)])
def test_lamb_step_by_hand(weight_decay, always_adapt):
    w, g = np.array([3.0, 4.0]), np.array([1.0, -2.0])
    m1, m2 = np.array([0.1, 0.2]), np.array([0.3, 0.4])
    b1p, b2p = 0.9**2, 0.999**2
    outs = step(pd.LambOp, w, g, lr_(0.1), m1, m2, lr_(b1p), lr_(b2p),
                weight_decay=weight_decay, always_adapt=always_adapt)
    r, n1, n2 = [], [], []
    for p, gi, a, b in zip(w, g, m1, m2):
        a, b = 0.9 * a + 0.1 * gi, 0.999 * b + 0.001 * gi * gi
        n1.append(a)
        n2.append(b)
        r.append((a / (1 - b1p)) / (math.sqrt(b / (1 - b2p)) + 1e-6) + weight_decay * p)
    p_norm, r_norm = 5.0, math.sqrt(sum(x * x for x in r))
    ratio = p_norm / r_norm if (weight_decay > 0 or always_adapt) else 1.0
    np.testing.assert_allclose(outs[0], [p - 0.1 * ratio * x for p, x in zip(w, r)], rtol=1e-12)
    np.testing.assert_allclose(outs[1], n1, rtol=1e-12)
    np.testing.assert_allclose(outs[2], n2, rtol=1e-12)
    np.testing.assert_allclose(outs[3], [b1p * 0.9], rtol=1e-12)


def test_adamax_step_by_hand():
    w, g, m, u = np.array([1.0, 2.0]), np.array([0.5, -3.0]), np.array([0.1, 0.2]), np.array([1.0, 1.0])
    outs = step(pd.AdamaxOp, w, g, lr_(0.1), m, u, lr_(0.9**3), beta1=0.9, beta2=0.999, epsilon=1e-8)
    mm = [0.9 * a + 0.1 * gi for a, gi in zip(m, g)]
    uu = [max(0.999 * b + 1e-8, abs(gi)) for b, gi in zip(u, g)]
    lr_t = 0.1 / (1 - 0.9**3)
    np.testing.assert_allclose(outs[0], [p - lr_t * a / b for p, a, b in zip(w, mm, uu)], rtol=1e-12)
    np.testing.assert_allclose(outs[1], mm, rtol=1e-12)
    np.testing.assert_allclose(outs[2], uu, rtol=1e-12)


def test_adagrad_step_by_hand():
    w, g, m = np.array([1.0, -1.0]), np.array([0.3, 0.4]), np.array([0.1, 0.0])
    w1, m1 = step(pd.AdagradOp, w, g, lr_(0.5), m, epsilon=1e-6)
    mm = [0.1 + 0.09, 0.16]
    np.testing.assert_allclose(m1, mm, rtol=1e-12)
    np.testing.assert_allclose(w1, [p - 0.5 * gi / (math.sqrt(a) + 1e-6) for p, gi, a in zip(w, g, mm)], rtol=1e-12)


def test_adadelta_step_by_hand():
    w, g = np.array([1.0, -1.0]), np.array([0.3, -0.4])
    asg, asu = np.array([0.2, 0.1]), np.array([0.05, 0.0])
    w1, g2, u2 = step(pd.AdadeltaOp, w, g, lr_(0.5), asg, asu, rho=0.9, epsilon=1e-6)
    for i in range(2):
        a = 0.9 * asg[i] + 0.1 * g[i] ** 2
        upd = -math.sqrt((asu[i] + 1e-6) / (a + 1e-6)) * g[i]
        assert math.isclose(g2[i], a, rel_tol=1e-12)
        assert math.isclose(u2[i], 0.9 * asu[i] + 0.1 * upd * upd, rel_tol=1e-12)
        assert math.isclose(w1[i], w[i] + 0.5 * upd, rel_tol=1e-12)


@pytest.mark.parametrize("centered", [False, True])
def test_rmsprop_step_by_hand(centered):
    w, g = np.array([1.0, -1.0]), np.array([0.3, -0.4])
    mom, ms, mg = np.array([0.01, 0.02]), np.array([0.2, 0.1]), np.array([0.05, -0.05])
    outs = step(pd.RmspropOp, w, g, lr_(0.1), mom, ms, mg, decay=0.9, epsilon=1e-6,
                momentum=0.5, centered=centered)
    for i in range(2):
        s = 0.9 * ms[i] + 0.1 * g[i] ** 2
        a = 0.9 * mg[i] + 0.1 * g[i] if centered else mg[i]
        denom = math.sqrt(s - a * a + 1e-6) if centered else math.sqrt(s + 1e-6)
        m = 0.5 * mom[i] + 0.1 * g[i] / denom
        for got, want in zip((outs[0][i], outs[1][i], outs[2][i], outs[3][i]), (w[i] - m, m, s, a)):
            assert math.isclose(got, want, rel_tol=1e-12)


def test_updates_are_not_pure_and_not_differentiable():
    vjp_rules.load_all()
    for cls in pd.OPTIMIZER_OPS:
        assert not cls.has_trait(Pure)
        assert cls in vjp_rules.NON_DIFFERENTIABLE and cls not in vjp_rules.VJP_RULES


def test_result_names_follow_state():
    w = pd.ParameterOp.make("fc_0.w_0", [3])
    v = pd.ParameterOp.make("fc_0.w_0_velocity_0", [3], trainable=False)
    lr = pd.ParameterOp.make("learning_rate_0", [1], trainable=False)
    op = pd.MomentumOp.make(w.out, w.out, lr.out, v.out, mu=0.9, name=["fc_0.w_0", "fc_0.w_0_velocity_0"])
    assert pd.result_names(op) == ["fc_0.w_0", "fc_0.w_0_velocity_0"]
    assert [pd.value_name(r) for r in op.results] == ["fc_0.w_0", "fc_0.w_0_velocity_0"]


@pytest.mark.parametrize(
    "op_cls,shapes,props,message",
    [
        (pd.SgdOp, [[3], [3], [2]], {}, "'pd.sgd': learning_rate must be a one-element tensor"),
        (pd.MomentumOp, [[3], [3], [1], [4]], {"mu": 0.9}, "'pd.momentum': velocity shape [4] differs from param shape [3]"),
        (pd.MomentumOp, [[3], [3], [1], [3]], {"mu": 0.9, "regularization_method": "l1"},
         "'pd.momentum': regularization_method must be"),
        (pd.AdamOp, [[3], [3], [1], [3], [3], [1, 1], [1]], {}, "'pd.adam': beta1_pow must be a one-element tensor"),
        (pd.AdamOp, [[3], [3], [1], [3], [3], [1], [1]], {"beta1": 1.5}, "'pd.adam': beta1 must be in [0, 1), got 1.5"),
        (pd.AdamOp, [[3], [3], [1], [3], [3], [1], [1]], {"epsilon": -1.0}, "'pd.adam': epsilon must be non-negative"),
        (pd.AdamaxOp, [[3], [3], [1], [3], [2], [1]], {}, "'pd.adamax': inf_norm shape [2] differs"),
        (pd.AdadeltaOp, [[3], [3], [1], [3], [3]], {"rho": 1.0}, "'pd.adadelta': rho must be in [0, 1)"),
        (pd.RmspropOp, [[3], [3], [1], [3], [3], [3]], {"momentum": -0.5}, "'pd.rmsprop': momentum must be non-negative"),
    ],
)
def test_typing_errors(op_cls, shapes, props, message):
    vals = [pd.ParameterOp.make(f"p{i}", s).out for i, s in enumerate(shapes)]
    with pytest.raises(VerifyException) as e:
        op_cls.make(*vals, **props)
    assert message in str(e.value)


def test_momentum_requires_mu():
    w = pd.ParameterOp.make("w", [3]).out
    lr = pd.ParameterOp.make("lr", [1]).out
    with pytest.raises(TypeError, match="missing properties \\['mu'\\]"):
        pd.MomentumOp.make(w, w, lr, w)
