"""The one table of how `arith` and `math` ops become LLVM instructions and
intrinsics, shared by the CPU translation (`convert-arith-to-llvm`,
`convert-math-to-llvm`) and the GPU one (the `ptx` target, `lowering/gpu/ptx.py`).

Entries name LLVM's own instructions (`fadd`, `sdiv`, `sitofp`) and intrinsics
(`llvm.maximum`, overloaded on the scalar type: `llvm.maximum.f32`).  Each back end
only spells them its way (xDSL's `llvm` dialect ops, llvmlite's `IRBuilder`), so
what an op computes is decided here, once for both.

Conversions, decided once:

* float -> integer saturates (`llvm.fptosi.sat` / `llvm.fptoui.sat`): NaN gives 0
  and values beyond the integer range give its minimum or maximum.  LLVM's plain
  `fptosi` is poison there (the optimizer may then do anything), and PTX's `cvt`
  saturates anyway, so both targets give the same, defined answer.
* unsigned integer -> float converts the unsigned value exactly (LLVM's `uitofp`).
  The dialect's only unsigned source is `bool` (`i1`); sources narrower than 64 bits
  are zero-extended to `i64` and converted as signed integers, which is exact, and
  a 64-bit unsigned source is refused (xDSL's `llvm` dialect has no `uitofp`, and
  no dtype of the dialect produces one).
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import IndexType, IntegerType
from xdsl.ir import Attribute, Operation

INT_BINARY: dict[type[Operation], str] = {
    arith.AddiOp: "add",
    arith.SubiOp: "sub",
    arith.MuliOp: "mul",
    arith.DivSIOp: "sdiv",
    arith.DivUIOp: "udiv",
    arith.RemSIOp: "srem",
    arith.RemUIOp: "urem",
    arith.AndIOp: "and",
    arith.OrIOp: "or",
    arith.XOrIOp: "xor",
    arith.ShLIOp: "shl",
    arith.ShRUIOp: "lshr",
    arith.ShRSIOp: "ashr",
}
"""Integer binary ops: the LLVM instruction of each."""

FLOAT_BINARY: dict[type[Operation], str] = {
    arith.AddfOp: "fadd",
    arith.SubfOp: "fsub",
    arith.MulfOp: "fmul",
    arith.DivfOp: "fdiv",
}
"""Float binary ops: the LLVM instruction of each (fast-math flags carry over)."""

BINARY_INTRINSICS: dict[type[Operation], str] = {
    arith.MaximumfOp: "llvm.maximum",
    arith.MinimumfOp: "llvm.minimum",
    arith.MaxnumfOp: "llvm.maxnum",
    arith.MinnumfOp: "llvm.minnum",
    arith.MaxSIOp: "llvm.smax",
    arith.MinSIOp: "llvm.smin",
    arith.MaxUIOp: "llvm.umax",
    arith.MinUIOp: "llvm.umin",
}
"""Minimum and maximum: overloaded intrinsics (`maximumf` propagates NaN, as numpy's
`maximum`; `maxnumf` ignores it)."""

CASTS: dict[type[Operation], str] = {
    arith.ExtFOp: "fpext",
    arith.TruncFOp: "fptrunc",
    arith.SIToFPOp: "sitofp",
    arith.ExtSIOp: "sext",
    arith.ExtUIOp: "zext",
    arith.TruncIOp: "trunc",
    arith.BitcastOp: "bitcast",
}
"""Conversions that are one LLVM instruction (see the module doc for the others)."""

FLOAT_TO_INT: dict[type[Operation], str] = {
    arith.FPToSIOp: "llvm.fptosi.sat",
    arith.FPToUIOp: "llvm.fptoui.sat",
}
"""Float -> integer: saturating intrinsics, overloaded on result and operand type
(`llvm.fptosi.sat.i32.f32`)."""

UNSIGNED_TO_FLOAT = arith.UIToFPOp
"""Unsigned -> float: `zext` to `i64`, then `sitofp` (exact below 64 bits)."""

MATH_INTRINSICS: dict[type[Operation], str] = {
    xmath.SqrtOp: "llvm.sqrt",
    xmath.AbsFOp: "llvm.fabs",
    xmath.FloorOp: "llvm.floor",
    xmath.CeilOp: "llvm.ceil",
    xmath.TruncOp: "llvm.trunc",
    xmath.FmaOp: "llvm.fma",
    xmath.CopySignOp: "llvm.copysign",
    xmath.ExpOp: "llvm.exp",
    xmath.Exp2Op: "llvm.exp2",
    xmath.LogOp: "llvm.log",
    xmath.Log2Op: "llvm.log2",
    xmath.SinOp: "llvm.sin",
    xmath.CosOp: "llvm.cos",
    xmath.TanhOp: "llvm.tanh",
    xmath.PowFOp: "llvm.pow",
}
"""`math` ops that are an LLVM intrinsic of the same operands (on the CPU, what
`math-polynomial-approximation` did not expand)."""

NVPTX_NATIVE_INTRINSICS = frozenset(
    {"llvm.sqrt", "llvm.fabs", "llvm.floor", "llvm.ceil", "llvm.trunc", "llvm.fma", "llvm.copysign"}
)
"""The intrinsics of `MATH_INTRINSICS` NVPTX has instructions for; the GPU path
calls libdevice for the others (`convert-gpu-to-nvvm`), since LLVM's NVPTX back end
aborts on them."""

LIBM: dict[type[Operation], str] = {
    xmath.ErfOp: "erf",
    xmath.TanOp: "tan",
    xmath.AsinOp: "asin",
    xmath.AcosOp: "acos",
    xmath.AtanOp: "atan",
    xmath.SinhOp: "sinh",
    xmath.CoshOp: "cosh",
    xmath.Log1pOp: "log1p",
    xmath.ExpM1Op: "expm1",
    xmath.RoundOp: "round",
}
"""`math` ops with no LLVM intrinsic: the C library function (`erff` for f32)."""

ICMP_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
"""`arith.cmpi` predicates, which are LLVM's `icmp` predicates, in LLVM's numbering."""


def intrinsic_name(base: str, *types: Attribute) -> str:
    """An overloaded intrinsic's name for its scalar types (`llvm.maximum.f32`,
    `llvm.fptosi.sat.i32.f32`); `index` is `i64`."""
    return ".".join([base, *("i64" if isinstance(t, IndexType) else str(t) for t in types)])


def int_width(t: Attribute) -> int:
    """The bit width of an integer or `index` type (`index` is 64 bits)."""
    if isinstance(t, IndexType):
        return 64
    assert isinstance(t, IntegerType)
    return t.width.data


def check_unsigned_to_float(source: Attribute) -> None:
    """Refuse the one unsigned -> float conversion the shared decision leaves out."""
    if int_width(source) >= 64:
        raise ValueError(
            f"arith.uitofp from {source}: unsigned 64-bit integers are not supported "
            "(only narrower unsigned values convert exactly through i64)"
        )


__all__ = [
    "BINARY_INTRINSICS",
    "CASTS",
    "FLOAT_BINARY",
    "FLOAT_TO_INT",
    "ICMP_PREDICATES",
    "INT_BINARY",
    "LIBM",
    "MATH_INTRINSICS",
    "NVPTX_NATIVE_INTRINSICS",
    "UNSIGNED_TO_FLOAT",
    "check_unsigned_to_float",
    "int_width",
    "intrinsic_name",
]
