"""Issue 32: Ctrl-C never leaves an eager optimizer step or a scheduler step half
applied (`Optimizer._apply`'s journal, `lr._as_a_unit`).  The interrupt is raised
from inside the step (`signal.raise_signal`: Python's handler raises
KeyboardInterrupt at the next bytecode, as a real Ctrl-C would)."""

from __future__ import annotations

import signal
import threading
from typing import Any

import numpy as np
import pytest

import pullback as paddle

pytestmark = pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(), reason="signals reach the main thread only"
)


def _trained_net() -> tuple[paddle.nn.Layer, paddle.optimizer.Optimizer]:
    paddle.seed(3)
    net = paddle.nn.Sequential(paddle.nn.Linear(3, 4), paddle.nn.Linear(4, 2))
    opt = paddle.optimizer.Adam(0.1, parameters=net.parameters())
    for _ in range(2):  # accumulators exist and differ from their initial values
        _loss(net).backward()
        opt.step()
    _loss(net).backward()  # gradients for the step under test
    return net, opt


def _loss(net: paddle.nn.Layer) -> Any:
    x = paddle.to_tensor(np.linspace(-1, 1, 6, dtype="float32").reshape(2, 3))
    return (net(x) ** 2).mean()


def _state(net: paddle.nn.Layer, opt: paddle.optimizer.Optimizer) -> dict[str, np.ndarray]:
    """Every parameter's and accumulator's value (copies), keyed by the parameter's
    position (names differ between two nets) and the accumulator's kind."""
    index = {p.name: i for i, p in enumerate(net.parameters())}
    out = {f"{i}": np.array(p.numpy()) for i, p in enumerate(net.parameters())}
    for acc, table in opt._accumulators.items():
        kind = acc.rstrip("_0123456789")
        for pname, t in table.items():
            out[f"{index[pname]}/{kind}"] = np.array(t.numpy())
    return out


def _interrupting(opt: paddle.optimizer.Optimizer, at: int, error: BaseException | None = None) -> None:
    """Make the `at`-th parameter update of `opt`'s next step interrupt (or raise
    `error`) right after it was applied."""
    original = opt._append_optimize_op
    calls = [0]

    def update(param: Any, grad: Any, lr_value: Any) -> Any:
        out = original(param, grad, lr_value)
        calls[0] += 1
        if calls[0] == at:
            if error is not None:
                raise error
            signal.raise_signal(signal.SIGINT)
        return out

    opt._append_optimize_op = update  # type: ignore[method-assign]


@pytest.mark.parametrize("error", [None, ValueError("a later update failed")], ids=["ctrl-c", "error"])
def test_an_interrupted_eager_step_changes_nothing(dynamic_mode: None, error: BaseException | None) -> None:
    """Ctrl-C after the second of four parameter updates (or an error there): every
    parameter and accumulator (moments, beta powers) is as before the step; the
    next step then updates all of them, as an uninterrupted step does."""
    net, opt = _trained_net()
    before = _state(net, opt)
    _interrupting(opt, 2, error)
    with pytest.raises(KeyboardInterrupt if error is None else ValueError):
        opt.step()
    after = _state(net, opt)
    assert after.keys() == before.keys()
    for k in before:
        np.testing.assert_array_equal(after[k], before[k], err_msg=k)

    del opt._append_optimize_op  # the class's again
    opt.step()
    stepped = _state(net, opt)
    ref_net, ref_opt = _trained_net()
    ref_opt.step()
    want = _state(ref_net, ref_opt)
    for k in want:
        np.testing.assert_allclose(stepped[k], want[k], rtol=1e-6, err_msg=k)
        assert not np.array_equal(stepped[k], before[k]), k


def test_an_interrupted_scheduler_step_changes_nothing() -> None:
    """Ctrl-C between `last_epoch += 1` and the new rate: the scheduler keeps its
    epoch and rate, and its next step is the one it would have made."""
    sched = paddle.optimizer.lr.StepDecay(0.5, step_size=1, gamma=0.1)
    sched.step()
    epoch, rate = sched.last_epoch, sched()

    def interrupted() -> float:
        signal.raise_signal(signal.SIGINT)
        return 0.0

    sched.get_lr = interrupted  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        sched.step()
    assert (sched.last_epoch, sched()) == (epoch, rate)
    del sched.get_lr
    sched.step()
    assert sched.last_epoch == epoch + 1
    assert sched() == pytest.approx(rate * 0.1)
