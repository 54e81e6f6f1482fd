"""Native kernels for eager mode: costly eager ops and whole backward plans run as
code from our own lowering (`runtime/native/`), compiled in the background.

Eager mode computes with the interpreter's numpy kernels (`frontend/eager.py`),
which stay the reference.  Where they cost (a LeNet step spent most of its time in
numpy's convolution, pooling and their gradients, as `cProfile` showed), the same
`pd` ops compile to native code: a *region* is a list of ops over numbered value
slots (one eager template's op, or every step of a cached backward plan,
`autograd/plan.py`), written as a `pd` program whose feeds are the slots read
before any op writes them and whose fetches are the slots wanted, compiled once by
`runtime/native/compiler.py` (so its object code lands in the disk cache, and a
second process only links it) and called with the numpy buffers (`execute` for the
first call, then `_DirectCall`: the buffers' addresses and the entry point, ~15 us
on a loaded machine, small against the 100 us and more of the kernels it replaces).

What runs where, per region (`NativeRegion.state`):

- `PROBE`: the reference kernel runs, timed, `PROBES` times; a region whose best
  time is under `MIN_US` (`PULLBACK_EAGER_NATIVE_MIN_US`) is never compiled (small
  ops would only pay the call's marshalling), a costlier one is handed to the
  compile thread;
- `PENDING`: compiling on the one background thread, costliest regions first; the
  reference kernel runs meanwhile (timed, its best time kept), so no use waits for
  a compile (the loop does share the CPU and the GIL with it meanwhile);
- `TRIAL`: compiled; while other compiles are in flight it runs natively,
  untimed; then the reference runs again, timed, `PROBES` times (the best time
  from before the compile may be stale: a whole eager step's per-op path gets
  faster as its ops' own regions compile), and the next `TRIALS` native calls are
  timed; it is kept only if its best time beats that reference's best by
  `KEEP_BELOW` (a product numpy already hands to BLAS may not gain);
- `WAIT`: measured slower: the reference kernel for `RETRY_CALLS` runs (4x as many
  after each retry), then `TRIAL` again, `RETRIES` times (a trial that lost to a
  busy machine does not switch the native code off for good);
- `NATIVE`: runs natively;
- `OFF`: the reference kernel (cheap, slower natively every time, host-only ops,
  or a compile or call that failed: a failure warns once for that region, never
  raises).

Compiled regions are kept in a bounded registry (`MAX_REGIONS`, least recently
compiled dropped first, their machine code freed): a dropped region's holder
probes again.  `PULLBACK_EAGER_NATIVE=0` (or `set_enabled(False)`) runs everything
on the reference kernels, for debugging and for tests comparing both paths.
"""

from __future__ import annotations

import atexit
import itertools
import os
import queue
import sys
import threading
import time
import warnings
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue

from pullback.dialects import pd
from pullback.runtime.native.env import flag_setting, int_setting
from pullback.runtime.native.program import has_status

PROBE, PENDING, TRIAL, WAIT, NATIVE, OFF = "probe", "pending", "trial", "wait", "native", "off"

PROBES = 2
"""Timed reference runs before a region is compiled (or not): a region used once
(an evaluation at the end, most test code) is never compiled, and the second run
no longer pays the first's warm-up."""

TRIALS = 2
"""Timed native calls before a compiled region is kept or dropped."""

CALIBRATE = True
"""Keep a compiled region only when it measured faster than the reference; False
keeps every compiled region (tests that must exercise the native code set it)."""

RETRIES = 2
"""Further trials of a compiled region measured slower than its reference: a trial
shares the CPU with whatever else runs (another process on a loaded machine), so
one slow measurement does not switch the native code off for good."""

RETRY_CALLS = 50
"""Reference runs before such a region is tried again (times 4 for each retry)."""

KEEP_BELOW = 0.9
"""A compiled region is kept when its best trial took under this fraction of the
reference's best time: a region about as fast (a backward of small products numpy
already hands to BLAS) is not worth the risk of a noisy trial."""

MAX_REGIONS = 128
"""Compiled regions kept in memory (each holds machine code; least recently
compiled dropped first)."""


