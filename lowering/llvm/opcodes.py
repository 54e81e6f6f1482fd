"""The one table of how `arith` and `math` ops become LLVM instructions,
intrinsics and library calls, for both targets (`lowering/llvm/emitter.py` reads it;
so does `convert-gpu-to-nvvm`, for libdevice's names).

Entries name LLVM's own instructions (`fadd`, `sdiv`, `sitofp`) and intrinsics
(`llvm.maximum`, overloaded on the scalar type: `llvm.maximum.f32`).  What an op
computes is decided here, once; where a target differs (a `math` function is an
intrinsic on one and a library call on the other) `MATH` says so per target.

Conversions, decided once:

* float -> integer saturates (`llvm.fptosi.sat` / `llvm.fptoui.sat`): NaN gives 0
  and values beyond the integer range give its minimum or maximum.  LLVM's plain
  `fptosi` is poison there (the optimizer may then do anything), and PTX's `cvt`
  saturates anyway, so both targets give the same, defined answer.
* unsigned integer -> float converts the unsigned value exactly.  The dialect's
  only unsigned source is `bool` (`i1`); sources narrower than 64 bits are
  zero-extended to `i64` and converted as signed integers, which is exact, and a
  64-bit unsigned source is refused (no dtype of the dialect produces one).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import Float32Type, Float64Type, IndexType, IntegerType
from xdsl.ir import Attribute, Operation

from pullback.lowering.abi import LoweringError

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

@dataclass(frozen=True)
class MathFunction:
    """How a `math` op is computed on each target.

    `intrinsic`: the LLVM intrinsic of the same operands (`llvm.exp`), used on the
    CPU (after `math-polynomial-approximation` expanded what it expands) and on
    NVPTX where `nvptx_native` says the NVPTX back end has an instruction for it
    (LLVM's NVPTX back end aborts on the others).  `libm`: the C library function
    where there is no intrinsic (`erff` for f32).  `libdevice`: the base name of
    CUDA's libdevice function (`__nv_expf` for f32, `__nv_exp` for f64)."""

    intrinsic: str | None = None
    libm: str | None = None
    libdevice: str | None = None
    nvptx_native: frozenset[str] = frozenset()
    """Element types (`f32`, `f64`) on which NVPTX has the intrinsic natively."""


_BOTH = frozenset({"f32", "f64"})

MATH: dict[type[Operation], MathFunction] = {
    xmath.SqrtOp: MathFunction("llvm.sqrt", nvptx_native=_BOTH),
    xmath.AbsFOp: MathFunction("llvm.fabs", nvptx_native=_BOTH),
    xmath.FloorOp: MathFunction("llvm.floor", nvptx_native=_BOTH),
    xmath.CeilOp: MathFunction("llvm.ceil", nvptx_native=_BOTH),
    xmath.TruncOp: MathFunction("llvm.trunc", nvptx_native=_BOTH),
    xmath.FmaOp: MathFunction("llvm.fma", nvptx_native=_BOTH),
    xmath.CopySignOp: MathFunction("llvm.copysign", nvptx_native=_BOTH),
    xmath.ExpOp: MathFunction("llvm.exp", libdevice="exp"),
    xmath.Exp2Op: MathFunction("llvm.exp2", libdevice="exp2"),
    xmath.LogOp: MathFunction("llvm.log", libdevice="log"),
    xmath.Log2Op: MathFunction("llvm.log2", libdevice="log2"),
    xmath.SinOp: MathFunction("llvm.sin", libdevice="sin"),
    xmath.CosOp: MathFunction("llvm.cos", libdevice="cos"),
    xmath.TanhOp: MathFunction("llvm.tanh", libdevice="tanh"),
    xmath.PowFOp: MathFunction("llvm.pow", libdevice="pow"),
    xmath.ErfOp: MathFunction(libm="erf", libdevice="erf"),
    xmath.TanOp: MathFunction(libm="tan", libdevice="tan"),
    xmath.AsinOp: MathFunction(libm="asin", libdevice="asin"),
    xmath.AcosOp: MathFunction(libm="acos", libdevice="acos"),
    xmath.AtanOp: MathFunction(libm="atan", libdevice="atan"),
    xmath.SinhOp: MathFunction(libm="sinh", libdevice="sinh"),
    xmath.CoshOp: MathFunction(libm="cosh", libdevice="cosh"),
    xmath.Log1pOp: MathFunction(libm="log1p", libdevice="log1p"),
    xmath.ExpM1Op: MathFunction(libm="expm1", libdevice="expm1"),
    xmath.RoundOp: MathFunction(libm="round", libdevice="round"),
    xmath.Log10Op: MathFunction(libm="log10", libdevice="log10"),
    xmath.Atan2Op: MathFunction(libm="atan2", libdevice="atan2"),
    xmath.CbrtOp: MathFunction(libm="cbrt", libdevice="cbrt"),
    xmath.RsqrtOp: MathFunction(libdevice="rsqrt"),
}
"""Every `math` op either target computes, and how (see `MathFunction`)."""


def c_name(base: str, t: Attribute) -> str:
    """A C math library function's name for element type `t` (`erff` for f32)."""
    return base + ("f" if isinstance(t, Float32Type) else "")


def libdevice_name(op: Operation) -> str:
    """The libdevice `__nv_*` function computing `math` op `op` on its element type."""
    fn = MATH.get(type(op))
    t = op.results[0].type
    if fn is None or fn.libdevice is None or not isinstance(t, (Float32Type, Float64Type)):
        raise LoweringError(f"'{op.name}' on {t} has no libdevice function")
    return "__nv_" + c_name(fn.libdevice, t)


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
    "MATH",
    "MathFunction",
    "UNSIGNED_TO_FLOAT",
    "c_name",
    "check_unsigned_to_float",
    "int_width",
    "intrinsic_name",
    "libdevice_name",
]
