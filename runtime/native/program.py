"""A compiled program in memory, and calling it: the ctypes marshalling of every run.

- `CompiledProgram`: what one compile produced (the native entry point, its ABI as
  `lowering/abi.py` records it, the memory report, the phase times) plus what its
  calls learn and keep: output shapes per feed shapes (`output_shapes`, at most
  `SHAPE_PLANS_PER_PROGRAM`) and the parameters' buffer addresses.
- `CallPlan`: the ABI as a call reads it, worked out once per program.
- `execute(compiled, feeds, scope)`: check the feeds (names, dtypes, ranks, and sizes
  through `lowering.shapes.plan_shapes`) before any native code runs: a wrong shape
  raises ValueError, it never reaches compiled code.  Then call the program's packed
  entry point with one array of 8-byte slots (sizes and buffer addresses) and return
  the fetched values.  Feeds are passed without copies when they already have the
  right dtype and layout; parameters are the scope's own arrays, updated in place by
  the optimizer ops; outputs are fresh numpy arrays.  The generated code frees its
  temporaries before returning.  The call goes through `native/interrupts.py`: a
  run Ctrl-C abandoned (before its commit point) raises `KeyboardInterrupt` having
  written nothing; one interrupted after it finishes, then raises.

Compiling is `native/compiler.py`'s; the caches of compiled programs are
`native/backend.py`'s (in memory) and `native/disk_cache.py`'s.
"""

from __future__ import annotations

import contextlib
import ctypes
import weakref
from collections import OrderedDict
from collections.abc import Hashable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from pullback.dialects.pd.base import DTYPES
from pullback.lowering.abi import Program, output_values
from pullback.lowering.memory import MemoryReport, Peak
from pullback.lowering.phase_times import PhaseTimes
from pullback.lowering.shapes import ShapeError, plan_shapes
from pullback.runtime.interpreter import out_of_range
from pullback.runtime.native import disk_cache, interrupts
from pullback.runtime.native.jit import NativeCode

_NP = {d.short: d.numpy for d in DTYPES}
"""numpy dtypes by the element type names of ABI descriptions (`'f32'`)."""

SHAPE_PLANS_PER_PROGRAM = 256
"""Concrete feed-shape plans kept per compiled program (bounded for the reason the
backend's program caches are, `native/backend.py`: one plan per batch size seen, and
batch sizes can be unbounded)."""


def remember(cache: OrderedDict[Any, Any], key: Hashable, value: Any, size: int) -> None:
    """Insert `key` as the most recently used entry of an LRU `cache` of `size`."""
    cache[key] = value
    cache.move_to_end(key)
    while len(cache) > size:
        cache.popitem(last=False)


