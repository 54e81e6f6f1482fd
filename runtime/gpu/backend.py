"""The executor's `cuda` backend: `pd` programs as CUDA kernels on one GPU.

`GpuBackend(place).run(module, feeds, scope, fetches) -> list[np.ndarray]`, the
same contract as the CPU backends (`runtime/executor.py`); `make_backend` is the
executor's factory (`BACKEND_MODULES["cuda"]`):

1. *Compile* (once per module and fetch list): the CPU path's `build_entry`
   (`convert-pd-to-linalg`) gives the entry function and its ABI, the GPU passes
   turn it into a host function of `memref.alloc`s and `gpu.launch_func`s plus one
   `gpu.module`, whose PTX is JIT-loaded by the driver.
2. *Run*: the host function is interpreted (it is a short straight-line list of
   index arithmetic, allocations and launches): sizes come from the feeds,
   temporaries from a pool of device buffers reused across runs, and each
   `gpu.launch_func` becomes a `cuLaunchKernel` with the ABI of `lowering/llvm/nvptx.py`.
   When it reads no device memory, its first run for given feed shapes is also
   recorded, and later runs with those shapes replay the record instead of
   interpreting (`runtime/gpu/replay.py`): on a stream with asynchronous feed
   uploads, and as a CUDA graph once stable (`PULLBACK_GPU_GRAPH`, docs/gpu.md).

Matrix products (`library_call = "gemm"`/`"batch_gemm"`) are host calls to cuBLAS
when it loads (`runtime/gpu/cublas.py`, `lowering/gpu/library.py`), tiled kernels
otherwise; `GpuBackend.gemm_engine` says which, and why.

Copies: feeds go up on every run (they change); fetched values come down.
Persistables stay on the device: after a run, every parameter the program updated
(in place) and every persistable it made is stored in the scope as a
`ResidentArray`, which the next run uses as it is and which is copied to the host
only when read (`runtime/scope.py`, `DeviceResident`).  A host array in the scope
is uploaded only when the backend has not seen it (a startup run, `tensor.set`);
a host copy made by reading a resident is known to be current.  So a training loop
copies no parameter or accumulator per step.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, func, gpu, llvm, memref, scf
from xdsl.dialects.builtin import MemRefType, ModuleOp, UnrealizedConversionCastOp
from xdsl.ir import Operation, SSAValue

from pullback.dialects.pd.base import DTYPES
from pullback.lowering.convert_linalg_to_blas import GEMM_SYMBOLS, ROW_MAJOR, TRANS
from pullback.runtime.gpu import cublas, cuda, replay
from pullback.runtime.gpu.cuda import DevicePointer
from pullback.runtime.scope import DeviceResident, stored_entry

"""Ops whose programs run on the host interpreter (numpy's random generator)."""

_NP = {d.short: d.numpy for d in DTYPES}
"""numpy dtypes by the element type names of ABI descriptions (`'f32'`)."""


@dataclass
class DeviceArray:
    """A dense row-major array in device memory (a view shares its buffer)."""

    buffer: cuda.DeviceBuffer
    shape: tuple[int, ...]
    dtype: np.dtype[Any]

    def download(self) -> np.ndarray:
        """A new host copy."""
        return self.buffer.download(np.empty(self.shape, self.dtype))


class ResidentArray(DeviceResident):
    """A persistable left in device memory after a run (a scope entry): copied to
    the host on first read (`runtime/scope.py`), reused as it is by the next run
    of the backend that made it."""

    def __init__(self, array: DeviceArray, owner: Any) -> None:
        self.array = array
        self.owner = owner
        self.shape = array.shape
        self.dtype = array.dtype
        self.on_host: Callable[[np.ndarray], None] | None = None
        self._host: np.ndarray | None = None

    def to_host(self) -> np.ndarray:
        """Download once (later calls return the same array)."""
        if self._host is None:
            self._host = self.array.download()
            if self.on_host is not None:
                self.on_host(self._host)
        return self._host

    def __repr__(self) -> str:
        return f"ResidentArray({list(self.shape)} {self.dtype}, on the device)"


@dataclass
class _Pool:
    """Device buffers by size, reused across runs (allocation is slow on CUDA)."""

    device: cuda.Device
    free: dict[int, list[cuda.DeviceBuffer]] = field(default_factory=dict)

    def take(self, nbytes: int) -> cuda.DeviceBuffer:
        bucket = self.free.get(nbytes)
        return bucket.pop() if bucket else self.device.alloc(nbytes)

    def give(self, buf: cuda.DeviceBuffer) -> None:
        self.free.setdefault(buf.nbytes, []).append(buf)


@dataclass
class GpuProgram:
    """A program compiled for the GPU: host function, kernels and ABI."""

    host: func.FuncOp
    abi: dict[str, Any]
    kernels: dict[str, cuda.Function]
    prog: Any
    """The `Program` view used to plan output shapes (`lowering.shapes`)."""
    outputs: list[SSAValue]
    """The `pd` value behind each output buffer (`abi.output_values`)."""
    ptx: str
    library_gemm: bool = False
    """Matrix products are host calls to cuBLAS (else tiled kernels / loops)."""
    launch_plans: dict[Operation, Any] = field(default_factory=dict)
    """`HostRun.plans`, kept across runs."""
    output_shapes: dict[tuple[tuple[int, ...], ...], list[tuple[int, ...]]] = field(default_factory=dict)
    """Output shapes by feed shapes (`plan_shapes` costs as much as a small step)."""
    replayable: bool | None = None
    """Whether the host function's runs can be replayed (`replay.replayable`; None: not asked yet)."""
    replays: dict[tuple[tuple[int, ...], ...], replay.Replay] = field(default_factory=dict)
    """Recorded runs by feed shapes (`runtime/gpu/replay.py`), at most `MAX_REPLAYS`."""


def compile_for_gpu(
    module: ModuleOp, fetches: Sequence[SSAValue], device: cuda.Device, library_gemm: bool = False
) -> GpuProgram:
    """Lower `module` for `fetches`, emit PTX and load it on `device`; with
    `library_gemm`, matrix products become host calls the runtime sends to cuBLAS
    (`lowering/gpu/library.py`)."""
    from pullback.lowering.abi import Program, abi_of, output_values
    from pullback.lowering.convert_pd_to_linalg import build_entry
    from pullback.lowering.gpu import GPU_PASSES
    from pullback.lowering.llvm.nvptx import gpu_modules, module_to_ptx

    # No run-time range checks: host code does not read a status buffer the kernels
    # write on the device (out-of-range ids read a clamped row there instead).
    fn, _ = build_entry(
        module, fetches, entry="main", only_given_fetches=True, range_checks=False, fold_reductions=False
    )
    lowered = ModuleOp([fn])
    abi = abi_of(lowered, "main")
    ctx = Context(allow_unregistered=True)
    if library_gemm:
        from pullback.lowering.gpu.library import GpuGemmToLibraryPass

        GpuGemmToLibraryPass().apply(ctx, lowered)
    for factory in GPU_PASSES.values():
        factory()().apply(ctx, lowered)
    kernels: dict[str, cuda.Function] = {}
    ptx = ""
    for mod in gpu_modules(lowered):
        ptx = module_to_ptx(mod)
        loaded = device.load_module(ptx)
        for k in mod.body.block.ops:
            if isinstance(k, func.FuncOp):
                kernels[f"{mod.sym_name.data}::{k.sym_name.data}"] = loaded.function(k.sym_name.data)
    prog = Program.of(module, fetches, use_fetch_ops=False)
    host = next(
        o for o in lowered.body.block.ops
        if isinstance(o, func.FuncOp) and o.sym_name.data == "main" and not o.is_declaration
    )
    return GpuProgram(host, abi, kernels, prog, output_values(prog, abi, fetches), ptx, library_gemm)


# -------------------------------------------------------------- host interpreter

_GEMM_DTYPES = {sym: np.dtype(_NP[elem]) for elem, sym in GEMM_SYMBOLS.items()}
"""Element types of the host's gemm calls by symbol (`pullback_sgemm` -> float32)."""

_INDEX_BINARY: dict[type[Operation], Callable[[Any, Any], Any]] = {
    arith.AddiOp: lambda a, b: a + b,
    arith.SubiOp: lambda a, b: a - b,
    arith.MuliOp: lambda a, b: a * b,
    arith.DivUIOp: lambda a, b: a // b,
    arith.RemUIOp: lambda a, b: a % b,
    arith.CeilDivUIOp: lambda a, b: -(-a // b),
    arith.MinUIOp: min,
    arith.MaxUIOp: max,
    arith.MinSIOp: min,
    arith.MaxSIOp: max,
    arith.FloorDivSIOp: lambda a, b: a // b,
    arith.AndIOp: lambda a, b: a & b,
    arith.OrIOp: lambda a, b: a | b,
    arith.XOrIOp: lambda a, b: a ^ b,
}

_CMPI: dict[int, Callable[[Any, Any], bool]] = {
    0: lambda a, b: a == b, 1: lambda a, b: a != b,
    2: lambda a, b: a < b, 3: lambda a, b: a <= b, 4: lambda a, b: a > b, 5: lambda a, b: a >= b,
    6: lambda a, b: a < b, 7: lambda a, b: a <= b, 8: lambda a, b: a > b, 9: lambda a, b: a >= b,
}
"""`arith.cmpi` by predicate number (host values are non-negative sizes and Python
ints, so the unsigned predicates compare as the signed ones)."""


@dataclass
class HostRun:
    """State of one interpretation of a host function."""

    device: cuda.Device
    pool: _Pool
    kernels: dict[str, cuda.Function]
    blas: cublas.Cublas | None = None
    """cuBLAS, for the host's gemm calls (programs compiled with `library_gemm`)."""
    env: dict[SSAValue, Any] = field(default_factory=dict)
    temps: list[cuda.DeviceBuffer] = field(default_factory=list)
    capture: list[tuple[Any, ...]] | None = None
    """While set, gemm calls are recorded here instead of made (`batched_loop`)."""
    plans: dict[Operation, Any] = field(default_factory=dict)
    """Ops decoded once per program (launches: `_launch_plan`; allocations; the
    host function's constants), shared by its runs."""
    launches: int = 0
    """Kernels launched (what CUDA graphs or fusion would cut: docs/gpu.md)."""
    gemm_calls: int = 0
    """cuBLAS calls made (a strided-batched call counts once)."""
    recording: replay.Recording | None = None
    """While set, every launch and cuBLAS call is also noted here (`runtime/gpu/replay.py`)."""

    def run(self, host: func.FuncOp) -> None:
        """Interpret every op of the host function's body (its top-level constants
        decoded once per program: they are most of its ops)."""
        plan = self.plans.get(host)
        if plan is None:
            ops = list(host.body.block.ops)
            consts: dict[SSAValue, Any] = {
                o.result: o.value.value.data  # type: ignore[union-attr]  # integer or float attributes
                for o in ops if isinstance(o, arith.ConstantOp)
            }
            plan = self.plans[host] = (consts, [o for o in ops if not isinstance(o, arith.ConstantOp)])
        self.env.update(plan[0])
        for op in plan[1]:
            self.op(op)

    def op(self, op: Operation) -> None:
        """One host op (index arithmetic, buffers, launches)."""
        env = self.env
        kind = type(op)
        # The ops of every step first: launches, their grid arithmetic, buffers.
        if kind is gpu.LaunchFuncOp:
            self.launch(op)  # type: ignore[arg-type]
            return
        binary = _INDEX_BINARY.get(kind)
        if binary is not None:
            a, b = op.operands
            env[op.results[0]] = binary(env[a], env[b])
        elif kind is memref.DeallocOp:
            pass  # buffers go back to the pool when the run ends
        elif isinstance(op, arith.ConstantOp):
            v = op.value
            env[op.result] = v.value.data  # type: ignore[union-attr]  # host constants are integer or float attributes
        elif isinstance(op, arith.IndexCastOp):
            env[op.result] = int(env[op.input])
        elif isinstance(op, (arith.SIToFPOp, arith.UIToFPOp)):
            env[op.result] = float(env[op.input])
        elif isinstance(op, memref.DimOp):
            env[op.result] = env[op.source].shape[env[op.index]]
        elif isinstance(op, memref.AllocOp):
            alloc = self.plans.get(op)
            if alloc is None:
                t = op.memref.type
                alloc = self.plans[op] = (t.get_shape(), list(op.dynamic_sizes), np.dtype(_NP[str(t.get_element_type())]))
            static, dyn_sizes, dtype = alloc
            dyn = iter(env[v] for v in dyn_sizes)
            shape = tuple(d if d >= 0 else next(dyn) for d in static)
            buf = self.pool.take(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize)
            self.temps.append(buf)
            env[op.memref] = DeviceArray(buf, shape, dtype)
        elif isinstance(op, memref.ReinterpretCastOp):
            src: DeviceArray = env[op.source]
            dyn = iter(env[v] for v in op.sizes)
            shape = tuple(d if d >= 0 else next(dyn) for d in op.static_sizes.get_values())
            env[op.result] = DeviceArray(src.buffer, shape, src.dtype)
        elif isinstance(op, UnrealizedConversionCastOp) and isinstance(op.inputs[0].type, MemRefType):
            env[op.results[0]] = DevicePointer(env[op.inputs[0]].buffer)  # memref -> !llvm.ptr
        elif isinstance(op, llvm.GEPOp):
            self.gep(op)
        elif isinstance(op, func.CallOp) and op.callee.root_reference.data in _GEMM_DTYPES:
            self.gemm(op)
        elif isinstance(op, scf.ForOp):
            self.for_loop(op)
        elif isinstance(op, scf.IfOp):
            region = op.true_region if env[op.cond] else op.false_region
            outs = self.run_block(region.block, []) if region.blocks else []
            env.update(zip(op.results, outs))
        elif isinstance(op, scf.WhileOp):
            self.while_loop(op)
        elif isinstance(op, memref.LoadOp):
            env[op.res] = self.load(op)
        elif isinstance(op, func.CallOp) and op.callee.root_reference.data == "realloc":
            self.realloc(op)
        elif isinstance(op, UnrealizedConversionCastOp) and isinstance(op.results[0].type, MemRefType):
            # !llvm.ptr -> memref (a grown stack): a flat view; `reinterpret_cast` shapes it.
            ptr: DevicePointer = env[op.inputs[0]]
            dtype = np.dtype(_NP[str(op.results[0].type.get_element_type())])
            env[op.results[0]] = DeviceArray(ptr.buffer, (ptr.buffer.nbytes // dtype.itemsize,), dtype)
        elif isinstance(op, arith.CmpiOp):
            a, b = (env[v] for v in op.operands)
            env[op.result] = _CMPI[op.predicate.value.data](a, b)
        elif isinstance(op, arith.SelectOp):
            env[op.result] = env[op.lhs] if env[op.cond] else env[op.rhs]
        elif isinstance(op, (func.ReturnOp, scf.YieldOp)):
            pass
        else:
            raise RuntimeError(f"the GPU host runtime cannot execute '{op.name}'")

    def run_block(self, block: Any, args: Sequence[Any]) -> list[Any]:
        """Run a region's block with `args`; the values its terminator passes on
        (`scf.yield`'s, or `scf.condition`'s predicate followed by its values)."""
        self.env.update(zip(block.args, args))
        *ops, term = block.ops
        for inner in ops:
            self.op(inner)
        return [self.env[v] for v in term.operands]

    def while_loop(self, op: scf.WhileOp) -> None:
        """`scf.while` on the host: the predicate is read from device memory each
        trip (`load`), the kernels of both regions launched as the loop runs."""
        values = [self.env[v] for v in op.arguments]
        while True:
            cond, *values = self.run_block(op.before_region.block, values)
            if not cond:
                break
            values = self.run_block(op.after_region.block, values)
        self.env.update(zip(op.results, values))

    def load(self, op: memref.LoadOp) -> Any:
        """A host read of one element of a device buffer (a branch predicate, a trip
        count, a stack size): a small device->host copy, ordered after the kernels
        already launched (both run on the default stream)."""
        arr: DeviceArray = self.env[op.memref]
        index = [int(self.env[v]) for v in op.indices]
        flat = int(np.ravel_multi_index(index, arr.shape)) if index else 0
        raw = arr.buffer.download(np.empty(arr.buffer.nbytes, np.uint8))
        return raw.view(arr.dtype)[flat].item()

    def realloc(self, op: func.CallOp) -> None:
        """A stack grown by `realloc` (`lowering/control.py`): a new device buffer
        holding the old one's bytes (the old one goes back to the pool at the end)."""
        old: DevicePointer = self.env[op.arguments[0]]
        nbytes = int(self.env[op.arguments[1]])
        new = self.pool.take(nbytes)
        self.temps.append(new)
        keep = min(old.buffer.nbytes - old.offset, nbytes)
        if keep > 0:
            if old.offset:
                raise RuntimeError("realloc of a pointer into the middle of a buffer")
            new.copy_from(old.buffer, keep)
        self.env[op.results[0]] = DevicePointer(new)

    def gep(self, op: llvm.GEPOp) -> None:
        """`getelementptr` on a device pointer: one element index, in elements."""
        base: DevicePointer = self.env[op.ptr]
        (index,) = (self.env[v] for v in op.ssa_indices)
        itemsize = np.dtype(_NP[str(op.elem_type)]).itemsize
        self.env[op.result] = DevicePointer(base.buffer, base.offset + int(index) * itemsize)

    def gemm(self, op: func.CallOp) -> None:
        """A CBLAS-signature gemm call (`convert_linalg_to_blas`), made with cuBLAS."""
        (order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) = (self.env[v] for v in op.arguments)
        if order != ROW_MAJOR:
            raise RuntimeError(f"gemm call with CBLAS order {order}: only row-major is generated")
        call = (_GEMM_DTYPES[op.callee.root_reference.data], ta == TRANS, tb == TRANS,
                int(m), int(n), int(k), float(alpha), a, int(lda), b, int(ldb), float(beta), c, int(ldc))
        if self.capture is not None:
            self.capture.append(call)
        else:
            self.call_gemm(call)

    def call_gemm(self, call: tuple[Any, ...], batch: int = 1, strides: tuple[int, int, int] = (0, 0, 0)) -> None:
        """Send one recorded call (optionally strided-batched) to cuBLAS."""
        if self.blas is None:
            raise RuntimeError("a gemm call on the GPU without cuBLAS (compiled with library_gemm?)")
        dtype, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc = call
        self.gemm_calls += 1
        if self.recording is not None:
            self.recording.events.append(("gemm", call, batch, strides))
        self.blas.gemm(dtype, ta, tb, m, n, k, alpha, a.address, lda, b.address, ldb, beta, c.address, ldc,
                       batch=batch, stride_a=strides[0], stride_b=strides[1], stride_c=strides[2])

    def for_loop(self, op: scf.ForOp) -> None:
        """A host `scf.for` (no loop-carried values): the batch loops around gemm
        calls, per-step loops. A loop whose body is one gemm call and its pointer
        arithmetic becomes one strided-batched cuBLAS call (`batched_loop`)."""
        if op.iter_args:
            raise RuntimeError("the GPU host runtime runs scf.for loops without loop-carried values only")
        lb, ub, step = (int(self.env[v]) for v in (op.lb, op.ub, op.step))
        if lb >= ub:
            return
        if self.capture is None and self.batched_loop(op, lb, ub, step):
            return
        body = op.body.block
        for i in range(lb, ub, step):
            self.env[body.args[0]] = i
            for inner in body.ops:
                self.op(inner)

    def batched_loop(self, op: scf.ForOp, lb: int, ub: int, step: int) -> bool:
        """Run a loop of independent products as one strided-batched call: the body
        (index arithmetic and exactly one gemm call, no nested loop or launch) is
        evaluated for the first two iterations, recording the calls; the pointers
        advance linearly in the induction variable, so two calls give the strides.
        Not when every iteration writes the same C (a summed batch: beta = 1)."""
        body = op.body.block
        if not any(isinstance(o, func.CallOp) and o.callee.root_reference.data in _GEMM_DTYPES for o in body.ops) or any(
            isinstance(o, (scf.ForOp, scf.IfOp, scf.WhileOp, gpu.LaunchFuncOp, memref.LoadOp, func.CallOp))
            and not (isinstance(o, func.CallOp) and o.callee.root_reference.data in _GEMM_DTYPES)
            for o in body.ops
        ):
            return False
        count = len(range(lb, ub, step))
        self.capture = []
        try:
            for i in (lb, lb + step)[: min(count, 2)]:
                self.env[body.args[0]] = i
                for inner in body.ops:
                    self.op(inner)
            calls = self.capture
        finally:
            self.capture = None
        if len(calls) != min(count, 2):
            raise RuntimeError("a host loop around a gemm call made more than one call per step")
        first = calls[0]
        if count == 1:
            self.call_gemm(first)
            return True
        second = calls[1]
        itemsize = np.dtype(first[0]).itemsize
        strides = []
        for slot in (7, 9, 12):  # a, b, c
            p, q = first[slot], second[slot]
            if p.buffer is not q.buffer:
                raise RuntimeError("a batched gemm's operand moved to another buffer between steps")
            strides.append((q.offset - p.offset) // itemsize)
        same_sizes = all(first[i] == second[i] for i in range(len(first)) if i not in (7, 9, 12))
        if strides[2] == 0 or not same_sizes:
            for i in range(lb, ub, step):  # summed over the batch (or sizes vary): one call a step
                self.env[body.args[0]] = i
                for inner in body.ops:
                    self.op(inner)
            return True
        self.call_gemm(first, batch=count, strides=(strides[0], strides[1], strides[2]))
        return True

    def launch(self, op: gpu.LaunchFuncOp) -> None:
        """A `gpu.launch_func` as `cuLaunchKernel` (empty grids are skipped)."""
        plan = self.plans.get(op)
        if plan is None:
            plan = self.plans[op] = _launch_plan(op, self.kernels)
        env = self.env
        grid_vals, block_vals, operands, kernel = plan
        grid = [env[v] for v in grid_vals]
        if 0 in grid:
            return
        self.launches += 1
        args: list[Any] = []
        for v, dyn, kind in operands:
            val = env[v]
            if kind is None:
                args.append(val.buffer)
                args += [val.shape[k] for k in dyn]
            else:
                args.append(cuda.scalar_arg(kind, val))
        block = [env[v] for v in block_vals]
        if self.recording is not None:
            self.recording.events.append(("launch", kernel, grid, block, args))
        kernel.launch(grid, block, args)


_LaunchPlan = tuple[list[SSAValue], list[SSAValue], list[tuple[SSAValue, list[int], str | None]], Any]


def _launch_plan(op: gpu.LaunchFuncOp, kernels: Mapping[str, Any]) -> _LaunchPlan:
    """What a launch reads, decoded once per compiled program (xDSL's accessors
    cost more than the launch): grid and block values, each operand with its
    dynamic dimensions (a memref) or its parameter kind (a scalar,
    `lowering.llvm.nvptx.param_kinds`), and the kernel."""
    from pullback.lowering.llvm.nvptx import param_kinds

    operands: list[tuple[SSAValue, list[int], str | None]] = []
    for v in op.kernelOperands:
        t = v.type
        if isinstance(t, MemRefType):
            operands.append((v, [k for k, d in enumerate(t.get_shape()) if d < 0], None))
        else:
            (kind,) = param_kinds([t])
            operands.append((v, [], kind))
    ref = op.kernel
    name = f"{ref.root_reference.data}::{ref.nested_references.data[0].data}"
    return (
        [op.gridSizeX, op.gridSizeY, op.gridSizeZ],
        [op.blockSizeX, op.blockSizeY, op.blockSizeZ],
        operands,
        kernels[name],
    )


# ---------------------------------------------------------------------- backend


def gemm_library(device: Any) -> tuple[cublas.Cublas | None, str]:
    """cuBLAS for `device` and a one-line note of what runs matrix products:
    `cuBLAS (<path>)`, or `tiled kernel (<why cuBLAS is not used>)`."""
    reason = cublas.unavailable_reason()
    handle = None
    if reason is None:
        try:
            handle = cublas.handle_for(device)
        except cublas.CublasError as e:
            reason = str(e)
    if handle is None:
        return None, f"tiled kernel ({reason})"
    return handle, f"cuBLAS ({cublas.library_path()}{', TF32' if handle.tf32 else ''})"



MAX_REPLAYS = 8
"""Recorded runs kept per program (one per feed shapes; the oldest dropped first,
its temporaries given back to the pool)."""


class GpuBackend:
    """Runs `pd` programs on `CUDAPlace(i)` (see the module docstring)."""

    def __init__(
        self, place: Any, device: Any = None, gemm: tuple[cublas.Cublas | None, str] | None = None
    ) -> None:
        """`device`: the device to run on (default: `CUDAPlace(i)`'s); `gemm`: the
        cuBLAS handle (or None) and its note (default: `gemm_library(device)`).
        Tests pass fakes of both."""
        if device is None:
            index = getattr(place, "device_id", 0)
            cuda.require_device(index)
            device = cuda.get_device(index)
        self.device = device
        self.blas, self.gemm_engine = gemm if gemm is not None else gemm_library(device)
        """What runs matrix products: `cuBLAS (<library>)` or `tiled kernel (<why>)`."""
        self.stats: dict[str, int] = {}
        """The last run's kernel launches and cuBLAS calls (`launches`, `gemm_calls`),
        whether it was replayed (`replayed`) and whether it launched a CUDA graph (`graph`)."""
        self.pool = _Pool(self.device)
        self._stream: Any = None
        """The stream replayed steps are queued on (`_step_stream`), made on first use."""
        self._stream_failed = False
        self._programs: dict[tuple[int, tuple[int, ...]], tuple[ModuleOp, GpuProgram | None]] = {}
        self._params: dict[str, tuple[np.ndarray, DeviceArray]] = {}

    def program_for(self, module: ModuleOp, fetches: Sequence[SSAValue]) -> GpuProgram | None:
        """The compiled program (compiled on first use for this module and fetches),
        or None for programs that must run on the host: startup programs, whose
        random initializers use numpy's generator."""
        from pullback.dialects.pd.base import PdOp
        from pullback.lowering.abi import LoweringError

        key = (id(module), tuple(id(v) for v in fetches))
        hit = self._programs.get(key)
        if hit is None or hit[0] is not module:
            if hit is not None and self._stream is not None:
                self._stream.synchronize()  # the old program's replays (staging, graphs) are freed now
            try:
                hit = (module, compile_for_gpu(module, fetches, self.device, self.blas is not None))
            except LoweringError:
                if not any(isinstance(op, PdOp) and op.HOST_ONLY for op in module.walk()):
                    raise
                hit = (module, None)
            self._programs[key] = hit
        return hit[1]

    def _param(self, name: str, host: np.ndarray) -> DeviceArray:
        """The device copy of a parameter, uploaded only when the scope's array is new."""
        known = self._params.get(name)
        if known is not None and known[0] is host:
            return known[1]
        arr = DeviceArray(self.device.to_device(np.require(host, requirements="C")), host.shape, host.dtype)
        self._params[name] = (host, arr)
        return arr

    def run(
        self,
        module: ModuleOp,
        feeds: Mapping[str, np.ndarray],
        scope: MutableMapping[str, Any],
        fetches: Sequence[SSAValue],
    ) -> list[Any]:
        """Run on the GPU; returns the values of `fetches`: host arrays, except
        persistables, which are `ResidentArray`s (`np.asarray` copies them down)."""
        from pullback.lowering.shapes import plan_shapes

        prog = self.program_for(module, fetches)
        if prog is None:
            from pullback.runtime.interpreter import run_module

            env = run_module(module, feeds, scope)
            return [env[v] for v in fetches]
        abi = prog.abi
        feed_arrays = []
        for name, (_, elem) in abi["feeds"]:
            # Not np.ascontiguousarray: it turns a 0-d feed into shape [1].
            feed_arrays.append(np.require(feeds[name], _NP[elem], requirements="C"))
        key = tuple(a.shape for a in feed_arrays)
        out_shapes = prog.output_shapes.get(key)
        if out_shapes is None:
            shapes = plan_shapes(prog.prog, {n: a.shape for (n, _), a in zip(abi["feeds"], feed_arrays)})
            out_shapes = prog.output_shapes[key] = [tuple(shapes[v]) for v in prog.outputs]
        params: dict[str, DeviceArray] = {}
        for name, (_, elem) in abi["params"]:
            params[name] = self._param_for_run(scope, name, np.dtype(_NP[elem]))
        out_types = [(tuple(shape), np.dtype(_NP[elem])) for shape, (_, (_, elem)) in zip(out_shapes, abi["outputs"])]

        def new_out(i: int) -> DeviceArray:
            shape, dtype = out_types[i]
            return DeviceArray(self.device.alloc(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize), shape, dtype)

        n_new = sum(1 for n, _ in abi["outputs"] if n)
        kept = [i for i, (name, _) in enumerate(abi["outputs"]) if name and i >= len(out_types) - n_new]
        recorded = prog.replays.get(key) if replay.enabled() else None
        stream = None
        if recorded is not None:
            stream = self._step_stream()
            outs, graphed = recorded.run(feed_arrays, params, new_out, kept, self.blas, stream, stream is not None)
            if stream is None:
                self.device.synchronize()
            self.stats = {"launches": recorded.launches, "gemm_calls": recorded.gemm_calls, "replayed": 1,
                          "graph": int(graphed)}
        else:
            outs = [new_out(i) for i in range(len(out_types))]
            self._interpret(prog, key, feed_arrays, params, outs)
        # Persistables stay on the device: the scope gets residents, copied to the
        # host only when read.
        results: dict[tuple[str, Any], Any] = {}
        for name in abi["writes"]:
            if name in params:  # updated in place on the device
                results["param", name] = scope[name] = self._resident(name, params[name])
        for i in kept:
            results["out", i] = scope[abi["outputs"][i][0]] = self._resident(abi["outputs"][i][0], outs[i])
        out: list[Any] = []
        for kind, ref in abi["fetches"]:
            if (kind, ref) not in results:
                if kind == "out" and stream is not None:
                    stream.synchronize()  # the step's fetches wait for it (and raise its errors)
                    stream = None
                results[kind, ref] = outs[ref].download() if kind == "out" else self._resident(ref, params[ref])
            out.append(results[kind, ref])
        return out

    def _interpret(
        self, prog: GpuProgram, key: tuple[tuple[int, ...], ...], feed_arrays: list[np.ndarray],
        params: dict[str, DeviceArray], outs: list[DeviceArray],
    ) -> None:
        """Run `prog`'s host function by interpretation, recording it as the replay
        of these feed shapes when it can be replayed (`runtime/gpu/replay.py`)."""
        abi = prog.abi
        run = HostRun(self.device, self.pool, prog.kernels, self.blas, plans=prog.launch_plans)
        if prog.replayable is None:
            prog.replayable = replay.replayable(prog.host)
        if prog.replayable and replay.enabled():
            run.recording = replay.Recording()
        values: list[Any] = [feed_arrays[fi].shape[k] for fi, k in abi["dims"]]
        feed_devs = [DeviceArray(self.device.to_device(a), a.shape, a.dtype) for a in feed_arrays]
        values += feed_devs
        values += [params[name] for name, _ in abi["params"]]
        values += outs
        run.env.update(zip(prog.host.body.block.args, values))
        kept = False
        try:
            run.run(prog.host)
            self.device.synchronize()
            if run.recording is not None:
                try:
                    made = replay.build(run.recording, feed_devs, params, outs, run.temps)
                except replay.NotReplayable:
                    prog.replayable = False
                else:
                    if len(prog.replays) >= MAX_REPLAYS:
                        if self._stream is not None:
                            self._stream.synchronize()  # its graph or staging may still be in use
                        prog.replays.pop(next(iter(prog.replays))).release(self.pool)
                    prog.replays[key] = made
                    kept = True  # the replay owns this run's temporaries now
        finally:
            if not kept:
                for buf in run.temps:
                    self.pool.give(buf)
        self.stats = {"launches": run.launches, "gemm_calls": run.gemm_calls, "replayed": 0, "graph": 0}

    def _step_stream(self) -> Any:
        """The stream of replayed steps (the device's `step_stream`), or None for the
        synchronous path: when `PULLBACK_GPU_GRAPH=0`, when the driver lacks graph
        capture, or when setting the stream up failed once (warned).  cuBLAS is
        moved onto it (with its own workspace) so products are ordered with the
        kernels and captured with them."""
        if self._stream_failed or not replay.graphs_enabled(self.device):
            return None
        try:
            stream = self._stream or self.device.step_stream()
            if self.blas is not None:
                self.blas.bind_stream(stream, self.device)  # a no-op when it is there already
        except (cuda.CudaError, cublas.CublasError) as e:
            self._stream_failed = True
            warnings.warn(f"GPU step stream unavailable ({str(e).splitlines()[0]}); replayed steps run "
                          "synchronously without CUDA graphs", RuntimeWarning, stacklevel=3)
            return None
        self._stream = stream
        return stream

    def _param_for_run(self, scope: MutableMapping[str, Any], name: str, dtype: np.dtype[Any]) -> DeviceArray:
        """The device array of parameter `name`: the scope's own when it is this
        backend's resident, else the device copy of its host array (uploaded only
        when the backend has not seen that array: `_param`)."""
        entry = stored_entry(scope, name)
        if isinstance(entry, ResidentArray) and entry.owner is self and entry.array.dtype == dtype:
            return entry.array
        host = np.asarray(entry)
        if not (isinstance(host, np.ndarray) and host.dtype == dtype and host.flags.c_contiguous):
            host = np.array(host, dtype=dtype, order="C")  # 0-d stays 0-d
        if host is not entry:
            scope[name] = host
        return self._param(name, host)

    def _resident(self, name: str, array: DeviceArray) -> ResidentArray:
        """A scope entry for `array`, device-resident; materializing it records the
        host copy as current, so the next run does not upload it again."""
        resident = ResidentArray(array, self)

        def on_host(host: np.ndarray) -> None:
            self._params[name] = (host, array)

        resident.on_host = on_host
        return resident


def make_backend(place: Any) -> GpuBackend:
    """The executor's factory for `CUDAPlace`s."""
    return GpuBackend(place)


__all__ = ["DeviceArray", "DevicePointer", "GpuBackend", "GpuProgram", "HostRun", "ResidentArray", "compile_for_gpu", "gemm_library", "make_backend"]
