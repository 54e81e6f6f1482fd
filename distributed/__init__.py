"""`paddle.distributed`: data-parallel training over several processes, on MPI.

Start the ranks with `python -m pullback.distributed.launch --nproc_per_node N
train.py` (or `mpiexec -n N python train.py`), then in the script:

* eager: `init_parallel_env()`, `model = paddle.DataParallel(model)`, train as
  usual on this rank's shard of the data (`DistributedBatchSampler`);
* static: `fleet.init(is_collective=True)`,
  `fleet.distributed_optimizer(opt).minimize(loss)`.

Collectives on tensors: `all_reduce`, `broadcast`, `all_gather`, `reduce_scatter`,
`barrier`.  MPI comes from the optional extra `pip install 'pullback[distributed]'`
(mpi4py and the mpich wheels); without it, a process started alone still runs (rank 0
of 1), and the launcher says how to install MPI.
"""

from __future__ import annotations

from pullback.distributed import fleet
from pullback.distributed.collective import (
    ReduceOp,
    Task,
    all_gather,
    all_reduce,
    barrier,
    broadcast,
    reduce,
    reduce_scatter,
)
from pullback.runtime.process_group import (
    Group,
    ParallelEnv,
    get_group,
    get_rank,
    get_world_size,
    init_parallel_env,
    is_initialized,
    new_group,
)
from pullback.distributed.parallel import DataParallel
from pullback.distributed.sampler import DistributedBatchSampler
from pullback.distributed.spawn import spawn


def is_available() -> bool:
    """True when MPI (mpi4py) is installed, so several ranks can run."""
    from pullback.runtime.communicator import mpi_available

    return mpi_available()


__all__ = [
    "DataParallel",
    "DistributedBatchSampler",
    "Group",
    "ParallelEnv",
    "ReduceOp",
    "Task",
    "all_gather",
    "all_reduce",
    "barrier",
    "broadcast",
    "fleet",
    "get_group",
    "get_rank",
    "get_world_size",
    "init_parallel_env",
    "is_available",
    "is_initialized",
    "new_group",
    "reduce",
    "reduce_scatter",
    "spawn",
]

from pullback.namespaces import adopt_real  # noqa: E402 - names of Paddle's module it lacks

adopt_real(__name__)
