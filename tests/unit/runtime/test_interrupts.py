"""Issue 32: `runtime/interrupts.py` (SIGINT held back while state changes as a
unit; a compile's swallowed interrupt raised again) and the executor's write-back
of persistables, which uses it."""

from __future__ import annotations

import signal
import sys
import threading
from typing import Any

import numpy as np
import pytest

import pullback as paddle
from pullback.runtime.interrupts import deferred_interrupts, surfaced_interrupts
from pullback.runtime.scope import Scope

pytestmark = pytest.mark.skipif(
    threading.current_thread() is not threading.main_thread(), reason="signals reach the main thread only"
)


def test_an_interrupt_in_a_deferred_body_comes_after_it() -> None:
    done = []
    with pytest.raises(KeyboardInterrupt):
        with deferred_interrupts():
            signal.raise_signal(signal.SIGINT)
            done.append("rest of the body")
    assert done == ["rest of the body"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_deferring_elsewhere_than_the_main_thread_just_runs_the_body() -> None:
    seen: list[Any] = []

    def other() -> None:
        with deferred_interrupts():
            seen.append(signal.getsignal(signal.SIGINT))

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert seen == [signal.default_int_handler]


class _Swallower:
    """Its finalizer is interrupted: Python prints "Exception ignored in" and drops
    the KeyboardInterrupt (what llvmlite's `ObjectRef.__del__` did to a compile)."""

    def __del__(self) -> None:
        signal.raise_signal(signal.SIGINT)
        self.after = True  # bytecode: the handler runs here, inside the finalizer


def test_a_swallowed_interrupt_surfaces_when_the_body_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    finished = []
    swallowed: list[type[BaseException] | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: swallowed.append(u.exc_type))
    with pytest.raises(KeyboardInterrupt, match="during a test compile"):
        with surfaced_interrupts("a test compile"):
            _Swallower()  # collected at once
            finished.append(True)
    assert finished == [True]  # the body went on: the interrupt had been lost
    assert swallowed == [KeyboardInterrupt]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_the_executor_writes_every_persistable_before_an_interrupt(static_mode: None) -> None:
    """The interpreter's step returns three updated persistables; a Ctrl-C during
    their write-back (here: at the first write) comes after the last one."""
    x = paddle.static.data("x", [2, 3], "float32")
    loss = paddle.mean(paddle.static.nn.fc(paddle.static.nn.fc(x, 4), 1))
    paddle.optimizer.SGD(0.1).minimize(loss)

    class Interrupting(Scope):
        armed = False

        def __setitem__(self, name: str, value: Any) -> None:
            if self.armed:
                self.armed = False
                signal.raise_signal(signal.SIGINT)
            super().__setitem__(name, value)

    scope = Interrupting()
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    exe.run(paddle.static.default_startup_program(), scope=scope)
    feed = {"x": np.ones([2, 3], "float32")}
    params = [p.name for p in paddle.static.default_main_program().all_parameters()]
    assert len(params) >= 3
    before = {n: scope[n].copy() for n in params}
    scope.armed = True
    with pytest.raises(KeyboardInterrupt):
        exe.run(feed=feed, fetch_list=[loss], scope=scope)
    assert all(not np.array_equal(scope[n], before[n]) for n in params)  # all written
