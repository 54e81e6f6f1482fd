"""`VjpBuilder`: how VJP rules write `pd` ops into the backward region."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xdsl.ir import Block, Operation, SSAValue

from pullback.dialects import pd
from pullback.dialects.pd.base import DYN, elem_of, is_complex, shape_of


class VjpBuilder:
    """Appends typed `pd` ops to a block (the backward region) and offers the small
    helpers most rules need: constants, broadcast undoing, dtype-preserving scalars."""

    def __init__(self, block: Block) -> None:
        self.block = block
        self.emitted: list[Operation] = []
        """Ops appended since the last `take_emitted()` (for callbacks' op_desc)."""
        self.varied: set[SSAValue] | None = None
        """The values the sweep differentiates with respect to (None: every float
        value); rules of ops with regions ask only for these values' gradients."""

    # -- core --------------------------------------------------------------------

    def emit(self, op_cls: type[pd.PdOp], *operands: SSAValue, **props: Any) -> SSAValue:
        """Append `op_cls.make(*operands, **props)` and return its (first) result."""
        op = op_cls.make(*operands, **props)
        self.insert(op)
        # (tuple's own indexing: `SSAValues.__getitem__` is a Python-level override,
        # and a rule emits an op per call.)
        return tuple.__getitem__(op.results, 0)

    def emit_multi(
        self, op_cls: type[pd.PdOp], *operands: SSAValue, **props: Any
    ) -> Sequence[SSAValue]:
        """Like `emit`, for ops with several results."""
        op = op_cls.make(*operands, **props)
        self.insert(op)
        return list(op.results)

    def insert(self, op: Operation) -> Operation:
        """Append an already-built op."""
        self.block.add_op(op)
        self.emitted.append(op)
        return op

    def take_emitted(self) -> list[Operation]:
        """The ops emitted since the last call (and forget them)."""
        ops, self.emitted = self.emitted, []
        return ops

    # -- helpers ------------------------------------------------------------------

    def full_like(self, like: SSAValue, value: float) -> SSAValue:
        """A tensor shaped like `like` (dynamic dimensions included) filled with value."""
        return self.emit(pd.FillAnyLikeOp, like, value=float(value))

    def scale(self, x: SSAValue, s: float, bias: float = 0.0) -> SSAValue:
        """`s * x + bias`, keeping x's dtype."""
        return self.emit(pd.ScaleOp, x, scale=float(s), bias=float(bias))

    def neg(self, x: SSAValue) -> SSAValue:
        """`-x`."""
        return self.scale(x, -1.0)

    def add(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.emit(pd.ElementwiseAddOp, x, y)

    def sub(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.emit(pd.ElementwiseSubOp, x, y)

    def mul(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.emit(pd.ElementwiseMulOp, x, y)

    def div(self, x: SSAValue, y: SSAValue) -> SSAValue:
        return self.emit(pd.ElementwiseDivOp, x, y)

    def conj(self, x: SSAValue | None) -> SSAValue | None:
        """The complex conjugate of x (x itself when real or None)."""
        if x is None or not is_complex(elem_of(x.type)):
            return x
        return self.emit(pd.ConjOp, x)

    def cast_like(self, x: SSAValue, like: SSAValue) -> SSAValue:
        """Cast x to like's dtype (a no-op when they agree)."""
        if pd.elem_of(x.type) == pd.elem_of(like.type):
            return x
        return self.emit(pd.CastOp, x, dtype=pd.dtype_name(pd.elem_of(like.type)))

    def unbroadcast(self, g: SSAValue, like: SSAValue, axis: int = -1) -> SSAValue:
        """Sum `g` (shaped like a broadcast result) back to the shape of `like`.

        `axis` is the Paddle alignment `like` was broadcast with (-1: numpy rules).
        A dynamic dimension of `like` facing a dynamic one of `g` is taken as equal
        (the batch dimension); facing anything else it is reduced only if it is 1.
        """
        gs, ls = shape_of(g.type), shape_of(like.type)
        if gs == ls:
            return g
        rank = len(gs)
        start = rank - len(ls) if (axis == -1 or len(ls) == rank) else axis
        lead = [i for i in range(rank) if i < start or i >= start + len(ls)]
        keep_ones = [
            i for i, d in enumerate(ls) if d == 1 and gs[start + i] != 1
        ]
        out = g
        if keep_ones:
            out = self.emit(
                pd.ReduceSumOp, out, axis=[start + i for i in keep_ones], keepdim=True
            )
        if lead:
            out = self.emit(pd.ReduceSumOp, out, axis=lead, keepdim=False)
        return out


__all__ = ["VjpBuilder", "DYN"]
