"""Program-structure ops carry no gradient: constants and seeded initializers.

`pd.fill_any_like` reads only its operand's shape, so nothing flows back into it
(this is what lets rules build runtime-shaped constants from forward values).
"""

from pullback.dialects import pd
from pullback.passes.vjp import non_differentiable

non_differentiable(
    pd.FillConstantOp, pd.FillAnyLikeOp, pd.UniformRandomOp, pd.GaussianRandomOp,
    pd.TruncatedGaussianRandomOp,
)
