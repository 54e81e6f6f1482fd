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
from pullback.dialects.pd.base import DYN, elem_of, is_complex, shape_of
from pullback.passes.autodiff import AutodiffError
from pullback.passes.vjp import complex_aware, vjp
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


def _h(b: VjpBuilder, x: SSAValue) -> SSAValue:
    """The adjoint `x^H` (conjugate transpose) of the last two dimensions: `x^T` of
    a real x."""
    out = b.conj(_t(b, x))
    assert out is not None
    return out


def _mmh(b: VjpBuilder, x: SSAValue, y: SSAValue, hx: bool = False, hy: bool = False) -> SSAValue:
    """`x^H @ y` / `x @ y^H` (batched): `_mm` with the transposed operands also
    conjugated, the same as `_mm` on real values."""
    cx, cy = b.conj(x) if hx else x, b.conj(y) if hy else y
    assert cx is not None and cy is not None
    return _mm(b, cx, cy, tx=hx, ty=hy)


def _like(b: VjpBuilder, x: SSAValue, like: SSAValue) -> SSAValue:
    """Real x cast to complex like's dtype before it meets a complex value (a no-op on
    real values)."""
    return b.cast_like(x, like) if is_complex(elem_of(like.type)) else x


def _i_imag(b: VjpBuilder, x: SSAValue) -> SSAValue:
    """`i Im(x) = (x - conj(x)) / 2` (zeros of a real x)."""
    cx = b.conj(x)
    assert cx is not None
    return b.scale(b.sub(x, cx), 0.5)


def _eye(b: VjpBuilder, op: Operation, x: SSAValue, n: int) -> SSAValue:
    """The `n x n` identity in x's dtype (n must be static; a complex one is a cast
    real identity, `pd.eye` making real and integer tensors)."""
    if n == DYN:
        raise AutodiffError(f"'{op.name}': the gradient needs a static matrix size")
    elem = elem_of(x.type)
    eye = b.emit(pd.EyeOp, num_rows=n, num_columns=n, dtype=pd.dtype_name(pd.part_type(elem)))
    return b.cast_like(eye, x)


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
    """Of a real x only the log row carries a gradient (the sign is piecewise
    constant): `g_log x^-T`.  Of a complex x, `log det x = log|det x| + i theta`
    with `sign = e^(i theta)` is holomorphic (`d log det = tr(x^-1 dx)`), and the
    sign's phase varies too: the gradient is `G x^-H` with
    `G = re(g_log) + i im(g_sign conj(sign))`.  (Paddle 3.3.1 drops the sign's part
    and gives `re(g_log) x^-H`, wrong whenever the loss reads the sign.)"""
    (g,) = grads
    assert g is not None
    x = op.operands[0]

    def row(v: SSAValue, i: int) -> SSAValue:
        return b.emit(pd.SqueezeOp, b.emit(pd.SliceOp, v, axes=[0], starts=[i], ends=[i + 1]), axes=[0])

    g_log = row(g, 1)
    if not is_complex(elem_of(x.type)):
        return [b.mul(_scalar_mat(b, g_log), _inv_t(b, x))]
    sign = row(op.results[0], 0)
    conj_sign = b.conj(sign)
    assert conj_sign is not None
    # re(g_log) = g_log - i im(g_log); i im(g_sign conj(sign)) from `_i_imag`.
    big_g = b.add(b.sub(g_log, _i_imag(b, g_log)), _i_imag(b, b.mul(row(g, 0), conj_sign)))
    return [b.mul(_scalar_mat(b, big_g), _h(b, b.emit(pd.InverseOp, x)))]


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
    """`V (diag(gw) + F o (V^H gV)) V^H`, `F_ij = 1/(w_j - w_i)` off the diagonal
    (distinct eigenvalues only; `^H` is `^T` of a real matrix).  Of a complex
    (Hermitian) matrix the eigenvectors' phases are arbitrary: the rule is the
    gradient of losses that do not depend on them (`|V|`, `V diag(.) V^H`, ...)."""
    gw, gv = grads
    w, v = op.results
    inner: SSAValue | None = None
    if gv is not None:
        inner = b.mul(_like(b, _gap(b, op, w, square=False), v), _mmh(b, v, gv, hx=True))
    if gw is not None:
        diag = _like(b, b.mul(_col(b, gw), _eye(b, op, gw, shape_of(gw.type)[-1])), v)
        inner = diag if inner is None else b.add(inner, diag)
    assert inner is not None
    return [_mmh(b, _mm(b, v, inner), v, hy=True)]


