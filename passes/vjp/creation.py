"""The creation ops (ranges, eye, random tensors) carry no gradient: their values do
not depend on any differentiable input (`pd.bernoulli` samples, whose derivative
with respect to the probabilities is zero almost everywhere, as in Paddle)."""

from pullback.dialects import pd
from pullback.passes.vjp import non_differentiable

non_differentiable(pd.AssignValueOp, pd.ArangeOp, pd.LinspaceOp, pd.EyeOp, pd.RandintOp, pd.RandpermOp, pd.BernoulliOp)
