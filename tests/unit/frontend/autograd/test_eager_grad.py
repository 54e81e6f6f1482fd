"""paddle.grad in eager mode (create_graph, allow_unused, grad_outputs, no_grad_vars),
gradients against float64 finite differences, higher orders, and eager gradients
equal to static-mode gradients of the same program; create_graph and double
gradients as Paddle's test_imperative_double_grad.py writes them (ported), with
grad_outputs of shape [1] for 0-d outputs."""

from __future__ import annotations


import numpy as np
import pytest

import pullback as paddle
import pullback.nn.functional as F
from pullback import base
from pullback.base.wrapped_decorator import wrap_decorator
from pullback.dialects import pd
from pullback.frontend import autograd, core
from pullback.frontend.eager import Tensor, to_tensor
from pullback.frontend.ops import elementwise as ew
from pullback.frontend.ops import reduction as red
from pullback.testing import fd_grad

RNG = np.random.default_rng(7)


def matmul(x, y):
    """paddle.matmul where the nn family provides it, else the same op via apply."""
    try:
        fn = paddle.matmul
    except AttributeError:
        fn = None
    return fn(x, y) if fn else core.apply(pd.MatmulOp, [x, y], prefix="matmul")


@pytest.fixture(autouse=True)
def _eager():
    core.disable_static()
    yield
    core.disable_static()


# ------------------------------------------------------------------ paddle.grad


def test_grad_returns_gradients_without_touching_dot_grad():
    x = to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
    y = red.sum(x * x)
    (gx,) = paddle.grad(y, x)
    np.testing.assert_allclose(gx.numpy(), [2.0, 4.0, 6.0])
    assert x.grad is None
    assert gx.stop_gradient  # no create_graph: a plain value


def test_third_order_through_create_graph():
    x = to_tensor([1.0, 2.0, -3.0], stop_gradient=False)
    y = x**3
    (g1,) = paddle.grad(y, x, create_graph=True)
    np.testing.assert_allclose(g1.numpy(), [3.0, 12.0, 27.0])
    assert not g1.stop_gradient
    (g2,) = paddle.grad(g1, x, create_graph=True)
    np.testing.assert_allclose(g2.numpy(), [6.0, 12.0, -18.0])
    (g3,) = paddle.grad(g2, x)
    np.testing.assert_allclose(g3.numpy(), [6.0, 6.0, 6.0])
    assert x.grad is None


def test_create_graph_results_can_feed_backward():
    x = to_tensor([1.0, 2.0], stop_gradient=False)
    (g,) = paddle.grad(red.sum(x * x * x), x, create_graph=True)  # 3x^2
    red.sum(g).backward()  # d/dx sum(3x^2) = 6x
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 12.0])


def test_unreached_input_raises_unless_allow_unused():
    x = to_tensor([1.0, 2.0], stop_gradient=False)
    z = to_tensor([3.0], stop_gradient=False)
    y = red.sum(x * 2.0)
    with pytest.raises(ValueError) as e:
        paddle.grad(y, [x, z], retain_graph=True)
    assert "allow_unused" in str(e.value) and "1-th input" in str(e.value)
    gx, gz = paddle.grad(y, [x, z], allow_unused=True)
    np.testing.assert_allclose(gx.numpy(), [2.0, 2.0])
    assert gz is None


def test_stop_gradient_input_is_unreached():
    x = to_tensor([1.0, 2.0], stop_gradient=False)
    c = to_tensor([1.0, 1.0])
    y = red.sum(x * c)
    with pytest.raises(ValueError, match="allow_unused"):
        paddle.grad(y, [c], retain_graph=True)
    assert paddle.grad(y, [c], allow_unused=True) == [None]


def test_grad_outputs_seed_and_length_check():
    x = to_tensor([1.0, 2.0], stop_gradient=False)
    y = x * x
    (g,) = paddle.grad([y], [x], grad_outputs=[to_tensor([1.0, -1.0])], retain_graph=True)
    np.testing.assert_allclose(g.numpy(), [2.0, -4.0])
    with pytest.raises(AssertionError, match="The length of grad_outputs must be equal to outputs"):
        paddle.grad([y], [x], grad_outputs=[None, None])
    with pytest.raises(ValueError, match=r"\[3\].*\[2\]"):
        paddle.grad([y], [x], grad_outputs=[to_tensor([1.0, 1.0, 1.0])])


