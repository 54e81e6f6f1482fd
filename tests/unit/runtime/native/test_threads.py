"""Issue 18, threads: the native pool (`runtime/native/threadpool.py`) and programs whose large
loops and reductions it runs (`lowering/parallelize_loops.py`).  Compiled results on
1 and 2 threads agree with each other (elementwise exactly, reductions too: the split
does not depend on the thread count) and with the interpreter.  Programs are compiled
with a small `min_chunk_work` so that small shapes take the threaded path."""

from __future__ import annotations

import ctypes
import os
import subprocess
import sys
import threading
import textwrap
from collections.abc import Iterator

import numpy as np
import pytest

from pullback.benchmarks.programs import ProgramBuilder, elementwise_chain, fanout_chain, mlp_train
from pullback.dialects import pd
from pullback.lowering.convert_pd_to_linalg import build_entry, declare_callees
from pullback.lowering.parallelize_loops import FORK_SUFFIX, parallelize
from pullback.runtime.native import threadpool
from pullback.runtime.native.compiler import compile_program
from pullback.runtime.native.program import execute
from pullback.runtime.interpreter import run_module
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

SMALL_WORK = 64
"""Work per chunk in these tests: every loop of a few hundred elements is split."""

_CHUNK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)


@pytest.fixture
def threads() -> Iterator[None]:
    """Restore the thread count after a test that changes it."""
    before = threadpool.get_num_threads()
    yield
    threadpool.set_num_threads(before)


def _ranges(n: int, grain: int) -> list[tuple[int, int, int]]:
    """Drive `pb_parallel_for` with a Python callback; the ranges it got, sorted."""
    pool = threadpool.ensure()
    seen: list[tuple[int, int, int]] = []
    lock = threading.Lock()

    @_CHUNK
    def chunk(ctx: int | None, lo: int, hi: int) -> None:
        with lock:
            seen.append((lo, hi, threading.get_ident()))

    pool.parallel_for(ctypes.cast(chunk, ctypes.c_void_p), None, n, grain)
    return sorted(seen)


