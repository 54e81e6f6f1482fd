"""`paddle.io`: datasets, samplers and the `DataLoader`, single process.

A `DataLoader` draws index batches from a `BatchSampler` (or iterates an
`IterableDataset`), collates the samples of a batch with `default_collate_fn`
(numpy arrays, numbers and Tensors stacked along a new first axis, mappings and
sequences collated field by field), and yields

* in eager mode (`return_list=True`): the collated structure with Tensors for
  arrays (a list of Tensors for `(image, label)` samples), as Paddle's dygraph
  loader does;
* in static mode with a `feed_list` and `return_list=False`: `[{name: array}]`, the
  one-place feed list `Executor.run(feed=...)` accepts;
* otherwise numpy arrays.

`num_workers` must be 0 (worker processes are not implemented); shuffling draws from
numpy's global random state as Paddle's samplers do (`np.random.seed` makes it
repeat); `random_split` draws from Paddle's generator (`paddle.seed`).
"""

from __future__ import annotations

import itertools

import bisect
import math
import numbers
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np
from pullback.dialects import pd
from pullback.dialects.bfloat16 import host_cast
from pullback.frontend import core

# ------------------------------------------------------------------------ datasets


class Dataset:
    """A map-style dataset (`paddle.io.Dataset`): subclasses define `__getitem__`
    and `__len__`."""

    def __getitem__(self, idx: int) -> Any:
        raise NotImplementedError(f"'{type(self).__name__}' does not implement __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"'{type(self).__name__}' does not implement __len__")


class IterableDataset(Dataset):
    """A dataset of samples produced by `__iter__` (`paddle.io.IterableDataset`);
    it has no length and no indices, so it cannot be shuffled or sampled."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"'{type(self).__name__}' does not implement __iter__")

    def __getitem__(self, idx: int) -> Any:
        raise RuntimeError(f"'{type(self).__name__}' is an IterableDataset: it cannot be indexed")

    def __len__(self) -> int:
        raise RuntimeError(f"'{type(self).__name__}' is an IterableDataset: it has no length")


def _rows(t: Any) -> int:
    shape = t.shape
    return int(shape[0]) if len(shape) else 0


class TensorDataset(Dataset):
    """Samples are the rows of several tensors of one length: item `i` is
    `(t[i] for t in tensors)` (`paddle.io.TensorDataset`)."""

    def __init__(self, tensors: Sequence[Any]) -> None:
        if core.in_dynamic_mode() is False:
            raise RuntimeError("TensorDataset can only be used in dynamic (eager) mode")
        tensors = list(tensors)
        if not tensors:
            raise ValueError("TensorDataset: tensors must not be empty")
        n = _rows(tensors[0])
        if any(_rows(t) != n for t in tensors):
            raise ValueError(
                "TensorDataset: tensors not have same shape of the 1st dimension, got "
                + ", ".join(str(list(t.shape)) for t in tensors)
            )
        self.tensors = tensors

    def __getitem__(self, index: int) -> tuple[Any, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return _rows(self.tensors[0])


class ComposeDataset(Dataset):
    """Datasets of one length zipped: item `i` concatenates the fields of each
    dataset's item `i` (`paddle.io.ComposeDataset`)."""

    def __init__(self, datasets: Sequence[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ComposeDataset: input datasets should not be empty")
        n = len(self.datasets[0])
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ComposeDataset: IterableDataset is not supported")
            if len(d) != n:
                raise ValueError("ComposeDataset: the lengths of the datasets should be the same")

    def __len__(self) -> int:
        return len(self.datasets[0])

    def __getitem__(self, idx: int) -> tuple[Any, ...]:
        sample: list[Any] = []
        for d in self.datasets:
            item = d[idx]
            sample.extend(item if isinstance(item, (list, tuple)) else [item])
        return tuple(sample)


class _IterableDatasetError(TypeError, AssertionError):
    """An IterableDataset where a map-style one is needed: a TypeError, and Paddle's
    AssertionError."""


class ChainDataset(IterableDataset):
    """Iterable datasets iterated one after another (`paddle.io.ChainDataset`)."""

    def __init__(self, datasets: Sequence[IterableDataset]) -> None:
        self.datasets = list(datasets)
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError("ChainDataset only supports IterableDataset")

    def __iter__(self) -> Iterator[Any]:
        for d in self.datasets:
            yield from d


class ConcatDataset(Dataset):
    """Map-style datasets one after another (`paddle.io.ConcatDataset`)."""

    def __init__(self, datasets: Iterable[Dataset]) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise _IterableDatasetError("ConcatDataset does not support IterableDataset")
        self.cumulative_sizes = list(np.cumsum([len(d) for d in self.datasets]))

    def __len__(self) -> int:
        return int(self.cumulative_sizes[-1])

    def __getitem__(self, idx: int) -> Any:
        if idx < 0:
            if -idx > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            idx = len(self) + idx
        k = bisect.bisect_right(self.cumulative_sizes, idx)
        start = 0 if k == 0 else int(self.cumulative_sizes[k - 1])
        return self.datasets[k][idx - start]


class Subset(Dataset):
    """The items of `dataset` at `indices`, in that order (`paddle.io.Subset`)."""

    def __init__(self, dataset: Dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = list(indices)

    def __getitem__(self, idx: int) -> Any:
        return self.dataset[self.indices[idx]]

    def __len__(self) -> int:
        return len(self.indices)


def _generator(generator: Any = None) -> Any:
    """Where samplers draw from: `generator` if it is a numpy generator (or a seed),
    else numpy's global random state, as Paddle's samplers use it (so
    `np.random.seed` makes shuffling repeat)."""
    if isinstance(generator, np.random.Generator):
        return generator
    if isinstance(generator, (int, np.integer)):
        return np.random.default_rng(int(generator))
    return np.random


def _paddle_generator() -> np.random.Generator:
    """A numpy generator seeded from Paddle's global generator (`paddle.seed`), for
    what Paddle draws with `paddle.randperm` (`random_split`)."""
    from pullback.frontend.random import default_generator

    return np.random.default_rng(default_generator().next_seed())


class _NoLength(ValueError, TypeError):
    """`len()` of an iterable-dataset loader: a ValueError as in Paddle, and a
    TypeError so that `list(loader)` treats it as "length unknown"."""


def random_split(dataset: Dataset, lengths: Sequence[int | float], generator: Any = None) -> list[Subset]:
    """Split `dataset` into non-overlapping random `Subset`s of the given `lengths`
    (counts summing to `len(dataset)`, or fractions summing to 1, the remainder
    handed out one by one as Paddle does)."""
    n = len(dataset)
    lengths = list(lengths)
    if lengths and all(isinstance(x, float) and 0 <= x <= 1 for x in lengths) and math.isclose(sum(lengths), 1):
        counts = [math.floor(n * f) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    rng = _paddle_generator() if generator is None else _generator(generator)
    perm = rng.permutation(n).tolist()
    out, start = [], 0
    for length in lengths:
        out.append(Subset(dataset, perm[start : start + int(length)]))
        start += int(length)
    return out


def get_worker_info() -> None:
    """Information about the current loader worker: None (no worker processes)."""
    return


# ------------------------------------------------------------------------ samplers


class SamplerArgumentError(ValueError, AssertionError):
    """A sampler's or DataLoader's invalid argument: a ValueError, and the
    AssertionError that Paddle raises (its checks are asserts)."""


class Sampler:
    """Iterates the indices of a dataset (`paddle.io.Sampler`)."""

    def __init__(self, data_source: Any = None) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self.data_source)


class SequenceSampler(Sampler):
    """Indices `0, 1, ..., len(data_source) - 1`."""

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))


class RandomSampler(Sampler):
    """Indices in random order (`replacement` draws `num_samples` with repetition)."""

    def __init__(self, data_source: Any, replacement: bool = False, num_samples: int | None = None,
                 generator: Any = None) -> None:
        super().__init__(data_source)
        if not isinstance(replacement, bool):
            raise TypeError(f"RandomSampler: replacement should be a boolean value, got {replacement!r}")
        self.replacement, self._num_samples, self.generator = replacement, num_samples, generator
        if not replacement and self.num_samples > len(data_source):
            # As in Paddle: without replacement, num_samples indices of one permutation.
            raise ValueError(
                "RandomSampler: num_samples should be smaller than or equal to the length of data_source "
                f"when replacement is False, got {self.num_samples} > {len(data_source)}"
            )
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(f"RandomSampler: num_samples should be a positive integer, got {self.num_samples}")

    @property
    def num_samples(self) -> int:
        """How many indices one pass yields."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        if self.generator is not None and hasattr(self.generator, "__next__"):
            # Paddle's `generator` is an iterator of indices: up to num_samples of them.
            return itertools.islice(self.generator, self.num_samples)
        rng = _generator(self.generator)
        n = len(self.data_source)
        if self.replacement:
            return iter(rng.randint(0, n, self.num_samples).tolist() if hasattr(rng, "randint")
                        else rng.integers(0, n, self.num_samples).tolist())
        return iter(rng.permutation(n)[: self.num_samples].tolist())

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in random order."""

    def __init__(self, indices: Sequence[int], generator: Any = None) -> None:
        super().__init__(indices)
        if len(indices) == 0:
            raise ValueError("SubsetRandomSampler: the length of `indices` should be greater than 0")
        self.indices, self.generator = list(indices), generator

    def __iter__(self) -> Iterator[int]:
        rng = _generator(self.generator)
        return iter(self.indices[i] for i in rng.permutation(len(self.indices)))

    def __len__(self) -> int:
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """`num_samples` indices drawn with probabilities proportional to `weights`."""

    def __init__(self, weights: Sequence[float], num_samples: int, replacement: bool = True) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples <= 0:
            raise ValueError("WeightedRandomSampler: num_samples should be a positive integer")
        if not isinstance(replacement, bool):
            raise ValueError("WeightedRandomSampler: replacement should be a boolean value")
        super().__init__(None)
        self.weights = np.asarray(weights, dtype=np.float64)
        self.num_samples, self.replacement = num_samples, replacement

    def __iter__(self) -> Iterator[int]:
        # As in Paddle, the weights are checked when sampling (an AssertionError, which
        # is also a ValueError here).
        w = self.weights
        if w.ndim != 1 or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
            raise SamplerArgumentError(
                "WeightedRandomSampler: weights should be a 1-D array of finite non-negative numbers, "
                "not all zero"
            )
        if not self.replacement and self.num_samples > int((w > 0).sum()):
            raise SamplerArgumentError(
                "WeightedRandomSampler: the number of positive weights is less than num_samples "
                "when replacement is False"
            )
        rng = _generator()
        idx = rng.choice(len(self.weights), self.num_samples, self.replacement, self.weights / self.weights.sum())
        return iter(idx.tolist())

    def __len__(self) -> int:
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of `batch_size` indices from `sampler`, or from a sequential or random
    sampler over `dataset` (`shuffle`); `drop_last` drops a short final batch."""

    def __init__(self, dataset: Any = None, sampler: Sampler | None = None, shuffle: bool = False,
                 batch_size: int = 1, drop_last: bool = False) -> None:
        if isinstance(dataset, Sampler) and isinstance(sampler, int) and not isinstance(sampler, bool):
            # torch's positional order `BatchSampler(sampler, batch_size, drop_last)`.
            dataset, sampler, batch_size, drop_last, shuffle = None, dataset, sampler, bool(shuffle), False
        if dataset is None:
            if sampler is None:
                raise SamplerArgumentError("BatchSampler: either dataset or sampler should be set")
            if not isinstance(sampler, (Sampler, Iterable)):
                raise TypeError(f"BatchSampler: sampler should be a Sampler, got {type(sampler).__name__}")
            if shuffle:
                raise SamplerArgumentError("BatchSampler: shuffle should be False when sampler is set")
            self.sampler = sampler
        else:
            if isinstance(dataset, IterableDataset):
                raise ValueError("BatchSampler: dataset should not be an IterableDataset")
            if sampler is not None:
                raise SamplerArgumentError("BatchSampler: should not set both dataset and sampler")
            if not isinstance(shuffle, bool):
                raise TypeError(f"BatchSampler: shuffle should be a boolean value, got {shuffle!r}")
            self.sampler = RandomSampler(dataset) if shuffle else SequenceSampler(dataset)
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError(f"BatchSampler: batch_size should be a positive integer, got {batch_size!r}")
        if not isinstance(drop_last, bool):
            raise TypeError(f"BatchSampler: drop_last should be a boolean value, got {drop_last!r}")
        self.batch_size, self.shuffle, self.drop_last = batch_size, shuffle, drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for idx in self.sampler:
            batch.append(int(idx))
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


class DistributedBatchSampler(BatchSampler):
    """Batches of this rank's share of the dataset (`paddle.io.DistributedBatchSampler`).

    As in Paddle, the indices are padded (repeating the first ones) to a multiple of
    the number of ranks, optionally shuffled with the epoch as seed (the same order on
    every rank), and cut into chunks of `batch_size * num_replicas`: rank r takes the
    r-th `batch_size` indices of each chunk (and its equal part of the last, shorter
    chunk), so the ranks' batches of one step, concatenated in rank order, are one
    batch of `batch_size * num_replicas` consecutive samples.  `num_replicas` and
    `rank` default to the process group's (`paddle.distributed`; 1 and 0 when the
    program runs as one process)."""

    def __init__(self, dataset: Any, batch_size: int, num_replicas: int | None = None,
                 rank: int | None = None, shuffle: bool = False, drop_last: bool = False) -> None:
        from pullback.runtime.process_group import get_rank, get_world_size

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
        self.dataset, self.batch_size, self.shuffle, self.drop_last = dataset, batch_size, shuffle, drop_last
        self.epoch = 0
        self.num_samples = math.ceil(len(dataset) / self.nranks)
        self.total_size = self.num_samples * self.nranks
        self.sampler = None  # type: ignore[assignment]

    def set_epoch(self, epoch: int) -> None:
        """Seed the next shuffle with `epoch` (call it every epoch, on every rank)."""
        self.epoch = int(epoch)

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
        n = self.num_samples
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


# ------------------------------------------------------------------------ collating


def _is_tensor(x: Any) -> bool:
    from pullback.frontend.eager import Tensor

    return isinstance(x, Tensor)


def default_collate_fn(batch: Sequence[Any]) -> Any:
    """Stack a list of samples field by field (`paddle.io.dataloader.collate.default_collate_fn`):
    numpy arrays and Tensors along a new first axis, numbers into an array, strings
    into a list; mappings and sequences recursively."""
    sample = batch[0]
    if isinstance(sample, np.ndarray):
        return np.stack(batch, axis=0)
    if _is_tensor(sample):
        from pullback.frontend.eager import to_tensor

        return to_tensor(np.stack([t.numpy() for t in batch], axis=0))
    if isinstance(sample, (bool, numbers.Number, np.number)):
        return np.array(batch)
    if isinstance(sample, (str, bytes)):
        return list(batch)
    if isinstance(sample, Mapping):
        return {key: default_collate_fn([d[key] for d in batch]) for key in sample}
    if isinstance(sample, Sequence):
        n = len(sample)
        if not all(len(s) == n for s in batch):
            raise RuntimeError("fields number not same among samples in a batch")
        return [default_collate_fn(list(fields)) for fields in zip(*batch)]
    raise TypeError(
        "batch data can only contains: tensor, numpy.ndarray, dict, list, number, "
        f"but got {type(sample)}"
    )


def default_convert_fn(batch: Any) -> Any:
    """Convert one sample without batching (used when `batch_size=None`)."""
    if isinstance(batch, (np.ndarray, str, bytes, numbers.Number)) or _is_tensor(batch):
        return batch
    if isinstance(batch, Mapping):
        return {k: default_convert_fn(v) for k, v in batch.items()}
    if isinstance(batch, Sequence):
        return [default_convert_fn(v) for v in batch]
    return batch


def _to_tensors(x: Any) -> Any:
    """numpy arrays (at any depth of lists and dicts) as eager Tensors."""
    from pullback.frontend.eager import to_tensor

    if isinstance(x, np.ndarray):
        if x.dtype.kind in "US" or x.dtype == object:
            return x
        return to_tensor(x)
    if isinstance(x, Mapping):
        return {k: _to_tensors(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_to_tensors(v) for v in x]
    return x


# ------------------------------------------------------------------------ loader


class DataLoader:
    """Iterate a dataset in batches (`paddle.io.DataLoader`), in this process.

    `batch_sampler` overrides `batch_size`/`shuffle`/`drop_last`; `batch_size=None`
    yields single samples; `collate_fn` turns a list of samples into a batch.
    `feed_list` (static mode) names the fed variables, in the order of the sample's
    fields."""

    def __init__(self, dataset: Any, feed_list: Sequence[Any] | None = None, places: Any = None,
                 return_list: bool = True, batch_sampler: Any = None, batch_size: int | None = 1,
                 shuffle: bool = False, drop_last: bool = False,
                 collate_fn: Callable[[list[Any]], Any] | None = None, num_workers: int = 0,
                 use_buffer_reader: bool = True, prefetch_factor: int = 2,
                 use_shared_memory: bool = True, timeout: int = 0,
                 worker_init_fn: Callable[[int], None] | None = None,
                 persistent_workers: bool = False) -> None:
        if not isinstance(num_workers, int) or num_workers < 0:
            raise SamplerArgumentError(f"DataLoader: num_workers should be a non-negative integer, got {num_workers!r}")
        if num_workers > 0:
            raise NotImplementedError(
                "DataLoader: num_workers > 0 (worker processes) is not supported by pullback; "
                "use num_workers=0"
            )
        if timeout < 0:
            raise SamplerArgumentError("DataLoader: timeout should be a non-negative value")
        self.dataset = dataset
        self.feed_list = list(feed_list) if feed_list is not None else None
        self.places = places
        self.return_list = bool(return_list)
        self.collate_fn = collate_fn
        self.num_workers = num_workers
        self._iterable = isinstance(dataset, IterableDataset)
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or drop_last:
                raise SamplerArgumentError(
                    "DataLoader: batch_size/shuffle/drop_last should not be set when batch_sampler is given"
                )
            if self._iterable:
                raise ValueError("DataLoader: IterableDataset does not support batch_sampler")
            self.batch_sampler = batch_sampler
            self.batch_size = getattr(batch_sampler, "batch_size", None)
        elif batch_size is None:
            # As Paddle, drop_last means nothing without batching and is ignored; a
            # shuffle Paddle would silently skip is an error here.
            if shuffle:
                raise ValueError("DataLoader: shuffle needs a batch_size (batch_size=None yields the samples as "
                                 "they are, in order)")
            self.batch_sampler = None
            self.batch_size = None
        else:
            if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
                raise ValueError(f"DataLoader: batch_size should be None or a positive integer, got {batch_size!r}")
            if self._iterable:
                if shuffle:
                    raise ValueError("DataLoader: IterableDataset does not support shuffle")
                self.batch_sampler = None
            else:
                self.batch_sampler = BatchSampler(dataset, shuffle=shuffle, batch_size=batch_size,
                                                  drop_last=drop_last)
            self.batch_size = batch_size
        self.drop_last = drop_last
        self.auto_collate_batch = self.batch_size is not None

    def __len__(self) -> int:
        if self._iterable:
            raise _NoLength("DataLoader: the length of an IterableDataset loader is not known")
        if self.batch_sampler is None:
            return len(self.dataset)
        return len(self.batch_sampler)

    def _samples(self) -> Iterator[Any]:
        """Batches of raw samples (lists), or single samples when not batching."""
        if self._iterable:
            if self.batch_size is None:
                yield from self.dataset
                return
            batch: list[Any] = []
            for s in self.dataset:
                batch.append(s)
                if len(batch) == self.batch_size:
                    yield batch
                    batch = []
            if batch and not self.drop_last:
                yield batch
            return
        if self.batch_sampler is None:
            for i in range(len(self.dataset)):
                yield self.dataset[i]
            return
        for indices in self.batch_sampler:
            yield [self.dataset[i] for i in indices]

    def _finish(self, data: Any) -> Any:
        """A collated batch in the form this mode yields."""
        if self.feed_list is not None and not self.return_list:
            fields = data if isinstance(data, (list, tuple)) else [data]
            if len(fields) != len(self.feed_list):
                raise ValueError(
                    f"DataLoader: a batch has {len(fields)} fields but feed_list has "
                    f"{len(self.feed_list)} variables"
                )
            feed = {}
            for var, value in zip(self.feed_list, fields):
                name = var if isinstance(var, str) else var.name
                arr = np.asarray(value.numpy() if _is_tensor(value) else value)
                dtype = None if isinstance(var, str) else getattr(var, "dtype", None)
                want = None if dtype is None else pd.DTYPE_BY_NAME[f"{dtype}"].numpy  # (bfloat16: uint16 bits)
                feed[name] = host_cast(arr, want) if want is not None and arr.dtype != want else arr
            return [feed]
        if core.in_dynamic_mode() and self.return_list:
            return _to_tensors(data)  # the sample's structure, numpy arrays as Tensors
        return data

    def __iter__(self) -> Iterator[Any]:
        for item in self._samples():
            if self.auto_collate_batch:
                data = (self.collate_fn or default_collate_fn)(item)
            else:
                data = self.collate_fn(item) if self.collate_fn else default_convert_fn(item)
            yield self._finish(data)

    def __call__(self) -> Iterator[Any]:
        """`for data in loader():` (Paddle's static-mode spelling)."""
        return iter(self)

    @staticmethod
    def from_generator(*args: Any, **kwargs: Any) -> Any:
        """`paddle.base.io.DataLoader.from_generator` (see `frontend/reader.py`).
        Paddle 2.x had it here too, where much code still calls it; Paddle 3 keeps it
        only on the `base.io` class."""
        from pullback.frontend.reader import DataLoader as GeneratorFactory

        return GeneratorFactory.from_generator(*args, **kwargs)


__all__ = [
    "BatchSampler",
    "ChainDataset",
    "ComposeDataset",
    "ConcatDataset",
    "DataLoader",
    "Dataset",
    "DistributedBatchSampler",
    "IterableDataset",
    "RandomSampler",
    "Sampler",
    "SequenceSampler",
    "Subset",
    "SubsetRandomSampler",
    "TensorDataset",
    "WeightedRandomSampler",
    "default_collate_fn",
    "default_convert_fn",
    "get_worker_info",
    "random_split",
]
