"""Native lowering of batch_norm, arg_max/arg_min/top_k and accuracy: the compiled
backend agrees with the interpreter (values, gradients, running-statistics updates)
and runs without falling back (a fallback warning is an error here)."""

from __future__ import annotations

import warnings

import numpy as np
import pullback as paddle
import pytest
from pullback.frontend import core, unique_name
from pullback.frontend.framework import Program, program_guard

RNG = np.random.default_rng(17)


@pytest.fixture
def static_mode():
    core.enable_static()
    try:
        yield
    finally:
        core.disable_static()


def _run_both(main, startup, feed, fetches, scope_names=()):
    """Fetched values and scope entries after one run on each backend."""
    got = {}
    for backend in ("interpreter", "compiled"):
        scope = paddle.static.Scope()
        exe = paddle.static.Executor(paddle.CPUPlace(), backend=backend)
        with paddle.static.scope_guard(scope), warnings.catch_warnings():
            warnings.simplefilter("error")  # no interpreter fallback
            if startup is not None:
                paddle.seed(0)
                exe.run(startup)
            outs = exe.run(main, feed=feed, fetch_list=fetches)
            outs += [np.array(scope[n]) for n in scope_names]
        got[backend] = outs
    return got["interpreter"], got["compiled"]


@pytest.mark.parametrize("shape,layout,mode,dtype", [
    ((4, 3, 5, 5), "NCHW", {}, "float32"),
    ((4, 3, 5, 5), "NCHW", {}, "float64"),
    ((4, 5, 5, 3), "NHWC", {}, "float32"),
    ((6, 3), "NCHW", {}, "float32"),
    ((4, 3, 5, 5), "NCHW", {"is_test": True}, "float32"),
    ((4, 3, 2, 2), "NCHW", {"use_global_stats": True}, "float64"),
    ((1, 3), "NCHW", {}, "float32"),  # one value per channel at run time: y = x
])
def test_batch_norm_and_its_gradient_agree(static_mode, shape, layout, mode, dtype):
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data("x", [-1, *shape[1:]], dtype)
        x.stop_gradient = False
        y = paddle.static.nn.batch_norm(x * 2.0, data_layout=layout, momentum=0.7, **mode)
        loss = paddle.mean(y * y)
        (gx,) = paddle.static.gradients([loss], [x])
    xv = RNG.standard_normal(shape).astype(dtype)
    tol = 1e-4 if dtype == "float32" else 1e-10
    want, got = _run_both(main, startup, {"x": xv}, [y, gx], ["batch_norm_0.w_1", "batch_norm_0.w_2"])
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def test_batch_norm_training_step_updates_like_the_interpreter(static_mode):
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data("x", [-1, 2, 6, 6], "float32")
        label = paddle.static.data("label", [-1, 1], "int64")
        h = paddle.static.nn.conv2d(x, 4, 3, padding=1, bias_attr=False)
        h = paddle.nn.functional.relu(paddle.static.nn.batch_norm(h))
        logits = paddle.static.nn.fc(paddle.flatten(h, 1), 3)
        loss = paddle.mean(paddle.nn.functional.cross_entropy(logits, label))
        paddle.optimizer.Momentum(0.1, momentum=0.9).minimize(loss)
    feed = {"x": RNG.standard_normal((5, 2, 6, 6)).astype(np.float32),
            "label": RNG.integers(0, 3, (5, 1))}
    names = ["batch_norm_0.w_0", "batch_norm_0.b_0", "batch_norm_0.w_1", "batch_norm_0.w_2", "conv2d_0.w_0"]
    want, got = _run_both(main, startup, feed, [loss], names)
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5)


def test_searches_and_accuracy_agree(static_mode):
    main = Program()
    with program_guard(main, Program()), unique_name.guard():
        x = paddle.static.data("x", [-1, 7], "float32")
        z = paddle.static.data("z", [3, 4, 5], "float64")
        lab = paddle.static.data("l", [-1, 1], "int64")
        outs = [paddle.argmax(x, axis=1), paddle.argmin(x, axis=0, keepdim=True), paddle.argmax(x),
                paddle.argmin(z, axis=1, dtype="int32"), *paddle.topk(x, 3),
                *paddle.topk(z, 2, axis=1, largest=False), *paddle.topk(z, 5, axis=2),
                paddle.static.accuracy(x, lab), paddle.static.accuracy(x, lab, k=3)]
    xv = RNG.standard_normal((6, 7)).astype(np.float32)
    xv[1, 3] = xv[1, 5]  # a tie: the lower index first
    xv[2, 0] = np.nan  # argmax/argmin pick the first NaN; sorting puts NaNs last
    zv = np.round(RNG.standard_normal((3, 4, 5)), 1)  # many ties
    feed = {"x": xv, "z": zv, "l": RNG.integers(0, 7, (6, 1))}
    want, got = _run_both(main, None, feed, outs)
    for i, (w, g) in enumerate(zip(want, got)):
        assert w.dtype == g.dtype and w.shape == g.shape, i
        np.testing.assert_array_equal(g, w, err_msg=f"fetch #{i}")


def test_top_k_gradient_agrees(static_mode):
    main = Program()
    with program_guard(main, Program()), unique_name.guard():
        x = paddle.static.data("x", [-1, 6], "float32")
        x.stop_gradient = False
        v, _ = paddle.topk(x, 2)
        (gx,) = paddle.static.gradients([paddle.sum(v * v)], [x])
    want, got = _run_both(main, None, {"x": RNG.standard_normal((4, 6)).astype(np.float32)}, [gx])
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    assert (np.count_nonzero(got[0], axis=1) == 2).all()


def test_one_channel_major_copy_serves_both_convolution_gradients(static_mode):
    """A convolution's output gradient feeds its filter gradient and its input
    gradient, both of which read it channel-major: the lowering makes that
    transposed copy (with the gradient's elementwise producers fused in) once, and
    both backends agree on every gradient."""
    from pullback.lowering.convert_pd_to_linalg import build_entry
    from pullback.runtime.executor import resolve_fetch
    from xdsl.dialects.linalg.ops import GenericOp

    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data("x", [2, 3, 6, 6], "float32")
        x.stop_gradient = False
        conv = paddle.nn.Conv2D(3, 4, 3, padding=1)
        y = paddle.nn.functional.relu(conv(x))
        loss = paddle.mean(y * y)
        grads = paddle.static.gradients([loss], [x, conv.weight])
    feed = {"x": RNG.standard_normal((2, 3, 6, 6)).astype(np.float32)}
    interpreted, compiled = _run_both(main, startup, feed, [loss, *grads])
    for a, b in zip(interpreted, compiled):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)

    exe = paddle.static.Executor(paddle.CPUPlace(), backend="interpreter")
    entry = exe._prepared(main, [resolve_fetch(main, g) for g in grads])
    fn, _ = build_entry(entry.module, list(entry.fetches), entry="step", only_given_fetches=True)
    swaps = [op for op in fn.walk() if isinstance(op, GenericOp)
             and any(str(m.data) == "(d0, d1, d2, d3) -> (d1, d0, d2, d3)" for m in op.indexing_maps.data)]
    assert len(swaps) == 1  # the output gradient, channel-major, once
