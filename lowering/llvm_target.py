"""The `llvm` output target: print a lowered module as LLVM IR.

`pullback-opt -p <pipeline> -t llvm` ends with this target.  A module at the loop
level (`-p lower-to-loops`: linalg/scf/memref/arith/math on memrefs) goes through
`translate-to-llvmlite`, the compiled backend's own route; a module already in the
`llvm` dialect (`-p lower-to-llvm`) through xDSL's converter.  Ops neither accepts are
named in a clear error (instead of a bare NotImplementedError).
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
        from pullback.lowering.abi import LoweringError
        from pullback.lowering.pipeline import to_llvmlite, translate

        left = sorted({op.name for op in module.walk() if not op.name.startswith(("llvm.", "builtin.module"))})
        if left and not any(op.name.startswith("pd.") for op in module.walk()):
            try:
                print(translate(module), file=output)
            except LoweringError as e:
                raise DiagnosticException(f"-t llvm: {e}") from None
            return
        if left:
            raise DiagnosticException(
                "-t llvm needs a module in the llvm dialect; these ops are not lowered: "
                + ", ".join(left)
                + " (run the CPU pipeline first: -p lower-to-loops, or -p lower-to-llvm)"
            )
        print(to_llvmlite(module), file=output)
