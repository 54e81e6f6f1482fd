"""`set_state_dict` never leaves a half-loaded model (issue 32): a layer skips a
wrong-shaped entry with Paddle's warning and loads the rest; an optimizer or a
learning-rate scheduler checks every entry before it assigns any."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import pullback as paddle


def _net() -> paddle.nn.Layer:
    return paddle.nn.Sequential(paddle.nn.Linear(2, 3), paddle.nn.Linear(3, 4))


def test_a_wrong_shaped_entry_is_skipped_with_paddles_warning(dynamic_mode: None) -> None:
    """Paddle 3.3.1: `UserWarning: Skip loading for 0.bias. 0.bias receives a shape
    [5], but the expected shape is [3].`, the key in both returned lists, every
    other key loaded."""
    net = _net()
    state = {k: np.full(v.shape, 7.0, "float32") for k, v in net.state_dict().items()}
    state["0.bias"] = np.full([5], 7.0, "float32")
    state["extra"] = np.ones([1], "float32")
    with pytest.warns(UserWarning, match=r"Skip loading for 0\.bias\. 0\.bias receives a shape \[5\], "
                                         r"but the expected shape is \[3\]"):
        missing, unexpected = net.set_state_dict(state)
    assert missing == ["0.bias"] and unexpected == ["0.bias", "extra"]
    sd = net.state_dict()
    for k in ("0.weight", "1.weight", "1.bias"):
        np.testing.assert_array_equal(sd[k].numpy(), np.full(sd[k].shape, 7.0))
    assert not np.all(sd["0.bias"].numpy() == 7.0)


def test_a_value_that_does_not_convert_changes_nothing(dynamic_mode: None) -> None:
    net = _net()
    before = {k: v.numpy().copy() for k, v in net.state_dict().items()}
    state = {k: np.full(v.shape, 7.0, "float32") for k, v in net.state_dict().items()}
    state["1.bias"] = np.array(["a", "b", "c", "d"])
    with pytest.raises(ValueError), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        net.set_state_dict(state)
    for k, v in net.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k])


def _trained_adam() -> tuple[paddle.nn.Layer, paddle.optimizer.Optimizer]:
    lin = paddle.nn.Linear(3, 2)
    sched = paddle.optimizer.lr.StepDecay(0.1, step_size=1)
    opt = paddle.optimizer.Adam(sched, parameters=lin.parameters())
    lin(paddle.ones([4, 3])).sum().backward()
    opt.step()
    opt.clear_grad()
    sched.step()
    return lin, opt


def _snapshot(opt: paddle.optimizer.Optimizer) -> dict[str, object]:
    return {k: (v.numpy().copy() if hasattr(v, "numpy") else dict(v)) for k, v in opt.state_dict().items()}


def test_an_optimizer_checks_every_accumulator_before_loading_any(dynamic_mode: None) -> None:
    """Paddle raises on a wrong-shaped accumulator after loading those before it;
    here it raises before loading any (and before touching the scheduler)."""
    _, opt = _trained_adam()
    before = _snapshot(opt)
    state = {k: (np.full(v.shape, 5.0, "float32") if hasattr(v, "numpy") else {"last_epoch": 9, "last_lr": 0.5})
             for k, v in opt.state_dict().items()}
    bad = sorted(k for k in state if k != "LR_Scheduler")[-1]
    state[bad] = np.zeros(7, "float32")
    with pytest.raises(ValueError, match="shape not match"):
        opt.set_state_dict(state)
    after = _snapshot(opt)
    assert after.keys() == before.keys()
    for k, v in before.items():
        if isinstance(v, dict):
            assert after[k] == v
        else:
            np.testing.assert_array_equal(after[k], v)


def test_a_scheduler_missing_a_key_changes_nothing(dynamic_mode: None) -> None:
    sched = paddle.optimizer.lr.StepDecay(0.1, step_size=1)
    sched.step()
    with pytest.raises(RuntimeError, match="last_lr"):
        sched.set_state_dict({"last_epoch": 9})
    assert sched.last_epoch == 1
    warm = paddle.optimizer.lr.LinearWarmup(paddle.optimizer.lr.StepDecay(0.1, step_size=1), 2, 0.0, 0.1)
    state = warm.state_dict()
    state["last_epoch"] = 5
    del state["LinearWarmup_LR"]
    with pytest.raises((RuntimeError, KeyError)):
        warm.set_state_dict(state)
    assert warm.last_epoch == 0
