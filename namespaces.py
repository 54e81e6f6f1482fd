"""Paddle's public namespaces under the package root, loaded on first use.

`import pullback as paddle` must stay cheap (the `pullback-opt` tool and xDSL's plugin
discovery import the package and never use the frontend), and importing
`pullback.frontend` wires the whole frontend together.  So the root module imports
only this module: `install` gives the root two meta-path finders and a module
`__getattr__`/`__dir__`, and the first use of a public name (`paddle.static`,
`import pullback.fluid.layers`, `paddle.mean`) loads the tables of
`pullback.frontend.api` (`ALIASES`: public name -> implementing module, and
`ROOT_NAMESPACE`) and with them the frontend.  The real subpackages (`dialects`,
`runtime`, `distributed`, ...) never trigger it: `paddle.distributed` imports just
that subpackage on first use.

Every other public module path of Paddle imports too (`paddle.jit.api`,
`paddle.nn.layer.norm`, `paddle.base.framework`, `paddle.sparse`, ...): the table
`frontend/api/paddle_modules.json` (written once from a real Paddle install by
`tools/paddle_modules.py`) lists each path with the names it exports and which of
them are the same object in Paddle.  A path pullback has no module for is a
`PaddleModule`, made on import by the fallback finder (`PaddlePathFinder`, last on
`sys.meta_path`, so real modules and aliases always win); a name of it resolves on
first use to the object pullback has at another place of the same Paddle object
(`paddle.nn.layer.norm.BatchNorm2D` is `paddle.nn.BatchNorm2D`), or to
`pullback.frontend.api.SYNONYMS`.  The alias modules and the real modules standing
for Paddle paths get the same fallback for the names they lack (`adopt`), and a
child module never hides a name of its parent (`KeepNames`: `paddle.batch` stays
the function once the module `paddle.batch` is imported).  A name
Paddle has and pullback does not raises `NotSupportedError` (an `AttributeError`,
so `hasattr` and `getattr(m, n, default)` work) saying so; `from paddle.x import
name` raises `NotSupportedImportError` with the same message.
"""

from __future__ import annotations

import functools
import importlib
import importlib.abc
import importlib.machinery
import os
import pkgutil
import sys
from collections.abc import Callable
from types import FrameType, ModuleType
from typing import Any

API_MODULE = "pullback.frontend.api"
"""The module holding `ALIASES`, `ROOT_NAMESPACE` and `SYNONYMS`."""

PADDLE_MODULES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "frontend", "api", "paddle_modules.json")
"""Paddle's public module paths and their names (see `tools/paddle_modules.py`)."""


_OWN_GETATTR = "__pullback_own_getattr__"
"""Where `adopt` keeps a module's own `__getattr__`."""

_PADDLE_PATHS = "__paddle_paths__"
"""The Paddle paths (relative to the root) an adopted module stands for."""


def _api() -> ModuleType:
    return importlib.import_module(API_MODULE)


# ------------------------------------------------------------------ Paddle's table


class NotSupportedError(AttributeError, NotImplementedError):
    """A name of Paddle's API that pullback does not have (`paddle.sparse.matmul`)."""


class NotSupportedImportError(ImportError, NotImplementedError):
    """`from paddle.x import name` where pullback does not have `name`."""


class PaddleTable:
    """`paddle_modules.json` read: module paths are relative to the root (`""` is the
    root itself, `"nn.layer.norm"`)."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.version: str = data["paddle_version"]
        self.modules: dict[str, dict[str, Any]] = {
            _relative(k): v for k, v in data["modules"].items()
        }
        self.failed: dict[str, str] = data.get("failed", {})
        self.packages = {rel.rpartition(".")[0] for rel in self.modules if rel}
        """Paths with child modules."""

    @functools.cached_property
    def places(self) -> dict[int, list[tuple[str, str]]]:
        """Object number -> its places `(module, name)`, shallowest first."""
        places: dict[int, list[tuple[str, str]]] = {}
        for rel, names in self.modules.items():
            for name, entry in names.items():
                if isinstance(entry, int):
                    places.setdefault(entry, []).append((rel, name))
        for ps in places.values():
            ps.sort(key=lambda p: (p[0].count(".") + (p[0] != ""), p))
        return places


def _relative(paddle_name: str) -> str:
    return "" if paddle_name == "paddle" else paddle_name[len("paddle.") :]


@functools.cache
def paddle_table() -> PaddleTable:
    """The table of Paddle's module paths (read once)."""
    import json  # here: `import pullback` never reads the table

    with open(PADDLE_MODULES, encoding="utf-8") as f:
        return PaddleTable(json.load(f))


