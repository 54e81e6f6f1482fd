"""Regularizers and gradient clipping on their own, as Paddle's test_regularizer.py
and test_gradient_clip.py use them: `pd.squared_l2_norm` (kernel, gradients,
native code), the ops clipping adds to a program, `set_gradient_clip`, error clip,
and the regularizers' terms; Paddle's test_gradient_clip.py and test_regularizer.py
ported (clipped gradients of one program built twice, eager clipping of minimize's
results, regularization ops, L2 decay against an explicit L2 term)."""

from __future__ import annotations

import contextlib

import numpy as np
import pullback as paddle
import pullback.nn.functional as F
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


# --------------------------------------------- test/legacy_test/test_gradient_clip.py
# Ported from Paddle's own tests (the source is cited in each heading): the kind of
# program the Paddle test runs, through the public API only, written as a Paddle
# user writes it; expected values from numpy or from the values the Paddle test asserts.


def _clip_programs(clip_fn, dtype="float32"):
    """Two copies of one program with appended backward: gradients plain and through
    `clip_fn` (as Paddle's check_gradient_clip builds them: clone, then
    append_backward on each)."""
    prog, startup = base.Program(), base.Program()
    with base.program_guard(main_program=prog, startup_program=startup):
        image = paddle.static.data(name="a", shape=[-1, 12], dtype="float32")
        label = paddle.static.data(name="b", shape=[-1, 1], dtype="int64")
        x = image if dtype == "float32" else paddle.cast(image, dtype)
        hidden = paddle.static.nn.fc(x=x, size=6, activation="relu")
        predict = paddle.static.nn.fc(x=hidden, size=3, activation="softmax")
        cost = paddle.nn.functional.cross_entropy(input=predict, label=label, reduction="none",
                                                  use_softmax=False)
        avg_cost = paddle.mean(cost)
    prog_clip = prog.clone()
    avg_cost_clip = prog_clip.block(0).var(avg_cost.name)
    p_g = sorted(base.backward.append_backward(loss=avg_cost), key=lambda pg: pg[0].name)
    p_g_clip = sorted(base.backward.append_backward(loss=avg_cost_clip), key=lambda pg: pg[0].name)
    with base.program_guard(main_program=prog_clip, startup_program=startup):
        p_g_clip = clip_fn(p_g_clip)
    exe = base.Executor(base.CPUPlace())
    feeder = base.DataFeeder(feed_list=[image, label], place=base.CPUPlace())
    exe.run(startup)
    data = [(RNG.random(12).astype("float32"), int(RNG.integers(3))) for _ in range(3)]
    out = exe.run(prog, feed=feeder.feed(data), fetch_list=[g for _, g in p_g])
    out_clip = exe.run(prog_clip, feed=feeder.feed(data), fetch_list=[g for _, g in p_g_clip])
    return out, out_clip


CLIP_NORM = 0.05
"""Small enough that the global norm of the test net's gradients exceeds it."""


def _set_and_append(params_grads):
    clip = paddle.nn.ClipGradByGlobalNorm(clip_norm=CLIP_NORM)
    with pytest.warns(UserWarning, match="set_gradient_clip"):
        paddle.nn.clip.set_gradient_clip(clip)
    return paddle.nn.clip.append_gradient_clip_ops(params_grads)


@pytest.mark.parametrize("clip_fn, dtype", [
    (lambda pg: paddle.nn.ClipGradByGlobalNorm(clip_norm=CLIP_NORM)(pg), "float32"),
    (lambda pg: paddle.nn.ClipGradByGlobalNorm(clip_norm=CLIP_NORM)(pg), "float64"),
    (_set_and_append, "float32"),
])
def test_static_clip_by_global_norm(static_mode, clip_fn, dtype):
    out, out_clip = _clip_programs(clip_fn, dtype)
    norm = np.sqrt(sum(np.sum(np.square(v)) for v in out))
    assert norm > CLIP_NORM  # the clip is active
    for u, v in zip(out, out_clip):
        np.testing.assert_allclose(CLIP_NORM / norm * u, v, rtol=1e-5, atol=1e-8)


def test_static_clip_by_norm_and_by_value(static_mode):
    out, out_clip = _clip_programs(lambda pg: paddle.nn.ClipGradByNorm(clip_norm=0.2)(pg))
    for u, v in zip(out, out_clip):
        norm = np.sqrt(np.sum(u**2))
        np.testing.assert_allclose(u * 0.2 / max(0.2, norm), v, rtol=1e-5, atol=1e-8)
    out, out_clip = _clip_programs(lambda pg: paddle.nn.ClipGradByValue(max=0.2, min=0.1)(pg))
    for u, v in zip(out, out_clip):
        np.testing.assert_allclose(np.clip(u, 0.1, 0.2), v, rtol=1e-6, atol=1e-8)


