"""Convolution, pooling and padding layers beyond `nn.Conv2D` / `nn.MaxPool2D`:
`Conv1D`, `Conv1DTranspose`, `Conv2DTranspose`, `Conv3D`, `Conv3DTranspose`, `MaxPool1D`, `AvgPool1D`,
`MaxPool3D`, `AvgPool3D`,
`AdaptiveAvgPool1D`, `AdaptiveMaxPool1D`, `AdaptiveMaxPool2D`, `Pad1D`, `Pad2D`,
`Pad3D`, `ZeroPad2D`.

Convolution weights follow Paddle's `_ConvNd`: `[out, in/groups, *k]` (transposed:
`[in, out/groups, *k]`), initialized normal with std `sqrt(2 / (prod(k) * in))`;
biases zeros.
"""

from __future__ import annotations

import math
from typing import Any

from pullback.frontend.initializer import Normal
from pullback.frontend.nn_layers import Layer, _Functional
from pullback.frontend.ops import conv3d, nn, shape


def _kernel(fn: str, kernel_size: Any, dims: int) -> list[int]:
    if dims == 2:
        return nn.int_pair(fn, "kernel_size", kernel_size)
    if dims == 3:
        return conv3d.int_triple(fn, "kernel_size", kernel_size, 1)
    vals = [kernel_size] if isinstance(kernel_size, int) else list(kernel_size)
    if len(vals) != 1 or not isinstance(vals[0], int) or vals[0] < 1:
        raise ValueError(f"{fn}: kernel_size must be an int or 1 int >= 1, got {kernel_size!r}")
    return vals


class _ConvNd(Layer):
    """Shared construction of the convolution layers."""

    _dims = 2
    _transposed = False
    _default_format = "NCHW"

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, dilation: Any = 1, groups: int = 1,
                 padding_mode: str = "zeros", weight_attr: Any = None, bias_attr: Any = None,
                 data_format: str | None = None) -> None:
        super().__init__()
        fn = type(self).__name__
        self._in = nn.positive_int(fn, "in_channels", in_channels)
        self._out = nn.positive_int(fn, "out_channels", out_channels)
        self._groups = nn.positive_int(fn, "groups", groups)
        if self._in % self._groups or self._out % self._groups:
            raise ValueError(
                f"{fn}: in_channels ({self._in}) and out_channels ({self._out}) must be "
                f"divisible by groups ({self._groups})"
            )
        self._kernel_size = _kernel(fn, kernel_size, self._dims)
        self._stride, self._padding, self._dilation = stride, padding, dilation
        self._output_padding = output_padding
        self._data_format = data_format or self._default_format
        self._padding_mode = padding_mode
        self._pre_pad = None if self._transposed else nn.mode_padding(fn, padding, self._dims, padding_mode)
        if self._transposed and padding_mode != "zeros":
            raise ValueError(f"{fn}: only padding_mode='zeros' is supported for transposed convolution")
        std = (2.0 / (math.prod(self._kernel_size) * self._in)) ** 0.5
        shape_ = ([self._in, self._out // self._groups] if self._transposed
                  else [self._out, self._in // self._groups]) + self._kernel_size
        self.weight = self.create_parameter(shape_, weight_attr, default_initializer=Normal(0.0, std))
        self.bias = self.create_parameter([self._out], bias_attr, is_bias=True)

    def _pad_input(self, x: Any) -> tuple[Any, Any]:
        if self._pre_pad is None:
            return x, self._padding
        return shape.pad(x, self._pre_pad, mode=self._padding_mode, data_format=self._data_format), 0

    def extra_repr(self) -> str:
        s = f"{self._in}, {self._out}, kernel_size={self._kernel_size}"
        if self._stride not in (1, [1], [1, 1]):
            s += f", stride={self._stride}"
        if self._padding not in (0, [0], [0, 0]):
            s += f", padding={self._padding}"
        if self._groups != 1:
            s += f", groups={self._groups}"
        if self._data_format != self._default_format:
            s += f", data_format={self._data_format}"
        return s


class Conv1D(_ConvNd):
    """1-D convolution over `[N, C, L]` (`NCL`) or `[N, L, C]` (`NLC`) input."""

    _dims = 1
    _default_format = "NCL"

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, padding_mode: str = "zeros",
                 weight_attr: Any = None, bias_attr: Any = None, data_format: str = "NCL") -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, 0, dilation, groups,
                         padding_mode, weight_attr, bias_attr, data_format)

    def forward(self, x: Any) -> Any:
        """`F.conv1d` with the layer's weight, bias and settings."""
        x, padding = self._pad_input(x)
        return nn.conv1d(x, self.weight, self.bias, self._stride, padding, self._dilation,
                         self._groups, self._data_format)


class Conv2DTranspose(_ConvNd):
    """Transposed 2-D convolution; weight `[in, out/groups, kh, kw]`.
    `forward(x, output_size=None)`."""

    _transposed = True

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1,
                 weight_attr: Any = None, bias_attr: Any = None, data_format: str = "NCHW") -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding,
                         dilation, groups, "zeros", weight_attr, bias_attr, data_format)

    def forward(self, x: Any, output_size: Any = None) -> Any:
        """`F.conv2d_transpose` with the layer's weight, bias and settings."""
        extra = 0 if output_size is not None else self._output_padding
        return nn.conv2d_transpose(x, self.weight, self.bias, self._stride, self._padding, extra,
                                   self._groups, self._dilation, output_size, self._data_format)


