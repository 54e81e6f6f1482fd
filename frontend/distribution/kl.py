"""`paddle.distribution.kl_divergence` and `register_kl` (Paddle 3.3.1's dispatch):
KL divergences registered per pair of distribution types, the most specific pair
winning."""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from pullback.frontend.distribution.bernoulli import Bernoulli
from pullback.frontend.distribution.beta import Beta
from pullback.frontend.distribution.binomial import Binomial
from pullback.frontend.distribution.categorical import Categorical
from pullback.frontend.distribution.cauchy import Cauchy
from pullback.frontend.distribution.continuous_bernoulli import ContinuousBernoulli
from pullback.frontend.distribution.dirichlet import Dirichlet
from pullback.frontend.distribution.distribution import Distribution, sum_rightmost
from pullback.frontend.distribution.exponential import Exponential
from pullback.frontend.distribution.exponential_family import (
    ExponentialFamily,
    detached_parameters,
    natural_gradients,
)
from pullback.frontend.distribution.gamma import Gamma
from pullback.frontend.distribution.geometric import Geometric
from pullback.frontend.distribution.laplace import Laplace
from pullback.frontend.distribution.lognormal import LogNormal
from pullback.frontend.distribution.multivariate_normal import MultivariateNormal
from pullback.frontend.distribution.normal import Normal
from pullback.frontend.distribution.poisson import Poisson
from pullback.frontend.distribution.uniform import Uniform

__all__ = ["register_kl", "kl_divergence"]

_T = TypeVar("_T")

_REGISTER_TABLE: dict[tuple[type, type], Callable[[Any, Any], Any]] = {}


def kl_divergence(p: Distribution, q: Distribution) -> Any:
    r"""KL(p || q) = E_p[log p(x) - log q(x)], by the function registered for the
    types of `p` and `q` (NotImplementedError when there is none)."""
    return _dispatch(type(p), type(q))(p, q)


def register_kl(cls_p: type[Distribution], cls_q: type[Distribution]) -> Callable[[_T], _T]:
    """Decorator: register a function `f(p, q)` computing KL(p || q) for instances
    of `cls_p` and `cls_q` (and their subclasses)."""
    if not issubclass(cls_p, Distribution) or not issubclass(cls_q, Distribution):
        raise TypeError("cls_p and cls_q must be subclass of Distribution")

    def decorator(f: _T) -> _T:
        _REGISTER_TABLE[cls_p, cls_q] = f  # type: ignore[assignment]
        return f

    return decorator


def _dispatch(cls_p: type, cls_q: type) -> Callable[[Any, Any], Any]:
    """The registered function of the most specific pair matching `(cls_p, cls_q)`
    (a RuntimeWarning when the choice is ambiguous)."""
    matches = [(p, q) for p, q in _REGISTER_TABLE if issubclass(cls_p, p) and issubclass(cls_q, q)]
    if not matches:
        raise NotImplementedError
    left_p, left_q = min(_Compare(*m) for m in matches).classes
    right_p, right_q = min(_Compare(*reversed(m)) for m in matches).classes
    if _REGISTER_TABLE[left_p, left_q] is not _REGISTER_TABLE[right_p, right_q]:
        warnings.warn(
            f"Ambiguous kl_divergence({cls_p.__name__}, {cls_q.__name__}). "
            f"Please register_kl({left_p.__name__}, {right_q.__name__})",
            RuntimeWarning,
            stacklevel=3,
        )
    return _REGISTER_TABLE[left_p, left_q]


@functools.total_ordering
class _Compare:
    def __init__(self, *classes: type) -> None:
        self.classes = classes

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Compare) and self.classes == other.classes

    def __le__(self, other: _Compare) -> bool:
        for cls_x, cls_y in zip(self.classes, other.classes):
            if not issubclass(cls_x, cls_y):
                return False
            if cls_x is not cls_y:
                break
        return True

    __hash__ = None  # type: ignore[assignment]


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p: Bernoulli, q: Bernoulli) -> Any:
    return p.kl_divergence(q)


@register_kl(Beta, Beta)
def _kl_beta_beta(p: Beta, q: Beta) -> Any:
    return (
        q.alpha.lgamma()
        + q.beta.lgamma()
        + (p.alpha + p.beta).lgamma()
        - (p.alpha.lgamma() + p.beta.lgamma() + (q.alpha + q.beta).lgamma())
        + (p.alpha - q.alpha) * p.alpha.digamma()
        + (p.beta - q.beta) * p.beta.digamma()
        + (q.alpha + q.beta - (p.alpha + p.beta)) * (p.alpha + p.beta).digamma()
    )


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p: Dirichlet, q: Dirichlet) -> Any:
    return (
        p.concentration.sum(-1).lgamma()
        - q.concentration.sum(-1).lgamma()
        - (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
        + (
            (p.concentration - q.concentration)
            * (p.concentration.digamma() - p.concentration.sum(-1).digamma().unsqueeze(-1))
        ).sum(-1)
    )


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p: Categorical, q: Categorical) -> Any:
    return p.kl_divergence(q)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p: Cauchy, q: Cauchy) -> Any:
    return p.kl_divergence(q)


@register_kl(Normal, Normal)
def _kl_normal_normal(p: Normal, q: Normal) -> Any:
    return p.kl_divergence(q)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p: MultivariateNormal, q: MultivariateNormal) -> Any:
    return p.kl_divergence(q)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p: Uniform, q: Uniform) -> Any:
    """As in Paddle 3.3.1: Uniform defines no `kl_divergence`, so this raises
    NotImplementedError."""
    return p.kl_divergence(q)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p: Laplace, q: Laplace) -> Any:
    return p.kl_divergence(q)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p: Geometric, q: Geometric) -> Any:
    return p.kl_divergence(q)


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p: ExponentialFamily, q: ExponentialFamily) -> Any:
    """KL between two exponential-family distributions of one type, as the Bregman
    divergence of the log normalizer."""
    if type(p) is not type(q):
        raise NotImplementedError
    p_natural_params = detached_parameters(p._natural_parameters)
    q_natural_params = q._natural_parameters
    p_log_norm = p._log_normalizer(*p_natural_params)
    try:
        p_grads = natural_gradients(p_log_norm, p_natural_params)
    except RuntimeError as e:
        raise TypeError(
            f"Can't compute kl_divergence({type(p).__name__}, {type(q).__name__}) use bregman divergence. "
            f"Please register_kl({type(p).__name__}, {type(q).__name__})."
        ) from e
    kl = q._log_normalizer(*q_natural_params) - p_log_norm
    for p_param, q_param, p_grad in zip(p_natural_params, q_natural_params, p_grads):
        term = (q_param - p_param) * p_grad
        kl = kl - sum_rightmost(term, len(q.event_shape))
    return kl


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p: Exponential, q: Exponential) -> Any:
    return p.kl_divergence(q)


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p: Gamma, q: Gamma) -> Any:
    return p.kl_divergence(q)


@register_kl(LogNormal, LogNormal)
def _kl_lognormal_lognormal(p: LogNormal, q: LogNormal) -> Any:
    return p._base.kl_divergence(q._base)


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p: Binomial, q: Binomial) -> Any:
    return p.kl_divergence(q)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuousbernoulli_continuousbernoulli(p: ContinuousBernoulli, q: ContinuousBernoulli) -> Any:
    return p.kl_divergence(q)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p: Poisson, q: Poisson) -> Any:
    return p.kl_divergence(q)
