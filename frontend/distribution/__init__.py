"""`paddle.distribution`: probability distributions, transforms and KL divergences,
as Paddle 3.3.1 defines them, written with pullback's public tensor ops (so they run
in eager and static mode, on every backend, and `rsample` is differentiable).

Each module is named as Paddle's (`paddle.distribution.normal.Normal`).  Binomial
and Poisson sample by inverse CDF over their (bounded) support, built from uniform
draws, as pullback has no discrete sampling op.
"""

from pullback.frontend.distribution import transform  # noqa: F401 - `paddle.distribution.transform`
from pullback.frontend.distribution.bernoulli import Bernoulli
from pullback.frontend.distribution.beta import Beta
from pullback.frontend.distribution.binomial import Binomial
from pullback.frontend.distribution.categorical import Categorical
from pullback.frontend.distribution.cauchy import Cauchy
from pullback.frontend.distribution.chi2 import Chi2
from pullback.frontend.distribution.continuous_bernoulli import ContinuousBernoulli
from pullback.frontend.distribution.dirichlet import Dirichlet
from pullback.frontend.distribution.distribution import Distribution
from pullback.frontend.distribution.exponential import Exponential
from pullback.frontend.distribution.exponential_family import ExponentialFamily
from pullback.frontend.distribution.gamma import Gamma
from pullback.frontend.distribution.geometric import Geometric
from pullback.frontend.distribution.gumbel import Gumbel
from pullback.frontend.distribution.independent import Independent
from pullback.frontend.distribution.kl import kl_divergence, register_kl
from pullback.frontend.distribution.laplace import Laplace
from pullback.frontend.distribution.lkj_cholesky import LKJCholesky
from pullback.frontend.distribution.lognormal import LogNormal
from pullback.frontend.distribution.multinomial import Multinomial
from pullback.frontend.distribution.multivariate_normal import MultivariateNormal
from pullback.frontend.distribution.normal import Normal
from pullback.frontend.distribution.poisson import Poisson
from pullback.frontend.distribution.student_t import StudentT
from pullback.frontend.distribution.transform import (
    AbsTransform,
    AffineTransform,
    ChainTransform,
    ExpTransform,
    IndependentTransform,
    PowerTransform,
    ReshapeTransform,
    SigmoidTransform,
    SoftmaxTransform,
    StackTransform,
    StickBreakingTransform,
    TanhTransform,
    Transform,
)
from pullback.frontend.distribution.transformed_distribution import TransformedDistribution
from pullback.frontend.distribution.uniform import Uniform

__all__ = [
    "Bernoulli",
    "Beta",
    "Binomial",
    "Categorical",
    "Cauchy",
    "Chi2",
    "ContinuousBernoulli",
    "Dirichlet",
    "Distribution",
    "Exponential",
    "ExponentialFamily",
    "Gamma",
    "Geometric",
    "Gumbel",
    "Independent",
    "LKJCholesky",
    "Laplace",
    "LogNormal",
    "Multinomial",
    "MultivariateNormal",
    "Normal",
    "Poisson",
    "StudentT",
    "TransformedDistribution",
    "Uniform",
    "kl_divergence",
    "register_kl",
    "AbsTransform",
    "AffineTransform",
    "ChainTransform",
    "ExpTransform",
    "IndependentTransform",
    "PowerTransform",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftmaxTransform",
    "StackTransform",
    "StickBreakingTransform",
    "TanhTransform",
    "Transform",
]
