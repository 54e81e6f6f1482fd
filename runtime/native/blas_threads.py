"""BLAS thread counts that follow pullback's own setting and the machine's load (issue 26).

Why: numpy's bundled OpenBLAS (which the eager kernels and, through `runtime/native/blas.py`,
compiled programs call) and Intel MKL (`pullback[mkl]`) each start one thread per core
and keep them spinning after every call.  On a quiet 2-core machine an eager
784-256-10 Adam step takes 1.5 ms; with other processes keeping the machine busy (load
7-10) it took 25-150 ms, against Paddle's 2.6-23 ms under the same load: BLAS threads
that the OS does not run at once hold up every product, and spin against everything
else.  So the BLAS libraries in this process follow pullback's thread setting, and get
fewer threads while other processes occupy the cores.

The rule, for each BLAS library loaded in this process (through `threadpoolctl`):

* an explicit variable of the library's own (`OPENBLAS_NUM_THREADS` for OpenBLAS,
  `MKL_NUM_THREADS` for MKL, `BLIS_NUM_THREADS` for BLIS) wins: the library runs that
  many threads (at most the CPUs this process may run on, as OpenBLAS itself caps it);
* otherwise its ceiling is pullback's own count (`threadpool.get_num_threads()`:
  `set_num_threads(n)`, else `PULLBACK_NUM_THREADS`, else `OMP_NUM_THREADS`, else the
  CPUs available divided among the ranks a launcher started on this machine), and
  while other processes' threads are running (`others_running()`,
  `runtime/native/cpu_load.py`, the reading the compile threads use too) it gets the CPUs
  they leave free, at least one, never more
  than the ceiling.  Where `/proc` does not say (not Linux) the ceiling holds (the load
  average would count this process's own BLAS threads and starve it).

`apply()` decides and sets the counts now (`paddle.base.core.set_num_threads` calls it,
and `runtime/native/blas.py` once it has loaded its libraries); `maybe_apply()` is the cheap
hook on the eager and executor paths (a backward, an `Executor.run`, a new eager op
template): it re-decides at most every `INTERVAL_S` seconds, or at once when
`threadpool.set_num_threads` changed the setting, and otherwise costs a clock read.
Without `threadpoolctl`, or when it fails, nothing is changed and nothing is raised:
the libraries keep their own defaults.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

from pullback.runtime.native import threadpool
from pullback.runtime.native.cpu_load import others_running

INTERVAL_S = 1.0
"""Seconds between two decisions of `maybe_apply` (each reads `/proc`, about 1 ms)."""

OWN_VARS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")
"""The libraries' own thread variables: when set, each wins over pullback's setting
for its library."""
_OWN_VAR = {var.split("_")[0].lower(): var for var in OWN_VARS}
"""threadpoolctl's `internal_api` (`openblas`, `mkl`, `blis`) -> its variable."""


def _cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def load_limited(ceiling: int, others: int | None, cpus: int | None = None) -> int:
    """The load rule: `ceiling` threads when no other process is running (or
    `others` is None: unknown), else the CPUs the `others` running threads leave free
    of `cpus` (default: all of the machine's), at least 1 and at most `ceiling`."""
    ceiling = max(1, ceiling)
    if not others:
        return ceiling
    total = cpus if cpus is not None else (os.cpu_count() or 1)
    return max(1, min(ceiling, total - others))


def own_setting(api: str) -> int | None:
    """The thread count the library `api` (threadpoolctl's `internal_api`: `openblas`,
    `mkl`, `blis`) is explicitly given by its own variable, capped at the CPUs this
    process may run on; None when that variable is unset or not a positive integer
    (the library ignores it then too)."""
    var = _OWN_VAR.get(api)
    raw = os.environ.get(var, "").strip() if var else ""
    try:
        value = int(raw.split(",")[0])
    except ValueError:
        return None
    return min(value, _cpus()) if value >= 1 else None


def ceiling(api: str) -> int:
    """The most threads the library `api` runs under this rule: its own variable when
    set (`own_setting`), else pullback's thread count (`threadpool.get_num_threads`).
    `runtime/native/blas.py` routes products with this (its routing is for one thread)."""
    own = own_setting(api)
    return own if own is not None else threadpool.get_num_threads()


