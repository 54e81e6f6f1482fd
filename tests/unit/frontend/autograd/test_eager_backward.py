"""paddle.autograd.backward and Tensor.backward in eager mode: the seed document's
contract (values, printed tensors, argument errors), accumulation, stop_gradient,
retain_graph (errors and released memory) and the plan cache; what backward
reaches (stop_gradient branches get None, unused parts of a split zeros: Paddle's
test_imperative_auto_prune.py), custom seeds (test_custom_grad_input.py) and
Tensor.backward's other arguments."""

from __future__ import annotations

import gc
import os
import tracemalloc
import weakref

import numpy as np
import pytest

import pullback as paddle
import pullback.nn.functional as F
from pullback import base
from pullback.dialects import pd
from pullback.frontend import autograd, core
from pullback.frontend.autograd import plan_cache
from pullback.frontend.eager import Tensor, to_tensor

RNG = np.random.default_rng(7)


def matmul(x: Tensor, y: Tensor) -> Tensor:
    """paddle.matmul where the nn family provides it, else the same op via apply."""
    fn = getattr(paddle, "matmul", None) if _has(paddle, "matmul") else None
    return fn(x, y) if fn else core.apply(pd.MatmulOp, [x, y], prefix="matmul")


def _has(mod: object, name: str) -> bool:
    try:
        return getattr(mod, name) is not None
    except AttributeError:
        return False


def mul(x: Tensor, y: Tensor) -> Tensor:
    return core.apply(pd.ElementwiseMulOp, [x, y], prefix="elementwise_mul")


def add(x: Tensor, y: Tensor) -> Tensor:
    return core.apply(pd.ElementwiseAddOp, [x, y], prefix="elementwise_add")


def total(x: Tensor) -> Tensor:
    return core.apply(pd.ReduceSumOp, [x], prefix="reduce_sum")


@pytest.fixture(autouse=True)
def _eager():
    core.disable_static()
    yield


# --------------------------------------------------------------- the seed example

SEED_1 = (
    "Tensor(shape=[2, 2], dtype=float32, place=Place(cpu), stop_gradient=False,\n"
    "       [[12., 18.],\n"
    "        [17., 25.]])"
)
SEED_3 = (
    "Tensor(shape=[2, 2], dtype=float32, place=Place(cpu), stop_gradient=False,\n"
    "       [[10., 14.],\n"
    "        [10., 14.]])"
)


def test_seed_example_prints_the_documented_tensors(capsys):
    x = paddle.to_tensor([[1, 2], [3, 4]], dtype="float32", stop_gradient=False)
    y = paddle.to_tensor([[3, 2], [3, 4]], dtype="float32")
    grad_tensor1 = paddle.to_tensor([[1, 2], [2, 3]], dtype="float32")
    grad_tensor2 = paddle.to_tensor([[1, 1], [1, 1]], dtype="float32")
    z1 = matmul(x, y)
    z2 = matmul(x, y)

    paddle.autograd.backward([z1, z2], [grad_tensor1, grad_tensor2], True)
    print(x.grad)
    x.clear_grad()
    paddle.autograd.backward([z1, z2], [grad_tensor1, None], True)
    print(x.grad)
    x.clear_grad()
    paddle.autograd.backward([z1, z2])
    print(x.grad)
    assert capsys.readouterr().out == f"{SEED_1}\n{SEED_1}\n{SEED_3}\n"


# ------------------------------------------------------------------ argument errors


def _pair():
    x = to_tensor([1.0, 2.0], stop_gradient=False)
    return x, mul(x, x)


def test_duplicate_tensors_raise_assertion_error():
    _, y = _pair()
    with pytest.raises(AssertionError) as e:
        autograd.backward([y, y])
    assert str(e.value) == (
        "The argument 'tensors' of paddle.autograd.backward contains duplicate "
        "paddle.Tensor object."
    )


@pytest.mark.parametrize("bad", [[], (), None, [1.0], "y", np.ones(2)])
def test_empty_or_non_tensor_tensors_raise_assertion_error(bad):
    with pytest.raises(AssertionError):
        autograd.backward(bad)


