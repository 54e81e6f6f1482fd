"""paddle.optimizer, every optimizer, static and eager: trajectories against Paddle's
update rules written out in numpy (independent of the kernels), eager == static,
compiled == interpreter; weight decay (per optimizer and per parameter), gradient
clipping, learning-rate schedules in both modes, parameter groups, state dicts.

Static mode (`paddle.optimizer` / `fluid.optimizer`): `minimize` appends backward and
update ops whose results overwrite the parameters and their state in the scope; one
step of SGD, Momentum and Adam against Paddle's formulas; training the fit-a-line
example must reduce the loss.

Eager mode: `step()`/`clear_grad()` of SGD, Momentum and Adam equal Paddle's update
formulas written out in numpy, a dygraph training loop drives the loss down, and
misuse raises clear errors.

(The optimizer ops' kernels: tests/unit/ops/optimizer; schedules on their own:
test_lr_scheduler.py; regularizers and clipping on their own: test_regularize_clip.py.)"""

from __future__ import annotations

import math

import numpy as np
import pullback as paddle
import pytest
from pullback import base, fluid
from pullback.frontend import core

nn = paddle.nn

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


# ====================================================== static mode: minimize


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


def _step(static_programs, optimizer, lr_mult: float = 1.0):
    """Build, minimize, init, run one step; returns (w0, b0, scope, feed, result)."""
    main, startup = static_programs
    loss = _regression(lr_mult)
    result = optimizer.minimize(loss)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    scope = paddle.static.global_scope()
    w0, b0 = scope["fc_0.w_0"].copy(), scope["fc_0.b_0"].copy()
    feed = _feed()
    exe.run(main, feed=feed, fetch_list=[loss])
    return w0, b0, scope, feed, result


def test_minimize_returns_ops_and_params_grads(static_programs):
    *_, (ops, params_grads) = _step(static_programs, paddle.optimizer.SGD(learning_rate=0.1))
    assert [(p.name, g.name) for p, g in params_grads] == [
        ("fc_0.w_0", "fc_0.w_0@GRAD"), ("fc_0.b_0", "fc_0.b_0@GRAD"),
    ]
    # Operator views, in parameter-name order as Paddle's apply_gradients sorts them.
    assert [op.type for op in ops] == ["sgd", "sgd"]
    assert [op.output("ParamOut") for op in ops] == [["fc_0.b_0"], ["fc_0.w_0"]]
    assert [op.input("LearningRate") for op in ops] == [["learning_rate_0"]] * 2


def test_sgd_step(static_programs):
    w0, b0, scope, feed, _ = _step(static_programs, paddle.optimizer.SGD(learning_rate=0.1))
    gw, gb = _grads(w0, b0, feed)
    np.testing.assert_allclose(scope["fc_0.w_0"], w0 - 0.1 * gw, rtol=1e-5)
    np.testing.assert_allclose(scope["fc_0.b_0"], b0 - 0.1 * gb, rtol=1e-5)


def test_param_attr_learning_rate_scales_the_step(static_programs):
    w0, b0, scope, feed, _ = _step(static_programs, fluid.optimizer.SGD(learning_rate=0.1), lr_mult=0.5)
    gw, gb = _grads(w0, b0, feed)
    np.testing.assert_allclose(scope["fc_0.w_0"], w0 - 0.05 * gw, rtol=1e-5)
    np.testing.assert_allclose(scope["fc_0.b_0"], b0 - 0.1 * gb, rtol=1e-5)


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_step_and_state(static_programs, nesterov):
    main, startup = static_programs
    opt = paddle.optimizer.Momentum(learning_rate=0.1, momentum=0.9, use_nesterov=nesterov)
    w0, b0, scope, feed, _ = _step(static_programs, opt)
    assert "fc_0.w_0_velocity_0" in scope and "fc_0.b_0_velocity_0" in scope
    gw, _ = _grads(w0, b0, feed)
    v = gw  # velocity starts at zero: v1 = 0.9 * 0 + g
    step = gw + 0.9 * v if nesterov else v
    np.testing.assert_allclose(scope["fc_0.w_0_velocity_0"], v, rtol=1e-5)
    np.testing.assert_allclose(scope["fc_0.w_0"], w0 - 0.1 * step, rtol=1e-5)
    assert [p.name for p in main.all_parameters()] == ["fc_0.w_0", "fc_0.b_0"]  # state is not trainable


