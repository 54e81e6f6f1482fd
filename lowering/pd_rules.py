"""`convert-pd-to-linalg` rules for the ops that are not plain elementwise ops:
reductions, softmax and the losses built on it, matrix products and Adam.

Each rule reads its operands through `Lowerer.generic`, so elementwise producers of a
reduction, a softmax or a loss are fused into it.  Iteration domains follow the
input's memory order (reduced dimensions stay where they are), which keeps the
innermost loop contiguous and vectorizable, e.g. a bias gradient (sum over the batch)
runs `out[j] += g[i, j]` with `j` innermost.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import AnyFloat, IntegerAttr, MemRefType, i64
from xdsl.dialects import math as xmath
from xdsl.ir import Attribute, Operation, SSAValue

from pullback.dialects.pd.base import DYN, shape_of
from pullback.lowering.convert_pd_to_linalg import (
    SIZE_RULES,
    Lowerer,
    LoweringError,
    Size,
    rule,
)
from pullback.lowering.scalar import REASSOC, DimMap, Scalar, adam_body, prop


def identity_map(rank: int) -> DimMap:
    """The map of an operand read at exactly the loop's indices."""
    return tuple(range(rank))


def _axes(op: Operation, rank: int) -> list[int]:
    axes = prop(op, "axis", [])
    assert isinstance(axes, list)
    return sorted({a % max(rank, 1) for a in axes}) if axes else list(range(rank))


def temp(low: Lowerer, elem: Attribute, sizes: Sequence[Size]) -> SSAValue:
    """A temporary buffer of the given sizes, freed after its last reader."""
    shape = [s if isinstance(s, int) else DYN for s in sizes]
    dyn = [s for s in sizes if not isinstance(s, int)]
    op = memref.AllocOp(dyn, [], MemRefType(elem, shape), alignment=IntegerAttr(64, i64))
    low.emit(op)
    low.temps[op.memref] = low.current
    return op.memref


def count_as_float(low: Lowerer, sizes: Sequence[Size], elem: Attribute) -> SSAValue:
    """The product of sizes converted to a float scalar (for means)."""
    n = low.as_value(low.mul_sizes(sizes))
    as_int = low.emit(arith.IndexCastOp(n, i64)).results[0]
    return low.emit(arith.SIToFPOp(as_int, elem)).results[0]


# ------------------------------------------------------------------ reductions

_INIT = {"sum": 0.0, "max": -math.inf}


def reduce_into(
    low: Lowerer,
    x: SSAValue,
    out: SSAValue,
    axes: Sequence[int],
    keepdim: bool,
    kind: str,
) -> None:
    """`out = reduce(x)` over `axes` (`kind` is sum or max); x's producers fuse in."""
    rank = len(shape_of(x.type))
    out_map: DimMap = tuple(
        (None if d in axes else d) for d in range(rank) if keepdim or d not in axes
    )
    elem = out.type.get_element_type()  # type: ignore[attr-defined]
    init = _INIT[kind] if isinstance(elem, AnyFloat) else (0 if kind == "sum" else -(2**62))
    low.fill(out, init)

    def body(s: Scalar, args: list[SSAValue], outs: list[SSAValue]) -> list[SSAValue]:
        if kind == "sum":
            if isinstance(elem, AnyFloat):
                return [s.emit(arith.AddfOp(outs[0], args[0], REASSOC))]
            return [s.add(outs[0], args[0])]
        return [s.max(outs[0], args[0])]

    low.generic(low.sizes_of(x), [(x, identity_map(rank), True)], [(out, out_map)], body, reductions=axes)


def scale_by_count(low: Lowerer, out: SSAValue, sizes: Sequence[Size], reduced: Sequence[Size]) -> None:
    """`out /= prod(reduced)` in place (turns a sum into a mean)."""
    elem = out.type.get_element_type()  # type: ignore[attr-defined]
    n = count_as_float(low, reduced, elem)
    rank = len(sizes)
    low.generic(
        sizes, [], [(out, identity_map(rank))],
        lambda s, args, outs: [s.div(outs[0], args[0])],
        scalars=[n],
    )


def fuse_first_operand(op: Operation) -> Sequence[int]:
    """A `fusible` rule: the first operand is read over its own full shape."""
    return (0,)


