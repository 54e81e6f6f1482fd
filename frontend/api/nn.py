"""`paddle.nn`: the layers (`paddle.nn.Layer`, `Linear`, `Conv2D`, ... from
`frontend/nn_layers.py`; activation layers from `frontend/activation_layers.py`;
containers and loss layers from `frontend/container_layers.py`; attention and
Transformer layers from `frontend/transformer.py`; recurrent layers from
`frontend/rnn.py`), `paddle.nn.functional`, `paddle.nn.initializer` and
`paddle.nn.utils` (`frontend/nn_utils.py`)."""

from __future__ import annotations

from pullback.frontend import (
    activation_layers,
    clip,
    container_layers,
    initializer,
    nn_cnn,
    nn_layers,
    nn_norm,
    nn_resample,
    rnn,
    transformer,
)
from pullback.frontend import nn_utils as utils
from pullback.frontend.activation_layers import *  # noqa: F403
from pullback.frontend.api import nn_functional as functional
from pullback.frontend.clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
from pullback.frontend.container_layers import *  # noqa: F403
from pullback.frontend.nn_cnn import *  # noqa: F403
from pullback.frontend.nn_layers import *  # noqa: F403 - re-exports nn_layers.__all__
from pullback.frontend.nn_norm import *  # noqa: F403
from pullback.frontend.nn_resample import *  # noqa: F403
from pullback.frontend.rnn import *  # noqa: F403
from pullback.frontend.transformer import *  # noqa: F403

__path__: list[str] = []  # children (`functional`, `initializer`, `utils`) come from the alias finder

__all__ = (["ClipGradByGlobalNorm", "ClipGradByNorm", "ClipGradByValue", "clip", "functional",
            "initializer", "utils"] + nn_layers.__all__ + nn_norm.__all__
           + nn_cnn.__all__ + nn_resample.__all__ + activation_layers.__all__ + container_layers.__all__
           + transformer.__all__ + rnn.__all__)
