"""Transforms of random variables (`paddle.distribution.transform`, Paddle 3.3.1's
classes): bijections with their log-determinant Jacobians, for
`TransformedDistribution`."""

from __future__ import annotations

import enum
import math
import typing
from collections.abc import Callable, Sequence
from typing import Any

import pullback as paddle
from pullback.frontend.distribution import constraint, distribution, variable
from pullback.frontend.distribution.distribution import dtype_name, is_tensor, sum_rightmost

__all__ = [
    "Transform",
    "AbsTransform",
    "AffineTransform",
    "ChainTransform",
    "ExpTransform",
    "IndependentTransform",
    "PowerTransform",
    "ReshapeTransform",
    "SigmoidTransform",
    "SoftmaxTransform",
    "StackTransform",
    "StickBreakingTransform",
    "TanhTransform",
]

TRANSFORMED: list[Callable[[distribution.Distribution, Sequence[Transform]], Any]] = []
"""`TransformedDistribution`, registered by its module (which imports this one), for
`transform(distribution)`."""


class Type(enum.Enum):
    """Mapping type of a transform."""

    BIJECTION = "bijection"
    INJECTION = "injection"
    SURJECTION = "surjection"
    OTHER = "other"

    @classmethod
    def is_injective(cls, _type: Type) -> bool:
        """Whether the type is injective (a bijection or an injection)."""
        return _type in (cls.BIJECTION, cls.INJECTION)


def _check_tensor(x: Any, what: str) -> None:
    if not is_tensor(x):
        raise TypeError(f"Expected '{what}' is a Tensor or Real, but got {type(x)}.")


def _check_event(x: Any, what: str, rank: int) -> None:
    """`x` is a tensor with at least `rank` dimensions (Paddle's messages, typo kept)."""
    _check_tensor(x, what)
    if x.dim() < rank:
        raise ValueError(f"The dimensions of {what}({x.dim()}) should be grater than or equal to {rank}")


class Transform:
    """Base class of transforms `y = f(x)`: `forward`, `inverse`, their
    log-determinant Jacobians and the shapes they map.  Calling a transform on a
    tensor applies it, on a Distribution gives a TransformedDistribution, on another
    Transform chains them."""

    _type = Type.INJECTION

    def __init__(self) -> None:
        super().__init__()

    @classmethod
    def _is_injective(cls) -> bool:
        return Type.is_injective(cls._type)

    def __call__(self, input: Any) -> Any:
        if isinstance(input, distribution.Distribution):
            return TRANSFORMED[0](input, [self])
        if isinstance(input, Transform):
            return ChainTransform([self, input])
        return self.forward(input)

    def forward(self, x: Any) -> Any:
        """`f(x)`."""
        _check_event(x, "x", self._domain.event_rank)
        return self._forward(x)

    def inverse(self, y: Any) -> Any:
        """`f^-1(y)`."""
        _check_event(y, "y", self._codomain.event_rank)
        return self._inverse(y)

    def forward_log_det_jacobian(self, x: Any) -> Any:
        """`log |det J_f(x)|`."""
        _check_event(x, "x", self._domain.event_rank)
        if not self._is_injective():
            raise NotImplementedError("forward_log_det_jacobian can't be implemented for non-injectivetransforms.")
        return self._call_forward_log_det_jacobian(x)

    def inverse_log_det_jacobian(self, y: Any) -> Any:
        """`log |det J_f^-1(y)|`."""
        _check_event(y, "y", self._codomain.event_rank)
        return self._call_inverse_log_det_jacobian(y)

    def forward_shape(self, shape: Sequence[int]) -> Sequence[int]:
        """The shape of `f(x)` for `x` of shape `shape`."""
        if not isinstance(shape, typing.Sequence):
            raise TypeError(f"Expected shape is Sequence[int] type, but got {type(shape)}.")
        return self._forward_shape(shape)

    def inverse_shape(self, shape: Sequence[int]) -> Sequence[int]:
        """The shape of `f^-1(y)` for `y` of shape `shape`."""
        if not isinstance(shape, typing.Sequence):
            raise TypeError(f"Expected shape is Sequence[int] type, but got {type(shape)}.")
        return self._inverse_shape(shape)

    @property
    def _domain(self) -> variable.Variable:
        return variable.real

    @property
    def _codomain(self) -> variable.Variable:
        return variable.real

    def _forward(self, x: Any) -> Any:
        raise NotImplementedError("Forward not implemented")

    def _inverse(self, y: Any) -> Any:
        raise NotImplementedError("Inverse not implemented")

    def _call_forward_log_det_jacobian(self, x: Any) -> Any:
        if hasattr(self, "_forward_log_det_jacobian"):
            return self._forward_log_det_jacobian(x)
        if hasattr(self, "_inverse_log_det_jacobian"):
            return -self._inverse_log_det_jacobian(self.forward(x))
        raise NotImplementedError(
            "Neither _forward_log_det_jacobian nor _inverse_log_det_jacobianis implemented. One of them is required."
        )

    def _call_inverse_log_det_jacobian(self, y: Any) -> Any:
        if hasattr(self, "_inverse_log_det_jacobian"):
            return self._inverse_log_det_jacobian(y)
        if hasattr(self, "_forward_log_det_jacobian"):
            return -self._forward_log_det_jacobian(self._inverse(y))
        raise NotImplementedError(
            "Neither _forward_log_det_jacobian nor _inverse_log_det_jacobian is implemented. One of them is required"
        )

    def _forward_shape(self, shape: Sequence[int]) -> Sequence[int]:
        return shape

    def _inverse_shape(self, shape: Sequence[int]) -> Sequence[int]:
        return shape


