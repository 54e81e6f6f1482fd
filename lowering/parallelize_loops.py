"""`parallelize-loops`: large `linalg.generic`s run on the native thread pool.

Runs on the memref/linalg form, after `outline-segments` (and `convert-linalg-to-blas`),
before `convert-linalg-to-loops`.  A `linalg.generic` whose estimated work (iterations
times a per-iteration cost: operands plus body ops, transcendental functions weighing
`_COSTS`) can fill two chunks of `MIN_CHUNK_WORK`, or whose size only the run decides,
is split along its outermost loop `d0`:

* **parallel `d0`** (elementwise ops, row-wise softmax and reductions over inner
  axes, SGD updates): the generic moves into a *chunk function* `<fn>__par<N>(lo, hi,
  operands...)` that runs it on rows `[lo, hi)` of the operands `d0` indexes (views by
  `memref.reinterpret_cast`, offset `lo` rows; `linalg.index 0` shifted by `lo`), and
  the generic is replaced by `func.call @<fn>__par<N>__fork(n, grain, operands...)`.
  Every output must be indexed by `d0`, so chunks write disjoint rows: results are
  identical with any thread count.
* **reduction `d0`** (a full `reduce_sum`/`mean`, the loss, column sums such as a bias
  gradient or batch-norm statistics): split into `K` slots (`K` a power of two up to
  `MAX_SLOTS`, from the work only, never from the thread count, so a program's result
  does not depend on it).  Each slot reduces its rows into its own partial (a fresh
  buffer `[K, *output]`, set to the combiner's identity), slots run through the pool,
  then one generic folds the partials into the output in slot order.  Outputs that
  `d0` does index (elementwise results fused into the reduction's loop by
  multi-output fusion) are cut into rows as in the parallel case.  Every reduced
  output's combiner must be recognized (`_COMBINERS`: sums, differences, products,
  max, min).  Float results differ from the sequential order by rounding only.

Left alone: generics whose body has anything but `arith`/`math` ops and
`linalg.index` (no memory effects, so no shared temporaries and no range-check status
writes under threads; range checks are `scf.parallel` loops and stay sequential),
operands indexed by `d0` other than as their first dimension (not contiguous rows),
and an output buffer that an input also reads.

`func.call @X__fork` is ordinary func IR: the fork is declared, not defined, here.
`lower_forks` (run on the `llvmlite.ir.Module`, whichever route produced it) defines
each fork: it packs its arguments into a struct on the stack and calls
`pb_parallel_for(@X__tramp, &struct, n, grain)` (`runtime/native/threadpool.py`), where the
trampoline unpacks the struct and calls the chunk function `X(lo, hi, ...)`.
`pb_parallel_for` runs the loop inline when `n < 2 * grain` or one thread is set, so
sizes only the run decides are decided there.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import llvmlite.ir as lir
from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    StridedLayoutAttr,
    UnitAttr,
)
from xdsl.dialects.linalg import attrs as linalg_attrs
from xdsl.dialects.linalg import ops as linalg
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from pullback.lowering.build import cmpi, constant, fill_op, generic_op, make
from pullback.lowering.views import reinterpret_cast

MIN_CHUNK_WORK = 1 << 19
"""Cost units (about one simple operation on one element each) a chunk must have to
be worth handing to another thread: a vectorized simple op takes 0.1-0.3 ns per
element, so this is 50-150 us of work, several times what waking a sleeping worker
costs on an idle machine.  At 1 << 16 the MLP step's 128x512 elementwise loops were
split and the step ran slower on 2 threads (benchmarks/RESULTS.md, "Threads")."""

MAX_SLOTS = 16
"""Most partials a reduction is split into (a power of two: even loads on 2, 4, 8, 16
threads)."""

PAR_INFIX = "__par"
"""Chunk functions are named `<fn>__par<N>`; their forks `<fn>__par<N>` + `FORK_SUFFIX`."""
FORK_SUFFIX = "__fork"
TRAMP_SUFFIX = "__tramp"
PARALLEL_FOR = "pb_parallel_for"
"""The pool's entry point (`runtime/native/threadpool.py`)."""

