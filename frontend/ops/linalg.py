"""Paddle's linear algebra: the products `mm`, `bmm`, `dot`, `outer`, `kron` and
`einsum` (composites of `matmul`, broadcasting multiplies, reductions and shape ops,
so their gradients come from those ops' VJP rules and they lower natively wherever
those do), and `paddle.linalg` (`LINALG`): inverses, determinants, solves and
decompositions are the `pd` ops of the `linalg` family (numpy.linalg on the host
interpreter; matrix-calculus gradients), and norms, `cond`, `pinv`, `matrix_rank`,
`lstsq`, `matrix_power`, `multi_dot`, `cross`, `cov` and `corrcoef` are composites
of them and ordinary ops.  `eig`/`eigvals` have complex results.  Complex
matrices: `inv`, `det`, `slogdet`, `solve`, `triangular_solve`, `qr`, `svd`,
`svdvals`, `eig`, `eigvals`, `eigh`, `eigvalsh`, `matrix_power`, `pinv`, `cond`,
`matrix_rank`, the norms and the products `dot` (no conjugation, as Paddle's),
`outer`, `kron`, `einsum`, `cross` take them (gradients in Paddle's convention, `passes/vjp/linalg.py`); the
others refuse them by name (`cholesky`, `lu`: as Paddle 3.3.1 on CPU).

`einsum` handles any number of operands, pairwise from the left: letters that no
later operand or the output needs are summed out first, then each pair becomes one
batched `matmul` — the operands transposed to `[batch, free, contracted]` and
`[batch, contracted, free]` and flattened to 3-D — and the result is transposed to
the output order.  Repeated letters within one operand (diagonals) are not
supported; `...` is, for operands of static rank.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pullback.dialects import pd
from pullback.dialects.pd.dtypes import COMPLEX_NAMES
from pullback.frontend.core import apply
from pullback.frontend.ops.complex import conj
from pullback.frontend.ops.creation import eye
from pullback.frontend.ops.elementwise import (
    abs,
    cast,
    check_float_tensor,
    check_tensor,
    clip,
    full_like,
    greater_than,
    maximum,
    not_equal,
    ones_like,
    pow,
    scale,
    sqrt,
    square,
    where,
    zeros_like,
)
from pullback.frontend.ops.nn import matmul
from pullback.frontend.ops.reduction import mean, sum
from pullback.frontend.ops.shape import concat, reshape, slice, squeeze, transpose, unsqueeze
from pullback.frontend.ops.statistics import amax, amin


def mm(input: Any, mat2: Any, name: str | None = None) -> Any:
    """`paddle.mm`: the matrix product (with matmul's broadcasting)."""
    return matmul(input, mat2, name=name)


def bmm(x: Any, y: Any, name: str | None = None) -> Any:
    """`paddle.bmm`: batched matrix products of `[b, m, k]` and `[b, k, n]`."""
    check_tensor("bmm", "x", x)
    check_tensor("bmm", "y", y)
    if len(x.shape) != 3 or len(y.shape) != 3:
        raise ValueError(f"bmm: x and y must be 3-D, got shapes {list(x.shape)} and {list(y.shape)}")
    if x.shape[0] >= 0 and y.shape[0] >= 0 and x.shape[0] != y.shape[0]:
        raise ValueError(f"bmm: batch sizes differ: {x.shape[0]} and {y.shape[0]}")
    return matmul(x, y, name=name)


def dot(x: Any, y: Any, name: str | None = None) -> Any:
    """`paddle.dot`: the inner product of 1-D tensors, or of the rows of 2-D ones."""
    _check_inexact("dot", "x", x)
    _check_inexact("dot", "y", y)
    if len(x.shape) not in (1, 2) or len(x.shape) != len(y.shape):
        raise ValueError(f"dot: x and y must both be 1-D or 2-D, got shapes {list(x.shape)} and {list(y.shape)}")
    return sum(x * y, axis=-1, name=name)


def outer(x: Any, y: Any, name: str | None = None) -> Any:
    """`paddle.outer`: `x[:, None] * y[None, :]` of the flattened inputs."""
    _check_inexact("outer", "x", x)
    _check_inexact("outer", "y", y)
    return reshape(x, [-1, 1]) * reshape(y, [1, -1])


def kron(x: Any, y: Any, name: str | None = None) -> Any:
    """`paddle.kron`: the Kronecker product (static shapes)."""
    _check_inexact("kron", "x", x)
    _check_inexact("kron", "y", y)
    rank = builtins.max(len(x.shape), len(y.shape))
    xs = [1] * (rank - len(x.shape)) + list(x.shape)
    ys = [1] * (rank - len(y.shape)) + list(y.shape)
    if any(d < 0 for d in xs + ys):
        raise ValueError("kron: x and y must have static shapes")
    a = unsqueeze(reshape(x, xs), [2 * i + 1 for i in range(rank)])  # [x0, 1, x1, 1, ...]
    b = unsqueeze(reshape(y, ys), [2 * i for i in range(rank)])      # [1, y0, 1, y1, ...]
    return reshape(a * b, [p * q for p, q in zip(xs, ys)], name=name)


# ----------------------------------------------------------------------- einsum

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _parse(equation: str, operands: Sequence[Any]) -> tuple[list[str], str]:
    """Input subscripts (with `...` expanded to capital letters) and the output."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    ins = lhs.split(",")
    if len(ins) != len(operands):
        raise ValueError(f"einsum: the equation has {len(ins)} operands, {len(operands)} were given")
    ell = 0
    for sub, x in zip(ins, operands):
        if "..." in sub:
            ell = builtins.max(ell, len(x.shape) - (len(sub) - 3))
    out_subs = []
    for sub, x in zip(ins, operands):
        if "..." in sub:
            n = len(x.shape) - (len(sub) - 3)
            sub = sub.replace("...", _LETTERS[ell - n: ell])
        if len(sub) != len(x.shape):
            raise ValueError(f"einsum: subscripts '{sub}' do not match an operand of rank {len(x.shape)}")
        if len(set(sub)) != len(sub):
            raise NotImplementedError(f"einsum: repeated subscripts in one operand ('{sub}') are not supported")
        if not all(c.isalpha() for c in sub):
            raise ValueError(f"einsum: invalid subscripts '{sub}'")
        out_subs.append(sub)
    if arrow:
        out = rhs.replace("...", _LETTERS[:ell])
    else:
        counts = {c: "".join(out_subs).count(c) for c in "".join(out_subs)}
        out = _LETTERS[:ell] + "".join(sorted(c for c, k in counts.items() if k == 1 and c.islower()))
    for c in out:
        if not any(c in s for s in out_subs):
            raise ValueError(f"einsum: output subscript '{c}' appears in no operand")
    return out_subs, out


def _sizes(subs: Sequence[str], operands: Sequence[Any]) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for sub, x in zip(subs, operands):
        for c, d in zip(sub, x.shape):
            if c in sizes and sizes[c] >= 0 and d >= 0 and sizes[c] != d:
                raise ValueError(f"einsum: subscript '{c}' has sizes {sizes[c]} and {d}")
            if c not in sizes or sizes[c] < 0:
                sizes[c] = d
    return sizes


def _merged(dims: Sequence[int]) -> int:
    return -1 if any(d < 0 for d in dims) else math.prod(dims)


def _sum_out(x: Any, sub: str, keep: set[str]) -> tuple[Any, str]:
    """Sum out the letters of `sub` not in `keep`."""
    gone = [i for i, c in enumerate(sub) if c not in keep]
    if not gone:
        return x, sub
    return sum(x, axis=gone), "".join(c for c in sub if c in keep)


def _permute(x: Any, sub: str, order: str) -> Any:
    if sub == order:
        return x
    return transpose(x, [sub.index(c) for c in order])


def _target(fn: str, copied: int, dims: Sequence[int]) -> list[int]:
    """A reshape target: `copied` leading 0s (dimensions kept as they are), then
    `dims` with one dynamic entry as -1."""
    if builtins.sum(1 for d in dims if d < 0) > 1:
        raise ValueError(f"{fn}: cannot merge or split more than one dynamic dimension")
    return [0] * copied + [-1 if d < 0 else d for d in dims]


def _contract(a: Any, sa: str, b: Any, sb: str, keep: set[str], sizes: dict[str, int]) -> tuple[Any, str]:
    """One (batched) matmul of `a` and `b` over their shared letters not in `keep`:
    `[*batch, M, K] @ [*batch, K, N]`, the free and contracted letters merged."""
    batch = "".join(c for c in sa if c in sb and c in keep)
    con = "".join(c for c in sa if c in sb and c not in keep)
    fa = "".join(c for c in sa if c not in sb)
    fb = "".join(c for c in sb if c not in sa)
    m, k, n = (_merged([sizes[c] for c in g]) for g in (fa, con, fb))
    nb = len(batch)
    A = _permute(a, sa, batch + fa + con)
    if len(fa) != 1 or len(con) != 1:
        A = reshape(A, _target("einsum", nb, [m, k]))
    B = _permute(b, sb, batch + con + fb)
    if len(con) != 1 or len(fb) != 1:
        B = reshape(B, _target("einsum", nb, [k, n]))
    out = matmul(A, B)
    if len(fa) != 1 or len(fb) != 1:
        out = reshape(out, _target("einsum", nb, [sizes[c] for c in fa + fb]))
    return out, batch + fa + fb


def einsum(equation: str, *operands: Any) -> Any:
    """`paddle.einsum`: Einstein summation (module docstring)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str) or not operands:
        raise TypeError("einsum: expected an equation string and at least one operand")
    for i, x in enumerate(operands):
        _check_inexact("einsum", f"operands[{i}]", x)
    subs, out = _parse(equation, operands)
    sizes = _sizes(subs, operands)
    x, sx = operands[0], subs[0]
    rest = list(zip(operands[1:], subs[1:]))
    x, sx = _sum_out(x, sx, set(out) | {c for _, s in rest for c in s})
    for k, (y, sy) in enumerate(rest):
        later = set(out) | {c for _, s in rest[k + 1:] for c in s}
        y, sy = _sum_out(y, sy, later | set(sx))
        x, sx = _contract(x, sx, y, sy, later, sizes)
    x, sx = _sum_out(x, sx, set(out))
    return _permute(x, sx, out)


