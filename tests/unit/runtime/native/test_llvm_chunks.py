"""LLVM on several threads (`runtime/native/llvm_chunks.py`): a module cut into chunks of
functions, each chunk compiled on its own thread, the object files linked together."""

from __future__ import annotations

import os

import llvmlite.binding as llvm
import numpy as np
import pytest

from pullback.benchmarks.programs import mlp_train
from pullback.runtime.native import cpu_load, llvm_chunks, settings
from pullback.runtime.native.compiler import NotCompilable, compile_program
from pullback.runtime.native.jit import Jit
from pullback.runtime.native.program import execute
from pullback.runtime.interpreter import run_module

IR = """; ModuleID = "m"
target triple = "unknown-unknown-unknown"
target datalayout = ""

declare ptr @"malloc"(i64 %".1")

define void @"entry"(ptr %".1") noinline
{
entry:
  call void @"seg0"(ptr %".1")
  call void @"seg1"(ptr %".1")
  ret void
}

define void @"seg0"(ptr noalias %".1") noinline
{
entry:
  call void @"seg0__fork"(ptr %".1")
  ret void
}

define internal void @"seg0__fork"(ptr %".1")
{
entry:
  store i64 1, ptr %".1"
  ret void
}

define void @"seg1"(ptr noalias %".1") noinline
{
entry:
  %".2" = load i64, ptr %".1"
  %".3" = add i64 %".2", 41
  store i64 %".3", ptr %".1"
  ret void
}
"""


def _defined(chunk: llvm_chunks.Chunk) -> set[str]:
    mod = llvm.parse_assembly(chunk.text)
    return {f.name for f in mod.functions if not f.is_declaration}


def test_a_split_keeps_a_private_function_with_its_caller_and_declares_the_rest() -> None:
    chunks = llvm_chunks.split_module(IR, 3, min_chars=1)
    assert len(chunks) == 3
    defined = [_defined(c) for c in chunks]  # every chunk parses on its own
    assert sorted(n for d in defined for n in d) == ["entry", "seg0", "seg0__fork", "seg1"]
    assert any({"seg0", "seg0__fork"} <= d for d in defined)  # internal: with its only caller
    assert [c.functions for c in chunks] == [c.functions for c in llvm_chunks.split_module(IR, 3, min_chars=1)]
    assert llvm_chunks.split_module(IR, 3)[0].text == IR  # small: left whole


def test_chunks_compiled_on_threads_link_into_one_program() -> None:
    jit = Jit.get()
    chunks = llvm_chunks.split_module(IR, 2, min_chars=1)
    assert len(chunks) == 2
    objs, times = llvm_chunks.emit_chunks(
        llvm, chunks, jit.target_machines(2), lambda tm: llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options())
    )
    assert len(objs) == len(times) == 2 and all(t.optimize >= 0 for t in times)
    # An engine of its own (it takes its target machine over: not one of the JIT's).
    engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), jit._target_machine())
    for obj in objs:
        engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
    engine.finalize_object()
    import ctypes

    cell = np.zeros(1, np.int64)
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(engine.get_function_address("entry"))(cell.ctypes.data)
    assert cell[0] == 42


def test_an_error_in_one_chunk_names_that_chunk_and_its_functions() -> None:
    jit = Jit.get()
    chunks = llvm_chunks.split_module(IR, 2, min_chars=1)
    broken = next(i for i, c in enumerate(chunks) if "seg1" in c.functions)
    chunks[broken] = llvm_chunks.Chunk(chunks[broken].text.replace("add i64", "fadd i64"), chunks[broken].functions)
    with pytest.raises(llvm_chunks.ChunkError, match=rf"chunk {broken + 1} of 2 \(functions .*seg1.*\).*pars"):
        llvm_chunks.emit_chunks(
            llvm, chunks, jit.target_machines(2), lambda tm: llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options())
        )


