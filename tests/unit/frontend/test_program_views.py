"""Programs as Paddle code inspects them: `block.ops` operator views (type, slots,
attributes), `block.var`/`vars`, `num_blocks`, `clone(for_test=True)`, and the
fetch-list forms `Executor.run` accepts; variables declared with `create_var` and
defined by `append_op` (Paddle 1.x's way of building a program)."""

from __future__ import annotations

import numpy as np
import pullback as paddle
import pytest
from pullback import base
from pullback.frontend.operator import slot_name


@pytest.fixture(autouse=True)
def programs(static_programs):
    """Fresh static programs, names and scope (`conftest.static_programs`)."""
    return static_programs


def _net(dropout: bool = False):
    x = paddle.static.data("x", [None, 4], "float32")
    y = paddle.static.data("y", [None, 1], "float32")
    h = paddle.static.nn.fc(x, 3, activation="relu")
    if dropout:
        h = paddle.nn.functional.dropout(h, p=0.5)
    pred = paddle.static.nn.fc(h, 1)
    return x, y, paddle.mean(paddle.nn.functional.square_error_cost(pred, y))


def test_slot_names_follow_paddle():
    assert slot_name("param") == "Param"
    assert slot_name("beta1_pow") == "Beta1Pow"
    assert slot_name("param_out") == "ParamOut"
    assert slot_name("xs", variadic=True) == "X"


def test_forward_ops_have_paddle_types_slots_and_attrs(programs):
    main, _ = programs
    _, _, loss = _net()
    ops = main.global_block().ops
    types = [op.type for op in ops]
    assert "data" not in types and "parameter" not in types  # variables, not operators
    # Paddle's types: static fc multiplies with `mul`, paddle.mean is `reduce_mean`.
    assert types[:2] == ["mul", "elementwise_add"]
    assert "relu" in types and types[-1] == "reduce_mean"
    add = next(op for op in ops if op.type == "elementwise_add")
    assert add.input_names == ["X", "Y"] and add.output_names == ["Out"]
    assert add.input("Y") == ["fc_0.b_0"] and add.output("Out") == ["fc_0.tmp_1"]
    assert add.input_arg_names == ["fc_0.tmp_0", "fc_0.b_0"]
    assert add.has_attr("axis") and add.attr("axis") == 1 and not add.has_attr("scale")
    assert add.desc.type() == "elementwise_add" and add.desc.input("X") == ["fc_0.tmp_0"]
    assert loss.op.type == "reduce_mean" and loss.op.output("Out") == [loss.name]
    assert main.global_block().ops[add.idx] == add
    with pytest.raises(ValueError, match="no input slot 'Z'"):
        add.input("Z")
    with pytest.raises(ValueError, match="no attribute 'scale'"):
        add.attr("scale")


def test_minimize_lists_gradient_and_update_ops(programs):
    main, _ = programs
    _, _, loss = _net()
    paddle.optimizer.SGD(learning_rate=0.1).minimize(loss)
    types = [op.type for op in main.global_block().ops]
    assert "backward" not in types  # the region's gradient ops are listed instead
    assert types.count("sgd") == 4
    first_sgd = types.index("sgd")
    # Paddle's gradient operators, one per forward op in reverse order (the seed
    # fill first, then the `<type>_grad` ops), whatever pd ops implement them.
    forward = types[: types.index("reduce_mean") + 1]
    grads = types[len(forward) + 1 : first_sgd]
    assert types[len(forward)] == "fill_any_like"
    assert grads == [t + "_grad" for t in reversed(forward)]
    last = first_sgd - 1  # the first fc's mul_grad: x is a feed, so only Y@GRAD
    mul_grad = main.global_block().ops[last]
    assert mul_grad.input("X") == ["x"] and mul_grad.input("Y") == ["fc_0.w_0"]
    assert mul_grad.output_names == ["Y@GRAD"] and mul_grad.output("Y@GRAD") == ["fc_0.w_0@GRAD"]
    assert mul_grad.input_names == ["X", "Y", "Out@GRAD"]
    assert mul_grad.attr("transpose_y") is False and mul_grad.idx == last
    # Updates in parameter-name order (Paddle sorts them): fc_0.b_0 comes first.
    sgd = next(op for op in main.global_block().ops if op.type == "sgd")
    assert sgd.input("Param") == ["fc_0.b_0"] and sgd.input("Grad") == ["fc_0.b_0@GRAD"]
    assert sgd.input("LearningRate") == ["learning_rate_0"] and sgd.output("ParamOut") == ["fc_0.b_0"]
    assert main.num_blocks == 1 and main.current_block() is main.global_block()


