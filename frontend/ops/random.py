"""Random tensors: `paddle.uniform`, `rand`, `randn`, `normal`, `standard_normal`,
`paddle.tensor.random.gaussian` and the fluid spellings, on the seeded
`pd.uniform_random` / `pd.gaussian_random` ops initializers use.

Seeds follow Paddle: a non-zero `seed` argument is used as given; otherwise, once
`paddle.seed(s)` is set, each call draws the next seed of a sequence derived from
`s` (eager mode) or from the program's `random_seed` and its count of random ops
(static mode), so seeded programs are reproducible and successive calls differ;
without a global seed each call is freshly random.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from typing import Any

from pullback.dialects import pd
from pullback.frontend import core
from pullback.frontend.framework import default_main_program
from pullback.frontend.ops.elementwise import (
    _check_number,
    _check_shape,
    add,
    check_dtype,
    is_scalar,
    multiply,
)

_SEED_MAX = 2**31 - 1


def _shape(fn: str, shape: Any) -> list[int]:
    if hasattr(shape, "numpy") and not isinstance(shape, (list, tuple)):
        shape = [int(d) for d in shape.numpy().reshape(-1)]
    elif isinstance(shape, (list, tuple)):
        shape = [int(d.item()) if hasattr(d, "item") and not isinstance(d, int) else d for d in shape]
    return _check_shape(fn, shape)


def _float_dtype(fn: str, dtype: Any) -> str:
    name = check_dtype(fn, dtype if dtype is not None else "float32")
    if name not in ("float32", "float64"):
        raise TypeError(f"{fn}: dtype must be float32 or float64, got {name}")
    return name


def _seed(seed: int) -> int:
    """The seed of the next random op (see the module docstring)."""
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    if seed:
        return seed
    program = default_main_program()
    if program.random_seed:
        if core.in_dynamic_mode():
            from pullback.frontend.parameter import EAGER_SEEDS

            return EAGER_SEEDS.next_for(int(program.random_seed))
        from pullback.frontend.initializer import Initializer

        return Initializer().resolve_seed(program)
    return 1 + secrets.randbelow(_SEED_MAX - 1)


def uniform(shape: Any, dtype: Any = None, min: float = -1.0, max: float = 1.0,
            seed: int = 0, name: str | None = None) -> Any:
    """`paddle.uniform`: samples in `[min, max)` of `shape` (float32 by default)."""
    lo, hi = _check_number("uniform", "min", min), _check_number("uniform", "max", max)
    if not lo < hi:
        raise ValueError(f"uniform: min ({lo}) must be less than max ({hi})")
    return core.apply(pd.UniformRandomOp, [], prefix="uniform_random", name=name,
                      shape=_shape("uniform", shape), dtype=_float_dtype("uniform", dtype),
                      min=lo, max=hi, seed=_seed(seed))


def rand(shape: Any, dtype: Any = None, name: str | None = None) -> Any:
    """`paddle.rand`: uniform samples in `[0, 1)`."""
    return uniform(shape, dtype, 0.0, 1.0, name=name)


def gaussian(shape: Any, mean: float = 0.0, std: float = 1.0, seed: int = 0, dtype: Any = None,
             name: str | None = None) -> Any:
    """`paddle.tensor.random.gaussian`: normal samples of `shape`."""
    std = _check_number("gaussian", "std", std)
    if std < 0:
        raise ValueError(f"gaussian: std must be non-negative, got {std}")
    return core.apply(pd.GaussianRandomOp, [], prefix="gaussian_random", name=name,
                      shape=_shape("gaussian", shape), dtype=_float_dtype("gaussian", dtype),
                      mean=_check_number("gaussian", "mean", mean), std=std, seed=_seed(seed))


def standard_normal(shape: Any, dtype: Any = None, name: str | None = None) -> Any:
    """`paddle.standard_normal`: normal samples with mean 0 and std 1."""
    return gaussian(shape, 0.0, 1.0, dtype=dtype, name=name)


def randn(shape: Any, dtype: Any = None, name: str | None = None) -> Any:
    """`paddle.randn`: normal samples with mean 0 and std 1."""
    return gaussian(shape, 0.0, 1.0, dtype=dtype, name=name)


def normal(mean: Any = 0.0, std: Any = 1.0, shape: Any = None, name: str | None = None) -> Any:
    """`paddle.normal`: normal samples; `mean` and `std` are numbers (then `shape`
    is the result's shape) or tensors (then the result has their broadcast shape:
    `mean + std * standard_normal(...)`)."""
    if is_scalar(mean) and is_scalar(std):
        return gaussian([1] if shape is None else shape, float(mean), float(std), name=name)
    ref = mean if not is_scalar(mean) else std
    dims = list(ref.shape)
    if not is_scalar(mean) and not is_scalar(std) and list(std.shape) != dims:
        raise ValueError(f"normal: mean shape {list(mean.shape)} and std shape {list(std.shape)} differ")
    noise = gaussian(dims, dtype=ref.dtype)
    scaled = multiply(noise, std) if not is_scalar(std) else noise * float(std)
    return add(scaled, mean) if not is_scalar(mean) else scaled + float(mean)


def fluid_uniform_random(shape: Any, dtype: Any = "float32", min: float = -1.0,
                         max: float = 1.0, seed: int = 0, name: str | None = None) -> Any:
    """`fluid.layers.uniform_random`."""
    return uniform(shape, dtype, min, max, seed, name)


def fluid_gaussian_random(shape: Any, mean: float = 0.0, std: float = 1.0, seed: int = 0,
                          dtype: Any = "float32", name: str | None = None) -> Any:
    """`fluid.layers.gaussian_random`."""
    return gaussian(shape, mean, std, seed, dtype, name)


PADDLE: list[Callable[..., Any]] = [uniform, rand, randn, normal, standard_normal]
FUNCTIONAL: list[Callable[..., Any]] = []
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {
    "uniform_random": fluid_uniform_random, "gaussian_random": fluid_gaussian_random,
}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {}

__all__ = ["gaussian", "normal", "rand", "randn", "standard_normal", "uniform"]