@rule("pd.reduce_sum", "pd.reduce_mean", "pd.reduce_max", "pd.mean", fusible=fuse_first_operand)
def _reduce(low: Lowerer, op: Operation) -> None:
    x, r = op.operands[0], op.results[0]
    rank = len(shape_of(x.type))
    axes = list(range(rank)) if op.name == "pd.mean" else _axes(op, rank)
    keepdim = bool(prop(op, "keepdim", False)) and op.name != "pd.mean"
    out = low.out(r)
    kind = "max" if op.name == "pd.reduce_max" else "sum"
    reduce_into(low, x, out, axes, keepdim, kind)
    if op.name in ("pd.reduce_mean", "pd.mean"):
        xs = low.sizes_of(x)
        scale_by_count(low, out, low.sizes[r], [xs[a] for a in axes])


def _reduce_sizes(low: Lowerer, op: Operation, r: SSAValue, k: int) -> Size | None:
    x = op.operands[0]
    rank = len(shape_of(x.type))
    axes = list(range(rank)) if op.name == "pd.mean" else _axes(op, rank)
    keepdim = bool(prop(op, "keepdim", False)) and op.name != "pd.mean"
    kept = [d for d in range(rank) if keepdim or d not in axes]
    return low.sizes_of(x)[kept[k]]


for _n in ("pd.reduce_sum", "pd.reduce_mean", "pd.reduce_max", "pd.mean"):
    SIZE_RULES[_n] = _reduce_sizes


# ------------------------------------------------------- softmax and the losses


def row_stats(low: Lowerer, x: SSAValue, axis: int) -> tuple[SSAValue, SSAValue, DimMap]:
    """Per-row max `m` and `sum(exp(x - m))` along `axis`, as keep-dim temporaries."""
    rank = len(shape_of(x.type))
    sizes = low.sizes_of(x)
    kept = [1 if d == axis else s for d, s in enumerate(sizes)]
    elem = x.type.get_element_type()  # type: ignore[attr-defined]
    m = temp(low, elem, kept)
    total = temp(low, elem, kept)
    reduce_into(low, x, m, [axis], True, "max")
    row: DimMap = tuple(None if d == axis else d for d in range(rank))
    low.fill(total, 0.0)
    ident = identity_map(rank)

    def body(s: Scalar, args: list[SSAValue], outs: list[SSAValue]) -> list[SSAValue]:
        e = s.math(xmath.ExpOp, s.sub(args[0], args[1]))
        return [s.emit(arith.AddfOp(outs[0], e, REASSOC))]

    low.note_read(m)
    low.generic(sizes, [(x, ident, True), buffer_read(low, m, row)], [(total, row)], body, reductions=[axis])
    return m, total, row


def buffer_read(low: Lowerer, mem: SSAValue, m: DimMap) -> tuple[SSAValue, DimMap, bool]:
    """A `Lowerer.generic` read of a raw buffer (a temporary or a view), not a `pd`
    value: it is registered as a pseudo-value holding itself."""
    low.buf[mem] = mem
    return (mem, m, False)


def _softmax_axis(op: Operation) -> int:
    rank = len(shape_of(op.operands[0].type))
    return int(prop(op, "axis", -1)) % max(rank, 1)  # type: ignore[arg-type]


@rule("pd.softmax", "pd.log_softmax", fusible=fuse_first_operand)
def _softmax(low: Lowerer, op: Operation) -> None:
    x, r = op.operands[0], op.results[0]
    axis = _softmax_axis(op)
    rank = len(shape_of(x.type))
    m, total, row = row_stats(low, x, axis)
    out = low.out(r)
    log = op.name == "pd.log_softmax"

    def body(s: Scalar, args: list[SSAValue], outs: list[SSAValue]) -> list[SSAValue]:
        d = s.sub(args[0], args[1])
        if log:
            return [s.sub(d, s.math(xmath.LogOp, args[2]))]
        return [s.div(s.math(xmath.ExpOp, d), args[2])]

    reads = [(x, identity_map(rank), True), buffer_read(low, m, row), buffer_read(low, total, row)]
    low.generic(low.sizes_of(x), reads, [(out, identity_map(rank))], body)


def _label_map(x: SSAValue, label: SSAValue) -> DimMap:
    """How a hard label `[N.., 1]` or `[N..]` is read over the input's `[N.., C]` loop."""
    rank = len(shape_of(x.type))
    lead = tuple(range(rank - 1))
    return lead + ((None,) if len(shape_of(label.type)) == rank else ())


def _loss_map(rank: int) -> DimMap:
    return tuple(range(rank - 1)) + (None,)


