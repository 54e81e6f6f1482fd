"""`paddle.optimizer.lr`: every schedule against Paddle's documented formula, state
dicts, argument errors; Paddle's test_lr_scheduler.py ported (ReduceOnPlateau and
CosineAnnealingWarmRestarts driving static and eager optimizers, LinearLR).
(Schedules driving every optimizer are tested with the optimizers, in
test_optimizers.py.)"""

from __future__ import annotations

import math

import numpy as np
import pullback as paddle
import pytest
from pullback import base
from pullback.frontend import core
from pullback.frontend import lr as L


def _rates(sched, n: int, *step_args) -> list[float]:
    out = []
    for _ in range(n):
        out.append(sched())
        sched.step(*step_args)
    return out


@pytest.mark.parametrize(
    "make, formula",
    [
        (lambda: L.StepDecay(0.5, step_size=3, gamma=0.1), lambda e: 0.5 * 0.1 ** (e // 3)),
        (lambda: L.MultiStepDecay(0.5, milestones=[2, 5], gamma=0.5),
         lambda e: 0.5 * 0.5 ** sum(e >= m for m in (2, 5))),
        (lambda: L.ExponentialDecay(0.5, gamma=0.9), lambda e: 0.5 * 0.9**e),
        (lambda: L.NaturalExpDecay(0.5, gamma=0.1), lambda e: 0.5 * math.exp(-0.1 * e)),
        (lambda: L.InverseTimeDecay(0.5, gamma=0.1), lambda e: 0.5 / (1 + 0.1 * e)),
        (lambda: L.PolynomialDecay(0.5, decay_steps=5, end_lr=0.01, power=2.0),
         lambda e: (0.5 - 0.01) * (1 - min(e, 5) / 5) ** 2 + 0.01),
        (lambda: L.PolynomialDecay(0.5, decay_steps=4, cycle=True),
         lambda e: (0.5 - 1e-4) * (1 - e / (4 * max(1, math.ceil(e / 4)))) + 1e-4),
        (lambda: L.PiecewiseDecay([3, 6], [0.1, 0.05, 0.01]),
         lambda e: 0.1 if e < 3 else 0.05 if e < 6 else 0.01),
        (lambda: L.CosineAnnealingDecay(0.5, T_max=4, eta_min=0.1),
         lambda e: 0.1 + 0.4 * (1 + math.cos(math.pi * e / 4)) / 2),
        (lambda: L.NoamDecay(d_model=16, warmup_steps=3),
         lambda e: 16**-0.5 * (min(e**-0.5, e * 3**-1.5) if e else min(1, 0))),
        (lambda: L.LambdaDecay(0.5, lr_lambda=lambda e: 0.95**e), lambda e: 0.5 * 0.95**e),
        (lambda: L.MultiplicativeDecay(0.5, lr_lambda=lambda e: 0.9), lambda e: 0.5 * 0.9**e),
        (lambda: L.LinearWarmup(0.5, warmup_steps=4, start_lr=0.0, end_lr=0.5),
         lambda e: 0.5 * e / 4 if e < 4 else 0.5),
    ],
)
def test_schedules_follow_paddles_formulas(make, formula):
    sched = make()
    got = _rates(sched, 9)
    np.testing.assert_allclose(got, [formula(e) for e in range(9)], rtol=1e-12, atol=1e-15)
    assert sched.last_epoch == 9 and sched.last_lr == sched()


def test_cosine_annealing_is_periodic_past_t_max():
    sched = L.CosineAnnealingDecay(1.0, T_max=3)
    got = _rates(sched, 10)
    closed = [0.5 * (1 + math.cos(math.pi * e / 3)) for e in range(10)]
    np.testing.assert_allclose(got, closed, atol=1e-12)
    sched.step(epoch=2)  # a jump uses the closed form
    assert sched() == pytest.approx(closed[2])


def test_linear_warmup_wraps_a_scheduler():
    inner = L.StepDecay(0.5, step_size=2, gamma=0.5)
    sched = L.LinearWarmup(inner, warmup_steps=2, start_lr=0.1, end_lr=0.5)
    np.testing.assert_allclose(_rates(sched, 7), [0.1, 0.3, 0.5, 0.5, 0.25, 0.25, 0.125])
    state = sched.state_dict()
    assert state["LinearWarmup_LR"] == {"last_epoch": 5, "last_lr": 0.125}  # 7 steps, 2 of warm-up


def test_one_cycle_lr():
    sched = L.OneCycleLR(max_learning_rate=1.0, total_steps=10, phase_pct=0.3, end_learning_rate=0.0)
    got = _rates(sched, 10)
    init = 1.0 / 25

    def cos(a, b, pct):
        return b + (a - b) / 2 * (math.cos(math.pi * pct) + 1)

    want = [cos(init, 1.0, e / 2) if e <= 2 else cos(1.0, 0.0, (e - 2) / 7) for e in range(10)]
    np.testing.assert_allclose(got, want, atol=1e-12)
    assert got[9] == pytest.approx(0.0, abs=1e-12)
    lin = L.OneCycleLR(2.0, total_steps=6, phase_pct=0.5, anneal_strategy="linear", three_phase=False)
    assert _rates(lin, 3)[1] == pytest.approx(2 / 25 + (2 - 2 / 25) * 0.5)
    with pytest.raises(ValueError, match="Tried to step 11 times"):
        sched.step()


def test_cyclic_lr_triangular():
    sched = L.CyclicLR(base_learning_rate=0.1, max_learning_rate=0.5, step_size_up=2, step_size_down=2)
    np.testing.assert_allclose(_rates(sched, 6), [0.1, 0.3, 0.5, 0.3, 0.1, 0.3])


def test_reduce_on_plateau():
    sched = L.ReduceOnPlateau(1.0, factor=0.5, patience=1, cooldown=1)
    metrics = [5.0, 4.0, 4.0, 4.0, 4.0, 4.0, 4.0]
    rates = []
    for m in metrics:
        sched.step(m)
        rates.append(sched())
    # better, better, bad 1, bad 2 -> reduce (cooldown 1), cooldown, bad 1, bad 2 -> reduce
    assert rates == [1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25]
    sched.step(9.0)  # the cooldown epoch after a reduction ignores the metric
    sched.step(paddle.to_tensor([3.0]))
    assert sched.best == 3.0 and sched.num_bad_epochs == 0
    with pytest.raises(ValueError, match="metrics.shape should be"):
        sched.step(np.ones(2))
    with pytest.raises(TypeError, match="metrics must be"):
        sched.step("low")
    assert set(sched.state_dict()) == {"cooldown_counter", "best", "num_bad_epochs", "last_epoch", "last_lr"}
    mx = L.ReduceOnPlateau(1.0, mode="max", patience=0, threshold_mode="abs", threshold=0.5)
    mx.step(1.0)
    mx.step(1.4)  # not better by 0.5: reduce at once (patience 0)
    assert mx() == pytest.approx(0.1)


def test_state_dict_round_trip():
    a = L.ExponentialDecay(0.5, gamma=0.9)
    for _ in range(3):
        a.step()
    b = L.ExponentialDecay(0.5, gamma=0.9)
    b.set_state_dict(a.state_dict())
    assert (b.last_epoch, b()) == (3, a())
    with pytest.raises(RuntimeError, match=r"Can't find \[ last_lr \]"):
        b.set_state_dict({"last_epoch": 1})
    with pytest.warns(UserWarning, match="unused values"):
        b.set_state_dict({**a.state_dict(), "extra": 1})


def test_custom_scheduler_subclass():
    class Halving(paddle.optimizer.lr.LRScheduler):
        def get_lr(self):
            return self.base_lr * 0.5**self.last_epoch

    s = Halving(learning_rate=1.0)
    assert _rates(s, 3) == [1.0, 0.5, 0.25]
    with pytest.raises(NotImplementedError):
        paddle.optimizer.lr.LRScheduler(0.1)


@pytest.mark.parametrize(
    "make, error, fragment",
    [
        (lambda: L.StepDecay(0.1, step_size=2.5), TypeError, "'step_size' must be 'int'"),
        (lambda: L.StepDecay(0.1, step_size=2, gamma=1.5), ValueError, "gamma should be < 1.0"),
        (lambda: L.MultiStepDecay(0.1, milestones=[3, 2]), ValueError, "must be incremented"),
        (lambda: L.ExponentialDecay(0.1, gamma=1.0), ValueError, "interval (0.0, 1.0)"),
        (lambda: L.CosineAnnealingDecay(0.1, T_max=1.5), TypeError, "'T_max'"),
        (lambda: L.LambdaDecay(0.1, lr_lambda=3), TypeError, "'lr_lambda'"),
        (lambda: L.ReduceOnPlateau(0.1, mode="up"), ValueError, "mode: up is unknown"),
        (lambda: L.OneCycleLR(0.1, total_steps=0), ValueError, "'total_step' must be a positive"),
        (lambda: L.PolynomialDecay(0.1, decay_steps=0), ValueError, "'decay_steps'"),
        (lambda: L.LinearWarmup("x", 2, 0.0, 0.1), TypeError, "learning_rate should be"),
        (lambda: L.NaturalExpDecay("0.1", gamma=0.5), TypeError, "learning rate must be float"),
    ],
)
def test_argument_errors(make, error, fragment):
    with pytest.raises(error) as e:
        make()
    assert fragment in str(e.value)


# ---------------------------------------------- test/legacy_test/test_lr_scheduler.py
# Ported from Paddle's own tests (the source is cited in each heading): the kind of
# program the Paddle test runs, through the public API only, written as a Paddle
# user writes it; expected values from numpy or from the values the Paddle test asserts.


class _PlateauReference:
    """ReduceOnPlateau by its documented rule: after more than `patience` epochs
    without improvement (relative or absolute threshold), multiply the rate by
    `factor` and wait `cooldown` epochs."""

    def __init__(self, mode, threshold_mode, factor=0.5, patience=3, threshold=1e-4, cooldown=1):
        self.mode, self.threshold_mode = mode, threshold_mode
        self.factor, self.patience, self.threshold, self.cooldown = factor, patience, threshold, cooldown
        self.best = -np.inf if mode == "max" else np.inf
        self.lr, self.wait, self.bad = 1.0, 0, 0

    def _better(self, x):
        if not np.isfinite(self.best):  # the first metric
            return True
        # Paddle's relative margin is best * threshold (signed, as documented).
        margin = self.best * self.threshold if self.threshold_mode == "rel" else self.threshold
        return x < self.best - margin if self.mode == "min" else x > self.best + margin

    def step(self, metric):
        if self.wait > 0:
            self.wait -= 1
            return self.lr
        if self._better(metric):
            self.best, self.bad = metric, 0
        else:
            self.bad += 1
            if self.bad > self.patience:
                self.wait, self.bad = self.cooldown, 0
                self.lr *= self.factor
        return self.lr


@pytest.mark.parametrize("mode, threshold_mode", [("min", "rel"), ("max", "rel"), ("min", "abs"), ("max", "abs")])
def test_reduce_on_plateau_static_and_eager(mode, threshold_mode):
    kwargs = dict(learning_rate=1.0, mode=mode, factor=0.5, patience=3, threshold=1e-4,
                  threshold_mode=threshold_mode, cooldown=1, min_lr=0, epsilon=1e-8, verbose=False)
    was_dynamic = core.in_dynamic_mode()
    paddle.enable_static()
    try:
        main, start = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, start), paddle.static.scope_guard(paddle.static.Scope()), \
                base.unique_name.guard():
            x = paddle.static.create_global_var([1], 1, "float32", persistable=True)
            paddle.increment(x)
            loss = paddle.sin(x)
            scheduler = paddle.optimizer.lr.ReduceOnPlateau(**kwargs)
            adam = paddle.optimizer.Adam(learning_rate=scheduler)
            adam.minimize(loss)  # no parameters: the rate variable exists all the same
            lr_var = adam._global_learning_rate()
            test_prog = main.clone()
            exe = paddle.static.Executor(paddle.CPUPlace())
            exe.run(start)
            ref = _PlateauReference(mode, threshold_mode)
            for prog in [main] * 12 + [test_prog] * 6:
                out, lr_now = exe.run(prog, fetch_list=[loss.name, lr_var.name])
                assert lr_now[0] == np.float32(ref.lr)  # the rate the program ran with
                want = ref.step(float(out[0]))
                scheduler.step(out[0])
                assert scheduler() == want
        paddle.disable_static()
        with base.unique_name.guard():
            linear = paddle.nn.Linear(3, 3)
        scheduler = paddle.optimizer.lr.ReduceOnPlateau(**kwargs)
        adam = paddle.optimizer.Adam(learning_rate=scheduler, parameters=linear.parameters())
        ref = _PlateauReference(mode, threshold_mode)
        for epoch in range(16):
            loss = paddle.sin(paddle.to_tensor(epoch).astype("float32"))
            scheduler.step(loss)
            assert adam.get_lr() == ref.step(float(loss))
        adam1 = paddle.optimizer.Adam(learning_rate=paddle.optimizer.lr.ReduceOnPlateau(**kwargs),
                                      parameters=linear.parameters())
        adam1.set_state_dict(adam.state_dict())
        restored = adam1._learning_rate
        for key in ("cooldown_counter", "best", "num_bad_epochs", "last_epoch", "last_lr"):
            assert getattr(restored, key) == getattr(scheduler, key), key
    finally:
        paddle.disable_static() if was_dynamic else paddle.enable_static()


def test_reduce_on_plateau_argument_errors():
    L = paddle.optimizer.lr
    for kwargs in ({"factor": 2.0}, {"mode": "test"}, {"threshold_mode": "test"}):
        with pytest.raises(ValueError):
            L.ReduceOnPlateau(learning_rate=1.0, **kwargs)
    with pytest.raises(TypeError):
        L.ReduceOnPlateau(learning_rate="test")
    with pytest.raises(TypeError):
        L.ReduceOnPlateau(learning_rate=0.5).step("test")


def test_cosine_annealing_warm_restarts_static_and_eager(static_mode):
    L = paddle.optimizer.lr
    for bad in ({"T_0": -1, "T_mult": 1}, {"T_0": 1.0, "T_mult": 1}, {"T_0": 1, "T_mult": -1},
                {"T_0": 1, "T_mult": 1.0}):
        with pytest.raises(ValueError):
            L.CosineAnnealingWarmRestarts(learning_rate=0.5, **bad)
    # T_0=1, T_mult=2: periods 1, 2, 4, ... starting at epochs 0, 1, 3, 7; the rate
    # at epoch e is 0.25 * (1 + cos(pi * (e - start) / period)).
    def want(e):
        start, period = 0, 1
        while e >= start + period:
            start, period = start + period, 2 * period
        return 0.25 * (1 + np.cos(np.pi * (e - start) / period))

    scheduler = L.CosineAnnealingWarmRestarts(learning_rate=0.5, T_0=1, T_mult=2, eta_min=0)
    adam = paddle.optimizer.Adam(learning_rate=scheduler)
    main, start = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, start):
        loss = paddle.mean(paddle.static.data(name="x", shape=[3, 4]))
        adam.minimize(loss)
        lr_var = adam._global_learning_rate()
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(start)
    for epoch in range(8):
        (got,) = exe.run(main, feed={"x": np.zeros([3, 4], "float32")}, fetch_list=lr_var.name)
        assert got[0] == pytest.approx(want(epoch), rel=1e-6)
        scheduler.step(epoch + 1)
    stepped = L.CosineAnnealingWarmRestarts(learning_rate=0.5, T_0=1, T_mult=2)
    for epoch in range(8):  # stepping one epoch at a time gives the same rates
        assert stepped() == pytest.approx(want(epoch))
        stepped.step()


def test_linear_lr():
    L = paddle.optimizer.lr
    s = L.LinearLR(learning_rate=0.5, total_steps=4, start_factor=0.25, end_factor=1.0)
    got = []
    for _ in range(7):
        got.append(s())
        s.step()
    np.testing.assert_allclose(got, [0.5 * f for f in (0.25, 0.4375, 0.625, 0.8125, 1.0, 1.0, 1.0)])
    for kwargs in ({"start_factor": 0.0}, {"end_factor": 1.5}, {"total_steps": 0}):
        with pytest.raises(ValueError):
            L.LinearLR(**{"learning_rate": 0.5, "total_steps": 4, **kwargs})
