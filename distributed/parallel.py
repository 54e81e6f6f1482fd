"""`paddle.DataParallel`: data-parallel training in eager mode.

Wrapping a layer broadcasts its parameters from rank 0 (every rank starts alike);
after each `loss.backward()` that followed a forward of the wrapped layer, the
parameters' gradients are averaged over the ranks (summed, divided by the number of
ranks, as Paddle's reducer does), in buckets of about `comm_buffer_size` MB so that
a few large messages are sent.  `no_sync()` skips the averaging, letting gradients
accumulate locally (gradient accumulation); the next synchronized backward averages
the accumulated sum.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Iterator
from typing import Any

import numpy as np
from pullback.runtime.process_group import (
    Group,
    get_world_size,
    init_parallel_env,
    is_initialized,
)
from pullback.frontend.autograd import no_grad, register_post_backward_hook
from pullback.frontend.nn_layers import Layer
from pullback.frontend.ops import distributed as ops

_MB = 1 << 20


def gradient_buckets(params: list[Any], first_mb: float, rest_mb: float) -> list[list[Any]]:
    """Parameters in reverse order (the order backward produces their gradients),
    grouped by dtype into buckets: the first up to `first_mb` MB (Paddle's
    `last_comm_buffer_size`, small so that communication can start early), the
    others up to `rest_mb`."""
    buckets: list[list[Any]] = []
    by_dtype: dict[Any, tuple[list[Any], int]] = {}
    for p in reversed(params):
        key = p._arr.dtype  # (metadata: a deferred gradient step is not run for it)
        bucket, size = by_dtype.get(key, ([], 0))
        bucket.append(p)
        size += p._arr.nbytes
        limit = (first_mb if not buckets else rest_mb) * _MB
        if size >= limit:
            buckets.append(bucket)
            bucket, size = [], 0
        by_dtype[key] = (bucket, size)
    buckets.extend(b for b, _ in by_dtype.values() if b)
    return buckets


class DataParallel(Layer):
    """Run `layers` data-parallel: the same model on every rank, each on its own
    shard of the data, gradients averaged after `backward` (Paddle's
    `paddle.DataParallel`)."""

    def __init__(
        self,
        layers: Layer,
        strategy: Any = None,
        comm_buffer_size: float = 25,
        last_comm_buffer_size: float = 1,
        find_unused_parameters: bool = False,
        group: Group | None = None,
    ) -> None:
        super().__init__()
        if not isinstance(layers, Layer):
            raise TypeError(f"DataParallel: layers must be a paddle.nn.Layer, got {type(layers).__name__}")
        if comm_buffer_size <= 0 or last_comm_buffer_size <= 0:
            raise ValueError("DataParallel: comm_buffer_size and last_comm_buffer_size must be > 0")
        self._layers = layers
        d = self.__dict__
        d["_comm_buffer_size"] = float(comm_buffer_size)
        d["_last_comm_buffer_size"] = float(last_comm_buffer_size)
        d["find_unused_parameters"] = bool(find_unused_parameters)
        d["group"] = group
        d["grad_need_sync"] = True
        d["_pending"] = False
        if not is_initialized():
            init_parallel_env()
        d["_nranks"] = get_world_size(group)
        self._sync_params_buffers()
        ref = weakref.ref(self)

        def hook() -> None:
            me = ref()
            if me is not None:
                me._after_backward()

        d["_remove_hook"] = register_post_backward_hook(hook)
        weakref.finalize(self, d["_remove_hook"])

    # -- forward ---------------------------------------------------------------

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        """The wrapped layer's forward; the next backward averages the gradients."""
        self.__dict__["_pending"] = self.grad_need_sync
        return self._layers(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Inside the `with` block, backward does not average gradients (they
        accumulate locally until a synchronized backward)."""
        old = self.grad_need_sync
        self.__dict__["grad_need_sync"] = False
        try:
            yield
        finally:
            self.__dict__["grad_need_sync"] = old

    # -- communication ---------------------------------------------------------

    def _trainable(self) -> list[Any]:
        return [p for p in self._layers.parameters() if not p.stop_gradient]

    @no_grad()
    def _sync_params_buffers(self) -> None:
        """Give every rank rank 0's parameters and buffers."""
        if self._nranks == 1:
            return
        tensors = list(self._layers.parameters()) + [
            b for _, b in self._layers.named_buffers() if b is not None
        ]
        for t in tensors:
            t._data = ops.broadcast(t, 0)._data

    @no_grad()
    def _after_backward(self) -> None:
        """Average the gradients over the ranks, one message per bucket.  A
        parameter without a gradient contributes zeros, so every rank sends the
        same buckets whatever its data reached."""
        if not self.__dict__["_pending"]:
            return
        self.__dict__["_pending"] = False
        if self._nranks == 1:
            return
        params = self._trainable()
        for bucket in gradient_buckets(params, self._last_comm_buffer_size, self._comm_buffer_size):
            from pullback.frontend.eager import Tensor

            grads = [
                p.grad if p.grad is not None else Tensor(np.zeros_like(p._data)) for p in bucket
            ]
            for p, g in zip(bucket, ops.allreduce(grads, "avg")):
                p.grad = g

    # -- delegation ----------------------------------------------------------------

    def state_dict(self, *args: Any, **kwargs: Any) -> Any:
        """The wrapped layer's state dict (no `_layers.` prefix, as in Paddle)."""
        return self._layers.state_dict(*args, **kwargs)

    def set_state_dict(self, *args: Any, **kwargs: Any) -> Any:
        """Load into the wrapped layer."""
        return self._layers.set_state_dict(*args, **kwargs)

    set_dict = set_state_dict
    load_dict = set_state_dict

from pullback.namespaces import adopt_real  # noqa: E402 - names of Paddle's module it lacks

adopt_real(__name__)
