"""Parameter initializers (`paddle.nn.initializer.*`, `fluid.initializer.*`).

An initializer appends one op to the *startup* program, named like the parameter it
initializes (`pd.uniform_random`, `pd.gaussian_random` or `pd.fill_constant`);
running the startup program stores the value in the scope.

Seeds follow Paddle: an initializer's own `seed` if non-zero, else one derived from
the startup program's `random_seed` (reproducible; distinct per initializer), else
(`random_seed == 0`) the next seed of the global generator (`frontend/random.py`):
reproducible after `paddle.seed(s)` (0 included), fresh from run to run without it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from pullback.dialects import pd
from pullback.frontend.framework import (
    Block,
    Program,
    Variable,
    default_startup_program,
)
from pullback.frontend.random import OP_SEED_MAX, default_generator
from xdsl.dialects.builtin import ArrayAttr
from xdsl.ir import Operation


def compute_fans(shape: Sequence[int]) -> tuple[int, int]:
    """Paddle's `(fan_in, fan_out)` of a parameter shape.

    `[in, out]` for matrices; for convolution filters `[out, in, k...]` both are
    scaled by the receptive field `prod(k...)`.
    """
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


def _random_ops(program: Program) -> int:
    return sum(
        isinstance(op, (pd.UniformRandomOp, pd.GaussianRandomOp, pd.TruncatedGaussianRandomOp,
                        pd.AssignValueOp))  # Orthogonal draws its values too
        for op in program.global_block().ir.ops
    )


class Initializer:
    """Base class: `make_op` builds the op computing a parameter's initial value."""

    seed: int = 0

    def make_op(self, name: str, shape: list[int], dtype: str, program: Program) -> Operation:
        """The initializer op for parameter `name` (appended by the caller)."""
        raise NotImplementedError(f"{type(self).__name__} does not define make_op()")

    def resolve_seed(self, program: Program) -> int:
        """The seed the next random op of `program` gets (see the module docstring)."""
        if self.seed:
            return int(self.seed)
        if program.random_seed:
            # Reproducible, and distinct for each random op of the program.
            k = _random_ops(program)
            return (int(program.random_seed) * 1_000_003 + k) % OP_SEED_MAX or 1
        return default_generator().next_seed()

    def initialize(
        self, name: str, shape: Sequence[int], dtype: str, program: Program | None = None
    ) -> Variable:
        """Append the initializer of parameter `name` to `program` (default: the
        default startup program) and return its persistable result."""
        program = program if program is not None else default_startup_program()
        block = program.global_block()
        op = block.append(self.make_op(name, list(shape), dtype, program))
        var = block.wrap(op.results[0])
        var.persistable = True
        return var

    def __call__(self, param: Variable, block: Block | None = None) -> Operation:
        """Paddle's `initializer(param, block)`: append `param`'s initializer to `block`
        (default: the default startup program's block); returns the op."""
        if not isinstance(param, Variable):
            raise TypeError(
                f"{type(self).__name__}: expected a Variable, got {type(param).__name__}"
            )
        program = block.program if block is not None else default_startup_program()
        var = self.initialize(param.name, param.shape, param.dtype, program)
        assert var.value.owner is not None
        return var.value.owner  # type: ignore[return-value]

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"


class Constant(Initializer):
    """Every element set to `value` (`pd.fill_constant`)."""

    def __init__(self, value: float = 0.0, force_cpu: bool = False, name: str | None = None) -> None:
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            raise TypeError(f"Constant: value must be a number, got {type(value).__name__}")
        self.value = float(value)

    def make_op(self, name: str, shape: list[int], dtype: str, program: Program) -> Operation:
        """A `pd.fill_constant` named `name`."""
        return pd.FillConstantOp.make(name=name, shape=shape, value=self.value, dtype=dtype)


class Uniform(Initializer):
    """Uniform samples in `[low, high)` (`pd.uniform_random`)."""

    def __init__(
        self, low: float = -1.0, high: float = 1.0, seed: int = 0, name: str | None = None
    ) -> None:
        if not low < high:
            raise ValueError(f"Uniform: low ({low}) must be less than high ({high})")
        self.low, self.high, self.seed = float(low), float(high), int(seed)

    def make_op(self, name: str, shape: list[int], dtype: str, program: Program) -> Operation:
        """A seeded `pd.uniform_random` named `name`."""
        return pd.UniformRandomOp.make(
            name=name, shape=shape, dtype=dtype, min=self.low, max=self.high,
            seed=self.resolve_seed(program),
        )


