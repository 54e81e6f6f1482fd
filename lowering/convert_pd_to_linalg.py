"""`convert-pd-to-linalg`: a `pd` program becomes one `func.func` on memrefs.

What the pass produces
----------------------
* One function, `@main` by default, in destination-passing style.  Its arguments are,
  in order: one `index` per dynamic dimension of a feed, the feeds, the persistables
  read with `pd.parameter`, and one caller-allocated buffer per output.  The order is
  recorded on the function (`pullback.abi`, see `Abi`) so the runtime can call it.
  Dynamic dimensions stay dynamic: one compiled program serves every batch size.
* Temporaries are explicit `memref.alloc`s, freed by `memref.dealloc` right after
  their last reader.
* `pd.backward` regions are lowered inline: their bodies are ordinary `pd` ops.
* Optimizer updates write the parameter buffers in place (they ARE the Scope's numpy
  arrays); when the old value is still read afterwards the update goes to a
  temporary that is copied back at the end.

Fusion
------
Elementwise ops (`lowering/scalar.py`) are not given buffers of their own when every
reader can recompute them: their scalar code is inlined into the `linalg.generic` of
each reader (another elementwise op, a reduction, a softmax, an optimizer update).
This is producer-into-consumer fusion as XLA does it, decided once for the program
(`_plan`), and it fuses forward and backward chains alike: a chain of twenty
elementwise ops and its gradient become one loop for the loss and one for the
gradient.  Recomputation is bounded by a cost budget (`RECOMPUTE_BUDGET`).

Matrix products become `linalg.generic` contractions tagged `library_call = "gemm"`;
`convert-linalg-to-blas` turns those into BLAS calls, and `convert-linalg-to-loops`
lowers them (and everything else) to loops when BLAS is not wanted.

Assumptions checked by the runtime before any call (`lowering.shapes`): a dynamic
dimension is never broadcast at run time (two `?` dimensions that meet in an
elementwise op are equal).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.linalg import attrs as linalg_attrs
from xdsl.dialects.linalg import ops as linalg
from xdsl.dialects.builtin import (
    AffineMapAttr,
    AnyFloat,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    f64,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint

from pullback.dialects import pd
from pullback.dialects.pd.base import DYN, result_names, shape_of
from pullback.lowering.scalar import ELEMENTWISE, REASSOC, DimMap, Scalar, prop

Size = int | SSAValue
"""A dimension size: a constant, or an `index` value computed at run time."""

VIEW_OPS = frozenset({"pd.reshape", "pd.reshape_as", "pd.squeeze", "pd.unsqueeze"})
"""Ops lowered to a view of their operand's buffer (`pd_shape_rules.py`)."""

RECOMPUTE_BUDGET = 256
"""An elementwise value is recomputed in each reader while `cost * (readers - 1)`
stays within this budget (cost: weighted op count of its fused expression)."""

_EXPENSIVE = {
    "pd.exp", "pd.log", "pd.tanh", "pd.sigmoid", "pd.erf", "pd.gelu", "pd.pow",
    "pd.elementwise_pow", "pd.sqrt", "pd.elementwise_div",
}


class LoweringError(Exception):
    """The program cannot be lowered to native code; the message names the op."""


# --------------------------------------------------------------------------- ABI


@dataclass
class Abi:
    """The calling convention of a lowered program.

    Arguments of the entry function, in order: `dims` (one `index` per dynamic
    dimension of a feed, as `(feed position, axis)`), then `feeds`, `params` and
    `outputs` as memrefs.  Outputs are the fetched values in fetch order, then
    persistables written by the program that it never reads with `pd.parameter`.
    """

    feeds: list[tuple[str, TensorType]] = field(default_factory=list)
    params: list[tuple[str, TensorType]] = field(default_factory=list)
    outputs: list[tuple[str, TensorType]] = field(default_factory=list)
    dims: list[tuple[int, int]] = field(default_factory=list)
    writes: list[str] = field(default_factory=list)
    """Names of the persistables the program updates (params or new outputs)."""
    fetches: list[list[object]] = field(default_factory=list)
    """Where each fetched value is found: `["out", i]` (output buffer i) or
    `["param", name]` (a parameter updated in place)."""

    def to_json(self) -> str:
        """Serialize (stored as the entry function's `pullback.abi` attribute)."""
        def types(items: list[tuple[str, TensorType]]) -> list[list[object]]:
            return [[n, _type_str(t)] for n, t in items]

        return json.dumps(
            {
                "feeds": types(self.feeds),
                "params": types(self.params),
                "outputs": types(self.outputs),
                "dims": self.dims,
                "writes": self.writes,
                "fetches": self.fetches,
            }
        )


