"""What an op spec draws with: the state of one program's generation (`Gen`: the
random stream, the values made so far, new inputs), value predicates, and `Draw`,
which turns an operand's declared input domain (the op class's `DOMAIN`) into the
predicate and the range a spec draws that operand from.

A *spec* (`Spec`) is a function `Gen -> (operands, properties)`: it picks existing
values or makes new inputs, and raises `Rejected` when it cannot apply to the values
at hand.  The specs themselves, one per op class, are in `specs/`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pullback.dialects import pd

from .case import Case, Input


@dataclass
class Val:
    """A value while generating: its float64 (or integer) array and declared shape."""

    array: np.ndarray
    decl: tuple[int | None, ...]

    @property
    def is_float(self) -> bool:
        """A floating-point value (gradients flow through it)."""
        return self.array.dtype.kind == "f"


Pred = Callable[[Val], bool]
"""Whether a value suits an operand."""


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

    def pick(self, pred: Pred = lambda v: True, kind: str = "f") -> int | None:
        """A value of dtype kind `kind` satisfying `pred`, favouring recent values
        (chains) but reaching any (fan-out); None if there is none."""
        ok = [i for i, v in enumerate(self.vals) if v.array.dtype.kind == kind and pred(v)]
        if not ok:
            return None
        if self.coin(0.6):
            return ok[-1 - min(self.randint(0, 2), len(ok) - 1)]
        return self.choice(ok)

    def float_val(self, pred: Pred = lambda v: True, *, make: Callable[[], np.ndarray] | None = None,
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


def registry(table: dict[type[pd.PdOp], Spec]) -> Callable[..., Callable[[Spec], Spec]]:
    """A decorator registering a spec in `table` for op classes:
    `@spec(pd.FooOp, pd.BarOp) def _foo(g): ...`."""

    def spec(*ops: type[pd.PdOp]) -> Callable[[Spec], Spec]:
        def deco(fn: Spec) -> Spec:
            for op in ops:
                table[op] = fn
            return fn

        return deco

    return spec


def bounded(limit: float) -> Pred:
    """Values whose entries are all finite and within +-limit."""
    return lambda v: v.array.size > 0 and bool(np.all(np.abs(v.array) < limit))


def within(lo: float, hi: float) -> Pred:
    """Values whose entries all lie in (lo, hi)."""
    return lambda v: v.array.size > 0 and bool(np.all((v.array > lo) & (v.array < hi)))


@dataclass(frozen=True)
class Draw:
    """How a spec draws a float operand from its declared domain (`op.DOMAIN`, read
    with `op.input_domain(name)`): the margins and magnitudes are the fuzzer's
    choice (steep functions stay away from their edges), the domain is the op's.

    An existing value qualifies (`pred`) when every entry lies more than `margin`
    inside the domain (and its excluded points) and, with a `limit`, below it in
    magnitude; with neither a domain nor a limit every value does.  A new input
    (`range`) is uniform in `fresh`, if given, or else in the domain narrowed by
    `fresh_margin` and clipped to [-span, span] (span 3 by default where the domain
    is bounded; `(None, None)`, standard normal values, where nothing bounds it)."""

    margin: float = 0.05
    limit: float | None = None
    fresh_margin: float = 0.1
    span: float | None = None
    fresh: tuple[float, float] | None = None

    def pred(self, domain: pd.Domain) -> Pred:
        """Whether an existing value suits the operand."""
        if domain.unbounded and self.limit is None:
            return lambda v: True
        limit = np.inf if self.limit is None else self.limit
        return lambda v: v.array.size > 0 and bool(
            np.all(domain.contains(v.array, self.margin) & (np.abs(v.array) < limit)))

    def range(self, domain: pd.Domain) -> tuple[float | None, float | None]:
        """The interval new inputs are drawn from uniformly, or `(None, None)`."""
        if self.fresh is not None:
            return self.fresh
        span = self.span if self.span is not None else None if domain.unbounded else 3.0
        if span is None:
            return None, None
        return domain.interval(self.fresh_margin, -span, span)


__all__ = ["Draw", "Gen", "Pred", "Rejected", "Spec", "Val", "bounded", "registry", "within"]
