"""Normalization layers: `paddle.nn.BatchNorm1D/2D/3D`, `nn.BatchNorm` (the fluid
dygraph layer), `nn.GroupNorm`, `nn.InstanceNorm1D/2D/3D`, `nn.SpectralNorm`.

As in Paddle, a batch-norm layer's running statistics are parameters that are not
trainable (`_mean` and `_variance`, `stop_gradient=True`): they appear in
`parameters()` and in `state_dict()` under those keys, and optimizers skip them.
`train()` / `eval()` switch between batch and running statistics.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pullback.frontend.initializer import Constant
from pullback.frontend.nn_layers import Layer
from pullback.frontend.ops import nn, norm
from pullback.frontend.param_attr import ParamAttr


def _running_stat(layer: Layer, name: str | None, value: float, shape: list[int], dtype: str,
                  do_model_average: bool = True) -> Any:
    attr = ParamAttr(name=name, initializer=Constant(value), trainable=False,
                     do_model_average=do_model_average)
    p = layer.create_parameter(shape, attr, dtype=dtype)
    p.stop_gradient = True
    return p


class _BatchNormBase(Layer):
    """Shared parameters and forward of `BatchNorm1D/2D/3D`: `weight` (ones),
    `bias` (zeros), `_mean` (zeros) and `_variance` (ones), each `[num_features]`."""

    _formats: ClassVar[dict[str, str]] = {}
    _ranks: ClassVar[tuple[int, ...]] = ()

    def __init__(self, num_features: int, momentum: float = 0.9, epsilon: float = 1e-05,
                 weight_attr: Any = None, bias_attr: Any = None, data_format: str = "NCHW",
                 use_global_stats: bool | None = None, name: str | None = None) -> None:
        super().__init__()
        fn = type(self).__name__
        c = nn.positive_int(fn, "num_features", num_features)
        self._num_features = c
        self._use_global_stats = use_global_stats
        self._momentum, self._epsilon = momentum, epsilon
        self._name = name
        self._data_format = data_format
        self._layout = self._check_data_format(data_format)
        shape = [c]
        self.weight = None if weight_attr is False else self.create_parameter(
            shape, weight_attr, default_initializer=Constant(1.0))
        self.bias = None if bias_attr is False else self.create_parameter(
            shape, bias_attr, is_bias=True)
        mean_name = None if name is None else f"{name}_mean"
        var_name = None if name is None else f"{name}_variance"
        self._mean = _running_stat(self, mean_name, 0.0, shape, self._dtype)
        self._variance = _running_stat(self, var_name, 1.0, shape, self._dtype)

    def _check_data_format(self, data_format: str) -> str:
        layout = self._formats.get(data_format)
        if layout is None:
            raise ValueError(
                f"{type(self).__name__}: expected data_format in {list(self._formats)}, got {data_format!r}"
            )
        return layout

    def _check_input_dim(self, x: Any) -> None:
        if len(x.shape) not in self._ranks:
            want = " or ".join(f"{r}D" for r in self._ranks)
            raise ValueError(f"{type(self).__name__}: expected {want} input (got {len(x.shape)}D input)")

    def forward(self, x: Any) -> Any:
        """`F.batch_norm` with the layer's parameters, `training=self.training`."""
        self._check_input_dim(x)
        return norm.batch_norm(
            x, self._mean, self._variance, weight=self.weight, bias=self.bias,
            training=self.training, momentum=self._momentum, epsilon=self._epsilon,
            data_format=self._layout, use_global_stats=self._use_global_stats, name=self._name)

    def extra_repr(self) -> str:
        s = f"num_features={self._num_features}, momentum={self._momentum}, epsilon={self._epsilon}"
        if self._layout != "NCHW":
            s += f", data_format={self._data_format}"
        if self._name is not None:
            s += f", name={self._name}"
        return s


class BatchNorm1D(_BatchNormBase):
    """Batch normalization of `[N, C]` or `[N, C, L]` input (`NC`/`NCL`) or
    `[N, L, C]` (`NLC`)."""

    _formats: ClassVar[dict[str, str]] = {"NC": "NCHW", "NCL": "NCHW", "NCHW": "NCHW", "NLC": "NHWC", "NHWC": "NHWC"}
    _ranks = (2, 3)

    def __init__(self, num_features: int, momentum: float = 0.9, epsilon: float = 1e-05,
                 weight_attr: Any = None, bias_attr: Any = None, data_format: str = "NCL",
                 use_global_stats: bool | None = None, name: str | None = None) -> None:
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, data_format,
                         use_global_stats, name)


class BatchNorm2D(_BatchNormBase):
    """Batch normalization of `[N, C, H, W]` (`NCHW`) or `[N, H, W, C]` (`NHWC`) input."""

    _formats: ClassVar[dict[str, str]] = {"NCHW": "NCHW", "NHWC": "NHWC"}
    _ranks = (4,)


