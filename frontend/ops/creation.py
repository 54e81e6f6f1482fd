"""Paddle's creation API: `arange`, `linspace`, `eye`, `empty(_like)`, and the random
tensors `rand`, `randn`, `standard_normal`, `uniform`, `normal`, `randint(_like)`,
`randperm`, `bernoulli` (plus the `fluid.layers` spellings `range`,
`uniform_random`, `gaussian_random`).

Seeds.  Every random op carries a seed:
* an explicit non-zero `seed` argument (`paddle.uniform(..., seed=3)`) is used as is;
* eager mode: the next seed of the global generator (`frontend/random.py`), which
  `paddle.seed(s)` reseeds; so each call samples anew and a seeded script repeats;
* static mode: derived from the op's unique name and the program's `random_seed`
  (as `dropout` does), so ops differ from each other and a seeded program repeats.
  Unlike Paddle, a static program draws the same sample on every `Executor.run`.

Shapes must be Python ints (tensor-valued shapes are not supported); random tensors
need a fully static shape.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import numpy as np
from pullback.dialects.bfloat16 import bf16_to_f32
from pullback.dialects.pd.dtypes import FLOAT_NAMES, dtype_for_array, get_default_dtype, to_dtype_name
from pullback.dialects import pd
from pullback.frontend import unique_name
from pullback.frontend.core import apply, in_dynamic_mode
from pullback.frontend.framework import Variable, default_main_program
from pullback.frontend.ops.indexing import clone, to_constant
from pullback.frontend.random import default_generator
from pullback.frontend.ops.elementwise import (
    cast,
    check_float_tensor,
    check_tensor,
    full,
    full_like,
    is_scalar,
)

def random_seed(prefix: str, seed: Any = 0, name: str | None = None) -> int:
    """The seed of a new random op (module docstring); `seed` is the user's argument."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"{prefix}: seed must be an int, got {seed!r}")
    if seed:
        return int(seed)
    if in_dynamic_mode():
        # The global generator `paddle.seed` reseeds (frontend/random.py).
        return default_generator().next_seed()
    base = name or unique_name.generate(prefix)
    return (zlib.crc32(base.encode()) ^ (int(default_main_program().random_seed) << 32)) % 2**62


# --------------------------------------------------------------------- helpers


def _is_int(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, np.integer))


def _static_shape(fn: str, shape: Any) -> list[int]:
    """A shape argument (int, or list/tuple of ints) as a list of non-negative ints."""
    if _is_int(shape):
        shape = [shape]
    if isinstance(shape, (list, tuple)) and all(_is_int(d) for d in shape):
        dims = [int(d) for d in shape]
        if any(d < 0 for d in dims):
            raise ValueError(f"{fn}: shape must not contain negative dimensions, got {dims}")
        return dims
    raise TypeError(f"{fn}: shape must be an int or a list/tuple of ints, got {shape!r} "
                    "(tensor-valued shapes are not supported)")


def _float_dtype(fn: str, dtype: Any) -> str:
    """A float dtype argument (default: `paddle.get_default_dtype()`)."""
    name = to_dtype_name(dtype, fn, default=get_default_dtype())
    if name not in FLOAT_NAMES:
        raise TypeError(f"{fn}: dtype must be float32 or float64, got {name} (or float16, bfloat16)")
    return name


def _int_dtype(fn: str, dtype: Any) -> str:
    """An integer dtype argument (default int64)."""
    name = to_dtype_name(dtype, fn, default="int64")
    if name not in ("int32", "int64"):
        raise TypeError(f"{fn}: dtype must be int32 or int64, got {name}")
    return name


def _number(fn: str, arg: str, v: Any) -> float:
    if hasattr(v, "shape") and not is_scalar(v):
        if len(v.shape) == 0 or list(v.shape) == [1]:
            try:
                return float(v)  # an eager 0-D/1-element tensor
            except TypeError:
                pass
        raise TypeError(f"{fn}: '{arg}' must be a number (tensor-valued {arg} is not supported)")
    if not is_scalar(v):
        raise TypeError(f"{fn}: '{arg}' must be a number, got {type(v).__name__}")
    return float(v)


# ------------------------------------------------------------------ ranges


def arange(start: Any = 0, end: Any = None, step: Any = 1, dtype: Any = None,
           name: str | None = None) -> Any:
    """`paddle.arange`: `[start, end)` by `step` (`arange(n)` is `[0, n)`); the dtype
    is int64 when every bound is an int, else float32, unless given."""
    fn = "arange"
    if end is None:
        start, end = 0, start
    values = [_number(fn, a, v) for a, v in (("start", start), ("end", end), ("step", step))]
    if values[2] == 0:
        raise ValueError(f"{fn}: step must not be 0")
    if dtype is None:
        all_int = all(_is_int(v) or (hasattr(v, "dtype") and "int" in str(v.dtype))
                      for v in (start, end, step))
        dtype = "int64" if all_int else get_default_dtype()
    return apply(pd.ArangeOp, [], prefix="range", name=name, start=values[0], end=values[1],
                 step=values[2], dtype=to_dtype_name(dtype, fn))


