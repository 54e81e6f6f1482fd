"""`Emitter`: loop-level IR to LLVM IR with llvmlite, one handler per op, both targets.

MLIR's `mlir-translate` idea, one level higher: instead of rewriting every op into
the `llvm` dialect first, ONE walk builds the LLVM IR with llvmlite's `IRBuilder`
(measured in benchmarks/RESULTS.md, "Compile time").

What it translates: `func` (definitions, declarations, calls, returns), `scf`
(`for`, `if`, `while`, `parallel` without reductions, `index_switch`), `cf` branches
between the blocks of a function body, `arith` and `math` (which LLVM instruction,
intrinsic or library function each op becomes is `opcodes.py`'s table), `memref`
(`alloca`, `load`/`store`, `dim`, `reinterpret_cast`, `cast`, `subview`,
`atomic_rmw`, `extract_aligned_pointer_as_index`), `affine.apply`, linalg
structured ops on memrefs (as loop nests), `builtin.unrealized_conversion_cast`
between memrefs and `!llvm.ptr`, and the few `llvm` ops the lowering makes itself
(`getelementptr` for BLAS operands, calls, loads, stores, constants).  Any other op
raises the target's `LoweringError` naming it: nothing is dropped silently.

Memrefs are bare pointers addressed with `getelementptr inbounds` over the
row-major linear index (LLVM keeps the pointer's provenance and vectorizes), or
over explicit strides for strided views.  A memref is a `MemRef`: its base pointer,
the element's storage type, the sizes the translation knows (static ones, and
dynamic ones where an `alloc`, `reinterpret_cast`, `subview` or the kernel ABI gave
them) and, for strided views, its strides.

A target (`cpu.py`, `nvptx.py`) subclasses `Emitter` and overrides only what
differs: `signature`/`bind_arguments`/`finish_function` (how a function's arguments
arrive and what surrounds it), `storage_type`, `alloca`, `atomic_rmw`,
`math_callee`, `alloc`/`dealloc`.  Handlers are methods registered with `@handles`
(`base.py`), grouped by concern (`scalar.py`, `memory.py`, `control.py`); a subclass
overriding one keeps its registration.
"""

from __future__ import annotations

from typing import Any

import llvmlite.ir as ir
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation

from pullback.lowering.llvm.base import Vals, handles
from pullback.lowering.llvm.control import ControlHandlers
from pullback.lowering.llvm.loops import emit_structured
from pullback.lowering.llvm.memory import MemoryHandlers
from pullback.lowering.llvm.scalar import ScalarHandlers
from pullback.lowering.llvm.values import MemRef


class Emitter(ScalarHandlers, MemoryHandlers, ControlHandlers):
    """Translates loop-level functions into one llvmlite module (see the module doc)."""

    def structured(self, op: LinalgStructuredOperation, b: ir.IRBuilder, vals: Vals) -> None:
        """A linalg structured op on memrefs as a loop nest (`loops.py`)."""
        emit_structured(self, op, b, vals)


def translate_functions(emitter: Emitter, module: ModuleOp | Any) -> ir.Module:
    """Declare every function of `module` (a `builtin.module` or `gpu.module`) on
    `emitter`, then define those with a body; returns the llvmlite module."""
    for fn in emitter.declare_ops(module.body.block.ops):
        emitter.define(fn)
    return emitter.module


__all__ = ["Emitter", "MemRef", "Vals", "handles", "translate_functions"]