_COSTS = {
    "math.exp": 10, "math.log": 10, "math.tanh": 12, "math.powf": 20, "math.sin": 12, "math.cos": 12,
    "math.erf": 12, "math.log1p": 10, "math.expm1": 10, "math.atan": 12, "math.atan2": 15,
    "math.sqrt": 4, "math.rsqrt": 4, "arith.divf": 4, "arith.remf": 8, "arith.divsi": 4, "arith.remsi": 4,
}
"""Per-element cost of body ops beyond 1 (a rough count of simple instructions)."""
_FREE = ("arith.constant", "linalg.yield", "linalg.index", "arith.index_cast")

_COMBINERS: dict[str, tuple[str, float | None, bool]] = {
    "arith.addf": ("arith.addf", 0.0, False),
    "arith.subf": ("arith.addf", 0.0, True),  # acc - x: partials sum x negated, added
    "arith.mulf": ("arith.mulf", 1.0, False),
    "arith.maximumf": ("arith.maximumf", -math.inf, False),
    "arith.minimumf": ("arith.minimumf", math.inf, False),
    "arith.maxnumf": ("arith.maxnumf", -math.inf, False),
    "arith.minnumf": ("arith.minnumf", math.inf, False),
    "arith.addi": ("arith.addi", None, False),
}
"""Recognized reduction combiners: the op folding partials, the identity a partial
starts from (None: integer zero) and whether the accumulator must be the left operand
(a difference is not commutative)."""


def _uses_d0(m: AffineMap) -> list[bool]:
    """For each result of `m`, whether it involves loop `d0`."""
    return [0 in set(e.used_dims()) for e in m.results]


def _cut(m: AffineMap) -> bool | None:
    """True: the operand is indexed by `d0` as its first dimension (rows can be cut);
    False: `d0` does not index it; None: `d0` indexes it otherwise (not splittable)."""
    uses = _uses_d0(m)
    if not any(uses):
        return False
    first = m.results[0]
    if isinstance(first, AffineDimExpr) and first.position == 0 and not any(uses[1:]):
        return True
    return None


def _root(v: SSAValue) -> SSAValue:
    while isinstance(v.owner, memref.ReinterpretCastOp):
        v = v.owner.source
    return v


def _body_cost(op: linalg.GenericOp) -> int | None:
    """Cost of one iteration, or None when the body is not pure arith/math."""
    cost = len(op.operands)
    for sub in op.body.block.ops:
        if sub.regions or not (sub.name.startswith("arith.") or sub.name.startswith("math.") or sub.name in _FREE):
            return None
        if sub.name not in _FREE:
            cost += _COSTS.get(sub.name, 1)
    return cost


@dataclass
class _Plan:
    op: linalg.GenericOp
    maps: list[AffineMap]
    cuts: list[bool]
    reduction: bool
    cost: int
    sizes: list[int | None]
    """Static trip count per loop (None: dynamic)."""
    combiners: list[tuple[Operation, str, float | None]]
    """Reductions: per reduced output, the body op combining, the fold op and the identity."""
    reduced: list[int]
    """Reductions: the outputs `d0` does not index (split into partials); the others
    (elementwise results fused into the reduction's loop) are cut into rows."""


