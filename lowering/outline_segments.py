"""`outline-segments`: the entry function's loops, outlined into functions of their own.

A training step lowers to ONE entry function; for ResNet-18 that was ~4,000 basic
blocks once the loops became a control-flow graph, and both xDSL (`convert-scf-to-cf`
looks blocks up by a linear scan: quadratic in the blocks of a region) and LLVM (O3
and instruction selection are superlinear per function) spent minutes on it.  This
pass runs on the memref/linalg form, before the loop passes: the entry keeps its
allocations, frees, views, cheap scalar ops and the order of everything, and each
run of compute ops between them (linalg ops, `scf` loops and branches, calls) moves
into a function `<entry>__seg<N>` called in its place.  Every later pass and LLVM then
see many small functions: compile time grows linearly with the program.

What a segment takes: the values it uses from outside as arguments (memrefs, which
become bare pointers, and scalars); `arith.constant`s are cloned in instead, so LLVM
still sees them.  A memref argument with dynamic dimensions also gets its sizes
(`memref.dim` at the call site, which the memref lowering resolves) and is viewed
through a `memref.reinterpret_cast` inside, as the entry views its own arguments.
A segment returns nothing: it writes the buffers it was given.  An op whose results
are used after its run stays in the entry.  Segments are marked `noinline` in the
LLVM IR (`lowering.pipeline.to_llvmlite`), else O3 would inline them back.

Ctrl-C (issue 32): in a module that declares `pb_poll` (the compiled CPU backend's
do, `runtime/native/compiler.py`), each segment call is `scf.if pb_poll() == 0 {
call }`, so that an interrupted run skips the rest of its work; the commit point
(`pb_commit_point`, `LowererBase.commit_point`) stays in the entry.  (`while`
loops poll too, in their condition: `lowering/control.py`.)

Runtime cost: one call per segment (and one poll: an atomic load).  A memref argument is `noalias` unless another
argument of the same call views the same buffer, so LLVM vectorizes segments as it
did the single entry (measured in benchmarks/RESULTS.md, issue 18).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IntegerAttr,
    i32,
    ArrayAttr,
    DictionaryAttr,
    FunctionType,
    IndexType,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from pullback.lowering.build import cmpi, constant, make
from pullback.lowering.lowerer.base import COMMIT_POINT, POLL
from pullback.lowering.views import reinterpret_cast

SEGMENT_INFIX = "__seg"
"""Outlined functions are named `<entry>__seg<N>` (`to_llvmlite` marks them noinline)."""

_PRIVATE = StringAttr("private")
"""An outlined segment's `sym_visibility`."""

# (`POLL`, the thread pool's interrupt poll: in a module that declares it, each
# segment call is guarded by it.)

_ANCHORS = (memref.AllocOp, memref.DeallocOp, memref.ReinterpretCastOp, memref.DimOp, func.ReturnOp)
"""Ops that stay in the entry: they define or free the buffers segments work on."""


def _segments(block: Block, max_ops: int) -> list[list[Operation]]:
    """Runs of consecutive outlinable ops of `block` (each at most about `max_ops`
    nested ops, cut only where no result is used further on)."""
    ops = list(block.ops)
    # Every op at any depth -> the index of its top-level ancestor (one walk).
    index: dict[Operation, int] = {}
    size = []
    for i, op in enumerate(ops):
        n = len(index)
        index.update((sub, i) for sub in op.walk())
        size.append(len(index) - n)
    last_use = [i for i in range(len(ops))]
    for i, op in enumerate(ops):
        for r in op.results:
            for use in r.uses:
                top = index.get(use.operation)
                if top is not None:
                    last_use[i] = max(last_use[i], top)
    anchor = [isinstance(op, (*_ANCHORS, arith.ConstantOp)) or _is_call_of(op, COMMIT_POINT) for op in ops]
    changed = True
    while changed:  # an op used past the end of its run stays in the entry
        changed = False
        start = 0
        for i in range(len(ops) + 1):
            if i == len(ops) or anchor[i]:
                for k in range(start, i):
                    if last_use[k] >= i:
                        anchor[k] = changed = True
                start = i + 1
    out: list[list[Operation]] = []
    current: list[Operation] = []
    need = n = 0
    for i, op in enumerate(ops):
        if anchor[i]:
            if current:
                out.append(current)
            current, need, n = [], 0, 0
            continue
        current.append(op)
        need, n = max(need, last_use[i]), n + size[i]
        if n >= max_ops and need <= i:
            out.append(current)
            current, need, n = [], 0, 0
    if current:
        out.append(current)
    # A segment without loops or branches is not worth a call.
    return [s for s in out if any(op.regions for op in s)]


def _is_call_of(op: Operation, callee: str) -> bool:
    return isinstance(op, func.CallOp) and op.callee.string_value() == callee


