"""Ports of PaddlePaddle's own sampler unit tests that use the public API, rewritten
for pytest (PaddlePaddle/Paddle, Apache-2.0).

* `test/legacy_test/test_batch_sampler.py`: `Sampler` (abstract), `SequenceSampler`,
  `RandomSampler` (num_samples, replacement, a generator, the num_samples error),
  `SubsetRandomSampler`, `BatchSampler` over a dataset, a sampler, positional
  arguments and a plain iterable (with drop_last and shuffle), the shuffle-with-sampler
  error, and `WeightedRandomSampler` (with and without replacement, its errors).
* `test/legacy_test/test_distributed_batch_sampler.py` (Paddle's test of the hapi
  `DistributedBatchSampler`, which only iterates): `io.DistributedBatchSampler` with
  shuffle on one rank, and on two ranks with drop_last, checked here to give each
  rank disjoint batches of 4 covering the padded dataset.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from pullback.io import (
    BatchSampler,
    DistributedBatchSampler,
    Dataset,
    RandomSampler,
    Sampler,
    SequenceSampler,
    SubsetRandomSampler,
    WeightedRandomSampler,
)


@pytest.fixture(autouse=True)
def _eager(dynamic_mode):
    """Eager mode whatever an earlier test left (pullback's own PyLayer tests end static)."""
    yield


IMAGE_SIZE = 32


class RandomDataset(Dataset):
    def __init__(self, sample_num: int, class_num: int) -> None:
        self.sample_num = sample_num
        self.class_num = class_num

    def __getitem__(self, idx: int):
        rng = np.random.RandomState(idx)
        image = rng.random_sample([IMAGE_SIZE]).astype("float32")
        label = rng.randint(0, self.class_num - 1, (1,)).astype("int64")
        return image, label

    def __len__(self) -> int:
        return self.sample_num


def test_sampler_is_abstract() -> None:
    with pytest.raises(NotImplementedError):
        iter(Sampler(RandomDataset(100, 10)))


def test_sequence_sampler() -> None:
    sampler = SequenceSampler(RandomDataset(100, 10))
    assert len(sampler) == 100
    assert list(sampler) == list(range(100))


def test_random_sampler() -> None:
    sampler = RandomSampler(RandomDataset(100, 10))
    assert len(sampler) == 100
    assert sorted(sampler) == list(range(100))


@pytest.mark.parametrize("replacement,num", [(True, 50), (False, 80)])
def test_random_sampler_num_samples(replacement: bool, num: int) -> None:
    sampler = RandomSampler(RandomDataset(100, 10), num_samples=num, replacement=replacement)
    assert len(sampler) == num
    got = list(sampler)
    assert len(got) == num and all(0 <= i < 100 for i in got)
    if not replacement:
        assert len(set(got)) == num


def test_random_sampler_generator() -> None:
    sampler = RandomSampler(RandomDataset(100, 10), generator=iter(range(60)))
    assert len(sampler) == 100
    assert sorted(sampler) == list(range(60))
    sampler = RandomSampler(RandomDataset(100, 10), generator=iter(range(60)), num_samples=50, replacement=True)
    assert len(sampler) == 50
    assert sorted(sampler) == list(range(50))


def test_random_sampler_num_samples_error() -> None:
    with pytest.raises(ValueError):
        RandomSampler(RandomDataset(100, 10), False, 120)


def test_subset_random_sampler() -> None:
    indices = list(range(100))
    random.shuffle(indices)
    indices = indices[:30]
    sampler = SubsetRandomSampler(indices)
    assert len(sampler) == len(indices)
    assert sorted(sampler) == sorted(indices)
    with pytest.raises(ValueError):
        SubsetRandomSampler([])


def _dataset_bs(bs: int, shuffle: bool, drop_last: bool) -> BatchSampler:
    return BatchSampler(dataset=RandomDataset(1000, 10), batch_size=bs, shuffle=shuffle, drop_last=drop_last)


def _sampler_bs(bs: int, shuffle: bool, drop_last: bool) -> BatchSampler:
    return BatchSampler(sampler=SequenceSampler(RandomDataset(1000, 10)), batch_size=bs, drop_last=drop_last)


def _positional_bs(bs: int, shuffle: bool, drop_last: bool) -> BatchSampler:
    return BatchSampler(SequenceSampler(RandomDataset(1000, 10)), bs, drop_last)


def _iterable_bs(bs: int, shuffle: bool, drop_last: bool) -> BatchSampler:
    return BatchSampler(sampler=range(1000), batch_size=bs, drop_last=drop_last)


@pytest.mark.parametrize("make", [_dataset_bs, _sampler_bs, _positional_bs, _iterable_bs])
@pytest.mark.parametrize("shuffle,drop_last", [(False, False), (False, True), (True, True)])
def test_batch_sampler(make, shuffle: bool, drop_last: bool) -> None:
    bs = make(32, shuffle, drop_last)
    assert len(bs) == (1000 + int(not drop_last) * 31) // 32
    batches = list(bs)
    assert len(batches) == len(bs)
    flat = [i for b in batches for i in b]
    if not shuffle or make is not _dataset_bs:
        # Only a dataset-built BatchSampler shuffles; a given sampler keeps its order.
        assert flat == list(range(len(flat)))
    else:
        assert len(set(flat)) == len(flat) == 992


def test_batch_sampler_shuffle_with_sampler_raises() -> None:
    with pytest.raises(AssertionError):
        BatchSampler(sampler=RandomSampler(RandomDataset(1000, 10)), shuffle=True, batch_size=32, drop_last=True)


def _probs(total: int, pos: int) -> np.ndarray:
    probs = np.zeros((total,), "float32")
    probs[:pos] = np.random.random((pos,)).astype("float32")
    np.random.shuffle(probs)
    return probs


def test_weighted_random_sampler() -> None:
    probs = _probs(20, 10)
    sampler = WeightedRandomSampler(probs, 30, True)
    assert len(sampler) == 30
    assert all(probs[i] > 0 for i in sampler)
    sampler = WeightedRandomSampler(probs, 10, False)
    assert len(sampler) == 10
    got = list(sampler)
    assert all(probs[i] > 0 for i in got) and len(set(got)) == 10


@pytest.mark.parametrize("probs,num,replacement", [
    (np.zeros((10,), "float32"), 10, True),  # all zeros
    (None, 10, False),  # fewer positive weights than samples without replacement
    (-np.ones((10,), "float32"), 10, True),  # negative weights
])
def test_weighted_random_sampler_asserts(probs, num: int, replacement: bool) -> None:
    sampler = WeightedRandomSampler(_probs(10, 5) if probs is None else probs, num, replacement)
    with pytest.raises(AssertionError):
        list(sampler)


@pytest.mark.parametrize("num,replacement", [(2.3, True), (-1, True), (5, 5)])
def test_weighted_random_sampler_raises(num, replacement) -> None:
    with pytest.raises(ValueError):
        WeightedRandomSampler(_probs(10, 5), num, replacement)


class FakeDataset:
    def __getitem__(self, index):
        return index

    def __len__(self) -> int:
        return 10


def test_distributed_batch_sampler() -> None:
    batches = list(DistributedBatchSampler(FakeDataset(), batch_size=1, shuffle=True))
    assert sorted(i for b in batches for i in b) == list(range(10))
    ranks = [list(DistributedBatchSampler(FakeDataset(), batch_size=4, num_replicas=2, rank=r, shuffle=True,
                                          drop_last=True)) for r in (0, 1)]
    for batches in ranks:
        assert all(len(b) == 4 for b in batches) and len(batches) == 1
    assert not set(ranks[0][0]) & set(ranks[1][0])
