"""`paddle.distributed`'s name for `paddle.io.DistributedBatchSampler` (one class, defined
in `pullback.frontend.io`: each rank iterates over its own batches of the dataset)."""

from __future__ import annotations

from pullback.frontend.io import DistributedBatchSampler

__all__ = ["DistributedBatchSampler"]
