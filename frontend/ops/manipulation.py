"""Paddle's tensor-manipulation functions beyond the shape family: axis moves
(`moveaxis`, `swapaxes`, `t`), `unbind`, `diagonal`/`trace`, `meshgrid`, `rot90`,
the `tensor_split` family, `unflatten`, `diff`, `take`, `multiplex`, `vander`, index
constants (`tril_indices`, `triu_indices`) and the shape queries (`shape`, `rank`).

Each is a composite of existing `pd` ops (transpose, reshape, strided slices, concat,
gather, where), so gradients, static mode and the compiled backend come from those
ops' rules.  `diagonal` reads the diagonal of the two chosen axes as a strided slice of
their flattened product (element `(i, i + offset)` is at `i * (m + 1) + offset`), which
needs those two dimensions to be static.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pullback.frontend.core import in_dynamic_mode
from pullback.frontend.ops.elementwise import (
    cast,
    check_tensor,
    constant_like,
    full,
    full_like,
    less_than,
    multiply,
    not_equal,
    ones_like,
    subtract,
    where,
)
from pullback.frontend.ops.elementwise import clip as clip_
from pullback.frontend.ops.indexing import (
    flip,
    gather,
    stack,
    strided_slice,
    take_along_axis,
    to_constant,
    unstack,
)
from pullback.frontend.ops.math import remainder
from pullback.frontend.ops.reduction import sum as reduce_sum
from pullback.frontend.ops.shape import concat, expand, flatten, reshape, squeeze, transpose


def _int(fn: str, arg: str, v: Any) -> int:
    """One int argument (numpy ints accepted, bools not)."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{fn}: '{arg}' must be an int, got {type(v).__name__}")
    return int(v)


def _axis(fn: str, arg: str, v: Any, rank: int) -> int:
    """An axis argument mapped into `[0, rank)`."""
    a = _int(fn, arg, v)
    if not -rank <= a < builtins.max(rank, 1):
        raise ValueError(f"{fn}: {arg} {a} is out of range for a {rank}-D input")
    return a % builtins.max(rank, 1)


def _static_dim(fn: str, x: Any, axis: int) -> int:
    n = x.shape[axis]
    if n < 0:
        raise ValueError(f"{fn}: dimension {axis} of x (shape {list(x.shape)}) must be static")
    return int(n)


# ------------------------------------------------------------------ axis moves


def moveaxis(x: Any, source: Any, destination: Any, name: str | None = None) -> Any:
    """`paddle.moveaxis`: move the axes `source` to the positions `destination`
    (ints or equally long lists), the other axes keeping their order."""
    check_tensor("moveaxis", "x", x)
    rank = len(x.shape)
    src = list(source) if isinstance(source, (list, tuple)) else [source]
    dst = list(destination) if isinstance(destination, (list, tuple)) else [destination]
    if len(src) != len(dst):
        raise ValueError(
            f"moveaxis: source ({src}) and destination ({dst}) must have the same number of axes")
    s = [_axis("moveaxis", "source", a, rank) for a in src]
    d = [_axis("moveaxis", "destination", a, rank) for a in dst]
    if len(set(s)) != len(s) or len(set(d)) != len(d):
        raise ValueError(f"moveaxis: repeated axis in source {src} or destination {dst}")
    rest = [a for a in range(rank) if a not in s]
    perm: list[int] = [-1] * rank
    for a, b in zip(s, d):
        perm[b] = a
    it = iter(rest)
    perm = [p if p >= 0 else next(it) for p in perm]
    return transpose(x, perm, name=name)


def swapaxes(x: Any, axis0: int, axis1: int, name: str | None = None) -> Any:
    """`paddle.swapaxes` (also `swapdims`): exchange two axes."""
    check_tensor("swapaxes", "x", x)
    rank = len(x.shape)
    a, b = _axis("swapaxes", "axis0", axis0, rank), _axis("swapaxes", "axis1", axis1, rank)
    perm = list(range(rank))
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm, name=name)


