"""The CUDA driver API through ctypes: no package, no hard dependency.

`libcuda.so.1` is opened on first use, never at import: importing pullback works on
machines without a GPU, and every question about devices (`device_count()`,
`is_available()`) answers "none" there.  Code that needs a device calls
`require_device(i)`, which raises a one-line RuntimeError saying why it cannot have
one (no driver, no device, index out of range, a driver error).

What the GPU backend needs, and nothing more:

* `Device(i)`: the device's primary context, made current on use;
* `Device.load_module(ptx)`: JIT-compile PTX, with the driver's error log in the
  exception when it fails; `Module.function(name)` a kernel handle;
* `Device.alloc(nbytes)` -> `DeviceBuffer` (freed when garbage collected),
  host<->device copies, `memset_zero`;
* `Function.launch(grid, block, args, shared_bytes)` and `Device.synchronize()`;
* for replayed steps (`runtime/gpu/replay.py`): a `Stream` (`Device.create_stream`),
  page-locked host memory (`Device.host_alloc` -> `PinnedBuffer`), asynchronous
  uploads from it (`DeviceBuffer.upload_async`), `Event`s, and stream capture into
  a CUDA graph (`Stream.begin_capture`/`end_capture` -> `Graph.instantiate` ->
  `GraphExec.launch`); `graphs_supported()` says whether the driver has them.

Kernel arguments are `DeviceBuffer`s (passed as 64-bit device pointers), ctypes
scalars (`scalar_arg`, passed as they are), Python ints (`int64`) and floats
(`double`); kernels are generated with matching parameter types.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pullback.dialects.pd.base import DTYPES

LIBRARY_ENV = "PULLBACK_LIBCUDA"
"""Environment variable naming another driver library (default `libcuda.so.1`)."""

_CU_JIT_INFO_LOG_BUFFER = 3
_CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4
_CU_JIT_ERROR_LOG_BUFFER = 5
_CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6
_CU_DEVICE_ATTRIBUTE_CC_MAJOR = 75
_CU_DEVICE_ATTRIBUTE_CC_MINOR = 76
_CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36
_CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37
_LOG_BYTES = 1 << 14
_CU_STREAM_DEFAULT = 0
"""A *blocking* stream: work on the legacy default stream (the synchronous copies,
the interpreted path's launches) waits for it and it for them, so mixing the two
needs no extra synchronization (cuda.h, `CUstream_flags`)."""
_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1
"""Capture checks only this thread's calls (another thread allocating memory
meanwhile does not invalidate the capture, as it would in GLOBAL mode)."""
_CU_EVENT_DISABLE_TIMING = 2
_CUDA_ERROR_NOT_READY = 600

GRAPH_FUNCTIONS = (
    "cuStreamCreate", "cuStreamDestroy_v2", "cuStreamSynchronize", "cuStreamBeginCapture_v2",
    "cuStreamEndCapture", "cuGraphInstantiateWithFlags", "cuGraphLaunch", "cuGraphExecDestroy",
    "cuGraphDestroy", "cuMemHostAlloc", "cuMemFreeHost", "cuMemcpyHtoDAsync_v2",
    "cuMemcpyDtoDAsync_v2", "cuEventCreate", "cuEventRecord", "cuEventSynchronize",
    "cuEventQuery", "cuEventDestroy_v2",
)
"""The exported driver symbols the stream path needs (the `_v2` names are what
cuda.h's macros map `cuStreamDestroy`, `cuStreamBeginCapture`, ... to; CUDA >= 11.4
has them all)."""


class CudaError(RuntimeError):
    """A CUDA driver call failed; the message names the call and the driver's error."""


# ------------------------------------------------------------------------- library


@dataclass
class _Driver:
    """The loaded library and whether `cuInit` succeeded (or why it did not)."""

    lib: Any
    """The driver library (None when it could not be opened)."""
    error: str | None


_driver: _Driver | None = None


