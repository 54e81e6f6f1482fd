"""`Executor(place).run(program, feed, fetch_list)`: run a static program, as Paddle does.

A run has four steps:

1. *Resolve* the fetch list (Variables or names; a name means the latest definition,
   so `'fc_0.w_0@GRAD'` and an updated `'fc_0.w_0'` resolve as in Paddle).
2. *Check the feeds* before anything runs: every data variable the program reads is
   fed, nothing unknown is fed, ranks, fixed dimensions and dtypes match.  Python
   lists are converted to the variable's dtype; numpy arrays must already have it.
3. *Prepare* (cached per program version and fetch list): clone the program's
   module, mark every output with a `pd.fetch`, and fill empty `pd.backward` regions
   with the `autodiff` pass.
4. *Execute* on a backend, then store every persistable value the program updated
   (optimizer results named after their parameter, startup initializers) in the scope.

Backends are the seam between the executor and the engines that run `pd` IR.  A
backend is an object with

    run(module, feeds, scope, fetches) -> list[np.ndarray]

where `module` is the prepared module (the same object for repeated runs of an
unchanged program, so a backend may cache compiled code keyed on it and the feed
shapes), `feeds` maps data names to checked arrays, `scope` maps parameter names to
arrays, and `fetches` are SSA values of `module` to return, in order.  The numpy
interpreter is built in; others live in modules listed in `BACKEND_MODULES`, each
exposing `make_backend(place) -> backend`.

Programs come from the frontend (`frontend/framework.py`), a layer above: the
executor reads them through the `StaticProgram` protocol, and the frontend registers
its `Program` and `Variable` classes and its default main program with
`register_frontend` when it is imported (`frontend/install.py`), so this module never
imports it.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
from pullback.dialects import pd
from pullback.dialects.pd.base import DTYPE_BY_NAME, dtype_name, elem_of, shape_of, value_name
from pullback.dialects.bfloat16 import host_cast
from pullback.runtime.interrupts import deferred_interrupts
from pullback.runtime.native import blas_threads
from pullback.runtime.places import CPUPlace, CUDAPlace, Place, cpu_places, cuda_places
from pullback.runtime.scope import LoDTensor, Scope, global_scope, stored_entry
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

# --------------------------------------------------------------------------- programs


class StaticProgram(Protocol):
    """What the executor reads of a program (the frontend's `Program`)."""

    module: ModuleOp
    """Its ops (block 0)."""
    version: int
    """Bumped on every change: prepared copies are cached per version."""
    passes: list[Any]
    """xDSL module passes applied to each prepared copy (before autodiff)."""

    def global_block(self) -> Any:
        """Block 0: `.ir` (the xDSL block) and `.wrap(value)` (its Variable)."""
        ...

    def _lookup(self, name: str) -> SSAValue | None:
        """The latest value named `name`, if any."""
        ...


class _Frontend:
    """The frontend's classes, as `register_frontend` gave them.  Until a frontend
    registers, nothing is a program or a variable and there is no default program."""

    program: tuple[type[Any], ...] = ()
    variable: tuple[type[Any], ...] = ()
    fetchable: tuple[type[Any], ...] = (str,)
    """What a fetch-list item may be: a name or a `Variable`."""
    default_main_program: Callable[[], StaticProgram] | None = None


def register_frontend(
    program: type[Any], variable: type[Any], default_main_program: Callable[[], StaticProgram]
) -> None:
    """Make the executor accept instances of `program` (a `StaticProgram`) and fetch
    `variable`s (with `.name`, `.value` and `.block.program`), and run
    `default_main_program()` when `run` is given no program.  The frontend calls this
    when it is imported (`frontend/install.py`)."""
    _Frontend.program = (program,)
    _Frontend.variable = (variable,)
    _Frontend.fetchable = (str, variable)
    _Frontend.default_main_program = default_main_program


def _default_main_program() -> StaticProgram:
    make = _Frontend.default_main_program
    if make is None:
        raise RuntimeError("Executor: no program given and no frontend loaded (import pullback.static)")
    return make()


# --------------------------------------------------------------------------- backends


class Backend(Protocol):
    """Runs a prepared `pd` module (see the module docstring)."""

    def run(
        self,
        module: ModuleOp,
        feeds: Mapping[str, np.ndarray],
        scope: Mapping[str, np.ndarray],
        fetches: Sequence[SSAValue],
    ) -> list[np.ndarray]: ...


class InterpreterBackend:
    """The numpy reference interpreter (`runtime/interpreter.py`)."""

    def __init__(self, place: Place) -> None:
        if not isinstance(place, CPUPlace):
            raise ValueError(f"the interpreter backend runs on CPUPlace only, not {place}")

    def run(
        self,
        module: ModuleOp,
        feeds: Mapping[str, np.ndarray],
        scope: Mapping[str, np.ndarray],
        fetches: Sequence[SSAValue],
    ) -> list[np.ndarray]:
        """Interpret the whole module and return the fetched values."""
        from pullback.runtime.interpreter import run_module

        env = run_module(module, feeds, scope)
        return [env[v] for v in fetches]


BACKEND_MODULES: dict[str, str] = {
    "compiled": "pullback.runtime.native.backend",
    "cuda": "pullback.runtime.gpu.backend",
}
"""Backends defined elsewhere: name -> module exposing `make_backend(place)`."""


def make_backend(name: str, place: Place) -> Backend:
    """The backend called `name` for `place`; ValueError when it is unavailable."""
    if name == "interpreter":
        return InterpreterBackend(place)
    mod_name = BACKEND_MODULES.get(name)
    if mod_name is None:
        known = ", ".join(["interpreter", *BACKEND_MODULES])
        raise ValueError(f"unknown executor backend '{name}' (known: {known})")
    try:
        mod = importlib.import_module(mod_name)
    except ImportError as e:
        raise ValueError(f"executor backend '{name}' is not available: {e}") from None
    return mod.make_backend(place)


def default_backend(place: Place) -> str:
    """`PULLBACK_BACKEND` if set, else native code: `compiled` (LLVM, JIT) on CPU
    and `cuda` on GPU.  The numpy interpreter stays selectable as the reference."""
    env = os.environ.get("PULLBACK_BACKEND")
    if env:
        return env
    return "cuda" if isinstance(place, CUDAPlace) else "compiled"


# ------------------------------------------------------------------------- preparing


@dataclass
class _Prepared:
    """A program made ready to run for one fetch list."""

    module: ModuleOp
    fetches: list[SSAValue]
    """Values of `module` to return: the fetch list, then the persistable updates."""
    persist_names: list[str]
    """Scope names of the persistable updates (aligned with `fetches[n_fetch:]`)."""
    n_fetch: int


def _uses_anywhere(value: SSAValue) -> bool:
    return any(True for _ in value.uses)


_TOP_LEVEL: weakref.WeakKeyDictionary[StaticProgram, tuple[int, dict[str, pd.DataOp], list[str]]] = (
    weakref.WeakKeyDictionary()
)
"""Per program, at its `version`: its data variables and parameter names (what
`Executor.run` checks on every call; walking the ops for them cost ~20% of a small
training step's call)."""


def _top_level(program: StaticProgram) -> tuple[dict[str, pd.DataOp], list[str]]:
    """The program's data variables by name and its parameters' names, found once
    per program version."""
    known = _TOP_LEVEL.get(program)
    if known is not None and known[0] == program.version:
        return known[1], known[2]
    data: dict[str, pd.DataOp] = {}
    params: list[str] = []
    for op in program.module.body.block.ops:
        if isinstance(op, pd.DataOp):
            data[op.var_name.data] = op
        elif isinstance(op, pd.ParameterOp):
            params.append(op.var_name.data)
    _TOP_LEVEL[program] = (program.version, data, params)
    return data, params


def data_vars(program: StaticProgram) -> dict[str, pd.DataOp]:
    """The program's feed variables by name (a fresh dict)."""
    return dict(_top_level(program)[0])


def persistable_updates(program: StaticProgram) -> dict[str, SSAValue]:
    """The latest value of each persistable name that the program computes.

    Persistable names are those of the program's `pd.parameter` ops and of variables
    flagged `persistable` (initializers in startup programs).  The parameter ops
    themselves only read the scope, so they are not updates.
    """
    block = program.global_block()
    params = {
        op.var_name.data
        for op in block.ir.ops
        if isinstance(op, pd.ParameterOp)
    }
    updates: dict[str, SSAValue] = {}
    for op in block.ir.ops:
        if isinstance(op, (pd.ParameterOp, pd.DataOp)):
            continue
        for v in op.results:
            name = value_name(v)
            if name is not None and (name in params or block.wrap(v).persistable):
                updates[name] = v
    return updates


def _autodiff_if_needed(module: ModuleOp) -> None:
    if not any(isinstance(op, pd.BackwardOp) and not op.is_filled for op in module.walk()):
        return
    try:
        from pullback.passes import PASSES

        autodiff = PASSES["autodiff"]()
    except (ImportError, KeyError):
        return  # the interpreter reports the empty region clearly
    ctx = Context()
    ctx.load_dialect(pd.PD)
    autodiff().apply(ctx, module)


def prepare(program: StaticProgram, fetch_values: Sequence[SSAValue]) -> _Prepared:
    """Clone the program's module, add `pd.fetch` for every output, run autodiff."""
    updates = persistable_updates(program)
    outputs = [*fetch_values, *updates.values()]
    mapping: dict[SSAValue, SSAValue] = {}
    module = program.module.clone(value_mapper=mapping)
    fetch_ops = [pd.FetchOp.create(operands=[mapping[v]]) for v in outputs]
    module.body.block.add_ops(fetch_ops)
    if program.passes:
        # After the fetches exist, so that a pass replacing a value (a gradient by
        # its all-reduce) also replaces what is fetched and written back.
        ctx = Context()
        ctx.load_dialect(pd.PD)
        for p in program.passes:
            p.apply(ctx, module)
    _autodiff_if_needed(module)
    # Feeds nothing reads need not be fed (as in Paddle); backends never see them.
    for op in list(module.body.block.ops):
        if isinstance(op, pd.DataOp) and not _uses_anywhere(op.out):
            op.detach()
            op.erase()
    return _Prepared(
        module=module,
        fetches=[f.x for f in fetch_ops],
        persist_names=list(updates),
        n_fetch=len(fetch_values),
    )


# ---------------------------------------------------------------------------- feeding


def _paddle_shape(var: pd.DataOp) -> list[int]:
    return [d if d >= 0 else -1 for d in shape_of(var.out.type)]


def _feed_error(name: str, var: pd.DataOp, got: str) -> ValueError:
    shape = _paddle_shape(var)
    return ValueError(
        f"The fed variable '{name}' should have dimensions = {len(shape)}, "
        f"shape = {shape}, but received fed shape {got}"
    )


def check_feed(name: str, var: pd.DataOp, value: Any) -> np.ndarray:
    """The fed value as an array of the variable's dtype, or ValueError saying why not.

    numpy arrays must already have the right dtype (as Paddle's `static.data`
    requires); Python numbers and lists are converted to it.
    """
    t = var.out.type
    want = dtype_name(elem_of(t))
    if isinstance(value, LoDTensor):
        value = value.numpy()
    elif hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        value = value.numpy()  # an eager Tensor
    if isinstance(value, (np.ndarray, np.generic)):
        arr = np.asarray(value)
        if arr.dtype != DTYPE_BY_NAME[want].numpy:
            bits = " (its bits as uint16, as Paddle's numpy() gives them)" if want == "bfloat16" else ""
            raise ValueError(
                f"The data type of fed variable '{name}' must be {want}{bits}, but received "
                f"{arr.dtype.name}"
            )
    else:
        try:
            arr = host_cast(np.array(value), DTYPE_BY_NAME[want].numpy)
        except (TypeError, ValueError) as e:
            raise ValueError(
                f"The fed value of '{name}' cannot be converted to a {want} array: {e}"
            ) from None
    shape = shape_of(t)
    if arr.ndim != len(shape):
        raise _feed_error(name, var, str(list(arr.shape)))
    for want_d, got_d in zip(shape, arr.shape):
        if want_d >= 0 and want_d != got_d:
            raise _feed_error(name, var, str(list(arr.shape)))
    return arr


def _reader_feeds(program: StaticProgram, feed: Any) -> Any:
    """`feed` completed by the program's non-iterable loaders
    (`DataLoader.from_generator(iterable=False)`, in `program._feed_readers`): each
    one whose variables `feed` lacks gives its next batch, raising
    `core.EOFException` at the end of its data, as Paddle's `read` op does."""
    readers = getattr(program, "_feed_readers", None)
    if not readers:
        return feed
    if isinstance(feed, (list, tuple)) and len(feed) == 1 and isinstance(feed[0], Mapping):
        feed = feed[0]
    merged = dict(feed or {})
    for reader in readers:
        if not all(name in merged for name in reader.feed_names):
            merged.update(reader.next_feed())
    return merged


def check_feeds(
    program: StaticProgram, feed: Mapping[str, Any] | None, fetches: Sequence[SSAValue] = ()
) -> dict[str, np.ndarray]:
    """Validate `feed` against the program's data variables; return checked arrays.

    A data variable must be fed when an op reads it or it is fetched."""
    if feed is None:
        feed = {}
    if isinstance(feed, (list, tuple)) and len(feed) == 1 and isinstance(feed[0], Mapping):
        feed = feed[0]  # one place's feed, as `DataLoader(feed_list=...)` yields
    if not isinstance(feed, Mapping):
        raise TypeError(f"feed must be a dict from names to arrays, got {type(feed).__name__}")
    data = _top_level(program)[0]
    for name in feed:
        if name not in data:
            known = ", ".join(sorted(data)) or "none"
            raise ValueError(
                f"feed '{name}' is not a data variable of the program "
                f"(its data variables: {known})"
            )
    fetched = set(fetches)
    missing = [
        n
        for n, op in data.items()
        if n not in feed and (_uses_anywhere(op.out) or op.out in fetched)
    ]
    if missing:
        n = missing[0]
        raise ValueError(
            f"feed '{n}' is missing: the program reads data variable '{n}' "
            f"(shape {_paddle_shape(data[n])}, {dtype_name(elem_of(data[n].out.type))})"
        )
    return {name: check_feed(name, data[name], value) for name, value in feed.items()}


# ---------------------------------------------------------------------------- fetching


def flatten_fetch_list(fetch_list: Any) -> list[Any]:
    """Paddle's fetch-list forms as a flat list: None, one Variable or name, or a
    list/tuple whose items are Variables, names, or lists/tuples of them (what
    `gradients()` and `append_backward` return), flattened one level."""
    if fetch_list is None:
        return []
    fetchable = _Frontend.fetchable
    if isinstance(fetch_list, fetchable):
        return [fetch_list]
    if not isinstance(fetch_list, (list, tuple)):
        raise TypeError(
            "fetch_list must be a Variable, a name, or a list or tuple of them, got "
            f"{type(fetch_list).__name__}"
        )
    out: list[Any] = []
    for i, item in enumerate(fetch_list):
        if isinstance(item, (list, tuple)):
            for j, sub in enumerate(item):
                if not isinstance(sub, fetchable):
                    raise TypeError(
                        f"fetch_list items must be Variables or names: fetch_list[{i}][{j}] "
                        f"is a {type(sub).__name__}"
                    )
            out.extend(item)
        elif isinstance(item, fetchable):
            out.append(item)
        else:
            raise TypeError(
                "fetch_list items must be Variables or names (or lists or tuples of "
                f"them): fetch_list[{i}] is a {type(item).__name__}"
            )
    return out


def resolve_fetch(program: StaticProgram, item: Any) -> SSAValue:
    """The value of `program` that a fetch-list item (Variable or name) designates."""
    if isinstance(item, _Frontend.variable):
        if item.block.program is program:
            return item.value
        item = item.name  # a Variable of another program (e.g. before clone())
    if not isinstance(item, str):
        raise TypeError(
            f"fetch_list items must be Variables or names, got {type(item).__name__}"
        )
    value = program._lookup(item)
    if value is None:
        raise ValueError(f"fetch variable '{item}' is not in the program")
    return value


# ---------------------------------------------------------------------------- executor


class Executor:
    """Runs static programs on a place (Paddle's `static.Executor`).

    `backend` picks the engine ("compiled", "interpreter", "cuda"); by default it
    comes from `PULLBACK_BACKEND`, else "compiled" on CPU and "cuda" on GPU.
    """

    def __init__(self, place: Place | None = None, backend: str | None = None) -> None:
        self.place = place if place is not None else CPUPlace()
        if not isinstance(self.place, Place):
            raise TypeError(
                f"Executor: place must be CPUPlace() or CUDAPlace(i), got {place!r}"
            )
        self.backend_name = backend or default_backend(self.place)
        self.backend = make_backend(self.backend_name, self.place)
        self._cache: weakref.WeakKeyDictionary[StaticProgram, dict[Any, _Prepared]] = (
            weakref.WeakKeyDictionary()
        )

    def _prepared(self, program: StaticProgram, fetch_values: list[SSAValue]) -> _Prepared:
        per_program = self._cache.setdefault(program, {})
        key = (program.version, tuple(fetch_values))
        entry = per_program.get(key)
        if entry is None:
            per_program.clear()  # older versions of the program are dead
            entry = per_program[key] = prepare(program, fetch_values)
            seal = getattr(self.backend, "seal", None)
            if seal is not None:
                seal(entry.module)  # the executor's own copy: nothing changes it
        return entry

    def run(
        self,
        program: StaticProgram | None = None,
        feed: Mapping[str, Any] | None = None,
        fetch_list: Sequence[Any] | Any = None,
        feed_var_name: str = "feed",
        fetch_var_name: str = "fetch",
        scope: Scope | None = None,
        return_numpy: bool = True,
        use_program_cache: bool = False,
        return_merged: bool = True,
        use_prune: bool = False,
    ) -> list[Any]:
        """Run `program` (default: the default main program) and return the values of
        `fetch_list`, as numpy arrays (`return_numpy`) or LoDTensors.

        Raises ValueError for bad feeds or fetch names (before running) and
        RuntimeError when a parameter the program reads is not in the scope.
        """
        if program is None:
            program = _default_main_program()
        program = getattr(program, "_program", program)  # a static.CompiledProgram
        if not isinstance(program, _Frontend.program):
            raise TypeError(f"Executor.run: program must be a Program, got {type(program).__name__}")
        scope = scope if scope is not None else global_scope()
        fetch_list = flatten_fetch_list(fetch_list)
        fetch_values = [resolve_fetch(program, f) for f in fetch_list]
        feeds = check_feeds(program, _reader_feeds(program, feed), fetch_values)
        _set_scheduled_learning_rate(program, scope)
        _check_parameters(program, scope)

        entry = self._prepared(program, fetch_values)
        blas_threads.maybe_apply()  # once a second at most: BLAS threads follow the load
        outs = self.backend.run(entry.module, feeds, scope, entry.fetches)
        # The step's persistables are written as a unit (Ctrl-C held back until all
        # are: issue 32).  Parameters a compiled program updated in place are the
        # scope's arrays already; a single write needs no deferral.
        writes = [(n, v) for n, v in zip(entry.persist_names, outs[entry.n_fetch :]) if n not in scope or stored_entry(scope, n) is not v]
        with deferred_interrupts() if len(writes) > 1 else contextlib.nullcontext():
            for name, value in writes:
                scope[name] = value
        results = outs[: entry.n_fetch]
        if return_numpy:
            return [np.array(r, copy=True) for r in results]
        return [LoDTensor(np.array(r, copy=True)) for r in results]

    def _entry(self, program: StaticProgram | None, feed: Mapping[str, Any] | None,
               fetch_list: Sequence[Any] | Any) -> tuple[_Prepared, dict[str, np.ndarray]]:
        """The prepared program of `run(program, feed, fetch_list)` and its checked feeds."""
        if program is None:
            program = _default_main_program()
        if fetch_list is None:
            fetch_list = []
        elif isinstance(fetch_list, _Frontend.fetchable):
            fetch_list = [fetch_list]
        fetch_values = [resolve_fetch(program, f) for f in fetch_list]
        feeds = check_feeds(program, feed, fetch_values)
        return self._prepared(program, fetch_values), feeds

    def compile(
        self,
        program: StaticProgram | None = None,
        feed: Mapping[str, Any] | None = None,
        fetch_list: Sequence[Any] | Any = None,
    ) -> bool:
        """Compile what `run(program, feed, fetch_list)` would run, without running it
        (not a Paddle API; safe on another thread while this executor runs nothing):
        only the feeds' dtypes and ranks matter.  True when the program runs as native
        code; False when this backend interprets it (an interpreter backend, or a
        program the compiled backend cannot compile and runs on the interpreter)."""
        from pullback.runtime.native.backend import CompiledBackend

        if not isinstance(self.backend, CompiledBackend):
            return False
        entry, feeds = self._entry(program, feed, fetch_list)
        return self.backend.program_for(entry.module, entry.fetches, feeds) is not None

    def memory_peak(
        self,
        program: StaticProgram | None = None,
        feed: Mapping[str, Any] | None = None,
        fetch_list: Sequence[Any] | Any = None,
    ) -> Any:
        """The peak bytes of live temporaries when `program` runs natively with these
        feeds (not a Paddle API): a `lowering.memory.Peak` with `.bytes` and `.live`
        (the buffers that make the peak).  Compiles like `run` (the compiled
        backend's cache is shared) but runs nothing; dynamic dims come from `feed`."""
        from pullback.runtime.native.backend import CompiledBackend
        from pullback.runtime.native.compiler import compile_program

        entry, feeds = self._entry(program, feed, fetch_list)
        if isinstance(self.backend, CompiledBackend):
            compiled = self.backend.program_for(entry.module, entry.fetches, feeds)
        else:
            compiled = compile_program(entry.module, entry.fetches)
        if compiled is None or compiled.memory is None:
            raise RuntimeError("Executor.memory_peak: this program does not compile to native code")
        return compiled.memory_peak(feeds)

    def close(self) -> None:
        """Release resources (nothing to release; kept for Paddle's API)."""
        self._cache.clear()


def _set_scheduled_learning_rate(program: StaticProgram, scope: Scope) -> None:
    """Write the current rate of the program's learning-rate schedule (an optimizer
    built with `learning_rate=LRScheduler`) into its `[1]` variable: the program
    reads the rate from the scope, so a new rate changes no program."""
    scheduler = getattr(program, "lr_scheduler", None)
    var = getattr(program, "lr_var", None)
    if scheduler is None or var is None:
        return
    scope[var.name] = np.full([1], scheduler(), dtype=np.dtype(f"{var.dtype}"))


def _check_parameters(program: StaticProgram, scope: Mapping[str, np.ndarray]) -> None:
    missing = [name for name in _top_level(program)[1] if name not in scope]
    if missing:
        names = ", ".join(f"'{n}'" for n in missing)
        raise RuntimeError(
            f"parameter(s) {names} not initialized in the scope: "
            "run the startup program first"
        )


__all__ = [
    "Backend",
    "CPUPlace",
    "CUDAPlace",
    "Executor",
    "InterpreterBackend",
    "Place",
    "StaticProgram",
    "check_feeds",
    "cpu_places",
    "cuda_places",
    "flatten_fetch_list",
    "make_backend",
    "persistable_updates",
    "prepare",
    "register_frontend",
]
