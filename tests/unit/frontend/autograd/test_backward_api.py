"""append_backward / gradients / calc_gradient (static mode): the seed documents'
contract, and Paddle's test_calc_gradient.py and test_backward.py ported (gradients
of intermediates, double gradients, pruning to the used part of a split, gradients
with respect to a seed, the backward helpers, argument types).

Values are checked against closed-form gradients (linear regression, x**3) and the
seeds' documented outputs; errors by type and message fragment.
"""

from __future__ import annotations

import numpy as np
import pytest

import pullback as paddle
import pullback.nn.functional as F
from pullback import fluid
from pullback import base, static
from pullback.base.backward import calc_gradient

RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def programs():
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
        yield main, startup
    paddle.disable_static()


def _pairs(pg):
    return [(p.name, g.name) for p, g in pg]


def test_seed_embedding_my_fc_six_calls():
    x = paddle.static.data(name="x", shape=[None, 13], dtype="int64")
    y = paddle.static.data(name="y", shape=[None, 1], dtype="float32")
    x_emb = paddle.static.nn.embedding(x, size=[100, 256])
    y_predict = paddle.static.nn.fc(x=x_emb, size=1, activation=None, name="my_fc")
    loss = F.square_error_cost(input=y_predict, label=y)
    avg_loss = paddle.mean(loss)

    all_weights = [
        param
        for param in paddle.static.default_main_program().block(0).all_parameters()
        if "w_" in param.name
    ]
    all_weights_name = [w.name for w in all_weights]

    p_g_list1 = paddle.static.append_backward(loss=avg_loss)
    p_g_list2 = paddle.static.append_backward(loss=avg_loss, parameter_list=all_weights)
    p_g_list3 = paddle.static.append_backward(loss=avg_loss, parameter_list=all_weights_name)
    p_g_list4 = paddle.static.append_backward(loss=avg_loss, no_grad_set=set([x_emb]))
    p_g_list5 = paddle.static.append_backward(loss=avg_loss, no_grad_set=set(["my_fc.b_0"]))
    p_g_list6 = paddle.static.append_backward(
        loss=avg_loss, parameter_list=all_weights, no_grad_set=set(all_weights)
    )
    emb, w, b = ("embedding_0.w_0", "embedding_0.w_0@GRAD"), ("my_fc.w_0", "my_fc.w_0@GRAD"), ("my_fc.b_0", "my_fc.b_0@GRAD")
    assert _pairs(p_g_list1) == [emb, w, b]
    assert _pairs(p_g_list2) == [emb, w]
    assert _pairs(p_g_list3) == [emb, w]
    assert _pairs(p_g_list4) == [w, b]
    assert _pairs(p_g_list5) == [emb, w]
    assert p_g_list6 == []
    assert str(p_g_list1) == (
        "[(embedding_0.w_0, embedding_0.w_0@GRAD), (my_fc.w_0, my_fc.w_0@GRAD), "
        "(my_fc.b_0, my_fc.b_0@GRAD)]"
    )


def _fit_a_line():
    x = fluid.layers.data(name="x", shape=[13], dtype="float32")
    y = fluid.layers.data(name="y", shape=[1], dtype="float32")
    y_predict = fluid.layers.fc(input=x, size=1, act=None)
    loss = fluid.layers.square_error_cost(input=y_predict, label=y)
    avg_loss = fluid.layers.mean(loss)
    return x, y, y_predict, avg_loss


