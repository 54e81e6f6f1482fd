"""append_backward / gradients / calc_gradient: the seed documents' contract.

Values are checked against closed-form gradients (linear regression, x**3) and the
seeds' documented outputs; errors by type and message fragment.
"""

from __future__ import annotations

import numpy as np
import pytest

import pullback as paddle
import pullback.nn.functional as F
from pullback import fluid


@pytest.fixture(autouse=True)
def static_mode():
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


def test_fit_a_line_gradients_match_closed_form(static_mode):
    main, startup = static_mode
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


def test_append_backward_twice_never_clashes(static_mode):
    main, startup = static_mode
    _, _, _, avg_loss = _fit_a_line()
    pg1 = fluid.backward.append_backward(loss=avg_loss)
    pg2 = fluid.backward.append_backward(loss=avg_loss)
    assert _pairs(pg1) == _pairs(pg2)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    feed = {"x": np.ones((4, 13), "float32"), "y": np.zeros((4, 1), "float32")}
    g1, g2 = exe.run(main, feed=feed, fetch_list=[pg1[0][1], pg2[0][1]])
    np.testing.assert_allclose(g1, g2)


def test_non_scalar_loss_is_gradient_of_its_sum(static_mode):
    main, startup = static_mode
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


def test_callbacks_type_checked_and_called_per_grad_op(static_mode):
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


def test_callbacks_report_paddle_operator_types_of_2x_apis(static_mode):
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


def test_callback_clipping_takes_effect(static_mode):
    main, startup = static_mode
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


def test_target_gradients_seed_the_targets(static_mode):
    main, startup = static_mode
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


def test_third_derivative_of_cube(static_mode):
    main, startup = static_mode
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


def test_sgd_minimize_trains_fit_a_line(static_mode):
    main, startup = static_mode
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
def test_gradients_of_an_integer_target(static_mode, backend):
    """As in Paddle: an integer target is seeded with integer ones; the gradient
    flows through `cast` (cast back: float) and integer arithmetic (integer)."""
    main, _ = static_mode
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


def test_comparisons_still_carry_no_gradient(static_mode):
    x = paddle.static.data("x", [3], "float32")
    x.stop_gradient = False
    mask = paddle.cast(paddle.greater_than(x, paddle.zeros([3])), "float32")
    assert paddle.static.gradients(mask, x) == [None]