def plan(op: linalg.GenericOp, min_work: int) -> _Plan | None:
    """How `op` is split, or None when it is left sequential (see the module doc)."""
    iters = op.iterator_types.data
    if not iters or any(not isinstance(v.type, MemRefType) and isinstance(v.type, IndexType) for v in op.outputs):
        return None
    if any(not isinstance(v.type, MemRefType) for v in op.outputs) or op.results:
        return None
    cost = _body_cost(op)
    if cost is None:
        return None
    maps = [m.data for m in op.indexing_maps.data]
    operands = [*op.inputs, *op.outputs]
    cuts: list[bool] = []
    for v, m in zip(operands, maps):
        c = _cut(m)
        if c is None or (c and not isinstance(v.type, MemRefType)):
            return None
        cuts.append(c)
    n_in = len(op.inputs)
    reduction = iters[0].data == linalg_attrs.IteratorType.REDUCTION
    out_cuts = cuts[n_in:]
    if reduction and all(out_cuts):
        return None
    if not reduction and not all(out_cuts):
        return None
    out_roots = {_root(v) for v in op.outputs}
    for v, m in zip(op.inputs, maps[:n_in]):
        if isinstance(v.type, MemRefType) and _root(v) in out_roots:
            # An input reading an output buffer: only the same element (in place).
            same = [maps[n_in + k] for k, o in enumerate(op.outputs) if _root(o) is _root(v)]
            if reduction or any(om != m for om in same):
                return None
    if len(set(map(id, op.outputs))) != len(op.outputs):
        return None
    sizes = _static_sizes(op, maps)
    combiners: list[tuple[Operation, str, float | None]] = []
    if reduction:
        block = op.body.block
        yielded = block.last_op
        assert yielded is not None
        for k, acc in enumerate(block.args[n_in:]):
            if out_cuts[k]:
                continue  # written row by row (a fused elementwise result): cut like inputs
            value = yielded.operands[k]
            owner = value.owner
            if not isinstance(owner, Operation) or owner.name not in _COMBINERS:
                return None
            fold, identity, left = _COMBINERS[owner.name]
            uses = list(acc.uses)
            if len(uses) != 1 or uses[0].operation is not owner or acc not in owner.operands:
                return None
            if left and owner.operands[0] is not acc:
                return None
            combiners.append((owner, fold, identity))
    work_static = math.prod(s for s in sizes if s is not None) * cost
    if all(s is not None for s in sizes) and work_static < 2 * min_work:
        return None
    reduced = [k for k, c in enumerate(out_cuts) if not c] if reduction else []
    return _Plan(op, maps, cuts, reduction, cost, sizes, combiners, reduced)


def _static_sizes(op: linalg.GenericOp, maps: list[AffineMap]) -> list[int | None]:
    n = len(op.iterator_types.data)
    out: list[int | None] = [None] * n
    for v, m in zip([*op.inputs, *op.outputs], maps):
        if not isinstance(v.type, MemRefType):
            continue
        shape = v.type.get_shape()
        for k, e in enumerate(m.results):
            if isinstance(e, AffineDimExpr) and shape[k] != DYNAMIC_INDEX:
                out[e.position] = shape[k]
    return out


class _B:
    """Appends ops at an insertion point (the common ones built by `make`:
    lowering/build.py)."""

    def __init__(self, ip: InsertPoint) -> None:
        self.ip = ip

    def op(self, o: Operation) -> SSAValue:
        Rewriter.insert_op(o, self.ip)
        return o.results[0] if o.results else None  # type: ignore[return-value]

    def binary(self, op_cls: type[Operation], a: SSAValue, b: SSAValue) -> SSAValue:
        """`op_cls(a, b)`: an `arith` integer op whose result has `a`'s type."""
        return self.op(make(op_cls, (a, b), (a.type,)))

    def idx(self, n: int) -> SSAValue:
        return self.op(constant(IntegerAttr(n, IndexType())))

    def v(self, x: SSAValue | int) -> SSAValue:
        return self.idx(x) if isinstance(x, int) else x

    def mul(self, a: SSAValue | int, b: SSAValue | int) -> SSAValue | int:
        if isinstance(a, int) and isinstance(b, int):
            return a * b
        if a == 1:
            return b
        if b == 1:
            return a
        return self.binary(arith.MuliOp, self.v(a), self.v(b))

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary(arith.AddiOp, a, b)

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.binary(arith.SubiOp, a, b)

    def dim(self, mem: SSAValue, k: int) -> SSAValue | int:
        t = mem.type
        assert isinstance(t, MemRefType)
        if t.get_shape()[k] != DYNAMIC_INDEX:
            return t.get_shape()[k]
        return self.op(memref.DimOp(mem, self.idx(k)))


def _loop_size(b: _B, p: _Plan, d: int) -> SSAValue | int:
    """The trip count of loop `d` (a constant or a `memref.dim` of an operand)."""
    if p.sizes[d] is not None:
        return p.sizes[d]  # type: ignore[return-value]
    for v, m in zip([*p.op.inputs, *p.op.outputs], p.maps):
        if isinstance(v.type, MemRefType):
            for k, e in enumerate(m.results):
                if isinstance(e, AffineDimExpr) and e.position == d:
                    return b.dim(v, k)
    raise ValueError("parallelize-loops: a loop size no operand gives")


