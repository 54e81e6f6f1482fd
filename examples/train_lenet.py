"""Train a LeNet with batch normalization the ordinary Paddle way, eager and static.

    python -m pullback.examples.train_lenet [--mode both|eager|static] [--epochs 3]

Data: the 8x8 handwritten digits that ship with scikit-learn (`load_digits`, the
`examples` extra), resized to 28x28; without scikit-learn, generated 28x28 images of
ten noisy class templates.  Everything goes through Paddle's APIs:

* `paddle.io.Dataset` / `DataLoader` batches, `paddle.vision.transforms` for the
  images, `paddle.nn` layers (`Conv2D`, `BatchNorm2D`, `MaxPool2D`, `Linear`);
* eager mode: `loss.backward()`, `opt.step()`, `paddle.metric.Accuracy`,
  `model.eval()`, and a `paddle.save` / `paddle.load` round trip of the state dict;
* static mode: the same layers in a `Program`, `minimize`, an `Executor` on the
  compiled backend fed by the `DataLoader`, `paddle.static.accuracy`, a test
  program from `clone(for_test=True)`, and a `save_inference_model` /
  `load_inference_model` round trip.

A progress bar shows the loss; held-out accuracy is printed per epoch.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from typing import Any

import numpy as np
import pullback as paddle
import pullback.nn.functional as F
from pullback import nn
from pullback.io import DataLoader, Dataset
from pullback.vision import transforms as T
from tqdm import tqdm

# ----------------------------------------------------------------------------- data


def load_images(seed: int = 0) -> tuple[np.ndarray, np.ndarray, str]:
    """`(images uint8 [N, 28, 28], labels int64 [N], source)`."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        return (*_generated_digits(seed), "generated images (scikit-learn not installed)")
    digits = load_digits()
    small = (digits.images / 16.0 * 255.0).astype(np.uint8)  # [N, 8, 8], values 0..16
    resize = T.Resize((28, 28))
    images = np.stack([resize(img) for img in small])
    return images, digits.target.astype(np.int64), "scikit-learn digits"


def _generated_digits(seed: int, n: int = 1800) -> tuple[np.ndarray, np.ndarray]:
    """Ten smooth random templates, each sample a shifted, noisy copy of one."""
    rng = np.random.default_rng(seed)
    templates = rng.random((10, 7, 7))
    templates = np.stack([T.resize(t, (28, 28)) for t in templates])
    labels = rng.integers(0, 10, n)
    shifts = rng.integers(-2, 3, (n, 2))
    images = np.stack([np.roll(templates[c], tuple(s), axis=(0, 1)) for c, s in zip(labels, shifts)])
    images = images + rng.normal(0, 0.15, images.shape)
    return (np.clip(images, 0, 1) * 255).astype(np.uint8), labels.astype(np.int64)


class Digits(Dataset):
    """`(image float32 [1, 28, 28] normalized, label int64 [1])` samples."""

    def __init__(self, images: np.ndarray, labels: np.ndarray) -> None:
        self.images, self.labels = images, labels
        self.transform = T.Normalize(mean=[0.5], std=[0.5], data_format="CHW")

    def __getitem__(self, idx: int) -> tuple[np.ndarray, np.ndarray]:
        img = self.images[idx][None].astype(np.float32) / 255.0
        return self.transform(img), np.array([self.labels[idx]], np.int64)

    def __len__(self) -> int:
        return len(self.labels)


# ---------------------------------------------------------------------------- model


class LeNetBN(nn.Layer):
    """LeNet-5 with a batch norm after each convolution."""

    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2D(1, 6, 3, padding=1), nn.BatchNorm2D(6), nn.ReLU(), nn.MaxPool2D(2, 2),
            nn.Conv2D(6, 16, 5), nn.BatchNorm2D(16), nn.ReLU(), nn.MaxPool2D(2, 2),
        )
        self.fc = nn.Sequential(nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(),
                                nn.Linear(84, num_classes))

    def forward(self, x: Any) -> Any:
        """Logits of `x` `[N, 1, 28, 28]`."""
        return self.fc(paddle.flatten(self.features(x), 1))


# ---------------------------------------------------------------------------- eager


def train_eager(train: Dataset, test: Dataset, epochs: int, batch_size: int, lr: float) -> float:
    """Train in eager mode; returns the final held-out accuracy."""
    paddle.disable_static()
    paddle.seed(1)
    model = LeNetBN()
    opt = paddle.optimizer.Adam(learning_rate=lr, parameters=model.parameters())
    loader = DataLoader(train, batch_size=batch_size, shuffle=True, drop_last=True)
    acc = 0.0
    for epoch in range(epochs):
        model.train()
        with tqdm(loader, desc=f"eager  epoch {epoch + 1}/{epochs}", unit="batch", mininterval=0.25) as bar:
            for x, y in bar:
                loss = F.cross_entropy(model(x), y)
                loss.backward()
                opt.step()
                opt.clear_grad()
                bar.set_postfix(loss=f"{float(loss):.4f}", refresh=False)
        acc = evaluate_eager(model, test, batch_size)
        print(f"eager  epoch {epoch + 1}: held-out accuracy {acc:.3f}")

    # Save and restore: a fresh model loaded from the files predicts the same.
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "lenet.pdparams")
        paddle.save(model.state_dict(), path)
        if hasattr(opt, "state_dict"):
            paddle.save(opt.state_dict(), os.path.join(d, "lenet.pdopt"))
        restored = LeNetBN()
        restored.set_state_dict(paddle.load(path))
    model.eval()
    restored.eval()
    x0 = paddle.to_tensor(np.stack([test[i][0] for i in range(16)]))
    same = np.allclose(model(x0).numpy(), restored(x0).numpy(), atol=1e-6)
    print(f"eager  save/load round trip: {'identical predictions' if same else 'MISMATCH'}")
    return acc