def test_fit_a_line_gradients_match_closed_form(programs):
    main, startup = programs
    _, _, _, avg_loss = _fit_a_line()
    pg = fluid.backward.append_backward(loss=avg_loss)
    assert _pairs(pg) == [("fc_0.w_0", "fc_0.w_0@GRAD"), ("fc_0.b_0", "fc_0.b_0@GRAD")]
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((8, 13)).astype("float32")
    ys = rng.standard_normal((8, 1)).astype("float32")
    w_grad, b_grad, w = exe.run(
        main, feed={"x": xs, "y": ys}, fetch_list=[pg[0][1], "fc_0.b_0@GRAD", "fc_0.w_0"]
    )
    b = paddle.static.global_scope().find_var("fc_0.b_0").get_tensor()
    resid = xs @ np.asarray(w) + np.asarray(b) - ys  # d mean((xw+b-y)^2)
    np.testing.assert_allclose(w_grad, 2 * xs.T @ resid / len(xs), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(b_grad, 2 * resid.sum(0) / len(xs), rtol=1e-4, atol=1e-5)


def test_append_backward_twice_never_clashes(programs):
    main, startup = programs
    _, _, _, avg_loss = _fit_a_line()
    pg1 = fluid.backward.append_backward(loss=avg_loss)
    pg2 = fluid.backward.append_backward(loss=avg_loss)
    assert _pairs(pg1) == _pairs(pg2)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    feed = {"x": np.ones((4, 13), "float32"), "y": np.zeros((4, 1), "float32")}
    g1, g2 = exe.run(main, feed=feed, fetch_list=[pg1[0][1], pg2[0][1]])
    np.testing.assert_allclose(g1, g2)


def test_non_scalar_loss_is_gradient_of_its_sum(programs):
    main, startup = programs
    x, y, y_predict, _ = _fit_a_line()
    loss = fluid.layers.square_error_cost(input=y_predict, label=y)  # shape [-1, 1]
    pg = fluid.backward.append_backward(loss=loss)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    xs = np.arange(26, dtype="float32").reshape(2, 13) / 10
    ys = np.ones((2, 1), "float32")
    (gb,) = exe.run(main, feed={"x": xs, "y": ys}, fetch_list=[pg[1][1]])
    w = paddle.static.global_scope().find_var("fc_0.w_0").get_tensor()
    b = paddle.static.global_scope().find_var("fc_0.b_0").get_tensor()
    resid = xs @ np.asarray(w) + np.asarray(b) - ys
    np.testing.assert_allclose(gb, 2 * resid.sum(0), rtol=1e-4)


def test_loss_must_be_a_variable():
    with pytest.raises(AssertionError, match="loss"):
        paddle.static.append_backward(loss=3.0)
    with pytest.raises(TypeError):
        paddle.static.append_backward(loss="avg_loss")


def test_callbacks_type_checked_and_called_per_grad_op(programs):
    _, _, _, avg_loss = _fit_a_line()
    with pytest.raises(TypeError, match="callbacks"):
        fluid.backward.append_backward(loss=avg_loss, callbacks=lambda block, context: None)
    seen = []

    def record(block, context):
        desc = context["__current_op_desc__"]
        seen.append(desc.type())
        assert type(block).__name__ == "Block" and block.idx == 0

    pg = fluid.backward.append_backward(loss=avg_loss, callbacks=[record])
    assert len(pg) == 2
    # What Paddle's append_backward reports for this program: fluid.layers.mean is
    # `mean`, square_error_cost is `elementwise_sub` + `square`, fc is `mul` +
    # `elementwise_add`; one gradient operator each, in reverse order.
    assert seen == ["mean_grad", "square_grad", "elementwise_sub_grad", "elementwise_add_grad", "mul_grad"]


def test_callbacks_report_paddle_operator_types_of_2x_apis(programs):
    x = paddle.static.data("x", [None, 4], "float32")
    y = paddle.static.data("y", [None, 3], "float32")
    w = paddle.static.create_parameter([4, 3], "float32", name="w")
    h = paddle.transpose(paddle.reshape(paddle.matmul(x, w), [-1, 3]), [0, 1])
    loss = paddle.mean(F.square_error_cost(h, y))
    seen = []
    fluid.backward.append_backward(
        loss, callbacks=[lambda block, context: seen.append(context["__current_op_desc__"].type())]
    )
    assert seen == ["reduce_mean_grad", "square_grad", "elementwise_sub_grad",
                    "transpose2_grad", "reshape2_grad", "matmul_v2_grad"]


def test_callback_clipping_takes_effect(programs):
    main, startup = programs
    _, _, _, avg_loss = _fit_a_line()

    def clip_w(block, context):
        desc = context["__current_op_desc__"]
        for name in desc.output_arg_names():
            if name == "fc_0.w_0@GRAD":
                block.append_op(
                    type="clip",
                    inputs={"X": [name]},
                    outputs={"Out": [name]},
                    attrs={"min": -1e-3, "max": 1e-3},
                )

    pg = fluid.backward.append_backward(loss=avg_loss, callbacks=[clip_w])
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    feed = {"x": 10 * np.ones((4, 13), "float32"), "y": -50 * np.ones((4, 1), "float32")}
    (gw,) = exe.run(main, feed=feed, fetch_list=[pg[0][1]])
    assert np.abs(gw).max() <= 1e-3 + 1e-9
    assert np.abs(gw).max() > 0


def test_gradients_seed_example_conv():
    x = fluid.layers.data(name="x", shape=[2, 8, 8], dtype="float32")
    x.stop_gradient = False
    y = fluid.layers.conv2d(x, 4, 1, bias_attr=False)
    y = fluid.layers.relu(y)
    y = fluid.layers.conv2d(y, 4, 1, bias_attr=False)
    y = fluid.layers.relu(y)
    z = fluid.gradients([y], x)
    assert isinstance(z, list) and len(z) == 1
    assert z[0].name == "x@GRAD"
    assert z[0].shape == [-1, 2, 8, 8]


def test_gradients_none_for_unrelated_input_and_always_list():
    x = paddle.static.data(name="x", shape=[3], dtype="float32")
    u = paddle.static.data(name="u", shape=[3], dtype="float32")
    x.stop_gradient = False
    u.stop_gradient = False
    y = paddle.multiply(x, x)
    out = paddle.static.gradients(y, [x, u])
    assert isinstance(out, list) and out[1] is None and out[0] is not None
    assert isinstance(fluid.backward.calc_gradient(y, x), list)


def test_gradients_argument_errors():
    x = paddle.static.data(name="x", shape=[3], dtype="float32")
    x.stop_gradient = False
    y = paddle.multiply(x, x)
    z = paddle.multiply(y, x)
    g = paddle.static.data(name="g", shape=[4], dtype="float32")
    with pytest.raises(ValueError, match="Should have the same number of target_gradients as targets"):
        paddle.static.gradients([y, z], x, target_gradients=[y])
    with pytest.raises(ValueError, match="g"):
        paddle.static.gradients(y, x, target_gradients=g)
    with pytest.raises(TypeError):
        paddle.static.gradients(y, "x")
    with pytest.raises(TypeError):
        paddle.static.gradients(y, x, no_grad_set=3)


def test_target_gradients_seed_the_targets(programs):
    main, startup = programs
    x = paddle.static.data(name="x", shape=[3], dtype="float32")
    x.stop_gradient = False
    s = paddle.static.data(name="s", shape=[3], dtype="float32")
    y = paddle.multiply(x, x)
    (gx,) = paddle.static.gradients([y], [x], target_gradients=[s])
    exe = paddle.static.Executor(paddle.CPUPlace())
    xs = np.array([1.0, 2.0, 3.0], "float32")
    ss = np.array([1.0, 0.5, -1.0], "float32")
    (v,) = exe.run(main, feed={"x": xs, "s": ss}, fetch_list=[gx])
    np.testing.assert_allclose(v, 2 * xs * ss)


def test_third_derivative_of_cube(programs):
    main, startup = programs
    x = paddle.static.data(name="x", shape=[3], dtype="float32")
    x.stop_gradient = False
    y = paddle.pow(x, 3.0)
    (g1,) = paddle.static.gradients(y, x)
    (g2,) = paddle.static.gradients(g1, x)
    (g3,) = paddle.static.gradients(g2, x)
    exe = paddle.static.Executor(paddle.CPUPlace())
    v1, v2, v3 = exe.run(
        main, feed={"x": np.array([1.0, 2.0, -3.0], "float32")}, fetch_list=[g1, g2, g3]
    )
    np.testing.assert_allclose(v1, [3, 12, 27], rtol=1e-5)
    np.testing.assert_allclose(v2, [6, 12, -18], rtol=1e-5)
    np.testing.assert_allclose(v3, [6, 6, 6], rtol=1e-5)


def test_sgd_minimize_trains_fit_a_line(programs):
    main, startup = programs
    _, _, _, avg_loss = _fit_a_line()
    opt = paddle.optimizer.SGD(learning_rate=0.05)
    optimize_ops, params_grads = opt.minimize(avg_loss)
    assert _pairs(params_grads) == [("fc_0.w_0", "fc_0.w_0@GRAD"), ("fc_0.b_0", "fc_0.b_0@GRAD")]
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    rng = np.random.default_rng(1)
    true_w = rng.standard_normal((13, 1)).astype("float32")
    losses = []
    for _ in range(100):
        xs = rng.standard_normal((16, 13)).astype("float32")
        (l,) = exe.run(main, feed={"x": xs, "y": xs @ true_w + 0.5}, fetch_list=[avg_loss])
        losses.append(float(l))
    assert losses[-1] < 0.05 * losses[0]


@pytest.mark.parametrize("backend", ["interpreter", "compiled"])
def test_gradients_of_an_integer_target(programs, backend):
    """As in Paddle: an integer target is seeded with integer ones; the gradient
    flows through `cast` (cast back: float) and integer arithmetic (integer)."""
    main, _ = programs
    x = paddle.static.data("x", [3], "float32")
    x.stop_gradient = False
    y = paddle.cast(x * 2.0, "int64")
    xi = paddle.static.data("xi", [3], "int64")
    xi.stop_gradient = False
    yi = xi * 3
    (gx,) = paddle.static.gradients(y, x)
    (gxi,) = paddle.static.gradients(yi, xi)
    (gsum,) = paddle.static.gradients(paddle.sum(yi), xi)
    assert gx.dtype == "float32" and gxi.dtype == "int64"
    exe = paddle.static.Executor(paddle.CPUPlace(), backend=backend)
    got = exe.run(main, feed={"x": np.ones(3, np.float32), "xi": np.arange(3)}, fetch_list=[gx, gxi, gsum])
    np.testing.assert_array_equal(got[0], np.full(3, 2.0, np.float32))
    for g in got[1:]:
        assert g.dtype == np.int64
        np.testing.assert_array_equal(g, [3, 3, 3])


def test_comparisons_still_carry_no_gradient(programs):
    x = paddle.static.data("x", [3], "float32")
    x.stop_gradient = False
    mask = paddle.cast(paddle.greater_than(x, paddle.zeros([3])), "float32")
    assert paddle.static.gradients(mask, x) == [None]


# --------------------------------------------- test/legacy_test/test_calc_gradient.py
# Ported from Paddle's own tests (the source is cited in each heading): the kind of
# program the Paddle test runs, through the public API only, written as a Paddle
# user writes it; expected values from numpy or from the values the Paddle test asserts.


def test_calc_gradient_of_intermediate_and_parameter(static_mode):
    main, startup = base.Program(), base.Program()
    with base.program_guard(main, startup):
        x = paddle.create_parameter(dtype="float32", shape=[3, 4])
        y = paddle.create_parameter(dtype="float32", shape=[4, 2])
        mul_out = paddle.matmul(x=x, y=y)
        mean_out = paddle.mean(mul_out)
        a = calc_gradient(mean_out, mul_out)
        b = calc_gradient(mean_out, x)
    exe = base.Executor(base.CPUPlace())
    exe.run(startup)
    ga, gb, yv = exe.run(main, feed={}, fetch_list=[a, b, y])
    np.testing.assert_allclose(ga, np.full((3, 2), 1 / 6), rtol=1e-6)
    np.testing.assert_allclose(gb, np.full((3, 2), 1 / 6) @ yv.T, rtol=1e-5)


@pytest.mark.parametrize("init, build, want", [
    # d/dx of (x - 2x)^2 = 2x at x = 3 (the first gradient is part of the second)
    (3.0, lambda x, g1: (x - g1) * (x - g1), 6.0),
    # z = (2x)^2 + (x^2)^2: dz/dx = 8x + 4x^3 = 12 at x = 1
    (1.0, lambda x, g1: g1 * g1 + (x * x) * (x * x), 12.0),
])
def test_static_double_grad(static_mode, init, build, want):
    main, startup = base.Program(), base.Program()
    with base.program_guard(main, startup):
        x = paddle.create_parameter(name="x", shape=[1], dtype="float32",
                                    default_initializer=paddle.nn.initializer.Constant(init))
        (grad1,) = base.gradients(x * x, x)
        (grad2,) = base.gradients(build(x, grad1), x)
    exe = base.Executor(base.CPUPlace())
    exe.run(startup)
    g1, g2 = exe.run(main, fetch_list=[grad1, grad2])
    assert g1[0] == 2 * init and g2[0] == want


def test_gradient_through_split_is_pruned_to_the_used_part(static_mode):
    x = paddle.static.data(name="x", shape=[3], dtype="float32")
    x.stop_gradient = False
    x1, _, _ = paddle.split(x, axis=0, num_or_sections=3)
    x1_grad = base.gradients(x1 * 2, x)
    exe = base.Executor(base.CPUPlace())
    exe.run(base.default_startup_program())
    (out,) = exe.run(base.default_main_program(), feed={"x": np.ones([3], "float32")},
                     fetch_list=[x1_grad])
    np.testing.assert_array_equal(out, [2.0, 0.0, 0.0])


@pytest.mark.parametrize("multi", [False, True])
def test_gradient_of_a_gradient_with_respect_to_its_seed(static_mode, multi):
    start, main = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, start):
        x = paddle.static.data("x", shape=[2, 2])
        x.stop_gradient = False
        y = x * x
        v = paddle.ones([2, 2])
        v.stop_gradient = False
        grad_y = paddle.zeros_like(y)
        grad_y.stop_gradient = False
        grad_x = paddle.static.gradients(y, x, grad_y)
        if multi:  # d(grad_y * 2x + grad_y * (2x + 1))/d grad_y along v: 4x + 1
            grad_x2 = paddle.static.gradients(y + x, x, grad_y)
            jvp = paddle.static.gradients([grad_x[0], grad_x2[0]], grad_y, [v, v])
        else:
            jvp = paddle.static.gradients(grad_x, grad_y, v)
    exe = paddle.static.Executor()
    exe.run(start)
    gx, j = exe.run(main, feed={"x": np.full([2, 2], 1.5, "float32")}, fetch_list=[grad_x, jvp])
    np.testing.assert_array_equal(gx, np.zeros([2, 2]))
    np.testing.assert_allclose(j, np.full([2, 2], 7.0 if multi else 3.0))