class AbsTransform(Transform):
    """`y = |x|` (a surjection: `inverse(y)` is the pair `(-y, y)`)."""

    _type = Type.SURJECTION

    def _forward(self, x: Any) -> Any:
        return x.abs()

    def _inverse(self, y: Any) -> Any:
        return -y, y

    def _inverse_log_det_jacobian(self, y: Any) -> Any:
        zero = paddle.zeros([], dtype=dtype_name(y.dtype))
        return zero, zero

    @property
    def _domain(self) -> variable.Variable:
        return variable.real

    @property
    def _codomain(self) -> variable.Variable:
        return variable.positive


class AffineTransform(Transform):
    """`y = loc + scale * x` (`loc`, `scale` tensors)."""

    _type = Type.BIJECTION

    def __init__(self, loc: Any, scale: Any) -> None:
        if not is_tensor(loc):
            raise TypeError(f"Expected 'loc' is a Tensor, but got {type(loc)}")
        if not is_tensor(scale):
            raise TypeError(f"Expected scale is a Tensor, but got {type(scale)}")
        self._loc = loc
        self._scale = scale
        super().__init__()

    @property
    def loc(self) -> Any:
        return self._loc

    @property
    def scale(self) -> Any:
        return self._scale

    def _forward(self, x: Any) -> Any:
        return self._loc + self._scale * x

    def _inverse(self, y: Any) -> Any:
        return (y - self._loc) / self._scale

    def _forward_log_det_jacobian(self, x: Any) -> Any:
        return paddle.abs(self._scale).log()

    def _forward_shape(self, shape: Sequence[int]) -> Sequence[int]:
        return tuple(paddle.broadcast_shape(paddle.broadcast_shape(list(shape), self._loc.shape), self._scale.shape))

    def _inverse_shape(self, shape: Sequence[int]) -> Sequence[int]:
        return tuple(paddle.broadcast_shape(paddle.broadcast_shape(list(shape), self._loc.shape), self._scale.shape))


