"""Every value is defined before it is used: the dominance check of `pd` programs.

A `builtin.module` body is a *graph region* in MLIR, where an op may use a value
defined after it; xDSL's verifier accordingly checks no order.  A `pd` program is
a sequence (Paddle's block 0), so a use before the definition (`%a = pd.tanh %b`
then `%b = pd.tanh %a`, or `%a = pd.add %x, %a`) is malformed: the interpreter
would read a value it never computed and the lowering would read an uninitialized
buffer.  `check_dominance` walks the ops in order with the values in scope: a
block's arguments, the results of the ops before, and what is in scope where the
op holding the region is.  Regions of several blocks (control-flow graphs of
lowered IR) need a dominator tree: a use of a value defined in another block of
the same region is accepted there.
"""

from __future__ import annotations

from xdsl.ir import Block, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException


class DominanceError(VerifyException):
    """An op uses a value that is not defined before it; `failed_op` is that op."""

    def __init__(self, message: str, failed_op: Operation) -> None:
        super().__init__(message)
        self.failed_op = failed_op


def _name(v: SSAValue) -> str:
    return f"%{v.name_hint}" if v.name_hint else f"a result of '{v.owner.name}'" if isinstance(
        v.owner, Operation) else "a block argument"


def check_dominance(root: Operation) -> None:
    """Raise `DominanceError` at the first op (in walk order) that uses a value not
    defined before it (see the module docstring)."""
    scope: set[SSAValue] = set()
    lenient: set[SSAValue] = set()

    def visit(block: Block) -> None:
        added: list[SSAValue] = list(block.args)
        scope.update(block.args)
        for op in block.ops:
            for i, v in enumerate(op.operands):
                if v not in scope and v not in lenient:
                    owner = v.owner
                    if owner is op:
                        what = "its own result"
                    else:
                        what = "defined after it" if _in_scope_later(v, op) else "not defined where it is used"
                    raise DominanceError(f"'{op.name}': operand {i} ({_name(v)}) is {what}", op)
            for region in op.regions:
                blocks = list(region.blocks)
                if len(blocks) > 1:
                    region_values = [r for b in blocks for o in b.ops for r in o.results]
                    region_values += [a for b in blocks for a in b.args]
                    fresh = [r for r in region_values if r not in lenient]
                    lenient.update(fresh)
                    for b in blocks:
                        visit(b)
                    lenient.difference_update(fresh)
                else:
                    for b in blocks:
                        visit(b)
            scope.update(op.results)
            added.extend(op.results)
        scope.difference_update(added)

    for region in root.regions:
        for b in region.blocks:
            visit(b)


def _in_scope_later(v: SSAValue, user: Operation) -> bool:
    """Whether `v` is defined by an op after `user` (or after an op holding it) in a
    block enclosing `user`: a use before the definition, as opposed to a value of
    an unrelated region."""
    owner = v.owner
    if not isinstance(owner, Operation):
        return False
    block = owner.parent_block()
    op: Operation | None = user
    while op is not None and op.parent_block() is not block:
        op = op.parent_op()
    return op is not None


__all__ = ["DominanceError", "check_dominance"]
