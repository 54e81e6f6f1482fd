"""The errors of pullback's file readers: one line naming the file and the problem."""

from __future__ import annotations

import os
from typing import Any


class FileFormatError(ValueError):
    """A file that cannot be read as what it should be (empty, truncated, another
    format, a newer version, or parameters that do not fit the model)."""


class UnsafeFileError(FileFormatError):
    """A pickled file that asks for something other than data (a module's function
    or class outside the allowed set): nothing of it is built or run."""


def describe(source: Any) -> str:
    """How an error names a file: its path, or the kind of buffer it came from."""
    if isinstance(source, (str, os.PathLike)):
        return repr(os.fspath(source))
    name = getattr(source, "name", None)
    if isinstance(name, str):
        return repr(name)
    return f"<{type(source).__name__}>"


__all__ = ["FileFormatError", "UnsafeFileError", "describe"]
