"""The project's differential fuzzer: random well-typed `pd` programs, every backend
against every other and against float64 finite differences.

A *case* is a seeded random program: float inputs (some with a dynamic batch
dimension, some 0-d, some trainable parameters), integer ids and labels, and a
chain of steps, each one op of the dialect with random options, whose operands are
drawn from every value made so far (fan-out) with broadcasting shapes.  Its loss is
`sum_k reduce_sum(v_k * P_k)` over the unused float values and a random share of the
others (fixed random projections `P_k`).  `check_case` then runs

* the static program (with its `pd.backward` filled by the `autodiff` pass) on the
  reference interpreter and on the compiled backend (LLVM), comparing every value,
  its shape (0-d stays 0-d) and dtype, and every gradient;
* the gradients against central finite differences of the loss in float64, element
  by element, skipping elements where the one-sided differences disagree (a kink:
  relu at 0, a max tie, a floor step);
* the same program in eager mode (Tensors, `paddle.grad`) against the interpreter.

Every op of the dialect is either fuzzed (`SPECS`, keyed by op class: the function
that draws its operands and options), built by the fuzzer itself (`BUILT`), or
excluded with a reason (`EXCLUDED`); `uncovered()` names any other op, and a unit
test fails on it, so a new op cannot escape.

A failing case is shrunk by deleting steps (and the steps that used them) and loss
terms while it still fails, and reported with its IR, its feeds and the command
that replays it.  Command line (nightly runs)::

    python -m pullback.testing.fuzz --seconds 600            # random seeds until the time is up
    python -m pullback.testing.fuzz --seed 17 --seed 40      # replay seeds
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ArrayAttr, ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.utils.exceptions import VerifyException

from pullback.dialects import pd

FLOAT = "$float"
"""A dtype property meaning 'the case's float type' (float64 or float32)."""

# ---------------------------------------------------------------------- cases


@dataclass
class Input:
    """A fed value: `array` (float64 for floats, whatever the case's float type),
    dimension 0 declared dynamic (`?`) when `dynamic`, a trainable `pd.parameter`
    (static mode) when `param`; gradients are taken for float inputs with `grad`."""

    array: np.ndarray
    dynamic: bool = False
    param: bool = False
    grad: bool = True


@dataclass
class Step:
    """One op: its class, operands (value ids) and properties."""

    op: type[pd.PdOp]
    args: tuple[int, ...]
    props: dict[str, Any]


Item = Input | Step


@dataclass
class Case:
    """A generated program.  Values are numbered in creation order: an input makes
    one value, a step one per result (`producers[v] = (item index, result index)`)."""

    seed: int
    dtype: str
    items: list[Item] = field(default_factory=list)
    producers: list[tuple[int, int]] = field(default_factory=list)
    terms: list[int] = field(default_factory=list)
    projections: dict[int, np.ndarray] = field(default_factory=dict)

    def steps(self) -> list[Step]:
        """The program's ops, in order."""
        return [it for it in self.items if isinstance(it, Step)]

    def without(self, drop_items: set[int], drop_terms: set[int] = frozenset()) -> Case | None:  # type: ignore[assignment]
        """The case with items `drop_items` removed, and every step that used one of
        their values; None when no loss term is left."""
        dead_items = set(drop_items)
        dead_values: set[int] = set()
        for k, it in enumerate(self.items):
            if isinstance(it, Step) and any(a in dead_values for a in it.args):
                dead_items.add(k)
            if k in dead_items:
                dead_values.update(v for v, (i, _) in enumerate(self.producers) if i == k)
        # Inputs nobody reads any more go too (unless a loss term reads them).
        terms = [t for t in self.terms if t not in dead_values and t not in drop_terms]
        used = {a for k, it in enumerate(self.items) if isinstance(it, Step) and k not in dead_items for a in it.args}
        for k, it in enumerate(self.items):
            if isinstance(it, Input):
                v = next(v for v, (i, _) in enumerate(self.producers) if i == k)
                if v not in used and v not in terms:
                    dead_items.add(k)
        if not terms:
            return None
        keep = [k for k in range(len(self.items)) if k not in dead_items]
        new_index = {old: new for new, old in enumerate(keep)}
        value_map: dict[int, int] = {}
        producers: list[tuple[int, int]] = []
        for v, (i, r) in enumerate(self.producers):
            if i in new_index:
                value_map[v] = len(producers)
                producers.append((new_index[i], r))
        items: list[Item] = []
        for k in keep:
            it = self.items[k]
            items.append(replace(it, args=tuple(value_map[a] for a in it.args)) if isinstance(it, Step) else it)
        return Case(self.seed, self.dtype, items, producers, [value_map[t] for t in terms],
                    {value_map[t]: self.projections[t] for t in terms})


    def cut(self, k: int) -> Case | None:
        """The case with step k's (single) result fed as an input holding its value:
        the steps only it read become dead weight that deletion removes."""
        it = self.items[k]
        if not isinstance(it, Step) or sum(1 for i, _ in self.producers if i == k) != 1:
            return None
        from pullback.frontend.eager import template_for

        arrays: list[np.ndarray] = []
        with np.errstate(all="ignore"):
            for i, item in enumerate(self.items[:k + 1]):
                if isinstance(item, Input):
                    arrays.append(item.array)
                    continue
                ins = [arrays[a] for a in item.args]
                outs = template_for(item.op, ins, _resolve(item.props, "float64")).run(ins)
                if i == k:
                    value = outs[0]
                arrays.extend(outs)
        items = list(self.items)
        items[k] = Input(np.asarray(value), grad=value.dtype.kind == "f")
        return replace(self, items=items)


# ------------------------------------------------------------------ generation


@dataclass
class Val:
    """A value while generating: its float64 (or integer) array and declared shape."""

    array: np.ndarray
    decl: tuple[int | None, ...]

    @property
    def is_float(self) -> bool:
        """A floating-point value (gradients flow through it)."""
        return self.array.dtype.kind == "f"


class Rejected(Exception):
    """A spec cannot apply to the values at hand (the generator tries another op)."""


class Gen:
    """The state of one program's generation, handed to every spec function."""

    def __init__(self, seed: int, dtype: str) -> None:
        self.rng = np.random.default_rng(seed)
        self.case = Case(seed, dtype)
        self.vals: list[Val] = []
        self.consumed: set[int] = set()

    # --- randomness
    def coin(self, p: float = 0.5) -> bool:
        """True with probability p."""
        return bool(self.rng.random() < p)

    def randint(self, lo: int, hi: int) -> int:
        """A uniform integer in [lo, hi]."""
        return int(self.rng.integers(lo, hi + 1))

    def choice(self, options: Sequence[Any]) -> Any:
        """One of `options`, uniformly."""
        return options[int(self.rng.integers(len(options)))]

    def shape(self, rank: int | None = None, max_numel: int = 24) -> tuple[int, ...]:
        """A small random shape (dimensions 1..4)."""
        if rank is None:
            rank = self.choice([0, 1, 1, 2, 2, 2, 3, 3, 4])
        while True:
            s = tuple(self.randint(1, 4) for _ in range(rank))
            if int(np.prod(s)) <= max_numel:
                return s

    # --- values
    def val(self, v: int) -> Val:
        """The value numbered v."""
        return self.vals[v]

    def add_input(self, array: np.ndarray, *, dynamic: bool | None = False, grad: bool = True,
                  param: bool = False) -> int:
        """A new fed value; returns its number.  Float inputs get gradients by
        default; `dynamic=None` makes dimension 0 dynamic at random."""
        if dynamic is None:
            dynamic = array.ndim > 0 and not param and self.coin(0.3)
        dynamic = bool(dynamic and array.ndim > 0 and not param)
        grad = grad and array.dtype.kind == "f"
        self.case.items.append(Input(array, dynamic, param, grad))
        self.case.producers.append((len(self.case.items) - 1, 0))
        decl = tuple(None if dynamic and i == 0 else d for i, d in enumerate(array.shape))
        self.vals.append(Val(array, decl))
        return len(self.vals) - 1

    def floats(self, shape: Sequence[int], low: float | None = None, high: float | None = None) -> np.ndarray:
        """Random float64 values: standard normal, or uniform in [low, high]."""
        if low is None or high is None:
            return self.rng.standard_normal(tuple(shape))
        return self.rng.uniform(low, high, tuple(shape))

    def ints(self, shape: Sequence[int], high: int, low: int = 0) -> np.ndarray:
        """Random int64 values in [low, high)."""
        return self.rng.integers(low, high, tuple(shape)).astype(np.int64)

    def pick(self, pred: Callable[[Val], bool] = lambda v: True, kind: str = "f") -> int | None:
        """A value of dtype kind `kind` satisfying `pred`, favouring recent values
        (chains) but reaching any (fan-out); None if there is none."""
        ok = [i for i, v in enumerate(self.vals) if v.array.dtype.kind == kind and pred(v)]
        if not ok:
            return None
        if self.coin(0.6):
            return ok[-1 - min(self.randint(0, 2), len(ok) - 1)]
        return self.choice(ok)

    def float_val(self, pred: Callable[[Val], bool] = lambda v: True, *, make: Callable[[], np.ndarray] | None = None,
                  fresh: float = 0.15) -> int:
        """An existing float value satisfying `pred`, or else (or with probability
        `fresh`) a new input made by `make` (default: a random shape, normal values)."""
        v = None if self.coin(fresh) else self.pick(pred)
        if v is not None:
            return v
        a = make() if make is not None else self.floats(self.shape())
        if not pred(Val(a, a.shape)):
            raise Rejected("no value satisfies the spec")
        return self.add_input(a)

    def int_val(self, bound: int = 100) -> int:
        """An existing integer value within [-bound, bound] or a new small int64
        input (the integer inputs of ops whose `INT_INPUT` takes them)."""
        def small(v: Val) -> bool:
            return v.array.size == 0 or int(np.abs(v.array).max()) <= bound

        v = None if self.coin(0.5) else self.pick(small, kind="i")
        return v if v is not None else self.add_input(self.ints(self.shape(), 9, -8), dynamic=None)

    def like(self, v: int, shape: Sequence[int] | None = None, *, low: float | None = None,
             high: float | None = None, grad: bool = True) -> int:
        """A new float input shaped like value v (or `shape`), keeping v's dynamic
        dimension 0 when the shape is v's own."""
        src = self.val(v)
        s = tuple(src.array.shape) if shape is None else tuple(shape)
        dyn = shape is None and bool(src.decl) and src.decl[0] is None
        return self.add_input(self.floats(s, low, high), dynamic=dyn, grad=grad)

    def static_dims(self, v: int) -> list[int]:
        """Axes of value v whose size is declared (not dynamic)."""
        return [i for i, d in enumerate(self.val(v).decl) if d is not None]