class BatchNorm3D(_BatchNormBase):
    """Batch normalization of `[N, C, D, H, W]` (`NCDHW`) or `[N, D, H, W, C]` input."""

    _formats: ClassVar[dict[str, str]] = {"NCDHW": "NCHW", "NCHW": "NCHW", "NDHWC": "NHWC", "NHWC": "NHWC"}
    _ranks = (5,)

    def __init__(self, num_features: int, momentum: float = 0.9, epsilon: float = 1e-05,
                 weight_attr: Any = None, bias_attr: Any = None, data_format: str = "NCDHW",
                 use_global_stats: bool | None = None, name: str | None = None) -> None:
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, data_format,
                         use_global_stats, name)


class SyncBatchNorm(_BatchNormBase):
    """`paddle.nn.SyncBatchNorm`: batch normalization whose statistics are taken over
    every device of the data-parallel group.  On one device (all this backend runs)
    the group is that device, so it is `BatchNorm1D/2D/3D` over input of rank 2 to 5
    (`NCHW`-style or `NHWC`-style layouts)."""

    _formats: ClassVar[dict[str, str]] = {
        "NC": "NCHW", "NCL": "NCHW", "NCHW": "NCHW", "NCDHW": "NCHW",
        "NLC": "NHWC", "NHWC": "NHWC", "NDHWC": "NHWC",
    }
    _ranks = (2, 3, 4, 5)

    @classmethod
    def convert_sync_batchnorm(cls, layer: Layer) -> Layer:
        """`SyncBatchNorm.convert_sync_batchnorm`: `layer` with every `BatchNorm1D/2D/3D`
        in it (itself included) replaced by a `SyncBatchNorm` that shares its
        parameters and running statistics."""
        out = layer
        if isinstance(layer, _BatchNormBase) and not isinstance(layer, SyncBatchNorm):
            out = SyncBatchNorm(layer._num_features, layer._momentum, layer._epsilon,
                                weight_attr=False if layer.weight is None else None,
                                bias_attr=False if layer.bias is None else None,
                                data_format=layer._layout, name=layer._name)
            if layer.weight is not None:
                out.weight = layer.weight
            if layer.bias is not None:
                out.bias = layer.bias
            out._mean, out._variance = layer._mean, layer._variance
            out._use_global_stats = layer._use_global_stats
            out.training = layer.training
        for child_name, child in list(layer.named_children()):
            out.add_sublayer(child_name, cls.convert_sync_batchnorm(child))
        return out


class BatchNorm(Layer):
    """`paddle.nn.BatchNorm` (fluid's dygraph layer): batch normalization of input
    of rank 2 to 5 with an optional activation `act`. `is_test` (or `eval()`) uses
    the running statistics; `use_global_stats` always does; `trainable_statistics`
    uses the batch's even in inference."""

    def __init__(self, num_channels: int, act: str | None = None, is_test: bool = False,
                 momentum: float = 0.9, epsilon: float = 1e-05, param_attr: Any = None,
                 bias_attr: Any = None, dtype: Any = "float32", data_layout: str = "NCHW",
                 in_place: bool = False, moving_mean_name: str | None = None,
                 moving_variance_name: str | None = None,
                 do_model_average_for_mean_and_var: bool = True, use_global_stats: bool = False,
                 trainable_statistics: bool = False) -> None:
        super().__init__(dtype=dtype)
        c = nn.positive_int("BatchNorm", "num_channels", num_channels)
        if data_layout not in ("NCHW", "NHWC"):
            raise ValueError(f"BatchNorm: data_layout must be 'NCHW' or 'NHWC', got {data_layout!r}")
        shape = [c]
        self.weight = None if param_attr is False else self.create_parameter(
            shape, param_attr, default_initializer=Constant(1.0))
        self.bias = None if bias_attr is False else self.create_parameter(
            shape, bias_attr, is_bias=True)
        self._mean = _running_stat(self, moving_mean_name, 0.0, shape, self._dtype,
                                   do_model_average_for_mean_and_var)
        self._variance = _running_stat(self, moving_variance_name, 1.0, shape, self._dtype,
                                       do_model_average_for_mean_and_var)
        self._act, self._momentum, self._epsilon = act, momentum, epsilon
        self._data_layout = data_layout
        self._use_global_stats = bool(use_global_stats)
        self._trainable_statistics = bool(trainable_statistics)
        self._num_channels = c
        self.training = not is_test

    def forward(self, x: Any) -> Any:
        """Batch normalization, then the activation."""
        fn = "BatchNorm"
        norm.check_float_tensor(fn, "input", x)
        if not 2 <= len(x.shape) <= 5:
            raise ValueError(f"{fn}: input must have rank 2 to 5, got shape {list(x.shape)}")
        y = norm.apply_batch_norm(
            fn, x, self.weight, self.bias, self._mean, self._variance,
            momentum=float(self._momentum), epsilon=float(self._epsilon), layout=self._data_layout,
            is_test=not self.training, use_global_stats=self._use_global_stats,
            trainable_statistics=self._trainable_statistics,
            base=self.full_name(), reserve=(1, 0))
        if self._act is None:
            return y
        from pullback.frontend.layers import _activation

        return _activation(y, self._act, self.full_name(), fn)

    def extra_repr(self) -> str:
        return f"num_channels={self._num_channels}, momentum={self._momentum}, epsilon={self._epsilon}"