@pytest.mark.parametrize(
    "args, fragment",
    [
        (([], None), "outputs cannot be empty"),
        ((None, None), "outputs should not be None"),
        (("y", None), "outputs must be Tensor"),
    ],
)
def test_grad_argument_checks(args, fragment):
    x = to_tensor([1.0], stop_gradient=False)
    outputs, _ = args
    with pytest.raises(AssertionError, match=fragment):
        paddle.grad(outputs, x)


def test_retain_graph_defaults_to_create_graph():
    x = to_tensor([1.0, 2.0], stop_gradient=False)
    y = red.sum(x * x)
    paddle.grad(y, x)  # retain_graph=None -> False: freed
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        paddle.grad(y, x)
    y = red.sum(x * x)
    paddle.grad(y, x, create_graph=True)  # -> retained
    (g,) = paddle.grad(y, x)
    np.testing.assert_allclose(g.numpy(), [2.0, 4.0])


def test_gradient_with_respect_to_an_intermediate_and_no_grad_vars():
    x = to_tensor([1.0, 2.0], stop_gradient=False)
    h = x * x
    y = red.sum(h * x)  # y = sum(x^3) with h = x^2
    gh, gx = paddle.grad(y, [h, x], retain_graph=True)
    np.testing.assert_allclose(gh.numpy(), x.numpy())
    np.testing.assert_allclose(gx.numpy(), 3 * x.numpy() ** 2)
    # h treated as a constant: only the explicit factor x remains.
    (gx,) = paddle.grad(y, [x], no_grad_vars=[h])
    np.testing.assert_allclose(gx.numpy(), h.numpy())


def test_no_grad_context_and_decorator():
    x = to_tensor([1.0, 2.0], stop_gradient=False)
    with paddle.no_grad():
        y = x * 3.0
    assert y.stop_gradient and y.is_leaf

    @paddle.no_grad()
    def f(t: Tensor) -> Tensor:
        return t * 2.0

    @paddle.no_grad
    def g(t: Tensor) -> Tensor:
        return t * 2.0

    assert f(x).stop_gradient and g(x).stop_gradient
    assert autograd.is_grad_enabled()
    assert not (x * 2.0).stop_gradient

    @paddle.no_grad()
    def gen(t: Tensor):
        yield t * 2.0
        yield t * 3.0

    assert all(r.stop_gradient for r in gen(x))
    with paddle.no_grad():
        with autograd.enable_grad():
            assert not (x * 2.0).stop_gradient
        assert (x * 2.0).stop_gradient


# ------------------------------------------------------- against finite differences


def composite(x: Tensor, w: Tensor, b: Tensor) -> Tensor:
    """A small network-like function mixing matmul, broadcasting, activations,
    division and a reduction."""
    h = ew.tanh(matmul(x, w) + b)
    s = ew.sigmoid(h)
    return red.mean(s * ew.exp(h * 0.5) / (h * h + 1.0))


def test_first_order_matches_float64_finite_differences():
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((4, 3)), rng.standard_normal((3, 2)), rng.standard_normal(2)]
    ts = [to_tensor(a, stop_gradient=False) for a in xs]
    composite(*ts).backward()
    for k in range(3):

        def f(v: np.ndarray, k: int = k) -> float:
            args = [to_tensor(v if j == k else xs[j]) for j in range(3)]
            return float(composite(*args).numpy())

        np.testing.assert_allclose(ts[k].grad.numpy(), fd_grad(f, xs[k]), rtol=1e-6, atol=1e-9)


def test_second_order_matches_finite_differences_of_the_gradient():
    rng = np.random.default_rng(1)
    x0, v = rng.standard_normal(5), rng.standard_normal(5)

    def f(x: Tensor) -> Tensor:
        return red.sum(ew.tanh(x) * x * ew.exp(x * 0.3))

    x = to_tensor(x0, stop_gradient=False)
    (g,) = paddle.grad(f(x), x, create_graph=True)
    (hv,) = paddle.grad(red.sum(g * to_tensor(v)), x)  # Hessian-vector product

    def gv(a: np.ndarray) -> float:
        t = to_tensor(a, stop_gradient=False)
        (gt,) = paddle.grad(f(t), t)
        return float(np.dot(gt.numpy(), v))

    np.testing.assert_allclose(hv.numpy(), fd_grad(gv, x0), rtol=1e-6, atol=1e-8)


# --------------------------------------------------------- eager equals static


def mlp(x, w1, b1, w2, b2):
    """The same Python code builds a static program or runs eagerly."""
    h = ew.relu(matmul(x, w1) + b1)
    return red.mean(ew.square(matmul(h, w2) + b2))


