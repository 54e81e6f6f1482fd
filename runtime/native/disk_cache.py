"""The persistent on-disk cache of compiled programs (object code + ABI).

A compiled program is stored as one file named by its key: a SHA-256 over the
program's printed IR, its fetch positions, the lowering options, and a
*fingerprint* of everything else the machine code depends on (pullback's version
and the source of its lowering/dialect/runtime modules, llvmlite's and LLVM's
versions, the host CPU name and features).  A second process running the same
program then loads the object code instead of lowering and optimizing it again.

- Location: `$PULLBACK_CACHE_DIR`, else `$XDG_CACHE_HOME/pullback`, else
  `~/.cache/pullback` (created private, mode 0o700).
- Size: at most `$PULLBACK_CACHE_SIZE` bytes (default `DEFAULT_MAX_BYTES`, 256 MiB);
  beyond it the least recently used entries go first (a hit refreshes an entry's
  mtime, so eviction by mtime is LRU).
- `PULLBACK_CACHE=0` turns it off (nothing read or written).
- Concurrent use is safe: an entry is written to a temporary file in the same
  directory and renamed over its final name (atomic), so a reader sees a whole
  entry or none; two processes compiling the same program both write an equal entry.

Trust (docs/reliability.md): an entry is machine code this process will run, so

- *The folder must be yours alone*: one not owned by the current user, or writable
  by its group or by others (sticky bit or not: others could still plant files
  under the predictable names), is refused with one warning (`CacheWarning`) and
  the process compiles without the disk cache.  An entry file must likewise be a
  regular file (not a link) owned by the user and writable by nobody else.
- *Nothing is unpickled*: an entry is `_MAGIC`, a SHA-256 of the rest, a JSON
  header and the raw object-file bytes.  The header names the entry's full key and
  a digest of the program it was compiled from; `load` checks both against what the
  caller is compiling (a file copied under another key is refused), the checksum,
  the JSON's shape, and every object file's structure (`native/object_check.py`)
  before anything is linked.
- *A failing entry is a miss*: damaged, foreign or mismatching entries are
  deleted with one `CacheWarning` each, and the program is compiled again and the
  entry rewritten.
- *First-call guard*: linking an entry and its first call run inside `trial`,
  which leaves a marker file naming the process while they run.  An entry whose
  marker names a process that no longer exists crashed (or was killed) in its
  link or first call: the next `load` drops it and warns, instead of crashing
  every later run.  (Well-formed object code that computes a wrong value cannot
  be detected; the key and program checks keep an entry from serving another
  program.)
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import platform
import stat
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pullback.runtime.interrupts import deferred_interrupts
from pullback.runtime.native.env import int_setting
from pullback.runtime.native.object_check import BadObject, check_object

DEFAULT_MAX_BYTES = 256 << 20
"""The cache's size bound when `PULLBACK_CACHE_SIZE` is unset."""

T = TypeVar("T")

_MAGIC = b"PBCACHE2"
_SUFFIX = ".pbc"
_TRIAL = ".trial"
"""A first-call marker: `<key>.trial` holds the pid of the process running it."""
_STALE_TMP_S = 3600.0
"""A temporary file this old was left by a writer that died; eviction removes it."""
_MAX_HEADER = 64 << 20
_SOURCE_DIRS = ("lowering", "dialects", "runtime")
"""Package folders whose source decides the compiled code (hashed into the fingerprint,
so an edited lowering never loads code an older one built)."""


class CacheWarning(UserWarning):
    """The disk cache refused a folder or dropped an entry (the program still runs:
    it is compiled again)."""


@dataclass
class Entry:
    """What one entry holds: JSON data (`meta`) and object files."""

    meta: dict[str, Any]
    objects: list[bytes] = field(default_factory=list)


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


# ------------------------------------------------------------------------- trust

_WARNED: set[str] = set()
"""Folders already warned about (one warning per folder and reason per process)."""


def _warn(message: str, once: str | None = None) -> None:
    if once is not None:
        if once in _WARNED:
            return
        _WARNED.add(once)
    warnings.warn(f"pullback: {message}", CacheWarning, stacklevel=4)