@dataclass
class CompiledProgram:
    """A program compiled for one fetch list and feed dtypes/ranks."""

    prog: Program
    outputs: list[SSAValue]
    """The `pd` value behind each output buffer (`abi.output_values`)."""
    abi: dict[str, Any]
    fn: Any
    compile_seconds: float
    native: NativeCode | None = None
    """The module behind `fn`: freed when the last program using it is dropped."""
    memory: MemoryReport | None = None
    """Allocation events of the lowered entry function (`lowering/memory.py`)."""
    times: PhaseTimes | None = None
    """Where `compile_seconds` went, per phase (`PULLBACK_COMPILE_TIMES=1` prints it)."""
    shape_plans: OrderedDict[tuple[tuple[int, ...], ...], list[tuple[int, ...]]] = field(
        default_factory=OrderedDict
    )
    """Output shapes per feed shapes (they depend only on the program's structure),
    the `SHAPE_PLANS_PER_PROGRAM` most recently used."""
    addresses: dict[str, tuple[weakref.ref[np.ndarray], int]] = field(default_factory=dict, repr=False)
    """Each persistable's last scope array (weakly: a cached program must not keep a
    dropped model's parameters alive) and its buffer address (`execute`)."""
    constants: dict[str, np.ndarray] = field(default_factory=dict, repr=False)
    """Values of the feeds large constants became (`native/constants.py`), passed on
    every call."""
    first_call: str | None = None
    """The disk-cache key of an entry whose first call has not returned yet: that
    call runs under `disk_cache.trial` (a crash in it drops the entry)."""
    collectives: bool = False
    """The code calls native collectives (`lowering/distributed.py`)."""
    key: str = ""
    """The compile's key: a program whose collectives were checked once
    (`checked_collectives`) runs later with their metadata trusted."""
    interruptible: bool = True
    """Whether Ctrl-C may abandon its runs (`native/interrupts.py`): not a program
    with collectives, where a rank that skipped one would leave the others waiting."""
    _plan: CallPlan | None = field(default=None, repr=False)
    _address: tuple[Any, int] | None = field(default=None, repr=False)

    @property
    def address(self) -> int:
        """The entry point's address (`native/interrupts.py` calls it through the
        pool), worked out once per `fn`; 0 when `fn` is not a ctypes function (a
        test's stand-in, which is then called as it is)."""
        known = self._address
        if known is None or known[0] is not self.fn:
            try:
                address = int(ctypes.cast(self.fn, ctypes.c_void_p).value or 0)
            except (ctypes.ArgumentError, TypeError):
                address = 0
            known = self._address = (self.fn, address)
        return known[1]

    def call_plan(self) -> CallPlan:
        """The ABI as `execute` reads it on every call (made on first use)."""
        if self._plan is None:
            self._plan = CallPlan.of(self.abi)
        return self._plan

    def for_module(self, module: ModuleOp, fetches: Sequence[SSAValue]) -> CompiledProgram:
        """This native code serving an equal (printed-identical) module: the same code,
        ABI and shape plans, with a `Program` view of that module's own values."""
        prog = Program.of(module, fetches, use_fetch_ops=False)
        return replace(self, prog=prog, outputs=output_values(prog, self.abi, fetches), addresses={})

    def dim_bindings(self, feeds: Mapping[str, Any]) -> dict[str, int]:
        """The entry function's dynamic-dimension symbols bound from feed shapes."""
        names = [n for n, _ in self.abi["feeds"]]
        out: dict[str, int] = {}
        for sym, (fi, k) in zip(self.abi.get("dim_names", []), self.abi["dims"]):
            if names[fi] in feeds:
                out[sym] = int(np.shape(feeds[names[fi]])[k])
        return out

    def memory_peak(self, feeds: Mapping[str, Any]) -> Peak:
        """Peak bytes of live temporaries (and the buffers making it) for these feeds."""
        assert self.memory is not None
        return self.memory.peak(self.dim_bindings(feeds))

    def output_shapes(self, feeds: Sequence[np.ndarray]) -> list[tuple[int, ...]]:
        """Concrete output shapes for these feeds (checked; cached per feed shapes)."""
        key = tuple(f.shape for f in feeds)
        plan = self.shape_plans.get(key)
        if plan is None:
            names = [n for n, _ in self.abi["feeds"]]
            shapes = plan_shapes(self.prog, dict(zip(names, key)))
            plan = [shapes[v] for v in self.outputs]
        remember(self.shape_plans, key, plan, SHAPE_PLANS_PER_PROGRAM)
        return plan



def _as_input(name: str, value: Any, spec: list[Any], what: str) -> np.ndarray:
    """A C-contiguous array of the declared dtype and rank (copying only if needed)."""
    shape, elem = spec
    dtype = np.dtype(_NP[elem])
    arr = np.asarray(value)
    if arr.ndim != len(shape):
        raise ValueError(
            f"{what} '{name}' has rank {arr.ndim} (shape {list(arr.shape)}), "
            f"but the program declares rank {len(shape)}"
        )
    if arr.dtype != dtype:
        if not np.can_cast(arr.dtype, dtype, casting="same_kind") and not (
            arr.dtype.kind in "iub" and dtype.kind in "iu"
        ):
            raise ValueError(f"{what} '{name}' has dtype {arr.dtype}, expected {dtype}")
        arr = arr.astype(dtype)
    # Not np.ascontiguousarray: it turns a 0-d array into shape [1].
    return np.require(arr, requirements="C")


