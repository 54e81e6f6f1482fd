"""Paddle's own unit tests for building gradients, ported: each test below runs the
kind of program one of Paddle's tests runs (the source is cited above it), through
the public API only, written as a Paddle user writes it (`import pullback as paddle`
standing for `import paddle`).  Internal helpers those tests also poke at (C++ op
descs, `_find_op_path_`, PIR-only APIs) are left out.  Expected values come from
numpy or from the values the Paddle tests assert."""

from __future__ import annotations

import contextlib

import numpy as np
import pullback as paddle
import pullback.nn.functional as F
import pytest
from pullback import base, static
from pullback.base.backward import calc_gradient
from pullback.base.wrapped_decorator import wrap_decorator
from pullback.frontend import core

RNG = np.random.default_rng(7)


# --------------------------------------------- test/legacy_test/test_calc_gradient.py


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


# ------------------------------------------ test/legacy_test/test_custom_grad_input.py


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_backward_with_custom_seeds(dynamic_mode, dtype):
    import pullback.base.dygraph as dg

    x = RNG.random([2, 5]).astype(dtype)
    y = RNG.random([5, 2]).astype(dtype)
    grad = RNG.random([2, 2]).astype(dtype)
    with dg.guard(paddle.CPUPlace()):
        xt = paddle.to_tensor(x, stop_gradient=False)
        paddle.matmul(xt, paddle.to_tensor(y)).backward(paddle.to_tensor(grad))
        np.testing.assert_allclose(xt.grad.numpy(), grad @ y.T, rtol=1e-5)

        xt = paddle.to_tensor(x, stop_gradient=False)
        z1, z2 = paddle.matmul(xt, paddle.to_tensor(y)), paddle.matmul(xt, paddle.to_tensor(y))
        g = paddle.to_tensor(grad)
        paddle.autograd.backward([z1, z2], [g, g], True)
        np.testing.assert_allclose(xt.grad.numpy(), 2 * grad @ y.T, rtol=1e-5)

        xt = paddle.to_tensor(x, stop_gradient=False)
        paddle.autograd.backward(paddle.matmul(xt, paddle.to_tensor(y)), None)
        np.testing.assert_allclose(xt.grad.numpy(), np.ones([2, 2]) @ y.T, rtol=1e-5)

        v = RNG.random([4]).astype(dtype)
        y_grad, z_grad = RNG.random([4]).astype(dtype), RNG.random([4]).astype(dtype)
        vt = paddle.to_tensor(v, stop_gradient=False)
        yt = vt**2
        zt = yt**3
        paddle.autograd.backward([yt, zt], [paddle.to_tensor(y_grad), paddle.to_tensor(z_grad)])
        np.testing.assert_allclose(vt.grad.numpy(), 2 * v * (y_grad + 3 * v**4 * z_grad), rtol=1e-5)


# --------------------------------------------- test/legacy_test/test_gradient_clip.py


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


# ----------------------------------------- test/legacy_test/test_imperative_auto_prune.py


class _TwoLinears(paddle.nn.Layer):
    def __init__(self, stop_second: bool) -> None:
        super().__init__()
        const = paddle.ParamAttr(initializer=paddle.nn.initializer.Constant(value=2))
        self.linear1 = paddle.nn.Linear(5, 5, weight_attr=const, bias_attr=False)
        self.linear2 = paddle.nn.Linear(5, 5, weight_attr=const, bias_attr=False)
        self.stop_second = stop_second

    def forward(self, x, y):
        b = self.linear2(y)
        if self.stop_second:
            b.stop_gradient = True
        return paddle.mean(paddle.matmul(self.linear1(x), b))


@pytest.mark.parametrize("stop_second", [False, True])
def test_auto_prune_stop_gradient_branch(dynamic_mode, stop_second):
    model = _TwoLinears(stop_second)
    v = paddle.to_tensor(np.arange(25).reshape(5, 5).astype("float32"))
    model(v, v).backward()
    assert model.linear1.weight._grad_ivar() is not None
    assert (model.linear2.weight._grad_ivar() is None) == stop_second


def test_auto_prune_unused_split_part_gets_zeros(dynamic_mode):
    linear = paddle.nn.Linear(6, 4)
    feature = linear(paddle.to_tensor(np.arange(6).reshape(1, 6).astype("float32")))
    part1, part2 = paddle.split(feature, num_or_sections=[2, 2], axis=1)
    part2.retain_grads()
    paddle.mean(part1).backward()
    assert linear.weight._grad_ivar() is not None and (part2.gradient() == 0).all()
    linear.clear_gradients()
    part2 = paddle.split(linear(paddle.ones([1, 6])), num_or_sections=[2, 2], axis=1)[1]
    part2.retain_grads()
    part2.backward()
    assert (part2.gradient() == 1).all()


