"""Optimizer updates overwrite state; nothing is differentiated through them."""

from pullback.dialects import pd
from pullback.passes.vjp import non_differentiable

non_differentiable(*pd.OPTIMIZER_OPS)
