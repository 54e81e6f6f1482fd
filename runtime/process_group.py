"""The parallel environment: which rank this process is, how many there are, and
starting the communicator (`paddle.distributed.init_parallel_env`).

Ranks are started by `mpiexec` (see `pullback.distributed.launch`).  Before MPI is
initialized, the rank and size come from the launcher's environment: Paddle's own
`PADDLE_TRAINER_ID`/`PADDLE_TRAINERS_NUM` when set, else the MPI process manager's
(`PMI_RANK`/`PMI_SIZE` for MPICH's Hydra, `OMPI_COMM_WORLD_*` for Open MPI), else a
single process (rank 0 of 1).
"""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass

from pullback.runtime.communicator import Communicator, world

_RANK_VARS = ("PADDLE_TRAINER_ID", "PMI_RANK", "OMPI_COMM_WORLD_RANK")
_SIZE_VARS = ("PADDLE_TRAINERS_NUM", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE")
_LOCAL_RANK_VARS = ("PADDLE_LOCAL_RANK", "MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK")

_initialized = False


def _env_int(names: tuple[str, ...], default: int) -> int:
    for n in names:
        v = os.environ.get(n)
        if v not in (None, ""):
            return int(v)  # type: ignore[arg-type]
    return default


@dataclass(frozen=True)
class Group:
    """A communication group (only the global group of all ranks exists)."""

    rank: int
    nranks: int
    id: int = 0

    @property
    def world_size(self) -> int:
        """The number of ranks in the group."""
        return self.nranks

    def get_group_rank(self, rank: int) -> int:
        """The group rank of global rank `rank` (the same: one global group)."""
        return rank if 0 <= rank < self.nranks else -1


class ParallelEnv:
    """Paddle's `paddle.distributed.ParallelEnv`: this process's place in the job."""

    @property
    def rank(self) -> int:
        """This process's rank (0 .. world_size-1)."""
        return get_rank()

    @property
    def world_size(self) -> int:
        """The number of ranks."""
        return get_world_size()

    @property
    def local_rank(self) -> int:
        """The rank among the processes of this machine."""
        return _env_int(_LOCAL_RANK_VARS, self.rank)

    @property
    def device_id(self) -> int:
        """The device this rank uses (pullback's ranks run on the CPU: 0)."""
        return 0

    @property
    def device_type(self) -> str:
        """The device kind ranks run on."""
        return "cpu"

    @property
    def trainer_endpoints(self) -> list[str]:
        """Paddle's `host:port` list; MPI needs none, so it is from the environment."""
        eps = os.environ.get("PADDLE_TRAINER_ENDPOINTS", "")
        return [e for e in eps.split(",") if e]

    @property
    def current_endpoint(self) -> str:
        """This rank's endpoint from the environment ('' when not set)."""
        return os.environ.get("PADDLE_CURRENT_ENDPOINT", "")

    # Paddle's older spellings
    nranks = world_size
    dev_id = device_id


def is_initialized() -> bool:
    """True once `init_parallel_env` ran in this process."""
    return _initialized


def init_parallel_env(timeout: float | datetime.timedelta | None = None) -> Group:
    """Start the communicator of the job (MPI) and return the global group.

    `timeout` (seconds or a `datetime.timedelta`) bounds every collective: a rank
    waiting longer aborts the job naming the ranks that did not arrive, instead of
    hanging (default: `PULLBACK_COLLECTIVE_TIMEOUT`, else 1800 s; 0: no limit).  A
    process started alone is rank 0 of 1, with or without MPI; one started as a rank
    of several without mpi4py raises `DistributedError` (a RuntimeError) saying how
    to install it.
    """
    global _initialized
    comm = communicator(timeout)
    _initialized = True
    return Group(comm.rank, comm.size)


def communicator(timeout: float | datetime.timedelta | None = None) -> Communicator:
    """The job's communicator (MPI starts on first use); a given `timeout`
    replaces the current one."""
    return world(timeout)


def get_rank(group: Group | None = None) -> int:
    """This process's rank (Paddle's `paddle.distributed.get_rank`)."""
    if group is not None:
        return group.rank
    if _initialized:
        return communicator().rank
    return _env_int(_RANK_VARS, 0)


def get_world_size(group: Group | None = None) -> int:
    """The number of ranks (Paddle's `paddle.distributed.get_world_size`)."""
    if group is not None:
        return group.nranks
    if _initialized:
        return communicator().size
    return _env_int(_SIZE_VARS, 1)


def get_group(id: int = 0) -> Group:
    """The group with this id (only the global group, 0, exists)."""
    if id != 0:
        raise ValueError(f"get_group: only the global group (id 0) exists, got id {id}")
    return Group(get_rank(), get_world_size())


def new_group(
    ranks: list[int] | None = None, backend: str | None = None,
    timeout: float | datetime.timedelta | None = None,
) -> Group:
    """Paddle's `new_group`; only the group of all ranks is supported.  A given
    `timeout` becomes the collectives' (as `init_parallel_env(timeout=...)`)."""
    if timeout is not None:
        communicator(timeout)
    n = get_world_size()
    if ranks is not None and sorted(ranks) != list(range(n)):
        raise NotImplementedError(
            f"new_group: only the group of all {n} ranks is supported, got ranks {ranks}"
        )
    return Group(get_rank(), n)