def _open_library(name: str) -> Any:
    """Open the driver library (a seam for tests, which substitute fakes)."""
    return ctypes.CDLL(name)


def _driver_state() -> _Driver:
    """Open the driver and call `cuInit` once; remember a failure as a reason."""
    global _driver
    if _driver is None:
        name = os.environ.get(LIBRARY_ENV, "libcuda.so.1")
        try:
            lib = _open_library(name)
        except OSError:
            _driver = _Driver(None, f"no CUDA driver ({name} not found)")
            return _driver
        res = lib.cuInit(0)
        if res != 0:
            _driver = _Driver(lib, f"the CUDA driver failed to initialize ({_error_text(lib, res)})")
        else:
            _driver = _Driver(lib, None)
    return _driver


def _reset_for_tests() -> None:
    """Forget the loaded driver (tests substitute fake libraries)."""
    global _driver
    _driver = None
    _DEVICES.clear()


def _error_text(lib: Any, res: int) -> str:
    """`CUDA_ERROR_X: description` for a driver result code."""
    name, text = ctypes.c_char_p(), ctypes.c_char_p()
    try:
        lib.cuGetErrorName(res, ctypes.byref(name))
        lib.cuGetErrorString(res, ctypes.byref(text))
    except (AttributeError, OSError):
        pass
    n = name.value.decode() if name.value else f"CUDA error {res}"
    return f"{n}: {text.value.decode()}" if text.value else n


def _lib() -> Any:
    """The initialized driver library, or CudaError saying why there is none."""
    state = _driver_state()
    if state.error is not None:
        raise CudaError(state.error)
    return state.lib


def _check(res: int, call: str) -> None:
    if res != 0:
        raise CudaError(f"{call} failed: {_error_text(_driver_state().lib, res)}")


# ------------------------------------------------------------------ device queries


def device_count() -> int:
    """The number of CUDA devices; 0 without a driver or when it fails."""
    state = _driver_state()
    if state.error is not None:
        return 0
    n = ctypes.c_int(0)
    if state.lib.cuDeviceGetCount(ctypes.byref(n)) != 0:
        return 0
    return n.value


def is_available() -> bool:
    """True when at least one CUDA device can be used."""
    return device_count() > 0


def unavailable_reason(index: int = 0) -> str | None:
    """Why device `index` cannot be used (one line), or None when it can."""
    state = _driver_state()
    if state.error is not None:
        return state.error
    count = device_count()
    if count == 0:
        return "the CUDA driver reports no device"
    if not 0 <= index < count:
        return f"no such CUDA device (the driver reports {count})"
    return None


def require_device(index: int = 0) -> None:
    """Raise RuntimeError('CUDAPlace(i): <reason>') unless device `index` is usable."""
    reason = unavailable_reason(index)
    if reason is not None:
        raise RuntimeError(f"CUDAPlace({index}): {reason}; use CPUPlace() instead")


def driver_version() -> int | None:
    """The driver's CUDA version as `major*1000 + minor*10`, or None without a driver."""
    state = _driver_state()
    if state.lib is None:
        return None
    v = ctypes.c_int(0)
    return v.value if state.lib.cuDriverGetVersion(ctypes.byref(v)) == 0 else None


# ------------------------------------------------------------------------- buffers


