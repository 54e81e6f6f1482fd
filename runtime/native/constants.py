"""Large constants are data, not code: `pd.assign_value` ops of many values become
inputs of the compiled program.

The lowering computes an `assign_value` element by element from its loop indices
(`lowering/creation.py`: a chain of selects over its values), which fuses into its
readers and is right for the few values it mostly holds (list indices, small
tables).  For `paddle.assign(np.arange(n))` that is code of size n in every loop
that reads it, and LLVM's time grew faster than n (1.8 s at n = 1,000, 76 s at
10,000, over 300 s at 30,000).  Here each top-level `assign_value` of more than
`INLINE_MAX` values is replaced, in a copy of the program the compiler lowers, by a
feed named `__pb_const_<k>`; the compiled program passes the constant's array
(made once, from the op, by the interpreter's kernel) as that feed on every call.

Not hoisted: constants inside control-flow or backward regions (a feed is a
top-level op) and constants written to a persistable (the write must stay).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from pullback.dialects import pd
from pullback.dialects.pd.base import dtype_name, result_names, shape_of

INLINE_MAX = 64
"""`assign_value` ops with at most this many values stay code (fused into readers)."""

PREFIX = "__pb_const_"
"""Names of the feeds constants become (no Paddle variable starts with it)."""


def hoistable(module: ModuleOp) -> list[int]:
    """Walk positions (`module.walk()` order) of the constants to pass as data."""
    top = list(module.body.block.ops)
    params = {op.var_name.data for op in top if isinstance(op, pd.ParameterOp)}
    wanted = {id(op) for op in top if isinstance(op, pd.AssignValueOp) and len(op.values.data) > INLINE_MAX
              and not (set(result_names(op)) & params)}
    if not wanted:
        return []
    return [i for i, op in enumerate(module.walk()) if id(op) in wanted]


def hoist(
    module: ModuleOp, fetches: Sequence[SSAValue], positions: Sequence[int]
) -> tuple[ModuleOp, list[SSAValue], list[tuple[str, int]]]:
    """A copy of `module` where the constants at `positions` are feeds, `fetches`
    mapped into it, and each feed's (name, position)."""
    mapping: dict[SSAValue, SSAValue] = {}
    copy = module.clone(value_mapper=mapping)
    at = set(positions)
    ops = [op for i, op in enumerate(copy.walk()) if i in at]
    named = []
    replaced: dict[SSAValue, SSAValue] = {}
    for k, (pos, op) in enumerate(zip(positions, ops)):
        assert isinstance(op, pd.AssignValueOp)
        name = f"{PREFIX}{k}"
        t = op.results[0].type
        feed = pd.DataOp.make(name, list(shape_of(t)), dtype_name(t.get_element_type()))  # type: ignore[attr-defined]
        block = op.parent_block()
        assert block is not None
        block.insert_op_before(feed, op)
        op.results[0].replace_all_uses_with(feed.out)
        replaced[op.results[0]] = feed.out
        op.detach()
        op.erase()
        named.append((name, pos))
    mapped = [mapping.get(v, v) for v in fetches]
    return copy, [replaced.get(v, v) for v in mapped], named


def arrays(module: ModuleOp, named: Sequence[tuple[str, int]]) -> dict[str, np.ndarray]:
    """The constants' values by feed name, made from `module`'s ops (the
    interpreter's kernel: the very values it computes)."""
    if not named:
        return {}
    from pullback.runtime.interpreter import KERNELS, _load_kernels, np_dtype

    _load_kernels()
    ops = list(module.walk())
    out = {}
    for name, pos in named:
        op = ops[pos] if 0 <= pos < len(ops) else None
        if not isinstance(op, pd.AssignValueOp):
            raise ValueError(f"constant {name}: op {pos} of the program is not a pd.assign_value")
        out[name] = np.ascontiguousarray(KERNELS[pd.AssignValueOp](op), dtype=np_dtype(op.results[0].type))
    return out


__all__ = ["INLINE_MAX", "PREFIX", "arrays", "hoist", "hoistable"]
