"""pullback's xDSL universe: makes plain `xdsl-opt` know the `pd` dialect, our passes
(named pipelines included) and our `ptx` target.

Registered through the `xdsl.universe` entry point in `pyproject.toml`.  xDSL merges
every installed universe and rejects duplicate names, so passes and targets xDSL
already ships (`dce`, `cse`, `canonicalize`, the `llvm` target, ...) are left out
here; `pullback-opt` prefers our `llvm` target.  Everything is imported lazily:
loading this module must stay cheap and must not fail, since every `xdsl-opt` run
in the environment loads it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xdsl.utils.target import Target

PassFactory = Callable[[], type[ModulePass]]

_PASS_REGISTRIES = ("pullback.passes", "pullback.lowering", "pullback.lowering.gpu")
"""Modules that may define `PASSES: dict[str, factory]`, `PIPELINES` (the names in
`PASSES` that are named pipelines) and `TARGETS: dict[str, factory]` (each is
optional)."""


def get_pd_dialect() -> Dialect:
    """The `pd` dialect (imported on first use)."""
    from pullback.dialects.pd import PD

    return PD


def _registries() -> list[ModuleType]:
    """The registry modules of `_PASS_REGISTRIES` that can be imported."""
    mods = []
    for mod_name in _PASS_REGISTRIES:
        try:
            mods.append(importlib.import_module(mod_name))
        except ImportError:
            continue
    return mods


def pullback_passes() -> dict[str, PassFactory]:
    """Every pass pullback defines, named pipelines included, by command-line name.

    Reads the `PASSES` registry of each module in `_PASS_REGISTRIES`; a module that
    does not exist yet or has no registry contributes nothing.
    """
    passes: dict[str, PassFactory] = {}
    for mod in _registries():
        passes.update(getattr(mod, "PASSES", {}) or {})
    return passes


def pullback_pipelines() -> list[str]:
    """The names of the passes that are named pipelines (`lower-to-loops`, ...)."""
    return [name for mod in _registries() for name in getattr(mod, "PIPELINES", ())]


def pullback_targets() -> dict[str, Callable[[], type[Target]]]:
    """Every output target pullback defines (`llvm`, `ptx`), by `-t` name."""
    targets: dict[str, Callable[[], type[Target]]] = {}
    for mod in _registries():
        targets.update(getattr(mod, "TARGETS", {}) or {})
    return targets


def _universe_passes() -> dict[str, PassFactory]:
    from xdsl.transforms import get_all_passes

    upstream = set(get_all_passes())
    return {k: v for k, v in pullback_passes().items() if k not in upstream}


def _universe_targets() -> dict[str, Callable[[], type[Target]]]:
    from xdsl.targets import get_all_targets

    upstream = set(get_all_targets())
    return {k: v for k, v in pullback_targets().items() if k not in upstream}


PULLBACK_UNIVERSE = Universe(
    all_dialects={"pd": get_pd_dialect},
    all_passes=_universe_passes(),
    all_targets=_universe_targets(),
)
"""The universe `xdsl-opt` discovers through the `xdsl.universe` entry point."""