def _min_us() -> float:
    value = int_setting("PULLBACK_EAGER_NATIVE_MIN_US", minimum=0, what="a number of microseconds (0 or more)")
    return 100.0 if value is None else float(value)


MIN_US = _min_us()
"""A region whose reference kernel runs faster than this (microseconds, first call)
stays on the reference kernel."""

_enabled = flag_setting("PULLBACK_EAGER_NATIVE", True)


def enabled() -> bool:
    """Whether eager regions may run natively (`PULLBACK_EAGER_NATIVE`, `set_enabled`)."""
    return _enabled


def set_enabled(flag: bool) -> bool:
    """Turn native eager kernels on or off; returns the previous setting.  Off, no
    region runs natively (compiled ones keep their code); on, the ops and plans
    first seen from then on may (those made while off stay on the reference)."""
    global _enabled
    old, _enabled = _enabled, bool(flag)
    return old


Step = tuple[Operation, Sequence[int], Sequence[int]]
"""An op of a region, the slots of its operands and the slots of its results."""


def region_module(steps: Sequence[Step], fetch: Sequence[int]) -> tuple[ModuleOp, list[int], list[SSAValue]]:
    """The `pd` program of a region: a `pd.data` feed per slot read before it is
    written (named `s<slot>`, typed like the operand reading it), the ops cloned onto
    them, and the values of `fetch` (slots some op writes).  Returns the module, the
    feeds' slots in order and the fetched values."""
    vals: dict[int, SSAValue] = {}
    feeds: list[int] = []
    ops: list[Operation] = []
    for op, ins, outs in steps:
        mapper: dict[SSAValue, SSAValue] = {}
        for v, s in zip(op.operands, ins):
            if s not in vals:
                t = v.type
                data = pd.DataOp.make(f"s{s}", list(pd.shape_of(t)), pd.dtype_name(pd.elem_of(t)))
                ops.append(data)
                vals[s] = data.out
                feeds.append(s)
            mapper[v] = vals[s]
        new = op.clone(value_mapper=mapper)
        ops.append(new)
        for r, s in zip(new.results, outs):
            vals[s] = r
    return ModuleOp(ops), feeds, [vals[s] for s in fetch]


def compilable(ops: Sequence[Operation]) -> bool:
    """False when some op always runs on the host (`HOST_ONLY`), is no `pd` op or
    holds regions (their bodies may read values the cloned op would not carry): such
    a region is not compiled (no warning: by design, not a failure)."""
    return all(isinstance(op, pd.PdOp) and op.HOST_ONLY is None and not op.regions for op in ops)