def _unsafe(st: os.stat_result, what: str) -> str | None:
    """Why a file or folder with this status must not be trusted, or None."""
    if not hasattr(os, "geteuid"):
        return None  # (no POSIX ownership: nothing to check)
    if st.st_uid != os.geteuid():
        return f"{what} is owned by user {st.st_uid}, not by this user ({os.geteuid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        who = "others" if st.st_mode & stat.S_IWOTH else "its group"
        return f"{what} is writable by {who} (mode {stat.S_IMODE(st.st_mode):#o})"
    return None


def usable_dir() -> Path | None:
    """The cache folder if the cache is on and the folder (when it exists) is the
    user's alone; None otherwise (a refused folder is warned about once)."""
    return _trusted(cache_dir()) if enabled() else None


def _trusted(folder: Path) -> Path | None:
    """`folder` if it is missing (to be created private) or the user's alone, else
    None (warned about once)."""
    try:
        st = folder.stat()
    except FileNotFoundError:
        return folder  # `store` creates it, private
    except OSError:
        return None
    why = "it is not a folder" if not stat.S_ISDIR(st.st_mode) else _unsafe(st, "it")
    if why is not None:
        _warn(f"not using the compile cache {folder}: {why}; compiling without it "
              "(make it private: chmod go-w, or set PULLBACK_CACHE_DIR)", once=f"{folder}:{why}")
        return None
    return folder


# -------------------------------------------------------------------- load/store


def load(k: str, program: str, read: Callable[[Entry], T]) -> T | None:
    """`read` of the entry stored under key `k` for the program whose digest is
    `program`, or None: cache off or refused, no entry, or an entry that is damaged,
    foreign, for another key or program, that crashed a process in its first call,
    or that `read` refuses (ValueError).  Such an entry is deleted, with a warning,
    so the next store rewrites it."""
    folder = usable_dir()
    if folder is None:
        return None
    path = folder / f"{k}{_SUFFIX}"
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError as e:
        _drop(path, f"it cannot be read ({e.strerror})")
        return None
    try:
        with os.fdopen(fd, "rb") as f:
            st = os.fstat(f.fileno())
            why = "it is not a regular file" if not stat.S_ISREG(st.st_mode) else _unsafe(st, "it")
            if why is not None:
                _drop(path, why)
                return None
            data = f.read()
    except OSError as e:
        _drop(path, f"it cannot be read ({e.strerror})")
        return None
    crashed = _crashed_trial(folder, k)
    if crashed is not None:
        _drop(path, crashed)
        return None
    try:
        entry = read(_decode(data, k, program))
    except ValueError as e:
        _drop(path, str(e))
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # a hit makes the entry the most recently used
    return entry


def _drop(path: Path, why: str) -> None:
    """Delete a failing entry (and any first-call marker) and say so."""
    with contextlib.suppress(OSError):
        path.unlink()
    with contextlib.suppress(OSError):
        path.with_suffix(_TRIAL).unlink()
    _warn(f"dropped the compile-cache entry {path.name}: {why}; compiling the program again")


def _decode(data: bytes, k: str, program: str) -> Entry:
    """An entry's content if its checksum, header, key, program and object files all
    hold; ValueError naming the first that does not."""
    head = len(_MAGIC) + 32
    if len(data) < head + 8 or not data.startswith(_MAGIC):
        raise ValueError("it is not a compile-cache entry of this version")
    body = data[head:]
    if hashlib.sha256(body).digest() != data[len(_MAGIC):head]:
        raise ValueError("its checksum does not match (damaged)")
    n = int.from_bytes(body[:8], "little")
    if n > min(_MAX_HEADER, len(body) - 8):
        raise ValueError("its header is cut short")
    try:
        header = json.loads(body[8 : 8 + n].decode())
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError("its header is not JSON") from None
    if not isinstance(header, dict) or not isinstance(header.get("meta"), dict):
        raise ValueError("its header is not an entry's")
    if header.get("key") != k:
        raise ValueError("it was stored under another key (copied or renamed)")
    if header.get("program") != program:
        raise ValueError("it was compiled from another program")
    sizes = header.get("objects")
    if not isinstance(sizes, list) or not all(isinstance(s, int) and s >= 0 for s in sizes):
        raise ValueError("its header lists no object sizes")
    if 8 + n + sum(sizes) != len(body):
        raise ValueError("its object files do not add up to its size")
    objects, at = [], 8 + n
    for i, size in enumerate(sizes):
        obj = body[at : at + size]
        at += size
        try:
            check_object(obj)
        except BadObject as e:
            raise ValueError(f"object file {i}: {e}") from None
        objects.append(obj)
    return Entry(header["meta"], objects)


