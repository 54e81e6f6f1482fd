"""The process group of a data-parallel job: MPI's world communicator, via mpi4py.

Every collective (the interpreter's kernels, eager `paddle.distributed.*`, the
compiled backend's native calls) goes through the one `Communicator` this module
holds, so one place decides which MPI library is used, how long a collective may
wait (`timeout`), and what happens when a rank fails: the whole job is aborted
(`MPI_Abort`), so the other ranks stop with the failing rank's message instead of
waiting forever in their next collective.

Started without `mpiexec`, the world has one rank (with or without mpi4py
installed): every collective is then the identity, which keeps single-process
programs with collectives runnable.
"""

from __future__ import annotations

import os
import sys
import threading
import time
import traceback
from types import TracebackType
from typing import Any

import numpy as np

INSTALL_HINT = (
    "MPI is not installed: pip install 'pullback[distributed]' (mpi4py and the "
    "mpich wheels) and start the ranks with `python -m pullback.distributed.launch`"
)

TIMEOUT_ENV = "PULLBACK_COLLECTIVE_TIMEOUT"
"""Seconds a collective may wait for the other ranks (unset or 0: forever)."""


class DistributedError(RuntimeError):
    """A collective could not run (MPI missing, a mismatch between ranks, timeout)."""


class CollectiveTimeout(DistributedError):
    """A collective waited longer than the communicator's timeout."""


def load_mpi() -> Any:
    """The `mpi4py.MPI` module, or DistributedError saying how to install it."""
    try:
        from mpi4py import MPI
    except ImportError:
        raise DistributedError(INSTALL_HINT) from None
    return MPI


def launched_size() -> int:
    """The number of ranks the process manager says it started (1 when none did):
    MPICH's `PMI_SIZE`, Open MPI's `OMPI_COMM_WORLD_SIZE`."""
    for var in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE"):
        v = os.environ.get(var)
        if v:
            return int(v)
    return 1


def mpi_available() -> bool:
    """True when mpi4py (and an MPI library it can load) is installed."""
    try:
        load_mpi()
    except (DistributedError, RuntimeError, OSError):
        return False
    return True


