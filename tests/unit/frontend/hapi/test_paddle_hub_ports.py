"""Ports of PaddlePaddle's local `paddle.hub` test (PaddlePaddle/Paddle, Apache-2.0).

`test/legacy_test/test_hapi_hub.py` runs `hub.list` / `hub.help` / `hub.load` on the
test directory's `hubconf.py` (`test/legacy_test/hubconf.py`: one entry `MM`, a
documented function building `test_hapi_hub_model.py`'s Conv2D+ReLU layer with
`out_channels`).  The same repository is written to a temporary directory here
(importing pullback as paddle); its GitHub/Gitee cases need the network, which
pullback does not use: they are checked to raise with that reason.
"""

from __future__ import annotations

import numpy as np
import pytest

import pullback as paddle


@pytest.fixture(autouse=True)
def _eager(dynamic_mode):
    """Eager mode whatever an earlier test left (pullback's own PyLayer tests end static)."""
    yield


_HUBCONF = '''
dependencies = ["paddle", "numpy"]

import pullback as paddle
import pullback.nn.functional as F
from pullback import nn


class _MM(nn.Layer):
    def __init__(self, out_channels):
        super().__init__()
        self.conv = nn.Conv2D(3, out_channels, 3, 2, 1)

    def forward(self, x):
        return F.relu(self.conv(x))


def MM(out_channels=8, pretrained=False):
    """This is a test demo for paddle hub"""
    return _MM(out_channels)
'''


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "hubconf.py").write_text(_HUBCONF)
    return str(tmp_path)


def test_hub_local(dynamic_mode, repo) -> None:
    assert paddle.hub.list(repo, source="local") == ["MM"]
    assert paddle.hub.help(repo, model="MM", source="local") == "This is a test demo for paddle hub"
    model = paddle.hub.load(repo, model="MM", source="local", out_channels=8)
    out = model(paddle.to_tensor(np.random.rand(2, 3, 64, 64).astype("float32")))
    assert list(out.shape) == [2, 8, 32, 32]
    assert (out.numpy() >= 0).all()
    model = paddle.hub.load(repo, "MM", source="local")
    assert model.conv.weight.shape[0] == 8


def test_hub_errors(repo) -> None:
    with pytest.raises(ValueError):
        paddle.hub.load(repo, "MM", source="xxx")
    with pytest.raises(ValueError):
        paddle.hub.list(repo, source="xxx")
    with pytest.raises(ValueError):
        paddle.hub.help(repo, model=1, source="local")
    with pytest.raises(RuntimeError):
        paddle.hub.load(repo, "NotThere", source="local")
    # Paddle downloads these; pullback does not touch the network.
    with pytest.raises(NotImplementedError):
        paddle.hub.list("lyuwenyu/paddlehub_demo:main", source="github")
    with pytest.raises(NotImplementedError):
        paddle.hub.load("lyuwenyu/paddlehub_demo:main", "MM", source="gitee")