def swapdims(x: Any, dim0: int, dim1: int, name: str | None = None) -> Any:
    """`paddle.swapdims`: the same as `swapaxes`."""
    return swapaxes(x, dim0, dim1, name=name)


def t(input: Any, name: str | None = None) -> Any:  # noqa: A002 (Paddle's name)
    """`paddle.t`: the transpose of a 2-D tensor (0-D and 1-D tensors unchanged)."""
    check_tensor("t", "input", input)
    rank = len(input.shape)
    if rank > 2:
        raise ValueError(
            f"t: Input(input) only support N-D (N<=2) tensor, but received length of "
            f"Input(input) is {rank}. Perhaps you can use paddle.tensor.transpose() instead.")
    return input if rank < 2 else transpose(input, [1, 0], name=name)


def unbind(input: Any, axis: int = 0) -> list[Any]:  # noqa: A002 (Paddle's name)
    """`paddle.unbind`: the slices of `input` along `axis` (that axis removed)."""
    check_tensor("unbind", "input", input)
    return unstack(input, _int("unbind", "axis", axis))


def unflatten(x: Any, axis: int, shape: Sequence[int], name: str | None = None) -> Any:
    """`paddle.unflatten`: split dimension `axis` into `shape` (one entry may be -1)."""
    check_tensor("unflatten", "x", x)
    rank = len(x.shape)
    a = _axis("unflatten", "axis", axis, rank)
    if not isinstance(shape, (list, tuple)) or not shape:
        raise TypeError(f"unflatten: shape must be a non-empty list or tuple, got {shape!r}")
    dims = [_int("unflatten", "shape", d) for d in shape]
    n = x.shape[a]
    known = math.prod(d for d in dims if d != -1)
    if dims.count(-1) > 1:
        raise ValueError(f"unflatten: at most one -1 in shape, got {dims}")
    if n >= 0:
        if -1 in dims:
            if known == 0 or n % known:
                raise ValueError(f"unflatten: shape {dims} cannot split dimension {a} of size {n}")
            dims[dims.index(-1)] = n // known
        elif known != n:
            raise ValueError(f"unflatten: shape {dims} does not multiply to dimension {a} of size {n}")
    # Leading dimensions keep their (possibly dynamic) size through reshape's `0`
    # (which copies the input dimension at the same index); trailing ones are given.
    tail = list(x.shape[a + 1:])
    if builtins.sum(d < 0 for d in tail) + (-1 in dims) > 1:
        raise ValueError(f"unflatten: x of shape {list(x.shape)} has too many dynamic dimensions")
    target = [0] * a + dims + tail
    return reshape(x, target, name=name)


# ------------------------------------------------------------------- diagonals


def diagonal(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, name: str | None = None) -> Any:
    """`paddle.diagonal`: the diagonal of the `axis1`/`axis2` planes (above the main
    one for `offset > 0`), as the last dimension of the result."""
    check_tensor("diagonal", "x", x)
    rank = len(x.shape)
    if rank < 2:
        raise ValueError(f"diagonal: x must be at least 2-D, got shape {list(x.shape)}")
    a1, a2 = _axis("diagonal", "axis1", axis1, rank), _axis("diagonal", "axis2", axis2, rank)
    if a1 == a2:
        raise ValueError(f"diagonal: axis1 ({axis1}) and axis2 ({axis2}) must differ")
    k = _int("diagonal", "offset", offset)
    n, m = _static_dim("diagonal", x, a1), _static_dim("diagonal", x, a2)
    rest = [d for d in range(rank) if d not in (a1, a2)]
    moved = transpose(x, [*rest, a1, a2]) if [*rest, a1, a2] != list(range(rank)) else x
    length = builtins.max(0, builtins.min(n, m - k) if k >= 0 else builtins.min(n + k, m))
    flat = reshape(moved, [0] * len(rest) + [n * m])
    start = k if k >= 0 else -k * m
    if length == 0:
        return strided_slice(flat, [len(rest)], [0], [0], [1], name=name)
    return strided_slice(flat, [len(rest)], [start], [start + (length - 1) * (m + 1) + 1],
                         [m + 1], name=name)


