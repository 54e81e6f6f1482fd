"""Ports of PaddlePaddle's own Dataset / DataLoader unit tests that use the public
API, rewritten for pytest (PaddlePaddle/Paddle, Apache-2.0).  pullback has no worker
processes: each case runs with num_workers=0, and the num_workers > 0 variants are
skipped with that reason.

* `test/legacy_test/test_dataloader_dataset.py`: the abstract `Dataset`, a
  DataLoader over a transformed image dataset on the CPU (MNIST replaced by random
  28x28x1 images through CenterCrop/RandomResizedCrop/Normalize/ToTensor; Normalize
  is told the HWC layout: Paddle's default CHW works there only because cv2's resize
  drops the single channel),
  `random_split` by fractions and its error.
* `test/legacy_test/test_multiprocess_dataloader_dataset.py`: `TensorDataset`,
  `ComposeDataset`, `random_split` by lengths and its errors, `Subset`,
  `ChainDataset`, a dataset mixing numpy and Tensors, a dataset of mixed Python
  values (floats, strings, lists, dicts) collated, a single-field dataset (map and
  iterable), drop_last step counts (map and iterable) and `ConcatDataset` (with its
  IterableDataset error).
* `test/legacy_test/test_multiprocess_dataloader_exception.py`: the DataLoader argument
  errors and the abstract datasets' errors.
* `test/legacy_test/test_multiprocess_dataloader_dynamic.py` (with its sizes from
  `test_multiprocess_dataloader_static.py`): an eager training loop of a constant-
  initialised FC net over a DataLoader of samples (batch_size 8, drop_last) and over a
  dataset of ready batches (`batch_size=None`): the loader's length, the steps per
  epoch, and (in place of Paddle's 0-vs-2-workers comparison) the same losses from
  both loaders.
"""

from __future__ import annotations

import numpy as np
import pytest

import pullback as paddle
from pullback.io import (
    ChainDataset,
    ComposeDataset,
    ConcatDataset,
    DataLoader,
    Dataset,
    IterableDataset,
    TensorDataset,
)
from pullback.vision import transforms


@pytest.fixture(autouse=True)
def _eager(dynamic_mode):
    """Eager mode whatever an earlier test left (pullback's own PyLayer tests end static)."""
    yield


IMAGE_SIZE = 32
_NO_WORKERS = pytest.mark.skip(reason="pullback's DataLoader has no worker processes (num_workers must be 0)")


class RandomDataset(Dataset):
    def __init__(self, sample_num: int) -> None:
        self.sample_num = sample_num

    def __len__(self) -> int:
        return self.sample_num

    def __getitem__(self, idx: int):
        rng = np.random.RandomState(idx)
        return rng.random_sample([IMAGE_SIZE]).astype("float32"), rng.randint(0, 9, (1,)).astype("int64")


class RandomIterableDataset(IterableDataset):
    def __init__(self, sample_num: int) -> None:
        self.sample_num = sample_num

    def __iter__(self):
        for i in range(self.sample_num):
            rng = np.random.RandomState(i)
            yield rng.random_sample([IMAGE_SIZE]).astype("float32"), rng.randint(0, 9, (1,)).astype("int64")


def test_dataset_abstract() -> None:
    dataset = Dataset()
    with pytest.raises(NotImplementedError):
        dataset[0]
    with pytest.raises(NotImplementedError):
        len(dataset)


class FakeImages(Dataset):
    """MNIST-like: [28, 28, 1] uint8 images through a transform, int64 labels."""

    def __init__(self, n: int, transform) -> None:
        rng = np.random.RandomState(0)
        self.images = rng.randint(0, 256, (n, 28, 28, 1)).astype("uint8")
        self.labels = rng.randint(0, 10, (n, 1)).astype("int64")
        self.transform = transform

    def __getitem__(self, idx):
        return self.transform(self.images[idx]), self.labels[idx]

    def __len__(self) -> int:
        return len(self.images)


