"""The LeNet example runs end to end on a small slice of its data: eager and static
training, accuracy, and both save/load round trips reproducing the predictions."""

from __future__ import annotations

import warnings

import pytest
from pullback.examples import train_lenet


def test_train_lenet_small(capsys, dynamic_mode):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the static part runs natively
        train_lenet.main(["--epochs", "1", "--limit", "120", "--batch-size", "40"])
    out = capsys.readouterr().out
    assert "eager  save/load round trip: identical predictions" in out
    assert "static inference-model round trip: identical predictions" in out
    assert out.count("held-out accuracy") == 2


def test_generated_images_are_learnable_shapes():
    images, labels = train_lenet._generated_digits(0, n=50)
    assert images.shape == (50, 28, 28) and images.dtype.name == "uint8"
    assert set(labels.tolist()) <= set(range(10))
    with pytest.raises(IndexError):
        train_lenet.Digits(images, labels)[50]