def trace(x: Any, offset: int = 0, axis1: int = 0, axis2: int = 1, name: str | None = None) -> Any:
    """`paddle.trace`: the sum of `diagonal(x, offset, axis1, axis2)`."""
    return reduce_sum(diagonal(x, offset, axis1, axis2), axis=-1, name=name)


def diag_embed(input: Any, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Any:  # noqa: A002
    """`paddle.diag_embed`: matrices (in result dimensions `dim1`, `dim2`) whose
    diagonal `offset` holds the last dimension of `input`, zeros elsewhere.  Built
    without multiplying by zero (so inf/NaN stay on the diagonal): a row of n values
    followed by n zeros, reshaped, puts value i at (i, i)."""
    check_tensor("diag_embed", "input", input)
    rank = len(input.shape)
    if rank < 1:
        raise ValueError("diag_embed: input must be at least 1-D")
    k = _int("diag_embed", "offset", offset)
    d1, d2 = _axis("diag_embed", "dim1", dim1, rank + 1), _axis("diag_embed", "dim2", dim2, rank + 1)
    if d1 == d2:
        raise ValueError(f"diag_embed: dim1 ({dim1}) and dim2 ({dim2}) must differ")
    n = _static_dim("diag_embed", input, rank - 1)
    lead = list(input.shape[:-1])
    m = n + builtins.abs(k)
    x = input
    if m != n:  # pad the values to length m with zeros
        x = concat([x, zeros_of(x, [m - n])], axis=rank - 1)
    col = unsqueeze_last(x)  # [..., m, 1]
    grid = concat([col, zeros_of(x, [m, m])], axis=rank)  # [..., m, m + 1]
    flat = reshape(grid, [0] * len(lead) + [m * (m + 1)])
    square = reshape(strided_slice(flat, [rank - 1], [0], [m * m], [1]), [0] * len(lead) + [m, m])
    if k > 0:  # shift right: (i, i) -> (i, i + k)
        square = strided_slice(concat([zeros_of(x, [m, k]), square], axis=rank), [rank], [0], [m], [1])
    elif k < 0:  # shift down: (i, i) -> (i - k, i)
        square = strided_slice(concat([zeros_of(x, [-k, m]), square], axis=rank - 1),
                               [rank - 1], [0], [m], [1])
    # the matrix dimensions are last; move them to dim1, dim2
    return moveaxis(square, [rank - 1, rank], [d1, d2])


def zeros_of(x: Any, tail: list[int]) -> Any:
    """Zeros of x's dtype shaped `[*lead, *tail]` for x of shape `[*lead, n]` (its
    leading dimensions may be dynamic)."""
    r = len(x.shape)
    base = full_like(strided_slice(x, [r - 1], [0], [1], [1]), 0.0)  # [*lead, 1]
    base = reshape(base, [0] * (r - 1) + [1] * len(tail))
    return expand(base, [-1] * (r - 1) + list(tail))


def unsqueeze_last(x: Any) -> Any:
    """x with a new trailing dimension of size 1."""
    return reshape(x, [0] * len(x.shape) + [1])


# ------------------------------------------------------------------ generation


def meshgrid(*args: Any, **kwargs: Any) -> list[Any]:
    """`paddle.meshgrid(x1, x2, ...)` (or a list): N-D grids from N 1-D (or 0-D)
    tensors, `indexing='ij'` (Paddle's only layout; `'xy'` swaps the first two)."""
    indexing = kwargs.pop("indexing", "ij")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"meshgrid: unexpected arguments {sorted(kwargs)}")
    xs = list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)
    if not xs:
        raise ValueError("meshgrid: at least one tensor is required")
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    for i, v in enumerate(xs):
        check_tensor("meshgrid", f"args[{i}]", v)
        if len(v.shape) > 1:
            raise ValueError(f"meshgrid: each input must be 0-D or 1-D, got shape {list(v.shape)} at {i}")
    swap = indexing == "xy" and len(xs) > 1
    order = [1, 0, *range(2, len(xs))] if swap else list(range(len(xs)))
    sizes = [int(math.prod(xs[i].shape)) if xs[i].shape else 1 for i in order]
    out = []
    for i, v in enumerate(xs):
        pos = order.index(i)
        shaped = reshape(v, [sizes[pos] if j == pos else 1 for j in range(len(xs))])
        out.append(expand(shaped, sizes))
    return out


