"""The emitter's skeleton: the handler registry (`@handles`), and `EmitterBase`,
which holds a translation's state, the target hooks, declarations, functions,
blocks and the dispatch of each op to its handler.  The handlers themselves live
by concern in `scalar.py`, `memory.py` and `control.py`; `emitter.py` joins them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar

import llvmlite.ir as ir
from xdsl.dialects import arith, func, scf
from xdsl.dialects import llvm as xllvm
from xdsl.dialects.builtin import MemRefType, StridedLayoutAttr
from xdsl.dialects.linalg.abstract_ops import LinalgStructuredOperation
from xdsl.ir import Attribute, Block, Operation, SSAValue

from pullback.lowering.abi import LoweringError
from pullback.lowering.llvm.opcodes import MathFunction
from pullback.lowering.llvm.types import llvm_type, result_type, type_suffix
from pullback.lowering.llvm.values import MemRef, static_sizes

Vals = dict[SSAValue, Any]
"""SSA value -> llvmlite value (or `MemRef`) of the function being translated."""

CMP_PRED = {"eq": "==", "ne": "!=", "lt": "<", "le": "<=", "gt": ">", "ge": ">="}
"""llvmlite's spelling of `icmp`/`fcmp` predicates (without the sign or order prefix)."""

_BUILDER_METHOD = {"and": "and_", "or": "or_"}
"""llvmlite's `IRBuilder` method of an instruction whose name is a Python keyword."""

_HANDLERS: dict[type[Operation], str] = {}
"""Op type -> the name of the `Emitter` method translating it."""


