"""Integer settings read from environment variables, one way for every native module.

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


__all__ = ["int_setting"]
