"""Ctrl-C and state that must change as a unit (issue 32).

`deferred_interrupts()` holds back a SIGINT that arrives in its body until the body
is done, then delivers it (the handler that was installed runs: by default,
`KeyboardInterrupt` is raised after the body).  Used where several writes make one
step: the executor's write-back of persistables (`runtime/executor.py`), an eager
optimizer step's rollback (`frontend/optimizer.py`), an LR scheduler's step
(`frontend/lr.py`), registering a compiled program (`runtime/native/compiler.py`).

`surfaced_interrupts(what)` makes sure a compile's interrupt reaches its caller: a
`KeyboardInterrupt` raised inside a finalizer is dropped by Python, so the compile
used to finish as if nothing happened (`runtime/native/compiler.py`).

Both act only on the main thread (the only one Python delivers signals to; a
handler cannot be installed from another) and only while SIGINT has a Python
handler; otherwise the body just runs.  It uses `_signal` (CPython's C module)
rather than `signal`, whose wrappers convert handlers to enums: ~0.1 us per
`getsignal` against ~2 us.  Cost: two `signal` calls, about 1-5 us per use.
"""

from __future__ import annotations

import _signal
import contextlib
import threading
from collections.abc import Iterator
from typing import Any

SIGINT = int(_signal.SIGINT)

_MAIN = threading.main_thread().ident
_default_int_handler = _signal.default_int_handler


@contextlib.contextmanager
def deferred_interrupts() -> Iterator[None]:
    """Run the body with SIGINT held back; a SIGINT that came in the meantime is
    delivered to the previous handler when the body ends (also when it raised: the
    body's exception propagates, with the interrupt's `KeyboardInterrupt` raised in
    its place where the handler raises)."""
    if threading.get_ident() != _MAIN:
        yield
        return
    previous = _signal.getsignal(SIGINT)
    if not callable(previous):  # SIG_IGN / SIG_DFL / not set from Python: nothing to defer
        yield
        return
    caught: list[tuple[int, Any]] = []

    def hold(signum: int, frame: Any) -> None:
        caught.append((signum, frame))

    _signal.signal(SIGINT, hold)
    try:
        yield
    finally:
        _signal.signal(SIGINT, previous)
        if caught:
            previous(*caught[0])


@contextlib.contextmanager
def surfaced_interrupts(what: str) -> Iterator[None]:
    """Run the body (a compile) with SIGINT raising `KeyboardInterrupt` as usual, but
    remembered: when Python swallows that exception (raised inside a finalizer such
    as llvmlite's `ObjectRef.__del__`, which Python reports as "Exception ignored
    in" and drops), it is raised again, naming `what`, as soon as the body ends.
    Only on the main thread while SIGINT's handler is Python's default one."""
    if threading.get_ident() != _MAIN or _signal.getsignal(SIGINT) is not _default_int_handler:
        yield
        return
    hits: list[int] = []

    def interrupt(signum: int, frame: Any) -> None:
        hits.append(signum)
        raise KeyboardInterrupt

    _signal.signal(SIGINT, interrupt)
    try:
        yield
    finally:
        _signal.signal(SIGINT, _default_int_handler)
    if hits:  # the body finished although it was interrupted: its interrupt was lost
        raise KeyboardInterrupt(f"interrupted (Ctrl-C) during {what}")


__all__ = ["SIGINT", "deferred_interrupts", "surfaced_interrupts"]