def _type_str(t: TensorType) -> list[object]:
    return [list(shape_of(t)), str(t.get_element_type())]


def abi_of(module: ModuleOp, entry: str = "main") -> dict[str, object]:
    """The ABI recorded on a lowered module's entry function, as plain JSON data."""
    for op in module.walk():
        if getattr(op, "sym_name", None) is not None and op.sym_name.data == entry:  # type: ignore[attr-defined]
            attr = op.attributes.get("pullback.abi")
            if isinstance(attr, StringAttr):
                return json.loads(attr.data)
    raise LoweringError(f"no lowered entry function '@{entry}' with an ABI")


# ---------------------------------------------------------------------- program


@dataclass
class Program:
    """A `pd` module flattened into straight-line order.

    `pd.backward` bodies are spliced in place; their results alias the values their
    `pd.yield` returns (`resolve`).  `uses[v]` lists `(op, operand index)` readers.
    """

    ops: list[Operation]
    fetches: list[SSAValue]
    alias: dict[SSAValue, SSAValue]
    pos: dict[Operation, int] = field(default_factory=dict)
    uses: dict[SSAValue, list[tuple[Operation, int]]] = field(default_factory=dict)

    @staticmethod
    def of(
        module: ModuleOp, extra_fetches: Sequence[SSAValue] = (), use_fetch_ops: bool = True
    ) -> Program:
        """Flatten `module`.  Outputs are its `pd.fetch` operands (unless not
        `use_fetch_ops`) followed by `extra_fetches`."""
        prog = Program([], [], {})
        prog._flatten(module.body.block)
        if not use_fetch_ops:
            prog.fetches.clear()
        prog.fetches.extend(extra_fetches)
        prog.fetches = [prog.resolve(v) for v in prog.fetches]
        for i, op in enumerate(prog.ops):
            prog.pos[op] = i
            for j, v in enumerate(op.operands):
                prog.uses.setdefault(prog.resolve(v), []).append((op, j))
        return prog

    def _flatten(self, block: Block) -> None:
        for op in block.ops:
            if isinstance(op, pd.BackwardOp):
                if not op.is_filled:
                    raise LoweringError(
                        "'pd.backward' has an empty region: run the autodiff pass first"
                    )
                self._flatten(op.body.block)
                term = op.body.block.last_op
                assert isinstance(term, pd.YieldOp)
                for res, val in zip(op.grads, term.values):
                    self.alias[res] = val
            elif isinstance(op, pd.YieldOp):
                continue
            elif isinstance(op, pd.FetchOp):
                self.fetches.append(op.x)
            else:
                self.ops.append(op)

    def views_of(self, values: Sequence[SSAValue]) -> list[SSAValue]:
        """`values` and every value lowered as a view of their buffers (`VIEW_OPS`,
        transitively): reading one of them reads the same memory."""
        out, todo = [], list(values)
        while todo:
            v = todo.pop()
            out.append(v)
            todo += [u.results[0] for u, i in self.uses.get(v, []) if u.name in VIEW_OPS and i == 0]
        return out

    def resolve(self, v: SSAValue) -> SSAValue:
        """The value `v` stands for (backward results are their yielded values)."""
        while v in self.alias:
            v = self.alias[v]
        return v


# ----------------------------------------------------------------------- rules

Rule = Callable[["Lowerer", Operation], None]
RULES: dict[str, Rule] = {}
"""Lowering of the ops that are not plain elementwise ops, by op name."""

FUSIBLE: dict[str, Callable[[Operation], Sequence[int]]] = {}
"""For non-elementwise ops: operand positions read through a `linalg.generic` over
the operand's own full shape, into which an elementwise producer can be inlined."""


def rule(*names: str, fusible: Callable[[Operation], Sequence[int]] | None = None) -> Callable[[Rule], Rule]:
    """Register the lowering of one or more ops (and which operands may be fused)."""

    def register(fn: Rule) -> Rule:
        for n in names:
            RULES[n] = fn
            if fusible is not None:
                FUSIBLE[n] = fusible
        return fn

    return register