@pytest.mark.parametrize("sort_sum_gradient", [False, True])
def test_auto_prune_stopped_concat_input(dynamic_mode, sort_sum_gradient):
    linear, linear2 = paddle.nn.Linear(13, 5), paddle.nn.Linear(3, 3)
    out1 = linear(paddle.to_tensor(np.arange(26).reshape(2, 13).astype("float32")))
    out2 = linear2(paddle.to_tensor(np.arange(6).reshape(2, 3).astype("float32")))
    out1.stop_gradient = True
    out = paddle.concat([out1, out2, paddle.ones([2, 5])], axis=1)
    base.set_flags({"FLAGS_sort_sum_gradient": sort_sum_gradient})
    out.backward()
    assert linear.weight.gradient() is None and out1.gradient() is None
    assert linear2.weight.gradient() is not None


@pytest.mark.parametrize("stop", ["weight", "output"])
def test_auto_prune_minimize_leaves_stopped_parameters(dynamic_mode, stop):
    linear, linear2 = paddle.nn.Linear(13, 5), paddle.nn.Linear(5, 3)
    out1 = linear(paddle.to_tensor(np.arange(26).reshape(2, 13).astype("float32")))
    w1, w2 = linear.weight.numpy(), linear2.weight.numpy()
    out2 = linear2(out1)
    if stop == "weight":
        linear2.weight.stop_gradient = True
    else:
        out2.stop_gradient = True
    out2.backward()
    paddle.optimizer.SGD(learning_rate=0.003,
                         parameters=linear.parameters() + linear2.parameters()).minimize(out2)
    np.testing.assert_array_equal(w2, linear2.weight.numpy())
    assert np.array_equal(w1, linear.weight.numpy()) == (stop == "output")


def test_auto_prune_with_optimizer_and_unused_layers(dynamic_mode):
    embed0, embed1 = paddle.nn.Embedding(10, 4), paddle.nn.Embedding(10, 4)
    linear0, linear1 = paddle.nn.Linear(4, 4), paddle.nn.Linear(4, 4)
    params = embed0.parameters() + embed1.parameters() + linear0.parameters() + linear1.parameters()
    opt = paddle.optimizer.Adam(0.001, parameters=params, grad_clip=paddle.nn.ClipGradByGlobalNorm(0.001))
    indices = paddle.to_tensor(RNG.integers(0, 10, (6, 1)).astype("int64"))
    paddle.mean(linear0(paddle.ones([6, 4])) + linear1(paddle.ones([6, 4])))  # built, never backwarded
    loss = paddle.mean(linear0(embed0(indices)))
    loss.backward()
    _, params_grads = opt.minimize(loss)
    names = {p.name for p, _ in params_grads}
    assert embed1.weight.name not in names and linear1.weight.name not in names
    assert embed1.weight._grad_ivar() is None and linear1.weight._grad_ivar() is None


def test_auto_prune_no_grad_branches(dynamic_mode):
    linear = paddle.nn.Linear(1, 1)
    label = paddle.cast(paddle.cast(linear(paddle.zeros([1, 1])), "float32"), dtype="int64")  # bias 0: label 0
    paddle.mean(F.one_hot(label, 10)).backward()
    assert linear.weight._grad_ivar() is None
    out = paddle.tensor.random.gaussian(shape=[2, 3])
    paddle.mean(out).backward()
    assert out._grad_ivar() is None


# -------------------------------------- test/legacy_test/test_imperative_double_grad.py


def _dygraph_guard_(func):
    def __impl__(*args, **kwargs):
        if base.in_dygraph_mode():
            return func(*args, **kwargs)
        with base.dygraph.guard():
            return func(*args, **kwargs)

    return __impl__


dygraph_guard = wrap_decorator(_dygraph_guard_)


def _random_var(shape, low=-1.0, high=1.0):
    return paddle.to_tensor(RNG.uniform(low, high, size=shape).astype("float32"))


def _matmul_graph():
    x = paddle.to_tensor(RNG.random((3, 3)), dtype="float64", stop_gradient=False)
    y = paddle.to_tensor(RNG.random((3, 1)), dtype="float64", stop_gradient=False)
    z = paddle.to_tensor(RNG.random((3, 1)), dtype="float64", stop_gradient=False)
    F.sigmoid(z)  # z takes part in no path to out
    return x, y, z, paddle.matmul(x, y)


