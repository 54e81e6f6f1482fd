"""`paddle.static.py_func` and `paddle.static.Print`: host callbacks as ops.
py_func's values and its Python backward are checked against the built-in op they
imitate (and the backward against float64 finite differences through the
interpreter); Print's output layout, `first_n`, `summarize` and phases."""

from __future__ import annotations

import warnings

import numpy as np
import pullback as paddle
import pytest
from pullback.frontend import core
from pullback.testing import fd_grad


@pytest.fixture(autouse=True)
def static():
    core.enable_static()
    yield
    core.disable_static()


def _tanh(x):
    return np.tanh(np.array(x))


def _tanh_grad(y, dy):
    return np.array(dy) * (1 - np.square(np.array(y)))


def _net(act: str):
    main, start = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, start):
        x = paddle.static.data("x", [None, 3], "float64")
        x.stop_gradient = False
        w = paddle.static.create_parameter([3, 4], "float64",
                                           default_initializer=paddle.nn.initializer.Constant(0.25))
        h = paddle.matmul(x, w)
        if act == "py_func":
            out = main.current_block().create_var(name="act_out", dtype="float64", shape=[-1, 4])
            o = paddle.static.py_func(_tanh, h, out, backward_func=_tanh_grad, skip_vars_in_backward_input=h)
            assert o is out
        else:
            o = paddle.tanh(h)
        loss = paddle.mean(o * o)
        gx, gw = paddle.static.gradients(loss, [x, w])
    return main, start, loss, gx, gw


def test_py_func_forward_and_python_backward_match_the_builtin_op():
    xv = np.random.default_rng(0).standard_normal((5, 3))
    got = {}
    for act in ("py_func", "tanh"):
        main, start, loss, gx, gw = _net(act)
        exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
        exe.run(start)
        got[act] = exe.run(main, feed={"x": xv}, fetch_list=[loss, gx, gw])
    for a, b in zip(got["py_func"], got["tanh"]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    # The default (compiled) executor runs such a program on the interpreter (and
    # warns once that it does).
    main, start, loss, gx, gw = _net("py_func")
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(start)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        again = exe.run(main, feed={"x": xv}, fetch_list=[loss, gx, gw])
    for a, b in zip(again, got["tanh"]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_py_func_backward_against_finite_differences():
    xv = np.random.default_rng(1).standard_normal((2, 3))
    main, start, loss, gx, _ = _net("py_func")
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    exe.run(start)
    (g,) = exe.run(main, feed={"x": xv}, fetch_list=[gx])
    fd = fd_grad(lambda x: exe.run(main, feed={"x": x}, fetch_list=[loss])[0], xv)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-9)


def test_py_func_without_backward_several_outputs_side_effects_and_errors():
    calls = []
    main, start = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, start):
        x = paddle.static.data("x", [2, 2], "float32")
        x.stop_gradient = False
        block = main.current_block()
        a = block.create_var(name="a", dtype="float32", shape=[2, 2])
        n = block.create_var(name="n", dtype="int64", shape=[1])
        outs = paddle.static.py_func(lambda v: (np.array(v) * 3, np.array([np.array(v).size])), x, [a, n])
        assert outs == [a, n]
        paddle.static.py_func(lambda v: calls.append(float(np.array(v).sum())), x, None)
        (g,) = paddle.static.gradients(paddle.sum(a), [x])
    assert g is None  # no backward function: no gradient, as in Paddle
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    va, vn = exe.run(main, feed={"x": np.ones((2, 2), np.float32)}, fetch_list=[a, n])
    np.testing.assert_array_equal(va, np.full((2, 2), 3.0, np.float32))
    assert vn.dtype == np.int64 and vn.tolist() == [4]
    assert calls == [4.0]  # the side-effect op ran although nothing reads it
    wrong, start = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(wrong, start):
        x = paddle.static.data("x", [2, 2], "float32")
        bad_out = wrong.current_block().create_var(name="bad", dtype="float32", shape=[3])
        bad = paddle.static.py_func(lambda v: np.zeros(2), x, bad_out)
    with pytest.raises(Exception, match=r"py_func: '<lambda>' returned shape \[2\] for output #0, declared \[3\]"):
        exe.run(wrong, feed={"x": np.ones((2, 2), np.float32)}, fetch_list=[bad])
    core.disable_static()
    with pytest.raises(RuntimeError, match="py_func: only available in static mode"):
        paddle.static.py_func(_tanh, paddle.ones([2]), None)


def _print_program(**kwargs):
    main, start = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, start):
        x = paddle.static.data("x", [2, 3], "float32")
        x.stop_gradient = False
        p = paddle.static.Print(x, **kwargs)
        (g,) = paddle.static.gradients(paddle.sum(p * 2), [x])
    return main, p, g


def test_print_layout_phases_first_n_and_summarize(capsys):
    main, p, g = _print_program(message="x is", summarize=4, first_n=2)
    exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    xv = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
    for _ in range(3):
        out, grad = exe.run(main, feed={"x": xv}, fetch_list=[p, g])
    np.testing.assert_array_equal(out, xv)  # passes x through
    np.testing.assert_array_equal(grad, np.full((2, 3), 2.0, np.float32))  # and its gradient
    text = capsys.readouterr().out
    assert text.count("Variable: x\n") == 2  # first_n
    assert text.count("Variable: x@GRAD\n") == 2  # print_phase='both' prints the gradient too
    assert ("Variable: x\n  - message: x is\n  - lod: {}\n  - place: Place(cpu)\n  - shape: [2, 3]\n"
            "  - layout: NCHW\n  - dtype: float32\n  - data: [0 0.25 0.5 0.75]\n") in text
    main, p, g = _print_program(print_phase="forward", print_tensor_lod=False, summarize=-1)
    exe.run(main, feed={"x": xv}, fetch_list=[g])
    text = capsys.readouterr().out
    assert "@GRAD" not in text and "lod" not in text and "data: [0 0.25 0.5 0.75 1 1.25]" in text
    main, p, g = _print_program(print_phase="backward")
    exe.run(main, feed={"x": xv}, fetch_list=[g])
    text = capsys.readouterr().out
    assert "Variable: x@GRAD" in text and "Variable: x\n" not in text
    with pytest.raises(ValueError, match="Print: print_phase must be one of"):
        _print_program(print_phase="sometimes")


def test_print_falls_back_to_the_interpreter_on_the_default_executor(capsys):
    main, p, g = _print_program(first_n=1)
    exe = paddle.static.Executor(paddle.CPUPlace())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, = exe.run(main, feed={"x": np.ones((2, 3), np.float32)}, fetch_list=[p])
    np.testing.assert_array_equal(out, np.ones((2, 3), np.float32))
    assert "Variable: x\n" in capsys.readouterr().out