# ------------------------------------------------------------- paddle.linalg
#
# Decompositions and solves are the `pd` ops of the `linalg` family (numpy.linalg on
# the host interpreter); everything else is a composite of them and ordinary ops.


_COMPLEX_LINALG = ("inv, det, slogdet, solve, triangular_solve, qr, svd, svdvals, eig, eigvals, eigh, "
                   "eigvalsh, matrix_power, pinv, norm, cond, matrix_rank")
"""The functions of this module that take complex matrices (named in refusals)."""


def _check_inexact(fn: str, arg: str, x: Any) -> None:
    """Raise TypeError naming `fn` unless x is a float or complex64/complex128 tensor."""
    check_tensor(fn, arg, x)
    if x.dtype not in COMPLEX_NAMES:
        check_float_tensor(fn, arg, x)


def _matrix(fn: str, arg: str, x: Any, *, square: bool = False, complex_ok: bool = False) -> tuple[int, ...]:
    """Check that `x` is a float (with `complex_ok`, or complex) batch of matrices
    `[*, M, N]` (square: `M == N`) and return its shape; TypeError/ValueError naming
    the function otherwise."""
    check_tensor(fn, arg, x)
    if x.dtype in COMPLEX_NAMES and not complex_ok:
        raise TypeError(f"{fn}: '{arg}' is {x.dtype}; {fn} does not take complex matrices "
                        f"(these do: {_COMPLEX_LINALG})")
    if x.dtype not in COMPLEX_NAMES:
        check_float_tensor(fn, arg, x)
    shape = tuple(x.shape)
    if len(shape) < 2:
        raise ValueError(f"{fn}: '{arg}' must be a matrix or a batch of matrices ([*, M, N]), "
                         f"got shape {list(shape)}")
    if square and shape[-1] >= 0 and shape[-2] >= 0 and shape[-1] != shape[-2]:
        raise ValueError(f"{fn}: '{arg}' must be square matrices ([*, M, M]), got shape {list(shape)}")
    return shape


