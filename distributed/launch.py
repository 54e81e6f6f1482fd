"""`python -m pullback.distributed.launch`: start the ranks of a data-parallel job
with Paddle's launcher interface, through MPI's `mpiexec`.

    python -m pullback.distributed.launch --nproc_per_node 4 train.py --lr 0.1
    python -m pullback.distributed.launch --nproc_per_node 4 --ips host1,host2 train.py

With `--ips`, `--nproc_per_node` ranks start on each host (MPICH's `-hosts`;
`--hostfile FILE` passes an MPICH host file instead).  Each rank runs the script
under `python -m mpi4py`, so an exception that ends one rank aborts the whole job:
the other ranks stop with the failing rank's traceback on stderr instead of waiting
forever.  The exit status is the job's.

mpiexec runs in a session of its own, and MPICH's ranks each start one more: a
signal to the launcher's process group would miss them.  So the launcher forwards
SIGTERM, SIGINT and SIGHUP itself to every process of the job (`Job.stop`: mpiexec,
its proxies, the ranks and whatever they started, found by parent links in
`/proc`), and kills what is left after `KILL_GRACE_S` seconds: no rank outlives
the launcher.  Its exit status is then 128 + the signal's number.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from types import FrameType

from pullback.runtime.communicator import INSTALL_HINT, TIMEOUT_ENV


class LaunchError(RuntimeError):
    """The job cannot be started (MPI missing, bad arguments)."""


def find_mpiexec() -> str:
    """The `mpiexec` next to this Python (the mpich wheel's), else on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    if os.access(here, os.X_OK):
        return here
    found = shutil.which("mpiexec")
    if found is None:
        raise LaunchError(f"mpiexec not found. {INSTALL_HINT}")
    return found


def check_mpi4py() -> None:
    """Raise LaunchError with the install hint when mpi4py is missing."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        raise LaunchError(INSTALL_HINT) from None


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Paddle's launcher options, then the script and its own arguments."""
    p = argparse.ArgumentParser(
        prog="python -m pullback.distributed.launch",
        description="Start a data-parallel job: N ranks per host through mpiexec.",
    )
    p.add_argument("--nproc_per_node", "--nnodes_per_proc", type=int, default=None,
                   help="ranks per host (default: 1)")
    p.add_argument("--ips", default=None, help="comma-separated hosts (default: this one)")
    p.add_argument("--hostfile", default=None, help="an MPICH host file (instead of --ips)")
    p.add_argument("--timeout", type=float, default=None,
                   help=f"seconds a collective may wait before the job is aborted ({TIMEOUT_ENV})")
    p.add_argument("--mpiexec", default=None, help="the mpiexec to use (default: the mpich wheel's)")
    p.add_argument("--dry_run", action="store_true", help="print the command instead of running it")
    p.add_argument("training_script", help="the script every rank runs")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p.parse_args(list(argv))


def build_command(args: argparse.Namespace, mpiexec: str) -> list[str]:
    """The mpiexec command line starting every rank."""
    per_node = 1 if args.nproc_per_node is None else args.nproc_per_node
    if per_node < 1:
        raise LaunchError(f"--nproc_per_node must be >= 1, got {per_node}")
    hosts = [h for h in (args.ips or "").split(",") if h]
    if args.hostfile and hosts:
        raise LaunchError("give --ips or --hostfile, not both")
    cmd = [mpiexec]
    if args.hostfile:
        cmd += ["-f", args.hostfile, "-ppn", str(per_node)]
        total = None
    elif len(hosts) > 1:
        cmd += ["-hosts", ",".join(hosts), "-ppn", str(per_node)]
        total = per_node * len(hosts)
    else:
        total = per_node
    if total is not None:
        cmd += ["-n", str(total)]
    if args.timeout:
        cmd += ["-genv", TIMEOUT_ENV, str(args.timeout)]
    cmd += [sys.executable, "-m", "mpi4py", args.training_script, *args.training_script_args]
    return cmd


KILL_GRACE_S = 5.0
"""Seconds the processes of a stopped job get to exit after the forwarded signal,
before SIGKILL."""

SCAN_EVERY_S = 1.0
"""How often a waiting launcher records the job's processes (`Job.wait`)."""

FORWARDED = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
"""Signals the launcher (and `spawn`'s join) pass on to every process of the job."""


def _start_time(pid: int) -> int | None:
    """Process `pid`'s start time (clock ticks after boot; None once it is gone or
    a zombie): with the pid, it names one process even if the pid is reused."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] in ("Z", "X") else int(fields[19])


def descendants(root: int) -> set[tuple[int, int]]:
    """Every living process below `root`, as (pid, start time): from the parent links
    in `/proc` (MPICH's ranks call setsid, so no process group holds them all).
    Empty where there is no `/proc`."""
    children: dict[int, list[int]] = {}
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            try:
                with open(f"/proc/{name}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(name))
    found: set[tuple[int, int]] = set()
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        start = _start_time(pid)
        if start is not None:
            found.add((pid, start))
        todo += children.get(pid, [])
    return found


class Job:
    """An mpiexec job, started in its own session so that it can be stopped as a
    whole (`stop`) and never left behind (`wait`)."""

    def __init__(self, cmd: Sequence[str]) -> None:
        self.proc = subprocess.Popen(list(cmd), start_new_session=True)
        self.known: set[tuple[int, int]] = set()
        """Processes of the job seen so far (pid, start time)."""
        self.signalled: int | None = None
        """The signal that stopped the job, if one did."""

    def _alive(self) -> set[tuple[int, int]]:
        """The job's processes that still run: those seen before, and (while
        mpiexec runs) every process below it now."""
        if self.proc.poll() is None:
            start = _start_time(self.proc.pid)
            if start is not None:
                self.known.add((self.proc.pid, start))
            self.known |= descendants(self.proc.pid)
        self.known = {(pid, t) for pid, t in self.known if _start_time(pid) == t}
        return self.known

    def _signal_all(self, signum: int) -> None:
        for pid, _ in self._alive():
            with contextlib.suppress(OSError):
                os.kill(pid, signum)

    def stop(self, signum: int = signal.SIGTERM, grace: float = KILL_GRACE_S) -> None:
        """Send `signum` to every process of the job; SIGKILL those left after
        `grace` seconds; reap mpiexec."""
        self.signalled = signum
        self._signal_all(signum)
        deadline = time.monotonic() + grace
        while self._alive() and time.monotonic() < deadline:
            self.proc.poll()
            time.sleep(0.05)
        self._signal_all(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(grace)
        deadline = time.monotonic() + grace  # SIGKILL takes effect asynchronously
        while self._alive() and time.monotonic() < deadline:
            time.sleep(0.01)

    def wait(self, timeout: float | None = None) -> int | None:
        """mpiexec's exit status (None if `timeout` passed first).  In the main
        thread, the `FORWARDED` signals stop the whole job meanwhile; the status is
        then 128 + the signal."""
        deadline = None if timeout is None else time.monotonic() + timeout
        scanned = 0.0
        with self._forwarding():
            while self.signalled is None:
                now = time.monotonic()
                if deadline is not None and now >= deadline:
                    return None
                if now - scanned > SCAN_EVERY_S:  # know the ranks should mpiexec die first
                    self._alive()
                    scanned = now
                try:
                    # Short waits: a signal handler runs between them.
                    code = self.proc.wait(0.1 if deadline is None else max(0.0, min(0.1, deadline - now)))
                except subprocess.TimeoutExpired:
                    continue
                self._signal_all(signal.SIGKILL)  # ranks a crashed mpiexec left behind
                return code
            self.stop(self.signalled)
            return 128 + self.signalled

    @contextlib.contextmanager
    def _forwarding(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield  # only the main thread may install signal handlers
            return

        def handler(signum: int, frame: FrameType | None) -> None:
            self.signalled = signum

        previous = {s: signal.signal(s, handler) for s in FORWARDED}
        try:
            yield
        finally:
            for s, h in previous.items():
                signal.signal(s, h)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the launcher; returns the job's exit status (2 when it cannot start,
    128 + N when signal N stopped it)."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        check_mpi4py()
        cmd = build_command(args, args.mpiexec or find_mpiexec())
    except LaunchError as e:
        print(f"pullback.distributed.launch: error: {e}", file=sys.stderr)
        return 2
    if args.dry_run:
        print(" ".join(cmd))
        return 0
    code = Job(cmd).wait()
    assert code is not None
    return code


from pullback.namespaces import adopt_real  # noqa: E402 - names of Paddle's module it lacks

adopt_real(__name__)

if __name__ == "__main__":
    sys.exit(main())
