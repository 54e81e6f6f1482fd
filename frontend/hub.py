"""`paddle.hub` (`paddle.hapi.hub`): `list`, `help` and `load` of the entry points of a
repository's `hubconf.py`.

Only `source='local'` (a directory holding `hubconf.py`) is supported: pullback
downloads nothing, so a GitHub/Gitee repository must be cloned first.  As in
Paddle, the entry points are the public callables of `hubconf.py`, `help` returns
one's docstring, and `load` checks the module's `dependencies` (importable
modules; `paddle` is satisfied by pullback) and calls the entry with `**kwargs`.
"""

from __future__ import annotations

import builtins
import importlib
import importlib.util
import sys
from typing import Any

MODULE_HUBCONF = "hubconf.py"
VAR_DEPENDENCY = "dependencies"


def _check_source(source: str) -> None:
    if source not in ("github", "gitee", "local"):
        raise ValueError(f'Unknown source: "{source}". Allowed values: "github" | "gitee" | "local".')
    if source != "local":
        raise NotImplementedError(
            f"paddle.hub: source='{source}' downloads the repository, which pullback does not do; "
            "clone it and pass its directory with source='local'"
        )


def _import_module(repo_dir: str) -> Any:
    sys.path.insert(0, repo_dir)
    try:
        sys.modules.pop("hubconf", None)
        module = importlib.import_module("hubconf")
        sys.modules.pop("hubconf", None)
    except ImportError as e:
        raise RuntimeError("Please make sure config exists or repo error messages above fixed when importing") from e
    finally:
        if repo_dir in sys.path:
            sys.path.remove(repo_dir)
    return module


def _entry(module: Any, name: Any) -> Any:
    if not isinstance(name, str):
        raise ValueError("Invalid input: model should be a str of function name")
    func = getattr(module, name, None)
    if func is None or not callable(func):
        raise RuntimeError(f"Cannot find callable {name} in hubconf")
    return func


def _check_dependencies(module: Any) -> None:
    deps = getattr(module, VAR_DEPENDENCY, None) or []
    missing = [d for d in deps if d != "paddle" and importlib.util.find_spec(d) is None]
    if missing:
        raise RuntimeError(f"Missing dependencies: {', '.join(missing)}")


def list(repo_dir: str, source: str = "github", force_reload: bool = False) -> builtins.list[str]:  # noqa: A001
    """The entry points (public callables) of `repo_dir/hubconf.py`."""
    _check_source(source)
    module = _import_module(repo_dir)
    return [f for f in dir(module) if callable(getattr(module, f)) and not f.startswith("_")]


def help(repo_dir: str, model: str, source: str = "github", force_reload: bool = False) -> str:  # noqa: A001
    """The docstring of the entry point `model`."""
    _check_source(source)
    return _entry(_import_module(repo_dir), model).__doc__


def load(repo_dir: str, model: str, source: str = "github", force_reload: bool = False, **kwargs: Any) -> Any:
    """The entry point `model` called with `**kwargs` (the model it builds)."""
    _check_source(source)
    module = _import_module(repo_dir)
    _check_dependencies(module)
    return _entry(module, model)(**kwargs)


__all__ = ["help", "list", "load"]
