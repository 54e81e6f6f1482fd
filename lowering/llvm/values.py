"""What a translated value is: llvmlite values, and `MemRef` for memrefs; with the
`i64` index arithmetic both the emitter and its loop nests fold as they build."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import llvmlite.ir as ir
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType

from pullback.lowering.llvm.types import I64


@dataclass
class MemRef:
    """A memref during translation: base pointer (offset applied), element storage
    type, sizes (None where the translation cannot know a dynamic one) and strides
    (None: dense row-major, addressed by the row-major linear index)."""

    ptr: ir.Value
    elem: ir.Type
    sizes: list[ir.Value | None]
    strides: list[ir.Value] | None = None


def static_sizes(t: MemRefType) -> list[ir.Value | None]:
    """The sizes of a memref type: constants, None for dynamic ones."""
    return [None if d == DYNAMIC_INDEX else ir.Constant(I64, d) for d in t.get_shape()]


def ptr_of(x: Any) -> ir.Value:
    """The llvmlite value of a translated value (a `MemRef`'s base pointer)."""
    return x.ptr if isinstance(x, MemRef) else x


def mul(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """`x * y` on `i64`, folded where either is a constant 0/1 or both are constants."""
    if isinstance(x, ir.Constant) and isinstance(y, ir.Constant):
        return ir.Constant(I64, x.constant * y.constant)
    if isinstance(x, ir.Constant) and x.constant == 1:
        return y
    if isinstance(y, ir.Constant) and y.constant == 1:
        return x
    return b.mul(x, y)


def add(b: ir.IRBuilder, x: ir.Value, y: ir.Value) -> ir.Value:
    """`x + y` on `i64`, folded where either is a constant 0 or both are constants."""
    if isinstance(x, ir.Constant) and isinstance(y, ir.Constant):
        return ir.Constant(I64, x.constant + y.constant)
    if isinstance(x, ir.Constant) and x.constant == 0:
        return y
    if isinstance(y, ir.Constant) and y.constant == 0:
        return x
    return b.add(x, y)


__all__ = ["MemRef", "add", "mul", "ptr_of", "static_sizes"]