def test_eager_grad_results_unused_inputs_and_duplicates(dynamic_mode):
    x, y, z, out = _matmul_graph()
    (dx,) = base.dygraph.grad(out, x)
    assert dx.stop_gradient  # create_graph=False
    np.testing.assert_allclose(dx.numpy(), np.ones((3, 1)) @ y.numpy().T)
    x, y, z, out = _matmul_graph()
    dx, dz = base.dygraph.grad(out, [x, z], allow_unused=True)
    assert dz is None
    x, y, z, out = _matmul_graph()
    with pytest.raises(ValueError, match="allow_unused"):
        base.dygraph.grad(out, [x, z])
    # Paddle's test accepts a RuntimeError naming the duplicate or the gradients;
    # pullback gives the gradients: one per listed input, a repeated output counted twice.
    x, y, z, out = _matmul_graph()
    a, b = base.dygraph.grad(out, [x, x])
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    x, y, z, out = _matmul_graph()
    (twice,) = base.dygraph.grad([out, out], [x])
    np.testing.assert_allclose(twice.numpy(), 2 * np.ones((3, 1)) @ y.numpy().T)


def test_grad_of_a_hooked_interior_tensor_is_not_doubled(dynamic_mode):
    def build(hook):
        x1 = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        x2 = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
        out1, out2 = x1 * 2, x2 * 2
        if hook is not None:
            out2.register_hook(hook)
        out3 = paddle.multiply(out1, out2)
        return paddle.grad([paddle.mean(out3)], [out2, out3])

    seen = []
    hooked = build(seen.append)
    plain = build(None)
    np.testing.assert_array_equal(seen[0].numpy(), [1.0, 2.0])
    for h, p in zip(hooked, plain):
        assert h.stop_gradient == p.stop_gradient
        np.testing.assert_array_equal(h.numpy(), p.numpy())
    np.testing.assert_array_equal(plain[0].numpy(), [1.0, 2.0])
    # A hook replacing the gradient: paddle.grad returns what flows on.
    doubled = build(lambda g: g * 2)
    np.testing.assert_array_equal(doubled[0].numpy(), [2.0, 4.0])


