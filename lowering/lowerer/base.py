"""The first layer of the `Lowerer`: the entry function under construction.

`LowererBase` owns where IR goes: the builder and its insertion point, the entry
function's block (index constants are hoisted to its start), the position of the op
being lowered (`current`, what buffer liveness is counted in), and the run-time
range checks' status buffer with the guard (`unless_failed`) that makes later
writes conditional on no check having failed.  The layers above it
(`sizes.py`, `buffers.py`, `fusion_plan.py`, `emit.py`, then the driver in
`__init__.py`) each add one concern on top.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.dialects import arith, func, llvm, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, UnrealizedConversionCastOp, i32, i64
from xdsl.ir import Block, Operation, OpResult, Region, SSAValue
from xdsl.rewriter import InsertPoint

from pullback.dialects.pd.base import result_names
from pullback.lowering.abi import Abi, Program
from pullback.lowering.build import cmpi, constant, make

_ZERO_I64 = IntegerAttr(0, i64)

COMMIT_POINT = "pb_commit_point"
"""The thread pool's function a commit point calls (`commit_point`)."""

POLL = "pb_poll"
"""The thread pool's interrupt poll (`runtime/native/threadpool.py`): 1 once the
calling thread's run was interrupted before its commit point.  Segment calls
(`outline-segments`) and `while` loops (`lowering/control.py`) check it."""


def name_hint_of(v: SSAValue) -> str | None:
    """The Paddle name of `pd` value `v`, cleaned into an SSA name hint for the
    buffer holding it (None: unnamed, or not a usable identifier)."""
    if isinstance(v, OpResult):
        name = result_names(v.op)[v.index]
        if name:
            cleaned = re.sub(r"[^A-Za-z0-9_.$-]", "_", name)
            return cleaned if cleaned[:1].isalpha() or cleaned[:1] == "_" else None
    return None


@dataclass
class LowererBase:
    """The entry function under construction: where ops are inserted, its index
    constants and the range checks' status buffer and guard."""

    prog: Program
    b: Builder
    abi: Abi
    _consts: dict[int, SSAValue] = field(default_factory=dict)
    current: int = -1
    """Position in `prog.ops` of the op being lowered (liveness is counted in it)."""
    range_checks: bool = True
    """Whether rules emit run-time range checks (`check_slot`); off for the GPU,
    whose host code cannot read a device status buffer."""
    status: SSAValue | None = None
    """`memref<3xi64>` entry argument `[check code, bad value, limit]` (code 0: no
    error), added by the first range check; the runtime raises from it."""
    _guard: Operation | None = None
    commit_at: int | None = None
    """Position in `prog.ops` of the first op that writes a persistable: the commit
    point goes before it (`commit_point`; None: none, or not the top level)."""
    parent: LowererBase | None = None
    """The lowerer of the enclosing program when this one lowers a region of a
    control-flow op (`Lowerer.sub`): constants and the status buffer are the entry
    function's, kept by the outermost lowerer."""

    @property
    def entry_block(self) -> Block:
        """The entry function's body (top level, whatever the insertion point)."""
        op = self._guard
        return op.parent_block() if op is not None else self.b.insertion_point.block  # type: ignore[return-value]

    def emit(self, op: Operation) -> Operation:
        """Insert an op at the current point of the entry function."""
        self.b.insert(op)
        return op

    def index(self, n: int) -> SSAValue:
        """An `index` constant (one per value, at the start of the function)."""
        if self.parent is not None:
            return self.parent.index(n)
        if n not in self._consts:
            c = arith.ConstantOp.from_int_and_width(n, IndexType())
            c.result.name_hint = f"c{n}"
            block = self.entry_block
            first = block.first_op
            if first is None:
                block.add_op(c)
            else:
                block.insert_op_before(c, first)
            self._consts[n] = c.result
        return self._consts[n]

    # ------------------------------------------------------------ range checks

    def check_slot(self, op: Operation, what: str) -> tuple[SSAValue, int] | None:
        """Register a run-time range check of `op`'s `what` (`id`, `label`): the
        status buffer (an entry argument added on first use) and the check's code,
        1-based; None when checks are off.  The ABI lists `[op name, what]` per code."""
        if not self.range_checks:
            return None
        if self.parent is not None:
            slot = self.parent.check_slot(op, what)
            self.status = self.parent.status
            return slot
        status = self.status_buffer()
        self.abi.checks.append([op.name, what])
        return status, len(self.abi.checks)

    def status_buffer(self) -> SSAValue:
        """The status buffer, the entry's last argument (added on first use)."""
        if self.status is None:
            block = self.entry_block
            self.status = block.insert_arg(MemRefType(i64, [3]), len(block.args))
            self.status.name_hint = "status"
        return self.status

    def polled(self, flag: SSAValue) -> SSAValue:
        """`flag and pb_poll() == 0` (an `i1`), emitted here, where the lowering
        polls for Ctrl-C (CPU programs: range checks on); else `flag`."""
        if not self.range_checks:
            return flag
        polled = self.emit(func.CallOp(POLL, [], [i32])).results[0]
        zero = self.emit(constant(IntegerAttr(0, i32))).results[0]
        go = self.emit(cmpi("eq", polled, zero)).results[0]
        return self.emit(arith.AndIOp(flag, go)).results[0]

    def commit_point(self) -> None:
        """Before the entry's first write to a persistable (once; the top level of a
        CPU program, where range checks are on): `pb_commit_point(status)`.  The
        thread pool's function (`runtime/native/threadpool.py`) sets `status[0] =
        -1` when the run was interrupted (Ctrl-C) and no check failed: the writes
        guarded by `unless_failed` are then skipped, as after a failed check, and the
        run is abandoned with the scope untouched; else the run is committed and
        finishes whole.  The call stays in the entry (`outline-segments` never moves
        it into a segment, which an interrupt could skip).  The ABI records it
        (`Abi.commit`)."""
        if not self.range_checks or self.parent is not None or self.abi.commit:
            return
        self.abi.commit = True
        # (A memref is a bare pointer once lowered; the cast says so, as for MPI's calls.)
        ptr = self.emit(UnrealizedConversionCastOp.get([self.status_buffer()], [llvm.LLVMPointerType()])).results[0]
        self.emit(func.CallOp(COMMIT_POINT, [ptr], []))

    @contextlib.contextmanager
    def unless_failed(self) -> Iterator[None]:
        """Emit into `scf.if status[0] == 0 { ... }` once a range check exists, so
        that a failed check leaves persistables untouched (the interpreter raises
        before any later op runs).  Temporaries allocated inside are hoisted."""
        if self.status is None or self._guard is not None:
            yield
            return
        flag = self.emit(memref.LoadOp.get(self.status, [self.index(0)])).results[0]
        zero = self.emit(constant(_ZERO_I64)).results[0]
        ok = self.emit(cmpi("eq", flag, zero)).results[0]
        block = Block()
        guard = self.emit(make(scf.IfOp, (ok,), (), regions=(Region(block), Region())))
        outer = self.b
        self.b, self._guard = Builder(InsertPoint.at_end(block)), guard
        try:
            yield
        finally:
            block.add_op(make(scf.YieldOp))
            self.b, self._guard = outer, None

    def emit_at_top(self, op: Operation) -> None:
        """Insert `op` at the top level, before an open guard (an allocation: a
        buffer allocated inside `unless_failed` must outlive it)."""
        if self._guard is not None:
            self.entry_block.insert_op_before(op, self._guard)
        else:
            self.emit(op)


__all__ = ["LowererBase", "name_hint_of"]
