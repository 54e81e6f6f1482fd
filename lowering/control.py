"""Lowering of the control family (`dialects/pd/control.py`): `pd.if` to `scf.if`,
`pd.while` to `scf.while`, and the value stacks reverse mode uses.

Regions are programs of their own (`abi.Program.of_block`), lowered by a nested
`Lowerer` (`Lowerer.sub`) that shares the buffers and sizes of outer values, so a
region reads captured values straight from their buffers and gets the same fusion
as straight-line code.  What crosses a region boundary is a buffer and its dynamic
sizes:

* `pd.if`: each branch yields, per result, a buffer the `if` then owns (an
  allocation of the branch handed over, or a fresh copy when the branch yields an
  outer value or yields one buffer twice) and an `index` per dynamic dimension
  whose size the branches do not share.  After the `if` the buffers are ordinary
  temporaries, freed after their last reader.
* `pd.while`: the loop owns one buffer per carried value (the initial values are
  copied in once).  An iteration computes the next values into buffers of its own;
  at its end each carried buffer is either handed over as a next value (a value
  carried unchanged, or a stack the body popped) or freed, so nothing leaks and
  nothing is copied that need not be.  Dynamic sizes are carried as `index` values
  next to the buffers; a size the body yields unchanged is the initial one after
  the loop, the others are known only at run time (`Lowerer.control_sizes`).
* Stacks are buffers whose first dimension counts entries: a push copies the stack
  into a buffer one entry longer (the loop's body frees the old one), a pop is a
  view of its first `n - 1` entries (no copy), a read copies one entry out.  Stack
  indices and pops are range checked like gathers (`Lowerer.check_slot`).

Memory is read through bare pointers whose sizes are the values that defined them
(`finalize-memref-to-llvm`), so a buffer that comes out of a region (a block
argument, an `scf` result) is always used through a `memref.reinterpret_cast`
stating its sizes.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, func, llvm, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, UnrealizedConversionCastOp, i64
from xdsl.ir import Attribute, Block, Region, SSAValue

from pullback.dialects import pd
from pullback.dialects.pd.base import DYN, shape_of
from pullback.lowering.abi import Program
from pullback.lowering.lowerer import Lowerer
from pullback.lowering.lowerer.sizes import Size
from pullback.lowering.registry import lowers, result_sizes
from pullback.lowering.scalar import Scalar
from pullback.lowering.views import elem_of_buffer, root_buffer
from pullback.lowering.llvm.types import element_bytes
from pullback.lowering.loop_nest import copy_window, if_then, load, store, to_index
from pullback.lowering.shape import add_sizes, sub_sizes
from pullback.lowering.views import reinterpret_cast

# ------------------------------------------------------------------ buffers


def buffer_type(v: SSAValue) -> MemRefType[Attribute]:
    """The memref type a region boundary carries `pd` value `v` as (its tensor
    type's element type and shape, `?` where dynamic)."""
    t = v.type
    return MemRefType(elem_of_buffer(t), list(shape_of(t)))


def view_as(low: Lowerer, mem: SSAValue, sizes: Sequence[Size], t: MemRefType[Attribute]) -> SSAValue:
    """`mem` seen as type `t` with the given sizes (a `reinterpret_cast`, no copy):
    what makes a region's buffer usable, since its sizes are stated nowhere else."""
    shape = t.get_shape()
    if all(d != DYN for d in shape) and mem.type == t:
        return mem
    sized = [low.as_value(s) if d == DYN else d for s, d in zip(sizes, shape)]
    strides: list[Size] = []
    acc: Size = 1
    for i, d in enumerate(reversed(list(sizes))):
        strides.insert(0, acc)
        if i < len(sizes) - 1:
            acc = low.mul_sizes([acc, d])
    op = reinterpret_cast(mem, [0], sized, strides, t)
    low.emit(op)
    return op.result


def owned_alloc(low: Lowerer, t: MemRefType[Attribute], sizes: Sequence[Size]) -> SSAValue:
    """A buffer of type `t` that no lowerer frees: the region op owning it does."""
    dyn = [low.as_value(s) for s, d in zip(sizes, t.get_shape()) if d == DYN]
    op = memref.AllocOp(dyn, [], t, alignment=IntegerAttr(64, i64))
    low.emit(op)
    return op.memref


def dynamic_sizes(t: MemRefType[Attribute], sizes: Sequence[Size]) -> list[Size]:
    """The sizes of `t`'s dynamic dimensions, in order."""
    return [s for s, d in zip(sizes, t.get_shape()) if d == DYN]


def hand_over(
    sub: Lowerer, values: Sequence[SSAValue], owned: set[SSAValue], types: Sequence[MemRefType[Attribute]]
) -> tuple[list[SSAValue], list[list[Size]], set[SSAValue]]:
    """The buffers and sizes a region yields for `values`, each owned by the region
    op: a buffer in `owned` (allocated in the region, or carried in by the loop) is
    handed over once, anything else (an outer value, a second use) is copied.
    Returns the buffers (typed `types`), their sizes and the handed-over roots."""
    taken: set[SSAValue] = set()
    mems: list[SSAValue] = []
    sizes: list[list[Size]] = []
    for v, t in zip(values, types):
        mem, vs = sub.read(v), list(sub.sizes_of(v))
        root = root_buffer(mem)
        if root not in owned or root in taken:
            copy = owned_alloc(sub, MemRefType(t.get_element_type(), [s if isinstance(s, int) else DYN for s in vs]), vs)
            sub.copy_buffer(mem, copy)
            mem = root = copy
        taken.add(root)
        mems.append(view_as(sub, mem, vs, t))
        sizes.append(vs)
    return mems, sizes, taken


def scalar_of(low: Lowerer, v: SSAValue) -> SSAValue:
    """The element of one-element value `v` (a predicate, an index) as a scalar."""
    mem = low.read(v)
    rank = len(shape_of(v.type))
    return low.emit(memref.LoadOp.get(mem, [low.index(0)] * rank)).results[0]


def _same(a: Size, b: Size) -> bool:
    return a == b if isinstance(a, int) and isinstance(b, int) else a is b


def bind_results(
    low: Lowerer, op: pd.IfOp | pd.WhileOp, mems: Sequence[SSAValue], sizes: Sequence[list[Size]]
) -> None:
    """Make the buffers a region op produced the buffers of its results: temporaries
    of the enclosing program (or copied into the result's output buffer)."""
    for r, mem, vs in zip(op.results, mems, sizes):
        low.temps[mem] = low.current
        low.sizes[r] = list(vs)
        view = view_as(low, mem, vs, buffer_type(r))
        if r in low.dest:
            low.copy_buffer(view, low.out(r))
        else:
            low.buf[r] = view


def _read_captured(low: Lowerer, op: pd.IfOp | pd.WhileOp) -> None:
    # Outer buffers the regions read live at least until the region op.
    for v in pd.captured_values(op):
        low.read(v)


# ----------------------------------------------------------------------- if


@lowers(pd.IfOp)
def _if(low: Lowerer, op: pd.IfOp) -> None:
    _read_captured(low, op)
    pred = scalar_of(low, op.cond)
    types = [buffer_type(r) for r in op.results]
    blocks: list[Block] = []
    yielded: list[tuple[list[SSAValue], list[list[Size]]]] = []
    for region in (op.then_region, op.else_region):
        block = Block()
        sub = low.sub(Program.of_block(region.block, low.prog.alias), block)
        sub.lower_ops()
        mems, sizes, taken = hand_over(sub, sub.prog.fetches, set(sub.temps), types)
        sub.free_temps(keep=taken)
        blocks.append(block)
        yielded.append((mems, sizes))
    (then_mems, then_sizes), (else_mems, else_sizes) = yielded
    # A dynamic size both branches share (an outer value) is used as it is; the
    # others leave the `if` as results.
    out_sizes: list[list[Size]] = [
        [size if d == DYN else d for size, d in zip(sizes, t.get_shape())]  # static: the type's
        for sizes, t in zip(then_sizes, types)
    ]
    extra: list[tuple[int, int]] = []
    for j, t in enumerate(types):
        for k, d in enumerate(t.get_shape()):
            if d == DYN and not _same(then_sizes[j][k], else_sizes[j][k]):
                extra.append((j, k))
    for block, mems, sizes in ((blocks[0], then_mems, then_sizes), (blocks[1], else_mems, else_sizes)):
        # (index constants live at the top of the entry function)
        block.add_op(scf.YieldOp(*mems, *(low.as_value(sizes[j][k]) for j, k in extra)))
    new = scf.IfOp(pred, [*types, *([IndexType()] * len(extra))], Region(blocks[0]), Region(blocks[1]))
    low.emit(new)
    for (j, k), size in zip(extra, new.results[len(types):]):
        out_sizes[j][k] = size
        low.control_sizes.add(size)
    bind_results(low, op, new.results[: len(types)], out_sizes)


# -------------------------------------------------------------------- while


@lowers(pd.WhileOp)
def _while(low: Lowerer, op: pd.WhileOp) -> None:
    _read_captured(low, op)
    n = len(op.inits)
    types = [buffer_type(v) for v in op.inits]
    init_sizes = [list(low.sizes_of(v)) for v in op.inits]
    # The loop owns its carried buffers: the initial values are copied in once.
    inits: list[SSAValue] = []
    for v, t, vs in zip(op.inits, types, init_sizes):
        mem = owned_alloc(low, t, vs)
        low.copy_buffer(low.read(v), mem)
        inits.append(mem)
    dyn = [(j, k) for j, t in enumerate(types) for k, d in enumerate(t.get_shape()) if d == DYN]
    arg_types: list[Attribute] = [*types, *([IndexType()] * len(dyn))]

    def bind(sub: Lowerer, pd_block: Block, block: Block) -> None:
        sizes = [list(vs) for vs in init_sizes]
        for (j, k), a in zip(dyn, block.args[n:]):
            sizes[j][k] = a
        for j, a in enumerate(pd_block.args):
            sub.sizes[a] = sizes[j]
            sub.buf[a] = view_as(sub, block.args[j], sizes[j], types[j])

    before = Block(arg_types=arg_types)
    cond = low.sub(Program.of_block(op.cond_block(), low.prog.alias), before)
    bind(cond, op.cond_block(), before)
    cond.lower_ops()
    (c,) = cond.prog.fetches
    # (Ctrl-C: an interrupted run leaves the loop at once: `LowererBase.polled`.)
    flag = cond.polled(scalar_of(cond, c))
    cond.free_temps()
    before.add_op(scf.ConditionOp(flag, *before.args))

    after = Block(arg_types=arg_types)
    body = low.sub(Program.of_block(op.body_block(), low.prog.alias), after)
    bind(body, op.body_block(), after)
    body.consumable = set(op.body_block().args)
    body.lower_ops()
    carried = [a for a in after.args[:n] if a not in body.consumed]
    mems, sizes, taken = hand_over(body, body.prog.fetches, set(body.temps) | set(carried), types)
    body.free_temps(keep=taken)
    for a in carried:
        if a not in taken:  # a carried buffer the next iteration does not reuse
            body.emit(memref.DeallocOp.get(a))
    after.add_op(scf.YieldOp(*mems, *(low.as_value(sizes[j][k]) for j, k in dyn)))

    loop = scf.WhileOp([*inits, *(low.as_value(init_sizes[j][k]) for j, k in dyn)], arg_types, [before], [after])
    low.emit(loop)
    out_sizes = [list(vs) for vs in init_sizes]
    for i, (j, k) in enumerate(dyn):
        # Unchanged by the body (carried as is, or recomputed from outer sizes):
        # the initial size.  Otherwise known only when the loop has run.
        if not (_same(sizes[j][k], after.args[n + i]) or _same(sizes[j][k], init_sizes[j][k])):
            out_sizes[j][k] = loop.results[n + i]
            low.control_sizes.add(loop.results[n + i])
    bind_results(low, op, loop.results[:n], out_sizes)


# ------------------------------------------------------------------- stacks


def _entry_view(low: Lowerer, x: SSAValue) -> SSAValue:
    """Value `x` seen as a stack of one entry (`[1, *x.shape]`)."""
    mem = low.read(x)
    sizes = [1, *low.sizes_of(x)]
    return view_as(low, mem, sizes, MemRefType(elem_of_buffer(mem), [1, *shape_of(x.type)]))


def _checked_index(low: Lowerer, op: pd.PdOp, i: SSAValue, count: Size) -> SSAValue:
    """Index scalar `i` of `op` as an `index`, reported (and clamped) when it is not
    in `[0, count)`: a failed check makes the runtime raise what the interpreter
    raises, and the clamped index keeps the copy in bounds meanwhile."""
    s = Scalar(low.b)
    n = low.as_value(count)
    idx = to_index(s, i)
    slot = low.check_slot(op, "index")
    if slot is not None:
        status, code = slot
        bad = s.emit(arith.OrIOp(s.cmp("lt", idx, low.index(0)), s.cmp("ge", idx, n)))

        def report(s1: Scalar) -> None:
            first = s1.cmp("eq", load(s1, status, [low.index(0)]), s1.const(0, i64))

            def record(s2: Scalar) -> None:
                as_i64 = [s2.emit(arith.IndexCastOp(x, i64)) for x in (idx, n)]
                for k, x in enumerate((s2.const(code, i64), *as_i64)):
                    store(s2, x, status, [low.index(k)])

            if_then(s1, first, record)

        if_then(s, bad, report)
    last = s.sub(n, low.index(1))
    return s.max(s.min(idx, last), low.index(0))


def _entry_offsets(low: Lowerer, stack: SSAValue, row: Size) -> list[Size]:
    return [row, *([0] * (len(shape_of(stack.type)) - 1))]


@lowers(pd.StackCreateOp)
def _stack_create(low: Lowerer, op: pd.StackCreateOp) -> None:
    low.out(op.results[0])  # no entries: nothing to write


@result_sizes(pd.StackCreateOp)
def _stack_create_size(low: Lowerer, op: pd.StackCreateOp, r: SSAValue, k: int) -> Size | None:
    return low.index(0) if k == 0 else low.sizes_of(op.x)[k - 1]


def _dies_here(low: Lowerer, op: pd.StackPushOp) -> bool:
    """Whether the push may grow its stack's buffer in place: the lowerer owns it
    (a loop's carried stack) and this push is its only reader."""
    s = low.prog.resolve(op.stack)
    return (
        s in low.consumable and s not in low.prog.fetches
        and [u for u, _ in low.prog.uses.get(s, [])] == [op]
        and op.results[0] not in low.dest
    )


def _grow(low: Lowerer, op: pd.StackPushOp) -> SSAValue:
    """The stack's buffer reallocated one entry longer (`realloc`: in place when the
    heap can extend it, an O(1) remap for large blocks, a copy otherwise) instead of
    a fresh buffer and a copy of every entry on each push."""
    r = op.results[0]
    mem = low.read(op.stack)
    low.consumed.add(root_buffer(mem))
    elem = elem_of_buffer(mem)
    count = low.as_value(low.mul_sizes(low.sizes[r]))
    size = low.emit(arith.MuliOp(count, low.index(element_bytes(elem)))).results[0]
    nbytes = low.emit(arith.IndexCastOp(size, i64)).results[0]
    ptr = llvm.LLVMPointerType()
    old = low.emit(UnrealizedConversionCastOp.get([root_buffer(mem)], [ptr])).results[0]
    new = low.emit(func.CallOp("realloc", [old, nbytes], [ptr])).results[0]
    t = buffer_type(r)
    grown = low.emit(UnrealizedConversionCastOp.get([new], [t])).results[0]
    low.temps[grown] = low.current
    view = view_as(low, grown, low.sizes[r], t)
    low.buf[r] = view
    return view


@lowers(pd.StackPushOp)
def _stack_push(low: Lowerer, op: pd.StackPushOp) -> None:
    count = low.sizes_of(op.stack)[0]
    if _dies_here(low, op):
        out = _grow(low, op)
    else:
        out = low.out(op.results[0])
        copy_window(low, low.read(op.stack), out, low.sizes_of(op.stack))
    copy_window(low, _entry_view(low, op.x), out, [1, *low.sizes_of(op.x)],
                dst_offsets=_entry_offsets(low, op.stack, count))


@result_sizes(pd.StackPushOp)
def _stack_push_size(low: Lowerer, op: pd.StackPushOp, r: SSAValue, k: int) -> Size | None:
    s = low.sizes_of(op.stack)
    return add_sizes(low, s[0], 1) if k == 0 else s[k]


@lowers(pd.StackPopOp)
def _stack_pop(low: Lowerer, op: pd.StackPopOp) -> None:
    stack = low.read(op.stack)
    count = low.sizes_of(op.stack)[0]
    # Popping an empty stack is reported as index -1 of 0 entries.
    top = _checked_index(low, op, low.emit(arith.SubiOp(low.as_value(count), low.index(1))).results[0], count)
    if low.needed(op.top):
        out = view_as(low, low.out(op.top), [1, *low.sizes[op.top]],
                      MemRefType(elem_of_buffer(stack), [1, *shape_of(op.top.type)]))
        copy_window(low, stack, out, [1, *low.sizes[op.top]], src_offsets=_entry_offsets(low, op.stack, top))
    if low.needed(op.rest):
        # The first n - 1 entries, in place: stacks are never written after creation.
        rest = view_as(low, stack, low.sizes[op.rest], buffer_type(op.rest))
        if op.rest in low.dest:
            low.copy_buffer(rest, low.out(op.rest))
        else:
            low.buf[op.rest] = rest


@result_sizes(pd.StackPopOp)
def _stack_pop_size(low: Lowerer, op: pd.StackPopOp, r: SSAValue, k: int) -> Size | None:
    s = low.sizes_of(op.stack)
    if r is op.top:
        return s[k + 1]
    return sub_sizes(low, s[0], 1) if k == 0 else s[k]


@lowers(pd.StackReadOp)
def _stack_read(low: Lowerer, op: pd.StackReadOp) -> None:
    stack = low.read(op.stack)
    row = _checked_index(low, op, scalar_of(low, op.index), low.sizes_of(op.stack)[0])
    r = op.results[0]
    out = view_as(low, low.out(r), [1, *low.sizes[r]], MemRefType(elem_of_buffer(stack), [1, *shape_of(r.type)]))
    copy_window(low, stack, out, [1, *low.sizes[r]], src_offsets=_entry_offsets(low, op.stack, row))


@result_sizes(pd.StackReadOp)
def _stack_read_size(low: Lowerer, op: pd.StackReadOp, r: SSAValue, k: int) -> Size | None:
    return low.sizes_of(op.stack)[k + 1]


@lowers(pd.StackWriteOp)
def _stack_write(low: Lowerer, op: pd.StackWriteOp) -> None:
    out = low.out(op.results[0])
    sizes = low.sizes_of(op.stack)
    row = _checked_index(low, op, scalar_of(low, op.index), sizes[0])
    copy_window(low, low.read(op.stack), out, sizes)
    copy_window(low, _entry_view(low, op.x), out, [1, *low.sizes_of(op.x)],
                dst_offsets=_entry_offsets(low, op.stack, row))


@result_sizes(pd.StackWriteOp)
def _stack_write_size(low: Lowerer, op: pd.StackWriteOp, r: SSAValue, k: int) -> Size | None:
    return low.sizes_of(op.stack)[k]


@lowers(pd.StackSizeOp)
def _stack_size(low: Lowerer, op: pd.StackSizeOp) -> None:
    out = low.out(op.results[0])
    count = low.as_value(low.sizes_of(op.stack)[0])
    low.note_read(low.read(op.stack))
    n = low.emit(arith.IndexCastOp(count, i64)).results[0]
    low.emit(memref.StoreOp.get(n, out, []))


__all__ = ["bind_results", "buffer_type", "hand_over", "owned_alloc", "scalar_of", "view_as"]
