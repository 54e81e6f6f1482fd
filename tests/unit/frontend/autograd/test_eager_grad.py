"""paddle.grad in eager mode (create_graph, allow_unused, grad_outputs, no_grad_vars),
gradients against float64 finite differences, higher orders, and eager gradients
equal to static-mode gradients of the same program."""

from __future__ import annotations


import numpy as np
import pytest

import pullback as paddle
from pullback.dialects import pd
from pullback.frontend import autograd, core
from pullback.frontend.eager import Tensor, to_tensor
from pullback.frontend.ops import elementwise as ew
from pullback.frontend.ops import reduction as red
from pullback.testing import fd_grad


def matmul(x, y):
    """paddle.matmul where the nn family provides it, else the same op via apply."""
    try:
        fn = paddle.matmul
    except AttributeError:
        fn = None
    return fn(x, y) if fn else core.apply(pd.MatmulOp, [x, y], prefix="matmul")


@pytest.fixture(autouse=True)
def dynamic_mode():
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