def fluid_range(start: Any, end: Any, step: Any, dtype: Any, name: str | None = None) -> Any:
    """`fluid.layers.range(start, end, step, dtype)`."""
    return arange(start, end, step, dtype, name=name)


def linspace(start: Any, stop: Any, num: Any, dtype: Any = None, name: str | None = None) -> Any:
    """`paddle.linspace`: `num` evenly spaced values from `start` to `stop` (both
    included); float32 unless `dtype` says otherwise."""
    fn = "linspace"
    if hasattr(num, "shape"):
        num = int(num)
    if not _is_int(num) or num < 0:
        raise ValueError(f"{fn}: num must be a non-negative int, got {num!r}")
    return apply(pd.LinspaceOp, [], prefix="linspace", name=name, start=_number(fn, "start", start),
                 stop=_number(fn, "stop", stop), num=int(num), dtype=to_dtype_name(dtype, fn, default=get_default_dtype()))


def eye(num_rows: int, num_columns: int | None = None, dtype: Any = None,
        name: str | None = None) -> Any:
    """`paddle.eye`: a `num_rows x num_columns` (square by default) identity matrix."""
    fn = "eye"
    cols = num_rows if num_columns is None else num_columns
    for arg, v in (("num_rows", num_rows), ("num_columns", cols)):
        if not _is_int(v) or v < 0:
            raise TypeError(f"{fn}: {arg} must be a non-negative int, got {v!r}")
    return apply(pd.EyeOp, [], prefix="eye", name=name, num_rows=int(num_rows),
                 num_columns=int(cols), dtype=to_dtype_name(dtype, fn, default=get_default_dtype()))


def fluid_eye(num_rows: int, num_columns: int | None = None, batch_shape: Any = None,
              dtype: Any = "float32", name: str | None = None) -> Any:
    """`fluid.layers.eye` (no `batch_shape`)."""
    if batch_shape is not None:
        raise NotImplementedError("eye: batch_shape is not supported")
    return eye(num_rows, num_columns, dtype, name=name)


def empty(shape: Any, dtype: Any = None, name: str | None = None) -> Any:
    """`paddle.empty`: an uninitialized tensor; pullback fills it with zeros."""
    return full(_static_shape("empty", shape), 0.0, dtype=dtype, name=name)


def empty_like(x: Any, dtype: Any = None, name: str | None = None) -> Any:
    """`paddle.empty_like`: shaped like x; pullback fills it with zeros."""
    return full_like(x, 0.0, dtype=dtype, name=name)


# ------------------------------------------------------------------- random


def uniform(shape: Any, dtype: Any = None, min: float = -1.0, max: float = 1.0,
            seed: int = 0, name: str | None = None) -> Any:
    """`paddle.uniform`: samples from `U[min, max)`."""
    fn = "uniform"
    lo, hi = _number(fn, "min", min), _number(fn, "max", max)
    if lo > hi:
        raise ValueError(f"{fn}: min ({lo}) must not exceed max ({hi})")
    return apply(pd.UniformRandomOp, [], prefix="uniform_random", name=name,
                 shape=_static_shape(fn, shape), dtype=_float_dtype(fn, dtype),
                 min=lo, max=hi, seed=random_seed("uniform_random", seed, name))


def rand(shape: Any, dtype: Any = None, name: str | None = None) -> Any:
    """`paddle.rand`: samples from `U[0, 1)`."""
    return uniform(shape, dtype, 0.0, 1.0, name=name)


def _gaussian(fn: str, shape: Any, mean: float, std: float, dtype: Any, seed: int,
              name: str | None) -> Any:
    if std < 0:
        raise ValueError(f"{fn}: std must be non-negative, got {std}")
    return apply(pd.GaussianRandomOp, [], prefix="gaussian_random", name=name,
                 shape=_static_shape(fn, shape), dtype=_float_dtype(fn, dtype),
                 mean=float(mean), std=float(std), seed=random_seed("gaussian_random", seed, name))


def randn(shape: Any, dtype: Any = None, name: str | None = None) -> Any:
    """`paddle.randn`: standard normal samples."""
    return _gaussian("randn", shape, 0.0, 1.0, dtype, 0, name)


def standard_normal(shape: Any, dtype: Any = None, name: str | None = None) -> Any:
    """`paddle.standard_normal`: standard normal samples."""
    return _gaussian("standard_normal", shape, 0.0, 1.0, dtype, 0, name)


def normal(mean: Any = 0.0, std: Any = 1.0, shape: Any = None, name: str | None = None) -> Any:
    """`paddle.normal`: samples from `N(mean, std^2)`.  With tensor `mean` and/or
    `std` the result has their (broadcast) shape and `shape` is ignored."""
    fn = "normal"
    tensors = [v for v in (mean, std) if not is_scalar(v)]
    if not tensors:
        return _gaussian(fn, [1] if shape is None else shape, _number(fn, "mean", mean),
                         _number(fn, "std", std), None, 0, name)
    for v in tensors:
        check_float_tensor(fn, "mean/std", v)
    dims = list(np.broadcast_shapes(*[tuple(v.shape) for v in tensors]))
    z = _gaussian(fn, dims, 0.0, 1.0, tensors[0].dtype, 0, None)
    out = z * std if not is_scalar(std) else z * float(std)
    return out + mean if not is_scalar(mean) else out + float(mean)