def evaluate_eager(model: nn.Layer, data: Dataset, batch_size: int) -> float:
    """Top-1 accuracy with the running statistics (`model.eval()`)."""
    model.eval()
    metric = paddle.metric.Accuracy()
    with paddle.no_grad():
        for x, y in DataLoader(data, batch_size=batch_size):
            metric.update(metric.compute(model(x), y))
    return float(metric.accumulate())


# --------------------------------------------------------------------------- static


def train_static(train: Dataset, test: Dataset, epochs: int, batch_size: int, lr: float,
                 backend: str | None) -> float:
    """Train in static mode on the executor; returns the final held-out accuracy."""
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    main.random_seed = startup.random_seed = 1
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("image", [-1, 1, 28, 28], "float32")
        y = paddle.static.data("label", [-1, 1], "int64")
        logits = LeNetBN()(x)
        loss = paddle.mean(F.cross_entropy(logits, y))
        acc = paddle.static.accuracy(F.softmax(logits), y)
        test_program = main.clone(for_test=True)
        paddle.optimizer.Adam(learning_rate=lr).minimize(loss)
    exe = paddle.static.Executor(paddle.CPUPlace(), backend=backend)
    exe.run(startup)
    loader = DataLoader(train, feed_list=[x, y], batch_size=batch_size, shuffle=True, drop_last=True,
                        return_list=False)
    test_acc = 0.0
    for epoch in range(epochs):
        with tqdm(loader(), total=len(loader), desc=f"static epoch {epoch + 1}/{epochs}", unit="batch",
                  mininterval=0.25) as bar:
            for feed in bar:
                (l,) = exe.run(main, feed=feed, fetch_list=[loss])
                bar.set_postfix(loss=f"{float(l):.4f}", refresh=False)
        test_acc = _static_accuracy(exe, test_program, test, x, y, acc, batch_size)
        print(f"static epoch {epoch + 1}: held-out accuracy {test_acc:.3f}")

    with tempfile.TemporaryDirectory() as d:
        prefix = os.path.join(d, "lenet")
        paddle.static.save_inference_model(prefix, [x], [logits], exe, program=main)
        infer, feeds, fetches = paddle.static.load_inference_model(prefix, exe)
    images = np.stack([test[i][0] for i in range(16)])
    (a,) = exe.run(infer, feed={feeds[0]: images}, fetch_list=fetches)
    (b,) = exe.run(paddle.static.normalize_program(main, [x], [logits]), feed={"image": images},
                   fetch_list=[logits.name])
    print(f"static inference-model round trip: {'identical predictions' if np.allclose(a, b, atol=1e-5) else 'MISMATCH'}")
    return test_acc


def _static_accuracy(exe: Any, program: Any, data: Dataset, x: Any, y: Any, acc: Any,
                     batch_size: int) -> float:
    """Sample-weighted mean of the batch accuracies of the test program."""
    total = correct = 0.0
    for feed in DataLoader(data, feed_list=[x, y], batch_size=batch_size, return_list=False)():
        (a,) = exe.run(program, feed=feed, fetch_list=[acc])
        n = len(feed[0]["label"])
        correct += float(a) * n
        total += n
    return correct / total


# ----------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> None:
    """Load the data, then train eager and/or static and report accuracies."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mode", choices=["both", "eager", "static"], default="both")
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.005)
    ap.add_argument("--limit", type=int, default=0, help="use only this many images (0: all)")
    ap.add_argument("--backend", default=None, help="static executor backend (default: compiled)")
    args = ap.parse_args(argv)

    images, labels, source = load_images()
    if args.limit:
        images, labels = images[: args.limit], labels[: args.limit]
    n_train = int(0.8 * len(labels))
    train, test = Digits(images[:n_train], labels[:n_train]), Digits(images[n_train:], labels[n_train:])
    print(f"pullback LeNet+BatchNorm on {source}: {len(train)} training / {len(test)} held-out images")
    t0 = time.perf_counter()
    if args.mode in ("both", "eager"):
        train_eager(train, test, args.epochs, args.batch_size, args.lr)
    if args.mode in ("both", "static"):
        train_static(train, test, args.epochs, args.batch_size, args.lr, args.backend)
    print(f"done in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
