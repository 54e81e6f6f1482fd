"""Optimizer updates: interpreter steps against Paddle's formulas computed by hand,
typing, result names, and their place in AD (no gradient flows through them)."""

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
    for r, v, a in zip(op.results, outs, arrays):
        assert v.dtype == a.dtype and v.shape == tuple(pd.shape_of(r.type))
    return outs


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sgd(dtype):
    w, g = RNG.standard_normal((3, 2)).astype(dtype), RNG.standard_normal((3, 2)).astype(dtype)
    (out,) = step(pd.SgdOp, w, g, learning_rate=0.1)
    np.testing.assert_allclose(out, w - 0.1 * g, rtol=1e-6)


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_steps(nesterov):
    w = np.array([1.0, -2.0, 0.5])
    v = np.zeros(3)
    grads = [np.array([0.5, 1.0, -1.0]), np.array([0.25, -0.5, 2.0])]
    mu, lr = 0.9, 0.1
    # Hand-computed with Paddle's formulas for the first element over two steps.
    # step 1: v = 0.5;        w = 1 - 0.1*0.5 = 0.95  (nesterov: 1 - 0.1*(0.5 + 0.45) = 0.905)
    # step 2: v = 0.45+0.25 = 0.7; w -= 0.1*0.7  (nesterov: w -= 0.1*(0.25 + 0.63))
    want_w0 = 0.905 - 0.1 * (0.25 + 0.9 * 0.7) if nesterov else 0.95 - 0.07
    for g in grads:
        w, v = step(pd.MomentumOp, w, g, v, mu=mu, learning_rate=lr, use_nesterov=nesterov)
    assert math.isclose(v[0], 0.7, rel_tol=1e-12)
    assert math.isclose(w[0], want_w0, rel_tol=1e-12)


def test_momentum_float32_matches_formula():
    w, g, v = (RNG.standard_normal((4, 3)).astype(np.float32) for _ in range(3))
    w1, v1 = step(pd.MomentumOp, w, g, v, mu=0.8, learning_rate=0.05)
    np.testing.assert_allclose(v1, 0.8 * v + g, rtol=1e-6)
    np.testing.assert_allclose(w1, w - 0.05 * (0.8 * v + g), rtol=1e-6)


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
    props = {"learning_rate": 0.01, "beta1": 0.8, "beta2": 0.95, "epsilon": 1e-3}
    w = np.array([0.5, -1.0, 2.0])
    m1, m2 = np.zeros(3), np.zeros(3)
    b1p, b2p = np.full(pow_shape, 0.8), np.full(pow_shape, 0.95)  # Paddle starts at beta
    ref = (w.copy(), m1.copy(), m2.copy(), 0.8, 0.95)
    for t in range(3):
        g = np.array([0.1, -0.3, 1.5]) * (t + 1)
        w, m1, m2, b1p, b2p = step(pd.AdamOp, w, g, m1, m2, b1p, b2p, **props)
        ref = adam_reference(ref[0], g, ref[1], ref[2], ref[3], ref[4],
                             props["learning_rate"], props["beta1"], props["beta2"], props["epsilon"])
        for got, want in zip((w, m1, m2), ref[:3]):
            np.testing.assert_allclose(got, want, rtol=1e-12)
        assert b1p.shape == pow_shape
        assert math.isclose(float(b1p.reshape(())), ref[3]) and math.isclose(float(b2p.reshape(())), ref[4])
    assert math.isclose(ref[3], 0.8**4) and math.isclose(ref[4], 0.95**4)


def test_adam_first_step_by_hand():
    # One element, float32: g = 1, m = v = 0, beta pows = beta.
    # m1 = 0.1, m2 = 0.001, lr_t = 0.001 * sqrt(0.001) / 0.1, eps' = 1e-8 * sqrt(0.001)
    w, m1, m2, b1p, b2p = step(
        pd.AdamOp, *(np.array(v, np.float32) for v in ([1.0], [1.0], [0.0], [0.0], [0.9], [0.999]))
    )
    lr_t = 0.001 * math.sqrt(0.001) / 0.1
    want = 1.0 - lr_t * 0.1 / (math.sqrt(0.001) + 1e-8 * math.sqrt(0.001))
    assert math.isclose(float(w[0]), want, rel_tol=1e-6)
    assert math.isclose(float(m1[0]), 0.1, rel_tol=1e-6) and math.isclose(float(m2[0]), 0.001, rel_tol=1e-5)
    assert math.isclose(float(b1p[0]), 0.81, rel_tol=1e-6) and math.isclose(float(b2p[0]), 0.998001, rel_tol=1e-6)


def test_updates_are_not_pure_and_not_differentiable():
    vjp_rules.load_all()
    for cls in (pd.SgdOp, pd.MomentumOp, pd.AdamOp):
        assert not cls.has_trait(Pure)
        assert cls in vjp_rules.NON_DIFFERENTIABLE and cls not in vjp_rules.VJP_RULES


def test_result_names_follow_state():
    w = pd.ParameterOp.make("fc_0.w_0", [3])
    v = pd.ParameterOp.make("fc_0.w_0_velocity_0", [3], trainable=False)
    op = pd.MomentumOp.make(w.out, w.out, v.out, mu=0.9, name=["fc_0.w_0", "fc_0.w_0_velocity_0"])
    assert pd.result_names(op) == ["fc_0.w_0", "fc_0.w_0_velocity_0"]
    assert [pd.value_name(r) for r in op.results] == ["fc_0.w_0", "fc_0.w_0_velocity_0"]


@pytest.mark.parametrize(
    "op_cls,shapes,props,message",
    [
        (pd.MomentumOp, [[3], [3], [4]], {"mu": 0.9}, "'pd.momentum': velocity shape [4] differs from param shape [3]"),
        (pd.AdamOp, [[3], [3], [3], [3], [1, 1], [1]], {}, "'pd.adam': beta1_pow must be a one-element tensor"),
        (pd.AdamOp, [[3], [3], [3], [3], [1], [1]], {"beta1": 1.5}, "'pd.adam': beta1 must be in [0, 1), got 1.5"),
        (pd.AdamOp, [[3], [3], [3], [3], [1], [1]], {"epsilon": -1.0}, "'pd.adam': epsilon must be non-negative"),
    ],
)
def test_typing_errors(op_cls, shapes, props, message):
    vals = [pd.ParameterOp.make(f"p{i}", s).out for i, s in enumerate(shapes)]
    with pytest.raises(VerifyException) as e:
        op_cls.make(*vals, **props)
    assert message in str(e.value)


def test_momentum_requires_mu():
    w = pd.ParameterOp.make("w", [3]).out
    with pytest.raises(TypeError, match="missing properties \\['mu'\\]"):
        pd.MomentumOp.make(w, w, w)
