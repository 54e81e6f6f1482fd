"""Every optimizer, static and eager: trajectories against Paddle's update rules
written out in numpy (independent of the kernels), eager == static, compiled ==
interpreter; weight decay (per optimizer and per parameter), gradient clipping,
learning-rate schedules in both modes, parameter groups, state dicts."""

from __future__ import annotations

import math

import numpy as np
import pullback as paddle
import pytest
from pullback.frontend import core

W0 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])
C = np.array([[1.0, 2.0, -0.5], [0.5, 1.5, 3.0]])
D = np.array([[0.1, -0.2, 0.3], [-0.4, 0.5, 0.05]])
STEPS = 4


def grad_of(w: np.ndarray) -> np.ndarray:
    """Gradient of the test loss `sum(c * w^2 + d * w)`."""
    return 2 * C * w + D


# ----------------------------------------------------------- numpy references


def ref_trajectory(kind: str, kw: dict, lrs: list[float], decay: float = 0.0,
                   clip: float | None = None) -> list[np.ndarray]:
    """Paddle's documented update rules, step by step (clip by norm, then L2 decay)."""
    w = W0.copy()
    st: dict[str, object] = {}
    out = []
    for t, lr in enumerate(lrs, start=1):
        g = grad_of(w)
        if clip is not None:
            g = g * clip / max(np.sqrt((g * g).sum()), clip)
        g = g + decay * w
        if kind == "sgd":
            w = w - lr * g
        elif kind == "momentum":
            mu = kw.get("momentum", 0.9)
            v = mu * st.get("v", 0.0) + g
            st["v"] = v
            w = w - lr * (g + mu * v) if kw.get("use_nesterov") else w - lr * v
        elif kind in ("adam", "adamw"):
            b1, b2, eps = kw.get("beta1", 0.9), kw.get("beta2", 0.999), kw.get("epsilon", 1e-8)
            if kind == "adamw":
                w = w - lr * kw.get("weight_decay", 0.01) * w
            m = b1 * st.get("m", 0.0) + (1 - b1) * g
            v = b2 * st.get("v", 0.0) + (1 - b2) * g * g
            st.update(m=m, v=v)
            lr_t = lr * math.sqrt(1 - b2**t) / (1 - b1**t)
            w = w - lr_t * m / (np.sqrt(v) + eps * math.sqrt(1 - b2**t))
        elif kind == "adamax":
            b1, b2, eps = kw.get("beta1", 0.9), kw.get("beta2", 0.999), kw.get("epsilon", 1e-8)
            m = b1 * st.get("m", 0.0) + (1 - b1) * g
            u = np.maximum(b2 * st.get("u", 0.0) + eps, np.abs(g))
            st.update(m=m, u=u)
            w = w - lr / (1 - b1**t) * m / u
        elif kind == "adagrad":
            m = st.get("m", kw.get("initial_accumulator_value", 0.0)) + g * g
            st["m"] = m
            w = w - lr * g / (np.sqrt(m) + kw.get("epsilon", 1e-6))
        elif kind == "adadelta":
            rho, eps = kw.get("rho", 0.95), kw.get("epsilon", 1e-6)
            asg = rho * st.get("asg", 0.0) + (1 - rho) * g * g
            upd = -np.sqrt((st.get("asu", 0.0) + eps) / (asg + eps)) * g
            st["asu"] = rho * st.get("asu", 0.0) + (1 - rho) * upd * upd
            st["asg"] = asg
            w = w + lr * upd
        elif kind == "rmsprop":
            rho, eps, mu = kw.get("rho", 0.95), kw.get("epsilon", 1e-6), kw.get("momentum", 0.0)
            ms = rho * st.get("ms", 0.0) + (1 - rho) * g * g
            if kw.get("centered"):
                mg = rho * st.get("mg", 0.0) + (1 - rho) * g
                denom = np.sqrt(ms - mg * mg + eps)
                st["mg"] = mg
            else:
                denom = np.sqrt(ms + eps)
            mom = mu * st.get("mom", 0.0) + lr * g / denom
            st.update(ms=ms, mom=mom)
            w = w - mom
        elif kind == "lamb":
            b1, b2, eps = kw.get("beta1", 0.9), kw.get("beta2", 0.999), kw.get("epsilon", 1e-6)
            wd = kw.get("lamb_weight_decay", 0.01)
            m = b1 * st.get("m", 0.0) + (1 - b1) * g
            v = b2 * st.get("v", 0.0) + (1 - b2) * g * g
            st.update(m=m, v=v)
            r = (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps) + wd * w
            pn, rn = np.sqrt((w * w).sum()), np.sqrt((r * r).sum())
            ratio = pn / rn if (pn > 0 and rn > 0 and wd > 0) else 1.0
            w = w - lr * ratio * r
        out.append(w.copy())
    return out