class GroupNorm(Layer):
    """`F.group_norm` with a per-channel `weight` (ones) and `bias` (zeros); with
    `weight_attr=False` / `bias_attr=False` they are fixed (not trained), as in Paddle."""

    def __init__(self, num_groups: int, num_channels: int, epsilon: float = 1e-05,
                 weight_attr: Any = None, bias_attr: Any = None, data_format: str = "NCHW",
                 name: str | None = None) -> None:
        super().__init__()
        fn = "GroupNorm"
        if data_format not in ("NCL", "NCHW", "NCDHW", "NLC", "NHWC", "NDHWC"):
            raise ValueError(f"{fn}: unsupported data layout: {data_format}")
        self._num_groups = nn.positive_int(fn, "num_groups", num_groups)
        self._num_channels = nn.positive_int(fn, "num_channels", num_channels)
        if self._num_channels % self._num_groups:
            raise ValueError(
                f"{fn}: num_channels ({num_channels}) must be divisible by num_groups ({num_groups})"
            )
        self._epsilon, self._data_format = epsilon, data_format
        shape = [self._num_channels]
        self.weight = self.create_parameter(
            shape, None if weight_attr is False else weight_attr, default_initializer=Constant(1.0))
        self.bias = self.create_parameter(
            shape, None if bias_attr is False else bias_attr, is_bias=True)
        if weight_attr is False:
            self.weight.stop_gradient = True
        if bias_attr is False:
            self.bias.stop_gradient = True

    def forward(self, x: Any) -> Any:
        """`F.group_norm(x, num_groups, epsilon, weight, bias, data_format)`."""
        return norm.group_norm(x, self._num_groups, self._epsilon, self.weight, self.bias,
                               self._data_format)

    def extra_repr(self) -> str:
        return (f"num_groups={self._num_groups}, num_channels={self._num_channels}, "
                f"epsilon={self._epsilon}")


class _InstanceNormBase(Layer):
    """`F.instance_norm` with a per-channel `scale` (ones) and `bias` (zeros);
    `weight_attr=False` and `bias_attr=False` (together) leave both out."""

    _rank: tuple[int, ...] = ()

    def __init__(self, num_features: int, epsilon: float = 1e-05, momentum: float = 0.9,
                 weight_attr: Any = None, bias_attr: Any = None, data_format: str = "NCHW",
                 name: str | None = None) -> None:
        super().__init__()
        fn = type(self).__name__
        if (weight_attr is False) != (bias_attr is False):
            raise ValueError(f"{fn}: weight_attr and bias_attr must be set to False at the same time")
        self._num_features = nn.positive_int(fn, "num_features", num_features)
        self._epsilon, self._momentum, self._data_format = epsilon, momentum, data_format
        if weight_attr is False:
            self.scale = self.bias = None
        else:
            shape = [self._num_features]
            self.scale = self.create_parameter(shape, weight_attr, default_initializer=Constant(1.0))
            self.bias = self.create_parameter(shape, bias_attr, is_bias=True)

    def forward(self, x: Any) -> Any:
        """`F.instance_norm` with the layer's parameters."""
        if len(x.shape) not in self._rank:
            want = " or ".join(f"{r}D" for r in self._rank)
            raise ValueError(f"{type(self).__name__}: expected {want} input (got {len(x.shape)}D input)")
        return norm.instance_norm(x, weight=self.scale, bias=self.bias, momentum=self._momentum,
                                  eps=self._epsilon, data_format=self._data_format)

    def extra_repr(self) -> str:
        return f"num_features={self._num_features}, epsilon={self._epsilon}"


class InstanceNorm1D(_InstanceNormBase):
    """Instance normalization of `[N, C, L]` input."""

    _rank = (3,)

    def __init__(self, num_features: int, epsilon: float = 1e-05, momentum: float = 0.9,
                 weight_attr: Any = None, bias_attr: Any = None, data_format: str = "NCL",
                 name: str | None = None) -> None:
        super().__init__(num_features, epsilon, momentum, weight_attr, bias_attr, data_format, name)


