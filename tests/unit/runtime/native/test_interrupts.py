"""Issue 32, Ctrl-C during compiled runs (`runtime/native/interrupts.py`, the pool's
"Interrupts" in `runtime/native/threadpool.py`, the commit point of
`lowering/lowerer/base.py`).

The program: a `while_loop` whose trip count is fed (so one compiled program runs
for a millisecond or for a minute), with an SGD update of a small parameter.  A
run interrupted during the loop (before the update's commit point) is abandoned:
`KeyboardInterrupt` within a fraction of its natural length, the parameter as it
was, the next run fine (no pool thread left waiting).  An interrupt after the
commit point lets the run finish: the step is applied whole, then
`KeyboardInterrupt` says so."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from typing import Any

import numpy as np
import pytest

import pullback as paddle
from pullback.runtime.native import interrupts

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="interruptible runs are Linux-only")

_PROGRAM = """
import sys, threading, time
import numpy as np
import pullback as paddle


def when_running(then):
    # Call `then()` on another thread once the main thread is inside the native
    # call (its innermost Python frame is `native/interrupts.call`): a signal sent
    # earlier would land in Python code (on a loaded machine that can take a while).
    main = threading.main_thread().ident

    def in_call():
        frame = sys._current_frames().get(main)
        return frame is not None and frame.f_code.co_name == "call" and frame.f_code.co_filename.endswith("interrupts.py")

    def watch():
        while not in_call():
            time.sleep(0.005)
        time.sleep(0.2)
        if in_call():  # (never a stray SIGINT after the run: it would stop pytest)
            then()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    return watcher

def build(update_first=False):
    N = 512
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [N, N], "float32")
        n = paddle.static.data("n", [1], "int64")
        z = paddle.static.data("z", [8], "float32")
        w = paddle.create_parameter([8], "float32", default_initializer=paddle.nn.initializer.Constant(0.5))

        def spin(y):
            i0 = paddle.full([1], 0, "int64")
            _, y = paddle.static.nn.while_loop(lambda i, y: i < n, lambda i, y: [i + 1, paddle.tanh(y) * 1.5], [i0, y])
            return y

        if update_first:  # the loop after the update (its commit point): not interruptible
            loss = paddle.mean(w * z)
            paddle.optimizer.SGD(0.1).minimize(loss)
            out = paddle.mean(spin(x))
        else:
            out = paddle.mean(spin(x))
            loss = paddle.mean(w * z) + out * 0.0
            paddle.optimizer.SGD(0.1).minimize(loss)
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="compiled")
    exe.run(startup)
    scope = paddle.static.global_scope()
    xs = np.random.default_rng(0).random((N, N), dtype=np.float32)
    zs = np.ones(8, "float32")

    def run(k):
        return exe.run(main, feed={"x": xs, "z": zs, "n": np.array([k], np.int64)}, fetch_list=[out])

    def weights():
        return np.array(scope.find_var(w.name).get_tensor())

    return run, weights
"""

_CHILD = _PROGRAM + textwrap.dedent("""
    import sys, time
    paddle.enable_static()
    run, weights = build()
    run(1)  # compiled
    t = time.perf_counter(); run(40); per = (time.perf_counter() - t) / 40
    before = weights()
    trips = int(120 / per)  # about two minutes if nothing stops it
    print("ready", per * trips, flush=True)
    t = time.perf_counter()
    try:
        when_running(lambda: print("running", flush=True))
        run(trips)
        print("finished", time.perf_counter() - t, flush=True)
    except KeyboardInterrupt as e:
        print("interrupted", time.perf_counter() - t, flush=True)
        print("message", str(e), flush=True)
    print("unchanged", bool(np.array_equal(weights(), before)), flush=True)
    run(3)  # the pool and the program still work
    print("stepped", bool(np.allclose(weights(), before - 0.1 / 8)), flush=True)
