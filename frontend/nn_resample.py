"""Resampling, rearranging and small composite layers of `paddle.nn`: `Upsample`,
`UpsamplingNearest2D`, `UpsamplingBilinear2D`, `PixelShuffle`, `PixelUnshuffle`,
`ChannelShuffle`, `Unfold`, `Fold`, `LocalResponseNorm`, `Bilinear`,
`PairwiseDistance` and `Unflatten`.  Each calls its `paddle.nn.functional` function
(`frontend/ops/resample.py`, `frontend/ops/composite_nn.py`) with the settings fixed
at construction; `Bilinear` owns its weight and bias.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pullback.frontend.nn_layers import Layer, _Functional
from pullback.frontend.ops import composite_nn, resample, shape


class Upsample(_Functional):
    """`paddle.nn.Upsample`: `F.interpolate` with fixed settings."""

    _fn = staticmethod(resample.interpolate)

    def __init__(self, size: Any = None, scale_factor: Any = None, mode: str = "nearest",
                 align_corners: bool = False, align_mode: int = 0, data_format: str | None = None,
                 recompute_scale_factor: bool | None = None, name: str | None = None) -> None:
        super().__init__(size=size, scale_factor=scale_factor, mode=mode, align_corners=align_corners,
                         align_mode=align_mode, data_format=data_format,
                         recompute_scale_factor=recompute_scale_factor, name=name)


class AdaptiveAvgPool3D(_Functional):
    """`paddle.nn.AdaptiveAvgPool3D`: `F.adaptive_avg_pool3d`."""

    _fn = staticmethod(resample.adaptive_avg_pool3d)

    def __init__(self, output_size: Any, data_format: str = "NCDHW", name: str | None = None) -> None:
        super().__init__(output_size=output_size, data_format=data_format, name=name)


class AdaptiveMaxPool3D(_Functional):
    """`paddle.nn.AdaptiveMaxPool3D`: `F.adaptive_max_pool3d`."""

    _fn = staticmethod(resample.adaptive_max_pool3d)

    def __init__(self, output_size: Any, return_mask: bool = False, name: str | None = None) -> None:
        super().__init__(output_size=output_size, return_mask=return_mask, name=name)


class UpsamplingNearest2D(_Functional):
    """`paddle.nn.UpsamplingNearest2D`: nearest-neighbour `F.interpolate` of 4-D input."""

    _fn = staticmethod(resample.interpolate)

    def __init__(self, size: Any = None, scale_factor: Any = None, data_format: str = "NCHW",
                 name: str | None = None) -> None:
        super().__init__(size=size, scale_factor=scale_factor, mode="nearest", align_corners=False,
                         align_mode=0, data_format=data_format, name=name)


class UpsamplingBilinear2D(_Functional):
    """`paddle.nn.UpsamplingBilinear2D`: bilinear `F.interpolate` of 4-D input with
    `align_corners=True` (Paddle's choice for this layer)."""

    _fn = staticmethod(resample.interpolate)

    def __init__(self, size: Any = None, scale_factor: Any = None, data_format: str = "NCHW",
                 name: str | None = None) -> None:
        super().__init__(size=size, scale_factor=scale_factor, mode="bilinear", align_corners=True,
                         align_mode=0, data_format=data_format, name=name)


class PixelShuffle(_Functional):
    """`paddle.nn.PixelShuffle`: `F.pixel_shuffle`."""

    _fn = staticmethod(resample.pixel_shuffle)

    def __init__(self, upscale_factor: int, data_format: str = "NCHW", name: str | None = None) -> None:
        if isinstance(upscale_factor, bool) or not isinstance(upscale_factor, int):
            raise TypeError(f"PixelShuffle: upscale factor must be int type, got {upscale_factor!r}")
        super().__init__(upscale_factor=upscale_factor, data_format=data_format, name=name)


class PixelUnshuffle(_Functional):
    """`paddle.nn.PixelUnshuffle`: `F.pixel_unshuffle`."""

    _fn = staticmethod(resample.pixel_unshuffle)

    def __init__(self, downscale_factor: int, data_format: str = "NCHW", name: str | None = None) -> None:
        if isinstance(downscale_factor, bool) or not isinstance(downscale_factor, int):
            raise TypeError(f"PixelUnshuffle: Downscale factor must be int type, got {downscale_factor!r}")
        if downscale_factor <= 0:
            raise ValueError(f"PixelUnshuffle: Downscale factor must be positive, got {downscale_factor}")
        super().__init__(downscale_factor=downscale_factor, data_format=data_format, name=name)


class ChannelShuffle(_Functional):
    """`paddle.nn.ChannelShuffle`: `F.channel_shuffle`."""

    _fn = staticmethod(resample.channel_shuffle)

    def __init__(self, groups: int, data_format: str = "NCHW", name: str | None = None) -> None:
        if isinstance(groups, bool) or not isinstance(groups, int):
            raise TypeError(f"ChannelShuffle: groups must be int type, got {groups!r}")
        if groups <= 0:
            raise ValueError(f"ChannelShuffle: groups must be positive, got {groups}")
        super().__init__(groups=groups, data_format=data_format, name=name)


class Unfold(_Functional):
    """`paddle.nn.Unfold`: `F.unfold` (note the argument order: dilations before
    paddings before strides, as in Paddle)."""

    _fn = staticmethod(resample.unfold)

    def __init__(self, kernel_sizes: Any, dilations: Any = 1, paddings: Any = 0, strides: Any = 1,
                 name: str | None = None) -> None:
        super().__init__(kernel_sizes=kernel_sizes, strides=strides, paddings=paddings,
                         dilations=dilations, name=name)


class Fold(_Functional):
    """`paddle.nn.Fold`: `F.fold`."""

    _fn = staticmethod(resample.fold)

    def __init__(self, output_sizes: Any, kernel_sizes: Any, dilations: Any = 1, paddings: Any = 0,
                 strides: Any = 1, name: str | None = None) -> None:
        super().__init__(output_sizes=output_sizes, kernel_sizes=kernel_sizes, strides=strides,
                         paddings=paddings, dilations=dilations, name=name)


class LocalResponseNorm(_Functional):
    """`paddle.nn.LocalResponseNorm`: `F.local_response_norm`."""

    _fn = staticmethod(composite_nn.local_response_norm)

    def __init__(self, size: int, alpha: float = 0.0001, beta: float = 0.75, k: float = 1.0,
                 data_format: str = "NCHW", name: str | None = None) -> None:
        super().__init__(size=size, alpha=alpha, beta=beta, k=k, data_format=data_format, name=name)


class PairwiseDistance(Layer):
    """`paddle.nn.PairwiseDistance`: `F.pairwise_distance(x, y)`."""

    def __init__(self, p: float = 2.0, epsilon: float = 1e-6, keepdim: bool = False,
                 name: str | None = None) -> None:
        super().__init__()
        self._p, self._epsilon, self._keepdim, self._name = p, epsilon, keepdim, name

    def forward(self, x: Any, y: Any) -> Any:
        """The p-norm distance of x and y along the last axis."""
        return composite_nn.pairwise_distance(x, y, self._p, self._epsilon, self._keepdim, self._name)

    def extra_repr(self) -> str:
        return f"p={self._p}, epsilon={self._epsilon}, keepdim={self._keepdim}"


class Bilinear(Layer):
    """`paddle.nn.Bilinear`: `F.bilinear(x1, x2, weight, bias)` with a learnt weight
    `[out, in1, in2]` (Xavier uniform) and bias `[1, out]` (zeros)."""

    def __init__(self, in1_features: int, in2_features: int, out_features: int, weight_attr: Any = None,
                 bias_attr: Any = None, name: str | None = None) -> None:
        super().__init__()
        for arg, v in (("in1_features", in1_features), ("in2_features", in2_features),
                       ("out_features", out_features)):
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise ValueError(f"Bilinear: {arg} must be a positive int, got {v!r}")
        self._in1, self._in2, self._out, self._name = in1_features, in2_features, out_features, name
        self.weight = self.create_parameter([out_features, in1_features, in2_features], weight_attr)
        self.bias = self.create_parameter([1, out_features], bias_attr, is_bias=True)

    def forward(self, x1: Any, x2: Any) -> Any:
        """The bilinear form of x1 and x2 per output feature, plus the bias."""
        return composite_nn.bilinear(x1, x2, self.weight, self.bias, self._name)

    def extra_repr(self) -> str:
        return f"in1_features={self._in1}, in2_features={self._in2}, out_features={self._out}"


class Unflatten(Layer):
    """`paddle.nn.Unflatten`: dimension `axis` of the input reshaped to `shape`."""

    def __init__(self, axis: int, shape: Sequence[int], name: str | None = None) -> None:
        super().__init__()
        if isinstance(axis, bool) or not isinstance(axis, int):
            raise TypeError(f"Unflatten: axis must be an int, got {axis!r}")
        if not isinstance(shape, (list, tuple)) or not shape:
            raise TypeError(f"Unflatten: shape must be a non-empty list or tuple, got {shape!r}")
        self._axis, self._shape, self._name = axis, list(shape), name

    def forward(self, x: Any) -> Any:
        """x with dimension `axis` split into `shape` (one -1 is inferred)."""
        rank = len(x.shape)
        if not -rank <= self._axis < rank:
            raise ValueError(f"Unflatten: axis {self._axis} is out of range for a {rank}-D input")
        a = self._axis % rank
        dims = [int(d) for d in x.shape]
        d = dims[a]
        sizes = [int(s) for s in self._shape]
        known = 1
        for s in sizes:
            known *= s if s != -1 else 1
        if sizes.count(-1) > 1:
            raise ValueError(f"Unflatten: only one dimension of shape may be -1, got {sizes}")
        if d >= 0 and (d % known if -1 in sizes else known != d):
            raise ValueError(f"Unflatten: shape {sizes} does not fit dimension {a} (size {d}) of x")
        if -1 in sizes and d >= 0:
            sizes = [d // known if s == -1 else s for s in sizes]
        # `0` copies the input dimension at the same index, valid only before `axis`.
        target = [0 if v < 0 else v for v in dims[:a]] + sizes + [-1 if v < 0 else v for v in dims[a + 1:]]
        return shape.reshape(x, target, name=self._name)

    def extra_repr(self) -> str:
        return f"axis={self._axis}, shape={self._shape}"


__all__ = [
    "AdaptiveAvgPool3D", "AdaptiveMaxPool3D", "Bilinear", "ChannelShuffle", "Fold", "LocalResponseNorm", "PairwiseDistance", "PixelShuffle",
    "PixelUnshuffle", "Unflatten", "Unfold", "Upsample", "UpsamplingBilinear2D", "UpsamplingNearest2D",
]