class InstanceNorm2D(_InstanceNormBase):
    """Instance normalization of `[N, C, H, W]` input."""

    _rank = (4,)


class InstanceNorm3D(_InstanceNormBase):
    """Instance normalization of `[N, C, D, H, W]` input."""

    _rank = (5,)

    def __init__(self, num_features: int, epsilon: float = 1e-05, momentum: float = 0.9,
                 weight_attr: Any = None, bias_attr: Any = None, data_format: str = "NCDHW",
                 name: str | None = None) -> None:
        super().__init__(num_features, epsilon, momentum, weight_attr, bias_attr, data_format, name)


class SpectralNorm(Layer):
    """`paddle.nn.SpectralNorm(weight_shape, dim, power_iters, eps, dtype)`: the layer
    maps a weight `W` (its input) to `W / sigma(W)`, sigma the largest singular value
    of `W` as a matrix `[shape[dim], -1]`, estimated by `power_iters` power
    iterations from the layer's `weight_u` `[shape[dim]]` and `weight_v` `[rest]`
    (standard-normal parameters with `stop_gradient=True`; as in Paddle they are
    read, not updated).  As Paddle's `spectral_norm` op, the iterated u and v are
    constants of the gradient: `d out / d W` is that of `W / (u^T W v)`.  Eager mode
    only (the power iteration runs on the weight's values)."""

    def __init__(self, weight_shape: Any, dim: int = 0, power_iters: int = 1, eps: float = 1e-12,
                 dtype: Any = "float32") -> None:
        super().__init__()
        import math

        from pullback.frontend.initializer import Normal

        self._power_iters, self._eps, self._dim, self._dtype = power_iters, eps, dim, dtype
        self._weight_shape = [int(d) for d in weight_shape]
        assert math.prod(self._weight_shape) > 0, "Any dimension of `weight_shape` cannot be equal to 0."
        assert dim < len(self._weight_shape), (
            f"The input `dim` should be less than the length of `weight_shape`, but received dim={dim}"
        )
        if dim < 0:
            raise ValueError(f"SpectralNorm: dim should be in [0, {len(self._weight_shape)}), got {dim}")
        h = self._weight_shape[dim]
        w = math.prod(self._weight_shape) // h
        self.weight_u = self.create_parameter([h], ParamAttr(), dtype=dtype, default_initializer=Normal(0.0, 1.0))
        self.weight_u.stop_gradient = True
        self.weight_v = self.create_parameter([w], ParamAttr(), dtype=dtype, default_initializer=Normal(0.0, 1.0))
        self.weight_v.stop_gradient = True

    def forward(self, x: Any) -> Any:
        import numpy as np

        from pullback.frontend.eager import Tensor, to_tensor
        from pullback.frontend.ops import nn as nn_ops
        from pullback.frontend.ops import shape as shape_ops

        from pullback.frontend.core import in_dynamic_mode

        if not in_dynamic_mode():
            raise NotImplementedError("nn.SpectralNorm: supported in eager mode only")
        if not isinstance(x, Tensor):
            raise TypeError(f"SpectralNorm: the weight should be a Tensor, got {type(x).__name__}")
        if str(x.dtype).replace("paddle.", "") not in ("float32", "float64"):
            raise TypeError(f"SpectralNorm: the weight's dtype should be float32 or float64, got {x.dtype}")
        shape, dim = [int(d) for d in x.shape], self._dim
        rank, h = len(shape), shape[dim]
        perm = [dim] + [i for i in range(rank) if i != dim]
        mat = shape_ops.reshape(shape_ops.transpose(x, perm) if dim != 0 else x, [h, -1])
        wm = mat.numpy().astype(np.float64)
        u = self.weight_u.numpy().astype(np.float64).reshape(h, 1)
        v = self.weight_v.numpy().astype(np.float64).reshape(-1, 1)
        for _ in range(self._power_iters):
            v = wm.T @ u
            v = v / (np.sqrt((v * v).sum()) + self._eps)
            u = wm @ v
            u = u / (np.sqrt((u * u).sum()) + self._eps)
        dt = x.numpy().dtype
        ut = to_tensor(u.reshape(1, h).astype(dt))
        vt = to_tensor(v.astype(dt))
        sigma = shape_ops.reshape(nn_ops.matmul(nn_ops.matmul(ut, mat), vt), [])
        return x / sigma


__all__ = [
    "BatchNorm",
    "BatchNorm1D",
    "BatchNorm2D",
    "BatchNorm3D",
    "GroupNorm",
    "InstanceNorm1D",
    "InstanceNorm2D",
    "InstanceNorm3D",
    "SpectralNorm",
    "SyncBatchNorm",
]
