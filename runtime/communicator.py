"""The process group of a data-parallel job: MPI's world communicator, via mpi4py.

Every collective (the interpreter's kernels, eager `paddle.distributed.*`, the
compiled backend's native calls through `native_collective`) goes through the one
`Communicator` this module holds, so one place decides which MPI library is used,
what the ranks check before a collective, how long a collective may wait, and what
happens when a rank fails: the whole job is aborted (`MPI_Abort`), so the other
ranks stop with the failing rank's message instead of waiting forever.

Before its payload, a collective exchanges a few integers with every other rank
(`_agree`): which collective (its kind, reduction, root), the number of collectives
this rank issued so far, the dtype, the element count and a digest of the shapes.
Ranks that disagree all raise `DistributedError` naming the collective and each
rank's tensors (MPI itself would run the payload and pad or truncate: an all-reduce
of [3] against [5] returned `[2, 2, 2, 1, 7.27e22]`).  The exchange is point to
point, with a tag of its own, so a rank that waits past the timeout knows which
ranks did not arrive.
It is always on in eager mode and on the interpreter; compiled programs run it on
their first run only (`trusting`), then trust their metadata.

Started without `mpiexec`, the world has one rank (with or without mpi4py
installed): every collective is then the identity, which keeps single-process
programs with collectives runnable.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import datetime
import fcntl
import os
import stat
import sys
import termios
import threading
import time
import traceback
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import numpy as np

INSTALL_HINT = (
    "MPI is not installed: pip install 'pullback[distributed]' (mpi4py and the "
    "mpich wheels) and start the ranks with `python -m pullback.distributed.launch`"
)

TIMEOUT_ENV = "PULLBACK_COLLECTIVE_TIMEOUT"
"""Seconds a collective may wait for the other ranks (0: forever)."""

DEFAULT_TIMEOUT_S = 1800.0
"""The timeout when none is set: 30 minutes, Paddle's own default
(`paddle.distributed.new_group(timeout=...)`) and torch's for gloo.  Long enough
for a slow rank (a compile of several minutes, a checkpoint) to catch up, short
enough that a job that can never finish does not hold its machines for a day."""

KINDS = {"allreduce": 1, "broadcast": 2, "reduce": 3, "allgather": 4, "reduce_scatter": 5, "barrier": 6}
"""Collective codes of the metadata exchange and of `native_collective`'s `kind`."""
_KIND_NAMES = {v: k for k, v in KINDS.items()}

REDUCE_OPS = {"sum": 0, "max": 1, "min": 2, "prod": 3, "avg": 4}
"""Reduction codes of the metadata exchange and of `native_collective`'s `op`."""
_OP_NAMES = {v: k for k, v in REDUCE_OPS.items()}

NATIVE_DTYPES = ("float32", "float64", "int32", "int64")
"""Element types native collectives pass, by their code (`native_collective`)."""

WATCH_EVERY_S = 0.5
"""How often the watchdog looks at the collective in progress (the precision of
the timeout)."""

_META_TAG = 23308
"""The metadata messages' tag on the world communicator.  Collectives never match
point-to-point messages, so only a program receiving with MPI_ANY_TAG itself could
take one.  (A communicator of their own would need MPI_Comm_dup, a collective that
would hang at start-up when a rank never starts the communicator.)"""
_META_LEN = 8  # seq, kind, op, root, dtype digest, element count, shape digest, spare


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


def resolve_timeout(timeout: float | datetime.timedelta | None) -> float | None:
    """Seconds a collective may wait: `timeout` when given (a number or a
    `datetime.timedelta`, as Paddle's `new_group` takes), else `PULLBACK_COLLECTIVE_TIMEOUT`,
    else `DEFAULT_TIMEOUT_S`; None (forever) for 0 or less."""
    if timeout is None:
        env = os.environ.get(TIMEOUT_ENV, "").strip()
        if env:
            try:
                timeout = float(env)
            except ValueError:
                raise DistributedError(f"{TIMEOUT_ENV}={env!r} is not a number of seconds") from None
        else:
            timeout = DEFAULT_TIMEOUT_S
    if isinstance(timeout, datetime.timedelta):
        timeout = timeout.total_seconds()
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise TypeError(f"timeout must be a number of seconds or a datetime.timedelta, got {timeout!r}")
    return float(timeout) if timeout > 0 else None