def _row_view(b: _B, arg: SSAValue, dims: list[SSAValue], lo: SSAValue | None, rows: SSAValue | None) -> SSAValue:
    """`arg` (a function argument) viewed with its sizes (`dims`: the dynamic ones);
    with `lo`/`rows`, only rows `[lo, lo + rows)` of it."""
    t = arg.type
    assert isinstance(t, MemRefType)
    shape = list(t.get_shape())
    it = iter(dims)
    sizes: list[SSAValue | int] = [next(it) if s == DYNAMIC_INDEX else s for s in shape]
    if lo is None and DYNAMIC_INDEX not in shape:
        return arg
    strides: list[SSAValue | int] = [1] * len(sizes)
    acc: SSAValue | int = 1
    for k in range(len(sizes) - 1, -1, -1):
        strides[k] = acc
        if k:
            acc = b.mul(acc, sizes[k])
    offset: SSAValue | int = 0
    out_shape = shape
    layout: StridedLayoutAttr | None = None
    if lo is not None and rows is not None:
        offset = b.mul(lo, strides[0])
        sizes[0] = rows
        out_shape = [DYNAMIC_INDEX, *shape[1:]]
        static_strides = [s if isinstance(s, int) else None for s in strides]
        layout = StridedLayoutAttr(static_strides, None)
    rt = MemRefType(t.element_type, out_shape, layout) if layout is not None else MemRefType(t.element_type, out_shape)
    return b.op(reinterpret_cast(arg, [offset], sizes, strides, rt))


def _clone_generic(
    op: linalg.GenericOp, ins: Sequence[SSAValue], outs: Sequence[SSAValue], row0: SSAValue | None, b: _B,
    identity_fill: list[tuple[SSAValue, Attribute]] | None = None,
) -> None:
    """A copy of `op` on other operands; `linalg.index 0` shifted by `row0`."""
    new = generic_op(ins, outs, op.body.clone(), op.indexing_maps, op.iterator_types)
    for k, a in op.attributes.items():
        if k not in new.attributes:
            new.attributes[k] = a
    b.op(new)
    if row0 is None:
        return
    for sub in list(new.body.walk()):
        if isinstance(sub, linalg.IndexOp) and sub.dim.value.data == 0:
            shifted = make(arith.AddiOp, (sub.result, row0), (sub.result.type,))
            Rewriter.insert_op(shifted, InsertPoint.after(sub))
            for use in list(sub.result.uses):
                if use.operation is not shifted:
                    use.operation.operands[use.index] = shifted.result


