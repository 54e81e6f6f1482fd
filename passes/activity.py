"""Activity analysis: which ops reverse-mode AD goes through.

A value is *varied* when it depends on one of the inputs `wrt` through float or
integer results of differentiable ops, without crossing a value named in `no_grad`;
it is *useful* when some target depends on it.  An op is *active* when one of its
results is both and one of its operands (for `pd.if`/`pd.while`, or a value its
regions capture) is varied: only active ops get a VJP rule applied (Paddle's
pruning of ops that are not on a path from the inputs to the targets).

One implementation serves both users: the `autodiff` pass (which ops to
differentiate) and eager autograd (which recorded nodes a backward call goes
through, i.e. what `retain_graph=False` frees).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from pullback.dialects.pd.base import INT_TYPES, elem_of, is_inexact, value_name
from pullback.passes import vjp as vjp_rules


@dataclass
class Activity:
    """The result of `analyze`."""

    varied: set[SSAValue]
    """Values depending on an input through differentiable ops."""
    active: list[Operation]
    """Ops to differentiate, in program order."""


def differentiable(v: SSAValue, no_grad: Collection[str] = ()) -> bool:
    """Whether a gradient can flow through `v`: a float, complex or integer value (Paddle
    differentiates integer values too; bools, comparison results, never) not named
    in `no_grad`."""
    elem = elem_of(v.type)
    if not (is_inexact(elem) or elem in INT_TYPES):
        return False
    if not no_grad:
        return True
    name = value_name(v)
    return name is None or name not in no_grad


def analyze(
    ops: Sequence[Operation],
    targets: Sequence[SSAValue],
    wrt: Sequence[SSAValue],
    no_grad: Collection[str] = (),
    resolve: Callable[[SSAValue], SSAValue] | None = None,
) -> Activity:
    """Varied values and active ops of `ops` (in program order) for gradients of
    `targets` with respect to `wrt`.

    `resolve` maps an operand to the value it stands for (the autodiff pass maps
    results of earlier backward regions to their clones); identity by default.
    One forward and one backward sweep: linear in the number of uses.
    """
    vjp_rules.load_all()

    def resolved(values: Sequence[SSAValue]) -> Sequence[SSAValue]:
        return values if resolve is None else [resolve(v) for v in values]

    varied: set[SSAValue] = {w for w in wrt if differentiable(w, no_grad)}
    skip = vjp_rules.NON_DIFFERENTIABLE
    for op in ops:
        if type(op) in skip:
            continue
        if not varied.isdisjoint(resolved(vjp_rules.grad_inputs(op))):
            varied.update(r for r in op.results if differentiable(r, no_grad))
    useful: set[SSAValue] = set(targets)
    active: list[Operation] = []
    for op in reversed(ops):
        inputs = resolved(vjp_rules.grad_inputs(op))  # operands, and what regions capture
        if any(r in useful and r in varied for r in op.results) and not varied.isdisjoint(inputs):
            active.append(op)
            useful.update(inputs)
    active.reverse()
    return Activity(varied, active)


__all__ = ["Activity", "analyze", "differentiable"]
