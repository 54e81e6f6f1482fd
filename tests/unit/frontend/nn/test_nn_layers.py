"""`paddle.nn.Layer` bookkeeping (registration, traversal order, names, state_dict,
train/eval) and the common layers' values against numpy, in eager mode and, for
Linear, in a static program run by the Executor."""

from __future__ import annotations

import math

import numpy as np
import pullback as paddle
import pytest
from pullback.frontend import core
from pullback.frontend.nn_layers import EagerParamBase

nn = paddle.nn
F = paddle.nn.functional


pytestmark = pytest.mark.usefixtures("dynamic_mode")


class MLP(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(8, 2, bias_attr=False)
        self.scale = self.create_parameter([2], default_initializer=nn.initializer.Constant(3.0))

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x))) * self.scale


# ----------------------------------------------------------------- bookkeeping


def test_parameters_order_names_and_flags():
    m = MLP()
    names = [(k, p.name, p.shape) for k, p in m.named_parameters()]
    assert names == [
        ("scale", "mlp_0.w_0", [2]),
        ("fc1.weight", "linear_0.w_0", [4, 8]),
        ("fc1.bias", "linear_0.b_0", [8]),
        ("fc2.weight", "linear_1.w_0", [8, 2]),
    ]
    assert m.fc2.bias is None and "bias" not in m.fc2._parameters or m.fc2._parameters["bias"] is None
    assert all(isinstance(p, EagerParamBase) and not p.stop_gradient and p.trainable for p in m.parameters())
    assert m.parameters(include_sublayers=False) == [m.scale]
    np.testing.assert_array_equal(m.scale.numpy(), [3.0, 3.0])
    assert [type(c).__name__ for c in m.children()] == ["Linear", "ReLU", "Linear"]
    assert [k for k, _ in m.named_sublayers()] == ["fc1", "act", "fc2"]
    assert m.sublayers(include_self=True)[0] is m
    assert m.full_name() == "mlp_0"


def test_shared_sublayer_counts_once_and_reassignment_replaces():
    shared = nn.Linear(2, 2)
    seq = nn.Sequential(shared, nn.Tanh(), shared)
    assert len(seq.parameters()) == 2 and len(seq) == 3 and seq[2] is shared
    layer = nn.Layer()
    layer.w = shared.weight
    assert layer.parameters() == [shared.weight]
    layer.w = None
    assert layer.parameters() == [] and layer.w is None
    with pytest.raises(TypeError, match="cannot assign ndarray to parameter 'w'"):
        layer.w = np.zeros(2)
    layer.plain = 3  # ordinary attributes stay ordinary
    assert layer.plain == 3 and layer.parameters() == []


def test_layer_list_and_sequential_with_names():
    ll = nn.LayerList([nn.Linear(2, 3), nn.Linear(3, 4)])
    ll.append(nn.Linear(4, 1))
    ll.insert(0, nn.ReLU())
    assert [type(x).__name__ for x in ll] == ["ReLU", "Linear", "Linear", "Linear"]
    assert [k for k, _ in ll.named_parameters()][:2] == ["1.weight", "1.bias"]
    seq = nn.Sequential(("first", nn.Linear(2, 2)), ("act", nn.Sigmoid()))
    assert [k for k, _ in seq.named_parameters()] == ["first.weight", "first.bias"]
    assert isinstance(seq[0:1], nn.Sequential) and len(seq[0:1]) == 1


def test_state_dict_round_trip():
    paddle.seed(1)
    a = MLP()
    paddle.seed(2)
    b = MLP()
    assert not np.allclose(a.fc1.weight.numpy(), b.fc1.weight.numpy())
    sd = a.state_dict()
    assert list(sd) == ["scale", "fc1.weight", "fc1.bias", "fc2.weight"]
    assert sd["fc1.weight"] is a.fc1.weight
    missing, unexpected = b.set_state_dict({k: v.numpy() for k, v in sd.items()})
    assert missing == [] and unexpected == []
    x = paddle.to_tensor(np.random.default_rng(0).normal(size=(3, 4)).astype("float32"))
    np.testing.assert_array_equal(a(x).numpy(), b(x).numpy())
    with pytest.warns(UserWarning, match=r"Skip loading for fc1.bias. fc1.bias receives a shape \[3\], "
                                         r"but the expected shape is \[8\]"):
        b.set_state_dict({"fc1.bias": np.zeros(3)})
    with pytest.warns(UserWarning, match="unused keys"), pytest.warns(UserWarning, match="no value for"):
        b.set_state_dict({"nope": np.zeros(1)})
    assert b.fc1.bias.name == "linear_2.b_0"  # b's own parameter names
    with pytest.warns(UserWarning, match="no value for"):
        missing, _ = b.set_state_dict({"linear_2.b_0": np.ones(8)}, use_structured_name=False)
    np.testing.assert_array_equal(b.fc1.bias.numpy(), np.ones(8))
    assert "linear_2.b_0" not in missing and "linear_2.w_0" in missing


