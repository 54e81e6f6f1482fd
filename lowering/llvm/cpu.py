"""The CPU target: host functions for the compiled backend, and `-t llvm`.

`CpuEmitter` overrides only what the host differs in (`emitter.py` does the rest):

* buffers: `memref.alloc`/`dealloc` are `malloc`/`free`; `memref.atomic_rmw` is a
  plain read-modify-write (the code runs on one thread per chunk);
* functions: the entry's memref arguments are `noalias` (the runtime passes
  distinct buffers), and so are the outlined segments' arguments their `arg_attrs`
  mark; segments are `noinline` (inlined back, they would rebuild the one huge
  function outlining is there to avoid); a `llvm.emit_c_interface` function gets
  the packed wrapper `_pullback_packed_<name>(ptr slots)` (`abi.PACKED_PREFIX`);
* math: the LLVM intrinsic where `opcodes.MATH` names one, else the C library's
  function (`erff` for f32).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

import llvmlite.ir as ir
from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, ArrayAttr, DictionaryAttr, MemRefType, ModuleOp
from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target

from pullback.lowering.abi import PACKED_PREFIX, LoweringError
from pullback.lowering.llvm.emitter import Emitter, Vals, translate_functions
from pullback.lowering.llvm.opcodes import MathFunction, c_name
from pullback.lowering.llvm.types import I64, PTR, element_bytes
from pullback.lowering.llvm.values import MemRef, mul, ptr_of
from pullback.lowering.outline_segments import SEGMENT_INFIX
from pullback.lowering.parallelize_loops import lower_forks

TRANSLATOR_VERSION = 2
"""Bumped whenever the CPU translation changes the code it emits (part of the
compiled backend's disk-cache key)."""


class CpuEmitter(Emitter):
    """Translates one loop-level `builtin.module` into an llvmlite module for the host."""

    what = "translate-to-llvmlite"

    def declare_module(self, module: ModuleOp) -> list[func.FuncOp]:
        """Declare every function of `module` not declared yet; returns those with a
        body, in order."""
        return self.declare_ops(module.body.block.ops)

    def translate(self, module: ModuleOp) -> ir.Module:
        """Translate every function of `module`."""
        return translate_functions(self, module)

    def written_function(self, fn: func.FuncOp) -> list[ir.Function]:
        """Define declared `fn`; returns what that defined: the function, and an
        entry's packed wrapper."""
        before = len(self.module.globals)
        self.define(fn)
        new = list(self.module.globals.values())[before:]  # intrinsics declared, a wrapper defined
        return [self.functions[fn.sym_name.data],
                *(g for g in new if isinstance(g, ir.Function) and not g.is_declaration)]

    def prepare_function(self, fn: func.FuncOp, lf: ir.Function) -> None:
        """`noalias` buffers and `noinline` segments (module doc)."""
        entry = "llvm.emit_c_interface" in fn.attributes
        attrs = fn.arg_attrs.data if isinstance(fn.arg_attrs, ArrayAttr) else ()
        for k, (arg, t) in enumerate(zip(lf.args, fn.function_type.inputs.data)):
            marked = k < len(attrs) and isinstance(attrs[k], DictionaryAttr) and "llvm.noalias" in attrs[k].data
            if (entry and isinstance(t, MemRefType)) or marked:
                arg.add_attribute("noalias")
        if SEGMENT_INFIX in fn.sym_name.data:
            lf.attributes.add("noinline")

    def finish_function(self, fn: func.FuncOp, lf: ir.Function) -> None:
        """An entry's packed wrapper: `void _pullback_packed_<name>(ptr slots)` calling
        `lf` with its i-th argument read from the i-th 8-byte slot."""
        if "llvm.emit_c_interface" not in fn.attributes:
            return
        w = ir.Function(self.module, ir.FunctionType(ir.VoidType(), [PTR]), PACKED_PREFIX + fn.sym_name.data)
        b = ir.IRBuilder(w.append_basic_block())
        args = []
        for i, a in enumerate(lf.args):
            slot = b.gep(w.args[0], [ir.Constant(I64, i)], source_etype=I64)
            args.append(b.load(slot, typ=a.type))
        b.call(lf, args)
        b.ret_void()

    def math_callee(self, op: Operation, how: MathFunction, t: ir.Type) -> ir.Function | None:
        """The intrinsic, else the C library function."""
        arity = len(op.operands)
        if how.intrinsic is not None:
            return self.intrinsic(how.intrinsic, t, arity)
        if how.libm is not None:
            return self.declare(c_name(how.libm, op.results[0].type), t, [t] * arity)
        return None

    def alloc(self, op: memref.AllocOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`memref.alloc` as `malloc` of the buffer's bytes."""
        t = op.memref.type
        assert isinstance(t, MemRefType)
        try:
            nbytes = element_bytes(t.get_element_type())
        except LoweringError as e:
            raise self.fail(f"memref.alloc: {e}") from None
        sizes: list[ir.Value | None] = []
        dyn = iter(op.dynamic_sizes)
        total: ir.Value = ir.Constant(I64, 1)
        for d in t.get_shape():
            if d == DYNAMIC_INDEX:
                s = vals[next(dyn)]
                sizes.append(s)
                total = mul(b, total, s)
            else:
                sizes.append(ir.Constant(I64, d))
                nbytes *= max(d, 1)
        size = mul(b, ir.Constant(I64, nbytes), total)
        vals[op.memref] = MemRef(b.call(self.declare("malloc", PTR, [I64]), [size]), self.elem(t), sizes)

    def dealloc(self, op: memref.DeallocOp, b: ir.IRBuilder, vals: Vals) -> None:
        """`memref.dealloc` as `free`."""
        b.call(self.declare("free", ir.VoidType(), [PTR]), [ptr_of(vals[op.memref])])


def translate_module(module: ModuleOp, name: str = "pullback") -> ir.Module:
    """The llvmlite module of a loop-level `module` (for the host), the thread
    pool's forks defined (`parallelize_loops.lower_forks`)."""
    out = CpuEmitter(name).translate(module)
    lower_forks(out)
    return out


@dataclass(frozen=True)
class LLVMTarget(Target):
    """`-t llvm`: a module at the loop level (`-p lower-to-loops`: linalg, scf,
    memref, arith, math on memrefs) printed as LLVM IR; ops the emitter does not
    know are named in a clear error."""

    name = "llvm"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        """Write the module's LLVM IR to `output`."""
        left = sorted({op.name for op in module.walk() if op.name.startswith("pd.")})
        if left:
            raise DiagnosticException(
                "-t llvm needs a module at the loop level; these ops are not lowered: "
                + ", ".join(left) + " (run the CPU pipeline first: -p lower-to-loops)"
            )
        try:
            print(translate_module(module), file=output)
        except LoweringError as e:
            raise DiagnosticException(f"-t llvm: {e}") from None


__all__ = ["TRANSLATOR_VERSION", "CpuEmitter", "LLVMTarget", "translate_module"]