def test_adam_step_and_state(static_programs):
    main, startup = static_programs
    w0, b0, scope, feed, _ = _step(static_programs, paddle.optimizer.Adam(learning_rate=0.01))
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


def test_minimize_with_parameter_subset(static_programs):
    main, _ = static_programs
    loss = _regression()
    _, params_grads = paddle.optimizer.SGD(0.1, parameters=["fc_0.b_0"]).minimize(loss)
    assert [p.name for p, _ in params_grads] == ["fc_0.b_0"]
    assert sum(op.type == "sgd" for op in main.global_block().ops) == 1


@pytest.mark.usefixtures("static_programs")
def test_fit_a_line_example_trains():
    from pullback.examples import fit_a_line

    losses = fit_a_line.main(["--steps", "40"])
    assert losses[-1] < 0.05 * losses[0]
    assert all(b <= a * 1.001 for a, b in zip(losses, losses[1:]))


@pytest.mark.usefixtures("static_programs")
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


@pytest.mark.usefixtures("static_programs")
def test_minimize_needs_a_variable():
    with pytest.raises(TypeError, match="loss must be a Variable"):
        paddle.optimizer.SGD().minimize(3.0)


# ============================================== eager mode: step, clear_grad


def quadratic_step(opt_cls, steps: int, **kwargs):
    """Minimize sum(w * w * c) a few steps; returns the parameter after each step
    and the gradients seen (g = 2 * c * w)."""
    c = np.array([1.0, 2.0, -0.5])
    w = nn.Linear(1, 3).weight  # [1, 3], any trainable eager parameter
    w.set_value(np.array([[0.5, -1.0, 2.0]], dtype="float32"))
    opt = opt_cls(parameters=[w], **kwargs)
    values, grads = [], []
    for _ in range(steps):
        loss = (w * w * paddle.to_tensor(c, dtype="float32")).sum()
        loss.backward()
        grads.append(w.grad.numpy())
        before = w
        opt.step()
        assert w is before  # updated in place
        values.append(w.numpy())
        opt.clear_grad()
    return values, grads


@pytest.mark.usefixtures("dynamic_mode")
def test_sgd_step_is_param_minus_lr_grad():
    values, grads = quadratic_step(paddle.optimizer.SGD, 2, learning_rate=0.1)
    w0 = np.array([[0.5, -1.0, 2.0]])
    np.testing.assert_allclose(values[0], w0 - 0.1 * grads[0], rtol=1e-6)
    np.testing.assert_allclose(values[1], values[0] - 0.1 * grads[1], rtol=1e-6)


@pytest.mark.usefixtures("dynamic_mode")
@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_steps_follow_paddles_formula(nesterov):
    lr, mu = 0.1, 0.9
    values, grads = quadratic_step(paddle.optimizer.Momentum, 3, learning_rate=lr, momentum=mu,
                                   use_nesterov=nesterov)
    w, v = np.array([[0.5, -1.0, 2.0]]), np.zeros((1, 3))
    for got, g in zip(values, grads):
        v = mu * v + g
        w = w - lr * (g + mu * v) if nesterov else w - lr * v
        np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-6)


@pytest.mark.usefixtures("dynamic_mode")
def test_adam_steps_follow_paddles_formula():
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-8
    values, grads = quadratic_step(paddle.optimizer.Adam, 3, learning_rate=lr, beta1=b1, beta2=b2, epsilon=eps)
    w, m1, m2 = np.array([[0.5, -1.0, 2.0]]), np.zeros((1, 3)), np.zeros((1, 3))
    b1p, b2p = b1, b2
    for got, g in zip(values, grads):
        m1 = b1 * m1 + (1 - b1) * g
        m2 = b2 * m2 + (1 - b2) * g * g
        lr_t = lr * np.sqrt(1 - b2p) / (1 - b1p)
        w = w - lr_t * m1 / (np.sqrt(m2) + eps * np.sqrt(1 - b2p))
        b1p, b2p = b1p * b1, b2p * b2
        np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-6)


