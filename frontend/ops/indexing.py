"""Paddle's indexing and arrangement API: `gather`, `index_select`, `gather_nd`,
`take_along_axis`, `put_along_axis`, `scatter`, `scatter_nd(_add)`, `index_add`,
`masked_select`, `masked_fill`, `nonzero`, `triu`/`tril`, `diag`, `flip`, `roll`,
`stack`/`unstack`, `chunk`, `tile`, `repeat_interleave`, `broadcast_tensors`,
`assign`/`clone`, `numel`, `Tensor.T`, and `x[index]` / `x[index] = value`.

`x[index]` supports ints, slices with any step (negative too), `None`, one `...`,
and advanced indices: one integer tensor (or list/ndarray of ints) on any axis
(`pd.gather`), several integer tensors on the leading axes (`pd.gather_nd` of their
broadcast), and a boolean mask over the leading axes (`pd.gather_nd` of
`pd.nonzero(mask)`).  `x[index] = value` (ints, slices, `None`, `...`) writes in
place with `pd.set_value`: in eager mode the tensor takes the new value and its
gradient history; a leaf that requires a gradient cannot be written (as in Paddle).
The overwritten entries pass no gradient back to the old value, and `value`
receives the gradient of the slice it filled.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from pullback.dialects.pd.dtypes import COMPLEX_NAMES, to_dtype_name
from pullback.dialects import pd
from pullback.dialects.pd.base import f64_attr
from pullback.frontend.core import apply, in_dynamic_mode
from pullback.frontend.eager import to_tensor
from pullback.frontend.ops.elementwise import (
    cast,
    check_tensor,
    full,
    full_like,
    greater_than,
    is_scalar,
    where,
)
from pullback.frontend.ops.shape import (
    concat,
    expand,
    reshape,
    split,
    squeeze,
    transpose,
    unsqueeze,
)
from pullback.frontend.ops.shape import slice as pslice
from xdsl.dialects.builtin import ArrayAttr

_MAX = pd.STRIDED_END_POS
_MIN = pd.STRIDED_END_NEG


# --------------------------------------------------------------------- helpers


def _is_int(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, (int, np.integer))


def _int(fn: str, arg: str, v: Any) -> int:
    if not _is_int(v):
        raise TypeError(f"{fn}: '{arg}' must be an int, got {v!r}")
    return int(v)


def _axis(fn: str, axis: Any, rank: int, arg: str = "axis") -> int:
    a = _int(fn, arg, axis)
    if not -builtins.max(rank, 1) <= a < builtins.max(rank, 1):
        raise ValueError(f"{fn}: {arg} {a} is out of range for a {rank}-D input")
    return a % builtins.max(rank, 1)


def _is_tensor(v: Any) -> bool:
    return hasattr(v, "dtype") and hasattr(v, "shape") and type(v).__module__ != "numpy"


def _check_index(fn: str, index: Any, arg: str = "index") -> None:
    check_tensor(fn, arg, index)
    if index.dtype not in ("int32", "int64"):
        raise TypeError(f"{fn}: '{arg}' must be int32 or int64, got {index.dtype}")


def to_constant(value: Any, dtype: Any = None) -> Any:
    """A constant tensor of `value` (nested lists or an ndarray): `pd.assign_value`."""
    a = np.asarray(value)
    if dtype is None:
        dtype = {"i": "int64", "u": "int64", "b": "bool"}.get(a.dtype.kind, "float32")
    dt = to_dtype_name(dtype, "assign")
    if a.dtype.kind == "c" or dt in COMPLEX_NAMES:
        if in_dynamic_mode():
            return to_tensor(a, dtype=dt)
        if dt not in COMPLEX_NAMES:
            raise TypeError(f"assign: complex values cannot be a {dt} constant (their imaginary parts "
                            "would be dropped); take paddle.real(...) explicitly")
        flat = a.reshape(-1).astype(np.complex128)
        return apply(pd.AssignValueOp, [], prefix="assign_value", shape=list(a.shape),
                     values=ArrayAttr([f64_attr(float(v.real)) for v in flat]),
                     imag_values=ArrayAttr([f64_attr(float(v.imag)) for v in flat]), dtype=dt)
    vals = ArrayAttr([f64_attr(float(v)) for v in a.reshape(-1)])
    return apply(pd.AssignValueOp, [], prefix="assign_value", shape=list(a.shape), values=vals, dtype=dt)


def _broadcast_dims(fn: str, shapes: Sequence[Sequence[int]]) -> list[int]:
    """Numpy broadcasting of shapes with -1 (dynamic) dimensions."""
    rank = builtins.max(len(s) for s in shapes)
    out = []
    for d in range(rank):
        dims = {s[d - rank + len(s)] for s in shapes if d - rank + len(s) >= 0} - {1}
        if len(dims) > 1 and not (len(dims - {-1}) <= 1):
            raise ValueError(f"{fn}: shapes {[list(s) for s in shapes]} are not broadcastable")
        static = dims - {-1}
        out.append(static.pop() if static else (-1 if dims else 1))
    return out


def _expand_to(x: Any, dims: Sequence[int]) -> Any:
    """x broadcast to `dims` (a no-op when already there)."""
    if list(x.shape) == list(dims):
        return x
    return expand(x, list(dims))


# -------------------------------------------------------------- gather family


def gather(x: Any, index: Any, axis: Any = None, name: str | None = None) -> Any:
    """`paddle.gather`: entries `index` (0-D or 1-D; `[N, 1]` is flattened) of x
    along `axis` (default 0)."""
    fn = "gather"
    check_tensor(fn, "x", x)
    _check_index(fn, index)
    a = _axis(fn, 0 if axis is None else axis, len(x.shape))
    if len(index.shape) == 2 and index.shape[1] == 1:
        index = reshape(index, [-1])
    return apply(pd.GatherOp, [x, index], prefix="gather", name=name, axis=a)


def index_select(x: Any, index: Any, axis: int = 0, name: str | None = None) -> Any:
    """`paddle.index_select`: entries `index` (1-D) of x along `axis`."""
    check_tensor("index_select", "x", x)
    _check_index("index_select", index)
    if len(index.shape) != 1:
        raise ValueError(f"index_select: index must be 1-D, got shape {list(index.shape)}")
    a = _axis("index_select", axis, len(x.shape))
    return apply(pd.GatherOp, [x, index], prefix="index_select", name=name, axis=a)


def index_add(x: Any, index: Any, axis: int, value: Any, name: str | None = None) -> Any:
    """`paddle.index_add`: x with `value` added at entries `index` along `axis`."""
    check_tensor("index_add", "x", x)
    _check_index("index_add", index)
    a = _axis("index_add", axis, len(x.shape))
    return apply(pd.IndexAddOp, [x, index, value], prefix="index_add", name=name, axis=a)


def gather_nd(x: Any, index: Any, name: str | None = None) -> Any:
    """`paddle.gather_nd`: `out[i...] = x[index[i..., :]]`."""
    check_tensor("gather_nd", "x", x)
    _check_index("gather_nd", index)
    return apply(pd.GatherNdOp, [x, index], prefix="gather_nd", name=name)


def scatter_nd_add(x: Any, index: Any, updates: Any, name: str | None = None) -> Any:
    """`paddle.scatter_nd_add`: x with `updates` added at the coordinates `index`."""
    check_tensor("scatter_nd_add", "x", x)
    _check_index("scatter_nd_add", index)
    return apply(pd.ScatterNdAddOp, [x, index, updates], prefix="scatter_nd_add", name=name)


def scatter_nd(index: Any, updates: Any, shape: Sequence[int], name: str | None = None) -> Any:
    """`paddle.scatter_nd`: zeros of `shape` with `updates` added at `index`."""
    check_tensor("scatter_nd", "updates", updates)
    return scatter_nd_add(full(list(shape), 0.0, dtype=updates.dtype), index, updates, name=name)


def scatter(x: Any, index: Any, updates: Any, overwrite: bool = True, name: str | None = None) -> Any:
    """`paddle.scatter`: rows `index` of x replaced by `updates` (`overwrite`), or
    zeroed and then accumulated (duplicates add up)."""
    check_tensor("scatter", "x", x)
    _check_index("scatter", index)
    if len(index.shape) == 2 and index.shape[1] == 1:
        index = reshape(index, [-1])
    return apply(pd.ScatterOp, [x, index, updates], prefix="scatter", name=name,
                 overwrite=bool(overwrite))


def _along_axis_shapes(fn: str, arr: Any, indices: Any, axis: int) -> tuple[list[int], list[int]]:
    """The broadcast shapes of `arr` and `indices`: equal except along `axis`."""
    if len(arr.shape) != len(indices.shape):
        raise ValueError(f"{fn}: indices must have the rank of arr ({len(arr.shape)}), "
                         f"got shape {list(indices.shape)}")
    common = _broadcast_dims(fn, [[d for i, d in enumerate(s) if i != axis]
                                  for s in (arr.shape, indices.shape)])
    common.insert(axis, 0)
    a_dims = [arr.shape[axis] if i == axis else d for i, d in enumerate(common)]
    i_dims = [indices.shape[axis] if i == axis else d for i, d in enumerate(common)]
    return a_dims, i_dims


def take_along_axis(arr: Any, indices: Any, axis: int, broadcast: bool = True,
                    name: str | None = None) -> Any:
    """`paddle.take_along_axis`: `out[..., j, ...] = arr[..., indices[..., j, ...], ...]`
    along `axis`; the other dimensions broadcast when `broadcast`."""
    fn = "take_along_axis"
    check_tensor(fn, "arr", arr)
    _check_index(fn, indices, "indices")
    a = _axis(fn, axis, len(arr.shape))
    if broadcast:
        a_dims, i_dims = _along_axis_shapes(fn, arr, indices, a)
        arr, indices = _expand_to(arr, a_dims), _expand_to(indices, i_dims)
    return apply(pd.TakeAlongAxisOp, [arr, indices], prefix="take_along_axis", name=name, axis=a)


def put_along_axis(arr: Any, indices: Any, values: Any, axis: int, reduce: str = "assign",
                   include_self: bool = True, broadcast: bool = True, name: str | None = None) -> Any:
    """`paddle.put_along_axis`: arr with `values` (a tensor or a number, broadcast to
    `indices`) written at `indices` along `axis`; `reduce` is `assign`, `add` or
    `mul`/`multiply`."""
    fn = "put_along_axis"
    check_tensor(fn, "arr", arr)
    _check_index(fn, indices, "indices")
    if reduce == "multiply":
        reduce = "mul"
    if reduce not in pd.PUT_REDUCTIONS:
        raise ValueError(f"{fn}: reduce must be 'assign', 'add', 'mul' or 'multiply', got {reduce!r}"
                         " ('mean', 'amin', 'amax' are not supported)")
    if not include_self:
        raise NotImplementedError(f"{fn}: include_self=False is not supported")
    a = _axis(fn, axis, len(arr.shape))
    if broadcast:
        a_dims, i_dims = _along_axis_shapes(fn, arr, indices, a)
        if a_dims != list(arr.shape):
            raise ValueError(f"{fn}: indices of shape {list(indices.shape)} would broadcast arr "
                             f"of shape {list(arr.shape)}")
        indices = _expand_to(indices, i_dims)
    if is_scalar(values):
        values = full(list(indices.shape), float(values), dtype=arr.dtype) if all(
            d >= 0 for d in indices.shape) else full_like(cast(indices, arr.dtype), float(values))
    else:
        check_tensor(fn, "values", values)
        values = _expand_to(values, list(indices.shape))
    return apply(pd.PutAlongAxisOp, [arr, indices, values], prefix="put_along_axis", name=name,
                 axis=a, reduce=reduce)


def nonzero(x: Any, as_tuple: bool = False) -> Any:
    """`paddle.nonzero`: int64 coordinates `[count, rank]` of the non-zero entries,
    or (`as_tuple`) one `[count, 1]`... column per dimension, as a tuple of 1-D tensors."""
    check_tensor("nonzero", "x", x)
    out = apply(pd.NonzeroOp, [x], prefix="where_index")
    if not as_tuple:
        return out
    rank = len(x.shape)
    if rank == 0:
        return (reshape(out, [-1]),)
    cols = split(out, rank, axis=1) if rank > 1 else [out]
    return tuple(reshape(c, [-1]) for c in cols)


def masked_select(x: Any, mask: Any, name: str | None = None) -> Any:
    """`paddle.masked_select`: the entries of x where `mask` is true, as a 1-D tensor
    (x and mask broadcast against each other)."""
    fn = "masked_select"
    check_tensor(fn, "x", x)
    check_tensor(fn, "mask", mask)
    if mask.dtype != "bool":
        raise TypeError(f"{fn}: mask must be bool, got {mask.dtype}")
    dims = _broadcast_dims(fn, [x.shape, mask.shape])
    x, mask = _expand_to(x, dims), _expand_to(mask, dims)
    return gather_nd(x, nonzero(mask), name=name)


def masked_fill(x: Any, mask: Any, value: Any, name: str | None = None) -> Any:
    """`paddle.masked_fill`: x with `value` (a number or 0-D tensor) where `mask` is
    true (broadcasting)."""
    check_tensor("masked_fill", "x", x)
    check_tensor("masked_fill", "mask", mask)
    if mask.dtype != "bool":
        raise TypeError(f"masked_fill: mask must be bool, got {mask.dtype}")
    if is_scalar(value):
        value = full_like(x, float(value))
    return where(mask, value, x, name=name)


# ---------------------------------------------------------- triangles, diag


def _tril_triu(fn: str, x: Any, diagonal: Any, lower: bool, name: str | None) -> Any:
    check_tensor(fn, "x", x)
    if len(x.shape) < 2:
        raise ValueError(f"{fn}: x must have at least 2 dimensions, got shape {list(x.shape)}")
    return apply(pd.TrilTriuOp, [x], prefix="tril_triu", name=name,
                 diagonal=_int(fn, "diagonal", diagonal), lower=lower)


def tril(x: Any, diagonal: int = 0, name: str | None = None) -> Any:
    """`paddle.tril`: the lower triangle (on and below diagonal `diagonal`)."""
    return _tril_triu("tril", x, diagonal, True, name)


def triu(x: Any, diagonal: int = 0, name: str | None = None) -> Any:
    """`paddle.triu`: the upper triangle (on and above diagonal `diagonal`)."""
    return _tril_triu("triu", x, diagonal, False, name)


def diag(x: Any, offset: int = 0, padding_value: float = 0, name: str | None = None) -> Any:
    """`paddle.diag`: a 1-D x becomes the `offset` diagonal of a square matrix (the
    rest `padding_value`); a 2-D x gives its `offset` diagonal."""
    fn = "diag"
    check_tensor(fn, "x", x)
    k = _int(fn, "offset", offset)
    if any(d < 0 for d in x.shape):
        raise ValueError(f"{fn}: x must have a static shape, got {list(x.shape)}")
    if len(x.shape) == 1:
        n = x.shape[0]
        m = n + builtins.abs(k)
        r0, c0 = (0, k) if k >= 0 else (-k, 0)
        idx = to_constant([[r0 + i, c0 + i] for i in range(n)], "int64") if n else None
        base = full([m, m], 0.0, dtype=x.dtype)
        if idx is None:
            return full([m, m], float(padding_value), dtype=x.dtype, name=name)
        out = scatter_nd_add(base, idx, x)
        if padding_value:
            mask = greater_than(scatter_nd_add(base, idx, full_like(x, 1.0)), 0.0)
            out = where(mask, out, full_like(out, float(padding_value)), name=name)
        return out
    if len(x.shape) == 2:
        rows, cols = x.shape
        r0, c0 = (0, k) if k >= 0 else (-k, 0)
        n = builtins.max(0, builtins.min(rows - r0, cols - c0))
        if n == 0:
            return full([0], 0.0, dtype=x.dtype, name=name)
        return gather_nd(x, to_constant([[r0 + i, c0 + i] for i in range(n)], "int64"), name=name)
    raise ValueError(f"{fn}: x must be 1-D or 2-D, got shape {list(x.shape)}")


# -------------------------------------------------------- arranging elements


def strided_slice(x: Any, axes: Sequence[int], starts: Sequence[int], ends: Sequence[int],
                  strides: Sequence[int], name: str | None = None) -> Any:
    """`paddle.strided_slice`: `x[starts:ends:strides]` along `axes` (Python's slice
    rules; `ends` beyond the dimension clamp)."""
    fn = "strided_slice"
    check_tensor(fn, "x", x)
    vals = [[_int(fn, arg, v) for v in seq]
            for arg, seq in (("axes", axes), ("starts", starts), ("ends", ends), ("strides", strides))]
    if builtins.any(s == 0 for s in vals[3]):
        raise ValueError(f"{fn}: strides must not be 0")
    return apply(pd.StridedSliceOp, [x], prefix="strided_slice", name=name,
                 axes=vals[0], starts=vals[1], ends=vals[2], strides=vals[3])


def flip(x: Any, axis: Any, name: str | None = None) -> Any:
    """`paddle.flip`: reverse the order along `axis` (an int or a list)."""
    check_tensor("flip", "x", x)
    axes = [axis] if _is_int(axis) else list(axis)
    axes = [_axis("flip", a, len(x.shape)) for a in axes]
    if not axes:
        return x
    return apply(pd.StridedSliceOp, [x], prefix="flip", name=name, axes=axes,
                 starts=[-1] * len(axes), ends=[_MIN] * len(axes), strides=[-1] * len(axes))


def roll(x: Any, shifts: Any, axis: Any = None, name: str | None = None) -> Any:
    """`paddle.roll`: shift elements by `shifts` along `axis` (of the flattened x
    when `axis` is None), wrapping around; a composite of slices and a concat."""
    fn = "roll"
    check_tensor(fn, "x", x)
    shift_list = [shifts] if _is_int(shifts) else list(shifts)
    if axis is None:
        if len(shift_list) != 1:
            raise ValueError(f"{fn}: shifts must be one int when axis is None")
        flat = reshape(x, [-1])
        return reshape(roll(flat, shift_list[0], 0), list(x.shape), name=name) if x.shape else x
    axes = [axis] if _is_int(axis) else list(axis)
    if len(axes) != len(shift_list):
        raise ValueError(f"{fn}: shifts and axis differ in length ({len(shift_list)}, {len(axes)})")
    out = x
    for s, a in zip(shift_list, axes):
        a = _axis(fn, a, len(x.shape))
        n = x.shape[a]
        if n < 0:
            raise ValueError(f"{fn}: cannot roll dynamic dimension {a}")
        s = _int(fn, "shifts", s) % n if n else 0
        if s:
            head = strided_slice(out, [a], [n - s], [n], [1])
            tail = strided_slice(out, [a], [0], [n - s], [1])
            out = concat([head, tail], axis=a)
    return out


def stack(x: Sequence[Any], axis: int = 0, name: str | None = None) -> Any:
    """`paddle.stack`: join same-shaped tensors along a new dimension `axis`."""
    if not isinstance(x, (list, tuple)) or not x:
        raise TypeError("stack: x must be a non-empty list or tuple of tensors")
    for i, t in enumerate(x):
        check_tensor("stack", f"x[{i}]", t)
    rank = len(x[0].shape)
    a = _int("stack", "axis", axis)
    if not -(rank + 1) <= a <= rank:
        raise ValueError(f"stack: axis {a} is out of range for {rank}-D inputs")
    a %= rank + 1
    shapes = {tuple(t.shape) for t in x}
    if len(shapes) > 1:
        raise ValueError(f"stack: every input must have the same shape, got {sorted(shapes)}")
    parts = [unsqueeze(t, [a]) for t in x]
    return parts[0] if len(parts) == 1 else concat(parts, axis=a, name=name)


def unstack(x: Any, axis: int = 0, num: int | None = None) -> list[Any]:
    """`paddle.unstack`: split x along `axis` into its slices (the dimension removed)."""
    check_tensor("unstack", "x", x)
    a = _axis("unstack", axis, len(x.shape))
    n = x.shape[a]
    if n < 0:
        if num is None:
            raise ValueError("unstack: num is required for a dynamic dimension")
        n = num
    if num is not None and num != n:
        raise ValueError(f"unstack: num ({num}) does not match dimension {a} of size {n}")
    parts = split(x, n, axis=a) if n > 1 else [x]
    return [squeeze(p, [a]) for p in parts]


def chunk(x: Any, chunks: int, axis: int = 0, name: str | None = None) -> list[Any]:
    """`paddle.chunk`: split x into `chunks` equal parts along `axis`."""
    check_tensor("chunk", "x", x)
    c = _int("chunk", "chunks", chunks)
    if c <= 0:
        raise ValueError(f"chunk: chunks must be positive, got {c}")
    a = _axis("chunk", axis, len(x.shape))
    if x.shape[a] >= 0 and x.shape[a] % c:
        raise ValueError(f"chunk: dimension {a} of size {x.shape[a]} is not divisible by {c}")
    return split(x, c, axis=a, name=name) if c > 1 else [x]


def tile(x: Any, repeat_times: Any, name: str | None = None) -> Any:
    """`paddle.tile`: repeat x `repeat_times[i]` times along dimension i (x is padded
    with leading size-1 dimensions to the length of `repeat_times`)."""
    fn = "tile"
    check_tensor(fn, "x", x)
    reps = [_int(fn, "repeat_times", r) for r in (
        [repeat_times] if _is_int(repeat_times) else list(repeat_times))]
    if any(r <= 0 for r in reps):
        raise ValueError(f"{fn}: repeat_times must be positive, got {reps}")
    rank = builtins.max(len(reps), len(x.shape))
    reps = [1] * (rank - len(reps)) + reps
    if len(x.shape) < rank:
        x = reshape(x, [1] * (rank - len(x.shape)) + [max(d, 0) for d in x.shape])
    dims = list(x.shape)
    if all(r == 1 for r in reps):
        return x
    if sum(1 for d, r in zip(dims, reps) if d < 0) > 1 or any(d < 0 and r != 1 for d, r in zip(dims, reps)):
        raise ValueError(f"{fn}: cannot tile dynamic dimensions of shape {dims} by {reps}")
    y = unsqueeze(x, [2 * i for i in range(rank)])  # [1, d0, 1, d1, ...]
    y = expand(y, [v for d, r in zip(dims, reps) for v in (r, -1 if d < 0 else d)])
    return reshape(y, [-1 if d < 0 else d * r for d, r in zip(dims, reps)], name=name)


def repeat_interleave(x: Any, repeats: Any, axis: int | None = None, name: str | None = None) -> Any:
    """`paddle.repeat_interleave`: repeat each element `repeats` times along `axis`
    (of the flattened x when None); `repeats` an int, or a 1-D tensor of counts
    (eager mode: the counts must be known to shape the result)."""
    fn = "repeat_interleave"
    check_tensor(fn, "x", x)
    if axis is None:
        x = reshape(x, [-1])
        axis = 0
    a = _axis(fn, axis, len(x.shape))
    if _is_int(repeats):
        r = int(repeats)
        if r < 0:
            raise ValueError(f"{fn}: repeats must be non-negative, got {r}")
        dims = list(x.shape)
        y = unsqueeze(x, [a + 1])
        y = expand(y, [-1 if d < 0 else d for d in dims[: a + 1]] + [r] + [-1 if d < 0 else d for d in dims[a + 1:]])
        n = dims[a]
        new = [max(d, 0) for d in dims[:a]] + [n * r if n >= 0 else -1] + [max(d, 0) for d in dims[a + 1:]]
        return reshape(y, new, name=name)
    check_tensor(fn, "repeats", repeats)
    if not in_dynamic_mode():
        raise NotImplementedError(f"{fn}: tensor repeats are supported in eager mode only")
    counts = np.asarray(repeats.numpy()).reshape(-1)
    if x.shape[a] != counts.size:
        raise ValueError(f"{fn}: repeats has {counts.size} entries but dimension {a} has {x.shape[a]}")
    idx = to_constant(np.repeat(np.arange(counts.size), counts), "int64")
    return apply(pd.GatherOp, [x, idx], prefix="repeat_interleave", name=name, axis=a)


def broadcast_shape(x_shape: Sequence[int], y_shape: Sequence[int]) -> list[int]:
    """`paddle.broadcast_shape`: the broadcast of two shapes."""
    return _broadcast_dims("broadcast_shape", [list(x_shape), list(y_shape)])


def broadcast_tensors(input: Sequence[Any], name: str | None = None) -> list[Any]:
    """`paddle.broadcast_tensors`: every tensor broadcast to their common shape."""
    if not isinstance(input, (list, tuple)) or not input:
        raise TypeError("broadcast_tensors: input must be a non-empty list of tensors")
    for i, t in enumerate(input):
        check_tensor("broadcast_tensors", f"input[{i}]", t)
    dims = _broadcast_dims("broadcast_tensors", [t.shape for t in input])
    return [_expand_to(t, dims) for t in input]


def assign(x: Any, output: Any = None) -> Any:
    """`paddle.assign`: a copy of a tensor (gradients flow through), or a constant from
    a number, list or ndarray."""
    if output is not None:
        raise NotImplementedError("assign: 'output' is not supported")
    if _is_tensor(x):
        return clone(x)
    if isinstance(x, (list, tuple, np.ndarray)) or is_scalar(x) or isinstance(x, bool):
        a = np.asarray(x)
        dt = {"f": "float64" if a.dtype == np.float64 and isinstance(x, np.ndarray) else "float32",
              "i": "int64" if a.dtype.itemsize == 8 else "int32", "u": "int64", "b": "bool",
              "c": "complex128" if a.dtype == np.complex128 and isinstance(x, np.ndarray) else "complex64",
              }[a.dtype.kind]
        return to_constant(a, dt)
    raise TypeError(f"assign: x must be a Tensor, number, list or ndarray, got {type(x).__name__}")


def clone(x: Any, name: str | None = None) -> Any:
    """`paddle.clone` / `Tensor.clone`: a copy that keeps the gradient path."""
    check_tensor("clone", "x", x)
    return apply(pd.ReshapeOp, [x], prefix="assign", name=name, shape=[0] * len(x.shape))


def detach(x: Any, name: str | None = None) -> Any:
    """`Tensor.detach` for static Variables: a copy that carries no gradient
    (eager Tensors have their own `detach`)."""
    out = clone(x, name=name)
    out.stop_gradient = True
    return out


def numel(x: Any, name: str | None = None) -> Any:
    """`paddle.numel`: the number of elements, an int64 0-D tensor (x's shape must be
    static)."""
    check_tensor("numel", "x", x)
    if any(d < 0 for d in x.shape):
        raise ValueError(f"numel: x has a dynamic shape {list(x.shape)}")
    return full([], float(math.prod(x.shape)), dtype="int64", name=name)


def _t(x: Any) -> Any:
    """`Tensor.T`: the dimensions reversed."""
    rank = len(x.shape)
    return x if rank < 2 else transpose(x, list(range(rank))[::-1])


# ------------------------------------------------------------------- x[index]


def _index_int(v: Any) -> int | None:
    """`v` as an int index when it is one (Python/numpy ints, not bools); else None."""
    if _is_int(v):
        return int(v)
    if type(v).__module__ == "numpy" and getattr(v, "ndim", None) == 0 and v.dtype.kind in "iu":
        return int(v)
    return None


def _advanced(it: Any) -> Any | None:
    """An advanced index item as a tensor (int or bool), else None."""
    if _is_tensor(it):
        return it
    if isinstance(it, (list, np.ndarray)) and not (isinstance(it, np.ndarray) and it.ndim == 0):
        a = np.asarray(it)
        if a.dtype.kind == "b":
            return to_constant(a, "bool")
        if a.dtype.kind in "iu" or a.size == 0:
            return to_constant(a.astype(np.int64), "int64")
        raise TypeError(f"__getitem__: list indices must hold ints or bools, got {a.dtype}")
    return None


def _basic(x: Any, items: list[Any], fn: str) -> tuple[list[tuple], list[int], list[int], dict[int, Any]]:
    """Resolve basic indices: the strided slices `(axis, start, end, step)`, the int
    axes to drop, the positions of new (None) dimensions in the result, and the
    advanced indices by input axis."""
    dims = list(x.shape)
    if items.count(Ellipsis) > 1:
        raise IndexError(f"{fn}: an index can only have a single ellipsis ('...')")
    def width(it: Any) -> int:
        # a k-D boolean mask indexes k dimensions; None and ... index none
        if it is None or it is Ellipsis:
            return 0
        if _is_tensor(it) and it.dtype == "bool":
            return builtins.max(len(it.shape), 1)
        return 1

    used = sum(width(it) for it in items)
    if used > len(dims):
        raise IndexError(f"{fn}: too many indices for a {len(dims)}-D tensor: {used} were indexed")
    if Ellipsis in items:
        at = items.index(Ellipsis)
        items[at : at + 1] = [builtins.slice(None)] * (len(dims) - used)
    slices: list[tuple] = []
    dropped: list[int] = []
    new_dims: list[int] = []
    adv: dict[int, Any] = {}
    axis = out_axis = 0
    for it in items:
        if it is None:
            new_dims.append(out_axis)
            out_axis += 1
            continue
        i = _index_int(it)
        if i is not None:
            size = dims[axis]
            if size >= 0 and not -size <= i < size:
                raise IndexError(f"{fn}: index {i} is out of range for dimension {axis} of size {size}")
            slices.append((axis, i, i + 1 if i != -1 else _MAX, 1))
            dropped.append(axis)
            axis += 1
            continue
        if isinstance(it, builtins.slice):
            step = 1 if it.step is None else _index_int(it.step)
            start = it.start if it.start is None else _index_int(it.start)
            stop = it.stop if it.stop is None else _index_int(it.stop)
            if step is None or (it.start is not None and start is None) or (it.stop is not None and stop is None):
                raise TypeError(f"{fn}: slice bounds must be ints or None (and the step a non-zero int), got {it!r}")
            if step == 0:
                raise ValueError(f"{fn}: slice step cannot be zero")
            if start is None:
                start = 0 if step > 0 else -1
            if stop is None:
                stop = _MAX if step > 0 else _MIN
            if (start, stop, step) != (0, _MAX, 1):
                slices.append((axis, start, stop, step))
            axis += 1
            out_axis += 1
            continue
        t = _advanced(it)
        if t is None:
            raise TypeError(f"{fn}: only ints, slices, None, ... and int or bool tensors can index "
                            f"a tensor, got a {type(it).__name__} index")
        adv[axis] = t
        axis += width(t)
        out_axis += 1
    return slices, dropped, new_dims, adv


def _apply_slices(x: Any, slices: list[tuple]) -> Any:
    """`x` sliced by `(axis, start, end, step)` windows: Paddle's `slice` when every
    step is 1 (its open end `_MAX` is also `pd.slice`'s), else `strided_slice`."""
    if not slices:
        return x
    if all(st == 1 for *_, st in slices):
        return pslice(x, [a for a, *_ in slices], [s for _, s, _, _ in slices],
                      [e for _, _, e, _ in slices])
    return apply(pd.StridedSliceOp, [x], prefix="strided_slice", axes=[a for a, *_ in slices],
                 starts=[s for _, s, _, _ in slices], ends=[e for _, _, e, _ in slices],
                 strides=[st for *_, st in slices])


def getitem(x: Any, index: Any) -> Any:
    """`x[index]` (`Tensor.__getitem__`): see the module docstring.  Raises
    IndexError for too many indices or an int out of range of a static dimension."""
    fn = "__getitem__"
    items = list(index) if isinstance(index, tuple) else [index]
    if isinstance(index, bool):
        raise TypeError(f"{fn}: a Python bool cannot index a tensor, got a bool index")
    slices, dropped, new_dims, adv = _basic(x, items, fn)
    out = _apply_slices(x, slices)
    if adv:
        if new_dims:
            raise NotImplementedError(f"{fn}: None together with tensor indices is not supported")
        out = _advanced_index(out, adv, dropped, fn)
    else:
        if dropped:
            out = squeeze(out, dropped)
        if new_dims:
            out = unsqueeze(out, new_dims)
    if out is x:
        # `x[:]`, `x[...]`: Paddle returns a new tensor (sharing the gradient path).
        out = clone(x)
    return out


def _advanced_index(x: Any, adv: dict[int, Any], dropped: list[int], fn: str) -> Any:
    """Apply the advanced indices of `adv` (by axis of x) after the basic slices;
    int-indexed axes `dropped` are removed."""
    axes = sorted(adv)
    tensors = [adv[a] for a in axes]
    if len(tensors) == 1 and tensors[0].dtype == "bool":
        (a,) = axes
        mask = tensors[0]
        if a != 0 or dropped:
            raise NotImplementedError(f"{fn}: a boolean mask must index the leading dimensions")
        k = len(mask.shape)
        if [d for d in x.shape[:k]] != list(mask.shape) and all(d >= 0 for d in x.shape[:k]):
            raise IndexError(f"{fn}: mask of shape {list(mask.shape)} does not match the leading "
                             f"dimensions of x {list(x.shape)}")
        return gather_nd(x, nonzero(mask))
    for t in tensors:
        if t.dtype not in ("int32", "int64"):
            raise TypeError(f"{fn}: tensor indices must be int32/int64 or bool, got {t.dtype}")
    if len(tensors) == 1:
        (a,) = axes
        idx = tensors[0]
        if dropped:
            x = squeeze(x, dropped)
            a -= sum(1 for d in dropped if d < a)
        shape = list(idx.shape)
        flat = idx if len(shape) == 1 else reshape(idx, [-1])
        out = apply(pd.GatherOp, [x, flat], prefix="index_select", axis=a)
        if len(shape) != 1:
            dims = [max(d, 0) for d in out.shape]
            out = reshape(out, dims[:a] + shape + dims[a + 1:])
        return out
    if axes != list(range(len(axes))) or dropped:
        raise NotImplementedError(f"{fn}: several tensor indices must index the leading dimensions")
    dims = _broadcast_dims(fn, [t.shape for t in tensors])
    cols = [unsqueeze(_expand_to(cast(t, "int64"), dims), [-1]) for t in tensors]
    return gather_nd(x, concat(cols, axis=-1))


def setitem(x: Any, index: Any, value: Any) -> None:
    """`x[index] = value` (`Tensor.__setitem__`): write in place (module docstring)."""
    fn = "__setitem__"
    items = list(index) if isinstance(index, tuple) else [index]
    slices, dropped, _, adv = _basic(x, items, fn)  # None adds no written dimension
    if adv:
        if len(adv) == 1 and not dropped and not slices:
            (a, mask), = adv.items()
            if mask.dtype == "bool" and a == 0:
                # `x[mask] = v`: where(mask, v, x) with the mask over leading dims
                k = len(mask.shape)
                m = reshape(mask, list(mask.shape) + [1] * (len(x.shape) - k)) if k < len(x.shape) else mask
                v = full_like(x, float(value)) if is_scalar(value) else value
                _rebind(x, where(_expand_to(m, list(x.shape)), v, x))
                return
        raise NotImplementedError(f"{fn}: tensor indices are supported only as one leading boolean mask")
    full_slices = []
    for axis in range(len(x.shape)):
        got = [s for s in slices if s[0] == axis]
        full_slices.append(got[0] if got else (axis, 0, _MAX, 1))
    props = {"axes": [s[0] for s in full_slices], "starts": [s[1] for s in full_slices],
             "ends": [s[2] for s in full_slices], "strides": [s[3] for s in full_slices]}
    target = pd.strided_shape("pd.set_value", [pd.DYN if d < 0 else d for d in x.shape], **props)
    target = [d if d >= 0 else -1 for d in target]
    # value broadcasts to the slice with the int-indexed dimensions dropped
    kept = [d for i, d in enumerate(target) if i not in dropped]
    if is_scalar(value) or isinstance(value, bool):
        if all(d >= 0 for d in kept):
            value = full(kept, float(value), dtype=x.dtype)
        else:
            piece = apply(pd.StridedSliceOp, [x], prefix="strided_slice", **props)
            value = full_like(squeeze(piece, dropped) if dropped else piece, float(value))
    elif isinstance(value, (list, np.ndarray)):
        value = to_constant(value, x.dtype)
    else:
        check_tensor(fn, "value", value)
    if value.dtype != x.dtype:
        value = cast(value, x.dtype)
    if list(value.shape) != kept:
        value = _expand_to(value, kept)
    if dropped:
        value = unsqueeze(value, dropped)
    _rebind(x, apply(pd.SetValueOp, [x, value], prefix="set_value", **props))


def _rebind(x: Any, new: Any, fn: str = "__setitem__") -> None:
    """Make `x` hold `new`'s value in place (its gradient history included); `fn`
    names the in-place operation in the error for a leaf that requires grad."""
    if in_dynamic_mode():
        if x._node is None and not x.stop_gradient:
            raise ValueError(
                f"{fn}: Leaf Tensor ({x.name}) that doesn't stop gradient can't use "
                "inplace strategy.")
        x._data, x._node, x._index, x.stop_gradient = new._data, new._node, new._index, new.stop_gradient
        return
    name = x.name
    x.value = new.value
    x.block._vars[new.value] = x
    pd.set_result_names(new.value.owner, [name])


PADDLE: list[Callable[..., Any]] = [
    gather, index_select, index_add, gather_nd, scatter_nd_add, scatter_nd, scatter,
    take_along_axis, put_along_axis, nonzero, masked_select, masked_fill, tril, triu, diag,
    strided_slice, flip, roll, stack, unstack, chunk, tile, repeat_interleave, broadcast_shape,
    broadcast_tensors, assign, clone, numel,
]
FUNCTIONAL: list[Callable[..., Any]] = []
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {
    "gather": gather, "gather_nd": gather_nd, "scatter": scatter, "scatter_nd_add": scatter_nd_add,
    "scatter_nd": scatter_nd, "stack": stack, "unstack": unstack, "flip": flip, "roll": roll,
    "strided_slice": strided_slice, "assign": assign, "where": nonzero, "masked_select": masked_select,
    "diag": diag, "triu": triu, "tril": tril,
}
TENSOR_METHODS: dict[str, Any] = {
    "__getitem__": getitem, "__setitem__": setitem,
    "gather": gather, "index_select": index_select, "index_add": index_add, "gather_nd": gather_nd,
    "scatter": scatter, "scatter_nd_add": scatter_nd_add, "take_along_axis": take_along_axis,
    "put_along_axis": put_along_axis, "nonzero": nonzero, "masked_select": masked_select,
    "masked_fill": masked_fill, "tril": tril, "triu": triu, "diag": diag, "flip": flip,
    "roll": roll, "unstack": unstack, "chunk": chunk, "tile": tile,
    "repeat_interleave": repeat_interleave, "clone": clone, "numel": numel, "stack": stack,
    "strided_slice": strided_slice, "T": property(_t), "detach": detach,
}