CASES = [
    ("sgd", paddle.optimizer.SGD, {}),
    ("momentum", paddle.optimizer.Momentum, {"momentum": 0.8}),
    ("momentum", paddle.optimizer.Momentum, {"momentum": 0.9, "use_nesterov": True}),
    ("adam", paddle.optimizer.Adam, {"beta1": 0.8, "beta2": 0.95, "epsilon": 1e-6}),
    ("adamw", paddle.optimizer.AdamW, {"weight_decay": 0.1}),
    ("adamax", paddle.optimizer.Adamax, {"beta1": 0.85}),
    ("adagrad", paddle.optimizer.Adagrad, {"initial_accumulator_value": 0.1}),
    ("adadelta", paddle.optimizer.Adadelta, {"rho": 0.9}),
    ("rmsprop", paddle.optimizer.RMSProp, {"momentum": 0.5}),
    ("rmsprop", paddle.optimizer.RMSProp, {"centered": True}),
    ("lamb", paddle.optimizer.Lamb, {"lamb_weight_decay": 0.05}),
]
IDS = [f"{k}-{'-'.join(map(str, kw.values())) or 'default'}" for k, _, kw in CASES]


# -------------------------------------------------------------- the two modes


def eager_run(make, lrs_or_sched, steps=STEPS, param_attr=None, **opt_kw):
    w = paddle.create_parameter([2, 3], "float64", attr=param_attr,
                                default_initializer=paddle.nn.initializer.Assign(W0))
    c, d = paddle.to_tensor(C), paddle.to_tensor(D)
    opt = make(learning_rate=lrs_or_sched, parameters=[w], **opt_kw)
    sched = lrs_or_sched if isinstance(lrs_or_sched, paddle.optimizer.lr.LRScheduler) else None
    out = []
    for _ in range(steps):
        (c * w * w + d * w).sum().backward()
        opt.step()
        opt.clear_grad()
        out.append(w.numpy())
        if sched is not None:
            sched.step()
    return out, opt, w


def static_run(make, lrs_or_sched, steps=STEPS, backend="interpreter", param_attr=None, **opt_kw):
    was_dynamic = core.in_dynamic_mode()
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard(), \
                paddle.static.scope_guard(paddle.static.Scope()):
            w = paddle.static.create_parameter([2, 3], "float64", attr=param_attr,
                                               default_initializer=paddle.nn.initializer.Assign(W0))
            c = paddle.static.data("c", [2, 3], "float64")
            d = paddle.static.data("d", [2, 3], "float64")
            loss = paddle.sum(c * w * w + d * w)
            opt = make(learning_rate=lrs_or_sched, **opt_kw)
            opt.minimize(loss)
            exe = paddle.static.Executor(paddle.CPUPlace(), backend=backend)
            exe.run(startup)
            scope = paddle.static.global_scope()
            sched = lrs_or_sched if isinstance(lrs_or_sched, paddle.optimizer.lr.LRScheduler) else None
            version = main.version
            out = []
            for _ in range(steps):
                exe.run(main, feed={"c": C, "d": D}, fetch_list=[loss])
                out.append(scope[w.name].copy())
                if sched is not None:
                    sched.step()
            assert main.version == version  # schedules never change the program
            return out, opt, main
    finally:
        paddle.disable_static() if was_dynamic else paddle.enable_static()


