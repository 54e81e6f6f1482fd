"""pullback's xDSL universe: makes plain `xdsl-opt` know the `pd` dialect and our passes.

Registered through the `xdsl.universe` entry point in `pyproject.toml`.  xDSL merges
every installed universe and rejects duplicate names, so passes xDSL already ships
(`dce`, `cse`, `canonicalize`, ...) are left out here.  Everything is imported
lazily: loading this module must stay cheap and must not fail, since every
`xdsl-opt` run in the environment loads it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from xdsl.ir import Dialect
from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xdsl.utils.target import Target

PassFactory = Callable[[], type[ModulePass]]

_PASS_REGISTRIES = ("pullback.passes", "pullback.lowering", "pullback.lowering.gpu")
"""Modules that may define `PASSES: dict[str, factory]` and `TARGETS: dict[str,
factory]` (each is optional)."""


def get_pd_dialect() -> Dialect:
    """The `pd` dialect (imported on first use)."""
    from pullback.dialects.pd import PD

    return PD


def pullback_passes() -> dict[str, PassFactory]:
    """Every pass pullback defines, by command-line name.

    Reads the `PASSES` registry of each module in `_PASS_REGISTRIES`; a module that
    does not exist yet or has no registry contributes nothing.
    """
    passes: dict[str, PassFactory] = {}
    for mod_name in _PASS_REGISTRIES:
        try:
            mod = importlib.import_module(mod_name)
        except ImportError:
            continue
        passes.update(getattr(mod, "PASSES", {}) or {})
    return passes


def pullback_targets() -> dict[str, Callable[[], type[Target]]]:
    """Every output target pullback defines (`llvm`, `ptx`), by `-t` name."""
    targets: dict[str, Callable[[], type[Target]]] = {}
    for mod_name in _PASS_REGISTRIES:
        try:
            mod = importlib.import_module(mod_name)
        except ImportError:
            continue
        targets.update(getattr(mod, "TARGETS", {}) or {})
    return targets


def _xdsl_pass_names() -> set[str]:
    from xdsl.transforms import get_all_passes

    return set(get_all_passes())


def _universe_passes() -> dict[str, PassFactory]:
    upstream = _xdsl_pass_names()
    return {k: v for k, v in pullback_passes().items() if k not in upstream}


PULLBACK_UNIVERSE = Universe(
    all_dialects={"pd": get_pd_dialect},
    all_passes=_universe_passes(),
)
"""The universe `xdsl-opt` discovers through the `xdsl.universe` entry point."""