def _mT(x: Any) -> Any:
    """The transpose of the last two dimensions."""
    rank = len(x.shape)
    return transpose(x, [*range(rank - 2), rank - 1, rank - 2])


def _mH(x: Any) -> Any:
    """The conjugate transpose of the last two dimensions (the transpose of a real x)."""
    return conj(_mT(x)) if x.dtype in COMPLEX_NAMES else _mT(x)


def _eye_like(x: Any) -> Any:
    """The identity of x's matrix size (static) in x's dtype, broadcastable to x."""
    n = x.shape[-1]
    if n < 0:
        raise ValueError("linalg: the matrix size must be static here")
    return eye(n, dtype=x.dtype)


def inv(x: Any, name: str | None = None) -> Any:
    """`paddle.linalg.inv` / `paddle.inverse`: the inverse of each square matrix of
    `[*, M, M]` (a singular matrix is an error)."""
    _matrix("inverse", "x", x, square=True, complex_ok=True)
    return apply(pd.InverseOp, [x], prefix="inverse", name=name)


def inverse(x: Any, name: str | None = None) -> Any:
    """`paddle.inverse`: the same as `paddle.linalg.inv`."""
    return inv(x, name=name)


def det(x: Any, name: str | None = None) -> Any:
    """`paddle.linalg.det`: the determinant of each square matrix, shape `[*]`; its
    gradient `g det(x) x^-T` needs a non-singular x."""
    _matrix("det", "x", x, square=True, complex_ok=True)
    return apply(pd.DeterminantOp, [x], prefix="determinant", name=name)


def slogdet(x: Any, name: str | None = None) -> Any:
    """`paddle.linalg.slogdet`: sign and natural log of |det| stacked, shape `[2, *]`
    (a singular matrix gives `(0, -inf)`)."""
    _matrix("slogdet", "x", x, square=True, complex_ok=True)
    return apply(pd.SlogdetOp, [x], prefix="slogdeterminant", name=name)


def cholesky(x: Any, upper: bool = False, name: str | None = None) -> Any:
    """`paddle.linalg.cholesky`: the Cholesky factor of symmetric positive-definite
    matrices, lower (`A = L L^T`) or upper (`A = U^T U`).  Only the lower triangle of
    x is read; the gradient is symmetric (Murray's formula)."""
    _matrix("cholesky", "x", x, square=True)
    return apply(pd.CholeskyOp, [x], prefix="cholesky", name=name, upper=bool(upper))


def _vector_rhs(fn: str, x: Any, y: Any) -> bool:
    """Whether the right-hand side `y` is a single vector `[M]` (Paddle allows it)."""
    _check_inexact(fn, "y", y)
    return len(y.shape) == 1