def test_train_eval_switches_dropout():
    model = nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5))
    x = paddle.ones([8, 4])
    assert model.training and model[1].training
    model.eval()
    assert not model[1].training
    out = model(x).numpy()
    np.testing.assert_array_equal(out, model[0](x).numpy())  # identity at inference
    model.train()
    dropped = model(x).numpy()
    dense = model[0](x).numpy()
    zeros = dropped == 0
    assert 0 < zeros.sum() < zeros.size
    np.testing.assert_allclose(dropped[~zeros], 2 * dense[~zeros], rtol=1e-6)


def test_clear_gradients_and_backward_through_a_layer():
    m = MLP()
    m(paddle.ones([2, 4])).sum().backward()
    assert m.fc1.weight.grad is not None
    m.clear_gradients()
    np.testing.assert_array_equal(m.fc1.weight.grad.numpy(), 0)


def test_seed_makes_initialization_reproducible():
    paddle.seed(5)
    w1 = nn.Linear(3, 3).weight.numpy()
    w2 = nn.Linear(3, 3).weight.numpy()
    paddle.seed(6)
    w3 = nn.Linear(3, 3).weight.numpy()
    paddle.seed(5)
    assert np.array_equal(nn.Linear(3, 3).weight.numpy(), w1)
    assert np.array_equal(nn.Linear(3, 3).weight.numpy(), w2)
    assert not np.array_equal(w1, w2) and not np.array_equal(w1, w3)


def test_errors():
    class Forgot(nn.Layer):
        def __init__(self):
            self.fc = nn.Linear(2, 2)

    with pytest.raises(RuntimeError, match=r"call super\(\).__init__\(\)"):
        Forgot()
    with pytest.raises(NotImplementedError, match="does not define forward"):
        nn.Layer()(1)
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
        _ = nn.Linear(2, 2).nope
    with pytest.raises(ValueError, match="in_features must be a positive int"):
        nn.Linear(0, 2)
    with pytest.raises(TypeError, match="add_sublayer: 'x' must be a Layer"):
        nn.Layer().add_sublayer("x", 3)


# ---------------------------------------------------------------------- layers


def test_linear_init_and_value():
    layer = nn.Linear(30, 20)
    limit = math.sqrt(6.0 / 50)
    w = layer.weight.numpy()
    assert w.shape == (30, 20) and np.abs(w).max() <= limit and np.abs(w).max() > 0.8 * limit
    np.testing.assert_array_equal(layer.bias.numpy(), np.zeros(20))
    x = np.random.default_rng(0).normal(size=(5, 30)).astype("float32")
    np.testing.assert_allclose(layer(paddle.to_tensor(x)).numpy(), x @ w, rtol=1e-5, atol=1e-6)


def test_conv_pool_flatten_stack():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 3, 6, 6)).astype("float32")
    conv = nn.Conv2D(3, 4, 3, padding=1, bias_attr=paddle.ParamAttr(initializer=nn.initializer.Constant(0.5)))
    assert conv.weight.shape == [4, 3, 3, 3] and conv.weight.name == "conv2d_0.w_0"
    assert conv.weight.numpy().std() == pytest.approx(math.sqrt(2.0 / 27), rel=0.3)
    out = conv(paddle.to_tensor(x))
    ref = F.conv2d(paddle.to_tensor(x), conv.weight, conv.bias, padding=1)
    np.testing.assert_array_equal(out.numpy(), ref.numpy())
    np.testing.assert_allclose(
        out.numpy() - F.conv2d(paddle.to_tensor(x), conv.weight, padding=1).numpy(), 0.5, rtol=1e-5)
    pooled = nn.MaxPool2D(2)(out).numpy()
    np.testing.assert_array_equal(pooled, out.numpy().reshape(2, 4, 3, 2, 3, 2).max(axis=(3, 5)))
    avg = nn.AvgPool2D(kernel_size=2, stride=2)(out).numpy()
    np.testing.assert_allclose(avg, out.numpy().reshape(2, 4, 3, 2, 3, 2).mean(axis=(3, 5)), rtol=1e-5, atol=1e-6)
    gap = nn.AdaptiveAvgPool2D(1)(out)
    np.testing.assert_allclose(gap.numpy()[..., 0, 0], out.numpy().mean(axis=(2, 3)), rtol=1e-5, atol=1e-6)
    assert nn.Flatten()(gap).shape == [2, 4]


