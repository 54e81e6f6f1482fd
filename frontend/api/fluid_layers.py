"""`paddle.fluid.layers`: Paddle 1.x layers (`data`, `fc`, `embedding`, `conv2d`) plus
the op families' `FLUID_LAYERS` exports (`mean`, `square_error_cost`, `relu`...)."""

from __future__ import annotations

from pullback.frontend.api import registry
from pullback.frontend.layers import batch_norm, conv2d, conv2d_transpose, create_global_var, create_parameter
from pullback.frontend.layers import fluid_embedding as embedding
from pullback.frontend.layers import fluid_fc as fc
from pullback.frontend.layers import legacy_data as data
from pullback.frontend.metric import static_accuracy as accuracy

# The layers above are this module's own; families add everything else.
globals().update({k: v for k, v in registry.fluid_layers().items() if k not in globals()})

__all__ = [
    "accuracy",
    "batch_norm",
    "conv2d",
    "conv2d_transpose",
    "create_global_var",
    "create_parameter",
    "data",
    "embedding",
    "fc",
    *registry.fluid_layers(),
]
