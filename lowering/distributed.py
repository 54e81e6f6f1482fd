"""Native lowering of the collectives: calls of `pullback_collective` on the
buffers the program already has (no copy through Python).

Each collective becomes one `func.call @pullback_collective(kind, src, dst, count,
dtype, op, root)` with bare pointers to its buffers.  The symbol is a ctypes
callback into the runtime's communicator (`runtime/communicator.py`,
`native_collective`), which runs the collective as the interpreter does: the ranks
first agree on its metadata (on a compiled program's first run), then the payload
goes through MPI with a timeout, so native collectives cannot hang or combine
tensors of different shapes.  The codes (`KINDS`, `REDUCE_OPS`, `NATIVE_DTYPES`)
are the communicator's.

`pd.allgather` and `pd.reduce_scatter` are compiled for the `nranks` they state;
the runtime checks it against the job before running native code
(`job_size_mismatch`).  An `avg` all-reduce (a sum scaled by a number of ranks
only known at run time) and bool collectives are not lowered: programs with them
run on the interpreter.
"""

from __future__ import annotations

from collections.abc import Iterable

from pullback.dialects import pd
from pullback.lowering.abi import LoweringError
from pullback.lowering.lowerer import Lowerer
from pullback.lowering.lowerer.sizes import Size
from pullback.lowering.registry import lowers, result_sizes, sizes_of_first
from pullback.lowering.views import elem_of_buffer
from pullback.runtime.communicator import KINDS, NATIVE_DTYPES, NATIVE_SYMBOL, REDUCE_OPS
from xdsl.dialects import arith, func, llvm
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    IntegerType,
    UnrealizedConversionCastOp,
    i64,
)
from xdsl.ir import Attribute, SSAValue

COLLECTIVE_ABI = 2
"""The calling convention of native collectives (part of the compile cache's key:
version 1 called MPI's C functions directly)."""

_OPS = ("sum", "max", "min", "prod")


def _datatype(elem: Attribute, what: str) -> int:
    """The `NATIVE_DTYPES` code of an element type."""
    if isinstance(elem, Float32Type):
        return NATIVE_DTYPES.index("float32")
    if isinstance(elem, Float64Type):
        return NATIVE_DTYPES.index("float64")
    if isinstance(elem, IntegerType) and elem.width.data in (32, 64):
        return NATIVE_DTYPES.index(f"int{elem.width.data}")
    raise LoweringError(f"cannot lower '{what}' on {elem} buffers to native code")


def _i64(low: Lowerer, v: int) -> SSAValue:
    return low.emit(arith.ConstantOp.from_int_and_width(v, i64)).results[0]


def _ptr(low: Lowerer, mem: SSAValue) -> SSAValue:
    """The buffer's address (memrefs are bare pointers once lowered)."""
    return low.emit(UnrealizedConversionCastOp.get([mem], [llvm.LLVMPointerType()])).results[0]


def _count(low: Lowerer, v: SSAValue) -> SSAValue:
    """The number of elements of `pd` value `v`, as an i64."""
    n = low.as_value(low.mul_sizes(low.sizes_of(v)))
    return low.emit(arith.IndexCastOp(n, i64)).results[0]


def _collective(
    low: Lowerer, kind: str, src: SSAValue, dst: SSAValue, count: SSAValue, elem: Attribute | None,
    what: str, op: str = "sum", root: int = -1,
) -> None:
    """`func.call @pullback_collective(kind, src, dst, count, dtype, op, root)`
    (`elem` None: no elements, dtype code 0)."""
    args = [
        _i64(low, KINDS[kind]), _ptr(low, src), _ptr(low, dst), count,
        _i64(low, 0 if elem is None else _datatype(elem, what)), _i64(low, REDUCE_OPS[op]), _i64(low, root),
    ]
    low.emit(func.CallOp(NATIVE_SYMBOL, args, []))


@result_sizes(pd.AllReduceOp)
def _allreduce_size(low: Lowerer, op: pd.AllReduceOp, r: SSAValue, k: int) -> Size | None:
    """Each result has its operand's shape."""
    return low.sizes_of(op.operands[list(op.results).index(r)])[k]