class Normal(Initializer):
    """Normal samples with `mean` and `std` (`pd.gaussian_random`)."""

    def __init__(
        self, mean: float = 0.0, std: float = 1.0, seed: int = 0, name: str | None = None
    ) -> None:
        if std < 0:
            raise ValueError(f"Normal: std must be non-negative, got {std}")
        self.mean, self.std, self.seed = float(mean), float(std), int(seed)

    def make_op(self, name: str, shape: list[int], dtype: str, program: Program) -> Operation:
        """A seeded `pd.gaussian_random` named `name`."""
        return pd.GaussianRandomOp.make(
            name=name, shape=shape, dtype=dtype, mean=self.mean, std=self.std,
            seed=self.resolve_seed(program),
        )


class _FanInitializer(Initializer):
    """Uniform or normal samples scaled by the parameter's fans (Xavier, MSRA)."""

    def __init__(
        self,
        uniform: bool,
        fan_in: float | None = None,
        fan_out: float | None = None,
        seed: int = 0,
        gain: float = 1.0,
    ) -> None:
        self.uniform, self.fan_in, self.fan_out = uniform, fan_in, fan_out
        self.seed, self.gain = int(seed), float(gain)

    def scale(self, fan_in: float, fan_out: float) -> float:
        """The uniform limit (or normal std, when not `uniform`)."""
        raise NotImplementedError

    def make_op(self, name: str, shape: list[int], dtype: str, program: Program) -> Operation:
        """A seeded uniform or gaussian op with the fan-derived scale."""
        f_in, f_out = compute_fans(shape)
        s = self.scale(
            self.fan_in if self.fan_in is not None else f_in,
            self.fan_out if self.fan_out is not None else f_out,
        )
        seed = self.resolve_seed(program)
        if self.uniform:
            return pd.UniformRandomOp.make(name=name, shape=shape, dtype=dtype, min=-s, max=s, seed=seed)
        return pd.GaussianRandomOp.make(name=name, shape=shape, dtype=dtype, mean=0.0, std=s, seed=seed)


class Xavier(_FanInitializer):
    """Glorot/Xavier: limit `gain * sqrt(6 / (fan_in + fan_out))` (uniform) or std
    `gain * sqrt(2 / (fan_in + fan_out))` (normal). Paddle's default for weights."""

    def __init__(
        self,
        uniform: bool = True,
        fan_in: float | None = None,
        fan_out: float | None = None,
        seed: int = 0,
        gain: float = 1.0,
    ) -> None:
        super().__init__(uniform, fan_in, fan_out, seed, gain)

    def scale(self, fan_in: float, fan_out: float) -> float:
        """Xavier's limit or std for these fans."""
        k = 6.0 if self.uniform else 2.0
        return self.gain * math.sqrt(k / (fan_in + fan_out))


class XavierUniform(Xavier):
    """`paddle.nn.initializer.XavierUniform(fan_in, fan_out, gain)`."""

    def __init__(
        self, fan_in: float | None = None, fan_out: float | None = None,
        gain: float = 1.0, name: str | None = None,
    ) -> None:
        super().__init__(True, fan_in, fan_out, 0, gain)


class XavierNormal(Xavier):
    """`paddle.nn.initializer.XavierNormal(fan_in, fan_out, gain)`."""

    def __init__(
        self, fan_in: float | None = None, fan_out: float | None = None,
        gain: float = 1.0, name: str | None = None,
    ) -> None:
        super().__init__(False, fan_in, fan_out, 0, gain)


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """`paddle.nn.initializer.calculate_gain`: the recommended gain of an activation
    (`relu`: sqrt(2), `tanh`: 5/3, `leaky_relu`: sqrt(2 / (1 + slope^2)), ...)."""
    if param is None:
        param = 0.01 if nonlinearity == "leaky_relu" else 0.0
    gains = {
        "sigmoid": 1.0, "linear": 1.0, "conv1d": 1.0, "conv2d": 1.0, "conv3d": 1.0,
        "conv1d_transpose": 1.0, "conv2d_transpose": 1.0, "conv3d_transpose": 1.0,
        "tanh": 5.0 / 3, "relu": math.sqrt(2.0), "selu": 3.0 / 4,
        "leaky_relu": math.sqrt(2.0 / (1 + param**2)),
    }
    if nonlinearity not in gains:
        raise ValueError(
            f"nonlinearity function {nonlinearity} is not supported now (supported: "
            f"{', '.join(sorted(gains))})"
        )
    return gains[nonlinearity]