class NativeRegion:
    """One region's native code and the decision whether to use it (module docstring)."""

    __slots__ = ("state", "what", "steps", "fetch", "program", "feeds", "ref_s", "native_s",
                 "trials", "refs", "retries", "error", "direct", "failure", "keep_below", "__weakref__")

    def __init__(self, what: str, steps: Sequence[Step], fetch: Sequence[int],
                 keep_below: float = KEEP_BELOW) -> None:
        self.state = PROBE
        self.keep_below = keep_below
        """Kept when its best trial took under this fraction of the reference's best."""
        self.what = what
        self.steps = steps
        self.fetch = list(fetch)
        self.program: Any = None
        self.feeds: list[int] = []
        self.ref_s = float("inf")
        self.native_s = float("inf")
        self.trials = 0
        self.refs = 0
        """Reference runs timed since the compile with no compile in flight (`ready`)."""
        self.retries = 0
        self.error: str | None = None
        self.direct: _DirectCall | None = None
        self.failure: str | None = None
        """The last call's error when the caller asked to judge it (`call`)."""

    # -- the decision -------------------------------------------------------------

    def reference(self, seconds: float) -> None:
        """Record a reference run's time; in `PROBE`, decide whether to compile.
        Once compiled, only runs timed while no compile is in flight count (as for
        the trials: `call`)."""
        if self.state is PROBE or self.state is PENDING or _pending == 0:
            self.refs += 1
            if seconds < self.ref_s:
                self.ref_s = seconds
        if self.state is WAIT:  # measured slower before: try the native code again in a while
            self.trials -= 1
            if self.trials <= 0:
                self.trials, self.native_s = 0, float("inf")
                self.state = TRIAL if self.program is not None else PROBE
        elif self.state is PROBE:
            self.trials += 1
            if not _enabled or not compilable([op for op, _, _ in self.steps]):
                self.state = OFF
            elif self.trials >= PROBES:
                self.trials = 0
                if self.ref_s * 1e6 < MIN_US:
                    self.state = OFF
                else:
                    self.state = PENDING
                    _submit(self)

    def ready(self) -> bool:
        """Whether to run natively now (moves `PENDING` on once the compile is done)."""
        state = self.state
        if state is NATIVE:
            return _enabled
        if state is PENDING and self.program is not None:
            # The reference is timed afresh for the trial: the best time from
            # before the compile can be stale (a whole eager step's reference
            # gets faster once its ops' and backward's own regions are compiled,
            # and a stale one would keep a program slower than the per-op path).
            self.state = state = TRIAL
            if CALIBRATE:
                self.ref_s, self.refs = float("inf"), 0
        if state is TRIAL:
            # (Fewer than `PROBES` references timed with no compile in flight --
            # the first may still pay other regions' first calls --: run one now;
            # meanwhile, while compiles run, the native code runs, untimed.)
            return _enabled and not (CALIBRATE and _pending == 0 and self.refs < PROBES)
        if state is PENDING and self.error is not None:
            self._fail(self.error)
        return False

    def fail(self, error: str) -> None:
        """Give up the native code after a failure the caller judged (`call` with
        `judge=True`): warned once, the reference from now on."""
        self._fail(error)

    def _fail(self, error: str) -> None:
        self.state = OFF
        self.program = None
        warnings.warn(f"eager native kernel for {self.what}: {error}; using the reference kernel", stacklevel=4)

    def call(self, arrays: Sequence[np.ndarray], judge: bool = False) -> list[np.ndarray] | None:
        """The fetched slots' values computed natively from the feed slots' arrays
        (`arrays[i]` is slot `self.feeds[i]`'s value), or None after a failure (warned
        once; the region is then `OFF`).  With `judge`, a failure is only noted in
        `failure` and the caller decides: an error the reference raises too (an
        index out of range in the values) is the input's, not the native code's."""
        program = self.program
        if program is None:  # dropped by the registry's bound meanwhile: probe again
            return None
        t = time.perf_counter()
        try:
            direct = self.direct
            if direct is not None and direct.program is program:
                outs = direct(arrays)
            else:
                from pullback.runtime.native.program import execute

                outs = execute(program, {f"s{s}": a for s, a in zip(self.feeds, arrays)}, {})
                if program.first_call is None:  # (its first call ran under the disk cache's guard)
                    self.direct = _DirectCall.of(program, self.feeds)
        except Exception as e:  # noqa: BLE001 - any failure of native code falls back
            if judge:
                self.failure = f"{type(e).__name__}: {e}"
            else:
                self._fail(f"{type(e).__name__}: {e}")
            return None
        stats["native_calls"] += 1
        # A trial is timed only while no compile is in flight: the compile thread
        # shares the CPU (and the GIL), and a region measured then was judged slower
        # than its reference for good (the LSTM step's `pd.rnn`, 18 vs 15 ms, pinned
        # to one core, where it measures 8.6 ms once the compiles are done).
        if self.state is TRIAL and (not CALIBRATE or (_pending == 0 and self.refs >= PROBES)):
            seconds = time.perf_counter() - t
            self.native_s = min(self.native_s, seconds)
            self.trials += 1
            if self.trials >= TRIALS:
                if self.native_s < self.keep_below * self.ref_s or not CALIBRATE:
                    self.state = NATIVE
                elif self.retries < RETRIES:  # measured slower: the reference for a while
                    self.state = WAIT
                    self.trials = RETRY_CALLS * 4**self.retries
                    self.retries += 1
                else:
                    self.state = OFF  # measured slower every time: keep the reference
                    self.program = None
                    _forget(self)
        return outs

    def drop(self) -> None:
        """Release the native code (the registry's bound, on the compile thread): the
        holder's next call finds no program and probes again."""
        self.program = None
        if self.state is not OFF:
            self.state = PROBE
            self.ref_s = float("inf")
            self.native_s = float("inf")
            self.trials = 0


