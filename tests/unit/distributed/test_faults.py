"""Faults of a data-parallel job end it with an error naming the problem, never
with a wrong answer or a hang (issue 32, "Distributed faults").

Single-process tests: the timeout setting, native collectives in a lone process,
what a pipe holds (`flush_output`), and the launcher's `Job.stop` on a plain
process tree (a child that ignores SIGTERM, a grandchild in a session of its own).
Multi-rank tests (2 ranks through the launcher; skipped, saying why, without MPI):
collectives whose ranks disagree on shapes, dtypes, roots or the collective itself;
uneven step counts in eager and native code, ended by the timeout naming the rank
that did not arrive; SIGTERM to the launcher and to a `spawn`ing program leaving no
process of the job; a rank's `sys.exit(3)` keeping its output and status.
"""

from __future__ import annotations

import datetime
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from pullback.distributed.launch import Job, _start_time, descendants
from pullback.runtime.communicator import DEFAULT_TIMEOUT_S, TIMEOUT_ENV, DistributedError, resolve_timeout

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from test_distributed import NRANKS, PROGRAMS, _launch, needs_mpi  # noqa: E402


def _running(pids: set[tuple[int, int]]) -> list[int]:
    """The processes among `pids` that still run (a zombie has ended)."""
    return [pid for pid, start in pids if _start_time(pid) == start]


# --------------------------------------------------------------- single process


def test_timeout_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    """30 minutes by default; the variable, a number or a timedelta otherwise; 0 is
    no limit; a variable that is not a number is an error naming it."""
    monkeypatch.delenv(TIMEOUT_ENV, raising=False)
    assert resolve_timeout(None) == DEFAULT_TIMEOUT_S == 1800.0
    assert resolve_timeout(2) == 2.0
    assert resolve_timeout(datetime.timedelta(minutes=1)) == 60.0
    assert resolve_timeout(0) is None
    monkeypatch.setenv(TIMEOUT_ENV, "7.5")
    assert resolve_timeout(None) == 7.5
    assert resolve_timeout(3) == 3.0  # an explicit timeout wins
    monkeypatch.setenv(TIMEOUT_ENV, "0")
    assert resolve_timeout(None) is None
    monkeypatch.setenv(TIMEOUT_ENV, "soon")
    with pytest.raises(DistributedError, match=f"{TIMEOUT_ENV}='soon' is not a number of seconds"):
        resolve_timeout(None)
    with pytest.raises(TypeError, match="timeout must be a number of seconds"):
        resolve_timeout("5")  # type: ignore[arg-type]


