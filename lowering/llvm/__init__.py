"""LLVM IR from loop-level IR: one emitter, two targets.

Both back ends build LLVM IR with llvmlite's `IRBuilder` from the same handlers:

| module | owns |
| --- | --- |
| `types.py` | LLVM types of dialect types, element storage sizes |
| `opcodes.py` | which LLVM instruction, intrinsic, libm or libdevice function each `arith`/`math` op becomes, per target |
| `emitter.py` | `Emitter`: the one handler registry for `arith`, `math`, `scf`, `cf`, `memref`, `func`, `affine`, `linalg` and the few `llvm` ops the lowering makes; memrefs as base pointer, sizes and strides |
| `cpu.py` | `CpuEmitter`: host functions (`noalias` buffers, `noinline` segments, the packed entry wrapper, `malloc`/`free`, libm), `translate_module`, and the `-t llvm` target |
| `nvptx.py` | `NvptxEmitter`: kernels (the kernel ABI, `ptx_kernel`, workgroup memory in address space 3, atomics, libdevice), the NVPTX target machine, PTX printing, and the `-t ptx` target |

A target overrides only what differs (tinygrad's renderers, MLIR's NVVM lowering):
how a function's arguments arrive, where an `alloca` lives, how an atomic add is
done, how an element is stored, and which math functions are native.
"""