result_sizes(pd.BroadcastOp, pd.ReduceToRootOp, pd.BarrierOp)(sizes_of_first)


@lowers(pd.AllReduceOp)
def _allreduce(low: Lowerer, op: pd.AllReduceOp) -> None:
    red = op.prop("reduce_op")
    if red not in _OPS:
        raise LoweringError(f"cannot lower 'pd.allreduce' with reduce_op '{red}' to native code")
    for x, r in zip(op.operands, op.results):
        src = low.read(x)
        dst = low.out(r)
        if src is dst:  # MPI forbids aliased buffers (MPI_IN_PLACE aside)
            tmp = low.temp(elem_of_buffer(src), low.sizes_of(x))
            low.copy_buffer(src, tmp)
            src = tmp
        _collective(low, "allreduce", src, dst, _count(low, x), elem_of_buffer(dst), op.name, red)


@lowers(pd.BroadcastOp)
def _broadcast(low: Lowerer, op: pd.BroadcastOp) -> None:
    r = op.results[0]
    dst = low.out(r)
    low.copy_buffer(low.read(op.x), dst)  # broadcast in place in the result
    _collective(low, "broadcast", dst, dst, _count(low, op.x), elem_of_buffer(dst), op.name,
                root=op.prop("root"))


@lowers(pd.ReduceToRootOp)
def _reduce(low: Lowerer, op: pd.ReduceToRootOp) -> None:
    r = op.results[0]
    src = low.read(op.x)
    dst = low.out(r)
    if src is dst:
        tmp = low.temp(elem_of_buffer(src), low.sizes_of(op.x))
        low.copy_buffer(src, tmp)
        src = tmp
    low.fill(dst, 0.0)  # what the ranks other than the root get
    _collective(low, "reduce", src, dst, _count(low, op.x), elem_of_buffer(dst), op.name,
                op.prop("reduce_op"), op.prop("root"))


@result_sizes(pd.AllGatherOp, pd.ReduceScatterOp)
def _gather_scatter_size(
    low: Lowerer, op: pd.AllGatherOp | pd.ReduceScatterOp, r: SSAValue, k: int
) -> Size | None:
    """Dimension 0 times (all-gather) or divided by (reduce-scatter) nranks."""
    d = low.sizes_of(op.x)[k]
    if k != 0:
        return d
    n = op.prop("nranks")
    gather = isinstance(op, pd.AllGatherOp)
    if isinstance(d, int):
        return d * n if gather else d // n
    cls = arith.MuliOp if gather else arith.DivUIOp
    return low.emit(cls(d, low.index(n))).results[0]


@lowers(pd.AllGatherOp)
def _allgather(low: Lowerer, op: pd.AllGatherOp) -> None:
    r = op.results[0]
    src, dst = low.read(op.x), low.out(r)
    _collective(low, "allgather", src, dst, _count(low, op.x), elem_of_buffer(dst), op.name)


@lowers(pd.ReduceScatterOp)
def _reduce_scatter(low: Lowerer, op: pd.ReduceScatterOp) -> None:
    r = op.results[0]
    src, dst = low.read(op.x), low.out(r)
    _collective(low, "reduce_scatter", src, dst, _count(low, op.x), elem_of_buffer(dst), op.name)


def job_size_mismatch(ops: Iterable[object], size: int) -> str | None:
    """Why native code compiled for these ops cannot run in a job of `size` ranks
    (an all-gather or reduce-scatter built for another number), or None."""
    for op in ops:
        if isinstance(op, (pd.AllGatherOp, pd.ReduceScatterOp)) and op.prop("nranks") != size:
            return (
                f"{op.name}: the program was built for nranks={op.prop('nranks')} but the "
                f"job has {size} rank(s)"
            )
    return None


@lowers(pd.BarrierOp)
def _barrier(low: Lowerer, op: pd.BarrierOp) -> None:
    r = op.results[0]
    if r in low.dest:
        low.copy_buffer(low.read(op.x), low.out(r))
    else:
        low.buf[r] = low.read(op.x)
    x = low.read(op.x)  # any pointer: a barrier sends no elements
    _collective(low, "barrier", x, x, _i64(low, 0), None, op.name)