@pytest.mark.parametrize("num_workers", [0, pytest.param(1, marks=_NO_WORKERS)])
def test_dataloader_output_place(num_workers: int) -> None:
    paddle.set_device("cpu")
    tf = transforms.Compose([transforms.CenterCrop(20), transforms.RandomResizedCrop(14),
                             transforms.Normalize(data_format="HWC"), transforms.ToTensor()])
    loader = DataLoader(FakeImages(40, tf), batch_size=32, num_workers=num_workers, shuffle=True)
    image, label = next(iter(loader))
    assert image.place.is_cpu_place() and label.place.is_cpu_place()
    assert list(image.shape) == [32, 1, 14, 14] and list(label.shape) == [32, 1]


def _check_split(parts, sizes) -> None:
    assert [len(p) for p in parts] == sizes
    left = list(range(5))
    for p in parts:
        for v in p:
            left.remove(v)
    assert left == []


def test_random_split() -> None:
    paddle.seed(1)
    _check_split(paddle.io.random_split(range(5), [1, 4]), [1, 4])
    _check_split(paddle.io.random_split(range(5), [0.3, 0.0, 0.7]), [2, 0, 3])


@pytest.mark.parametrize("lengths", [[3, 8], [8], [], [-0.2, 1.2]])
def test_random_split_errors(lengths) -> None:
    paddle.seed(1)
    with pytest.raises(ValueError):
        paddle.io.random_split(range(5), lengths)


def test_tensor_dataset() -> None:
    paddle.seed(1)
    input_np = np.random.random([16, 3, 4]).astype("float32")
    label_np = np.random.random([16, 1]).astype("int32")
    dataset = TensorDataset([paddle.to_tensor(input_np), paddle.to_tensor(label_np)])
    assert len(dataset) == 16
    loader = DataLoader(dataset, places=paddle.CPUPlace(), num_workers=0, batch_size=1, drop_last=True)
    n = 0
    for i, (x, y) in enumerate(loader()):
        assert len(x) == 1 and len(y) == 1
        assert list(x.shape) == [1, 3, 4] and list(y.shape) == [1, 1]
        assert isinstance(x, paddle.Tensor) and isinstance(y, paddle.Tensor)
        np.testing.assert_allclose(x.numpy(), input_np[i:i + 1])
        np.testing.assert_allclose(y.numpy(), label_np[i:i + 1])
        n += 1
    assert n == 16


def test_compose_dataset() -> None:
    d1, d2 = RandomDataset(10), RandomDataset(10)
    dataset = ComposeDataset([d1, d2])
    assert len(dataset) == 10
    for i in range(len(dataset)):
        x1, y1, x2, y2 = dataset[i]
        for got, want in zip((x1, y1, x2, y2), (*d1[i], *d2[i]), strict=True):
            np.testing.assert_allclose(got, want)


def test_subset_dataset() -> None:
    input_np = np.random.random([5, 3, 4]).astype("float32")
    label_np = np.random.random([5, 1]).astype("int32")
    dataset = TensorDataset([paddle.to_tensor(input_np), paddle.to_tensor(label_np)])
    even, odd = paddle.io.Subset(dataset, [0, 2, 4]), paddle.io.Subset(dataset, [1, 3])
    assert len(dataset) == 5

    def labels(ds):
        out = []
        for x, y in DataLoader(ds, num_workers=0, batch_size=1, drop_last=True)():
            assert list(x.shape) == [1, 3, 4] and list(y.shape) == [1, 1]
            out.append(y.numpy().item())
        return out

    everything = labels(dataset)
    for v in labels(even):
        everything.remove(v)
    assert labels(odd) == everything


def test_chain_dataset() -> None:
    d1, d2 = RandomIterableDataset(10), RandomIterableDataset(10)
    samples = list(iter(ChainDataset([d1, d2])))
    assert len(samples) == 20
    for (x, y), (sx, sy) in zip([*iter(d1), *iter(d2)], samples, strict=True):
        np.testing.assert_allclose(x, sx)
        np.testing.assert_allclose(y, sy)


class NumpyMixTensorDataset(Dataset):
    def __len__(self) -> int:
        return 16

    def __getitem__(self, idx):
        rng = np.random.RandomState(idx)
        image = rng.random_sample([IMAGE_SIZE]).astype("float32")
        return paddle.to_tensor(image, place=paddle.CPUPlace()), rng.randint(0, 9, (1,)).astype("int64")


