"""Eager tensor hooks and grad-mode switches as Paddle's own tests use them
(test_tensor_register_hook.py, test_imperative_decorator.py, partly ported):
register_hook on interior tensors and leaves, retain_grads, backward hooks and the
final hook, hooks around paddle.grad, no_grad / enable_grad / set_grad_enabled and
the no_grad decorator.  (What backward reaches: test_eager_backward.py; create_graph
and double gradients: test_eager_grad.py.)"""

from __future__ import annotations

import numpy as np
import pullback as paddle
import pytest
from pullback import nn

RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def _eager(dynamic_mode):
    yield


def _interior(hook=None, removed=False):
    x = paddle.to_tensor([0.0, 1.0, 2.0, 3.0])
    y = paddle.to_tensor([4.0, 5.0, 6.0, 7.0])
    x.stop_gradient = False
    y.stop_gradient = False
    w = x + y
    w.stop_gradient = False
    w.retain_grads()
    helper = w.register_hook(hook) if hook else None
    z = paddle.to_tensor([1.0, 2.0, 3.0, 4.0])
    z.stop_gradient = False
    o = z.matmul(w)
    if removed:
        assert helper.remove()
    o.backward()
    return x, y, z, w


@pytest.mark.parametrize("removed", [False, True])
def test_hook_for_interior_var_changes_upstream_grads_only(removed):
    x, y, z, w = _interior(lambda grad: grad * 2, removed)
    np.testing.assert_array_equal(z.grad.numpy(), w.numpy())
    np.testing.assert_array_equal(w.grad.numpy(), z.numpy())  # retained before the hook
    factor = 1 if removed else 2
    np.testing.assert_array_equal(x.grad.numpy(), z.numpy() * factor)
    np.testing.assert_array_equal(y.grad.numpy(), z.numpy() * factor)


def test_print_hook_returning_none_changes_nothing(capsys):
    x, _, z, _ = _interior(lambda grad: print(grad))
    np.testing.assert_array_equal(x.grad.numpy(), z.numpy())
    assert "Tensor(shape=[4]" in capsys.readouterr().out


def test_hook_for_leaf_var():
    x = paddle.to_tensor([0.0, 1.0, 2.0, 3.0], stop_gradient=False)
    y = paddle.to_tensor([4.0, 5.0, 6.0, 7.0], stop_gradient=False)
    y.register_hook(lambda grad: grad * 2)
    w = x + y
    z = paddle.to_tensor([1.0, 2.0, 3.0, 4.0], stop_gradient=False)
    z.matmul(w).backward()
    np.testing.assert_array_equal(x.grad.numpy(), z.numpy())
    np.testing.assert_array_equal(y.grad.numpy(), z.numpy() * 2)


def test_hooks_on_accumulated_interior_and_leaf_grads():
    a = paddle.to_tensor([0.0, 1.0, 1.0, 2.0], stop_gradient=False)
    b = paddle.to_tensor([0.0, 0.0, 1.0, 2.0], stop_gradient=False)
    a.retain_grads()
    a.register_hook(lambda grad: grad * 2)
    x = a + b
    x.retain_grads()
    x.register_hook(lambda grad: grad * 2)
    y = paddle.to_tensor([4.0, 5.0, 6.0, 7.0], stop_gradient=False)
    z = paddle.to_tensor([1.0, 2.0, 3.0, 4.0], stop_gradient=False)
    o = (x + y).matmul(x + z)
    o.backward()
    base_grad = np.array([5.0, 9.0, 13.0, 19.0])
    np.testing.assert_array_equal(x.grad.numpy(), base_grad)
    np.testing.assert_array_equal(b.grad.numpy(), base_grad * 2)
    np.testing.assert_array_equal(a.grad.numpy(), base_grad * 4)


