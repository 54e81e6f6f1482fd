"""`convert-func-to-llvm`: functions, calls and returns become their `llvm` forms.

A function marked `llvm.emit_c_interface` also gets a packed wrapper,
`_pullback_packed_<name>(ptr args)`, which reads its i-th argument from the i-th
8-byte slot of `args` (a pointer or an `i64`) and calls the function: the runtime
calls every program through this one signature, with one numpy array of slots.

Pointer arguments of such entry functions are marked `noalias`: the runtime passes
distinct buffers for everything the program writes (outputs are fresh arrays,
parameters are distinct Scope arrays), which lets LLVM vectorize without run-time
overlap checks.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, llvm
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, UnitAttr, i64
from xdsl.ir import Attribute, Block, Region
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

PACKED_PREFIX = "_pullback_packed_"


def _llvm_func_type(ft: func.FunctionType) -> llvm.LLVMFunctionType:
    outs = list(ft.outputs.data)
    ret: Attribute = outs[0] if outs else llvm.LLVMVoidType()
    return llvm.LLVMFunctionType(list(ft.inputs.data), ret)


def _convert_function(fn: func.FuncOp) -> llvm.FuncOp:
    ftype = _llvm_func_type(fn.function_type)
    if fn.is_declaration:
        return llvm.FuncOp(fn.sym_name, ftype, linkage=llvm.LinkageAttr("external"))
    body = fn.detach_region(fn.body)
    other: dict[str, Attribute | None] = {}
    if "llvm.emit_c_interface" in fn.attributes:
        ptr = llvm.LLVMPointerType()
        other["arg_attrs"] = ArrayAttr(
            [DictionaryAttr({"llvm.noalias": UnitAttr()} if t == ptr else {}) for t in ftype.inputs]
        )
    elif fn.arg_attrs is not None:
        # Outlined segments (outline-segments) say which pointers are `noalias`.
        other["arg_attrs"] = fn.arg_attrs
    new = llvm.FuncOp(fn.sym_name, ftype, linkage=llvm.LinkageAttr("external"), body=body, other_props=other)
    for op in list(new.body.walk()):
        if isinstance(op, func.ReturnOp):
            Rewriter.replace_op(op, llvm.ReturnOp(op.arguments[0] if op.arguments else None))
        elif isinstance(op, func.CallOp):
            ret = op.results[0].type if op.results else None
            Rewriter.replace_op(op, llvm.CallOp(op.callee.string_value(), *op.arguments, return_type=ret))
    return new


def packed_wrapper(fn: llvm.FuncOp) -> llvm.FuncOp:
    """`void _pullback_packed_<name>(ptr slots)` calling `fn` with the slots' values."""
    ptr = llvm.LLVMPointerType()
    block = Block(arg_types=[ptr])
    ops = []
    args = []
    for i, t in enumerate(fn.function_type.inputs):
        gep = llvm.GEPOp(block.args[0], [i], i64)
        load = llvm.LoadOp(gep.result, t)
        ops += [gep, load]
        args.append(load.dereferenced_value)
    ops.append(llvm.CallOp(fn.sym_name.data, *args))
    ops.append(llvm.ReturnOp())
    block.add_ops(ops)
    return llvm.FuncOp(
        PACKED_PREFIX + fn.sym_name.data,
        llvm.LLVMFunctionType([ptr], llvm.LLVMVoidType()),
        linkage=llvm.LinkageAttr("external"),
        body=Region(block),
    )


@dataclass(frozen=True)
class ConvertFuncToLLVMPass(ModulePass):
    """Lower `func` to `llvm` (with packed wrappers for C-interface functions)."""

    name = "convert-func-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for fn in [o for o in op.body.block.ops if isinstance(o, func.FuncOp)]:
            packed = "llvm.emit_c_interface" in fn.attributes
            new = _convert_function(fn)
            Rewriter.replace_op(fn, new)
            if packed:
                op.body.block.insert_op_after(packed_wrapper(new), new)
