"""`paddle.distributed.spawn(func, args, nprocs)`: run `func(*args)` on `nprocs`
new ranks, started through `mpiexec` (as the launcher does).

`func` must be importable by the new processes: defined at module level, in an
importable module or in the main script (which the ranks re-run under the name
`__mp_main__`, so its `if __name__ == "__main__":` block does not spawn again, as
with multiprocessing's spawn method).  `args` must be picklable.

The job runs as the launcher's does (`launch.Job`): while `join` waits, SIGTERM,
SIGINT and SIGHUP to this process stop every process of the job first, and then
take their usual effect here (SIGINT raises KeyboardInterrupt).
"""

from __future__ import annotations

import os
import pickle
import signal
import sys
import tempfile
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pullback.distributed.launch import Job


class SpawnContext:
    """The started job (Paddle's `MultiprocessContext`)."""

    def __init__(self, job: Job, payload: str) -> None:
        self.job = job
        self.proc = job.proc
        self._payload = payload

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the job; True once it ended.  Raises RuntimeError when a rank
        failed (its traceback is on stderr).  A signal that stops the job takes
        its effect here once no process of the job is left."""
        code = self.job.wait(timeout)
        if code is None:
            return False
        if os.path.exists(self._payload):
            os.unlink(self._payload)
        signalled = self.job.signalled
        if signalled is not None:
            if signalled == signal.SIGINT:
                raise KeyboardInterrupt
            signal.signal(signalled, signal.SIG_DFL)
            os.kill(os.getpid(), signalled)
        if code != 0:
            raise RuntimeError(f"spawn: the job failed with exit status {code} (see the ranks' stderr)")
        return True

    def terminate(self) -> None:
        """Stop every process of the job (SIGTERM, then SIGKILL)."""
        self.job.stop()
        if os.path.exists(self._payload):
            os.unlink(self._payload)


def spawn(func: Callable[..., Any], args: Sequence[Any] = (), nprocs: int = -1, join: bool = True,
          daemon: bool = False, **options: Any) -> SpawnContext:
    """Start `nprocs` ranks (-1: the number of CPUs) each running `func(*args)`."""
    from pullback.distributed.launch import Job, LaunchError, check_mpi4py, find_mpiexec

    if not callable(func):
        raise TypeError(f"spawn: func must be callable, got {type(func).__name__}")
    if nprocs == -1:
        nprocs = os.cpu_count() or 1
    if not isinstance(nprocs, int) or nprocs < 1:
        raise ValueError(f"spawn: nprocs must be a positive integer or -1, got {nprocs!r}")
    try:
        check_mpi4py()
        mpiexec = find_mpiexec()
    except LaunchError as e:
        raise RuntimeError(f"spawn: {e}") from None
    main = sys.modules.get("__main__")
    payload = {
        "module": func.__module__,
        "qualname": func.__qualname__,
        "main_path": getattr(main, "__file__", None),
        "sys_path": list(sys.path),
        "args": tuple(args),
    }
    fd, path = tempfile.mkstemp(prefix="pullback-spawn-", suffix=".pkl")
    with os.fdopen(fd, "wb") as f:
        pickle.dump(payload, f)
    cmd = [mpiexec, "-n", str(nprocs), sys.executable, "-m", "mpi4py", "-m",
           "pullback.distributed.spawn_worker", path]
    ctx = SpawnContext(Job(cmd), path)
    if join:
        ctx.join()
    return ctx


def run_payload(path: str) -> None:
    """In a spawned rank: load `func` and call it with its arguments."""
    import importlib
    import runpy

    with open(path, "rb") as f:
        payload = pickle.load(f)
    sys.path[:] = payload["sys_path"]
    if payload["module"] == "__main__":
        if not payload["main_path"]:
            raise RuntimeError("spawn: func is defined in an interactive session; define it in a file")
        namespace = runpy.run_path(payload["main_path"], run_name="__mp_main__")
        obj: Any = namespace[payload["qualname"].split(".")[0]]
        rest = payload["qualname"].split(".")[1:]
    else:
        obj = importlib.import_module(payload["module"])
        rest = payload["qualname"].split(".")
    for part in rest:
        obj = getattr(obj, part)
    obj(*payload["args"])


from pullback.namespaces import adopt_real  # noqa: E402 - names of Paddle's module it lacks

adopt_real(__name__)