class ChainTransform(Transform):
    """The composition of `transforms`, applied first to last."""

    def __init__(self, transforms: Sequence[Transform]) -> None:
        if not isinstance(transforms, typing.Sequence):
            raise TypeError(f"Expected type of 'transforms' is Sequence, but got {type(transforms)}")
        if not all(isinstance(t, Transform) for t in transforms):
            raise TypeError("All elements of transforms should be Transform type.")
        self.transforms = transforms
        super().__init__()

    def _is_injective(self) -> bool:  # type: ignore[override]
        return all(t._is_injective() for t in self.transforms)

    def _forward(self, x: Any) -> Any:
        for t in self.transforms:
            x = t.forward(x)
        return x

    def _inverse(self, y: Any) -> Any:
        for t in reversed(self.transforms):
            y = t.inverse(y)
        return y

    def _forward_log_det_jacobian(self, x: Any) -> Any:
        value: Any = 0.0
        event_rank = self._domain.event_rank
        for t in self.transforms:
            value = value + sum_rightmost(t.forward_log_det_jacobian(x), event_rank - t._domain.event_rank)
            x = t.forward(x)
            event_rank += t._codomain.event_rank - t._domain.event_rank
        return value

    def _forward_shape(self, shape: Sequence[int]) -> Sequence[int]:
        for t in self.transforms:
            shape = t.forward_shape(shape)
        return shape

    def _inverse_shape(self, shape: Sequence[int]) -> Sequence[int]:
        for t in self.transforms:
            shape = t.inverse_shape(shape)
        return shape

    def _sum_rightmost(self, value: Any, n: int) -> Any:
        return sum_rightmost(value, n)

    @property
    def _domain(self) -> variable.Variable:
        domain = self.transforms[0]._domain
        event_rank = self.transforms[-1]._codomain.event_rank
        for t in reversed(self.transforms):
            event_rank -= t._codomain.event_rank - t._domain.event_rank
            event_rank = max(event_rank, t._domain.event_rank)
        return variable.Independent(domain, event_rank - domain.event_rank)

    @property
    def _codomain(self) -> variable.Variable:
        codomain = self.transforms[-1]._codomain
        event_rank = self.transforms[0]._domain.event_rank
        for t in self.transforms:
            event_rank += t._codomain.event_rank - t._domain.event_rank
            event_rank = max(event_rank, t._codomain.event_rank)
        return variable.Independent(codomain, event_rank - codomain.event_rank)


class ExpTransform(Transform):
    """`y = exp(x)`."""

    _type = Type.BIJECTION

    @property
    def _domain(self) -> variable.Variable:
        return variable.real

    @property
    def _codomain(self) -> variable.Variable:
        return variable.positive

    def _forward(self, x: Any) -> Any:
        return x.exp()

    def _inverse(self, y: Any) -> Any:
        return y.log()

    def _forward_log_det_jacobian(self, x: Any) -> Any:
        return x


class IndependentTransform(Transform):
    """`base` with its `reinterpreted_batch_rank` rightmost batch axes made event
    axes: the log-determinant Jacobian is summed over them."""

    def __init__(self, base: Transform, reinterpreted_batch_rank: int) -> None:
        if not isinstance(base, Transform):
            raise TypeError(f"Expected 'base' is Transform type, but get {type(base)}")
        if reinterpreted_batch_rank <= 0:
            raise ValueError(
                f"Expected 'reinterpreted_batch_rank' is grater than zero, but got {reinterpreted_batch_rank}"
            )
        self._base = base
        self._reinterpreted_batch_rank = reinterpreted_batch_rank
        super().__init__()

    def _is_injective(self) -> bool:  # type: ignore[override]
        return self._base._is_injective()

    def _forward(self, x: Any) -> Any:
        if x.dim() < self._domain.event_rank:
            raise ValueError("Input dimensions is less than event dimensions.")
        return self._base.forward(x)

    def _inverse(self, y: Any) -> Any:
        if y.dim() < self._codomain.event_rank:
            raise ValueError("Input dimensions is less than event dimensions.")
        return self._base.inverse(y)

    def _forward_log_det_jacobian(self, x: Any) -> Any:
        return self._base.forward_log_det_jacobian(x).sum(list(range(-self._reinterpreted_batch_rank, 0)))

    def _forward_shape(self, shape: Sequence[int]) -> Sequence[int]:
        return self._base.forward_shape(shape)

    def _inverse_shape(self, shape: Sequence[int]) -> Sequence[int]:
        return self._base.inverse_shape(shape)

    @property
    def _domain(self) -> variable.Variable:
        return variable.Independent(self._base._domain, self._reinterpreted_batch_rank)

    @property
    def _codomain(self) -> variable.Variable:
        return variable.Independent(self._base._codomain, self._reinterpreted_batch_rank)