@pytest.mark.parametrize("kind, make, kw", CASES, ids=IDS)
def test_eager_and_static_follow_paddles_update_rule(dynamic_mode, kind, make, kw):
    want = ref_trajectory(kind, kw, [0.1] * STEPS)
    got_eager, *_ = eager_run(make, 0.1, **kw)
    got_static, *_ = static_run(make, 0.1, **kw)
    for e, s, r in zip(got_eager, got_static, want):
        np.testing.assert_allclose(e, r, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(s, e, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kind, make, kw", CASES, ids=IDS)
def test_compiled_backend_agrees_with_the_interpreter(kind, make, kw):
    interp, *_ = static_run(make, 0.05, steps=2, **kw)
    compiled, *_ = static_run(make, 0.05, steps=2, backend="compiled", **kw)
    for a, b in zip(interp, compiled):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


# ------------------------------------------------------- decay and clipping


@pytest.mark.parametrize("make, kind", [(paddle.optimizer.SGD, "sgd"), (paddle.optimizer.Momentum, "momentum"),
                                        (paddle.optimizer.Adam, "adam")])
def test_weight_decay_float_is_l2_in_both_modes(dynamic_mode, make, kind):
    want = ref_trajectory(kind, {}, [0.1] * STEPS, decay=0.3)
    got_eager, *_ = eager_run(make, 0.1, weight_decay=0.3)
    got_static, *_ = static_run(make, 0.1, weight_decay=paddle.regularizer.L2Decay(0.3))
    for e, s, r in zip(got_eager, got_static, want):
        np.testing.assert_allclose(e, r, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(s, r, rtol=1e-10, atol=1e-14)


def test_param_regularizer_takes_precedence_and_l1_uses_sign(dynamic_mode):
    attr = paddle.ParamAttr(regularizer=paddle.regularizer.L1Decay(0.2))
    got, *_ = eager_run(paddle.optimizer.SGD, 0.1, steps=2, param_attr=attr, weight_decay=5.0)
    static, *_ = static_run(paddle.optimizer.SGD, 0.1, steps=2, param_attr=attr, weight_decay=5.0)
    w = W0.copy()
    for e, s in zip(got, static):
        w = w - 0.1 * (grad_of(w) + 0.2 * np.sign(w))
        np.testing.assert_allclose(e, w, rtol=1e-12)
        np.testing.assert_allclose(s, w, rtol=1e-12)


def test_momentum_fuses_l2_decay_and_rescales(dynamic_mode):
    got, *_ = eager_run(paddle.optimizer.Momentum, 0.1, steps=2, momentum=0.9, weight_decay=0.2,
                        rescale_grad=0.5)
    w, v = W0.copy(), 0.0
    for e in got:
        g = 0.5 * grad_of(w) + 0.2 * w  # Paddle's kernel: rescale, then the L2 term
        v = 0.9 * v + g
        w = w - 0.1 * v
        np.testing.assert_allclose(e, w, rtol=1e-12)
    _, _, main = static_run(paddle.optimizer.Momentum, 0.1, steps=1, weight_decay=0.2)
    (mom,) = [op for op in main.global_block().ops if op.type == "momentum"]
    assert mom.attr("regularization_method") == "l2_decay" and mom.attr("regularization_coeff") == 0.2
    assert "scale" not in [op.type for op in main.global_block().ops]  # no separate decay ops


@pytest.mark.parametrize("clip_kind", ["value", "norm", "global_norm"])
def test_gradient_clipping_static_and_eager(dynamic_mode, clip_kind):
    clip = {"value": paddle.nn.ClipGradByValue(max=0.5, min=-0.25),
            "norm": paddle.nn.ClipGradByNorm(clip_norm=1.0),
            "global_norm": paddle.nn.ClipGradByGlobalNorm(clip_norm=1.0)}[clip_kind]
    got, *_ = eager_run(paddle.optimizer.SGD, 0.1, steps=3, grad_clip=clip, weight_decay=0.1)
    static, *_ = static_run(paddle.optimizer.SGD, 0.1, steps=3, grad_clip=clip, weight_decay=0.1)
    w = W0.copy()
    for e, s in zip(got, static):
        g = grad_of(w)
        if clip_kind == "value":
            g = np.clip(g, -0.25, 0.5)
        else:
            g = g * 1.0 / max(np.sqrt((g * g).sum()), 1.0)
        w = w - 0.1 * (g + 0.1 * w)  # clipping first, then decay (Paddle's order)
        np.testing.assert_allclose(e, w, rtol=1e-12)
        np.testing.assert_allclose(s, w, rtol=1e-12)


def test_global_norm_spans_parameters_and_need_clip_false_is_left_alone(dynamic_mode):
    a = paddle.create_parameter([2], "float64", default_initializer=paddle.nn.initializer.Assign([3.0, 0.0]))
    b = paddle.create_parameter([1], "float64", default_initializer=paddle.nn.initializer.Assign([4.0]))
    free = paddle.create_parameter([1], "float64", attr=paddle.ParamAttr(need_clip=False),
                                   default_initializer=paddle.nn.initializer.Assign([10.0]))
    opt = paddle.optimizer.SGD(1.0, parameters=[a, b, free], grad_clip=paddle.nn.ClipGradByGlobalNorm(1.0))
    (0.5 * (a * a).sum() + 0.5 * (b * b).sum() + 0.5 * (free * free).sum()).backward()
    opt.step()
    # grads (3, 0), (4), (10): global norm over the clipped ones is 5 -> scale 1/5.
    np.testing.assert_allclose(a.numpy(), [3.0 - 0.6, 0.0])
    np.testing.assert_allclose(b.numpy(), [4.0 - 0.8])
    np.testing.assert_allclose(free.numpy(), [0.0])
    np.testing.assert_allclose(a.grad.numpy(), [3.0, 0.0])  # .grad itself is not clipped


def test_adamw_apply_decay_param_fun_and_lamb_exclusion(dynamic_mode):
    want_no_decay = ref_trajectory("adamw", {"weight_decay": 0.0}, [0.1] * 2)
    got, *_ = eager_run(paddle.optimizer.AdamW, 0.1, steps=2, weight_decay=0.5,
                        apply_decay_param_fun=lambda name: "bias" in name)
    for g, r in zip(got, want_no_decay):
        np.testing.assert_allclose(g, r, rtol=1e-10)
    want = ref_trajectory("lamb", {"lamb_weight_decay": 0.0}, [0.1] * 2)
    got, *_ = eager_run(paddle.optimizer.Lamb, 0.1, steps=2, lamb_weight_decay=0.3,
                        exclude_from_weight_decay_fn=lambda p: True)
    for g, r in zip(got, want):
        np.testing.assert_allclose(g, r, rtol=1e-10)


# ------------------------------------------------------------ learning rates


@pytest.mark.parametrize("make, kind", [(paddle.optimizer.SGD, "sgd"), (paddle.optimizer.Adam, "adam"),
                                        (paddle.optimizer.Momentum, "momentum")])
def test_schedulers_drive_both_modes_without_recompiling(dynamic_mode, make, kind):
    def sched():
        return paddle.optimizer.lr.StepDecay(0.2, step_size=1, gamma=0.5)

    want = ref_trajectory(kind, {}, [0.2 * 0.5**i for i in range(STEPS)])
    got_eager, opt, _ = eager_run(make, sched())
    got_static, _, main = static_run(make, sched())
    for e, s, r in zip(got_eager, got_static, want):
        np.testing.assert_allclose(e, r, rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(s, r, rtol=1e-10, atol=1e-14)
    assert opt.get_lr() == pytest.approx(0.2 * 0.5**STEPS)
    assert isinstance(main.lr_scheduler, paddle.optimizer.lr.StepDecay)
    compiled, *_ = static_run(make, sched(), backend="compiled")
    for c, r in zip(compiled, want):
        np.testing.assert_allclose(c, r, rtol=1e-10, atol=1e-12)  # native code contracts into FMAs


def test_param_attr_learning_rate_scales_the_rate_op(dynamic_mode):
    attr = paddle.ParamAttr(learning_rate=0.5)
    got, *_ = eager_run(paddle.optimizer.SGD, 0.2, steps=1, param_attr=attr)
    _, _, main = static_run(paddle.optimizer.SGD, 0.2, steps=1, param_attr=attr)
    np.testing.assert_allclose(got[0], W0 - 0.1 * grad_of(W0))
    sgd = next(op for op in main.global_block().ops if op.type == "sgd")
    scale = main.global_block().var(sgd.input("LearningRate")[0]).op
    assert scale.type == "scale" and scale.attr("scale") == 0.5 and scale.input("X") == ["learning_rate_0"]


def test_get_lr_set_lr_and_set_lr_scheduler(dynamic_mode):
    w = paddle.create_parameter([2], "float32")
    opt = paddle.optimizer.Adam(0.1, parameters=[w])
    opt.set_lr(0.25)
    assert opt.get_lr() == 0.25
    with pytest.raises(TypeError, match="must be float"):
        opt.set_lr("0.1")
    sched = paddle.optimizer.lr.ExponentialDecay(0.5, gamma=0.5)
    opt.set_lr_scheduler(sched)
    assert opt.get_lr() == 0.5
    with pytest.raises(RuntimeError, match="can't be LRScheduler"):
        opt.set_lr(0.1)


def test_static_set_lr_updates_the_scope_rate():
    was_dynamic = core.in_dynamic_mode()
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        # (A fresh name generator: the rate is fetched by its name, learning_rate_0.)
        with paddle.static.program_guard(main, startup), paddle.static.scope_guard(
            paddle.static.Scope()
        ), paddle.utils.unique_name.guard():
            x = paddle.static.data("x", [None, 2])
            loss = paddle.mean(paddle.static.nn.fc(x, 1))
            opt = paddle.optimizer.SGD(0.1)
            opt.minimize(loss)
            exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
            exe.run(startup)
            opt.set_lr(0.01)
            (lr,) = exe.run(main, feed={"x": np.ones((2, 2), "float32")}, fetch_list=["learning_rate_0"])
            assert lr.tolist() == [pytest.approx(0.01)] and opt.get_lr() == 0.01
    finally:
        paddle.disable_static() if was_dynamic else paddle.enable_static()


# ------------------------------------------------------------ state and groups


def test_state_dict_names_and_round_trip(dynamic_mode):
    lin = paddle.nn.Linear(3, 2)
    sched = paddle.optimizer.lr.StepDecay(0.1, step_size=1)
    opt = paddle.optimizer.Adam(sched, parameters=lin.parameters())
    x = paddle.to_tensor(np.ones((4, 3), "float32"))
    for _ in range(2):
        lin(x).sum().backward()
        opt.step()
        opt.clear_grad()
        sched.step()
    state = opt.state_dict()
    assert set(state) == {
        "linear_0.w_0_moment1_0", "linear_0.w_0_moment2_0", "linear_0.w_0_beta1_pow_acc_0",
        "linear_0.w_0_beta2_pow_acc_0", "linear_0.b_0_moment1_0", "linear_0.b_0_moment2_0",
        "linear_0.b_0_beta1_pow_acc_0", "linear_0.b_0_beta2_pow_acc_0", "LR_Scheduler",
    }
    np.testing.assert_allclose(state["linear_0.w_0_beta1_pow_acc_0"].numpy(), [0.9**3], rtol=1e-6)
    assert state["LR_Scheduler"] == {"last_epoch": 2, "last_lr": pytest.approx(0.001)}
    # A fresh optimizer loading the state continues exactly as the first one (its
    # accumulators get the same names under fresh name counters, as in a new process).
    sched2 = paddle.optimizer.lr.StepDecay(0.1, step_size=1)
    opt2 = paddle.optimizer.Adam(sched2, parameters=lin.parameters())
    opt2.set_state_dict(state)
    assert sched2.last_epoch == 2 and opt2.get_lr() == pytest.approx(0.001)
    w = lin.weight.numpy()
    lin(x).sum().backward()
    with paddle.utils.unique_name.guard():
        opt2.step()
    after_loaded = lin.weight.numpy()
    lin.weight.set_value(w)
    opt.step()  # the grads are still there: the original optimizer's step
    np.testing.assert_allclose(lin.weight.numpy(), after_loaded, rtol=1e-6)
    with pytest.raises(ValueError, match="shape not match"):
        opt2.set_state_dict({**state, "linear_0.b_0_moment1_0": np.zeros(5, "float32")})
    opt3 = paddle.optimizer.Adam(0.1, parameters=lin.parameters())
    opt3.set_state_dict({k: v for k, v in state.items() if k != "LR_Scheduler"})
    with pytest.raises(ValueError, match="linear_0.w_0_moment1_1 should in state dict"):
        opt3.step()  # names from a name counter that moved on do not match the saved ones


def test_parameter_groups(dynamic_mode):
    a = paddle.create_parameter([2], "float64", default_initializer=paddle.nn.initializer.Assign([1.0, 2.0]))
    b = paddle.create_parameter([2], "float64", default_initializer=paddle.nn.initializer.Assign([1.0, 2.0]))
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=[
        {"params": [a]}, {"params": [b], "weight_decay": 0.5, "learning_rate": 0.1}], weight_decay=0.0)
    ((a * a).sum() + (b * b).sum()).backward()
    opt.step()
    np.testing.assert_allclose(a.numpy(), [1.0 - 0.1 * 2.0, 2.0 - 0.1 * 4.0])
    np.testing.assert_allclose(b.numpy(), [1.0 - 0.01 * (2.0 + 0.5), 2.0 - 0.01 * (4.0 + 1.0)])
    with pytest.raises(ValueError, match="more than one parameter group"):
        paddle.optimizer.SGD(0.1, parameters=[{"params": [a]}, {"params": [a]}])


def test_minimize_returns_paddles_tuple_and_clear_grad(dynamic_mode):
    lin = paddle.nn.Linear(2, 2)
    opt = paddle.optimizer.Momentum(0.1, parameters=lin.parameters())
    loss = lin(paddle.ones([1, 2])).sum()
    loss.backward()
    ops, params_grads = opt.minimize(loss)
    assert ops == [] and [p.name for p, _ in params_grads] == ["linear_0.w_0", "linear_0.b_0"]
    opt.clear_grad(set_to_zero=False)
    assert lin.weight.grad is None


@pytest.mark.parametrize(
    "make, error, fragment",
    [
        (lambda p: paddle.optimizer.Adam(0.1, beta2=1.0, parameters=p), ValueError, "expect beta2 in [0,1)"),
        (lambda p: paddle.optimizer.AdamW(0.1, weight_decay=paddle.regularizer.L2Decay(0.1), parameters=p),
         TypeError, "weight_decay should be float"),
        (lambda p: paddle.optimizer.RMSProp(0.1, epsilon=-1.0, parameters=p), ValueError, "expect epsilon >= 0"),
        (lambda p: paddle.optimizer.Adagrad(0.1, epsilon=None, parameters=p), ValueError, "epsilon is not set"),
        (lambda p: paddle.optimizer.Adadelta(0.1, rho=1.5, parameters=p), ValueError, "expect rho in [0,1)"),
        (lambda p: paddle.optimizer.SGD(paddle.to_tensor([0.1]), parameters=p), TypeError,
         "learning rate should be float or LRScheduler"),
    ],
)
def test_argument_errors(dynamic_mode, make, error, fragment):
    params = [paddle.create_parameter([2], "float32")]
    with pytest.raises(error) as e:
        make(params)
    assert fragment in str(e.value)


def test_fluid_spellings(dynamic_mode):
    lin = paddle.nn.Linear(2, 1)
    for name in ("SGDOptimizer", "MomentumOptimizer", "AdamOptimizer", "AdamaxOptimizer",
                 "AdagradOptimizer", "AdadeltaOptimizer", "RMSPropOptimizer", "LambOptimizer"):
        cls = getattr(paddle.fluid.optimizer, name)
        kwargs = {"momentum": 0.9} if name == "MomentumOptimizer" else {}
        opt = cls(learning_rate=0.01, parameter_list=lin.parameters(), **kwargs)
        lin(paddle.ones([1, 2])).sum().backward()
        opt.minimize(lin(paddle.ones([1, 2])).sum())
        lin.clear_gradients()
    assert paddle.fluid.regularizer.L2DecayRegularizer(0.1)._regularization_coeff == 0.1
    assert paddle.fluid.clip.GradientClipByGlobalNorm is paddle.nn.ClipGradByGlobalNorm