@dataclass(frozen=True)
class CallPlan:
    """What `execute` needs of a program's ABI on every call, worked out once: the
    feeds' and parameters' dtypes as numpy objects, the slot array's ctypes type, and
    which outputs are new persistables.  (Re-deriving these from the JSON-shaped ABI
    each call, and taking every buffer's address through `ndarray.ctypes`, cost ~120
    us per call: 3-4% of a 3 ms training step.)"""

    feeds: tuple[tuple[str, np.dtype, int, list[Any]], ...]
    """(name, dtype, rank, ABI spec) of each feed."""
    params: tuple[tuple[str, np.dtype, tuple[int, ...]], ...]
    """(name, dtype, shape) of each persistable the program reads or writes."""
    out_dtypes: tuple[np.dtype, ...]
    new_outputs: tuple[tuple[int, str], ...]
    """(output index, scope name) of each persistable the program creates."""
    slots: Any
    """The ctypes array type of the entry point's one argument."""

    @classmethod
    def of(cls, abi: dict[str, Any]) -> CallPlan:
        """The plan of `abi` (as `abi_of` records it)."""
        feeds = tuple((name, np.dtype(_NP[spec[1]]), len(spec[0]), spec) for name, spec in abi["feeds"])
        params = tuple((name, np.dtype(_NP[elem]), tuple(shape)) for name, (shape, elem) in abi["params"])
        outputs = abi["outputs"]
        n_new = _n_new(abi)
        new = tuple((i, name) for i, (name, _) in enumerate(outputs) if i >= len(outputs) - n_new)
        n_slots = len(abi["dims"]) + len(feeds) + len(params) + len(outputs) + (1 if has_status(abi) else 0)
        return cls(feeds, params, tuple(np.dtype(_NP[spec[1]]) for _, spec in outputs), new,
                   ctypes.c_int64 * n_slots)


def _feed_array(name: str, value: Any, dtype: np.dtype, rank: int, spec: list[Any]) -> np.ndarray:
    """`value` as the program's feed `name`: itself when it already is a C-contiguous
    array of the declared dtype and rank (the common case, checked without a call
    into numpy), else `_as_input`'s conversion and checks."""
    if type(value) is np.ndarray and value.dtype == dtype and value.ndim == rank and value.flags.c_contiguous:
        return value
    return _as_input(name, value, spec, "feed")


def _param_array(
    compiled: CompiledProgram, scope: MutableMapping[str, np.ndarray], name: str, dtype: np.dtype,
    shape: tuple[int, ...],
) -> tuple[np.ndarray, int]:
    """The scope's array for persistable `name` and its buffer's address.

    Parameters are the same arrays from step to step (updated in place), so their
    addresses are remembered per program (`CompiledProgram.addresses`): a hit needs
    the same array object (alive), still of the declared dtype and shape,
    C-contiguous and writeable.  An array object keeps its buffer for life; only
    `ndarray.resize` moves it, and that changes its size, which the shape check
    sees (resizing away and back between two calls would not be seen: numpy's own
    documentation warns against resizing arrays others may hold)."""
    try:
        arr = scope[name]
    except KeyError:
        raise RuntimeError(
            f"parameter '{name}' is not initialized in the scope (run the startup program first)"
        ) from None
    known = compiled.addresses.get(name)
    if known is not None and known[0]() is arr and arr.dtype == dtype and arr.shape == shape:
        flags = arr.flags
        if flags.c_contiguous and flags.writeable:
            return arr, known[1]
    if not (isinstance(arr, np.ndarray) and arr.dtype == dtype and arr.flags.c_contiguous and arr.flags.writeable):
        arr = np.array(arr, dtype=dtype, order="C")  # a copy; 0-d stays 0-d
        scope[name] = arr  # updates in place from now on
    if arr.shape != shape:
        raise ValueError(f"parameter '{name}' has shape {list(arr.shape)} in the scope, expected {list(shape)}")
    address = arr.ctypes.data
    compiled.addresses[name] = (weakref.ref(arr), address)
    return arr, address


