"""Vector-Jacobian-product rules, one per `pd` op, written with `pd` ops.

A rule has the signature

    rule(b: VjpBuilder, op: Operation, out_grads: list[SSAValue | None])
        -> list[SSAValue | None]   # one entry per operand of `op`

`out_grads[i]` is the gradient of result `i`, or None when nothing flows into it.
Return None for an operand that gets no gradient (integer inputs, constants...).
Ops with regions return one gradient per value of `grad_inputs(op)` (operands, then
the outer values their regions capture).
Rules emit ops only through `b`, so the backward region is ordinary `pd` IR that can
be printed, pruned, lowered and differentiated again.

Rules live in `passes/vjp/<family>.py` and register with `@vjp(OpClass, ...)`.

Complex values.  The gradient of a real loss L with respect to a complex z is, as in
Paddle, `dL/d re(z) + i dL/d im(z)` (the conjugate Wirtinger derivative, doubled).
For a holomorphic op `y = f(x)` that makes `x_grad = conj(f'(x)) * y_grad`: the
real-mode rule (`y_grad * f'(x)`, linear in the gradient) applied to `conj(y_grad)`
and conjugated again.  `rule_for` wraps the rules of ops that declare `COMPLEX`
(holomorphic or real-linear ones) so whenever an operand or result is complex; the
rules of the ops that are not holomorphic (`abs`, `real`, `conj`, `angle`, casts,
the transforms) or that differentiate regions handle complex values themselves
and are registered `complex_aware`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.ir import Operation, SSAValue

from xdsl.dialects.builtin import TensorType

from pullback.dialects.pd import FAMILIES, family_modules
from pullback.dialects.pd.base import elem_of, is_complex
from pullback.dialects.pd.control import captured_values

from .builder import VjpBuilder

VjpRule = Callable[[VjpBuilder, Operation, list["SSAValue | None"]], Sequence["SSAValue | None"]]

VJP_RULES: dict[type[Operation], VjpRule] = {}

COMPLEX_AWARE: set[type[Operation]] = set()
"""Ops whose rules give Paddle's complex gradients themselves (see the module's
docstring): `rule_for` does not conjugate around them."""

NON_DIFFERENTIABLE: set[type[Operation]] = set()
"""Ops whose outputs carry no gradient at all (comparisons, constants, random...)."""

def grad_inputs(op: Operation) -> Sequence[SSAValue]:
    """The values a rule returns gradients for: the operands, followed for ops with
    regions (`pd.if`, `pd.while`) by the outer values their regions use directly."""
    if not op.regions:
        return op.operands
    return [*op.operands, *captured_values(op)]


def vjp(*op_types: type[Operation]) -> Callable[[VjpRule], VjpRule]:
    """Register a VJP rule for one or more op classes."""

    def register(fn: VjpRule) -> VjpRule:
        for t in op_types:
            VJP_RULES[t] = fn
        return fn

    return register


def complex_aware(*op_types: type[Operation]) -> None:
    """Declare ops whose rules handle complex operands and results themselves."""
    COMPLEX_AWARE.update(op_types)


def _touches_complex(op: Operation) -> bool:
    return any(is_complex(elem_of(v.type)) for v in (*op.operands, *op.results) if isinstance(v.type, TensorType))


def rule_for(op: Operation) -> VjpRule | None:
    """The rule differentiating `op` (None when it has none): its registered rule,
    conjugated around when `op` touches complex values and is not `complex_aware`
    (a holomorphic op's rule, see the module's docstring)."""
    rule = VJP_RULES.get(type(op))
    if rule is None or type(op) in COMPLEX_AWARE or not _touches_complex(op):
        return rule
    real_rule = rule

    def conjugated(b: VjpBuilder, op: Operation, grads: list[SSAValue | None]) -> Sequence[SSAValue | None]:
        ins = real_rule(b, op, [b.conj(g) for g in grads])
        return [b.conj(g) for g in ins]

    return conjugated


def non_differentiable(*op_types: type[Operation]) -> None:
    """Declare ops whose results never carry gradients."""
    NON_DIFFERENTIABLE.update(op_types)


def load_all() -> None:
    """Import every family module so that their registrations run."""
    family_modules(__name__)


__all__ = ["COMPLEX_AWARE", "complex_aware", "rule_for", "FAMILIES", "grad_inputs", "VJP_RULES", "NON_DIFFERENTIABLE", "VjpBuilder", "VjpRule", "vjp", "non_differentiable", "load_all"]