def test_block_var_and_vars(programs):
    main, _ = programs
    x, _, loss = _net()
    block = main.global_block()
    assert block.var("x") is x and block.var(loss.name) is loss
    assert {"x", "y", "fc_0.w_0", "fc_0.b_0", loss.name} <= set(block.vars)
    with pytest.raises(ValueError, match="var nope is not in this block"):
        block.var("nope")


def test_clone_for_test_drops_training_and_sets_is_test(programs):
    main, startup = programs
    _, _, loss = _net(dropout=True)
    test_prog = main.clone(for_test=True)
    paddle.optimizer.Momentum(learning_rate=0.1, momentum=0.9).minimize(loss)
    after = main.clone(for_test=True)
    for prog in (test_prog, after):
        types = [op.type for op in prog.global_block().ops]
        assert "momentum" not in types and "backward" not in types
        (drop,) = [op for op in prog.global_block().ops if op.type == "dropout"]
        assert drop.attr("is_test") is True
    drop = next(op for op in main.global_block().ops if op.type == "dropout")
    assert drop.attr("is_test") is False  # the training program is left alone
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    exe.run(startup)
    scope = paddle.static.global_scope()
    w = scope["fc_0.w_0"].copy()
    feed = {"x": np.ones((2, 4), np.float32), "y": np.zeros((2, 1), np.float32)}
    (a,) = exe.run(after, feed=feed, fetch_list=[loss])
    (b,) = exe.run(after, feed=feed, fetch_list=[loss.name])
    np.testing.assert_array_equal(scope["fc_0.w_0"], w)  # no update ran
    np.testing.assert_array_equal(a, b)  # and dropout is deterministic in test mode


def test_fetch_list_accepts_lists_of_variables_and_names(programs):
    main, startup = programs
    _, _, loss = _net()
    grads = paddle.static.gradients([loss], [main.global_block().var("fc_0.w_0"),
                                             main.global_block().var("fc_0.b_0")])
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    exe.run(startup)
    feed = {"x": np.ones((2, 4), np.float32), "y": np.zeros((2, 1), np.float32)}
    out = exe.run(main, feed=feed, fetch_list=[loss, grads])
    assert len(out) == 3 and out[1].shape == (4, 3) and out[2].shape == (3,)
    names = exe.run(main, feed=feed, fetch_list=[loss.name, ("fc_0.w_0@GRAD",)])
    np.testing.assert_allclose(names[1], out[1])
    (t,) = exe.run(main, feed=feed, fetch_list=loss, return_numpy=False)
    np.testing.assert_allclose(np.array(t), out[0])
    with pytest.raises(TypeError, match=r"must be Variables or names: fetch_list\[1\]\[0\] is a int"):
        exe.run(main, feed=feed, fetch_list=[loss, [3]])


# ------------------------------------------------ test/legacy_test/test_optimizer.py
# Ported from Paddle's own tests (the source is cited in each heading): the kind of
# program the Paddle test runs, through the public API only, written as a Paddle
# user writes it; expected values from numpy or from the values the Paddle test asserts.


def test_declared_variables_follow_their_definition(static_mode):
    block = base.default_main_program().global_block()
    out = block.create_var(name="out", shape=[2], dtype="float32")
    assert out.name == "out" and out.shape == [2] and out.dtype == "float32"
    x = block.create_var(name="x", shape=[-1, 2], dtype=paddle.float32)
    block.append_op(type="scale", inputs={"X": x}, outputs={"Out": out}, attrs={"scale": 3.0})
    assert out.op.type == "scale" and out.shape == [-1, 2]  # now the scale's result
    assert block.create_var(name="out") .name == "out"
    exe = base.Executor(base.CPUPlace())
    (got,) = exe.run(feed={"x": np.ones([1, 2], "float32")}, fetch_list=[out])
    np.testing.assert_array_equal(got, [[3.0, 3.0]])
    with pytest.raises(ValueError, match="x_num_col_dims=1"):
        block.append_op(type="mul", inputs={"X": x, "Y": x}, outputs={"Out": out}, attrs={"x_num_col_dims": 2})
    with pytest.raises(TypeError, match="create_var"):
        block.create_var(name="bad", shape=[1], dtype="float8_e5m2")
