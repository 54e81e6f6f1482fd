"""Concrete shapes of a program for given feed shapes, and the run-time checks the
compiled code relies on.

The compiled code trusts its `index` arguments: a feed of the wrong shape would make
it read or write out of bounds.  `plan_shapes` runs every op's typing rule on the
concrete feed shapes (the same `infer` the verifier uses), which rejects any shape
the op does not accept, and checks what the lowering assumes beyond typing: a
dynamic dimension is never broadcast at run time, and every concrete result shape
fits its static type (the code was compiled for those ranks and static sizes).  The runtime calls it (cached per
feed shapes) before every call into native code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue
from xdsl.traits import IsTerminator
from xdsl.utils.exceptions import VerifyException

from pullback.dialects import pd
from pullback.dialects.pd.base import DYN, dynamic_broadcast_error, fmt_shape, shape_of
from pullback.dialects.limits import check_tensor_size, max_tensor_bytes
from pullback.lowering.abi import Program
from pullback.lowering.convert_pd_to_linalg import LOWERINGS


class ShapeError(ValueError):
    """A feed shape the program (or its compiled form) cannot run with."""


def plan_shapes(prog: Program, feed_shapes: Mapping[str, Sequence[int]]) -> dict[SSAValue, tuple[int, ...]]:
    """Concrete shape of every value of `prog`, or ShapeError naming the op at fault
    (`TensorTooLarge`, a ValueError, for a value beyond `max_tensor_bytes()`: the
    interpreter refuses the same values, `dialects/limits.py`)."""
    shapes: dict[SSAValue, tuple[int, ...]] = {}
    bound = max_tensor_bytes()

    def get(v: SSAValue) -> tuple[int, ...]:
        return shapes[prog.resolve(v)]

    for op in prog.ops:
        if isinstance(op, (pd.IfOp, pd.WhileOp)):
            _plan_control(op, shapes, get)
            continue
        if isinstance(op, pd.DataOp):
            name = op.var_name.data
            declared = shape_of(op.out.type)
            got = tuple(int(d) for d in feed_shapes[name])
            if len(got) != len(declared) or any(d != DYN and d != g for d, g in zip(declared, got)):
                raise ShapeError(
                    f"feed '{name}' has shape {list(got)}, but the program declares "
                    f"{fmt_shape(declared)}"
                )
            shapes[op.out] = got
            continue
        if isinstance(op, pd.ParameterOp):
            shapes[op.out] = shape_of(op.out.type)
            continue
        infer = getattr(type(op), "infer", None)
        if infer is None:
            continue
        types = [TensorType(v.type.get_element_type(), get(v)) for v in op.operands]  # type: ignore[attr-defined]
        try:
            results = infer(types, op.py_props())  # type: ignore[attr-defined]
        except VerifyException as e:
            raise ShapeError(f"with these feed shapes, {e}") from None
        for i, (r, t) in enumerate(zip(op.results, results)):
            shape = shapes[r] = tuple(t.get_shape())
            check_tensor_size(op, i, shape, t.get_element_type(), bound)
        _count_entries(op, shapes, get)
        _check_refines_types(op, shapes)
        _check_dynamic_broadcast(op, shapes, get)
    return shapes


def _count_entries(op, shapes, get) -> None:  # type: ignore[no-untyped-def]
    """A stack's entry count, which its typing rule leaves dynamic (`?`), follows
    from its operand's outside loops (inside one the loop's planning makes it DYN
    again where it grows)."""
    if isinstance(op, pd.StackCreateOp):
        shapes[op.results[0]] = (0, *get(op.x))
    elif isinstance(op, (pd.StackPushOp, pd.StackPopOp)):
        n, *entry = get(op.stack)
        step = 1 if isinstance(op, pd.StackPushOp) else -1
        # (an empty stack's pop is reported by the op itself, at run time)
        shapes[op.results[0]] = (DYN if n == DYN else max(n + step, 0), *entry)


def _plan_ops(ops, shapes, get) -> None:  # type: ignore[no-untyped-def]
    """Plan ops of a region (no feeds or parameters there)."""
    for op in ops:
        if isinstance(op, (pd.IfOp, pd.WhileOp)):
            _plan_control(op, shapes, get)
            continue
        if op.has_trait(IsTerminator):
            continue
        types = [TensorType(v.type.get_element_type(), get(v)) for v in op.operands]
        try:
            results = op.infer(types, op.py_props())
        except VerifyException as e:
            raise ShapeError(f"with these feed shapes, {e}") from None
        for i, (r, t) in enumerate(zip(op.results, results)):
            shape = shapes[r] = tuple(t.get_shape())
            check_tensor_size(op, i, shape, t.get_element_type())  # (DYN dims not counted)
        _count_entries(op, shapes, get)
        _check_refines_types(op, shapes)
        _check_dynamic_broadcast(op, shapes, get)


def _yielded(block, shapes, get) -> list[tuple[int, ...]]:  # type: ignore[no-untyped-def]
    _plan_ops(block.ops, shapes, get)
    return [get(v) for v in block.last_op.operands]


def _plan_control(op, shapes, get) -> None:  # type: ignore[no-untyped-def]
    """Shapes of a region op's results, as far as they are known before it runs:
    the same in both branches of an `if`, or left unchanged by one iteration of a
    `while` (hence by all: an iteration's shapes follow from the previous ones).  A
    dimension known only at run time is DYN; the lowering refuses to fetch such a
    value (`Lowerer.control_sizes`), so the caller never allocates one."""
    if isinstance(op, pd.IfOp):
        branches = [_yielded(r.block, shapes, get) for r in (op.then_region, op.else_region)]
        for r, a, b in zip(op.results, *branches):
            shapes[r] = tuple(x if x == y else DYN for x, y in zip(a, b))
        return
    inits = [get(v) for v in op.inits]
    for block in (op.cond_block(), op.body_block()):
        for a, s in zip(block.args, inits):
            shapes[a] = s
    _yielded(op.cond_block(), shapes, get)
    nxt = _yielded(op.body_block(), shapes, get)
    for r, a, b in zip(op.results, inits, nxt):
        shapes[r] = tuple(x if x == y else DYN for x, y in zip(a, b))


def _check_refines_types(op, shapes) -> None:  # type: ignore[no-untyped-def]
    """Every concrete result shape fits the result's static type: the code was
    compiled for that rank and those static sizes (a `squeeze` of a `?` that is not
    1 at run time, say, would keep a dimension the code has dropped)."""
    for r in op.results:
        static, concrete = shape_of(r.type), shapes[r]
        if len(static) != len(concrete) or any(s != DYN and s != c for s, c in zip(static, concrete)):
            raise ShapeError(
                f"'{op.name}': with these feed shapes its result has shape {list(concrete)}, "
                f"but the program was compiled for {fmt_shape(static)}"
            )


def _check_dynamic_broadcast(op, shapes, get) -> None:  # type: ignore[no-untyped-def]
    """A `?` operand dimension the lowering indexes with a loop must equal that loop's
    size (`pd.dynamic_broadcast_error`, the rule every backend checks)."""
    entry = LOWERINGS.get(type(op))
    if entry is None or entry.maps is None:
        return
    out = shapes[op.results[0]]
    for v, m in zip(op.operands, entry.maps(op)):
        if m is None or DYN in get(v) or DYN in out:
            continue  # (a size only control flow decides is checked by no one here)
        error = dynamic_broadcast_error(op.name, shape_of(v.type), get(v), out, m)
        if error is not None:
            raise ShapeError(error)
