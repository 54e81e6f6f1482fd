"""`paddle.batch`: Paddle's reader decorator grouping samples into minibatches; and
Paddle's legacy generator loaders (`paddle.base.reader`): `DataLoader.from_generator`
with its dygraph and static loaders, and `core.EOFException`, which ends an epoch of
a non-iterable loader."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np


def batch(reader: Callable[[], Any], batch_size: int, drop_last: bool = False) -> Callable[[], Iterator[list[Any]]]:
    """A reader yielding lists of `batch_size` samples of `reader()` (the last,
    shorter one too unless `drop_last`)."""
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
        raise ValueError(f"batch_size should be a positive integer value, but got batch_size={batch_size}")

    def batch_reader() -> Iterator[list[Any]]:
        chunk: list[Any] = []
        for sample in reader():
            chunk.append(sample)
            if len(chunk) == batch_size:
                yield chunk
                chunk = []
        if chunk and not drop_last:
            yield chunk

    return batch_reader


# ------------------------------------------------------- DataLoader.from_generator


class EOFException(Exception):
    """`paddle.base.core.EOFException` (`paddle.core.EOFException`): what
    `Executor.run` raises once a non-iterable `from_generator` loader's data source
    is exhausted (or was not started); catch it and call `loader.reset()`."""


def _check_input_array(item: Any) -> np.ndarray:
    """Paddle's `DataLoaderBase._check_input_array`: a regular array, or TypeError for
    ragged nested lists."""
    try:
        arr = np.asarray(item)
    except ValueError:  # (NumPy >= 1.24 refuses ragged lists outright)
        arr = np.asarray(item, dtype=object)
    if arr.dtype == np.object_:
        raise TypeError(
            "Failed to convert input data to a regular ndarray: usually the input data "
            "contains nested lists of different lengths; check the reader given to "
            "set_batch_generator / set_sample_list_generator")
    return arr


class DataLoaderBase:
    """Paddle's base of the generator loaders: `loader()` is the loader itself, so
    `for data in loader():` and `for data in loader:` read the same."""

    def __call__(self) -> DataLoaderBase:
        return self

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError

    _check_input_array = staticmethod(_check_input_array)


def _slots(samples: list[Sequence[Any]]) -> list[list[Any]]:
    """A sample list transposed into one list per field (Paddle's dygraph
    `set_sample_list_generator`)."""
    slots: list[list[Any]] = []
    for items in samples:
        for i, item in enumerate(items):
            if len(slots) < len(items):
                slots.append([item])
            else:
                slots[i].append(item)
    return slots


class DygraphGeneratorLoader(DataLoaderBase):
    """The loader `from_generator` gives in dygraph mode: always iterable, each batch
    a list of Tensors (one per field).  Batches are made on demand, in the caller's
    thread (Paddle prefetches up to `capacity` of them in a thread; the order and
    values are the same)."""

    def __init__(self, feed_list: Any = None, capacity: int | None = None, use_double_buffer: bool = True,
                 iterable: bool = True, return_list: bool = True, use_multiprocess: bool = False) -> None:
        if not capacity:
            raise ValueError("Please give value to capacity.")
        if not iterable:
            warnings.warn("Please NOTE: DygraphGeneratorLoader supports iterable mode only. "
                          "Change to iterable mode.", stacklevel=3)
        if not return_list:
            warnings.warn("Please NOTE: DygraphGeneratorLoader supports returning as list only. "
                          "Change to return as list.", stacklevel=3)
        self._feed_list = feed_list
        self._capacity = capacity
        self._use_double_buffer = use_double_buffer
        self._use_multiprocess = use_multiprocess
        self._iterable = self._return_list = True
        self._batch_reader: Callable[[], Any] | None = None
        self._places: Any = None

    @property
    def iterable(self) -> bool:
        return self._iterable

    def __iter__(self) -> Iterator[list[Any]]:
        from pullback.frontend.eager import to_tensor

        assert self._batch_reader is not None, "Data source of DataLoader has not set yet"
        for sample in self._batch_reader():
            yield [item if _is_eager_tensor(item) else to_tensor(_check_input_array(item)) for item in sample]

    def set_sample_generator(self, reader: Callable[[], Any], batch_size: int, drop_last: bool = True,
                             places: Any = None) -> DygraphGeneratorLoader:
        """Samples from `reader()`, grouped `batch_size` at a time (`paddle.batch`)."""
        assert batch_size > 0, "batch_size must be larger than 0"
        return self.set_sample_list_generator(batch(reader, batch_size=batch_size, drop_last=drop_last), places)

    def set_sample_list_generator(self, reader: Callable[[], Any], places: Any = None) -> DygraphGeneratorLoader:
        """Lists of samples from `reader()`, each stacked field by field."""
        def batches() -> Iterator[list[list[Any]]]:
            for samples in reader():
                yield _slots(samples)

        return self.set_batch_generator(batches, places)

    def set_batch_generator(self, reader: Callable[[], Any], places: Any = None) -> DygraphGeneratorLoader:
        """Whole batches from `reader()`: one array (or Tensor) per field."""
        self._batch_reader = reader
        self._places = places
        return self


class GeneratorLoader(DataLoaderBase):
    """The loader `from_generator` gives in static mode.

    Iterable: each batch is `[{name: array}]` (one place's feed dict, arrays in the
    feed variables' dtypes), or `[[array, ...]]` with `return_list`.  Not iterable:
    the loader is bound to the default main program at creation; between `start()`
    and the `EOFException`, every `Executor.run` of that program (or of its clones)
    that is not fed the loader's variables reads the next batch; `reset()` ends the
    epoch.  Batches are made on demand (see `DygraphGeneratorLoader`)."""

    def __init__(self, feed_list: Any = None, capacity: int | None = None, use_double_buffer: bool = True,
                 iterable: bool = True, return_list: bool = False, drop_last: bool = True) -> None:
        from pullback.frontend.framework import default_main_program

        if not capacity:
            raise ValueError("Please give value to capacity.")
        if not feed_list:
            raise ValueError("Feed list must be given under static graph mode.")
        self._feed_list = list(feed_list)
        self._capacity = capacity
        self._use_double_buffer = use_double_buffer
        self._iterable = iterable
        self._return_list = return_list
        self._drop_last = drop_last  # (drops batches short of the place count: with one place, none)
        self._tensor_reader: Callable[[], Any] | None = None
        self._places: Any = None
        self._batches: Iterator[Any] | None = None
        if not iterable:
            default_main_program()._feed_readers.append(self)

    @property
    def iterable(self) -> bool:
        return self._iterable

    @property
    def feed_names(self) -> list[str]:
        """The names of the variables this loader feeds."""
        return [v.name for v in self._feed_list]

    def _feed(self, batch_items: Sequence[Any]) -> dict[str, np.ndarray]:
        from pullback.dialects.bfloat16 import host_cast
        from pullback.dialects.pd.dtypes import DTYPE_BY_NAME

        items = list(batch_items)
        if len(items) != len(self._feed_list):
            raise ValueError(f"DataLoader: a batch has {len(items)} fields but feed_list has "
                             f"{len(self._feed_list)} variables")
        feed = {}
        for var, item in zip(self._feed_list, items):
            arr = _check_input_array(item.numpy() if _is_eager_tensor(item) else item)
            want = DTYPE_BY_NAME[f"{var.dtype}"].numpy
            feed[var.name] = host_cast(arr, want) if arr.dtype != want else arr
        return feed

    def __iter__(self) -> Iterator[Any]:
        assert self.iterable, "DataLoader is not iterable"
        assert self._tensor_reader is not None, "Data source of DataLoader has not set yet"
        for items in self._tensor_reader():
            feed = self._feed(items)
            yield [list(feed.values())] if self._return_list else [feed]

    def start(self) -> None:
        """Begin an epoch of a non-iterable loader."""
        assert not self._iterable, "start() cannot be called when DataLoader is iterable"
        assert self._tensor_reader is not None, "Data source of DataLoader has not set yet"
        self._batches = iter(self._tensor_reader())

    def reset(self) -> None:
        """End the epoch (after the EOFException, or early)."""
        assert not self._iterable, "reset() cannot be called when DataLoader is iterable"
        self._batches = None

    def next_feed(self) -> dict[str, np.ndarray]:
        """The next batch as a feed dict, for `Executor.run`; EOFException at the end
        of the data (and until `reset()` and `start()` begin a new epoch)."""
        if self._batches is None:
            raise EOFException("There is no next data: the DataLoader was not started "
                               "(call loader.start()) or its data is exhausted (call loader.reset())")
        try:
            return self._feed(next(self._batches))
        except StopIteration:
            self._batches = iter(())
            raise EOFException("There is no next data: the DataLoader's data source is exhausted; "
                               "call loader.reset()") from None

    def set_sample_generator(self, reader: Callable[[], Any], batch_size: int, drop_last: bool = True,
                             places: Any = None) -> GeneratorLoader:
        """Samples from `reader()`, `batch_size` at a time, converted to the feed
        variables' dtypes and shapes."""
        assert batch_size > 0, "batch_size must be larger than 0"
        return self.set_sample_list_generator(batch(reader, batch_size=batch_size, drop_last=drop_last), places)

    def set_sample_list_generator(self, reader: Callable[[], Any], places: Any = None) -> GeneratorLoader:
        """Lists of samples from `reader()`, converted by a `DataFeeder` of the feed
        variables."""
        from pullback.frontend.data_feeder import DataFeeder

        feeder = DataFeeder(self._feed_list)

        def batches() -> Iterator[list[Any]]:
            for samples in reader():
                slots = feeder.feed(samples)
                yield [slots[v.name] for v in self._feed_list]

        return self.set_batch_generator(batches, places)

    def set_batch_generator(self, reader: Callable[[], Any], places: Any = None) -> GeneratorLoader:
        """Whole batches from `reader()`: one array per feed variable.  An iterable
        loader needs `places` (Paddle's rule); a non-iterable one ignores them."""
        self._tensor_reader = reader
        if self._iterable:
            assert places is not None, "Places cannot be None when DataLoader is iterable"
            self._places = places
        return self


class DataLoader:
    """`paddle.base.io.DataLoader` (`fluid.io.DataLoader`, `paddle.base.reader`):
    Paddle's legacy loader factory, `DataLoader.from_generator(...)`."""

    @staticmethod
    def from_generator(feed_list: Sequence[Any] | None = None, capacity: int | None = None,
                       use_double_buffer: bool = True, iterable: bool = True, return_list: bool = False,
                       use_multiprocess: bool = False, drop_last: bool = True) -> Any:
        """A loader fed from a Python generator set later with `set_sample_generator`,
        `set_sample_list_generator` or `set_batch_generator`: a
        `DygraphGeneratorLoader` in dygraph mode, else a `GeneratorLoader` over
        `feed_list` (`iterable=False`: driven by `start()`/`reset()` and
        `Executor.run`).  `capacity` (batches buffered) must be given; it, like
        `use_double_buffer` and `use_multiprocess`, changes no result here."""
        from pullback.frontend import core

        if core.in_dynamic_mode():
            return DygraphGeneratorLoader(feed_list, capacity, use_double_buffer, iterable, return_list,
                                          use_multiprocess)
        return GeneratorLoader(feed_list, capacity, use_double_buffer, iterable, return_list, drop_last)


def _is_eager_tensor(x: Any) -> bool:
    from pullback.frontend.eager import Tensor

    return isinstance(x, Tensor)


__all__ = ["DataLoader", "DataLoaderBase", "DygraphGeneratorLoader", "EOFException", "GeneratorLoader", "batch"]
