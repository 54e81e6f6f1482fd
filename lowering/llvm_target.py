"""The `llvm` output target: print an `llvm`-dialect module as LLVM IR.

`pullback-opt -p <pipeline> -t llvm` ends with this target.  It is xDSL's converter
from the `llvm` dialect to llvmlite IR, with a clear error when the pipeline left
non-LLVM ops behind (instead of a bare NotImplementedError).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import DiagnosticException
from xdsl.utils.target import Target


@dataclass(frozen=True)
class LLVMTarget(Target):
    """Emit LLVM IR text (llvmlite) for a module in the `llvm` dialect."""

    name = "llvm"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from pullback.lowering.pipeline import to_llvmlite

        left = sorted({op.name for op in module.walk() if not op.name.startswith(("llvm.", "builtin.module"))})
        if left:
            raise DiagnosticException(
                "-t llvm needs a module in the llvm dialect; these ops are not lowered: "
                + ", ".join(left)
                + " (run the CPU pipeline first, e.g. -p "
                + "convert-pd-to-linalg,...,reconcile-unrealized-casts)"
            )
        print(to_llvmlite(module), file=output)