def test_embedding_layer_norm_and_activations():
    emb = nn.Embedding(5, 3, padding_idx=0)
    ids = paddle.to_tensor(np.array([[0, 2], [4, 2]], dtype="int64"))
    out = emb(ids).numpy()
    np.testing.assert_array_equal(out[0, 0], 0)
    np.testing.assert_array_equal(out[1, 0], emb.weight.numpy()[4])
    x = np.random.default_rng(1).normal(size=(2, 3, 4)).astype("float32")
    ln = nn.LayerNorm(4)
    assert ln.weight.name == "layer_norm_0.w_0"
    np.testing.assert_array_equal(ln.weight.numpy(), 1)
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    np.testing.assert_allclose(ln(paddle.to_tensor(x)).numpy(), (x - mu) / np.sqrt(var + 1e-5), rtol=1e-4, atol=1e-5)
    t = paddle.to_tensor(x)
    for layer, ref in [
        (nn.ReLU(), np.maximum(x, 0)), (nn.Sigmoid(), 1 / (1 + np.exp(-x))), (nn.Tanh(), np.tanh(x)),
        (nn.Softmax(axis=1), np.exp(x) / np.exp(x).sum(1, keepdims=True)),
        (nn.LeakyReLU(0.1), np.where(x > 0, x, 0.1 * x)),
    ]:
        np.testing.assert_allclose(layer(t).numpy(), ref, rtol=1e-5, atol=1e-6)
    assert nn.GELU()(t).shape == [2, 3, 4]


def test_losses():
    a = np.array([[0.5, -1.0], [2.0, 0.0]], dtype="float32")
    b = np.array([[0.0, 1.0], [1.0, 1.0]], dtype="float32")
    ta, tb = paddle.to_tensor(a), paddle.to_tensor(b)
    assert float(nn.MSELoss()(ta, tb)) == pytest.approx(((a - b) ** 2).mean())
    assert float(nn.L1Loss("sum")(ta, tb)) == pytest.approx(np.abs(a - b).sum())
    assert nn.MSELoss("none")(ta, tb).shape == [2, 2]
    labels = paddle.to_tensor(np.array([1, 0], dtype="int64"))
    logp = a - np.log(np.exp(a).sum(1, keepdims=True))
    assert float(nn.CrossEntropyLoss()(ta, labels)) == pytest.approx(-(logp[0, 1] + logp[1, 0]) / 2, rel=1e-5)
    assert float(nn.BCEWithLogitsLoss()(ta, tb)) == pytest.approx(
        np.mean(np.maximum(a, 0) - a * b + np.log1p(np.exp(-np.abs(a)))), rel=1e-5)
    with pytest.raises(ValueError, match="reduction must be one of"):
        nn.MSELoss("avg")


def test_linear_in_a_static_program():
    core.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [None, 3])
        model = nn.Sequential(nn.Linear(3, 2), nn.ReLU())
        y = model(x)
    params = model.parameters()
    assert [p.name for p in params] == ["linear_0.w_0", "linear_0.b_0"]
    assert all(isinstance(p, paddle.static.Parameter) for p in params)
    exe = paddle.static.Executor(paddle.CPUPlace())
    scope = paddle.static.global_scope()
    exe.run(startup)
    w = np.asarray(scope.find_var("linear_0.w_0").get_tensor())
    xs = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]], dtype="float32")
    (got,) = exe.run(main, feed={"x": xs}, fetch_list=[y])
    np.testing.assert_allclose(got, np.maximum(xs @ w, 0), rtol=1e-5, atol=1e-6)


def test_paddle_seed_twice_restarts_the_eager_parameter_sequence():
    paddle.seed(3)
    first = paddle.nn.Linear(3, 2).weight.numpy()
    paddle.seed(3)
    again = paddle.nn.Linear(3, 2).weight.numpy()
    np.testing.assert_array_equal(first, again)
