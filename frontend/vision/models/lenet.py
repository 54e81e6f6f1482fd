"""`paddle.vision.models.LeNet`."""

from __future__ import annotations

from typing import Any

from pullback.frontend.api import nn
from pullback.frontend.ops.shape import flatten


class LeNet(nn.Layer):
    """LeNet-5 for 1x28x28 images, as Paddle defines it: two conv/relu/max-pool
    stages (`features`) and, when `num_classes > 0`, three linear layers (`fc`)."""

    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.num_classes = num_classes
        self.features = nn.Sequential(
            nn.Conv2D(1, 6, 3, stride=1, padding=1),
            nn.ReLU(),
            nn.MaxPool2D(2, 2),
            nn.Conv2D(6, 16, 5, stride=1, padding=0),
            nn.ReLU(),
            nn.MaxPool2D(2, 2),
        )
        if num_classes > 0:
            self.fc = nn.Sequential(nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, num_classes))

    def forward(self, inputs: Any) -> Any:
        """Features, then (with classes) the flattened features through `fc`."""
        x = self.features(inputs)
        if self.num_classes > 0:
            x = flatten(x, 1)
            x = self.fc(x)
        return x
