"""Driving the fuzzer: `run` checks seeds (given, or consecutive ones for a time)
and shrinks and reports each failure; `main` is the command line (nightly runs),
`python -m pullback.testing.fuzz`::

    python -m pullback.testing.fuzz --seconds 600            # fresh seeds until the time is up
    python -m pullback.testing.fuzz --seconds 600 --start 7  # seeds 7, 8, ... (a run repeated)
    python -m pullback.testing.fuzz --seed 17 --seed 40      # replay seeds
    python -m pullback.testing.fuzz --coverage               # ops fuzzed, built and excluded
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from pullback.dialects import pd

from .case import Stats
from .check import Mismatch, check_case
from .generate import generate
from .shrink import failure, reproducer, shrink
from .specs import BUILT, EXCLUDED, SPECS, uncovered

DESCRIPTION = ("The project's differential fuzzer: random well-typed `pd` programs, every backend "
               "against every other and against float64 finite differences.")


def run(seeds: Sequence[int] | None = None, seconds: float | None = None, start: int = 0,
        eager: bool = True, shrink_s: float = 60.0, log: Callable[[str], None] | None = None,
        ops: Sequence[type[pd.PdOp]] | None = None) -> Stats:
    """Check `seeds`, or consecutive seeds from `start` until `seconds` have passed,
    on programs drawn from `ops` (default all); the returned Stats list each
    failure's reproducer."""
    stats = Stats()
    t_end = None if seconds is None else time.monotonic() + seconds
    it: Any = iter(seeds) if seeds is not None else itertools.count(start)
    for seed in it:
        if t_end is not None and time.monotonic() > t_end:
            break
        stats.seeds.append(seed)
        case = generate(seed, stats=stats, ops=ops)
        stats.programs += 1
        stats.ops.update(s.op.name for s in case.steps())
        try:
            check_case(case, stats, eager=eager)
        except Exception as e:  # noqa: BLE001 - every failure is reported with its reproducer
            err = f"{type(e).__name__}: {e}"
            if not isinstance(e, Mismatch):
                err += "\n" + "".join(traceback.format_exception(e)[-4:])
            small = shrink(case, err, shrink_s)
            report = reproducer(small, failure(small) or err)
            stats.failures.append(report)
            if log is not None:
                log(report)
    return stats


SEED_VARIABLES = ("PULLBACK_FUZZ_SEED", "PULLBACK_FUZZ_START")
"""Environment variables that fix a timed run's first seed (the second is the older
spelling); without them every run starts from a fresh seed (`start_seed`)."""


def start_seed(environ: Mapping[str, str] | None = None) -> tuple[int, bool]:
    """The first seed of a timed run and whether it is fresh: `PULLBACK_FUZZ_SEED`
    (or `PULLBACK_FUZZ_START`) when set, else drawn from `os.urandom`, so that each
    run of the suite explores programs no earlier run has (a failing run prints its
    seeds and the command that repeats it)."""
    env = os.environ if environ is None else environ
    for name in SEED_VARIABLES:
        value = env.get(name, "").strip()
        if value:
            try:
                return int(value), False
            except ValueError:
                raise ValueError(f"{name} must be an integer seed, got {value!r}") from None
    return int.from_bytes(os.urandom(4), "little") % 1_000_000_000, True


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m pullback.testing.fuzz`: fuzz for a time or replay seeds."""
    p = argparse.ArgumentParser(prog="python -m pullback.testing.fuzz", description=DESCRIPTION)
    p.add_argument("--seconds", type=float, default=60.0, help="fuzz consecutive seeds for this long (default 60)")
    p.add_argument("--start", type=int, default=None,
                   help="first seed of a timed run (default: $PULLBACK_FUZZ_SEED, else a fresh random seed)")
    p.add_argument("--seed", type=int, action="append", help="replay this seed (repeatable)")
    p.add_argument("--no-eager", action="store_true", help="static programs only")
    p.add_argument("--ops", help="comma-separated op names to draw from (default: every fuzzed op)")
    p.add_argument("--coverage", action="store_true", help="list ops fuzzed, built and excluded, and exit")
    args = p.parse_args(argv)
    if args.coverage:
        all_ops: list[Any] = list(pd.ALL_OPS)
        for t in all_ops:
            why = "fuzzed" if t in SPECS else BUILT.get(t) or EXCLUDED.get(t) or "NOT COVERED"
            print(f"{t.name:32} {why}")
        return 1 if uncovered() else 0
    by_name = {t.name: t for t in SPECS}
    ops = None
    if args.ops:
        names = [n if n.startswith("pd.") else f"pd.{n}" for n in args.ops.split(",")]
        bad = [n for n in names if n not in by_name]
        if bad:
            p.error(f"not fuzzed: {', '.join(bad)} (see --coverage)")
        ops = [by_name[n] for n in names]
    start = args.start if args.start is not None else start_seed()[0]
    t0 = time.monotonic()
    stats = run(args.seed, None if args.seed else args.seconds, start, not args.no_eager,
                log=lambda s: print(s + "\n", file=sys.stderr, flush=True), ops=ops)
    dt = time.monotonic() - t0
    if not args.seed:
        print(f"seeds {seed_range(stats)} (repeat: python -m pullback.testing.fuzz --seconds {args.seconds:g} "
              f"--start {start})")
    print(f"{stats.programs} programs ({sum(stats.ops.values())} ops, {len(stats.ops)} kinds) in {dt:.0f} s; "
          f"{stats.fd_checked} gradient elements checked against finite differences "
          f"({stats.fd_skipped} at kinks skipped); {len(stats.failures)} failures")
    never = sorted(t.name for t in (ops or SPECS) if t.name not in stats.ops)
    if never and not args.seed:
        print(f"ops not drawn in this run: {', '.join(never)}")
    return 1 if stats.failures else 0


def seed_range(stats: Stats) -> str:
    """The seeds a run checked, in words (`'17..42'`, `'17'`, `'none'`)."""
    if not stats.seeds:
        return "none"
    lo, hi = stats.seeds[0], stats.seeds[-1]
    return str(lo) if lo == hi else f"{lo}..{hi}"


__all__ = ["DESCRIPTION", "SEED_VARIABLES", "main", "run", "seed_range", "start_seed"]