def handles(*types: type[Operation]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Register an `Emitter` method as the translation of op types (a subclass
    overriding the method by name keeps the registration)."""

    def register(fn: Callable[..., None]) -> Callable[..., None]:
        for t in types:
            _HANDLERS[t] = fn.__name__
        return fn

    return register


def has_strided_layout(t: Attribute) -> bool:
    return isinstance(t, MemRefType) and isinstance(t.layout, StridedLayoutAttr)


def fastmath(op: Operation) -> list[str]:
    """An op's fast-math flags, sorted (llvmlite prints them in the given order)."""
    fm = op.properties.get("fastmath")
    if not isinstance(fm, arith.FastMathFlagsAttr):
        return []
    return sorted(getattr(f, "value", str(f)) for f in fm.data)


def emit(b: ir.IRBuilder, opcode: str) -> Callable[..., Any]:
    """The builder method emitting LLVM instruction `opcode`."""
    return getattr(b, _BUILDER_METHOD.get(opcode, opcode))


def register_table(types: Iterable[type[Operation]], method: str) -> None:
    """Register the `EmitterBase` method named `method` as the handler of every op
    type in `types` (ops translated from a table, such as `opcodes.FLOAT_BINARY`)."""
    for t in types:
        _HANDLERS[t] = method


class EmitterBase:
    """What every part of the emitter shares: state, the target hooks, declarations,
    functions and blocks, and the dispatch of an op to its handler."""

    what: ClassVar[str] = "translate-to-llvmlite"
    """How errors name this translation."""

    error: ClassVar[type[LoweringError]] = LoweringError
    """The exception this target raises for what it cannot translate."""

    def __init__(self, name: str = "pullback") -> None:
        self.module = ir.Module(name)
        self.functions: dict[str, ir.Function] = {}
        self.bbs: dict[Block, ir.Block] = {}
        """The basic block of each block of the function being translated (`cf`
        branch targets)."""
        self.loop_ids = 0
        """Loop IDs made so far (`loops.loop_interleave`)."""
        self._dispatch = {t: getattr(self, name) for t, name in _HANDLERS.items()}

    def fail(self, message: str) -> LoweringError:
        """The target's error for `message` (raise it)."""
        return self.error(f"{self.what}: {message}")

    # -- target hooks ---------------------------------------------------------------

    def storage_type(self, t: Attribute) -> ir.Type:
        """The in-memory LLVM type of an element of type `t`."""
        return self.llvm_type(t)

    def llvm_type(self, t: Attribute) -> ir.Type:
        """`types.llvm_type`, failing with this target's error."""
        try:
            return llvm_type(t)
        except LoweringError as e:
            raise self.fail(str(e)) from None

    def signature(self, fn: func.FuncOp) -> ir.FunctionType:
        """The LLVM type of a function."""
        ft = fn.function_type
        outs = list(ft.outputs.data)
        if len(outs) > 1:
            raise self.fail(f"@{fn.sym_name.data} returns several values")
        ret = self.llvm_type(outs[0]) if outs else ir.VoidType()
        return ir.FunctionType(ret, [self.llvm_type(t) for t in ft.inputs.data])

    def bind_arguments(self, fn: func.FuncOp, lf: ir.Function, vals: Vals) -> None:
        """Bind the entry block's arguments of `fn` to those of `lf`."""
        first = fn.body.blocks.first
        assert first is not None
        for arg, v in zip(first.args, lf.args):
            t = arg.type
            vals[arg] = MemRef(v, self.elem(t), static_sizes(t)) if isinstance(t, MemRefType) else v

    def prepare_function(self, fn: func.FuncOp, lf: ir.Function) -> None:
        """Attributes of a function about to be defined (none by default)."""

    def finish_function(self, fn: func.FuncOp, lf: ir.Function) -> None:
        """What follows a function's definition (nothing by default)."""

    def math_callee(self, op: Operation, how: MathFunction, t: ir.Type) -> ir.Function | None:
        """The intrinsic or library function computing `math` op `op` on type `t`,
        or None when this target has neither."""
        return None

    # -- declarations ---------------------------------------------------------------

    def declare(self, name: str, ret: ir.Type, args: Sequence[ir.Type]) -> ir.Function:
        """The function `name` (declared with this signature on first use, in full:
        llvmlite's `declare_intrinsic` gets some signatures wrong, which crashes LLVM)."""
        fn = self.functions.get(name)
        if fn is None:
            fn = ir.Function(self.module, ir.FunctionType(ret, list(args)), name)
            self.functions[name] = fn
        return fn

    def intrinsic(self, base: str, t: ir.Type, arity: int) -> ir.Function:
        """An intrinsic overloaded on its one scalar type (`llvm.maximum.f32`)."""
        return self.declare(f"{base}.{type_suffix(t)}", t, [t] * arity)

    def declare_ops(self, ops: Iterable[Operation]) -> list[func.FuncOp]:
        """Declare the functions among module-level `ops` not declared yet; returns
        those with a body, in order (a module that grows, `pipeline.translate_streamed`,
        declares only what it added: walking the whole module for each function would
        make translating a program quadratic in its number of functions)."""
        funcs = []
        for op in ops:
            if isinstance(op, func.FuncOp):
                if not op.is_declaration:
                    funcs.append(op)
                if op.sym_name.data not in self.functions:
                    self.functions[op.sym_name.data] = ir.Function(self.module, self.signature(op), op.sym_name.data)
            elif isinstance(op, xllvm.FuncOp):
                if op.body.blocks:
                    raise self.fail(f"llvm.func @{op.sym_name.data} with a body")
                if op.sym_name.data not in self.functions:
                    lft = op.function_type
                    self.declare(op.sym_name.data, result_type(lft.output), [self.llvm_type(t) for t in lft.inputs.data])
            else:
                self.unknown_module_op(op)
        return funcs

    def unknown_module_op(self, op: Operation) -> None:
        """A module-level op that is not a function."""
        raise self.fail(f"cannot translate '{op.name}' at module level")

    # -- functions ------------------------------------------------------------------

    def define(self, fn: func.FuncOp) -> None:
        """Define a declared function: its body's blocks (`cf` branches between them:
        block arguments become phis)."""
        lf = self.functions[fn.sym_name.data]
        self.prepare_function(fn, lf)
        vals: Vals = {}
        self.bind_arguments(fn, lf, vals)
        blocks = list(fn.body.blocks)
        self.bbs = bbs = {blk: lf.append_basic_block(self.block_name(k)) for k, blk in enumerate(blocks)}
        for blk in blocks[1:]:
            b = ir.IRBuilder(bbs[blk])
            for a in blk.args:
                vals[a] = self.rewrap(a.type, b.phi(self.llvm_type(a.type)))
        for blk in blocks:
            self.block(blk, ir.IRBuilder(bbs[blk]), vals)
        self.finish_function(fn, lf)

    def block_name(self, k: int) -> str:
        """The name of a function body's `k`-th basic block (none by default)."""
        return ""

    def block(self, block: Block, b: ir.IRBuilder, vals: Vals) -> list[Any]:
        """Translate a block's ops; returns what its `scf.yield`/`scf.condition`
        passes on (the condition first for the latter)."""
        for op in block.ops:
            t = type(op)
            if t is scf.YieldOp or t is scf.ConditionOp:
                return [vals[v] for v in op.operands]
            if t is scf.ReduceOp:
                if op.operands:
                    raise self.fail("scf.parallel reductions are not supported")
                return []
            self.op(op, b, vals)
        return []

    def op(self, op: Operation, b: ir.IRBuilder, vals: Vals) -> None:
        """Translate one op into `b`, binding its results in `vals`."""
        handler = self._dispatch.get(type(op))
        if handler is not None:
            handler(op, b, vals)
        elif isinstance(op, LinalgStructuredOperation):
            self.structured(op, b, vals)
        else:
            raise self.fail(f"cannot translate '{op.name}'")

    # -- values ---------------------------------------------------------------------

    def elem(self, t: Attribute) -> ir.Type:
        """The element storage type of memref type `t`."""
        assert isinstance(t, MemRefType)
        return self.storage_type(t.get_element_type())

    def rewrap(self, t: Attribute, v: ir.Value) -> Any:
        """A value carried through a phi (loop or branch): a memref keeps its static
        sizes; a dynamic one is unknown until a `reinterpret_cast` views it (as the
        lowering does for buffers crossing region boundaries)."""
        if isinstance(t, MemRefType):
            if has_strided_layout(t):
                raise self.fail(f"a strided {t} carried through a loop or branch")
            return MemRef(v, self.elem(t), static_sizes(t))
        return v

    def structured(self, op: LinalgStructuredOperation, b: ir.IRBuilder, vals: Vals) -> None:
        """A linalg structured op on memrefs as a loop nest: the joined `Emitter`
        emits it (`loops.py`), which needs every group of handlers."""
        raise NotImplementedError


__all__ = ["CMP_PRED", "EmitterBase", "Vals", "emit", "fastmath", "handles", "has_strided_layout", "register_table"]
