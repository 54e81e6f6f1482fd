"""The persistent on-disk cache of compiled programs (object code + ABI).

A compiled program is stored as one file named by its key: a SHA-256 over the
program's printed IR, its fetch positions, the lowering options, and a
*fingerprint* of everything else the machine code depends on (pullback's version
and the source of its lowering/dialect/runtime modules, llvmlite's and LLVM's
versions, the host CPU name and features).  A second process running the same
program then loads the object code instead of lowering and optimizing it again.

- Location: `$PULLBACK_CACHE_DIR`, else `$XDG_CACHE_HOME/pullback`, else
  `~/.cache/pullback` (created private, mode 0o700: entries are unpickled).
- Size: at most `$PULLBACK_CACHE_SIZE` bytes (default `DEFAULT_MAX_BYTES`, 256 MiB);
  beyond it the least recently used entries go first (a hit refreshes an entry's
  mtime, so eviction by mtime is LRU).
- `PULLBACK_CACHE=0` turns it off (nothing read or written).
- Concurrent use is safe: an entry is written to a temporary file in the same
  directory and renamed over its final name (atomic), so a reader sees a whole
  entry or none; two processes compiling the same program both write an equal entry.
- A damaged entry (wrong magic, checksum mismatch, unreadable pickle) is deleted
  and treated as a miss: the program is compiled again and the entry rewritten.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pickle
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pullback.runtime.native.env import int_setting

DEFAULT_MAX_BYTES = 256 << 20
"""The cache's size bound when `PULLBACK_CACHE_SIZE` is unset."""

_MAGIC = b"PBCACHE1"
_SUFFIX = ".pbc"
_STALE_TMP_S = 3600.0
"""A temporary file this old was left by a writer that died; eviction removes it."""
_SOURCE_DIRS = ("lowering", "dialects", "runtime")
"""Package folders whose source decides the compiled code (hashed into the fingerprint,
so an edited lowering never loads code an older one built)."""


def enabled() -> bool:
    """False when `PULLBACK_CACHE=0` (or `false`/`off`/`no`)."""
    return os.environ.get("PULLBACK_CACHE", "1").strip().lower() not in ("0", "false", "off", "no")


def cache_dir() -> Path:
    """Where entries live (see the module docstring for the order of choices)."""
    explicit = os.environ.get("PULLBACK_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".cache") / "pullback"


def max_bytes() -> int:
    """The size bound in bytes (`PULLBACK_CACHE_SIZE`; a bad value is an error)."""
    value = int_setting("PULLBACK_CACHE_SIZE", minimum=0, what="a number of bytes (0 or more)")
    return DEFAULT_MAX_BYTES if value is None else value


_FINGERPRINT: str | None = None


def fingerprint(cpu: str, features: str) -> str:
    """What compiled code depends on besides the program (computed once per process):
    pullback's version and source, Python's, llvmlite's and LLVM's versions, the CPU."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        import llvmlite
        import llvmlite.binding as llvm

        import pullback

        h = hashlib.sha256()
        root = Path(pullback.__file__).parent
        for folder in _SOURCE_DIRS:
            for path in sorted((root / folder).rglob("*.py")):
                h.update(str(path.relative_to(root)).encode())
                h.update(path.read_bytes())
        parts = [getattr(pullback, "__version__", "?"), h.hexdigest(), sys.version, platform.machine(),
                 llvmlite.__version__, ".".join(map(str, llvm.llvm_version_info))]
        _FINGERPRINT = "\n".join(parts)
    return hashlib.sha256(f"{_FINGERPRINT}\n{cpu}\n{features}".encode()).hexdigest()


def key(*parts: str) -> str:
    """The entry name for a program described by `parts` (IR text, options, fingerprint)."""
    h = hashlib.sha256()
    for p in parts:
        h.update(len(p).to_bytes(8, "little"))
        h.update(p.encode())
    return h.hexdigest()


def _path(k: str) -> Path:
    return cache_dir() / f"{k}{_SUFFIX}"


def load(k: str) -> dict[str, Any] | None:
    """The entry stored under `k`, or None (disabled, missing or damaged: a damaged
    file is removed so the next store rewrites it)."""
    if not enabled():
        return None
    path = _path(k)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    entry = _decode(data)
    if entry is None:
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # a hit makes the entry the most recently used
    return entry


def _decode(data: bytes) -> dict[str, Any] | None:
    """An entry's payload if the magic and checksum hold and it unpickles to a dict."""
    head = len(_MAGIC) + 32
    if len(data) < head or not data.startswith(_MAGIC):
        return None
    payload = data[head:]
    if hashlib.sha256(payload).digest() != data[len(_MAGIC):head]:
        return None
    try:
        entry = pickle.loads(payload)
    except Exception:  # any unpickling failure means a damaged or foreign entry
        return None
    return entry if isinstance(entry, dict) else None


def store(k: str, entry: dict[str, Any]) -> None:
    """Write `entry` under `k` atomically, then evict beyond the size bound.  A cache
    that cannot be written (read-only disk, no home) is skipped, never an error."""
    if not enabled():
        return
    payload = pickle.dumps(entry, protocol=pickle.HIGHEST_PROTOCOL)
    data = _MAGIC + hashlib.sha256(payload).digest() + payload
    folder = cache_dir()
    limit = max_bytes()
    if len(data) > limit:
        return
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=_SUFFIX)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, _path(k))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError:
        return
    evict(limit)


def evict(limit: int | None = None) -> None:
    """Remove the least recently used entries (oldest mtime first) until the cache
    holds at most `limit` bytes (default `max_bytes()`).  Files another process
    removed meanwhile are skipped."""
    limit = max_bytes() if limit is None else limit
    entries = []
    now = time.time()
    with contextlib.suppress(OSError):
        for path in cache_dir().glob(f"*{_SUFFIX}"):
            with contextlib.suppress(OSError):
                st = path.stat()
                if not path.name.startswith(".tmp-"):
                    entries.append((st.st_mtime, st.st_size, path))
                elif now - st.st_mtime > _STALE_TMP_S:  # left by a killed writer
                    path.unlink()
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries, key=lambda e: e[0]):
        if total <= limit:
            break
        with contextlib.suppress(OSError):
            path.unlink()
        total -= size


def clear() -> None:
    """Remove every entry (the directory itself stays)."""
    evict(0)


__all__ = ["DEFAULT_MAX_BYTES", "cache_dir", "clear", "enabled", "evict", "fingerprint", "key", "load", "max_bytes",
           "store"]
