"""Fuzzer specs of the reduction family: reductions over axes, scans, softmax,
arg max/min, top-k, `pd.sum` (add_n), `pd.mean` and `pd.squared_l2_norm`.

The ops each spec covers are read from the dialect's base classes (`ReduceOp`,
`ScanOp`, `SoftmaxLikeOp`, `ArgOp`); what is left here is the fuzzer's choice of
magnitudes (products stay small) and of how often each option is drawn.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pullback.dialects import pd

from ..gen import Draw, Gen, Spec, bounded, registry

SPECS: dict[type[pd.PdOp], Spec] = {}
spec = registry(SPECS)


def _axes(g: Gen, rank: int) -> list[int]:
    if rank == 0:
        return []
    axes = sorted(a for a in range(rank) if g.coin(0.5))
    return [a - rank if g.coin(0.3) else a for a in axes]


def axis_of(g: Gen, x: int) -> int:
    """A random axis of value x (negative or not); -1 for a 0-d x."""
    r = g.val(x).array.ndim
    return g.randint(-r, r - 1) if r else -1


REDUCE_DRAWS: dict[type[pd.PdOp], Draw] = {
    pd.ReduceProdOp: Draw(limit=3, fresh=(0.5, 1.5)),  # products of a few dozen values stay in range
}


def _reduce(op: type[pd.PdOp]) -> Spec:
    d, domain = REDUCE_DRAWS.get(op, Draw(limit=1e3)), op.input_domain("x")
    pred, (low, high) = d.pred(domain), d.range(domain)

    def draw(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
        x = g.float_val(pred, make=lambda: g.floats(g.shape(), low, high))
        return (x,), {"axis": _axes(g, g.val(x).array.ndim), "keepdim": g.coin(0.3)}

    return draw


SCAN_LIMITS: dict[type[pd.PdOp], float] = {pd.CumprodOp: 3}
"""Magnitudes scans draw within (default 1e3): running products stay in range."""


def _scan(op: type[pd.PdOp]) -> Spec:
    limit = SCAN_LIMITS.get(op, 1e3)

    def draw(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
        x = g.float_val(lambda v: v.array.ndim > 0 and bounded(limit)(v),
                        make=lambda: g.floats(g.shape(g.randint(1, 3)), -1.5, 1.5))
        r = g.val(x).array.ndim
        return (x,), {"axis": g.randint(-r, r - 1), "exclusive": g.coin(0.3), "reverse": g.coin(0.3)}

    return draw


def _softmax(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(bounded(50))
    return (x,), {"axis": axis_of(g, x)}


def _arg(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and bounded(1e3)(v))
    props: dict[str, Any] = {"axis": axis_of(g, x), "keepdim": g.coin(0.3), "dtype": g.choice(["int64", "int32"])}
    if g.coin(0.2):
        props["flatten"] = True
    return (x,), props


for _op in pd.REDUCTION_OPS:
    if issubclass(_op, pd.ReduceOp):
        SPECS[_op] = _reduce(_op)
    elif issubclass(_op, pd.ScanOp):
        SPECS[_op] = _scan(_op)
    elif issubclass(_op, pd.SoftmaxLikeOp):
        SPECS[_op] = _softmax
    elif issubclass(_op, pd.ArgOp):
        SPECS[_op] = _arg


@spec(pd.MeanOp, pd.SquaredL2NormOp)
def _whole(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    return (g.float_val(bounded(1e3)),), {}


@spec(pd.SumOp)
def _add_n(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(bounded(1e3))
    xs = g.val(x).array.shape
    # (`or`: value 0 is never picked here, as the first version drew; kept so that
    # seeds keep their programs.)
    others = [g.pick(lambda v: v.array.shape == xs) or g.like(x) for _ in range(g.randint(1, 2))]
    return (x, *others), {}


@spec(pd.TopKOp)
def _top_k(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and bounded(1e3)(v))
    axis = axis_of(g, x)
    n = g.val(x).array.shape[axis]
    return (x,), {"k": g.randint(1, n), "axis": axis, "largest": g.coin(0.7), "sorted": g.coin(0.8)}


__all__ = ["REDUCE_DRAWS", "SCAN_LIMITS", "SPECS", "axis_of"]