def _index_constant(rows: list[int], cols: list[int], dtype: Any) -> Any:
    return to_constant(np.array([rows, cols], dtype=np.int64).reshape(2, -1), dtype)


def tril_indices(row: int, col: int, offset: int = 0, dtype: Any = "int64") -> Any:
    """`paddle.tril_indices`: the `[2, N]` coordinates of the lower triangle (below
    diagonal `offset`) of a `row x col` matrix, row by row."""
    r, c = np.tril_indices(_int("tril_indices", "row", row), _int("tril_indices", "offset", offset),
                           _int("tril_indices", "col", col))
    return _index_constant(r.tolist(), c.tolist(), dtype)


def triu_indices(row: int, col: int | None = None, offset: int = 0, dtype: Any = "int64") -> Any:
    """`paddle.triu_indices`: the `[2, N]` coordinates of the upper triangle (from
    diagonal `offset`) of a `row x col` matrix (`col` defaults to `row`)."""
    n = _int("triu_indices", "row", row)
    m = n if col is None else _int("triu_indices", "col", col)
    r, c = np.triu_indices(n, _int("triu_indices", "offset", offset), m)
    return _index_constant(r.tolist(), c.tolist(), dtype)


def vander(x: Any, n: int | None = None, increasing: bool = False, name: str | None = None) -> Any:
    """`paddle.vander`: the Vandermonde matrix of a 1-D x, columns `x**(n-1) ... x**0`
    (`x**0 ... x**(n-1)` when `increasing`), n defaulting to len(x)."""
    check_tensor("vander", "x", x)
    if len(x.shape) != 1:
        raise ValueError(f"vander: x must be 1-D, got shape {list(x.shape)}")
    cols = _static_dim("vander", x, 0) if n is None else _int("vander", "n", n)
    if cols < 0:
        raise ValueError(f"vander: n must be non-negative, got {cols}")
    powers = [ones_like(x)]
    for _ in range(1, cols):
        powers.append(multiply(powers[-1], x))
    if not cols:
        return reshape(stack([x], axis=1), [-1, 0])
    powers = powers if increasing else powers[::-1]
    return stack(powers, axis=1, name=name)


# ------------------------------------------------------------------ splitting


def tensor_split(x: Any, num_or_indices: Any, axis: int = 0, name: str | None = None) -> list[Any]:
    """`paddle.tensor_split`: split x along `axis` into `num_or_indices` parts (an
    int: the first `n % parts` one longer) or at the given indices (a list)."""
    check_tensor("tensor_split", "x", x)
    rank = len(x.shape)
    a = _axis("tensor_split", "axis", axis, rank)
    n = _static_dim("tensor_split", x, a)
    if isinstance(num_or_indices, (list, tuple)):
        cuts = [_int("tensor_split", "num_or_indices", i) for i in num_or_indices]
        cuts = [builtins.min(builtins.max(c + n if c < 0 else c, 0), n) for c in cuts]
        bounds = list(zip([0, *cuts], [*cuts, n]))
    else:
        parts = _int("tensor_split", "num_or_indices", num_or_indices)
        if parts <= 0:
            raise ValueError(f"tensor_split: num_or_indices must be positive, got {parts}")
        size, extra = divmod(n, parts)
        lengths = [size + 1] * extra + [size] * (parts - extra)
        starts = [builtins.sum(lengths[:i]) for i in range(parts)]
        bounds = [(s, s + length) for s, length in zip(starts, lengths)]
    return [strided_slice(x, [a], [s], [builtins.max(s, e)], [1]) for s, e in bounds]