def solve(x: Any, y: Any, left: bool = True, name: str | None = None) -> Any:
    """`paddle.linalg.solve`: `Out` with `x @ Out = y` (or `Out @ x = y` when not
    `left`), x `[*, M, M]`, y `[*, M, K]` (`[*, K, M]` when not left) or a vector
    `[M]`; batch dimensions broadcast."""
    _matrix("solve", "x", x, square=True, complex_ok=True)
    vec = _vector_rhs("solve", x, y)
    if not left:
        # Out x = y  <=>  x^T Out^T = y^T (a vector is its own transpose here).
        if vec:
            return solve(_mT(x), y, name=name)
        return _mT(solve(_mT(x), _mT(y)))
    rhs = unsqueeze(y, [-1]) if vec else y
    _matrix("solve", "y", rhs, complex_ok=True)
    out = apply(pd.SolveOp, [x, rhs], prefix="solve", name=None if vec else name)
    return squeeze(out, [-1], name=name) if vec else out


def triangular_solve(x: Any, y: Any, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False, name: str | None = None) -> Any:
    """`paddle.linalg.triangular_solve`: `X` with `op(x) @ X = y` for triangular x
    (the `upper` or lower triangle is read; unit diagonal if `unitriangular`;
    `op(x) = x^T` when `transpose`)."""
    fn = "triangular_solve"
    _matrix(fn, "x", x, square=True, complex_ok=True)
    _matrix(fn, "y", y, complex_ok=True)
    return apply(pd.TriangularSolveOp, [x, y], prefix=fn, name=name, upper=bool(upper),
                 transpose=bool(transpose), unitriangular=bool(unitriangular))


def cholesky_solve(x: Any, y: Any, upper: bool = False, name: str | None = None) -> Any:
    """`paddle.linalg.cholesky_solve`: `X` with `A @ X = x`, where `y` is A's Cholesky
    factor (`A = y y^T`, or `y^T y` when `upper`): two triangular solves."""
    fn = "cholesky_solve"
    _matrix(fn, "x", x)
    _matrix(fn, "y", y, square=True)
    up = bool(upper)
    z = triangular_solve(y, x, upper=up, transpose=up)
    return triangular_solve(y, z, upper=up, transpose=not up, name=name)


def qr(x: Any, mode: str = "reduced", name: str | None = None) -> Any:
    """`paddle.linalg.qr`: `(Q, R)` with `x = Q R`; mode `reduced` (K = min(M, N)),
    `complete` (Q square) or `r` (R alone).  Gradients need M >= N."""
    _matrix("qr", "x", x, complex_ok=True)
    if mode not in pd.QR_MODES:
        raise ValueError(f"qr: mode must be one of {list(pd.QR_MODES)}, got {mode!r}")
    q, r = apply(pd.QrOp, [x], prefix="qr", name=name, mode=mode)
    return r if mode == "r" else (q, r)


def svd(x: Any, full_matrices: bool = False, name: str | None = None) -> Any:
    """`paddle.linalg.svd`: `(U, S, VH)` with `x = U diag(S) VH`, S descending.
    Gradients need distinct non-zero singular values (and, through U or VH,
    `full_matrices=False` for non-square x)."""
    _matrix("svd", "x", x, complex_ok=True)
    u, s, vh = apply(pd.SvdOp, [x], prefix="svd", name=name, full_matrices=bool(full_matrices))
    return u, s, vh


def svdvals(x: Any, name: str | None = None) -> Any:
    """`paddle.linalg.svdvals`: the singular values, descending, shape `[*, K]`."""
    _matrix("svdvals", "x", x, complex_ok=True)
    return apply(pd.SvdOp, [x], prefix="svdvals", name=name)[1]


def _check_uplo(fn: str, UPLO: str) -> str:  # noqa: N803 (Paddle's argument name)
    if UPLO not in ("L", "U"):
        raise ValueError(f"{fn}: UPLO must be 'L' or 'U', got {UPLO!r}")
    return UPLO


def eigh(x: Any, UPLO: str = "L", name: str | None = None) -> Any:  # noqa: N803
    """`paddle.linalg.eigh`: eigenvalues (ascending) and eigenvectors (columns) of
    symmetric matrices, reading the `UPLO` triangle.  Gradients need distinct
    eigenvalues."""
    _matrix("eigh", "x", x, square=True, complex_ok=True)
    w, v = apply(pd.EighOp, [x], prefix="eigh", name=name, UPLO=_check_uplo("eigh", UPLO))
    return w, v


def eigvalsh(x: Any, UPLO: str = "L", name: str | None = None) -> Any:  # noqa: N803
    """`paddle.linalg.eigvalsh`: the eigenvalues (ascending) of symmetric matrices."""
    _matrix("eigvalsh", "x", x, square=True, complex_ok=True)
    return apply(pd.EighOp, [x], prefix="eigvalsh", name=name, UPLO=_check_uplo("eigvalsh", UPLO))[0]


def eig(x: Any, name: str | None = None) -> Any:
    """`paddle.linalg.eig`: eigenvalues `[*, N]` and unit-norm eigenvectors (columns)
    `[*, N, N]` of general square matrices, both complex (complex64 of float32 /
    complex64, complex128 of float64 / complex128), in LAPACK's order.  Gradients
    need distinct eigenvalues, and a loss that does not depend on the eigenvectors'
    arbitrary phases."""
    _matrix("eig", "x", x, square=True, complex_ok=True)
    w, v = apply(pd.EigOp, [x], prefix="eig", name=name)
    return w, v


