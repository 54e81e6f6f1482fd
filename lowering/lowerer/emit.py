"""The emission layer of the `Lowerer`: `linalg.generic` loops with fusion applied.

`Emission.generic` is how rules and the driver build a loop over an iteration
space: each read of a `pd` value either loads from the value's buffer or, when the
fusion plan inlined the value (`FusionPlan.inline`), expands into the scalar code of
its producer (recursively, each expression built once per body and map), so a
chain of elementwise ops becomes one loop.  A pointwise op that stays materialized
is one such loop (`pointwise_generic`); a multi-output group builds its body lazily
through `BodyReads` (`lowering/fusion.py`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects.builtin import AffineMapAttr, StringAttr
from xdsl.dialects.linalg import attrs as linalg_attrs
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.rewriter import InsertPoint

from pullback.lowering.build import fill_op, generic_op, make
from pullback.lowering.lowerer.fusion_plan import FusionPlan
from pullback.lowering.lowerer.sizes import Size
from pullback.lowering.registry import LOWERINGS, fusible_operands
from pullback.lowering.scalar import DimMap, Scalar, affine, identity_map, result_shape
from pullback.lowering.views import elem_of_buffer


def _dims_of(m: AffineMap) -> set[int]:
    """The loop dimensions an affine map reads."""
    return {e.position for e in m.results if isinstance(e, AffineDimExpr)}


@dataclass
class BodyReads:
    """How a lazily built `linalg.generic` body reads `pd` values
    (`Lowerer.generic(lazy=...)`): `load` expands inlined values (each computed
    once per body and map) and reads the others from their buffers; `define` makes
    a value computed in the body a register for the later reads of the body."""

    scalar: Scalar
    """The body's scalar builder."""
    outs: list[SSAValue]
    """The outputs' current values (block arguments), in `outs` order."""
    load: Callable[[SSAValue, DimMap, bool], SSAValue]
    """`load(v, map, fusible)`: the scalar of `v` at `map`."""
    define: Callable[[SSAValue, DimMap, SSAValue], None]
    """`define(v, map, scalar)`: later loads of `v` at `map` give `scalar`."""