class PowerTransform(Transform):
    """`y = x ** power` (`power` a tensor)."""

    _type = Type.BIJECTION

    def __init__(self, power: Any) -> None:
        if not is_tensor(power):
            raise TypeError(f"Expected 'power' is a tensor, but got {type(power)}")
        self._power = power
        super().__init__()

    @property
    def power(self) -> Any:
        return self._power

    @property
    def _domain(self) -> variable.Variable:
        return variable.real

    @property
    def _codomain(self) -> variable.Variable:
        return variable.positive

    def _forward(self, x: Any) -> Any:
        return x.pow(self._power)

    def _inverse(self, y: Any) -> Any:
        return y.pow(1 / self._power)

    def _forward_log_det_jacobian(self, x: Any) -> Any:
        return (self._power * x.pow(self._power - 1)).abs().log()

    def _forward_shape(self, shape: Sequence[int]) -> Sequence[int]:
        return tuple(paddle.broadcast_shape(list(shape), self._power.shape))

    def _inverse_shape(self, shape: Sequence[int]) -> Sequence[int]:
        return tuple(paddle.broadcast_shape(list(shape), self._power.shape))


class ReshapeTransform(Transform):
    """Reshapes the event part of the shape from `in_event_shape` to
    `out_event_shape` (of the same size)."""

    _type = Type.BIJECTION

    def __init__(self, in_event_shape: Sequence[int], out_event_shape: Sequence[int]) -> None:
        if not isinstance(in_event_shape, typing.Sequence) or not isinstance(out_event_shape, typing.Sequence):
            raise TypeError(
                "Expected type of 'in_event_shape' and 'out_event_shape' is Sequence[int], but got "
                f"'in_event_shape': {in_event_shape}, 'out_event_shape': {out_event_shape}"
            )
        in_size = math.prod(in_event_shape)
        out_size = math.prod(out_event_shape)
        if in_size != out_size:
            raise ValueError(
                f"The numel of 'in_event_shape' should be 'out_event_shape', but got {in_size}!={out_size}"
            )
        self._in_event_shape = tuple(in_event_shape)
        self._out_event_shape = tuple(out_event_shape)
        super().__init__()

    @property
    def in_event_shape(self) -> tuple[int, ...]:
        return self._in_event_shape

    @property
    def out_event_shape(self) -> tuple[int, ...]:
        return self._out_event_shape

    @property
    def _domain(self) -> variable.Variable:
        return variable.Independent(variable.real, len(self._in_event_shape))

    @property
    def _codomain(self) -> variable.Variable:
        return variable.Independent(variable.real, len(self._out_event_shape))

    def _forward(self, x: Any) -> Any:
        return x.reshape(list(tuple(x.shape)[: x.dim() - len(self._in_event_shape)] + self._out_event_shape))

    def _inverse(self, y: Any) -> Any:
        return y.reshape(list(tuple(y.shape)[: y.dim() - len(self._out_event_shape)] + self._in_event_shape))

    def _forward_shape(self, shape: Sequence[int]) -> Sequence[int]:
        n = len(self._in_event_shape)
        if len(shape) < n:
            raise ValueError(f"Expected length of 'shape' is not less than {n}, but got {len(shape)}")
        if tuple(shape[-n:]) != self._in_event_shape:
            raise ValueError(f"Event shape mismatch, expected: {self._in_event_shape}, but got {shape[-n:]}")
        return tuple(shape[:-n]) + self._out_event_shape

    def _inverse_shape(self, shape: Sequence[int]) -> Sequence[int]:
        n = len(self._out_event_shape)
        if len(shape) < n:
            raise ValueError(f"Expected 'shape' length is not less than {n}, but got {len(shape)}")
        if tuple(shape[-n:]) != self._out_event_shape:
            raise ValueError(f"Event shape mismatch, expected: {self._out_event_shape}, but got {shape[-n:]}")
        return tuple(shape[:-n]) + self._in_event_shape

    def _forward_log_det_jacobian(self, x: Any) -> Any:
        shape = x.shape[: x.dim() - len(self._in_event_shape)]
        return paddle.zeros(shape, dtype=dtype_name(x.dtype))