class DeviceBuffer:
    """`nbytes` of device memory, freed when the buffer is garbage collected."""

    def __init__(self, device: Device, nbytes: int) -> None:
        self.device = device
        self.nbytes = nbytes
        self.ptr = ctypes.c_uint64(0)
        # cuMemAlloc rejects 0 bytes; a 1-byte buffer keeps every pointer valid.
        device.make_current()
        _check(_lib().cuMemAlloc_v2(ctypes.byref(self.ptr), max(nbytes, 1)), "cuMemAlloc")

    def __del__(self) -> None:
        state = _driver
        if state is not None and state.lib is not None and self.ptr.value:
            state.lib.cuMemFree_v2(self.ptr)
            self.ptr = ctypes.c_uint64(0)

    def upload(self, array: np.ndarray) -> None:
        """Copy a host array (C-contiguous, `nbytes` long) to the device."""
        host = np.ascontiguousarray(array)
        if host.nbytes != self.nbytes:
            raise ValueError(f"upload of {host.nbytes} bytes into a {self.nbytes}-byte buffer")
        if host.nbytes:
            self.device.make_current()
            _check(
                _lib().cuMemcpyHtoD_v2(self.ptr, host.ctypes.data_as(ctypes.c_void_p), host.nbytes),
                "cuMemcpyHtoD",
            )

    def download(self, out: np.ndarray) -> np.ndarray:
        """Copy the buffer into the C-contiguous host array `out` and return it."""
        if out.nbytes != self.nbytes or not out.flags.c_contiguous:
            raise ValueError("download needs a C-contiguous array of the buffer's size")
        if out.nbytes:
            self.device.make_current()
            _check(
                _lib().cuMemcpyDtoH_v2(out.ctypes.data_as(ctypes.c_void_p), self.ptr, out.nbytes),
                "cuMemcpyDtoH",
            )
        return out

    def copy_from(self, other: DeviceBuffer, nbytes: int | None = None) -> None:
        """Device-to-device copy of `other` (same size) into this buffer; with
        `nbytes`, of that many leading bytes (both buffers at least that long)."""
        if nbytes is None:
            if other.nbytes != self.nbytes:
                raise ValueError("device copy between buffers of different sizes")
            nbytes = self.nbytes
        elif nbytes > min(self.nbytes, other.nbytes):
            raise ValueError(f"device copy of {nbytes} bytes between buffers of {other.nbytes} and {self.nbytes}")
        if nbytes:
            _check(_lib().cuMemcpyDtoD_v2(self.ptr, other.ptr, nbytes), "cuMemcpyDtoD")

    def upload_async(self, source: PinnedBuffer, offset: int, stream: Stream) -> None:
        """Queue a copy of `nbytes` bytes of page-locked `source` (from byte `offset`)
        into this buffer on `stream`: the call returns at once, so `source` must
        not be rewritten until the copy is done (an `Event` recorded after it says when)."""
        if offset < 0 or offset + self.nbytes > source.nbytes:
            raise ValueError(f"upload of {self.nbytes} bytes from byte {offset} of a {source.nbytes}-byte staging buffer")
        if self.nbytes:
            _check(
                _lib().cuMemcpyHtoDAsync_v2(
                    self.ptr, ctypes.c_void_p(source.address + offset), ctypes.c_size_t(self.nbytes), stream.handle
                ),
                "cuMemcpyHtoDAsync",
            )

    def copy_from_async(self, other: DeviceBuffer, stream: Stream) -> None:
        """Queue a device-to-device copy of `other` (same size) into this buffer on `stream`."""
        if other.nbytes != self.nbytes:
            raise ValueError("device copy between buffers of different sizes")
        if self.nbytes:
            _check(
                _lib().cuMemcpyDtoDAsync_v2(self.ptr, other.ptr, ctypes.c_size_t(self.nbytes), stream.handle),
                "cuMemcpyDtoDAsync",
            )

    def memset_zero(self) -> None:
        """Fill the buffer with zero bytes."""
        if self.nbytes:
            _check(_lib().cuMemsetD8_v2(self.ptr, ctypes.c_ubyte(0), self.nbytes), "cuMemsetD8")


@dataclass(frozen=True)
class DevicePointer:
    """A device address as the host function computes it: a buffer and a byte
    offset into it (a `memref` cast to `!llvm.ptr`, advanced by `llvm.getelementptr`)."""

    buffer: Any
    offset: int = 0

    @property
    def address(self) -> int:
        """The raw device address (what cuBLAS is passed)."""
        return int(self.buffer.ptr.value) + self.offset