def _polls(module: ModuleOp) -> bool:
    """Whether `module` declares `POLL` (the compiled CPU backend's modules do)."""
    return any(isinstance(o, func.FuncOp) and o.sym_name.data == POLL for o in module.body.block.ops)


def _guarded(call: func.CallOp) -> list[Operation]:
    """`scf.if pb_poll() == 0 { call }`: the segment is skipped once its run was
    interrupted (see the module docstring)."""
    polled = make(func.CallOp, (), (i32,), {"callee": SymbolRefAttr(POLL)})
    zero = constant(IntegerAttr(0, i32))
    go = cmpi("eq", polled.results[0], zero.results[0])
    body = Block()
    body.add_ops([call, make(scf.YieldOp)])
    return [polled, zero, go, make(scf.IfOp, (go.results[0],), (), regions=(Region(body), Region()))]


def _root(mem: SSAValue) -> SSAValue:
    """The buffer `mem` views (through reinterpret casts)."""
    while isinstance(mem.owner, memref.ReinterpretCastOp):
        mem = mem.owner.source
    return mem


def _view(arg: SSAValue, dims: Sequence[SSAValue], block: Block) -> SSAValue:
    """`arg` (a dynamically shaped memref argument) viewed with sizes `dims`."""
    t = arg.type
    assert isinstance(t, MemRefType)
    shape = t.get_shape()
    sizes: list[SSAValue | int] = []
    it = iter(dims)
    for n in shape:
        sizes.append(next(it) if n == DYNAMIC_INDEX else n)
    strides: list[SSAValue | int] = []
    acc: SSAValue | int = 1
    for k in range(len(sizes) - 1, -1, -1):
        strides.insert(0, acc)
        if k == 0:
            break  # the outermost size scales no stride
        d = sizes[k]
        if isinstance(acc, int) and isinstance(d, int):
            acc = acc * d
        else:
            lhs = _index(acc, block)
            rhs = _index(d, block)
            mul = arith.MuliOp(lhs, rhs)
            block.add_op(mul)
            acc = mul.result
    cast = reinterpret_cast(arg, [0], sizes, strides, MemRefType(t.element_type, shape))
    block.add_op(cast)
    return cast.result


def _index(v: SSAValue | int, block: Block) -> SSAValue:
    if isinstance(v, SSAValue):
        return v
    c = arith.ConstantOp.from_int_and_width(v, IndexType())
    block.add_op(c)
    return c.result


def _first(item: tuple[str, Attribute]) -> str:
    return item[0]


def structure(seg_fn: func.FuncOp) -> Hashable:
    """What structurally equal functions share and others do not: the signature,
    the `noalias` facts and, for every op in order, its name, properties,
    attributes, result types, which earlier value (argument or result, numbered in
    order of definition) each operand is, and its regions' blocks with their
    argument types.  Exact (equal keys are `is_structurally_equivalent` functions
    but for their names: attributes compare by value), and computed once per
    segment, when it is made: a segment is lowered further as soon as it is out
    (`lowering/pipeline.py`), so a later twin could not be compared with it."""
    ids: dict[SSAValue, int] = {}
    out: list[Hashable] = [seg_fn.function_type, seg_fn.arg_attrs]

    def region(r: Region) -> None:
        out.append(len(r.blocks))
        for blk in r.blocks:
            out.append(tuple(a.type for a in blk.args))
            for a in blk.args:
                ids[a] = len(ids)
            for op in blk.ops:
                out.append((
                    op.name,
                    tuple(ids[v] for v in op.operands),
                    tuple(r.type for r in op.results),
                    tuple(sorted(op.properties.items(), key=_first)),
                    tuple(sorted(op.attributes.items(), key=_first)),
                    len(op.regions),
                    len(op.successors),
                ))
                for res in op.results:
                    ids[res] = len(ids)
                for sub in op.regions:
                    region(sub)

    region(seg_fn.body)
    return tuple(out)


def outline(fn: func.FuncOp, module: ModuleOp, max_ops: int, dedupe: bool = True) -> int:
    """Outline `fn`'s segments (see the module docstring); returns how many
    functions that made (`outlined`)."""
    return sum(1 for _ in outlined(fn, module, max_ops, dedupe))