""")


def _lines(stream: Any, n: int) -> list[str]:
    return [stream.readline().strip() for _ in range(n)]


@pytest.mark.parametrize("threads", [2, 1])
def test_a_long_compiled_run_stops_promptly_on_sigint(threads: int) -> None:
    """Two threads (every loop on the pool: chunks skipped) and one (inline loops
    run in slices): SIGINT into a run of about two minutes; the child
    raises KeyboardInterrupt at once, its scope unchanged, and runs again."""
    env = dict(os.environ, PULLBACK_NUM_THREADS=str(threads), PULLBACK_PARALLEL_MIN_WORK="1000", PULLBACK_CACHE="0",
               PULLBACK_COMPILE_NOTICE="0")
    # stdout is read through its buffer only (`communicate` would lose what a
    # `readline` read ahead); stderr goes to a file; a watchdog bounds a hung child.
    with tempfile.TemporaryFile("w+") as errors:
        child = subprocess.Popen([sys.executable, "-c", _CHILD], stdout=subprocess.PIPE, stderr=errors,
                                 text=True, env=env)
        watchdog = threading.Timer(300, child.kill)
        watchdog.start()
        try:
            stdout = child.stdout
            assert stdout is not None
            ready = stdout.readline().split()
            natural = float(ready[1]) if ready and ready[0] == "ready" else 0.0
            running = stdout.readline().strip() if natural else ""
            sent = time.perf_counter()
            if running == "running":
                child.send_signal(signal.SIGINT)
            first = stdout.readline().split()
            latency = time.perf_counter() - sent
            out = stdout.read()
            child.wait()
        finally:
            watchdog.cancel()
            if child.poll() is None:
                child.kill()
        errors.seek(0)
        err = errors.read()
    assert natural and running == "running", (ready, running, err)
    assert first and first[0] == "interrupted", (first, out, err)
    # Prompt: well under a second normally; bounded generously for a loaded machine,
    # and small against the run's natural length either way.
    assert latency < min(10.0, natural / 6), (latency, natural)
    rest = dict(line.split(" ", 1) for line in out.splitlines())
    assert rest.get("message") == interrupts.ABANDONED, out
    assert rest["unchanged"] == "True" and rest["stepped"] == "True", out
    assert child.returncode == 0, err


def test_an_interrupt_after_the_commit_point_lets_the_step_finish() -> None:
    """The update comes before the loop: a SIGINT during the loop is after the
    commit point, so the run finishes, the parameter is stepped, and the
    KeyboardInterrupt that follows says the step finished."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    namespace: dict[str, Any] = {}
    exec(_PROGRAM, namespace)  # noqa: S102 - the program shared with the child above
    paddle.enable_static()
    try:
        run, weights = namespace["build"](update_first=True)
        run(1)
        before = weights()
        t = time.perf_counter()
        run(20)
        trips = max(200, int(3 / ((time.perf_counter() - t) / 20)))  # about 3 s
        with pytest.raises(KeyboardInterrupt) as caught:
            watcher = namespace["when_running"](lambda: os.kill(os.getpid(), signal.SIGINT))
            run(trips)
        watcher.join()
        assert str(caught.value) == interrupts.FINISHED
        np.testing.assert_allclose(weights(), before - 2 * 0.1 / 8)  # the warm-up run's step and this one
        run(1)
        np.testing.assert_allclose(weights(), before - 3 * 0.1 / 8)
    finally:
        paddle.disable_static()


class _Swallower:
    """Its finalizer is interrupted, and Python drops the KeyboardInterrupt (as it
    did in llvmlite's `ObjectRef.__del__` late in a compile)."""

    def __del__(self) -> None:
        signal.raise_signal(signal.SIGINT)
        self.after = True  # bytecode: the handler runs here, inside the finalizer


def test_a_compile_interrupted_inside_a_finalizer_raises_and_registers_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The interrupt lands in a finalizer while the program is linked: the compile
    raises KeyboardInterrupt (it used to finish as if nothing happened), the backend
    keeps no program, and the next call compiles and runs it."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals reach the main thread only")
    from pullback.benchmarks.programs import elementwise_chain
    from pullback.runtime.native.backend import CompiledBackend
    from pullback.runtime.native.jit import Jit

    built = elementwise_chain(64, 3)
    feeds = {"x": np.full(64, 0.5, np.float32), "y": np.ones(64, np.float32)}
    original = Jit.load

    def load(self: Jit, *args: Any, **kwargs: Any) -> Any:
        _Swallower()
        return original(self, *args, **kwargs)

    monkeypatch.setattr(sys, "unraisablehook", lambda u: None)
    monkeypatch.setattr(Jit, "load", load)
    backend = CompiledBackend()
    with pytest.raises(KeyboardInterrupt, match="during a compile"):
        backend.run(built.module, feeds, {}, built.fetch)
    assert backend.cache_info()["content"] == 0 and backend.compiles == 0
    monkeypatch.setattr(Jit, "load", original)
    got = backend.run(built.module, feeds, {}, built.fetch)
    assert backend.compiles == 1 and np.isfinite(got[0]).all()