def encode(k: str, program: str, entry: Entry) -> bytes:
    """The bytes `store` writes for `entry` (`_decode` reads them back)."""
    header = json.dumps({"key": k, "program": program, "meta": entry.meta,
                         "objects": [len(o) for o in entry.objects]}, separators=(",", ":")).encode()
    body = len(header).to_bytes(8, "little") + header + b"".join(entry.objects)
    return _MAGIC + hashlib.sha256(body).digest() + body


def store(k: str, program: str, entry: Entry) -> bool:
    """Write `entry` under key `k` (for the program of digest `program`) atomically,
    then evict beyond the size bound; True if it was written.  A cache that is off,
    refused or cannot be written (read-only disk, no home) is skipped, never an
    error."""
    folder = usable_dir()
    if folder is None:
        return False
    data = encode(k, program, entry)
    limit = max_bytes()
    if len(data) > limit:
        return False
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if usable_dir() is None:  # created meanwhile by someone else, or not a folder
            return False
        # Ctrl-C held back: no temporary file is left behind (the entry itself
        # appears whole or not at all, by the rename).
        with deferred_interrupts():
            fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=_SUFFIX)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.replace(tmp, folder / f"{k}{_SUFFIX}")
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
    except OSError:
        return False
    evict(limit)
    return True


# ------------------------------------------------------------- first-call guard


@contextlib.contextmanager
def trial(k: str) -> Iterator[None]:
    """Run the body (linking entry `k`, or its first call) with a marker file naming
    this process: if the process dies inside, the next `load` of `k` drops the
    entry.  Without a usable cache folder, or an entry under `k`, it does nothing."""
    folder = usable_dir()
    marker = None
    if folder is not None and (folder / f"{k}{_SUFFIX}").exists():
        marker = folder / f"{k}{_TRIAL}"
        try:
            marker.write_text(str(os.getpid()))
        except OSError:
            marker = None
    try:
        yield
    finally:
        if marker is not None:
            with contextlib.suppress(OSError):
                marker.unlink()


def _crashed_trial(folder: Path, k: str) -> str | None:
    """Why entry `k` must not be used again (its first-call marker names a process
    that is gone), or None."""
    marker = folder / f"{k}{_TRIAL}"
    try:
        text = marker.read_text().strip()
    except OSError:
        return None
    try:
        pid = int(text)
    except ValueError:
        return "it has a damaged first-call marker"
    if pid == os.getpid() or _alive(pid):
        return None
    return f"the process that last linked or first ran it (pid {pid}) died doing so (crashed or was killed)"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True  # exists, someone else's (or unknowable: keep the entry)
    return True


# ---------------------------------------------------------------------- eviction


def evict(limit: int | None = None) -> None:
    """Remove the least recently used entries (oldest mtime first) until the cache
    holds at most `limit` bytes (default `max_bytes()`).  Files another process
    removed meanwhile are skipped."""
    limit = max_bytes() if limit is None else limit
    entries = []
    now = time.time()
    folder = _trusted(cache_dir())
    if folder is None:
        return
    with contextlib.suppress(OSError):
        for path in folder.iterdir():
            with contextlib.suppress(OSError):
                st = path.lstat()
                if path.name.startswith(".tmp-"):
                    if now - st.st_mtime > _STALE_TMP_S:  # left by a killed writer
                        path.unlink()
                elif path.suffix == _SUFFIX:
                    entries.append((st.st_mtime, st.st_size, path))
                elif path.suffix == _TRIAL and not path.with_suffix(_SUFFIX).exists():
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


__all__ = ["DEFAULT_MAX_BYTES", "CacheWarning", "Entry", "cache_dir", "clear", "enabled", "encode", "evict",
           "fingerprint", "key", "load", "max_bytes", "store", "trial", "usable_dir"]