def test_job_stop_ends_every_process() -> None:
    """`Job.stop` reaches a grandchild that left the process group (as MPICH's
    ranks do) and kills, after the grace period, a process ignoring SIGTERM."""
    script = "trap '' TERM; setsid sleep 60 & sleep 60 & wait"
    job = Job(["sh", "-c", script])
    deadline = time.monotonic() + 10
    while len(descendants(job.proc.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    tree = descendants(job.proc.pid) | {(job.proc.pid, _start_time(job.proc.pid) or 0)}
    assert len(tree) == 3, tree
    t0 = time.monotonic()
    job.stop(grace=0.5)
    assert _running(tree) == []
    assert 0.5 <= time.monotonic() - t0 < 5  # SIGTERM was ignored: SIGKILL after the grace


# ------------------------------------------------------------------- two ranks


@needs_mpi
def test_mismatched_collectives_fail_on_every_rank(tmp_path: Path) -> None:
    """Every collective whose ranks pass different shapes, dtypes or roots (or call
    different collectives) raises on every rank, naming it and each rank's
    tensors, before any payload moves (the job then goes on in step); so does a
    compiled program's native all-reduce on its first run."""
    proc = _launch(str(PROGRAMS), str(tmp_path), "mismatch", timeout=180)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = [json.loads((tmp_path / f"mismatch{r}.json").read_text()) for r in range(NRANKS)]
    want = {
        "all_reduce": ["pd.allreduce(sum):", "rank 0: pd.allreduce(sum) of float32 [3]",
                       "rank 1: pd.allreduce(sum) of float32 [5]"],
        "broadcast": ["rank 0: pd.broadcast with root 0 of float32 [2]",
                      "rank 1: pd.broadcast with root 0 of float64 [2]"],
        "reduce": ["rank 0: pd.reduce(sum) with root 0 of float64 [2, 2]",
                   "rank 1: pd.reduce(sum) with root 1 of float64 [2, 2]"],
        "all_gather": ["rank 0: pd.allgather of float64 [1, 2]", "rank 1: pd.allgather of float64 [1, 3]"],
        "reduce_scatter": ["rank 0: pd.reduce_scatter of float64 [2]",
                           "rank 1: pd.reduce_scatter of float64 [4]"],
        "skipped": ["rank 0: pd.allreduce(sum) of float64 [2]", "rank 1: pd.barrier of no tensor"],
        "native": ["rank 0: pd.allreduce(sum) of float32 [3]", "rank 1: pd.allreduce(sum) of float32 [5]"],
    }
    for rank, res in enumerate(results):  # each rank names its own collective first
        for case, parts in want.items():
            assert case in res, f"rank {rank}, {case}: no error"
            for part in parts:
                assert part in res[case], (rank, case, res[case])
        assert res["after"] == [[2.0, 2.0], [4.0, 4.0, 4.0]]
        assert not [w for w in res["warnings"] if "pd.allreduce" in w], res["warnings"]  # it ran natively


@needs_mpi
def test_uneven_steps_time_out_naming_the_absent_rank(tmp_path: Path) -> None:
    """Rank 1 ends a step early: rank 0's last all-reduce gives up after the 2 s
    timeout naming rank 1, and the job is aborted."""
    proc = _launch(str(PROGRAMS), str(tmp_path), "uneven", timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert "pd.allreduce(sum): rank 0 waited more than 2 s (for rank 1, which did not arrive" in out
    assert out.count("CollectiveTimeout") == 1  # printed once
    assert "rank 0 finished its steps" not in out


@needs_mpi
def test_native_collective_honours_the_timeout(tmp_path: Path) -> None:
    """A compiled step's all-reduce (native code, its metadata trusted after the
    first run) waits for a rank that stopped coming: the timeout aborts the job
    long before that rank's 60 s sleep ends, and rank 0 never passes its step."""
    t0 = time.monotonic()
    proc = _launch(str(PROGRAMS), str(tmp_path), "native_stall", timeout=120)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0, out
    assert time.monotonic() - t0 < 55
    assert "pd.allreduce(sum): rank 0 waited more than 2 s" in out
    assert "checked on its first run only" in out
    assert "rank 0 passed its steps" not in out


@needs_mpi
def test_sigterm_to_the_launcher_ends_the_job(tmp_path: Path) -> None:
    """SIGTERM to the launcher while both ranks sleep: within seconds neither
    mpiexec, its proxy nor a rank is left."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "PYTEST_XDIST"))}
    launcher = subprocess.Popen(
        [sys.executable, "-m", "pullback.distributed.launch", "--nproc_per_node", str(NRANKS),
         str(PROGRAMS), str(tmp_path), "sleep"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        _stop_when_ranks_sleep(launcher, tmp_path, signal.SIGTERM)
    finally:
        if launcher.poll() is None:
            launcher.kill()


@needs_mpi
def test_sigterm_to_a_spawning_program_ends_the_job(tmp_path: Path) -> None:
    """The same for `paddle.distributed.spawn`: SIGTERM to the program joining the
    ranks stops them all, then ends the program as SIGTERM does."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "PYTEST_XDIST"))}
    parent = subprocess.Popen(
        [sys.executable, str(PROGRAMS), str(tmp_path), "spawn_parent"], env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        code = _stop_when_ranks_sleep(parent, tmp_path, signal.SIGTERM)
        assert code == -signal.SIGTERM
    finally:
        if parent.poll() is None:
            parent.kill()


def _stop_when_ranks_sleep(top: subprocess.Popen[bytes], out: Path, signum: int) -> int:
    """Once both ranks wrote their pids, send `signum` to `top` and check that it
    ends within 10 s and leaves no process of the job; returns its status."""
    deadline = time.monotonic() + 90
    while not all((out / f"pid{r}").exists() for r in range(NRANKS)):
        assert top.poll() is None, top.communicate()[0]
        assert time.monotonic() < deadline, "the ranks did not start"
        time.sleep(0.1)
    tree = descendants(top.pid)
    rank_pids = {int((out / f"pid{r}").read_text()) for r in range(NRANKS)}
    assert rank_pids <= {pid for pid, _ in tree}
    t0 = time.monotonic()
    top.send_signal(signum)
    code = top.wait(20)
    assert time.monotonic() - t0 < 10
    assert _running(tree) == [], f"left running: {_running(tree)}"
    return code


@needs_mpi
def test_rank_exit_keeps_its_status_and_output(tmp_path: Path) -> None:
    """A rank's `sys.exit(3)` after printing (stdout and stderr, unflushed) while
    the other rank waits: the job's status is 3 and both lines reach the
    launcher's output, in each of 3 jobs run at once (their load is what used
    to lose the message)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PMI_", "PYTEST_XDIST"))}
    cmd = [sys.executable, "-m", "pullback.distributed.launch", "--nproc_per_node", str(NRANKS),
           str(PROGRAMS), str(tmp_path), "exit3"]
    jobs = [subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(3)]
    for job in jobs:
        out, err = job.communicate(timeout=180)
        assert job.returncode == 3, out + err
        assert "rank 1 stdout line before exit" in out, out + err
        assert "rank 1 stderr line before exit" in err, out + err


def test_native_collectives_in_a_lone_process(tmp_path: Path) -> None:
    """A compiled program with every collective runs natively in a process of one
    rank (the callback is the identity there, with or without MPI)."""
    import warnings

    import numpy as np
    import pullback as paddle
    import pullback.distributed as dist
    from pullback.frontend import unique_name
    from pullback.runtime.native.program import checked_collectives

    before = len(checked_collectives)
    paddle.enable_static()
    try:
        with unique_name.guard():
            main, startup = paddle.static.Program(), paddle.static.Program()
            with paddle.static.program_guard(main, startup):
                v = paddle.static.data("v", [2, 3], "float32")
                dist.all_reduce(v)
                dist.broadcast(v, src=0)
                dist.reduce(v, dst=0)
                dist.barrier()
                parts: list = []
                dist.all_gather(parts, v)
                w = paddle.concat(parts, axis=0) * 2.0
            exe = paddle.static.Executor(paddle.CPUPlace(), backend="compiled")
            x = np.arange(6, dtype=np.float32).reshape(2, 3)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                (out,) = exe.run(main, feed={"v": x}, fetch_list=[w])
    finally:
        paddle.disable_static()
    np.testing.assert_array_equal(out, 2 * x)
    assert not [c for c in caught if "pd." in str(c.message)], [str(c.message) for c in caught]
    assert len(checked_collectives) == before + 1  # native code called the collectives


def test_unread_counts_what_a_pipe_holds() -> None:
    """`flush_output` waits on what mpiexec has not read from a rank's pipes: the
    bytes in a pipe, 0 once read, 0 for what is not a pipe."""
    from pullback.runtime.communicator import _unread

    r, w = os.pipe()
    try:
        os.write(w, b"message\n")
        assert _unread(w) == 8
        os.read(r, 100)
        assert _unread(w) == 0
    finally:
        os.close(r)
        os.close(w)
    with open(os.devnull, "w") as f:
        assert _unread(f.fileno()) == 0
