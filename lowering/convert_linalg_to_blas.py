"""`convert-linalg-to-blas`: matrix products tagged `library_call = "gemm"` become
calls to a CBLAS `gemm`.

`convert-pd-to-linalg` tags the 2-D float contractions it emits for `pd.matmul`.  Each
becomes `func.call @pullback_sgemm` (or `_dgemm`) with the CBLAS row-major signature,
64-bit integers (ILP64, as numpy's bundled OpenBLAS exports it):

    (order: i32, trans_a: i32, trans_b: i32, m: i64, n: i64, k: i64, alpha,
     a: ptr, lda: i64, b: ptr, ldb: i64, beta, c: ptr, ldc: i64) -> ()

The runtime binds these symbols to the BLAS it finds (`runtime/compiled.py`).  A
`linalg.fill` of zeros into the output right before the product folds into
`beta = 0`.  Untagged contractions, and everything when this pass is left out of
the pipeline, are lowered to loops by `convert-linalg-to-loops`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, llvm, memref
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.builtin import (
    AffineMapAttr,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    UnrealizedConversionCastOp,
    f32,
    f64,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112

GEMM_SYMBOLS = {"f32": "pullback_sgemm", "f64": "pullback_dgemm"}
"""Symbols the generated code calls; the runtime maps them to the BLAS in use."""


def gemm_signature(elem: Attribute) -> tuple[list[Attribute], list[Attribute]]:
    """Argument and result types of the CBLAS gemm the generated code calls."""
    p = llvm.LLVMPointerType()
    return [i32, i32, i32, i64, i64, i64, elem, p, i64, p, i64, elem, p, i64], []


def _dims(attr: Attribute) -> list[int]:
    assert isinstance(attr, AffineMapAttr)
    return [e.position if isinstance(e, AffineDimExpr) else -1 for e in attr.data.results]


@dataclass
class GemmToCall(RewritePattern):
    """Rewrite one tagged 2-D contraction into a BLAS call."""

    used: set[str]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: linalg.GenericOp, rewriter: PatternRewriter) -> None:
        if op.library_call is None or op.library_call.data != "gemm":
            return
        a, b = op.inputs
        (c,) = op.outputs
        elem = c.type.get_element_type()  # type: ignore[attr-defined]
        maps = [_dims(m) for m in op.indexing_maps.data]
        # Loop dims: d0 = m, d1 = n, d2 = k (as convert-pd-to-linalg emits them).
        trans_a = maps[0] == [2, 0]
        trans_b = maps[1] == [1, 2]
        if maps[2] != [0, 1] or maps[0] not in ([0, 2], [2, 0]) or maps[1] not in ([2, 1], [1, 2]):
            return
        ops: list[Operation] = []

        def const(v: int | float, t: Attribute) -> SSAValue:
            attr = FloatAttr(v, t) if t in (f32, f64) else IntegerAttr(int(v), t)
            ops.append(c_op := arith.ConstantOp(attr))  # type: ignore[arg-type]
            return c_op.result

        def dim(mem: SSAValue, k: int) -> SSAValue:
            shape = mem.type.get_shape()  # type: ignore[attr-defined]
            if shape[k] >= 0:
                return const(shape[k], i64)
            ops.append(idx := arith.ConstantOp.from_int_and_width(k, IndexType()))
            ops.append(d := memref.DimOp(mem, idx.result))
            ops.append(cast := arith.IndexCastOp(d.result, i64))
            return cast.result

        def ptr(mem: SSAValue) -> SSAValue:
            ops.append(cast := UnrealizedConversionCastOp.get([mem], [llvm.LLVMPointerType()]))
            return cast.results[0]

        m = dim(c, 0)
        n = dim(c, 1)
        k = dim(a, 0 if trans_a else 1)
        lda, ldb, ldc = dim(a, 1), dim(b, 1), n
        beta = 1.0
        prev = op.prev_op
        if isinstance(prev, linalg.FillOp) and prev.outputs[0] == c and _is_zero(prev.inputs[0]):
            rewriter.erase(prev)
            beta = 0.0
        name = GEMM_SYMBOLS["f32" if isinstance(elem, Float32Type) else "f64"]
        self.used.add(name)
        args = [
            const(ROW_MAJOR, i32), const(TRANS if trans_a else NO_TRANS, i32),
            const(TRANS if trans_b else NO_TRANS, i32), m, n, k, const(1.0, elem),
            ptr(a), lda, ptr(b), ldb, const(beta, elem), ptr(c), ldc,
        ]
        ops.append(func.CallOp(name, args, []))
        rewriter.replace(op, ops, [])


def _is_zero(v: SSAValue) -> bool:
    owner = v.owner
    return (
        isinstance(owner, arith.ConstantOp)
        and isinstance(owner.value, FloatAttr)
        and owner.value.value.data == 0.0
    )


@dataclass(frozen=True)
class ConvertLinalgToBlasPass(ModulePass):
    """Replace `library_call = "gemm"` contractions by CBLAS gemm calls."""

    name = "convert-linalg-to-blas"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        used: set[str] = set()
        PatternRewriteWalker(GemmToCall(used), apply_recursively=False).rewrite_module(op)
        existing = {getattr(o, "sym_name", None) and o.sym_name.data for o in op.body.block.ops}  # type: ignore[attr-defined]
        for name in sorted(used - existing):
            elem = f32 if name == GEMM_SYMBOLS["f32"] else f64
            ins, outs = gemm_signature(elem)
            op.body.block.add_op(func.FuncOp.external(name, ins, outs))


_ = (MemRefType, InsertPoint)