def _paddle_path(rel: str, name: str | None = None) -> str:
    path = f"paddle.{rel}" if rel else "paddle"
    return f"{path}.{name}" if name else path


def _from_import(frame: FrameType | None) -> bool:
    """Whether `frame` is running `from m import name` (so an AttributeError would be
    replaced by the import system's own `cannot import name`)."""
    import opcode

    try:
        return frame is not None and frame.f_code.co_code[frame.f_lasti] == opcode.opmap["IMPORT_FROM"]
    except (IndexError, AttributeError):  # an interpreter whose frames differ
        return False


def not_supported(rel: str, name: str, frame: FrameType | None = None) -> Exception:
    """The error for Paddle name `rel.name` pullback does not have (an ImportError
    when `frame` is importing it by name)."""
    path = _paddle_path(rel, name)
    msg = (
        f"`{path}` is not supported by pullback; Paddle {paddle_table().version} has it, "
        "pullback does not (docs/api.md lists the supported API)"
    )
    if _from_import(frame):
        return NotSupportedImportError(msg, name=_paddle_path(rel))
    return NotSupportedError(msg, name=name)


_MISSING = object()


class _Root:
    """What a root package needs to resolve names: its name and real subpackages."""

    def __init__(self, name: str, real: set[str]) -> None:
        self.name = name
        self.real = real

    def module(self, rel: str) -> str:
        return f"{self.name}.{rel}" if rel else self.name

    def own(self, rel: str, name: str) -> Any:
        """`name` in pullback's own module for Paddle path `rel` (an alias, a real
        module, the root namespace), never through the fallback: `_MISSING` when
        pullback has no own module there or it lacks the name."""
        if rel == "":
            return getattr(importlib.import_module(_api().ROOT_NAMESPACE), name, _MISSING)
        top = rel.split(".", 1)[0]
        if top not in self.real and top not in _top_aliases():
            return _MISSING
        try:
            mod = importlib.import_module(self.module(rel))
        except ImportError:
            return _MISSING
        if isinstance(mod, PaddleModule):
            return _MISSING
        value = mod.__dict__.get(name, _MISSING)
        own = mod.__dict__.get(_OWN_GETATTR)
        if value is _MISSING and own is not None:
            try:
                value = own(name)
            except AttributeError:
                return _MISSING
        return value

    def resolve(self, rel: str, name: str, frame: FrameType | None = None) -> Any:
        """What Paddle's `rel.name` is in pullback; `NotSupportedError` when pullback
        does not have it, a plain AttributeError when Paddle does not either."""
        table = paddle_table()
        entries = table.modules.get(rel, {})
        if name not in entries:
            raise AttributeError(f"module '{self.module(rel)}' has no attribute '{name}'", name=name)
        entry = entries[name]
        if isinstance(entry, str):
            return importlib.import_module(self.module(_relative(entry)))
        if isinstance(entry, list):
            return entry[0]
        # the places of the same name first (`paddle.tensor.linalg.transpose` is
        # `paddle.transpose`, though Paddle's `swapaxes` is that object too)
        places = sorted(table.places[entry], key=lambda p: p[1] != name)
        for prel, pname in places:
            value = self.own(prel, pname)
            if value is not _MISSING:
                return value
        synonyms: dict[str, str] = _api().SYNONYMS
        for prel, pname in places:
            target = synonyms.get(f"{prel}.{pname}" if prel else pname)
            if target is not None:
                mod_name, _, attr = target.partition(":")
                mod = importlib.import_module(mod_name)
                return getattr(mod, attr) if attr else mod
        raise not_supported(rel, name, frame)


_ROOTS: dict[str, _Root] = {}


# ------------------------------------------------------------------ modules


def _paths(module: ModuleType) -> list[str]:
    """The Paddle paths (relative) `module` stands for."""
    rel = module.__dict__.get("__paddle_rel__")
    return [rel] if rel is not None else list(module.__dict__.get(_PADDLE_PATHS, ()))


def _shadowed(module: ModuleType, name: str) -> bool:
    """Whether Paddle's `name` in `module` is an object rather than the child module
    of that name (`paddle.batch`, `paddle.tensor.einsum` are functions)."""
    return any(
        not isinstance(paddle_table().modules.get(rel, {}).get(name, ""), str) for rel in _paths(module)
    )