def test_multiple_hooks_chain_and_remove_individually():
    for removed in [(), (0,), (1,), (0, 1, 2)]:
        x = paddle.to_tensor([0.0, 1.0, 2.0, 3.0], stop_gradient=False)
        w = x * 1.0
        w.retain_grads()
        helpers = [w.register_hook(lambda g: g * 2) for _ in range(3)]
        for i in removed:
            helpers[i].remove()
        z = paddle.to_tensor([1.0, 2.0, 3.0, 4.0])
        z.matmul(w).backward()
        np.testing.assert_array_equal(w.grad.numpy(), z.numpy())
        np.testing.assert_array_equal(x.grad.numpy(), z.numpy() * 2 ** (3 - len(removed)))


def test_hook_in_model_matches_doubling_the_gradient():
    class SimpleNet(nn.Layer):
        def __init__(self):
            super().__init__()
            self.linear1 = nn.Linear(10, 10)
            self.linear2 = nn.Linear(10, 10)

        def forward(self, x, hook=None):
            ret1 = self.linear1(x)
            if hook is not None:
                ret1.register_hook(hook)
            return ret1, paddle.mean(self.linear2(ret1), axis=-1)

    data = np.random.default_rng(0).uniform(size=[4, 10]).astype("float32")
    label = np.random.default_rng(1).uniform(size=[4]).astype("float32")

    def run(hook):
        paddle.seed(2021)
        net = SimpleNet()
        ret1, out = net(paddle.to_tensor(data), hook)
        ret1.retain_grads()
        nn.MSELoss()(out, paddle.to_tensor(label)).backward()
        return ret1.grad.numpy(), net.linear1.weight.grad.numpy(), net.linear1.bias.grad.numpy()

    plain, hooked = run(None), run(lambda grad: grad * 2)
    for p, h in zip(plain, hooked):
        np.testing.assert_allclose(p * 2, h, rtol=1e-6)


def test_remove_one_hook_multiple_times():
    x = paddle.to_tensor([1.0, 2.0, 3.0, 4.0], stop_gradient=False)
    h = x.register_hook(lambda grad: grad * 2)
    assert h.remove() is True
    assert h.remove() is False


def test_register_hook_for_stop_gradient_var():
    with pytest.raises(RuntimeError, match="stop gradient"):
        paddle.to_tensor([1.0, 2.0]).register_hook(lambda grad: grad * 2)


def test_register_backward_hook_called_after_each_backward():
    calls = []
    x = paddle.to_tensor([5.0], stop_gradient=False)
    x._register_backward_hook(lambda: calls.append(float(x.grad)))
    for _ in range(3):
        paddle.pow(x, 4.0).backward()
    assert calls == [500.0, 1000.0, 1500.0]
    with pytest.raises(ValueError, match="leaf Tensor"):
        paddle.pow(x, 4.0)._register_backward_hook(lambda: None)
    with pytest.raises(ValueError, match="stop gradient"):
        paddle.to_tensor([5.0])._register_backward_hook(lambda: None)


def test_grad_mode_switches():
    x = paddle.to_tensor([1.0], stop_gradient=False)
    with paddle.no_grad():
        assert not paddle.is_grad_enabled()
        assert (x * 2).stop_gradient

    @paddle.no_grad()
    def f(t):
        return t * 2

    @paddle.no_grad
    def g(t):
        return t * 2

    assert f(x).stop_gradient and g(x).stop_gradient and paddle.is_grad_enabled()
    with paddle.set_grad_enabled(False):
        assert (x * 2).stop_gradient
    assert not (x * 2).stop_gradient
    paddle.set_grad_enabled(False)
    try:
        assert not paddle.is_grad_enabled()
    finally:
        paddle.set_grad_enabled(True)
    with paddle.no_grad(), paddle.enable_grad():
        assert not (x * 2).stop_gradient


# --------------------------------------- test/legacy_test/test_tensor_register_hook.py
# Ported from Paddle's own tests (the source is cited in each heading): the kind of
# program the Paddle test runs, through the public API only, written as a Paddle
# user writes it; expected values from numpy or from the values the Paddle test asserts.


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