def eigvals(x: Any, name: str | None = None) -> Any:
    """`paddle.linalg.eigvals`: the complex eigenvalues of general square matrices.
    Differentiable here (`V^-H diag(g) V^H`); Paddle 3.3.1 gives eigvals no
    gradient."""
    _matrix("eigvals", "x", x, square=True, complex_ok=True)
    return apply(pd.EigOp, [x], prefix="eigvals", name=name)[0]


def matrix_power(x: Any, n: int, name: str | None = None) -> Any:
    """`paddle.linalg.matrix_power`: `x^n` by repeated squaring (n < 0: of the
    inverse; n == 0: the identity)."""
    fn = "matrix_power"
    _matrix(fn, "x", x, square=True, complex_ok=True)
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"{fn}: n must be an int, got {type(n).__name__}")
    if n == 0:
        return zeros_like(x) + _eye_like(x)
    base = inv(x) if n < 0 else x
    k, result = abs_int(n), None
    while k:
        if k & 1:
            result = base if result is None else matmul(result, base)
        k >>= 1
        if k:
            base = matmul(base, base)
    return result


def abs_int(n: int) -> int:
    """|n| for a Python int (the module shadows `abs` with the tensor function)."""
    return -n if n < 0 else n


def multi_dot(x: Sequence[Any], name: str | None = None) -> Any:
    """`paddle.linalg.multi_dot`: the product of a list of matrices (the first may be
    a row vector `[N]`, the last a column vector `[N]`), left to right."""
    fn = "multi_dot"
    if not isinstance(x, (list, tuple)) or len(x) < 2:
        raise ValueError(f"{fn}: x must be a list of at least 2 tensors")
    for i, t in enumerate(x):
        check_float_tensor(fn, f"x[{i}]", t)
        ok = (1, 2) if i in (0, len(x) - 1) else (2,)
        if len(t.shape) not in ok:
            raise ValueError(f"{fn}: x[{i}] must be {'1-D or ' if len(ok) == 2 else ''}2-D, "
                             f"got shape {list(t.shape)}")
    out = x[0]
    for t in x[1:]:
        out = matmul(out, t)
    return out


def lu(x: Any, pivot: bool = True, get_infos: bool = False, name: str | None = None) -> Any:
    """`paddle.linalg.lu`: the LU factorization with partial pivoting, `(LU, Pivots)`
    (and `Infos` when `get_infos`): LU packs the unit lower and the upper factor,
    Pivots are 1-based int32 row swaps.  `pivot=False` is not supported (as on
    Paddle's CPU).  Gradients: square matrices with a non-singular U."""
    fn = "lu"
    _matrix(fn, "x", x)
    if not pivot:
        raise NotImplementedError(f"{fn}: LU without pivoting is not supported (pivot=False)")
    packed, pivots, infos = apply(pd.LuOp, [x], prefix=fn, name=name)
    return (packed, pivots, infos) if get_infos else (packed, pivots)


def lu_unpack(x: Any, y: Any, unpack_ludata: bool = True, unpack_pivots: bool = True,
              name: str | None = None) -> Any:
    """`paddle.linalg.lu_unpack`: `(P, L, U)` with `A = P L U` from `lu`'s packed
    factors `x` and pivots `y`.  The flags are accepted; P, L and U are always
    computed (Paddle leaves the unrequested ones empty)."""
    fn = "lu_unpack"
    _matrix(fn, "x", x)
    check_tensor(fn, "y", y)
    if y.dtype != "int32":
        raise TypeError(f"{fn}: 'y' (the pivots) must be int32, got {y.dtype}")
    p, low, up = apply(pd.LuUnpackOp, [x, y], prefix=fn, name=name)
    return p, low, up


# ------------------------------------------------------------------------ norms

_INF = float("inf")


def _axes(fn: str, x: Any, axis: Any) -> list[int]:
    rank = len(x.shape)
    axes = [axis] if isinstance(axis, int) else list(axis)
    out = []
    for a in axes:
        if isinstance(a, bool) or not isinstance(a, int) or not -builtins.max(rank, 1) <= a < builtins.max(rank, 1):
            raise ValueError(f"{fn}: axis {axis!r} is out of range for a {rank}-D input")
        out.append(a % builtins.max(rank, 1))
    if len(set(out)) != len(out):
        raise ValueError(f"{fn}: axis {axis!r} repeats a dimension")
    return out