def test_a_program_compiled_in_chunks_on_two_threads_computes_what_the_whole_module_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A training step (several outlined segments, parallel-loop bodies) cut into
    chunks compiled on two threads while it is translated (`ChunkWriter`): every
    output and updated parameter equal bit for bit to the module compiled whole,
    which agrees with the interpreter."""
    monkeypatch.setenv("PULLBACK_CACHE", "0")
    monkeypatch.setattr(llvm_chunks, "MIN_CHUNK_CHARS", 1)
    monkeypatch.setattr(llvm_chunks, "STREAM_CHUNK_CHARS", 1)  # a chunk per function group
    m = mlp_train((12, 16, 16, 4), 0.1, optimizer="momentum")
    rng = np.random.default_rng(3)
    feeds = {"x": rng.standard_normal((8, 12)).astype(np.float32), "label": rng.integers(0, 4, (8, 1)).astype(np.int64)}
    results = {}
    for split in (False, True):
        prog = compile_program(m.module, m.fetch, llvm_threads=2, split_llvm=split, min_chunk_work=1)
        assert prog.times is not None
        chunked = [n for n, _ in prog.times.threads if "chunks, 2 threads" in n]
        assert bool(chunked) == split
        assert not split or int(chunked[0].split("(")[1].split()[0]) > 4  # streamed, group by group
        state = {k: np.array(v) for k, v in m.scope.items()}
        outs = [execute(prog, feeds, state) for _ in range(3)]
        results[split] = (outs, state)
    (outs1, state1), (outs2, state2) = results[False], results[True]
    for a, b in zip(outs1, outs2):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)
    for k in state1:
        np.testing.assert_array_equal(state1[k], state2[k])
    ref_state = {k: np.array(v) for k, v in m.scope.items()}
    env = run_module(m.module, feeds, ref_state)
    np.testing.assert_allclose(outs1[0][0], env[m.fetch[0]], rtol=1e-5, atol=1e-6)


def test_pullback_compile_threads_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PULLBACK_COMPILE_THREADS", "3")
    assert settings.compile_threads() == 3
    monkeypatch.delenv("PULLBACK_COMPILE_THREADS")
    assert 1 <= settings.compile_threads() <= min(os.cpu_count() or 1, settings.MAX_COMPILE_THREADS)
    monkeypatch.setenv("PULLBACK_COMPILE_THREADS", "none")
    with pytest.raises(ValueError, match="PULLBACK_COMPILE_THREADS must be a positive integer"):
        settings.compile_threads()
    monkeypatch.setenv("PULLBACK_COMPILE_THREADS", "0")
    with pytest.raises(ValueError, match="PULLBACK_COMPILE_THREADS"):
        settings.compile_threads()


def test_others_running_excludes_this_process(tmp_path) -> None:
    """Runnable threads (`/proc/loadavg`) less this process's own in state R: a
    made-up /proc with 5 runnable, two of ours running (one named with a parenthesis
    and a space, as `comm` may be) and one asleep."""
    (tmp_path / "loadavg").write_text("0.50 0.40 0.30 5/321 4242\n")
    tasks = tmp_path / "self" / "task"
    for tid, state in ((10, "R"), (11, "S"), (12, "R")):
        (tasks / str(tid)).mkdir(parents=True)
        (tasks / str(tid) / "stat").write_text(f"{tid} (py) th) {state} 1 2 3 4\n")
    assert cpu_load.others_running(samples=1, proc=str(tmp_path)) == 3
    assert cpu_load.others_running(samples=1, proc=str(tmp_path / "missing")) is None


@pytest.mark.skipif(not os.path.exists("/proc/loadavg"), reason="needs Linux's /proc")
def test_a_busy_process_elsewhere_is_counted() -> None:
    """A process spinning on a CPU is runnable, running or waiting: it counts."""
    import subprocess
    import sys

    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        import time

        time.sleep(0.3)
        assert (cpu_load.others_running(samples=3) or 0) >= 1
    finally:
        busy.kill()
        busy.wait()


LOOP = """define void @"loop"(ptr %".1", i64 %".2")
{
entry:
  br label %"head"
head:
  %".4" = phi i64 [0, %"entry"], [%".7", %"body"]
  %".5" = icmp slt i64 %".4", %".2"
  br i1 %".5", label %"body", label %"exit"
body:
  store i64 %".4", ptr %".1"
  %".7" = add i64 %".4", 1
  br label %"head"
exit:
  ret void
}"""

DIAMOND = """define void @"diamond"(ptr %".1", i1 %".2")
{
.3:
  br i1 %".2", label %"then", label %".5"
then:
  store i64 1, ptr %".1"
  br label %".5"
.5:
  ret void
}"""


def test_has_loop_finds_a_back_edge_and_nothing_else() -> None:
    assert llvm_chunks.has_loop(LOOP)
    assert not llvm_chunks.has_loop(DIAMOND)  # branches that merge: no cycle
    assert not llvm_chunks.has_loop(IR.split("define", 2)[1])  # one block of calls
    for text in (LOOP, DIAMOND):  # what the walk takes for blocks is what LLVM does
        mod = llvm.parse_assembly(text)
        assert len(list(next(iter(mod.functions)).blocks)) == text.count(":\n")


def test_loop_free_functions_get_a_chunk_of_their_own() -> None:
    ir = IR + "\n" + LOOP + "\n"
    chunks = llvm_chunks.split_module(ir, 3, min_chars=1)
    flat = [c for c in chunks if c.loop_free]
    assert len(flat) == 1 and set(flat[0].functions) == {"entry", "seg0", "seg0__fork", "seg1"}
    assert [c.functions for c in chunks if not c.loop_free] == [["loop"]]
    for c in chunks:
        _defined(c)  # each parses alone


def test_a_chunk_writer_hands_on_chunks_in_order_each_declaring_what_it_calls() -> None:
    import llvmlite.ir as lir

    mod = lir.Module("m")
    i64 = lir.IntType(64)
    callee = lir.Function(mod, lir.FunctionType(i64, [i64]), "callee")
    fns = []
    for k in range(4):
        f = lir.Function(mod, lir.FunctionType(i64, [i64]), f"f{k}")
        b = lir.IRBuilder(f.append_basic_block("entry"))
        b.ret(b.call(callee, [f.args[0]]) if k % 2 else f.args[0])
        fns.append(f)
    got: list[llvm_chunks.Chunk] = []
    writer = llvm_chunks.ChunkWriter(got.append, min_chars=len(str(fns[0])) * 2)
    for f in fns:
        writer.add(mod, [f])
    writer.close()
    assert [c.functions for c in got] == [["f0", "f1"], ["f2", "f3"]]
    assert all(c.loop_free for c in got)
    for c in got:
        assert _defined(c) == set(c.functions)
        assert c.text.count('declare i64 @"callee"') == 1 and 'declare i64 @"f' not in c.text


def test_compile_threads_count_the_cpus_others_use_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """One thread per CPU that other processes are not running on now (this
    process's own threads and its past work do not count): two on an idle 2-CPU
    machine, one beside a busy process."""
    monkeypatch.delenv("PULLBACK_COMPILE_THREADS", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (5.0, 5.0, 5.0))  # not read
    for others, want in ((0, 2), (1, 1), (2, 1), (7, 1)):
        monkeypatch.setattr(settings, "others_running", lambda others=others: others)
        assert settings.compile_threads() == want, others


def test_compile_threads_without_proc_count_a_half_idle_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where /proc does not tell: the load average, which counts this process too,
    so one busy process on two CPUs still compiles on two threads; two leave one."""
    monkeypatch.delenv("PULLBACK_COMPILE_THREADS", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(settings, "others_running", lambda: None)
    for load, want in ((0.0, 2), (1.0, 2), (1.4, 2), (1.6, 1), (2.0, 1), (5.0, 1)):
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, load, load))
        assert settings.compile_threads() == want, load


