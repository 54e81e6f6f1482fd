"""`DistributedBatchSampler` (Paddle's `paddle.io.DistributedBatchSampler`): each
rank iterates over its own batches of the dataset's indices, without overlap.

As in Paddle, the indices are padded (repeating the first ones) to a multiple of
the number of ranks, optionally shuffled with the epoch as seed (the same order on
every rank), and cut into chunks of `batch_size * nranks`: rank r takes the r-th
`batch_size` indices of each chunk, so concatenating the ranks' batches of one step
in rank order gives one batch of `batch_size * nranks` consecutive samples.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
from pullback.distributed.env import get_rank, get_world_size


class DistributedBatchSampler:
    """Batches of dataset indices for this rank (see the module docstring)."""

    def __init__(
        self,
        dataset: Any,
        batch_size: int,
        num_replicas: int | None = None,
        rank: int | None = None,
        shuffle: bool = False,
        drop_last: bool = False,
    ) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"batch_size should be a positive integer, got {batch_size!r}")
        if not isinstance(shuffle, bool):
            raise TypeError("shuffle should be a boolean value")
        if not isinstance(drop_last, bool):
            raise TypeError("drop_last should be a boolean number")
        if num_replicas is not None and (not isinstance(num_replicas, int) or num_replicas <= 0):
            raise ValueError("num_replicas should be a positive integer")
        self.nranks = num_replicas if num_replicas is not None else get_world_size()
        if rank is not None and (not isinstance(rank, int) or not 0 <= rank < self.nranks):
            raise ValueError(f"rank should be a non-negative integer below num_replicas ({self.nranks})")
        self.local_rank = rank if rank is not None else get_rank()
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.epoch = 0
        self.num_samples = math.ceil(len(dataset) / self.nranks)
        self.total_size = self.num_samples * self.nranks

    def _rank_indices(self, indices: list[int]) -> list[int]:
        """This rank's share: its `batch_size` slice of each full chunk, then its
        equal part of the last, shorter chunk."""
        per_step = self.batch_size * self.nranks
        last = self.total_size % per_step
        last_local = last // self.nranks
        mine: list[int] = []
        for i in range(self.local_rank * self.batch_size, len(indices) - last, per_step):
            mine.extend(indices[i : i + self.batch_size])
        tail = indices[len(indices) - last :]
        mine.extend(tail[self.local_rank * last_local : (self.local_rank + 1) * last_local])
        return mine

    def __iter__(self) -> Iterator[list[int]]:
        indices = list(range(len(self.dataset)))
        indices += indices[: self.total_size - len(indices)]
        if self.shuffle:
            np.random.RandomState(self.epoch).shuffle(indices)
            self.epoch += 1
        if self.nranks > 1:
            indices = self._rank_indices(indices)
        batch: list[int] = []
        for idx in indices:
            batch.append(idx)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = self.num_samples + (0 if self.drop_last else self.batch_size - 1)
        return n // self.batch_size

    def set_epoch(self, epoch: int) -> None:
        """Seed the next shuffle with `epoch` (call it every epoch, on every rank)."""
        self.epoch = epoch