class TestDygraphDoubleGrad:
    """Paddle's TestDygraphDoubleGrad and its sort_sum_gradient twin."""

    shape = [5, 10]

    @pytest.fixture(autouse=True, params=[False, True], ids=["unsorted", "sorted"])
    def _mode(self, request, dynamic_mode):
        self.sort_sum_gradient = request.param

    def grad(self, outputs, inputs, grad_outputs=None, no_grad_vars=None, retain_graph=None,
             create_graph=False, allow_unused=False):
        base.set_flags({"FLAGS_sort_sum_gradient": self.sort_sum_gradient})
        return base.dygraph.grad(outputs=outputs, inputs=inputs, grad_outputs=grad_outputs,
                                 no_grad_vars=no_grad_vars, retain_graph=retain_graph,
                                 create_graph=create_graph, allow_unused=allow_unused)

    @dygraph_guard
    def test_exception(self):
        r = _random_var
        for args, kwargs in [
            ((None, None), {}), ((1, r(self.shape)), {}), ((r(self.shape), 1), {}),
            (([1], [r(self.shape)]), {}), (([r(self.shape)], [1]), {}),
            (([r(self.shape), r(self.shape)], [r(self.shape)], [r(self.shape)]), {}),
            (([r(self.shape)], [r(self.shape)]), {"no_grad_vars": [1]}),
            (([r(self.shape)], [r(self.shape)]), {"no_grad_vars": 1}),
        ]:
            with pytest.raises(AssertionError):
                self.grad(*args, **kwargs)

    @dygraph_guard
    def test_simple_example(self):
        x = _random_var(self.shape)
        x.stop_gradient = False
        y = x + 1
        for create_graph in [False, True]:
            (dx,) = self.grad([x], [x], create_graph=create_graph, retain_graph=True)
            assert dx.shape == x.shape and np.all(dx.numpy() == 1) and dx.stop_gradient != create_graph
            (dx2,) = self.grad([y, x], [x], create_graph=create_graph, retain_graph=True)
            assert np.all(dx2.numpy() == 2) and dx2.stop_gradient != create_graph
            (none,) = self.grad([x], [y], create_graph=create_graph, allow_unused=True)
            assert none is None
            (g,) = self.grad([x, y], [y], create_graph=create_graph)
            assert np.all(g.numpy() == 1) and g.stop_gradient != create_graph

    @dygraph_guard
    def test_no_grad_vars_and_accumulation(self):
        x = _random_var(self.shape)
        x_np, numel = x.numpy(), x.size
        x.stop_gradient = False
        y1, y2 = F.relu(x), F.relu(x)
        w_mean = paddle.mean((y1 + y2) * (y1 + y2))
        (dx,) = self.grad([w_mean], [x], retain_graph=True, create_graph=True, no_grad_vars=[y2])
        assert not y2.stop_gradient and not dx.stop_gradient
        dx_want = (2.0 / numel * (np.maximum(x_np, 0) + y2.numpy()) * (x_np > 0)).astype("float32")
        np.testing.assert_allclose(dx.numpy(), dx_want, rtol=1e-5)
        paddle.mean(dx * dx + x * x).backward()
        want = 2.0 / numel * (x_np + dx_want * (x_np > 0) * 4 / numel)
        np.testing.assert_allclose(x.gradient(), want, rtol=1e-5)

    @dygraph_guard
    def test_seeds_are_left_alone(self):
        x = _random_var(self.shape)
        x_np = x.numpy()
        x.stop_gradient = False
        y = F.leaky_relu(x, 0.2)
        y = y * y
        z = y * y
        leaky, slope = np.maximum(x_np, 0.2 * x_np), np.where(x_np > 0, 1.0, 0.2)
        grad_y, grad_z = _random_var(y.shape, 1, 2), _random_var(z.shape, 1, 2)
        gy, gz = grad_y.numpy(), grad_z.numpy()
        for create_graph in [False, True]:
            (dx,) = self.grad([y, z], [x], grad_outputs=[grad_y, grad_z],
                              create_graph=create_graph, retain_graph=True)
            want = 2 * leaky * slope * gy + 4 * leaky**3 * slope * gz
            np.testing.assert_allclose(dx.numpy(), want, rtol=1e-5)
            assert grad_y.stop_gradient and grad_z.stop_gradient
            np.testing.assert_array_equal(grad_y.numpy(), gy)

    @dygraph_guard
    def test_accumulation_with_and_without_create_graph(self):
        for create_graph in [True, False]:
            x = _random_var(self.shape)
            x_np, numel = x.numpy(), x.size
            x.stop_gradient = False
            z = F.relu(x) + 1
            (dx,) = self.grad([paddle.mean(z * z)], [x], create_graph=create_graph)
            assert dx.stop_gradient != create_graph
            dx_want = 2.0 / numel * (np.maximum(x_np, 0) + 1) * (x_np > 0)
            np.testing.assert_allclose(dx.numpy(), dx_want, rtol=1e-5)
            loss = paddle.mean(dx * dx + x * x)
            if not create_graph:
                loss.backward()
                np.testing.assert_allclose(x.gradient(), 2.0 * x_np / numel, rtol=1e-5)
                continue
            want = 2.0 / numel * (x_np + dx_want * (x_np > 0) * 2 / numel)
            for i in range(3):
                loss.backward(retain_graph=True)
                np.testing.assert_allclose(x.gradient(), (i + 1) * want, rtol=1e-5)


def test_grad_equals_backward_for_one_model_built_twice(dynamic_mode):
    value = RNG.uniform(-0.5, 0.5, (4, 2, 5)).astype("float32")
    base.set_flags({"FLAGS_sort_sum_gradient": True})
    results = []
    for use_grad in (True, False):
        with base.dygraph.guard():
            paddle.seed(123)
            paddle.framework.random._manual_program_seed(123)
            a = paddle.to_tensor(value)
            a.stop_gradient = False
            linear = paddle.nn.Linear(5, 3)
            out = linear(a)
            for _ in range(3):
                out = out + linear(a)
            if use_grad:
                results.append(base.dygraph.grad(outputs=[out], inputs=[a], create_graph=False,
                                                 only_inputs=True, allow_unused=False)[0].numpy())
            else:
                out.backward()
                results.append(a.gradient())
    np.testing.assert_array_equal(results[0], results[1])


