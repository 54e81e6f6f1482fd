"""Deferred eager ops: a step's ops traced, then flushed as one native program.

While lazy capture is on (`PULLBACK_EAGER_LAZY`, `set_enabled`), `eager.execute`
does not run a *deferrable* template (a `pd` op with static result types, no
regions, not host-only; float16/bfloat16 ones too: `Template.shapes` is set) but
appends it to this thread's `Trace`: the template and the numbered value slots it
reads and writes.  Its results are `Pending` values (shape and dtype known, no
array yet) held by Tensors (`Tensor._arr`) and by recorded nodes (`Node.saved_in`,
`saved_out`).  A backward through such a graph appends its cached plan's steps too
(`defer_plan`, from `autograd/engine.py`), gradients reach `.grad` as pending values
(accumulation a deferred add) and the optimizer's updates follow
(`optimizer._update`), so a training step `loss = model(x); loss.backward();
opt.step()` is one trace.

`flush` runs the trace.  Reading a pending value (`Tensor._data`, which every
value read goes through) flushes, and so does the `clear_grad()` after an
`optimizer.step()` (`end_clear`; or the next op, `end_step`).  The
trace's structure (template uids and wiring, where outside arrays enter, which
slots are still wanted: values some Tensor or node still holds) keys a cached
`eager_native.NativeRegion`: when the same structure has been flushed before and
its region compiled (probe, background compile, trial: `frontend/eager_native.py`),
the whole trace runs as ONE native program; until then, or when it never pays, its
ops run one by one exactly as the per-op path would have run them (the plans'
own native regions and the templates' per-op ones included).  A structure seen
once costs only the bookkeeping.

Why it is correct to defer: eager values are never written in place (a write
replaces a Tensor's array, `Tensor.set_value`, `optimizer._write`, in-place ops
rebind), so an array a deferred op reads still holds, at the flush, the value it
had when the op was called.  Types were verified when each template was made, so
only values can fail at the flush (a label out of range): the error names the op
and the user line that called it, and what the trace wrote into objects that
outlive it is undone -- gradients here (`note_undo`), parameters and optimizer
state by the optimizer's journal -- as the per-op path, stopped at that op, would
have left them.  An op reading integers (indices, labels) on concrete values
only runs at its call (`Template.indexed`), so a bad index given directly raises
there; `eager.NOT_DEFERRED` lists ops that must always run at their call.

A thread whose traces gain nothing (small ops whose compiled region does not beat
running them one by one, structures that never repeat) stops deferring for a
while (`USELESS_FLUSHES`, `SUSPEND_STEPS`), so deferral costs at most its
bookkeeping on a few steps in two hundred.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from pullback.frontend import eager_native
from pullback.runtime.interrupts import deferred_interrupts
from pullback.runtime.native.env import flag_setting

MAX_OPS = 8192

STEP_KEEP_BELOW = 0.98
"""A whole step's compiled program is kept when its best trial took under this
fraction of the op-by-op run's best (`eager_native.KEEP_BELOW` is 0.9 for one op's
or one backward's region): the op-by-op time it is measured against is itself mostly
native kernels (the ops' own regions), so a step bound by matrix products gains a
few percent, not ten -- a Transformer step, 36.7 against 37.6 ms -- and still saves
the per-op dispatch, so a small margin only guards against noise."""
"""Ops a trace holds before it is flushed: a trace holds the arrays its ops read,
so a loop that never reads a value (an inference loop collecting outputs) must
not keep every input alive; a training step of a large model is a few thousand."""

OP_US = 3.0
"""Estimated cost of deferring one op (microseconds): the bookkeeping a compiled
trace must save back.  A trace whose compiled region gains less than this per op
over running its ops one by one is not worth deferring (a small MLP's backward is
already one native plan, `autograd/plan.py`)."""

USELESS_FLUSHES = 4
"""Consecutive flushes that gained nothing (no compiled region, a region measured
slower, or gaining less than `OP_US` per op) before this thread stops deferring."""

JUDGED_OPS = 8
"""Traces shorter than this neither count as useless nor reset the count: reading a
metric or two after each step flushes such small traces, and they must not stop the
deferral of the step itself."""

SUSPEND_STEPS = 200
"""Backwards and optimizer steps (`tick`) a thread runs per op, once suspended,
before it defers again to look whether its traces pay now."""

MAX_TRACES = 256
"""Flushed structures whose regions are kept (least recently used dropped first)."""

_enabled = flag_setting("PULLBACK_EAGER_LAZY", eager_native.enabled())


def enabled() -> bool:
    """Whether eager ops are deferred (`PULLBACK_EAGER_LAZY`; by default on when
    native eager kernels are, `PULLBACK_EAGER_NATIVE`)."""
    return _enabled


def set_enabled(flag: bool) -> bool:
    """Turn deferral on or off (flushing what this thread deferred); returns the
    previous setting.  Tests compare both paths with it."""
    global _enabled
    flush()
    _local.fuse_step = _local.backward_seen = _local.suspended = False
    _local.useless = 0
    old, _enabled = _enabled, bool(flag)
    return old


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Run the block with deferral off (what this thread deferred is flushed
    first): tests of per-op behaviour, and code that must see each op run."""
    old = set_enabled(False)
    try:
        yield
    finally:
        set_enabled(old)


stats = {"flushes": 0, "fused": 0, "per_op": 0, "deferred_ops": 0, "skipped": 0}
"""Counts since the process started: traces flushed, of them run as one native
program, or op by op, ops deferred, and traces dropped because nothing they
computed was still wanted."""


class Pending:
    """A deferred op's result: its shape and dtype now, its array after the flush
    (`get`).  Offers the array attributes metadata reads use (`shape`, `dtype`,
    `ndim`, `size`, `itemsize`, `nbytes`), so asking a Tensor its shape never
    flushes: code outside reads them through `Tensor._arr`, never `_data`."""

    __slots__ = ("shape", "dtype", "slot", "trace", "value", "copy", "error")

    def __init__(self, shape: tuple[int, ...], dtype: np.dtype, slot: int, trace: Trace) -> None:
        self.shape = shape
        self.dtype = dtype
        self.slot = slot
        self.trace: Trace | None = trace
        self.value: np.ndarray | None = None
        self.copy = False  # give it a fresh array at the flush (a leaf's first `.grad`)
        self.error: str | None = None

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of elements."""
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of the array (buckets of gradients size by it: `distributed/parallel.py`)."""
        return self.size * self.dtype.itemsize

    def get(self) -> np.ndarray:
        """The array, flushing its trace first when it is not computed yet."""
        if self.value is None:
            if self.trace is not None:
                flush(self.trace)
            if self.value is None:
                raise RuntimeError(
                    "the value of this tensor was never computed: "
                    + (self.error or "the deferred eager op that makes it failed earlier")
                )
        return self.value

    def __reduce__(self) -> tuple[Any, tuple[np.ndarray]]:
        # Pickling or copying a Tensor (its slots) stores the array, not the trace.
        return (np.asarray, (self.get(),))

    def __repr__(self) -> str:
        return f"<Pending {list(self.shape)} {self.dtype}{' ready' if self.value is not None else ''}>"


def resolve(a: Any) -> Any:
    """`a` itself, or the array of a pending value (flushing when needed)."""
    return a.get() if a.__class__ is Pending else a


class Trace:
    """One thread's deferred ops since the last flush (module docstring)."""

    __slots__ = ("ops", "sig", "nslots", "ext", "ext_ids", "pending", "nodes", "groups", "lock", "awaiting_step",
                 "undo", "step_done")

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._reset()

    def _reset(self) -> None:
        """Empty the trace (its contents were taken by `flush`)."""
        self.ops: list[tuple[Any, Sequence[int], Sequence[int], Any]] = []  # template, ins, outs, where
        self.sig: list[tuple[int, Sequence[int]]] = []  # (template uid, input slots) per op
        self.nslots = 0
        self.ext: list[tuple[int, np.ndarray]] = []  # outside arrays and their slots
        self.ext_ids: dict[int, int] = {}  # id(array) -> slot (the trace holds the array)
        self.pending: list[Pending] = []  # every Pending made; alive ones are wanted
        self.nodes: list[Any] = []  # weak references to the nodes recorded on pending values
        self.groups: dict[int, tuple[int, Any, list[int]]] = {}  # plan blocks: start -> (end, native, slot map)
        self.awaiting_step = False  # a backward left it open for the optimizer step (`end_backward`)
        self.step_done = False  # an optimizer step ended it: it runs at `clear_grad` or the next op (`end_step`)
        self.undo: list[tuple[Any, str, Any]] = []  # (object, attribute, old value) to restore if it fails

    def slot_of(self, a: Any) -> int:
        """The slot of an input value: a pending one of this trace, or an outside
        array (numbered once per array object)."""
        if a.__class__ is Pending:
            if a.trace is self:
                return a.slot
            a = a.get()
        s = self.ext_ids.get(id(a))
        if s is None:
            s = self.ext_ids[id(a)] = self.nslots
            self.nslots += 1
            self.ext.append((s, a))
        return s


class _Local(threading.local):
    trace: Trace | None = None
    fuse_step = False  # an optimizer step followed the last backward: keep the next one open for it
    backward_seen = False  # a backward ended since the last optimizer step
    suspended = False  # deferral paid nothing lately: ops run at once (`USELESS_FLUSHES`)
    useless = 0  # consecutive flushes that gained nothing
    ticks = 0  # backwards and optimizer steps so far (`tick`)
    resume_at = 0  # the tick at which a suspended thread defers again


_local = _Local()


def current() -> Trace:
    """This thread's trace (made on first use)."""
    tr = _local.trace
    if tr is None:
        tr = _local.trace = Trace()
    return tr


def capturing() -> bool:
    """Whether ops are deferred now (on, and not suspended in this thread)."""
    return _enabled and not _local.suspended


def suspended() -> bool:
    """Whether this thread stopped deferring because its traces gained nothing
    (it looks again after `SUSPEND_STEPS` backwards and optimizer steps)."""
    return _local.suspended


def tick() -> None:
    """A backward or an optimizer step ended (deferred or not): a suspended thread
    counts them to know when to look again."""
    loc = _local
    loc.ticks += 1
    if loc.suspended and loc.ticks >= loc.resume_at:
        loc.suspended = False
        loc.useless = 0


def _judge(useful: bool | None) -> None:
    """Count a flush that gained nothing (False), reset on one that did (True);
    None: not known yet (a region still probing or compiling)."""
    if not eager_native.enabled():
        return  # no region can gain: deferral stays on (tests compare both paths so)
    loc = _local
    if useful is False:
        loc.useless += 1
        if loc.useless >= USELESS_FLUSHES:
            loc.suspended = True
            loc.resume_at = loc.ticks + SUSPEND_STEPS
    elif useful:
        loc.useless = 0


def _next_step(tr: Trace) -> None:
    """An op joins `tr` after an optimizer step ended it: the step runs first."""
    if tr.step_done:
        flush(tr)


def defer(tpl: Any, arrays: list[Any], where: Any) -> list[Pending]:
    """Append a deferrable template's op on `arrays` (arrays or pending values; a
    pending value of an earlier flush is replaced by its array in place, as nodes
    save them) and return its pending results."""
    # (Every eager op of a deferred step comes here: `slot_of` is inlined and a
    # single result made directly, ~2.3 -> ~1.5 us an op.)
    tr = _local.trace
    if tr is None:
        tr = current()
    if tr.step_done:
        _next_step(tr)
    for i, a in enumerate(arrays):
        if a.__class__ is Pending and a.trace is not tr:
            arrays[i] = a.get()
    with tr.lock:  # (another thread may be flushing it: a pending value it was handed)
        ins_list = []
        for a in arrays:
            if a.__class__ is Pending:
                if a.trace is tr:
                    ins_list.append(a.slot)
                    continue
                a = a.get()  # (flushed by another thread meanwhile)
            s = tr.ext_ids.get(id(a))
            if s is None:
                s = tr.ext_ids[id(a)] = tr.nslots
                tr.nslots += 1
                tr.ext.append((s, a))
            ins_list.append(s)
        ins = tuple(ins_list)
        n = tr.nslots
        shapes = tpl.shapes
        tr.sig.append((tpl.uid, ins))
        if len(shapes) == 1:
            tr.nslots = n + 1
            tr.ops.append((tpl, ins, (n,), where))
            p = Pending(shapes[0], tpl.dtypes[0], n, tr)
            tr.pending.append(p)
            results = [p]
        else:
            outs = range(n, n + len(shapes))
            tr.nslots = n + len(shapes)
            tr.ops.append((tpl, ins, outs, where))
            results = [Pending(shape, dt, s, tr) for shape, dt, s in zip(shapes, tpl.dtypes, outs)]
            tr.pending.extend(results)
        nops = len(tr.ops)
    stats["deferred_ops"] += 1
    if nops >= MAX_OPS:
        flush(tr)
    return results


def note_undo(obj: Any, attr: str, old: Any) -> None:
    """`obj.attr` now holds a pending value of this trace: should the trace fail,
    it gets `old` back (a gradient accumulated by a deferred backward), as the
    per-op path would have left it (its error would have stopped the step)."""
    current().undo.append((obj, attr, old))


def note_node(node: Any) -> None:
    """Remember a node recorded on pending values: the flush gives it the arrays."""
    current().nodes.append(weakref.ref(node))


def defer_add(a: Any, b: Any, tpl: Any) -> Pending:
    """`a + b` deferred with the add template `tpl` (gradient accumulation)."""
    return defer(tpl, [a, b], None)[0]


def defer_plan(
    steps: Sequence[tuple[Any, Sequence[int], Sequence[int]]],
    start: Sequence[Any],
    externals: Sequence[tuple[int, Any]],
    results: Sequence[int | None],
    native: Any,
    meta: dict[int, tuple[tuple[int, ...], np.dtype]],
) -> list[Any]:
    """Append a backward plan's steps (`autograd/plan.py`): `externals` are
    (plan slot, value) pairs, `start` the folded constants, `meta` the shape and
    dtype of each slot a step writes.  Returns per wanted gradient a pending value,
    an array (a gradient no step computes) or None (unreached).  `native` (the
    plan's own region) runs the block when the trace runs op by op."""
    tr = current()
    if tr.step_done:
        _next_step(tr)
    with tr.lock:
        return _append_plan(tr, steps, start, externals, results, native, meta)


def _append_plan(
    tr: Trace,
    steps: Sequence[tuple[Any, Sequence[int], Sequence[int]]],
    start: Sequence[Any],
    externals: Sequence[tuple[int, Any]],
    results: Sequence[int | None],
    native: Any,
    meta: dict[int, tuple[tuple[int, ...], np.dtype]],
) -> list[Any]:
    """`defer_plan` holding the trace's lock."""
    slot_map = [-1] * len(start)
    for s, a in enumerate(start):
        if a is not None:
            slot_map[s] = tr.slot_of(a)
    for s, v in externals:
        slot_map[s] = tr.slot_of(v)
    first = len(tr.ops)
    for tpl, ins, outs in steps:
        tins = [slot_map[i] for i in ins]
        touts = []
        for o in outs:
            slot_map[o] = tr.nslots
            touts.append(tr.nslots)
            tr.nslots += 1
        tr.ops.append((tpl, tins, touts, None))
        tr.sig.append((tpl.uid, tuple(tins)))
    stats["deferred_ops"] += len(steps)
    if native is not None and native.state is not eager_native.OFF:
        tr.groups[first] = (len(tr.ops), native, slot_map)
    written = {o for _, _, outs in steps for o in outs}
    outside = dict(externals)
    out: list[Any] = []
    for r in results:
        if r is None:
            out.append(None)
        elif r in written:
            shape, dt = meta[r]
            p = Pending(shape, dt, slot_map[r], tr)
            tr.pending.append(p)
            out.append(p)
        else:
            out.append(outside[r] if start[r] is None else start[r])
    return out


def end_backward() -> None:
    """A `backward` joined the trace.  It runs now -- a trace kept open holds the
    arrays it reads, which `retain_graph=False` promises to release -- unless the
    last backward was followed by an optimizer step: then the step's updates join
    the same trace and `end_step` runs it, one program for the whole step."""
    _local.backward_seen = True
    tr = current()
    if _local.fuse_step and tr.ops:
        tr.awaiting_step = True
    else:
        flush(tr)


def end_step() -> None:
    """An optimizer step ended (`optimizer._apply`): the trace is complete.  It
    runs at the `clear_grad()` that usually follows (`end_clear`): the cleared
    gradients are then no longer wanted, so the program fuses them into the
    updates instead of writing them out; or at the next op or read, whichever
    comes first.  The next backward's trace is kept open for the next step when
    one followed a backward."""
    if _local.backward_seen:
        _local.fuse_step = True
        _local.backward_seen = False
    tr = current()
    tr.awaiting_step = False
    if tr.ops:
        tr.step_done = True
    tick()


def end_clear() -> None:
    """`optimizer.clear_grad()` ended: run the step its `end_step` completed."""
    tr = _local.trace
    if tr is not None and tr.step_done:
        flush(tr)


# ------------------------------------------------------------------- the flush

_REGIONS: OrderedDict[Any, eager_native.NativeRegion | None] = OrderedDict()
"""Flushed structures and their fused regions (None: not compilable, or native
eager kernels off when first seen)."""

_UNSEEN: Any = object()
"""`_REGIONS.get`'s answer for a structure not flushed before."""

_BASE_REFS = 3
"""`sys.getrefcount` of a pending value only the trace holds (the list, the loop
variable, the call's argument)."""


def flush(trace: Trace | None = None) -> None:
    """Run the deferred ops of `trace` (this thread's by default) and give every
    pending value still held its array."""
    tr = _local.trace if trace is None else trace
    if tr is None or not tr.ops:
        return
    with tr.lock:
        if not tr.ops:
            return
        if tr.awaiting_step:  # a value was read before the step came: stop waiting for it
            _local.fuse_step = False
        ops, sig, nslots, ext = tr.ops, tr.sig, tr.nslots, tr.ext
        pending, nodes, groups, undo = tr.pending, tr.nodes, tr.groups, tr.undo
        tr._reset()
        stats["flushes"] += 1
        try:
            getrc = sys.getrefcount
            wanted_p = [p for p in pending if getrc(p) > _BASE_REFS]
            for p in pending:
                p.trace = None
            if not wanted_p:
                stats["skipped"] += 1
                return
            wanted = sorted({p.slot for p in wanted_p})
            vals: list[Any] = [None] * nslots
            for s, a in ext:
                vals[s] = a
            useful = _run(ops, sig, vals, wanted, groups)
            if len(ops) >= JUDGED_OPS:
                _judge(useful)
            for p in wanted_p:
                v = vals[p.slot]
                p.value = np.array(v) if p.copy else v
            for ref in nodes:
                node = ref()
                if node is not None and node.saved_in is not None:
                    node.saved_in = [a.get() if a.__class__ is Pending else a for a in node.saved_in]
                    node.saved_out = [a.get() if a.__class__ is Pending else a for a in node.saved_out]
        except BaseException as e:
            # Undone as a unit (a second Ctrl-C held back meanwhile): gradients, and
            # the parameters and accumulators a deferred optimizer step wrote.
            with deferred_interrupts():
                for obj, attr, old in reversed(undo):
                    setattr(obj, attr, old)
            for p in pending:
                p.trace = None
                if p.value is None:
                    p.error = f"the deferred eager ops that compute it failed ({type(e).__name__}: {e})"
            raise


def _run(
    ops: list[Any], sig: list[Any], vals: list[Any], wanted: list[int], groups: dict[int, Any],
) -> bool | None:
    """Compute the `wanted` slots: the fused region when compiled, else op by op.
    Returns whether deferring this trace paid (None: not known yet)."""
    key = (tuple(sig), tuple(wanted))
    region: eager_native.NativeRegion | None
    region = _REGIONS.get(key, _UNSEEN)  # (hashing the key costs: once, not twice)
    if region is _UNSEEN:
        region = None
        if eager_native.enabled() and eager_native.compilable([tpl.op for tpl, _, _, _ in ops]):
            region = eager_native.NativeRegion(
                f"a deferred eager step of {len(ops)} ops", [(tpl.op, ins, outs) for tpl, ins, outs, _ in ops],
                wanted, keep_below=STEP_KEEP_BELOW,
            )
        _REGIONS[key] = region
        if len(_REGIONS) > MAX_TRACES:
            _REGIONS.popitem(last=False)
    else:
        _REGIONS.move_to_end(key)
    if region is not None and region.state is not eager_native.OFF:
        if region.ready():
            outs = region.call([vals[s] for s in region.feeds], judge=True)
            if outs is None and region.failure is not None:
                failure, region.failure = region.failure, None
                _run_ops(ops, vals, wanted, groups)  # raises when the values were bad
                region.fail(failure)  # the reference ran: the native code is at fault
                return False
            if outs is not None:
                for s, v in zip(region.fetch, outs):
                    vals[s] = v
                stats["fused"] += 1
                if region.state is not eager_native.NATIVE or not eager_native.CALIBRATE:
                    return None
                return region.ref_s - region.native_s >= len(ops) * OP_US * 1e-6
        t = time.perf_counter()
        _run_ops(ops, vals, wanted, groups)
        region.reference(time.perf_counter() - t)
        return None if region.state is not eager_native.OFF else False
    _run_ops(ops, vals, wanted, groups)
    return False


def _live_ops(ops: list[Any], wanted: list[int]) -> list[bool]:
    """Which ops some wanted slot depends on (the others are not run)."""
    need = set(wanted)
    live = [False] * len(ops)
    for i in range(len(ops) - 1, -1, -1):
        _, ins, outs, _ = ops[i]
        for o in outs:
            if o in need:
                live[i] = True
                need.update(ins)
                break
    return live


def _run_ops(ops: list[Any], vals: list[Any], wanted: list[int], groups: dict[int, Any]) -> None:
    """The per-op path: each live op's `Template.run`, in order; a backward plan's
    block through its own native region when that is compiled."""
    stats["per_op"] += 1
    live = _live_ops(ops, wanted)
    i, n = 0, len(ops)
    with np.errstate(all="ignore"):  # as every kernel does, once for the whole trace
        while i < n:
            group = groups.get(i)
            if group is not None:
                end, native, slot_map = group
                if any(live[i:end]):
                    _run_group(ops, i, end, native, slot_map, vals)
                i = end
                continue
            if live[i]:
                tpl, ins, outs, where = ops[i]
                try:
                    results = tpl.run([vals[s] for s in ins], quiet=True)
                except Exception as e:  # noqa: BLE001 - re-raised, naming the op and the user line
                    raise _located(e, tpl, where) from None
                for s, v in zip(outs, results):
                    vals[s] = v
            i += 1


def _run_group(ops: list[Any], i: int, end: int, native: Any, slot_map: list[int], vals: list[Any]) -> None:
    """A backward plan's steps: its native region when ready (as `runner.run_plan`
    would), else its templates, timed for the region's choice."""
    if native.state is not eager_native.OFF and native.ready():
        outs = native.call([vals[slot_map[s]] for s in native.feeds])
        if outs is not None:
            for s, v in zip(native.fetch, outs):
                vals[slot_map[s]] = v
            return
    t = time.perf_counter()
    for tpl, ins, outs, where in ops[i:end]:
        try:
            results = tpl.run([vals[s] for s in ins], quiet=True)
        except Exception as e:  # noqa: BLE001 - re-raised, naming the op
            raise _located(e, tpl, where) from None
        for s, v in zip(outs, results):
            vals[s] = v
    if native.state is not eager_native.OFF:
        native.reference(time.perf_counter() - t)


def _located(e: Exception, tpl: Any, where: Any) -> Exception:
    """`e` again, its message naming the deferred op and where the user called it."""
    at = f" (eager op '{tpl.op.name}'" + (
        f" called at {where[0]}:{where[1]} in {where[2]})" if where else " of a backward)"
    )
    try:
        new = type(e)(f"{e}{at}")
    except Exception:  # noqa: BLE001 - an exception type taking other arguments
        new = RuntimeError(f"{type(e).__name__}: {e}{at}")
    return new


def clear_cache() -> None:
    """Forget every flushed structure's region (tests)."""
    _REGIONS.clear()


__all__ = [
    "MAX_OPS", "Pending", "Trace", "capturing", "clear_cache", "current", "defer", "defer_add", "defer_plan",
    "enabled", "end_backward", "end_clear", "end_step", "flush", "note_node", "note_undo", "paused", "resolve", "set_enabled", "stats",
    "suspended", "tick",
]
