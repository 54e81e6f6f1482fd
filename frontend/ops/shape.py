"""Paddle's shape API: reshape, transpose, concat, split, slice, squeeze/unsqueeze,
expand/broadcast_to/expand_as, flatten and constant padding, in the 2.x spellings
and the `fluid.layers` ones.

Shape-like arguments must be Python (or numpy) ints: Paddle's tensor-valued shapes,
starts and ends are not supported.  Shape mismatches are found by the ops' typing
rules and come back from `apply` as ValueError.

`F.pad` takes Paddle's two forms: with `mode='constant'`, `2 * ndim` paddings cover
every dimension, first dimension first (`[before_0, after_0, ...]`); otherwise (and
for the `reflect`, `replicate` and `circular` modes) a 3-D, 4-D or 5-D input takes
`2 * (ndim - 2)` paddings for its spatial dimensions, last one first (`[left,
right, top, bottom, front, back]`), located by `data_format` (`NCL`/`NLC`,
`NCHW`/`NHWC`, `NCDHW`/`NDHWC`).

`fluid.layers.expand(x, expand_times)` keeps its Paddle 1.x meaning, tiling (it is
built from concats, so its gradient sums the copies); 2.x's `paddle.expand` broadcasts.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

from pullback.dialects import pd
from pullback.frontend.core import apply
from pullback.frontend.ops.elementwise import _activate, check_tensor, is_scalar

Ints = int | Sequence[int]

# --------------------------------------------------------------------- helpers


def _int(fn: str, arg: str, v: Any) -> int:
    """One int argument (numpy ints accepted, bools and tensors not)."""
    if isinstance(v, bool):
        raise TypeError(f"{fn}: '{arg}' must be an int, got a bool")
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{fn}: '{arg}' must be an int, got {type(v).__name__}") from None


def _ints(fn: str, arg: str, v: Any, *, scalar_ok: bool = False) -> list[int]:
    """A list/tuple of ints (or one int when `scalar_ok`) as a list."""
    if scalar_ok and not isinstance(v, (list, tuple)):
        return [_int(fn, arg, v)]
    if not isinstance(v, (list, tuple)):
        raise TypeError(
            f"{fn}: '{arg}' must be a list or tuple of ints, got {type(v).__name__}"
            " (tensor-valued arguments are not supported)"
        )
    return [_int(fn, f"{arg}[{i}]", e) for i, e in enumerate(v)]


def _tensors(fn: str, arg: str, xs: Any) -> list[Any]:
    """A non-empty list/tuple of Variables/Tensors."""
    if not isinstance(xs, (list, tuple)):
        raise TypeError(f"{fn}: '{arg}' must be a list or tuple of tensors, got {type(xs).__name__}")
    if not xs:
        raise ValueError(f"{fn}: '{arg}' must not be empty")
    for i, x in enumerate(xs):
        check_tensor(fn, f"{arg}[{i}]", x)
    return list(xs)


def _axis_in(fn: str, arg: str, axis: int, rank: int) -> int:
    """`axis` mapped into `[0, rank)`; ValueError when out of range."""
    if not -rank <= axis < rank:
        raise ValueError(f"{fn}: {arg} {axis} is out of range for a {rank}-D input")
    return axis % rank


def _prod_or_dyn(dims: Sequence[int]) -> int:
    """The product of static dimensions, or -1 when one of them is dynamic."""
    return -1 if any(d < 0 for d in dims) else math.prod(dims)


def _reshape_to(fn: str, x: Any, shape: list[int], name: str | None) -> Any:
    """A `pd.reshape` built by a composite API (`flatten`), named after it."""
    if shape.count(-1) > 1:
        raise ValueError(
            f"{fn}: cannot express the result shape of a {list(x.shape)} input with one "
            "reshape: more than one merged dimension is dynamic"
        )
    return apply(pd.ReshapeOp, [x], prefix=fn, name=name, shape=shape)


# ----------------------------------------------------------------------- 2.x API


def reshape(x: Any, shape: Sequence[int], name: str | None = None) -> Any:
    """`paddle.reshape`: `0` copies the input dimension at that index, one `-1` is
    inferred from the element count."""
    check_tensor("reshape", "x", x)
    return apply(pd.ReshapeOp, [x], prefix="reshape2", name=name, op_type="reshape2",
                 shape=_ints("reshape", "shape", shape))


def transpose(x: Any, perm: Sequence[int], name: str | None = None) -> Any:
    """`paddle.transpose`: result dimension i is input dimension `perm[i]`."""
    check_tensor("transpose", "x", x)
    return apply(pd.TransposeOp, [x], prefix="transpose", name=name, op_type="transpose2",
                 perm=_ints("transpose", "perm", perm))


def concat(x: Sequence[Any], axis: int = 0, name: str | None = None) -> Any:
    """`paddle.concat`: join a list of tensors along `axis`."""
    xs = _tensors("concat", "x", x)
    return apply(pd.ConcatOp, xs, prefix="concat", name=name, axis=_int("concat", "axis", axis))


def split(x: Any, num_or_sections: Ints, axis: int = 0, name: str | None = None) -> list[Any]:
    """`paddle.split`: a list of `num_or_sections` equal pieces (an int), or of pieces
    of the given sizes (a list; one may be -1, the rest)."""
    check_tensor("split", "x", x)
    props: dict[str, Any] = {"axis": _int("split", "axis", axis)}
    if isinstance(num_or_sections, (list, tuple)):
        props["sections"] = _ints("split", "num_or_sections", num_or_sections)
        if not props["sections"]:
            raise ValueError("split: num_or_sections must not be an empty list")
    else:
        props["num"] = _int("split", "num_or_sections", num_or_sections)
        if props["num"] <= 0:
            raise ValueError(f"split: num_or_sections must be positive, got {props['num']}")
    out = apply(pd.SplitOp, [x], prefix="split", name=name, **props)
    return out if isinstance(out, list) else [out]


def slice(input: Any, axes: Sequence[int], starts: Sequence[int], ends: Sequence[int]) -> Any:
    """`paddle.slice`: `[starts[i], ends[i])` along `axes[i]`; negative indices count
    from the end and out-of-range ones are clamped."""
    check_tensor("slice", "input", input)
    args = {k: _ints("slice", k, v) for k, v in (("axes", axes), ("starts", starts), ("ends", ends))}
    if not len(args["axes"]) == len(args["starts"]) == len(args["ends"]):
        raise ValueError(
            f"slice: axes, starts and ends must have one length, got {len(args['axes'])}, "
            f"{len(args['starts'])} and {len(args['ends'])}"
        )
    return apply(pd.SliceOp, [input], prefix="slice", **args)


def squeeze(x: Any, axis: Ints | None = None, name: str | None = None) -> Any:
    """`paddle.squeeze`: drop size-1 dimensions (those of `axis` only, when given;
    a listed dimension of another size stays, as in Paddle)."""
    check_tensor("squeeze", "x", x)
    axes = [] if axis is None else _ints("squeeze", "axis", axis, scalar_ok=True)
    return apply(pd.SqueezeOp, [x], prefix="squeeze", name=name, op_type="squeeze2", axes=axes)


def unsqueeze(x: Any, axis: Ints, name: str | None = None) -> Any:
    """`paddle.unsqueeze`: insert size-1 dimensions at `axis`, one after the other."""
    check_tensor("unsqueeze", "x", x)
    return apply(pd.UnsqueezeOp, [x], prefix="unsqueeze2", name=name, op_type="unsqueeze2",
                 axes=_ints("unsqueeze", "axis", axis, scalar_ok=True))


def expand(x: Any, shape: Sequence[int], name: str | None = None) -> Any:
    """`paddle.expand`: broadcast to `shape` (-1 keeps a dimension; only size-1
    dimensions expand, new ones are prepended)."""
    check_tensor("expand", "x", x)
    return apply(pd.ExpandOp, [x], prefix="expand", name=name, op_type="expand_v2",
                 shape=_ints("expand", "shape", shape))


def broadcast_to(x: Any, shape: Sequence[int], name: str | None = None) -> Any:
    """`paddle.broadcast_to`: the same op as `paddle.expand`."""
    return expand(x, shape, name=name)


def expand_as(x: Any, y: Any, name: str | None = None) -> Any:
    """`paddle.expand_as`: broadcast x to y's run-time shape (y's values are unused)."""
    check_tensor("expand_as", "x", x)
    check_tensor("expand_as", "y", y)
    return apply(pd.ExpandAsOp, [x, y], prefix="expand_as", name=name, op_type="expand_as_v2")


def flatten(x: Any, start_axis: int = 0, stop_axis: int = -1, name: str | None = None) -> Any:
    """`paddle.flatten`: merge dimensions `start_axis..stop_axis` into one, as a
    `pd.reshape` (leading dimensions copied with 0, the merged one static when its
    parts are).  A 0-D input gives shape [1]."""
    check_tensor("flatten", "x", x)
    start, stop = _int("flatten", "start_axis", start_axis), _int("flatten", "stop_axis", stop_axis)
    dims = list(x.shape)
    if not dims:
        return _reshape_to("flatten", x, [1], name)
    start, stop = (_axis_in("flatten", a, v, len(dims)) for a, v in (("start_axis", start), ("stop_axis", stop)))
    if start > stop:
        raise ValueError(f"flatten: start_axis {start_axis} must not come after stop_axis {stop_axis}")
    # Dimensions after the merged ones keep their index only if nothing merged.
    tail = [0] * (len(dims) - stop - 1) if start == stop else dims[stop + 1 :]
    return _reshape_to("flatten", x, [0] * start + [_prod_or_dyn(dims[start : stop + 1])] + tail, name)


_PAD_FORMATS = {3: ("NCL", "NLC"), 4: ("NCHW", "NHWC"), 5: ("NCDHW", "NDHWC")}


PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad(x: Any, pad: Sequence[int], mode: str = "constant", value: float = 0.0,
        data_format: str = "NCHW", name: str | None = None) -> Any:
    """`paddle.nn.functional.pad` (see the module docstring for the forms of `pad`).
    `mode='constant'` fills with `value` (one `pd.pad`); `'reflect'` mirrors without
    repeating the edge, `'replicate'` repeats the edge, `'circular'` wraps around,
    each built from slices and a concat per padded axis (so gradients sum back)."""
    check_tensor("pad", "x", x)
    if mode not in PAD_MODES:
        raise ValueError(f"pad: mode must be one of {list(PAD_MODES)}, got {mode!r}")
    if not is_scalar(value):
        raise TypeError(f"pad: 'value' must be a number, got {type(value).__name__}")
    amounts, rank = _ints("pad", "pad", pad), len(x.shape)
    if len(amounts) == 2 * rank and mode == "constant":
        paddings = amounts
    else:
        formats = _PAD_FORMATS.get(rank)
        if formats is None or len(amounts) != 2 * (rank - 2):
            whole = f"{2 * rank} paddings or " if mode == "constant" else ""
            raise ValueError(
                f"pad: a {rank}-D input takes {whole}"
                + (f"{2 * (rank - 2)} for its spatial dimensions" if formats else "3-D to 5-D input")
                + f" (mode {mode!r}), got {len(amounts)}"
            )
        if data_format not in formats:
            raise ValueError(f"pad: data_format must be one of {list(formats)} for a {rank}-D input, got {data_format!r}")
        # Spatial dimensions follow the channel (first) or precede it (last);
        # the pairs of `pad` run from the last spatial dimension backwards.
        spatial = list(range(2, rank)) if data_format[1] == "C" else list(range(1, rank - 1))
        paddings = [0] * (2 * rank)
        for k, d in enumerate(reversed(spatial)):
            paddings[2 * d : 2 * d + 2] = amounts[2 * k : 2 * k + 2]
    if mode == "constant":
        return apply(pd.PadOp, [x], prefix="pad", name=name, paddings=paddings, value=float(value))
    if any(p < 0 for p in paddings):
        raise ValueError(f"pad: mode {mode!r} needs non-negative paddings, got {list(pad)}")
    out = x
    for d in range(rank):
        before, after = paddings[2 * d], paddings[2 * d + 1]
        if before or after:
            out = _pad_axis(out, d, before, after, mode)
    return out


def _pad_axis(x: Any, axis: int, before: int, after: int, mode: str) -> Any:
    """Pad one axis by copying slices of `x` (reflect, replicate or circular)."""
    n = x.shape[axis]
    if n >= 0:
        limit = n - 1 if mode == "reflect" else n
        if mode != "replicate" and max(before, after) > limit:
            raise ValueError(
                f"pad: with mode {mode!r} the padding of dimension {axis} (size {n}) must be "
                f"{'less than' if mode == 'reflect' else 'at most'} the size, got "
                f"{[before, after]}"
            )

    def take(start: int, stop: int) -> Any:
        # `stop` 0 with a negative start means "to the end".
        return slice(x, [axis], [start], [stop if stop != 0 or start >= 0 else 2**62])

    if mode == "reflect":
        left = [take(i, i + 1) for i in range(before, 0, -1)]
        right = [take(-1 - j, -j) for j in range(1, after + 1)]
    elif mode == "replicate":
        left = [take(0, 1)] * before
        right = [take(-1, 0)] * after
    else:  # circular
        left = [take(-before, 0)] if before else []
        right = [take(0, after)] if after else []
    return concat([*left, x, *right], axis=axis)


# ------------------------------------------------------------------ fluid.layers


def fluid_reshape(x: Any, shape: Sequence[int], actual_shape: Any = None, act: str | None = None,
                  inplace: bool = False, name: str | None = None) -> Any:
    """`fluid.layers.reshape` (`actual_shape`, a tensor, is not supported)."""
    if actual_shape is not None:
        raise NotImplementedError("reshape: actual_shape (a tensor-valued shape) is not supported")
    return _activate(reshape(x, shape, name=name), act)


def fluid_concat(input: Sequence[Any], axis: int = 0, name: str | None = None) -> Any:
    """`fluid.layers.concat(input, axis)`."""
    return concat(input, axis=axis, name=name)


def fluid_split(input: Any, num_or_sections: Ints, dim: int = -1, name: str | None = None) -> list[Any]:
    """`fluid.layers.split(input, num_or_sections, dim=-1)`."""
    return split(input, num_or_sections, axis=dim, name=name)


def fluid_squeeze(input: Any, axes: Sequence[int], name: str | None = None) -> Any:
    """`fluid.layers.squeeze(input, axes)`."""
    return squeeze(input, _ints("squeeze", "axes", axes), name=name)


def fluid_unsqueeze(input: Any, axes: Ints, name: str | None = None) -> Any:
    """`fluid.layers.unsqueeze(input, axes)`."""
    return unsqueeze(input, axes, name=name)


def fluid_expand(x: Any, expand_times: Sequence[int], name: str | None = None) -> Any:
    """`fluid.layers.expand`: tile x `expand_times[i]` times along dimension i
    (Paddle 1.x semantics), one concat of copies per tiled dimension."""
    check_tensor("expand", "x", x)
    times = _ints("expand", "expand_times", expand_times)
    if len(times) != len(x.shape) or any(t < 1 for t in times):
        raise ValueError(
            f"expand: expand_times must hold one positive int per dimension of the "
            f"{len(x.shape)}-D input, got {times}"
        )
    tiled = [(i, t) for i, t in enumerate(times) if t > 1]
    if not tiled:  # Paddle still makes a new variable: an identity reshape.
        return _reshape_to("expand", x, [0] * len(times), name)
    out = x
    for k, (axis, t) in enumerate(tiled):
        last = k == len(tiled) - 1
        out = apply(pd.ConcatOp, [out] * t, prefix="expand", name=name if last else None, axis=axis)
    return out


def fluid_expand_as(x: Any, target_tensor: Any, name: str | None = None) -> Any:
    """`fluid.layers.expand_as(x, target_tensor)`."""
    return expand_as(x, target_tensor, name=name)


def fluid_flatten(x: Any, axis: int = 1, name: str | None = None) -> Any:
    """`fluid.layers.flatten`: a 2-D result `[prod(dims[:axis]), prod(dims[axis:])]`."""
    check_tensor("flatten", "x", x)
    dims = list(x.shape)
    axis = _int("flatten", "axis", axis)
    if not 0 <= axis <= len(dims):
        raise ValueError(f"flatten: axis {axis} must lie in [0, {len(dims)}] for a {len(dims)}-D input")
    # With axis 1 the leading dimension is copied (a 0), so a dynamic batch
    # leaves the other product static.
    head = 0 if axis == 1 else _prod_or_dyn(dims[:axis])
    return _reshape_to("flatten", x, [head, _prod_or_dyn(dims[axis:])], name)


def fluid_pad(x: Any, paddings: Sequence[int], pad_value: float = 0.0, name: str | None = None) -> Any:
    """`fluid.layers.pad`: `paddings = [before_0, after_0, before_1, ...]` for every
    dimension, filled with `pad_value`."""
    check_tensor("pad", "x", x)
    amounts = _ints("pad", "paddings", paddings)
    if len(amounts) != 2 * len(x.shape):
        raise ValueError(f"pad: paddings must hold {2 * len(x.shape)} ints for a {len(x.shape)}-D input, got {len(amounts)}")
    return pad(x, amounts, value=pad_value, name=name)


PADDLE = [reshape, transpose, concat, split, slice, squeeze, unsqueeze, expand, broadcast_to, expand_as, flatten,
          pad]
FUNCTIONAL = [pad]
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {
    "reshape": fluid_reshape,
    "transpose": transpose,
    "concat": fluid_concat,
    "split": fluid_split,
    "slice": slice,
    "squeeze": fluid_squeeze,
    "unsqueeze": fluid_unsqueeze,
    "expand": fluid_expand,
    "expand_as": fluid_expand_as,
    "flatten": fluid_flatten,
    "pad": fluid_pad,
}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "reshape": reshape,
    "transpose": transpose,
    "flatten": flatten,
    "squeeze": squeeze,
    "unsqueeze": unsqueeze,
    "expand": expand,
    "expand_as": expand_as,
    "broadcast_to": broadcast_to,
    "split": split,
    "concat": concat,
}