def test_numpy_mix_tensor_dataset() -> None:
    for x, y in DataLoader(NumpyMixTensorDataset(), num_workers=0, batch_size=1, drop_last=True)():
        assert list(x.shape) == [1, IMAGE_SIZE] and list(y.shape) == [1, 1]
        assert isinstance(x, paddle.Tensor) and isinstance(y, paddle.Tensor)


class ComplexDataset(Dataset):
    def __len__(self) -> int:
        return 16

    def __getitem__(self, idx):
        return (3.1, "abc", paddle.to_tensor(np.random.random([IMAGE_SIZE]).astype("float32")),
                [1, np.random.random([2]).astype("float32")],
                {"a": 2.0, "b": np.random.random([2]).astype("float32")})


@pytest.mark.parametrize("num_workers", [0, pytest.param(2, marks=_NO_WORKERS)])
def test_complex_dataset(num_workers: int) -> None:
    for data in DataLoader(ComplexDataset(), num_workers=num_workers, batch_size=2, drop_last=True)():
        assert len(data) == 5
        assert list(data[0].shape) == [2]
        assert isinstance(data[1], list) and data[1] == ["abc", "abc"]
        assert list(data[2].shape) == [2, IMAGE_SIZE]
        assert isinstance(data[3], list) and list(data[3][0].shape) == [2] and list(data[3][1].shape) == [2, 2]
        assert isinstance(data[4], dict)
        assert list(data[4]["a"].shape) == [2] and list(data[4]["b"].shape) == [2, 2]


class SingleFieldDataset(Dataset):
    def __len__(self) -> int:
        return 16

    def __getitem__(self, idx):
        return np.random.random((2, 3)).astype("float32")


class SingleFieldIterableDataset(IterableDataset):
    def __iter__(self):
        for _ in range(16):
            yield np.random.random((2, 3)).astype("float32")


@pytest.mark.parametrize("dataset", [SingleFieldDataset, SingleFieldIterableDataset])
@pytest.mark.parametrize("num_workers", [0, pytest.param(2, marks=_NO_WORKERS)])
def test_single_field(dataset, num_workers: int) -> None:
    n = 0
    for data in DataLoader(dataset(), num_workers=num_workers, batch_size=2, drop_last=True)():
        assert isinstance(data, paddle.Tensor) and list(data.shape) == [2, 2, 3]
        n += 1
    assert n == 8


@pytest.mark.parametrize("dataset", [RandomDataset, RandomIterableDataset])
@pytest.mark.parametrize("drop_last", [True, False])
def test_drop_last_steps(dataset, drop_last: bool) -> None:
    steps = (10 + (1 - int(drop_last)) * 2) // 3
    assert len(list(DataLoader(dataset(10), batch_size=3, drop_last=drop_last, num_workers=0))) == steps


def test_concat_dataset() -> None:
    result = ConcatDataset([[0], [1]])
    assert len(result) == 2 and result[0] == 0 and result[1] == 1
    result = ConcatDataset([[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]])
    assert len(result) == 10 and result[0] == 0 and result[5] == 5
    result = ConcatDataset([[0, 1, 2, 3, 4], [], [5, 6, 7, 8, 9]])
    assert len(result) == 10 and result[0] == 0 and result[5] == 5
    with pytest.raises(IndexError):
        ConcatDataset([[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]])[11]
    d1 = TensorDataset([paddle.rand((7, 3, 28, 28)), paddle.rand((7,))])
    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        ConcatDataset([d1, RandomIterableDataset(10), RandomIterableDataset(10)])


BATCH_SIZE, CLASS_NUM, EPOCH_NUM, SAMPLE_NUM = 8, 10, 2, 48


class SampleDataset(Dataset):
    def __len__(self) -> int:
        return SAMPLE_NUM

    def __getitem__(self, idx):
        rng = np.random.RandomState(idx)
        return rng.random_sample([IMAGE_SIZE]).astype("float32"), rng.randint(0, CLASS_NUM - 1, (1,)).astype("int64")


