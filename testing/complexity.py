"""Complexity checks: the same work at two sizes, timed in one process.

A pass that is linear in the program takes about `factor` times as long on a program
`factor` times larger; a quadratic one about `factor**2` times.  `growth` measures
that ratio so that noise cannot fool it:

- CPU time of this process (`time.process_time`), not wall time, so other processes
  on a loaded machine do not count;
- the two sizes interleaved, each timed several times and the best kept, so a slow
  minute slows both alike;
- a fresh input for every timing (`make(n)` builds it, untimed), so caches do not hide
  the work;
- the cyclic garbage collector run before each timing, so a collection triggered by
  the other size's garbage is not charged to this one.

`assert_linear` fails when the ratio is above `limit` (default 16 for 8x the size:
twice linear, a quarter of quadratic) twice in a row, with both sizes' times in the
message.  Fixed per-call overhead only lowers the ratio, so the small size must be
large enough that the work dominates (each caller picks it).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from dataclasses import dataclass

Work = Callable[[], object]
"""The timed part: called once per timing."""


@dataclass(frozen=True)
class Growth:
    """Best CPU seconds at the small and the large size, and their ratio."""

    n: int
    factor: int
    small: float
    large: float

    @property
    def ratio(self) -> float:
        """large / small (the small time floored at 1 us)."""
        return self.large / max(self.small, 1e-6)

    def __str__(self) -> str:
        return (f"{self.n} -> {self.n * self.factor}: {self.small * 1e3:.1f} ms -> "
                f"{self.large * 1e3:.1f} ms ({self.ratio:.1f}x for {self.factor}x the size)")


def _time_once(make: Callable[[int], Work], n: int) -> float:
    work = make(n)
    gc.collect()
    t = time.process_time()
    work()
    return time.process_time() - t


def growth(make: Callable[[int], Work], n: int, factor: int = 8, repeats: int = 3) -> Growth:
    """Best CPU time of `make(n * factor)()` over best CPU time of `make(n)()`;
    `make(size)` builds the input (not timed) and returns the work to time."""
    small = large = float("inf")
    _time_once(make, n)  # warm up imports and caches that are paid once per process
    for _ in range(repeats):
        small = min(small, _time_once(make, n))
        large = min(large, _time_once(make, n * factor))
    return Growth(n, factor, small, large)


def assert_linear(
    make: Callable[[int], Work], n: int, factor: int = 8, limit: float = 16.0, repeats: int = 3
) -> Growth:
    """Fail unless `make`'s work grows at most `limit` times when its size grows
    `factor` times (measured twice before failing); returns the last measurement."""
    g = growth(make, n, factor, repeats)
    if g.ratio > limit:
        g = growth(make, n, factor, repeats + 2)
    assert g.ratio <= limit, f"super-linear: {g} (limit {limit:g}x)"
    return g


__all__ = ["Growth", "Work", "assert_linear", "growth"]
