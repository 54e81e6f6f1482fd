"""Memory a compiled program leaves behind (issue 32): every distinct program kept
0.19-0.41 MB after it and its cache entries were gone.  Machine code is now freed
with its MCJIT engine once all of the engine's programs are collected
(`native/jit.py`), the program caches are bounded in bytes as well as in count
(`native/backend.py`), and a small program is compiled in one chunk, halving what
llvmlite's pass pipelines keep (`native/llvm_chunks.py`).  What is left is
llvmlite's own (docs/reliability.md; `benchmarks/bench_program_memory.py`)."""

from __future__ import annotations

import gc

import llvmlite.ir as lir
import numpy as np
import pytest

from pullback.benchmarks.programs import ProgramBuilder
from pullback.dialects import pd
from pullback.runtime.native import jit as jit_module
from pullback.runtime.native import llvm_chunks
from pullback.runtime.native.backend import CompiledBackend, program_bytes
from pullback.runtime.native.jit import Jit


def _program(n: int, width: int = 8) -> tuple[ProgramBuilder, object]:
    b = ProgramBuilder()
    x = b.data("x", [n, width])
    y = b.add(pd.ReduceMeanOp, b.add(pd.ReluOp, b.add(pd.ScaleOp, x, scale=2.0, bias=float(width))))
    return b, y


def _run(backend: CompiledBackend, n: int, width: int = 8) -> float:
    b, y = _program(n, width)
    (out,) = backend.run(b.module, {"x": np.ones((n, width), np.float32)}, {}, [y])  # type: ignore[list-item]
    return float(out)


@pytest.fixture
def no_disk_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PULLBACK_CACHE", "0")


def test_programs_dropped_from_the_caches_are_unlinked(no_disk_cache: None) -> None:
    """48 distinct programs through a backend keeping 4: the JIT holds the programs
    of at most two engines (it held all 48 before)."""
    jit = Jit.get()
    gc.collect()
    before, freed = len(jit.loaded), jit.engines_freed
    backend = CompiledBackend(cache_size=4)
    n_programs = 3 * jit_module.GENERATION_PROGRAMS
    for n in range(1, n_programs + 1):
        assert _run(backend, n, width=3) == pytest.approx(5.0)
    gc.collect()
    assert len(jit.loaded) - before <= 2 * jit_module.GENERATION_PROGRAMS
    assert jit.engines_freed > freed


def test_a_program_still_held_keeps_its_code(no_disk_cache: None) -> None:
    """A program kept by the caller (and by no cache) while its engine's other
    programs are all dropped still runs (its engine is not freed under it)."""
    backend = CompiledBackend(cache_size=2)
    b, y = _program(7, width=5)
    feeds = {"x": np.ones((7, 5), np.float32)}
    held = backend.program_for(b.module, [y], feeds)  # type: ignore[list-item]
    assert held is not None
    for n in range(1, 2 * jit_module.GENERATION_PROGRAMS + 2):
        _run(backend, n, width=6)
    gc.collect()
    from pullback.runtime.native.program import execute

    (out,) = execute(held, feeds, {})
    assert float(out) == pytest.approx(7.0)


def test_the_program_caches_are_bounded_in_bytes(no_disk_cache: None) -> None:
    backend = CompiledBackend(cache_bytes=1)  # below any program: only the newest stays
    for n in range(1, 4):
        _run(backend, n, width=4)
    info = backend.cache_info()
    assert info["content"] == 1 and info["identity"] == 1
    roomy = CompiledBackend()
    for n in range(1, 4):
        _run(roomy, n, width=4)
    info = roomy.cache_info()
    assert info["content"] == 3 and 0 < info["bytes"] <= info["bytes_bound"]
    assert info["bytes"] == sum(program_bytes(p) for p in roomy._by_content.values())


def test_a_small_module_is_one_chunk_loop_free_functions_included() -> None:
    """Each chunk costs a pass pipeline that llvmlite never wholly frees: a module
    too small to fill a chunk is compiled as one."""
    mod = lir.Module("m")
    i64 = lir.IntType(64)
    flat = lir.Function(mod, lir.FunctionType(i64, [i64]), "flat")
    lir.IRBuilder(flat.append_basic_block("entry")).ret(flat.args[0])
    looped = lir.Function(mod, lir.FunctionType(i64, [i64]), "looped")
    entry, body = looped.append_basic_block("entry"), looped.append_basic_block("body")
    b = lir.IRBuilder(entry)
    b.branch(body)
    b = lir.IRBuilder(body)
    b.cbranch(b.icmp_signed("<", looped.args[0], i64(0)), body, entry)
    got: list[llvm_chunks.Chunk] = []
    writer = llvm_chunks.ChunkWriter(got.append)
    writer.add(mod, [flat])
    writer.add(mod, [looped])
    writer.close()
    assert len(got) == 1 and set(got[0].functions) == {"flat", "looped"} and not got[0].loop_free