def test_grad_tensors_length_mismatch():
    x, y = _pair()
    z = mul(y, x)
    with pytest.raises(AssertionError, match="The length of grad_tensors must be equal to tensors"):
        autograd.backward([y, z], [to_tensor([1.0, 1.0])])


def test_grad_tensors_of_wrong_type():
    _, y = _pair()
    with pytest.raises(AssertionError, match="grad_tensors"):
        autograd.backward([y], [np.ones(2, np.float32)])


def test_grad_tensor_shape_mismatch_names_both_shapes():
    _, y = _pair()
    with pytest.raises(ValueError) as e:
        autograd.backward([y], [to_tensor([[1.0, 1.0]])])
    assert "[1, 2]" in str(e.value) and "[2]" in str(e.value)


def test_retain_graph_must_be_bool():
    _, y = _pair()
    with pytest.raises(AssertionError, match="retain_graph"):
        autograd.backward([y], None, 1)


def test_single_tensor_and_single_grad_tensor_are_accepted():
    x, y = _pair()
    autograd.backward(y, to_tensor([1.0, 0.5]))
    np.testing.assert_allclose(x.grad.numpy(), [2.0, 2.0])


# ------------------------------------------------------------------ semantics


def test_gradients_accumulate_until_clear_grad():
    x = to_tensor([1.0, 2.0, 3.0], stop_gradient=False)
    for k in range(1, 4):
        y = total(mul(x, x))
        y.backward()
        np.testing.assert_allclose(x.grad.numpy(), k * 2 * x.numpy())
    x.clear_grad()  # Paddle's default: zeros, not None
    np.testing.assert_allclose(x.grad.numpy(), 0.0)
    total(mul(x, x)).backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy())
    x.clear_gradient(set_to_zero=False)
    assert x.grad is None


def test_none_entries_mean_ones_and_seeds_are_cast_to_the_target_dtype():
    x = to_tensor([1.0, 2.0], stop_gradient=False)
    y, z = mul(x, x), mul(x, to_tensor([3.0, 3.0]))
    autograd.backward([y, z], [None, to_tensor([1.0, 2.0], dtype="float64")])
    assert x.grad.dtype == "float32"
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.numpy() + [3.0, 6.0])


def test_targets_that_are_ancestors_of_one_another():
    x = to_tensor([2.0], stop_gradient=False)
    y = mul(x, x)  # dy/dx = 2x = 4
    z = mul(y, y)  # dz/dx = 4x^3 = 32
    autograd.backward([y, z])
    np.testing.assert_allclose(x.grad.numpy(), [36.0])


def test_stop_gradient_tensors_contribute_nothing_silently():
    x = to_tensor([1.0, 2.0], stop_gradient=False)
    c = to_tensor([5.0, 5.0])  # stop_gradient=True
    y = mul(x, c)
    autograd.backward([y, c])  # c needs no gradient: ignored
    np.testing.assert_allclose(x.grad.numpy(), [5.0, 5.0])
    assert c.grad is None
    autograd.backward([c])  # nothing to do, no error
    d = y.detach()
    assert d.stop_gradient and d.is_leaf
    autograd.backward([d])
    assert d.grad is None


def test_only_leaves_get_grad_and_leaf_targets_get_their_seed():
    x = to_tensor([1.0, 2.0], stop_gradient=False)
    h = mul(x, x)
    total(h).backward()
    assert h.grad is None and not h.is_leaf and x.is_leaf
    x.clear_grad()
    autograd.backward([x], [to_tensor([3.0, 4.0])])
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0])


def test_stop_gradient_set_later_on_a_leaf_cuts_it():
    x = to_tensor([1.0, 2.0], stop_gradient=False)
    w = to_tensor([3.0, 4.0], stop_gradient=False)
    y = total(mul(x, w))
    w.stop_gradient = True
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), [3.0, 4.0])
    assert w.grad is None


def test_tensor_backward_defaults_to_ones_for_non_scalars():
    x = to_tensor([[1.0, 2.0]], stop_gradient=False)
    mul(x, x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [[2.0, 4.0]])


# ------------------------------------------------------------------ retain_graph