def execute(
    compiled: CompiledProgram, feeds: Mapping[str, np.ndarray], scope: MutableMapping[str, np.ndarray]
) -> list[np.ndarray]:
    """Check the feeds, call the native code, return the fetched values
    (`KeyboardInterrupt` when Ctrl-C stopped or followed the run: the module
    docstring)."""
    abi = compiled.abi
    plan = compiled.call_plan()
    feed_arrays = []
    for name, dtype, rank, spec in plan.feeds:
        try:
            value = feeds[name]
        except KeyError:
            if name not in compiled.constants:
                raise ValueError(f"feed '{name}' is missing") from None
            value = compiled.constants[name]
        feed_arrays.append(_feed_array(name, value, dtype, rank, spec))
    try:
        out_shapes = compiled.output_shapes(feed_arrays)
    except ShapeError as e:
        raise ValueError(str(e)) from None
    slots: list[int] = [feed_arrays[fi].shape[k] for fi, k in abi["dims"]]
    slots += [a.ctypes.data for a in feed_arrays]
    params = []
    writable = []
    for name, dtype, shape in plan.params:
        arr, address = _param_array(compiled, scope, name, dtype, shape)
        params.append(arr)
        slots.append(address)
        if arr.size:
            writable.append(address)
    outs = [np.empty(s, dtype=d) for s, d in zip(out_shapes, plan.out_dtypes)]
    for o in outs:
        address = o.ctypes.data
        slots.append(address)
        if o.size:
            writable.append(address)
    if len(set(writable)) != len(writable):
        raise ValueError("two parameters share one buffer; the compiled code needs distinct arrays")
    checks = abi.get("checks") or []
    status = np.zeros(3, np.int64) if has_status(abi) else None
    if status is not None:
        slots.append(status.ctypes.data)
    with _collectives_of(compiled):
        if compiled.first_call is None:
            state = interrupts.call(compiled.fn, compiled.address, plan.slots(*slots), compiled.interruptible)
        else:
            with disk_cache.trial(compiled.first_call):
                state = interrupts.call(compiled.fn, compiled.address, plan.slots(*slots), compiled.interruptible)
            compiled.first_call = None
    if state & interrupts.INTERRUPTED and not state & interrupts.COMMITTED:
        # Abandoned (work skipped, every persistable write too): nothing to keep.
        raise KeyboardInterrupt(interrupts.ABANDONED)
    if status is not None and status[0] > 0:
        # A failed range check: the code skipped every persistable update after it.
        code, bad, limit = (int(v) for v in status)
        op_name, what = checks[code - 1]
        raise out_of_range(op_name, what, bad, limit)
    for i, name in plan.new_outputs:
        scope[name] = outs[i]
    if state & interrupts.INTERRUPTED:
        raise KeyboardInterrupt(interrupts.FINISHED)  # (after its last write)
    by_name = {n: p for (n, _, _), p in zip(plan.params, params)}
    return [outs[ref] if kind == "out" else by_name[ref] for kind, ref in abi["fetches"]]


checked_collectives: set[str] = set()
"""Keys of the programs whose first run agreed on every collective's metadata with
the other ranks: their later runs trust it.  Every rank runs the same programs the
same number of times, so every rank decides alike (a per-object flag would not:
a program dropped from one rank's cache and compiled again would check alone)."""


@contextlib.contextmanager
def _collectives_of(compiled: CompiledProgram) -> Iterator[None]:
    """Around a call of `compiled`: its native collectives checked on its first run
    and their errors raised (`communicator.native_run`)."""
    if not compiled.collectives:
        yield
        return
    from pullback.runtime.communicator import native_run

    with native_run(trust=compiled.key in checked_collectives):
        yield
    checked_collectives.add(compiled.key)


def has_status(abi: dict[str, Any]) -> bool:
    """Whether the entry point takes the status buffer (range checks, or a commit
    point: `lowering/abi.py`)."""
    return bool(abi.get("checks") or abi.get("commit"))


def _n_new(abi: dict[str, Any]) -> int:
    return sum(1 for n, _ in abi["outputs"] if n)


__all__ = ["CallPlan", "CompiledProgram", "SHAPE_PLANS_PER_PROGRAM", "execute", "remember"]
