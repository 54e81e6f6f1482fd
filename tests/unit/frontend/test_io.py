"""paddle.io: datasets, samplers, random_split and the DataLoader in eager mode
(Tensors) and static mode (feeds for Executor.run)."""

from __future__ import annotations

import numpy as np
import pullback as paddle
import pytest
from pullback.frontend import core, unique_name
from pullback.frontend.framework import Program, program_guard
from pullback.io import (
    BatchSampler,
    ComposeDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    DistributedBatchSampler,
    IterableDataset,
    RandomSampler,
    Subset,
    TensorDataset,
    random_split,
)


class Squares(Dataset):
    def __init__(self, n: int) -> None:
        self.n = n

    def __getitem__(self, i: int):
        return np.full([2], i * i, np.float32), np.array([i % 3], np.int64)

    def __len__(self) -> int:
        return self.n


class Stream(IterableDataset):
    def __iter__(self):
        for i in range(5):
            yield np.array([i], np.float32)


def test_loader_batches_eager(dynamic_mode):
    loader = DataLoader(Squares(10), batch_size=4)
    batches = list(loader)
    assert len(loader) == 3 and len(batches) == 3
    x, y = batches[0]
    assert isinstance(x, paddle.Tensor) and x.shape == [4, 2] and y.dtype == "int64"
    np.testing.assert_array_equal(x.numpy()[:, 0], [0, 1, 4, 9])
    assert batches[-1][0].shape == [2, 2]
    assert len(list(DataLoader(Squares(10), batch_size=4, drop_last=True))) == 2


def test_loader_shuffle_covers_everything_and_repeats_with_seed(dynamic_mode):
    def order():
        np.random.seed(3)  # Paddle's samplers draw from numpy's global state
        return np.concatenate([x.numpy()[:, 0] for x, _ in DataLoader(Squares(9), batch_size=2, shuffle=True)])

    a, b = order(), order()
    np.testing.assert_array_equal(np.sort(a), np.arange(9) ** 2)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, np.arange(9) ** 2)


def test_collate_fn_dicts_and_no_batching(dynamic_mode):
    class Dicts(Dataset):
        def __getitem__(self, i):
            return {"x": np.array([i], np.float32), "tag": f"s{i}", "n": i}

        def __len__(self):
            return 3

    batch = next(iter(DataLoader(Dicts(), batch_size=3)))
    assert batch["tag"] == ["s0", "s1", "s2"] and batch["n"].numpy().tolist() == [0, 1, 2]
    summed = next(iter(DataLoader(Squares(4), batch_size=4, collate_fn=lambda b: np.sum([s[0] for s in b], axis=0))))
    np.testing.assert_array_equal(summed.numpy(), [14, 14])
    single = list(DataLoader(Squares(2), batch_size=None))
    assert single[1][0].shape == [2]


def test_iterable_dataset(dynamic_mode):
    batches = list(DataLoader(Stream(), batch_size=2))
    assert [b.shape for b in batches] == [[2, 1], [2, 1], [1, 1]]
    with pytest.raises(ValueError, match="does not support shuffle"):
        DataLoader(Stream(), batch_size=2, shuffle=True)
    with pytest.raises(ValueError, match="not known"):
        len(DataLoader(Stream(), batch_size=2))


def test_tensor_dataset_subset_split_and_compose(dynamic_mode):
    data = TensorDataset([paddle.to_tensor(np.arange(12.0).reshape(6, 2)), paddle.to_tensor(np.arange(6))])
    assert len(data) == 6
    x, y = data[4]
    assert x.numpy().tolist() == [8.0, 9.0] and int(y) == 4
    with pytest.raises(ValueError, match="1st dimension"):
        TensorDataset([paddle.to_tensor(np.zeros((2, 1))), paddle.to_tensor(np.zeros(3))])
    sub = Subset(Squares(10), [7, 2])
    assert len(sub) == 2 and sub[0][0][0] == 49
    a, b = random_split(Squares(10), [6, 4])
    assert sorted(a.indices + b.indices) == list(range(10))
    paddle.seed(5)
    first = random_split(Squares(10), [6, 4])[0].indices
    paddle.seed(5)
    assert random_split(Squares(10), [6, 4])[0].indices == first
    c, d = random_split(Squares(10), [0.7, 0.3])
    assert (len(c), len(d)) == (7, 3)
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(Squares(10), [3, 3])
    both = ComposeDataset([Squares(3), Squares(3)])
    assert len(both[1]) == 4
    assert len(ConcatDataset([Squares(3), Squares(2)])) == 5
    assert ConcatDataset([Squares(3), Squares(2)])[4][0][0] == 1


def test_samplers():
    assert list(BatchSampler(Squares(5), batch_size=2)) == [[0, 1], [2, 3], [4]]
    assert list(BatchSampler(sampler=range(5), batch_size=3, drop_last=True)) == [[0, 1, 2]]
    assert sorted(RandomSampler(Squares(6))) == list(range(6))
    dist = DistributedBatchSampler(Squares(5), batch_size=2)
    assert list(dist) == [[0, 1], [2, 3], [4]] and len(dist) == 3
    half = DistributedBatchSampler(Squares(5), batch_size=2, num_replicas=2, rank=1)
    # Paddle's sharding: indices padded to [0..4, 0], rank 1 takes the second batch of
    # each chunk of 2*2 ([2, 3]) and its half of the short last chunk ([4, 0] -> [0]).
    assert list(half) == [[2, 3], [0]]
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        BatchSampler(Squares(5), batch_size=0)
    with pytest.raises(NotImplementedError, match="num_workers"):
        DataLoader(Squares(5), num_workers=2)


def test_static_feed_list():
    core.enable_static()
    try:
        main, startup = Program(), Program()
        with program_guard(main, startup), unique_name.guard():
            x = paddle.static.data("x", [-1, 2], "float32")
            y = paddle.static.data("y", [-1, 1], "int64")
            s = paddle.sum(x)
        loader = DataLoader(Squares(5), feed_list=[x, y], batch_size=5, return_list=False)
        exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
        (feed,) = [d for d in loader()]
        assert isinstance(feed, list) and set(feed[0]) == {"x", "y"}
        out, = exe.run(main, feed=feed, fetch_list=[s])
        assert float(out) == 2 * sum(i * i for i in range(5))
    finally:
        core.disable_static()