class _DirectCall:
    """A compiled region's call without `execute`'s generality: a region's feeds
    have the static shapes and dtypes its ops were typed with (the template's or
    plan's signature guarantees it), and it has no parameters, dynamic dimensions,
    range checks, hoisted constants or collectives, so a call is the buffers' addresses, fresh
    outputs of known shapes and the entry point (measured: ~25 us of `execute`'s
    ~30 us for a one-op region went to its checks and bookkeeping)."""

    __slots__ = ("program", "fn", "slot_type", "feed_pos", "feed_dtypes", "outs", "fetch_pos")

    @classmethod
    def of(cls, program: Any, feeds: Sequence[int]) -> _DirectCall | None:
        """The direct call of `program` (region feeds `feeds`), or None when its ABI
        needs `execute`."""
        abi = program.abi
        # (A status buffer -- range checks, or the commit point of a region that
        # updates parameters, `lowering/abi.py` -- is `execute`'s to pass.)
        if abi["dims"] or abi["params"] or has_status(abi) or program.constants:
            return None
        if program.collectives:  # their calls are set up by `execute`
            return None
        if any(kind != "out" for kind, _ in abi["fetches"]):
            return None
        shapes = [tuple(pd.shape_of(v.type)) for v in program.outputs]
        if any(d < 0 for shape in shapes for d in shape):
            return None
        plan = program.call_plan()
        position = {f"s{s}": i for i, s in enumerate(feeds)}
        return cls(
            program, plan.slots, [position[name] for name, _, _, _ in plan.feeds],
            [dtype for _, dtype, _, _ in plan.feeds], list(zip(shapes, plan.out_dtypes)),
            [ref for _, ref in abi["fetches"]],
        )

    def __init__(
        self, program: Any, slot_type: Any, feed_pos: list[int], feed_dtypes: list[np.dtype],
        outs: list[tuple[tuple[int, ...], np.dtype]], fetch_pos: list[int],
    ) -> None:
        self.program = program
        self.fn = program.fn
        self.slot_type = slot_type
        self.feed_pos = feed_pos
        self.feed_dtypes = feed_dtypes
        self.outs = outs
        self.fetch_pos = fetch_pos

    def __call__(self, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
        held = []  # converted inputs live until the call returns
        slots = []
        for i, dtype in zip(self.feed_pos, self.feed_dtypes):
            a = arrays[i]
            if a.dtype != dtype or not a.flags.c_contiguous:
                a = np.array(a, dtype=dtype, order="C")
                held.append(a)
            slots.append(a.ctypes.data)
        outs = [np.empty(shape, dtype) for shape, dtype in self.outs]
        for o in outs:
            slots.append(o.ctypes.data)
        self.fn(self.slot_type(*slots))
        return [outs[k] for k in self.fetch_pos]


# ------------------------------------------------------------ compile thread

NICE = 0
"""The compile thread's niceness (Linux).  0: measured on one core (issue 33), a
thread niced to 10 got ~10% of the CPU: with the disk cache warm an eager MLP's
whole-step program came after ~1300 steps (0.9 s for 0.1 s of compiling; now
~140 steps) at about the same cost per step meanwhile (the loop waits for the
GIL, not the CPU: `SWITCH_S`).  With a cold cache the steps during the compiles
do cost more now (an eager LeNet step 32-52 ms for its first 60 steps against
15 ms niced) but the native code comes sooner (5 ms a step from step ~200,
where the niced thread had not finished after 300): 300 steps took the same
5 s either way."""

SWITCH_S = 0.0005
"""The interpreter's thread switch interval while a compile runs (default 5 ms):
the compile is mostly Python holding the GIL, and the loop would wait up to a whole
interval each time it wants the GIL back."""

_queue: queue.PriorityQueue[tuple[float, int, NativeRegion]] = queue.PriorityQueue()
"""Regions to compile, costliest reference first (ties in submission order)."""
_order = itertools.count()
_worker: threading.Thread | None = None
_lock = threading.Lock()
_compiled: OrderedDict[int, NativeRegion] = OrderedDict()
_busy = threading.Condition()
_pending = 0
_inflight: set[NativeRegion] = set()
"""Regions queued or compiling (a forked child puts them back to `PROBE`)."""
_closing = False
stats = {"compiled": 0, "failed": 0, "dropped": 0, "native_calls": 0}
"""Counts since the process started: regions compiled, compiles failed, compiled
regions dropped by the bound, native calls made."""


def _submit(region: NativeRegion) -> None:
    """Queue `region` for the compile thread (started on first use)."""
    global _worker, _pending
    if _closing:
        region.state = OFF
        return
    with _busy:
        _pending += 1
        _inflight.add(region)
    with _lock:
        if _worker is None or not _worker.is_alive():
            _worker = threading.Thread(target=_work, name="pullback-eager-native", daemon=True)
            _worker.start()
    _queue.put((-region.ref_s, next(_order), region))


def _work() -> None:
    global _pending
    if NICE and hasattr(os, "setpriority"):
        try:  # Linux: a thread's own niceness (the loop keeps the CPU's first claim)
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), NICE)
        except OSError:
            pass
    while True:
        _, _, region = _queue.get()
        interval = sys.getswitchinterval()
        if SWITCH_S:
            sys.setswitchinterval(min(interval, SWITCH_S))
        try:
            if not _closing:
                _compile(region)
        finally:
            sys.setswitchinterval(interval)
            with _busy:
                _pending -= 1
                _inflight.discard(region)
                _busy.notify_all()


