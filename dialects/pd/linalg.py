"""Linear-algebra ops: inverses, determinants, solves and matrix decompositions of
the last two dimensions (any leading dimensions are a batch).

Products (`matmul`), norms, `multi_dot`, `matrix_power`, `cov`, ... are composites
in the frontend; the ops here are the ones that need LAPACK: their kernels call
`numpy.linalg`, and they run on the host interpreter (`HOST_ONLY`), the same on
every backend.  Their gradients (`passes/vjp/linalg.py`) are the standard
matrix-calculus rules written with `pd` ops (these ops included), so they are
lowered and differentiated again like any other backward IR.

Complex matrices (complex64/complex128): inverse, determinant, slogdet, the solves,
qr, svd, eigh and eig declare `COMPLEX` (numpy's LAPACK has the complex routines);
singular values and Hermitian eigenvalues are real (`part_type`), eig's results
are complex even for a real matrix.  cholesky, lu and lu_unpack refuse complex
tensors, as Paddle 3.3.1's CPU kernels do.

```mlir
%inv = pd.inverse %a : (tensor<3x3xf64>) -> tensor<3x3xf64>
%u, %s, %vh = pd.svd %a : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3x3xf32>)
```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import ArrayAttr, BoolAttr, ComplexType, StringAttr, TensorType
from xdsl.ir import Attribute
from xdsl.irdl import ParsePropInAttrDict, irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from .base import (
    DYN,
    MultiResultNames,
    PdOp,
    PureOp,
    Shape,
    bool_attr,
    broadcast_shapes,
    elem_of,
    declare_complex,
    expect_float,
    expect_inexact,
    expect_same_elem,
    fmt_shape,
    i32,
    shape_of,
    tensor_type,
)

_HOST = (
    "it calls LAPACK through numpy.linalg; a program using it runs on the host "
    "interpreter"
)
_UNARY_FORMAT = "$x attr-dict `:` functional-type(operands, results)"
_BINARY_FORMAT = "$x `,` $y attr-dict `:` functional-type(operands, results)"


def matrix_shape(op: str, what: str, t: Attribute, *, square: bool = False, complex_ok: bool = False) -> Shape:
    """The shape of a float (or, with `complex_ok`, complex) batch of matrices
    `[*, M, N]` (square: `M == N`); raises naming the op otherwise."""
    if complex_ok:
        expect_inexact(op, what, t)
    else:
        expect_float(op, what, t)
    s = shape_of(t)
    if len(s) < 2:
        raise VerifyException(f"'{op}': {what} must have rank >= 2 ([*, M, N]), got {fmt_shape(s)}")
    if square and s[-1] != DYN and s[-2] != DYN and s[-1] != s[-2]:
        raise VerifyException(
            f"'{op}': {what} must be square matrices ([*, M, M]), got {fmt_shape(s)}"
        )
    return s


def part_type(elem: Attribute) -> Attribute:
    """The real dtype of a complex element type's parts (a real type itself)."""
    return elem.element_type if isinstance(elem, ComplexType) else elem


def _complex_type(elem: Attribute) -> ComplexType:
    """The complex element type of a float element type (a complex one itself)."""
    return elem if isinstance(elem, ComplexType) else ComplexType(elem)  # type: ignore[arg-type]


def _dim_min(a: int, b: int) -> int:
    return DYN if DYN in (a, b) else min(a, b)


class _SquareUnaryOp(PureOp):
    """A float batch of square matrices in, one result whose shape `result_shape`
    derives from it."""

    HOST_ONLY: ClassVar[str | None] = _HOST
    EXPENSIVE: ClassVar[bool] = True
    x = operand_def(TensorType)
    assembly_format = _UNARY_FORMAT

    @classmethod
    def result_shape(cls, s: Shape) -> Shape:
        """The result's shape for an operand of shape `s`."""
        return s

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        s = matrix_shape(cls.name, "x", tx, square=True, complex_ok=cls.COMPLEX)
        return [tensor_type(elem_of(tx), cls.result_shape(s))]


@irdl_op_definition
class InverseOp(_SquareUnaryOp):
    """The inverse of each square matrix (`paddle.linalg.inv`, `paddle.inverse`); a
    singular matrix is a run-time error.

    ```mlir
    %i = pd.inverse %a : (tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
    ```
    """

    name = "pd.inverse"


