"""VJP rules of the linear-algebra ops: the standard matrix-calculus adjoints, written
with `pd` ops (matmul, the solves of this family, elementwise ops), so they are
differentiated again like any backward IR.

Notation: `g` the incoming gradient, `^T` the transpose of the last two dimensions,
`I` the identity.  Where an adjoint is undefined the rule says so:

* `inverse`, `determinant`, `slogdet`, `solve`: need a non-singular matrix (the
  backward inverts or solves with it again);
* `cholesky`: Murray's formula; the gradient is symmetric (the input is taken as the
  symmetric matrix whose lower triangle the kernel reads);
* `eigh`: needs distinct eigenvalues; the result is the symmetric matrix's gradient
  (not symmetrized: only its symmetric part is meaningful);
* `svd`: needs distinct, non-zero singular values; with `full_matrices` on a
  non-square matrix the extra columns of U (rows of VH) are not unique, so only
  gradients through `S` are defined there;
* `qr`: defined for `M >= N` (reduced mode, or complete mode of a square matrix) with
  a full-rank input;
* `lu`, `lu_unpack`: square matrices with a non-singular U (the pivots and the
  permutation are piecewise constant and get no gradient).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue

from pullback.dialects import pd
from pullback.dialects.pd.base import DYN, shape_of
from pullback.passes.autodiff import AutodiffError
from pullback.passes.vjp import vjp
from pullback.passes.vjp.builder import VjpBuilder

Grads = list["SSAValue | None"]
Out = Sequence["SSAValue | None"]


def _t(b: VjpBuilder, x: SSAValue) -> SSAValue:
    """The transpose of the last two dimensions."""
    rank = len(shape_of(x.type))
    perm = [*range(rank - 2), rank - 1, rank - 2]
    return b.emit(pd.TransposeOp, x, perm=perm)


def _mm(b: VjpBuilder, x: SSAValue, y: SSAValue, tx: bool = False, ty: bool = False) -> SSAValue:
    """`op(x) @ op(y)` (batched)."""
    return b.emit(pd.MatmulOp, x, y, transpose_x=tx, transpose_y=ty)


def _eye(b: VjpBuilder, op: Operation, x: SSAValue, n: int) -> SSAValue:
    """The `n x n` identity in x's dtype (n must be static)."""
    if n == DYN:
        raise AutodiffError(f"'{op.name}': the gradient needs a static matrix size")
    return b.emit(pd.EyeOp, num_rows=n, num_columns=n, dtype=pd.dtype_name(pd.elem_of(x.type)))


def _col(b: VjpBuilder, v: SSAValue) -> SSAValue:
    """`[*, K] -> [*, K, 1]` (scales rows when multiplied)."""
    return b.emit(pd.UnsqueezeOp, v, axes=[len(shape_of(v.type))])


def _row(b: VjpBuilder, v: SSAValue) -> SSAValue:
    """`[*, K] -> [*, 1, K]` (scales columns when multiplied)."""
    return b.emit(pd.UnsqueezeOp, v, axes=[len(shape_of(v.type)) - 1])


def _scalar_mat(b: VjpBuilder, v: SSAValue) -> SSAValue:
    """`[*] -> [*, 1, 1]`."""
    r = len(shape_of(v.type))
    return b.emit(pd.UnsqueezeOp, v, axes=[r, r + 1])


def _inv_t(b: VjpBuilder, x: SSAValue) -> SSAValue:
    """`x^-T`."""
    return _t(b, b.emit(pd.InverseOp, x))


def _right_solve_upper_t(b: VjpBuilder, x: SSAValue, r: SSAValue) -> SSAValue:
    """`x R^-T` for upper-triangular R: `(R^-1 x^T)^T`."""
    return _t(b, b.emit(pd.TriangularSolveOp, r, _t(b, x), upper=True))


def _gap(b: VjpBuilder, op: Operation, w: SSAValue, square: bool) -> SSAValue:
    """`F` with `F_ij = 1 / (w_j - w_i)` off the diagonal and 0 on it (`square`: of
    `w_j^2 - w_i^2`), shaped `[*, K, K]`."""
    if square:
        w = b.mul(w, w)
    diff = b.sub(_row(b, w), _col(b, w))  # [*, K, K]: w_j - w_i
    eye = _eye(b, op, w, shape_of(w.type)[-1])
    off = b.sub(b.full_like(eye, 1.0), eye)
    return b.div(off, b.add(diff, eye))


def _or_zeros(b: VjpBuilder, g: SSAValue | None, like: SSAValue) -> SSAValue:
    return g if g is not None else b.full_like(like, 0.0)


@vjp(pd.InverseOp)
def inverse_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """`-Y^T g Y^T` with `Y = x^-1`."""
    (g,) = grads
    assert g is not None
    y = op.results[0]
    return [b.neg(_mm(b, _mm(b, y, g, tx=True), y, ty=True))]