class SigmoidTransform(Transform):
    """`y = sigmoid(x)`."""

    @property
    def _domain(self) -> variable.Variable:
        return variable.real

    @property
    def _codomain(self) -> variable.Variable:
        return variable.Variable(False, 0, constraint.Range(0.0, 1.0))

    def _forward(self, x: Any) -> Any:
        return paddle.nn.functional.sigmoid(x)

    def _inverse(self, y: Any) -> Any:
        return y.log() - (-y).log1p()

    def _forward_log_det_jacobian(self, x: Any) -> Any:
        F = paddle.nn.functional
        return -F.softplus(-x) - F.softplus(x)


class SoftmaxTransform(Transform):
    """`y = softmax(x)` over the last axis (not injective: `inverse` is `log y`, one
    of the preimages).  As in Paddle, the shift subtracted before `exp` is the max of
    the first row (`x.max(-1, keepdim=True)[0]`), which leaves the result unchanged."""

    _type = Type.OTHER

    @property
    def _domain(self) -> variable.Variable:
        return variable.Independent(variable.real, 1)

    @property
    def _codomain(self) -> variable.Variable:
        return variable.Variable(False, 1, constraint.simplex)

    def _forward(self, x: Any) -> Any:
        x = (x - x.max(-1, keepdim=True)[0]).exp()
        return x / x.sum(-1, keepdim=True)

    def _inverse(self, y: Any) -> Any:
        return y.log()

    def _forward_shape(self, shape: Sequence[int]) -> Sequence[int]:
        if len(shape) < 1:
            raise ValueError(f"Expected length of shape is grater than 1, but got {len(shape)}")
        return shape

    def _inverse_shape(self, shape: Sequence[int]) -> Sequence[int]:
        if len(shape) < 1:
            raise ValueError(f"Expected length of shape is grater than 1, but got {len(shape)}")
        return shape


class StackTransform(Transform):
    """`transforms[i]` applied to the i-th slice along `axis`."""

    def __init__(self, transforms: Sequence[Transform], axis: int = 0) -> None:
        if not transforms or not isinstance(transforms, typing.Sequence):
            raise TypeError(f"Expected 'transforms' is Sequence[Transform], but got {type(transforms)}.")
        if not all(isinstance(t, Transform) for t in transforms):
            raise TypeError("Expected all element in transforms is Transform Type.")
        if not isinstance(axis, int):
            raise TypeError(f"Expected 'axis' is int, but got{type(axis)}.")
        self._transforms = transforms
        self._axis = axis

    def _is_injective(self) -> bool:  # type: ignore[override]
        return all(t._is_injective() for t in self._transforms)

    @property
    def transforms(self) -> Sequence[Transform]:
        return self._transforms

    @property
    def axis(self) -> int:
        return self._axis

    def _slices(self, v: Any, fn: Callable[[Transform, Any], Any]) -> Any:
        self._check_size(v)
        return paddle.stack([fn(t, s) for s, t in zip(paddle.unstack(v, self._axis), self._transforms)], self._axis)

    def _forward(self, x: Any) -> Any:
        return self._slices(x, lambda t, s: t.forward(s))

    def _inverse(self, y: Any) -> Any:
        return self._slices(y, lambda t, s: t.inverse(s))

    def _forward_log_det_jacobian(self, x: Any) -> Any:
        return self._slices(x, lambda t, s: t.forward_log_det_jacobian(s))

    def _check_size(self, v: Any) -> None:
        if not -v.dim() <= self._axis < v.dim():
            raise ValueError(f"Input dimensions {v.dim()} should be grater than stack transform axis {self._axis}.")
        if v.shape[self._axis] != len(self._transforms):
            raise ValueError(f"Input size along {self._axis} should be equal to the length of transforms.")

    @property
    def _domain(self) -> variable.Variable:
        return variable.Stack([t._domain for t in self._transforms], self._axis)

    @property
    def _codomain(self) -> variable.Variable:
        return variable.Stack([t._codomain for t in self._transforms], self._axis)


