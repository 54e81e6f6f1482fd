"""Wall-clock time per compile phase (xDSL passes by name, LLVM optimize, codegen).

`lowering.pipeline.run_passes` fills one per compile and the compiled backend adds
its LLVM phases; `PULLBACK_COMPILE_TIMES=1` prints the table for every compile.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class PhaseTimes:
    """Wall-clock seconds per compile phase, in the order they ran (a phase run
    twice is listed twice).  `PULLBACK_COMPILE_TIMES=1` prints them per compile."""

    phases: list[tuple[str, float]] = field(default_factory=list)
    threads: list[tuple[str, float]] = field(default_factory=list)
    """Seconds of steps that ran on other threads inside a phase (LLVM's chunks,
    `runtime/native/llvm_chunks.py`): listed by `format`, not part of `total`."""

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time the body as phase `name`."""
        t = time.perf_counter()
        try:
            yield
        finally:
            self.phases.append((name, time.perf_counter() - t))

    @contextmanager
    def adding(self, name: str) -> Iterator[None]:
        """Time the body and add it to phase `name` (listed once, where it first ran:
        a pass run function by function)."""
        t = time.perf_counter()
        try:
            yield
        finally:
            spent = time.perf_counter() - t
            for k, (n, s) in enumerate(self.phases):
                if n == name:
                    self.phases[k] = (n, s + spent)
                    break
            else:
                self.phases.append((name, spent))

    @property
    def total(self) -> float:
        """Seconds of all phases together."""
        return sum(s for _, s in self.phases)

    def format(self) -> str:
        """One line per phase: its name, seconds and share of the total."""
        total = self.total or 1.0
        width = max((len(n) for n, _ in [*self.phases, *self.threads]), default=0)
        lines = [f"  {n:<{width}}  {s:8.3f} s  {100 * s / total:3.0f}%" for n, s in self.phases]
        lines += [f"    {n:<{width}}  {s:8.3f} s  (thread time)" for n, s in self.threads]
        return "\n".join(lines)