class KeepNames(ModuleType):
    """A module whose Paddle names win over its child modules of the same names: the
    import system sets a child module as its parent's attribute once loaded, which
    would hide the function `paddle.batch` behind the module `paddle.batch`."""

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, ModuleType) and _shadowed(self, name):
            return
        super().__setattr__(name, value)


class PaddleModule(KeepNames):
    """A public module path of Paddle that pullback has no module of its own for
    (`paddle.jit.api`, `paddle.nn.layer.norm`): its names resolve on first use to
    pullback's objects (`_Root.resolve`) and are then kept as attributes."""

    __paddle_root__: str
    __paddle_rel__: str

    def __getattr__(self, name: str) -> Any:
        root = _ROOTS[self.__paddle_root__]
        rel = self.__paddle_rel__
        if name == "__all__":
            return self._public()
        if name.startswith("__"):
            raise AttributeError(f"module '{self.__name__}' has no attribute '{name}'", name=name)
        value = root.resolve(rel, name, sys._getframe(1))
        setattr(self, name, value)
        return value

    def __dir__(self) -> list[str]:
        return sorted(set(vars(self)) | set(paddle_table().modules.get(self.__paddle_rel__, {})))

    def _public(self) -> list[str]:
        """`__all__`: the names (not modules) of the path pullback has, for `import *`."""
        out = []
        for name, entry in paddle_table().modules.get(self.__paddle_rel__, {}).items():
            if isinstance(entry, str):
                continue
            try:
                getattr(self, name)
            except AttributeError:
                continue
            out.append(name)
        return out


def adopt(module: ModuleType, rel: str, root: str = "pullback") -> None:
    """Make `module` (pullback's own module for Paddle path `rel`: an alias or a real
    module) answer the names of `rel` it lacks as `PaddleModule` does, after its own
    `__getattr__`; and act as a package when `rel` has child modules in Paddle.
    Loads nothing: the table is read when a name is missing."""
    d = module.__dict__
    paths = d.setdefault(_PADDLE_PATHS, [])
    if rel not in paths:
        paths.append(rel)
    if _OWN_GETATTR in d:
        return
    own = d.get("__getattr__")
    d[_OWN_GETATTR] = own

    def __getattr__(name: str) -> Any:
        if own is not None:
            try:
                return own(name)
            except AttributeError:
                pass
        if name == "__path__":
            if any(p in paddle_table().packages for p in paths):
                d["__path__"] = []  # its Paddle children come from the finders
                return d["__path__"]
        elif not name.startswith("__") and root in _ROOTS:
            for p in paths:
                if name in paddle_table().modules.get(p, {}):
                    value = _ROOTS[root].resolve(p, name, sys._getframe(1))
                    d[name] = value
                    return value
        raise AttributeError(f"module '{module.__name__}' has no attribute '{name}'", name=name)

    d["__getattr__"] = __getattr__


def adopt_real(name: str, root: str = "pullback") -> None:
    """`adopt` for a real module of the root that stands for a Paddle path
    (`pullback.distributed`): its last statement is `adopt_real(__name__)`."""
    if name.startswith(root + "."):  # not when run as a script (`__main__`)
        adopt(sys.modules[name], name[len(root) + 1 :], root)


# ------------------------------------------------------------------ finders


class AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds `<root>.<alias>` modules; loading one returns the implementing module.

    A child of an alias that is not an alias itself is the implementing module's
    child (`paddle.vision.models.resnet` is `pullback.frontend.vision.models.resnet`),
    never a second copy of it.  Names under a real subpackage of the root are never
    claimed, so they are found (or not) without loading the frontend."""

    def __init__(self, root: str, real: set[str]) -> None:
        self.root = root
        self.real = real

    def find_spec(
        self, fullname: str, path: Any = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        """A spec for an alias of this root, None for anything else."""
        prefix = self.root + "."
        if not fullname.startswith(prefix):
            return None
        rel = fullname[len(prefix) :]
        if rel.split(".", 1)[0] in self.real:
            return None
        if rel in _api().ALIASES:
            return importlib.machinery.ModuleSpec(fullname, self)
        parent, _, child = fullname.rpartition(".")
        parent_mod = sys.modules.get(parent)
        if parent_mod is None or parent_mod.__name__ == parent or isinstance(parent_mod, PaddleModule):
            return None
        implementing = f"{parent_mod.__name__}.{child}"
        from importlib.util import find_spec

        try:
            found = find_spec(implementing)
        except (ImportError, ValueError):
            found = None
        if found is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, loader_state=implementing)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        """The implementing module itself (it keeps its own name and spec)."""
        rel = spec.name[len(self.root) + 1 :]
        implementing = spec.loader_state or _api().ALIASES[rel]
        module = importlib.import_module(implementing)
        adopt(module, rel, self.root)
        # modules an alias brings along (`paddle.nn` sets `nn.functional`) stand for
        # their paths too, however they are reached
        for alias, impl in _api().ALIASES.items():
            loaded = sys.modules.get(impl)
            if loaded is not None:
                adopt(loaded, alias, self.root)
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the implementing module was executed when imported."""


class PaddlePathFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Last on `sys.meta_path`: a public module path of Paddle under the root that no
    other finder found (`pullback.jit.api`) is a `PaddleModule`."""

    def __init__(self, root: str) -> None:
        self.root = root

    def find_spec(
        self, fullname: str, path: Any = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        """A spec for a Paddle module path of this root, None for anything else."""
        prefix = self.root + "."
        if not fullname.startswith(prefix):
            return None
        rel = fullname[len(prefix) :]
        table = paddle_table()
        if rel not in table.modules:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=rel in table.packages)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        """A `PaddleModule` for the path."""
        rel = spec.name[len(self.root) + 1 :]
        module = PaddleModule(
            spec.name,
            f"Paddle's `{_paddle_path(rel)}`: its names are pullback's objects of the same "
            "names, or say that pullback does not support them.",
        )
        module.__paddle_root__ = self.root
        module.__paddle_rel__ = rel
        parent_name, _, child = spec.name.rpartition(".")
        parent = sys.modules.get(parent_name)
        if parent is not None and type(parent) is ModuleType and _shadowed(parent, child):
            parent.__class__ = KeepNames
        return module

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: names resolve on first use."""


def install(root: str) -> None:
    """Make the public namespaces importable under package `root` and give the root
    module a lazy `__getattr__`/`__dir__` (aliases, then `ROOT_NAMESPACE`'s
    attributes, then the rest of Paddle's root names)."""
    module = sys.modules[root]
    # Real subpackages and modules (dialects, runtime, ...) must never trigger the
    # frontend.
    real = {m.name for m in pkgutil.iter_modules(module.__path__)}
    module.__dict__[_PADDLE_PATHS] = [""]
    _ROOTS[root] = _Root(root, real)
    if not any(isinstance(f, AliasFinder) and f.root == root for f in sys.meta_path):
        sys.meta_path.insert(0, AliasFinder(root, real))
    if not any(isinstance(f, PaddlePathFinder) and f.root == root for f in sys.meta_path):
        sys.meta_path.append(PaddlePathFinder(root))
    module.__getattr__ = _root_getattr(root, real)  # type: ignore[method-assign]
    module.__dir__ = lambda: sorted(  # type: ignore[method-assign]
        set(vars(module))
        | _top_aliases()
        | set(dir(importlib.import_module(_api().ROOT_NAMESPACE)))
    )


_TOP_ALIASES: set[str] | None = None


def _top_aliases() -> set[str]:
    global _TOP_ALIASES
    if _TOP_ALIASES is None:  # ALIASES is a constant table: build the set once
        _TOP_ALIASES = {a.split(".", 1)[0] for a in _api().ALIASES}
    return _TOP_ALIASES


def _root_getattr(root: str, real: set[str]) -> Callable[[str], Any]:
    def __getattr__(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(f"module '{root}' has no attribute '{name}'")
        if name in real:
            # A real subpackage not imported yet (`paddle.distributed` after a bare
            # `import paddle`): import it now, as Paddle's root does.  Only the name
            # asked for is loaded, never the frontend as such.
            return importlib.import_module(f"{root}.{name}")
        if name in _top_aliases():
            return importlib.import_module(f"{root}.{name}")
        try:
            value = getattr(importlib.import_module(_api().ROOT_NAMESPACE), name)
        except AttributeError:
            # the rest of Paddle's root: its modules (`paddle.sparse`), names pullback
            # has elsewhere, and what it does not have (NotSupportedError)
            value = _ROOTS[root].resolve("", name, sys._getframe(1))
        if callable(value) or isinstance(value, ModuleType):
            # Functions, classes and modules never change: keep them on the root so
            # the next `paddle.mean` is a plain attribute read, not this hook
            # (~10-30 us, paid on every op call of a training loop).
            setattr(sys.modules[root], name, value)
        return value

    return __getattr__
