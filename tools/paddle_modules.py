"""Write `frontend/api/paddle_modules.json`: Paddle's public module paths and what each
exports, read from a real PaddlePaddle install.

Run it ONCE per Paddle release, with the Python of an environment where PaddlePaddle
is installed (it is never a dependency of pullback):

    /path/to/paddle-venv/bin/python tools/paddle_modules.py

The file it writes is committed; pullback reads it at run time
(`pullback.frontend.api.modules`) to make every public module path of Paddle
importable under `pullback` (`import pullback.nn.layer.norm`,
`from pullback.jit.api import to_static`) with the same objects as the top-level
names, and to say "not supported by pullback" for the rest.

What counts as a public module path: every module `pkgutil.walk_packages` finds under
`paddle` whose dotted path has no part starting with `_`, except test modules,
compiled extension modules (`paddle.base.libpaddle`) and `paddle.base.core` (the
binding of those). A module that fails to import is left out (and reported).

For each module, its public names: those of its `__all__`, and every other attribute
not starting with `_` that Paddle defines (functions, classes and other objects
whose `__module__` or type is Paddle's: Paddle's modules often declare
`__all__ = []` and are imported from by name all the same), and its child modules.
Each name is recorded as one of

* a string, `"paddle.x.y"`: the name is a Paddle module (by its own `__name__`);
* an integer: the name is a function, class or other object, numbered so that two
  names holding the same object (identity) in Paddle have the same number: pullback
  resolves a name to the first place of its object (shallowest first) that pullback
  has, so that `paddle.nn.layer.norm.BatchNorm2D is paddle.nn.BatchNorm2D` as in
  Paddle;
* `[literal]`: a constant (int, float, str, bool, None) listed in `__all__`.

A module that fails to import is left out (and reported).

For each module, its public names: those of its `__all__`, and every other attribute
not starting with `_` that Paddle defines (functions, classes and other objects
whose `__module__` or type is Paddle's: Paddle's modules often declare
`__all__ = []` and are imported from by name all the same), and its child modules.
Each name is recorded as one of

* `["module", "paddle.x.y"]`: a Paddle module (by its own `__name__`);
* `["object", [path, ...]]`: a function, class or other object, with every public
  `module.name` of Paddle where the same object (identity) is found, shortest first
  (at most `MAX_PLACES`): pullback resolves the name to the first of them it has, so that
  `paddle.nn.layer.norm.BatchNorm2D is paddle.nn.BatchNorm2D` as in Paddle;
* `["value", literal]`: a constant (int, float, str, bool, None) listed in `__all__`.

A module that fails to import under Paddle itself (an optional dependency missing)
is listed with no names, and under `failed` with the reason.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import sys
import tempfile
import types
import warnings
from pathlib import Path
from typing import Any

OUTPUT = Path(__file__).resolve().parent.parent / "frontend" / "api" / "paddle_modules.json"

EXCLUDED = ("paddle.base.core", "paddle.base.libpaddle")
"""Binary internals (and what lives under them)."""

LITERALS = (bool, int, float, str, type(None))



def _excluded(name: str) -> bool:
    parts = name.split(".")
    if any(p.startswith("_") for p in parts):
        return True
    if any(p in ("test", "tests", "testing_utils") for p in parts):
        return True
    return any(name == e or name.startswith(e + ".") for e in EXCLUDED)


def _paddle_defined(value: Any) -> bool:
    if isinstance(value, types.ModuleType):
        return value.__name__.startswith("paddle")
    mod = getattr(value, "__module__", None)
    if isinstance(mod, str) and (mod == "paddle" or mod.startswith("paddle.")):
        return True
    tmod = getattr(type(value), "__module__", "") or ""
    return tmod == "paddle" or tmod.startswith("paddle.")


def module_names() -> list[str]:
    """Every public module path of the installed Paddle, sorted."""
    import paddle

    found = {"paddle"}
    for info in pkgutil.walk_packages(paddle.__path__, "paddle.", onerror=lambda n: None):
        if not _excluded(info.name):
            found.add(info.name)
    return sorted(found)


def main() -> None:
    warnings.simplefilter("ignore")
    os.chdir(tempfile.mkdtemp())  # importing Paddle writes http.log into the working directory
    import paddle

    modules: dict[str, types.ModuleType] = {}
    failed: dict[str, str] = {}
    for name in module_names():
        try:
            mod = importlib.import_module(name)
        except BaseException as e:  # noqa: BLE001 - any failure leaves the module out
            failed[name] = f"{type(e).__name__}: {e}"[:200]
            continue
        file = getattr(mod, "__file__", None) or ""
        if file.endswith((".so", ".pyd")):
            continue
        modules[name] = mod

    # public names of every module, before indexing objects by identity
    exports: dict[str, dict[str, Any]] = {}
    for name, mod in modules.items():
        names: dict[str, Any] = {}
        for n in getattr(mod, "__all__", None) or ():
            if hasattr(mod, n):
                names[n] = getattr(mod, n)
        for n, v in vars(mod).items():
            # Paddle's modules often declare `__all__ = []` and are imported from
            # by name all the same (`from paddle.nn.layer.norm import BatchNorm2D`)
            if not n.startswith("_") and not isinstance(v, types.ModuleType) and _paddle_defined(v):
                names.setdefault(n, v)
        prefix = name + "."
        for child in modules:  # child modules, `__all__` or not
            if child.startswith(prefix) and "." not in child[len(prefix):]:
                names.setdefault(child[len(prefix):], modules[child])
        exports[name] = names

    places: dict[int, list[str]] = {}
    for name, names in exports.items():
        for n, v in names.items():
            if not isinstance(v, (types.ModuleType, *LITERALS)):
                places.setdefault(id(v), []).append(f"{name}.{n}")
    # objects numbered in the order of their shallowest place: stable across runs
    first = sorted((min(p, key=lambda s: (s.count("."), s)), k) for k, p in places.items())
    number = {k: i for i, (_, k) in enumerate(first)}

    table: dict[str, dict[str, Any]] = {}
    for name, names in exports.items():
        entries: dict[str, Any] = {}
        for n, v in sorted(names.items()):
            if isinstance(v, types.ModuleType):
                if v.__name__ in modules:
                    entries[n] = v.__name__
            elif isinstance(v, LITERALS):
                entries[n] = [v]
            else:
                entries[n] = number[id(v)]
        table[name] = entries
    for name in failed:
        table[name] = {}

    payload = {
        "paddle_version": paddle.__version__,
        "generated_by": "python tools/paddle_modules.py (under PaddlePaddle's Python)",
        "modules": table,
        "failed": failed,
    }
    # one module per line: diffs between Paddle releases stay readable
    lines = [f"{json.dumps(k)}:{json.dumps(v, separators=(',', ':'))}" for k, v in sorted(table.items())]
    head = {k: v for k, v in payload.items() if k != "modules"}
    text = json.dumps(head, sort_keys=True)[:-1] + ',\n"modules":{\n' + ",\n".join(lines) + "\n}}\n"
    json.loads(text)
    OUTPUT.write_text(text)
    print(f"{len(table)} modules, {sum(map(len, table.values()))} names -> {OUTPUT}")
    for name, why in failed.items():
        print(f"left out (import failed): {name}: {why}", file=sys.stderr)


if __name__ == "__main__":
    main()
