"""`paddle.autograd`: eager-mode differentiation (`backward`, `grad`), looked up in
`pullback.frontend.eager` on first use."""

from __future__ import annotations

from pullback.frontend.api import registry

__getattr__, __dir__ = registry.lazy_attributes(
    __name__,
    {
        "backward": "pullback.frontend.eager:backward",
        "grad": "pullback.frontend.eager:grad",
        "PyLayer": "pullback.frontend.eager:PyLayer",
    },
)

__all__ = ["backward", "grad"]
