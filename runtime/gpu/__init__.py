"""The GPU runtime: `pd` programs run as CUDA kernels (the executor's `cuda` backend).

- `cuda.py`: the CUDA driver API through ctypes (devices, memory, PTX modules,
  launches), opened on first use, so pullback imports on machines without a GPU;
- `cublas.py`: cuBLAS through ctypes (matrix products), opened on first use;
- `backend.py`: `GpuBackend`: compiles a program with the GPU passes
  (`lowering/gpu/`) and runs its host function, launching the kernels, calling
  cuBLAS, following its control flow; persistables stay on the device;
- `replay.py`: a run recorded once per feed shapes and re-issued without
  interpreting the host function again (when it reads no device memory), with
  asynchronous feed uploads and captured as a CUDA graph once stable.

Importing this package imports none of them.
"""
