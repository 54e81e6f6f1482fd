"""`paddle.distribution.ExponentialFamily`: distributions of the exponential family,
whose entropy (and KL divergence between two of the same type, `kl.py`) follow from
the log normalizer by differentiation (Paddle 3.3.1's definitions)."""

from __future__ import annotations

from typing import Any

import pullback as paddle
from pullback.frontend.distribution import distribution


def natural_gradients(value: Any, params: list[Any]) -> list[Any]:
    """d value / d params, differentiable in turn (eager: `paddle.grad` with
    `create_graph=True`; static: `paddle.static.gradients`)."""
    if paddle.in_dynamic_mode():
        return list(paddle.grad(value, params, create_graph=True))
    return list(paddle.static.gradients(value, params))


def detached_parameters(params: Any) -> list[Any]:
    """The natural parameters as new leaves that require gradients."""
    out = []
    for p in params:
        p = p.detach()
        p.stop_gradient = False
        out.append(p)
    return out


class ExponentialFamily(distribution.Distribution):
    r"""Base class of exponential-family distributions

    .. math:: f_F(x; \theta) = \exp(\langle t(x), \theta\rangle - F(\theta) + k(x))

    A subclass defines `_natural_parameters` (theta), `_log_normalizer` (F) and
    `_mean_carrier_measure` (E[k(x)]); `entropy` is then
    `F(theta) - <theta, grad F(theta)> - E[k(x)]`."""

    @property
    def _natural_parameters(self) -> Any:
        raise NotImplementedError

    def _log_normalizer(self, *args: Any) -> Any:
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self) -> Any:
        raise NotImplementedError

    def entropy(self) -> Any:
        """The entropy, by the Bregman identity on the log normalizer."""
        entropy_value = -self._mean_carrier_measure
        natural_parameters = detached_parameters(self._natural_parameters)
        log_norm = self._log_normalizer(*natural_parameters)
        grads = natural_gradients(log_norm.sum(), natural_parameters)
        entropy_value = entropy_value + log_norm
        for p, g in zip(natural_parameters, grads):
            entropy_value = entropy_value - p * g
        return entropy_value
