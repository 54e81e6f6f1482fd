"""The Scope: where persistable variables (parameters, optimizer state) live between
runs, as numpy arrays keyed by Paddle name.

An entry may instead be a `DeviceResident`: a value a device backend keeps in
device memory between runs (the GPU backend's parameters and optimizer state).  It
is copied to the host only when read: the first host read (`scope[name]`, a
tensor's `numpy()`, `np.array(...)`) materializes it and the entry becomes that
numpy array.  Backends read entries without materializing them with
`stored_entry(scope, name)`, so a training loop on the GPU copies no parameter.

Paddle's spelling works (`scope.var(name).get_tensor().set(array, place)`,
`np.array(scope.find_var(name).get_tensor())`), and a `Scope` is also a mutable
mapping from names to numpy arrays (`scope["fc_0.w_0"]`), which is what the executor
and its backends use.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, MutableMapping
from typing import Any

import numpy as np


class DeviceResident:
    """A scope value living in device memory (see the module doc).  Subclasses
    define `to_host`; `shape` and `dtype` answer without a copy."""

    shape: tuple[int, ...]
    dtype: np.dtype[Any]

    def to_host(self) -> np.ndarray:
        """A host copy (made once: later calls return the same array)."""
        raise NotImplementedError

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        a = self.to_host()
        if dtype is not None:
            return a.astype(dtype)
        return a.copy() if copy else a


def stored_entry(scope: MutableMapping[str, Any], name: str) -> Any:
    """The entry `name` as stored: a `DeviceResident` stays one (a `Scope` would
    materialize it on `scope[name]`); any other mapping is read as it is."""
    return scope.raw(name) if isinstance(scope, Scope) else scope[name]


class LoDTensor:
    """Paddle's `LoDTensor`: an array with `set`, `shape()` and `np.array(t)`.

    A tensor obtained from a scope variable reads and writes the scope; one returned
    by `Executor.run(..., return_numpy=False)` owns its array.
    """

    def __init__(self, array: np.ndarray | None = None) -> None:
        self._array = array

    def _load(self) -> np.ndarray | None:
        return self._array

    def _store(self, array: np.ndarray) -> None:
        self._array = array

    def set(self, array: Any, place: Any = None) -> None:
        """Copy `array` into the tensor (`place` is accepted for Paddle's signature)."""
        self._store(np.array(array, copy=True))

    def numpy(self) -> np.ndarray:
        """The value as a numpy array."""
        a = self._load()
        if a is None:
            raise RuntimeError("the tensor holds no data yet (it was never set)")
        return a

    def shape(self) -> list[int]:
        """The dimensions (a method, as in Paddle's LoDTensor)."""
        return list(self.numpy().shape)

    def _is_initialized(self) -> bool:
        return self._load() is not None

    def lod(self) -> list[list[int]]:
        """Level-of-detail offsets: pullback tensors are always dense (no LoD)."""
        return []

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        # numpy 2 passes copy=True for np.array(t) and trusts us to copy: the
        # compiled backend updates scope arrays in place, so an alias would change.
        a = self.numpy()
        if dtype is not None:
            return a.astype(dtype)
        return a.copy() if copy else a

    def __repr__(self) -> str:
        a = self._load()
        return "LoDTensor(<uninitialized>)" if a is None else f"LoDTensor({a!r})"


class _ScopeTensor(LoDTensor):
    """A tensor view of one scope entry."""

    def __init__(self, scope: Scope, name: str) -> None:
        super().__init__()
        self._scope = scope
        self._name = name

    def _load(self) -> np.ndarray | None:
        return self._scope[self._name] if self._name in self._scope._arrays else None

    def _store(self, array: np.ndarray) -> None:
        self._scope._arrays[self._name] = array


class ScopeVariable:
    """A named slot of a scope (Paddle's `core.Variable`)."""

    def __init__(self, scope: Scope, name: str) -> None:
        self._scope = scope
        self.name = name

    def get_tensor(self) -> LoDTensor:
        """The slot's tensor; reading and setting it reads and writes the scope."""
        return _ScopeTensor(self._scope, self.name)

    def is_initialized(self) -> bool:
        """True once a value was stored."""
        return self.name in self._scope._arrays

    def __repr__(self) -> str:
        return f"ScopeVariable({self.name!r})"


class Scope(MutableMapping[str, np.ndarray]):
    """Named persistable values.  As a mapping it holds only initialized values;
    reading one that lives on a device copies it to the host (once)."""

    def __init__(self) -> None:
        self._arrays: dict[str, np.ndarray | DeviceResident] = {}
        self._declared: set[str] = set()

    def var(self, name: str) -> ScopeVariable:
        """The variable `name`, created (uninitialized) if absent."""
        self._declared.add(name)
        return ScopeVariable(self, name)

    def find_var(self, name: str) -> ScopeVariable | None:
        """The variable `name`, or None if it was never created or stored."""
        if name in self._declared or name in self._arrays:
            return ScopeVariable(self, name)
        return None

    def local_var_names(self) -> list[str]:
        """Names of all variables of the scope."""
        return sorted(self._declared | set(self._arrays))

    def erase(self, names: list[str]) -> None:
        """Remove variables (missing names are ignored)."""
        for n in names:
            self._declared.discard(n)
            self._arrays.pop(n, None)

    # -- mapping interface over initialized values ---------------------------------

    def __getitem__(self, name: str) -> np.ndarray:
        a = self._arrays[name]
        if isinstance(a, DeviceResident):
            a = self._arrays[name] = a.to_host()
        return a

    def raw(self, name: str) -> np.ndarray | DeviceResident:
        """The entry as stored, a `DeviceResident` not materialized (KeyError if absent)."""
        return self._arrays[name]

    def __setitem__(self, name: str, value: Any) -> None:
        self._arrays[name] = value if isinstance(value, (np.ndarray, DeviceResident)) else np.asarray(value)

    def __delitem__(self, name: str) -> None:
        del self._arrays[name]
        self._declared.discard(name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._arrays)

    def __len__(self) -> int:
        return len(self._arrays)

    def __contains__(self, name: object) -> bool:
        return name in self._arrays

    def __repr__(self) -> str:
        items = ", ".join(f"{k}: {list(v.shape)} {v.dtype}" for k, v in self._arrays.items())
        return f"Scope({{{items}}})"


_global_scope = Scope()


def global_scope() -> Scope:
    """The scope executors use when none is given (`paddle.static.global_scope()`)."""
    return _global_scope


def _switch_scope(scope: Scope) -> Scope:
    global _global_scope
    old, _global_scope = _global_scope, scope
    return old


@contextlib.contextmanager
def scope_guard(scope: Scope) -> Iterator[None]:
    """Make `scope` the global scope inside the `with` block."""
    if not isinstance(scope, Scope):
        raise TypeError(f"scope_guard: expected a Scope, got {type(scope).__name__}")
    old = _switch_scope(scope)
    try:
        yield
    finally:
        _switch_scope(old)