def _digest(text: str) -> int:
    """A digest of `text` that is the same in every process (`hash` of a str is not)."""
    return zlib.crc32(text.encode())


def _shape_text(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(int(d)) for d in shape) + "]"


@dataclass(frozen=True)
class _Wait:
    """A wait for the other ranks in progress, as the watchdog sees it."""

    what: str
    deadline: float | None
    table: np.ndarray | None
    """The metadata exchange's table, a row per rank, -1 until its message came
    (MPI writes it meanwhile); None for a payload."""

    def missing(self) -> list[int] | None:
        """The ranks whose metadata has not come (None: not a metadata exchange)."""
        if self.table is None:
            return None
        return [r for r in range(len(self.table)) if self.table[r, 0] == -1]


class Communicator:
    """All ranks of the job (MPI_COMM_WORLD) and the collectives on numpy arrays.

    `timeout` (seconds; None: `PULLBACK_COLLECTIVE_TIMEOUT`, else 30 minutes; 0:
    forever) bounds every collective: a rank that waits longer prints which ranks
    did not arrive and aborts the job, so no rank hangs.
    """

    def __init__(self, timeout: float | datetime.timedelta | None = None) -> None:
        try:
            self.mpi = load_mpi()
        except DistributedError:
            if launched_size() > 1:
                raise  # started as one of several ranks: MPI is needed
            self.mpi = None  # a lone process: every collective is the identity
        self.comm = self.mpi.COMM_WORLD if self.mpi is not None else None
        self.rank: int = self.comm.Get_rank() if self.comm is not None else 0
        self.size: int = self.comm.Get_size() if self.comm is not None else 1
        self.timeout = resolve_timeout(timeout)
        self.check = True
        """Exchange metadata before each collective (off while `trusting`)."""
        self.seq = 0
        """Collectives this rank has issued (metadata: ranks must agree on it)."""
        self._waiting: _Wait | None = None
        self._watchdog: threading.Thread | None = None
        self.bytes_reduced = 0
        """Payload bytes this rank has all-reduced (benchmarks read it)."""
        self.calls = 0
        """Collective calls this rank has made."""

    @contextlib.contextmanager
    def trusting(self, trust: bool = True) -> Iterator[None]:
        """Collectives inside skip the metadata exchange when `trust` (a compiled
        program's runs after its first, which every rank decides alike)."""
        saved = self.check
        self.check = not trust
        try:
            yield
        finally:
            self.check = saved

    # -- agreeing and waiting -------------------------------------------------

    def _begin(self, what: str, kind: str, op: str | None, root: int, arrays: Sequence[np.ndarray]) -> float | None:
        """Count the collective and, when checking, agree on it with every rank;
        returns its deadline (None: no timeout)."""
        self.calls += 1
        self.seq += 1
        deadline = None if self.timeout is None else time.monotonic() + self.timeout
        if self.size == 1 or not self.check:
            return deadline
        dtypes = ",".join(str(a.dtype) for a in arrays)
        shapes = ";".join(_shape_text(a.shape) for a in arrays)
        mine = np.array(
            [self.seq, KINDS[kind], REDUCE_OPS.get(op or "", -1), root, _digest(dtypes),
             sum(int(a.size) for a in arrays), _digest(shapes), 0],
            dtype=np.int64,
        )
        tensors = ", ".join(f"{a.dtype} {_shape_text(a.shape)}" for a in arrays) or "no tensor"
        at = f" with root {root}" if root >= 0 else ""
        self._agree(what, mine, f"{what}{at} of {tensors}", deadline)
        return deadline

    def _agree(self, what: str, mine: np.ndarray, description: str, deadline: float | None) -> None:
        """Send this rank's metadata to every rank and receive theirs; raise
        DistributedError on every rank when they differ, abort the job naming the
        ranks that did not arrive by the deadline."""
        # Rows stay -1 (no rank's sequence number) until that rank's metadata
        # came: what the watchdog reads to name the ranks that did not arrive.
        table = np.full((self.size, _META_LEN), -1, dtype=np.int64)
        table[self.rank] = mine
        others = [r for r in range(self.size) if r != self.rank]
        requests = [self.comm.Irecv(table[r], source=r, tag=_META_TAG) for r in others]
        requests += [self.comm.Isend(mine, dest=r, tag=_META_TAG) for r in others]
        self._watch(_Wait(what, deadline, table))
        try:
            self.mpi.Request.Waitall(requests)
        finally:
            self._watch(None)
        if (table == mine).all():
            return
        # Every rank sees the same table, so every rank is here: a blocking gather
        # of the descriptions cannot hang.
        described = self.comm.allgather((int(mine[0]), description))
        seqs = {s for s, _ in described}
        lines = [f"rank {r}: {d}" + (f" (its collective #{s})" if len(seqs) > 1 else "")
                 for r, (s, d) in enumerate(described)]
        raise DistributedError(
            f"{what}: the ranks called different collectives or passed different tensors "
            f"(every rank must issue the same collectives in the same order, with the "
            f"same shapes and dtypes):\n  " + "\n  ".join(lines)
        )

    def _wait(self, request: Any, what: str, deadline: float | None) -> None:
        """Complete a non-blocking collective, within the deadline.  MPI's own wait
        (it spins as MPICH tunes it; a loop of tests in Python added milliseconds
        to a collective on a loaded machine), watched by the watchdog thread."""
        self._watch(_Wait(what, deadline, None))
        try:
            request.Wait()
        finally:
            self._watch(None)

    def _watch(self, wait: _Wait | None) -> None:
        """Tell the watchdog which wait is in progress (None: none)."""
        if wait is not None and wait.deadline is not None and self._watchdog is None:
            self._watchdog = threading.Thread(target=self._watchdog_loop, name="pullback-collective-watchdog",
                                              daemon=True)
            self._watchdog.start()
        self._waiting = wait

    def _watchdog_loop(self) -> None:
        """Abort the job when the wait in progress passes its deadline.  A thread,
        so that waits are MPI's own blocking calls (mpi4py initializes MPI with
        MPI_THREAD_MULTIPLE, so this thread may call MPI_Abort meanwhile)."""
        while True:
            wait = self._waiting
            left = WATCH_EVERY_S if wait is None or wait.deadline is None else wait.deadline - time.monotonic()
            if left > 0:
                time.sleep(min(left, WATCH_EVERY_S))
            elif self._waiting is wait:
                self._timed_out(wait.what, wait.missing())

    def _timed_out(self, what: str, missing: list[int] | None) -> None:
        """Abort the job: a request this rank started cannot be cancelled, so no
        later collective could match.  The message is printed once, by this rank."""
        assert self.timeout is not None
        if missing:
            who = (f"for rank{'s' if len(missing) > 1 else ''} "
                   f"{', '.join(map(str, missing))}, which did not arrive")
        elif self.check:
            who = "every rank arrived, but the collective did not complete"
        else:
            who = ("the ranks that did not arrive are not known: this compiled program's "
                   "collectives are checked on its first run only")
        message = (
            f"{what}: rank {self.rank} waited more than {self.timeout:g} s ({who}; "
            f"collective #{self.seq} of this rank; the timeout is set by {TIMEOUT_ENV}, "
            f"launch --timeout or init_parallel_env(timeout=...)); aborting all "
            f"{self.size} ranks"
        )
        fatal(self, CollectiveTimeout(message))

    # -- collectives ------------------------------------------------------------

    def allreduce(self, arrays: list[np.ndarray], op: str) -> list[np.ndarray]:
        """Reduce each array elementwise over all ranks (`op`: sum, max, min, prod,
        avg); several arrays of one dtype travel in one message."""
        what = f"pd.allreduce({op})"
        deadline = self._begin(what, "allreduce", op, -1, arrays)
        if self.size == 1:
            return [np.array(a, copy=True) for a in arrays]
        dtype = arrays[0].dtype
        flat = np.concatenate([np.ascontiguousarray(a, dtype=dtype).ravel() for a in arrays])
        out = np.empty_like(flat)
        self._allreduce_into(flat, out, op, what, deadline)
        results, start = [], 0
        for a in arrays:
            results.append(out[start : start + a.size].reshape(a.shape))
            start += a.size
        return results

    def _allreduce_into(self, flat: np.ndarray, out: np.ndarray, op: str, what: str, deadline: float | None) -> None:
        """The payload of an all-reduce: `out` = the reduction of every rank's `flat`."""
        mpi_op = {
            "sum": self.mpi.SUM,
            "avg": self.mpi.SUM,
            "max": self.mpi.MAX,
            "min": self.mpi.MIN,
            "prod": self.mpi.PROD,
        }[op]
        src, dst = flat, out
        if flat.dtype == np.bool_:
            # MPI has no bool type: reduce bytes, sum/max as "any", min/prod as "all".
            src, dst = flat.view(np.uint8), out.view(np.uint8)
            mpi_op = self.mpi.MIN if op in ("min", "prod") else self.mpi.MAX
        self._wait(self.comm.Iallreduce(src, dst, op=mpi_op), what, deadline)
        self.bytes_reduced += flat.nbytes
        if op == "avg":
            np.divide(out, out.dtype.type(self.size), out=out, casting="unsafe")

    def broadcast(self, array: np.ndarray, root: int) -> np.ndarray:
        """Rank `root`'s array on every rank."""
        if not 0 <= root < self.size:
            raise DistributedError(f"pd.broadcast: root {root} is not a rank of this job of {self.size}")
        buf = np.array(array, copy=True, order="C")
        deadline = self._begin("pd.broadcast", "broadcast", None, root, [buf])
        if self.size > 1:
            self._wait(self.comm.Ibcast(buf, root=root), "pd.broadcast", deadline)
        return buf

    def reduce(self, array: np.ndarray, root: int, op: str) -> np.ndarray:
        """The reduction over ranks on rank `root`, zeros elsewhere."""
        if not 0 <= root < self.size:
            raise DistributedError(f"pd.reduce: root {root} is not a rank of this job of {self.size}")
        x = np.ascontiguousarray(array)
        deadline = self._begin(f"pd.reduce({op})", "reduce", op, root, [x])
        if self.size == 1:
            return x.copy()
        out = np.zeros_like(x)
        self._reduce_into(x, out, root, op, deadline)
        return out

    def _reduce_into(self, x: np.ndarray, out: np.ndarray, root: int, op: str, deadline: float | None) -> None:
        mpi_op = {"sum": self.mpi.SUM, "max": self.mpi.MAX, "min": self.mpi.MIN, "prod": self.mpi.PROD}[op]
        request = self.comm.Ireduce(x, out if self.rank == root else None, op=mpi_op, root=root)
        self._wait(request, f"pd.reduce({op})", deadline)

    def allgather(self, array: np.ndarray, nranks: int) -> np.ndarray:
        """Every rank's array concatenated along axis 0, in rank order."""
        self._expect_size("pd.allgather", nranks)
        x = np.ascontiguousarray(array)
        deadline = self._begin("pd.allgather", "allgather", None, -1, [x])
        if self.size == 1:
            return x.copy()
        out = np.empty((self.size * x.shape[0], *x.shape[1:]), dtype=x.dtype)
        self._wait(self.comm.Iallgather(x, out), "pd.allgather", deadline)
        return out

    def reduce_scatter(self, array: np.ndarray, nranks: int) -> np.ndarray:
        """The sum over ranks, split along axis 0; rank r keeps chunk r."""
        self._expect_size("pd.reduce_scatter", nranks)
        x = np.ascontiguousarray(array)
        if x.ndim == 0 or x.shape[0] % self.size:
            raise DistributedError(
                f"pd.reduce_scatter: dimension 0 of x {list(x.shape)} is not divisible "
                f"by the {self.size} ranks"
            )
        deadline = self._begin("pd.reduce_scatter", "reduce_scatter", "sum", -1, [x])
        if self.size == 1:
            return x.copy()
        out = np.empty((x.shape[0] // self.size, *x.shape[1:]), dtype=x.dtype)
        self._wait(self.comm.Ireduce_scatter_block(x, out, op=self.mpi.SUM), "pd.reduce_scatter", deadline)
        return out

    def barrier(self) -> None:
        """Wait for every rank."""
        deadline = self._begin("pd.barrier", "barrier", None, -1, [])
        if self.size > 1:
            self._wait(self.comm.Ibarrier(), "pd.barrier", deadline)

    def _expect_size(self, what: str, nranks: int) -> None:
        if nranks != self.size:
            raise DistributedError(
                f"{what}: the program was built for nranks={nranks} but the job has "
                f"{self.size} rank(s)"
            )

    def abort(self, code: int = 1) -> None:
        """Stop every rank of the job (mpiexec kills the others), once this rank's
        output has reached the launcher (`flush_output`)."""
        flush_output()
        if self.comm is None:
            raise SystemExit(code)
        self.comm.Abort(code)
        # MPICH's MPI_Abort returns once it has told the process manager, which then
        # kills the ranks: nothing may run meanwhile (a collective that timed out
        # has no result, and the program would go on with garbage).
        time.sleep(ABORT_WAIT_S)
        os._exit(code)


# -- native collectives ---------------------------------------------------------

NATIVE_SYMBOL = "pullback_collective"
"""The C function compiled collectives call (`lowering/distributed.py`): a ctypes
callback into `native_collective`, bound in LLVM's symbol table."""

_NATIVE_TYPE = ctypes.CFUNCTYPE(
    None, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64,
    ctypes.c_int64, ctypes.c_int64,
)
_native_callback: Any = None
_native_error: list[BaseException] = []


def _view(address: int | None, count: int, dtype: np.dtype) -> np.ndarray:
    """The `count` elements of `dtype` at `address`, as an array (no copy)."""
    if count == 0 or not address:
        return np.empty(0, dtype)
    raw = (ctypes.c_char * (count * dtype.itemsize)).from_address(address)
    return np.frombuffer(raw, dtype=dtype)


def native_collective(kind: int, src: int | None, dst: int | None, count: int, dtype: int, op: int, root: int) -> None:
    """A collective of compiled code on its own buffers: `count` elements of
    `NATIVE_DTYPES[dtype]` at `src`, the result written at `dst` (the gathered
    `count * size` elements for an all-gather, `count / size` for a
    reduce-scatter).  Checks and timeouts as the interpreter's.  An error cannot
    cross the native frames: it is kept, the program's later collectives are
    skipped (every rank saw the same mismatch, so every rank skips alike) and
    `native_run` raises it once the program returns."""
    if _native_error:
        return
    try:
        comm = world()
        dt = np.dtype(NATIVE_DTYPES[dtype])
        name, red = _KIND_NAMES[kind], _OP_NAMES.get(op)
        x = _view(src, count, dt)
        if comm.size == 1:  # every collective is the identity (MPI may be absent)
            comm.calls += 1
            comm.seq += 1
            if name in ("allreduce", "reduce", "allgather", "reduce_scatter") and dst != src:
                _view(dst, count, dt)[:] = x
            return
        if name == "allreduce":
            what = f"pd.allreduce({red})"
            deadline = comm._begin(what, name, red, -1, [x])
            comm._allreduce_into(x, _view(dst, count, dt), red or "sum", what, deadline)
        elif name == "broadcast":
            deadline = comm._begin("pd.broadcast", name, None, root, [x])
            comm._wait(comm.comm.Ibcast(x, root=root), "pd.broadcast", deadline)
        elif name == "reduce":
            deadline = comm._begin(f"pd.reduce({red})", name, red, root, [x])
            comm._reduce_into(x, _view(dst, count, dt), root, red or "sum", deadline)
        elif name == "allgather":
            deadline = comm._begin("pd.allgather", name, None, -1, [x])
            comm._wait(comm.comm.Iallgather(x, _view(dst, count * comm.size, dt)), "pd.allgather", deadline)
        elif name == "reduce_scatter":
            deadline = comm._begin("pd.reduce_scatter", name, "sum", -1, [x])
            out = _view(dst, count // comm.size, dt)
            comm._wait(comm.comm.Ireduce_scatter_block(x, out, op=comm.mpi.SUM), "pd.reduce_scatter", deadline)
        else:
            deadline = comm._begin("pd.barrier", "barrier", None, -1, [])
            comm._wait(comm.comm.Ibarrier(), "pd.barrier", deadline)
    except BaseException as e:  # noqa: BLE001 - nothing may unwind through native frames
        _native_error.append(e)


def bind_native_collectives(llvm: Any) -> None:
    """Make `NATIVE_SYMBOL` callable from JIT-compiled code (once per process), after
    starting the communicator.  Raises DistributedError when MPI is needed and
    missing; the program then runs on the interpreter."""
    global _native_callback
    comm = world()
    if comm.mpi is None and comm.size > 1:
        raise DistributedError("native collectives need MPI: " + INSTALL_HINT)
    if _native_callback is None:
        _native_callback = _NATIVE_TYPE(native_collective)
        llvm.add_symbol(NATIVE_SYMBOL, ctypes.cast(_native_callback, ctypes.c_void_p).value)


@contextlib.contextmanager
def native_run(trust: bool) -> Iterator[None]:
    """Around a call of compiled code with collectives: their metadata checked
    unless `trust`, and the first error one of them met raised once it returns."""
    _native_error.clear()
    with world().trusting(trust):
        yield
    if _native_error:
        error = _native_error[0]
        _native_error.clear()
        raise error


# -- ending a job ------------------------------------------------------------------

ABORT_WAIT_S = 10.0
"""Seconds a rank that called MPI_Abort waits to be killed before it exits itself."""

FLUSH_LIMIT_S = 5.0
"""Seconds `flush_output` waits at most for the launcher to read this rank's output."""


def _unread(fd: int) -> int:
    """Bytes written to pipe `fd` that its reader has not read yet (0 if `fd` is
    not a pipe: a terminal or a file holds nothing back)."""
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return 0
        buf = bytearray(4)
        fcntl.ioctl(fd, termios.FIONREAD, buf)
        return int.from_bytes(buf, sys.byteorder)
    except OSError:
        return 0


def flush_output() -> None:
    """Flush Python's stdout and stderr, then wait (up to `FLUSH_LIMIT_S`) until the
    process manager has read them from their pipes.  mpiexec's proxy kills the
    ranks and stops forwarding when a rank aborts: output still in the pipe is lost
    (one `sys.exit(3)` in seven lost its message).  What the proxy has read goes to
    mpiexec ahead of the abort on the same connection."""
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()
    deadline = time.monotonic() + FLUSH_LIMIT_S
    for fd in (1, 2):
        while _unread(fd) and time.monotonic() < deadline:
            time.sleep(0.005)


def fatal(comm: Communicator, error: BaseException) -> None:
    """Print `error` once (with this rank) and abort the job."""
    sys.stderr.write(f"[rank {comm.rank}] {type(error).__name__}: {error}\n")
    comm.abort(1)


_lock = threading.Lock()
_world: Communicator | None = None


def world(timeout: float | datetime.timedelta | None = None) -> Communicator:
    """The job's communicator, created (and MPI initialized) on first use; a given
    `timeout` replaces the current one (0: forever)."""
    global _world
    with _lock:
        if _world is None:
            _world = Communicator(timeout)
            _install_abort_on_error(_world)
        elif timeout is not None:
            _world.timeout = resolve_timeout(timeout)
    return _world


def _install_abort_on_error(comm: Communicator) -> None:
    """In a job of several ranks, an exception that ends one rank aborts the job:
    the message is printed (with the rank) and `MPI_Abort` stops the other ranks,
    which would otherwise wait forever in their next collective.  A rank that
    exits (`sys.exit(3)`, or the end of its script) flushes its output first and
    waits until the launcher has it: mpi4py aborts the job after Python's exit
    handlers when the status is not 0, and the message must not be lost then."""
    if comm.size == 1:
        return
    atexit.register(flush_output)
    previous = sys.excepthook

    def hook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
        # One write, so that the rank's lines stay together in mpiexec's output.
        sys.stderr.write(f"[rank {comm.rank}] failed; aborting all {comm.size} ranks\n"
                         + "".join(traceback.format_exception(kind, value, tb)))
        try:
            comm.abort(1)
        finally:
            previous(kind, value, tb)

    sys.excepthook = hook


__all__ = [
    "DEFAULT_TIMEOUT_S",
    "INSTALL_HINT",
    "KINDS",
    "NATIVE_DTYPES",
    "NATIVE_SYMBOL",
    "REDUCE_OPS",
    "TIMEOUT_ENV",
    "CollectiveTimeout",
    "Communicator",
    "DistributedError",
    "bind_native_collectives",
    "fatal",
    "flush_output",
    "launched_size",
    "load_mpi",
    "mpi_available",
    "native_collective",
    "native_run",
    "resolve_timeout",
    "world",
]