class MSRA(_FanInitializer):
    """He/Kaiming: limit `gain * sqrt(3 / fan_in)` (uniform) or std
    `gain / sqrt(fan_in)`, `gain = calculate_gain(nonlinearity, negative_slope)`
    (sqrt(2) for relu: limit `sqrt(6 / fan_in)`, std `sqrt(2 / fan_in)`)."""

    def __init__(
        self, uniform: bool = True, fan_in: float | None = None, seed: int = 0,
        negative_slope: float = 0.0, nonlinearity: str = "relu",
    ) -> None:
        super().__init__(uniform, fan_in, None, seed, calculate_gain(nonlinearity, negative_slope))
        self.negative_slope, self.nonlinearity = float(negative_slope), nonlinearity

    def scale(self, fan_in: float, fan_out: float) -> float:
        """MSRA's limit or std for this fan-in."""
        if self.uniform:
            return self.gain * math.sqrt(3.0 / fan_in)
        return self.gain / math.sqrt(fan_in)


class KaimingUniform(MSRA):
    """`paddle.nn.initializer.KaimingUniform(fan_in, negative_slope, nonlinearity)`."""

    def __init__(self, fan_in: float | None = None, negative_slope: float = 0.0,
                 nonlinearity: str = "relu", name: str | None = None) -> None:
        super().__init__(True, fan_in, 0, negative_slope, nonlinearity)


class KaimingNormal(MSRA):
    """`paddle.nn.initializer.KaimingNormal(fan_in, negative_slope, nonlinearity)`."""

    def __init__(self, fan_in: float | None = None, negative_slope: float = 0.0,
                 nonlinearity: str = "relu", name: str | None = None) -> None:
        super().__init__(False, fan_in, 0, negative_slope, nonlinearity)


class TruncatedNormal(Initializer):
    """Normal samples with `mean` and `std`, redrawn outside `[mean + a*std,
    mean + b*std]` (`pd.truncated_gaussian_random`)."""

    def __init__(self, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                 seed: int = 0, name: str | None = None) -> None:
        if std < 0:
            raise ValueError(f"TruncatedNormal: std must be non-negative, got {std}")
        if not a < b:
            raise ValueError(f"TruncatedNormal: a ({a}) must be less than b ({b})")
        self.mean, self.std, self.a, self.b, self.seed = float(mean), float(std), float(a), float(b), int(seed)

    def make_op(self, name: str, shape: list[int], dtype: str, program: Program) -> Operation:
        """A seeded `pd.truncated_gaussian_random` named `name`."""
        return pd.TruncatedGaussianRandomOp.make(
            name=name, shape=shape, dtype=dtype, mean=self.mean, std=self.std, a=self.a,
            b=self.b, seed=self.resolve_seed(program),
        )


def _assign_op(values: np.ndarray, dtype: str, name: str) -> Operation:
    """A `pd.assign_value` named `name` holding `values` (initializers whose values
    are computed on the host)."""
    flat = ArrayAttr([pd.f64_attr(float(v)) for v in np.asarray(values, np.float64).reshape(-1)])
    return pd.AssignValueOp.make(name=name, shape=list(np.shape(values)), values=flat, dtype=dtype)