def test_global_norm_clip_skips_none_gradients_and_lists_paddles_ops(static_mode):
    prog = base.Program()
    with base.program_guard(main_program=prog, startup_program=base.Program()):
        block = base.default_main_program().global_block()
        x = block.create_parameter(name="x", shape=[2, 3], dtype="float32")
        y = block.create_parameter(name="y", shape=[2, 3], dtype="float32")
        params_grads = paddle.nn.ClipGradByGlobalNorm(0.2)([(x, None), (x, y), (y, x)])
        assert len(params_grads) == 2  # (x, None) is dropped
        assert [op.type for op in x.block.ops] == [
            "squared_l2_norm", "squared_l2_norm", "sum", "sqrt", "fill_constant",
            "elementwise_max", "elementwise_div", "elementwise_mul", "elementwise_mul",
        ]
    with pytest.raises(TypeError):
        paddle.optimizer.SGD(learning_rate=0.1, grad_clip="test")


@pytest.mark.parametrize("clip", [paddle.nn.ClipGradByNorm(0.2), paddle.nn.ClipGradByValue(0.2, 0.1)])
def test_clip_leaves_need_clip_false_alone(static_mode, clip):
    block = base.default_main_program().global_block()
    x = block.create_parameter(name="x", shape=[2, 3], dtype="float32", need_clip=False)
    y = block.create_parameter(name="y", shape=[2, 3], dtype="float32", need_clip=False)
    params_grads = clip([(x, None), (x, y)])
    assert len(clip(params_grads)) == 1 and params_grads[0][1].name == "y"
    assert x.block.ops == []  # nothing clipped


@pytest.mark.parametrize("kind", ["global", "norm", "value"])
def test_dygraph_clip_of_minimize_results(dynamic_mode, kind):
    with base.dygraph.guard():
        linear = paddle.nn.Linear(5, 5)
        inputs = paddle.uniform([16, 5], min=-10, max=10).astype("float32")
        loss = paddle.mean(linear(base.dygraph.to_variable(inputs)))
        loss.backward()
        opt = paddle.optimizer.SGD(learning_rate=0.0, parameters=linear.parameters(),
                                   grad_clip=paddle.nn.ClipGradByGlobalNorm(0.1))
        x = base.dygraph.to_variable(np.array([2, 3]).astype("float32"), name="x")
        y = base.dygraph.to_variable(np.array([3, 4]).astype("float32"), name="y")
        _, params_grads = opt.minimize(loss)
        grads = [g.numpy() for _, g in params_grads]
        if kind == "global":
            clip = paddle.nn.ClipGradByGlobalNorm(clip_norm=0.8)
            assert len(clip([(x, x), (x, y), (x, None)])) == 2
            clipped = [g.numpy() for _, g in clip(params_grads)]
            norm = np.sqrt(sum(np.sum(g**2) for g in grads))
            np.testing.assert_allclose(np.sqrt(sum(np.sum(g**2) for g in clipped)), min(norm, 0.8), rtol=1e-6)
        elif kind == "norm":
            clip = paddle.nn.ClipGradByNorm(clip_norm=0.8)
            assert clip([(x, None)]) == []
            for g, c in zip(grads, clip(params_grads)):
                np.testing.assert_allclose(np.sqrt(np.sum(c[1].numpy() ** 2)),
                                           min(np.sqrt(np.sum(g**2)), 0.8), rtol=1e-6)
        else:
            clip = paddle.nn.ClipGradByValue(max=0.2, min=0.1)
            assert clip([(x, None)]) == []
            for g, c in zip(grads, clip(params_grads)):
                np.testing.assert_allclose(c[1].numpy(), np.clip(g, 0.1, 0.2), rtol=1e-6)

# ------------------------------------------------ test/legacy_test/test_regularizer.py


@pytest.mark.parametrize("reg, tail", [
    (paddle.regularizer.L1Decay(0.5), ["sign", "scale", "sum"]),
    (paddle.regularizer.L2Decay(0.5), ["scale", "sum"]),
])
def test_append_regularization_ops(static_mode, reg, tail):
    block = base.default_main_program().global_block()
    mul_x = block.create_parameter(dtype="float32", shape=[5, 10], name="mul.x", regularizer=reg)
    assert isinstance(mul_x.regularizer, type(reg))
    mul_y = paddle.static.data(dtype="float32", shape=[10, 8], name="mul.y")
    params_grads = base.backward.append_backward(paddle.mean(paddle.matmul(mul_x, mul_y)))
    count = len(block.ops)
    params_grads = paddle.optimizer.Adam().append_regularization_ops(params_grads)
    assert len(params_grads) == 1 and len(block.ops) == count + len(tail)
    assert [op.type for op in block.ops[-len(tail):]] == tail