def vector_norm(x: Any, p: float = 2.0, axis: Any = None, keepdim: bool = False,
                name: str | None = None) -> Any:
    """`paddle.linalg.vector_norm`: the p-norm of the elements over `axis` (all when
    None): p = inf/-inf (largest/smallest magnitude), 0 (count of non-zeros), or
    `sum(|x|^p)^(1/p)`."""
    fn = "vector_norm"
    _check_inexact(fn, "x", x)
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise ValueError(f"{fn}: p must be an int or a float, got {p!r}")
    red = None if axis is None else _axes(fn, x, axis)
    a = abs(x)
    if p == _INF:
        return amax(a, axis=red, keepdim=keepdim, name=name)
    if p == -_INF:
        return amin(a, axis=red, keepdim=keepdim, name=name)
    if p == 0:
        return sum(cast(not_equal(x, 0.0), a.dtype), axis=red, keepdim=keepdim, name=name)  # real, as |x|
    if p == 1:
        return sum(a, axis=red, keepdim=keepdim, name=name)
    if p == 2:
        # |x|^2 of a complex x (square(x) is x*x there, not the magnitude).
        return sqrt(sum(square(a if x.dtype in COMPLEX_NAMES else x), axis=red, keepdim=keepdim), name=name)
    return pow(sum(pow(a, float(p)), axis=red, keepdim=keepdim), 1.0 / float(p), name=name)


_MATRIX_PS = ("fro", "nuc", 1, -1, 2, -2, _INF, -_INF)


def matrix_norm(x: Any, p: Any = "fro", axis: Sequence[int] = (-2, -1), keepdim: bool = False,
                name: str | None = None) -> Any:
    """`paddle.linalg.matrix_norm`: the norm of the matrices spanned by the two `axis`
    dimensions: `'fro'`, `'nuc'` (sum of singular values), 1/-1 (max/min column sum
    of |x|), inf/-inf (max/min row sum), 2/-2 (largest/smallest singular value)."""
    fn = "matrix_norm"
    _check_inexact(fn, "x", x)
    if isinstance(p, bool) or p not in _MATRIX_PS:
        raise ValueError(f"{fn}: p must be one of 'fro', 'nuc', 1, -1, 2, -2, inf, -inf, got {p!r}")
    if not isinstance(axis, (list, tuple)) or len(axis) != 2:
        raise ValueError(f"{fn}: axis must be a list of two ints, got {axis!r}")
    r, c = _axes(fn, x, axis)
    if p == "fro":
        return sqrt(sum(square(abs(x) if x.dtype in COMPLEX_NAMES else x), axis=[r, c], keepdim=keepdim), name=name)
    if p in (1, -1, _INF, -_INF):
        inner, outer_ = (r, c) if p in (1, -1) else (c, r)
        sums = sum(abs(x), axis=inner, keepdim=True)
        pick = amax if p > 0 else amin
        out = pick(sums, axis=outer_, keepdim=True)
        return out if keepdim else squeeze(out, [r, c], name=name)
    # Singular values: move the two axes last.
    rank = len(x.shape)
    rest = [d for d in range(rank) if d not in (r, c)]
    s = svdvals(transpose(x, [*rest, r, c]) if [r, c] != [rank - 2, rank - 1] else x)
    if p == "nuc":
        out = sum(s, axis=-1)
    else:
        out = (amax if p == 2 else amin)(s, axis=-1)
    return unsqueeze(out, sorted([r, c]), name=name) if keepdim else out


def norm(x: Any, p: Any = None, axis: Any = None, keepdim: bool = False,
         name: str | None = None) -> Any:
    """`paddle.norm` / `paddle.linalg.norm`: a vector norm when `axis` is None (all
    elements) or one int (`p` None or `'fro'` meaning 2; any number), a matrix norm
    (`matrix_norm`) when `axis` names two dimensions (`p` default `'fro'`)."""
    fn = "norm"
    _check_inexact(fn, "x", x)
    if isinstance(axis, tuple):
        axis = list(axis)
    if isinstance(axis, list) and len(axis) == 1:
        axis = axis[0]
    if axis is None or isinstance(axis, int):
        if p is None or p == "fro":
            p = 2.0
        if isinstance(p, bool) or not isinstance(p, (int, float)):
            raise ValueError(f"{fn}: p must be an int or a float for a vector norm, got {p!r}")
        return vector_norm(x, p=p, axis=axis, keepdim=keepdim, name=name)
    if isinstance(axis, list) and len(axis) == 2:
        return matrix_norm(x, p="fro" if p is None else p, axis=axis, keepdim=keepdim, name=name)
    raise ValueError(f"{fn}: axis must be None, an int or a list of at most 2 ints, got {axis!r}")


def cond(x: Any, p: Any = None, name: str | None = None) -> Any:
    """`paddle.linalg.cond`: the condition number; p None/2 (largest over smallest
    singular value), -2 (its inverse), or `norm(x, p) * norm(inv(x), p)` for 'fro',
    'nuc', 1, -1, inf, -inf (square x)."""
    fn = "cond"
    _matrix(fn, "x", x, complex_ok=True)
    if p is None or p in (2, -2):
        s = svdvals(x)
        big, small = amax(s, axis=-1), amin(s, axis=-1)
        return big / small if p != -2 else small / big
    if isinstance(p, bool) or p not in _MATRIX_PS:
        raise ValueError(f"{fn}: p must be None, 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {p!r}")
    _matrix(fn, "x", x, square=True, complex_ok=True)
    return matrix_norm(x, p) * matrix_norm(inv(x), p)


# ------------------------------------------------- pseudo-inverse, rank, lstsq


def _eps(dtype: Any) -> float:
    return float(np.finfo(np.float64 if str(dtype).endswith("float64") else np.float32).eps)


