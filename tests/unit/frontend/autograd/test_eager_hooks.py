"""Eager gradient tools as Paddle's own tests use them (test_tensor_register_hook.py,
test_imperative_auto_prune.py, test_imperative_double_grad.py): tensor hooks,
retain_grads, zero vs None gradients, Tensor.backward's arguments, paddle.grad with
create_graph, grad_outputs of shape [1] for 0-d outputs, grad-mode switches."""

from __future__ import annotations

import os

import numpy as np
import pullback as paddle
import pytest
from pullback import nn


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


def test_retained_unused_split_output_gets_zeros_and_its_own_backward_ones():
    linear = paddle.nn.Linear(6, 4)
    x = paddle.to_tensor(np.arange(6, dtype="float32").reshape(1, 6))
    part1, part2 = paddle.split(linear(x), num_or_sections=[2, 2], axis=1)
    part2.retain_grads()
    paddle.mean(part1).backward()
    assert linear.weight._grad_ivar() is not None
    np.testing.assert_array_equal(part2.gradient(), np.zeros([1, 2], np.float32))
    part1, part2 = paddle.split(linear(x), num_or_sections=[2, 2], axis=1)
    part2.retain_grads()
    part2.backward()
    np.testing.assert_array_equal(part2.gradient(), np.ones([1, 2], np.float32))


def test_stop_gradient_branches_get_none():
    linear, linear2 = paddle.nn.Linear(13, 5), paddle.nn.Linear(3, 3)
    a = paddle.to_tensor(np.arange(26, dtype="float32").reshape(2, 13))
    b = paddle.to_tensor(np.arange(6, dtype="float32").reshape(2, 3))
    out1 = linear(a)
    out2 = linear2(b)
    out1.stop_gradient = True
    paddle.concat([out1, out2], axis=1).backward()
    assert linear.weight.gradient() is None and out1.gradient() is None
    assert linear2.weight.gradient() is not None
    # A gradient that only reaches a leaf through an integer cast is None too.
    lin = paddle.nn.Linear(1, 1, weight_attr=paddle.ParamAttr(initializer=paddle.nn.initializer.Constant(1.0)))
    label = paddle.cast(paddle.cast(lin(paddle.to_tensor([[1.0]])), "float32"), "int64")
    paddle.mean(paddle.nn.functional.one_hot(label, 4)).backward()
    assert lin.weight._grad_ivar() is None


def test_backward_arguments(tmp_path):
    x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
    y = (x * x).sum()
    y.backward(paddle.to_tensor(3.0), retain_graph=True)
    np.testing.assert_allclose(x.grad.numpy(), [6.0, 12.0])
    y.backward(paddle.to_tensor([1.0]), dump_backward_graph_path=str(tmp_path))  # [1] seeds a 0-d loss
    np.testing.assert_allclose(x.grad.numpy(), [8.0, 16.0])
    assert any(f.endswith("backward_graph.dot") for f in os.listdir(tmp_path))
    with pytest.raises(ValueError, match=r"does not match the shape"):
        (x * x).sum().backward(paddle.to_tensor([1.0, 1.0]))


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
