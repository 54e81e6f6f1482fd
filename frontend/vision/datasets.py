"""`paddle.vision.datasets`: MNIST, FashionMNIST, Cifar10 and Cifar100 read from
local copies of the original files; Flowers and VOC2012 are listed for their names.

pullback never downloads: a dataset finds its files where given (`image_path` /
`label_path`, `data_file`) or in Paddle's cache (`~/.cache/paddle/dataset/...`),
and otherwise raises `DatasetDownloadError` naming the files it needs.  Samples are
numpy arrays (Paddle's `cv2` backend layout): MNIST images `[28, 28]` float32 with
values 0..255, CIFAR images `[32, 32, 3]` float32, labels int64 `[1]` (MNIST) or
scalars (CIFAR), as in Paddle.
"""

from __future__ import annotations

import gzip
import os
import struct
import tarfile
from typing import Any, ClassVar

import numpy as np
from pullback.frontend.formats.safe_pickle import safe_load
from pullback.frontend.io import Dataset

CACHE_HOME = os.path.expanduser(os.path.join("~", ".cache", "paddle", "dataset"))


class DatasetDownloadError(RuntimeError):
    """A dataset's files are not available locally and cannot be downloaded."""


def _locate(name: str, given: str | None, default_file: str, download: bool, what: str) -> str:
    """The path of a dataset file: `given`, else Paddle's cache, else an error."""
    if given is not None:
        if not os.path.exists(given):
            raise DatasetDownloadError(f"{name}: {what} '{given}' does not exist")
        return given
    cached = os.path.join(CACHE_HOME, default_file)
    if os.path.exists(cached):
        return cached
    how = ("pullback cannot download it (no network access); " if download else "download=False and ")
    raise DatasetDownloadError(
        f"{name}: the {what} is not available locally and {how}"
        f"place the file at '{cached}' or pass its path"
    )


def _check_mode(name: str, mode: str, modes: tuple[str, ...]) -> str:
    mode = mode.lower()
    if mode not in modes:
        raise ValueError(f"{name}: mode should be {' or '.join(repr(m) for m in modes)}, but got {mode!r}")
    return mode


def _open_maybe_gz(path: str) -> Any:
    return gzip.open(path, "rb") if path.endswith(".gz") else open(path, "rb")


class MNIST(Dataset):
    """MNIST handwritten digits from the original idx files (`image_path`,
    `label_path`, gzip or not)."""

    NAME = "mnist"
    _files: ClassVar[dict[str, tuple[str, str]]] = {
        "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
        "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
    }

    def __init__(self, image_path: str | None = None, label_path: str | None = None, mode: str = "train",
                 transform: Any = None, download: bool = True, backend: str | None = None) -> None:
        cls = type(self).__name__
        self.mode = _check_mode(cls, mode, ("train", "test"))
        if backend not in (None, "cv2", "pil"):
            raise ValueError(f"{cls}: backend must be 'cv2' or 'pil', got {backend!r}")
        self.backend = backend or "cv2"
        images_file, labels_file = self._files[self.mode]
        self.image_path = _locate(cls, image_path, os.path.join(self.NAME, images_file), download, "image file")
        self.label_path = _locate(cls, label_path, os.path.join(self.NAME, labels_file), download, "label file")
        self.transform = transform
        self.dtype = "float32"
        self._parse()

    def _parse(self) -> None:
        with _open_maybe_gz(self.image_path) as f:
            magic, n, rows, cols = struct.unpack(">IIII", f.read(16))
            if magic != 2051:
                raise ValueError(f"{type(self).__name__}: '{self.image_path}' is not an idx image file")
            images = np.frombuffer(f.read(n * rows * cols), np.uint8).reshape(n, rows, cols)
        with _open_maybe_gz(self.label_path) as f:
            magic, m = struct.unpack(">II", f.read(8))
            if magic != 2049:
                raise ValueError(f"{type(self).__name__}: '{self.label_path}' is not an idx label file")
            labels = np.frombuffer(f.read(m), np.uint8)
        if n != m:
            raise ValueError(f"{type(self).__name__}: {n} images but {m} labels")
        self.images = images.astype(np.float32)
        self.labels = labels.astype(np.int64).reshape(-1, 1)

    def __getitem__(self, idx: int) -> tuple[Any, np.ndarray]:
        image, label = self.images[idx], self.labels[idx]
        if self.backend == "pil":
            from PIL import Image

            image = Image.fromarray(image.astype("uint8"), mode="L")
        if self.transform is not None:
            image = self.transform(image)
        if self.backend == "pil" or not isinstance(image, np.ndarray):
            return image, label.astype("int64")
        return image.astype(self.dtype), label.astype("int64")

    def __len__(self) -> int:
        return len(self.labels)


class FashionMNIST(MNIST):
    """Fashion-MNIST (same idx format as MNIST)."""

    NAME = "fashion-mnist"