class Conv1DTranspose(_ConvNd):
    """Transposed 1-D convolution; weight `[in, out/groups, k]`."""

    _dims = 1
    _transposed = True
    _default_format = "NCL"

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1,
                 weight_attr: Any = None, bias_attr: Any = None, data_format: str = "NCL") -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding,
                         dilation, groups, "zeros", weight_attr, bias_attr, data_format)

    def forward(self, x: Any, output_size: Any = None) -> Any:
        """`F.conv1d_transpose` with the layer's weight, bias and settings."""
        extra = 0 if output_size is not None else self._output_padding
        return nn.conv1d_transpose(x, self.weight, self.bias, self._stride, self._padding, extra,
                                   self._groups, self._dilation, output_size, self._data_format)


class Conv3D(_ConvNd):
    """3-D convolution over `[N, C, D, H, W]` (`NCDHW`) or `[N, D, H, W, C]` input."""

    _dims = 3
    _default_format = "NCDHW"

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, dilation: Any = 1, groups: int = 1, padding_mode: str = "zeros",
                 weight_attr: Any = None, bias_attr: Any = None, data_format: str = "NCDHW") -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, 0, dilation, groups,
                         padding_mode, weight_attr, bias_attr, data_format)

    def forward(self, x: Any) -> Any:
        """`F.conv3d` with the layer's weight, bias and settings."""
        x, padding = self._pad_input(x)
        return conv3d.conv3d(x, self.weight, self.bias, self._stride, padding, self._dilation,
                             self._groups, self._data_format)


class Conv3DTranspose(_ConvNd):
    """3-D transposed convolution; weight `[in, out/groups, kd, kh, kw]`."""

    _dims = 3
    _transposed = True
    _default_format = "NCDHW"

    def __init__(self, in_channels: int, out_channels: int, kernel_size: Any, stride: Any = 1,
                 padding: Any = 0, output_padding: Any = 0, groups: int = 1, dilation: Any = 1,
                 weight_attr: Any = None, bias_attr: Any = None, data_format: str = "NCDHW") -> None:
        super().__init__(in_channels, out_channels, kernel_size, stride, padding, output_padding, dilation,
                         groups, "zeros", weight_attr, bias_attr, data_format)

    def forward(self, x: Any, output_size: Any = None) -> Any:
        """`F.conv3d_transpose` with the layer's weight, bias and settings."""
        extra = 0 if output_size is not None else self._output_padding
        return conv3d.conv3d_transpose(x, self.weight, self.bias, self._stride, self._padding, extra,
                                       self._groups, self._dilation, output_size, self._data_format)


class MaxPool3D(_Functional):
    """`F.max_pool3d` with fixed settings."""

    _fn = staticmethod(conv3d.max_pool3d)

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 return_mask: bool = False, data_format: str = "NCDHW", name: str | None = None) -> None:
        super().__init__(kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode,
                         return_mask=return_mask, data_format=data_format, name=name)


class AvgPool3D(_Functional):
    """`F.avg_pool3d` with fixed settings."""

    _fn = staticmethod(conv3d.avg_pool3d)

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, ceil_mode: bool = False,
                 exclusive: bool = True, divisor_override: float | None = None, data_format: str = "NCDHW",
                 name: str | None = None) -> None:
        super().__init__(kernel_size=kernel_size, stride=stride, padding=padding, ceil_mode=ceil_mode,
                         exclusive=exclusive, divisor_override=divisor_override, data_format=data_format,
                         name=name)


