"""Activation layers of `paddle.nn` (`nn.Silu`, `nn.Mish`, `nn.PReLU`, ...): each
calls its `paddle.nn.functional` function with the arguments fixed at construction;
`PReLU` owns its slope parameter.  The common ones (`ReLU`, `GELU`, ...) live in
`nn_layers`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pullback.frontend.initializer import Constant
from pullback.frontend.nn_layers import Layer, _Functional
from pullback.frontend.ops import activation, composite, composite_nn, reduction


def _layer(cls_name: str, fn: Callable[..., Any], **defaults: Any) -> type[_Functional]:
    """A `_Functional` subclass named `cls_name` calling `fn(x, **kwargs)`, whose
    constructor takes `defaults` (in order, by position or keyword) and `name`."""
    params = list(defaults)

    def __init__(self: _Functional, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(params):
            raise TypeError(f"{cls_name}() takes at most {len(params)} positional arguments")
        values = dict(defaults)
        values.update(zip(params, args))
        for k, v in kwargs.items():
            if k not in values and k != "name":
                raise TypeError(f"{cls_name}() got an unexpected keyword argument '{k}'")
            values[k] = v
        _Functional.__init__(self, **values)

    doc = f"`paddle.nn.{cls_name}`: `{fn.__module__.rsplit('.', 1)[-1]}.{fn.__name__}`" \
          f"({', '.join(['x', *params])})."
    return type(cls_name, (_Functional,), {"_fn": staticmethod(fn), "__init__": __init__, "__doc__": doc})


Silu = _layer("Silu", composite.silu)
Swish = _layer("Swish", composite.swish)
Mish = _layer("Mish", activation.mish)
Hardswish = _layer("Hardswish", activation.hardswish)
Hardsigmoid = _layer("Hardsigmoid", activation.hardsigmoid)
ReLU6 = _layer("ReLU6", activation.relu6)
SELU = _layer("SELU", activation.selu, scale=1.0507009873554804934193349852946,
              alpha=1.6732632423543772848170429916717)
CELU = _layer("CELU", activation.celu, alpha=1.0)
ELU = _layer("ELU", composite.elu, alpha=1.0)
GLU = _layer("GLU", activation.glu, axis=-1)
Softsign = _layer("Softsign", activation.softsign)
Tanhshrink = _layer("Tanhshrink", activation.tanhshrink)
Hardshrink = _layer("Hardshrink", activation.hardshrink, threshold=0.5)
Softshrink = _layer("Softshrink", activation.softshrink, threshold=0.5)
ThresholdedReLU = _layer("ThresholdedReLU", activation.thresholded_relu, threshold=1.0, value=0.0)
Softplus = _layer("Softplus", composite.softplus, beta=1, threshold=20)
LogSigmoid = _layer("LogSigmoid", composite.log_sigmoid)
Hardtanh = _layer("Hardtanh", composite.hardtanh, min=-1.0, max=1.0)
LogSoftmax = _layer("LogSoftmax", reduction.log_softmax, axis=-1)
SiLU = Silu  # Paddle 3.x spells it both ways
Maxout = _layer("Maxout", composite_nn.maxout, groups=None, axis=1)


class PReLU(Layer):
    """`paddle.nn.PReLU`: `F.prelu` with a learnt slope, `num_parameters` elements
    (1: shared; else one per channel) initialized to `init`."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, weight_attr: Any = None,
                 data_format: str = "NCHW", name: str | None = None) -> None:
        super().__init__()
        if isinstance(num_parameters, bool) or not isinstance(num_parameters, int) or num_parameters < 1:
            raise ValueError(f"PReLU: num_parameters must be a positive int, got {num_parameters!r}")
        self._num_parameters, self._init, self._data_format, self._name = (
            num_parameters, init, data_format, name)
        # Paddle names the slope `_weight` (state_dict key `_weight`).
        self._weight = self.create_parameter([num_parameters], attr=weight_attr,
                                             default_initializer=Constant(float(init)))

    def forward(self, x: Any) -> Any:
        """`F.prelu(x, self._weight, data_format)`."""
        return activation.prelu(x, self._weight, self._data_format, name=self._name)

    def extra_repr(self) -> str:
        return f"num_parameters={self._num_parameters}, data_format={self._data_format}, init={self._init}"


class RReLU(Layer):
    """`paddle.nn.RReLU`: `F.rrelu` with random slopes in `[lower, upper]` while
    training and their mean in eval mode."""

    def __init__(self, lower: float = 1.0 / 8.0, upper: float = 1.0 / 3.0, name: str | None = None) -> None:
        super().__init__()
        self._lower, self._upper, self._name = lower, upper, name

    def forward(self, x: Any) -> Any:
        """`F.rrelu(x, lower, upper, training=self.training)`."""
        return composite_nn.rrelu(x, self._lower, self._upper, training=self.training, name=self._name)

    def extra_repr(self) -> str:
        return f"lower={self._lower}, upper={self._upper}"


class Softmax2D(Layer):
    """`paddle.nn.Softmax2D`: softmax over the channels (axis -3) of a 3-D `[C, H, W]`
    or 4-D `[N, C, H, W]` input."""

    def __init__(self, name: str | None = None) -> None:
        super().__init__()
        self._name = name

    def forward(self, x: Any) -> Any:
        """`F.softmax(x, axis=-3)`."""
        if len(x.shape) not in (3, 4):
            raise ValueError(f"Softmax2D: Softmax2D requires a 3D or 4D tensor as input. Received: "
                             f"{len(x.shape)}D.")
        return reduction.softmax(x, axis=-3, name=self._name)


__all__ = [
    "CELU", "ELU", "GLU", "SELU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh",
    "LogSigmoid", "LogSoftmax", "Mish", "PReLU", "ReLU6", "Silu", "Softplus", "Softshrink",
    "Softsign", "Swish", "Tanhshrink", "ThresholdedReLU", "SiLU", "Maxout", "RReLU", "Softmax2D",
]
