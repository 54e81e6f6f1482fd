"""`paddle.static.nn`: static-graph layers (`fc`, `embedding`, `conv2d`) plus the
op families' `STATIC_NN` exports."""

from __future__ import annotations

from pullback.frontend.api import registry
from pullback.frontend.layers import conv2d, create_parameter, embedding, fc

globals().update({k: v for k, v in registry.static_nn().items() if k not in globals()})

__all__ = ["conv2d", "create_parameter", "embedding", "fc", *registry.static_nn()]