class MaxPool1D(_Functional):
    """`F.max_pool1d` with fixed settings."""

    _fn = staticmethod(nn.max_pool1d)

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, return_mask: bool = False,
                 ceil_mode: bool = False, name: str | None = None) -> None:
        super().__init__(kernel_size=kernel_size, stride=stride, padding=padding, return_mask=return_mask,
                         ceil_mode=ceil_mode, name=name)


class AvgPool1D(_Functional):
    """`F.avg_pool1d` with fixed settings."""

    _fn = staticmethod(nn.avg_pool1d)

    def __init__(self, kernel_size: Any, stride: Any = None, padding: Any = 0, exclusive: bool = True,
                 ceil_mode: bool = False, name: str | None = None) -> None:
        super().__init__(kernel_size=kernel_size, stride=stride, padding=padding, exclusive=exclusive,
                         ceil_mode=ceil_mode, name=name)


class AdaptiveAvgPool1D(_Functional):
    """`F.adaptive_avg_pool1d(x, output_size)`."""

    _fn = staticmethod(nn.adaptive_avg_pool1d)

    def __init__(self, output_size: int, name: str | None = None) -> None:
        super().__init__(output_size=output_size, name=name)


class AdaptiveMaxPool1D(_Functional):
    """`F.adaptive_max_pool1d(x, output_size)`."""

    _fn = staticmethod(nn.adaptive_max_pool1d)

    def __init__(self, output_size: int, return_mask: bool = False, name: str | None = None) -> None:
        super().__init__(output_size=output_size, return_mask=return_mask, name=name)


class AdaptiveMaxPool2D(_Functional):
    """`F.adaptive_max_pool2d(x, output_size)`."""

    _fn = staticmethod(nn.adaptive_max_pool2d)

    def __init__(self, output_size: Any, return_mask: bool = False, name: str | None = None) -> None:
        super().__init__(output_size=output_size, return_mask=return_mask, name=name)


class _PadNd(Layer):
    """`F.pad` with a fixed padding (an int pads every spatial side)."""

    _sides = 4
    _default_format = "NCHW"

    def __init__(self, padding: Any, mode: str = "constant", value: float = 0.0,
                 data_format: str | None = None, name: str | None = None) -> None:
        super().__init__()
        fn = type(self).__name__
        pads = [padding] * self._sides if isinstance(padding, int) else list(padding)
        if len(pads) != self._sides or not all(isinstance(p, int) for p in pads):
            raise ValueError(f"{fn}: padding must be an int or {self._sides} ints, got {padding!r}")
        self._pad, self._mode, self._value = pads, mode, value
        self._data_format = data_format or self._default_format
        self._name = name

    def forward(self, x: Any) -> Any:
        """`F.pad(x, padding, mode, value, data_format)`."""
        return shape.pad(x, self._pad, mode=self._mode, value=self._value,
                         data_format=self._data_format, name=self._name)

    def extra_repr(self) -> str:
        return f"padding={self._pad}, mode={self._mode}, value={self._value}, data_format={self._data_format}"


class Pad1D(_PadNd):
    """Pad the last axis of `[N, C, L]` input: `[left, right]`."""

    _sides = 2
    _default_format = "NCL"


class Pad2D(_PadNd):
    """Pad the spatial axes of NCHW input: `[left, right, top, bottom]`."""


class Pad3D(_PadNd):
    """Pad the spatial axes of NCDHW input: `[left, right, top, bottom, front, back]`."""

    _sides = 6
    _default_format = "NCDHW"


class ZeroPad2D(_PadNd):
    """`Pad2D` with zeros."""

    def __init__(self, padding: Any, data_format: str = "NCHW", name: str | None = None) -> None:
        super().__init__(padding, "constant", 0.0, data_format, name)


__all__ = [
    "AdaptiveAvgPool1D",
    "AdaptiveMaxPool1D",
    "AdaptiveMaxPool2D",
    "AvgPool1D",
    "AvgPool3D",
    "Conv1D",
    "Conv1DTranspose",
    "Conv2DTranspose",
    "Conv3D",
    "Conv3DTranspose",
    "MaxPool1D",
    "MaxPool3D",
    "Pad1D",
    "Pad2D",
    "Pad3D",
    "ZeroPad2D",
]