def _split_dim(fn: str, x: Any, num_or_indices: Any, axis: int, min_rank: int) -> list[Any]:
    check_tensor(fn, "x", x)
    if len(x.shape) < min_rank:
        raise ValueError(
            f"{fn}: x must be at least {min_rank}-D, got shape {list(x.shape)}")
    return tensor_split(x, num_or_indices, axis=axis)


def hsplit(x: Any, num_or_indices: Any, name: str | None = None) -> list[Any]:
    """`paddle.hsplit`: `tensor_split` along axis 1 (axis 0 for a 1-D x)."""
    check_tensor("hsplit", "x", x)
    return _split_dim("hsplit", x, num_or_indices, 1 if len(x.shape) > 1 else 0, 1)


def vsplit(x: Any, num_or_indices: Any, name: str | None = None) -> list[Any]:
    """`paddle.vsplit`: `tensor_split` along axis 0 of an at least 2-D x."""
    return _split_dim("vsplit", x, num_or_indices, 0, 2)


def dsplit(x: Any, num_or_indices: Any, name: str | None = None) -> list[Any]:
    """`paddle.dsplit`: `tensor_split` along axis 2 of an at least 3-D x."""
    return _split_dim("dsplit", x, num_or_indices, 2, 3)


# -------------------------------------------------------------------- misc


def rot90(x: Any, k: int = 1, axes: Sequence[int] = (0, 1), name: str | None = None) -> Any:
    """`paddle.rot90`: rotate by 90 degrees `k` times in the plane of `axes` (from
    the first axis toward the second)."""
    check_tensor("rot90", "x", x)
    rank = len(x.shape)
    if rank < 2:
        raise ValueError(f"rot90: x must be at least 2-D, got shape {list(x.shape)}")
    if not isinstance(axes, (list, tuple)) or len(axes) != 2:
        raise ValueError(f"rot90: axes must be a list of 2 ints, got {axes!r}")
    a0, a1 = (_axis("rot90", "axes", a, rank) for a in axes)
    if a0 == a1:
        raise ValueError(f"rot90: axes must be different, got {list(axes)}")
    turns = _int("rot90", "k", k) % 4
    if turns == 0:
        return x
    if turns == 2:
        return flip(x, [a0, a1], name=name)
    perm = list(range(rank))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if turns == 1:
        return transpose(flip(x, [a1]), perm, name=name)
    return flip(transpose(x, perm), [a1], name=name)


def diff(x: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None,
         name: str | None = None) -> Any:
    """`paddle.diff`: the n-th forward difference along `axis`, after joining
    `prepend`/`append` (bool tensors: `x[i+1] != x[i]`)."""
    check_tensor("diff", "x", x)
    rank = len(x.shape)
    a = _axis("diff", "axis", axis, rank)
    times = _int("diff", "n", n)
    if times < 0:
        raise ValueError(f"diff: order n must be non-negative, got {times}")
    parts = [p for p in (prepend, x, append) if p is not None]
    out = concat(parts, axis=a) if len(parts) > 1 else x
    for _ in range(times):
        size = _static_dim("diff", out, a)
        if size <= 1:
            return strided_slice(out, [a], [0], [0], [1])
        hi = strided_slice(out, [a], [1], [size], [1])
        lo = strided_slice(out, [a], [0], [size - 1], [1])
        out = not_equal(hi, lo) if out.dtype == "bool" else subtract(hi, lo)
    return out


