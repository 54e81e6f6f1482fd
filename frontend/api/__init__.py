"""Paddle's public namespaces (`paddle.static`, `paddle.fluid.layers`, ...) for
`import pullback as paddle`.

Each namespace is a module here (`static.py`, `fluid_layers.py`, ...) or an existing
pullback module (`paddle.optimizer` is `frontend/optimizer.py`).  `ALIASES` maps the
public name under the package root to the module that implements it; `install`
makes every alias a real, importable submodule of the root (`import
pullback.static`, `from pullback.fluid import layers`) and loads it on first use, so
`import pullback` stays cheap (tools like `pullback-opt` never load the frontend).
Namespaces with children declare `__path__ = []` so that the import system looks
their children up through the alias finder too.
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

ALIASES: dict[str, str] = {
    "static": "pullback.frontend.api.static",
    "static.nn": "pullback.frontend.api.static_nn",
    "fluid": "pullback.frontend.api.fluid",
    "fluid.layers": "pullback.frontend.api.fluid_layers",
    "fluid.backward": "pullback.frontend.backward",
    "fluid.initializer": "pullback.frontend.initializer",
    "fluid.optimizer": "pullback.frontend.optimizer",
    "fluid.unique_name": "pullback.frontend.unique_name",
    "fluid.framework": "pullback.frontend.framework",
    "fluid.param_attr": "pullback.frontend.param_attr",
    "fluid.executor": "pullback.runtime.executor",
    "nn": "pullback.frontend.api.nn",
    "nn.functional": "pullback.frontend.api.nn_functional",
    "nn.initializer": "pullback.frontend.initializer",
    "optimizer": "pullback.frontend.optimizer",
    "autograd": "pullback.frontend.autograd",
    "device": "pullback.frontend.api.device",
    "device.cuda": "pullback.frontend.api.device_cuda",
    "utils": "pullback.frontend.api.utils",
    "utils.unique_name": "pullback.frontend.unique_name",
    "io": "pullback.frontend.io",
    "metric": "pullback.frontend.metric",
}
"""Public namespace (relative to the package root) -> implementing module."""

ROOT_NAMESPACE = "pullback.frontend.api.paddle"
"""The module whose attributes are the root's own (`paddle.enable_static`, ...)."""


class AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds `<root>.<alias>` modules; loading one returns the implementing module."""

    def __init__(self, root: str, aliases: dict[str, str]) -> None:
        self.root = root
        self.aliases = aliases

    def find_spec(
        self, fullname: str, path: Any = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        """A spec for an alias of this root, None for anything else."""
        prefix = self.root + "."
        if fullname.startswith(prefix) and fullname[len(prefix) :] in self.aliases:
            return importlib.machinery.ModuleSpec(fullname, self)
        return None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        """The implementing module itself (it keeps its own name and spec)."""
        return importlib.import_module(self.aliases[spec.name[len(self.root) + 1 :]])

    def exec_module(self, module: ModuleType) -> None:
        """Nothing to run: the implementing module was executed when imported."""


def install(root: str) -> None:
    """Make `ALIASES` importable under package `root` and give the root module a
    lazy `__getattr__`/`__dir__` (aliases, then `ROOT_NAMESPACE`'s attributes)."""
    if not any(isinstance(f, AliasFinder) and f.root == root for f in sys.meta_path):
        sys.meta_path.insert(0, AliasFinder(root, ALIASES))
    module = sys.modules[root]
    # Real subpackages (dialects, runtime, ...) must never trigger the frontend.
    real = {m.name for m in pkgutil.iter_modules(module.__path__)}
    top_aliases = {a for a in ALIASES if "." not in a}
    module.__getattr__ = _root_getattr(root, real, top_aliases)  # type: ignore[attr-defined]
    module.__dir__ = lambda: sorted(  # type: ignore[attr-defined]
        set(vars(module)) | top_aliases | set(dir(importlib.import_module(ROOT_NAMESPACE)))
    )


def _root_getattr(root: str, real: set[str], aliases: set[str]) -> Callable[[str], Any]:
    def __getattr__(name: str) -> Any:
        if name in aliases:
            return importlib.import_module(f"{root}.{name}")
        if name.startswith("__") or name in real:
            raise AttributeError(f"module '{root}' has no attribute '{name}'")
        try:
            return getattr(importlib.import_module(ROOT_NAMESPACE), name)
        except AttributeError:
            raise AttributeError(f"module '{root}' has no attribute '{name}'") from None

    return __getattr__