@pytest.mark.usefixtures("dynamic_mode")
def test_param_attr_learning_rate_scales_the_step_and_frozen_params_stay():
    layer = nn.Linear(2, 1, weight_attr=paddle.ParamAttr(learning_rate=0.5),
                      bias_attr=paddle.ParamAttr(trainable=False))
    w0, b0 = layer.weight.numpy(), layer.bias.numpy()
    opt = paddle.optimizer.SGD(learning_rate=0.2, parameters=layer.parameters())
    layer(paddle.to_tensor([[1.0, 2.0]])).sum().backward()
    g = layer.weight.grad.numpy()
    np.testing.assert_allclose(g, [[1.0], [2.0]])
    opt.step()
    np.testing.assert_allclose(layer.weight.numpy(), w0 - 0.1 * g, rtol=1e-6)
    np.testing.assert_array_equal(layer.bias.numpy(), b0)
    assert layer.bias.grad is None


@pytest.mark.usefixtures("dynamic_mode")
def test_clear_grad_zeroes_or_drops():
    layer = nn.Linear(2, 2)
    opt = paddle.optimizer.Adam(parameters=layer.parameters())
    layer(paddle.ones([1, 2])).sum().backward()
    opt.clear_grad()
    np.testing.assert_array_equal(layer.weight.grad.numpy(), np.zeros((2, 2)))
    opt.clear_grad(set_to_zero=False)
    assert layer.weight.grad is None
    opt.step()  # no gradients: nothing moves, no error


def mlp() -> nn.Layer:
    paddle.seed(7)
    return nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 3))


@pytest.mark.usefixtures("dynamic_mode")
@pytest.mark.parametrize("opt_cls,lr", [(paddle.optimizer.SGD, 0.5), (paddle.optimizer.Adam, 0.05)])
def test_training_loop_drives_cross_entropy_down(opt_cls, lr):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(64, 4)).astype("float32")
    labels = np.argmax(x[:, :3] + 0.1 * x[:, 3:], axis=1).astype("int64")
    model = mlp()
    opt = opt_cls(learning_rate=lr, parameters=model.parameters())
    loss_fn = nn.CrossEntropyLoss()
    losses = []
    for _ in range(40):
        loss = loss_fn(model(paddle.to_tensor(x)), paddle.to_tensor(labels))
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    assert losses[-1] < 0.5 * losses[0]
    accuracy = (model(paddle.to_tensor(x)).numpy().argmax(1) == labels).mean()
    assert accuracy > 0.85


@pytest.mark.usefixtures("dynamic_mode")
def test_training_loop_with_mse_and_minimize():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(32, 4)).astype("float32")
    y = (x @ np.array([[1.0], [-2.0], [0.5], [0.0]])).astype("float32")
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    opt = paddle.optimizer.Momentum(learning_rate=0.05, momentum=0.9, parameters=model.parameters())
    first = None
    for _ in range(60):
        loss = nn.MSELoss()(model(paddle.to_tensor(x)), paddle.to_tensor(y))
        loss.backward()
        _, params_grads = opt.minimize(loss)
        model.clear_gradients()
        first = first if first is not None else float(loss)
    assert len(params_grads) == 4
    assert float(loss) < 0.1 * first


@pytest.mark.usefixtures("dynamic_mode")
def test_errors():
    with pytest.raises(AttributeError, match="should not be None in dygraph mode"):
        paddle.optimizer.SGD(learning_rate=0.1)
    with pytest.raises(TypeError, match=r"parameters\[0\] must be an eager Tensor"):
        paddle.optimizer.SGD(learning_rate=0.1, parameters=[np.zeros(2)]).step()
    with pytest.raises(TypeError, match="should be an iterable of paddle Tensors"):
        paddle.optimizer.SGD(learning_rate=0.1, parameters=paddle.ones([2]))
    with pytest.raises(TypeError, match="loss must be a Tensor in eager mode"):
        paddle.optimizer.SGD(learning_rate=0.1, parameters=[]).minimize(1.0)
    core.enable_static()
    with pytest.raises(RuntimeError, match="for eager mode; in static mode use minimize"):
        paddle.optimizer.Adam(learning_rate=0.1).step()


