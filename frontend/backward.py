"""`append_backward`, `gradients` and `calc_gradient` with Paddle's semantics.

Each call appends one empty `pd.backward` op after the forward ops and runs the
`autodiff` pass on it; the gradients are the op's results, wrapped as ordinary
Variables named `<input>@GRAD`.  Everything else here is argument checking and the
mapping between Paddle's Python conventions and the IR.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from xdsl.ir import Operation, SSAValue

from pullback.dialects import pd
from pullback.dialects.pd.base import shape_of, shapes_compatible, value_name
from pullback.frontend.framework import Block, Parameter, Program, Variable
from pullback.passes.autodiff import AutodiffError, GradOpRecord, differentiate
from pullback.passes.gc_pause import cyclic_gc_paused


class LossTypeError(AssertionError, TypeError):
    """`loss` is not a Variable: an AssertionError as the Paddle docs state, and a
    TypeError as current Paddle raises."""


class OpDesc:
    """The `op_desc` handed to `append_backward` callbacks (`__current_op_desc__`):
    the gradient operator just added, in Paddle's vocabulary."""

    def __init__(self, record: GradOpRecord, program: Program | None = None) -> None:
        self._record = record
        self._program = program
        self.ops: list[Operation] = record.ops
        """The `pd` ops that implement this gradient operator."""

    def type(self) -> str:
        """Paddle's operator type, e.g. `mul_grad` (of an `fc`) or `sum`."""
        if self._program is None:
            return self._record.type
        return self._record.paddle_type(self._program.op_type)

    def input(self, slot: str) -> list[str]:
        return list(self._record.inputs.get(slot, []))

    def output(self, slot: str) -> list[str]:
        return list(self._record.outputs.get(slot, []))

    def input_names(self) -> list[str]:
        return list(self._record.inputs)

    def output_names(self) -> list[str]:
        return list(self._record.outputs)

    def input_arg_names(self) -> list[str]:
        return [n for names in self._record.inputs.values() for n in names]

    def output_arg_names(self) -> list[str]:
        return [n for names in self._record.outputs.values() for n in names]

    def __repr__(self) -> str:
        return f"OpDesc({self.type()}: {self.input_arg_names()} -> {self.output_arg_names()})"


# ------------------------------------------------------------------ argument checks


def _as_list(x: Any, what: str) -> list[Any]:
    if x is None:
        return []
    if isinstance(x, (list, tuple)):
        return list(x)
    return [x]


def _check_variables(xs: Sequence[Any], what: str, allow_none: bool = False) -> None:
    for x in xs:
        if x is None and allow_none:
            continue
        if not isinstance(x, Variable):
            raise TypeError(
                f"{what} must be a Variable or a list of Variables, got {type(x).__name__}"
            )


def _no_grad_names(no_grad_set: Any, fn: str) -> set[str]:
    """Names in a user's no_grad_set (Variables or names in a set/list/tuple)."""
    if no_grad_set is None:
        return set()
    if not isinstance(no_grad_set, (set, frozenset, list, tuple)):
        raise TypeError(
            f"{fn}: no_grad_set must be a set, list or tuple of Variables or names, "
            f"got {type(no_grad_set).__name__}"
        )
    names: set[str] = set()
    for item in no_grad_set:
        if isinstance(item, Variable):
            names.add(item.name)
        elif isinstance(item, str):
            names.add(item)
        else:
            raise TypeError(
                f"{fn}: no_grad_set items must be Variables or names, got {type(item).__name__}"
            )
    return names


def _stop_gradient_names(program: Program) -> set[str]:
    """Every variable of the program with stop_gradient=True (feeds by default)."""
    block = program.global_block()
    names: set[str] = set()
    for op in block.ir.ops:
        for v in op.results:
            n = value_name(v)
            if n is not None and block.wrap(v).stop_gradient:
                names.add(n)
    return names


# --------------------------------------------------------------------- the work