def test_a_translation_error_mid_stream_stops_the_compile_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    """A lowering error after some chunks went to the compile threads: the compile
    reports it (`NotCompilable`, for the interpreter fallback), the threads are
    joined, and the next compile works."""
    import threading

    from pullback.lowering.abi import LoweringError
    from pullback.lowering.llvm.cpu import CpuEmitter

    monkeypatch.setenv("PULLBACK_CACHE", "0")
    monkeypatch.setattr(llvm_chunks, "STREAM_CHUNK_CHARS", 1)  # chunks leave early
    real = CpuEmitter.define
    seen = [0]

    def failing(self: CpuEmitter, fn: object) -> None:
        seen[0] += 1
        if seen[0] == 6:
            raise LoweringError("translate-to-llvmlite: made to fail")
        real(self, fn)  # type: ignore[arg-type]

    monkeypatch.setattr(CpuEmitter, "define", failing)
    m = mlp_train((12, 16, 16, 4), 0.1)
    with pytest.raises(NotCompilable, match="made to fail"):
        compile_program(m.module, m.fetch, llvm_threads=2, min_chunk_work=1)
    assert not [t for t in threading.enumerate() if t.name.startswith("pullback-llvm")]
    monkeypatch.setattr(CpuEmitter, "define", real)
    prog = compile_program(m.module, m.fetch, llvm_threads=2, min_chunk_work=1)
    feeds = {"x": np.ones((2, 12), np.float32), "label": np.zeros((2, 1), np.int64)}
    assert np.isfinite(execute(prog, feeds, {k: np.array(v) for k, v in m.scope.items()})[0]).all()