def take(x: Any, index: Any, mode: str = "raise", name: str | None = None) -> Any:
    """`paddle.take`: the elements of the flattened x at `index` (shaped like index);
    negative indices count from the end; `mode='wrap'` wraps, `'clip'` clamps."""
    check_tensor("take", "x", x)
    check_tensor("take", "index", index)
    if mode not in ("raise", "wrap", "clip"):
        raise ValueError(f"take: mode must be one of 'raise', 'wrap', 'clip', got {mode!r}")
    if index.dtype not in ("int32", "int64"):
        raise TypeError(f"take: index must be int32 or int64, got {index.dtype}")
    total = math.prod(x.shape)
    if total < 0:
        raise ValueError(f"take: x must have a static shape, got {list(x.shape)}")
    flat_x = flatten(x) if len(x.shape) != 1 else x
    idx = cast(index, "int64") if index.dtype != "int64" else index
    flat_i = flatten(idx) if len(idx.shape) != 1 else idx
    if mode == "wrap":
        flat_i = remainder(flat_i, total)
    elif mode == "clip":
        flat_i = cast(clip_(cast(flat_i, "float64"), 0, total - 1), "int64")
    else:
        if in_dynamic_mode():
            vals = flat_i.numpy()
            if vals.size and (vals.min() < -total or vals.max() >= total):
                raise IndexError(
                    f"take: index out of range [{-total}, {total}) for x of {total} elements")
        flat_i = where(less_than(flat_i, constant_like(flat_i, 0)),
                       flat_i + total, flat_i)
    out = gather(flat_x, flat_i)
    return reshape(out, list(index.shape) if index.shape else [], name=name)


def multiplex(inputs: Sequence[Any], index: Any, name: str | None = None) -> Any:
    """`paddle.multiplex`: row i of the result is row i of `inputs[index[i]]`
    (index an int `[N, 1]` tensor)."""
    if not isinstance(inputs, (list, tuple)) or len(inputs) < 2:
        raise ValueError("multiplex: inputs must be a list of at least 2 tensors")
    check_tensor("multiplex", "index", index)
    stacked = stack(list(inputs), axis=1)  # [N, k, ...]
    rank = len(stacked.shape)
    idx = reshape(cast(index, "int64"), [-1] + [1] * (rank - 1))
    idx = expand(idx, [stacked.shape[0], 1, *stacked.shape[2:]])
    return squeeze(take_along_axis(stacked, idx, axis=1), [1], name=name)


def shape(input: Any) -> Any:  # noqa: A002 (Paddle's name)
    """`paddle.shape`: the shape of `input` as a 1-D int32 tensor (static dimensions
    only: pullback has no shape-reading op)."""
    check_tensor("shape", "input", input)
    dims = list(input.shape)
    if builtins.any(d < 0 for d in dims):
        raise ValueError(f"shape: input has dynamic dimensions {dims}; only static shapes are supported")
    return to_constant(np.array(dims, dtype=np.int64), "int32")


def rank(input: Any) -> Any:  # noqa: A002 (Paddle's name)
    """`paddle.rank`: the number of dimensions as a 0-D int32 tensor."""
    check_tensor("rank", "input", input)
    return full([], float(len(input.shape)), dtype="int32")


def tolist(x: Any) -> Any:
    """`paddle.tolist`: the value of an eager Tensor as nested Python lists."""
    check_tensor("tolist", "x", x)
    if not in_dynamic_mode():
        raise TypeError("tolist: only eager Tensors have a value; a static Variable has none "
                        "until an Executor runs the program")
    return x.numpy().tolist()


_ALL: list[Callable[..., Any]] = [
    moveaxis, swapaxes, swapdims, t, unbind, unflatten, diagonal, diag_embed, trace, meshgrid, tril_indices,
    triu_indices, vander, tensor_split, hsplit, vsplit, dsplit, rot90, diff, take, multiplex,
    shape, rank, tolist,
]

PADDLE: list[Callable[..., Any]] = list(_ALL)
FUNCTIONAL: list[Callable[..., Any]] = []
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {"multiplex": multiplex, "rank": rank}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    f.__name__: f for f in _ALL
    if f not in (meshgrid, tril_indices, triu_indices, shape, rank, multiplex, tolist)
}
