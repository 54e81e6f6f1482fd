"""The compile cache's trust model (`runtime/native/disk_cache.py`, issue 32): a folder
others can write is refused, entries are tied to their key and program, nothing is
unpickled, an entry LLVM cannot read or one that crashed its first call is a miss.

Tests damage entries the way an attacker or a disk would and keep the entry's
checksum valid (the checksum sits at the same place in every format version:
8 bytes of magic, then the SHA-256 of the rest)."""

from __future__ import annotations

import hashlib
import os
import pickle
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

from pullback.benchmarks.programs import ProgramBuilder
from pullback.dialects import pd
from pullback.runtime.interpreter import run_module
from pullback.runtime.native import compiler, disk_cache, program
from pullback.runtime.native.compiler import compile_program

FEEDS = {"x": np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)}


def _program(scale: float) -> tuple[ProgramBuilder, object]:
    """`sum(tanh(x) * scale)`; distinct `scale`s make distinct cache entries."""
    b = ProgramBuilder()
    x = b.data("x", [-1, 3])
    y = b.add(pd.ReduceSumOp, b.add(pd.ScaleOp, b.add(pd.TanhOp, x), scale=scale))
    return b, y


def _compiled(scale: float) -> tuple[bool, float, float]:
    """(compiled by LLVM rather than loaded, compiled result, interpreter result)."""
    b, y = _program(scale)
    prog = compile_program(b.module, [y])
    assert prog.times is not None
    (got,) = program.execute(prog, FEEDS, {})
    want = run_module(b.module, FEEDS, {})[y]
    return "llvm" in [name for name, _ in prog.times.phases], float(got), float(want)


def _rechecksum(data: bytes) -> bytes:
    return data[:8] + hashlib.sha256(data[40:]).digest() + data[40:]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("PULLBACK_CACHE_DIR", str(folder))
    monkeypatch.delenv("PULLBACK_CACHE", raising=False)
    monkeypatch.delenv("PULLBACK_CACHE_SIZE", raising=False)
    monkeypatch.setattr(disk_cache, "_WARNED", set(), raising=False)
    return folder


def test_an_entry_copied_under_another_programs_key_is_not_used(cache: Path) -> None:
    """Program B's entry replaced by program A's (valid checksum): B must not run A's
    code (it used to: a silently wrong result); the entry is dropped with a warning."""
    _compiled(2.5)
    (a,) = cache.glob("*.pbc")
    _compiled(3.5)
    (b,) = set(cache.glob("*.pbc")) - {a}
    b.write_bytes(a.read_bytes())
    with pytest.warns(disk_cache.CacheWarning, match="another key"):
        rebuilt, got, want = _compiled(3.5)
    assert rebuilt
    assert got == pytest.approx(want, rel=1e-6)
    assert not _compiled(3.5)[0]  # rewritten, then used


def test_a_world_writable_folder_is_refused(cache: Path) -> None:
    """A folder anyone can write: nothing is read from it or written to it, one
    warning says why; the programs still compile and run."""
    cache.mkdir()
    cache.chmod(0o777)
    with pytest.warns(disk_cache.CacheWarning, match="writable by others") as record:
        for _ in range(2):
            rebuilt, got, want = _compiled(4.5)
            assert rebuilt and got == pytest.approx(want, rel=1e-6)
    assert len([w for w in record if issubclass(w.category, disk_cache.CacheWarning)]) == 1
    assert not list(cache.iterdir())
    cache.chmod(0o770)
    with pytest.warns(disk_cache.CacheWarning, match="writable by its group"):
        assert _compiled(4.5)[0]
    cache.chmod(0o700)
    assert _compiled(4.5)[0] and not _compiled(4.5)[0]  # private again: stored, then loaded


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give a folder away")
def test_a_folder_of_another_user_is_refused(cache: Path) -> None:
    cache.mkdir(mode=0o700)
    os.chown(cache, 65534, 65534)
    with pytest.warns(disk_cache.CacheWarning, match="owned by user 65534"):
        assert _compiled(5.5)[0]
    assert not list(cache.iterdir())


def test_a_planted_entry_is_never_unpickled(cache: Path, tmp_path: Path) -> None:
    """An entry whose payload is a pickle that runs code when loaded (the old
    format), checksum valid, in the user's own private folder: not unpickled, dropped."""
    _compiled(6.5)
    (path,) = cache.glob("*.pbc")
    flag = tmp_path / "pwned"

    class Evil:
        def __reduce__(self) -> tuple[object, tuple[str]]:
            return (os.system, (f"touch {flag}",))

    payload = pickle.dumps({"abi": {}, "memory": None, "objects": [], "symbol": "x", "collectives": False,
                            "evil": Evil()})
    for magic in (b"PBCACHE1", path.read_bytes()[:8]):
        path.write_bytes(magic + hashlib.sha256(payload).digest() + payload)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", disk_cache.CacheWarning)
            rebuilt, got, want = _compiled(6.5)
        assert not flag.exists()
        assert rebuilt and got == pytest.approx(want, rel=1e-6)