def _run_backward(
    block: Block,
    targets: list[Variable],
    inputs: list[Variable],
    seeds: list[Variable | None],
    no_grad: set[str],
    callbacks: Sequence[Callable[..., Any]] = (),
    checkpoints: Sequence[str] = (),
) -> dict[SSAValue, Variable]:
    """Append and fill one backward op; map input values to gradient Variables.
    With `checkpoints`, only those forward values are kept for the backward region:
    the others are recomputed in it (the `recompute` pass)."""
    program = block.program
    bw = pd.BackwardOp.make(
        [t.value for t in targets],
        [x.value for x in inputs],
        [s.value if s is not None else None for s in seeds],
        sorted(no_grad),
    )
    block.ir.add_op(bw)
    program._bump()
    context: dict[str, Any] = {}

    records: list[GradOpRecord] = []

    def callback(record: GradOpRecord) -> None:
        records.append(record)  # what `block.ops` lists as `<type>_grad` operators
        if not callbacks:
            return
        context.update(record.grad_to_var)
        context["__current_op_desc__"] = OpDesc(record, program)
        with program.insertion_point(bw.body.block):
            for cb in callbacks:
                cb(block=block, context=context)

    try:
        filled = differentiate(bw, callback)
    except AutodiffError as e:
        raise RuntimeError(str(e)) from None
    program.grad_records[filled] = records
    if checkpoints:
        from pullback.passes.recompute import RecomputeError, apply_recompute

        try:
            apply_recompute(filled, checkpoints)
        except RecomputeError as e:
            raise ValueError(f"append_backward: {e}") from None
    program._bump()
    return {w: block.wrap(g) for w, g in zip(filled.wrt, filled.grads)}


