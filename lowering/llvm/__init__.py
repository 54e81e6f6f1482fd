"""LLVM IR from loop-level IR: one emitter, two targets.

Both back ends build LLVM IR with llvmlite's `IRBuilder` from the same handlers:

| module | owns |
| --- | --- |
| `types.py` | LLVM types of dialect types, element storage sizes |
| `opcodes.py` | which LLVM instruction, intrinsic, libm or libdevice function each `arith`/`math` op becomes, per target |
| `base.py` | the handler registry (`@handles`) and `EmitterBase`: state, target hooks, declarations, functions, blocks, dispatch |
| `scalar.py`, `memory.py`, `control.py` | the handlers by concern: `arith`/`math`/calls; `memref` and the `llvm` pointer ops (memrefs as base pointer, sizes and strides); `scf`/`cf`/`affine` |
| `loops.py`, `values.py` | linalg structured ops as loop nests; `MemRef`, folded index arithmetic, the counted-loop builder |
| `emitter.py` | `Emitter`: the handlers joined, one registry for both targets |
| `cpu.py` | `CpuEmitter`: host functions (`noalias` buffers, `noinline` segments, the packed entry wrapper, `malloc`/`free`, libm), `translate_module`, and the `-t llvm` target |
| `nvptx.py` | `NvptxEmitter`: kernels (the kernel ABI, `ptx_kernel`, workgroup memory in address space 3, atomics, libdevice), the NVPTX target machine, PTX printing, and the `-t ptx` target |

A target overrides only what differs (tinygrad's renderers, MLIR's NVVM lowering):
how a function's arguments arrive, where an `alloca` lives, how an atomic add is
done, how an element is stored, and which math functions are native.
"""
