"""LLVM types of the dialect's types, and how many bytes an element takes in memory.

One table for both targets: `index` is 64 bits wide, a memref or `!llvm.ptr` is an
opaque pointer, floats and integers are themselves (uint8's `ui8` is an `i8`: the
lowering makes signedness explicit in its operations), and a bfloat16 is its bits, an
`i16`.  How an element is *stored*
is a target's choice (`Emitter.storage_type`: the GPU stores `i1` as a byte).
"""

from __future__ import annotations

import llvmlite.ir as ir
from xdsl.dialects import llvm as xllvm
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
)
from xdsl.ir import Attribute

from pullback.dialects.pd.base import DTYPE_BY_ELEM
from pullback.lowering.abi import LoweringError

I1 = ir.IntType(1)
I8 = ir.IntType(8)
I32 = ir.IntType(32)
I64 = ir.IntType(64)
PTR = ir.PointerType()


def llvm_type(t: Attribute) -> ir.Type:
    """The LLVM type of a value's type (`index` is `i64`, a memref or `!llvm.ptr` a
    pointer)."""
    if isinstance(t, IndexType):
        return I64
    if isinstance(t, IntegerType):
        return ir.IntType(t.width.data)
    if isinstance(t, Float32Type):
        return ir.FloatType()
    if isinstance(t, Float64Type):
        return ir.DoubleType()
    if isinstance(t, Float16Type):
        return ir.HalfType()
    if isinstance(t, BFloat16Type):
        # Only stored, loaded and bitcast (the lowering computes bfloat16 in float32 and
        # converts on its bits, `Scalar.bf16_from_f32`): its 16 bits, as an `i16`.
        return ir.IntType(16)
    if isinstance(t, (MemRefType, xllvm.LLVMPointerType)):
        return PTR
    raise LoweringError(f"no LLVM type for {t}")


def result_type(t: Attribute | None) -> ir.Type:
    """The LLVM return type of a function type's output (`void` when none)."""
    if t is None or isinstance(t, xllvm.LLVMVoidType):
        return ir.VoidType()
    return llvm_type(t)


def type_suffix(t: ir.Type) -> str:
    """The overload suffix of a scalar LLVM type in an intrinsic's name (`f32`, `i64`)."""
    if isinstance(t, ir.IntType):
        return f"i{t.width}"
    if isinstance(t, ir.HalfType):
        return "f16"
    return "f32" if isinstance(t, ir.FloatType) else "f64"


def element_bytes(elem: Attribute) -> int:
    """Storage size of one element: the dtype table's (an `i1` takes one byte, as
    numpy's bool), or the width of another whole-byte integer type (`i8`, `i16`)."""
    info = DTYPE_BY_ELEM.get(elem)
    if info is not None:
        return info.size
    if isinstance(elem, IntegerType) and elem.width.data % 8 == 0:
        return elem.width.data // 8
    raise LoweringError(f"unsupported element type {elem}")


__all__ = ["I1", "I8", "I32", "I64", "PTR", "element_bytes", "llvm_type", "result_type", "type_suffix"]
