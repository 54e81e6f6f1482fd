"""The one registry of op lowerings, keyed by op class: `LOWERINGS[OpClass]`.

Each op family's lowering lives in `lowering/<family>.py` and registers itself here
with decorators, all writing into the op class's `OpLowering`:

* `@pointwise(pd.FooOp, maps=...)`: the op computes each result element from
  operand elements at indices given by projection maps (`DimMap`), and its
  `body(s, op, args)` builds that scalar computation (`lowering/scalar.py`).  The
  `Lowerer` materializes it as a `linalg.generic`, or inlines it into each reader
  (fusion, `lowering/lowerer/fusion_plan.py`).
* `@lowers(pd.FooOp, fusible=...)`: the op has a rule `rule(low, op)` that emits
  its IR; `fusible(op)` lists the operands it reads through `Lowerer.generic` over
  their own full shape, into which elementwise producers may be inlined.
* `@result_sizes(pd.FooOp)`: how a dynamic dimension of a result is found from the
  operands' sizes (pointwise ops get theirs from their maps).
* `@range_check(pd.FooOp, operand=i)`: the run-time range check of an integer
  operand (ids, labels); `@folds(pd.FooOp)`: how a reduction of a whole operand is
  computed inside another loop (multi-output fusion, `lowering/fusion.py`).

Rules receive the typed op and read its properties with `op.prop(name)` (the
declared default when absent).  Facts the lowering needs about an op class beyond
its rule are declared on the class in the dialect (`PdOp.HOST_ONLY`, `EXPENSIVE`,
`VIEW`, `WRITES_PERSISTABLE`).  The queries at the end (`fusible_operands`,
`shape_only`) answer what fusion planning and emission ask of an op's entry.

The registry names the `Lowerer` only in types: the lowerer reads the registry, and
the family modules import both.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from xdsl.ir import Operation, SSAValue

from pullback.dialects.pd.base import PdOp, shape_of
from pullback.lowering.scalar import DimMap, Scalar, is_identity_map, numpy_maps, result_shape

if TYPE_CHECKING:
    from pullback.lowering.lowerer import Lowerer
    from pullback.lowering.lowerer.sizes import Size

Rule = Callable[["Lowerer", Any], None]
"""`rule(low, op)`: emit the IR of one op (typed: each rule names its op classes)."""
Body = Callable[["Scalar", Any, list[SSAValue]], list[SSAValue]]
"""`body(s, op, args)`: one scalar per result from the loaded operand scalars."""
Maps = Callable[[Any], Sequence["DimMap | None"]]
"""`maps(op)`: per operand, its `DimMap` onto the loop (None: only its shape is used)."""
Fusible = Callable[[Any], Sequence[int]]
"""`fusible(op)`: operand positions a rule reads through `Lowerer.generic` over the
operand's own full shape."""
SizeRule = Callable[["Lowerer", Any, SSAValue, int], "Size | None"]
"""`sizes(low, op, result, k)`: dynamic dimension `k` of `result` (None: not known)."""
Check = Callable[["Lowerer", Any], None]
"""`check(low, op)`: emit the run-time range check of an op's integer operand."""


# ---------------------------------------------------------------- entries


@dataclass
class Fold:
    """A reduction of every element of one operand into one value, as a step of a
    loop that may compute other things too (`lowering/fusion.py`): the result
    buffer is filled with `init`, each element is combined in with `combine(s, acc,
    x)`, then `finish(low, op, out)` (if any) runs on the result (a mean's division)."""

    operand: int
    init: float
    combine: Callable[[Scalar, SSAValue, SSAValue], SSAValue]
    finish: Callable[[Lowerer, Any, SSAValue], None] | None = None


FoldRule = Callable[[Any], "Fold | None"]
"""`fold(op)`: the `Fold` of an op that reduces a whole operand (None: this one does not)."""


@dataclass
class OpLowering:
    """Everything the lowering knows about one op class (one entry of `LOWERINGS`)."""

    rule: Rule | None = None
    body: Body | None = None
    maps: Maps | None = None
    fusible: Fusible | None = None
    sizes: SizeRule | None = None
    check: Check | None = None
    """Run before the op (inlined or not): checks the ids/labels it indexes with."""
    checked_operand: int = -1
    """The operand `check` reads: it always gets a buffer of its own."""
    fold: FoldRule | None = None
    """When the op reduces every element of an operand into one value (a loss):
    how, so that multi-output fusion may compute it in a loop with others."""

    @property
    def is_pointwise(self) -> bool:
        """Lowered from its scalar body (and fusible into readers), not by a rule."""
        return self.body is not None and self.rule is None


