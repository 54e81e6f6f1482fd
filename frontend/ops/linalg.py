"""Paddle's products: `mm`, `bmm`, `dot`, `outer`, `kron` and `einsum`, as composites
of `matmul`, broadcasting multiplies, reductions and shape ops (so their gradients
come from those ops' VJP rules and they lower natively wherever those do).

`einsum` handles any number of operands, pairwise from the left: letters that no
later operand or the output needs are summed out first, then each pair becomes one
batched `matmul` — the operands transposed to `[batch, free, contracted]` and
`[batch, contracted, free]` and flattened to 3-D — and the result is transposed to
the output order.  Repeated letters within one operand (diagonals) are not
supported; `...` is, for operands of static rank.
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Sequence
from typing import Any

from pullback.frontend.ops.elementwise import check_float_tensor, check_tensor
from pullback.frontend.ops.nn import matmul
from pullback.frontend.ops.reduction import sum
from pullback.frontend.ops.shape import reshape, transpose, unsqueeze


def mm(input: Any, mat2: Any, name: str | None = None) -> Any:
    """`paddle.mm`: the matrix product (with matmul's broadcasting)."""
    return matmul(input, mat2, name=name)


def bmm(x: Any, y: Any, name: str | None = None) -> Any:
    """`paddle.bmm`: batched matrix products of `[b, m, k]` and `[b, k, n]`."""
    check_tensor("bmm", "x", x)
    check_tensor("bmm", "y", y)
    if len(x.shape) != 3 or len(y.shape) != 3:
        raise ValueError(f"bmm: x and y must be 3-D, got shapes {list(x.shape)} and {list(y.shape)}")
    if x.shape[0] >= 0 and y.shape[0] >= 0 and x.shape[0] != y.shape[0]:
        raise ValueError(f"bmm: batch sizes differ: {x.shape[0]} and {y.shape[0]}")
    return matmul(x, y, name=name)


def dot(x: Any, y: Any, name: str | None = None) -> Any:
    """`paddle.dot`: the inner product of 1-D tensors, or of the rows of 2-D ones."""
    check_float_tensor("dot", "x", x)
    check_float_tensor("dot", "y", y)
    if len(x.shape) not in (1, 2) or len(x.shape) != len(y.shape):
        raise ValueError(f"dot: x and y must both be 1-D or 2-D, got shapes {list(x.shape)} and {list(y.shape)}")
    return sum(x * y, axis=-1, name=name)


def outer(x: Any, y: Any, name: str | None = None) -> Any:
    """`paddle.outer`: `x[:, None] * y[None, :]` of the flattened inputs."""
    check_float_tensor("outer", "x", x)
    check_float_tensor("outer", "y", y)
    return reshape(x, [-1, 1]) * reshape(y, [1, -1])


def kron(x: Any, y: Any, name: str | None = None) -> Any:
    """`paddle.kron`: the Kronecker product (static shapes)."""
    check_float_tensor("kron", "x", x)
    check_float_tensor("kron", "y", y)
    rank = builtins.max(len(x.shape), len(y.shape))
    xs = [1] * (rank - len(x.shape)) + list(x.shape)
    ys = [1] * (rank - len(y.shape)) + list(y.shape)
    if any(d < 0 for d in xs + ys):
        raise ValueError("kron: x and y must have static shapes")
    a = unsqueeze(reshape(x, xs), [2 * i + 1 for i in range(rank)])  # [x0, 1, x1, 1, ...]
    b = unsqueeze(reshape(y, ys), [2 * i for i in range(rank)])      # [1, y0, 1, y1, ...]
    return reshape(a * b, [p * q for p, q in zip(xs, ys)], name=name)


# ----------------------------------------------------------------------- einsum

_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _parse(equation: str, operands: Sequence[Any]) -> tuple[list[str], str]:
    """Input subscripts (with `...` expanded to capital letters) and the output."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    ins = lhs.split(",")
    if len(ins) != len(operands):
        raise ValueError(f"einsum: the equation has {len(ins)} operands, {len(operands)} were given")
    ell = 0
    for sub, x in zip(ins, operands):
        if "..." in sub:
            ell = builtins.max(ell, len(x.shape) - (len(sub) - 3))
    out_subs = []
    for sub, x in zip(ins, operands):
        if "..." in sub:
            n = len(x.shape) - (len(sub) - 3)
            sub = sub.replace("...", _LETTERS[ell - n: ell])
        if len(sub) != len(x.shape):
            raise ValueError(f"einsum: subscripts '{sub}' do not match an operand of rank {len(x.shape)}")
        if len(set(sub)) != len(sub):
            raise NotImplementedError(f"einsum: repeated subscripts in one operand ('{sub}') are not supported")
        if not all(c.isalpha() for c in sub):
            raise ValueError(f"einsum: invalid subscripts '{sub}'")
        out_subs.append(sub)
    if arrow:
        out = rhs.replace("...", _LETTERS[:ell])
    else:
        counts = {c: "".join(out_subs).count(c) for c in "".join(out_subs)}
        out = _LETTERS[:ell] + "".join(sorted(c for c, k in counts.items() if k == 1 and c.islower()))
    for c in out:
        if not any(c in s for s in out_subs):
            raise ValueError(f"einsum: output subscript '{c}' appears in no operand")
    return out_subs, out


def _sizes(subs: Sequence[str], operands: Sequence[Any]) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for sub, x in zip(subs, operands):
        for c, d in zip(sub, x.shape):
            if c in sizes and sizes[c] >= 0 and d >= 0 and sizes[c] != d:
                raise ValueError(f"einsum: subscript '{c}' has sizes {sizes[c]} and {d}")
            if c not in sizes or sizes[c] < 0:
                sizes[c] = d
    return sizes


def _merged(dims: Sequence[int]) -> int:
    return -1 if any(d < 0 for d in dims) else math.prod(dims)


def _sum_out(x: Any, sub: str, keep: set[str]) -> tuple[Any, str]:
    """Sum out the letters of `sub` not in `keep`."""
    gone = [i for i, c in enumerate(sub) if c not in keep]
    if not gone:
        return x, sub
    return sum(x, axis=gone), "".join(c for c in sub if c in keep)


def _permute(x: Any, sub: str, order: str) -> Any:
    if sub == order:
        return x
    return transpose(x, [sub.index(c) for c in order])


def _target(fn: str, copied: int, dims: Sequence[int]) -> list[int]:
    """A reshape target: `copied` leading 0s (dimensions kept as they are), then
    `dims` with one dynamic entry as -1."""
    if builtins.sum(1 for d in dims if d < 0) > 1:
        raise ValueError(f"{fn}: cannot merge or split more than one dynamic dimension")
    return [0] * copied + [-1 if d < 0 else d for d in dims]


def _contract(a: Any, sa: str, b: Any, sb: str, keep: set[str], sizes: dict[str, int]) -> tuple[Any, str]:
    """One (batched) matmul of `a` and `b` over their shared letters not in `keep`:
    `[*batch, M, K] @ [*batch, K, N]`, the free and contracted letters merged."""
    batch = "".join(c for c in sa if c in sb and c in keep)
    con = "".join(c for c in sa if c in sb and c not in keep)
    fa = "".join(c for c in sa if c not in sb)
    fb = "".join(c for c in sb if c not in sa)
    m, k, n = (_merged([sizes[c] for c in g]) for g in (fa, con, fb))
    nb = len(batch)
    A = _permute(a, sa, batch + fa + con)
    if len(fa) != 1 or len(con) != 1:
        A = reshape(A, _target("einsum", nb, [m, k]))
    B = _permute(b, sb, batch + con + fb)
    if len(con) != 1 or len(fb) != 1:
        B = reshape(B, _target("einsum", nb, [k, n]))
    out = matmul(A, B)
    if len(fa) != 1 or len(fb) != 1:
        out = reshape(out, _target("einsum", nb, [sizes[c] for c in fa + fb]))
    return out, batch + fa + fb


def einsum(equation: str, *operands: Any) -> Any:
    """`paddle.einsum`: Einstein summation (module docstring)."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    if not isinstance(equation, str) or not operands:
        raise TypeError("einsum: expected an equation string and at least one operand")
    for i, x in enumerate(operands):
        check_float_tensor("einsum", f"operands[{i}]", x)
    subs, out = _parse(equation, operands)
    sizes = _sizes(subs, operands)
    x, sx = operands[0], subs[0]
    rest = list(zip(operands[1:], subs[1:]))
    x, sx = _sum_out(x, sx, set(out) | {c for _, s in rest for c in s})
    for k, (y, sy) in enumerate(rest):
        later = set(out) | {c for _, s in rest[k + 1:] for c in s}
        y, sy = _sum_out(y, sy, later | set(sx))
        x, sx = _contract(x, sx, y, sy, later, sizes)
    x, sx = _sum_out(x, sx, set(out))
    return _permute(x, sx, out)


PADDLE: list[Callable[..., Any]] = [mm, bmm, dot, outer, kron, einsum]
FUNCTIONAL: list[Callable[..., Any]] = []
STATIC_NN: list[Callable[..., Any]] = []
FLUID_LAYERS: dict[str, Callable[..., Any]] = {}
TENSOR_METHODS: dict[str, Callable[..., Any]] = {"mm": mm, "bmm": bmm, "dot": dot, "outer": outer, "kron": kron}