def _compile(region: NativeRegion) -> None:
    """Compile one region (on the compile thread); failures are kept for the main
    thread to warn about."""
    from pullback.runtime.native.compiler import compile_program

    try:
        module, feeds, fetches = region_module(region.steps, region.fetch)
        program = compile_program(module, fetches, background=True)
    except Exception as e:  # noqa: BLE001 - reported once, on the caller's thread
        stats["failed"] += 1
        region.error = f"{type(e).__name__}: {e}"
        return
    region.feeds = feeds
    region.program = program
    stats["compiled"] += 1
    with _lock:
        _compiled[id(region)] = region
        while len(_compiled) > MAX_REGIONS:
            _, old = _compiled.popitem(last=False)
            old.drop()
            stats["dropped"] += 1


def _forget(region: NativeRegion) -> None:
    with _lock:
        _compiled.pop(id(region), None)


def wait(timeout: float | None = None) -> bool:
    """Block until every queued compile is done (tests, benchmarks); False on timeout."""
    with _busy:
        return _busy.wait_for(lambda: _pending == 0, timeout)


def _at_exit() -> None:
    """Let the compile in flight finish before the interpreter tears down (a
    daemon thread stopped inside LLVM at exit can crash the process); the queued
    ones are skipped."""
    global _closing
    _closing = True
    wait(60.0)
    # Free the regions' machine code now, while llvmlite can still close its
    # engines (closed during the interpreter's teardown, each printed `Exception
    # ignored in: ObjectRef.__del__`).
    for region in list(_compiled.values()):
        region.drop()
    _compiled.clear()


def _after_fork_in_child() -> None:
    """The compile thread is not in the child: start afresh, and let the regions
    that were waiting for it probe again."""
    global _worker, _pending, _queue, _busy, _lock
    _worker, _pending = None, 0
    _queue, _busy, _lock = queue.PriorityQueue(), threading.Condition(), threading.Lock()
    for region in _inflight:
        if region.program is None and region.error is None:
            region.state = PROBE
    _inflight.clear()


atexit.register(_at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def compiled_count() -> int:
    """Regions holding native code now (at most `MAX_REGIONS`)."""
    return len(_compiled)


def run_region(
    region: NativeRegion, reference: Callable[[], Any], native: Callable[[], Any],
) -> Any:
    """Run a region by its state: `native()` when ready (None from it means it
    failed: the reference then runs), else the timed `reference()`."""
    if region.ready():
        out = native()
        if out is not None:
            return out
    t = time.perf_counter()
    out = reference()
    region.reference(time.perf_counter() - t)
    return out


__all__ = [
    "MAX_REGIONS", "MIN_US", "NativeRegion", "compilable", "compiled_count", "enabled", "region_module",
    "run_region", "set_enabled", "stats", "wait",
]
