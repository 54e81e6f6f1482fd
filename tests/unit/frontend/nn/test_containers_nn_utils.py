"""Containers (Identity, ParameterList, LayerDict), the loss layers of the new
functional losses, and `paddle.nn.utils` (parameter vectors, gradient clipping,
weight_norm, spectral_norm) in eager mode."""

from __future__ import annotations

from typing import Any

import numpy as np
import pullback as paddle
import pytest
from pullback.frontend import core

nn = paddle.nn
F = paddle.nn.functional
R = np.random.default_rng(8)


@pytest.fixture(autouse=True)
def eager() -> Any:
    core.disable_static()
    paddle.seed(3)
    yield
    paddle.seed(0)


def test_identity_parameter_list_layer_dict():
    x = paddle.rand([2, 3])
    assert nn.Identity(54, unused=1)(x) is x

    class Net(nn.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.ws = nn.ParameterList([self.create_parameter([3, 3]) for _ in range(2)])
            self.blocks = nn.LayerDict({"a": nn.Linear(3, 3), "b": nn.Linear(3, 1)})

        def forward(self, x: Any) -> Any:
            for w in self.ws:
                x = paddle.matmul(x, w)
            return self.blocks["b"](self.blocks["a"](x))

    net = Net()
    assert len(net.ws) == 2 and len(net.parameters()) == 6
    assert set(net.state_dict()) == {"ws.0", "ws.1", "blocks.a.weight", "blocks.a.bias",
                                     "blocks.b.weight", "blocks.b.bias"}
    net(x).sum().backward()
    assert net.ws[1].grad is not None
    d = net.blocks
    assert "a" in d and d.keys() == ["a", "b"] and len(d.values()) == 2
    d["c"] = nn.Identity()
    assert d.pop("c") is not None and len(d) == 2
    with pytest.raises(TypeError, match="ParameterList: expected a parameter"):
        nn.ParameterList([paddle.rand([2])])


def test_loss_layers_match_functional():
    x = paddle.to_tensor(R.standard_normal((4, 5)))
    lp = F.log_softmax(x)
    y = paddle.to_tensor(np.array([0, 2, 4, 1]))
    z = paddle.to_tensor(R.standard_normal((4, 5)))
    p = F.softmax(z)
    sgn = paddle.to_tensor(np.where(R.standard_normal((4, 5)) > 0, 1.0, -1.0))
    pairs = [
        (nn.NLLLoss(reduction="sum")(lp, y), F.nll_loss(lp, y, reduction="sum")),
        (nn.KLDivLoss("batchmean")(lp, p), F.kl_div(lp, p, "batchmean")),
        (nn.SmoothL1Loss(delta=0.5)(x, z), F.smooth_l1_loss(x, z, delta=0.5)),
        (nn.MarginRankingLoss(0.2)(x, z, sgn), F.margin_ranking_loss(x, z, sgn, 0.2)),
        (nn.CosineSimilarity(axis=0)(x, z), F.cosine_similarity(x, z, axis=0)),
        (nn.BCELoss()(F.sigmoid(x), p), F.binary_cross_entropy(F.sigmoid(x), p)),
        (nn.CrossEntropyLoss(label_smoothing=0.1)(x, y), F.cross_entropy(x, y, label_smoothing=0.1)),
    ]
    for a, b in pairs:
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_parameter_vectors_and_gradient_clipping():
    lin = nn.Linear(3, 2)
    v = nn.utils.parameters_to_vector(lin.parameters())
    np.testing.assert_array_equal(v.numpy(), np.concatenate([lin.weight.numpy().ravel(), lin.bias.numpy()]))
    nn.utils.vector_to_parameters(v * 2.0, lin.parameters())
    np.testing.assert_allclose(lin.weight.numpy().ravel(), v.numpy()[:6] * 2)
    with pytest.raises(ValueError, match="vec has 3 elements, the parameters 8"):
        nn.utils.vector_to_parameters(paddle.ones([3]), lin.parameters())
    lin(paddle.rand([5, 3])).sum().backward()
    grads = [p.grad.numpy().astype(np.float64) for p in lin.parameters()]
    total = np.sqrt(sum((g**2).sum() for g in grads))
    norm = nn.utils.clip_grad_norm_(lin.parameters(), max_norm=0.5)
    np.testing.assert_allclose(float(norm), total, rtol=1e-5)
    clipped = np.sqrt(sum((p.grad.numpy().astype(np.float64) ** 2).sum() for p in lin.parameters()))
    np.testing.assert_allclose(clipped, 0.5, rtol=1e-4)
    nn.utils.clip_grad_value_(lin.parameters(), 0.01)
    assert all(np.abs(p.grad.numpy()).max() <= 0.01 + 1e-9 for p in lin.parameters())


def test_weight_norm_and_spectral_norm():
    x = paddle.rand([4, 3])
    lin = nn.Linear(3, 2)
    y0 = lin(x).numpy()
    nn.utils.weight_norm(lin, dim=1)
    # Paddle's order and layout: weight_v, then a 1-D weight_g of the kept dim
    assert [(n, p.shape) for n, p in lin.named_parameters()] == [
        ("bias", [2]), ("weight_v", [3, 2]), ("weight_g", [2])]
    np.testing.assert_allclose(lin(x).numpy(), y0, rtol=1e-5, atol=1e-6)
    lin(x).sum().backward()
    # d/dg of sum(x @ (g * v / |v|)): the column sums of x times v / |v|
    v = lin.weight_v.numpy().astype(np.float64)
    unit = v / np.sqrt((v**2).sum(0, keepdims=True))
    want = (x.numpy().sum(0)[:, None] * unit).sum(0)
    np.testing.assert_allclose(lin.weight_g.grad.numpy(), want, rtol=1e-5)
    nn.utils.remove_weight_norm(lin)
    np.testing.assert_allclose(lin(x).numpy(), y0, rtol=1e-5, atol=1e-6)
    sn = nn.Linear(4, 3)
    nn.utils.spectral_norm(sn, n_power_iterations=30)
    # Paddle: dim=1 for Linear, so u runs over the output features and v over the inputs
    assert sn.weight_u.shape == [3] and sn.weight_v.shape == [4]
    sn(x[:, :1].tile([1, 4]))
    np.testing.assert_allclose(np.linalg.svd(sn.weight.numpy())[1][0], 1.0, rtol=1e-4)