def test_planted_files_others_can_write_or_links_are_refused(cache: Path, tmp_path: Path) -> None:
    _compiled(7.5)
    (path,) = cache.glob("*.pbc")
    path.chmod(0o666)
    with pytest.warns(disk_cache.CacheWarning, match="writable by others"):
        assert _compiled(7.5)[0]
    good = path.read_bytes()
    outside = tmp_path / "elsewhere.pbc"
    outside.write_bytes(good)
    path.unlink()
    path.symlink_to(outside)
    with pytest.warns(disk_cache.CacheWarning, match="cannot be read|not a regular file"):
        assert _compiled(7.5)[0]


_RUN = textwrap.dedent(
    """
    import sys, warnings
    import numpy as np
    from pullback.benchmarks.programs import ProgramBuilder
    from pullback.dialects import pd
    from pullback.runtime.native import program
    from pullback.runtime.native.compiler import compile_program
    warnings.simplefilter("always")
    b = ProgramBuilder()
    x = b.data("x", [-1, 3])
    y = b.add(pd.ReduceSumOp, b.add(pd.ScaleOp, b.add(pd.TanhOp, x), scale=8.5))
    prog = compile_program(b.module, [y])
    print("llvm" in [n for n, _ in prog.times.phases])
    if sys.argv[1] == "crash":
        import ctypes, os, signal
        prog.fn = lambda *a: os.kill(os.getpid(), signal.SIGSEGV)  # bad code, as LLVM would run it
    (out,) = program.execute(prog, {"x": np.ones((2, 3), np.float32)}, {})
    print(float(out))
    """
)


def _run(cache: Path, mode: str = "run") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PULLBACK_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-c", _RUN, mode], capture_output=True, text=True, env=env, timeout=300)


def test_an_entry_llvm_cannot_read_is_a_miss_not_a_crash(cache: Path) -> None:
    """An entry whose object file is not one (checksum valid) crashed every later
    run (SIGSEGV in LLVM's reader); now it is checked first, dropped and rebuilt."""
    first = _run(cache)
    assert first.returncode == 0, first.stderr
    (path,) = cache.glob("*.pbc")
    data = path.read_bytes()
    assert b"\x7fELF" in data
    path.write_bytes(_rechecksum(data.replace(b"\x7fELF", b"\x7fBAD")))
    second = _run(cache)
    assert second.returncode == 0, second.stderr
    assert second.stdout.split() == ["True", first.stdout.split()[1]]
    assert "not an ELF object file" in second.stderr
    third = _run(cache)
    assert third.stdout.split() == ["False", first.stdout.split()[1]]


def test_an_entry_that_crashed_its_first_call_is_dropped(cache: Path) -> None:
    """A process that dies in an entry's first call leaves its marker: the next
    process drops the entry (with a warning) and compiles again, instead of
    crashing on it every time."""
    crashed = _run(cache, "crash")
    assert crashed.returncode != 0
    assert list(cache.glob("*.trial"))
    again = _run(cache)
    assert again.returncode == 0, again.stderr
    assert again.stdout.split()[0] == "True"
    assert "died doing so" in again.stderr
    assert not list(cache.glob("*.trial"))
    assert _run(cache).stdout.split()[0] == "False"  # the rebuilt entry is trusted again


def test_an_entry_compiled_but_never_run_leaves_no_marker(cache: Path) -> None:
    b, y = _program(9.5)
    compile_program(b.module, [y])
    assert list(cache.glob("*.pbc")) and not list(cache.glob("*.trial"))


def test_entries_hold_json_and_object_files(cache: Path) -> None:
    """The format: magic, checksum, a JSON header naming key and program, raw objects."""
    b, y = _program(10.5)
    compile_program(b.module, [y])
    (path,) = cache.glob("*.pbc")
    data = path.read_bytes()
    n = int.from_bytes(data[40:48], "little")
    import json

    header = json.loads(data[48 : 48 + n])
    assert header["key"] == path.stem
    assert header["program"] == compiler.program_digest(str(b.module), compiler.value_positions(b.module, [y]))
    assert data[48 + n : 52 + n] == b"\x7fELF"