Spec = Callable[[Gen], tuple[Sequence[int], dict[str, Any]]]
"""Draws one op's operands (value numbers) and properties, or raises Rejected."""

SPECS: dict[type[pd.PdOp], Spec] = {}


def spec(*ops: type[pd.PdOp]) -> Callable[[Spec], Spec]:
    """Register a spec for op classes."""

    def deco(fn: Spec) -> Spec:
        for op in ops:
            SPECS[op] = fn
        return fn

    return deco


def bounded(limit: float) -> Callable[[Val], bool]:
    """Values whose entries are all finite and within +-limit."""
    return lambda v: v.array.size > 0 and bool(np.all(np.abs(v.array) < limit))


def within(lo: float, hi: float) -> Callable[[Val], bool]:
    """Values whose entries all lie in (lo, hi)."""
    return lambda v: v.array.size > 0 and bool(np.all((v.array > lo) & (v.array < hi)))


def away_from_zero(eps: float) -> Callable[[Val], bool]:
    """Values whose entries are all at least eps from zero (and bounded)."""
    return lambda v: v.array.size > 0 and bool(np.all((np.abs(v.array) > eps) & (np.abs(v.array) < 1e3)))


# --- elementwise


def _second_operand(g: Gen, x: int, pred: Callable[[Val], bool], low: float | None, high: float | None
                    ) -> tuple[int, dict[str, Any], bool]:
    """A y broadcasting against x: (y, props, swap x and y).  Same shape, a suffix
    with some dimensions 1, 0-d, Paddle's `axis` alignment, or the reverse."""
    xs = g.val(x).array.shape
    mode = g.choice(["same", "same", "suffix", "scalar", "axis", "reverse"])
    props: dict[str, Any] = {}
    if mode == "same":
        y = g.pick(lambda v: v.array.shape == xs and pred(v))
        if y is not None and g.coin(0.7):
            return y, props, False
        return g.like(x, low=low, high=high), props, False
    if mode == "axis" and len(xs) >= 2:
        a = g.randint(0, len(xs) - 2)
        n = g.randint(1, len(xs) - a - 1)
        ys = xs[a:a + n]
        props["axis"] = a
        return g.add_input(g.floats(ys, low, high), dynamic=False), props, False
    if mode == "scalar" or not xs:
        return g.add_input(g.floats((), low, high)), props, False
    k = g.randint(0, len(xs))
    ys = tuple(1 if g.coin(0.3) else d for d in xs[k:])
    y = g.add_input(g.floats(ys, low, high), dynamic=False)
    return y, props, mode == "reverse"