def decide(api: str, others: int | None, cpus: int | None = None) -> int:
    """The threads the library `api` should run now, with `others` threads of other
    processes running (`others_running()`; None: unknown): its own variable exactly
    when set, else `load_limited(ceiling(api), others, cpus)`."""
    own = own_setting(api)
    if own is not None:
        return own
    return load_limited(threadpool.get_num_threads(), others, cpus)


_lock = threading.Lock()
_controller: Any = None
"""threadpoolctl's `ThreadpoolController` over the libraries loaded when it was made;
False once threadpoolctl turned out missing or broken (never tried again)."""
_next_check = 0.0
"""`time.monotonic()` from which `maybe_apply` decides again."""
_seen_setting: int | None = None
"""`threadpool.requested_num_threads()` at the last decision."""
_applied: dict[str, int] = {}
"""The counts set at the last decision, by library path (what `applied()` reports)."""


def _libraries(rescan: bool) -> list[Any]:
    """threadpoolctl's controllers of the BLAS libraries loaded in this process (a
    scan of the loaded libraries, about 1 ms, the first time or with `rescan`);
    empty when threadpoolctl is not usable."""
    global _controller
    if _controller is False:
        return []
    if _controller is None or rescan:
        try:
            import numpy  # noqa: F401  (`import pullback` does not load it: its OpenBLAS must be there)
            from threadpoolctl import ThreadpoolController

            _controller = ThreadpoolController()
        except Exception:  # missing, or failing on this platform: leave BLAS alone
            _controller = False
            return []
    libs = [lib for lib in _controller.lib_controllers if getattr(lib, "user_api", None) == "blas"]
    if not libs:
        _controller = None  # none loaded yet (a numpy without BLAS?): look again next time
    return libs


def apply(reading: Callable[[], int | None] | None = None, rescan: bool = False) -> dict[str, int]:
    """Decide and set every loaded BLAS library's thread count now (see the module
    docstring); returns the counts set, by library path.  `reading`: what returns the
    number of other processes' running threads (default `others_running`, read now);
    `rescan=True` first looks for libraries loaded since the last scan (one that
    `runtime/native/blas.py` has just loaded).  Never raises: without a usable
    `threadpoolctl` it changes nothing and returns {}."""
    global _next_check, _seen_setting, _applied
    with _lock:
        try:
            libs = _libraries(rescan)
            done: dict[str, int] = {}
            if libs:
                others = (reading or others_running)()
                for lib in libs:
                    n = decide(str(lib.internal_api), others)
                    if lib.get_num_threads() != n:
                        lib.set_num_threads(n)
                        # threadpoolctl >= 3.8 lets only one Python thread set OpenBLAS's
                        # process-wide pool (the first to set it, until it lets go):
                        # let go, as its own `threadpool_limits` does when it is done, so
                        # the next decision may come from any thread.
                        release = getattr(type(lib), "clear_controlling_thread", None)
                        if release is not None:
                            release()
                    done[str(lib.filepath)] = n
            _applied = done
            return dict(done)
        except Exception:  # a bad thread variable, a library refusing: never break a run
            return {}
        finally:
            _seen_setting = threadpool.requested_num_threads()
            _next_check = time.monotonic() + INTERVAL_S


def maybe_apply(reading: Callable[[], int | None] | None = None) -> None:
    """The hook on the eager and executor paths: `apply(reading)` when `INTERVAL_S`
    has passed since the last decision, or `threadpool.set_num_threads` changed the
    setting since; otherwise nothing (a clock read and a comparison)."""
    if time.monotonic() < _next_check and threadpool.requested_num_threads() == _seen_setting:
        return
    apply(reading)


def applied() -> dict[str, int]:
    """The thread counts the last decision set, by library path ({} before any, or
    without threadpoolctl)."""
    return dict(_applied)


def reset() -> None:
    """Forget the last decision, so the next `maybe_apply` decides again (tests)."""
    global _next_check, _seen_setting, _applied
    with _lock:
        _next_check, _seen_setting, _applied = 0.0, None, {}


__all__ = [
    "INTERVAL_S", "OWN_VARS", "applied", "apply", "ceiling", "decide", "load_limited", "maybe_apply",
    "own_setting", "reset",
]