@vjp(pd.DeterminantOp)
def determinant_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """`g det(x) x^-T` (x must be non-singular)."""
    (g,) = grads
    assert g is not None
    x = op.operands[0]
    return [b.mul(_scalar_mat(b, b.mul(g, op.results[0])), _inv_t(b, x))]


@vjp(pd.SlogdetOp)
def slogdet_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """Only the log row carries a gradient (the sign is piecewise constant):
    `g_log x^-T`."""
    (g,) = grads
    assert g is not None
    x = op.operands[0]
    g_log = b.emit(pd.SliceOp, g, axes=[0], starts=[1], ends=[2])
    g_log = b.emit(pd.SqueezeOp, g_log, axes=[0])
    return [b.mul(_scalar_mat(b, g_log), _inv_t(b, x))]


@vjp(pd.SolveOp)
def solve_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """`X = x^-1 y`: `gy = x^-T g`, `gx = -gy X^T` (batch broadcasts summed)."""
    (g,) = grads
    assert g is not None
    x, y = op.operands
    gy = b.emit(pd.SolveOp, _t(b, x), g)
    gx = b.neg(_mm(b, gy, op.results[0], ty=True))
    return [b.unbroadcast(gx, x), b.unbroadcast(gy, y)]


@vjp(pd.TriangularSolveOp)
def triangular_solve_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """With `A = op(tri(x))`: `gy = A^-T g` (the same solve, transposed), the
    gradient of A is `-gy X^T`, carried back through `op` and masked to the triangle
    read (strictly, when the diagonal is taken as ones)."""
    (g,) = grads
    assert g is not None and isinstance(op, pd.TriangularSolveOp)
    x, y = op.operands
    upper, trans, unit = op.prop("upper"), op.prop("transpose"), op.prop("unitriangular")
    gy = b.emit(pd.TriangularSolveOp, x, g, upper=upper, transpose=not trans, unitriangular=unit)
    sol = op.results[0]
    ga = _mm(b, sol, gy, ty=True) if trans else _mm(b, gy, sol, ty=True)
    diagonal = (1 if upper else -1) if unit else 0
    gx = b.emit(pd.TrilTriuOp, b.neg(ga), lower=not upper, diagonal=diagonal)
    return [b.unbroadcast(gx, x), b.unbroadcast(gy, y)]


@vjp(pd.CholeskyOp)
def cholesky_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """Murray (2016): with `Phi(M)` the lower triangle with its diagonal halved,
    `S = L^-T Phi(L^T gL) L^-1` and the gradient `(S + S^T) / 2` (symmetric)."""
    (g,) = grads
    assert g is not None and isinstance(op, pd.CholeskyOp)
    low: SSAValue = op.results[0]
    gl = g
    if op.prop("upper"):
        low, gl = _t(b, low), _t(b, g)
    p = _mm(b, low, gl, tx=True)
    eye = _eye(b, op, p, shape_of(p.type)[-1])
    phi = b.sub(b.emit(pd.TrilTriuOp, p, lower=True), b.scale(b.mul(p, eye), 0.5))
    z = b.emit(pd.TriangularSolveOp, low, phi, upper=False, transpose=True)  # L^-T Phi
    s = _t(b, b.emit(pd.TriangularSolveOp, low, _t(b, z), upper=False, transpose=True))
    return [b.scale(b.add(s, _t(b, s)), 0.5)]


@vjp(pd.EighOp)
def eigh_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """`V (diag(gw) + F o (V^T gV)) V^T`, `F_ij = 1/(w_j - w_i)` off the diagonal
    (distinct eigenvalues only)."""
    gw, gv = grads
    w, v = op.results
    inner: SSAValue | None = None
    if gv is not None:
        inner = b.mul(_gap(b, op, w, square=False), _mm(b, v, gv, tx=True))
    if gw is not None:
        diag = b.mul(_col(b, gw), _eye(b, op, gw, shape_of(gw.type)[-1]))
        inner = diag if inner is None else b.add(inner, diag)
    assert inner is not None
    return [_mm(b, _mm(b, v, inner), v, ty=True)]