@pytest.mark.parametrize("reg, tail", [
    (paddle.regularizer.L1Decay(0.5), ["sign", "scale", "sum"]),
    (paddle.regularizer.L2Decay(0.5), ["scale", "sum"]),
])
def test_append_regularization_ops_on_a_program_built_op_by_op(static_mode, reg, tail):
    """The Paddle 1.x form of the same test: a program that is not the default
    one, built with create_var/append_op; the decay ops go to the gradient's
    program."""
    program = base.Program()
    block = program.global_block()
    mul_x = block.create_parameter(dtype="float32", shape=[5, 10], lod_level=0, name="mul.x", regularizer=reg)
    mul_y = block.create_var(dtype="float32", shape=[10, 8], lod_level=0, name="mul.y")
    mul_out = block.create_var(dtype="float32", shape=[5, 8], lod_level=0, name="mul.out")
    block.append_op(type="mul", inputs={"X": mul_x, "Y": mul_y}, outputs={"Out": mul_out},
                    attrs={"x_num_col_dims": 1})
    mean_out = block.create_var(dtype="float32", shape=[1], lod_level=0, name="mean.out")
    block.append_op(type="mean", inputs={"X": mul_out}, outputs={"Out": mean_out})
    params_grads = base.backward.append_backward(mean_out)
    count = len(block.ops)
    params_grads = paddle.optimizer.Adam().append_regularization_ops(params_grads)
    assert len(params_grads) == 1 and [op.type for op in block.ops[count:]] == tail
    assert base.default_main_program().global_block().ops == []  # nothing went astray


@contextlib.contextmanager
def _scope_prog_guard(main, startup):
    with base.unique_name.guard(), base.scope_guard(base.core.Scope()), base.program_guard(main, startup):
        yield


def _bow_cost(words, label):
    emb = paddle.static.nn.embedding(input=words, size=[50, 8])
    hidden = paddle.static.nn.fc(x=paddle.mean(emb, axis=1), size=6, activation="tanh")
    prediction = paddle.static.nn.fc(x=[hidden], size=2, activation="softmax")
    return paddle.mean(F.cross_entropy(input=prediction, label=label, reduction="none", use_softmax=False))


def _param_sums(explicit_l2: bool) -> list[float]:
    paddle.seed(1)
    paddle.framework.random._manual_program_seed(1)
    main, startup = base.framework.Program(), base.framework.Program()
    with _scope_prog_guard(main, startup):
        words = paddle.static.data(name="words", shape=[-1, 5], dtype="int64")
        label = paddle.static.data(name="label", shape=[-1, 1], dtype="int64")
        cost = _bow_cost(words, label)
        if explicit_l2:
            params = base.default_main_program().block(0).all_parameters()
            cost += paddle.add_n([paddle.sum(paddle.square(x=p)) for p in params]) * 0.5
            paddle.optimizer.Adagrad(learning_rate=0.1).minimize(cost)
        else:
            paddle.optimizer.Adagrad(learning_rate=0.1, weight_decay=paddle.regularizer.L2Decay(1.0)).minimize(cost)
        exe = base.Executor(base.CPUPlace())
        feeder = base.DataFeeder(feed_list=[words, label], place=base.CPUPlace())
        exe.run(base.default_startup_program())
        names = [v.name for v in main.block(0).all_parameters()]
        sums = []
        for k in range(2):
            data = [([(3 * k + i) % 50 for i in range(5)], [k % 2])]
            out = exe.run(main, feed=feeder.feed(data), fetch_list=names)
            sums.append(float(sum(np.sum(np.abs(v)) for v in out)))
    return sums


def test_l2_decay_equals_an_explicit_l2_term(static_mode):
    for a, b in zip(_param_sums(False), _param_sums(True)):
        np.testing.assert_allclose(a, b, rtol=5e-5)


def test_param_attr_regularizer_wins_over_the_optimizers(dynamic_mode):
    l2 = paddle.regularizer.L2Decay(coeff=0.01)
    attr = paddle.ParamAttr(regularizer=paddle.regularizer.L1Decay())
    with base.dygraph.guard():
        inp = paddle.to_tensor(RNG.standard_normal((3, 2)).astype("float32"))
        paddle.seed(1)
        paddle.framework.random._manual_program_seed(1)
        linear1 = paddle.nn.Linear(2, 2, weight_attr=attr, bias_attr=attr)
        linear2 = paddle.nn.Linear(2, 2, weight_attr=attr, bias_attr=attr)
        # Paddle seeds every initializer with the program seed: equal starts.
        np.testing.assert_array_equal(linear1.weight.numpy(), linear2.weight.numpy())
        loss1 = linear1(inp)
        loss1.backward()
        paddle.optimizer.SGD(parameters=linear1.parameters(), learning_rate=1e-2,
                             weight_decay=l2).minimize(loss1)
        loss2 = linear2(inp)
        loss2.backward()
        paddle.optimizer.SGD(parameters=linear2.parameters(), learning_rate=1e-2).minimize(loss2)
        np.testing.assert_allclose(linear1.weight.numpy(), linear2.weight.numpy(), rtol=1e-5)
        np.testing.assert_allclose(linear1.bias.numpy(), linear2.bias.numpy(), rtol=1e-5)