# ------------------------------------------- streams, events, pinned memory, graphs


def graphs_supported() -> bool:
    """True when the driver exports every function of the stream path (streams,
    events, page-locked memory, asynchronous copies, graph capture)."""
    state = _driver_state()
    if state.error is not None:
        return False
    return all(hasattr(state.lib, name) for name in GRAPH_FUNCTIONS)


class PinnedBuffer:
    """`nbytes` of page-locked host memory (`cuMemHostAlloc`): the source of
    asynchronous uploads.  `array` is a uint8 numpy view of it."""

    def __init__(self, device: Device, nbytes: int) -> None:
        self.device = device
        self.nbytes = nbytes
        self._ptr = ctypes.c_void_p()
        device.make_current()
        _check(_lib().cuMemHostAlloc(ctypes.byref(self._ptr), ctypes.c_size_t(max(nbytes, 1)), ctypes.c_uint(0)),
               "cuMemHostAlloc")
        self.array = np.ctypeslib.as_array((ctypes.c_uint8 * max(nbytes, 1)).from_address(self.address))[:nbytes]

    @property
    def address(self) -> int:
        """The host address of the first byte."""
        return int(self._ptr.value or 0)

    def __del__(self) -> None:
        state = _driver
        if state is not None and state.lib is not None and self._ptr.value:
            state.lib.cuMemFreeHost(self._ptr)
            self._ptr = ctypes.c_void_p()


class Event:
    """A CUDA event (no timing): recorded on a stream, it completes when the work
    queued before it has."""

    def __init__(self, device: Device) -> None:
        self.handle = ctypes.c_void_p()
        device.make_current()
        _check(_lib().cuEventCreate(ctypes.byref(self.handle), ctypes.c_uint(_CU_EVENT_DISABLE_TIMING)),
               "cuEventCreate")

    def record(self, stream: Stream) -> None:
        """Mark the current end of `stream`'s queue."""
        _check(_lib().cuEventRecord(self.handle, stream.handle), "cuEventRecord")

    def synchronize(self) -> None:
        """Wait until the work before the last `record` is done (at once if never recorded)."""
        _check(_lib().cuEventSynchronize(self.handle), "cuEventSynchronize")

    def query(self) -> bool:
        """Whether the work before the last `record` is done, without waiting."""
        res = _lib().cuEventQuery(self.handle)
        if res == _CUDA_ERROR_NOT_READY:
            return False
        _check(res, "cuEventQuery")
        return True

    def __del__(self) -> None:
        state = _driver
        if state is not None and state.lib is not None and self.handle.value:
            state.lib.cuEventDestroy_v2(self.handle)
            self.handle = ctypes.c_void_p()


class Stream:
    """A blocking CUDA stream (ordered with the legacy default stream both ways,
    `_CU_STREAM_DEFAULT`), and capturing its work into a `Graph`."""

    def __init__(self, device: Device) -> None:
        self.device = device
        self.handle = ctypes.c_void_p()
        device.make_current()
        _check(_lib().cuStreamCreate(ctypes.byref(self.handle), ctypes.c_uint(_CU_STREAM_DEFAULT)), "cuStreamCreate")

    def synchronize(self) -> None:
        """Wait for the work queued on this stream; raises CudaError for a failed kernel."""
        _check(_lib().cuStreamSynchronize(self.handle), "cuStreamSynchronize")

    def begin_capture(self) -> None:
        """Start capturing: work queued on this stream is recorded, not run, until
        `end_capture` (thread-local mode: see `_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL`)."""
        _check(_lib().cuStreamBeginCapture_v2(self.handle, ctypes.c_int(_CU_STREAM_CAPTURE_MODE_THREAD_LOCAL)),
               "cuStreamBeginCapture")

    def end_capture(self) -> Graph:
        """Stop capturing; the captured work as a graph (CudaError when the capture
        was invalidated, e.g. by an operation capture does not allow)."""
        graph = ctypes.c_void_p()
        _check(_lib().cuStreamEndCapture(self.handle, ctypes.byref(graph)), "cuStreamEndCapture")
        return Graph(graph)

    def __del__(self) -> None:
        state = _driver
        if state is not None and state.lib is not None and self.handle.value:
            state.lib.cuStreamDestroy_v2(self.handle)
            self.handle = ctypes.c_void_p()


