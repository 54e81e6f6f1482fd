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
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.ir import Operation, SSAValue

from pullback.dialects.pd import FAMILIES, family_modules
from pullback.dialects.pd.control import captured_values

from .builder import VjpBuilder

VjpRule = Callable[[VjpBuilder, Operation, list["SSAValue | None"]], Sequence["SSAValue | None"]]

VJP_RULES: dict[type[Operation], VjpRule] = {}

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


def non_differentiable(*op_types: type[Operation]) -> None:
    """Declare ops whose results never carry gradients."""
    NON_DIFFERENTIABLE.update(op_types)


def load_all() -> None:
    """Import every family module so that their registrations run."""
    family_modules(__name__)


__all__ = ["FAMILIES", "grad_inputs", "VJP_RULES", "NON_DIFFERENTIABLE", "VjpBuilder", "VjpRule", "vjp", "non_differentiable", "load_all"]
