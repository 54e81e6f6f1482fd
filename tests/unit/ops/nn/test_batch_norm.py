"""`pd.batch_norm`: kernel against an independent numpy formula and Paddle's
documented values, typing rule, VJP against float64 finite differences (first and
second order, every statistics mode), and the APIs (F.batch_norm, nn.BatchNorm*,
static.nn.batch_norm) with their running-statistics updates."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from pullback.dialects import pd
from pullback.frontend import core, unique_name
from pullback.frontend.framework import Program, program_guard
from pullback.runtime.kernels import load_all
from pullback.testing import check_vjp, fd_grad, run_op
from xdsl.utils.exceptions import VerifyException

load_all()
RNG = np.random.default_rng(7)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


def ref_batch_norm(x, scale, bias, mean, var, *, momentum=0.9, eps=1e-5, layout="NCHW",
                   global_stats=False):
    """Batch norm written out per channel with explicit loops over channels."""
    x = np.asarray(x, np.float64)
    c_axis = 1 if layout == "NCHW" or x.ndim == 2 else x.ndim - 1
    xm = np.moveaxis(x, c_axis, 0)  # [C, ...]
    c = xm.shape[0]
    y = np.empty_like(xm)
    mean_out, var_out = np.empty(c), np.empty(c)
    saved_m, saved_v = np.empty(c), np.empty(c)
    for k in range(c):
        vals = xm[k].ravel()
        if global_stats:
            mu, v = mean[k], var[k]
            mean_out[k], var_out[k] = mean[k], var[k]
        else:
            mu = vals.sum() / vals.size
            v = ((vals - mu) ** 2).sum() / vals.size  # biased, as Paddle
            mean_out[k] = momentum * mean[k] + (1 - momentum) * mu
            var_out[k] = momentum * var[k] + (1 - momentum) * v
        saved_m[k], saved_v[k] = mu, 1 / np.sqrt(v + eps)
        y[k] = (xm[k] - mu) / np.sqrt(v + eps) * scale[k] + bias[k]
    return np.moveaxis(y, 0, c_axis), mean_out, var_out, saved_m, saved_v


def params(c: int, dtype=np.float64) -> list[np.ndarray]:
    return [rand(c).astype(dtype), rand(c).astype(dtype), rand(c).astype(dtype),
            (RNG.random(c) + 0.5).astype(dtype)]


# =========================================================================== kernel


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape,layout", [
    ((4, 3), "NCHW"), ((4, 3), "NHWC"), ((2, 3, 5), "NCHW"), ((2, 5, 3), "NHWC"),
    ((2, 3, 4, 5), "NCHW"), ((2, 4, 5, 3), "NHWC"), ((2, 3, 2, 2, 3), "NCHW"),
])
@pytest.mark.parametrize("mode", [
    {}, {"momentum": 0.6, "epsilon": 1e-3}, {"is_test": True}, {"use_global_stats": True},
    {"is_test": True, "trainable_statistics": True},
])
def test_kernel_matches_reference(dtype, shape, layout, mode):
    x = rand(*shape).astype(dtype)
    c = shape[1] if layout == "NCHW" or len(shape) == 2 else shape[-1]
    ps = params(c, dtype)
    got = run_op(pd.BatchNormOp, x, *ps, data_layout=layout, dynamic=True, **mode)
    global_stats = mode.get("use_global_stats", False) or (
        mode.get("is_test", False) and not mode.get("trainable_statistics", False))
    want = ref_batch_norm(x, *ps, momentum=mode.get("momentum", 0.9),
                          eps=mode.get("epsilon", 1e-5), layout=layout, global_stats=global_stats)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    for g, w in zip(got, want):
        assert g.dtype == dtype
        np.testing.assert_allclose(g, w, rtol=tol * 10, atol=tol * 10)


def test_paddle_documented_values():
    # The example of paddle.nn.functional.batch_norm (inference with running stats).
    x = np.arange(12, dtype=np.float32).reshape(2, 1, 2, 3)
    one = np.ones(1, np.float32)
    y = run_op(pd.BatchNormOp, x, 2 * one, one, 0 * one, one, is_test=True)[0]
    np.testing.assert_allclose(y.ravel()[:4], [1.0, 2.99998999, 4.99997997, 6.99996948], rtol=1e-6)
    # Training: momentum 0.9 weighs the old running statistics (Paddle's direction).
    _, m, v, _sm, sv = run_op(pd.BatchNormOp, x, one, 0 * one, 0 * one, one)
    np.testing.assert_allclose(m, [0.1 * 5.5], rtol=1e-6)
    np.testing.assert_allclose(v, [0.9 + 0.1 * np.var(np.arange(12))], rtol=1e-6)
    np.testing.assert_allclose(sv, [1 / np.sqrt(np.var(np.arange(12)) + 1e-5)], rtol=1e-6)


def test_single_value_per_channel_passes_through():
    # Paddle's kernel: with N * spatial == 1 in training, y = x, nothing updated,
    # saved statistics zero.
    x, ps = rand(1, 3, 1, 1), params(3)
    y, m, v, sm, sv = run_op(pd.BatchNormOp, x, *ps)
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(m, ps[2])
    np.testing.assert_array_equal(v, ps[3])
    assert not sm.any() and not sv.any()
    # Inference normalizes a single value with the running statistics.
    y_test = run_op(pd.BatchNormOp, x, *ps, is_test=True)[0]
    assert not np.allclose(y_test, x)


@pytest.mark.parametrize("shape,dynamic", [((1, 3, 1, 1), False), ((1, 3), True), ((4, 3), True)])
def test_vjp_single_value_per_channel(shape, dynamic):
    # dx = gy where the forward pass is the identity, also when only the run-time
    # batch size says so (a per-channel select).
    check_vjp(pd.BatchNormOp, [rand(*shape), *params(3)], dynamic_batch=[0] if dynamic else False, order=2)


# ========================================================================== typing


def _types(x_shape, c_shapes, dtype="float32"):
    ops = [pd.DataOp.make("x", x_shape, dtype)] + [
        pd.DataOp.make(f"p{i}", s, dtype) for i, s in enumerate(c_shapes)]
    return [o.out for o in ops]


@pytest.mark.parametrize("x_shape,c_shapes,props,msg", [
    ([2, 3, 4, 4], [[4]] * 4, {}, "scale has 4 elements, but x .* has 3 channels"),
    ([2, 4, 4, 3], [[4]] * 4, {"data_layout": "NHWC"}, "has 3 channels"),
    ([3], [[3]] * 4, {}, "x must have rank 2 or 3 or 4 or 5"),
    ([2, 3], [[3]] * 4, {"data_layout": "NCWH"}, "data_layout must be one of"),
    ([2, 3], [[3]] * 4, {"momentum": 1.5}, "momentum must be in"),
    ([2, 3], [[3]] * 4, {"epsilon": -1.0}, "epsilon must be non-negative"),
    ([2, 3], [[3], [3], [3], [1, 3]], {}, "variance must have rank 1"),
])
def test_typing_errors(x_shape, c_shapes, props, msg):
    with pytest.raises(VerifyException, match=msg):
        pd.BatchNormOp.make(*_types(x_shape, c_shapes), **props)


def test_dtype_mismatch():
    x = pd.DataOp.make("x", [2, 3], "float32").out
    p = pd.DataOp.make("p", [3], "float64").out
    with pytest.raises(VerifyException, match="same dtype"):
        pd.BatchNormOp.make(x, p, p, p, p)


def test_result_types_dynamic_batch():
    op = pd.BatchNormOp.make(*_types([-1, 3, 4, 4], [[3]] * 4))
    assert [pd.shape_of(r.type) for r in op.results] == [(pd.DYN, 3, 4, 4)] + [(3,)] * 4


# ============================================================================ VJP


@pytest.mark.parametrize("mode,shape,layout", [
    ({}, (3, 2, 2, 2), "NCHW"),
    ({"momentum": 0.3}, (3, 2, 2, 2), "NCHW"),
    ({"use_global_stats": True}, (3, 2, 2, 2), "NCHW"),
    ({"is_test": True}, (3, 2, 2, 2), "NCHW"),
    ({"is_test": True, "trainable_statistics": True}, (3, 2, 2, 2), "NCHW"),
    ({}, (3, 2, 2, 2), "NHWC"),
    ({"use_global_stats": True}, (2, 3, 2), "NHWC"),
    ({}, (5, 2), "NCHW"),
])
def test_vjp_second_order(mode, shape, layout):
    c = shape[1] if layout == "NCHW" or len(shape) == 2 else shape[-1]
    check_vjp(pd.BatchNormOp, [rand(*shape), *params(c)], props={**mode, "data_layout": layout},
              order=2)


def test_vjp_dynamic_batch():
    check_vjp(pd.BatchNormOp, [rand(4, 2, 3), *params(2)], dynamic_batch=[0], order=2)


def test_input_gradient_matches_paddle_formula():
    # Paddle's batch_norm_grad: dx = scale * inv_std / M * (M dy - sum dy - xh * sum(dy * xh)).
    x, (s, b, m, v) = rand(4, 3, 2, 2), params(3)
    prog_bw = check_vjp(pd.BatchNormOp, [x, s, b, m, v], wrt=[0])
    assert any(isinstance(op, pd.ReduceMeanOp) for op in prog_bw.body.block.ops)
    # The rule reads the saved statistics rather than recomputing them.
    reads = {o.owner for op in prog_bw.body.block.ops for o in op.operands
             if isinstance(o.owner, pd.BatchNormOp)}
    assert reads, "the backward region should read batch_norm's saved results"


# ======================================================================== frontend


@pytest.fixture
def paddle():
    import pullback

    return pullback


def test_functional_eager_updates_running_stats(dynamic_mode, paddle):
    F = paddle.nn.functional
    xv = rand(4, 3, 2, 2).astype(np.float32)
    rm = paddle.to_tensor(np.zeros(3, np.float32))
    rv = paddle.to_tensor(np.ones(3, np.float32))
    y = F.batch_norm(paddle.to_tensor(xv), rm, rv, training=True, momentum=0.8)
    want = ref_batch_norm(xv, np.ones(3), np.zeros(3), np.zeros(3), np.ones(3), momentum=0.8)
    np.testing.assert_allclose(y.numpy(), want[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(rm.numpy(), want[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rv.numpy(), want[2], rtol=1e-5)
    # Inference: running statistics are used and left alone.
    before = rm.numpy()
    y2 = F.batch_norm(paddle.to_tensor(xv), rm, rv)
    np.testing.assert_allclose(rm.numpy(), before)
    want2 = ref_batch_norm(xv, np.ones(3), np.zeros(3), want[1], want[2], global_stats=True)
    np.testing.assert_allclose(y2.numpy(), want2[0], rtol=1e-4, atol=1e-5)


def test_functional_argument_errors(dynamic_mode, paddle):
    F = paddle.nn.functional
    x = paddle.to_tensor(np.zeros((2, 3, 2, 2), np.float32))
    r = paddle.to_tensor(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="data_format must be one of"):
        F.batch_norm(x, r, r, data_format="CHWN")
    with pytest.raises(ValueError, match=r"running_mean must have shape \[3\]"):
        F.batch_norm(x, paddle.to_tensor(np.zeros(4, np.float32)), r)


@pytest.mark.parametrize("cls,shape,fmt", [
    ("BatchNorm1D", (4, 3), "NCL"), ("BatchNorm1D", (4, 3, 5), "NCL"), ("BatchNorm1D", (4, 5, 3), "NLC"),
    ("BatchNorm2D", (2, 3, 4, 4), "NCHW"), ("BatchNorm2D", (2, 4, 4, 3), "NHWC"),
    ("BatchNorm3D", (2, 3, 2, 2, 2), "NCDHW"),
])
def test_layers_train_and_eval(dynamic_mode, paddle, cls, shape, fmt):
    bn = getattr(paddle.nn, cls)(3, momentum=0.7, data_format=fmt)
    assert [k for k in bn.state_dict()] == ["weight", "bias", "_mean", "_variance"]
    assert [p.trainable for p in bn.parameters()] == [True, True, False, False]
    xv = rand(*shape).astype(np.float32)
    layout = "NHWC" if fmt in ("NLC", "NHWC", "NDHWC") else "NCHW"
    y = bn(paddle.to_tensor(xv))
    want = ref_batch_norm(xv, np.ones(3), np.zeros(3), np.zeros(3), np.ones(3), momentum=0.7, layout=layout)
    np.testing.assert_allclose(y.numpy(), want[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(bn._mean.numpy(), want[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(bn._variance.numpy(), want[2], rtol=1e-5)
    bn.eval()
    y2 = bn(paddle.to_tensor(xv))
    want2 = ref_batch_norm(xv, np.ones(3), np.zeros(3), want[1], want[2], layout=layout, global_stats=True)
    np.testing.assert_allclose(y2.numpy(), want2[0], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(bn._mean.numpy(), want[1], rtol=1e-5, atol=1e-6)


def test_layer_input_rank_errors(dynamic_mode, paddle):
    with pytest.raises(ValueError, match="expected 4D input"):
        paddle.nn.BatchNorm2D(3)(paddle.to_tensor(np.zeros((2, 3), np.float32)))
    with pytest.raises(ValueError, match="data_format"):
        paddle.nn.BatchNorm2D(3, data_format="NCL")


def test_eager_gradients_against_finite_differences(dynamic_mode, paddle):
    w = rand(2, 2, 3, 3)
    xv = rand(2, 2, 3, 3)

    def loss(arr):
        x = paddle.to_tensor(arr, stop_gradient=False)
        rm = paddle.to_tensor(np.zeros(2))
        rv = paddle.to_tensor(np.ones(2))
        s = paddle.to_tensor(np.array([1.5, -0.5]))
        y = paddle.nn.functional.batch_norm(x, rm, rv, s, None, training=True)
        return (y * paddle.to_tensor(w)).sum(), x

    out, x = loss(xv)
    out.backward()
    num = fd_grad(lambda a: float(loss(a)[0]), xv)
    np.testing.assert_allclose(x.grad.numpy(), num, rtol=1e-5, atol=1e-7)


def test_old_style_batch_norm_layer(dynamic_mode, paddle):
    bn = paddle.nn.BatchNorm(3, act="relu", moving_mean_name="mm", moving_variance_name="mv")
    assert bn._mean.name == "mm" and bn._variance.name == "mv"
    xv = rand(4, 3).astype(np.float32)
    y = bn(paddle.to_tensor(xv))
    want = ref_batch_norm(xv, np.ones(3), np.zeros(3), np.zeros(3), np.ones(3))
    np.testing.assert_allclose(y.numpy(), np.maximum(want[0], 0), rtol=1e-4, atol=1e-5)
    frozen = paddle.nn.BatchNorm(3, is_test=True)
    np.testing.assert_allclose(frozen(paddle.to_tensor(xv)).numpy(), xv / np.sqrt(1 + 1e-5), rtol=1e-5)
    np.testing.assert_allclose(frozen._mean.numpy(), 0)


def _static_bn_program(is_test=False, **kw: Any):
    from pullback.frontend.api import static

    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = static.data("x", [-1, 3, 2, 2], "float32")
        y = static.nn.batch_norm(x, is_test=is_test, **kw)
    return main, startup, y


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_static_batch_norm_updates_scope(backend):
    from pullback.frontend.api import static

    core.enable_static()
    try:
        main, startup, y = _static_bn_program(momentum=0.5)
        names = [op.var_name.data for op in main.module.walk() if isinstance(op, pd.ParameterOp)]
        assert names == ["batch_norm_0.w_0", "batch_norm_0.b_0", "batch_norm_0.w_1", "batch_norm_0.w_2"]
        assert y.name == "batch_norm_0.tmp_3"
        scope = static.Scope()
        exe = static.Executor(static.cpu_places()[0], backend=backend)
        xv = rand(4, 3, 2, 2).astype(np.float32)
        with static.scope_guard(scope), warnings.catch_warnings():
            warnings.simplefilter("error")  # native code: no interpreter fallback
            exe.run(startup)
            out, = exe.run(main, feed={"x": xv}, fetch_list=[y])
            out2, = exe.run(main, feed={"x": xv}, fetch_list=[y])
        want = ref_batch_norm(xv, np.ones(3), np.zeros(3), np.zeros(3), np.ones(3), momentum=0.5)
        np.testing.assert_allclose(out, want[0], rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(out2, want[0], rtol=1e-4, atol=1e-5)
        want2 = ref_batch_norm(xv, np.ones(3), np.zeros(3), want[1], want[2], momentum=0.5)
        np.testing.assert_allclose(np.array(scope["batch_norm_0.w_1"]), want2[1], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(np.array(scope["batch_norm_0.w_2"]), want2[2], rtol=1e-5)
    finally:
        core.disable_static()


def test_static_is_test_leaves_statistics():
    from pullback.frontend.api import static

    core.enable_static()
    try:
        main, startup, y = _static_bn_program(is_test=True, moving_mean_name="rm")
        assert y.name == "batch_norm_0.tmp_2"
        scope = static.Scope()
        exe = static.Executor(static.cpu_places()[0], backend="interpreter")
        xv = rand(4, 3, 2, 2).astype(np.float32)
        with static.scope_guard(scope):
            exe.run(startup)
            out, = exe.run(main, feed={"x": xv}, fetch_list=[y])
        np.testing.assert_allclose(out, xv / np.sqrt(1 + 1e-5), rtol=1e-5)
        np.testing.assert_allclose(np.array(scope["rm"]), 0)
        bn = next(op for op in main.module.walk() if isinstance(op, pd.BatchNormOp))
        assert bn.prop("is_test") and bn.global_stats()
    finally:
        core.disable_static()


def test_clone_for_test_switches_batch_norm():
    """`clone(for_test=True)` gives inference behaviour: running statistics used
    and left unchanged, the forward ops kept."""
    from pullback.frontend.api import static

    core.enable_static()
    try:
        main, startup = Program(), Program()
        with program_guard(main, startup), unique_name.guard():
            x = static.data("x", [-1, 3], "float32")
            y = static.nn.batch_norm(x)
            loss = paddle_mean(y)
            test_prog = main.clone(for_test=True)
        bns = [op for op in test_prog.module.walk() if isinstance(op, pd.BatchNormOp)]
        assert len(bns) == 1 and bns[0].prop("is_test")
        scope = static.Scope()
        exe = static.Executor(static.cpu_places()[0], backend="interpreter")
        xv = rand(5, 3).astype(np.float32)
        with static.scope_guard(scope):
            exe.run(startup)
            out, = exe.run(test_prog, feed={"x": xv}, fetch_list=[y.name])
        np.testing.assert_allclose(out, xv / np.sqrt(1 + 1e-5), rtol=1e-5)
        np.testing.assert_allclose(np.array(scope["batch_norm_0.w_1"]), 0)
        del loss
    finally:
        core.disable_static()


def paddle_mean(v):
    from pullback.frontend.ops.reduction import mean

    return mean(v)