def test_backward_of_a_first_gradient_fills_unreached_inputs_with_zeros(dynamic_mode):
    """Paddle's TestDoubleGradBasics: x@GRAD = dout @ y^T does not depend on x, yet
    x took part (Paddle's matmul gradient node reads it) and gets a zero gradient."""
    x = paddle.to_tensor(np.full([3, 3], 2.0), stop_gradient=False, dtype="float32")
    y = paddle.to_tensor(np.full([3, 3], 2.0), stop_gradient=False, dtype="float32")
    dout = paddle.to_tensor(np.ones([3, 3]), stop_gradient=False, dtype="float32")
    out = paddle.matmul(x, y, False, False)
    new_x_g, new_y_g = paddle.grad([out], [x, y], [dout], retain_graph=True, create_graph=True)
    new_x_g.backward()
    np.testing.assert_array_equal(out.numpy(), np.full([3, 3], 12.0))
    np.testing.assert_array_equal(new_x_g.numpy(), np.full([3, 3], 6.0))
    np.testing.assert_array_equal(new_y_g.numpy(), np.full([3, 3], 6.0))
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros([3, 3]))
    np.testing.assert_array_equal(y.grad.numpy(), np.full([3, 3], 3.0))
    np.testing.assert_array_equal(dout.grad.numpy(), np.full([3, 3], 6.0))
    # paddle.grad agrees: zeros, not an "unused input" error.
    (gx,) = paddle.grad([new_y_g], [y], retain_graph=True)
    np.testing.assert_array_equal(gx.numpy(), np.zeros([3, 3]))


def test_matmul_double_grad(dynamic_mode):
    nx, ny = RNG.random([3, 3]).astype("float32"), RNG.random([3, 3]).astype("float32")
    x = paddle.to_tensor(nx, stop_gradient=False)
    y = paddle.to_tensor(ny, stop_gradient=False)
    out = paddle.matmul(x, y, False, False)
    dout = paddle.to_tensor(np.ones([3, 3]), stop_gradient=False, dtype="float32")
    dx, dy = paddle.grad([out], [x, y], [dout], retain_graph=True, create_graph=True)
    ddx = paddle.to_tensor(np.ones([3, 3]), stop_gradient=False, dtype="float32")
    gx, gy, gdout = paddle.grad([dx, dy], [x, y, dout], [ddx, ddx], retain_graph=True, create_graph=True)
    ones = np.ones([3, 3], "float32")
    np.testing.assert_allclose(gx.numpy(), ones @ ones, rtol=1e-6)
    np.testing.assert_allclose(gy.numpy(), ones @ ones, rtol=1e-6)
    np.testing.assert_allclose(gdout.numpy(), ones @ ny + nx @ ones, rtol=1e-6)


def test_vector_dot_double_grad_with_a_shape_1_seed(dynamic_mode):
    """A `[1]` grad_output of a 0-d output stays differentiable: the second grad can
    ask for the seed's own gradient."""
    nx, ny = RNG.random([3]).astype("float32"), RNG.random([3]).astype("float32")
    x = paddle.to_tensor(nx, stop_gradient=False)
    y = paddle.to_tensor(ny, stop_gradient=False)
    out = paddle.matmul(x, y, False, False)
    dout = paddle.to_tensor(np.ones([1]), stop_gradient=False, dtype="float32")
    (dy,) = paddle.grad([out], [y], [dout], retain_graph=True, create_graph=True)
    ddy = paddle.to_tensor(np.ones([3]), stop_gradient=False, dtype="float32")
    gx, gdout = paddle.grad([dy], [x, dout], [ddy], retain_graph=True, create_graph=True)
    np.testing.assert_allclose(gx.numpy(), np.ones([3]), rtol=1e-6)
    np.testing.assert_allclose(gdout.numpy().reshape(()), nx.sum(), rtol=1e-6)


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


# ------------------------------------------------ test/legacy_test/test_optimizer.py


def _legacy_mul_mean(program, lr_scale):
    """Paddle 1.x's way of building a program op by op: declared variables, raw
    operator types, a parameter with its own learning-rate scale."""
    block = program.global_block()
    mul_x = block.create_parameter(dtype="float32", shape=[5, 10], lod_level=0, name="mul.x",
                                   optimize_attr={"learning_rate": lr_scale})
    mul_y = block.create_var(dtype="float32", shape=[10, 8], lod_level=0, name="mul.y")
    mul_out = block.create_var(dtype="float32", shape=[5, 8], lod_level=0, name="mul.out")
    mean_out = block.create_var(dtype="float32", shape=[1], lod_level=0, name="mean.out")
    block.append_op(type="mul", inputs={"X": mul_x, "Y": mul_y}, outputs={"Out": mul_out},
                    attrs={"x_num_col_dims": 1})
    block.append_op(type="mean", inputs={"X": mul_out}, outputs={"Out": mean_out})
    return mul_x, mean_out


@pytest.mark.parametrize("lr_scale, want", [(1.1, ["scale", "sgd"]), (1.0, ["sgd"])])
@pytest.mark.parametrize("via_minimize", [True, False])
def test_optimizer_returns_every_op_of_its_pass(static_mode, lr_scale, want, via_minimize):
    init_program, program = base.framework.Program(), base.framework.Program()
    _, mean_out = _legacy_mul_mean(program, lr_scale)
    sgd = base.optimizer.SGDOptimizer(learning_rate=0.01)
    if via_minimize:
        opts, _ = sgd.minimize(mean_out, init_program)
    else:
        with base.framework.program_guard(program, init_program):
            opts = sgd.apply_gradients(sgd.backward(mean_out))
    assert [op.type for op in opts] == want
    assert program.global_block().ops[0].type == "mul"