# --------------------------------------------------- test/legacy_test/test_backward.py


def test_backward_helpers_on_a_net_with_shared_and_unused_layers(static_mode):
    """Paddle's TestSimpleNet: three lookups of one table, a merge, a used and an
    unused fc sharing a weight; the parameters, stop-gradient set, op path (fc on a
    3-D input is one `mul`, as in Paddle) and unused outputs of append_backward."""
    from pullback.base import backward

    shape = [4, 5]
    main, startup = base.Program(), base.Program()
    with base.program_guard(main, startup):
        ids = [paddle.static.data(name=f"x{k}_no_grad", shape=shape, dtype="int64") for k in range(3)]
        label = paddle.static.data(name="label_no_grad", shape=[shape[0], 1], dtype="float32")
        embs = [paddle.static.nn.embedding(i, size=[20, 6], param_attr=base.ParamAttr(name="w2v")) for i in ids]
        x_merge = paddle.add(embs[0], embs[1], name="x_add_x2")
        x2_merge = paddle.add(embs[1], embs[2], name="x2_add_x3")
        predict = paddle.static.nn.fc(x=x_merge, size=1, activation="softmax",
                                      weight_attr=base.ParamAttr(name="fc_w"), name="fc_predict")
        paddle.static.nn.fc(x=x2_merge, size=1, activation="sigmoid",
                            weight_attr=base.ParamAttr(name="fc_w"), name="fc_no_use")
        loss = paddle.mean(F.square_error_cost(input=predict, label=label), name="mean_loss")
        params_grads = backward.append_backward(loss, None, None)
        assert {p.name for p, _ in params_grads} == {"w2v", "fc_predict.b_0", "fc_w"}
        no_grad = backward._get_stop_gradients_(main)
        assert no_grad[0] == {"x0_no_grad@GRAD", "x1_no_grad@GRAD", "x2_no_grad@GRAD", "label_no_grad@GRAD"}
        no_grad_set = set(map(backward._strip_grad_suffix_, no_grad[0]))
        path = backward._find_op_path_(main.block(0), [loss], [], no_grad_set)
        assert [op.type for op in path] == [
            "lookup_table_v2", "lookup_table_v2", "elementwise_add", "mul", "elementwise_add",
            "softmax", "elementwise_sub", "square", "reduce_mean",
        ]
        assert path[3].input("X") == [x_merge.name]  # the flattening is inside `mul`
        assert backward._find_no_grad_vars(main.block(0), path, [loss], no_grad_set) == set()
        paddle.optimizer.SGD(learning_rate=0.1).minimize(loss)
        exe = base.Executor(base.CPUPlace())
        exe.run(startup)
        feed = {f"x{k}_no_grad": RNG.integers(0, 20, shape).astype("int64") for k in range(3)}
        feed["label_no_grad"] = RNG.random([shape[0], 1]).astype("float32")
        (got,) = exe.run(feed=feed, fetch_list=[loss])
        assert np.isfinite(got)


