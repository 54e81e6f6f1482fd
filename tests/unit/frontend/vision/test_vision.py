"""paddle.vision: model structures against Paddle's (state-dict keys, parameter
counts of the published architectures), forward shapes in eager and static mode,
the pretrained-weights refusal, transforms, and datasets read from local files."""

from __future__ import annotations

import gzip
import io
import pickle
import struct
import tarfile

import numpy as np
import pullback as paddle
import pytest
from pullback.frontend import core, unique_name
from pullback.frontend.framework import Program, program_guard
from pullback.vision import datasets, models
from pullback.vision import transforms as T


def _trainable(model) -> int:
    return sum(int(np.prod(p.shape)) for p in model.parameters() if not p.stop_gradient)


def test_lenet(dynamic_mode):
    net = models.LeNet()
    assert _trainable(net) == 61_610
    out = net(paddle.to_tensor(np.zeros((2, 1, 28, 28), np.float32)))
    assert out.shape == [2, 10]
    assert models.LeNet(num_classes=0)(paddle.to_tensor(np.zeros((1, 1, 28, 28), np.float32))).shape == [1, 16, 5, 5]


def test_resnet18_structure_and_forward(dynamic_mode):
    net = models.resnet18()
    assert _trainable(net) == 11_689_512  # the published ResNet-18 count
    keys = list(net.state_dict())
    assert keys[:6] == ["conv1.weight", "bn1.weight", "bn1.bias", "bn1._mean", "bn1._variance",
                        "layer1.0.conv1.weight"]
    assert "layer2.0.downsample.0.weight" in keys and keys[-2:] == ["fc.weight", "fc.bias"]
    small = models.resnet18(num_classes=7)
    out = small(paddle.to_tensor(np.random.default_rng(0).random((2, 3, 32, 32)).astype(np.float32)))
    assert out.shape == [2, 7]
    assert models.resnet34(num_classes=0, with_pool=False)(
        paddle.to_tensor(np.zeros((1, 3, 32, 32), np.float32))).shape == [1, 512, 1, 1]


def test_bottleneck_resnets(dynamic_mode):
    r50 = models.resnet50()
    assert _trainable(r50) == 25_557_032  # the published ResNet-50 count
    assert [len(r50.layer1), len(r50.layer2), len(r50.layer3), len(r50.layer4)] == [3, 4, 6, 3]
    assert r50.layer1[0].conv3.weight.shape == [256, 64, 1, 1]


def test_vgg_and_mobilenet(dynamic_mode):
    feats = models.vgg16(num_classes=0, with_pool=False)
    assert _trainable(feats) == 14_714_688  # VGG-16's convolutional layers
    assert _trainable(models.vgg11(num_classes=0, with_pool=False, batch_norm=True)) == 9_220_480 + 2 * 2_752  # convs, and BN scales and shifts
    assert feats(paddle.to_tensor(np.zeros((1, 3, 32, 32), np.float32))).shape == [1, 512, 1, 1]
    mb = models.mobilenet_v2()
    assert _trainable(mb) == 3_504_872  # the published MobileNetV2 count
    tiny = models.mobilenet_v2(scale=0.25, num_classes=4)
    tiny.eval()
    assert tiny(paddle.to_tensor(np.zeros((1, 3, 32, 32), np.float32))).shape == [1, 4]


@pytest.mark.parametrize("ctor", [models.resnet18, models.resnet50, models.vgg16, models.mobilenet_v2])
def test_pretrained_refused(ctor):
    with pytest.raises(models.PretrainedWeightsUnavailable, match="cannot be downloaded"):
        ctor(pretrained=True)


def test_static_resnet18():
    core.enable_static()
    try:
        main, startup = Program(), Program()
        with program_guard(main, startup), unique_name.guard():
            x = paddle.static.data("x", [-1, 3, 32, 32], "float32")
            y = models.resnet18(num_classes=5)(x)
        assert y.shape == [-1, 5]
        assert sum(isinstance(op, paddle.dialects.pd.BatchNormOp) for op in main.module.walk()) == 20
    finally:
        core.disable_static()