@irdl_op_definition
class DeterminantOp(_SquareUnaryOp):
    """The determinant of each square matrix (`paddle.linalg.det`): shape `[*]`.

    ```mlir
    %d = pd.determinant %a : (tensor<2x3x3xf32>) -> tensor<2xf32>
    ```
    """

    name = "pd.determinant"

    @classmethod
    def result_shape(cls, s: Shape) -> Shape:
        return s[:-2]


@irdl_op_definition
class SlogdetOp(_SquareUnaryOp):
    """Sign and log of the absolute determinant, stacked as Paddle's
    `paddle.linalg.slogdet` returns them: shape `[2, *]` (row 0 the sign, row 1 the
    log; a singular matrix gives `(0, -inf)`).

    ```mlir
    %sl = pd.slogdet %a : (tensor<2x3x3xf32>) -> tensor<2x2xf32>
    ```
    """

    name = "pd.slogdet"

    @classmethod
    def result_shape(cls, s: Shape) -> Shape:
        return (2, *s[:-2])


@irdl_op_definition
class CholeskyOp(_SquareUnaryOp):
    """The Cholesky factor of each symmetric positive-definite matrix
    (`paddle.linalg.cholesky`): lower `L` with `A = L L^T`, or upper `U = L^T` when
    `upper`.  Only the lower triangle of A is read; a matrix that is not positive
    definite is a run-time error.

    ```mlir
    %l = pd.cholesky %a {upper = true} : (tensor<3x3xf64>) -> tensor<3x3xf64>
    ```
    """

    name = "pd.cholesky"
    upper = prop_def(BoolAttr, default_value=bool_attr(False))


class _SolveOp(PureOp):
    """`x` a batch of square matrices `[*, M, M]`, `y` right-hand sides `[*, M, K]`;
    the batch dimensions broadcast; the result is `[*, M, K]`."""

    HOST_ONLY: ClassVar[str | None] = _HOST
    EXPENSIVE: ClassVar[bool] = True
    x = operand_def(TensorType)
    y = operand_def(TensorType)
    assembly_format = _BINARY_FORMAT

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, ty = operand_types
        xs = matrix_shape(cls.name, "x", tx, square=True, complex_ok=cls.COMPLEX)
        ys = matrix_shape(cls.name, "y", ty, complex_ok=cls.COMPLEX)
        elem = expect_same_elem(cls.name, [tx, ty])
        if xs[-1] != DYN and ys[-2] != DYN and xs[-1] != ys[-2]:
            raise VerifyException(
                f"'{cls.name}': x {fmt_shape(xs)} and y {fmt_shape(ys)} do not fit: "
                f"y needs {xs[-1]} rows"
            )
        try:
            batch = broadcast_shapes(xs[:-2], ys[:-2], op=cls.name)
        except VerifyException:
            raise VerifyException(
                f"'{cls.name}': the batch dimensions of x {fmt_shape(xs)} and y "
                f"{fmt_shape(ys)} do not broadcast"
            ) from None
        return [tensor_type(elem, (*batch, xs[-2] if xs[-2] != DYN else ys[-2], ys[-1]))]


@irdl_op_definition
class SolveOp(_SolveOp):
    """The solution `X` of `x @ X = y` (`paddle.linalg.solve`); a singular `x` is a
    run-time error.

    ```mlir
    %s = pd.solve %a, %b : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
    ```
    """

    name = "pd.solve"


@irdl_op_definition
class TriangularSolveOp(_SolveOp):
    """The solution `X` of `op(x) @ X = y` with `x` triangular
    (`paddle.linalg.triangular_solve`): only the `upper` (or lower) triangle of `x`
    is read, its diagonal taken as ones when `unitriangular`; `op(x)` is `x^T` when
    `transpose`.

    ```mlir
    %s = pd.triangular_solve %a, %b {upper = false} : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
    ```
    """

    name = "pd.triangular_solve"
    upper = prop_def(BoolAttr, default_value=bool_attr(True))
    transpose = prop_def(BoolAttr, default_value=bool_attr(False))
    unitriangular = prop_def(BoolAttr, default_value=bool_attr(False))


