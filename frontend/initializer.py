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
from xdsl.ir import Operation

from pullback.dialects import pd
from pullback.frontend.framework import Block, Program, Variable, default_startup_program
from pullback.frontend.random import OP_SEED_MAX, default_generator


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
        isinstance(op, (pd.UniformRandomOp, pd.GaussianRandomOp))
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


class MSRA(_FanInitializer):
    """He/Kaiming: limit `sqrt(6 / fan_in)` (uniform) or std `sqrt(2 / fan_in)`."""

    def __init__(
        self, uniform: bool = True, fan_in: float | None = None, seed: int = 0,
        negative_slope: float = 0.0, nonlinearity: str = "relu",
    ) -> None:
        super().__init__(uniform, fan_in, None, seed)

    def scale(self, fan_in: float, fan_out: float) -> float:
        """MSRA's limit or std for this fan-in."""
        return math.sqrt((6.0 if self.uniform else 2.0) / fan_in)


class KaimingUniform(MSRA):
    """`paddle.nn.initializer.KaimingUniform(fan_in)`."""

    def __init__(self, fan_in: float | None = None, negative_slope: float = 0.0,
                 nonlinearity: str = "relu", name: str | None = None) -> None:
        super().__init__(True, fan_in)


class KaimingNormal(MSRA):
    """`paddle.nn.initializer.KaimingNormal(fan_in)`."""

    def __init__(self, fan_in: float | None = None, negative_slope: float = 0.0,
                 nonlinearity: str = "relu", name: str | None = None) -> None:
        super().__init__(False, fan_in)


# Paddle 1.x (fluid) spellings.
ConstantInitializer = Constant
UniformInitializer = Uniform
NormalInitializer = Normal
XavierInitializer = Xavier
MSRAInitializer = MSRA


__all__ = [
    "Constant",
    "ConstantInitializer",
    "Initializer",
    "KaimingNormal",
    "KaimingUniform",
    "MSRA",
    "MSRAInitializer",
    "Normal",
    "NormalInitializer",
    "Uniform",
    "UniformInitializer",
    "Xavier",
    "XavierInitializer",
    "XavierNormal",
    "XavierUniform",
    "compute_fans",
]