@dataclass
class Emission(FusionPlan):
    """Builds `linalg.generic` loops whose reads expand the inlined values."""

    def generic(
        self,
        domain: Sequence[Size],
        reads: Sequence[tuple[SSAValue, DimMap, bool]],
        outs: Sequence[tuple[SSAValue, DimMap]],
        body: Callable[[Scalar, list[SSAValue], list[SSAValue]], list[SSAValue]],
        reductions: Sequence[int] = (),
        library_call: str | None = None,
        scalars: Sequence[SSAValue] = (),
        lazy: Callable[[BodyReads], list[SSAValue]] | None = None,
    ) -> linalg.GenericOp:
        """Emit a `linalg.generic` over `domain`.

        `reads` are `(pd value, map, fusible)`: a fusible read of an inlined value
        expands into its scalar expression, its leaves read from buffers.  `outs` are
        `(memref, map)`.  `scalars` are loop-invariant scalar inputs.  `body(s, reads,
        outs)` gets the read scalars and the current output values and returns the
        values to store.  With `lazy`, `reads` and `body` are unused: `lazy(reads)`
        loads what it needs as it goes (`BodyReads`) and returns the values to store
        (a multi-output fused loop, `lowering/fusion.py`).
        """
        rank = len(domain)
        block = Block()
        inputs: list[SSAValue] = []
        in_maps: list[AffineMap] = []
        leaf: dict[tuple[SSAValue, DimMap], SSAValue] = {}
        s = Scalar(Builder(InsertPoint.at_end(block)))
        out_args = [block.insert_arg(elem_of_buffer(m), len(block.args)) for m, _ in outs]

        def add_input(value: SSAValue, m: AffineMap, elem: Attribute) -> SSAValue:
            inputs.append(value)
            in_maps.append(m)
            return block.insert_arg(elem, len(inputs) - 1)

        for sc in scalars:
            add_input(sc, AffineMap(rank, 0, ()), sc.type)
        scalar_args = list(block.args[: len(scalars)])

        def load(v: SSAValue, m: DimMap, fuse: bool, memo: dict[SSAValue, SSAValue]) -> SSAValue:
            v = self.prog.resolve(v)
            if fuse and v in memo:  # computed earlier in this body (inlined or grouped)
                return memo[v]
            if fuse and v in self.inline:
                if v not in memo:
                    producer = v.owner
                    assert isinstance(producer, Operation)
                    memo[v] = self._inline_expr(s, producer, m, load, memo)
                return memo[v]
            key = (v, m)
            if key not in leaf:
                mem = self.read(v)
                leaf[key] = add_input(mem, affine(rank, m), elem_of_buffer(mem))
            return leaf[key]

        memo_by_map: dict[DimMap, dict[SSAValue, SSAValue]] = {}
        if lazy is not None:
            reader = BodyReads(
                s,
                list(out_args),
                lambda v, m, fuse: load(v, m, fuse, memo_by_map.setdefault(m, {})),
                lambda v, m, x: memo_by_map.setdefault(m, {}).__setitem__(self.prog.resolve(v), x),
            )
            results = lazy(reader)
        else:
            args = [load(v, m, fuse, memo_by_map.setdefault(m, {})) for v, m, fuse in reads]
            results = body(s, scalar_args + args, list(out_args))
        s.b.insert(make(linalg.YieldOp, results))
        covered = {d for m in in_maps for d in _dims_of(m)} | {
            d for _, m in outs for d in m if d is not None
        }
        if len(covered) < rank:
            # Loop bounds come from operand shapes (as in MLIR); when fusion left a
            # loop dimension in no operand, a view of the domain's shape carries it.
            # Its block argument is unused, so the loops never load from it.
            carrier = self.shape_view(outs[0][0], domain)
            add_input(carrier, affine(rank, identity_map(rank)), elem_of_buffer(carrier))
        iterators = [
            linalg_attrs.IteratorTypeAttr.reduction() if d in reductions else linalg_attrs.IteratorTypeAttr.parallel()
            for d in range(rank)
        ]
        out_mems = [m for m, _ in outs]
        for mem in out_mems:
            self.note_read(mem)
        op = generic_op(
            inputs,
            out_mems,
            Region(block),
            [AffineMapAttr(m) for m in in_maps] + [AffineMapAttr(affine(rank, m)) for _, m in outs],
            iterators,
            StringAttr(library_call) if library_call else None,
        )
        self.emit(op)
        return op

    def _inline_expr(
        self,
        s: Scalar,
        op: Operation,
        m: DimMap,
        load: Callable[[SSAValue, DimMap, bool, dict[SSAValue, SSAValue]], SSAValue],
        memo: dict[SSAValue, SSAValue],
    ) -> SSAValue:
        """Scalar code of pointwise `op` read through loop map `m` (an op with an
        identity view of its own result shape)."""
        entry = LOWERINGS[type(op)]
        assert entry.body is not None and entry.maps is not None
        fus = set(fusible_operands(op))
        args: list[SSAValue] = []
        for i, om in enumerate(entry.maps(op)):
            if om is None:
                continue
            composed = tuple(None if d is None else m[d] for d in om)
            args.append(load(op.operands[i], composed, i in fus, memo))
        with s.viewed_through(m):
            return entry.body(s, op, args)[0]

    def fill(self, mem: SSAValue, value: float) -> None:
        """Set every element of `mem` to `value` (`linalg.fill`)."""
        elem = elem_of_buffer(mem)
        c = Scalar(self.b).const(value, elem)
        self.emit(fill_op(c, mem))

    def pointwise_generic(self, op: Operation) -> None:
        """Materialize a pointwise op (with its fused producers) into its buffers."""
        entry = LOWERINGS[type(op)]
        body, maps = entry.body, entry.maps
        assert body is not None and maps is not None
        rank = len(result_shape(op))
        fus = set(fusible_operands(op))
        reads = [
            (v, m, i in fus) for i, (v, m) in enumerate(zip(op.operands, maps(op))) if m is not None
        ]
        outs = [(self.out(r), identity_map(rank)) for r in op.results]
        self.generic(
            self.sizes[op.results[0]],
            reads,
            outs,
            lambda s, args, _outs: body(s, op, args),
        )


__all__ = ["BodyReads", "Emission"]
