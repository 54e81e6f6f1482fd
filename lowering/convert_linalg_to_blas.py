"""`convert-linalg-to-blas`: contractions tagged by `convert-pd-to-linalg` become
calls to a CBLAS `gemm`.

Two tags, one rewrite:

* `library_call = "gemm"`: a plain 2-D matrix product (3 loops);
* `library_call = "batch_gemm"`: any other contraction one `gemm` per batch element
  computes: batch dimensions before the matrix dimensions (broadcast operands
  included), 1-D operands (a vector is a 1xK row or a Kx1 column), and batch
  dimensions that are summed over (a convolution's filter gradient adds one product
  per image: those calls accumulate with `beta = 1`).  The batch loops are `scf.for`
  loops around the call; each call gets pointers offset to its batch element.
  (The GPU path tiles only `gemm`; it runs `batch_gemm` as ordinary loops.)

Each call is `func.call @pullback_sgemm` (or `_dgemm`) with the CBLAS row-major
signature, 64-bit integers (ILP64, as numpy's bundled OpenBLAS exports it):

    (order: i32, trans_a: i32, trans_b: i32, m: i64, n: i64, k: i64, alpha,
     a: ptr, lda: i64, b: ptr, ldb: i64, beta, c: ptr, ldc: i64) -> ()

The runtime binds these symbols to the BLAS it finds (`runtime/native/blas.py`).  A
`linalg.fill` of zeros into the output right before the product folds into
`beta = 0` (unless batch dimensions accumulate).  Untagged contractions, tagged ones
whose layout BLAS cannot take, and everything when this pass is left out of the
pipeline are lowered to loops by `convert-linalg-to-loops`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, llvm, memref, scf
from xdsl.dialects.builtin import (
    AffineMapAttr,
    Float32Type,
    FloatAttr,
    IndexType,
    IntegerType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    UnrealizedConversionCastOp,
    bf16,
    f32,
    f64,
    i32,
    i64,
)
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from pullback.lowering.build import constant, make

ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112

GEMM_SYMBOLS = {"f32": "pullback_sgemm", "f64": "pullback_dgemm", "bf16": "pullback_sbgemm"}
"""Symbols the generated code calls, by operand type; the runtime maps the first two
to the BLAS in use and the third to its bfloat16 GEMM (`runtime/native/bf16_gemm.py`:
bfloat16 `A` and `B`, float32 `C`, alpha and beta)."""

BLAS_TAGS = ("gemm", "batch_gemm")
"""`library_call` values this pass rewrites."""


def gemm_signature(elem: Attribute) -> tuple[list[Attribute], list[Attribute]]:
    """Argument and result types of the CBLAS gemm the generated code calls."""
    p = llvm.LLVMPointerType()
    return [i32, i32, i32, i64, i64, i64, elem, p, i64, p, i64, elem, p, i64], []


def _dims(attr: Attribute) -> list[int]:
    assert isinstance(attr, AffineMapAttr)
    return [e.position if isinstance(e, AffineDimExpr) else -1 for e in attr.data.results]


@dataclass(frozen=True)
class GemmPlan:
    """How one contraction maps onto `gemm` calls (loop dimensions by role).

    `m`/`n` are None for a vector operand (then M or N is 1).  Every other loop
    dimension is a batch dimension, indexed only before an operand's matrix part.
    """

    m: int | None
    n: int | None
    k: int
    trans_a: bool
    trans_b: bool
    batch: list[int]
    accumulate: bool
    """Some batch dimension is summed over: every call adds into C (beta = 1)."""


def plan_gemm(op: linalg.GenericOp) -> GemmPlan | None:
    """The gemm layout of a tagged contraction, or None when BLAS cannot take it."""
    if len(op.inputs) != 2 or len(op.outputs) != 1:
        return None
    a, b, c = (_dims(m) for m in op.indexing_maps.data)
    reductions = {d for d, t in enumerate(op.iterator_types) if t.data == IteratorType.REDUCTION}

    def tail(m: list[int]) -> list[int]:
        return m[-2:] if len(m) >= 2 else m

    ta, tb = tail(a), tail(b)
    ks = [d for d in ta if d in tb and d in reductions]
    if len(ks) != 1:
        return None
    (k,) = ks
    m = next((d for d in ta if d != k), None) if len(ta) == 2 else None
    n = next((d for d in tb if d != k), None) if len(tb) == 2 else None
    tc = [d for d in (m, n) if d is not None]
    if m is not None and (m in b or m in reductions) or n is not None and (n in a or n in reductions):
        return None
    if c[len(c) - len(tc):] != tc:
        return None
    batch = [d for d in range(len(op.iterator_types)) if d not in (m, n, k)]
    leads = [a[: len(a) - len(ta)], b[: len(b) - len(tb)], c[: len(c) - len(tc)]]
    # Batch dimensions live in the leading positions only (-1: a broadcast 0).
    if any(d not in batch for lead in leads for d in lead if d >= 0):
        return None
    if any(d in batch for d in ta + tb + tc):
        return None
    return GemmPlan(
        m, n, k,
        trans_a=len(ta) == 2 and ta[0] == k,
        trans_b=len(tb) == 2 and tb[1] == k,
        batch=batch,
        accumulate=any(d in reductions for d in batch),
    )


class _Emit:
    """Builds index/integer arithmetic and memref sizes at a builder's point (the
    common ops built by `make`: lowering/build.py)."""

    def __init__(self, b: Builder) -> None:
        self.b = b
        self._consts: dict[tuple[str, Attribute], SSAValue] = {}

    def op(self, o: Operation) -> SSAValue:
        """Insert `o`; return its first result."""
        self.b.insert(o)
        return o.results[0]

    def const(self, v: int | float, t: Attribute) -> SSAValue:
        """A constant of type `t` (one per value and type)."""
        key = (repr(v), t)  # (types hash by value; printing one is slow)
        if key not in self._consts:
            attr = FloatAttr(v, t) if t in (f32, f64) else IntegerAttr(int(v), cast(IntegerType | IndexType, t))
            self._consts[key] = self.op(constant(attr))
        return self._consts[key]

    def size(self, mem: SSAValue, k: int) -> SSAValue:
        """Dimension `k` of `mem` as an `index`."""
        shape = mem.type.get_shape()  # type: ignore[attr-defined]
        if shape[k] >= 0:
            return self.const(shape[k], IndexType())
        return self.op(memref.DimOp(mem, self.const(k, IndexType())))

    def i64(self, v: SSAValue) -> SSAValue:
        """An `index` as `i64`."""
        return self.op(make(arith.IndexCastOp, (v,), (i64,)))

    def mul(self, x: SSAValue, y: SSAValue) -> SSAValue:
        """`x * y` on indices."""
        return self.op(make(arith.MuliOp, (x, y), (x.type,)))

    def add(self, x: SSAValue, y: SSAValue) -> SSAValue:
        """`x + y` on indices."""
        return self.op(make(arith.AddiOp, (x, y), (x.type,)))


def _strides(e: _Emit, mem: SSAValue) -> list[SSAValue]:
    """Row-major element strides of a dense buffer, as `index` values."""
    rank = len(mem.type.get_shape())  # type: ignore[attr-defined]
    out: list[SSAValue] = []
    acc = e.const(1, IndexType())
    for k in reversed(range(rank)):
        out.insert(0, acc)
        if k:
            acc = e.mul(acc, e.size(mem, k))
    return out


def _batch_loops(
    e: _Emit, bounds: Sequence[SSAValue], body: Callable[[_Emit, list[SSAValue]], None]
) -> None:
    """`scf.for` nest over `bounds`; `body(e, ivs)` emits the innermost code."""
    if not bounds:
        body(e, [])
        return
    block = Block(arg_types=[IndexType()])
    inner = _Emit(Builder(InsertPoint.at_end(block)))
    _batch_loops(inner, bounds[1:], lambda em, ivs: body(em, [block.args[0], *ivs]))
    block.add_op(scf.YieldOp())
    zero, one = e.const(0, IndexType()), e.const(1, IndexType())
    e.b.insert(scf.ForOp(zero, bounds[0], one, [], Region(block)))


@dataclass
class GemmToCall(RewritePattern):
    """Rewrite one tagged contraction into (a loop nest of) BLAS calls."""

    used: set[str]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: linalg.GenericOp, rewriter: PatternRewriter) -> None:
        if op.library_call is None or op.library_call.data not in BLAS_TAGS:
            return
        plan = plan_gemm(op)
        if plan is None:
            return
        prev = op.prev_op  # before anything is inserted between it and op
        (amem, bmem), (cmem,) = op.inputs, op.outputs
        maps = [_dims(m) for m in op.indexing_maps.data]
        elem = cmem.type.get_element_type()  # type: ignore[attr-defined]
        name = _symbol(elem, {mem.type.get_element_type() for mem in (amem, bmem)})  # type: ignore[attr-defined]
        if name is None:
            return
        e = _Emit(Builder(InsertPoint.before(op)))

        def size_of(d: int) -> SSAValue:
            """The trip count of loop `d`, read off an operand that indexes it."""
            for mem, m in zip((cmem, amem, bmem), (maps[2], maps[0], maps[1])):
                if d in m:
                    return e.size(mem, m.index(d))
            raise AssertionError("every loop dimension of a contraction is indexed")

        one = e.const(1, IndexType())
        m_size = size_of(plan.m) if plan.m is not None else one
        n_size = size_of(plan.n) if plan.n is not None else one
        k_size = size_of(plan.k)
        # Leading dimensions of the (row-major) matrices; a vector is a 1xK row (A)
        # or a Kx1 column (B, C).
        a_rank = len(maps[0])
        lda = e.size(amem, a_rank - 1)
        ldb = e.size(bmem, len(maps[1]) - 1) if plan.n is not None else one
        ldc = n_size
        beta = 1.0
        if (
            not plan.accumulate
            and isinstance(prev, linalg.FillOp)
            and prev.outputs[0] == cmem
            and _is_zero(prev.inputs[0])
        ):
            rewriter.erase(prev)
            beta = 0.0
        # Batch dimensions of static size 1 (a single group) need no loop.
        batch = [d for d in plan.batch if _static_size(op, d) != 1]
        bounds = [size_of(d) for d in batch]
        strides = [_strides(e, mem) if batch else [] for mem in (amem, bmem, cmem)]
        self.used.add(name)
        fixed = [
            e.const(ROW_MAJOR, i32), e.const(TRANS if plan.trans_a else NO_TRANS, i32),
            e.const(TRANS if plan.trans_b else NO_TRANS, i32),
            e.i64(m_size), e.i64(n_size), e.i64(k_size), e.const(1.0, elem),
        ]
        lds = [e.i64(lda), e.i64(ldb), e.i64(ldc)]
        beta_v = e.const(beta, elem)
        ptrs = [
            e.op(UnrealizedConversionCastOp.get([mem], [llvm.LLVMPointerType()]))
            for mem in (amem, bmem, cmem)
        ]

        def call(em: _Emit, ivs: list[SSAValue]) -> None:
            at = dict(zip(batch, ivs))
            args: list[SSAValue] = []
            for ptr, m, st, mem in zip(ptrs, maps, strides, (amem, bmem, cmem)):
                off: SSAValue | None = None
                for pos, d in enumerate(m):
                    if d in at:
                        term = em.mul(at[d], st[pos])
                        off = term if off is None else em.add(off, term)
                if off is not None:
                    ptr = em.op(
                        llvm.GEPOp(
                            ptr, [llvm.GEP_USE_SSA_VAL], mem.type.get_element_type(),  # type: ignore[attr-defined]
                            ssa_indices=[em.i64(off)], inbounds=True,
                        )
                    )
                args.append(ptr)
            em.b.insert(
                func.CallOp(
                    name,
                    [*fixed, args[0], lds[0], args[1], lds[1], beta_v, args[2], lds[2]],
                    [],
                )
            )

        _batch_loops(e, bounds, call)
        rewriter.erase(op)


def _symbol(out: Attribute, operands: set[Attribute]) -> str | None:
    """The kernel for operands of types `operands` into a buffer of type `out`; None
    for a mix no kernel takes (then `convert-linalg-to-loops` lowers it)."""
    if operands == {bf16} and isinstance(out, Float32Type):
        return GEMM_SYMBOLS["bf16"]
    if operands == {out}:
        return GEMM_SYMBOLS["f32" if isinstance(out, Float32Type) else "f64"]
    return None


def _static_size(op: linalg.GenericOp, d: int) -> int | None:
    """The trip count of loop `d` when an operand's static shape gives it."""
    for mem, m in zip([*op.inputs, *op.outputs], op.indexing_maps.data):
        dims = _dims(m)
        if d in dims:
            size = mem.type.get_shape()[dims.index(d)]  # type: ignore[attr-defined]
            if size >= 0:
                return size
    return None


