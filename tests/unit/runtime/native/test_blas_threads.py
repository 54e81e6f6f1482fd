"""Issue 26, BLAS threads under contention (`runtime/native/blas_threads.py`): numpy's OpenBLAS
(and MKL, where `runtime/native/blas.py` loads it) follows pullback's thread setting, an
explicit `OPENBLAS_NUM_THREADS` wins, busy CPUs give fewer threads, and the hooks on
the eager and executor paths decide again at most once per `INTERVAL_S`.

The counts are read back from the libraries themselves (`threadpoolctl.threadpool_info`);
the load is injected (`reading=` or a patched `others_running`), so the tests do not
depend on what else the machine is running.  Each test restores the thread setting
and the libraries' counts."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator

import numpy as np
import pytest

import pullback as paddle
from pullback.runtime.native import blas, blas_threads, threadpool

threadpoolctl = pytest.importorskip("threadpoolctl")


def _openblas_threads() -> int:
    """numpy's OpenBLAS's thread count, as the library itself reports it."""
    counts = [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["internal_api"] == "openblas"]
    if not counts:
        pytest.skip("numpy is not built with OpenBLAS here")
    return int(counts[0])


def _blas_counts() -> dict[str, int]:
    return {lib.filepath: lib.get_num_threads() for lib in threadpoolctl.ThreadpoolController().lib_controllers
            if lib.user_api == "blas"}


@pytest.fixture
def restore(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No BLAS variable of the user's; afterwards the thread setting, the libraries'
    counts and the module's last decision are what they were."""
    for var in (*blas_threads.OWN_VARS, "PULLBACK_NUM_THREADS", "OMP_NUM_THREADS"):
        monkeypatch.delenv(var, raising=False)
    np.ones((2, 2)) @ np.ones((2, 2))  # numpy's BLAS is loaded
    requested, count, counts = threadpool.requested_num_threads(), threadpool.get_num_threads(), _blas_counts()
    yield
    threadpool.set_num_threads(count)  # the pool's native count, if the pool exists
    threadpool._requested = requested  # the setting itself (None: the defaults)
    for lib in threadpoolctl.ThreadpoolController().lib_controllers:
        if lib.filepath in counts:
            lib.set_num_threads(counts[lib.filepath])
            getattr(type(lib), "clear_controlling_thread", lambda: None)()
    blas_threads.reset()


def _idle() -> int:
    return 0


def _cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def test_set_num_threads_drives_numpys_openblas(restore: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blas_threads, "others_running", _idle)
    paddle.base.core.set_num_threads(1)
    assert _openblas_threads() == 1
    assert set(blas_threads.applied().values()) == {1}
    a = np.arange(64.0).reshape(8, 8)
    np.testing.assert_array_equal(a @ a, np.einsum("ij,jk->ik", a, a))  # still computes
    paddle.base.core.set_num_threads(2)  # a larger value is restored
    assert _openblas_threads() == 2
    paddle.base.core.set_num_threads(1)
    assert _openblas_threads() == 1


def test_pullback_variables_are_the_ceiling(restore: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threadpool, "_pool", None)  # a built pool keeps the count it read
    monkeypatch.setattr(threadpool, "_requested", None)
    monkeypatch.setenv("OMP_NUM_THREADS", "1,1")
    assert blas_threads.ceiling("openblas") == 1
    blas_threads.apply(reading=_idle)
    assert _openblas_threads() == 1
    monkeypatch.setenv("PULLBACK_NUM_THREADS", "2")  # before OMP_NUM_THREADS
    assert blas_threads.ceiling("openblas") == blas_threads.ceiling("mkl") == 2
    blas_threads.apply(reading=_idle)
    assert _openblas_threads() == 2


def test_explicit_openblas_variable_wins(restore: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(blas_threads, "others_running", _idle)
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    paddle.base.core.set_num_threads(2)
    assert _openblas_threads() == 1  # the user asked OpenBLAS for one
    assert blas_threads.ceiling("openblas") == 1
    assert blas_threads.ceiling("mkl") == 2  # MKL follows pullback's setting
    want = min(2, _cpus())
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "2")
    paddle.base.core.set_num_threads(1)
    assert _openblas_threads() == want  # over pullback's own explicit 1
    # ... and over the load rule: busy CPUs do not lower what the user asked for.
    blas_threads.apply(reading=lambda: 64)
    assert _openblas_threads() == want
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "64")
    assert blas_threads.own_setting("openblas") == min(64, _cpus())  # OpenBLAS's own cap
    for bad in ("", "0", "many", "-3"):
        monkeypatch.setenv("OPENBLAS_NUM_THREADS", bad)
        assert blas_threads.own_setting("openblas") is None  # ignored, as OpenBLAS does
    monkeypatch.setenv("MKL_NUM_THREADS", "1")
    assert blas_threads.own_setting("mkl") == 1 and blas_threads.ceiling("mkl") == 1


