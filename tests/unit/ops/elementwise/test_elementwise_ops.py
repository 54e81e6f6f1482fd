"""Elementwise ops: interpreter kernels against hand-written numpy formulas (float32
and float64, Paddle `axis` broadcasting, dynamic batch), typing rules, VJP rules
against finite differences (first and second order), and the Paddle frontend
(functions, fluid spellings, Python operators) in static mode."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from pullback.dialects import pd
from pullback.frontend.backward import gradients
from pullback.frontend.ops import elementwise as E
from pullback.passes.vjp import NON_DIFFERENTIABLE
from pullback.runtime.kernels import load_all
from pullback.testing import check_vjp, input_range, run_fetch, run_op
from xdsl.utils.exceptions import VerifyException

load_all()
RNG = np.random.default_rng(7)
_NAMES = {np.dtype(t): n for t, n in [(np.float32, "float32"), (np.float64, "float64"),
                                      (np.int64, "int64"), (np.int32, "int32"), (np.bool_, "bool")]}
_NAMES_INV = {"f32": np.float32, "f64": np.float64, "i64": np.int64, "i32": np.int32, "i1": np.bool_}


def rand(*shape: int, dtype: Any = np.float64) -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


def positive(*shape: int, dtype: Any = np.float64) -> np.ndarray:
    return RNG.uniform(0.5, 2.0, shape).astype(dtype)


def inside(op: type[pd.PdOp], operand: str, *shape: int) -> np.ndarray:
    """Float64 values in [0.5, 2] narrowed into the op's declared domain of `operand`
    (positive: a divisor keeps one sign)."""
    return RNG.uniform(*input_range(op, operand=operand, lo=0.5, hi=2.0), shape)




def result_type(op_cls: type[pd.PdOp], *types: tuple[list[int | None], str], **props: Any) -> Any:
    vals = [pd.DataOp.make(f"t{i}", s, d).out for i, (s, d) in enumerate(types)]
    return op_cls.make(*vals, **props).results[0].type


# =================================================================== kernels

_BINARY = [
    (pd.ElementwiseAddOp, lambda x, y: x + y),
    (pd.ElementwiseSubOp, lambda x, y: x - y),
    (pd.ElementwiseMulOp, lambda x, y: x * y),
    (pd.ElementwiseDivOp, lambda x, y: x / y),
    (pd.ElementwisePowOp, lambda x, y: np.abs(x) ** y),
    (pd.ElementwiseMaxOp, lambda x, y: np.where(x > y, x, y)),
    (pd.ElementwiseMinOp, lambda x, y: np.where(x < y, x, y)),
]

# (x shape, y shape, axis, y reshaped for numpy, x reshaped for numpy)
_LAYOUTS = [
    ((2, 3), (2, 3), -1, (2, 3), (2, 3)),
    ((2, 3), (3,), -1, (3,), (2, 3)),
    ((2, 3, 4), (3,), 1, (1, 3, 1), (2, 3, 4)),
    ((2, 3, 4), (2, 3), 0, (2, 3, 1), (2, 3, 4)),
    ((3,), (2, 3, 4), 1, (2, 3, 4), (1, 3, 1)),
    ((2, 1, 4), (3, 1), -1, (3, 1), (2, 1, 4)),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op_cls,formula", _BINARY, ids=lambda v: getattr(v, "name", ""))
@pytest.mark.parametrize("layout", _LAYOUTS, ids=str)
def test_binary_kernels_broadcast_with_axis(op_cls, formula, layout, dtype):
    xs, ys, axis, ynp, xnp = layout
    x, y = rand(*xs, dtype=dtype), positive(*ys, dtype=dtype)
    if op_cls is pd.ElementwisePowOp:
        x = np.abs(x)
    got = run_op(op_cls, x, y, axis=axis)
    want = formula(x.reshape(xnp), y.reshape(ynp))
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("op_cls,formula", _BINARY[:4], ids=lambda v: getattr(v, "name", ""))
def test_binary_kernels_dynamic_batch(op_cls, formula):
    x, b = rand(5, 3), positive(3)
    got = run_op(op_cls, x, b, dynamic=True)
    np.testing.assert_allclose(got, formula(x, b[None, :]))


def test_integer_division_truncates_toward_zero():
    x = np.array([7, -7, 7, -7, 6], dtype=np.int64)
    y = np.array([2, 2, -2, -2, 3], dtype=np.int64)
    np.testing.assert_array_equal(run_op(pd.ElementwiseDivOp, x, y), [3, -3, -3, 3, 2])


_COMPARE = [
    (pd.GreaterThanOp, np.greater),
    (pd.GreaterEqualOp, np.greater_equal),
    (pd.LessThanOp, np.less),
    (pd.LessEqualOp, np.less_equal),
    (pd.EqualOp, np.equal),
    (pd.NotEqualOp, np.not_equal),
]


@pytest.mark.parametrize("op_cls,ref", _COMPARE, ids=lambda v: getattr(v, "name", ""))
def test_comparisons_give_bool(op_cls, ref):
    x = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]], dtype=np.float32)
    y = np.array([2.0, 2.0, 2.0], dtype=np.float32)
    got = run_op(op_cls, x, y)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, ref(x, y))
    ids = np.array([[1], [2]], dtype=np.int64)
    np.testing.assert_array_equal(run_op(op_cls, ids, ids[::-1].copy()), ref(ids, ids[::-1]))


def test_where_broadcasts_all_three():
    c = np.array([True, False, True])
    x, y = rand(2, 3), rand(3)
    np.testing.assert_array_equal(run_op(pd.WhereOp, c, x, y), np.where(c, x, y))


def _erf(x: np.ndarray) -> np.ndarray:
    return np.array([math.erf(v) for v in x.ravel()]).reshape(x.shape)


_UNARY: list[tuple[type[pd.PdOp], dict[str, Any], Any]] = [
    (pd.ReluOp, {}, lambda x: x * (x > 0)),
    (pd.SigmoidOp, {}, lambda x: 1 / (1 + np.exp(-x))),
    (pd.TanhOp, {}, lambda x: (np.exp(2 * x) - 1) / (np.exp(2 * x) + 1)),
    (pd.ExpOp, {}, np.exp),
    (pd.LogOp, {}, lambda x: np.log(np.abs(x))),
    (pd.SqrtOp, {}, lambda x: np.abs(x) ** 0.5),
    (pd.SquareOp, {}, lambda x: x**2),
    (pd.AbsOp, {}, lambda x: np.where(x < 0, -x, x)),
    (pd.SignOp, {}, lambda x: (x > 0).astype(x.dtype) - (x < 0)),
    (pd.ErfOp, {}, _erf),
    (pd.GeluOp, {}, lambda x: x * 0.5 * (1 + _erf(x / math.sqrt(2)))),
    (pd.GeluOp, {"approximate": True},
     lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))),
    (pd.ScaleOp, {"scale": 2.0, "bias": 1.0}, lambda x: 2 * x + 1),
    (pd.ScaleOp, {"scale": 2.0, "bias": 1.0, "bias_after_scale": False}, lambda x: 2 * (x + 1)),
    (pd.PowOp, {"factor": 3.0}, lambda x: x * x * x),
    (pd.ClipOp, {"min": -0.5, "max": 0.25}, lambda x: np.minimum(np.maximum(x, -0.5), 0.25)),
]

# Ops whose declared domain excludes negative numbers (log, sqrt) get |x|.
_POSITIVE_DOMAIN = tuple(op for op, _, _ in _UNARY if op.input_domain("x").lo >= 0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op_cls,props,formula", _UNARY,
                         ids=lambda v: getattr(v, "name", None)
                         or (v.__name__ if callable(v) else str(v or "")))
def test_unary_kernels(op_cls, props, formula, dtype):
    x = rand(4, 3, dtype=dtype)
    if op_cls in _POSITIVE_DOMAIN:
        x = np.abs(x)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(run_op(op_cls, x, dynamic=True, **props), formula(x), rtol=tol, atol=tol)


def test_erf_kernel_matches_libm_on_a_dense_grid_and_special_values():
    """The vectorized erf (Chebyshev interpolants of libm's erf/erfc) against
    math.erf: within 1e-14 relative in float64 (measured ~2e-15), one float32 ulp in
    float32; tiny and denormal arguments keep their relative accuracy."""
    from pullback.runtime.kernels.elementwise import erf

    x = np.concatenate([
        np.linspace(-7.0, 7.0, 20001), np.geomspace(1e-300, 1.0, 301),
        -np.geomspace(5e-324, 1.0, 31), [0.99999999, 1.0, 1.00000001, 5.9999999, 6.0],
    ])
    ref = np.array([math.erf(v) for v in x])
    np.testing.assert_allclose(erf(x), ref, rtol=1e-14, atol=0)
    x32 = x.astype(np.float32)
    ref32 = np.array([math.erf(v) for v in x32.astype(np.float64)]).astype(np.float32)
    got32 = erf(x32)
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, ref32, rtol=1.2e-7, atol=1e-45)
    special = erf(np.array([np.nan, np.inf, -np.inf, -0.0, 0.0]))
    assert np.isnan(special[0]) and list(special[1:3]) == [1.0, -1.0]
    assert special[3] == 0 and np.signbit(special[3]) and not np.signbit(special[4])
    assert erf(np.array(0.5, np.float32)).shape == ()


def test_cast_and_integer_scale():
    x = np.array([[1.7, -2.2]], dtype=np.float32)
    got = run_op(pd.CastOp, x, dtype="int64")
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, [[1, -2]])
    np.testing.assert_array_equal(run_op(pd.CastOp, np.array([True, False]), dtype="float64"), [1.0, 0.0])
    ids = np.array([[1], [2]], dtype=np.int64)
    np.testing.assert_array_equal(run_op(pd.ScaleOp, ids, scale=3.0, bias=1.0), [[4], [7]])


# ================================================================ typing rules


def test_typing_rules_broadcast_and_dynamic_dims():
    assert str(result_type(pd.ElementwiseAddOp, ([None, 3], "float32"), ([3], "float32"))) == "tensor<?x3xf32>"
    assert str(result_type(pd.ElementwiseMulOp, ([2, None, 4], "float64"), ([None], "float64"), axis=1)) == "tensor<2x?x4xf64>"
    assert str(result_type(pd.ElementwiseAddOp, ([None, 1], "float32"), ([1, 5], "float32"))) == "tensor<?x5xf32>"
    assert str(result_type(pd.GreaterThanOp, ([None, 3], "int64"), ([None, 3], "int64"))) == "tensor<?x3xi1>"
    assert str(result_type(pd.CastOp, ([None], "bool"), dtype="float32")) == "tensor<?xf32>"


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
@pytest.mark.parametrize(
    "y_shape,axis,feeds",
    [
        ([None, 3], -1, {"x": (1, 3), "y": (4, 3)}),  # two `?` that differ at run time
        ([4, 3], -1, {"x": (1, 3), "y": (4, 3)}),  # a `?` that is 1 facing a static 4
        ([None], 0, {"x": (4, 3), "y": (1,)}),  # axis-aligned: y's `?` faces x's 4
    ],
)
def test_a_dynamic_dimension_is_never_broadcast(backend, y_shape, axis, feeds):
    """The rule typing, VJPs and compiled loops rely on, refused the same way (one
    message) by the interpreter and the compiled backend."""
    from pullback.runtime.native.backend import CompiledBackend
    from pullback.runtime.interpreter import run_module
    from xdsl.dialects.builtin import ModuleOp

    x, y = pd.DataOp.make("x", [None, 3]), pd.DataOp.make("y", y_shape)
    z = pd.ElementwiseAddOp.make(x.out, y.out, axis=axis)
    module = ModuleOp([x, y, z, pd.FetchOp.create(operands=[z.out])])
    arrays = {k: np.ones(s, np.float32) for k, s in feeds.items()}
    with pytest.raises(ValueError, match="would be broadcast along its dynamic dimension 0"):
        if backend == "interpreter":
            run_module(module, arrays, {})
        else:
            CompiledBackend(fallback=False).run(module, arrays, {}, [z.out])


@pytest.mark.parametrize(
    "op_cls,types,props,message",
    [
        (pd.ElementwiseAddOp, [([3], "float32"), ([3], "float64")], {}, "'pd.elementwise_add': operands must have the same dtype"),
        (pd.ElementwiseSubOp, [([2, 3], "float32"), ([4], "float32")], {}, "shapes [2, 3] and [4] are not broadcastable"),
        (pd.ElementwiseMulOp, [([2, 3], "float32"), ([3], "float32")], {"axis": 2}, "axis=2 cannot align shape [3] with shape [2, 3]"),
        (pd.ElementwisePowOp, [([3], "int64"), ([3], "float32")], {}, "'pd.elementwise_pow': operands must have the same dtype"),
        (pd.WhereOp, [([3], "float32"), ([3], "float32"), ([3], "float32")], {}, "condition must be bool"),
        (pd.ReluOp, [([3], "int64")], {}, "'pd.relu': x must be float32 or float64"),
        (pd.ScaleOp, [([3], "bool")], {}, "'pd.scale': x must be a float, complex or int tensor"),
        (pd.ClipOp, [([3], "float32")], {"min": 1.0, "max": 0.0}, "'pd.clip': min (1.0) must not exceed max (0.0)"),
        (pd.CastOp, [([3], "float32")], {"dtype": "float8_e4m3fn"}, "'pd.cast': unsupported dtype 'float8_e4m3fn'"),
    ],
)
def test_typing_rules_reject(op_cls, types, props, message):
    with pytest.raises(VerifyException) as e:
        result_type(op_cls, *types, **props)
    assert message in str(e.value)


# ================================================================ VJP rules

_VJP_CASES: list[tuple[type[pd.PdOp], Any, dict[str, Any]]] = [
    (pd.ElementwiseAddOp, lambda: [rand(3, 4), rand(4)], {}),
    (pd.ElementwiseAddOp, lambda: [rand(2, 3, 4), rand(3)], {"axis": 1}),
    (pd.ElementwiseSubOp, lambda: [rand(2, 3, 4), rand(3, 1)], {"axis": 1}),
    (pd.ElementwiseSubOp, lambda: [rand(2, 1, 4), rand(3, 1)], {}),
    (pd.ElementwiseMulOp, lambda: [rand(3), rand(2, 3, 4)], {"axis": 1}),
    (pd.ElementwiseMulOp, lambda: [rand(2, 3), rand(2, 3)], {}),
    (pd.ElementwiseDivOp, lambda: [rand(2, 3), inside(pd.ElementwiseDivOp, "y", 2, 1)], {}),
    (pd.ElementwiseDivOp, lambda: [rand(2, 3, 4), inside(pd.ElementwiseDivOp, "y", 2, 3)], {"axis": 0}),
    (pd.ElementwisePowOp, lambda: [inside(pd.ElementwisePowOp, "x", 2, 3), rand(3)], {}),
    (pd.ElementwiseMaxOp, lambda: [rand(2, 3), rand(3)], {}),
    (pd.ElementwiseMinOp, lambda: [rand(2, 3, 4), rand(3)], {"axis": 1}),
    (pd.WhereOp, lambda: [RNG.standard_normal((2, 3)) > 0, rand(2, 3), rand(3)], {}),
    (pd.ReluOp, lambda: [rand(3, 4)], {}),
    (pd.SigmoidOp, lambda: [rand(3, 4)], {}),
    (pd.TanhOp, lambda: [rand(3, 4)], {}),
    (pd.ExpOp, lambda: [rand(3, 4)], {}),
    (pd.LogOp, lambda: [inside(pd.LogOp, "x", 3, 4)], {}),
    (pd.SqrtOp, lambda: [inside(pd.SqrtOp, "x", 3, 4)], {}),
    (pd.SquareOp, lambda: [rand(3, 4)], {}),
    (pd.AbsOp, lambda: [rand(3, 4)], {}),
    (pd.SignOp, lambda: [rand(3, 4)], {}),
    (pd.ErfOp, lambda: [rand(3, 4)], {}),
    (pd.GeluOp, lambda: [rand(3, 4)], {}),
    (pd.GeluOp, lambda: [rand(3, 4)], {"approximate": True}),
    (pd.ScaleOp, lambda: [rand(3, 4)], {"scale": 3.0, "bias": 1.0, "bias_after_scale": False}),
    (pd.PowOp, lambda: [positive(3, 4)], {"factor": 2.5}),
    (pd.PowOp, lambda: [rand(3, 4)], {"factor": 2.0}),
    (pd.ClipOp, lambda: [rand(3, 4)], {"min": -0.5, "max": 0.5}),
    (pd.CastOp, lambda: [rand(3, 4)], {"dtype": "float64"}),
]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic_batch"])
@pytest.mark.parametrize("op_cls,make_inputs,props", _VJP_CASES,
                         ids=lambda v: getattr(v, "name", None) or (str(v) if isinstance(v, dict) else ""))
def test_vjp_first_and_second_order(op_cls, make_inputs, props, dynamic):
    check_vjp(op_cls, make_inputs(), props=props, order=2, dynamic_batch=dynamic)


def test_comparisons_and_sign_are_non_differentiable():
    for cls in (pd.GreaterThanOp, pd.GreaterEqualOp, pd.LessThanOp, pd.LessEqualOp,
                pd.EqualOp, pd.NotEqualOp, pd.SignOp):
        assert cls in NON_DIFFERENTIABLE
    for cls in (pd.FillConstantOp, pd.FillAnyLikeOp, pd.UniformRandomOp, pd.GaussianRandomOp):
        assert cls in NON_DIFFERENTIABLE


def test_where_gives_no_gradient_to_the_condition():
    bw = check_vjp(pd.WhereOp, [np.array([True, False]), rand(2), rand(2)])
    assert len(bw.grads) == 2


# ============================================================ frontend




def test_python_operators_follow_paddle(static):
    main, feed = static
    x = feed("x", [-1, 3])
    y = feed("y", [-1, 3])
    outs = [x + 1.0, 1.0 + x, x - 2, 2 - x, x * 3, 3 * x, x / 4, 2.0 / x, x**2, 2.0**x, -x,
            x + y, x - y, x * y, x / y, x**y]
    xv, yv = positive(2, 3, dtype=np.float32), positive(2, 3, dtype=np.float32)
    want = [xv + 1, 1 + xv, xv - 2, 2 - xv, xv * 3, 3 * xv, xv / 4, 2 / xv, xv**2, 2**xv, -xv,
            xv + yv, xv - yv, xv * yv, xv / yv, xv**yv]
    for got, ref in zip(run_fetch(main, {"x": xv, "y": yv}, *outs), want):
        np.testing.assert_allclose(got, ref, rtol=1e-6)
    # Scalars become pd.scale / pd.pow, as in Paddle's math_op_patch.
    types = [v.op.type for v in outs[:7] + [outs[8], outs[10]]]
    assert set(types) == {"scale", "pow"}
    assert outs[0].name == "scale_0.tmp_0" and outs[11].name == "elementwise_add_0.tmp_0"


def test_comparison_operators_and_identity_equality(static):
    main, feed = static
    x = feed("x", [3])
    gt, lt, ge, le = x > 0.5, x < 0.5, x >= 1.0, x <= 1.0
    xv = np.array([0.0, 1.0, 2.0], dtype=np.float32)
    got = run_fetch(main, {"x": xv}, gt, lt, ge, le)
    for g, ref in zip(got, [xv > 0.5, xv < 0.5, xv >= 1, xv <= 1]):
        np.testing.assert_array_equal(g, ref)
    # `==`/`!=` compare elementwise as in Paddle; hashing stays identity-based, so
    # Variables still live in sets and dicts.
    eq, ne = x == 1.0, x != 1.0
    np.testing.assert_array_equal(run_fetch(main, {"x": xv}, eq)[0], xv == 1)
    np.testing.assert_array_equal(run_fetch(main, {"x": xv}, ne)[0], xv != 1)
    assert (x == None) is False and len({x, x}) == 1  # noqa: E711
    assert "__matmul__" not in E.OPERATORS


def test_paddle_functions_and_fluid_spellings(static):
    main, feed = static
    x = feed("x", [-1, 2, 3])
    b = feed("b", [2])
    c = feed("c", [-1, 2, 3])
    outs = [
        E.add(x, c), E.subtract(x, c), E.multiply(x, c), E.divide(x, c), E.maximum(x, c),
        E.minimum(x, c), E.pow(x, 2.0), E.pow(x, c),
        E.elementwise_add(x, b, axis=1), E.elementwise_mul(x, b, axis=1, act="relu"),
        E.where(E.greater_than(x, c), x, 0.0), E.clip(x, min=0.0), E.scale(x, 2.0, 1.0, act="tanh"),
        E.cast(x, "float64"), E.gelu(x, approximate=True), E.FLUID_LAYERS["pow"](x, factor=3.0),
    ]
    xv, bv, cv = positive(2, 2, 3, dtype=np.float32), rand(2, dtype=np.float32), positive(2, 2, 3, dtype=np.float32)
    got = run_fetch(main, {"x": xv, "b": bv, "c": cv}, *outs)
    bb = bv.reshape(1, 2, 1)
    c_ = math.sqrt(2 / math.pi)
    want = [xv + cv, xv - cv, xv * cv, xv / cv, np.maximum(xv, cv), np.minimum(xv, cv), xv**2,
            xv**cv, xv + bb, np.maximum(xv * bb, 0), np.where(xv > cv, xv, 0), np.maximum(xv, 0),
            np.tanh(2 * xv + 1), xv.astype(np.float64),
            0.5 * xv * (1 + np.tanh(c_ * (xv + 0.044715 * xv**3))), xv**3]
    for g, ref in zip(got, want):
        np.testing.assert_allclose(g, ref, rtol=1e-5)
    assert got[13].dtype == np.float64


def test_constant_creation(static):
    main, feed = static
    x = feed("x", [-1, 3])
    outs = [E.full([2, 3], 1.5), E.ones([2], "int64"), E.zeros(4, dtype="float64"),
            E.FLUID_LAYERS["fill_constant"]([1, 2], "float32", 7.0), E.full_like(x, 2.0),
            E.ones_like(x), E.zeros_like(x, dtype="int64")]
    assert all(isinstance(o.op.ir, (pd.FillConstantOp, pd.FillAnyLikeOp)) for o in outs)
    got = run_fetch(main, {"x": np.zeros((5, 3), np.float32)}, *outs)
    np.testing.assert_array_equal(got[0], np.full((2, 3), 1.5))
    assert got[1].dtype == np.int64 and got[2].dtype == np.float64
    np.testing.assert_array_equal(got[3], [[7.0, 7.0]])
    assert got[4].shape == (5, 3) and np.all(got[4] == 2.0)
    assert got[6].dtype == np.int64 and got[6].shape == (5, 3)


def test_frontend_errors_are_clear(static):
    main, feed = static
    x = feed("x", [-1, 3])
    ids = feed("ids", [-1, 3], "int64")
    with pytest.raises(TypeError, match="relu: 'x' must be float32 or float64, got int64"):
        E.relu(ids)
    with pytest.raises(TypeError, match="add: 'y' must be a Tensor/Variable, got ndarray"):
        E.add(x, np.ones(3))
    with pytest.raises(ValueError, match="operand shapes \\[\\?, 3\\] and \\[4\\] are not broadcastable"):
        E.add(x, feed("z", [4]))
    with pytest.raises(ValueError, match="clip: min \\(1.0\\) must not exceed max \\(0.0\\)"):
        E.clip(x, 1.0, 0.0)
    with pytest.raises(TypeError, match="cast: unsupported dtype 'float8_e4m3fn'"):
        E.cast(x, "float8_e4m3fn")
    with pytest.raises(ValueError, match="full: shape must not contain negative dimensions"):
        E.full([-1, 3], 0.0)
    with pytest.raises(ValueError, match="unsupported act 'swish'"):
        E.elementwise_add(x, x, act="swish")


def test_max_gradient_goes_to_y_on_ties_and_clip_keeps_bounds(static):
    main, feed = static
    x = feed("x", [3], "float64")
    y = feed("y", [3], "float64")
    x.stop_gradient = y.stop_gradient = False
    gx, gy = gradients([E.maximum(x, y)], [x, y])
    (gc,) = gradients([E.clip(x, -1.0, 1.0)], [x])
    xv, yv = np.array([1.0, 2.0, -1.0]), np.array([1.0, 1.0, 0.0])
    got = run_fetch(main, {"x": xv, "y": yv}, gx, gy, gc)
    np.testing.assert_array_equal(got[0], [0.0, 1.0, 0.0])
    np.testing.assert_array_equal(got[1], [1.0, 0.0, 1.0])
    np.testing.assert_array_equal(got[2], [1.0, 0.0, 1.0])


def test_cast_gradient_is_cast_back(static):
    main, feed = static
    x = feed("x", [-1, 2], "float64")
    x.stop_gradient = False
    y = E.cast(x, "float32") * 3.0
    (gx,) = gradients([y], [x])
    assert gx.dtype == "float64"
    (got,) = run_fetch(main, {"x": rand(4, 2)}, gx)
    np.testing.assert_array_equal(got, np.full((4, 2), 3.0))



@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_pow_gradient_edge_values_at_zero(static, backend):
    """d(x ** y) at x = 0 and y = 0: the limits (0 where the raw product is 0 * inf;
    Paddle's kernel gives NaN there), the true infinities elsewhere, NaN for dy at
    x < 0 as in Paddle; and pow(x, factor=0) has a zero gradient."""
    import pullback as paddle

    main, feed = static
    x = feed("x", [7], "float64")
    y = feed("y", [7], "float64")
    x.stop_gradient = y.stop_gradient = False
    gx, gy = gradients([E.pow(x, y)], [x, y])
    (gf,) = gradients([E.pow(x, 0.0)], [x])
    xv = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 2.0, -1.0])
    yv = np.array([2.0, 1.0, 0.5, 0.0, -1.0, 0.0, 2.0])
    exe = paddle.static.Executor(paddle.CPUPlace(), backend=backend)
    dx, dy, df = exe.run(main, feed={"x": xv, "y": yv}, fetch_list=[gx, gy, gf])
    np.testing.assert_array_equal(dx, [0.0, 1.0, np.inf, 0.0, -np.inf, 0.0, -2.0])
    np.testing.assert_array_equal(dy[:5], [0.0, 0.0, 0.0, 0.0, -np.inf])
    np.testing.assert_allclose(dy[5], np.log(2.0), rtol=1e-15)
    assert np.isnan(dy[6])
    np.testing.assert_array_equal(df, np.zeros(7))


def test_pow_gradient_edge_values_broadcast_with_axis(static):
    """The masks follow Paddle's `axis` alignment (y of shape [3] at axis 1 of x)."""
    main, feed = static
    x = feed("x", [2, 3, 2], "float64")
    y = feed("y", [3], "float64")
    x.stop_gradient = y.stop_gradient = False
    gx, gy = gradients([E.elementwise_pow(x, y, axis=1)], [x, y])
    xv = np.zeros((2, 3, 2))
    yv = np.array([0.0, 1.0, 2.0])
    dx, dy = run_fetch(main, {"x": xv, "y": yv}, gx, gy)
    np.testing.assert_array_equal(dx, np.broadcast_to(np.array([0.0, 1.0, 0.0])[:, None], (2, 3, 2)))
    np.testing.assert_array_equal(dy, np.zeros(3))
