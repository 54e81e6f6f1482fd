"""Helpers shared by the `convert-*-to-llvm` passes."""

from __future__ import annotations

from xdsl.dialects import llvm
from xdsl.dialects.builtin import IndexType, ModuleOp, i64
from xdsl.ir import Attribute, Operation
from xdsl.rewriter import Rewriter


def llvm_type(t: Attribute) -> Attribute:
    """The LLVM type of a builtin scalar type (`index` is 64 bits wide here)."""
    return i64 if isinstance(t, IndexType) else t


def lower_index_types(module: ModuleOp) -> None:
    """Retype every `index` value (results, block arguments, signatures) as `i64`."""
    from xdsl.dialects import func

    for op in list(module.walk()):
        for r in list(op.results):
            if isinstance(r.type, IndexType):
                Rewriter.replace_value_with_new_type(r, i64)
        for region in op.regions:
            for block in region.blocks:
                for a in list(block.args):
                    if isinstance(a.type, IndexType):
                        Rewriter.replace_value_with_new_type(a, i64)
        if isinstance(op, func.FuncOp):
            ft = op.function_type
            op.function_type = func.FunctionType.from_lists(
                [llvm_type(t) for t in ft.inputs.data], [llvm_type(t) for t in ft.outputs.data]
            )


def intrinsic_name(base: str, t: Attribute) -> str:
    """An overloaded intrinsic's name for scalar type `t` (`llvm.maximum.f32`)."""
    return f"{base}.{t}"


def call_intrinsic(base: str, args: list, result: Attribute) -> Operation:
    """`llvm.call_intrinsic` of an intrinsic overloaded on its result type."""
    return llvm.CallIntrinsicOp(intrinsic_name(base, result), args, [result])