@vjp(pd.SvdOp)
def svd_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """Townsend's adjoint of the reduced SVD `x = U S V^T` (`F_ij = 1/(s_j^2 - s_i^2)`):
    `U [F o (U^T gU - gU^T U) S + diag(gS) + S F o (V^T gV - gV^T V)] V^T
    + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T)`; distinct non-zero singular
    values only."""
    assert isinstance(op, pd.SvdOp)
    gu, gs, gvh = grads
    u, s, vh = op.results
    *_, m, n = shape_of(op.operands[0].type)
    if op.prop("full_matrices") and m != n and (gu is not None or gvh is not None):
        raise AutodiffError(
            f"'{op.name}': with full_matrices=True the gradient through U or VH of a "
            f"non-square matrix is not defined (x is {m}x{n}); use full_matrices=False"
        )
    inv_s = b.div(b.full_like(s, 1.0), s)
    terms: list[SSAValue] = []
    inner: SSAValue | None = None
    if gs is not None:
        inner = b.mul(_col(b, gs), _eye(b, op, gs, shape_of(gs.type)[-1]))
    if gu is not None or gvh is not None:
        f = _gap(b, op, s, square=True)
    if gu is not None:
        utgu = _mm(b, u, gu, tx=True)
        ju = b.mul(b.mul(f, b.sub(utgu, _t(b, utgu))), _row(b, s))
        inner = ju if inner is None else b.add(inner, ju)
        rest = b.mul(b.sub(gu, _mm(b, u, utgu)), _row(b, inv_s))  # (I - U U^T) gU S^-1
        terms.append(_mm(b, rest, vh))
    if gvh is not None:
        vtgv = _mm(b, vh, gvh, ty=True)  # V^T gV = VH gVH^T
        kv = b.mul(_col(b, s), b.mul(f, b.sub(vtgv, _t(b, vtgv))))
        inner = kv if inner is None else b.add(inner, kv)
        rest = b.sub(gvh, _mm(b, _mm(b, gvh, vh, ty=True), vh))  # gV^T (I - V V^T)
        terms.append(_mm(b, u, b.mul(_col(b, inv_s), rest)))
    assert inner is not None
    out = _mm(b, _mm(b, u, inner), vh)
    for t in terms:
        out = b.add(out, t)
    return [out]


@vjp(pd.QrOp)
def qr_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """For `M >= N` (TensorFlow's rule): with `qdq = Q^T gQ`, `rdr = R gR^T`,
    `gx = Q (gR + tril(qdq - qdq^T + rdr - rdr^T) R^-T) + (gQ - Q qdq) R^-T`."""
    assert isinstance(op, pd.QrOp)
    q, r = op.results
    *_, m, n = shape_of(op.operands[0].type)
    if m == DYN or n == DYN or m < n:
        raise AutodiffError(
            f"'{op.name}': the gradient is defined for x with at least as many rows as "
            f"columns (static), got {m}x{n}"
        )
    if op.prop("mode") == "complete" and m != n:
        raise AutodiffError(
            f"'{op.name}': with mode='complete' the gradient of a non-square matrix is not "
            f"defined (x is {m}x{n}); use mode='reduced'"
        )
    gq = _or_zeros(b, grads[0], q)
    gr = _or_zeros(b, grads[1], r)
    qdq = _mm(b, q, gq, tx=True)
    rdr = _mm(b, r, gr, ty=True)
    m_ = b.add(b.sub(qdq, _t(b, qdq)), b.sub(rdr, _t(b, rdr)))
    low = b.emit(pd.TrilTriuOp, m_, lower=True)
    first = _mm(b, q, b.add(gr, _right_solve_upper_t(b, low, r)))
    second = _right_solve_upper_t(b, b.sub(gq, _mm(b, q, qdq)), r)
    return [b.add(first, second)]


def _square(op: Operation) -> None:
    *_, m, n = shape_of(op.operands[0].type)
    if m == DYN or n == DYN or m != n:
        raise AutodiffError(
            f"'{op.name}': the gradient is defined for square matrices of static size, got {m}x{n}"
        )


@vjp(pd.LuOp)
def lu_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """With `x = P L U` and the packed gradient split into `gL` (strictly lower) and
    `gU` (upper): `P L^-T [tril(L^T gL, -1) + triu(gU U^T)] U^-T`."""
    _square(op)
    g = grads[0]
    assert g is not None
    lu_, piv = op.results[0], op.results[1]
    p, low, up = b.emit_multi(pd.LuUnpackOp, lu_, piv)
    g_low = b.emit(pd.TrilTriuOp, g, lower=True, diagonal=-1)
    g_up = b.emit(pd.TrilTriuOp, g, lower=False)
    phi = b.add(b.emit(pd.TrilTriuOp, _mm(b, low, g_low, tx=True), lower=True, diagonal=-1),
                b.emit(pd.TrilTriuOp, _mm(b, g_up, up, ty=True), lower=False))
    left = b.emit(pd.TriangularSolveOp, low, phi, upper=False, transpose=True, unitriangular=True)
    return [_mm(b, p, _right_solve_upper_t(b, left, up))]


@vjp(pd.LuUnpackOp)
def lu_unpack_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """L and U are masks of the packed factors: `gx = tril(gL, -1) + triu(gU)`; the
    permutation and the pivots get none."""
    _square(op)
    _, gl, gu = grads
    parts = []
    if gl is not None:
        parts.append(b.emit(pd.TrilTriuOp, gl, lower=True, diagonal=-1))
    if gu is not None:
        parts.append(b.emit(pd.TrilTriuOp, gu, lower=False))
    if not parts:
        return [None, None]
    return [parts[0] if len(parts) == 1 else b.add(parts[0], parts[1]), None]
