"""`paddle.incubate.autograd`: the functional differentiation API (`vjp`, `jvp`,
`Jacobian(func, xs)`, `Hessian(func, xs)`), built on `frontend/jacobian.py`."""

from __future__ import annotations

from pullback.frontend.jacobian import FunctionalHessian as Hessian
from pullback.frontend.jacobian import FunctionalJacobian as Jacobian
from pullback.frontend.jacobian import jvp, vjp

__all__ = ["Hessian", "Jacobian", "jvp", "vjp"]