@pytest.mark.parametrize("name, want", [
    ("x@GRAD", "x"), ("x@GRAD@GRAD", "x"), ("x@GRAD@RENAME@1", "x"),
    ("x@GRAD_slice_0@GRAD", "x@GRAD_slice_0"), ("grad/grad/x@GRAD@RENAME@block0@1@GRAD", "x"),
])
def test_strip_grad_suffix(name, want):
    from pullback.base import backward

    assert backward._strip_grad_suffix_(name) == want


def test_gradients_argument_types(static_mode):
    x = paddle.static.data(name="x", shape=[None, 2, 4, 4], dtype="float32")
    x.stop_gradient = False
    conv = paddle.static.nn.conv2d(x, 2, 1, bias_attr=False)
    y = F.relu(conv)
    for args, kwargs in [((y.name, x), {}), ((y, x.name), {}),
                         (([y], [x]), {"target_gradients": x.name}), (([y], x), {"no_grad_set": conv})]:
        with pytest.raises(TypeError):
            base.gradients(*args, **kwargs)


def test_append_backward_and_minimize_argument_types(static_mode):
    x = paddle.static.data(name="x", shape=[None, 3], dtype="int64")
    y = paddle.static.data(name="y", shape=[None, 1], dtype="float32")
    pred = paddle.static.nn.fc(x=paddle.static.nn.embedding(x, size=[10, 4]), size=1, name="my_fc")
    avg_loss = paddle.mean(F.square_error_cost(input=pred, label=y))
    names = [p.name for p in base.default_main_program().block(0).all_parameters()]
    with pytest.raises(TypeError):
        base.backward.append_backward(loss=avg_loss.name)
    with pytest.raises(TypeError):
        base.backward.append_backward(loss=avg_loss, parameter_list=[np.zeros(3)] + names[1:])
    with pytest.raises(TypeError):
        base.backward.append_backward(loss=avg_loss, callbacks=lambda block, context: None)
    other = paddle.static.data(name="test", shape=[None, 9], dtype="float32")
    for kw in ("parameter_list", "no_grad_set"):
        with pytest.raises(TypeError):
            paddle.optimizer.SGD(learning_rate=0.1).minimize(avg_loss, **{kw: "test"})
        with pytest.raises(TypeError):
            paddle.optimizer.SGD(learning_rate=0.1).minimize(avg_loss, **{kw: [other, "test", 3]})