def pinv(x: Any, rcond: float = 1e-15, hermitian: bool = False, name: str | None = None) -> Any:
    """`paddle.linalg.pinv`: the Moore-Penrose pseudo-inverse from the SVD (or, when
    `hermitian`, the eigen-decomposition), singular values at most `rcond` times the
    largest taken as zero.  Gradients need distinct non-zero singular values."""
    fn = "pinv"
    _matrix(fn, "x", x, square=bool(hermitian), complex_ok=True)
    if hermitian:
        w, v = eigh(x)
        mag = abs(w)
        keep = greater_than(mag, amax(mag, axis=-1, keepdim=True) * float(rcond))
        safe = where(keep, w, ones_like(w))
        inv_w = where(keep, 1.0 / safe, zeros_like(w))
        return matmul(v * _as(unsqueeze(inv_w, [-2]), v), _mH(v), name=name)
    u, s, vh = svd(x)
    keep = greater_than(s, amax(s, axis=-1, keepdim=True) * float(rcond))
    safe = where(keep, s, ones_like(s))
    inv_s = where(keep, 1.0 / safe, zeros_like(s))
    return matmul(_mH(vh) * _as(unsqueeze(inv_s, [-2]), vh), _mH(u), name=name)


def _as(v: Any, like: Any) -> Any:
    """Real v (singular values, Hermitian eigenvalues) in like's complex dtype, v
    itself when like is real."""
    return cast(v, like.dtype) if like.dtype != v.dtype else v


def matrix_rank(x: Any, tol: Any = None, hermitian: bool = False, atol: Any = None,
                rtol: Any = None, name: str | None = None) -> Any:
    """`paddle.linalg.matrix_rank` (int64): the number of singular values (eigenvalue
    magnitudes when `hermitian`) above the threshold: `tol` when given, else
    `max(atol, rtol * largest)` with `rtol` defaulting to `eps * max(M, N)` (0 when
    `atol` is given)."""
    fn = "matrix_rank"
    _matrix(fn, "x", x, square=bool(hermitian), complex_ok=True)
    s = abs(eigvalsh(x)) if hermitian else svdvals(x)
    big = amax(s, axis=-1, keepdim=True)
    if tol is not None:
        if atol is not None or rtol is not None:
            raise ValueError(f"{fn}: tol cannot be given together with atol or rtol")
        thresh: Any = full_like(big, float(tol)) if isinstance(tol, (int, float)) else unsqueeze(tol, [-1])
    else:
        m, n = x.shape[-2], x.shape[-1]
        if rtol is None:
            rtol = 0.0 if atol is not None else _eps(x.dtype) * builtins.max(m, n)
        thresh = big * rtol if isinstance(rtol, (int, float)) else big * unsqueeze(rtol, [-1])
        if atol is not None:
            a = full_like(big, float(atol)) if isinstance(atol, (int, float)) else unsqueeze(atol, [-1])
            thresh = maximum(thresh, a)
    count = sum(cast(greater_than(s, thresh), "int64"), axis=-1)
    return count if name is None else scale(count, 1.0, name=name)


def lstsq(x: Any, y: Any, rcond: float | None = None, driver: str | None = None,
          name: str | None = None) -> Any:
    """`paddle.linalg.lstsq`: `(solution, residuals, rank, singular_values)` of the
    least-squares problem `min |x X - y|`, computed with the pseudo-inverse (singular
    values at most `rcond * largest` dropped; rcond defaults to `eps * max(M, N)`).
    `residuals` is the squared residual sum per column when M > N (numpy's rule
    assumes full rank; it is returned whatever the rank); `singular_values` are those
    of x (Paddle leaves them empty for the `gels`/`gelsy` drivers)."""
    fn = "lstsq"
    drivers = ("gels", "gelsy", "gelsd", "gelss")
    if driver is not None and driver not in drivers:
        raise ValueError(f"{fn}: driver must be one of {list(drivers)} or None, got {driver!r}")
    m, n = _matrix(fn, "x", x)[-2:]
    _matrix(fn, "y", y)
    if rcond is None:
        rcond = _eps(x.dtype) * builtins.max(m, n)
    sol = matmul(pinv(x, rcond=rcond), y, name=name)
    if m > n:
        residuals = sum(square(matmul(x, sol) - y), axis=-2)
    else:
        residuals = zeros_like(sum(y, axis=-2))
    rank = matrix_rank(x, tol=None, rtol=rcond)
    return sol, residuals, rank, svdvals(x)


# ----------------------------------------------------------- cross, cov, corrcoef