class _DecompositionOp(PdOp, MultiResultNames):
    """A decomposition of a float batch of matrices into several results."""

    HOST_ONLY: ClassVar[str | None] = _HOST
    EXPENSIVE: ClassVar[bool] = True
    x = operand_def(TensorType)
    names = opt_prop_def(ArrayAttr)
    assembly_format = _UNARY_FORMAT
    irdl_options = (ParsePropInAttrDict(),)


QR_MODES = ("reduced", "complete", "r")
"""`paddle.linalg.qr`'s modes (`"r"`: the op still computes the reduced Q)."""


@irdl_op_definition
class QrOp(_DecompositionOp):
    """The QR decomposition `x = Q R` of `[*, M, N]` matrices (`paddle.linalg.qr`),
    K = min(M, N): `reduced` (and `r`) gives `Q [*, M, K]`, `R [*, K, N]`;
    `complete` gives `Q [*, M, M]`, `R [*, M, N]`.

    ```mlir
    %q, %r = pd.qr %a : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3x3xf32>)
    ```
    """

    name = "pd.qr"
    mode = prop_def(StringAttr, default_value=StringAttr("reduced"))
    q = result_def(TensorType)
    r = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        s = matrix_shape(cls.name, "x", tx, complex_ok=cls.COMPLEX)
        mode = props["mode"]
        if mode not in QR_MODES:
            raise VerifyException(f"'{cls.name}': mode must be one of {list(QR_MODES)}, got {mode!r}")
        *batch, m, n = s
        k = m if mode == "complete" else _dim_min(m, n)
        elem = elem_of(tx)
        return [tensor_type(elem, (*batch, m, k)), tensor_type(elem, (*batch, k, n))]


@irdl_op_definition
class SvdOp(_DecompositionOp):
    """The singular value decomposition `x = U diag(S) VH` of `[*, M, N]` matrices
    (`paddle.linalg.svd`), singular values descending, K = min(M, N): `U [*, M, K]`,
    `S [*, K]`, `VH [*, K, N]`; with `full_matrices`, `U [*, M, M]` and `VH [*, N, N]`.

    ```mlir
    %u, %s, %vh = pd.svd %a : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xf32>, tensor<3x3xf32>)
    ```
    """

    name = "pd.svd"
    full_matrices = prop_def(BoolAttr, default_value=bool_attr(False))
    u = result_def(TensorType)
    s = result_def(TensorType)
    vh = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        *batch, m, n = matrix_shape(cls.name, "x", tx, complex_ok=cls.COMPLEX)
        k = _dim_min(m, n)
        full = props["full_matrices"]
        elem = elem_of(tx)
        return [
            tensor_type(elem, (*batch, m, m if full else k)),
            tensor_type(part_type(elem), (*batch, k)),  # singular values are real
            tensor_type(elem, (*batch, n if full else k, n)),
        ]


@irdl_op_definition
class EighOp(_DecompositionOp):
    """Eigenvalues (ascending) `w [*, N]` and orthonormal eigenvectors (columns)
    `v [*, N, N]` of symmetric matrices (`paddle.linalg.eigh`); only the `UPLO`
    (`"L"` or `"U"`) triangle is read.

    ```mlir
    %w, %v = pd.eigh %a {UPLO = "U"} : (tensor<3x3xf64>) -> (tensor<3xf64>, tensor<3x3xf64>)
    ```
    """

    name = "pd.eigh"
    UPLO = prop_def(StringAttr, default_value=StringAttr("L"))
    w = result_def(TensorType)
    v = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        s = matrix_shape(cls.name, "x", tx, square=True, complex_ok=cls.COMPLEX)
        if props["UPLO"] not in ("L", "U"):
            raise VerifyException(f"'{cls.name}': UPLO must be 'L' or 'U', got {props['UPLO']!r}")
        # A Hermitian matrix's eigenvalues are real.
        return [tensor_type(part_type(elem_of(tx)), s[:-1]), tx]