class BatchedDataset(Dataset):
    def __len__(self) -> int:
        return SAMPLE_NUM // BATCH_SIZE

    def __getitem__(self, idx):
        samples = [SampleDataset()[idx * BATCH_SIZE + i] for i in range(BATCH_SIZE)]
        return np.stack([s[0] for s in samples]), np.stack([s[1] for s in samples])


class SimpleFCNet(paddle.nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        w = paddle.ParamAttr(initializer=paddle.nn.initializer.Constant(value=0.8))
        b = paddle.ParamAttr(initializer=paddle.nn.initializer.Constant(value=0.5))
        layers, cin = [], IMAGE_SIZE
        for hidden in (10, 20, 30):
            layers += [paddle.nn.Linear(cin, hidden, weight_attr=w, bias_attr=b), paddle.nn.Tanh()]
            cin = hidden
        layers += [paddle.nn.Linear(cin, CLASS_NUM, weight_attr=w, bias_attr=b), paddle.nn.Softmax()]
        self._fcs = paddle.nn.Sequential(*layers)

    def forward(self, image):
        return self._fcs(image)


def _train_loop(batched: bool) -> tuple[list[int], np.ndarray]:
    net = SimpleFCNet()
    opt = paddle.optimizer.Adam(parameters=net.parameters())
    loader = (DataLoader(BatchedDataset(), num_workers=0, batch_size=None, drop_last=True) if batched
              else DataLoader(SampleDataset(), num_workers=0, batch_size=BATCH_SIZE, drop_last=True))
    assert len(loader) == SAMPLE_NUM // BATCH_SIZE
    steps, losses = [], []
    for _ in range(EPOCH_NUM):
        step = 0
        for image, label in loader():
            loss = paddle.mean(paddle.nn.functional.cross_entropy(net(image), label, reduction="none",
                                                                  use_softmax=False))
            loss.backward()
            opt.minimize(loss)
            net.clear_gradients()
            losses.append(float(loss))
            step += 1
        steps.append(step)
    return steps, np.array(losses)


def test_dygraph_dataloader_training(dynamic_mode) -> None:
    steps, losses = _train_loop(batched=False)
    assert steps == [SAMPLE_NUM // BATCH_SIZE] * EPOCH_NUM
    steps_b, losses_b = _train_loop(batched=True)
    assert steps_b == steps
    np.testing.assert_allclose(losses_b, losses, rtol=1e-5)


def test_dataloader_argument_errors() -> None:
    """`test/legacy_test/test_multiprocess_dataloader_exception.py` (its worker-loop
    cases need worker processes, which pullback does not have).  Its "not a Dataset"
    and "places is None" cases pass vacuously in Paddle (its own `assertTrue(False)`
    is the AssertionError they catch): Paddle 3.3.1 accepts both, and so does pullback."""
    place = paddle.CPUPlace()
    dataset = RandomDataset(100)
    batch_sampler = paddle.io.BatchSampler(dataset=dataset, batch_size=4)
    DataLoader(dataset=batch_sampler, places=place)
    DataLoader(dataset=dataset, places=None)
    with pytest.raises(AssertionError):
        DataLoader(dataset=dataset, places=place, num_workers=-1)
    with pytest.raises(AssertionError):
        DataLoader(dataset=dataset, places=place, timeout=-1)
    with pytest.raises(AssertionError):
        DataLoader(dataset=dataset, places=place, batch_sampler=batch_sampler, shuffle=True, drop_last=True)
    DataLoader(dataset=dataset, places=place, batch_sampler=batch_sampler)


def test_dataset_runtime_errors() -> None:
    """`test/legacy_test/test_multiprocess_dataloader_exception.py`."""
    dataset = Dataset()
    with pytest.raises(NotImplementedError):
        dataset[0]
    with pytest.raises(NotImplementedError):
        len(dataset)
    dataset = IterableDataset()
    with pytest.raises(NotImplementedError):
        iter(dataset)
    with pytest.raises(RuntimeError):
        dataset[0]
    with pytest.raises(RuntimeError):
        len(dataset)
