"""`autodiff`: fill every empty `pd.backward` region by reverse-mode AD.

For a `pd.backward` op with targets T, seeds S, inputs W and a no-grad name set N:

1. *Earlier backward regions.* If T depends on results of earlier `pd.backward` ops
   (gradients of gradients), their bodies are cloned into the new region first and
   their results mapped to the clones, so they become ordinary forward ops.  This is
   what makes higher-order gradients need no extra code.
2. *Activity analysis* (`passes/activity.py`, shared with eager autograd).  A value
   is *varied* if it depends on some input in W through differentiable ops without
   crossing a name in N, and *useful* if some target depends on it.  Only ops with a
   result that is both are differentiated (Paddle's pruning of ops that are not on a
   path from the inputs to the targets).  Integer values take part as in Paddle: an
   integer target is seeded with integer ones and its gradient flows through the
   ops' rules (`cast` back to float, say); bools never carry a gradient.
3. *Reverse sweep.* Each target is seeded (with its seed, or ones shaped like it);
   ops are visited in reverse program order and their VJP rules emit `pd` ops into
   the region.  A value with several gradient contributions gets them summed by one
   `pd.sum`, with Paddle's names: `x@GRAD@RENAME@block0@0`, `@1`, ... then `x@GRAD`.
4. The op is rebuilt keeping in W only the inputs that received a gradient; the
   region ends in `pd.yield`, results named `<input>@GRAD`.

Cost is linear in the program size: one forward sweep, one backward sweep, and a
constant amount of work per use.
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from pullback.dialects import pd
from pullback.dialects.pd.base import elem_of, set_value_name, shapes_compatible, shape_of, value_name
from pullback.passes import activity
from pullback.passes import vjp as vjp_rules
from pullback.passes.gc_pause import cyclic_gc_paused
from pullback.passes.prune import prune_backward_region
from pullback.passes.vjp import VjpBuilder


class AutodiffError(DiagnosticException):
    """Differentiation failed (an op without a VJP rule, a bad rule result, ...).

    `failed_op` is the op at fault, so drivers can report its source location."""

    def __init__(self, message: str, failed_op: Operation | None = None) -> None:
        super().__init__(message)
        self.failed_op = failed_op


class AutodiffWarning(UserWarning):
    """The pass found nothing to do that the user probably expected it to do."""


GradCallback = Callable[["GradOpRecord"], None]


@dataclass
class GradOpRecord:
    """What one step of the reverse sweep added: the gradient 'op' of a forward op.

    Paddle calls `append_backward` callbacks once per gradient operator; in pullback a
    VJP rule may emit several `pd` ops, so a record groups them under the name Paddle
    would give the gradient operator (`<forward type>_grad`, or `sum` for an
    accumulation).
    """

    type: str
    forward_op: Operation | None
    ops: list[Operation]
    inputs: dict[str, list[str]] = field(default_factory=dict)
    outputs: dict[str, list[str]] = field(default_factory=dict)
    grad_to_var: dict[str, str] = field(default_factory=dict)

    def paddle_type(self, op_type: Callable[[Operation], str]) -> str:
        """The operator type Paddle shows: `grad_op_type` of the forward op's type as
        `op_type` names it (a static fc's `pd.matmul` is `mul`, so `mul_grad`), or the
        record's own type (`sum`) when it has no forward op."""
        return self.type if self.forward_op is None else grad_op_type(op_type(self.forward_op))


def grad_op_type(forward_type: str) -> str:
    """Paddle's type of the gradient operator of a `forward_type` operator (`mul_grad`)."""
    return f"{forward_type}_grad"


def op_name(op: Operation) -> str:
    """The op's full name, also for ops of unregistered dialects."""
    unregistered = getattr(op, "op_name", None)
    return unregistered.data if unregistered is not None else op.name


def op_type(op: Operation) -> str:
    """Paddle's operator type of an op (`pd.matmul` -> `matmul`)."""
    return op_name(op).split(".", 1)[-1]


# ------------------------------------------------------------------------ engine


class _Differentiator:
    """One reverse-mode sweep filling one `pd.backward` op."""

    def __init__(self, bw: pd.BackwardOp, callback: GradCallback | None) -> None:
        self.bw = bw
        self.callback = callback
        self.block: Block = bw.body_block()
        self.b = VjpBuilder(self.block)
        self.no_grad = set(pd.from_attr(bw.no_grad))
        self.remap: dict[SSAValue, SSAValue] = {}
        self.contribs: dict[SSAValue, list[SSAValue]] = {}
        self.final: dict[SSAValue, SSAValue] = {}
        self.step: list[tuple[SSAValue, int]] = []
        """Where the gradients made by the current gradient op went: (value, index in
        `contribs[value]`), or (value, -1) for `final[value]`; what a callback may
        redefine (`_rebind`)."""

    # -- step 1: earlier backward regions become forward ops --------------------

    def _forward_ops(self) -> list[Operation]:
        """Ops the targets may depend on, in program order, earlier backward bodies
        cloned into this region where the targets need them."""
        parent = self.bw.parent_block()
        assert parent is not None
        ops: list[Operation] = []
        earlier: list[pd.BackwardOp] = []
        for op in parent.ops:
            if op is self.bw:
                break
            ops.append(op)
            if isinstance(op, pd.BackwardOp):
                earlier.append(op)
        if not earlier:
            return ops  # a first-order gradient: no walk of the targets' inputs needed
        needed_bw = self._needed_backward_ops()
        spliced: list[Operation] = []
        for op in ops:
            if isinstance(op, pd.BackwardOp):
                if op in needed_bw:
                    spliced.extend(self._clone_backward(op))
                continue
            spliced.append(op)
        return spliced

    def _needed_backward_ops(self) -> set[Operation]:
        """Earlier `pd.backward` ops whose results the targets transitively use."""
        found: set[Operation] = set()
        seen: set[SSAValue] = set()
        stack = list(self.bw.targets)
        while stack:
            v = stack.pop()
            if v in seen:
                continue
            seen.add(v)
            owner = v.owner
            if not isinstance(owner, Operation):
                continue
            if isinstance(owner, pd.BackwardOp):
                if owner not in found:
                    found.add(owner)
                    if not owner.is_filled:
                        continue  # reported by _clone_backward
                    for inner in owner.body.block.ops:
                        stack.extend(inner.operands)
                continue
            if owner.parent_block() is not self.bw.parent_block():
                continue
            stack.extend(vjp_rules.grad_inputs(owner))
        return found

    def _clone_backward(self, old: pd.BackwardOp) -> list[Operation]:
        """Clone `old`'s body into this region; map its results to the clones."""
        if not old.is_filled:
            raise AutodiffError(
                "cannot differentiate through an empty pd.backward: run autodiff on it first"
            )
        cloned: list[Operation] = []
        mapping = dict(self.remap)
        for inner in old.body.block.ops:
            if isinstance(inner, pd.YieldOp):
                for res, val in zip(old.grads, inner.values):
                    self.remap[res] = mapping.get(val, val)
                break
            new = inner.clone(value_mapper=mapping)
            self.block.add_op(new)
            cloned.append(new)
        return cloned

    def _get(self, v: SSAValue) -> SSAValue:
        return self.remap.get(v, v)

    # -- step 2: activity analysis (passes/activity.py) ---------------------------

    def _activity(
        self, ops: list[Operation], targets: list[SSAValue], wrt: list[SSAValue]
    ) -> list[Operation]:
        result = activity.analyze(ops, targets, wrt, self.no_grad, self._get if self.remap else None)
        self.varied = result.varied
        self.b.varied = result.varied
        return result.active

    # -- step 3: reverse sweep ----------------------------------------------------

    def _contribute(self, v: SSAValue, g: SSAValue) -> None:
        if v not in self.varied:
            return
        if g.type is not v.type and (
            not shapes_compatible(shape_of(g.type), shape_of(v.type)) or elem_of(g.type) != elem_of(v.type)
        ):
            raise AutodiffError(
                f"VJP rule produced a gradient of type {g.type} for a value of type {v.type}"
            )
        parts = self.contribs.setdefault(v, [])
        parts.append(g)
        self.step.append((v, len(parts) - 1))

    def _grad_of(self, v: SSAValue) -> SSAValue | None:
        """The total gradient of `v`, summing its contributions on first request."""
        if v in self.final:
            return self.final[v]
        parts = self.contribs.pop(v, None)
        if not parts:
            return None
        name = value_name(v)
        grad_name = f"{name}@GRAD" if name else None
        if len(parts) == 1:
            total = parts[0]
        else:
            if grad_name:
                # Paddle's accumulation names: each part becomes @RENAME@block0@i.
                for i, p in enumerate(parts):
                    if value_name(p) == grad_name:
                        set_value_name(p, f"{grad_name}@RENAME@block0@{i}")
            op = pd.SumOp.make(*parts, name=grad_name)
            self.b.insert(op)
            total = op.out
            self.final[v] = total
            self.step.append((v, -1))
            self._report(
                "sum",
                None,
                {"X": [value_name(p) or "" for p in parts]},
                {"Out": [grad_name or ""]},
                {grad_name: name} if grad_name and name else {},
            )
            return self.final[v]  # a callback may have redefined it
        self.final[v] = total
        return total

    def _report(
        self,
        typ: str,
        fwd: Operation | None,
        inputs: dict[str, list[str]],
        outputs: dict[str, list[str]],
        grad_to_var: dict[str, str],
    ) -> None:
        ops = self.b.take_emitted()
        step, self.step = self.step, []
        if self.callback is None:
            return
        # Remember the last op rather than counting (`len(block.ops)` walks the whole
        # block in xDSL), so finding what the callback appended costs only its size.
        last = self.block.last_op
        self.callback(GradOpRecord(typ, fwd, ops, inputs, outputs, grad_to_var))
        added = _ops_after(self.block, last)
        self.b.take_emitted()
        if added:
            self._rebind(added, step)

    def _rebind(self, added: list[Operation], step: list[tuple[SSAValue, int]]) -> None:
        """Ops a callback appended that redefine the name of a gradient the reported
        gradient op made (e.g. a clipped `w@GRAD`) replace that gradient from here
        on, as in-place updates do in Paddle.  Only this step's gradients: earlier
        contributions of the same name (`w@GRAD` from another use of `w`) are
        other values, and looking at them all would make the sweep quadratic."""
        latest = {value_name(r): r for op in added for r in op.results if value_name(r)}
        for v, slot in step:
            if slot < 0:
                new = latest.get(value_name(self.final[v]))
                if new is not None:
                    self.final[v] = new
                continue
            parts = self.contribs.get(v)
            if parts is None or slot >= len(parts):
                continue  # summed already
            new = latest.get(value_name(parts[slot]))
            if new is not None:
                parts[slot] = new

    def run(self) -> pd.BackwardOp:
        bw = self.bw
        ops = self._forward_ops()
        targets = [self._get(t) for t in bw.targets]
        wrt = [self._get(w) for w in bw.wrt]
        active = self._activity(ops, targets, wrt)
        self.b.take_emitted()  # cloned bodies are not gradient ops

        for i, t in enumerate(targets):
            seed = bw.seed_for(i)
            if seed is None:
                if t not in self.varied:
                    continue
                seed = self.b.full_like(t, 1.0)
                tname = value_name(t)
                if tname:
                    set_value_name(seed, f"{tname}@GRAD")
                self.b.take_emitted()  # the seed is not a gradient op (Paddle's fill)
            self._contribute(t, seed)
        self.step.clear()  # seeds are not made by a gradient op

        for op in reversed(active):
            out_grads = [self._grad_of(r) for r in op.results]
            if all(g is None for g in out_grads):
                continue
            rule = vjp_rules.rule_for(op)
            if rule is None:
                raise AutodiffError(
                    f"no VJP rule for '{op_name(op)}', needed at: {describe(op)}", op
                )
            in_grads = list(rule(self.b, op, out_grads))
            inputs = vjp_rules.grad_inputs(op)
            if len(in_grads) != len(inputs):
                raise AutodiffError(
                    f"VJP rule of '{op.name}' returned {len(in_grads)} gradients "
                    f"for {len(inputs)} operands"
                )
            grad_to_var: dict[str, str] = {}
            outputs: dict[str, list[str]] = {}
            for operand, g in zip(inputs, in_grads):
                src = self._get(operand)
                if g is None or src not in self.varied:
                    continue
                self._contribute(src, g)
                n = value_name(src)
                # Name fresh gradients `x@GRAD`; a pass-through gradient (a rule
                # returning its incoming gradient) keeps the name it already has.
                if n is not None and value_name(g) is None:
                    set_value_name(g, f"{n}@GRAD")
                if n is not None:
                    grad_to_var[f"{n}@GRAD"] = n
                    outputs.setdefault(f"{n}@GRAD", []).append(value_name(g) or "")
            self._report(
                grad_op_type(op_type(op)),
                op,
                {"Out@GRAD": [value_name(g) or "" for g in out_grads if g is not None]},
                outputs,
                grad_to_var,
            )

        kept: list[tuple[SSAValue, SSAValue]] = []
        for w_orig, w in zip(bw.wrt, wrt):
            g = self._grad_of(w)
            if g is not None:
                kept.append((w_orig, g))
        return self._rebuild(kept)

    # -- step 4: rebuild --------------------------------------------------------

    def _rebuild(self, kept: list[tuple[SSAValue, SSAValue]]) -> pd.BackwardOp:
        bw = self.bw
        kept_inputs = {id(w) for w, _ in kept}
        for w, res in zip(bw.wrt, bw.grads):
            if id(w) not in kept_inputs and res.uses:
                raise AutodiffError(
                    f"'{value_name(w) or w.name_hint}' receives no gradient from the "
                    "targets, but its gradient is used"
                )
        self.block.add_op(pd.YieldOp.create(operands=[g for _, g in kept]))
        seeds = [bw.seed_for(i) for i in range(len(bw.targets))]
        new = pd.BackwardOp.make(
            list(bw.targets),
            [w for w, _ in kept],
            seeds,
            pd.from_attr(bw.no_grad),
            body=bw.detach_region(bw.body),
        )
        names = [f"{value_name(w)}@GRAD" if value_name(w) else None for w, _ in kept]
        pd.set_result_names(new, names)
        parent = bw.parent_block()
        assert parent is not None
        parent.insert_op_before(new, bw)
        old_results = {id(w): r for w, r in zip(bw.wrt, bw.grads)}
        for (w, _), r in zip(kept, new.grads):
            old_results[id(w)].replace_all_uses_with(r)
        parent.erase_op(bw)
        return new


def _ops_after(block: Block, last: Operation | None) -> list[Operation]:
    """The ops of `block` after `last` (all of them when `last` is None), in order;
    cost proportional to their number."""
    op = block.first_op if last is None else last.next_op
    found: list[Operation] = []
    while op is not None:
        found.append(op)
        op = op.next_op
    return found


def differentiate(
    bw: pd.BackwardOp, callback: GradCallback | None = None
) -> pd.BackwardOp:
    """Fill one empty `pd.backward` op; returns the rebuilt op (wrt = inputs that
    received a gradient, in their original order)."""
    vjp_rules.load_all()
    if bw.is_filled:
        return bw
    # Everything the sweep allocates stays alive as IR, so the cyclic collector
    # would only rescan the growing graph (passes/gc_pause.py).
    with cyclic_gc_paused():
        filled = _Differentiator(bw, callback).run()
        # Rules return gradients for every operand; those of cut-off operands (feeds,
        # no_grad names) are dead: drop them, as Paddle drops unneeded gradient ops.
        prune_backward_region(filled)
    return filled


@dataclass(frozen=True)
class AutodiffPass(ModulePass):
    """Fill every empty `pd.backward` region (see the module docstring).

    With `targets`, first append a `pd.backward` op to a plain forward program:
    gradients of the values named in `targets` (seeded with ones) with respect to
    the values named in `wrt` (default: every trainable parameter, as
    `append_backward` does), cutting through the names in `no_grad`:

        pullback-opt prog.mlir -p 'autodiff{targets=mean_0.tmp_0 wrt=fc_0.w_0,fc_0.b_0}'

    A name designates the latest top-level value of that name (as fetching does).
    Without `targets`, a program with no `pd.backward` op at all gets an
    `AutodiffWarning` saying there is nothing to differentiate (`pullback-opt` prints
    it as `FILE: warning: ...`).
    """

    name = "autodiff"

    targets: tuple[str, ...] = ()
    """Names of the values to differentiate (creates a `pd.backward` op)."""
    wrt: tuple[str, ...] = ()
    """Names of the inputs to differentiate with respect to (with `targets`)."""
    no_grad: tuple[str, ...] = ()
    """Names no gradient flows through (with `targets`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.targets:
            append_backward_op(op, self.targets, self.wrt, self.no_grad)
        elif self.wrt or self.no_grad:
            raise AutodiffError(
                "autodiff: 'wrt' and 'no_grad' need 'targets' (the values to differentiate), "
                "e.g. -p 'autodiff{targets=mean_0.tmp_0 wrt=fc_0.w_0}'"
            )
        elif not any(isinstance(o, pd.BackwardOp) for o in op.walk()):
            warnings.warn(
                "autodiff: the program has no pd.backward op, so there is nothing to "
                "differentiate; name what to differentiate with pass options, e.g. "
                "-p 'autodiff{targets=mean_0.tmp_0 wrt=fc_0.w_0}'",
                AutodiffWarning,
                stacklevel=2,
            )
        empty = [o for o in op.walk() if isinstance(o, pd.BackwardOp) and not o.is_filled]
        for bw in empty:
            try:
                differentiate(bw)
            except AutodiffError as e:
                located = _located(bw, str(e))
                located.failed_op = e.failed_op or bw
                raise located from None


def append_backward_op(
    module: ModuleOp, targets: Sequence[str], wrt: Sequence[str] = (), no_grad: Sequence[str] = ()
) -> pd.BackwardOp:
    """Append an empty `pd.backward` op to block 0 of `module`: gradients of the
    values named `targets` with respect to those named `wrt` (default: the trainable
    parameters).  AutodiffError names an unknown name, with close matches."""
    block = module.body.block
    latest: dict[str, SSAValue] = {}
    for o in block.ops:
        for r in o.results:
            n = value_name(r)
            if n is not None:
                latest[n] = r

    def lookup(name: str, what: str) -> SSAValue:
        v = latest.get(name)
        if v is None:
            close = difflib.get_close_matches(name, list(latest), n=3)
            hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
            raise AutodiffError(f"autodiff: {what} '{name}' is not a value of the program{hint}")
        return v

    target_vals = [lookup(n, "target") for n in targets]
    if wrt:
        wrt_vals = [lookup(n, "wrt") for n in wrt]
    else:
        wrt_vals = [
            o.out for o in block.ops if isinstance(o, pd.ParameterOp) and o.trainable.value.data
        ]
        if not wrt_vals:
            raise AutodiffError(
                "autodiff: the program has no trainable parameter: name the inputs with wrt=NAME,..."
            )
    bw = pd.BackwardOp.make(target_vals, wrt_vals, (), list(no_grad))
    pd.set_result_names(bw, [f"{value_name(w)}@GRAD" if value_name(w) else None for w in wrt_vals])
    block.add_op(bw)
    return bw


def describe(op: Operation) -> str:
    """An op's place in its program: its index in block 0 and its text."""
    top = op
    while top.parent_op() is not None and not isinstance(top.parent_op(), ModuleOp):
        top = top.parent_op()  # type: ignore[assignment]
    block = top.parent_block()
    index = list(block.ops).index(top) if block is not None else -1
    text = str(op).split("\n", 1)[0]
    return f"op #{index} of block 0: `{text}`"


def _located(op: Operation, message: str) -> AutodiffError:
    """An error naming the pass and the backward op being filled."""
    return AutodiffError(f"autodiff: {message} (while filling {describe(op)})")


__all__ = ["AutodiffPass", "AutodiffError", "AutodiffWarning", "GradOpRecord", "append_backward_op", "differentiate", "op_type"]
