"""The compiled backend's disk cache (`runtime/native/disk_cache.py`), its compile-time
report (`PULLBACK_COMPILE_TIMES`) and the stderr notice of slow compiles.

The session fixture in tests/conftest.py points `PULLBACK_CACHE_DIR` at a temporary
folder; tests here use folders of their own so they see only their own entries."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from pullback.benchmarks.programs import ProgramBuilder
from pullback.dialects import pd
from pullback.runtime.native import compiler, disk_cache, program
from pullback.runtime.native.backend import CompiledBackend
from pullback.runtime.native.compiler import compile_program
from pullback.runtime.interpreter import run_module


def _program(scale: float) -> tuple[ProgramBuilder, object]:
    """`sum(tanh(x) * scale)`; distinct `scale`s make distinct cache entries."""
    b = ProgramBuilder()
    x = b.data("x", [-1, 3])
    y = b.add(pd.ReduceSumOp, b.add(pd.ScaleOp, b.add(pd.TanhOp, x), scale=scale))
    return b, y


def _phases(prog: program.CompiledProgram) -> list[str]:
    assert prog.times is not None
    return [name for name, _ in prog.times.phases]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh, empty cache folder for one test."""
    folder = tmp_path / "cache"
    monkeypatch.setenv("PULLBACK_CACHE_DIR", str(folder))
    monkeypatch.delenv("PULLBACK_CACHE", raising=False)
    monkeypatch.delenv("PULLBACK_CACHE_SIZE", raising=False)
    return folder


def test_a_second_process_loads_the_program_from_the_cache(cache: Path) -> None:
    """Two processes run one program: the first compiles (LLVM runs) and stores it,
    the second only links the stored object code; both agree with the interpreter."""
    script = textwrap.dedent(
        """
        import numpy as np
        from pullback.benchmarks.programs import ProgramBuilder
        from pullback.dialects import pd
        from pullback.runtime.native.backend import CompiledBackend
        b = ProgramBuilder()
        x = b.data("x", [-1, 3])
        y = b.add(pd.ReduceSumOp, b.add(pd.ScaleOp, b.add(pd.TanhOp, x), scale=1.5))
        backend = CompiledBackend()
        feeds = {"x": np.linspace(-2, 2, 12, dtype=np.float32).reshape(4, 3)}
        (out,) = backend.run(b.module, feeds, {}, [y])
        prog = backend.program_for(b.module, [y], feeds)
        print(",".join(name for name, _ in prog.times.phases))
        print(repr(float(out)))
        """
    )
    env = {**os.environ, "PULLBACK_CACHE_DIR": str(cache)}
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
            for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    (first_phases, first_out), (second_phases, second_out) = (r.stdout.split() for r in runs)
    assert "llvm" in first_phases.split(",")
    assert "llvm" not in second_phases.split(",")
    assert "jit-link" in second_phases.split(",")
    assert len(list(cache.glob("*.pbc"))) == 1
    want = float(np.sum(np.tanh(np.linspace(-2, 2, 12, dtype=np.float32)) * np.float32(1.5)))
    # The terms cancel (an odd function on a symmetric grid): the sum is ~0, so its
    # rounding is judged against the terms' size, not its own.
    assert float(first_out) == float(second_out) == pytest.approx(want, abs=1e-5)


def test_a_damaged_entry_is_ignored_and_rebuilt(cache: Path) -> None:
    """Flipped bytes or a truncated file: the program compiles again, still right, and
    the entry is rewritten whole."""
    b, y = _program(2.5)
    feeds = {"x": np.full((2, 3), 0.5, np.float32)}
    want = run_module(b.module, feeds, {})[y]
    compile_program(b.module, [y])
    (path,) = cache.glob("*.pbc")
    good = path.read_bytes()
    for damaged in (good[:-1] + bytes([good[-1] ^ 0xFF]), good[: len(good) // 2], b"", b"not a cache entry"):
        path.write_bytes(damaged)
        prog = compile_program(b.module, [y])
        assert "llvm" in _phases(prog)  # rebuilt, not loaded
        assert path.read_bytes() == good  # rewritten whole
        (got,) = program.execute(prog, feeds, {})
        np.testing.assert_allclose(got, want, rtol=1e-6)
    again = compile_program(b.module, [y])
    assert "llvm" not in _phases(again)  # the rewritten entry is used


def test_pullback_cache_0_reads_and_writes_nothing(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PULLBACK_CACHE", "0")
    b, y = _program(3.5)
    for _ in range(2):
        assert "llvm" in _phases(compile_program(b.module, [y]))
    assert not cache.exists() or not list(cache.iterdir())


def test_the_cache_is_bounded_least_recently_used_first(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries of ~1 KB under a 3.5 KB bound: storing a fourth evicts the one least
    recently used, where a load counts as a use."""
    monkeypatch.setenv("PULLBACK_CACHE_SIZE", "3500")
    blob = disk_cache.Entry({"note": "x" * 900})
    for i, k in enumerate(["a", "b", "c"]):
        disk_cache.store(k, "p", blob)
        os.utime(cache / f"{k}.pbc", (1000 + i, 1000 + i))  # a oldest, c newest
    assert disk_cache.load("a", "p", lambda e: e) == blob  # a is now the most recently used
    disk_cache.store("d", "p", blob)
    assert sorted(p.stem for p in cache.glob("*.pbc")) == ["a", "c", "d"]
    monkeypatch.setenv("PULLBACK_CACHE_SIZE", "lots")
    with pytest.raises(ValueError, match="PULLBACK_CACHE_SIZE"):
        disk_cache.max_bytes()


def test_the_default_location_is_under_the_user_cache_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PULLBACK_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "/somewhere/cache")
    assert disk_cache.cache_dir() == Path("/somewhere/cache/pullback")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert disk_cache.cache_dir() == Path.home() / ".cache" / "pullback"


def test_a_slow_compile_says_so_on_stderr(cache: Path, monkeypatch: pytest.MonkeyPatch,
                                          capfd: pytest.CaptureFixture[str]) -> None:
    """Past `NOTICE_AFTER_S` a compile names its program while it runs and gives its
    time when done; `PULLBACK_COMPILE_TIMES=1` adds the phase table."""
    monkeypatch.setattr(compiler, "NOTICE_AFTER_S", 0.0)
    b, y = _program(4.5)
    CompiledBackend().run(b.module, {"x": np.zeros((1, 3), np.float32)}, {}, [y])
    err = capfd.readouterr().err
    assert "pullback: compiling a program of" in err and "ops fetching" in err
    assert "pullback: compiled a program of" in err and "llvm-optimize" not in err
    monkeypatch.setattr(compiler, "NOTICE_AFTER_S", 3600.0)
    monkeypatch.setenv("PULLBACK_COMPILE_TIMES", "1")
    b, y = _program(5.5)
    CompiledBackend().run(b.module, {"x": np.zeros((1, 3), np.float32)}, {}, [y])
    err = capfd.readouterr().err
    assert "pullback: compiling" not in err  # fast: no "still compiling" notice
    assert "pullback: compiled a program of" in err
    for phase in ("convert-pd-to-linalg", "translate-to-llvmlite", "llvm-optimize", "llvm-codegen"):
        assert phase in err