class Assign(Initializer):
    """The given values (a numpy array, nested lists, a number or a Tensor), which
    must have the parameter's shape (`pd.assign_value`)."""

    def __init__(self, value: Any, name: str | None = None) -> None:
        if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
            value = value.numpy()
        try:
            arr = np.asarray(value, dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError(
                f"Assign: value must be a numpy array, a list, a number or a Tensor, got "
                f"{type(value).__name__}"
            ) from None
        self.value = arr

    def make_op(self, name: str, shape: list[int], dtype: str, program: Program) -> Operation:
        """A `pd.assign_value` holding the values, named `name`."""
        same_size = self.value.size == math.prod(shape)
        if list(self.value.shape) != list(shape) and not (same_size and self.value.ndim <= 1 and len(shape) <= 1):
            raise ValueError(
                    f"Assign: the value's shape {list(self.value.shape)} does not match the "
                    f"parameter '{name}' of shape {list(shape)}"
                )
        return _assign_op(self.value.reshape(shape), dtype, name)


class Orthogonal(Initializer):
    """A (semi-)orthogonal matrix times `gain`: rows `shape[0]`, columns the product of
    the other dimensions, from the QR decomposition of normal samples (Paddle's
    algorithm), computed when the startup program is built (`pd.assign_value`)."""

    def __init__(self, gain: float = 1.0, seed: int = 0, name: str | None = None) -> None:
        if gain is None or gain < 0:
            raise ValueError(f"Orthogonal: gain must be >= 0, got {gain}")
        self.gain, self.seed = float(gain), int(seed)

    def make_op(self, name: str, shape: list[int], dtype: str, program: Program) -> Operation:
        """A `pd.assign_value` with the orthogonal values, named `name`."""
        if len(shape) < 2:
            raise ValueError("Only Tensor with 2 or more dimensions are supported")
        rows = shape[0]
        cols = math.prod(shape) // rows
        rng = np.random.default_rng(self.resolve_seed(program))
        normal = rng.normal(0.0, 1.0, size=(max(rows, cols), min(rows, cols)))
        q, r = np.linalg.qr(normal)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return _assign_op(q.reshape(shape) * self.gain, dtype, name)


class Dirac(Initializer):
    """Identity convolution filters: for a `[out, in, k...]` weight split in `groups`,
    `w[g*n + j, j, center...] = 1` for `j < min(out / groups, in)`, zeros elsewhere
    (computed on the host, `pd.assign_value`)."""

    def __init__(self, groups: int = 1, name: str | None = None) -> None:
        if not isinstance(groups, int) or isinstance(groups, bool) or groups < 1:
            raise ValueError(f"Dirac: groups must be a positive int, got {groups!r}")
        self.groups = groups

    def make_op(self, name: str, shape: list[int], dtype: str, program: Program) -> Operation:
        """A `pd.assign_value` with the Dirac filters, named `name`."""
        if len(shape) not in (3, 4, 5):
            raise ValueError("Only Tensor with 3/4/5 dimensions can be initialized by Dirac")
        if shape[0] % self.groups:
            raise ValueError("Tensor 0-dimension must be divisible by groups")
        per_group = shape[0] // self.groups
        w = np.zeros(shape)
        center = tuple(k // 2 for k in shape[2:])
        for g in range(self.groups):
            for j in range(min(per_group, shape[1])):
                w[(g * per_group + j, j, *center)] = 1.0
        return _assign_op(w, dtype, name)


# ------------------------------------------------------------- global defaults

_global_weight: Initializer | None = None
_global_bias: Initializer | None = None


def set_global_initializer(weight_init: Initializer | None, bias_init: Initializer | None = None) -> None:
    """`paddle.nn.initializer.set_global_initializer`: the initializers of weights and
    biases created from now on without an initializer of their own
    (`ParamAttr(initializer=...)` still wins); None restores the layers' defaults."""
    global _global_weight, _global_bias
    for what, init in (("weight_init", weight_init), ("bias_init", bias_init)):
        if init is not None and not isinstance(init, Initializer):
            raise TypeError(
                f"set_global_initializer: {what} must be an Initializer or None, got "
                f"{type(init).__name__}"
            )
    _global_weight, _global_bias = weight_init, bias_init


def global_initializer(is_bias: bool) -> Initializer | None:
    """The initializer `set_global_initializer` set for biases or weights."""
    return _global_bias if is_bias else _global_weight


# Paddle 1.x (fluid) spellings.
ConstantInitializer = Constant
UniformInitializer = Uniform
NormalInitializer = Normal
TruncatedNormalInitializer = TruncatedNormal
XavierInitializer = Xavier
MSRAInitializer = MSRA
NumpyArrayInitializer = Assign


__all__ = [
    "MSRA",
    "Assign",
    "Constant",
    "ConstantInitializer",
    "Dirac",
    "Initializer",
    "KaimingNormal",
    "KaimingUniform",
    "MSRAInitializer",
    "Normal",
    "NormalInitializer",
    "NumpyArrayInitializer",
    "Orthogonal",
    "TruncatedNormal",
    "TruncatedNormalInitializer",
    "Uniform",
    "UniformInitializer",
    "Xavier",
    "XavierInitializer",
    "XavierNormal",
    "XavierUniform",
    "calculate_gain",
    "compute_fans",
    "global_initializer",
    "set_global_initializer",
]

