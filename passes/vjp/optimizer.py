"""Optimizer updates overwrite state; nothing is differentiated through them, nor
through AMP's loss-scaling ops (they act on gradients after the backward part)."""

from pullback.dialects import pd
from pullback.passes.vjp import non_differentiable

non_differentiable(*pd.OPTIMIZER_OPS)  # (the loss-scaling ops among them)