def class_loss(
    low: Lowerer, op: Operation, x: SSAValue, label: SSAValue, out: SSAValue,
    logp: Callable[[Scalar, list[SSAValue]], SSAValue], extra: Sequence[tuple[SSAValue, DimMap, bool]],
) -> None:
    """`out[n] = -sum_c w(n, c) * logp(n, c)`: w is the soft label, or for a hard label
    `c == label[n]` (and 0 where `label[n] == ignore_index`)."""
    rank = len(shape_of(x.type))
    soft = bool(prop(op, "soft_label", False))
    ignore = int(prop(op, "ignore_index", -100))  # type: ignore[arg-type]
    low.fill(out, 0.0)
    lmap = identity_map(rank) if soft else _label_map(x, label)

    def body(s: Scalar, args: list[SSAValue], outs: list[SSAValue]) -> list[SSAValue]:
        lab, rest = args[0], args[1:]
        lp = logp(s, rest)
        zero = s.const(0.0, lp.type)
        if soft:
            term = s.mul(lab, lp)
        else:
            cls = s.emit(arith.IndexCastOp(s.index(rank - 1), lab.type))
            hit = s.cmp("eq", lab, cls)
            hit = s.emit(arith.AndIOp(hit, s.cmp("ne", lab, s.const(ignore, lab.type))))
            term = s.select(hit, lp, zero)
        return [s.emit(arith.SubfOp(outs[0], term, REASSOC))]

    reads = [(label, lmap, soft)] + list(extra)
    low.generic(low.sizes_of(x), reads, [(out, _loss_map(rank))], body, reductions=[rank - 1])


@rule("pd.softmax_with_cross_entropy", fusible=fuse_first_operand)
def _softmax_ce(low: Lowerer, op: Operation) -> None:
    x, label = op.operands
    rank = len(shape_of(x.type))
    axis = rank - 1
    m, total, row = row_stats(low, x, axis)
    sm_res, loss_res = op.results
    ident = identity_map(rank)
    stats = [buffer_read(low, m, row), buffer_read(low, total, row)]
    if low.needed(sm_res):
        sm = low.out(sm_res)
        low.generic(
            low.sizes_of(x), [(x, ident, True), *stats], [(sm, ident)],
            lambda s, a, o: [s.div(s.math(xmath.ExpOp, s.sub(a[0], a[1])), a[2])],
        )
    loss = low.out(loss_res)

    def logp(s: Scalar, a: list[SSAValue]) -> SSAValue:
        return s.sub(s.sub(a[0], a[1]), s.math(xmath.LogOp, a[2]))

    class_loss(low, op, x, label, loss, logp, [(x, ident, True), *stats])


@rule("pd.cross_entropy", fusible=fuse_first_operand)
def _cross_entropy(low: Lowerer, op: Operation) -> None:
    x, label = op.operands
    rank = len(shape_of(x.type))
    loss = low.out(op.results[0])
    class_loss(
        low, op, x, label, loss,
        lambda s, a: s.math(xmath.LogOp, a[0]),
        [(x, identity_map(rank), True)],
    )


def sizes_of_first(low: Lowerer, op: Operation, r: SSAValue, k: int) -> Size | None:
    """A size rule: dimension `k` is the first operand's (the leading dimensions of a
    loss, all of them for shape-preserving ops)."""
    return low.sizes_of(op.operands[0])[k]


for _n in ("pd.softmax_with_cross_entropy", "pd.cross_entropy", "pd.softmax", "pd.log_softmax"):
    SIZE_RULES[_n] = sizes_of_first


# ---------------------------------------------------------------------- matmul


def matmul_layout(low: Lowerer, op: Operation) -> tuple[list[Size], DimMap, DimMap, DimMap, int]:
    """The contraction of `pd.matmul` as a loop nest: `(domain, x map, y map, out map,
    reduction dim)`; the domain is `batch.. [M] [N] K` (M/N absent for vectors)."""
    x, y = op.operands
    xs, ys = list(shape_of(x.type)), list(shape_of(y.type))
    xz, yz = list(low.sizes_of(x)), list(low.sizes_of(y))
    tx, ty = bool(prop(op, "transpose_x", False)), bool(prop(op, "transpose_y", False))
    x_vec, y_vec = len(xs) == 1, len(ys) == 1
    xb, yb = (xs[:-2] if not x_vec else []), (ys[:-2] if not y_vec else [])
    nb = max(len(xb), len(yb))
    batch: list[Size] = []
    for i in range(nb):
        jx, jy = i - (nb - len(xb)), i - (nb - len(yb))
        cand = [(xs[jx], xz[jx])] if jx >= 0 else []
        cand += [(ys[jy], yz[jy])] if jy >= 0 else []
        non1 = [z for s, z in cand if s != 1]
        batch.append(non1[0] if non1 else 1)
    dims: list[Size] = list(batch)
    m_dim = n_dim = None
    if not x_vec:
        m_dim = len(dims)
        dims.append(xz[-1] if tx else xz[-2])
    if not y_vec:
        n_dim = len(dims)
        dims.append(yz[-2] if ty else yz[-1])
    k_dim = len(dims)
    dims.append(xz[0] if x_vec else (xz[-2] if tx else xz[-1]))

    def bmap(own: list[int]) -> list[int | None]:
        off = nb - len(own)
        return [None if s == 1 and batch[off + j] != 1 else off + j for j, s in enumerate(own)]

    if x_vec:
        xmap: DimMap = (k_dim,)
    else:
        xmap = tuple(bmap(xb)) + ((k_dim, m_dim) if tx else (m_dim, k_dim))
    if y_vec:
        ymap: DimMap = (k_dim,)
    else:
        ymap = tuple(bmap(yb)) + ((n_dim, k_dim) if ty else (k_dim, n_dim))
    omap: DimMap = tuple(range(nb)) + tuple(d for d in (m_dim, n_dim) if d is not None)
    return dims, xmap, ymap, omap, k_dim


