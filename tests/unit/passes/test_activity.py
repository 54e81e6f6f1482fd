"""Activity analysis (`passes/activity.py`), shared by the autodiff pass and eager
autograd: which ops lie on a path from the inputs to the targets."""

from __future__ import annotations

import numpy as np
import pytest

import pullback as paddle
from pullback.dialects import pd
from pullback.frontend import autograd
from pullback.passes import activity


@pytest.fixture
def program():
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), paddle.utils.unique_name.guard():
        yield main
    paddle.disable_static()


def _types(ops):
    return [op.name for op in ops]


def test_only_ops_between_inputs_and_targets_are_active(program):
    x = paddle.static.data("x", [2, 3], "float32")
    w = paddle.static.data("w", [3, 3], "float32")
    h = paddle.matmul(x, w)  # on the path
    side = paddle.exp(x)  # depends on no input: not varied
    y = paddle.tanh(h) + side  # on the path
    unused = paddle.sqrt(h)  # varied, but no target uses it
    idx = paddle.cast(h, "int32")  # integers carry gradients (as in Paddle); no target uses it
    mask = paddle.greater_than(h, unused)  # a non-differentiable op
    loss = paddle.mean(y)
    ops = [op for op in program.global_block().ir.ops if not isinstance(op, pd.DataOp)]
    result = activity.analyze(ops, [loss.value], [w.value])
    assert _types(result.active) == ["pd.matmul", "pd.tanh", "pd.elementwise_add", "pd.mean"]
    assert h.value in result.varied and unused.value in result.varied
    assert side.value not in result.varied and idx.value in result.varied
    assert mask.value not in result.varied
    assert all(op.results[0] is not unused.value for op in result.active)


def test_no_grad_names_cut_the_path(program):
    x = paddle.static.data("x", [2, 3], "float32")
    h = paddle.tanh(x)
    loss = paddle.mean(paddle.exp(h))
    ops = [op for op in program.global_block().ir.ops if not isinstance(op, pd.DataOp)]
    full = activity.analyze(ops, [loss.value], [x.value])
    cut = activity.analyze(ops, [loss.value], [x.value], no_grad={h.name})
    assert _types(full.active) == ["pd.tanh", "pd.exp", "pd.mean"]
    assert cut.active == [] and h.value not in cut.varied


def test_eager_backward_frees_exactly_the_active_nodes():
    """Eager autograd frees the nodes the shared analysis finds active: a node
    upstream of an intermediate input (`paddle.grad(y, h)`) keeps its saved values."""
    paddle.disable_static()
    x = paddle.to_tensor(np.ones([2, 2], np.float32), stop_gradient=False)
    h = paddle.exp(x)
    y = paddle.mean(paddle.tanh(h))
    (g,) = paddle.grad(y, h)
    assert g.shape == [2, 2]
    (gx,) = paddle.grad(paddle.mean(h), x)  # exp's node was not freed
    np.testing.assert_allclose(gx.numpy(), np.exp(np.ones([2, 2])) / 4, rtol=1e-6)
    with pytest.raises(RuntimeError):
        paddle.grad(y, h)  # tanh and mean were freed
    assert autograd.cache_info()["size"] >= 1
