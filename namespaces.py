"""Paddle's public namespaces under the package root, loaded on first use.

`import pullback as paddle` must stay cheap (the `pullback-opt` tool and xDSL's plugin
discovery import the package and never use the frontend), and importing
`pullback.frontend` wires the whole frontend together.  So the root module imports
only this module: `install` gives the root a meta-path finder and a module
`__getattr__`/`__dir__`, and the first use of a public name (`paddle.static`,
`import pullback.fluid.layers`, `paddle.mean`) loads the tables of
`pullback.frontend.api` (`ALIASES`: public name -> implementing module, and
`ROOT_NAMESPACE`) and with them the frontend.  The real subpackages (`dialects`,
`runtime`, `distributed`, ...) never trigger it: `paddle.distributed` imports just
that subpackage on first use.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import pkgutil
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

API_MODULE = "pullback.frontend.api"
"""The module holding `ALIASES` and `ROOT_NAMESPACE`."""


def _api() -> ModuleType:
    return importlib.import_module(API_MODULE)


class AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds `<root>.<alias>` modules; loading one returns the implementing module.

    Names under a real subpackage of the root are never claimed, so they are found
    (or not) without loading the frontend."""

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
        if rel.split(".", 1)[0] in self.real or rel not in _api().ALIASES:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        """The implementing module itself (it keeps its own name and spec)."""
        return importlib.import_module(_api().ALIASES[spec.name[len(self.root) + 1 :]])

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the implementing module was executed when imported."""


def install(root: str) -> None:
    """Make the public namespaces importable under package `root` and give the root
    module a lazy `__getattr__`/`__dir__` (aliases, then `ROOT_NAMESPACE`'s
    attributes)."""
    module = sys.modules[root]
    # Real subpackages and modules (dialects, runtime, ...) must never trigger the
    # frontend.
    real = {m.name for m in pkgutil.iter_modules(module.__path__)}
    if not any(isinstance(f, AliasFinder) and f.root == root for f in sys.meta_path):
        sys.meta_path.insert(0, AliasFinder(root, real))
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
        _TOP_ALIASES = {a for a in _api().ALIASES if "." not in a}
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
            raise AttributeError(f"module '{root}' has no attribute '{name}'") from None
        if callable(value) or isinstance(value, ModuleType):
            # Functions, classes and modules never change: keep them on the root so
            # the next `paddle.mean` is a plain attribute read, not this hook
            # (~10-30 us, paid on every op call of a training loop).
            setattr(sys.modules[root], name, value)
        return value

    return __getattr__