def test_load_rule() -> None:
    assert blas_threads.load_limited(4, None, cpus=4) == 4  # unknown load: the ceiling
    assert blas_threads.load_limited(4, 0, cpus=4) == 4
    assert blas_threads.load_limited(4, 1, cpus=4) == 3
    assert blas_threads.load_limited(4, 3, cpus=4) == 1
    assert blas_threads.load_limited(4, 9, cpus=4) == 1  # at least one
    assert blas_threads.load_limited(2, 1, cpus=8) == 2  # never above the ceiling
    assert blas_threads.load_limited(8, 0, cpus=2) == 8  # an explicit 8 holds on a quiet machine


def test_busy_cpus_give_fewer_threads(restore: None) -> None:
    threadpool.set_num_threads(2)
    cpus = os.cpu_count() or 1
    assert blas_threads.decide("openblas", cpus, cpus=cpus) == 1
    assert blas_threads.decide("openblas", 0, cpus=cpus) == 2
    blas_threads.apply(reading=lambda: cpus)  # every CPU taken by others
    assert _openblas_threads() == 1
    assert blas_threads.ceiling("openblas") == 2  # the ceiling does not move with the load
    blas_threads.apply(reading=_idle)  # the load is gone: back to the setting
    assert _openblas_threads() == 2
    blas_threads.apply(reading=lambda: None)  # no /proc: the setting holds
    assert _openblas_threads() == 2


def test_hook_is_rate_limited(restore: None, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []

    def reading() -> int:
        calls.append(1)
        return 0

    threadpool.set_num_threads(1)
    blas_threads.reset()
    for _ in range(100):
        blas_threads.maybe_apply(reading)
    assert len(calls) == 1  # one decision within the interval
    assert _openblas_threads() == 1
    threadpool.set_num_threads(2)  # a new setting is seen at once, interval or not
    blas_threads.maybe_apply(reading)
    blas_threads.maybe_apply(reading)
    assert len(calls) == 2
    assert _openblas_threads() == 2
    monkeypatch.setattr(blas_threads, "INTERVAL_S", 0.0)  # the interval passed
    blas_threads.apply(reading)
    blas_threads.maybe_apply(reading)
    assert len(calls) == 4


def _eager_backward() -> None:
    paddle.disable_static()
    x = paddle.to_tensor(np.ones((4, 4), np.float32), stop_gradient=False)
    paddle.matmul(x, x).sum().backward()
    assert x.grad is not None


def _executor_run() -> None:
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            v = paddle.static.data("v", [2, 2], "float32")
            out = paddle.matmul(v, v)
        exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
        (got,) = exe.run(main, feed={"v": np.eye(2, dtype=np.float32)}, fetch_list=[out])
        np.testing.assert_array_equal(got, np.eye(2))
    finally:
        paddle.disable_static()


@pytest.mark.parametrize("step", [_eager_backward, _executor_run])
def test_eager_and_executor_paths_apply_the_rule(
    restore: None, monkeypatch: pytest.MonkeyPatch, step: Callable[[], None]
) -> None:
    monkeypatch.setattr(blas_threads, "others_running", _idle)
    threadpool.set_num_threads(2)
    blas_threads.apply()
    assert _openblas_threads() == 2
    threadpool.set_num_threads(1)  # the runtime's own setter: BLAS follows at the next step
    step()
    assert _openblas_threads() == 1
    monkeypatch.setattr(blas_threads, "others_running", lambda: 64)
    threadpool.set_num_threads(2)
    step()
    assert _openblas_threads() == 1  # busy machine


def test_blas_routing_reads_the_ceiling(restore: None, monkeypatch: pytest.MonkeyPatch) -> None:
    openblas = blas.find_openblas()
    if openblas is None:
        pytest.skip("numpy's bundled OpenBLAS is not here")
    threadpool.set_num_threads(1)
    (followed,) = blas._following(openblas)
    assert followed is not None and followed.threads == 1
    threadpool.set_num_threads(2)
    monkeypatch.setattr(blas_threads, "others_running", lambda: 64)  # lowered for the moment...
    (followed,) = blas._following(openblas)
    assert _openblas_threads() == 1
    assert followed is not None and followed.threads == 2  # ... but routed as the 2 it may run


def test_without_threadpoolctl_nothing_changes(restore: None, monkeypatch: pytest.MonkeyPatch) -> None:
    before = _openblas_threads()
    monkeypatch.setitem(sys.modules, "threadpoolctl", None)  # `import threadpoolctl` fails
    monkeypatch.setattr(blas_threads, "_controller", None)
    assert blas_threads.apply(reading=_idle, rescan=True) == {}
    threadpool.set_num_threads(1 if before > 1 else 2)
    blas_threads.maybe_apply(_idle)
    paddle.base.core.set_num_threads(1 if before > 1 else 2)  # no error either
    assert _openblas_threads() == before
    assert blas_threads.applied() == {}


def test_a_bad_setting_never_breaks_a_run(restore: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threadpool, "_pool", None)
    monkeypatch.setattr(threadpool, "_requested", None)
    monkeypatch.setenv("PULLBACK_NUM_THREADS", "-2")
    assert blas_threads.apply(reading=_idle) == {}
    blas_threads.reset()
    blas_threads.maybe_apply(_idle)