def _binary(pred_y: Callable[[Val], bool] = lambda v: True, low: float | None = None, high: float | None = None,
            pred_x: Callable[[Val], bool] | None = None, x_low: float | None = None,
            x_high: float | None = None) -> Spec:
    px = pred_x or bounded(1e3)

    def draw(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
        x = g.float_val(px, make=lambda: g.floats(g.shape(), x_low, x_high))
        y, props, swap = _second_operand(g, x, pred_y, low, high)
        if swap and not props:
            if not (px(g.val(y)) and pred_y(g.val(x))):
                raise Rejected("operands swap out of their domains")
            return (y, x), props
        return (x, y), props

    return draw


spec(pd.ElementwiseAddOp, pd.ElementwiseSubOp, pd.ElementwiseMulOp, pd.ElementwiseMaxOp, pd.ElementwiseMinOp,
     pd.GreaterThanOp, pd.GreaterEqualOp, pd.LessThanOp, pd.LessEqualOp, pd.EqualOp, pd.NotEqualOp)(_binary())
spec(pd.ElementwiseDivOp)(_binary(away_from_zero(0.3), 0.5, 2.0))
spec(pd.ElementwisePowOp)(_binary(bounded(3), -2.0, 2.0, within(0.2, 5), 0.3, 2.0))


@spec(pd.WhereOp)
def _where(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(bounded(1e3))
    xs = g.val(x).array.shape
    c = g.pick(lambda v: v.array.shape == xs, kind="b")
    if c is None:
        c = g.add_input(g.rng.random(xs) < 0.5, dynamic=g.val(x).decl[:1] == (None,))
    y = g.pick(lambda v: v.array.shape == xs and bounded(1e3)(v))
    if y is None or g.coin(0.3):
        y = g.like(x)
    return (c, x, y), {}


def _unary(pred: Callable[[Val], bool], low: float | None = None, high: float | None = None,
           props: Callable[[Gen], dict[str, Any]] = lambda g: {}, ints: bool = False) -> Spec:
    """A one-operand spec: a float x satisfying `pred` (new ones uniform in
    [low, high]); with `ints`, sometimes an integer x (ops keeping its dtype)."""
    def draw(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
        if ints and g.coin(0.2):
            return (g.int_val(),), props(g)
        return (g.float_val(pred, make=lambda: g.floats(g.shape(), low, high)),), props(g)

    return draw


spec(pd.ReluOp, pd.SigmoidOp, pd.TanhOp, pd.ErfOp, pd.SinOp, pd.CosOp, pd.AtanOp,
     pd.FloorOp, pd.CeilOp, pd.RoundOp)(_unary(bounded(1e3)))
spec(pd.AbsOp, pd.SignOp)(_unary(bounded(1e3), ints=True))
spec(pd.SquareOp)(_unary(bounded(30), ints=True))
spec(pd.ExpOp, pd.SinhOp, pd.CoshOp, pd.Expm1Op)(_unary(bounded(8)))
spec(pd.LogOp, pd.SqrtOp)(_unary(within(0.05, 1e3), 0.1, 3.0))
spec(pd.Log1pOp)(_unary(within(-0.9, 1e3), -0.8, 3.0))
spec(pd.TanOp)(_unary(bounded(1.3), -1.2, 1.2))
spec(pd.AsinOp, pd.AcosOp)(_unary(bounded(0.95), -0.9, 0.9))
spec(pd.GeluOp)(_unary(bounded(1e3), props=lambda g: {"approximate": g.coin()}))
spec(pd.ScaleOp)(_unary(bounded(1e3), props=lambda g: {
    "scale": g.choice([2.0, -0.5, 0.0, 1.5]), "bias": g.choice([0.0, 1.0, -0.25]),
    "bias_after_scale": g.coin()}))


@spec(pd.PowOp)
def _pow(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    factor = g.choice([2.0, 3.0, 0.5, 1.5, -1.0, -0.5, 0.0, 1.0])
    if g.coin(0.2) and factor >= 0:
        return (g.int_val(20),), {"factor": factor}  # int pow keeps the dtype
    if factor == int(factor) and factor >= 0:
        return (g.float_val(bounded(30)),), {"factor": factor}
    return (g.float_val(within(0.2, 1e3), make=lambda: g.floats(g.shape(), 0.3, 2.0)),), {"factor": factor}


@spec(pd.ClipOp)
def _clip(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    lo, hi = sorted(g.rng.uniform(-1.5, 1.5, 2).tolist())
    props: dict[str, Any] = {"min": lo, "max": hi}
    drop = g.choice([None, None, "min", "max"])
    if drop:
        # paddle.clip's missing bound: +-DBL_MAX, which float32 code must hold as inf.
        props[drop] = float(np.finfo(np.float64).max) * (1 if drop == "max" else -1)
    if g.coin(0.2):
        # An integer x: the bounds are truncated and saturated into its dtype.
        return (g.int_val(),), {k: v * 4 for k, v in props.items()}
    return (g.float_val(bounded(1e3)),), props


@spec(pd.CastOp)
def _cast(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    src = g.choice(["f", "f", "i", "b"])
    v = g.pick(kind=src) if src != "f" else g.pick(bounded(1e3))
    if v is None:
        v = g.float_val(bounded(1e3))
    kind = g.val(v).array.dtype.kind
    targets = [FLOAT, "int64", "int32", "bool"] if kind == "f" else [FLOAT, FLOAT, "int64"]
    return (v,), {"dtype": g.choice(targets)}


# --- reductions


def _axes(g: Gen, rank: int) -> list[int]:
    if rank == 0:
        return []
    axes = sorted(a for a in range(rank) if g.coin(0.5))
    return [a - rank if g.coin(0.3) else a for a in axes]


@spec(pd.ReduceSumOp, pd.ReduceMeanOp, pd.ReduceMaxOp, pd.ReduceMinOp)
def _reduce(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(bounded(1e3))
    return (x,), {"axis": _axes(g, g.val(x).array.ndim), "keepdim": g.coin(0.3)}


@spec(pd.ReduceProdOp)
def _reduce_prod(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(bounded(3), make=lambda: g.floats(g.shape(), 0.5, 1.5))
    return (x,), {"axis": _axes(g, g.val(x).array.ndim), "keepdim": g.coin(0.3)}


def _scan(limit: float) -> Spec:
    def draw(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
        x = g.float_val(lambda v: v.array.ndim > 0 and bounded(limit)(v),
                        make=lambda: g.floats(g.shape(g.randint(1, 3)), -1.5, 1.5))
        r = g.val(x).array.ndim
        return (x,), {"axis": g.randint(-r, r - 1), "exclusive": g.coin(0.3), "reverse": g.coin(0.3)}

    return draw


spec(pd.CumsumOp)(_scan(1e3))
spec(pd.CumprodOp)(_scan(3))
spec(pd.MeanOp, pd.SquaredL2NormOp)(_unary(bounded(1e3)))


@spec(pd.SumOp)
def _add_n(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(bounded(1e3))
    xs = g.val(x).array.shape
    others = [g.pick(lambda v: v.array.shape == xs) or g.like(x) for _ in range(g.randint(1, 2))]
    return (x, *others), {}


def _axis_of(g: Gen, x: int) -> int:
    r = g.val(x).array.ndim
    return g.randint(-r, r - 1) if r else -1


@spec(pd.SoftmaxOp, pd.LogSoftmaxOp)
def _softmax(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(bounded(50))
    return (x,), {"axis": _axis_of(g, x)}


@spec(pd.ArgMaxOp, pd.ArgMinOp)
def _arg(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and bounded(1e3)(v))
    props: dict[str, Any] = {"axis": _axis_of(g, x), "keepdim": g.coin(0.3), "dtype": g.choice(["int64", "int32"])}
    if g.coin(0.2):
        props["flatten"] = True
    return (x,), props


@spec(pd.TopKOp)
def _top_k(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and bounded(1e3)(v))
    axis = _axis_of(g, x)
    n = g.val(x).array.shape[axis]
    return (x,), {"k": g.randint(1, n), "axis": axis, "largest": g.coin(0.7), "sorted": g.coin(0.8)}


# --- losses


def _labels(g: Gen, shape: Sequence[int], classes: int, dynamic: bool) -> int:
    return g.add_input(g.ints(shape, classes), dynamic=dynamic)


@spec(pd.OneHotOp)
def _one_hot(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    ids = g.pick(lambda v: v.array.dtype == np.int64 and v.array.size > 0 and int(v.array.min()) >= 0, kind="i")
    if ids is None or g.coin(0.4):
        ids = _labels(g, g.shape(g.randint(1, 2)), 4, g.coin(0.3))
    depth = int(g.val(ids).array.max()) + 1 + g.randint(0, 2)
    return (ids,), {"depth": depth, "dtype": FLOAT}


def _class_loss(probabilities: bool) -> Spec:
    def draw(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
        if probabilities:
            x = g.float_val(lambda v: v.array.ndim > 0 and within(0.02, 1.0)(v),
                            make=lambda: g.floats(g.shape(g.randint(1, 3)), 0.05, 0.95))
        else:
            x = g.float_val(lambda v: v.array.ndim > 0 and bounded(50)(v))
        xv = g.val(x)
        axis = _axis_of(g, x) if g.coin(0.5) else -1
        c = xv.array.shape[axis]
        dyn = xv.decl[0] is None and axis % xv.array.ndim != 0
        props: dict[str, Any] = {"axis": axis}
        if g.coin(0.25):
            props["soft_label"] = True
            soft = g.rng.uniform(0.05, 1.0, xv.array.shape)
            soft /= soft.sum(axis=axis, keepdims=True)
            y = g.add_input(soft, dynamic=dyn, grad=False)
        else:
            shape = list(xv.array.shape)
            shape[axis] = 1
            y = _labels(g, shape, c, dyn)
            if g.coin(0.2):
                props["ignore_index"] = int(g.val(y).array.flat[0])
        return (x, y), props

    return draw


spec(pd.CrossEntropyOp)(_class_loss(True))
spec(pd.SoftmaxWithCrossEntropyOp)(_class_loss(False))


@spec(pd.SquareErrorCostOp)
def _square_error(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(bounded(30))
    y = g.pick(lambda v: v.array.shape == g.val(x).array.shape and bounded(30)(v))
    return (x, y if y is not None else g.like(x)), {}


@spec(pd.AccuracyOp)
def _accuracy(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    n, k, c = g.randint(1, 4), g.randint(1, 3), 5
    out = g.add_input(g.floats((n, k)), grad=False)
    idx = g.add_input(np.argsort(g.rng.random((n, c)), axis=1)[:, :k].astype(np.int64))
    return (out, idx, _labels(g, (n, 1), c, False)), {}


# --- shape


def _factor(g: Gen, n: int) -> list[int]:
    """A random shape with n elements."""
    dims: list[int] = []
    while n > 1 and len(dims) < 3:
        divs = [d for d in range(2, n + 1) if n % d == 0]
        d = g.choice(divs)
        dims.append(d)
        n //= d
    if n > 1:
        dims.append(n)
    while g.coin(0.2):
        dims.insert(g.randint(0, len(dims)), 1)
    return dims


@spec(pd.ReshapeOp)
def _reshape(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val()
    xv = g.val(x)
    if xv.decl and xv.decl[0] is None:
        rest = _factor(g, int(np.prod(xv.array.shape[1:])))
        shape = [0, *rest]  # 0 copies the (dynamic) dimension
    else:
        shape = _factor(g, xv.array.size)
        if shape and g.coin(0.4):
            shape[g.randint(0, len(shape) - 1)] = -1
    return (x,), {"shape": shape}


@spec(pd.ReshapeAsOp)
def _reshape_as(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: not (v.decl and v.decl[0] is None))
    like = g.add_input(g.floats(_factor(g, g.val(x).array.size)), dynamic=False, grad=False)
    return (x, like), {}


@spec(pd.TransposeOp)
def _transpose(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val()
    return (x,), {"perm": [int(p) for p in g.rng.permutation(g.val(x).array.ndim)]}


def _shaped(shape: tuple[int, ...], decl: tuple[int | None, ...]) -> Callable[[Val], bool]:
    return lambda v: v.array.shape == shape and v.decl == decl


@spec(pd.ConcatOp)
def _concat(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and bounded(1e3)(v))
    xv = g.val(x)
    axis = g.choice(g.static_dims(x) or [0])
    parts = [x]
    for _ in range(g.randint(1, 2)):
        shape = list(xv.array.shape)
        shape[axis] = g.randint(1, 3)
        want: tuple[int | None, ...] = (*xv.decl[:axis], shape[axis], *xv.decl[axis + 1:])
        same = g.pick(_shaped(tuple(shape), want))
        parts.append(same if same is not None else g.like(x, shape) if axis or xv.decl[0] is not None
                     else g.add_input(g.floats(shape), dynamic=True))
    return parts, {"axis": axis - xv.array.ndim if g.coin(0.3) else axis}


def _split_sizes(g: Gen, n: int) -> list[int]:
    sizes = []
    while n > 0:
        s = g.randint(1, n)
        sizes.append(s)
        n -= s
    return sizes


@spec(pd.SplitOp)
def _split(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: any(d is not None and d > 1 for d in v.decl))
    axis = g.choice([a for a in g.static_dims(x) if g.val(x).array.shape[a] > 1])
    n = g.val(x).array.shape[axis]
    if g.coin(0.5):
        return (x,), {"num": g.choice([d for d in range(1, n + 1) if n % d == 0]), "axis": axis}
    sizes = _split_sizes(g, n)
    if g.coin(0.4):
        sizes[g.randint(0, len(sizes) - 1)] = -1
    return (x,), {"sections": sizes, "axis": axis}


@spec(pd.SplitAsOp)
def _split_as(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and v.decl[0] is not None)
    xv = g.val(x)
    axis = g.randint(0, xv.array.ndim - 1)
    likes = []
    for s in _split_sizes(g, xv.array.shape[axis]):
        shape = list(xv.array.shape)
        shape[axis] = s
        likes.append(g.add_input(g.floats(shape), dynamic=False, grad=False))
    return (x, *likes), {"axis": axis}


def _bound(g: Gen, n: int, end: bool) -> int:
    b = g.randint(0, n) if not end else g.randint(1, n)
    if g.coin(0.3):
        b -= n  # negative, from the end
    if end and g.coin(0.15):
        b = 10**6  # past the end: clamped
    return b


@spec(pd.SliceOp)
def _slice(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0)
    shape = g.val(x).array.shape
    axes = [a for a in range(len(shape)) if g.coin(0.6)] or [0]
    starts, ends = [], []
    for a in axes:
        s = g.randint(0, shape[a] - 1)
        e = g.randint(s + 1, shape[a])
        starts.append(s - shape[a] if g.coin(0.3) else s)
        ends.append(10**6 if e == shape[a] and g.coin(0.3) else e - shape[a] if g.coin(0.2) and e < shape[a] else e)
    return (x,), {"axes": axes, "starts": starts, "ends": ends}


@spec(pd.PadOp)
def _pad(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and v.array.size <= 16)
    r = g.val(x).array.ndim
    pads = [0 if g.val(x).decl[i // 2] is None else g.randint(0, 2) for i in range(2 * r)]
    return (x,), {"paddings": pads, "value": g.choice([0.0, 0.5, -1.0])}


@spec(pd.SqueezeOp)
def _squeeze(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: 1 in v.decl, make=lambda: g.floats((g.randint(1, 3), 1, g.randint(1, 3))[: g.randint(2, 3)]))
    decl = g.val(x).decl
    ones = [i for i, d in enumerate(decl) if d == 1]
    if g.coin(0.2):
        axes: list[int] = []  # every dimension of size 1
    else:
        axes = [a for a in range(len(decl)) if (a in ones and g.coin(0.7)) or (decl[a] not in (1, None) and g.coin(0.2))]
        axes = [a - len(decl) if g.coin(0.3) else a for a in axes]
    return (x,), {"axes": axes}


@spec(pd.UnsqueezeOp)
def _unsqueeze(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim < 4)
    r = g.val(x).array.ndim
    n = g.randint(1, 2)
    return (x,), {"axes": sorted(g.randint(0, r + n - 1) for _ in range(n))}


@spec(pd.ExpandOp)
def _expand(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.size <= 8 and v.array.ndim <= 3)
    decl = g.val(x).decl
    shape = [-1 if d is None else (g.randint(1, 3) if d == 1 else (d if g.coin(0.5) else -1)) for d in decl]
    lead = [g.randint(1, 3) for _ in range(g.randint(0 if decl else 1, 1))]
    return (x,), {"shape": lead + shape}


@spec(pd.ExpandAsOp)
def _expand_as(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.size <= 8 and v.array.ndim <= 3 and None not in v.decl)
    shape = [g.randint(1, 3) if d == 1 else d for d in g.val(x).array.shape]
    target = [g.randint(1, 2) for _ in range(g.randint(0, 1))] + shape
    return (x, g.add_input(g.floats(target), grad=False)), {}


# --- nn


@spec(pd.MatmulOp)
def _matmul(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: 1 <= v.array.ndim <= 4 and bounded(1e3)(v))
    xs = g.val(x).array.shape
    tx = len(xs) >= 2 and g.coin(0.3)
    ty = g.coin(0.3)
    k = xs[-2] if tx else xs[-1]
    n = g.randint(1, 3)
    batch = list(xs[:-2])
    if batch and g.coin(0.5):
        batch = batch[g.randint(0, len(batch)):]
        batch = [1 if g.coin(0.3) else b for b in batch]
    yshape = [k] if g.coin(0.2) else [*batch, *((n, k) if ty else (k, n))]
    if len(yshape) == 1:
        ty = False
    y = g.pick(lambda v: v.array.shape == tuple(yshape) and None not in v.decl)
    if y is None:
        y = g.add_input(g.floats(yshape), dynamic=False)
    if g.coin(0.2) and len(xs) <= len(yshape):
        return (y, x), {"transpose_x": ty, "transpose_y": tx} if False else {}  # rejected unless shapes agree
    return (x, y), {"transpose_x": tx, "transpose_y": ty}


@spec(pd.LinearOp)
def _linear(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: 2 <= v.array.ndim <= 4 and bounded(1e3)(v))
    k, n = g.val(x).array.shape[-1], g.randint(1, 3)
    w = g.pick(lambda v: v.array.shape[0] == k and v.array.ndim == 2 and None not in v.decl)
    if w is None:
        w = g.add_input(g.floats([k, n]), dynamic=False)
    n = g.val(w).array.shape[1]
    bias = g.pick(lambda v: v.array.shape == (n,) and None not in v.decl)
    if bias is None:
        bias = g.add_input(g.floats([n]), dynamic=False)
    return (x, w, bias), {}


@spec(pd.LookupTableOp)
def _lookup(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    w = g.float_val(lambda v: v.array.ndim == 2 and None not in v.decl, make=lambda: g.floats((g.randint(2, 5), g.randint(1, 3))))
    vocab = g.val(w).array.shape[0]
    ids = g.add_input(g.ints(g.shape(g.randint(1, 2), 8), vocab))
    props: dict[str, Any] = {}
    if g.coin(0.3):
        props["padding_idx"] = g.randint(-vocab, vocab - 1)
    return (ids, w), props


def _image(g: Gen, channels: int | None = None) -> int:
    def make() -> np.ndarray:
        return g.floats((g.randint(1, 2), channels or g.randint(1, 3), g.randint(3, 5), g.randint(3, 5)))

    return g.float_val(lambda v: v.array.ndim == 4 and (channels is None or v.decl[1] == channels)
                       and v.decl[1] is not None and v.array.size <= 120 and bounded(1e3)(v), make=make)


def _window(g: Gen) -> dict[str, Any]:
    props: dict[str, Any] = {"strides": [g.randint(1, 2), g.randint(1, 2)]}
    algo = g.choice(["EXPLICIT", "EXPLICIT", "SAME", "VALID"])
    if algo != "EXPLICIT":
        props["padding_algorithm"] = algo
    props["paddings"] = [g.randint(0, 1) for _ in range(g.choice([2, 4]))]
    return props


@spec(pd.Conv2DOp)
def _conv2d(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = _image(g)
    c = g.val(x).array.shape[1]
    groups = g.choice([d for d in (1, 2, 3) if c % d == 0])
    o = groups * g.randint(1, 2)
    kh, kw = g.randint(1, 3), g.randint(1, 3)
    if max(kh, kw) > min(g.val(x).array.shape[2:]):
        raise Rejected("window larger than the image")
    w = g.add_input(g.floats((o, c // groups, kh, kw)) * 0.5)
    props = _window(g)
    props["groups"] = groups
    if g.coin(0.2):
        props["dilations"] = [g.randint(1, 2), 1]
    return (x, w), props


@spec(pd.Conv2DTransposeOp)
def _conv2d_transpose(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = _image(g)
    c = g.val(x).array.shape[1]
    groups = g.choice([d for d in (1, 2, 3) if c % d == 0])
    w = g.add_input(g.floats((c, g.randint(1, 2), g.randint(1, 3), g.randint(1, 3))) * 0.5)
    props: dict[str, Any] = {"strides": [g.randint(1, 2), g.randint(1, 2)], "paddings": [g.randint(0, 1), g.randint(0, 1)],
                             "groups": groups}
    if g.coin(0.3):
        props["output_padding"] = [g.randint(0, props["strides"][0] - 1), g.randint(0, props["strides"][1] - 1)]
    return (x, w), props


@spec(pd.Pool2DOp)
def _pool2d(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = _image(g)
    props = _window(g)
    props["pooling_type"] = g.choice(["max", "avg"])
    props["ksize"] = [g.randint(1, 3), g.randint(1, 3)]
    if props.get("padding_algorithm") != "VALID" and g.coin(0.3):
        props["ceil_mode"] = True
    if g.coin(0.3):
        props["exclusive"] = False
    if g.coin(0.1):
        props["global_pooling"] = True
    elif g.coin(0.15):
        props = {"pooling_type": props["pooling_type"], "ksize": [g.randint(1, 3), g.randint(1, 3)], "adaptive": True}
    return (x,), props


@spec(pd.LayerNormOp)
def _layer_norm(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim >= 2 and None not in v.decl[1:] and bounded(1e3)(v))
    shape = g.val(x).array.shape
    begin = g.randint(1, len(shape) - 1)
    n = int(np.prod(shape[begin:]))
    params = [g.add_input(g.floats((n,), 0.5, 1.5)) for _ in range(g.choice([0, 1, 2, 2]))]
    return (x, *params), {"begin_norm_axis": begin, "epsilon": g.choice([1e-5, 1e-3])}


@spec(pd.BatchNormOp)
def _batch_norm(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: 2 <= v.array.ndim <= 4 and v.decl[1] is not None and v.array.shape[0] * int(
        np.prod(v.array.shape[2:])) > 1 and bounded(1e3)(v), make=lambda: g.floats((g.randint(2, 3), g.randint(1, 3), 2)))
    c = g.val(x).array.shape[1]
    scale, bias = g.add_input(g.floats((c,), 0.5, 1.5)), g.add_input(g.floats((c,)))
    mean = g.add_input(g.floats((c,)), grad=False)
    var = g.add_input(g.floats((c,), 0.5, 2.0), grad=False)
    props: dict[str, Any] = {"momentum": g.choice([0.9, 0.5])}
    if g.coin(0.3):
        props["is_test"] = True
    elif g.coin(0.2):
        props["use_global_stats"] = True
    return (x, scale, bias, mean, var), props


@spec(pd.DropoutOp)
def _dropout(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(bounded(1e3))
    props: dict[str, Any] = {"dropout_prob": g.choice([0.0, 0.25, 0.5]), "seed": g.randint(1, 1000)}
    if g.coin(0.3):
        props["dropout_implementation"] = "downgrade_in_infer"
    if g.coin(0.2):
        props["is_test"] = True
    if g.coin(0.3):
        return (x, g.add_input(np.array(g.randint(1, 1000), dtype=np.int64))), props
    return (x,), props


# --- creation (constants other ops read)


@spec(pd.FillConstantOp)
def _fill_constant(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    return (), {"shape": list(g.shape()), "value": g.choice([0.5, -2.0, 1.0]), "dtype": FLOAT}


@spec(pd.FillAnyLikeOp)
def _fill_any_like(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    return (g.float_val(),), {"value": g.choice([0.0, 1.0, -0.5])}


@spec(pd.AssignValueOp)
def _assign_value(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    shape = g.shape()
    values = ArrayAttr([pd.f64_attr(float(v)) for v in np.round(g.floats(shape), 3).ravel()])
    return (), {"shape": list(shape), "values": values, "dtype": FLOAT}


@spec(pd.ArangeOp)
def _arange(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    return (), {"start": g.choice([0.0, -1.5, 2.0]), "end": g.choice([3.0, 4.5]), "step": g.choice([1.0, 0.5]),
                "dtype": FLOAT}


@spec(pd.LinspaceOp)
def _linspace(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    return (), {"start": -1.0, "stop": g.choice([1.0, 2.5]), "num": g.randint(1, 5), "dtype": FLOAT}


@spec(pd.EyeOp)
def _eye(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    return (), {"num_rows": g.randint(1, 4), "num_columns": g.randint(1, 4), "dtype": FLOAT}


# --- indexing


@spec(pd.GatherOp)
def _gather(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0)
    axis = g.choice(g.static_dims(x) or [0])
    n = g.val(x).array.shape[axis]
    index = g.add_input(g.ints(() if g.coin(0.2) else (g.randint(1, 4),), n), dynamic=False)
    return (x, index), {"axis": axis}


@spec(pd.IndexAddOp)
def _index_add(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and None not in v.decl)
    axis = g.randint(0, g.val(x).array.ndim - 1)
    shape = list(g.val(x).array.shape)
    index = g.add_input(g.ints((g.randint(1, 4),), shape[axis]), dynamic=False)
    shape[axis] = g.val(index).array.shape[0]
    return (x, index, g.add_input(g.floats(shape), dynamic=False)), {"axis": axis}


@spec(pd.GatherNdOp)
def _gather_nd(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and None not in v.decl)
    shape = g.val(x).array.shape
    k = g.randint(1, len(shape))
    lead = g.shape(g.randint(1, 2), 6)
    index = np.stack([g.ints(lead, shape[j]) for j in range(k)], axis=-1)
    return (x, g.add_input(index, dynamic=False)), {}


@spec(pd.ScatterNdAddOp)
def _scatter_nd_add(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and None not in v.decl)
    shape = g.val(x).array.shape
    k = g.randint(1, len(shape))
    lead = g.shape(g.randint(1, 2), 6)
    index = np.stack([g.ints(lead, shape[j]) for j in range(k)], axis=-1)
    upd = g.add_input(g.floats((*lead, *shape[k:])), dynamic=False)
    return (x, g.add_input(index, dynamic=False), upd), {}


@spec(pd.ScatterOp)
def _scatter(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and None not in v.decl)
    shape = g.val(x).array.shape
    overwrite = g.coin(0.6)
    m = g.randint(1, shape[0])
    # Overwriting with a repeated index has no single answer (Paddle's last writer
    # wins on CPU only): unique indices there.
    rows = g.rng.permutation(shape[0])[:m] if overwrite else g.ints((m,), shape[0])
    index = g.add_input(np.asarray(rows, dtype=np.int64), dynamic=False)
    upd = g.add_input(g.floats((m, *shape[1:])), dynamic=False)
    return (x, index, upd), {"overwrite": overwrite}


@spec(pd.TakeAlongAxisOp)
def _take_along_axis(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and None not in v.decl)
    shape = list(g.val(x).array.shape)
    axis = g.randint(0, len(shape) - 1)
    n = shape[axis]
    shape[axis] = g.randint(1, 4)
    return (x, g.add_input(g.ints(shape, n), dynamic=False)), {"axis": axis - len(shape) if g.coin(0.3) else axis}


@spec(pd.PutAlongAxisOp)
def _put_along_axis(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and None not in v.decl and bounded(10)(v))
    shape = list(g.val(x).array.shape)
    axis = g.randint(0, len(shape) - 1)
    n = shape[axis]
    reduce = g.choice(["assign", "add", "mul"])
    m = g.randint(1, n)
    # Distinct positions along the axis in each line (a permutation prefix): a
    # repeated position has no single gradient for assign and mul.
    perm = np.argsort(g.rng.random([*shape[:axis], n, *shape[axis + 1:]]), axis=axis)
    index = np.take(perm, np.arange(m), axis=axis).astype(np.int64)
    vals = g.add_input(g.floats(index.shape, 0.5, 1.5), dynamic=False)
    return (x, g.add_input(index, dynamic=False), vals), {"axis": axis, "reduce": reduce}


def _strided(g: Gen, shape: Sequence[int]) -> dict[str, Any]:
    axes = [a for a in range(len(shape)) if g.coin(0.6)] or [len(shape) - 1]
    starts, ends, strides = [], [], []
    for a in axes:
        n = shape[a]
        st = g.choice([1, 2, -1, -2])
        if st > 0:
            s, e = g.randint(0, n - 1), g.choice([n, 10**6, g.randint(1, n)])
        else:
            s, e = g.choice([n - 1, -1, g.randint(0, n - 1)]), g.choice([-(10**6), g.randint(-n - 1, n - 1)])
        starts.append(s)
        ends.append(e)
        strides.append(st)
    return {"axes": axes, "starts": starts, "ends": ends, "strides": strides}


@spec(pd.StridedSliceOp)
def _strided_slice(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and None not in v.decl)
    props = _strided(g, g.val(x).array.shape)
    if 0 in g.val(x).array[_slices(g.val(x).array.shape, props)].shape:
        raise Rejected("empty slice")
    return (x,), props


def _slices(shape: Sequence[int], props: dict[str, Any]) -> tuple[slice, ...]:
    index = [slice(None)] * len(shape)
    for a, s, e, st in zip(props["axes"], props["starts"], props["ends"], props["strides"]):
        index[a] = slice(s, e, st)
    return tuple(index)


@spec(pd.SetValueOp)
def _set_value(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim > 0 and None not in v.decl)
    props = _strided(g, g.val(x).array.shape)
    target = g.val(x).array[_slices(g.val(x).array.shape, props)].shape
    if 0 in target:
        raise Rejected("empty slice")
    vshape = target if g.coin(0.7) else ()
    return (x, g.add_input(g.floats(vshape), dynamic=False)), props


@spec(pd.TrilTriuOp)
def _tril_triu(g: Gen) -> tuple[Sequence[int], dict[str, Any]]:
    x = g.float_val(lambda v: v.array.ndim >= 2, make=lambda: g.floats((g.randint(1, 4), g.randint(1, 4))))
    return (x,), {"diagonal": g.randint(-2, 2), "lower": g.coin()}


BUILT: dict[type[Operation], str] = {
    pd.DataOp: "every program's feeds",
    pd.ParameterOp: "trainable inputs of static programs (scope values, gradients taken)",
    pd.BackwardOp: "every static program's gradients (filled by the autodiff pass)",
    pd.YieldOp: "ends every backward region",
}
"""Ops the fuzzer builds itself in every program, not drawn as steps."""

EXCLUDED: dict[type[Operation], str] = {
    pd.FetchOp: "the executor's fetch marker: backends receive fetch lists (tests/unit/test_executor.py)",
    **{op: "host-only random draw (HOST_ONLY): no native code to compare; seeded draws in tests/unit/test_random.py"
       for op in (pd.UniformRandomOp, pd.GaussianRandomOp, pd.TruncatedGaussianRandomOp, pd.RandintOp,
                  pd.RandpermOp, pd.BernoulliOp)},
    pd.NonzeroOp: "host-only (HOST_ONLY): its result shape depends on the data; tests/unit/test_indexing_ops.py",
    **{op: "gradient op: the fuzzer reaches it through the VJP of "
       + {"pd.lookup_table_grad": "pd.lookup_table", "pd.conv2d_filter_grad": "pd.conv2d",
          "pd.pool2d_grad": "pd.pool2d"}[op.name]
       for op in (pd.LookupTableGradOp, pd.Conv2DFilterGradOp, pd.Pool2DGradOp)},
    **{op: "optimizer update (WRITES_PERSISTABLE): stateful, checked compiled vs interpreter in "
       "tests/unit/test_optimizer_ops.py" for op in pd.OPTIMIZER_OPS},
    **{op: "collective: needs several ranks (tests/unit/test_distributed.py)" for op in pd.DISTRIBUTED_OPS},
    **{op: "control flow: the fuzzer builds no regions; compiled vs interpreter in "
       "tests/unit/test_control_flow.py (stacks: tests/unit/test_compiled_ops.py)"
       for op in pd.CONTROL_OPS},
    **{op: "host-only call of a paddle.jit.to_static program (HOST_ONLY); its forward and backward are "
       "checked against eager, finite differences and the interpreter in tests/unit/test_jit.py"
       for op in (pd.RunProgramOp, pd.RunProgramGradOp)},
    **{op: "fused recurrence: its reserve result is backward-only state that carries no gradient "
       "(as Paddle's Reserve), which a fuzzed step reading it would differentiate; checked against "
       "finite differences, the unrolled cells and compiled code in tests/unit/test_rnn_ops.py"
       for op in (pd.RnnOp, pd.RnnGradOp)},
    pd.PyFuncOp: "host-only call of a registered Python function (HOST_ONLY); its values and Python "
                 "backward are checked against built-in ops in tests/unit/test_host_calls.py",
    **{op: "integer-only (the fuzzer's programs are float); checked against numpy, eager and "
       "static on both backends, in tests/unit/test_math_surface.py"
       for op in (pd.BitwiseAndOp, pd.BitwiseOrOp, pd.BitwiseXorOp)},
    **{op: "host-only LAPACK call (HOST_ONLY): no native code to compare; values against numpy and "
       "gradients against finite differences in tests/unit/test_linalg.py" for op in pd.LINALG_OPS},
    pd.PrintOp: "host-only printing (HOST_ONLY): the identity with a side effect; output and gradient "
                "printing in tests/unit/test_host_calls.py",
}
"""Ops deliberately not fuzzed, with the reason and where they are tested instead."""


def uncovered() -> list[str]:
    """Names of dialect ops neither fuzzed, built by the fuzzer, nor excluded."""
    ops: list[Any] = list(pd.ALL_OPS)
    return [t.name for t in ops if t not in SPECS and t not in BUILT and t not in EXCLUDED]


@dataclass
class Stats:
    """What a fuzzing run did."""

    programs: int = 0
    ops: Counter[str] = field(default_factory=Counter)
    rejected: Counter[str] = field(default_factory=Counter)
    fd_checked: int = 0
    fd_skipped: int = 0
    failures: list[str] = field(default_factory=list)


def _placeholders(decls: Sequence[tuple[tuple[int | None, ...], str]]) -> list[SSAValue]:
    types = [pd.tensor(shape, pd.dtype_from_name(dt)) for shape, dt in decls]
    return list(Block(arg_types=types).args)


def _dtype_of(a: np.ndarray, dtype: str) -> str:
    return dtype if a.dtype.kind == "f" else pd.DTYPE_BY_NUMPY[a.dtype].name


def _resolve(props: dict[str, Any], dtype: str) -> dict[str, Any]:
    return {k: (dtype if v == FLOAT else v) for k, v in props.items()}


def generate(seed: int, n_steps: int | None = None, stats: Stats | None = None,
             ops: Sequence[type[pd.PdOp]] | None = None) -> Case:
    """The random program of `seed` (deterministic), its steps drawn from `ops`
    (default: every op of `SPECS`)."""
    from pullback.frontend.eager import template_for

    g = Gen(seed, "float64")
    g.case.dtype = "float32" if g.coin(0.25) else "float64"
    for _ in range(g.randint(1, 2)):
        shape = g.shape()
        g.add_input(g.floats(shape), dynamic=None, param=bool(shape) and g.coin(0.2))
    ops = sorted(ops or SPECS, key=lambda t: t.name)
    target = n_steps if n_steps is not None else g.randint(3, 10)
    made, tries = 0, 0
    while made < target and tries < 10 * target:
        tries += 1
        op = g.choice(ops)
        mark = (len(g.case.items), len(g.case.producers), len(g.vals))
        try:
            args, props = SPECS[op](g)
            arrays = [g.val(a).array for a in args]
            with np.errstate(all="ignore"):
                tpl = template_for(op, arrays, _resolve(props, "float64"))
                outs = tpl.run(arrays)
            decls = [(g.val(a).decl, _dtype_of(g.val(a).array, "float64")) for a in args]
            dyn_op = op.make(*_placeholders(decls), **_resolve(props, "float64"))
        except (Rejected, ValueError, VerifyException, IndexError, TypeError) as e:
            if stats is not None:
                stats.rejected[f"{op.name}: {type(e).__name__}: {str(e)[:120]}"] += 1
            del g.case.items[mark[0]:], g.case.producers[mark[1]:], g.vals[mark[2]:]
            continue
        if any(o.dtype.kind == "f" and (not np.all(np.isfinite(o)) or np.any(np.abs(o) > 1e6)) for o in outs):
            if stats is not None:
                stats.rejected[f"{op.name}: values out of range"] += 1
            del g.case.items[mark[0]:], g.case.producers[mark[1]:], g.vals[mark[2]:]
            continue
        g.case.items.append(Step(op, tuple(args), props))
        g.consumed.update(args)
        for r, (o, res) in enumerate(zip(outs, dyn_op.results)):
            g.case.producers.append((len(g.case.items) - 1, r))
            decl = tuple(None if d == pd.DYN else d for d in pd.shape_of(res.type))
            g.vals.append(Val(np.asarray(o), decl))
        made += 1
    # Float results of the case's type (not pd.accuracy's fixed float32).
    floats = [i for i, v in enumerate(g.vals) if v.array.dtype == np.float64 and v.array.size > 0]
    terms = [i for i in floats if i not in g.consumed or g.coin(0.3)]
    g.case.terms = terms or floats[-1:]
    g.case.projections = {t: g.rng.standard_normal(g.vals[t].array.shape) for t in g.case.terms}
    return g.case


def case_from(inputs: Sequence[np.ndarray], steps: Sequence[tuple[type[pd.PdOp], Sequence[int], dict[str, Any]]],
              terms: Sequence[int] | None = None, dtype: str = "float64", seed: int = 0,
              dynamic: Sequence[int] = ()) -> Case:
    """A hand-written case (a regression test of a fuzzer finding): `inputs` are
    values 0.., each step's results are numbered after them; the loss projects
    `terms` (default: the last value) with seeded random projections; the inputs
    numbered in `dynamic` declare dimension 0 dynamic."""
    from pullback.frontend.eager import template_for

    rng = np.random.default_rng(seed)
    case = Case(seed, dtype)
    arrays: list[np.ndarray] = []
    for k, a in enumerate(inputs):
        case.items.append(Input(np.asarray(a), dynamic=k in dynamic, grad=np.asarray(a).dtype.kind == "f"))
        case.producers.append((len(case.items) - 1, 0))
        arrays.append(np.asarray(a))
    for op, args, props in steps:
        outs = template_for(op, [arrays[a] for a in args], _resolve(props, "float64")).run([arrays[a] for a in args])
        case.items.append(Step(op, tuple(args), dict(props)))
        for r, o in enumerate(outs):
            case.producers.append((len(case.items) - 1, r))
            arrays.append(o)
    case.terms = list(terms) if terms is not None else [len(arrays) - 1]
    case.projections = {t: rng.standard_normal(arrays[t].shape) for t in case.terms}
    return case


# ------------------------------------------------------------------ building


@dataclass
class Static:
    """A case as a static `pd` module with its filled backward region."""

    module: ModuleOp
    feeds: dict[str, np.ndarray]
    scope: dict[str, np.ndarray]
    values: list[SSAValue]
    loss: SSAValue
    grads: dict[int, SSAValue]


def _cast_input(a: np.ndarray, dtype: str) -> np.ndarray:
    return a.astype(dtype) if a.dtype.kind == "f" else a


def build_static(case: Case) -> Static:
    """The case's static program: data/parameter ops, the steps, the projected loss
    and a `pd.backward` over the grad inputs, differentiated."""
    from pullback.passes.autodiff import differentiate

    ops: list[Operation] = []
    values: list[SSAValue] = []
    feeds: dict[str, np.ndarray] = {}
    scope: dict[str, np.ndarray] = {}
    grad_inputs: list[tuple[int, SSAValue]] = []
    for k, it in enumerate(case.items):
        if isinstance(it, Input):
            a = _cast_input(it.array, case.dtype)
            name = f"in{k}"
            dt = _dtype_of(a, case.dtype)
            op: Operation
            if it.param:
                op = pd.ParameterOp.make(name, list(a.shape), dt)
                scope[name] = a
            else:
                op = pd.DataOp.make(name, [None if it.dynamic and i == 0 else d for i, d in enumerate(a.shape)], dt)
                feeds[name] = a
            ops.append(op)
            values.append(op.results[0])
            if it.grad:
                grad_inputs.append((len(values) - 1, op.results[0]))
        else:
            op = it.op.make(*[values[a] for a in it.args], **_resolve(it.props, case.dtype))
            ops.append(op)
            values.extend(op.results)
    terms: list[SSAValue] = []
    for j, t in enumerate(case.terms):
        v = values[t]
        shape = pd.shape_of(v.type)
        proj = pd.DataOp.make(f"proj{j}", list(shape), pd.dtype_name(pd.elem_of(v.type)))
        feeds[f"proj{j}"] = case.projections[t].astype(case.dtype)
        mul = pd.ElementwiseMulOp.make(v, proj.out)
        red = pd.ReduceSumOp.make(mul.out)
        ops += [proj, mul, red]
        terms.append(red.out)
    loss: SSAValue = terms[0]
    if len(terms) > 1:
        total = pd.SumOp.make(*terms)
        ops.append(total)
        loss = total.out
    module = ModuleOp(ops)
    grads: dict[int, SSAValue] = {}
    if grad_inputs:
        bw = pd.BackwardOp.make([loss], [v for _, v in grad_inputs])
        module.body.block.add_op(bw)
        bw = differentiate(bw)
        by_wrt = dict(zip(bw.wrt, bw.grads))
        # An input the loss does not depend on gets no gradient value.
        grads = {i: by_wrt[w] for i, w in grad_inputs if w in by_wrt}
    module.verify()
    return Static(module, feeds, scope, values, loss, grads)


# ------------------------------------------------------------------- checking


class Mismatch(AssertionError):
    """A difference between backends or against finite differences."""


def _tolerances(dtype: str) -> tuple[float, float]:
    return (2e-4, 2e-4) if dtype == "float32" else (1e-7, 1e-8)


def _compare(what: str, got: np.ndarray, want: np.ndarray, dtype: str) -> None:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        raise Mismatch(f"{what}: shape {list(got.shape)}, reference {list(want.shape)}")
    if got.dtype != want.dtype:
        raise Mismatch(f"{what}: dtype {got.dtype}, reference {want.dtype}")
    if got.dtype.kind != "f":
        if not np.array_equal(got, want):
            raise Mismatch(f"{what}: {got.ravel()[:8]} vs reference {want.ravel()[:8]}")
        return
    rtol, atol = _tolerances(dtype)
    nan_g, nan_w = np.isnan(got), np.isnan(want)
    if not np.array_equal(nan_g, nan_w):
        raise Mismatch(f"{what}: NaN at {np.argwhere(nan_g != nan_w)[:3].tolist()} on one side only")
    finite = np.isfinite(want)
    scale = max(1.0, float(np.max(np.abs(want[finite]), initial=0.0)))
    with np.errstate(all="ignore"):  # inf - inf where both are inf: compared by ==
        diff = np.abs(got - want)
    ok = np.where(finite, diff <= rtol * np.abs(want) + atol * scale, got == want)
    if not np.all(ok | nan_w):
        bad = np.argwhere(~(ok | nan_w))[0]
        raise Mismatch(f"{what}: {got[tuple(bad)]!r} vs reference {want[tuple(bad)]!r} at {bad.tolist()} "
                       f"(max |diff| {float(np.nanmax(np.where(finite, diff, 0))):.3g}, scale {scale:.3g})")


def _describe(case: Case, v: int) -> str:
    i, r = case.producers[v]
    it = case.items[i]
    if isinstance(it, Input):
        return f"input in{i}"
    return f"{it.op.name} (step {i}) result #{r}"


def check_case(case: Case, stats: Stats | None = None, eager: bool = True, fd: bool = True) -> None:
    """Run the case on every backend and against finite differences; raises
    Mismatch (or the exception a backend raised) on the first problem."""
    from pullback.runtime.native.backend import CompiledBackend
    from pullback.runtime.interpreter import run_module

    st = build_static(case)
    fetch = [*st.values, st.loss, *st.grads.values()]
    with np.errstate(all="ignore"):
        env = run_module(st.module, st.feeds, {k: v.copy() for k, v in st.scope.items()})
    ref = [env[v] for v in fetch]
    backend = CompiledBackend(fallback=False)
    scope = {k: v.copy() for k, v in st.scope.items()}
    got = backend.run(st.module, st.feeds, scope, fetch)
    names = [_describe(case, v) for v in range(len(st.values))] + ["loss"] + [
        f"gradient of {_describe(case, i)}" for i in st.grads]
    for n, a, b in zip(names, got, ref):
        _compare(f"compiled vs interpreter: {n}", a, b, case.dtype)
    if fd and case.dtype == "float64":
        _check_fd(case, st, backend, fetch, dict(zip(st.grads, ref[len(st.values) + 1:])), stats)
    if eager:
        _check_eager(case, st, ref)


def _check_fd(case: Case, st: Static, backend: Any, fetch: list[SSAValue], grads: dict[int, np.ndarray],
              stats: Stats | None) -> None:
    """Gradients against central differences of the compiled loss, elementwise;
    elements where the left and right differences disagree (kinks) are skipped."""
    if any(isinstance(it, Step) and it.op is pd.CastOp and it.props["dtype"] == "float32" for it in case.items):
        return  # rounding to float32 inside would swamp the differences

    def loss(name: str, a: np.ndarray) -> float:
        feeds = dict(st.feeds)
        scope = {k: v.copy() for k, v in st.scope.items()}
        (feeds if name in feeds else scope)[name] = a
        # The checked fetch list, so that the compiled program is reused, not rebuilt.
        return float(backend.run(st.module, feeds, scope, fetch)[len(st.values)])

    f0 = float(loss(next(iter(st.feeds)), next(iter(st.feeds.values()))))
    if not np.isfinite(f0):
        return
    for v, g in grads.items():
        i, _ = case.producers[v]
        name = f"in{i}"
        x0 = (st.feeds if name in st.feeds else st.scope)[name]
        for j in range(x0.size):
            x = x0.copy()
            h = 1e-6 * max(1.0, abs(float(x.flat[j])))
            x.flat[j] += h
            hi = loss(name, x)
            x.flat[j] -= 2 * h
            lo = loss(name, x)
            left, right = (f0 - lo) / h, (hi - f0) / h
            num = (hi - lo) / (2 * h)
            if not (np.isfinite(hi) and np.isfinite(lo)) or abs(left - right) > 1e-3 * (1 + abs(left) + abs(right)):
                if stats is not None:
                    stats.fd_skipped += 1
                continue
            ana = float(g.flat[j])
            if stats is not None:
                stats.fd_checked += 1
            if not abs(ana - num) <= 1e-4 * abs(num) + 1e-5 * max(1.0, float(np.max(np.abs(g)))):
                raise Mismatch(f"gradient of {_describe(case, v)} at {np.unravel_index(j, x0.shape)}: "
                               f"{ana!r}, finite differences {num!r}")


def _check_eager(case: Case, st: Static, ref: list[np.ndarray]) -> None:
    """The same program run eagerly (Tensors, paddle.grad) against the interpreter."""
    from pullback.frontend.autograd import grad
    from pullback.frontend.eager import Tensor, eager_apply, to_tensor

    tensors: list[Tensor] = []
    leaves: list[tuple[int, Tensor]] = []
    for it in case.items:
        if isinstance(it, Input):
            a = _cast_input(it.array, case.dtype)
            t = to_tensor(a, stop_gradient=not it.grad)
            tensors.append(t)
            if it.grad:
                leaves.append((len(tensors) - 1, t))
        else:
            out = eager_apply(it.op, [tensors[a] for a in it.args], prefix=it.op.name[3:], **_resolve(it.props, case.dtype))
            tensors.extend(out if isinstance(out, list) else [out])
    total: Any = None
    for k in case.terms:
        term = eager_apply(pd.ReduceSumOp, [eager_apply(pd.ElementwiseMulOp, [tensors[k], to_tensor(
            case.projections[k].astype(case.dtype))], prefix="mul")], prefix="sum")
        total = term if total is None else eager_apply(pd.SumOp, [total, term], prefix="sum")
    assert isinstance(total, Tensor)
    for v, tv in enumerate(tensors):
        _compare(f"eager vs interpreter: {_describe(case, v)}", tv.numpy(), ref[v], case.dtype)
    if leaves:
        gs = grad([total], [t for _, t in leaves], allow_unused=True)
        for (v, _), gv in zip(leaves, gs):
            if v in st.grads:
                want = ref[len(st.values) + 1 + list(st.grads).index(v)]
            else:
                want = np.zeros(case.items[case.producers[v][0]].array.shape, case.dtype)  # type: ignore[union-attr]
            got = np.zeros_like(want) if gv is None else gv.numpy()
            _compare(f"eager vs interpreter: gradient of {_describe(case, v)}", got, want, case.dtype)


# ------------------------------------------------------------------- shrinking


def _failure(case: Case, **kw: Any) -> str | None:
    try:
        check_case(case, **kw)
    except Exception as e:  # noqa: BLE001 - any failure counts; the report shows it
        return f"{type(e).__name__}: {e}"
    return None


def shrink(case: Case, first: str, budget_s: float = 60.0) -> Case:
    """The smallest case found (deleting steps, then loss terms) that still fails
    with an error of the same kind as `first`."""
    kind = first.split(":", 1)[0]
    t_end = time.monotonic() + budget_s
    changed = True
    while changed and time.monotonic() < t_end:
        changed = False
        for k in reversed(range(len(case.items))):
            if k >= len(case.items) or time.monotonic() > t_end:
                continue
            for cand in (case.without({k}), case.cut(k)):
                if cand is None:
                    continue
                err = _failure(cand)
                if err is not None and err.split(":", 1)[0] == kind:
                    case, changed = cand, True
                    break
        for t in list(case.terms):
            if len(case.terms) > 1 and time.monotonic() < t_end:
                cand = case.without(set(), {t})
                err = None if cand is None else _failure(cand)
                if cand is not None and err is not None and err.split(":", 1)[0] == kind:
                    case, changed = cand, True
    return case


def reproducer(case: Case, error: str) -> str:
    """A failing case in words: the error, the IR, the feeds, how to replay it."""
    lines = [f"fuzz seed {case.seed} ({case.dtype}): {error}",
             f"minimal program ({len(case.steps())} ops):"]
    try:
        st = build_static(case)
        lines.append(str(st.module))
    except Exception as e:  # noqa: BLE001 - the report must come out whatever failed
        lines.append(f"(the static program does not build: {e})")
        lines += [f"  {s.op.name}{list(s.args)} {s.props}" for s in case.steps()]
    with np.printoptions(precision=17, threshold=200):
        for k, it in enumerate(case.items):
            if isinstance(it, Input):
                lines.append(f"in{k} = np.{np.asarray(_cast_input(it.array, case.dtype))!r}")
    lines.append(f"replay: python -m pullback.testing.fuzz --seed {case.seed}")
    return "\n".join(lines)


# ------------------------------------------------------------------- driving


def run(seeds: Sequence[int] | None = None, seconds: float | None = None, start: int = 0,
        eager: bool = True, shrink_s: float = 60.0, log: Callable[[str], None] | None = None,
        ops: Sequence[type[pd.PdOp]] | None = None) -> Stats:
    """Check `seeds`, or consecutive seeds from `start` until `seconds` have passed,
    on programs drawn from `ops` (default all); the returned Stats list each
    failure's reproducer."""
    stats = Stats()
    t_end = None if seconds is None else time.monotonic() + seconds
    it: Any = iter(seeds) if seeds is not None else itertools.count(start)
    for seed in it:
        if t_end is not None and time.monotonic() > t_end:
            break
        case = generate(seed, stats=stats, ops=ops)
        stats.programs += 1
        stats.ops.update(s.op.name for s in case.steps())
        try:
            check_case(case, stats, eager=eager)
        except Exception as e:  # noqa: BLE001 - every failure is reported with its reproducer
            err = f"{type(e).__name__}: {e}"
            if not isinstance(e, Mismatch):
                err += "\n" + "".join(traceback.format_exception(e)[-4:])
            small = shrink(case, err, shrink_s)
            report = reproducer(small, _failure(small) or err)
            stats.failures.append(report)
            if log is not None:
                log(report)
    return stats


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m pullback.testing.fuzz`: fuzz for a time or replay seeds."""
    p = argparse.ArgumentParser(prog="python -m pullback.testing.fuzz", description=__doc__.split("\n\n")[0])
    p.add_argument("--seconds", type=float, default=60.0, help="fuzz consecutive seeds for this long (default 60)")
    p.add_argument("--start", type=int, default=0, help="first seed of a timed run (default 0)")
    p.add_argument("--seed", type=int, action="append", help="replay this seed (repeatable)")
    p.add_argument("--no-eager", action="store_true", help="static programs only")
    p.add_argument("--ops", help="comma-separated op names to draw from (default: every fuzzed op)")
    p.add_argument("--coverage", action="store_true", help="list ops fuzzed, built and excluded, and exit")
    args = p.parse_args(argv)
    if args.coverage:
        all_ops: list[Any] = list(pd.ALL_OPS)
        for t in all_ops:
            why = "fuzzed" if t in SPECS else BUILT.get(t) or EXCLUDED.get(t) or "NOT COVERED"
            print(f"{t.name:32} {why}")
        return 1 if uncovered() else 0
    by_name = {t.name: t for t in SPECS}
    ops = None
    if args.ops:
        names = [n if n.startswith("pd.") else f"pd.{n}" for n in args.ops.split(",")]
        bad = [n for n in names if n not in by_name]
        if bad:
            p.error(f"not fuzzed: {', '.join(bad)} (see --coverage)")
        ops = [by_name[n] for n in names]
    t0 = time.monotonic()
    stats = run(args.seed, None if args.seed else args.seconds, args.start, not args.no_eager,
                log=lambda s: print(s + "\n", file=sys.stderr, flush=True), ops=ops)
    dt = time.monotonic() - t0
    print(f"{stats.programs} programs ({sum(stats.ops.values())} ops, {len(stats.ops)} kinds) in {dt:.0f} s; "
          f"{stats.fd_checked} gradient elements checked against finite differences "
          f"({stats.fd_skipped} at kinks skipped); {len(stats.failures)} failures")
    never = sorted(t.name for t in (ops or SPECS) if t.name not in stats.ops)
    if never and not args.seed:
        print(f"ops not drawn in this run: {', '.join(never)}")
    return 1 if stats.failures else 0


if __name__ == "__main__":
    sys.exit(main())
