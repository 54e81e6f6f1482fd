"""Helpers shared by the `convert-*-to-llvm` passes."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import llvm
from xdsl.dialects.builtin import IndexType, ModuleOp, i64
from xdsl.ir import Attribute, Operation
from xdsl.rewriter import Rewriter

from pullback.lowering.llvm_opcodes import intrinsic_name


def llvm_type(t: Attribute) -> Attribute:
    """The LLVM type of a builtin scalar type (`index` is 64 bits wide here)."""
    return i64 if isinstance(t, IndexType) else t


def retype_values(module: ModuleOp, convert: Callable[[Attribute], Attribute]) -> None:
    """Give every value (results, block arguments, function signatures) the type
    `convert(old_type)`; `convert` returns the type unchanged where nothing changes."""
    from xdsl.dialects import func

    for op in list(module.walk()):
        for r in list(op.results):
            if (new := convert(r.type)) is not r.type:
                Rewriter.replace_value_with_new_type(r, new)
        for region in op.regions:
            for block in region.blocks:
                for a in list(block.args):
                    if (new := convert(a.type)) is not a.type:
                        Rewriter.replace_value_with_new_type(a, new)
        if isinstance(op, func.FuncOp):
            ft = op.function_type
            op.function_type = func.FunctionType.from_lists(
                [convert(t) for t in ft.inputs.data], [convert(t) for t in ft.outputs.data]
            )


def lower_index_types(module: ModuleOp) -> None:
    """Retype every `index` value (results, block arguments, signatures) as `i64`."""
    retype_values(module, llvm_type)


def call_intrinsic(base: str, args: list, result: Attribute) -> Operation:
    """`llvm.call_intrinsic` of an intrinsic overloaded on its result type."""
    return llvm.CallIntrinsicOp(intrinsic_name(base, result), args, [result])