def test_eager_gradients_equal_static_gradients():
    rng = np.random.default_rng(2)
    values = {
        "x": rng.standard_normal((8, 4)).astype(np.float32),
        "w1": rng.standard_normal((4, 5)).astype(np.float32),
        "b1": rng.standard_normal(5).astype(np.float32),
        "w2": rng.standard_normal((5, 3)).astype(np.float32),
        "b2": rng.standard_normal(3).astype(np.float32),
    }
    names = list(values)
    # eager
    ts = {n: to_tensor(a, stop_gradient=(n == "x")) for n, a in values.items()}
    loss = mlp(*ts.values())
    loss.backward()
    eager = {n: ts[n].grad.numpy() for n in names[1:]}
    # static: the same function over feeds, differentiated by append-style gradients
    paddle.enable_static()
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            vs = {n: paddle.static.data(n, list(a.shape), "float32") for n, a in values.items()}
            for n in names[1:]:
                vs[n].stop_gradient = False
            static_loss = mlp(*vs.values())
            grads = paddle.static.gradients([static_loss], [vs[n] for n in names[1:]])
            exe = paddle.static.Executor(paddle.CPUPlace())
            out = exe.run(main, feed=values, fetch_list=[static_loss, *grads])
    finally:
        paddle.disable_static()
    np.testing.assert_allclose(loss.numpy(), out[0], rtol=1e-6)
    for n, g in zip(names[1:], out[1:]):
        np.testing.assert_allclose(eager[n], g, rtol=1e-5, atol=1e-7, err_msg=n)


def test_retain_graph_false_frees_only_the_part_differentiated():
    x = to_tensor([1.0, 2.0], stop_gradient=False)
    h = x * x
    y = red.sum(h * 3.0)
    (gh,) = paddle.grad(y, h)  # frees the ops between h and y only
    np.testing.assert_allclose(gh.numpy(), [3.0, 3.0])
    (gx,) = paddle.grad(red.sum(h), x)  # upstream of h is intact
    np.testing.assert_allclose(gx.numpy(), [2.0, 4.0])
    with pytest.raises(RuntimeError, match="twice for the same subgraph"):
        y.backward()


def test_grad_mode_is_per_thread():
    import threading

    x = to_tensor([1.0], stop_gradient=False)
    seen = {}

    def worker() -> None:
        seen["recorded"] = not (x * 3.0).stop_gradient

    with paddle.no_grad():
        th = threading.Thread(target=worker)
        th.start()
        th.join()
        assert (x * 3.0).stop_gradient
    assert seen["recorded"]


def test_an_output_that_is_also_an_input_gets_its_seed():
    x = to_tensor([1.0, 2.0], stop_gradient=False)
    (g,) = paddle.grad([x * 2.0, x], [x])
    np.testing.assert_allclose(g.numpy(), [3.0, 3.0])


# ------------------------------------------------------- create_graph: higher orders


def test_grad_with_create_graph_and_shape_1_grad_outputs():
    x = paddle.to_tensor([2.0], stop_gradient=False)
    y = x * x
    (dx,) = paddle.grad(outputs=[y], inputs=[x], create_graph=True, retain_graph=True)
    assert dx.stop_gradient is False
    np.testing.assert_allclose(dx.numpy(), [4.0])
    (y + dx).backward()  # d/dx (x^2 + 2x) = 2x + 2
    np.testing.assert_allclose(x.grad.numpy(), [6.0])
    # A linear function's gradient is a constant: still stop_gradient=False.
    a = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    (da,) = paddle.grad((a * 3.0).sum(), a, create_graph=True)
    assert da.stop_gradient is False
    s = (a * a).sum()
    (ds,) = paddle.grad(s, a, grad_outputs=paddle.to_tensor([2.0]))
    np.testing.assert_allclose(ds.numpy(), [4.0, 8.0])
    assert ds.stop_gradient is True


def test_double_grad_as_paddle_tests_write_it():
    x = paddle.to_tensor(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), stop_gradient=False)
    y = paddle.nn.functional.sigmoid(x)
    (dx,) = paddle.grad([y], [x], create_graph=True, retain_graph=True)
    loss = paddle.mean(dx * dx)
    loss.backward()
    s = 1 / (1 + np.exp(-x.numpy()))
    ds = s * (1 - s)
    want = 2 * ds * ds * (1 - 2 * s) / 4  # d/dx mean((s(1-s))^2)
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-5)


# -------------------------------------- test/legacy_test/test_imperative_double_grad.py
# Ported from Paddle's own tests (the source is cited in each heading): the kind of
# program the Paddle test runs, through the public API only, written as a Paddle
# user writes it; expected values from numpy or from the values the Paddle test asserts.


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
