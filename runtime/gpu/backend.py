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

Copies: feeds go up on every run (they change); parameters go up only when the
scope holds an array the backend has not seen (a startup run, `tensor.set`), since
the program updates them in place on the device; fetched values come down.  The
executor's protocol stores every updated persistable back into the scope as a numpy
array, so updated parameters are also copied down after each run — into the
scope's own arrays, which keeps them recognizably current for the next run.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith, func, gpu, memref
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.ir import Operation, SSAValue

from pullback.dialects.pd.base import DTYPES
from pullback.runtime.gpu import cuda

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


def compile_for_gpu(module: ModuleOp, fetches: Sequence[SSAValue], device: cuda.Device) -> GpuProgram:
    """Lower `module` for `fetches`, emit PTX and load it on `device`."""
    from pullback.lowering.abi import Program, abi_of, output_values
    from pullback.lowering.convert_pd_to_linalg import build_entry
    from pullback.lowering.gpu import GPU_PASSES
    from pullback.lowering.gpu.pipeline import reject_control_flow
    from pullback.lowering.llvm.nvptx import gpu_modules, module_to_ptx

    # No run-time range checks: host code cannot read a status buffer the kernels
    # write on the device (out-of-range ids read a clamped row there instead).
    reject_control_flow(module)
    fn, _ = build_entry(
        module, fetches, entry="main", only_given_fetches=True, range_checks=False, fold_reductions=False
    )
    lowered = ModuleOp([fn])
    abi = abi_of(lowered, "main")
    ctx = Context(allow_unregistered=True)
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
    host = next(o for o in lowered.body.block.ops if isinstance(o, func.FuncOp))
    return GpuProgram(host, abi, kernels, prog, output_values(prog, abi, fetches), ptx)


# -------------------------------------------------------------- host interpreter