class Graph:
    """A captured CUDA graph (`CUgraph`), destroyed when garbage collected."""

    def __init__(self, handle: ctypes.c_void_p) -> None:
        self.handle = handle

    def instantiate(self) -> GraphExec:
        """The executable graph (`cuGraphInstantiateWithFlags`, no flags)."""
        exe = ctypes.c_void_p()
        _check(_lib().cuGraphInstantiateWithFlags(ctypes.byref(exe), self.handle, ctypes.c_ulonglong(0)),
               "cuGraphInstantiateWithFlags")
        return GraphExec(exe)

    def __del__(self) -> None:
        state = _driver
        if state is not None and state.lib is not None and self.handle.value:
            state.lib.cuGraphDestroy(self.handle)
            self.handle = ctypes.c_void_p()


class GraphExec:
    """An instantiated graph (`CUgraphExec`): the captured work, launched as one."""

    def __init__(self, handle: ctypes.c_void_p) -> None:
        self.handle = handle

    def launch(self, stream: Stream) -> None:
        """Queue the whole graph on `stream` (asynchronous)."""
        _check(_lib().cuGraphLaunch(self.handle, stream.handle), "cuGraphLaunch")

    def __del__(self) -> None:
        state = _driver
        if state is not None and state.lib is not None and self.handle.value:
            state.lib.cuGraphExecDestroy(self.handle)
            self.handle = ctypes.c_void_p()


# ---------------------------------------------------------------- modules, kernels


class Function:
    """A kernel of a loaded module."""

    def __init__(self, module: Module, name: str, handle: ctypes.c_void_p) -> None:
        self.module = module
        self.name = name
        self.handle = handle

    def launch(
        self,
        grid: Sequence[int],
        block: Sequence[int],
        args: Sequence[Any],
        shared_bytes: int = 0,
    ) -> None:
        """Launch on the current stream (asynchronous; `Device.synchronize` waits)."""
        self.launch_packed(grid, block, self.pack(args), shared_bytes)

    def pack(self, args: Sequence[Any]) -> PackedArgs:
        """`args` (device buffers, ctypes scalars, Python ints and floats) as the
        parameter array `cuLaunchKernel` reads, to launch once or many times."""
        storage: list[Any] = []
        for a in args:
            if isinstance(a, ctypes._SimpleCData):
                storage.append(a)
            elif isinstance(a, DeviceBuffer):
                storage.append(ctypes.c_uint64(a.ptr.value))
            elif isinstance(a, (bool, int, np.integer)):
                storage.append(ctypes.c_int64(int(a)))
            elif isinstance(a, (float, np.floating)):
                storage.append(ctypes.c_double(float(a)))
            else:
                raise TypeError(f"kernel {self.name}: cannot pass {type(a).__name__}")
        return PackedArgs(storage)

    def launch_packed(
        self, grid: Sequence[int], block: Sequence[int], packed: PackedArgs, shared_bytes: int = 0,
        stream: Stream | None = None,
    ) -> None:
        """Launch with arguments packed by `pack` (asynchronous), on `stream` (default:
        the legacy default stream).  The driver copies the parameter values at this
        call, so `packed` may be rewritten for the next launch right away."""
        gx, gy, gz = (int(v) for v in grid)
        bx, by, bz = (int(v) for v in block)
        self.module.device.make_current()
        _check(
            _lib().cuLaunchKernel(
                self.handle, gx, gy, gz, bx, by, bz, shared_bytes,
                stream.handle if stream is not None else None, packed.params, None
            ),
            f"cuLaunchKernel({self.name})",
        )