class StickBreakingTransform(Transform):
    """Maps `R^n` to the simplex of `R^(n+1)` by stick breaking."""

    _type = Type.BIJECTION

    @staticmethod
    def _offset(n_plus: int, n: int, dtype: str) -> Any:
        return n_plus - paddle.ones([n], dtype=dtype).cumsum(-1)

    def _forward(self, x: Any) -> Any:
        dtype = dtype_name(x.dtype)
        offset = self._offset(x.shape[-1] + 1, x.shape[-1], dtype)
        z = paddle.nn.functional.sigmoid(x - offset.log())
        z_cumprod = (1 - z).cumprod(-1)
        one = paddle.ones([*x.shape[:-1], 1], dtype=dtype)
        return paddle.concat([z, one], -1) * paddle.concat([one, z_cumprod], -1)

    def _inverse(self, y: Any) -> Any:
        y_crop = y[..., :-1]
        offset = self._offset(y.shape[-1], y_crop.shape[-1], dtype_name(y.dtype))
        sf = 1 - y_crop.cumsum(-1)
        return y_crop.log() - sf.log() + offset.log()

    def _forward_log_det_jacobian(self, x: Any) -> Any:
        y = self.forward(x)
        offset = self._offset(x.shape[-1] + 1, x.shape[-1], dtype_name(x.dtype))
        x = x - offset.log()
        return (-x + paddle.nn.functional.log_sigmoid(x) + y[..., :-1].log()).sum(-1)

    def _forward_shape(self, shape: Sequence[int]) -> Sequence[int]:
        if not shape:
            raise ValueError(f"Expected 'shape' is not empty, but got {shape}")
        return (*shape[:-1], shape[-1] + 1)

    def _inverse_shape(self, shape: Sequence[int]) -> Sequence[int]:
        if not shape:
            raise ValueError(f"Expected 'shape' is not empty, but got {shape}")
        return (*shape[:-1], shape[-1] - 1)

    @property
    def _domain(self) -> variable.Variable:
        return variable.Independent(variable.real, 1)

    @property
    def _codomain(self) -> variable.Variable:
        return variable.Variable(False, 1, constraint.simplex)


class TanhTransform(Transform):
    """`y = tanh(x)`."""

    _type = Type.BIJECTION

    @property
    def _domain(self) -> variable.Variable:
        return variable.real

    @property
    def _codomain(self) -> variable.Variable:
        return variable.Variable(False, 0, constraint.Range(-1.0, 1.0))

    def _forward(self, x: Any) -> Any:
        return x.tanh()

    def _inverse(self, y: Any) -> Any:
        return 0.5 * (y.log1p() - (-y).log1p())  # atanh

    def _forward_log_det_jacobian(self, x: Any) -> Any:
        """`log(1 - tanh(x)^2)`, written `2 (log 2 - x - softplus(-2x))` for stability."""
        return 2.0 * (math.log(2.0) - x - paddle.nn.functional.softplus(-2.0 * x))