class _Outliner:
    """Builds chunk functions and fork calls for one module."""

    def __init__(self, module: ModuleOp, min_work: int) -> None:
        self.module = module
        self.min_work = min_work
        self.count: dict[str, int] = {}

    def rewrite(self, fn: func.FuncOp, p: _Plan) -> func.FuncOp:
        """Move `p`'s generic into a chunk function called through a fork; returns it."""
        op = p.op
        name = fn.sym_name.data
        n = self.count.get(name, 0)
        self.count[name] = n + 1
        chunk_name = f"{name}{PAR_INFIX}{n}"
        caller = _B(InsertPoint.before(op))
        operands = [*op.inputs, *op.outputs]
        # The chunk function's arguments: each distinct operand (then the dynamic
        # sizes of memrefs), values the body reads from outside, then the extras.
        distinct: list[SSAValue] = []
        written = [o for k, o in enumerate(op.outputs) if k not in p.reduced]
        for v in operands if not p.reduction else [*op.inputs, *written]:  # reduced: partials
            if v not in distinct:
                distinct.append(v)
        for sub in op.body.walk():
            for v in sub.operands:
                if v not in distinct and _defined_outside(v, op):
                    distinct.append(v)
        body = Block(arg_types=[IndexType(), IndexType()])
        lo, hi = body.args
        inner = _B(InsertPoint.at_end(body))
        call_args: list[SSAValue] = []
        arg_types: list[Attribute] = [IndexType(), IndexType()]
        mapped: dict[SSAValue, tuple[SSAValue, list[SSAValue]]] = {}
        for v in distinct:
            if isinstance(v.owner, arith.ConstantOp):
                c = v.owner.clone()
                inner.op(c)
                mapped[v] = (c.results[0], [])
                continue
            a = body.insert_arg(v.type, len(body.args))
            call_args.append(v)
            arg_types.append(v.type)
            dims: list[SSAValue] = []
            if isinstance(v.type, MemRefType):
                for k, s in enumerate(v.type.get_shape()):
                    if s == DYNAMIC_INDEX:
                        size = caller.dim(v, k)
                        assert isinstance(size, SSAValue)
                        dims.append(body.insert_arg(IndexType(), len(body.args)))
                        call_args.append(size)
                        arg_types.append(IndexType())
            mapped[v] = (a, dims)
        n_rows = caller.v(_loop_size(caller, p, 0))
        rest: SSAValue | int = 1
        for d in range(1, len(p.sizes)):
            rest = caller.mul(rest, _loop_size(caller, p, d))
        row_cost = caller.mul(rest, p.cost)
        if p.reduction:
            chunk = self._reduction(p, body, inner, mapped, caller, n_rows, row_cost, call_args, arg_types, chunk_name, fn)
        else:
            # grain = ceil(MIN_CHUNK_WORK / row_cost) rows
            grain = _ceil_div(caller, self.min_work, row_cost)
            views = self._views(p, inner, mapped, lo, inner.sub(hi, lo))
            _clone_generic(op, views[: len(op.inputs)], views[len(op.inputs):], lo, inner)
            inner.op(func.ReturnOp())
            chunk = self._emit(fn, chunk_name, body, arg_types, call_args, n_rows, grain, caller)
        op.detach()
        op.erase()
        return chunk

    def _views(
        self, p: _Plan, b: _B, mapped: dict[SSAValue, tuple[SSAValue, list[SSAValue]]],
        lo: SSAValue | None, rows: SSAValue | None, outs: Sequence[SSAValue] | None = None,
    ) -> list[SSAValue]:
        op = p.op
        out: list[SSAValue] = []
        for k, (v, cut) in enumerate(zip([*op.inputs, *op.outputs], p.cuts)):
            if outs is not None and k >= len(op.inputs):
                out.append(outs[k - len(op.inputs)])
                continue
            a, dims = mapped[v]
            if not isinstance(v.type, MemRefType):
                out.append(a)
            else:
                out.append(_row_view(b, a, dims, lo if cut else None, rows if cut else None))
        return out

    def _reduction(
        self, p: _Plan, body: Block, inner: _B, mapped: dict[SSAValue, tuple[SSAValue, list[SSAValue]]],
        caller: _B, n_rows: SSAValue, row_cost: SSAValue | int, call_args: list[SSAValue],
        arg_types: list[Attribute], chunk_name: str, fn: func.FuncOp,
    ) -> func.FuncOp:
        op = p.op
        # K slots: the largest power of two <= min(MAX_SLOTS, work / MIN_CHUNK_WORK).
        if p.sizes[0] is not None and isinstance(row_cost, int):
            slots_static = max(1, min(MAX_SLOTS, p.sizes[0] * row_cost // self.min_work, p.sizes[0]))
            slots: SSAValue = caller.idx(1 << (slots_static.bit_length() - 1))
        else:
            work = caller.v(caller.mul(n_rows, row_cost))
            ratio = caller.binary(arith.DivUIOp, work, caller.idx(self.min_work))
            ratio = caller.binary(arith.MinUIOp, ratio, n_rows)
            slots = caller.idx(1)
            k = 2
            while k <= MAX_SLOTS:
                ge = caller.op(cmpi("uge", ratio, caller.idx(k)))
                kc = caller.idx(k)
                slots = caller.op(make(arith.SelectOp, (ge, kc, slots), (kc.type,)))
                k *= 2
        # Partial buffers [K, *output] in the caller, folded after the fork.
        partials: list[SSAValue] = []
        for o in [op.outputs[k] for k in p.reduced]:
            t = o.type
            assert isinstance(t, MemRefType)
            dyn = [caller.dim(o, k) for k, s in enumerate(t.get_shape()) if s == DYNAMIC_INDEX]
            pt = MemRefType(t.element_type, [DYNAMIC_INDEX, *t.get_shape()])
            alloc = memref.AllocOp([slots, *dyn], [], pt)  # type: ignore[list-item]
            alloc.attributes["alignment"] = IntegerAttr(64, 64)
            partials.append(caller.op(alloc))
        # The chunk: for each slot c in [lo, hi): its rows, its partial, the generic.
        lo, hi = body.args[:2]
        n_arg = body.insert_arg(IndexType(), len(body.args))
        k_arg = body.insert_arg(IndexType(), len(body.args))
        call_args += [n_rows, slots]
        arg_types += [IndexType(), IndexType()]
        p_args = []
        for pbuf in partials:
            pa = body.insert_arg(pbuf.type, len(body.args))
            dims = []
            for s in pbuf.type.get_shape():  # type: ignore[attr-defined]
                if s == DYNAMIC_INDEX:
                    dims.append(body.insert_arg(IndexType(), len(body.args)))
            call_args.append(pbuf)
            arg_types.append(pbuf.type)
            for k, s in enumerate(pbuf.type.get_shape()):  # type: ignore[attr-defined]
                if s == DYNAMIC_INDEX:
                    d = caller.dim(pbuf, k)
                    assert isinstance(d, SSAValue)
                    call_args.append(d)
                    arg_types.append(IndexType())
            p_args.append((pa, dims))
        loop_body = Block(arg_types=[IndexType()])
        c = loop_body.args[0]
        lb = _B(InsertPoint.at_end(loop_body))
        q = inner.binary(arith.DivUIOp, n_arg, k_arg)
        r = inner.binary(arith.RemUIOp, n_arg, k_arg)
        row0 = lb.add(lb.binary(arith.MuliOp, c, q), lb.binary(arith.MinUIOp, c, r))
        below = lb.op(cmpi("ult", c, r))
        one, zero = lb.idx(1), lb.idx(0)
        extra = lb.op(make(arith.SelectOp, (below, one, zero), (one.type,)))
        rows = lb.add(q, extra)
        slots_of: dict[int, SSAValue] = {}
        for k_out, (pa, dims), (_, _, identity) in zip(p.reduced, p_args, p.combiners):
            o = op.outputs[k_out]
            # The slot's own row, with the output's shape.
            t = o.type
            assert isinstance(t, MemRefType)
            osizes: list[SSAValue | int] = []
            it = iter(dims[1:])
            for s in t.get_shape():
                osizes.append(next(it) if s == DYNAMIC_INDEX else s)
            strides: list[SSAValue | int] = [1] * len(osizes)
            acc: SSAValue | int = 1
            for k in range(len(osizes) - 1, -1, -1):
                strides[k] = acc
                acc = lb.mul(acc, osizes[k])
            offset = lb.mul(c, acc)
            static_strides = [s if isinstance(s, int) else None for s in strides]
            rt = MemRefType(t.element_type, t.get_shape(), StridedLayoutAttr(static_strides, None))
            slot = lb.op(reinterpret_cast(pa, [offset], osizes, strides, rt))
            elem = t.element_type
            init = constant(IntegerAttr(0, elem)) if identity is None else constant(
                FloatAttr(identity, elem)  # type: ignore[arg-type]
            )
            lb.op(fill_op(lb.op(init), slot))
            slots_of[k_out] = slot
        outs = [
            slots_of[k] if k in slots_of else _row_view(lb, mapped[o][0], mapped[o][1], row0, rows)
            for k, o in enumerate(op.outputs)
        ]
        views = self._views(p, lb, mapped, row0, rows, outs=outs)
        _clone_generic(op, views[: len(op.inputs)], outs, row0, lb)
        lb.op(scf.YieldOp())
        inner.op(scf.ForOp(lo, hi, inner.idx(1), [], Region(loop_body)))
        inner.op(func.ReturnOp())
        chunk = self._emit(fn, chunk_name, body, arg_types, call_args, slots, caller.idx(1), caller)
        # Fold the partials into the outputs, slot by slot.
        for pbuf, o, (_, fold, _) in zip(partials, [op.outputs[k] for k in p.reduced], p.combiners):
            rank = len(o.type.get_shape())  # type: ignore[attr-defined]
            fb = Block(arg_types=[o.type.element_type, o.type.element_type])  # type: ignore[attr-defined]
            x, a = fb.args
            comb = _fold_op(fold, a, x)
            fb.add_op(comb)
            fb.add_op(make(linalg.YieldOp, (comb.results[0],)))
            pmap = AffineMap.identity(rank + 1)
            omap = AffineMap(rank + 1, 0, tuple(AffineDimExpr(k + 1) for k in range(rank)))
            iters = [linalg_attrs.IteratorTypeAttr.reduction()] + [linalg_attrs.IteratorTypeAttr.parallel()] * rank
            caller.op(generic_op([pbuf], [o], Region(fb), [AffineMapAttr(pmap), AffineMapAttr(omap)], iters))
            caller.op(make(memref.DeallocOp, (pbuf,)))
        return chunk

    def _emit(
        self, fn: func.FuncOp, chunk_name: str, body: Block, arg_types: list[Attribute],
        call_args: list[SSAValue], n: SSAValue, grain: SSAValue | int, caller: _B,
    ) -> func.FuncOp:
        roots = [_root(v) if isinstance(v.type, MemRefType) else None for v in call_args]
        attrs = [DictionaryAttr({})] * 2 + [
            DictionaryAttr({"llvm.noalias": UnitAttr()} if r is not None and roots.count(r) == 1 else {})
            for r in roots
        ]
        chunk = func.FuncOp(chunk_name, (arg_types, []), Region(body), visibility="private", arg_attrs=ArrayAttr(attrs))
        fork_types = [IndexType(), IndexType(), *arg_types[2:]]
        fork = func.FuncOp.external(chunk_name + FORK_SUFFIX, fork_types, [])
        self.module.body.block.insert_op_after(chunk, fn)
        self.module.body.block.insert_op_after(fork, chunk)
        caller.op(func.CallOp(fork.sym_name.data, [n, caller.v(grain), *call_args], []))
        return chunk


def _fold_op(name: str, acc: SSAValue, x: SSAValue) -> Operation:
    """`acc <fold> x` for a combiner's fold op name."""
    cls = {
        "arith.addf": arith.AddfOp, "arith.mulf": arith.MulfOp, "arith.maximumf": arith.MaximumfOp,
        "arith.minimumf": arith.MinimumfOp, "arith.maxnumf": arith.MaxnumfOp, "arith.minnumf": arith.MinnumfOp,
        "arith.addi": arith.AddiOp,
    }[name]
    return cls(acc, x)


def _ceil_div(b: _B, a: int, d: SSAValue | int) -> SSAValue | int:
    if isinstance(d, int):
        return max(1, -(-a // max(d, 1)))
    num = b.op(arith.AddiOp(b.idx(a - 1), d))
    return b.op(arith.DivUIOp(num, d))


def _defined_outside(v: SSAValue, op: Operation) -> bool:
    owner = v.owner
    node: Operation | None = owner if isinstance(owner, Operation) else owner.parent_op()  # type: ignore[union-attr]
    while node is not None:
        if node is op:
            return False
        node = node.parent_op()
    return True


def parallelize(module: ModuleOp, min_work: int = MIN_CHUNK_WORK) -> int:
    """Split every eligible generic of `module`'s functions; returns how many."""
    out = FunctionParallelizer(module, min_work)
    return sum(len(out(fn)) for fn in [o for o in module.body.block.ops if isinstance(o, func.FuncOp) and o.body.blocks])


class FunctionParallelizer:
    """`parallelize` one function of a module at a time (`lowering/pipeline.py`'s
    `translate_streamed` passes each function on as soon as it is done)."""

    def __init__(self, module: ModuleOp, min_work: int = MIN_CHUNK_WORK) -> None:
        self.outliner = _Outliner(module, min_work)
        self.min_work = min_work

    def __call__(self, fn: func.FuncOp) -> list[func.FuncOp]:
        """Split `fn`'s eligible generics (none in a chunk function); returns the
        chunk functions made (each followed in the module by its fork's declaration)."""
        made: list[func.FuncOp] = []
        if PAR_INFIX in fn.sym_name.data:
            return made
        for op in [o for o in fn.walk() if isinstance(o, linalg.GenericOp)]:
            p = plan(op, self.min_work)
            if p is not None:
                made.append(self.outliner.rewrite(fn, p))
        return made


@dataclass(frozen=True)
class ParallelizeLoopsPass(ModulePass):
    """Run large parallel loops and reductions on the thread pool (module doc)."""

    name = "parallelize-loops"

    min_chunk_work: int = MIN_CHUNK_WORK
    """Work (cost units) per chunk below which a loop stays on one thread."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        """Outline the eligible generics of every function of `op`."""
        parallelize(op, self.min_chunk_work)

    def per_function(self, module: ModuleOp) -> Callable[[func.FuncOp], list[Operation]]:
        """This pass one function of `module` at a time (`pipeline.translate_streamed`):
        each call returns the chunk functions made, each followed by its fork's
        declaration."""
        split = FunctionParallelizer(module, self.min_chunk_work)

        def run(fn: func.FuncOp) -> list[Operation]:
            return [o for f in split(fn) for o in (f, f.next_op) if o is not None]

        return run


# ----------------------------------------------------------------- LLVM IR level


def lower_forks(mod: lir.Module) -> int:
    """Define each declared `<chunk>__fork` of an llvmlite module (see the module
    docstring): pack the arguments, call `pb_parallel_for` with a trampoline that
    unpacks them and calls `<chunk>(lo, hi, ...)`.  Returns how many."""
    count = 0
    for fork in list(mod.functions):
        if fork.is_declaration and fork.name.endswith(FORK_SUFFIX):
            chunk = mod.globals.get(fork.name[: -len(FORK_SUFFIX)])
            if isinstance(chunk, lir.Function) and chunk.is_declaration:
                raise ValueError(f"parallelize-loops: {fork.name} has no chunk function")
            define_fork(mod, fork)
            count += 1
    return count


def lower_forks_of(mod: lir.Module, caller: str) -> list[lir.Function]:
    """Define the forks of `caller`'s chunk functions (`<caller>__par<N>__fork`, N =
    0, 1, ...: `parallelize-loops` numbers them so), as `lower_forks` does, before
    the chunk functions are written (only their signatures are needed).  Returns
    each fork and its trampoline."""
    out: list[lir.Function] = []
    n = 0
    while isinstance(fork := mod.globals.get(f"{caller}{PAR_INFIX}{n}{FORK_SUFFIX}"), lir.Function):
        if fork.is_declaration:
            out += [fork, define_fork(mod, fork)]
        n += 1
    return out


def define_fork(mod: lir.Module, fork: lir.Function) -> lir.Function:
    """Define the declared `fork` (see `lower_forks`); returns its trampoline."""
    ptr = lir.PointerType()
    i64 = lir.IntType(64)
    name = fork.name
    chunk = mod.globals.get(name[: -len(FORK_SUFFIX)])
    if not isinstance(chunk, lir.Function):
        raise ValueError(f"parallelize-loops: {name} has no chunk function")
    pfor = mod.globals.get(PARALLEL_FOR)
    if not isinstance(pfor, lir.Function):
        pfor = lir.Function(mod, lir.FunctionType(lir.VoidType(), [ptr, ptr, i64, i64]), PARALLEL_FOR)
    extra = list(chunk.function_type.args[2:])
    packed = lir.LiteralStructType(extra)
    tramp = lir.Function(mod, lir.FunctionType(lir.VoidType(), [ptr, i64, i64]), name[: -len(FORK_SUFFIX)] + TRAMP_SUFFIX)
    tramp.linkage = "internal"
    tb = lir.IRBuilder(tramp.append_basic_block("entry"))
    ctx, lo, hi = tramp.args
    zero = lir.Constant(lir.IntType(32), 0)
    vals = [tb.load(tb.gep(ctx, [zero, lir.Constant(lir.IntType(32), k)], source_etype=packed), typ=t)
            for k, t in enumerate(extra)]
    lo_c, hi_c = (tb.trunc(x, chunk.function_type.args[i]) if chunk.function_type.args[i] != i64 else x
                  for i, x in ((0, lo), (1, hi)))
    tb.call(chunk, [lo_c, hi_c, *vals])
    tb.ret_void()
    fork.linkage = "internal"
    fb = lir.IRBuilder(fork.append_basic_block("entry"))
    n, grain, *args = fork.args
    slot = fb.alloca(packed)
    slot.type = ptr  # opaque, as every pointer of the module (LLVM has no typed ones)
    for k, a in enumerate(args):
        fb.store(a, fb.gep(slot, [zero, lir.Constant(lir.IntType(32), k)], source_etype=packed))
    n64, g64 = (fb.sext(x, i64) if x.type != i64 else x for x in (n, grain))
    fb.call(pfor, [tramp, slot, n64, g64])
    fb.ret_void()
    return tramp


__all__ = [
    "FORK_SUFFIX", "MAX_SLOTS", "MIN_CHUNK_WORK", "PARALLEL_FOR", "PAR_INFIX", "ParallelizeLoopsPass",
    "FunctionParallelizer", "define_fork", "lower_forks", "lower_forks_of", "parallelize", "plan",
]
_ = IntegerType