@rule("pd.matmul")
def _matmul(low: Lowerer, op: Operation) -> None:
    x, y = op.operands
    dims, xmap, ymap, omap, k = matmul_layout(low, op)
    out = low.out(op.results[0])
    contract(low, dims, [(x, xmap, False), (y, ymap, False)], (out, omap), [k])


def blas_tag(domain: Sequence[Size], maps: Sequence[DimMap], reductions: Sequence[int], elem: Attribute) -> str | None:
    """The `library_call` of a float contraction: `gemm` for a plain 2-D product
    (what the GPU path tiles), `batch_gemm` for any other (`convert-linalg-to-blas`)."""
    if not isinstance(elem, AnyFloat):
        return None
    plain = len(domain) == 3 and len(reductions) == 1 and all(len(m) == 2 for m in maps)
    return "gemm" if plain else "batch_gemm"


def contract(
    low: Lowerer,
    domain: Sequence[Size],
    reads: Sequence[tuple[SSAValue, DimMap, bool]],
    out: tuple[SSAValue, DimMap],
    reductions: Sequence[int],
) -> None:
    """`out = sum over reductions of reads[0] * reads[1]` (out is zeroed first), as a
    contraction tagged for BLAS."""
    mem, omap = out
    elem = mem.type.get_element_type()  # type: ignore[attr-defined]
    low.fill(mem, 0.0 if isinstance(elem, AnyFloat) else 0)

    def body(s: Scalar, a: list[SSAValue], o: list[SSAValue]) -> list[SSAValue]:
        return [s.add(o[0], s.mul(a[0], a[1]))]

    tag = blas_tag(domain, [m for _, m, _ in reads] + [omap], reductions, elem)
    low.generic(domain, reads, [out], body, reductions=reductions, library_call=tag)


def _matmul_sizes(low: Lowerer, op: Operation, r: SSAValue, k: int) -> Size | None:
    dims, _, _, omap, _ = matmul_layout(low, op)
    d = omap[k]
    return None if d is None else dims[d]


SIZE_RULES["pd.matmul"] = _matmul_sizes


# ------------------------------------------------------------------------ adam


@rule("pd.adam", fusible=lambda op: (1,))
def _adam(low: Lowerer, op: Operation) -> None:
    p, g, m1, m2, b1p, b2p = op.operands
    rank = len(shape_of(p.type))
    ident = identity_map(rank)
    scalar: DimMap = tuple(None for _ in shape_of(b1p.type))
    reads = [(p, ident, False), (g, ident, True), (m1, ident, False), (m2, ident, False),
             (b1p, scalar, False), (b2p, scalar, False)]
    outs = [(low.out(r), ident) for r in op.results[:3]]
    low.generic(low.sizes_of(p), reads, outs, lambda s, a, o: adam_body(s, op, a)[:3])
    # The beta powers advance once per step, after the update has read them.
    one = tuple(range(len(shape_of(b1p.type))))
    pow_outs = [(low.out(r), one) for r in op.results[3:]]
    b1 = float(prop(op, "beta1", 0.9))  # type: ignore[arg-type]
    b2 = float(prop(op, "beta2", 0.999))  # type: ignore[arg-type]
    low.generic(
        low.sizes_of(b1p), [(b1p, one, False), (b2p, one, False)], pow_outs,
        lambda s, a, o: [s.mul(a[0], s.const(b1, a[0].type)), s.mul(a[1], s.const(b2, a[1].type))],
    )
