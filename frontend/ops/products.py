"""Paddle's product functions built on `matmul`: `addmm`, `baddbmm`, `mv`, `inner`
and `tensordot`.

All are composites (transpose, reshape, `pd.matmul`, `pd.scale`, add), so gradients
of every order, static mode and the compiled backend come from those ops' rules.
`tensordot` moves the contracted axes of x last and of y first, flattens both to
matrices, multiplies, and reshapes to the free dimensions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pullback.frontend.ops.elementwise import add, check_tensor, is_scalar, scale
from pullback.frontend.ops.linalg import bmm
from pullback.frontend.ops.nn import matmul
from pullback.frontend.ops.shape import reshape, transpose


def _same_dtype(fn: str, **tensors: Any) -> None:
    """Check the arguments are tensors of one dtype."""
    for arg, v in tensors.items():
        check_tensor(fn, arg, v)
    dtypes = {arg: v.dtype for arg, v in tensors.items()}
    if len(set(dtypes.values())) > 1:
        raise TypeError(f"{fn}: the inputs must have the same dtype, got {dtypes}")


def _scaled_sum(fn: str, input: Any, prod: Any, beta: Any, alpha: Any, name: str | None) -> Any:  # noqa: A002
    """`beta * input + alpha * prod` (input broadcast to prod's shape)."""
    for arg, v in (("beta", beta), ("alpha", alpha)):
        if not is_scalar(v):
            raise TypeError(f"{fn}: {arg} must be a float, got {type(v).__name__}")
    a, b = float(alpha), float(beta)
    p = prod if a == 1.0 else scale(prod, a)
    i = input if b == 1.0 else scale(input, b)
    return add(i, p, name=name)


def addmm(input: Any, x: Any, y: Any, beta: float = 1.0, alpha: float = 1.0,  # noqa: A002
          name: str | None = None) -> Any:
    """`paddle.addmm`: `beta * input + alpha * (x @ y)` for 2-D x, y (input
    broadcasts to the product's shape)."""
    _same_dtype("addmm", input=input, x=x, y=y)
    if len(x.shape) != 2 or len(y.shape) != 2:
        raise ValueError(
            f"addmm: x and y must be 2-D, got shapes {list(x.shape)} and {list(y.shape)}")
    if x.shape[1] >= 0 and y.shape[0] >= 0 and x.shape[1] != y.shape[0]:
        raise ValueError(
            f"addmm: the column of x ({x.shape[1]}) must equal the row of y ({y.shape[0]}); "
            f"shapes {list(x.shape)} and {list(y.shape)}")
    out_shape = [x.shape[0], y.shape[1]]
    try:
        np.broadcast_shapes(tuple(abs(d) for d in input.shape), tuple(abs(d) for d in out_shape))
    except ValueError:
        raise ValueError(
            f"addmm: input of shape {list(input.shape)} does not broadcast to the product's "
            f"shape {out_shape}") from None
    return _scaled_sum("addmm", input, matmul(x, y), beta, alpha, name)


def baddbmm(input: Any, x: Any, y: Any, beta: float = 1.0, alpha: float = 1.0,  # noqa: A002
            name: str | None = None) -> Any:
    """`paddle.baddbmm`: `beta * input + alpha * bmm(x, y)` for 3-D x, y."""
    _same_dtype("baddbmm", input=input, x=x, y=y)
    if len(x.shape) != 3 or len(y.shape) != 3:
        raise ValueError(
            f"baddbmm: x and y must be 3-D, got shapes {list(x.shape)} and {list(y.shape)}")
    return _scaled_sum("baddbmm", input, bmm(x, y), beta, alpha, name)


def mv(x: Any, vec: Any, name: str | None = None) -> Any:
    """`paddle.mv`: the product of a 2-D matrix and a 1-D vector."""
    _same_dtype("mv", x=x, vec=vec)
    if len(x.shape) != 2 or len(vec.shape) != 1:
        raise ValueError(
            f"mv: x must be 2-D and vec 1-D, got shapes {list(x.shape)} and {list(vec.shape)}")
    if x.shape[1] >= 0 and vec.shape[0] >= 0 and x.shape[1] != vec.shape[0]:
        raise ValueError(f"mv: x of shape {list(x.shape)} and vec of shape {list(vec.shape)} "
                         "do not match")
    return matmul(x, vec, name=name)


def _static(fn: str, x: Any, arg: str) -> list[int]:
    dims = list(x.shape)
    if any(d < 0 for d in dims):
        raise ValueError(f"{fn}: {arg} must have a static shape, got {dims}")
    return dims


def _axes_list(fn: str, axes: Any, rank: int) -> list[int]:
    out = []
    for a in axes:
        if isinstance(a, bool) or not isinstance(a, (int, np.integer)):
            raise TypeError(f"{fn}: axes must contain ints, got {a!r}")
        if not -rank <= a < rank:
            raise ValueError(f"{fn}: axis {a} is out of range for a {rank}-D input")
        out.append(int(a) % rank)
    if len(set(out)) != len(out):
        raise ValueError(f"{fn}: repeated axis in {list(axes)}")
    return out


def tensordot(x: Any, y: Any, axes: Any = 2, name: str | None = None) -> Any:
    """`paddle.tensordot`: contract x and y over `axes`: an int n (the last n of x
    with the first n of y), one list (the same axes of both), or a pair of lists."""
    _same_dtype("tensordot", x=x, y=y)
    xs, ys = _static("tensordot", x, "x"), _static("tensordot", y, "y")
    if hasattr(axes, "numpy"):
        axes = axes.numpy().tolist()
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, bool):
        n = int(axes)
        if n < 0 or n > min(len(xs), len(ys)):
            raise ValueError(f"tensordot: axes ({n}) must be in [0, {min(len(xs), len(ys))}]")
        ax, ay = list(range(len(xs) - n, len(xs))), list(range(n))
    elif isinstance(axes, (list, tuple)):
        if axes and all(isinstance(a, (list, tuple)) for a in axes):
            seq: Sequence[Any] = axes
            ax_in = list(seq[0]) if len(seq) > 0 else []
            ay_in = list(seq[1]) if len(seq) > 1 else ax_in
        else:
            ax_in = ay_in = list(axes)
        # Paddle pairs the common prefix of both lists.
        k = min(len(ax_in), len(ay_in))
        ax = _axes_list("tensordot", ax_in[:k], len(xs))
        ay = _axes_list("tensordot", ay_in[:k], len(ys))
    else:
        raise TypeError(f"tensordot: axes must be an int or a list, got {type(axes).__name__}")
    for a, b in zip(ax, ay):
        if xs[a] != ys[b]:
            raise ValueError(
                f"tensordot: contracted dimension {a} of x ({xs[a]}) does not match dimension "
                f"{b} of y ({ys[b]}); shapes {xs} and {ys}")
    fx = [d for d in range(len(xs)) if d not in ax]
    fy = [d for d in range(len(ys)) if d not in ay]
    k = math.prod(xs[a] for a in ax)
    px = x if fx + ax == list(range(len(xs))) else transpose(x, fx + ax)
    py = y if ay + fy == list(range(len(ys))) else transpose(y, ay + fy)
    mx = reshape(px, [math.prod(xs[d] for d in fx), k])
    my = reshape(py, [k, math.prod(ys[d] for d in fy)])
    return reshape(matmul(mx, my), [xs[d] for d in fx] + [ys[d] for d in fy], name=name)


def inner(x: Any, y: Any, name: str | None = None) -> Any:
    """`paddle.inner`: the sum of products over the last axes of x and y (a scalar
    operand multiplies)."""
    check_tensor("inner", "x", x)
    check_tensor("inner", "y", y)
    if not x.shape or not y.shape:
        return x * y
    return tensordot(x, y, [[-1], [-1]], name=name)


_ALL: list[Callable[..., Any]] = [addmm, baddbmm, mv, tensordot, inner]

PADDLE: list[Callable[..., Any]] = list(_ALL)
FUNCTIONAL: list[Callable[..., Any]] = []
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {f.__name__: f for f in _ALL}