@vjp(pd.SvdOp)
def svd_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """Townsend's adjoint of the reduced SVD `x = U S V^H` (`F_ij = 1/(s_j^2 - s_i^2)`):
    `U [F o (U^H gU - gU^H U) S + diag(gS) + S F o (V^H gV - gV^H V)] V^H
    + (I - U U^H) gU S^-1 V^H + U S^-1 gV^H (I - V V^H)`; distinct non-zero singular
    values only.  Of a complex matrix the inner matrix also gets
    `i im(diag(U^H gU)) S^-1` (the phase the singular vectors share), and the rule is
    the gradient of losses that do not depend on the vectors' arbitrary common phase
    (`|U|`, `U VH`, ...)."""
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
    inv_s_c, s_c = _like(b, inv_s, u), _like(b, s, u)
    terms: list[SSAValue] = []
    inner: SSAValue | None = None
    if gs is not None:
        inner = _like(b, b.mul(_col(b, gs), _eye(b, op, gs, shape_of(gs.type)[-1])), u)
    if gu is not None or gvh is not None:
        f = _like(b, _gap(b, op, s, square=True), u)
    if gu is not None:
        utgu = _mmh(b, u, gu, hx=True)
        ju = b.mul(b.mul(f, b.sub(utgu, _h(b, utgu))), _row(b, s_c))
        if is_complex(elem_of(u.type)):
            k = shape_of(s.type)[-1]
            diag = b.mul(utgu, _like(b, _eye(b, op, s, k), u))
            ju = b.add(ju, b.mul(_i_imag(b, diag), _row(b, inv_s_c)))
        inner = ju if inner is None else b.add(inner, ju)
        rest = b.mul(b.sub(gu, _mm(b, u, utgu)), _row(b, inv_s_c))  # (I - U U^H) gU S^-1
        terms.append(_mm(b, rest, vh))
    if gvh is not None:
        vtgv = _mmh(b, vh, gvh, hy=True)  # V^H gV = VH gVH^H
        kv = b.mul(_col(b, s_c), b.mul(f, b.sub(vtgv, _h(b, vtgv))))
        inner = kv if inner is None else b.add(inner, kv)
        rest = b.sub(gvh, _mm(b, _mmh(b, gvh, vh, hy=True), vh))  # gV^H (I - V V^H)
        terms.append(_mm(b, u, b.mul(_col(b, inv_s_c), rest)))
    assert inner is not None
    out = _mm(b, _mm(b, u, inner), vh)
    for t in terms:
        out = b.add(out, t)
    return [out]


def _right_solve_upper_h(b: VjpBuilder, x: SSAValue, r: SSAValue) -> SSAValue:
    """`x R^-H` for upper-triangular R: `(R^-1 x^H)^H` (`x R^-T` of real values)."""
    return _h(b, b.emit(pd.TriangularSolveOp, r, _h(b, x), upper=True))


@vjp(pd.QrOp)
def qr_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """For `M >= N` (TensorFlow's rule): with `qdq = Q^H gQ`, `rdr = R gR^H`,
    `gx = Q (gR + tril(qdq - qdq^H + rdr - rdr^H) R^-H) + (gQ - Q qdq) R^-H`; of a
    complex matrix (whose R has a real diagonal, as LAPACK makes it) plus
    `Q C^H R^-H` with `C = i im(diag(rdr - qdq^H))`."""
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
    qdq = _mmh(b, q, gq, hx=True)
    rdr = _mmh(b, r, gr, hy=True)
    m_ = b.add(b.sub(qdq, _h(b, qdq)), b.sub(rdr, _h(b, rdr)))
    low = b.emit(pd.TrilTriuOp, m_, lower=True)
    first = _mm(b, q, b.add(gr, _right_solve_upper_h(b, low, r)))
    second = _right_solve_upper_h(b, b.sub(gq, _mm(b, q, qdq)), r)
    out = b.add(first, second)
    if is_complex(elem_of(q.type)):
        k = shape_of(r.type)[-2]
        c = _i_imag(b, b.mul(b.sub(rdr, _h(b, qdq)), _like(b, _eye(b, op, r, k), r)))
        out = b.add(out, _right_solve_upper_h(b, _mmh(b, q, c, hy=True), r))
    return [out]


@vjp(pd.EigOp)
def eig_vjp(b: VjpBuilder, op: Operation, grads: Grads) -> Out:
    """`V^-H (diag(gw) + (V^H gV - V^H V re(diag(V^H gV))) / conj(E)) V^H` with
    `E_ij = w_j - w_i` off the diagonal (the diagonal from `gw` alone; PyTorch's
    `linalg_eig_backward`); its real part for a real matrix.  Distinct eigenvalues
    only, and, the eigenvectors being unit-norm with an arbitrary phase, the
    gradient of losses that do not depend on that phase (`|V|`, eigenvalues...)."""
    gw, gv = grads
    w, v = op.results
    x = op.operands[0]
    n = shape_of(w.type)[-1]
    eye = _eye(b, op, v, n)
    inner: SSAValue | None = None
    if gv is not None:
        vhgv = _mmh(b, v, gv, hx=True)
        re_diag = b.emit(pd.RealOp, b.emit(pd.ReduceSumOp, b.mul(vhgv, eye), axis=[-2], keepdim=False))
        proj = b.sub(vhgv, _mmh(b, v, b.mul(v, _row(b, b.cast_like(re_diag, v))), hx=True))
        diff = b.sub(_row(b, w), _col(b, w))  # w_j - w_i
        off = b.sub(b.full_like(eye, 1.0), eye)
        conj_e = b.conj(b.add(diff, eye))
        assert conj_e is not None
        inner = b.mul(b.div(proj, conj_e), off)
    if gw is not None:
        diag = b.mul(_col(b, gw), eye)
        inner = diag if inner is None else b.add(inner, diag)
    assert inner is not None
    gx = b.emit(pd.SolveOp, _h(b, v), _mmh(b, inner, v, hy=True))
    return [gx if is_complex(elem_of(x.type)) else b.emit(pd.RealOp, gx)]


complex_aware(pd.SlogdetOp, pd.EighOp, pd.SvdOp, pd.QrOp, pd.EigOp)


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
    return [_mm(b, p, _right_solve_upper_h(b, left, up))]


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