HOST_ONLY: dict[str, str] = {
    name: "random initializers draw from numpy's generator, which native code does not "
    "reproduce; they run on the host interpreter (startup programs run once)"
    for name in ("pd.uniform_random", "pd.gaussian_random")
}
"""Ops deliberately left to the host interpreter, with the reason."""


def lowerable_ops() -> set[str]:
    """Names of every `pd` op this pass can lower."""
    structural = {"pd.data", "pd.parameter", "pd.fetch", "pd.backward", "pd.yield"}
    return set(ELEMENTWISE) | set(RULES) | structural


def is_identity_map(m: DimMap | None, rank: int) -> bool:
    """True when an operand is read at exactly the loop's indices (no broadcast)."""
    return m is not None and len(m) == rank and all(d == i for i, d in enumerate(m))


def fusible_operands(op: Operation) -> Sequence[int]:
    """Operand positions of `op` that can read an inlined elementwise expression."""
    if op.name in ELEMENTWISE:
        rank = len(shape_of(op.results[0].type))
        maps = ELEMENTWISE[op.name].maps(op)
        return [
            i for i, m in enumerate(maps)
            if is_identity_map(m, rank) and shape_of(op.operands[i].type) == shape_of(op.results[0].type)
        ]
    fn = FUSIBLE.get(op.name)
    return fn(op) if fn else ()


# ----------------------------------------------------------------------- lowerer