@pytest.mark.parametrize("make, acc_attrs, update, n_init", [
    (lambda: base.optimizer.MomentumOptimizer(learning_rate=0.01, momentum=0.2), ["_velocity_acc_str"],
     "momentum", 2),
    (lambda: base.optimizer.MomentumOptimizer(learning_rate=0.01, momentum=0.2, use_nesterov=True),
     ["_velocity_acc_str"], "momentum", 2),
    (lambda: base.optimizer.AdagradOptimizer(learning_rate=0.01, epsilon=1e-6), ["_moment_acc_str"],
     "adagrad", 2),
    (lambda: base.optimizer.AdamOptimizer(learning_rate=0.01, beta1=0.9, beta2=0.999),
     ["_moment1_acc_str", "_moment2_acc_str"], "adam", 5),
])
def test_optimizer_accumulators_and_startup_ops(static_mode, make, acc_attrs, update, n_init):
    init_program, program = base.framework.Program(), base.framework.Program()
    mul_x, mean_out = _legacy_mul_mean(program, 1.1)
    opt = make()
    params_grads = base.backward.append_backward(mean_out)
    assert len(params_grads) == 1 and len(opt._accumulators) == 0
    with base.framework.program_guard(program, init_program):
        opts = opt.apply_gradients(params_grads)
    assert [op.type for op in opts] == ["scale", update]
    if update == "momentum":
        assert opts[-1].attr("use_nesterov") == opt._use_nesterov
    for attr in acc_attrs:
        assert list(opt._accumulators[getattr(opt, attr)]) == [mul_x.name]
    init_ops = init_program.global_block().ops
    assert len(init_ops) == n_init and all(op.type == "fill_constant" for op in init_ops)
    assert init_ops[-1].attr("value") == pytest.approx(0.01)  # the learning rate, created last
    assert init_ops[0].attr("value") == 0.0  # the first accumulator


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
        block.create_var(name="bad", shape=[1], dtype="complex64")


# ---------------------------------------------- test/legacy_test/test_lr_scheduler.py


class _PlateauReference:
    """ReduceOnPlateau by its documented rule: after more than `patience` epochs
    without improvement (relative or absolute threshold), multiply the rate by
    `factor` and wait `cooldown` epochs."""

    def __init__(self, mode, threshold_mode, factor=0.5, patience=3, threshold=1e-4, cooldown=1):
        self.mode, self.threshold_mode = mode, threshold_mode
        self.factor, self.patience, self.threshold, self.cooldown = factor, patience, threshold, cooldown
        self.best = -np.inf if mode == "max" else np.inf
        self.lr, self.wait, self.bad = 1.0, 0, 0

    def _better(self, x):
        if not np.isfinite(self.best):  # the first metric
            return True
        # Paddle's relative margin is best * threshold (signed, as documented).
        margin = self.best * self.threshold if self.threshold_mode == "rel" else self.threshold
        return x < self.best - margin if self.mode == "min" else x > self.best + margin

    def step(self, metric):
        if self.wait > 0:
            self.wait -= 1
            return self.lr
        if self._better(metric):
            self.best, self.bad = metric, 0
        else:
            self.bad += 1
            if self.bad > self.patience:
                self.wait, self.bad = self.cooldown, 0
                self.lr *= self.factor
        return self.lr


