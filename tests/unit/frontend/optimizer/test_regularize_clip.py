"""Regularizers and gradient clipping on their own, as Paddle's test_regularizer.py
and test_gradient_clip.py use them: `pd.squared_l2_norm` (kernel, gradients,
native code), the ops clipping adds to a program, `set_gradient_clip`, error clip,
and the regularizers' terms."""

from __future__ import annotations

import numpy as np
import pullback as paddle
import pytest
from pullback import base
from pullback.dialects import pd
from pullback.testing import check_vjp, run_op

RNG = np.random.default_rng(3)




# ------------------------------------------------------------ squared_l2_norm


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_squared_l2_norm_kernel(dtype):
    x = RNG.standard_normal((4, 3)).astype(dtype)
    got = run_op(pd.SquaredL2NormOp, x, dynamic=True)
    assert got.shape == () and got.dtype == dtype
    np.testing.assert_allclose(got, (x.astype(np.float64) ** 2).sum(), rtol=1e-6)


def test_squared_l2_norm_gradients_to_second_order():
    check_vjp(pd.SquaredL2NormOp, [RNG.standard_normal((3, 2))], order=2, dynamic_batch=True)


def test_squared_l2_norm_runs_natively(static_programs):
    x = paddle.static.data("x", [None, 5], "float64")
    y = core_apply_norm(x)
    feed = {"x": RNG.standard_normal((7, 5))}
    outs = [paddle.static.Executor(paddle.CPUPlace(), backend=b).run(feed=feed, fetch_list=[y])[0]
            for b in ("interpreter", "compiled")]
    np.testing.assert_allclose(outs[1], outs[0], rtol=1e-12)
    np.testing.assert_allclose(outs[0], (feed["x"] ** 2).sum(), rtol=1e-12)


def core_apply_norm(x):
    from pullback.frontend.clip import squared_l2_norm

    return squared_l2_norm(x)


# ------------------------------------------------------------- clip in programs


def test_global_norm_clip_ops_match_paddles_list(static_programs):
    main, _ = static_programs
    clip = paddle.nn.ClipGradByGlobalNorm(0.2)
    x = base.default_main_program().global_block().create_parameter(name="x", shape=[2, 3], dtype="float32")
    y = base.default_main_program().global_block().create_parameter(name="y", shape=[2, 3], dtype="float32")
    params_grads = clip([(x, None), (x, y), (y, x)])
    assert len(params_grads) == 2  # (x, None) is dropped
    assert [op.type for op in x.block.ops] == [
        "squared_l2_norm", "squared_l2_norm", "sum", "sqrt", "fill_constant",
        "elementwise_max", "elementwise_div", "elementwise_mul", "elementwise_mul",
    ]


@pytest.mark.parametrize("clip", [paddle.nn.ClipGradByNorm(0.2), paddle.nn.ClipGradByValue(0.2, 0.1)])
def test_need_clip_false_gradients_are_not_clipped(static_programs, clip):
    block = base.default_main_program().global_block()
    x = block.create_parameter(name="x", shape=[2, 3], dtype="float32", need_clip=False)
    y = block.create_parameter(name="y", shape=[2, 3], dtype="float32", need_clip=False)
    params_grads = clip([(x, None), (x, y)])
    assert len(clip(params_grads)) == 1 and params_grads[0][1].name == "y"


def test_clipped_gradients_against_numpy(static_programs):
    main, startup = static_programs
    image = paddle.static.data(name="a", shape=[-1, 8], dtype="float32")
    label = paddle.static.data(name="b", shape=[-1, 1], dtype="int64")
    hidden = paddle.static.nn.fc(x=image, size=6, activation="relu")
    predict = paddle.static.nn.fc(x=hidden, size=3, activation="softmax")
    cost = paddle.nn.functional.cross_entropy(input=predict, label=label, reduction="none", use_softmax=False)
    avg_cost = paddle.mean(cost)
    prog_clip = main.clone()
    avg_cost_clip = prog_clip.block(0).var(avg_cost.name)
    p_g = sorted(base.backward.append_backward(loss=avg_cost), key=lambda x: x[0].name)
    p_g_clip = sorted(base.backward.append_backward(loss=avg_cost_clip), key=lambda x: x[0].name)
    with base.program_guard(main_program=prog_clip, startup_program=startup):
        p_g_clip = paddle.nn.ClipGradByGlobalNorm(clip_norm=0.2)(p_g_clip)
    exe = base.Executor(base.CPUPlace())
    exe.run(startup)
    feed = {"a": RNG.standard_normal((3, 8)).astype("float32"), "b": np.array([[0], [2], [1]])}
    out = exe.run(main, feed=feed, fetch_list=[g for _, g in p_g])
    out_clip = exe.run(prog_clip, feed=feed, fetch_list=[g for _, g in p_g_clip])
    norm = np.sqrt(sum(np.sum(np.square(v)) for v in out))
    for u, v in zip(out, out_clip):
        np.testing.assert_allclose(u * 0.2 / max(0.2, norm), v, rtol=1e-5, atol=1e-8)


