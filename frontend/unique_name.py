"""Paddle's unique-name generator: `fc_0`, `fc_1`, ... and `unique_name.guard()`."""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterator


class UniqueNameGenerator:
    """Counts, per key, how many names were handed out (`key_0`, `key_1`, ...)."""

    def __init__(self, prefix: str = "") -> None:
        self.ids: defaultdict[str, int] = defaultdict(int)
        self.prefix = prefix

    def __call__(self, key: str) -> str:
        n = self.ids[key]
        self.ids[key] += 1
        return f"{self.prefix}{key}_{n}"


_generator = UniqueNameGenerator()


def generate(key: str) -> str:
    """The next unique name for `key` (`generate('fc')` -> `'fc_0'`, then `'fc_1'`)."""
    return _generator(key)


def switch(new_generator: UniqueNameGenerator | None = None) -> UniqueNameGenerator:
    """Install a generator (a fresh one when None); return the previous one."""
    global _generator
    old = _generator
    _generator = new_generator if new_generator is not None else UniqueNameGenerator()
    return old


@contextlib.contextmanager
def guard(new_generator: str | UniqueNameGenerator | None = None) -> Iterator[None]:
    """Use a fresh name space inside the `with` block (a string becomes a prefix)."""
    if isinstance(new_generator, str):
        new_generator = UniqueNameGenerator(new_generator)
    old = switch(new_generator)
    try:
        yield
    finally:
        switch(old)
