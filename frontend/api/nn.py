"""`paddle.nn`: the layers (`paddle.nn.Layer`, `Linear`, `Conv2D`, ... from
`frontend/nn_layers.py`), `paddle.nn.functional` and `paddle.nn.initializer`."""

from __future__ import annotations

from pullback.frontend import initializer, nn_cnn, nn_layers, nn_norm
from pullback.frontend.api import nn_functional as functional
from pullback.frontend.nn_layers import *  # noqa: F403 - re-exports nn_layers.__all__
from pullback.frontend.nn_norm import *  # noqa: F403
from pullback.frontend.nn_cnn import *  # noqa: F403

__path__: list[str] = []  # children (`functional`, `initializer`) come from the alias finder

__all__ = ["functional", "initializer"] + nn_layers.__all__ + nn_norm.__all__ + nn_cnn.__all__
