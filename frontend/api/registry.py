"""Gathers the Paddle functions that op families export, for the namespace modules.

Every module `pullback.frontend.ops.<family>` ends with export lists:

* `PADDLE` (functions for `paddle.X`), `FUNCTIONAL` (`paddle.nn.functional.X`),
  `STATIC_NN` (`paddle.static.nn.X`): lists of functions, exported by `__name__`;
* `FLUID_LAYERS` (`fluid.layers.X`), `TENSOR_METHODS` (methods of Variables):
  dicts from the exported name to the function.

Families are discovered by listing the package, so a new family or function shows
up in every namespace without editing this file.  A family's missing list counts as
empty.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable
from types import ModuleType
from typing import Any

FAMILY_PACKAGE = "pullback.frontend.ops"
LIST_EXPORTS = ("PADDLE", "FUNCTIONAL", "STATIC_NN")
DICT_EXPORTS = ("FLUID_LAYERS", "TENSOR_METHODS")


@functools.cache
def families() -> tuple[ModuleType, ...]:
    """Every op-family module of `pullback.frontend.ops`, imported, in name order."""
    pkg = importlib.import_module(FAMILY_PACKAGE)
    names = sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_"))
    return tuple(importlib.import_module(f"{FAMILY_PACKAGE}.{n}") for n in names)


def exports_by_family(kind: str) -> dict[str, dict[str, Callable[..., Any]]]:
    """For each family, its export `kind` (e.g. "PADDLE") as a name -> function dict."""
    if kind not in LIST_EXPORTS + DICT_EXPORTS:
        raise ValueError(f"unknown export list {kind!r}")
    out: dict[str, dict[str, Callable[..., Any]]] = {}
    for mod in families():
        value = getattr(mod, kind, None) or {}
        if kind in LIST_EXPORTS:
            value = {fn.__name__: fn for fn in value}
        out[mod.__name__.rsplit(".", 1)[-1]] = dict(value)
    return out


@functools.cache
def gather(kind: str) -> dict[str, Callable[..., Any]]:
    """All families' export `kind` merged (a later family wins a name clash; the
    unit tests check that there is none)."""
    merged: dict[str, Callable[..., Any]] = {}
    for table in exports_by_family(kind).values():
        merged.update(table)
    return merged


def paddle() -> dict[str, Callable[..., Any]]:
    """Functions of the `paddle` namespace (`paddle.mean`, `paddle.matmul`, ...)."""
    return gather("PADDLE")


def functional() -> dict[str, Callable[..., Any]]:
    """Functions of `paddle.nn.functional`."""
    return gather("FUNCTIONAL")


def static_nn() -> dict[str, Callable[..., Any]]:
    """Functions of `paddle.static.nn` contributed by op families."""
    return gather("STATIC_NN")


def fluid_layers() -> dict[str, Callable[..., Any]]:
    """Functions of `fluid.layers` contributed by op families."""
    return gather("FLUID_LAYERS")


def tensor_methods() -> dict[str, Callable[..., Any]]:
    """Methods of Variables and Tensors (`x.mean()`, `x.astype('float64')`, ...)."""
    return gather("TENSOR_METHODS")


def install_tensor_methods(cls: type) -> None:
    """Attach `tensor_methods()` to `cls`, never replacing what `cls` defines itself
    (its properties such as `shape` or `name`)."""
    for name, fn in tensor_methods().items():
        if name not in cls.__dict__:
            setattr(cls, name, fn)


def lazy_attributes(
    module_name: str, table: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """A module `__getattr__`/`__dir__` pair resolving `table[name]` on first use,
    for names whose defining module is optional or heavy.  A target is
    `"module:attr"`, or `"module"` for a whole module."""

    def __getattr__(name: str) -> Any:
        target = table.get(name)
        if target is None:
            raise AttributeError(f"module '{module_name}' has no attribute '{name}'")
        mod_name, _, attr = target.partition(":")
        try:
            mod = importlib.import_module(mod_name)
            return getattr(mod, attr) if attr else mod
        except (ImportError, AttributeError) as e:
            raise AttributeError(
                f"'{module_name}.{name}' is not available: {target} cannot be "
                f"loaded ({e})"
            ) from None

    def __dir__() -> list[str]:
        mod = importlib.import_module(module_name)
        return sorted(set(vars(mod)) | set(table))

    return __getattr__, __dir__
