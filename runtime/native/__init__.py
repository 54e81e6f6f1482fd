"""The native CPU runtime: `pd` programs compiled to machine code, and the native code
and process settings both the compiled programs and the eager kernels run on.

The compiled backend (`CompiledBackend`, the executor's `compiled` backend):

- `backend.py`: the backend itself: its in-memory program caches, what runs where;
- `compiler.py`: one compile (lowering, LLVM, the disk cache), `NotCompilable`;
- `program.py`: a compiled program in memory and `execute`: the call plan and the
  ctypes marshalling of every run;
- `jit.py`: the process's MCJIT engine (optimize, emit, link);
- `llvm_chunks.py`: LLVM on several threads, a module cut into chunks;
- `disk_cache.py`: the persistent cache of object code, shared by processes;
- `settings.py`: the compile's environment variables and options.

What generated code calls, and the settings the process runs under (the eager
kernels use them too):

- `threadpool.py`: the native thread pool of parallel loops (`pb_parallel_for`);
- `blas.py`: the BLAS behind compiled matrix products (OpenBLAS, MKL);
- `blas_threads.py`: the BLAS libraries' thread counts, following the load;
- `cpu_load.py`: how many CPUs other processes are using now;
- `env.py`: `int_setting`, how every native module reads an integer variable;
- `malloc.py`: glibc's thresholds, so large temporaries are reused;
- `llvm_engine.py`: small helpers of LLVM IR text in engines of their own;
- `dropout.py`: the eager dropout kernel's native loops.

Importing this package imports none of them (the eager kernels load the light
modules without the compiler).
"""
