"""`paddle.static.nn`: static-graph layers (`fc`, `embedding`, `conv2d`) plus the
op families' `STATIC_NN` exports."""

from __future__ import annotations

from pullback.frontend.api import registry
from pullback.frontend.layers import (
    batch_norm,
    conv2d,
    conv2d_transpose,
    create_parameter,
    embedding,
    fc,
    group_norm,
    instance_norm,
    layer_norm,
    prelu,
)

globals().update({k: v for k, v in registry.static_nn().items() if k not in globals()})

__all__ = [
    "batch_norm", "conv2d", "conv2d_transpose", "create_parameter", "embedding", "fc", "group_norm",
    "instance_norm", "layer_norm", "prelu",
    *registry.static_nn(),
]