_INDEX_BINARY: dict[type[Operation], Callable[[Any, Any], Any]] = {
    arith.AddiOp: lambda a, b: a + b,
    arith.SubiOp: lambda a, b: a - b,
    arith.MuliOp: lambda a, b: a * b,
    arith.DivUIOp: lambda a, b: a // b,
    arith.RemUIOp: lambda a, b: a % b,
    arith.CeilDivUIOp: lambda a, b: -(-a // b),
    arith.MinUIOp: min,
    arith.MaxUIOp: max,
}


@dataclass
class HostRun:
    """State of one interpretation of a host function."""

    device: cuda.Device
    pool: _Pool
    kernels: dict[str, cuda.Function]
    env: dict[SSAValue, Any] = field(default_factory=dict)
    temps: list[cuda.DeviceBuffer] = field(default_factory=list)

    def run(self, host: func.FuncOp) -> None:
        """Interpret every op of the host function's body."""
        for op in host.body.block.ops:
            self.op(op)

    def op(self, op: Operation) -> None:
        """One host op (index arithmetic, buffers, launches)."""
        env = self.env
        if isinstance(op, arith.ConstantOp):
            v = op.value
            env[op.result] = v.value.data  # type: ignore[union-attr]  # host constants are integer or float attributes
        elif type(op) in _INDEX_BINARY:
            a, b = (env[v] for v in op.operands)
            env[op.results[0]] = _INDEX_BINARY[type(op)](a, b)
        elif isinstance(op, arith.IndexCastOp):
            env[op.result] = int(env[op.input])
        elif isinstance(op, (arith.SIToFPOp, arith.UIToFPOp)):
            env[op.result] = float(env[op.input])
        elif isinstance(op, memref.DimOp):
            env[op.result] = env[op.source].shape[env[op.index]]
        elif isinstance(op, memref.AllocOp):
            t = op.memref.type
            dyn = iter(env[v] for v in op.dynamic_sizes)
            shape = tuple(d if d >= 0 else next(dyn) for d in t.get_shape())
            dtype = np.dtype(_NP[str(t.get_element_type())])
            buf = self.pool.take(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize)
            self.temps.append(buf)
            env[op.memref] = DeviceArray(buf, shape, dtype)
        elif isinstance(op, memref.DeallocOp):
            pass  # buffers go back to the pool when the run ends
        elif isinstance(op, memref.ReinterpretCastOp):
            src: DeviceArray = env[op.source]
            dyn = iter(env[v] for v in op.sizes)
            shape = tuple(d if d >= 0 else next(dyn) for d in op.static_sizes.get_values())
            env[op.result] = DeviceArray(src.buffer, shape, src.dtype)
        elif isinstance(op, gpu.LaunchFuncOp):
            self.launch(op)
        elif isinstance(op, func.ReturnOp):
            pass
        else:
            raise RuntimeError(f"the GPU host runtime cannot execute '{op.name}'")

    def launch(self, op: gpu.LaunchFuncOp) -> None:
        """A `gpu.launch_func` as `cuLaunchKernel` (empty grids are skipped)."""
        from pullback.lowering.llvm.nvptx import param_kinds

        env = self.env
        grid = [env[v] for v in (op.gridSizeX, op.gridSizeY, op.gridSizeZ)]
        block = [env[v] for v in (op.blockSizeX, op.blockSizeY, op.blockSizeZ)]
        if 0 in grid:
            return
        args: list[Any] = []
        for v in op.kernelOperands:
            val = env[v]
            t = v.type
            if isinstance(t, MemRefType):
                args.append(val.buffer)
                args += [val.shape[k] for k, d in enumerate(t.get_shape()) if d < 0]
            else:
                (kind,) = param_kinds([t])
                args.append(cuda.scalar_arg(kind, val))
        ref = op.kernel
        name = f"{ref.root_reference.data}::{ref.nested_references.data[0].data}"
        self.kernels[name].launch(grid, block, args)


# ---------------------------------------------------------------------- backend


class GpuBackend:
    """Runs `pd` programs on `CUDAPlace(i)` (see the module docstring)."""

    def __init__(self, place: Any) -> None:
        index = getattr(place, "device_id", 0)
        cuda.require_device(index)
        self.device = cuda.get_device(index)
        self.pool = _Pool(self.device)
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
            try:
                hit = (module, compile_for_gpu(module, fetches, self.device))
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
        scope: MutableMapping[str, np.ndarray],
        fetches: Sequence[SSAValue],
    ) -> list[np.ndarray]:
        """Run on the GPU; returns the values of `fetches` as host arrays."""
        from pullback.lowering.shapes import plan_shapes

        prog = self.program_for(module, fetches)
        if prog is None:
            from pullback.runtime.interpreter import run_module

            env = run_module(module, feeds, scope)
            return [env[v] for v in fetches]
        abi = prog.abi
        args = prog.host.body.block.args
        run = HostRun(self.device, self.pool, prog.kernels)
        feed_arrays = []
        for name, (_, elem) in abi["feeds"]:
            # Not np.ascontiguousarray: it turns a 0-d feed into shape [1].
            feed_arrays.append(np.require(feeds[name], _NP[elem], requirements="C"))
        shapes = plan_shapes(prog.prog, {n: a.shape for (n, _), a in zip(abi["feeds"], feed_arrays)})
        out_shapes = [shapes[v] for v in prog.outputs]
        values: list[Any] = [feed_arrays[fi].shape[k] for fi, k in abi["dims"]]
        for a in feed_arrays:
            values.append(DeviceArray(self.device.to_device(a), a.shape, a.dtype))
        params: dict[str, np.ndarray] = {}
        for name, (_, elem) in abi["params"]:
            host = scope[name]
            if not (isinstance(host, np.ndarray) and host.dtype == _NP[elem] and host.flags.c_contiguous):
                host = np.array(host, dtype=_NP[elem], order="C")  # 0-d stays 0-d
                scope[name] = host
            params[name] = host
            values.append(self._param(name, host))
        outs = []
        for shape, (_, (_, elem)) in zip(out_shapes, abi["outputs"]):
            dtype = np.dtype(_NP[elem])
            outs.append(DeviceArray(self.device.alloc(int(np.prod(shape, dtype=np.int64)) * dtype.itemsize), tuple(shape), dtype))
        values += outs
        run.env.update(zip(args, values))
        try:
            run.run(prog.host)
            self.device.synchronize()
        finally:
            for buf in run.temps:
                self.pool.give(buf)
        for name in abi["writes"]:
            if name in params:
                # Updated in place on the device; refresh the scope's array in place.
                params[name].flags.writeable = True
                self._params[name][1].buffer.download(params[name])
        host_outs = [o.download() for o in outs]
        n_new = sum(1 for n, _ in abi["outputs"] if n)
        for (name, _), o in zip(abi["outputs"][len(outs) - n_new:], host_outs[len(outs) - n_new:]):
            scope[name] = o
        return [host_outs[ref] if kind == "out" else params[ref] for kind, ref in abi["fetches"]]


def make_backend(place: Any) -> GpuBackend:
    """The executor's factory for `CUDAPlace`s."""
    return GpuBackend(place)


__all__ = ["DeviceArray", "GpuBackend", "GpuProgram", "HostRun", "compile_for_gpu", "make_backend"]
