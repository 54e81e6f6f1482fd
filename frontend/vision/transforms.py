"""`paddle.vision.transforms`: `Compose`, `ToTensor`, `Normalize`, `Transpose`,
`Resize` (nearest or bilinear), `CenterCrop`, `RandomResizedCrop`, `RandomHorizontalFlip`,
`RandomVerticalFlip`, and the functional forms `to_tensor`, `normalize`.

Images are numpy arrays in `HWC` (or `HW`) layout, as Paddle's `cv2` backend
gives them, or PIL images when Pillow is installed (converted to arrays first).
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def _as_array(img: Any) -> np.ndarray:
    """A numpy image (PIL images and Tensors converted)."""
    if isinstance(img, np.ndarray):
        return img
    if hasattr(img, "numpy") and callable(img.numpy):
        return img.numpy()
    if type(img).__module__.startswith("PIL."):
        return np.asarray(img)
    raise TypeError(f"img should be a numpy array, a PIL Image or a Tensor, got {type(img).__name__}")


def to_tensor(pic: Any, data_format: str = "CHW") -> Any:
    """An image as a float32 Tensor: `HWC` -> `CHW` (or kept `HWC`), uint8 values
    scaled to [0, 1]."""
    from pullback.frontend.eager import to_tensor as make

    if data_format not in ("CHW", "HWC"):
        raise ValueError(f"to_tensor: data_format should be CHW or HWC, got {data_format!r}")
    arr = _as_array(pic)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    if arr.ndim != 3:
        raise ValueError(f"to_tensor: pic should be 2 or 3 dimensional, got shape {list(arr.shape)}")
    scaled = arr.astype(np.float32) / 255.0 if arr.dtype == np.uint8 else arr.astype(np.float32)
    if data_format == "CHW":
        scaled = scaled.transpose(2, 0, 1)
    return make(np.ascontiguousarray(scaled))


def normalize(img: Any, mean: Any, std: Any, data_format: str = "CHW", to_rgb: bool = False) -> Any:
    """`(img - mean) / std` per channel (channel axis from `data_format`); a Tensor
    in gives a Tensor out."""
    is_tensor = hasattr(img, "numpy") and not isinstance(img, np.ndarray)
    arr = _as_array(img).astype(np.float32)
    if data_format not in ("CHW", "HWC"):
        raise ValueError(f"normalize: data_format should be CHW or HWC, got {data_format!r}")
    c_axis = 0 if data_format == "CHW" else -1
    if to_rgb:
        arr = np.flip(arr, axis=c_axis)
    shape = [-1, 1, 1] if data_format == "CHW" else [1, 1, -1]
    m = np.asarray(mean, np.float32).reshape(shape)
    s = np.asarray(std, np.float32).reshape(shape)
    out = (arr - m) / s
    if is_tensor:
        from pullback.frontend.eager import to_tensor as make

        return make(out)
    return out


class BaseTransform:
    """A transform applied to an image (`keys` selects fields of a tuple input)."""

    def __init__(self, keys: Any = None) -> None:
        self.keys = keys

    def _apply_image(self, img: Any) -> Any:
        raise NotImplementedError

    def __call__(self, inputs: Any) -> Any:
        if isinstance(inputs, tuple):
            return (self._apply_image(inputs[0]), *inputs[1:])
        return self._apply_image(inputs)


class Compose:
    """Apply transforms in order."""

    def __init__(self, transforms: Sequence[Callable[[Any], Any]]) -> None:
        self.transforms = list(transforms)

    def __call__(self, data: Any) -> Any:
        for t in self.transforms:
            data = t(data)
        return data

    def __repr__(self) -> str:
        inner = "".join(f"\n    {t}" for t in self.transforms)
        return f"Compose({inner}\n)"


class ToTensor(BaseTransform):
    """`to_tensor` as a transform."""

    def __init__(self, data_format: str = "CHW", keys: Any = None) -> None:
        super().__init__(keys)
        self.data_format = data_format

    def _apply_image(self, img: Any) -> Any:
        return to_tensor(img, self.data_format)


class Normalize(BaseTransform):
    """`normalize` as a transform; a scalar `mean`/`std` applies to every channel."""

    def __init__(self, mean: Any = 0.0, std: Any = 1.0, data_format: str = "CHW", to_rgb: bool = False,
                 keys: Any = None) -> None:
        super().__init__(keys)
        if isinstance(mean, numbers.Number):
            mean = [mean, mean, mean]
        if isinstance(std, numbers.Number):
            std = [std, std, std]
        self.mean, self.std, self.data_format, self.to_rgb = mean, std, data_format, to_rgb

    def _apply_image(self, img: Any) -> Any:
        arr = _as_array(img)
        c = arr.shape[0] if self.data_format == "CHW" else arr.shape[-1]
        mean, std = list(self.mean)[:c], list(self.std)[:c]
        return normalize(img, mean, std, self.data_format, self.to_rgb)


class Transpose(BaseTransform):
    """Reorder the axes of an image (default HWC -> CHW)."""

    def __init__(self, order: Sequence[int] = (2, 0, 1), keys: Any = None) -> None:
        super().__init__(keys)
        self.order = tuple(order)

    def _apply_image(self, img: Any) -> Any:
        arr = _as_array(img)
        if arr.ndim == 2:
            arr = arr[:, :, None]
        return arr.transpose(self.order)


def _hw(size: Any) -> tuple[int, int]:
    if isinstance(size, numbers.Integral):
        return int(size), int(size)
    h, w = size
    return int(h), int(w)


def resize(img: Any, size: Any, interpolation: str = "bilinear") -> np.ndarray:
    """Resize an `HWC`/`HW` array to `size` (`(h, w)`, or an int for the shorter
    side keeping the aspect ratio), nearest or bilinear (half-pixel centers)."""
    arr = _as_array(img)
    h, w = arr.shape[:2]
    if isinstance(size, numbers.Integral):
        if h <= w:
            oh, ow = int(size), int(size * w / h)
        else:
            oh, ow = int(size * h / w), int(size)
    else:
        oh, ow = _hw(size)
    ys = (np.arange(oh) + 0.5) * h / oh - 0.5
    xs = (np.arange(ow) + 0.5) * w / ow - 0.5
    if interpolation == "nearest":
        yi = np.clip(np.floor(ys + 0.5).astype(int), 0, h - 1)
        xi = np.clip(np.floor(xs + 0.5).astype(int), 0, w - 1)
        return arr[yi][:, xi]
    if interpolation != "bilinear":
        raise ValueError(f"resize: interpolation must be 'nearest' or 'bilinear', got {interpolation!r}")
    ys, xs = np.clip(ys, 0, h - 1), np.clip(xs, 0, w - 1)
    y0, x0 = np.floor(ys).astype(int), np.floor(xs).astype(int)
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    wy, wx = (ys - y0), (xs - x0)
    a = arr.astype(np.float64)
    wy = wy.reshape(-1, 1, *([1] * (a.ndim - 2)))
    wx = wx.reshape(1, -1, *([1] * (a.ndim - 2)))
    top = a[y0][:, x0] * (1 - wx) + a[y0][:, x1] * wx
    bot = a[y1][:, x0] * (1 - wx) + a[y1][:, x1] * wx
    out = top * (1 - wy) + bot * wy
    return out.round().astype(arr.dtype) if arr.dtype == np.uint8 else out.astype(arr.dtype)


class Resize(BaseTransform):
    """`resize` as a transform."""

    def __init__(self, size: Any, interpolation: str = "bilinear", keys: Any = None) -> None:
        super().__init__(keys)
        self.size, self.interpolation = size, interpolation

    def _apply_image(self, img: Any) -> Any:
        return resize(img, self.size, self.interpolation)


class CenterCrop(BaseTransform):
    """Crop the center `size` (`(h, w)` or an int) of an `HWC`/`HW` image."""

    def __init__(self, size: Any, keys: Any = None) -> None:
        super().__init__(keys)
        self.size = _hw(size)

    def _apply_image(self, img: Any) -> Any:
        arr = _as_array(img)
        h, w = arr.shape[:2]
        th, tw = self.size
        if th > h or tw > w:
            raise ValueError(f"CenterCrop: crop size {[th, tw]} is larger than the image {[h, w]}")
        top, left = round((h - th) / 2.0), round((w - tw) / 2.0)
        return arr[top : top + th, left : left + tw]


class RandomResizedCrop(BaseTransform):
    """Crop a random area (a `scale` fraction of the image, aspect ratio in `ratio`,
    log-uniform) and resize it to `size`, as Paddle's: up to 10 draws (Python's
    `random`), else the largest central crop within `ratio`."""

    def __init__(self, size: Any, scale: Any = (0.08, 1.0), ratio: Any = (3.0 / 4, 4.0 / 3),
                 interpolation: str = "bilinear", keys: Any = None) -> None:
        super().__init__(keys)
        self.size = _hw(size)
        if scale[0] > scale[1] or ratio[0] > ratio[1]:
            raise ValueError("RandomResizedCrop: scale and ratio should be of kind (min, max)")
        self.scale, self.ratio, self.interpolation = tuple(scale), tuple(ratio), interpolation

    def _get_param(self, h: int, w: int) -> tuple[int, int, int, int]:
        import math
        import random

        area = h * w
        log_ratio = (math.log(self.ratio[0]), math.log(self.ratio[1]))
        for _ in range(10):
            target = random.uniform(*self.scale) * area
            aspect = math.exp(random.uniform(*log_ratio))
            cw = round(math.sqrt(target * aspect))
            ch = round(math.sqrt(target / aspect))
            if 0 < cw <= w and 0 < ch <= h:
                return random.randint(0, h - ch), random.randint(0, w - cw), ch, cw
        in_ratio = w / h
        if in_ratio < min(self.ratio):
            cw, ch = w, round(w / min(self.ratio))
        elif in_ratio > max(self.ratio):
            ch, cw = h, round(h * max(self.ratio))
        else:
            cw, ch = w, h
        return (h - ch) // 2, (w - cw) // 2, ch, cw

    def _apply_image(self, img: Any) -> Any:
        arr = _as_array(img)
        top, left, ch, cw = self._get_param(*arr.shape[:2])
        return resize(arr[top : top + ch, left : left + cw], self.size, self.interpolation)


class _RandomFlip(BaseTransform):
    _axis = 1

    def __init__(self, prob: float = 0.5, keys: Any = None) -> None:
        super().__init__(keys)
        if not 0 <= prob <= 1:
            raise ValueError(f"{type(self).__name__}: prob should be in [0, 1], got {prob}")
        self.prob = prob

    def _apply_image(self, img: Any) -> Any:
        arr = _as_array(img)
        if np.random.random() < self.prob:
            return np.ascontiguousarray(np.flip(arr, axis=self._axis))
        return arr


class RandomHorizontalFlip(_RandomFlip):
    """Flip an `HWC`/`HW` image left-right with probability `prob`."""

    _axis = 1


class RandomVerticalFlip(_RandomFlip):
    """Flip an `HWC`/`HW` image upside down with probability `prob`."""

    _axis = 0


__all__ = [
    "BaseTransform",
    "CenterCrop",
    "Compose",
    "Normalize",
    "RandomHorizontalFlip",
    "RandomResizedCrop",
    "RandomVerticalFlip",
    "Resize",
    "ToTensor",
    "Transpose",
    "normalize",
    "resize",
    "to_tensor",
]