def cross(x: Any, y: Any, axis: int = 9, name: str | None = None) -> Any:
    """`paddle.cross`: the cross product of 3-vectors along `axis` (default 9, Paddle's
    marker for the first dimension of size 3)."""
    fn = "cross"
    _check_inexact(fn, "x", x)
    _check_inexact(fn, "y", y)
    if list(x.shape) != list(y.shape):
        raise ValueError(f"{fn}: x and y must have the same shape, got {list(x.shape)} and {list(y.shape)}")
    rank = len(x.shape)
    if axis == 9:
        threes = [d for d, s in enumerate(x.shape) if s == 3]
        if not threes:
            raise ValueError(f"{fn}: no dimension of x {list(x.shape)} has size 3")
        axis = threes[0]
    if isinstance(axis, bool) or not isinstance(axis, int) or not -rank <= axis < rank:
        raise ValueError(f"{fn}: axis {axis!r} is out of range for a {rank}-D input")
    axis %= rank
    if x.shape[axis] != 3:
        raise ValueError(f"{fn}: dimension {axis} of x {list(x.shape)} must have size 3")

    def comp(t: Any, i: int) -> Any:
        return slice(t, [axis], [i], [i + 1])

    xs, ys = [comp(x, i) for i in range(3)], [comp(y, i) for i in range(3)]
    parts = [xs[(i + 1) % 3] * ys[(i + 2) % 3] - xs[(i + 2) % 3] * ys[(i + 1) % 3] for i in range(3)]
    return concat(parts, axis=axis, name=name)


def cov(x: Any, rowvar: bool = True, ddof: bool = True, fweights: Any = None,
        aweights: Any = None, name: str | None = None) -> Any:
    """`paddle.linalg.cov`: the covariance matrix of the variables (rows of x, or
    columns when not `rowvar`), observations optionally weighted by integer
    `fweights` and float `aweights`; normalized by `N - 1` when `ddof` (numpy's
    rule with weights).  Size-1 dimensions of the result are squeezed, as Paddle does."""
    fn = "cov"
    check_float_tensor(fn, "x", x)
    if len(x.shape) > 2:
        raise ValueError(f"{fn}: x must be 1-D or 2-D, got shape {list(x.shape)}")
    obs = reshape(x, [1, -1]) if len(x.shape) < 2 else (x if rowvar else _mT(x))
    n_obs = obs.shape[1]
    w: Any = None
    for arg, wt in (("fweights", fweights), ("aweights", aweights)):
        if wt is None:
            continue
        check_tensor(fn, arg, wt)
        if len(wt.shape) != 1 or (n_obs >= 0 and wt.shape[0] >= 0 and wt.shape[0] != n_obs):
            raise ValueError(f"{fn}: {arg} must be 1-D with {n_obs} entries, got shape {list(wt.shape)}")
        wt = cast(wt, x.dtype)
        w = wt if w is None else w * wt
    if w is None:
        if n_obs < 0:
            raise ValueError(f"{fn}: the number of observations must be static")
        avg = mean(obs, axis=1, keepdim=True)
        factor: Any = float(n_obs - 1 if ddof else n_obs)
        centered = obs - avg
        out = matmul(centered, centered, transpose_y=True) / factor
    else:
        w_sum = sum(w)
        avg = sum(obs * w, axis=1, keepdim=True) / w_sum
        if not ddof:
            factor = w_sum
        elif aweights is None:
            factor = w_sum - 1.0
        else:
            factor = w_sum - sum(w * cast(aweights, x.dtype)) / w_sum
        centered = obs - avg
        out = matmul(centered * w, centered, transpose_y=True) / factor
    return squeeze(out, name=name)


def corrcoef(x: Any, rowvar: bool = True, name: str | None = None) -> Any:
    """`paddle.linalg.corrcoef`: Pearson correlation coefficients, `cov_ij /
    sqrt(cov_ii cov_jj)`, clipped to [-1, 1]."""
    fn = "corrcoef"
    check_float_tensor(fn, "x", x)
    if len(x.shape) > 2:
        raise ValueError(f"{fn}: x must be 1-D or 2-D, got shape {list(x.shape)}")
    c = cov(x, rowvar)
    if len(c.shape) == 0:
        return c / c
    d = sqrt(sum(c * _eye_like(c), axis=-1))
    out = c / unsqueeze(d, [-1]) / unsqueeze(d, [-2])
    return clip(out, -1.0, 1.0, name=name)


LINALG: list[Callable[..., Any]] = [
    cholesky, norm, matrix_norm, vector_norm, cond, cov, corrcoef, inv, eig, eigvals, multi_dot,
    matrix_rank, svd, svdvals, qr, matrix_power, det, slogdet, eigh, eigvalsh, pinv, solve,
    cholesky_solve, triangular_solve, lstsq, lu, lu_unpack,
]
"""`paddle.linalg` (`inv` is `paddle.inverse` there)."""

PADDLE: list[Callable[..., Any]] = [
    mm, bmm, dot, outer, kron, einsum, inverse, cholesky, cross, cov, corrcoef, norm, cond, lstsq,
    eig, eigvals, eigvalsh, eigh, matrix_power, qr, svd, multi_dot, pinv, solve, cholesky_solve,
    triangular_solve, lu, lu_unpack,
]
FUNCTIONAL: list[Callable[..., Any]] = []
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "mm": mm, "bmm": bmm, "dot": dot, "outer": outer, "kron": kron,
    **{f.__name__: f for f in (inverse, cholesky, cross, cov, corrcoef, norm, cond, lstsq, eig,
                               eigvals, eigvalsh, matrix_power, qr, multi_dot, solve,
                               cholesky_solve, triangular_solve, lu, lu_unpack)},
}
