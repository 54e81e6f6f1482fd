"""How busy this machine's CPUs are with other processes, right now.

One reading, two users: the compile threads (`runtime/native/settings.py`'s
`compile_threads`) and the BLAS threads (`runtime/native/blas_threads.py`) both take the
CPUs that other processes leave free.
"""

from __future__ import annotations

import os
import time


def others_running(samples: int = 2, interval_s: float = 0.001, proc: str = "/proc") -> int | None:
    """Threads of other processes running or waiting for a CPU now: the kernel's
    count of runnable threads (`/proc/loadavg`'s fourth field) less this process's
    own (`/proc/self/task/*/stat` in state `R`), the least of `samples` readings
    `interval_s` apart, so that a thread woken for an instant does not count; None
    where `/proc` does not tell (not Linux).  About 1 ms."""
    least: int | None = None
    for i in range(samples):
        if i:
            time.sleep(interval_s)
        try:
            with open(f"{proc}/loadavg") as f:
                running = int(f.read().split()[3].split("/")[0])
            own = 0
            for tid in os.listdir(f"{proc}/self/task"):
                try:
                    with open(f"{proc}/self/task/{tid}/stat") as f:
                        stat = f.read()
                except OSError:
                    continue  # the thread ended meanwhile
                if stat[stat.rindex(")") + 2 :].startswith("R"):
                    own += 1
        except (OSError, ValueError, IndexError):
            return None
        n = max(0, running - own)
        least = n if least is None else min(least, n)
    return least


__all__ = ["others_running"]
