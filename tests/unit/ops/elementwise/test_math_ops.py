"""Elementwise math ops (sin ... round): interpreter kernels against numpy (float32,
float64), VJP rules against float64 finite differences to second order, zero
gradients of the rounding ops, the Paddle spellings (`paddle.X`, `Tensor.X`,
`fluid.layers.X`, `F.X`, `nn.X`) eager and static, and argument errors.
(The activation functions built on them: tests/unit/frontend/nn/test_activations.py.)"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pullback as paddle
import pytest
from pullback.dialects import pd
from pullback.frontend import core
from pullback.passes.vjp import NON_DIFFERENTIABLE
from pullback.runtime.kernels import load_all
from pullback.testing import check_eager_grad, check_vjp, input_range, run_op

load_all()
F = paddle.nn.functional
RNG = np.random.default_rng(3)


@pytest.fixture(autouse=True)
def eager() -> Any:
    core.disable_static()
    yield
    core.disable_static()




# ------------------------------------------------------------------ math ops

def _round_away(x: np.ndarray) -> np.ndarray:
    return np.copysign(np.floor(np.abs(x) + 0.5), x)


# (op, numpy reference, bounds): inputs are drawn from the bounds narrowed into the
# op's declared domain (`input_range`); tan's bounds keep float32 tan accurate to 1e-6.
MATH_OPS: list[tuple[type[pd.PdOp], Callable[[np.ndarray], np.ndarray], tuple[float, float]]] = [
    (pd.SinOp, np.sin, (-3, 3)),
    (pd.CosOp, np.cos, (-3, 3)),
    (pd.TanOp, np.tan, (-1.2, 1.2)),
    (pd.AsinOp, np.arcsin, (-3, 3)),
    (pd.AcosOp, np.arccos, (-3, 3)),
    (pd.AtanOp, np.arctan, (-3, 3)),
    (pd.SinhOp, np.sinh, (-2, 2)),
    (pd.CoshOp, np.cosh, (-2, 2)),
    (pd.Log1pOp, lambda x: np.log(1 + x), (-3, 3)),
    (pd.Expm1Op, lambda x: np.exp(x) - 1, (-2, 2)),
    (pd.FloorOp, np.floor, (-3, 3)),
    (pd.CeilOp, np.ceil, (-3, 3)),
    (pd.RoundOp, _round_away, (-3, 3)),
]
IDS = [c[0].name for c in MATH_OPS]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op_cls,ref,bounds", MATH_OPS, ids=IDS)
def test_math_kernels_match_numpy(op_cls, ref, bounds, dtype):
    x = RNG.uniform(*input_range(op_cls, lo=bounds[0], hi=bounds[1]), (3, 4)).astype(dtype)
    got = run_op(op_cls, x, dynamic=True)
    assert got.dtype == dtype
    tol = 1e-6 if dtype == np.float32 else 1e-13
    np.testing.assert_allclose(got, ref(x.astype(np.float64)), rtol=tol, atol=tol)


def test_round_is_half_away_from_zero():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49999])
    np.testing.assert_array_equal(run_op(pd.RoundOp, x), [-3, -2, -1, 1, 2, 3, 0])
    np.testing.assert_array_equal(paddle.round(paddle.to_tensor(x)).numpy(), [-3, -2, -1, 1, 2, 3, 0])


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic_batch"])
@pytest.mark.parametrize("op_cls,ref,bounds", [c for c in MATH_OPS if c[0] not in
                                               (pd.FloorOp, pd.CeilOp, pd.RoundOp)],
                         ids=IDS[:10])
def test_math_vjp_first_and_second_order(op_cls, ref, bounds, dynamic):
    x = RNG.uniform(*input_range(op_cls, lo=bounds[0], hi=bounds[1]), (3, 4))
    check_vjp(op_cls, [x], order=2, dynamic_batch=dynamic)


@pytest.mark.parametrize("op_cls", [pd.FloorOp, pd.CeilOp, pd.RoundOp])
def test_rounding_ops_have_zero_gradient(op_cls):
    assert op_cls in NON_DIFFERENTIABLE
    x = RNG.uniform(0.1, 0.4, (2, 3)) + np.arange(3)  # away from the jumps
    check_vjp(op_cls, [x])
    fn = {pd.FloorOp: paddle.floor, pd.CeilOp: paddle.ceil, pd.RoundOp: paddle.round}[op_cls]
    t = paddle.to_tensor(x, stop_gradient=False)
    (g,) = paddle.grad((fn(t) * t).sum(), [t])
    np.testing.assert_allclose(g.numpy(), fn(paddle.to_tensor(x)).numpy())


FRONTEND_MATH: list[tuple[str, Callable[[np.ndarray], np.ndarray], tuple[float, float]]] = [
    ("sin", np.sin, (-3, 3)), ("cos", np.cos, (-3, 3)), ("tan", np.tan, (-1, 1)),
    ("asin", np.arcsin, (-3, 3)), ("acos", np.arccos, (-3, 3)),
    ("atan", np.arctan, (-3, 3)), ("sinh", np.sinh, (-2, 2)), ("cosh", np.cosh, (-2, 2)),
    ("log1p", np.log1p, (-3, 3)), ("expm1", np.expm1, (-2, 2)),
    ("log2", np.log2, (-3, 5)), ("log10", np.log10, (-3, 5)),
    # reciprocal: positive values (1/x is finite for any x != 0; the test keeps to one sign)
    ("rsqrt", lambda x: 1 / np.sqrt(x), (-3, 5)), ("reciprocal", lambda x: 1 / x, (0.2, 5)),
    ("floor", np.floor, (-3, 3)), ("ceil", np.ceil, (-3, 3)), ("round", _round_away, (-3, 3)),
]
# The op whose declared input domain narrows a frontend function's bounds.
FRONTEND_DOMAIN: dict[str, type[pd.PdOp]] = {
    "tan": pd.TanOp, "asin": pd.AsinOp, "acos": pd.AcosOp, "log1p": pd.Log1pOp,
    "log2": pd.LogOp, "log10": pd.LogOp, "rsqrt": pd.SqrtOp,
}


@pytest.mark.parametrize("name,ref,bounds", FRONTEND_MATH, ids=[c[0] for c in FRONTEND_MATH])
def test_math_frontend_spellings_values_and_gradients(name, ref, bounds):
    ops = [FRONTEND_DOMAIN[name]] if name in FRONTEND_DOMAIN else []
    x = RNG.uniform(*input_range(*ops, lo=bounds[0], hi=bounds[1]), (2, 3))
    fn = getattr(paddle, name)
    np.testing.assert_allclose(fn(paddle.to_tensor(x)).numpy(), ref(x), rtol=1e-12)
    np.testing.assert_allclose(getattr(paddle.to_tensor(x), name)().numpy(), ref(x), rtol=1e-12)
    assert fn(paddle.to_tensor(x, dtype="float32")).dtype == "float32"
    if name not in ("floor", "ceil", "round"):
        check_eager_grad(fn, [x], rtol=1e-6, atol=1e-8)
    # Static mode: the same function builds a program; the fluid spelling exists too.
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        v = paddle.static.data("x", [None, 3], "float64")
        out = getattr(paddle.fluid.layers, name)(v)
        exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
        (got,) = exe.run(main, feed={"x": x}, fetch_list=[out])
    np.testing.assert_allclose(got, ref(x), rtol=1e-12)


def test_round_decimals_and_errors():
    x = paddle.to_tensor([1.2345, -2.5678])
    np.testing.assert_allclose(paddle.round(x, decimals=2).numpy(), [1.23, -2.57], rtol=1e-6)
    with pytest.raises(TypeError, match="round: 'x' must be float32 or float64, got int64"):
        paddle.round(paddle.to_tensor([1, 2]))  # Paddle's round has float kernels only
    with pytest.raises(TypeError, match="decimals"):
        paddle.round(x, decimals=1.5)