@pytest.mark.parametrize("mode, threshold_mode", [("min", "rel"), ("max", "rel"), ("min", "abs"), ("max", "abs")])
def test_reduce_on_plateau_static_and_eager(mode, threshold_mode):
    kwargs = dict(learning_rate=1.0, mode=mode, factor=0.5, patience=3, threshold=1e-4,
                  threshold_mode=threshold_mode, cooldown=1, min_lr=0, epsilon=1e-8, verbose=False)
    was_dynamic = core.in_dynamic_mode()
    paddle.enable_static()
    try:
        main, start = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, start), paddle.static.scope_guard(paddle.static.Scope()), \
                base.unique_name.guard():
            x = paddle.static.create_global_var([1], 1, "float32", persistable=True)
            paddle.increment(x)
            loss = paddle.sin(x)
            scheduler = paddle.optimizer.lr.ReduceOnPlateau(**kwargs)
            adam = paddle.optimizer.Adam(learning_rate=scheduler)
            adam.minimize(loss)  # no parameters: the rate variable exists all the same
            lr_var = adam._global_learning_rate()
            test_prog = main.clone()
            exe = paddle.static.Executor(paddle.CPUPlace())
            exe.run(start)
            ref = _PlateauReference(mode, threshold_mode)
            for prog in [main] * 12 + [test_prog] * 6:
                out, lr_now = exe.run(prog, fetch_list=[loss.name, lr_var.name])
                assert lr_now[0] == np.float32(ref.lr)  # the rate the program ran with
                want = ref.step(float(out[0]))
                scheduler.step(out[0])
                assert scheduler() == want
        paddle.disable_static()
        with base.unique_name.guard():
            linear = paddle.nn.Linear(3, 3)
        scheduler = paddle.optimizer.lr.ReduceOnPlateau(**kwargs)
        adam = paddle.optimizer.Adam(learning_rate=scheduler, parameters=linear.parameters())
        ref = _PlateauReference(mode, threshold_mode)
        for epoch in range(16):
            loss = paddle.sin(paddle.to_tensor(epoch).astype("float32"))
            scheduler.step(loss)
            assert adam.get_lr() == ref.step(float(loss))
        adam1 = paddle.optimizer.Adam(learning_rate=paddle.optimizer.lr.ReduceOnPlateau(**kwargs),
                                      parameters=linear.parameters())
        adam1.set_state_dict(adam.state_dict())
        restored = adam1._learning_rate
        for key in ("cooldown_counter", "best", "num_bad_epochs", "last_epoch", "last_lr"):
            assert getattr(restored, key) == getattr(scheduler, key), key
    finally:
        paddle.disable_static() if was_dynamic else paddle.enable_static()


def test_reduce_on_plateau_argument_errors():
    L = paddle.optimizer.lr
    for kwargs in ({"factor": 2.0}, {"mode": "test"}, {"threshold_mode": "test"}):
        with pytest.raises(ValueError):
            L.ReduceOnPlateau(learning_rate=1.0, **kwargs)
    with pytest.raises(TypeError):
        L.ReduceOnPlateau(learning_rate="test")
    with pytest.raises(TypeError):
        L.ReduceOnPlateau(learning_rate=0.5).step("test")


def test_cosine_annealing_warm_restarts_static_and_eager(static_mode):
    L = paddle.optimizer.lr
    for bad in ({"T_0": -1, "T_mult": 1}, {"T_0": 1.0, "T_mult": 1}, {"T_0": 1, "T_mult": -1},
                {"T_0": 1, "T_mult": 1.0}):
        with pytest.raises(ValueError):
            L.CosineAnnealingWarmRestarts(learning_rate=0.5, **bad)
    # T_0=1, T_mult=2: periods 1, 2, 4, ... starting at epochs 0, 1, 3, 7; the rate
    # at epoch e is 0.25 * (1 + cos(pi * (e - start) / period)).
    def want(e):
        start, period = 0, 1
        while e >= start + period:
            start, period = start + period, 2 * period
        return 0.25 * (1 + np.cos(np.pi * (e - start) / period))

    scheduler = L.CosineAnnealingWarmRestarts(learning_rate=0.5, T_0=1, T_mult=2, eta_min=0)
    adam = paddle.optimizer.Adam(learning_rate=scheduler)
    main, start = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, start):
        loss = paddle.mean(paddle.static.data(name="x", shape=[3, 4]))
        adam.minimize(loss)
        lr_var = adam._global_learning_rate()
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(start)
    for epoch in range(8):
        (got,) = exe.run(main, feed={"x": np.zeros([3, 4], "float32")}, fetch_list=lr_var.name)
        assert got[0] == pytest.approx(want(epoch), rel=1e-6)
        scheduler.step(epoch + 1)
    stepped = L.CosineAnnealingWarmRestarts(learning_rate=0.5, T_0=1, T_mult=2)
    for epoch in range(8):  # stepping one epoch at a time gives the same rates
        assert stepped() == pytest.approx(want(epoch))
        stepped.step()


def test_linear_lr():
    L = paddle.optimizer.lr
    s = L.LinearLR(learning_rate=0.5, total_steps=4, start_factor=0.25, end_factor=1.0)
    got = []
    for _ in range(7):
        got.append(s())
        s.step()
    np.testing.assert_allclose(got, [0.5 * f for f in (0.25, 0.4375, 0.625, 0.8125, 1.0, 1.0, 1.0)])
    for kwargs in ({"start_factor": 0.0}, {"end_factor": 1.5}, {"total_steps": 0}):
        with pytest.raises(ValueError):
            L.LinearLR(**{"learning_rate": 0.5, "total_steps": 4, **kwargs})