def test_transforms(dynamic_mode):
    img = (np.arange(4 * 6 * 3) % 256).astype(np.uint8).reshape(4, 6, 3)
    t = T.Compose([T.ToTensor(), T.Normalize(mean=[0.5, 0.5, 0.5], std=[0.5, 0.5, 0.5])])(img)
    assert t.shape == [3, 4, 6]
    np.testing.assert_allclose(t.numpy(), (img.transpose(2, 0, 1) / 255.0 - 0.5) / 0.5, rtol=1e-6)
    hwc = T.Normalize(mean=1.0, std=2.0, data_format="HWC")(img.astype(np.float32))
    np.testing.assert_allclose(hwc, (img - 1.0) / 2.0)
    assert T.Transpose()(img).shape == (3, 4, 6)
    assert T.CenterCrop(2)(img).shape == (2, 2, 3)
    np.testing.assert_array_equal(T.CenterCrop([2, 4])(img), img[1:3, 1:5])
    assert T.Resize((8, 12))(img).shape == (8, 12, 3)
    np.testing.assert_array_equal(T.Resize((4, 6), "nearest")(img), img)
    assert T.RandomHorizontalFlip(1.0)(img)[0, 0, 0] == img[0, -1, 0]


def _idx(path, magic, dims, data):
    with gzip.open(path, "wb") as f:
        f.write(struct.pack(">I" + "I" * len(dims), magic, *dims))
        f.write(data.astype(np.uint8).tobytes())


def test_mnist_from_local_files(dynamic_mode, tmp_path, monkeypatch):
    images = np.random.default_rng(1).integers(0, 256, (5, 28, 28))
    labels = np.array([3, 1, 4, 1, 5])
    _idx(tmp_path / "img.gz", 2051, [5, 28, 28], images)
    _idx(tmp_path / "lab.gz", 2049, [5], labels)
    ds = datasets.MNIST(image_path=str(tmp_path / "img.gz"), label_path=str(tmp_path / "lab.gz"), mode="test")
    assert len(ds) == 5
    img, lab = ds[2]
    assert img.shape == (28, 28) and img.dtype == np.float32 and lab.tolist() == [4]
    np.testing.assert_array_equal(img, images[2])
    with_t = datasets.MNIST(image_path=str(tmp_path / "img.gz"), label_path=str(tmp_path / "lab.gz"),
                            transform=T.Compose([T.ToTensor()]))
    x, y = next(iter(paddle.io.DataLoader(with_t, batch_size=5)))
    assert x.shape == [5, 1, 28, 28] and y.shape == [5, 1]
    monkeypatch.setattr(datasets, "CACHE_HOME", str(tmp_path / "empty-cache"))
    with pytest.raises(datasets.DatasetDownloadError, match="cannot download it"):
        datasets.MNIST(label_path=str(tmp_path / "lab.gz"))
    # Paddle's cache location is used when the files are there.
    (tmp_path / "empty-cache" / "mnist").mkdir(parents=True)
    for src, dst in (("img.gz", "t10k-images-idx3-ubyte.gz"), ("lab.gz", "t10k-labels-idx1-ubyte.gz")):
        (tmp_path / "empty-cache" / "mnist" / dst).write_bytes((tmp_path / src).read_bytes())
    assert len(datasets.MNIST(mode="test")) == 5
    with pytest.raises(ValueError, match="mode should be"):
        datasets.MNIST(image_path=str(tmp_path / "img.gz"), label_path=str(tmp_path / "lab.gz"), mode="val")


def test_cifar10_from_local_tarball(dynamic_mode, tmp_path):
    data = np.random.default_rng(2).integers(0, 256, (4, 3072)).astype(np.uint8)
    batch = pickle.dumps({b"data": data, b"labels": [0, 9, 2, 5]})
    path = tmp_path / "cifar-10-python.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        for name in ("cifar-10-batches-py/data_batch_1", "cifar-10-batches-py/test_batch"):
            info = tarfile.TarInfo(name)
            info.size = len(batch)
            tar.addfile(info, io.BytesIO(batch))
    ds = datasets.Cifar10(data_file=str(path), mode="train")
    img, lab = ds[1]
    assert img.shape == (32, 32, 3) and int(lab) == 9
    np.testing.assert_array_equal(img[:, :, 0], data[1, :1024].reshape(32, 32))
    with pytest.raises(datasets.DatasetDownloadError, match="cannot download"):
        datasets.Flowers()