class Communicator:
    """All ranks of the job (MPI_COMM_WORLD) and the collectives on numpy arrays.

    `timeout` (seconds, None: wait forever) bounds every collective: a rank that
    waits longer raises `CollectiveTimeout` naming the collective, and the job is
    aborted so no rank hangs.
    """

    def __init__(self, timeout: float | None = None) -> None:
        try:
            self.mpi = load_mpi()
        except DistributedError:
            if launched_size() > 1:
                raise  # started as one of several ranks: MPI is needed
            self.mpi = None  # a lone process: every collective is the identity
        self.comm = self.mpi.COMM_WORLD if self.mpi is not None else None
        self.rank: int = self.comm.Get_rank() if self.comm is not None else 0
        self.size: int = self.comm.Get_size() if self.comm is not None else 1
        env = os.environ.get(TIMEOUT_ENV)
        if timeout is None and env:
            timeout = float(env)
        self.timeout = timeout if timeout else None
        self.bytes_reduced = 0
        """Payload bytes this rank has all-reduced (benchmarks read it)."""
        self.calls = 0
        """Collective calls this rank has made."""

    # -- waiting ---------------------------------------------------------------

    def _wait(self, request: Any, what: str) -> None:
        """Complete a non-blocking collective, within the timeout."""
        if self.timeout is None:
            request.Wait()
            return
        deadline = time.monotonic() + self.timeout
        while not request.Test():
            if time.monotonic() > deadline:
                raise CollectiveTimeout(
                    f"{what}: rank {self.rank} waited more than {self.timeout:g} s for "
                    f"the other {self.size - 1} rank(s) (timeout set by "
                    f"init_parallel_env(timeout=...) or {TIMEOUT_ENV})"
                )
            time.sleep(1e-4)

    # -- collectives ------------------------------------------------------------

    def allreduce(self, arrays: list[np.ndarray], op: str) -> list[np.ndarray]:
        """Reduce each array elementwise over all ranks (`op`: sum, max, min, prod,
        avg); several arrays of one dtype travel in one message."""
        self.calls += 1
        if self.size == 1:
            return [np.array(a, copy=True) for a in arrays]
        dtype = arrays[0].dtype
        flat = np.concatenate([np.ascontiguousarray(a, dtype=dtype).ravel() for a in arrays])
        out = np.empty_like(flat)
        mpi_op = {
            "sum": self.mpi.SUM,
            "avg": self.mpi.SUM,
            "max": self.mpi.MAX,
            "min": self.mpi.MIN,
            "prod": self.mpi.PROD,
        }[op]
        if flat.dtype == np.bool_:
            # MPI has no bool type: reduce bytes, sum/max as "any", min/prod as "all".
            flat, out = flat.view(np.uint8), out.view(np.uint8)
            mpi_op = self.mpi.MIN if op in ("min", "prod") else self.mpi.MAX
        self._wait(self.comm.Iallreduce(flat, out, op=mpi_op), f"pd.allreduce({op})")
        self.bytes_reduced += flat.nbytes
        if op == "avg":
            out = out / out.dtype.type(self.size)
        out = out.view(dtype) if out.dtype != dtype else out
        results, start = [], 0
        for a in arrays:
            results.append(out[start : start + a.size].reshape(a.shape))
            start += a.size
        return results

    def broadcast(self, array: np.ndarray, root: int) -> np.ndarray:
        """Rank `root`'s array on every rank."""
        self.calls += 1
        if not 0 <= root < self.size:
            raise DistributedError(f"pd.broadcast: root {root} is not a rank of this job of {self.size}")
        buf = np.array(array, copy=True, order="C")
        if self.size > 1:
            self._wait(self.comm.Ibcast(buf, root=root), "pd.broadcast")
        return buf

    def reduce(self, array: np.ndarray, root: int, op: str) -> np.ndarray:
        """The reduction over ranks on rank `root`, zeros elsewhere."""
        self.calls += 1
        if not 0 <= root < self.size:
            raise DistributedError(f"pd.reduce: root {root} is not a rank of this job of {self.size}")
        x = np.ascontiguousarray(array)
        if self.size == 1:
            return x.copy()
        out = np.zeros_like(x)
        mpi_op = {"sum": self.mpi.SUM, "max": self.mpi.MAX, "min": self.mpi.MIN, "prod": self.mpi.PROD}[op]
        self._wait(self.comm.Ireduce(x, out if self.rank == root else None, op=mpi_op, root=root), "pd.reduce")
        return out

    def allgather(self, array: np.ndarray, nranks: int) -> np.ndarray:
        """Every rank's array concatenated along axis 0, in rank order."""
        self.calls += 1
        self._expect_size("pd.allgather", nranks)
        x = np.ascontiguousarray(array)
        if self.size == 1:
            return x.copy()
        out = np.empty((self.size * x.shape[0], *x.shape[1:]), dtype=x.dtype)
        self._wait(self.comm.Iallgather(x, out), "pd.allgather")
        return out

    def reduce_scatter(self, array: np.ndarray, nranks: int) -> np.ndarray:
        """The sum over ranks, split along axis 0; rank r keeps chunk r."""
        self.calls += 1
        self._expect_size("pd.reduce_scatter", nranks)
        x = np.ascontiguousarray(array)
        if x.shape[0] % self.size:
            raise DistributedError(
                f"pd.reduce_scatter: dimension 0 of x {list(x.shape)} is not divisible "
                f"by the {self.size} ranks"
            )
        if self.size == 1:
            return x.copy()
        out = np.empty((x.shape[0] // self.size, *x.shape[1:]), dtype=x.dtype)
        self._wait(self.comm.Ireduce_scatter_block(x, out, op=self.mpi.SUM), "pd.reduce_scatter")
        return out

    def barrier(self) -> None:
        """Wait for every rank."""
        self.calls += 1
        if self.size > 1:
            self._wait(self.comm.Ibarrier(), "pd.barrier")

    def _expect_size(self, what: str, nranks: int) -> None:
        if nranks != self.size:
            raise DistributedError(
                f"{what}: the program was built for nranks={nranks} but the job has "
                f"{self.size} rank(s)"
            )

    def abort(self, code: int = 1) -> None:
        """Stop every rank of the job (mpiexec kills the others)."""
        if self.comm is None:
            raise SystemExit(code)
        self.comm.Abort(code)


_bound_library: str | None = None


def libmpi_path() -> str:
    """The MPI library mpi4py loaded in this process (from /proc/self/maps)."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                path = line.split()[-1]
                if os.path.basename(path).startswith("libmpi.so"):
                    return path
    except OSError:
        pass
    import glob

    for cand in sorted(glob.glob(os.path.join(sys.prefix, "lib", "libmpi.so*"))):
        return cand
    raise DistributedError("cannot find the MPI library (libmpi.so) mpi4py uses")


def bind_native_mpi(llvm: Any, handles: dict[str, int]) -> None:
    """Make the MPI library's symbols visible to JIT-compiled code (llvmlite's
    `load_library_permanently`), after initializing MPI and checking that the
    library's handle constants are the `handles` native code was compiled with
    (MPICH's ABI).  Raises DistributedError otherwise; the program then runs on
    the interpreter."""
    global _bound_library
    comm = world()
    if comm.mpi is None:
        raise DistributedError("native collectives need MPI: " + INSTALL_HINT)
    mpi = comm.mpi
    for name, value in handles.items():
        obj = getattr(mpi, name.removeprefix("MPI_"), None)
        if obj is None or mpi._handleof(obj) != value:
            raise DistributedError(
                f"native collectives are compiled for MPICH's ABI, but {name} differs in "
                f"{mpi.Get_library_version().splitlines()[0].strip()}"
            )
    if _bound_library is None:
        path = libmpi_path()
        llvm.load_library_permanently(path)
        _bound_library = path


_lock = threading.Lock()
_world: Communicator | None = None

ABORT_GRACE_S = 0.5
"""Seconds a failing rank waits, its message written, before `MPI_Abort`: time for
mpiexec to forward the message before it stops every rank."""


def world(timeout: float | None = None) -> Communicator:
    """The job's communicator, created (and MPI initialized) on first use; a given
    `timeout` replaces the current one."""
    global _world
    with _lock:
        if _world is None:
            _world = Communicator(timeout)
            _install_abort_on_error(_world)
        elif timeout is not None:
            _world.timeout = timeout if timeout > 0 else None
    return _world


def _install_abort_on_error(comm: Communicator) -> None:
    """In a job of several ranks, an exception that ends one rank aborts the job:
    the message is printed (with the rank) and `MPI_Abort` stops the other ranks,
    which would otherwise wait forever in their next collective."""
    if comm.size == 1:
        return
    previous = sys.excepthook

    def hook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        # One write, flushed, then a moment before the abort: mpiexec forwards each
        # rank's output through a pipe and tears it down on MPI_Abort, and under load
        # it once passed on the first line of two writes and lost the traceback.
        sys.stderr.write(f"[rank {comm.rank}] failed; aborting all {comm.size} ranks\n"
                         + "".join(traceback.format_exception(kind, value, tb)))
        sys.stderr.flush()
        time.sleep(ABORT_GRACE_S)
        try:
            comm.abort(1)
        finally:
            previous(kind, value, tb)

    sys.excepthook = hook


__all__ = [
    "INSTALL_HINT",
    "TIMEOUT_ENV",
    "CollectiveTimeout",
    "Communicator",
    "DistributedError",
    "bind_native_mpi",
    "launched_size",
    "libmpi_path",
    "load_mpi",
    "mpi_available",
    "world",
]
