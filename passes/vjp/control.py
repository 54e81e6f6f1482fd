"""Reverse mode through `pd.if`, `pd.while` and the stacks.

The backward of a region op is again a region op of ordinary `pd` IR, so the AD pass
stays one linear sweep and gradients of gradients need nothing more:

* `pd.if`: the backward is a `pd.if` on the same predicate.  Each branch recomputes
  the forward ops of its branch that the gradient needs (cloned, then pruned), runs
  the reverse sweep over them seeded with the result gradients, and yields the
  gradients of the outer values the `if` captured; a value the branch does not use
  gets zeros.  (Recomputing the branch instead of passing its intermediates out of
  the forward `if` keeps the forward op untouched, so a program without backward
  pays nothing; the cost is one more evaluation of the taken branch.)
* `pd.while`: the forward loop is extended in place (`WhileOp.append_carried`, so
  its existing results and the Variables naming them stay valid) with an iteration
  counter and one stack per carried value the backward reads: each iteration pushes
  that value as it starts.  The backward is a reverse `pd.while` counting the
  iterations down: it reads the iteration's values from the stacks, recomputes the
  body's intermediates the gradient needs from them, and runs the reverse sweep of
  the body.  Its carried values are the index, the gradients of the loop-carried
  values (the seeds of the previous step) and accumulators for the outer values the
  loop captured (parameters), so their gradients sum over iterations.  Which carried
  values get a stack is decided after pruning the reverse body: a value only pushed
  onto a stack (a stack itself, at higher order) is never stacked.  Each
  differentiation of a loop adds its own counter and stacks.
* Stacks: the VJP of a push is a pop of the gradient stack, of a pop a push, of a
  read a write into zeros and of a write a read: closed, hence higher order.
"""

from __future__ import annotations

from collections.abc import Sequence