# --------------------------------------- test/legacy_test/test_tensor_register_hook.py


def test_backward_final_hook_runs_once_after_the_next_backward(dynamic_mode):
    from pullback.base import core as base_core

    calls = []
    base_core.eager._add_backward_final_hook(lambda: calls.append(len(calls)))
    x = paddle.to_tensor(RNG.random((2, 3)).astype("float32"), stop_gradient=False)
    paddle.sum(paddle.matmul(x, paddle.ones([3, 2]))).backward()
    assert calls == [0]
    paddle.sum(x * 2).backward()
    assert calls == [0]  # Paddle clears the final hooks once they ran
    with pytest.raises(TypeError, match="callable"):
        base_core.eager._add_backward_final_hook(3)


def test_backward_hook_registration_errors(dynamic_mode):
    x = paddle.to_tensor([5.0], stop_gradient=False)
    with pytest.raises(ValueError, match="leaf"):
        paddle.pow(x, 4.0)._register_backward_hook(lambda: None)
    with pytest.raises(ValueError, match="stop gradient"):
        paddle.to_tensor([5.0])._register_backward_hook(lambda: None)


def test_hooks_in_a_to_static_layer_and_around_paddle_grad(dynamic_mode):
    class Net(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.linear1, self.linear2 = paddle.nn.Linear(4, 4), paddle.nn.Linear(4, 3)

        def forward(self, x, hook=False):
            ret1 = self.linear1(x)
            if hook:
                ret1.register_hook(lambda grad: grad * 2)
            return paddle.mean(self.linear2(ret1), axis=-1)

    data = RNG.random((3, 4)).astype("float32")
    net = Net()
    a, b = paddle.to_tensor(data, stop_gradient=False), paddle.to_tensor(data, stop_gradient=False)
    net(a).backward()
    net(b, True).backward()
    np.testing.assert_allclose(b.grad.numpy(), 2 * a.grad.numpy(), rtol=1e-6)
    # Paddle also runs the hook inside a to_static program; pullback's traced programs
    # have no Python callbacks in their backward yet, and say so.
    jit_net = paddle.jit.to_static(Net(), input_spec=[paddle.static.InputSpec([None, 4])])
    with pytest.raises(NotImplementedError, match="register_hook on static Variable"):
        jit_net(paddle.to_tensor(data, stop_gradient=False), True)
    # A leaf hook acts in backward only: paddle.grad leaves x.grad alone, and the
    # backward of y + dx (d/dx = 2x + 2 = 4) goes through the doubling hook.
    x = paddle.ones(shape=[1], dtype="float32")
    x.stop_gradient = False
    x.register_hook(lambda grad: grad * 2)
    y = x * x
    (dx,) = paddle.grad(outputs=[y], inputs=[x], create_graph=True, retain_graph=True)
    assert x.grad is None and dx.numpy()[0] == 2.0
    (y + dx).backward()
    np.testing.assert_array_equal(x.grad.numpy(), [8.0])


# ---------------------------------------- test/legacy_test/test_imperative_decorator.py


def test_no_grad_decorator_keeps_the_signature_and_switches_the_tracer(dynamic_mode):
    import inspect

    from pullback.base import framework

    tracer = framework._dygraph_tracer()
    tracer._train_mode = True
    seen = []

    @paddle.no_grad()
    def no_grad_func(a):
        seen.append((tracer._has_grad, tracer._train_mode))
        return a

    assert no_grad_func(1) == 1 and no_grad_func.__name__ == "no_grad_func"
    assert seen == [(False, True)] and tracer._has_grad

    def need_no_grad_func(a, b=1):
        return a + b

    decorated = paddle.no_grad()(need_no_grad_func)
    assert str(inspect.getfullargspec(decorated)) == str(inspect.getfullargspec(need_no_grad_func))

    @paddle.no_grad()
    def wrapped_gen():
        for i in range(3):
            assert not tracer._has_grad
            yield i

    assert sum(wrapped_gen()) == 3 and tracer._has_grad


def test_dygraph_not_support_and_static_tracer(dynamic_mode):
    from pullback.base import framework

    @framework.dygraph_not_support
    def static_func():
        return True

    with pytest.raises(AssertionError, match="static_func"):
        static_func()
    assert framework.in_dygraph_mode()
    paddle.enable_static()
    try:
        assert static_func() and framework._dygraph_tracer() is None
    finally:
        paddle.disable_static()