@dataclass
class Lowerer:
    """State of one lowering: the entry function under construction and the
    buffer, size and fusion bookkeeping of every `pd` value."""

    prog: Program
    b: Builder
    abi: Abi
    buf: dict[SSAValue, SSAValue] = field(default_factory=dict)
    sizes: dict[SSAValue, list[Size]] = field(default_factory=dict)
    inline: set[SSAValue] = field(default_factory=set)
    cost: dict[SSAValue, int] = field(default_factory=dict)
    dest: dict[SSAValue, SSAValue] = field(default_factory=dict)
    temps: dict[SSAValue, int] = field(default_factory=dict)
    """Allocated temporaries (memrefs) -> position of their last reader."""
    last_read: dict[SSAValue, int] = field(default_factory=dict)
    copy_back: list[tuple[SSAValue, SSAValue]] = field(default_factory=list)
    anchors: list[Operation | None] = field(default_factory=list)
    _consts: dict[int, SSAValue] = field(default_factory=dict)
    current: int = -1

    # ------------------------------------------------------------ small helpers

    def emit(self, op: Operation) -> Operation:
        """Insert an op at the current point of the entry function."""
        self.b.insert(op)
        return op

    def index(self, n: int) -> SSAValue:
        """An `index` constant (one per value, at the start of the function)."""
        if n not in self._consts:
            c = arith.ConstantOp.from_int_and_width(n, IndexType())
            c.result.name_hint = f"c{n}"
            block = self.b.insertion_point.block
            first = block.first_op
            if first is None:
                block.add_op(c)
            else:
                block.insert_op_before(c, first)
            self._consts[n] = c.result
        return self._consts[n]

    def as_value(self, s: Size) -> SSAValue:
        """A size as an `index` value."""
        return self.index(s) if isinstance(s, int) else s

    def mul_sizes(self, sizes: Sequence[Size]) -> Size:
        """The product of sizes, folded where static."""
        static = 1
        dyn: list[SSAValue] = []
        for s in sizes:
            if isinstance(s, int):
                static *= s
            else:
                dyn.append(s)
        acc: Size = static
        for d in dyn:
            acc = d if acc == 1 else self.emit(arith.MuliOp(self.as_value(acc), d)).results[0]
        return acc

    def memref_type(self, v: SSAValue) -> MemRefType[Attribute]:
        """The buffer type of a tensor value."""
        t = v.type
        assert isinstance(t, TensorType)
        return MemRefType(t.get_element_type(), t.get_shape())

    def alloc(self, v: SSAValue) -> SSAValue:
        """A fresh temporary for `v`, freed after its last reader."""
        dyn = [s for s in self.sizes[v] if not isinstance(s, int)]
        op = memref.AllocOp(dyn, [], self.memref_type(v), alignment=IntegerAttr(64, i64))
        self.emit(op)
        name = _hint(v)
        if name:
            op.memref.name_hint = name
        self.temps[op.memref] = self.current
        return op.memref

    def out(self, v: SSAValue) -> SSAValue:
        """The buffer an op should write `v` into (its destination, or a temporary)."""
        if v in self.dest:
            mem = self.dest[v]
            if DYN in _shape(mem) and isinstance(mem, BlockArgument):
                mem = self.dest[v] = self.shape_view(mem, self.sizes[v])
        else:
            mem = self.alloc(v)
        self.buf[v] = mem
        return mem

    def read(self, v: SSAValue) -> SSAValue:
        """The buffer holding `v`, noting that it is read here."""
        v = self.prog.resolve(v)
        if v not in self.buf:
            op = v.owner
            raise LoweringError(
                f"internal: no buffer for a result of '{getattr(op, 'name', op)}'"
            )
        mem = self.buf[v]
        self.note_read(mem)
        return mem

    def note_read(self, mem: SSAValue) -> None:
        """Record that buffer `mem` (or what it views) is read at the current op."""
        root = _root(mem)
        self.last_read[root] = max(self.last_read.get(root, -1), self.current)

    def sizes_of(self, v: SSAValue) -> list[Size]:
        """The sizes of a `pd` value."""
        return self.sizes[self.prog.resolve(v)]

    # ------------------------------------------------------------- generic ops

    def generic(
        self,
        domain: Sequence[Size],
        reads: Sequence[tuple[SSAValue, DimMap, bool]],
        outs: Sequence[tuple[SSAValue, DimMap]],
        body: Callable[[Scalar, list[SSAValue], list[SSAValue]], list[SSAValue]],
        reductions: Sequence[int] = (),
        library_call: str | None = None,
        scalars: Sequence[SSAValue] = (),
    ) -> linalg.GenericOp:
        """Emit a `linalg.generic` over `domain`.

        `reads` are `(pd value, map, fusible)`: a fusible read of an inlined value
        expands into its scalar expression, its leaves read from buffers.  `outs` are
        `(memref, map)`.  `scalars` are loop-invariant scalar inputs.  `body(s, reads,
        outs)` gets the read scalars and the current output values and returns the
        values to store.
        """
        rank = len(domain)
        block = Block()
        inputs: list[SSAValue] = []
        in_maps: list[AffineMap] = []
        leaf: dict[tuple[SSAValue, DimMap], SSAValue] = {}
        s = Scalar(Builder(InsertPoint.at_end(block)))
        out_args = [block.insert_arg(_elem(m), len(block.args)) for m, _ in outs]

        def add_input(value: SSAValue, m: AffineMap, elem: Attribute) -> SSAValue:
            inputs.append(value)
            in_maps.append(m)
            return block.insert_arg(elem, len(inputs) - 1)

        for sc in scalars:
            add_input(sc, AffineMap(rank, 0, ()), sc.type)
        scalar_args = list(block.args[: len(scalars)])

        def load(v: SSAValue, m: DimMap, fuse: bool, memo: dict[SSAValue, SSAValue]) -> SSAValue:
            v = self.prog.resolve(v)
            if fuse and v in self.inline:
                if v not in memo:
                    producer = v.owner
                    assert isinstance(producer, Operation)
                    memo[v] = self._inline_expr(s, producer, m, load, memo)
                return memo[v]
            key = (v, m)
            if key not in leaf:
                mem = self.read(v)
                leaf[key] = add_input(mem, _affine(rank, m), _elem(mem))
            return leaf[key]

        memo_by_map: dict[DimMap, dict[SSAValue, SSAValue]] = {}
        args = [load(v, m, fuse, memo_by_map.setdefault(m, {})) for v, m, fuse in reads]
        results = body(s, scalar_args + args, list(out_args))
        s.b.insert(linalg.YieldOp(*results))
        covered = {d for m in in_maps for d in _dims_of(m)} | {
            d for _, m in outs for d in m if d is not None
        }
        if len(covered) < rank:
            # Loop bounds come from operand shapes (as in MLIR); when fusion left a
            # loop dimension in no operand, a view of the domain's shape carries it.
            # Its block argument is unused, so the loops never load from it.
            carrier = self.shape_view(outs[0][0], domain)
            add_input(carrier, _affine(rank, tuple(range(rank))), _elem(carrier))
        iterators = [
            linalg_attrs.IteratorTypeAttr.reduction() if d in reductions else linalg_attrs.IteratorTypeAttr.parallel()
            for d in range(rank)
        ]
        out_mems = [m for m, _ in outs]
        for mem in out_mems:
            self.note_read(mem)
        op = linalg.GenericOp(
            inputs,
            out_mems,
            Region(block),
            [AffineMapAttr(m) for m in in_maps] + [AffineMapAttr(_affine(rank, m)) for _, m in outs],
            iterators,
            library_call=StringAttr(library_call) if library_call else None,
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
        """Scalar code of elementwise `op` read through loop map `m` (an op with an
        identity view of its own result shape)."""
        ew = ELEMENTWISE[op.name]
        fus = set(fusible_operands(op))
        args: list[SSAValue] = []
        for i, om in enumerate(ew.maps(op)):
            if om is None:
                continue
            composed = tuple(None if d is None else m[d] for d in om)
            args.append(load(op.operands[i], composed, i in fus, memo))
        return ew.body(s, op, args)[0]

    def shape_view(self, mem: SSAValue, sizes: Sequence[Size]) -> SSAValue:
        """A view of `mem`'s data with the given sizes (a reshape, no copy)."""
        shape = [d if isinstance(d, int) else DYN for d in sizes]
        strides: list[Size] = []
        acc: Size = 1
        for i, d in enumerate(reversed(sizes)):
            strides.insert(0, acc)
            if i < len(sizes) - 1:
                acc = self.mul_sizes([acc, d])
        op = memref.ReinterpretCastOp.from_dynamic(
            mem, [0], list(sizes), strides, MemRefType(_elem(mem), shape)
        )
        self.emit(op)
        return op.result

    def fill(self, mem: SSAValue, value: float | int) -> None:
        """Set every element of `mem` to `value` (`linalg.fill`)."""
        elem = _elem(mem)
        c = Scalar(self.b).const(value, elem)
        self.emit(linalg.FillOp([c], [mem], res=()))

    def ew_generic(self, op: Operation) -> None:
        """Materialize an elementwise op (with its fused producers) into its buffers."""
        ew = ELEMENTWISE[op.name]
        rank = len(shape_of(op.results[0].type))
        fus = set(fusible_operands(op))
        reads = [
            (v, m, i in fus) for i, (v, m) in enumerate(zip(op.operands, ew.maps(op))) if m is not None
        ]
        outs = [(self.out(r), tuple(range(rank))) for r in op.results]
        self.generic(
            self.sizes[op.results[0]],
            reads,
            outs,
            lambda s, args, _outs: ew.body(s, op, args),
        )

    # -------------------------------------------------------------- the driver

    def lower(self) -> None:
        """Plan fusion and buffers, then emit every op, then free temporaries."""
        self._plan()
        for i, op in enumerate(self.prog.ops):
            self.current = i
            self._sizes_for(op)
            if op.name in ("pd.data", "pd.parameter"):
                pass
            elif op.name in ELEMENTWISE and op.name not in RULES:
                if all(self.prog.resolve(r) in self.inline or not self.needed(r) for r in op.results):
                    pass
                else:
                    self.ew_generic(op)
            elif op.name in RULES:
                if any(self.needed(r) for r in op.results) or _has_effect(op):
                    RULES[op.name](self, op)
            else:
                raise LoweringError(
                    f"cannot lower '{op.name}' to native code yet "
                    "(no rule in convert-pd-to-linalg)"
                )
            self.anchors.append(self.b.insertion_point.block.last_op)
        self.current = len(self.prog.ops)
        self._finish()

    def needed(self, v: SSAValue) -> bool:
        """Whether `v` is read later, fetched or persisted (else it need not be computed)."""
        v = self.prog.resolve(v)
        return bool(self.prog.uses.get(v)) or v in self.dest or any(v is c for c, _ in self.copy_back)

    def _plan(self) -> None:
        """Decide which elementwise values are inlined into their readers, and the
        destination buffer of each output and persistable update."""
        prog = self.prog
        forced = set(self.dest) | set(prog.fetches)
        for op in prog.ops:
            if op.name not in ELEMENTWISE or op.name in RULES or len(op.results) != 1:
                continue
            v = op.results[0]
            if v in forced or _writes_persistable(op):
                continue
            all_uses = prog.uses.get(v, [])
            if not all_uses:
                continue
            # Shape-only readers (fill_any_like) need no data: they do not count.
            uses = [(u, j) for u, j in all_uses if not _shape_only(u, j)]
            fus = set(fusible_operands(op))
            cost = (4 if op.name in _EXPENSIVE else 1) + sum(
                self.cost.get(prog.resolve(op.operands[i]), 0) for i in fus
                if prog.resolve(op.operands[i]) in self.inline
            )
            self.cost[v] = cost
            if all(j in fusible_operands(user) for user, j in uses) and cost * (len(uses) - 1) <= RECOMPUTE_BUDGET:
                self.inline.add(v)

    def _sizes_for(self, op: Operation) -> None:
        """Compute the sizes of `op`'s results (static or derived from operands)."""
        for r in op.results:
            if r in self.sizes:
                continue
            shape = shape_of(r.type)
            if DYN not in shape:
                self.sizes[r] = list(shape)
                continue
            self.sizes[r] = [d if d != DYN else self._dyn_dim(op, r, k) for k, d in enumerate(shape)]

    def _dyn_dim(self, op: Operation, r: SSAValue, k: int) -> Size:
        """A dynamic dimension `k` of result `r`, found in the operand it comes from."""
        fn = SIZE_RULES.get(op.name)
        if fn is not None:
            got = fn(self, op, r, k)
            if got is not None:
                return got
        if op.name in ELEMENTWISE:
            for v, m in zip(op.operands, ELEMENTWISE[op.name].maps(op)):
                if m is None:
                    # A shape-only operand (fill_any_like) has the result's shape.
                    return self.sizes_of(v)[k]
                for j, d in enumerate(m):
                    if d == k and shape_of(v.type)[j] == DYN:
                        return self.sizes_of(v)[j]
        raise LoweringError(f"'{op.name}': cannot tell dynamic dimension {k} of its result")

    def _finish(self) -> None:
        """Copy back unsafe in-place updates, free temporaries, and return."""
        for v, dst in self.copy_back:
            self.copy_value(v, dst)
        for mem, _ in list(self.temps.items()):
            last = self.last_read.get(mem, self.temps[mem])
            anchor = self.anchors[min(last, len(self.anchors) - 1)] if last >= 0 else None
            dealloc = memref.DeallocOp.get(mem)
            if last >= len(self.anchors) or anchor is None:
                self.emit(dealloc)
            else:
                anchor.parent_block().insert_op_after(dealloc, anchor)  # type: ignore[union-attr]
        self.emit(func.ReturnOp())

    def copy_buffer(self, src: SSAValue, dst: SSAValue) -> None:
        """Copy one buffer into another of the same shape."""
        rank = len(_shape(dst))
        ident = tuple(range(rank))
        self.note_read(src)
        block = Block(arg_types=[_elem(src), _elem(dst)])
        block.add_op(linalg.YieldOp(block.args[0]))
        self.emit(
            linalg.GenericOp(
                [src], [dst], Region(block),
                [AffineMapAttr(_affine(rank, ident))] * 2,
                [linalg_attrs.IteratorTypeAttr.parallel()] * rank,
            )
        )

    def copy_value(self, v: SSAValue, dst: SSAValue) -> None:
        """Copy the buffer of `pd` value `v` into `dst`."""
        if DYN in _shape(dst) and isinstance(dst, BlockArgument):
            dst = self.shape_view(dst, self.sizes_of(v))
        self.copy_buffer(self.read(v), dst)


SIZE_RULES: dict[str, Callable[[Lowerer, Operation, SSAValue, int], Size | None]] = {}
"""Per-op derivation of dynamic result dimensions (elementwise ops need none)."""


def _align() -> int:
    return 64


def _elem(mem: SSAValue | Attribute) -> Attribute:
    t = mem.type if isinstance(mem, SSAValue) else mem
    if isinstance(t, (MemRefType, TensorType)):
        return t.get_element_type()
    return t


def _shape(mem: SSAValue) -> tuple[int, ...]:
    t = mem.type
    assert isinstance(t, MemRefType)
    return tuple(t.get_shape())


def _affine(rank: int, m: DimMap) -> AffineMap:
    return AffineMap(
        rank, 0, tuple(AffineExpr.constant(0) if d is None else AffineExpr.dimension(d) for d in m)
    )


def _dims_of(m: AffineMap) -> set[int]:
    from xdsl.ir.affine import AffineDimExpr

    return {e.position for e in m.results if isinstance(e, AffineDimExpr)}


def _root(mem: SSAValue) -> SSAValue:
    """The allocation a buffer views (through reinterpret casts)."""
    while isinstance(mem.owner, memref.ReinterpretCastOp):
        mem = mem.owner.source
    return mem


def _hint(v: SSAValue) -> str | None:
    owner = v.owner
    if isinstance(owner, Operation):
        name = result_names(owner)[v.index]  # type: ignore[attr-defined]
        if name:
            import re

            cleaned = re.sub(r"[^A-Za-z0-9_.$-]", "_", name)
            return cleaned if cleaned[:1].isalpha() or cleaned[:1] == "_" else None
    return None


def _shape_only(op: Operation, i: int) -> bool:
    """True when `op` reads only the shape of its operand `i`."""
    if op.name not in ELEMENTWISE:
        return False
    maps = ELEMENTWISE[op.name].maps(op)
    return i < len(maps) and maps[i] is None


def _writes_persistable(op: Operation) -> bool:
    return op.name in ("pd.sgd", "pd.momentum", "pd.adam")


def _has_effect(op: Operation) -> bool:
    return _writes_persistable(op)


# ----------------------------------------------------------------- entry point


def build_entry(
    module: ModuleOp,
    extra_fetches: Sequence[SSAValue] = (),
    entry: str = "main",
    only_given_fetches: bool = False,
) -> tuple[func.FuncOp, Abi]:
    """Lower the `pd` program in `module` to a new entry function (not inserted).

    Outputs are the `pd.fetch` operands then `extra_fetches` (only the latter when
    `only_given_fetches`).  `module` itself is left unchanged.
    """
    prog = Program.of(module, extra_fetches, use_fetch_ops=not only_given_fetches)
    for op in prog.ops:
        if op.name in HOST_ONLY:
            raise LoweringError(f"cannot lower '{op.name}' to native code: {HOST_ONLY[op.name]}")
        if op.name not in lowerable_ops():
            raise LoweringError(
                f"cannot lower '{op.name}' to native code yet (no rule in convert-pd-to-linalg)"
            )

    abi = Abi()
    feeds: dict[str, SSAValue] = {}
    params: dict[str, list[SSAValue]] = {}
    for op in prog.ops:
        if isinstance(op, pd.DataOp):
            name = op.var_name.data
            if name in feeds:
                raise LoweringError(f"'pd.data': feed '{name}' is declared twice")
            feeds[name] = op.out
        elif isinstance(op, pd.ParameterOp):
            params.setdefault(op.var_name.data, []).append(op.out)

    # Persistable updates: results named like a persistable, last writer wins.
    writes: dict[str, SSAValue] = {}
    for op in prog.ops:
        if isinstance(op, (pd.DataOp, pd.ParameterOp)):
            continue
        for r, n in zip(op.results, result_names(op)):
            if n is not None and (n in params or _writes_persistable(op)):
                writes[n] = r
    abi.writes = list(writes)

    abi.feeds = [(n, v.type) for n, v in feeds.items()]  # type: ignore[misc]
    abi.params = [(n, vs[0].type) for n, vs in params.items()]  # type: ignore[misc]
    # A fetched parameter update needs no output buffer: it lands in the parameter's
    # own (Scope) buffer, which the runtime returns.
    in_param = {writes[n]: n for n in writes if n in params}
    fetches: list[SSAValue] = []
    for v in prog.fetches:
        if v in in_param:
            abi.fetches.append(["param", in_param[v]])
            continue
        if v not in fetches:
            fetches.append(v)
        abi.fetches.append(["out", fetches.index(v)])
    new_persistables = [n for n in writes if n not in params]
    abi.outputs = [("", v.type) for v in fetches] + [(n, writes[n].type) for n in new_persistables]  # type: ignore[misc]
    for fi, (_, t) in enumerate(abi.feeds):
        for k, d in enumerate(shape_of(t)):
            if d == DYN:
                abi.dims.append((fi, k))

    arg_types: list[Attribute] = [IndexType()] * len(abi.dims)
    mt = lambda t: MemRefType(t.get_element_type(), t.get_shape())  # noqa: E731
    arg_types += [mt(t) for _, t in abi.feeds] + [mt(t) for _, t in abi.params] + [mt(t) for _, t in abi.outputs]
    block = Block(arg_types=arg_types)
    fn = func.FuncOp(entry, (arg_types, []), Region(block))
    fn.attributes["pullback.abi"] = StringAttr(abi.to_json())
    fn.attributes["llvm.emit_c_interface"] = UnitAttr()
    args = list(block.args)
    dim_args, args = args[: len(abi.dims)], args[len(abi.dims):]
    feed_args, args = args[: len(abi.feeds)], args[len(abi.feeds):]
    param_args, out_args = args[: len(abi.params)], args[len(abi.params):]

    low = Lowerer(prog, Builder(InsertPoint.at_end(block)), abi)
    dim_of: dict[tuple[int, int], SSAValue] = {}
    for (fi, k), a in zip(abi.dims, dim_args):
        a.name_hint = f"{_safe(abi.feeds[fi][0])}_d{k}"
        dim_of[(fi, k)] = a
    for fi, ((name, t), a) in enumerate(zip(abi.feeds, feed_args)):
        a.name_hint = _safe(name)
        v = feeds[name]
        low.sizes[v] = [dim_of[(fi, k)] if d == DYN else d for k, d in enumerate(shape_of(t))]
        # A dynamically shaped argument is used through a view that names its sizes:
        # memrefs lower to bare pointers, and the view is where sizes are found.
        low.buf[v] = low.shape_view(a, low.sizes[v]) if DYN in shape_of(t) else a
    for (name, _), a in zip(abi.params, param_args):
        a.name_hint = _safe(name)
        for v in params[name]:
            low.sizes[v] = list(shape_of(v.type))
            low.buf[v] = a

    # Destinations: fetched values are computed straight into their output buffers
    # (copied there when they are feeds, parameters or updated in place).
    late_copies: list[tuple[SSAValue, SSAValue]] = []
    for v, a in zip(fetches, out_args):
        if isinstance(v.owner, (pd.DataOp, pd.ParameterOp)) or v in writes.values():
            late_copies.append((v, a))
        else:
            low.dest[v] = a
    for n, a in zip(new_persistables, out_args[len(fetches):]):
        low.dest.setdefault(writes[n], a)
        if low.dest[writes[n]] is not a:
            late_copies.append((writes[n], a))

    # In-place persistable updates, when nothing reads the old value afterwards.
    for n, v in writes.items():
        if n not in params or v in low.dest:
            continue
        target = low.buf[params[n][0]]
        writer_pos = prog.pos[v.owner]  # type: ignore[index]
        later_reads = [
            prog.pos[u] for p in prog.views_of(params[n]) for u, _ in prog.uses.get(p, [])
            if prog.pos[u] > writer_pos
        ]
        if later_reads:
            low.copy_back.append((v, target))
        else:
            low.dest[v] = target

    # Fetched feeds/parameters are copied before anything can overwrite them.
    low.current = 0
    for v, a in late_copies:
        if isinstance(v.owner, (pd.DataOp, pd.ParameterOp)):
            low.copy_value(v, a)
    low.lower()
    # Fetched values written in place: copy them out before returning.
    ret = block.last_op
    assert ret is not None
    ret.detach()
    for v, a in late_copies:
        if not isinstance(v.owner, (pd.DataOp, pd.ParameterOp)):
            low.copy_value(v, a)
    block.add_op(ret)
    return fn, abi


def _safe(name: str) -> str | None:
    import re

    cleaned = re.sub(r"[^A-Za-z0-9_$]", "_", name)
    return cleaned if cleaned[:1].isalpha() else None


@dataclass(frozen=True)
class ConvertPdToLinalgPass(ModulePass):
    """Lower a `pd` program to one `func.func` on memrefs (linalg, scf, arith, math).

    The module's top-level `pd` ops are replaced by the entry function.
    """

    name = "convert-pd-to-linalg"

    entry: str = "main"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        fn, _ = build_entry(op, entry=self.entry)
        for child in list(op.body.block.ops):
            child.detach()
            child.erase(safe_erase=False)
        op.body.block.add_op(fn)


def walk_pd(module: ModuleOp) -> Iterator[Operation]:
    """Every `pd` op of a module, nested ones included."""
    for op in module.walk():
        if op.name.startswith("pd."):
            yield op


# Rules for the non-elementwise families live in `pd_rules.py`; importing it
# registers them.
from pullback.lowering import pd_rules as _pd_rules  # noqa: E402,F401
from pullback.lowering import pd_shape_rules as _pd_shape_rules  # noqa: E402,F401
from pullback.lowering import pd_nn_rules as _pd_nn_rules  # noqa: E402,F401

__all__ = [
    "Abi",
    "HOST_ONLY",
    "ConvertPdToLinalgPass",
    "Lowerer",
    "LoweringError",
    "Program",
    "RULES",
    "SIZE_RULES",
    "abi_of",
    "build_entry",
    "lowerable_ops",
    "rule",
]
_ = (AnyFloat, IntegerType, f64, i64)
