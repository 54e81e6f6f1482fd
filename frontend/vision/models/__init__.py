"""`paddle.vision.models`: LeNet, ResNet, VGG and MobileNetV2, built from the public
layers exactly as Paddle defines them (same sublayer names, so state dicts match).

No pretrained weights ship with pullback and nothing is downloaded:
`pretrained=True` raises `PretrainedWeightsUnavailable`; load a state dict with
`model.set_state_dict(paddle.load(path))` instead.
"""

from __future__ import annotations

from pullback.frontend.vision.models._utils import PretrainedWeightsUnavailable
from pullback.frontend.vision.models.lenet import LeNet
from pullback.frontend.vision.models.mobilenetv2 import MobileNetV2, mobilenet_v2
from pullback.frontend.vision.models.resnet import (
    BasicBlock,
    BottleneckBlock,
    ResNet,
    resnet18,
    resnet34,
    resnet50,
    resnet101,
    resnet152,
    resnext50_32x4d,
    wide_resnet50_2,
)
from pullback.frontend.vision.models.vgg import VGG, vgg11, vgg13, vgg16, vgg19

__all__ = [
    "VGG",
    "BasicBlock",
    "BottleneckBlock",
    "LeNet",
    "MobileNetV2",
    "PretrainedWeightsUnavailable",
    "ResNet",
    "mobilenet_v2",
    "resnet18",
    "resnet34",
    "resnet50",
    "resnet101",
    "resnet152",
    "resnext50_32x4d",
    "vgg11",
    "vgg13",
    "vgg16",
    "vgg19",
    "wide_resnet50_2",
]
