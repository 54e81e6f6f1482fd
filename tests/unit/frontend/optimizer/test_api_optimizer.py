"""`paddle.optimizer` / `fluid.optimizer`: `minimize` appends backward and update ops
whose results overwrite the parameters and their state in the scope.

One step of each optimizer is checked against Paddle's formulas in numpy; training
the fit-a-line example must reduce the loss.
"""

from __future__ import annotations

import numpy as np
import pytest

import pullback as paddle
from pullback import fluid


@pytest.fixture(autouse=True)
def programs(static_programs):
    """Fresh static programs, names and scope (`conftest.static_programs`)."""
    return static_programs


def _regression(lr_mult: float = 1.0):
    x = paddle.static.data("x", [None, 3], "float32")
    y = paddle.static.data("y", [None, 1], "float32")
    pred = paddle.static.nn.fc(x, 1, weight_attr=paddle.ParamAttr(learning_rate=lr_mult))
    return paddle.mean(paddle.nn.functional.square_error_cost(pred, y))


def _feed() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(3)
    return {"x": rng.normal(size=(8, 3)).astype(np.float32), "y": rng.normal(size=(8, 1)).astype(np.float32)}


def _grads(w: np.ndarray, b: np.ndarray, feed: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    resid = feed["x"] @ w + b - feed["y"]
    n = len(resid)
    return 2 * feed["x"].T @ resid / n, 2 * resid.sum(0) / n


def _step(programs, optimizer, lr_mult: float = 1.0):
    """Build, minimize, init, run one step; returns (w0, b0, scope, feed, result)."""
    main, startup = programs
    loss = _regression(lr_mult)
    result = optimizer.minimize(loss)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    scope = paddle.static.global_scope()
    w0, b0 = scope["fc_0.w_0"].copy(), scope["fc_0.b_0"].copy()
    feed = _feed()
    exe.run(main, feed=feed, fetch_list=[loss])
    return w0, b0, scope, feed, result


def test_minimize_returns_ops_and_params_grads(programs):
    *_, (ops, params_grads) = _step(programs, paddle.optimizer.SGD(learning_rate=0.1))
    assert [(p.name, g.name) for p, g in params_grads] == [
        ("fc_0.w_0", "fc_0.w_0@GRAD"), ("fc_0.b_0", "fc_0.b_0@GRAD"),
    ]
    # Operator views, in parameter-name order as Paddle's apply_gradients sorts them.
    assert [op.type for op in ops] == ["sgd", "sgd"]
    assert [op.output("ParamOut") for op in ops] == [["fc_0.b_0"], ["fc_0.w_0"]]
    assert [op.input("LearningRate") for op in ops] == [["learning_rate_0"]] * 2


def test_sgd_step(programs):
    w0, b0, scope, feed, _ = _step(programs, paddle.optimizer.SGD(learning_rate=0.1))
    gw, gb = _grads(w0, b0, feed)
    np.testing.assert_allclose(scope["fc_0.w_0"], w0 - 0.1 * gw, rtol=1e-5)
    np.testing.assert_allclose(scope["fc_0.b_0"], b0 - 0.1 * gb, rtol=1e-5)


def test_param_attr_learning_rate_scales_the_step(programs):
    w0, b0, scope, feed, _ = _step(programs, fluid.optimizer.SGD(learning_rate=0.1), lr_mult=0.5)
    gw, gb = _grads(w0, b0, feed)
    np.testing.assert_allclose(scope["fc_0.w_0"], w0 - 0.05 * gw, rtol=1e-5)
    np.testing.assert_allclose(scope["fc_0.b_0"], b0 - 0.1 * gb, rtol=1e-5)


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_step_and_state(programs, nesterov):
    main, startup = programs
    opt = paddle.optimizer.Momentum(learning_rate=0.1, momentum=0.9, use_nesterov=nesterov)
    w0, b0, scope, feed, _ = _step(programs, opt)
    assert "fc_0.w_0_velocity_0" in scope and "fc_0.b_0_velocity_0" in scope
    gw, _ = _grads(w0, b0, feed)
    v = gw  # velocity starts at zero: v1 = 0.9 * 0 + g
    step = gw + 0.9 * v if nesterov else v
    np.testing.assert_allclose(scope["fc_0.w_0_velocity_0"], v, rtol=1e-5)
    np.testing.assert_allclose(scope["fc_0.w_0"], w0 - 0.1 * step, rtol=1e-5)
    assert [p.name for p in main.all_parameters()] == ["fc_0.w_0", "fc_0.b_0"]  # state is not trainable


def test_adam_step_and_state(programs):
    main, startup = programs
    w0, b0, scope, feed, _ = _step(programs, paddle.optimizer.Adam(learning_rate=0.01))
    names = sorted(k for k in scope if k.startswith("fc_0.w_0_"))
    assert names == [
        "fc_0.w_0_beta1_pow_acc_0", "fc_0.w_0_beta2_pow_acc_0",
        "fc_0.w_0_moment1_0", "fc_0.w_0_moment2_0",
    ]
    gw, _ = _grads(w0, b0, feed)
    m1, m2 = 0.1 * gw, 0.001 * gw * gw
    lr_t = 0.01 * np.sqrt(1 - 0.999) / (1 - 0.9)
    want = w0 - lr_t * m1 / (np.sqrt(m2) + 1e-8 * np.sqrt(1 - 0.999))
    np.testing.assert_allclose(scope["fc_0.w_0"], want, rtol=1e-4)
    np.testing.assert_allclose(scope["fc_0.w_0_beta1_pow_acc_0"], [0.81], rtol=1e-6)
    np.testing.assert_allclose(scope["fc_0.w_0_beta2_pow_acc_0"], [0.999 * 0.999], rtol=1e-6)
    assert 'pd.fill_constant {shape = array<i64: 1>, value = 9.000000e-01 : f64, name = "fc_0.w_0_beta1_pow_acc_0"}' in str(startup)


def test_minimize_with_parameter_subset(programs):
    main, _ = programs
    loss = _regression()
    _, params_grads = paddle.optimizer.SGD(0.1, parameters=["fc_0.b_0"]).minimize(loss)
    assert [p.name for p, _ in params_grads] == ["fc_0.b_0"]
    assert sum(op.type == "sgd" for op in main.global_block().ops) == 1


def test_fit_a_line_example_trains():
    from pullback.examples import fit_a_line

    losses = fit_a_line.main(["--steps", "40"])
    assert losses[-1] < 0.05 * losses[0]
    assert all(b <= a * 1.001 for a, b in zip(losses, losses[1:]))


@pytest.mark.parametrize(
    "make, error, fragment",
    [
        (lambda: paddle.optimizer.SGD(learning_rate="fast"), TypeError, "learning rate should be float or LRScheduler"),
        (lambda: paddle.optimizer.SGD(learning_rate=-1.0), ValueError, "learning_rate must be >= 0"),
        (lambda: paddle.optimizer.Adam(beta1=1.5), ValueError, "Invalid value of beta1, expect beta1 in [0,1)."),
        (lambda: paddle.optimizer.SGD(weight_decay="heavy"), TypeError, "weight_decay must be a float or a regularizer"),
        (lambda: paddle.optimizer.Momentum(grad_clip=object()), TypeError, "'grad_clip' should be an instance of GradientClipBase"),
    ],
)
def test_optimizer_argument_errors(make, error, fragment):
    with pytest.raises(error) as e:
        make()
    assert fragment in str(e.value)


def test_minimize_needs_a_variable():
    with pytest.raises(TypeError, match="loss must be a Variable"):
        paddle.optimizer.SGD().minimize(3.0)
