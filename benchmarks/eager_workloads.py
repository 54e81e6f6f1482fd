"""Issue 33's eager workloads, written once against the Paddle API and run on both
pullback and real Paddle 3.3.1 dygraph.

Every builder takes the `paddle` module to build with (pullback, or Paddle itself in
`paddle_peer.py`, which loads this file by path), so both frameworks run one
definition of each model and step.  Only numpy is imported here.

- `lenet_step`: `paddle.vision.models.LeNet`, batch 64 of 1x28x28, cross entropy,
  Adam 1e-3: forward, backward, `step`, `clear_grad`.
- `resnet18_step`: `paddle.vision.models.resnet18(num_classes=10)` in training mode,
  batch 32 of 3x32x32, cross entropy, Momentum 0.9 (lr 0.01): the static table's
  network and optimizer (`bench_resnet.build_ours`), run eagerly.
- The Transformer and LSTM steps are `bench_seq.eager_step` (the static tables' models).
- `fit_epoch`: `paddle.Model.fit` of LeNet (1x28x28, batch 64, Adam) or the MLP
  784-512-512-10 over an in-memory dataset, one epoch per call, in dynamic or static
  mode (`paddle.enable_static()` before `Model(...)`, with `InputSpec`s).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

LENET_BATCH = 64
RESNET_BATCH = 32
FIT_BATCH = 64
FIT_BATCHES = 20
"""Batches per `fit` epoch (each timed call is one epoch; times are divided by this)."""
TINY_FIT_BATCHES = 3


def lenet_data(rng: np.random.Generator, batch: int = LENET_BATCH) -> tuple[np.ndarray, np.ndarray]:
    """A LeNet batch: images [batch, 1, 28, 28] float32 and labels [batch, 1] int64."""
    x = rng.standard_normal((batch, 1, 28, 28)).astype(np.float32)
    return x, rng.integers(0, 10, (batch, 1)).astype(np.int64)


def lenet_step(paddle: Any, rng: np.random.Generator, batch: int = LENET_BATCH) -> Callable[[], None]:
    """One eager LeNet training step with Adam (seeded parameters)."""
    paddle.seed(0)
    model = paddle.vision.models.LeNet()
    opt = paddle.optimizer.Adam(learning_rate=1e-3, parameters=model.parameters())
    xv, yv = lenet_data(rng, batch)
    x, y = paddle.to_tensor(xv), paddle.to_tensor(yv)
    ce = paddle.nn.functional.cross_entropy

    def step() -> None:
        loss = ce(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()

    return step


def resnet18_step(paddle: Any, batch: int = RESNET_BATCH, lr: float = 0.01) -> Callable[[], None]:
    """One eager ResNet-18 training step: batch norms in training mode, cross entropy,
    Momentum 0.9 on every parameter (`bench_resnet.build_ours`, eagerly)."""
    paddle.seed(1)
    model = paddle.vision.models.resnet18(num_classes=10)
    model.train()
    opt = paddle.optimizer.Momentum(learning_rate=lr, momentum=0.9, parameters=model.parameters())
    rng = np.random.default_rng(0)
    x = paddle.to_tensor(rng.standard_normal((batch, 3, 32, 32)).astype(np.float32))
    y = paddle.to_tensor(rng.integers(0, 10, (batch, 1)).astype(np.int64))
    ce = paddle.nn.functional.cross_entropy

    def step() -> None:
        loss = paddle.mean(ce(model(x), y))
        loss.backward()
        opt.step()
        opt.clear_grad()

    return step


FIT_NETS = ("lenet", "mlp")


def _fit_network(paddle: Any, net: str) -> tuple[Any, list[int], Any]:
    """(the network, one sample's input shape, the optimizer class) of a `fit` workload."""
    nn = paddle.nn
    if net == "lenet":
        return paddle.vision.models.LeNet(), [1, 28, 28], paddle.optimizer.Adam
    if net == "mlp":
        model = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))
        return model, [784], paddle.optimizer.Adam
    raise ValueError(f"unknown fit network {net!r} (expected one of {FIT_NETS})")


def fit_epoch(paddle: Any, net: str, static: bool, batches: int = FIT_BATCHES,
              batch: int = FIT_BATCH) -> Callable[[], None]:
    """One `Model.fit` epoch of `batches` batches per call (`verbose=0`, a `DataLoader`
    over an in-memory dataset, no shuffling), `static`: the Model built and run in
    static-graph mode (`enable_static` before `Model(...)`, as Paddle requires; the
    call re-enters static mode and leaves it, so that dynamic steps may run between).
    Both modes get `InputSpec`s (Paddle's documented use)."""
    was_dynamic = paddle.in_dynamic_mode()
    if static:
        paddle.enable_static()
    try:
        paddle.seed(0)
        network, shape, opt_cls = _fit_network(paddle, net)
        spec = paddle.static.InputSpec([None, *shape], "float32", "x")
        label = paddle.static.InputSpec([None, 1], "int64", "label")
        model = paddle.Model(network, spec, label)
        model.prepare(opt_cls(learning_rate=1e-3, parameters=model.parameters()), paddle.nn.CrossEntropyLoss())
        rng = np.random.default_rng(0)
        n = batches * batch
        xs = rng.standard_normal((n, *shape)).astype(np.float32)
        ys = rng.integers(0, 10, (n, 1)).astype(np.int64)

        class Data(paddle.io.Dataset):  # type: ignore[misc, name-defined]
            """The in-memory samples."""

            def __getitem__(self, i: int) -> tuple[np.ndarray, np.ndarray]:
                return xs[i], ys[i]

            def __len__(self) -> int:
                return n

        loader = paddle.io.DataLoader(Data(), batch_size=batch, shuffle=False, drop_last=True)
    finally:
        if static and was_dynamic:
            paddle.disable_static()

    def epoch() -> None:
        if static and was_dynamic:
            paddle.enable_static()
        try:
            model.fit(loader, epochs=1, verbose=0)
        finally:
            if static and was_dynamic:
                paddle.disable_static()

    return epoch
