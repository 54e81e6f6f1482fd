"""What a translated value is: llvmlite values, and `MemRef` for memrefs; with the
`i64` index arithmetic both the emitter and its loop nests fold as they build, and
the one shape of counted loop they all open and close."""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Sequence
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


@dataclass
class Loop:
    """A counted loop being built: `iv` runs from its start while `iv < bound`."""

    header: ir.Block
    exit: ir.Block
    iv: ir.PhiInstr
    carried: list[ir.PhiInstr]
    """Phis of the loop-carried values, in the order given to `open_loop`."""


def open_loop(b: ir.IRBuilder, start: ir.Value, bound: ir.Value, name: str,
              carried: Sequence[ir.Value] = ()) -> Loop:
    """Branch from `b`'s block into a new loop header (`<name>.header`: the index phi
    starting at `start`, a phi per `carried` value, the `iv < bound` test) and leave
    `b` at the start of the body (`<name>.body`)."""
    fn = b.function
    pre = b.block
    header = fn.append_basic_block(f"{name}.header")
    body = fn.append_basic_block(f"{name}.body")
    exit_ = fn.append_basic_block(f"{name}.exit")
    b.branch(header)
    b.position_at_end(header)
    iv = b.phi(start.type)
    iv.add_incoming(start, pre)
    phis = []
    for x in carried:
        phi = b.phi(x.type)
        phi.add_incoming(x, pre)
        phis.append(phi)
    b.cbranch(b.icmp_signed("<", iv, bound), body, exit_)
    b.position_at_end(body)
    return Loop(header, exit_, iv, phis)


def close_loop(b: ir.IRBuilder, loop: Loop, step: ir.Value, carried: Sequence[ir.Value] = ()) -> ir.Instruction:
    """End the body at `b`: step the index, feed the carried phis `carried`, branch
    back to the header and leave `b` at the exit.  Returns the latch branch (where
    loop metadata goes)."""
    latch_block = b.block
    loop.iv.add_incoming(b.add(loop.iv, step), latch_block)
    for phi, v in zip(loop.carried, carried):
        phi.add_incoming(v, latch_block)
    latch = b.branch(loop.header)
    b.position_at_end(loop.exit)
    return latch


__all__ = ["Loop", "MemRef", "add", "close_loop", "mul", "open_loop", "ptr_of", "static_sizes"]
