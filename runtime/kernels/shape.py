"""Kernels of the shape ops.

Output shapes come from the dialect's own shape rules applied to the run-time
shapes, so the interpreter and the verifier cannot disagree; a rule that fails at
run time (a feed whose shape does not fit) raises InterpreterError.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.utils.exceptions import VerifyException

from pullback.dialects import pd
from pullback.dialects.pd.base import DYN, shape_of
from pullback.dialects.pd.shape import (
    broadcast_to_shape,
    expand_target,
    pad_pairs,
    permutation,
    reshaped_shape,
    slice_bounds,
    split_sizes,
    squeezed_axes,
    unsqueezed_shape,
)
from pullback.runtime.interpreter import InterpreterError, kernel


def _at_run_time(fn: Callable[..., object]) -> Callable[..., object]:
    """Report a shape rule failing on run-time shapes as an InterpreterError."""

    @functools.wraps(fn)
    def run(op, *arrays):
        try:
            return fn(op, *arrays)
        except VerifyException as e:
            raise InterpreterError(f"{e} (at run time)") from None

    return run


def _check_not_broadcast(op, static: Sequence[int], x: np.ndarray, out: Sequence[int]) -> None:
    """A dimension the type leaves dynamic must not be broadcast at run time: the
    gradient rule reads from the types which dimensions are (see `pd.expand`)."""
    lead = len(out) - x.ndim
    for i, (s, d) in enumerate(zip(static, x.shape)):
        if s == DYN and d != out[lead + i]:
            raise VerifyException(
                f"'{op.name}': dimension {i} of the input is dynamic in its type but "
                f"{d} at run time, which would broadcast to {out[lead + i]}"
            )


@kernel(pd.ReshapeOp)
@_at_run_time
def reshape(op, x: np.ndarray) -> np.ndarray:
    return x.reshape(reshaped_shape(x.shape, op.prop("shape")))


@kernel(pd.ReshapeAsOp)
@_at_run_time
def reshape_as(op, x: np.ndarray, like: np.ndarray) -> np.ndarray:
    if x.size != like.size:
        raise VerifyException(f"'{op.name}': cannot reshape {list(x.shape)} like {list(like.shape)}")
    return x.reshape(like.shape)


@kernel(pd.TransposeOp)
@_at_run_time
def transpose(op, x: np.ndarray) -> np.ndarray:
    return np.transpose(x, permutation(op.prop("perm"), x.ndim))


@kernel(pd.ConcatOp)
@_at_run_time
def concat(op, *xs: np.ndarray) -> np.ndarray:
    return np.concatenate(xs, axis=op.prop("axis"))


def _split_at(op, x: np.ndarray, sizes: Sequence[int]) -> list[np.ndarray]:
    """`x` cut along the op's axis into pieces of `sizes`."""
    axis = op.prop("axis") % x.ndim
    if sum(sizes) != x.shape[axis]:
        raise VerifyException(
            f"'{op.name}': pieces of sizes {list(sizes)} do not add up to dimension "
            f"{axis} of {list(x.shape)}"
        )
    return np.split(x, np.cumsum(sizes)[:-1], axis=axis)


@kernel(pd.SplitOp)
@_at_run_time
def split(op, x: np.ndarray) -> list[np.ndarray]:
    dim = x.shape[op.prop("axis") % x.ndim]
    return _split_at(op, x, split_sizes(dim, op.prop("num"), op.prop("sections")))


@kernel(pd.SplitAsOp)
@_at_run_time
def split_as(op, x: np.ndarray, *likes: np.ndarray) -> list[np.ndarray]:
    axis = op.prop("axis") % x.ndim
    return _split_at(op, x, [like.shape[axis] for like in likes])


@kernel(pd.SliceOp)
@_at_run_time
def slice_(op, x: np.ndarray) -> np.ndarray:
    index = [slice(None)] * x.ndim
    for a, s, e in zip(op.prop("axes"), op.prop("starts"), op.prop("ends")):
        index[a % x.ndim] = slice(*slice_bounds(x.shape[a % x.ndim], s, e))
    return x[tuple(index)]


@kernel(pd.PadOp)
@_at_run_time
def pad(op, x: np.ndarray) -> np.ndarray:
    pairs = pad_pairs(op.prop("paddings"), x.ndim)
    return np.pad(x, pairs, mode="constant", constant_values=op.prop("value"))


@kernel(pd.SqueezeOp)
@_at_run_time
def squeeze(op, x: np.ndarray) -> np.ndarray:
    # The static type decides which axes go; they must be 1 at run time.
    gone = squeezed_axes(shape_of(op.x.type), op.prop("axes"))
    if any(x.shape[a] != 1 for a in gone):
        raise VerifyException(
            f"'{op.name}': axes {gone} must have size 1 at run time, got shape {list(x.shape)}"
        )
    return np.squeeze(x, axis=tuple(gone))


@kernel(pd.UnsqueezeOp)
@_at_run_time
def unsqueeze(op, x: np.ndarray) -> np.ndarray:
    return x.reshape(unsqueezed_shape(x.shape, op.prop("axes")))


@kernel(pd.ExpandOp)
@_at_run_time
def expand(op, x: np.ndarray) -> np.ndarray:
    out = broadcast_to_shape(x.shape, expand_target(x.shape, op.prop("shape")), op.name)
    _check_not_broadcast(op, shape_of(op.x.type), x, out)
    return np.broadcast_to(x, out).copy()


@kernel(pd.ExpandAsOp)
@_at_run_time
def expand_as(op, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    out = broadcast_to_shape(x.shape, y.shape, op.name)
    _check_not_broadcast(op, shape_of(op.x.type), x, out)
    return np.broadcast_to(x, out).copy()
