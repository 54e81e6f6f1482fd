"""`math-polynomial-approximation`: `exp`, `log` and `tanh` on f32 become inline
arithmetic (polynomials and one rational function) that LLVM vectorizes.

Why: LLVM vectorizes straight-line arithmetic, but a call to `expf` stays a scalar
libm call per element.  With these expansions an elementwise chain of `tanh`,
`sigmoid`, `exp`... vectorizes with the rest of its loop.  f64 keeps the exact libm
functions (`convert-math-to-llvm`).

Accuracy (against float64 libm rounded to f32; `tests/unit/lowering/test_compiled_ops.py`
checks every bound on dense grids, every binade and the special values):
- `exp`, `log` (Cephes `expf`/`logf`): within 2 ulp over the whole f32 range,
  denormal inputs and results included (measured: at most 1 ulp).
- `tanh` (Eigen's and XLA's fast rational approximation, which Paddle's CPU kernel
  itself evaluates): within 6 ulp, |tanh| <= 1 (measured: at most 5 ulp, mean 0.6,
  over 8M points in [-12, 12] and every binade; the largest errors sit near
  |x| = 6, where the result is 1 - 1e-5: an absolute error under 3e-7).  The exp
  form it replaced (2 ulp) cost three times the instructions.
- `exp` marked `afn` (`sigmoid`'s, `expand_exp_afn`): as `exp` in the normal range;
  sigmoid = 1 / (1 + exp(-x)) stays within 2 ulp wherever its result is normal
  (x > -87.3); below that its denormal results are the quotient's, and 0 for
  x < -88.38 (libm's exp overflows at -88.72: the same 0 a little later).
Special values are libm's: exp(+-0) = 1, exp(-inf) = 0, exp(+inf) = +inf, exp of
anything past ln(FLT_MAX) = +inf, exp(NaN) = NaN; log(+-0) = -inf, log(x < 0) =
NaN, log(-inf) = NaN, log(+inf) = +inf, log(NaN) = NaN; tanh(+-0) = +-0,
tanh(+-inf) = +-1, tanh(NaN) = NaN, tanh(denormal) = itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.utils.fast_math import FastMathFlag
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import Float32Type, FloatAttr, IntegerAttr, ModuleOp, f32, i32
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

_F = arith.FastMathFlagsAttr([FastMathFlag.ALLOW_CONTRACT])


@dataclass
class _Emit:
    """Tiny f32 expression builder over a rewriter's insertion point."""

    r: PatternRewriter

    def op(self, op: Operation) -> SSAValue:
        self.r.insert(op)
        return op.results[0]

    def c(self, v: float) -> SSAValue:
        return self.op(arith.ConstantOp(FloatAttr(v, f32)))

    def ci(self, v: int) -> SSAValue:
        return self.op(arith.ConstantOp(IntegerAttr(v, i32)))

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.op(arith.AddfOp(a, b, _F))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.op(arith.SubfOp(a, b, _F))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.op(arith.MulfOp(a, b, _F))

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.op(arith.DivfOp(a, b, _F))

    def poly(self, x: SSAValue, coeffs: Sequence[float]) -> SSAValue:
        """Horner evaluation, highest coefficient first."""
        acc = self.c(coeffs[0])
        for k in coeffs[1:]:
            acc = self.add(self.mul(acc, x), self.c(k))
        return acc

    def clamp(self, x: SSAValue, lo: float, hi: float) -> SSAValue:
        """`min(max(x, lo), hi)` that keeps NaN: as compare-and-select (a false
        comparison keeps x), which x86 lowers to one max/min instruction each, where
        NaN-propagating `maximumf`/`minimumf` cost several."""
        lo_c, hi_c = self.c(lo), self.c(hi)
        above = self.select(self.cmp("olt", x, lo_c), lo_c, x)
        return self.select(self.cmp("ogt", above, hi_c), hi_c, above)

    def select(self, c: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.op(arith.SelectOp(c, a, b))

    def cmp(self, pred: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.op(arith.CmpfOp(a, b, pred))


_EXP_POLY = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2, 1.6666665459e-1, 5.0000001201e-1)
"""Cephes `expf`'s polynomial: exp(r) = 1 + r + r^2 p(r), |r| <= ln2 / 2."""


def expand_exp(e: _Emit, x: SSAValue) -> SSAValue:
    """Cephes `expf`: 2^n * p(r) with x = n ln2 + r, |r| <= ln2 / 2; denormal results
    too (see the module docstring for the accuracy)."""
    # The upper clamp sits past ln(FLT_MAX) = 88.7228 on purpose: there n = 128 and
    # the final products overflow to +inf, as libm's expf does, with no extra select
    # (n stays <= 128, so the exponent bits below remain well formed).  The lower one
    # sits past ln(2^-150) = -103.97, where every result rounds to 0: exp(-inf) = 0.
    x = e.clamp(x, -104.0, 89.0)
    # t = x log2(e) + 1.5 * 2^23 rounds x log2(e) to the nearest integer n and keeps
    # it in t's low mantissa bits (no floor, no conversion instruction).
    magic = 12582912.0
    t = e.add(e.mul(x, e.c(1.44269504088896341)), e.c(magic))
    n = e.sub(t, e.c(magic))
    r = e.sub(e.sub(x, e.mul(n, e.c(0.693359375))), e.mul(n, e.c(-2.12194440e-4)))
    p = e.poly(r, _EXP_POLY)
    p = e.add(e.add(e.mul(e.mul(p, r), r), r), e.c(1.0))
    # 2^n, n in [-150, 128], as 2^h * 2^k with h = n >> 1 and k = n - h, both in
    # [-75, 64] (normal floats): p * 2^h is exact and the second product rounds once,
    # correctly, into the denormals (libm's expf gives them too, down to 1.4e-45 at
    # x = -103.3) or to +inf past FLT_MAX.  A NaN x gives garbage bits here, but p is
    # NaN already, so the result stays NaN.
    ni = e.op(arith.SubiOp(e.op(arith.BitcastOp(t, i32)), e.ci(0x4B400000)))
    h = e.op(arith.ShRSIOp(ni, e.ci(1)))
    k = e.op(arith.SubiOp(ni, h))

    def pow2(m: SSAValue) -> SSAValue:
        return e.op(arith.BitcastOp(e.op(arith.ShLIOp(e.op(arith.AddiOp(m, e.ci(127))), e.ci(23))), f32))

    return e.mul(e.mul(p, pow2(h)), pow2(k))


def expand_log(e: _Emit, x: SSAValue) -> SSAValue:
    """Cephes `logf`: split x = m * 2^k with m in [sqrt(1/2), sqrt(2)), polynomial in m - 1.
    A denormal x is first scaled by 2^23 (exactly) into the normal range, its
    exponent lowered by 23 to match."""
    denormal = e.cmp("olt", x, e.c(1.17549435e-38))  # zero and negatives: fixed below
    xs = e.select(denormal, e.mul(x, e.c(8388608.0)), x)
    bits = e.op(arith.BitcastOp(xs, i32))
    k = e.op(arith.SubiOp(e.op(arith.ShRUIOp(bits, e.ci(23))), e.ci(126)))
    mbits = e.op(arith.OrIOp(e.op(arith.AndIOp(bits, e.ci(0x007FFFFF))), e.ci(0x3F000000)))
    m = e.op(arith.BitcastOp(mbits, f32))  # in [0.5, 1)
    kf = e.op(arith.SIToFPOp(k, f32))
    kf = e.sub(kf, e.select(denormal, e.c(23.0), e.c(0.0)))
    small = e.cmp("olt", m, e.c(0.707106781186547524))
    kf = e.select(small, e.sub(kf, e.c(1.0)), kf)
    m = e.select(small, e.sub(e.add(m, m), e.c(1.0)), e.sub(m, e.c(1.0)))
    z = e.mul(m, m)
    y = e.poly(m, [7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1,
                   1.4249322787e-1, -1.6668057665e-1, 2.0000714765e-1, -2.4999993993e-1,
                   3.3333331174e-1])
    y = e.mul(e.mul(y, m), z)
    y = e.add(y, e.mul(kf, e.c(-2.12194440e-4)))
    y = e.sub(y, e.mul(z, e.c(0.5)))
    res = e.add(e.add(m, y), e.mul(kf, e.c(0.693359375)))
    # Special cases as libm: log(0) = -inf, log(x < 0) = nan, log(inf) = inf, nan -> nan.
    res = e.select(e.cmp("oeq", x, e.c(float("inf"))), x, res)
    res = e.select(e.cmp("oeq", x, e.c(0.0)), e.c(float("-inf")), res)
    return e.select(e.cmp("ult", x, e.c(0.0)), e.c(float("nan")), res)


# Eigen's `generic_fast_tanh_float` (Eigen 3.4, MathFunctionsImpl.h), which XLA's CPU
# and GPU backends emit for f32 tanh and which Paddle's own CPU tanh kernel runs (an
# Eigen expression, `EIGEN_FAST_MATH` on by default): a [13/6] odd/even rational
# function of the clamped input.
_TANH_NUM = (-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11, 5.12229709037114e-08,
             1.48572235717979e-05, 6.37261928875436e-04, 4.89352455891786e-03)
_TANH_DEN = (1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03, 4.89352518554385e-03)
TANH_CLAMP = 7.99881172180175781
"""Eigen's clamp for FMA targets: the rational function there is 1.0 (to the float),
so tanh(+-inf) and everything past it is exactly +-1, and the result never exceeds 1."""
TANH_TINY = 0.0004
"""Below this |x|, tanh(x) = x to the float (x^3 / 3 is under half an ulp); the
rational function would lose the denormals."""


def expand_tanh(e: _Emit, x: SSAValue) -> SSAValue:
    """tanh as Eigen's and XLA's fast f32 rational approximation (one division, no
    exp, no branch-free evaluation of two alternatives): about a third of the
    instructions of an exp-based tanh.  Accuracy: see the module docstring."""
    ax = e.op(xmath.AbsFOp(x))
    xc = e.clamp(x, -TANH_CLAMP, TANH_CLAMP)
    z = e.mul(xc, xc)
    p = e.mul(xc, e.poly(z, _TANH_NUM))
    q = e.poly(z, _TANH_DEN)
    # The tiny branch also gives tanh(+-0) = +-0 and keeps denormal inputs exact.
    return e.select(e.cmp("olt", ax, e.c(TANH_TINY)), x, e.div(p, q))


def expand_exp_afn(e: _Emit, x: SSAValue) -> SSAValue:
    """exp for callers that need it only in the normal range (`afn` on the op, as
    `sigmoid`'s `1 / (1 + exp(-x))` sets it): the same Cephes polynomial as
    `expand_exp`, with 2^n built from the rounding constant's bits directly (no
    denormal scaling).  Results below 2^-126 are 2^-126-ish, not 0 (x is clamped at
    -87), and x past 88.38 gives +inf (n = 128 makes the scale's exponent field all
    ones): a sigmoid sees 1 + e = 1, or 1 / inf = 0, for both, which is what it
    would see with exact values there, save results under 2^-127 that flush to 0."""
    x = e.clamp(x, -87.0, 89.0)
    # t = x log2(e) + 1.5 * 2^23 + 127 rounds x log2(e) to the nearest integer n and
    # keeps n + 127 (in [1, 255]) in t's low mantissa bits: shifting them into the
    # exponent field gives 2^n (+inf for n = 128) with no conversion instruction.
    magic = 12582912.0 + 127.0
    t = e.add(e.mul(x, e.c(1.44269504088896341)), e.c(magic))
    n = e.sub(t, e.c(magic))
    r = e.sub(e.sub(x, e.mul(n, e.c(0.693359375))), e.mul(n, e.c(-2.12194440e-4)))
    p = e.poly(r, _EXP_POLY)
    p = e.add(e.add(e.mul(e.mul(p, r), r), r), e.c(1.0))
    scale = e.op(arith.BitcastOp(e.op(arith.ShLIOp(e.op(arith.BitcastOp(t, i32)), e.ci(23))), f32))
    return e.mul(p, scale)


_EXPANSIONS = {xmath.ExpOp: expand_exp, xmath.LogOp: expand_log, xmath.TanhOp: expand_tanh}


def approximate(op: Operation) -> bool:
    """Whether `op` carries the `afn` fast-math flag (its user needs it accurate only
    where the op's docstring here says: `expand_exp_afn`)."""
    fm = op.properties.get("fastmath")
    return isinstance(fm, arith.FastMathFlagsAttr) and any(getattr(f, "value", f) == "afn" for f in fm.data)


class ExpandF32Math(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        fn = _EXPANSIONS.get(type(op))  # type: ignore[arg-type]
        if fn is None or not isinstance(op.results[0].type, Float32Type):
            return
        if fn is expand_exp and approximate(op):
            fn = expand_exp_afn
        e = _Emit(rewriter)
        rewriter.replace(op, [], [fn(e, op.operands[0])])


@dataclass(frozen=True)
class MathPolynomialApproximationPass(ModulePass):
    """Expand f32 `math.exp`/`math.log`/`math.tanh` into vectorizable arithmetic."""

    name = "math-polynomial-approximation"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        """Expand every f32 exp/log/tanh of `op` (`expand_f32_math`)."""
        expand_f32_math(op)

    def per_function(self, module: ModuleOp) -> Callable[[func.FuncOp], list[Operation]]:
        """This pass one function at a time (`pipeline.translate_streamed`); it adds
        nothing to the module."""

        def run(fn: func.FuncOp) -> list[Operation]:
            expand_f32_math(fn)
            return []

        return run


def expand_f32_math(root: Operation) -> None:
    """Expand every f32 exp/log/tanh under `root` (a module, or one function).  The
    ops are found by one walk and rewritten in place: a pattern walker would visit
    (and retry) every op of the module, which cost more than the expansions on big
    programs."""
    pattern = ExpandF32Math()
    for target in [o for o in root.walk() if type(o) in _EXPANSIONS]:
        pattern.match_and_rewrite(target, PatternRewriter(target))


_ = (Builder, op_type_rewrite_pattern)