def outlined(fn: func.FuncOp, module: ModuleOp, max_ops: int, dedupe: bool = True) -> Iterator[func.FuncOp]:
    """Outline `fn`'s segments one by one, yielding each function made as soon as
    it is in the module (a caller may lower it further before the next is cut).
    With `dedupe`, a segment structurally equal to an earlier one (same ops, types,
    constants and `noalias` facts: a ResNet's repeated blocks, a forward op and the
    same op in another layer: `structure`) calls that function instead of becoming
    another copy, so LLVM optimizes and emits it once."""
    if len(fn.body.blocks) != 1:
        return
    block = fn.body.block
    name = fn.sym_name.data
    after: Operation = fn
    twins: dict[Hashable, func.FuncOp] = {}
    poll = _polls(module)
    segments = _segments(block, max_ops)
    for n, seg in enumerate(segments):
        # One walk of the segment: its ops (to tell inner values from outer ones)
        # and, for each value from outside, the operand slots that use it (rewired
        # to the segment's argument below: no search through every use of a value
        # that the whole program shares, which made this pass quadratic).
        ops_inside = {sub for op in seg for sub in op.walk()}
        outer: list[SSAValue] = []
        slots: dict[SSAValue, list[tuple[Operation, int]]] = {}
        for op in seg:
            for sub in op.walk():
                for k, v in enumerate(sub.operands):
                    owner = v.owner
                    if isinstance(owner, Operation):
                        if owner in ops_inside:
                            continue
                    elif owner.parent_op() in ops_inside:
                        continue  # a block argument of a region nested in the segment
                    if v not in slots:
                        slots[v] = []
                        outer.append(v)
                    slots[v].append((sub, k))
        body = Block()
        call_args: list[SSAValue] = []
        arg_types: list[Attribute] = []
        mapping: dict[SSAValue, SSAValue] = {}
        dyn: list[tuple[SSAValue, SSAValue, list[SSAValue]]] = []
        for v in outer:
            if isinstance(v.owner, arith.ConstantOp):
                c = v.owner.clone()
                body.add_op(c)
                mapping[v] = c.results[0]
                continue
            arg: SSAValue = body.insert_arg(v.type, len(body.args))
            call_args.append(v)
            arg_types.append(v.type)
            mapping[v] = arg
            if isinstance(v.type, MemRefType) and DYNAMIC_INDEX in v.type.get_shape():
                dims: list[SSAValue] = []
                for k, d in enumerate(v.type.get_shape()):
                    if d != DYNAMIC_INDEX:
                        continue
                    kc = arith.ConstantOp.from_int_and_width(k, IndexType())
                    dim = memref.DimOp(v, kc.result)
                    block.insert_ops_before([kc, dim], seg[0])
                    darg = body.insert_arg(IndexType(), len(body.args))
                    call_args.append(dim.result)
                    arg_types.append(IndexType())
                    dims.append(darg)
                dyn.append((v, arg, dims))
        for v, arg, dims in dyn:
            mapping[v] = _view(arg, dims, body)
        callee = f"{name}{SEGMENT_INFIX}{n}"
        # A memref argument no other argument views is `noalias`: the entry's own
        # arguments are distinct buffers (the runtime's contract, see
        # convert-func-to-llvm) and allocations are fresh, so only views of one
        # buffer (reinterpret casts) can overlap.  Without it LLVM vectorizes behind
        # run-time overlap checks, or not at all past its check budget.
        roots = [_root(v) if isinstance(v.type, MemRefType) else None for v in call_args]
        alone = [r is not None and roots.count(r) == 1 for r in roots]
        arg_attrs = ArrayAttr([DictionaryAttr({"llvm.noalias": UnitAttr()} if a else {}) for a in alone])
        # (`func.CallOp`, `func.ReturnOp` and `func.FuncOp` built by `make`, with the
        # properties of their IRDL constructors in order: lowering/build.py.)
        call = make(func.CallOp, call_args, (), {"callee": SymbolRefAttr(callee)})
        if poll:
            block.insert_ops_before(_guarded(call), seg[0])
        else:
            block.insert_op_before(call, seg[0])
        for op in seg:
            op.detach()
            body.add_op(op)
        for v, new in mapping.items():
            for user, k in slots[v]:
                user.operands[k] = new
            if new.name_hint is None:
                new.name_hint = v.name_hint  # the argument keeps the value's name
        body.add_op(make(func.ReturnOp))
        seg_fn = make(
            func.FuncOp,
            properties={
                "sym_name": StringAttr(callee),
                "function_type": FunctionType.from_lists(arg_types, []),
                "sym_visibility": _PRIVATE,
                "arg_attrs": arg_attrs,
            },
            regions=(Region(body),),
        )
        if dedupe:
            key = structure(seg_fn)
            twin = twins.get(key)
            if twin is not None:
                call.callee = SymbolRefAttr(twin.sym_name)
                continue
            twins[key] = seg_fn
        module.body.block.insert_op_after(seg_fn, after)
        after = seg_fn
        yield seg_fn


@dataclass(frozen=True)
class OutlineSegmentsPass(ModulePass):
    """Outline the loops of each entry (`llvm.emit_c_interface`) function into
    functions of at most about `max_ops` ops (see the module docstring)."""

    name = "outline-segments"

    max_ops: int = 200
    """Nested ops per segment before a cut is taken (where one is allowed)."""

    dedupe: bool = True
    """Structurally equal segments become one function called from each place."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        """Outline every entry function of `op`."""
        for fn in [o for o in op.body.block.ops if isinstance(o, func.FuncOp)]:
            if "llvm.emit_c_interface" in fn.attributes and fn.body.blocks:
                outline(fn, op, self.max_ops, self.dedupe)