from pullback.dialects import pd
from pullback.dialects.pd.base import elem_of, i64, is_inexact, tensor_type
from pullback.passes import activity
from pullback.passes.prune import prune_block
from pullback.passes.vjp import (
    complex_aware,
    rule_for,
    VjpBuilder,
    grad_inputs,
    non_differentiable,
    vjp,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.traits import IsTerminator

non_differentiable(pd.StackCreateOp, pd.StackSizeOp)

Grad = SSAValue | None


def _float(v: SSAValue) -> bool:
    return is_inexact(elem_of(v.type))


def _wanted(b: VjpBuilder, v: SSAValue) -> bool:
    """Does the enclosing sweep need the gradient of outer value `v`?"""
    return _float(v) and (b.varied is None or v in b.varied)


# ------------------------------------------------------------------ nested sweep


def reverse_sweep(
    b: VjpBuilder,
    ops: Sequence[Operation],
    seeds: Sequence[tuple[SSAValue, SSAValue]],
    wrt: Sequence[SSAValue],
) -> dict[SSAValue, Grad]:
    """Reverse mode over `ops` (forward ops, in order) emitting through `b`.

    `seeds` pairs values with their incoming gradients; `wrt` are the values whose
    gradients are returned (None where none flows).  Only ops between `wrt` and the
    seeded values are differentiated; ops with regions recurse through their rules.
    """
    found = activity.analyze(ops, [v for v, _ in seeds], wrt)
    varied, active = found.varied, list(reversed(found.active))
    outer_varied, b.varied = b.varied, varied
    contribs: dict[SSAValue, list[SSAValue]] = {}

    def add(v: SSAValue, g: SSAValue) -> None:
        if v in varied:
            contribs.setdefault(v, []).append(g)

    def total(v: SSAValue) -> Grad:
        parts = contribs.get(v)
        if not parts:
            return None
        if len(parts) > 1:
            parts[:] = [b.emit(pd.SumOp, *parts)]
        return parts[0]

    try:
        for v, g in seeds:
            add(v, g)
        for op in active:
            out_grads = [total(r) for r in op.results]
            if all(g is None for g in out_grads):
                continue
            rule = rule_for(op)
            if rule is None:
                raise NotImplementedError(
                    f"no VJP rule for '{op.name}' (inside a control-flow region)"
                )
            in_grads = list(rule(b, op, out_grads))
            # after the rule: a while's rule adds operands (its stacks) in place
            for v, g in zip(grad_inputs(op), in_grads, strict=True):
                if g is not None:
                    add(v, g)
        return {w: total(w) for w in wrt}
    finally:
        b.varied = outer_varied


def _clone_ops(block: Block, into: Block, mapping: dict[SSAValue, SSAValue]) -> list[Operation]:
    """Clone `block`'s ops but its terminator into `into` (results join `mapping`)."""
    out: list[Operation] = []
    for op in block.ops:
        if op is block.last_op and op.has_trait(IsTerminator):
            break
        new = op.clone(value_mapper=mapping)
        # A recomputed value is not the Paddle variable it copies: no name.
        new.properties.pop("name", None)
        new.properties.pop("names", None)
        into.add_op(new)
        out.append(new)
    return out


def _finish(block: Block, yielded: Sequence[SSAValue], term: type = pd.YieldOp) -> Region:
    """End `block` with a terminator, drop what it does not need, wrap in a region."""
    block.add_op(term.create(operands=list(yielded)))
    prune_block(block, {block.last_op})  # type: ignore[arg-type]
    return Region(block)


# ------------------------------------------------------------------------- if


@vjp(pd.IfOp)
def _if_vjp(b: VjpBuilder, op: pd.IfOp, out_grads: list[Grad]) -> list[Grad]:
    inputs = list(grad_inputs(op))
    caps = [c for c in inputs[1:] if _wanted(b, c)]
    if not caps:
        return [None] * len(inputs)
    regions: list[Region] = []
    for region in (op.then_region, op.else_region):
        block = Block()
        nb = VjpBuilder(block)
        nb.varied = b.varied
        mapping: dict[SSAValue, SSAValue] = {}
        ops = _clone_ops(region.block, block, mapping)
        term = region.block.last_op
        assert term is not None
        seeds = [
            (mapping.get(v, v), g) for v, g in zip(term.operands, out_grads) if g is not None
        ]
        grads = reverse_sweep(nb, ops, seeds, caps)
        yielded = [g if (g := grads[c]) is not None else nb.full_like(c, 0.0) for c in caps]
        regions.append(_finish(block, yielded))
    new = pd.IfOp.make(op.cond, regions[0], regions[1], [c.type for c in caps])
    b.insert(new)
    by_cap = dict(zip(caps, new.outs))
    return [None] + [by_cap.get(c) for c in inputs[1:]]


# ---------------------------------------------------------------------- while

_INDEX = tensor_type(i64, [])


def _int_const(b: VjpBuilder, value: int) -> SSAValue:
    return b.emit(pd.FillConstantOp, shape=[], value=float(value), dtype="int64")


@vjp(pd.WhileOp)
def _while_vjp(b: VjpBuilder, op: pd.WhileOp, out_grads: list[Grad]) -> list[Grad]:
    inputs = list(grad_inputs(op))
    n = len(op.inits)
    carried = [j for j in range(n) if _float(op.inits[j])]
    caps = [c for c in inputs[n:] if _wanted(b, c)]
    body = op.body_block()
    body_term = body.last_op
    assert body_term is not None

    # Initial carries of the reverse loop: result gradients, zero accumulators.
    g0 = [g if (g := out_grads[j]) is not None else b.full_like(op.outs[j], 0.0) for j in carried]
    acc0 = [b.full_like(c, 0.0) for c in caps]

    # Reverse body.  Stacks do not exist yet: reads take a stand-in replaced below.
    rblock = Block(arg_types=[_INDEX, *(v.type for v in g0), *(v.type for v in acc0)])
    rb = VjpBuilder(rblock)
    rb.varied = b.varied
    index = rb.emit(pd.ElementwiseSubOp, rblock.args[0], _int_const(rb, 1))
    stand_ins = Block(arg_types=[pd.StackCreateOp.infer([v.type], {})[0] for v in op.inits])
    reads = [rb.emit(pd.StackReadOp, stand_ins.args[j], index) for j in range(n)]
    mapping: dict[SSAValue, SSAValue] = dict(zip(body.args, reads))
    ops = _clone_ops(body, rblock, mapping)
    seeds = [
        (mapping.get(body_term.operands[j], body_term.operands[j]), rblock.args[1 + k])
        for k, j in enumerate(carried)
    ]
    grads = reverse_sweep(rb, ops, seeds, [reads[j] for j in carried] + caps)
    g_next = [
        g if (g := grads[reads[j]]) is not None else rb.full_like(reads[j], 0.0) for j in carried
    ]
    acc_args = rblock.args[1 + len(carried) :]
    acc_next = [
        acc if (g := grads[c]) is None else rb.add(acc, g) for acc, c in zip(acc_args, caps)
    ]
    reverse_body = _finish(rblock, [index, *g_next, *acc_next])
    taped = [j for j in range(n) if reads[j].owner.parent_block() is rblock]  # type: ignore[union-attr]

    # The forward loop itself, extended in place, counts its iterations and pushes
    # what the reverse reads (each carried value as an iteration starts).
    count0 = pd.FillConstantOp.make(shape=[], value=0.0, dtype="int64")
    creates = [pd.StackCreateOp.make(op.inits[j]) for j in taped]
    parent = op.parent_block()
    assert parent is not None
    parent.insert_ops_before([count0, *creates], op)
    extra_args, extra_results = op.append_carried([count0.out, *(c.out for c in creates)])
    fb = VjpBuilder(Block())
    count = fb.add(extra_args[0], _int_const(fb, 1))
    pushed = [fb.emit(pd.StackPushOp, extra_args[1 + k], body.args[j]) for k, j in enumerate(taped)]
    for new_op in fb.take_emitted():
        new_op.detach()
        body.insert_op_before(new_op, body_term)
    body_term.operands = [*body_term.operands, count, *pushed]
    for k, j in enumerate(taped):
        stand_ins.args[j].replace_all_uses_with(extra_results[1 + k])

    # The reverse loop: while index > 0.
    rcond = Block(arg_types=list(rblock.arg_types))
    cb = VjpBuilder(rcond)
    more = cb.emit(pd.GreaterThanOp, rcond.args[0], _int_const(cb, 0))
    cb.insert(pd.ConditionOp.create(operands=[more]))
    rev = pd.WhileOp.make([extra_results[0], *g0, *acc0], Region(rcond), reverse_body)
    b.insert(rev)

    pos = {j: k for k, j in enumerate(carried)}
    result: list[Grad] = [rev.outs[1 + pos[j]] if j in pos else None for j in range(n)]
    result += [None] * len(extra_results)  # the counter and the stacks' creation
    acc_out = dict(zip(caps, rev.outs[1 + len(carried) :]))
    result += [acc_out.get(c) for c in inputs[n:]]
    return result


# ---------------------------------------------------------------------- stacks


@vjp(pd.StackPushOp)
def _push_vjp(b: VjpBuilder, op: pd.StackPushOp, out_grads: list[Grad]) -> list[Grad]:
    (g,) = out_grads
    assert g is not None
    rest, top = b.emit_multi(pd.StackPopOp, g)
    return [rest, top]


@vjp(pd.StackPopOp)
def _pop_vjp(b: VjpBuilder, op: pd.StackPopOp, out_grads: list[Grad]) -> list[Grad]:
    g_rest, g_top = out_grads
    g_rest = g_rest if g_rest is not None else b.full_like(op.rest, 0.0)
    g_top = g_top if g_top is not None else b.full_like(op.top, 0.0)
    return [b.emit(pd.StackPushOp, g_rest, g_top)]


@vjp(pd.StackReadOp)
def _read_vjp(b: VjpBuilder, op: pd.StackReadOp, out_grads: list[Grad]) -> list[Grad]:
    (g,) = out_grads
    assert g is not None
    return [b.emit(pd.StackWriteOp, b.full_like(op.stack, 0.0), op.index, g), None]


@vjp(pd.StackWriteOp)
def _write_vjp(b: VjpBuilder, op: pd.StackWriteOp, out_grads: list[Grad]) -> list[Grad]:
    (g,) = out_grads
    assert g is not None
    return [
        b.emit(pd.StackWriteOp, g, op.index, b.full_like(op.x, 0.0)),
        None,
        b.emit(pd.StackReadOp, g, op.index),
    ]


__all__ = ["reverse_sweep"]


# Region rules compose the (complex-correct) rules of the ops inside.
complex_aware(pd.IfOp, pd.WhileOp)