def test_set_gradient_clip_is_used_when_the_optimizer_has_none(static_programs):
    main, startup = static_programs
    x = paddle.static.data("x", [None, 2])
    loss = paddle.mean(paddle.static.nn.fc(x, 1, weight_attr=paddle.ParamAttr(
        initializer=paddle.nn.initializer.Constant(1.0))))
    with pytest.warns(UserWarning, match="set_gradient_clip"):
        paddle.nn.clip.set_gradient_clip(paddle.nn.ClipGradByValue(0.01))
    paddle.optimizer.SGD(1.0).minimize(loss)
    assert "clip" in [op.type for op in main.global_block().ops]
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    exe.run(startup)
    exe.run(main, feed={"x": np.full((2, 2), 5.0, "float32")})
    np.testing.assert_allclose(paddle.static.global_scope()["fc_0.w_0"], np.full((2, 1), 0.99))


def test_error_clip_callback_clips_a_variables_gradient(static_programs):
    main, startup = static_programs
    x = paddle.static.data("x", [None, 2])
    w = paddle.static.create_parameter([2, 2], "float32",
                                       default_initializer=paddle.nn.initializer.Constant(1.0))
    h = paddle.matmul(x, w)
    loss = paddle.sum(h * 3.0)
    main.block(0).var(h.name)._set_error_clip(paddle.nn.clip.ErrorClipByValue(max=0.5, min=-0.5))
    (_, gw), = base.backward.append_backward(loss, callbacks=[paddle.nn.clip.error_clip_callback])
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    exe.run(startup)
    (got,) = exe.run(main, feed={"x": np.ones((1, 2), "float32")}, fetch_list=[gw])
    np.testing.assert_allclose(got, np.full((2, 2), 0.5))  # dL/dh = 3, clipped to 0.5


def test_error_clip_clips_each_contribution_of_a_twice_used_parameter(static_programs):
    """Each gradient op's output is clipped, then their sum (Paddle clips after every
    gradient op, the accumulating `sum` included).  A callback's clip used to replace
    every earlier contribution of the same name by the latest one."""
    main, startup = static_programs
    x = paddle.static.data("x", [None, 2])
    w = paddle.static.create_parameter([2], "float32", default_initializer=paddle.nn.initializer.Constant(1.0))
    loss = paddle.sum(x * w * 3.0) + paddle.sum(x * w * -2.0) + paddle.sum(paddle.tanh(x * w))
    w._set_error_clip(paddle.nn.clip.ErrorClipByValue(max=1.0, min=-1.0))
    (_, gw), = base.backward.append_backward(loss, callbacks=[paddle.nn.clip.error_clip_callback])
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    exe.run(startup)
    (got,) = exe.run(main, feed={"x": np.full((1, 2), 0.5, "float32")}, fetch_list=[gw])
    # Contributions 1.5, -1.0 and 0.5 * (1 - tanh(0.5)^2), clipped to [-1, 1] each,
    # summed, and the sum clipped again.
    third = 0.5 * (1 - np.tanh(0.5) ** 2)
    np.testing.assert_allclose(got, np.full(2, np.clip(1.0 - 1.0 + third, -1, 1)), rtol=1e-6)


# ------------------------------------------------------------------ regularizers


def test_regularizer_terms_and_spellings(dynamic_mode):
    p = paddle.create_parameter([3], "float32", default_initializer=paddle.nn.initializer.Assign([-2.0, 0.0, 3.0]))
    g = paddle.zeros([3])
    l2 = paddle.regularizer.L2Decay(coeff=0.5)
    l1 = paddle.regularizer.L1Decay(0.5)
    np.testing.assert_allclose(l2(p, g).numpy(), [-1.0, 0.0, 1.5])
    np.testing.assert_allclose(l1(p, g).numpy(), [-0.5, 0.0, 0.5])
    assert str(l2) == "L2Decay, coeff=0.500000" and l1._regularization_coeff == 0.5
    assert isinstance(paddle.fluid.regularizer.L1DecayRegularizer(0.1), paddle.regularizer.L1Decay)
    with pytest.raises(TypeError, match="coeff must be a float"):
        paddle.regularizer.L2Decay("big")


def test_static_regularization_keeps_the_gradient_name(static_programs):
    main, _ = static_programs
    x = paddle.static.data("x", [None, 3])
    loss = paddle.mean(paddle.static.nn.fc(x, 1))
    paddle.optimizer.SGD(0.1, weight_decay=paddle.regularizer.L2Decay(0.1)).minimize(loss)
    sums = [op for op in main.global_block().ops if op.type == "sum"]
    assert sorted(op.output("Out")[0] for op in sums) == ["fc_0.b_0@GRAD", "fc_0.w_0@GRAD"]
    sgd = [op for op in main.global_block().ops if op.type == "sgd"]
    assert all(op.input("Grad")[0] == op.input("Param")[0] + "@GRAD" for op in sgd)
    # The name resolves to the regularized gradient, as Paddle's in-place sum does.
    assert main.global_block().var("fc_0.w_0@GRAD").op.type == "sum"
