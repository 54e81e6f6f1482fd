"""`paddle.autograd.backward_mode`: where Paddle defines `backward` (eager) and
where its tests reach `gradients_with_optimizer` (static)."""

from __future__ import annotations

from pullback.frontend.autograd import backward
from pullback.frontend.backward import gradients_with_optimizer

__all__ = ["backward", "gradients_with_optimizer"]