def _collector_paused(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Run `fn` with the cyclic collector paused (`passes/gc_pause.py`): the AD pass
    pauses it anyway, and a full collection in the few steps around it (the
    no-grad names, wrapping the gradients) would traverse the whole heap, the
    program being differentiated included: a tenth of a second on 5,000 ops."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with cyclic_gc_paused():
            return fn(*args, **kwargs)

    return wrapper


@_collector_paused
def append_backward(
    loss: Variable,
    parameter_list: Sequence[Variable | str] | None = None,
    no_grad_set: Iterable[Variable | str] | None = None,
    callbacks: Sequence[Callable[..., Any]] | None = None,
    checkpoints: Sequence[Variable | str] | None = None,
    distop_context: Any = None,
) -> Any:
    """Append the backward part of `loss`'s program (see Paddle's docs).

    Returns `[(param, param@GRAD)]` in parameter creation order, leaving out
    parameters that get no gradient (filtered, cut off or unrelated to the loss).

    `checkpoints` (a non-empty list of Variables or names) turns on recomputation
    (activation checkpointing): forward values between checkpoints are not kept for
    the backward pass but recomputed, segment by segment, right before their gradient
    ops need them (`passes/recompute.py`); dropout replays the same mask.  The result
    is then `(params_and_grads, checkpoint_names)`, as in Paddle.
    `distop_context` (auto-parallel) is accepted and ignored.
    """
    if not isinstance(loss, Variable):
        raise LossTypeError(
            f"append_backward: loss must be a Variable, got {type(loss).__name__}"
        )
    if callbacks is not None:
        if not isinstance(callbacks, (list, tuple)):
            raise TypeError(
                f"append_backward: callbacks must be a list or tuple of callables, "
                f"got {type(callbacks).__name__}"
            )
        for cb in callbacks:
            if not callable(cb):
                raise TypeError(
                    f"append_backward: each callback must be callable, got {type(cb).__name__}"
                )
    block = loss.block
    program = block.program
    all_params = block.all_parameters()
    params: list[Variable]
    if parameter_list is None:
        params = list(all_params)
    else:
        if not isinstance(parameter_list, (list, tuple, set)):
            raise TypeError(
                "append_backward: parameter_list must be a list of Variables or names, "
                f"got {type(parameter_list).__name__}"
            )
        wanted: set[str] = set()
        for p in parameter_list:
            if isinstance(p, Variable):
                wanted.add(p.name)
            elif isinstance(p, str):
                wanted.add(p)
            else:
                raise TypeError(
                    "append_backward: parameter_list items must be Variables or names, "
                    f"got {type(p).__name__}"
                )
        unknown = wanted - {p.name for p in all_params}
        for name in sorted(unknown):
            if not block.has_var(name):
                raise ValueError(f"append_backward: parameter '{name}' is not in the program")
        params = [p for p in all_params if p.name in wanted]
        params += [block.var(n) for n in sorted(unknown)]  # non-parameter variables
    no_grad = _no_grad_names(no_grad_set, "append_backward") | _stop_gradient_names(program)
    params = [p for p in params if p.name not in no_grad]
    names = _checkpoint_names(checkpoints)
    if not params:
        return ([], names) if names else []
    grads = _run_backward(block, [loss], params, [None], no_grad, callbacks or (), names)
    pairs = [(p, grads[p.value]) for p in params if p.value in grads]  # type: ignore[misc]
    return (pairs, names) if names else pairs


def _checkpoint_names(checkpoints: Any) -> list[str]:
    """Names of `append_backward`'s checkpoints (Paddle ignores anything but a
    non-empty list; items must be Variables or names)."""
    if not isinstance(checkpoints, (list, tuple)) or not checkpoints:
        return []
    names = []
    for c in checkpoints:
        if isinstance(c, Variable):
            names.append(c.name)
        elif isinstance(c, str):
            names.append(c)
        else:
            raise TypeError(
                f"append_backward: checkpoints must be Variables or names, got {type(c).__name__}"
            )
    return list(dict.fromkeys(names))


@_collector_paused
def gradients(
    targets: Variable | Sequence[Variable],
    inputs: Variable | Sequence[Variable],
    target_gradients: Variable | Sequence[Variable | None] | None = None,
    no_grad_set: Iterable[Variable | str] | None = None,
) -> list[Variable | None]:
    """Gradients of `targets` w.r.t. `inputs` (always a list; None for an input the
    targets do not depend on). `target_gradients` seed the targets (None: ones)."""
    target_list = _as_list(targets, "targets")
    input_list = _as_list(inputs, "inputs")
    seed_list = _as_list(target_gradients, "target_gradients")
    if not target_list:
        raise ValueError("gradients: targets must not be empty")
    _check_variables(target_list, "gradients: targets")
    _check_variables(input_list, "gradients: inputs")
    _check_variables(seed_list, "gradients: target_gradients", allow_none=True)
    if not seed_list:
        seed_list = [None] * len(target_list)
    if len(seed_list) != len(target_list):
        raise ValueError("Should have the same number of target_gradients as targets")
    for t, s in zip(target_list, seed_list):
        if s is not None and not shapes_compatible(shape_of(t.value.type), shape_of(s.value.type)):
            raise ValueError(
                f"The shapes of target and grad are different: target {t.name} has shape "
                f"{t.shape}, target_gradient {s.name} has shape {s.shape}"
            )
    block = target_list[0].block
    program = block.program
    no_grad = _no_grad_names(no_grad_set, "gradients") | _stop_gradient_names(program)
    # An input the user asks about explicitly is differentiated unless *they* said
    # otherwise (Paddle adds stop_gradient feeds to the no-grad set; inputs that are
    # feeds with stop_gradient=True therefore get None, as in Paddle).
    grads = _run_backward(block, target_list, input_list, seed_list, no_grad)
    return [grads.get(x.value) for x in input_list]


calc_gradient = gradients
"""The old name of `gradients`."""


def gradients_with_optimizer(
    program: Program,
    optimizer: Any,
    inputs: Variable | Sequence[Variable] | None = None,
    outputs: Variable | Sequence[Variable] | None = None,
) -> tuple[list[Any], list[tuple[Parameter, Variable]]]:
    """Paddle's `paddle.autograd.backward_mode.gradients_with_optimizer`: the
    gradients of `outputs` w.r.t. `inputs` and the optimizer's updates for those
    inputs that are parameters, appended to `program`; returns
    `(optimize_ops, params_grads)`.

    By default `inputs` are the variables the operators read but none defines
    (feeds and parameters) and `outputs` those they define but none reads (the
    loss), as in Paddle."""
    if not isinstance(program, Program):
        raise TypeError(
            "The type of 'program' in gradients_with_optimizer must be Program, "
            f"but received {type(program).__name__}"
        )
    if not callable(getattr(optimizer, "apply_gradients", None)):
        raise TypeError(
            "The type of 'optimizer' in gradients_with_optimizer must be an Optimizer, "
            f"but received {type(optimizer).__name__}"
        )
    if inputs is None or outputs is None:
        block = program.global_block()
        read: dict[str, None] = {}
        written: dict[str, None] = {}
        for op in block.ops:
            read.update(dict.fromkeys(op.input_arg_names))
            written.update(dict.fromkeys(op.output_arg_names))
        if inputs is None:
            inputs = [block.var(n) for n in read if n not in written]
        if outputs is None:
            outputs = [block.var(n) for n in written if n not in read]
    input_list = _as_list(inputs, "inputs")
    grads = gradients(outputs, input_list)
    params_grads = [
        (p, g) for p, g in zip(input_list, grads) if isinstance(p, Parameter) and g is not None
    ]
    optimize_ops = optimizer.apply_gradients(params_grads)
    return optimize_ops, params_grads


# ------------------------------------------------- Paddle's backward helpers
# `paddle.base.backward`'s underscore helpers, which Paddle's own tests of
# `append_backward` call to inspect a program: on pullback's operator views.

GRAD_SUFFIX = "@GRAD"


def _append_grad_suffix_(name: str) -> str:
    """`x` -> `x@GRAD`."""
    return name + GRAD_SUFFIX


def _strip_grad_suffix_(name: str) -> str:
    """The forward variable a gradient name belongs to: `x@GRAD`, `x@GRAD@GRAD`,
    `x@GRAD@RENAME@1` and `grad/x@GRAD` -> `x`; `x@GRAD_slice_0@GRAD` ->
    `x@GRAD_slice_0` (only a whole `@GRAD` component is a suffix)."""
    pos = re.search(f"{GRAD_SUFFIX}+@", name) or re.search(f"{GRAD_SUFFIX}$", name)
    stripped = name[: pos.start()] if pos is not None else name
    scope = name.rfind("grad/")
    return stripped[scope + 5 :] if scope != -1 else stripped


def _get_stop_gradients_(program: Program) -> dict[int, set[str]]:
    """Per block index, the gradient names of the variables with stop_gradient."""
    out: dict[int, set[str]] = {}
    for block in program.blocks:
        out[block.idx] = {_append_grad_suffix_(n) for n, v in block.vars.items() if v.stop_gradient}
    return out


def _find_op_path_(
    block: Block,
    targets: Sequence[Variable],
    inputs: Sequence[Variable],
    no_grad_set: set[str] | None,
) -> list[Any]:
    """The operators of `block` on a path from `inputs` (every variable when empty)
    to `targets`, in program order; with `inputs`, the stop_gradient variables
    those operators read that are not reached from `inputs` join `no_grad_set`."""
    no_grad = no_grad_set if no_grad_set is not None else set()
    ops = block.ops
    relevant = [True] * len(ops)
    input_names = {x.name for x in inputs}
    if inputs:
        for i, op in enumerate(ops):
            if input_names.intersection(op.input_arg_names):
                input_names.update(n for n in op.output_arg_names if n not in no_grad)
            else:
                relevant[i] = False
    output_names = {t.name for t in targets}
    for i in reversed(range(len(ops))):
        if output_names.intersection(ops[i].output_arg_names):
            output_names.update(n for n in ops[i].input_arg_names if n not in no_grad)
        else:
            relevant[i] = False
    path = [op for op, keep in zip(ops, relevant) if keep]
    if inputs:
        variables = block.vars
        for op in path:
            for n in op.input_arg_names:
                if n not in input_names and n in variables and variables[n].stop_gradient:
                    no_grad.add(n)
    return path


def _find_no_grad_vars(
    block: Block, op_path: Sequence[Any], targets: Sequence[Variable], no_grad_set: set[str]
) -> set[str]:
    """Outputs of the path's operators that nothing downstream reads (so they
    need no gradient), other than the targets and stop_gradient variables."""
    used = {t.name for t in targets}
    variables = block.vars
    unused: set[str] = set()
    for op in reversed(list(op_path)):
        for n in op.output_arg_names:
            if n not in used and n not in op.input_arg_names and not (n in variables and variables[n].stop_gradient):
                unused.add(n)
        used.update(n for n in op.input_arg_names if n not in no_grad_set)
    return unused