class PackedArgs:
    """A kernel's packed parameter array: each argument's ctypes value, and the
    array of their addresses `cuLaunchKernel` reads (which the values outlive)."""

    def __init__(self, storage: list[Any]) -> None:
        self.storage = storage
        self.params = (ctypes.c_void_p * max(len(storage), 1))(
            *[ctypes.cast(ctypes.byref(s), ctypes.c_void_p) for s in storage]
        )

    def set_buffer(self, pos: int, buffer: DeviceBuffer) -> None:
        """Point argument `pos` (a buffer's address) at `buffer` instead."""
        self.storage[pos].value = buffer.ptr.value


_SCALAR_CTYPES = {
    d.short: np.ctypeslib.as_ctypes_type(d.numpy) for d in DTYPES if not (d.kind == "f" and d.size == 2) and d.kind != "c"  # (complex: host only)
} | {"i8": ctypes.c_int8}
"""ctypes of kernel scalar parameters: the dialect's dtypes, and `i8` (an `i1` widened);
not the 16-bit floats, which ctypes lacks and the lowering computes in float32."""


def scalar_arg(kind: str, value: Any) -> Any:
    """A scalar kernel argument of a parameter kind (`i64`, `f32`, ... as in
    `lowering.llvm.nvptx.param_kinds`) as the ctypes value `Function.launch` passes."""
    return _SCALAR_CTYPES[kind](value)


class Module:
    """PTX loaded (JIT-compiled) into a device's context."""

    def __init__(self, device: Device, ptx: str) -> None:
        self.device = device
        self.handle = ctypes.c_void_p()
        device.make_current()
        err = ctypes.create_string_buffer(_LOG_BYTES)
        info = ctypes.create_string_buffer(_LOG_BYTES)
        opts = (ctypes.c_int * 4)(
            _CU_JIT_ERROR_LOG_BUFFER,
            _CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
            _CU_JIT_INFO_LOG_BUFFER,
            _CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
        )
        vals = (ctypes.c_void_p * 4)(
            ctypes.cast(err, ctypes.c_void_p),
            ctypes.c_void_p(_LOG_BYTES),
            ctypes.cast(info, ctypes.c_void_p),
            ctypes.c_void_p(_LOG_BYTES),
        )
        # The driver reads the image up to its NUL terminator.
        image = ptx.encode() + b"\0"
        res = _lib().cuModuleLoadDataEx(ctypes.byref(self.handle), image, 4, opts, vals)
        if res != 0:
            log = err.value.decode(errors="replace").strip() or "(empty JIT log)"
            raise CudaError(
                f"cuModuleLoadDataEx failed: {_error_text(_lib(), res)}\nJIT log:\n{log}"
            )
        self.info_log = info.value.decode(errors="replace")

    def function(self, name: str) -> Function:
        """The kernel `name` (CudaError when the module has none)."""
        handle = ctypes.c_void_p()
        _check(
            _lib().cuModuleGetFunction(ctypes.byref(handle), self.handle, name.encode()),
            f"cuModuleGetFunction({name})",
        )
        return Function(self, name, handle)

    def __del__(self) -> None:
        state = _driver
        if state is not None and state.lib is not None and self.handle.value:
            state.lib.cuModuleUnload(self.handle)
            self.handle = ctypes.c_void_p()


