"""`paddle.vision`: image models (`paddle.vision.models`), transforms
(`paddle.vision.transforms`), datasets (`paddle.vision.datasets`) and detection
operators (`paddle.vision.ops`)."""

from __future__ import annotations

from pullback.frontend.vision import datasets, models, ops, transforms
from pullback.frontend.vision.models import (
    VGG,
    LeNet,
    MobileNetV2,
    ResNet,
    mobilenet_v2,
    resnet18,
    resnet34,
    resnet50,
    resnet101,
    resnet152,
    vgg11,
    vgg13,
    vgg16,
    vgg19,
)

__all__ = [
    "VGG",
    "LeNet",
    "MobileNetV2",
    "ResNet",
    "datasets",
    "mobilenet_v2",
    "models",
    "ops",
    "resnet18",
    "resnet34",
    "resnet50",
    "resnet101",
    "resnet152",
    "transforms",
    "vgg11",
    "vgg13",
    "vgg16",
    "vgg19",
]