def fluid_uniform_random(shape: Any, dtype: Any = "float32", min: float = -1.0,
                         max: float = 1.0, seed: int = 0, name: str | None = None) -> Any:
    """`fluid.layers.uniform_random`."""
    return uniform(shape, dtype, min, max, seed, name)


def fluid_gaussian_random(shape: Any, mean: float = 0.0, std: float = 1.0, seed: int = 0,
                          dtype: Any = "float32", name: str | None = None) -> Any:
    """`fluid.layers.gaussian_random`."""
    return _gaussian("gaussian_random", shape, _number("gaussian_random", "mean", mean),
                     _number("gaussian_random", "std", std), dtype, seed, name)


def randint(low: int = 0, high: int | None = None, shape: Any = (1,), dtype: Any = None,
            name: str | None = None) -> Any:
    """`paddle.randint`: uniform integers in `[low, high)` (`[0, low)` when `high`
    is None); int64 by default."""
    fn = "randint"
    if high is None:
        low, high = 0, low
    if not _is_int(low) or not _is_int(high):
        raise TypeError(f"{fn}: low and high must be ints, got {low!r}, {high!r}")
    if low >= high:
        raise ValueError(f"{fn}: low ({low}) must be less than high ({high})")
    return apply(pd.RandintOp, [], prefix="randint", name=name, low=int(low), high=int(high),
                 shape=_static_shape(fn, shape), dtype=_int_dtype(fn, dtype),
                 seed=random_seed("randint", 0, name))


def randint_like(x: Any, low: int = 0, high: int | None = None, dtype: Any = None,
                 name: str | None = None) -> Any:
    """`paddle.randint_like`: `randint` shaped like x (x's dtype by default)."""
    check_tensor("randint_like", "x", x)
    shape = _static_shape("randint_like", list(x.shape))
    out = randint(low, high, shape, "int64", name=name)
    dt = to_dtype_name(dtype, "randint_like", default=x.dtype)
    if dt == "int64":
        return out
    return cast(out, dt)


def randperm(n: int, dtype: Any = "int64", name: str | None = None) -> Any:
    """`paddle.randperm`: a random permutation of `0 .. n-1`."""
    if not _is_int(n) or n < 1:
        raise ValueError(f"randperm: n must be a positive int, got {n!r}")
    return apply(pd.RandpermOp, [], prefix="randperm", name=name, n=int(n),
                 dtype=_int_dtype("randperm", dtype), seed=random_seed("randperm", 0, name))


def bernoulli(x: Any, p: float | None = None, name: str | None = None) -> Any:
    """`paddle.bernoulli`: 1 with probability `x` (or the scalar `p` when given),
    else 0, in x's dtype."""
    check_float_tensor("bernoulli", "x", x)
    probs = x
    if p is not None:
        pv = _number("bernoulli", "p", p)
        if not 0.0 <= pv <= 1.0:
            raise ValueError(f"bernoulli: p must be in [0, 1], got {pv}")
        probs = full_like(x, pv)
    return apply(pd.BernoulliOp, [probs], prefix="bernoulli", name=name,
                 seed=random_seed("bernoulli", 0, name))


def to_tensor(data: Any, dtype: Any = None, place: Any = None, stop_gradient: bool = True) -> Any:
    """`paddle.to_tensor`: in dynamic mode a new eager Tensor holding a copy of `data`
    (`frontend/eager.py`); in static mode, as Paddle's, a constant of the current
    program (`pd.assign_value`) holding it, with the same dtype rules (Python floats
    take the default dtype, ints int64, numpy arrays keep theirs) and `stop_gradient`."""
    from pullback.frontend import eager

    if in_dynamic_mode():
        return eager.to_tensor(data, dtype, place, stop_gradient)
    if isinstance(data, Variable):  # Paddle: a copy (cast when dtype differs)
        out = clone(data)
        if dtype is not None and to_dtype_name(dtype, "to_tensor") != str(out.dtype):
            out = cast(out, to_dtype_name(dtype, "to_tensor"))
    else:
        arr = eager.to_tensor(data, dtype, place)._data  # (eager's dtype rules: one home)
        held = dtype_for_array(arr.dtype)
        assert held is not None  # (to_tensor refused any other dtype)
        out = to_constant(bf16_to_f32(arr) if held.name == "bfloat16" else arr, dtype=held.name)
    out.stop_gradient = bool(stop_gradient)
    return out


PADDLE: list[Callable[..., Any]] = [
    arange, linspace, eye, empty, empty_like, uniform, rand, randn, standard_normal, normal,
    randint, randint_like, randperm, bernoulli,
]
FUNCTIONAL: list[Callable[..., Any]] = []
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {
    "range": fluid_range, "arange": arange, "linspace": linspace, "eye": fluid_eye,
    "uniform_random": fluid_uniform_random, "gaussian_random": fluid_gaussian_random,
    "randint": randint, "randperm": randperm, "bernoulli": bernoulli,
}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {"bernoulli": bernoulli}
