"""The sizes layer of the `Lowerer`: the run-time size of every dimension.

A `pd` value's dimension is a constant or, when its type says `?`, an `index` value
computed at run time (`Size`).  `Sizes` keeps the sizes of every value (`sizes`),
derives a result's dynamic dimensions from its operands' before its op is lowered
(`sizes_for`: the op's `@result_sizes` rule, else its pointwise maps), folds size
arithmetic where static, and makes the shape carriers: views of a buffer that name
its sizes (`shape_view`), since memrefs lower to bare pointers and a loop's bounds
are read from the shapes of its operands.  Sizes known only once control flow ran
may not reach an output the caller allocates (`check_planned`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from xdsl.dialects import arith
from xdsl.dialects.builtin import AnyFloat, i64
from xdsl.ir import Attribute, Operation, OpResult, SSAValue

from pullback.dialects.pd.base import DYN, shape_of
from pullback.lowering.abi import LoweringError
from pullback.lowering.build import make
from pullback.lowering.lowerer.base import LowererBase, name_hint_of
from pullback.lowering.registry import LOWERINGS
from pullback.lowering.views import elem_of_buffer, memref_type, reinterpret_cast

if TYPE_CHECKING:
    from pullback.lowering.lowerer import Lowerer

Size = int | SSAValue
"""A dimension size: a constant, or an `index` value computed at run time."""


@dataclass
class Sizes(LowererBase):
    """The sizes of every `pd` value, and size arithmetic in the entry function."""

    sizes: dict[SSAValue, list[Size]] = field(default_factory=dict)
    control_sizes: set[SSAValue] = field(default_factory=set)
    """Sizes known only once control flow ran (a loop's growing stack, an `if`
    whose branches differ) or once data was read (`pd.segment_pool`'s rows): a
    fetched value cannot have them, since the caller
    allocates outputs from shapes planned before the call (`lowering/shapes.py`)."""

    def sizes_of(self, v: SSAValue) -> list[Size]:
        """The sizes of a `pd` value."""
        return self.sizes[self.prog.resolve(v)]

    def as_value(self, s: Size) -> SSAValue:
        """A size as an `index` value."""
        return self.index(s) if isinstance(s, int) else s

    def mul_sizes(self, sizes: Sequence[Size]) -> Size:
        """The product of sizes, folded where static."""
        static = 1
        dyn: list[SSAValue] = []
        for s in sizes:
            if isinstance(s, int):
                static *= s
            else:
                dyn.append(s)
        acc: Size = static
        for d in dyn:
            if acc == 1:
                acc = d
            else:
                lhs = self.as_value(acc)
                acc = self.emit(make(arith.MuliOp, (lhs, d), (lhs.type,))).results[0]
        return acc

    def count_as_float(self, sizes: Sequence[Size], elem: Attribute) -> SSAValue:
        """The product of sizes converted to a float scalar (for means)."""
        n = self.as_value(self.mul_sizes(sizes))
        as_int = self.emit(make(arith.IndexCastOp, (n,), (i64,))).results[0]
        # Callers pass a float element type (the mean's); unchecked, as ever.
        return self.emit(arith.SIToFPOp(as_int, cast(AnyFloat, elem))).results[0]

    def shape_view(self, mem: SSAValue, sizes: Sequence[Size]) -> SSAValue:
        """A view of `mem`'s data with the given sizes (a reshape, no copy)."""
        shape = [d if isinstance(d, int) else DYN for d in sizes]
        strides: list[Size] = []
        acc: Size = 1
        for i, d in enumerate(reversed(sizes)):
            strides.insert(0, acc)
            if i < len(sizes) - 1:
                acc = self.mul_sizes([acc, d])
        op = reinterpret_cast(
            mem, [0], list(sizes), strides, memref_type(elem_of_buffer(mem), shape)
        )
        self.emit(op)
        return op.result

    # ------------------------------------------------------- dynamic dimensions

    def sizes_for(self, op: Operation) -> None:
        """Compute the sizes of `op`'s results (static or derived from operands).
        A control-flow op's rule sets its results' sizes itself (they come out of
        its regions)."""
        if op.regions:
            return
        for r in op.results:
            if r in self.sizes:
                continue
            shape = shape_of(r.type)
            if DYN not in shape:
                self.sizes[r] = list(shape)
                continue
            self.sizes[r] = [d if d != DYN else self._dyn_dim(op, r, k) for k, d in enumerate(shape)]

    def _dyn_dim(self, op: Operation, r: SSAValue, k: int) -> Size:
        """A dynamic dimension `k` of result `r`, found in the operand it comes from."""
        entry = LOWERINGS.get(type(op))
        if entry is not None and entry.sizes is not None:
            # Size rules take the whole `Lowerer`, of which this is a layer.
            got = entry.sizes(cast("Lowerer", self), op, r, k)
            if got is not None:
                return got
        if entry is not None and entry.maps is not None:
            for v, m in zip(op.operands, entry.maps(op)):
                if m is None:
                    # A shape-only operand (fill_any_like) has the result's shape.
                    return self.sizes_of(v)[k]
                for j, d in enumerate(m):
                    if d == k and shape_of(v.type)[j] == DYN:
                        return self.sizes_of(v)[j]
        raise LoweringError(f"'{op.name}': cannot tell dynamic dimension {k} of its result")

    def check_planned(self, v: SSAValue) -> None:
        """An output's sizes must not depend on control flow (`control_sizes`)."""
        todo = [s for s in self.sizes.get(v, []) if isinstance(s, SSAValue)]
        seen: set[SSAValue] = set()
        while todo:
            s = todo.pop()
            if s in seen:
                continue
            seen.add(s)
            if s in self.control_sizes:
                raise LoweringError(
                    f"cannot lower a fetch of '{name_hint_of(v) or v.type}' to native code: its "
                    "shape is known only once control flow ran (a loop-grown stack, "
                    "branches of different shapes) or data was read (the segments of "
                    "segment_sum), and the caller allocates outputs first"
                )
            if isinstance(s, OpResult):
                todo += list(s.op.operands)


__all__ = ["Size", "Sizes"]
