"""`paddle.nn`: the layers (`paddle.nn.Layer`, `Linear`, `Conv2D`, ... from
`frontend/nn_layers.py`), `paddle.nn.functional` and `paddle.nn.initializer`."""

from __future__ import annotations

from pullback.frontend import clip, initializer, nn_layers
from pullback.frontend.clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
from pullback.frontend.api import nn_functional as functional
from pullback.frontend.nn_layers import *

__path__: list[str] = []  # children (`functional`, `initializer`) come from the alias finder

__all__ = [
    "ClipGradByGlobalNorm", "ClipGradByNorm", "ClipGradByValue", "clip", "functional",
    "initializer", *nn_layers.__all__,
]