class Cifar10(Dataset):
    """CIFAR-10 from the original python tarball (`data_file`)."""

    _archive = "cifar-10-python.tar.gz"
    _label_key = b"labels"
    _batches: ClassVar[dict[str, str]] = {"train": "data_batch", "test": "test_batch"}

    def __init__(self, data_file: str | None = None, mode: str = "train", transform: Any = None,
                 download: bool = True, backend: str | None = None) -> None:
        cls = type(self).__name__
        self.mode = _check_mode(cls, mode, ("train", "test"))
        if backend not in (None, "cv2", "pil"):
            raise ValueError(f"{cls}: backend must be 'cv2' or 'pil', got {backend!r}")
        self.backend = backend or "cv2"
        self.data_file = _locate(cls, data_file, os.path.join("cifar", self._archive), download, "data file")
        self.transform = transform
        self.dtype = "float32"
        self._load()

    def _load(self) -> None:
        key = self._batches[self.mode]
        data, labels = [], []
        with tarfile.open(self.data_file, mode="r") as tar:
            for member in sorted(tar.getmembers(), key=lambda m: m.name):
                if key in os.path.basename(member.name):
                    # Data only: the batches go through the restricted unpickler.
                    batch = safe_load(tar.extractfile(member), f"{self.data_file}:{member.name}",
                                      type(self).__name__, encoding="bytes")
                    data.append(batch[b"data"])
                    labels.extend(batch[self._label_key])
        if not data:
            raise ValueError(f"{type(self).__name__}: no '{key}' batches in '{self.data_file}'")
        self.data = [(d.reshape(3, 32, 32).transpose(1, 2, 0), np.array(lab, np.int64))
                     for d, lab in zip(np.concatenate(data), labels)]

    def __getitem__(self, idx: int) -> tuple[Any, np.ndarray]:
        image, label = self.data[idx]
        if self.backend == "pil":
            from PIL import Image

            image = Image.fromarray(image.astype("uint8"))
        if self.transform is not None:
            image = self.transform(image)
        if self.backend == "pil" or not isinstance(image, np.ndarray):
            return image, label
        return image.astype(self.dtype), label

    def __len__(self) -> int:
        return len(self.data)


class Cifar100(Cifar10):
    """CIFAR-100 (fine labels) from the original python tarball."""

    _archive = "cifar-100-python.tar.gz"
    _label_key = b"fine_labels"
    _batches: ClassVar[dict[str, str]] = {"train": "train", "test": "test"}


class _NotBundled(Dataset):
    """A dataset pullback can only name: its archive formats are not read here."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise DatasetDownloadError(
            f"{type(self).__name__}: pullback cannot download it (no network access) and does not "
            "read its archive; use paddle.io.Dataset over local files instead"
        )


class Flowers(_NotBundled):
    """Oxford 102 Flowers (not available in pullback)."""


class VOC2012(_NotBundled):
    """PASCAL VOC 2012 segmentation (not available in pullback)."""


class DatasetFolder(Dataset):
    """Samples from `root/<class>/<file>` (numpy `.npy` files, or images when a
    `loader` is given); `classes`, `class_to_idx` as in Paddle."""

    def __init__(self, root: str, loader: Any = None, extensions: tuple[str, ...] | None = None,
                 transform: Any = None, is_valid_file: Any = None) -> None:
        if not os.path.isdir(root):
            raise ValueError(f"DatasetFolder: root '{root}' is not a directory")
        self.root, self.transform = root, transform
        self.loader = loader or np.load
        exts = tuple(e.lower() for e in (extensions or (".npy",)))
        self.classes = sorted(d.name for d in os.scandir(root) if d.is_dir())
        self.class_to_idx = {c: i for i, c in enumerate(self.classes)}
        self.samples = []
        for c in self.classes:
            for dirpath, _, files in sorted(os.walk(os.path.join(root, c))):
                for fname in sorted(files):
                    path = os.path.join(dirpath, fname)
                    ok = is_valid_file(path) if is_valid_file else fname.lower().endswith(exts)
                    if ok:
                        self.samples.append((path, self.class_to_idx[c]))
        if not self.samples:
            raise RuntimeError(f"DatasetFolder: found 0 files in subfolders of '{root}'")
        self.targets = [s[1] for s in self.samples]

    def __getitem__(self, index: int) -> tuple[Any, int]:
        path, target = self.samples[index]
        sample = self.loader(path)
        if self.transform is not None:
            sample = self.transform(sample)
        return sample, target

    def __len__(self) -> int:
        return len(self.samples)


__all__ = [
    "MNIST",
    "VOC2012",
    "Cifar10",
    "Cifar100",
    "DatasetDownloadError",
    "DatasetFolder",
    "FashionMNIST",
    "Flowers",
]
