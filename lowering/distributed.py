"""Native lowering of the collectives: calls into the MPI library, on the buffers
the program already has (no copy through Python).

Each collective becomes a `func.call` of the MPI C function itself (`MPI_Allreduce`,
`MPI_Bcast`, `MPI_Reduce`, `MPI_Barrier`) with bare pointers to its buffers and
MPICH's handle constants, which are plain `int`s in MPICH's ABI (`MPICH` below;
`runtime/communicator.py` checks them against the loaded library before binding
the symbols, and the program runs on the interpreter when they differ).

`pd.allgather` and `pd.reduce_scatter` are compiled for the `nranks` they state;
the runtime checks it against the job before running native code
(`job_size_mismatch`).  An `avg` all-reduce (a sum scaled by a number of ranks
only known at run time) and bool collectives are not lowered: programs with them
run on the interpreter.  Native collectives have no timeout; a failing rank still
aborts the job.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pullback.dialects import pd
from pullback.lowering.abi import LoweringError
from pullback.lowering.lowerer import Lowerer
from pullback.lowering.lowerer.sizes import Size
from pullback.lowering.registry import lowers, result_sizes, sizes_of_first
from pullback.lowering.views import elem_of_buffer
from xdsl.dialects import arith, func, llvm
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    IntegerType,
    UnrealizedConversionCastOp,
    i32,
)
from xdsl.ir import Attribute, SSAValue

MPICH: dict[str, int] = {
    "MPI_COMM_WORLD": 0x44000000,
    "MPI_FLOAT": 0x4C00040A,
    "MPI_DOUBLE": 0x4C00080B,
    "MPI_INT32_T": 0x4C000439,
    "MPI_INT64_T": 0x4C00083A,
    "MPI_SUM": 0x58000003,
    "MPI_MAX": 0x58000001,
    "MPI_MIN": 0x58000002,
    "MPI_PROD": 0x58000004,
}
"""MPICH's handles (`mpi.h`: `typedef int MPI_Datatype`, ...)."""

_OPS = {"sum": "MPI_SUM", "max": "MPI_MAX", "min": "MPI_MIN", "prod": "MPI_PROD"}


def _datatype(elem: Attribute, what: str) -> int:
    """The MPI datatype handle of an element type."""
    if isinstance(elem, Float32Type):
        return MPICH["MPI_FLOAT"]
    if isinstance(elem, Float64Type):
        return MPICH["MPI_DOUBLE"]
    if isinstance(elem, IntegerType) and elem.width.data in (32, 64):
        return MPICH[f"MPI_INT{elem.width.data}_T"]
    raise LoweringError(f"cannot lower '{what}' on {elem} buffers to native code")


def _i32(low: Lowerer, v: int) -> SSAValue:
    return low.emit(arith.ConstantOp.from_int_and_width(v, i32)).results[0]


def _ptr(low: Lowerer, mem: SSAValue) -> SSAValue:
    """The buffer's address (memrefs are bare pointers once lowered)."""
    return low.emit(UnrealizedConversionCastOp.get([mem], [llvm.LLVMPointerType()])).results[0]


def _count(low: Lowerer, v: SSAValue) -> SSAValue:
    """The number of elements of `pd` value `v`, as MPI's `int` count."""
    n = low.as_value(low.mul_sizes(low.sizes_of(v)))
    return low.emit(arith.IndexCastOp(n, i32)).results[0]


def _call(low: Lowerer, name: str, args: Sequence[SSAValue]) -> None:
    """`func.call @name(args) -> i32` (MPI's error code; errors abort the job, as
    MPI_ERRORS_ARE_FATAL, the default handler, does)."""
    low.emit(func.CallOp(name, list(args), [i32]))


def _comm(low: Lowerer) -> SSAValue:
    return _i32(low, MPICH["MPI_COMM_WORLD"])


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
        dtype = _datatype(elem_of_buffer(dst), op.name)
        _call(low, "MPI_Allreduce", [
            _ptr(low, src), _ptr(low, dst), _count(low, x), _i32(low, dtype),
            _i32(low, MPICH[_OPS[red]]), _comm(low),
        ])


@lowers(pd.BroadcastOp)
def _broadcast(low: Lowerer, op: pd.BroadcastOp) -> None:
    r = op.results[0]
    dst = low.out(r)
    low.copy_buffer(low.read(op.x), dst)
    dtype = _datatype(elem_of_buffer(dst), op.name)
    _call(low, "MPI_Bcast", [
        _ptr(low, dst), _count(low, op.x), _i32(low, dtype), _i32(low, op.prop("root")), _comm(low),
    ])


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
    dtype = _datatype(elem_of_buffer(dst), op.name)
    _call(low, "MPI_Reduce", [
        _ptr(low, src), _ptr(low, dst), _count(low, op.x), _i32(low, dtype),
        _i32(low, MPICH[_OPS[op.prop("reduce_op")]]), _i32(low, op.prop("root")), _comm(low),
    ])


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
    dtype = _i32(low, _datatype(elem_of_buffer(dst), op.name))
    n = _count(low, op.x)
    _call(low, "MPI_Allgather", [_ptr(low, src), n, dtype, _ptr(low, dst), n, dtype, _comm(low)])


@lowers(pd.ReduceScatterOp)
def _reduce_scatter(low: Lowerer, op: pd.ReduceScatterOp) -> None:
    r = op.results[0]
    src, dst = low.read(op.x), low.out(r)
    dtype = _datatype(elem_of_buffer(dst), op.name)
    _call(low, "MPI_Reduce_scatter_block", [
        _ptr(low, src), _ptr(low, dst), _count(low, r), _i32(low, dtype),
        _i32(low, MPICH["MPI_SUM"]), _comm(low),
    ])


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
    _call(low, "MPI_Barrier", [_comm(low)])
    r = op.results[0]
    if r in low.dest:
        low.copy_buffer(low.read(op.x), low.out(r))
    else:
        low.buf[r] = low.read(op.x)