# ------------------------------------------------ test/legacy_test/test_optimizer.py
# Ported from Paddle's own tests (the source is cited in each heading): the kind of
# program the Paddle test runs, through the public API only, written as a Paddle
# user writes it; expected values from numpy or from the values the Paddle test asserts.


def _legacy_mul_mean(program, lr_scale):
    """Paddle 1.x's way of building a program op by op: declared variables, raw
    operator types, a parameter with its own learning-rate scale."""
    block = program.global_block()
    mul_x = block.create_parameter(dtype="float32", shape=[5, 10], lod_level=0, name="mul.x",
                                   optimize_attr={"learning_rate": lr_scale})
    mul_y = block.create_var(dtype="float32", shape=[10, 8], lod_level=0, name="mul.y")
    mul_out = block.create_var(dtype="float32", shape=[5, 8], lod_level=0, name="mul.out")
    mean_out = block.create_var(dtype="float32", shape=[1], lod_level=0, name="mean.out")
    block.append_op(type="mul", inputs={"X": mul_x, "Y": mul_y}, outputs={"Out": mul_out},
                    attrs={"x_num_col_dims": 1})
    block.append_op(type="mean", inputs={"X": mul_out}, outputs={"Out": mean_out})
    return mul_x, mean_out


@pytest.mark.parametrize("lr_scale, want", [(1.1, ["scale", "sgd"]), (1.0, ["sgd"])])
@pytest.mark.parametrize("via_minimize", [True, False])
def test_optimizer_returns_every_op_of_its_pass(static_mode, lr_scale, want, via_minimize):
    init_program, program = base.framework.Program(), base.framework.Program()
    _, mean_out = _legacy_mul_mean(program, lr_scale)
    sgd = base.optimizer.SGDOptimizer(learning_rate=0.01)
    if via_minimize:
        opts, _ = sgd.minimize(mean_out, init_program)
    else:
        with base.framework.program_guard(program, init_program):
            opts = sgd.apply_gradients(sgd.backward(mean_out))
    assert [op.type for op in opts] == want
    assert program.global_block().ops[0].type == "mul"


@pytest.mark.parametrize("make, acc_attrs, update, n_init", [
    (lambda: base.optimizer.MomentumOptimizer(learning_rate=0.01, momentum=0.2), ["_velocity_acc_str"],
     "momentum", 2),
    (lambda: base.optimizer.MomentumOptimizer(learning_rate=0.01, momentum=0.2, use_nesterov=True),
     ["_velocity_acc_str"], "momentum", 2),
    (lambda: base.optimizer.AdagradOptimizer(learning_rate=0.01, epsilon=1e-6), ["_moment_acc_str"],
     "adagrad", 2),
    (lambda: base.optimizer.AdamOptimizer(learning_rate=0.01, beta1=0.9, beta2=0.999),
     ["_moment1_acc_str", "_moment2_acc_str"], "adam", 5),
])
def test_optimizer_accumulators_and_startup_ops(static_mode, make, acc_attrs, update, n_init):
    init_program, program = base.framework.Program(), base.framework.Program()
    mul_x, mean_out = _legacy_mul_mean(program, 1.1)
    opt = make()
    params_grads = base.backward.append_backward(mean_out)
    assert len(params_grads) == 1 and len(opt._accumulators) == 0
    with base.framework.program_guard(program, init_program):
        opts = opt.apply_gradients(params_grads)
    assert [op.type for op in opts] == ["scale", update]
    if update == "momentum":
        assert opts[-1].attr("use_nesterov") == opt._use_nesterov
    for attr in acc_attrs:
        assert list(opt._accumulators[getattr(opt, attr)]) == [mul_x.name]
    init_ops = init_program.global_block().ops
    assert len(init_ops) == n_init and all(op.type == "fill_constant" for op in init_ops)
    assert init_ops[-1].attr("value") == pytest.approx(0.01)  # the learning rate, created last
    assert init_ops[0].attr("value") == 0.0  # the first accumulator
