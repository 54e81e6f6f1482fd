"""Integer and on/off settings read from environment variables, one way for every module.

A bad value is an error naming the variable (never a traceback from `int()` deep in a
compile, never silently ignored).  A leaf module: the thread pool and the disk cache
read their variables through it without loading the compiler's settings
(`native/settings.py`, read when the compiled backend is first imported)."""

from __future__ import annotations

import os


def int_setting(var: str, minimum: int = 1, what: str = "a positive integer", first_of_list: bool = False) -> int | None:
    """`var`'s integer value, or None when it is unset or blank.

    ValueError (naming `var`, `what` it must be and the value given) when it is not an
    integer or is below `minimum`.  `first_of_list`: a comma-separated list (as
    `OMP_NUM_THREADS` gives one count per nesting level) yields its first entry."""
    raw = os.environ.get(var, "").strip()
    if not raw:
        return None
    text = raw.split(",")[0].strip() if first_of_list else raw
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{var} must be {what}, got {raw!r}") from None
    if value < minimum:
        raise ValueError(f"{var} must be {what}, got {raw!r}")
    return value


_ON = {"1", "true", "on", "yes"}
_OFF = {"0", "false", "off", "no"}


def flag_setting(var: str, default: bool) -> bool:
    """`var` as an on/off switch: `1`/`true`/`on`/`yes` or `0`/`false`/`off`/`no`
    (any case), `default` when unset or blank; ValueError naming `var` otherwise (a
    misspelt value is not read as "on")."""
    raw = os.environ.get(var, "").strip()
    if not raw:
        return default
    if raw.lower() in _ON:
        return True
    if raw.lower() in _OFF:
        return False
    raise ValueError(f"{var} must be 0 or 1, got {raw!r}")


__all__ = ["flag_setting", "int_setting"]