def _is_zero(v: SSAValue) -> bool:
    owner = v.owner
    return (
        isinstance(owner, arith.ConstantOp)
        and isinstance(owner.value, FloatAttr)
        and owner.value.value.data == 0.0
    )


@dataclass(frozen=True)
class ConvertLinalgToBlasPass(ModulePass):
    """Replace `gemm`/`batch_gemm`-tagged contractions by CBLAS gemm calls."""

    name = "convert-linalg-to-blas"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        """Rewrite the contractions of every function of `op`; declare the kernels used."""
        used: set[str] = set()
        gemms_to_calls(op, used)
        declare_gemms(op, used)

    def per_function(self, module: ModuleOp) -> Callable[[func.FuncOp], list[Operation]]:
        """This pass one function of `module` at a time (`pipeline.translate_streamed`):
        each call rewrites one function and returns the kernel declarations it added."""
        used: set[str] = set()

        def run(fn: func.FuncOp) -> list[Operation]:
            before = len(used)
            gemms_to_calls(fn, used)
            return declare_gemms(module, used) if len(used) != before else []

        return run


def gemms_to_calls(root: Operation, used: set[str]) -> None:
    """Replace the tagged contractions under `root` (a module, or one function of
    it) by kernel calls, adding the kernels' symbols to `used`."""
    walker = PatternRewriteWalker(GemmToCall(used), apply_recursively=False)
    for region in root.regions:
        walker.rewrite_region(region)


def declare_gemms(module: ModuleOp, used: set[str]) -> list[Operation]:
    """Declare in `module` each kernel of `used` it does not declare yet; returns the
    declarations added."""
    added: list[Operation] = []
    existing = {getattr(o, "sym_name", None) and o.sym_name.data for o in module.body.block.ops}  # type: ignore[attr-defined]
    for name in sorted(used - existing):
        elem = f64 if name == GEMM_SYMBOLS["f64"] else f32
        ins, outs = gemm_signature(elem)
        decl = func.FuncOp.external(name, ins, outs)
        module.body.block.add_op(decl)
        added.append(decl)
    return added


__all__ = [
    "BLAS_TAGS", "ConvertLinalgToBlasPass", "GEMM_SYMBOLS", "GemmPlan", "declare_gemms", "gemm_signature",
    "gemms_to_calls", "plan_gemm",
]
_ = MemRefType