class Device:
    """CUDA device `index` through its primary context."""

    def __init__(self, index: int = 0) -> None:
        require_device(index)
        lib = _lib()
        self.index = index
        self.handle = ctypes.c_int(0)
        _check(lib.cuDeviceGet(ctypes.byref(self.handle), index), "cuDeviceGet")
        self.context = ctypes.c_void_p()
        _check(
            lib.cuDevicePrimaryCtxRetain(ctypes.byref(self.context), self.handle),
            "cuDevicePrimaryCtxRetain",
        )
        self.make_current()
        self._step_stream: Stream | None = None

    def make_current(self) -> None:
        """Make this device's primary context current on the calling thread."""
        _check(_lib().cuCtxSetCurrent(self.context), "cuCtxSetCurrent")

    @property
    def name(self) -> str:
        """The device's marketing name (e.g. `NVIDIA H100 80GB HBM3`)."""
        buf = ctypes.create_string_buffer(256)
        _check(_lib().cuDeviceGetName(buf, 256, self.handle), "cuDeviceGetName")
        return buf.value.decode()

    def attribute(self, attr: int) -> int:
        """A `CUdevice_attribute` of the device."""
        v = ctypes.c_int(0)
        _check(_lib().cuDeviceGetAttribute(ctypes.byref(v), attr, self.handle), "cuDeviceGetAttribute")
        return v.value

    @property
    def compute_capability(self) -> tuple[int, int]:
        """`(major, minor)`, e.g. `(9, 0)` for Hopper."""
        return (
            self.attribute(_CU_DEVICE_ATTRIBUTE_CC_MAJOR),
            self.attribute(_CU_DEVICE_ATTRIBUTE_CC_MINOR),
        )

    @property
    def peak_bandwidth_gbs(self) -> float:
        """Theoretical DRAM bandwidth in GB/s (double data rate x bus width)."""
        khz = self.attribute(_CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)
        bits = self.attribute(_CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)
        return 2.0 * khz * 1e3 * bits / 8 / 1e9

    def load_module(self, ptx: str) -> Module:
        """JIT-load PTX text; CudaError with the JIT log when it does not load."""
        return Module(self, ptx)

    def alloc(self, nbytes: int) -> DeviceBuffer:
        """Allocate device memory."""
        return DeviceBuffer(self, nbytes)

    def to_device(self, array: np.ndarray) -> DeviceBuffer:
        """A new buffer holding a copy of `array`."""
        buf = self.alloc(np.asarray(array).nbytes)
        buf.upload(array)
        return buf

    def synchronize(self) -> None:
        """Wait for all launched work; raises CudaError for a failed kernel."""
        self.make_current()
        _check(_lib().cuCtxSynchronize(), "cuCtxSynchronize")

    @property
    def supports_graphs(self) -> bool:
        """Whether the driver has streams, events, pinned memory and graph capture."""
        return graphs_supported()

    def create_stream(self) -> Stream:
        """A new blocking stream (`Stream`)."""
        return Stream(self)

    def step_stream(self) -> Stream:
        """The device's stream for replayed steps, made on first use and shared by
        every backend on the device, as the device's cuBLAS handle is: two
        blocking streams are not ordered with each other, so a handle moved to one
        backend's stream would race with another's kernels."""
        if self._step_stream is None:
            self._step_stream = Stream(self)
        return self._step_stream

    def create_event(self) -> Event:
        """A new event (no timing)."""
        return Event(self)

    def host_alloc(self, nbytes: int) -> PinnedBuffer:
        """`nbytes` of page-locked host memory."""
        return PinnedBuffer(self, nbytes)


_DEVICES: dict[int, Device] = {}


def get_device(index: int = 0) -> Device:
    """The (cached) `Device` for `index`; RuntimeError when it cannot be used."""
    if index not in _DEVICES:
        _DEVICES[index] = Device(index)
    return _DEVICES[index]


__all__ = [
    "CudaError",
    "Device",
    "DeviceBuffer",
    "DevicePointer",
    "Event",
    "Function",
    "GRAPH_FUNCTIONS",
    "Graph",
    "GraphExec",
    "Module",
    "PackedArgs",
    "PinnedBuffer",
    "Stream",
    "device_count",
    "driver_version",
    "get_device",
    "graphs_supported",
    "is_available",
    "require_device",
    "scalar_arg",
    "unavailable_reason",
]