@irdl_op_definition
class LuOp(_DecompositionOp):
    """The LU factorization with partial pivoting of `[*, M, N]` matrices
    (`paddle.linalg.lu`, LAPACK's getrf), K = min(M, N): `lu [*, M, N]` holds the unit
    lower factor below the diagonal and the upper factor on and above it,
    `pivots [*, K]` the 1-based row swaps (int32), `infos [*]` 0, or `i` when
    `U[i-1, i-1]` is exactly zero (int32).

    ```mlir
    %lu, %p, %info = pd.lu %a : (tensor<3x3xf64>) -> (tensor<3x3xf64>, tensor<3xi32>, tensor<i32>)
    ```
    """

    name = "pd.lu"
    lu = result_def(TensorType)
    pivots = result_def(TensorType)
    infos = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        *batch, m, n = matrix_shape(cls.name, "x", tx)
        return [tx, tensor_type(i32, (*batch, _dim_min(m, n))), tensor_type(i32, tuple(batch))]


@irdl_op_definition
class LuUnpackOp(PdOp, MultiResultNames):
    """Unpacks `pd.lu`'s results (`paddle.linalg.lu_unpack`): the permutation `P
    [*, M, M]`, the unit lower `L [*, M, K]` and the upper `U [*, K, N]` with
    `x = P L U`, from the packed `lu [*, M, N]` and the 1-based `pivots [*, K]`.

    ```mlir
    %p, %l, %u = pd.lu_unpack %lu, %piv : (tensor<3x3xf64>, tensor<3xi32>)
        -> (tensor<3x3xf64>, tensor<3x3xf64>, tensor<3x3xf64>)
    ```
    """

    HOST_ONLY: ClassVar[str | None] = (
        "the permutation is built from the pivots by sequential swaps; a program using it "
        "runs on the host interpreter"
    )
    name = "pd.lu_unpack"
    x = operand_def(TensorType)
    y = operand_def(TensorType)
    names = opt_prop_def(ArrayAttr)
    p = result_def(TensorType)
    l = result_def(TensorType)  # noqa: E741 (Paddle's name for the factor)
    u = result_def(TensorType)
    assembly_format = _BINARY_FORMAT
    irdl_options = (ParsePropInAttrDict(),)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        tx, ty = operand_types
        *batch, m, n = matrix_shape(cls.name, "x", tx)
        k = _dim_min(m, n)
        ys = shape_of(ty)
        if elem_of(ty) not in (i32,) or len(ys) != len(batch) + 1:
            raise VerifyException(
                f"'{cls.name}': y (the pivots) must be int32 of shape [*, K], got {ty}"
            )
        if ys[-1] != DYN and k != DYN and ys[-1] != k:
            raise VerifyException(f"'{cls.name}': y has {ys[-1]} pivots, x {fmt_shape((m, n))} needs {k}")
        elem = elem_of(tx)
        return [tensor_type(elem, (*batch, m, m)), tensor_type(elem, (*batch, m, k)),
                tensor_type(elem, (*batch, k, n))]


@irdl_op_definition
class EigOp(_DecompositionOp):
    """Eigenvalues `w [*, N]` and unit-norm eigenvectors (columns) `v [*, N, N]` of
    general square matrices (`paddle.linalg.eig`, LAPACK's geev): both complex
    (complex64 of a float32 or complex64 matrix, complex128 of float64/complex128),
    in LAPACK's order.

    ```mlir
    %w, %v = pd.eig %a : (tensor<3x3xf64>) -> (tensor<3xcomplex<f64>>, tensor<3x3xcomplex<f64>>)
    ```
    """

    name = "pd.eig"
    w = result_def(TensorType)
    v = result_def(TensorType)

    @classmethod
    def infer(cls, operand_types: Sequence[Attribute], props: Mapping[str, Any]):
        (tx,) = operand_types
        s = matrix_shape(cls.name, "x", tx, square=True, complex_ok=True)
        elem = _complex_type(elem_of(tx))
        return [tensor_type(elem, s[:-1]), tensor_type(elem, s)]


LINALG_OPS = [
    InverseOp, DeterminantOp, SlogdetOp, CholeskyOp, SolveOp, TriangularSolveOp, QrOp, SvdOp,
    EighOp, EigOp, LuOp, LuUnpackOp,
]

# On complex matrices too (numpy's LAPACK has the complex routines); Paddle 3.3.1
# refuses complex cholesky and lu on CPU, and so does pullback (`refuse_complex`).
declare_complex(InverseOp, DeterminantOp, SlogdetOp, SolveOp, TriangularSolveOp, QrOp, SvdOp, EighOp, EigOp)