LOWERINGS: dict[type[Operation], OpLowering] = {}
"""The lowering of every op class the pass knows (filled by the family modules)."""


# ------------------------------------------------------------ registration


def _entry(op_type: type[Operation]) -> OpLowering:
    """The entry of `op_type`, made on its first registration."""
    return LOWERINGS.setdefault(op_type, OpLowering())


def lowers(*op_types: type[Operation], fusible: Fusible | None = None) -> Callable[[Rule], Rule]:
    """Register the rule lowering one or more op classes (and which of their
    operands elementwise producers may be fused into)."""

    def register(fn: Rule) -> Rule:
        for t in op_types:
            entry = _entry(t)
            entry.rule = fn
            entry.fusible = fusible
        return fn

    return register


def pointwise(*op_types: type[PdOp], maps: Maps = numpy_maps) -> Callable[[Body], Body]:
    """Register the scalar body of one or more pointwise op classes and how their
    operands are indexed (`maps`)."""

    def register(fn: Body) -> Body:
        for t in op_types:
            if not t.POINTWISE:
                raise TypeError(f"@pointwise for {t.__name__}, which does not declare POINTWISE = True")
            entry = _entry(t)
            entry.body = fn
            entry.maps = maps
        return fn

    return register


def folds(*op_types: type[PdOp]) -> Callable[[FoldRule], FoldRule]:
    """Register how one or more reduction op classes reduce a whole operand (`Fold`),
    for multi-output fusion; the op keeps its own rule for every other case."""

    def register(fn: FoldRule) -> FoldRule:
        for t in op_types:
            _entry(t).fold = fn
        return fn

    return register


def range_check(*op_types: type[PdOp], operand: int) -> Callable[[Check], Check]:
    """Register the run-time range check of one or more op classes, reading their
    integer operand `operand` (`loop_nest.check_range` does the work): an id or
    label out of range is reported as the interpreter raises it."""

    def register(fn: Check) -> Check:
        for t in op_types:
            entry = _entry(t)
            entry.check, entry.checked_operand = fn, operand
        return fn

    return register


def result_sizes(*op_types: type[PdOp]) -> Callable[[SizeRule], SizeRule]:
    """Register how dynamic result dimensions of one or more op classes are found."""

    def register(fn: SizeRule) -> SizeRule:
        for t in op_types:
            _entry(t).sizes = fn
        return fn

    return register


# ----------------------------------------------------------------- queries


def lowering_of(op: Operation) -> OpLowering | None:
    """The registered lowering of `op`'s class (None: the pass cannot lower it)."""
    return LOWERINGS.get(type(op))


def fusible_operands(op: Operation) -> Sequence[int]:
    """Operand positions of `op` that can read an inlined pointwise expression."""
    entry = LOWERINGS.get(type(op))
    if entry is None:
        return ()
    if entry.is_pointwise:
        assert entry.maps is not None
        rank = len(result_shape(op))
        return [
            i for i, m in enumerate(entry.maps(op))
            if is_identity_map(m, rank) and shape_of(op.operands[i].type) == result_shape(op)
        ]
    return entry.fusible(op) if entry.fusible else ()


def fuse_first_operand(op: Operation) -> Sequence[int]:
    """A `fusible` rule: the first operand is read over its own full shape."""
    return (0,)


def sizes_of_first(low: Lowerer, op: Operation, r: SSAValue, k: int) -> Size | None:
    """A size rule: dimension `k` is the first operand's (the leading dimensions of a
    loss, all of them for shape-preserving ops)."""
    return low.sizes_of(op.operands[0])[k]


def shape_only(op: Operation, i: int) -> bool:
    """True when `op` reads only the shape of its operand `i` (fill_any_like)."""
    entry = LOWERINGS.get(type(op))
    if entry is None or not entry.is_pointwise:
        return False
    assert entry.maps is not None
    maps = entry.maps(op)
    return i < len(maps) and maps[i] is None


__all__ = [
    "LOWERINGS",
    "Fold",
    "FoldRule",
    "OpLowering",
    "folds",
    "fuse_first_operand",
    "fusible_operands",
    "lowering_of",
    "lowers",
    "pointwise",
    "range_check",
    "result_sizes",
    "shape_only",
    "sizes_of_first",
]
