"""A few functions of LLVM IR text compiled once into an MCJIT engine of their own.

The runtime's small native helpers (the thread pool, the BLAS router, the eager
dropout loops) are each a handful of functions written as IR text: parsed,
verified, compiled and kept for the life of the process in their own engine, apart
from the compiled programs' engine (`runtime/native/jit.py`)."""

from __future__ import annotations

from typing import Any


def compile_ir(ir: str, opt: int = 2, host_cpu: bool = False, optimize: bool = False) -> Any:
    """The finalized MCJIT engine of `ir` (keep it alive as long as its code is used;
    `engine.get_function_address(name)` finds a function).  `host_cpu`: code for this
    CPU's features (vector loops), else the target's baseline.  `optimize`: run LLVM's
    O3 pipeline on the IR first (for IR written plainly by a builder, such as
    `bf16_gemm.py`'s loops), else code generation alone."""
    import llvmlite.binding as llvm

    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    mod = llvm.parse_assembly(ir)
    mod.verify()
    target = llvm.Target.from_default_triple()
    if host_cpu:
        tm = target.create_target_machine(
            cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=opt, jit=True
        )
    else:
        tm = target.create_target_machine(opt=opt, jit=True)
    if optimize:
        pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=3))
        pb.getModulePassManager().run(mod, pb)
    engine = llvm.create_mcjit_compiler(mod, tm)
    engine.finalize_object()
    return engine


__all__ = ["compile_ir"]
