"""Ctrl-C during a compiled run (issue 32): what Python does around the native call.

A compiled program is one call into native code; Python's own SIGINT handler only
runs when that call returns, so a long run could not be stopped.  `call` runs a
program's entry point through the thread pool's `pb_call_interruptible`
(`native/threadpool.py`, "Interrupts"): while it runs, SIGINT sets a flag that the
pool's loops (at chunk boundaries) and the generated code (before each segment, and
at its commit point) poll.  An interrupted run returns early; `execute`
(`native/program.py`) then raises `KeyboardInterrupt` itself:

- interrupted before the commit point (the usual case: the native computation):
  the run is *abandoned*: no persistable was written (the generated code skips
  every write after an abandoning commit point), the fetched values are discarded,
  the scope is as it was before the run (`ABANDONED`);
- interrupted after it (while the optimizer writes its updates): the run finishes
  and is applied whole, then `KeyboardInterrupt` says that this step finished
  (`FINISHED`).

A run is interruptible only on the main thread (where Python delivers
KeyboardInterrupt), on Linux (the handler's `struct sigaction` layout is glibc's),
and while SIGINT's handler is Python's default one (`signal.default_int_handler`):
a program that installed its own handler, or ignores SIGINT, keeps it, and its
compiled runs behave as before (the handler runs when the call returns).  Nor is a
program with collectives (data parallelism): a rank that skipped a collective
would leave the other ranks waiting in it for ever.
Cost: the check (`_signal.getsignal`: ~0.1 us, against ~2 us through `signal`'s
enum wrapper), the native wrapper's two `sigaction` calls per run, about a
microsecond, and one load per chunk and per segment.
"""

from __future__ import annotations

import _signal
import signal
import sys
import threading
from typing import Any

from pullback.runtime.interrupts import SIGINT
from pullback.runtime.native import threadpool

INTERRUPTED = 1
"""State bit: SIGINT arrived during the run."""
COMMITTED = 2
"""State bit: the run passed its commit point (it writes persistables and finished)."""

ABANDONED = (
    "compiled run interrupted (Ctrl-C): the run was abandoned before it wrote any "
    "persistable; the scope holds the values from before this run"
)
"""`KeyboardInterrupt`'s message for a run interrupted before its commit point."""
FINISHED = (
    "compiled run interrupted (Ctrl-C) while it wrote its persistables: this step "
    "finished and was applied whole"
)
"""`KeyboardInterrupt`'s message for a run interrupted after its commit point."""

_MAIN = threading.main_thread().ident
_LINUX = sys.platform.startswith("linux")


def interruptible() -> bool:
    """Whether a compiled run started now on this thread can be interrupted (see the
    module docstring)."""
    return (
        _LINUX
        and threadpool.built() is not None
        and threading.get_ident() == _MAIN
        and _signal.getsignal(SIGINT) is signal.default_int_handler
    )


def call(fn: Any, address: int, arg: Any, allowed: bool = True) -> int:
    """Run the entry point `fn` (at `address`) on its slot array `arg`; returns the
    run's state (`INTERRUPTED`, `COMMITTED` bits; 0 when it could not be
    interrupted or was not).  `allowed=False`: a plain call (a program with
    collectives: `CompiledProgram.interruptible`)."""
    pool = threadpool.built()
    if pool is None or not allowed or not address or not interruptible():
        fn(arg)
        return 0
    return int(pool.call_interruptible(address, arg))


__all__ = ["ABANDONED", "COMMITTED", "FINISHED", "INTERRUPTED", "call", "interruptible"]