@pytest.mark.parametrize("t", [1, 2, 3])
@pytest.mark.parametrize(("n", "grain"), [(0, 1), (1, 1), (2, 1), (7, 1), (100, 30), (100, 60), (1000, 1)])
def test_pool_covers_the_range_once(threads: None, t: int, n: int, grain: int) -> None:
    threadpool.set_num_threads(t)
    got = _ranges(n, grain)
    used = min(t, n // grain)
    chunks = 0 if n == 0 else 1 if used <= 1 else min(n // grain, threadpool.OVERSPLIT * used)
    assert len(got) == chunks
    assert [(lo, hi) for lo, hi, _ in got] == [
        (i * (n // chunks) + min(i, n % chunks), (i + 1) * (n // chunks) + min(i + 1, n % chunks))
        for i in range(chunks)
    ]
    assert len({tid for *_, tid in got}) <= max(used, 1)  # never more threads than set
    if chunks == 1:
        assert got[0][2] == threading.get_ident()  # one chunk runs inline


def test_pool_repeated_calls_and_fewer_threads(threads: None) -> None:
    threadpool.set_num_threads(3)
    for _ in range(200):
        assert [(lo, hi) for lo, hi, _ in _ranges(9, 3)] == [(0, 3), (3, 6), (6, 9)]
    threadpool.set_num_threads(2)  # the third worker stays asleep
    for _ in range(50):
        got = _ranges(8, 1)
        assert [(lo, hi) for lo, hi, _ in got] == [(k, k + 1) for k in range(8)]
        assert len({tid for *_, tid in got}) <= 2


def test_thread_count_settings(threads: None, monkeypatch: pytest.MonkeyPatch) -> None:
    threadpool.set_num_threads(1)
    assert threadpool.get_num_threads() == 1
    for bad in (0, -2):
        with pytest.raises(ValueError, match="at least 1"):
            threadpool.set_num_threads(bad)
    with pytest.raises(TypeError, match="must be an int"):
        threadpool.set_num_threads(2.0)  # type: ignore[arg-type]
    monkeypatch.setenv("PULLBACK_NUM_THREADS", "3")
    monkeypatch.setenv("OMP_NUM_THREADS", "5")
    assert threadpool.default_num_threads() == 3
    monkeypatch.delenv("PULLBACK_NUM_THREADS")
    assert threadpool.default_num_threads() == 5
    monkeypatch.setenv("OMP_NUM_THREADS", "4,2")  # nested levels: the outer one
    assert threadpool.default_num_threads() == 4
    monkeypatch.delenv("OMP_NUM_THREADS")
    monkeypatch.setattr(threadpool, "_cpus", lambda: 8)
    for var in threadpool._LOCAL_RANKS:
        monkeypatch.delenv(var, raising=False)
    assert threadpool.default_num_threads() == 8
    monkeypatch.setenv("MPI_LOCALNRANKS", "3")  # ranks on this machine share its CPUs
    assert threadpool.default_num_threads() == 2
    monkeypatch.setenv("MPI_LOCALNRANKS", "16")
    assert threadpool.default_num_threads() == 1
    monkeypatch.setenv("OMP_NUM_THREADS", "many")
    with pytest.raises(ValueError, match="OMP_NUM_THREADS"):
        threadpool.default_num_threads()
    from pullback.frontend.api import core

    core.set_num_threads(2)
    assert threadpool.get_num_threads() == 2


def _run_threads(built, feeds, scope, t: int, **kw):  # type: ignore[no-untyped-def]
    """Compile (threads on, small chunks) and run on `t` threads; scope is copied."""
    threadpool.set_num_threads(t)
    cp = compile_program(built.module, built.fetch, threads=True, min_chunk_work=SMALL_WORK, **kw)
    sc = {k: v.copy() for k, v in scope.items()}
    return execute(cp, feeds, sc), sc


def _interpret(built, feeds, scope):  # type: ignore[no-untyped-def]
    sc = {k: v.copy() for k, v in scope.items()}
    env = run_module(built.module, feeds, sc)
    return [env[v] for v in built.fetch], sc


def _chunks(built) -> int:  # type: ignore[no-untyped-def]
    """How many loops `parallelize-loops` splits in `built` (small chunks)."""
    fn, _ = build_entry(built.module, built.fetch, entry="t", only_given_fetches=True)
    m = ModuleOp([fn])
    declare_callees(m)
    parallelize(m, SMALL_WORK)
    return sum(1 for o in m.body.block.ops if isinstance(o, func.FuncOp) and o.sym_name.data.endswith(FORK_SUFFIX))


def test_elementwise_chain_identical_on_1_and_2_threads(threads: None) -> None:
    n = 3000
    built = elementwise_chain(n, 10)
    assert _chunks(built) >= 1  # the forward reduction and the backward chain (one fused loop or two)
    rng = np.random.default_rng(0)
    feeds = {"x": rng.standard_normal(n).astype(np.float32), "y": rng.uniform(0.5, 1, n).astype(np.float32)}
    (one, _), (two, _) = (_run_threads(built, feeds, {}, t) for t in (1, 2))
    want, _ = _interpret(built, feeds, {})
    np.testing.assert_array_equal(one[1], two[1])  # elementwise: bit for bit
    np.testing.assert_array_equal(one[0], two[0])  # the split does not follow the threads
    np.testing.assert_allclose(two[1], want[1], rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(two[0], want[0], rtol=2e-5)


def test_fanout_chain_identical_on_1_2_and_3_threads(threads: None) -> None:
    """The fused fan-out chain (one loop computing the loss and the gradient, its
    vector iterations interleaved: `lowering/llvm/loops.INTERLEAVE_MIN_DEPTH`) gives
    the same bits on any thread count, the loss included (its partial sums follow
    the chunks, which do not follow the threads), and agrees with the interpreter.
    An odd length puts elements in every remainder loop."""
    n = 4099
    built = fanout_chain(n, 12, 4)
    assert _chunks(built) >= 1
    rng = np.random.default_rng(3)
    feeds = {"x": rng.standard_normal(n).astype(np.float32), "y": rng.uniform(0.5, 1, n).astype(np.float32)}
    runs = [_run_threads(built, feeds, {}, t)[0] for t in (1, 2, 3)]
    want, _ = _interpret(built, feeds, {})
    for other in runs[1:]:
        np.testing.assert_array_equal(runs[0][1], other[1])
        np.testing.assert_array_equal(runs[0][0], other[0])
    np.testing.assert_allclose(runs[0][1], want[1], rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(runs[0][0], want[0], rtol=2e-5)


def _reductions(dtype: str) -> ProgramBuilder:
    b = ProgramBuilder()
    x = b.data("x", [-1, 40], dtype)
    outs = [
        b.add(pd.ReduceSumOp, x),  # full: split into partials
        b.add(pd.MeanOp, x),
        b.add(pd.ReduceMaxOp, x, axis=[0]),  # over rows: partials per column
        b.add(pd.ReduceMinOp, x, axis=[0]),
        b.add(pd.ReduceSumOp, x, axis=[0]),
        b.add(pd.ReduceProdOp, b.add(pd.ScaleOp, x, scale=0.001, bias=1.0), axis=[0]),
        b.add(pd.ReduceMaxOp, x, axis=[1]),  # within rows: rows in parallel
        b.add(pd.SoftmaxOp, x),
    ]
    for o in outs:
        b.fetch(o)
    b.fetch_list = outs  # type: ignore[attr-defined]
    return b


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_reductions_agree(threads: None, dtype: str) -> None:
    b = _reductions(dtype)

    class Built:
        module = b.module
        fetch = b.fetch_list  # type: ignore[attr-defined]

    assert _chunks(Built) >= 6
    rng = np.random.default_rng(1)
    tol = dict(rtol=1e-4, atol=1e-5) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)
    for rows in (1, 7, 300):  # one row, fewer rows than slots, many
        feeds = {"x": rng.standard_normal((rows, 40)).astype(dtype)}
        want, _ = _interpret(Built, feeds, {})
        (one, _), (two, _) = (_run_threads(Built, feeds, {}, t) for t in (1, 2))
        for w, g1, g2 in zip(want, one, two):
            np.testing.assert_array_equal(g1, g2)
            np.testing.assert_allclose(g2, w, **tol)


def test_mlp_step_on_threads(threads: None) -> None:
    built = mlp_train((30, 64, 64, 10), 0.1)
    assert _chunks(built) >= 5
    rng = np.random.default_rng(2)
    feeds = {"x": rng.standard_normal((50, 30)).astype(np.float32),
             "label": rng.integers(0, 10, (50, 1)).astype(np.int64)}
    want, _ = _interpret(built, feeds, built.scope)
    # The updated parameters: against the single-threaded compile (which the other
    # compiled-backend tests check against the interpreter through the executor).
    plain = compile_program(built.module, built.fetch, threads=False)
    want_scope = {k: v.copy() for k, v in built.scope.items()}
    execute(plain, feeds, want_scope)
    (two, scope2), (one, scope1) = (_run_threads(built, feeds, built.scope, t) for t in (2, 1))
    np.testing.assert_allclose(two[0], want[0], rtol=1e-4)
    np.testing.assert_array_equal(one[0], two[0])
    for k in want_scope:
        np.testing.assert_allclose(scope2[k], want_scope[k], rtol=1e-4, atol=1e-6, err_msg=k)
        np.testing.assert_array_equal(scope1[k], scope2[k], err_msg=k)


def test_range_check_still_reports_under_threads(threads: None) -> None:
    built = mlp_train((30, 64, 10), 0.1)
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 10, (50, 1)).astype(np.int64)
    labels[17, 0] = 12
    labels[30, 0] = -3
    feeds = {"x": rng.standard_normal((50, 30)).astype(np.float32), "label": labels}
    with pytest.raises(Exception) as want:
        _interpret(built, feeds, built.scope)
    with pytest.raises(type(want.value)) as got:
        _run_threads(built, feeds, built.scope, 2)
    assert str(got.value) == str(want.value)


def test_programs_from_several_python_threads(threads: None) -> None:
    """Two Python threads running threaded programs at once (the pool is taken by
    one, the other runs its loops inline) get the right answers."""
    threadpool.set_num_threads(2)
    n = 2000
    built = elementwise_chain(n, 5)
    cp = compile_program(built.module, built.fetch, threads=True, min_chunk_work=SMALL_WORK)
    rng = np.random.default_rng(4)
    feeds = [{"x": rng.standard_normal(n).astype(np.float32), "y": rng.uniform(0.5, 1, n).astype(np.float32)}
             for _ in range(2)]
    want = [execute(cp, f, {}) for f in feeds]
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for _ in range(30):
                got = execute(cp, feeds[k], {})
                np.testing.assert_array_equal(got[1], want[k][1])
                np.testing.assert_array_equal(got[0], want[k][0])
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors[0]


def test_threaded_program_from_the_disk_cache_in_a_fresh_process(tmp_path: object) -> None:
    """The object code calls `pb_parallel_for`; a process that only loads it from the
    disk cache (no lowering) must resolve it too."""
    script = textwrap.dedent(
        f"""
        import numpy as np
        from pullback.benchmarks.programs import elementwise_chain
        from pullback.runtime.native import threadpool
        from pullback.runtime.native.compiler import compile_program
        from pullback.runtime.native.program import execute
        threadpool.set_num_threads(2)
        built = elementwise_chain(3000, 10)
        cp = compile_program(built.module, built.fetch, threads=True, min_chunk_work={SMALL_WORK})
        rng = np.random.default_rng(0)
        feeds = {{"x": rng.standard_normal(3000).astype(np.float32),
                  "y": rng.uniform(0.5, 1, 3000).astype(np.float32)}}
        loss, gx = execute(cp, feeds, {{}})
        lowered = "convert-pd-to-linalg" in cp.times.format()
        print(lowered, repr(float(loss)), float(np.abs(gx).sum()))
        """
    )
    env = dict(os.environ, PULLBACK_CACHE_DIR=str(tmp_path), PULLBACK_CACHE="1")
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300)
            for _ in range(2)]
    for r in runs:
        assert r.returncode == 0, r.stderr
    first, second = (r.stdout.split() for r in runs)
    assert first[0] == "True" and second[0] == "False"  # compiled, then loaded
    assert first[1:] == second[1:]


def test_iteration_indices_are_shifted_per_chunk(threads: None) -> None:
    """Ops computing from their position (`linalg.index 0`: arange, eye) give the
    same values when their rows are split over chunks."""
    b = ProgramBuilder()
    x = b.data("x", [500, 3], "float32")
    r = b.add(pd.ArangeOp, start=0.0, end=500.0, step=1.0, dtype="float32")
    e = b.add(pd.EyeOp, num_rows=500, num_columns=3, dtype="float32")
    out = b.add(pd.ElementwiseAddOp, b.add(pd.ElementwiseAddOp, x, e), b.add(pd.ReshapeOp, r, shape=[500, 1]))
    b.fetch(out)

    class Built:
        module = b.module
        fetch = [out]

    assert _chunks(Built) >= 2
    feeds = {"x": np.random.default_rng(5).standard_normal((500, 3)).astype(np.float32)}
    want, _ = _interpret(Built, feeds, {})
    for t in (1, 2):
        got, _ = _run_threads(Built, feeds, {}, t)
        np.testing.assert_array_equal(got[0], want[0])


def test_batch_norm_statistics_and_gradients_on_threads(threads: None) -> None:
    """Batch-norm's per-channel statistics (reductions over N, H, W with the channel
    parallel inside) and the gradients through them, split into partials."""
    b = ProgramBuilder()
    x = b.data("x", [-1, 4, 5, 5], "float64")
    names = ("bn.s", "bn.b", "bn.mean", "bn.var")
    ps = [b.param(n, [4], "float64") for n in names]
    bn = b.op(pd.BatchNormOp.make(x, *ps))
    loss = b.add(pd.MeanOp, b.add(pd.TanhOp, bn.results[0]))
    gx, gs = b.backward(loss, [x, ps[0]])
    for v in (loss, gx, gs):
        b.fetch(v)

    class Built:
        module = b.module
        fetch = [loss, gx, gs]
        scope = {"bn.s": np.linspace(0.5, 2, 4), "bn.b": np.zeros(4), "bn.mean": np.zeros(4), "bn.var": np.ones(4)}

    assert _chunks(Built) >= 4
    feeds = {"x": np.random.default_rng(6).standard_normal((9, 4, 5, 5))}
    want, _ = _interpret(Built, feeds, Built.scope)
    (one, _), (two, _) = (_run_threads(Built, feeds, Built.scope, t) for t in (1, 2))
    for w, g1, g2 in zip(want, one, two):
        np.testing.assert_array_equal(g1, g2)
        np.testing.assert_allclose(g2, w, rtol=1e-10, atol=1e-12)