def test_gradients_with_optimizer_lists_paddles_grad_ops(static_mode):
    main, startup = base.Program(), base.Program()
    with base.program_guard(main, startup):
        img = static.data(name="image", shape=[None, 8])
        paddle.mean(static.nn.fc(x=img, size=3, activation="relu"))
        opt = paddle.optimizer.Momentum(learning_rate=0.01, momentum=0.9)
        forward = [o.type for o in main.current_block().ops]
        optimize_ops, params_grads = paddle.autograd.backward_mode.gradients_with_optimizer(main, opt)
        optimized = [o.type for o in main.current_block().ops]
    assert forward == ["mul", "elementwise_add", "relu", "reduce_mean"]
    assert len(optimized) > len(forward) and opt.type in optimized
    backward = [t + "_grad" for t in reversed(forward)]
    start = optimized.index(backward[0], len(backward))
    assert optimized[start : start + len(backward)] == backward
    assert sorted(p.name for p, _ in params_grads) == ["fc_0.b_0", "fc_0.w_0"]
    assert [op.type for op in optimize_ops] == ["momentum", "momentum"]


def test_backward_through_a_stopped_reshaped_feed(static_mode):
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        gt = paddle.static.data(name="gt", shape=[4], dtype="float32")
        x = paddle.static.data(name="x", shape=[2], dtype="float32")
        gt.stop_gradient = True
        x.stop_gradient = False
        gt = gt.reshape([4, 1]).reshape([4])
        loss = F.binary_cross_entropy(x, gt[:2]) + (gt[2:4] * x).sum()
        (gx,) = paddle.base.backward.gradients(loss, [x])
        exe = paddle.static.Executor()
        exe.run(startup)
        out, g = exe.run(main, feed={"gt": np.array([1.0, 1.0, 0.0, 0.0], "float32"),
                                     "x": np.array([0.5, 0.5], "float32")}, fetch_list=[loss, gx])
    np.testing.assert_allclose(out, np.log(2.0), rtol=1e-6)
    np.testing.assert_allclose(g, [-1.0, -1.0], rtol=1e-6)  # -1 / (2 * 0.5) each
