"""The compiled CPU backend agrees with the numpy interpreter, rejects bad feeds before
running native code, caches compiled programs, and frees its temporaries."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

from pullback.benchmarks.programs import ProgramBuilder, mlp_train
from pullback.dialects import pd
from pullback.runtime.native.backend import CompiledBackend
from pullback.runtime.native.compiler import NotCompilable
from pullback.runtime.interpreter import run_module
from xdsl.ir import SSAValue

TOL = {"float32": dict(rtol=2e-4, atol=2e-5), "float64": dict(rtol=1e-10, atol=1e-12)}


def interpret(built_module, feeds, scope, fetch):  # type: ignore[no-untyped-def]
    env = run_module(built_module, feeds, {k: v.copy() for k, v in scope.items()})
    return [env[v] for v in fetch]


def check_agree(b: ProgramBuilder, fetch, feeds_list, dtype, scope=None):  # type: ignore[no-untyped-def]
    """Run one compiled program on several feeds (batch sizes); compare every fetch."""
    scope = scope or {}
    backend = CompiledBackend()
    for feeds in feeds_list:
        want = interpret(b.module, feeds, scope, fetch)
        got = backend.run(b.module, feeds, {k: v.copy() for k, v in scope.items()}, fetch)
        for v, w, g in zip(fetch, want, got):
            assert g.shape == np.shape(w), v
            assert g.dtype == np.asarray(w).dtype, v
            np.testing.assert_allclose(g, w, **TOL[dtype], err_msg=str(v.owner))
    assert backend.compiles == 1  # one program serves every batch size


def _feeds(rng, batch, dtype):  # type: ignore[no-untyped-def]
    return {
        "x": rng.standard_normal((batch, 5)).astype(dtype),
        "z": rng.uniform(0.5, 2.0, (batch, 5)).astype(dtype),
        "v": rng.standard_normal(5).astype(dtype),
    }


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_elementwise_ops_agree(dtype: str) -> None:
    rng = np.random.default_rng(0)
    b = ProgramBuilder()
    x, z, v = b.data("x", [-1, 5], dtype), b.data("z", [-1, 5], dtype), b.data("v", [5], dtype)
    outs = []
    for cls in (pd.ElementwiseAddOp, pd.ElementwiseSubOp, pd.ElementwiseMulOp, pd.ElementwiseDivOp,
                pd.ElementwiseMaxOp, pd.ElementwiseMinOp, pd.ElementwisePowOp):
        outs.append(b.add(cls, z, v))          # numpy broadcasting of a row vector
        outs.append(b.add(cls, x, z))
    outs.append(b.add(pd.ElementwiseAddOp, x, v, axis=1))  # Paddle axis alignment
    for cls in (pd.ReluOp, pd.SigmoidOp, pd.TanhOp, pd.ExpOp, pd.SquareOp, pd.AbsOp, pd.SignOp,
                pd.ErfOp, pd.GeluOp):
        outs.append(b.add(cls, x))
    outs.append(b.add(pd.LogOp, z))
    outs.append(b.add(pd.SqrtOp, z))
    outs.append(b.add(pd.GeluOp, x, approximate=True))
    outs.append(b.add(pd.ScaleOp, x, scale=2.5, bias=-1.0))
    outs.append(b.add(pd.ScaleOp, x, scale=2.5, bias=-1.0, bias_after_scale=False))
    outs.append(b.add(pd.PowOp, z, factor=1.5))
    outs.append(b.add(pd.ClipOp, x, min=-0.5, max=0.7))
    gt = b.add(pd.GreaterThanOp, x, z)
    outs.append(b.add(pd.WhereOp, gt, x, z))
    outs.append(b.add(pd.CastOp, gt, dtype=dtype))
    outs.append(b.add(pd.FillAnyLikeOp, x, value=3.0))
    outs.append(b.add(pd.SumOp, x, z, x))
    # A fused chain feeding a reduction.
    chain = b.add(pd.TanhOp, b.add(pd.ElementwiseMulOp, b.add(pd.ExpOp, x), z))
    outs.append(b.add(pd.ReduceSumOp, chain, axis=[1]))
    check_agree(b, outs, [_feeds(rng, n, dtype) for n in (1, 3, 17)], dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_reductions_softmax_losses_matmul_agree(dtype: str) -> None:
    rng = np.random.default_rng(1)
    b = ProgramBuilder()
    x = b.data("x", [-1, 5], dtype)
    lab = b.data("label", [-1, 1], "int64")
    w = b.param("w", [5, 3], dtype)
    wt = b.param("wt", [3, 5], dtype)
    outs = [
        b.add(pd.MeanOp, x),
        b.add(pd.ReduceSumOp, x, axis=[0]),
        b.add(pd.ReduceSumOp, x, axis=[1], keepdim=True),
        b.add(pd.ReduceMeanOp, x, axis=[0, 1]),
        b.add(pd.ReduceMaxOp, x, axis=[-1]),
        b.add(pd.ReduceSumOp, x),
        b.add(pd.SoftmaxOp, x),
        b.add(pd.LogSoftmaxOp, x),
        b.add(pd.SoftmaxOp, x, axis=0),
        b.add(pd.MatmulOp, x, w),
        b.add(pd.MatmulOp, x, wt, transpose_y=True),
        b.add(pd.MatmulOp, x, x, transpose_x=True),
        b.add(pd.MatmulOp, x, x, transpose_y=True),
    ]
    sm_ce = b.op(pd.SoftmaxWithCrossEntropyOp.make(x, lab))
    outs += list(sm_ce.results)
    probs = b.add(pd.SoftmaxOp, x)
    outs.append(b.add(pd.CrossEntropyOp, probs, lab))
    outs.append(b.add(pd.OneHotOp, lab, depth=5))
    scope = {"w": rng.standard_normal((5, 3)).astype(dtype), "wt": rng.standard_normal((3, 5)).astype(dtype)}
    feeds = [
        {"x": rng.standard_normal((n, 5)).astype(dtype), "label": rng.integers(0, 5, (n, 1))}
        for n in (2, 9)
    ]
    check_agree(b, outs, feeds, dtype, scope)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("optimizer", ["sgd", "momentum"])
def test_mlp_training_step_agrees(dtype: str, optimizer: str) -> None:
    built = mlp_train((6, 8, 4), lr=0.1, dtype=dtype, optimizer=optimizer)
    rng = np.random.default_rng(2)
    backend = CompiledBackend()
    scope_i = {k: v.copy() for k, v in built.scope.items()}
    scope_c = {k: v.copy() for k, v in built.scope.items()}
    updates = [op for op in built.module.body.block.ops if isinstance(op, (pd.SgdOp, pd.MomentumOp))]
    for batch in (4, 1, 13):
        feeds = {"x": rng.standard_normal((batch, 6)).astype(dtype), "label": rng.integers(0, 4, (batch, 1))}
        env = run_module(built.module, feeds, scope_i)
        (loss,) = backend.run(built.module, feeds, scope_c, built.fetch)
        np.testing.assert_allclose(loss, env[built.fetch[0]], **TOL[dtype])
        for op in updates:  # the executor writes updates back; emulate it for the oracle
            for r, name in zip(op.results, pd.result_names(op)):
                scope_i[name] = env[r]
        for name in scope_i:
            np.testing.assert_allclose(scope_c[name], scope_i[name], **TOL[dtype], err_msg=name)
    assert backend.compiles == 1


def test_parameters_are_updated_in_place_and_returned() -> None:
    built = mlp_train((4, 3), lr=0.1)
    b = ProgramBuilder()
    del b
    w = built.scope["fc_0.w_0"]
    before = w.copy()
    backend = CompiledBackend()
    sgd = next(op for op in built.module.body.block.ops if isinstance(op, pd.SgdOp))
    feeds = {"x": np.ones((2, 4), np.float32), "label": np.zeros((2, 1), np.int64)}
    loss, new_w = backend.run(built.module, feeds, built.scope, [built.fetch[0], sgd.results[0]])
    assert built.scope["fc_0.w_0"] is w and new_w is w  # no copy, same Scope array
    assert not np.array_equal(w, before)


def test_remembered_parameter_addresses_follow_the_scope() -> None:
    """`execute` remembers each parameter's buffer address between calls; a new
    array in the scope, a read-only one, an in-place reshape or a changed dtype is
    noticed (checked against the interpreter on the same scope values)."""
    built = mlp_train((4, 3), lr=0.1)
    backend = CompiledBackend()
    feeds = {"x": np.arange(8, dtype=np.float32).reshape(2, 4) / 8, "label": np.array([[1], [2]])}

    def agrees(scope: dict[str, np.ndarray]) -> None:
        want_scope = {k: v.copy() for k, v in scope.items()}
        want = run_module(built.module, feeds, want_scope)[built.fetch[0]]
        (got,) = backend.run(built.module, feeds, scope, built.fetch)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)

    scope = {k: v.copy() for k, v in built.scope.items()}
    agrees(scope)
    w = scope["fc_0.w_0"]
    scope["fc_0.w_0"] = np.full_like(w, 0.25)  # a new array: its own address
    agrees(scope)
    assert scope["fc_0.w_0"][0, 0] != 0.25  # updated in place, in the new array
    frozen = scope["fc_0.w_0"]
    frozen.flags.writeable = False  # not written through: copied, as on first sight
    agrees(scope)
    assert scope["fc_0.w_0"] is not frozen and scope["fc_0.w_0"].flags.writeable
    reshaped = scope["fc_0.w_0"]
    reshaped.shape = (reshaped.size,)  # the same object, another shape
    with pytest.raises(ValueError, match="parameter 'fc_0.w_0' has shape"):
        backend.run(built.module, feeds, scope, built.fetch)
    reshaped.shape = (4, 3)
    scope["fc_0.b_0"] = scope["fc_0.b_0"].astype(np.float64)  # converted, as on first sight
    agrees(scope)
    assert scope["fc_0.b_0"].dtype == np.float32
    assert backend.compiles == 1


def test_a_cached_program_does_not_keep_a_dropped_scope_alive() -> None:
    """The remembered addresses hold their arrays weakly: once the scope is gone,
    its parameters are freed although the compiled program stays cached."""
    import gc
    import weakref

    built = mlp_train((4, 3), lr=0.1)
    backend = CompiledBackend()
    feeds = {"x": np.ones((2, 4), np.float32), "label": np.zeros((2, 1), np.int64)}
    scope = {k: v.copy() for k, v in built.scope.items()}
    backend.run(built.module, feeds, scope, built.fetch)
    w = weakref.ref(scope["fc_0.w_0"])
    del scope
    gc.collect()
    assert w() is None
    assert backend.cache_info()["content"] == 1
    (loss,) = backend.run(built.module, feeds, {k: v.copy() for k, v in built.scope.items()}, built.fetch)
    assert np.isfinite(loss)


def test_executor_modules_are_sealed_and_a_changed_program_recompiles() -> None:
    """The executor's private copy of a program is keyed by identity alone; a change
    to the program (a new version) prepares and compiles a new copy."""
    import pullback as paddle

    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", [None, 3], "float32")
            y = paddle.mean(paddle.static.nn.fc(x, size=2))
        exe = paddle.static.Executor(paddle.CPUPlace(), backend="compiled")
        scope = paddle.static.Scope()
        with paddle.static.scope_guard(scope):
            exe.run(startup)
            feed = {"x": np.ones((2, 3), np.float32)}
            (a,) = exe.run(main, feed=feed, fetch_list=[y])
            (entry,) = exe._cache[main].values()
            assert entry.module in exe.backend._sealed
            with paddle.static.program_guard(main, startup):
                z = paddle.scale(y, scale=3.0)
            (b, c) = exe.run(main, feed=feed, fetch_list=[y, z])
        np.testing.assert_allclose(b, a, rtol=1e-6)
        np.testing.assert_allclose(c, 3 * a, rtol=1e-6)
        assert exe.backend.compiles == 2
    finally:
        paddle.disable_static()


def test_bad_feeds_are_rejected_before_native_code_runs() -> None:
    built = mlp_train((4, 3), lr=0.1)
    backend = CompiledBackend()
    ok = {"x": np.ones((2, 4), np.float32), "label": np.zeros((2, 1), np.int64)}
    backend.run(built.module, ok, built.scope, built.fetch)
    snapshot = {k: v.copy() for k, v in built.scope.items()}
    bad = [
        ({"x": np.ones((2, 5), np.float32), "label": ok["label"]}, "feed 'x' has shape"),
        ({"x": np.ones((2, 4, 1), np.float32), "label": ok["label"]}, "rank"),
        ({"x": np.ones((3, 4), np.float32), "label": ok["label"]}, "batch|label|shape"),
        ({"x": ok["x"]}, "feed 'label' is missing"),
        ({"x": ok["x"].astype(np.complex64), "label": ok["label"]}, "dtype"),
    ]
    for feeds, msg in bad:
        with pytest.raises(ValueError, match=msg):
            backend.run(built.module, feeds, built.scope, built.fetch)
    for k, v in snapshot.items():  # nothing ran: parameters untouched
        np.testing.assert_array_equal(built.scope[k], v)


def test_second_run_hits_the_cache() -> None:
    built = mlp_train((4, 3), lr=0.1)
    backend = CompiledBackend()
    feeds = {"x": np.ones((2, 4), np.float32), "label": np.zeros((2, 1), np.int64)}
    backend.run(built.module, feeds, built.scope, built.fetch)
    compiled = backend.program_for(built.module, built.fetch, feeds)
    backend.run(built.module, {"x": np.ones((7, 4), np.float32), "label": np.zeros((7, 1), np.int64)},
                built.scope, built.fetch)
    assert backend.compiles == 1
    assert backend.program_for(built.module, built.fetch, feeds) is compiled
    # An equal program built separately shares the compiled code.
    other = mlp_train((4, 3), lr=0.1)
    backend.run(other.module, feeds, other.scope, other.fetch)
    assert backend.compiles == 1
    shared = backend.program_for(other.module, other.fetch, feeds)
    assert shared.fn is compiled.fn and shared is not compiled
    # Each program keeps a view of its own values (the shared code does not rebind
    # the first program's view to the second's).
    for prog, built_ in ((compiled, built), (shared, other)):
        own = {id(op) for op in built_.module.walk()}
        assert {id(op) for op in prog.prog.ops} <= own
        assert all(id(v.owner) in own for v in prog.outputs)
    # Another feed dtype (float64 x) is another signature: compiled again.
    backend.run(built.module, {"x": np.ones((2, 4)), "label": np.zeros((2, 1), np.int64)}, built.scope, built.fetch)
    assert backend.compiles == 2


def test_unlowerable_op_is_named_and_falls_back_loudly() -> None:
    # A host-only initializer inside a real computation cannot be compiled.
    b = ProgramBuilder()
    x = b.data("x", [2, 2])
    r = b.add(pd.UniformRandomOp, shape=[2, 2], min=0.0, max=1.0)
    y = b.add(pd.ElementwiseAddOp, x, r)
    feeds = {"x": np.ones((2, 2), np.float32)}
    with pytest.raises(NotCompilable, match="pd.uniform_random"):
        CompiledBackend().run(b.module, feeds, {}, [y])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        (out,) = CompiledBackend(fallback=True).run(b.module, feeds, {}, [y])
    assert out.shape == (2, 2) and np.all(out >= 1.0) and np.all(out < 2.0)
    assert any("interpreter" in str(w.message) for w in caught)


def test_startup_programs_run_on_the_host_quietly() -> None:
    b = ProgramBuilder()
    r = b.add(pd.UniformRandomOp, shape=[2, 2], min=0.0, max=1.0)
    c = b.add(pd.FillConstantOp, shape=[3], value=2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out, const = CompiledBackend().run(b.module, {}, {}, [r, c])
    assert out.shape == (2, 2) and np.all((0.0 <= out) & (out < 1.0))
    np.testing.assert_array_equal(const, [2.0, 2.0, 2.0])


def test_two_thousand_steps_keep_memory_flat() -> None:
    built = mlp_train((16, 32, 4), lr=0.01)
    backend = CompiledBackend()
    rng = np.random.default_rng(3)
    feeds = {"x": rng.standard_normal((64, 16)).astype(np.float32), "label": rng.integers(0, 4, (64, 1))}
    for _ in range(200):
        backend.run(built.module, feeds, built.scope, built.fetch)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for _ in range(2000):
        backend.run(built.module, feeds, built.scope, built.fetch)
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kb < 4096, f"resident memory grew by {grown_kb} KiB over 2000 steps"


def _small_program(rows: int) -> tuple[ProgramBuilder, SSAValue]:
    b = ProgramBuilder()
    x = b.data("x", [rows, 2])
    return b, b.add(pd.MeanOp, b.add(pd.ReluOp, x))


def test_program_cache_is_lru_bounded_and_frees_evicted_code() -> None:
    """Programs of distinct static shapes: at most `cache_size` stay compiled; the
    least recently used goes first and its native code is freed with it."""
    import gc
    import weakref

    backend = CompiledBackend(cache_size=3)
    built = [_small_program(n) for n in range(1, 11)]

    def run(k: int) -> None:
        b, y = built[k]
        (out,) = backend.run(b.module, {"x": np.full((k + 1, 2), 2.0, np.float32)}, {}, [y])
        assert out == 2.0

    run(0)
    first = weakref.ref(backend.program_for(built[0][0].module, [built[0][1]],
                                            {"x": np.zeros((1, 2), np.float32)}).native)
    for k in (1, 2, 0, 3):  # 0 is used again before 3 arrives: 1 is evicted, not 0
        run(k)
    assert backend.compiles == 4
    run(0)
    assert backend.compiles == 4  # still cached
    run(1)
    assert backend.compiles == 5  # evicted earlier: compiled again
    for k in range(4, 10):
        run(k)
        info = backend.cache_info()
        assert info["identity"] <= 3 and info["content"] <= 3, info
    gc.collect()
    assert first() is None  # program 0 was evicted: its engine is gone
    with pytest.raises(ValueError, match="cache_size"):
        CompiledBackend(cache_size=0)


def test_two_hundred_batch_sizes_keep_the_shape_plans_bounded(monkeypatch) -> None:
    from pullback.runtime.native import program

    monkeypatch.setattr(program, "SHAPE_PLANS_PER_PROGRAM", 50)
    b = ProgramBuilder()
    x = b.data("x", [-1, 3])
    y = b.add(pd.ReduceSumOp, b.add(pd.TanhOp, x), axis=[1])
    backend = CompiledBackend()
    for n in range(1, 201):
        (out,) = backend.run(b.module, {"x": np.zeros((n, 3), np.float32)}, {}, [y])
        assert out.shape == (n,)
    prog = backend.program_for(b.module, [y], {"x": np.zeros((1, 3), np.float32)})
    assert backend.compiles == 1 and len(prog.shape_plans) == 50


def test_zero_d_feeds_parameters_fetches_and_gradients_agree() -> None:
    """A feed declared with shape [] takes a numpy scalar, a 0-d array or a Python
    number on every backend; 0-d values go through ops, fetches and gradients."""
    b = ProgramBuilder()
    s = b.data("s", [])
    x = b.data("x", [-1, 3])
    w = b.param("w", [])
    y = b.add(pd.ReluOp, b.add(pd.ElementwiseAddOp, b.add(pd.ElementwiseMulOp, x, s), w))
    t = b.add(pd.ReduceSumOp, b.add(pd.ElementwiseMulOp, b.add(pd.ExpOp, s), w))
    loss = b.add(pd.ElementwiseAddOp, b.add(pd.ElementwiseMulOp, b.add(pd.MeanOp, y), s), t)
    gs, gw = b.backward(loss, [s, w])
    fetch = [loss, gs, gw, t, s]
    scope = {"w": np.array(0.5, np.float32)}
    xs = np.arange(6, dtype=np.float32).reshape(2, 3)
    backend = CompiledBackend()
    for sv in (np.float32(1.5), np.array(1.5, np.float32)):
        want = interpret(b.module, {"s": sv, "x": xs}, scope, fetch)
        got = backend.run(b.module, {"s": sv, "x": xs}, dict(scope), fetch)
        for w_, g in zip(want, got):
            assert np.shape(g) == () == np.shape(w_)
            np.testing.assert_allclose(g, w_, rtol=1e-6)
    assert scope["w"].shape == ()


def test_keep_freed_memory_follows_its_switch(monkeypatch):
    """The malloc settings are applied where glibc's `mallopt` exists, and
    `PULLBACK_MALLOC_CACHE=0` leaves malloc alone."""
    import ctypes

    from pullback.runtime.native import malloc

    monkeypatch.setenv("PULLBACK_MALLOC_CACHE", "0")
    assert malloc.keep_freed_memory() is False
    monkeypatch.delenv("PULLBACK_MALLOC_CACHE")
    monkeypatch.setattr(malloc, "_applied", None)
    has_mallopt = hasattr(ctypes.CDLL(None), "mallopt")
    assert malloc.keep_freed_memory() is has_mallopt


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_fork_right_after_the_backend_starts_the_jit_setup() -> None:
    """`CompiledBackend()` sets the JIT up on a background thread; a fork at once
    waits for that set-up (`Jit._await_prewarm`), so the child can compile instead
    of waiting forever on a lock it inherited held.  (In a fresh process: the set-up
    must not have happened yet.)"""
    script = textwrap.dedent("""
        import os, numpy as np
        from pullback.benchmarks.programs import mlp_train
        from pullback.runtime.native.backend import CompiledBackend
        from pullback.runtime.native.jit import Jit
        assert Jit._instance is None
        CompiledBackend()
        pid = os.fork()
        if pid == 0:
            built = mlp_train((4, 3), lr=0.1)
            feeds = {"x": np.ones((2, 4), np.float32), "label": np.zeros((2, 1), np.int64)}
            (loss,) = CompiledBackend().run(built.module, feeds, built.scope, built.fetch)
            os._exit(0 if np.isfinite(loss) else 3)
        _, status = os.waitpid(pid, 0)
        raise SystemExit(os.waitstatus_to_exitcode(status))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PULLBACK_CACHE": "0"})
    assert done.returncode == 0, done.stderr


def test_a_bad_setting_fails_the_compile_not_the_setup_thread() -> None:
    """`PULLBACK_BLAS` naming no library: creating the backend (whose JIT set-up runs
    on a background thread) prints nothing; the first compile raises the error that
    names the setting, in the caller's thread."""
    script = textwrap.dedent("""
        import time, numpy as np
        from pullback.benchmarks.programs import mlp_train
        from pullback.runtime.native.backend import CompiledBackend
        backend = CompiledBackend()
        time.sleep(0.5)
        built = mlp_train((4, 3), lr=0.1)
        feeds = {"x": np.ones((2, 4), np.float32), "label": np.zeros((2, 1), np.int64)}
        try:
            backend.run(built.module, feeds, built.scope, built.fetch)
        except ValueError as e:
            print("raised:", e)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PULLBACK_BLAS": "bogus", "PULLBACK_CACHE": "0"})
    assert done.returncode == 0, done.stderr
    assert "raised: PULLBACK_BLAS='bogus': expected one of" in done.stdout
    assert "Traceback" not in done.stderr, done.stderr