def test_second_backward_through_a_freed_graph_raises():
    x, y = _pair()
    z = total(y)
    z.backward()
    with pytest.raises(RuntimeError) as e:
        z.backward()
    msg = str(e.value)
    assert "twice for the same subgraph" in msg and "retain_graph=True" in msg
    # A graph that reuses the freed part fails too; a new graph works.
    with pytest.raises(RuntimeError, match="twice"):
        total(mul(y, x)).backward()
    total(mul(x, x)).backward()


def test_retain_graph_true_allows_a_second_backward():
    x, y = _pair()
    z = total(y)
    z.backward(retain_graph=True)
    z.backward()
    np.testing.assert_allclose(x.grad.numpy(), 4 * x.numpy())


def test_retain_graph_false_releases_saved_values():
    x = to_tensor(np.ones(1_000_000, np.float32), stop_gradient=False)
    tracemalloc.start()
    try:
        h = mul(x, x)
        probe = weakref.ref(h._data)
        y = total(mul(h, x))
        y.numpy()  # (deferred ops, `frontend/eager_lazy.py`, would make the product later)
        del h  # only the recording keeps the 4 MB intermediate alive now
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0]
        assert probe() is not None
        y.backward(retain_graph=True)
        gc.collect()
        assert probe() is not None
        x.clear_gradient(set_to_zero=False)
        gc.collect()
        before = tracemalloc.get_traced_memory()[0]
        y.backward()
        x.clear_gradient(set_to_zero=False)
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert probe() is None
    assert kept - after >= 3_500_000 and before - after >= 3_500_000


def test_unreferenced_graphs_are_freed_without_backward():
    x = to_tensor([1.0], stop_gradient=False)
    y = mul(x, x)
    node = weakref.ref(y._node)
    del y
    gc.collect()
    assert node() is None  # nodes refer to inputs only, never to their consumers


# ------------------------------------------------------------------ plan cache


def test_same_graph_shape_reuses_the_differentiated_plan():
    w = to_tensor(np.ones((3, 2), np.float32), stop_gradient=False)
    b = to_tensor(np.zeros(2, np.float32), stop_gradient=False)

    def step(batch: np.ndarray) -> None:
        loss = total(add(matmul(to_tensor(batch), w), b))
        loss.backward()

    step(np.ones((4, 3), np.float32))
    before = autograd.cache_info()
    for k in range(5):
        step(np.full((4, 3), k, np.float32))
    after = autograd.cache_info()
    assert after["misses"] == before["misses"]
    assert after["hits"] == before["hits"] + 5
    np.testing.assert_allclose(w.grad.numpy(), np.full((3, 2), 4.0 * (1 + 0 + 1 + 2 + 3 + 4)))
    np.testing.assert_allclose(b.grad.numpy(), np.full(2, 4.0 * 6))
    step(np.ones((5, 3), np.float32))  # a new batch size is a new shape
    assert autograd.cache_info()["misses"] == after["misses"] + 1


def test_recorded_program_is_pd_ir():
    x = to_tensor([[1.0, 2.0]], stop_gradient=False)
    y = matmul(x, to_tensor([[1.0], [2.0]]))
    text = str(autograd.recorded_program(y))
    assert "pd.data" in text and "pd.matmul" in text and "leaf_0" in text


def test_plan_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(plan_cache, "MAX_PLANS", 3)
    autograd.clear_cache()
    x = to_tensor(np.ones(2, np.float32), stop_gradient=False)
    for n in range(1, 6):  # five graph shapes
        y = x
        for _ in range(n):
            y = mul(y, x)
        total(y).backward()
        np.testing.assert_allclose(x.grad.numpy(), (n + 1) * np.ones(2))
        x.clear_grad()
    assert autograd.cache_info()["size"] == 3 and autograd.cache_info()["misses"] == 5


# ------------------------------------------ what backward reaches: stop_gradient, unused parts


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


# ------------------------------------------ test/legacy_test/test_custom_grad_input.py
# Ported from Paddle's own tests (the source is cited in each heading): the kind of
# program the Paddle test runs, through the public API only, written as a Paddle
# user writes it; expected values from numpy or from the values the Paddle test asserts.


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
