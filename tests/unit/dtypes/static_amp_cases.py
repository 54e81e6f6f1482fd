"""A tiny float16 static program trained with `paddle.static.amp.decorate`'s dynamic
loss scaling, written once for both pullback and real Paddle (legacy static IR,
`FLAGS_enable_pir_api=0`: Paddle 3.3.1's PIR decorator fails on a CPU):
`gen_static_amp_reference.py` records Paddle's losses, scales and weights,
`test_static_amp.py` runs the same steps under pullback.

Step 2 feeds an inf: its gradients are not finite, so the step is skipped (zeroed
gradients) and the scale is halved; every second good step doubles it.  Adam, AdamW
and Lamb get the step's `found_inf` as their `SkipUpdate` input: their moments and
beta powers (recorded after every step, `state`) stay as they were too.
"""

from __future__ import annotations

from typing import Any

import numpy as np

W0 = np.array([[0.5, -0.25], [0.125, 0.75], [-0.5, 0.25]], np.float32)
RNG = np.random.default_rng(3)
FEEDS = [RNG.standard_normal((4, 3)).astype(np.float32) for _ in range(6)]
FEEDS[2][1, 1] = np.inf


ADAM_LIKE = ("adam", "adamw", "lamb")
"""The optimizers with moments and beta powers (`SkipUpdate`)."""

ACCUMULATORS = ("w_moment1_0", "w_moment2_0", "w_beta1_pow_acc_0", "w_beta2_pow_acc_0")
"""The state of `w` an Adam-like optimizer keeps (Paddle's names)."""


def make_optimizer(paddle: Any, optimizer: str) -> Any:
    """The optimizer named `optimizer`, learning rate 0.1."""
    if optimizer == "sgd":
        return paddle.optimizer.SGD(0.1)
    if optimizer == "momentum":
        return paddle.optimizer.Momentum(0.1, 0.9)
    if optimizer == "adam":
        return paddle.optimizer.Adam(0.1)
    if optimizer == "adamw":
        return paddle.optimizer.AdamW(0.1, weight_decay=0.05)
    if optimizer == "lamb":
        return paddle.optimizer.Lamb(0.1, lamb_weight_decay=0.05)
    raise ValueError(f"unknown optimizer {optimizer!r}")


def run(paddle: Any, dtype: str = "float16", optimizer: str = "sgd") -> dict[str, Any]:
    """Train 6 steps; returns the losses, the scale after each step and the final
    weights, and for Adam-like optimizers `w` and its state after each step
    (`"w_steps"`, `"state"`: one list of `ACCUMULATORS` values per step)."""
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        # Fresh names (`w_moment1_0`, `loss_scaling_0`) whatever ran before.
        with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
            x = paddle.static.data("x", [4, 3], "float32")
            w = paddle.static.create_parameter(
                [3, 2], "float32", name="w", default_initializer=paddle.nn.initializer.Assign(W0))
            b = paddle.static.create_parameter(
                [2], "float32", name="b", default_initializer=paddle.nn.initializer.Constant(0.1))
            y = paddle.nn.functional.linear(x, w, b)
            loss = paddle.mean(y * y)
            opt = make_optimizer(paddle, optimizer)
            opt = paddle.static.amp.decorate(
                opt, init_loss_scaling=1024.0, incr_every_n_steps=2, decr_every_n_nan_or_inf=1,
                incr_ratio=2.0, decr_ratio=0.5, dtype=dtype, use_dynamic_loss_scaling=True)
            opt.minimize(loss)
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        losses, scales, w_steps, state = [], [], [], []
        extra = list(ACCUMULATORS) if optimizer in ADAM_LIKE else []
        for feed in FEEDS:
            # By name: the persistables' values after the step's in-place updates.
            lv, sv, wv, bv, *acc = exe.run(
                main, {"x": feed}, fetch_list=[loss, opt.get_loss_scaling().name, "w", "b", *extra])
            losses.append(float(np.asarray(lv).reshape(-1)[0]))
            scales.append(float(np.asarray(sv).reshape(-1)[0]))
            w_steps.append(np.asarray(wv).tolist())
            state.append([np.asarray(a).tolist() for a in acc])
        out = {"losses": losses, "scales": scales, "w": np.asarray(wv).tolist(), "b": np.asarray(bv).tolist()}
        if extra:
            out.update(w_steps=w_steps, state=state)
        return out
    finally:
        paddle.disable_static()
