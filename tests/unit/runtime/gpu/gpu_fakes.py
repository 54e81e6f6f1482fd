"""Fakes of the GPU runtime's outside world, shared by the GPU runtime tests: a
recording device (buffers in host memory, launches logged, host<->device copies
counted) and a cuBLAS library computing what cuBLAS's column-major gemm computes on
host memory (so the argument mapping is checked against numpy).

Streams are emulated as the driver defines them, so ordering mistakes show: work
queued on a `FakeStream` (launches, products, asynchronous copies, event records)
does not happen when it is issued but when the host waits for it (the stream's or
an event's `synchronize`, the device's, or a call on the legacy default stream,
which a blocking stream is ordered with), in queue order.  An asynchronous upload
reads its page-locked source when it runs, so a staging buffer rewritten too early
delivers the wrong values; `FakePinned.array` refuses to hand the buffer out for
writing while a copy from it is pending.  Capture (`begin_capture`..`end_capture`)
records the queued work instead of queuing it, with kernel arguments and cuBLAS
scalars taken at the call as the driver takes them; launching the instantiated
graph queues all of it.  During a capture, legacy-stream calls and device
synchronization fail as the driver's would (`CUDA_ERROR_STREAM_CAPTURE_IMPLICIT`,
`..._UNSUPPORTED`), and `FakeDevice.fail_instantiate` makes instantiation fail."""

from __future__ import annotations

import ctypes
import itertools
import weakref
from collections import Counter, deque
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from pullback.runtime.gpu import cuda
from pullback.runtime.gpu.cuda import CudaError

_STREAMS: weakref.WeakValueDictionary[int, FakeStream] = weakref.WeakValueDictionary()
"""Live fake streams by handle value (the fake cuBLAS finds its stream here)."""
_HANDLES = itertools.count(0x5000)


def _flush_all() -> None:
    """What a legacy-default-stream call waits for: all work on blocking streams."""
    for stream in list(_STREAMS.values()):
        stream.drain()


# ------------------------------------------------------------ streams and graphs


class FakeStream:
    """A blocking stream: a queue of pending work, run when waited for."""

    def __init__(self, device: FakeDevice) -> None:
        self.device = device
        self.queue: deque[Callable[[], None]] = deque()
        self.captured: list[Callable[[], None]] | None = None
        self.handle = ctypes.c_void_p(next(_HANDLES))
        _STREAMS[self.handle.value] = self

    def enqueue(self, work: Callable[[], None]) -> None:
        """Queue `work` (or record it, while capturing)."""
        if self.captured is not None:
            self.captured.append(work)
        else:
            self.queue.append(work)

    def drain(self) -> None:
        """Run the queued work in order."""
        while self.queue:
            self.queue.popleft()()

    def synchronize(self) -> None:
        if self.captured is not None:
            raise CudaError("cuStreamSynchronize failed: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: "
                            "operation not permitted when stream is capturing")
        self.drain()

    def begin_capture(self) -> None:
        if self.captured is not None or self.device.capturing is not None:
            raise CudaError("cuStreamBeginCapture failed: CUDA_ERROR_ILLEGAL_STATE: already capturing")
        self.captured = []
        self.device.capturing = self

    def end_capture(self) -> FakeGraph:
        if self.captured is None:
            raise CudaError("cuStreamEndCapture failed: CUDA_ERROR_ILLEGAL_STATE: not capturing")
        work, self.captured, self.device.capturing = self.captured, None, None
        invalid, self.device.invalidated = self.device.invalidated, False
        if invalid:
            raise CudaError("cuStreamEndCapture failed: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED: "
                            "operation failed due to a previous error during capture")
        return FakeGraph(self.device, work)


class FakeGraph:
    def __init__(self, device: FakeDevice, work: list[Callable[[], None]]) -> None:
        self.device, self.work = device, work

    def instantiate(self) -> FakeGraphExec:
        if self.device.fail_instantiate:
            raise CudaError("cuGraphInstantiateWithFlags failed: CUDA_ERROR_NOT_SUPPORTED: operation not supported")
        return FakeGraphExec(self.device, list(self.work))


class FakeGraphExec:
    def __init__(self, device: FakeDevice, work: list[Callable[[], None]]) -> None:
        self.device, self.work = device, work
        device.graphs_made += 1

    def launch(self, stream: FakeStream) -> None:
        self.device.graph_launches += 1
        work = self.work

        def run_graph() -> None:
            for w in work:
                w()

        stream.enqueue(run_graph)


class FakeEvent:
    def __init__(self, device: FakeDevice) -> None:
        self.device = device
        self.done = True
        self.stream: FakeStream | None = None

    def record(self, stream: FakeStream) -> None:
        self.done, self.stream = False, stream

        def mark() -> None:
            self.done = True

        stream.enqueue(mark)

    def synchronize(self) -> None:
        self.device.event_waits += 1
        while not self.done:
            assert self.stream is not None and self.stream.queue, "an event recorded on nothing"
            self.stream.queue.popleft()()

    def query(self) -> bool:
        return self.done


class FakePinned:
    """Page-locked host memory; `array` refuses to be written while a queued
    upload still has to read it."""

    def __init__(self, device: FakeDevice, nbytes: int) -> None:
        self.device, self.nbytes = device, nbytes
        self._array = np.zeros(nbytes, np.uint8)
        self.address = self._array.ctypes.data
        self.pending = 0
        device.pinned.append(self)

    @property
    def array(self) -> np.ndarray:
        if self.pending:
            raise AssertionError("a staging buffer handed out for writing while a copy from it is in flight")
        return self._array


# ------------------------------------------------------------ a recording device


class FakeBuffer:
    """Device memory in a host array; `ptr` is its real host address (for FakeCublas)."""

    def __init__(self, device: FakeDevice, nbytes: int) -> None:
        self.device = device
        self.nbytes = nbytes
        self.data = np.zeros(max(nbytes, 1), np.uint8)
        self.ptr = ctypes.c_uint64(self.data.ctypes.data)

    def upload(self, array: np.ndarray) -> None:
        self.device.legacy("cuMemcpyHtoD")
        self.device.copies["up"] += 1
        self.data[: self.nbytes] = np.ascontiguousarray(array).reshape(-1).view(np.uint8)

    def upload_async(self, source: FakePinned, offset: int, stream: FakeStream) -> None:
        assert offset + self.nbytes <= source.nbytes
        self.device.copies["up"] += 1
        source.pending += 1

        def copy() -> None:
            self.data[: self.nbytes] = source._array[offset: offset + self.nbytes]
            source.pending -= 1

        stream.enqueue(copy)

    def copy_from(self, other: FakeBuffer, nbytes: int | None = None) -> None:
        self.device.legacy("cuMemcpyDtoD")
        n = self.nbytes if nbytes is None else nbytes
        self.data[:n] = other.data[:n]

    def copy_from_async(self, other: FakeBuffer, stream: FakeStream) -> None:
        assert other.nbytes == self.nbytes

        def copy() -> None:
            self.data[: self.nbytes] = other.data[: self.nbytes]

        stream.enqueue(copy)

    def download(self, out: np.ndarray) -> np.ndarray:
        self.device.legacy("cuMemcpyDtoH")
        self.device.copies["down"] += 1
        out.reshape(-1).view(np.uint8)[:] = self.data[: self.nbytes]
        if self.nbytes == 1 and self.device.predicates:
            # No kernel runs here: a one-byte read (a branch or loop predicate) is
            # answered from the device's script.
            out.reshape(-1).view(np.uint8)[:] = self.device.predicates.pop(0)
        return out


class FakeFunction:
    """A kernel: a launch appends `(name, grid, block, args)` to the device's log
    when it runs (at once on the legacy stream, when waited for on a stream)."""

    def __init__(self, log: list, name: str, device: FakeDevice | None = None) -> None:
        self.log, self.name, self.device = log, name, device

    def launch(self, grid, block, args, shared_bytes: int = 0) -> None:
        self.launch_packed(grid, block, self.pack(args), shared_bytes)

    def pack(self, args) -> FakePacked:
        return FakePacked(args)

    def launch_packed(self, grid, block, packed, shared_bytes: int = 0, stream: FakeStream | None = None) -> None:
        # The driver copies the arguments at the call: later rewrites of `packed` do not count.
        entry = (self.name, tuple(grid), tuple(block), list(packed.args))
        if self.device is not None:
            self.device.host_launches += 1

        def run() -> None:
            self.log.append(entry)
            hook = self.device.kernel_hooks.get(self.name) if self.device is not None else None
            if hook is not None:
                hook(entry[3])

        if stream is None:
            if self.device is not None:
                self.device.legacy("cuLaunchKernel")
            run()
        else:
            stream.enqueue(run)


class FakePacked:
    """What `Function.pack` returns, on the fake: the argument list itself."""

    def __init__(self, args) -> None:
        self.args = list(args)

    def set_buffer(self, pos: int, buffer) -> None:
        self.args[pos] = buffer


class FakeModule:
    def __init__(self, device: FakeDevice) -> None:
        self.device = device

    def function(self, name: str) -> FakeFunction:
        return FakeFunction(self.device.launches, name, self.device)


class FakeDevice:
    """Records launches; counts copies (`copies['up']`, `copies['down']`); streams,
    events, page-locked memory and graphs as the module docstring says."""

    index = 0
    name = "Fake GPU"
    compute_capability = (9, 0)
    peak_bandwidth_gbs = 1000.0

    def __init__(self, supports_graphs: bool = True) -> None:
        self.launches: list = []
        self.copies: Counter[str] = Counter()
        self.predicates: list[bool] = []
        """Values of the next one-byte downloads (predicates the kernels would compute)."""
        self.supports_graphs = supports_graphs
        self.capturing: FakeStream | None = None
        self.invalidated = False
        """Set by a call the capture does not allow: `end_capture` then fails."""
        self.fail_instantiate = False
        self.graphs_made = 0
        self.graph_launches = 0
        self.host_launches = 0
        """`launch_packed` calls made by the host (a graph's launches are not)."""
        self.event_waits = 0
        self.pinned: list[FakePinned] = []
        self._step_stream: FakeStream | None = None
        self.kernel_hooks: dict[str, Callable[[list], None]] = {}
        """What a kernel computes, by name, for tests that give one (called with its
        arguments when the launch runs); other kernels compute nothing."""

    def legacy(self, call: str) -> None:
        """A call on the legacy default stream: refused during a capture (it would
        depend on the capturing stream, and invalidates the capture), else it first
        waits for the blocking streams."""
        if self.capturing is not None:
            self.invalidated = True
            raise CudaError(f"{call} failed: CUDA_ERROR_STREAM_CAPTURE_IMPLICIT: operation would make the "
                            "legacy stream depend on a capturing blocking stream")
        _flush_all()

    def create_stream(self) -> FakeStream:
        return FakeStream(self)

    def step_stream(self) -> FakeStream:
        if self._step_stream is None:
            self._step_stream = FakeStream(self)
        return self._step_stream

    def create_event(self) -> FakeEvent:
        return FakeEvent(self)

    def host_alloc(self, nbytes: int) -> FakePinned:
        return FakePinned(self, nbytes)

    @property
    def uploads(self) -> int:
        return self.copies["up"]

    def alloc(self, nbytes: int) -> FakeBuffer:
        return FakeBuffer(self, nbytes)

    def to_device(self, array: np.ndarray) -> FakeBuffer:
        buf = FakeBuffer(self, np.asarray(array).nbytes)
        buf.upload(array)
        return buf

    def load_module(self, ptx: str) -> FakeModule:
        assert ".entry" in ptx
        return FakeModule(self)

    def make_current(self) -> None:
        pass

    def synchronize(self) -> None:
        if self.capturing is not None:
            self.invalidated = True
            raise CudaError("cuCtxSynchronize failed: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED: "
                            "operation not permitted when stream is capturing")
        _flush_all()


# ------------------------------------------------------------------ a fake cuBLAS


def _colmajor(addr: int, ld: int, rows: int, cols: int, dtype) -> np.ndarray:
    """A (rows x cols) column-major matrix with leading dimension `ld` at `addr`."""
    ctype = np.ctypeslib.as_ctypes_type(dtype)
    raw = (ctype * (ld * (cols - 1) + rows)).from_address(addr)
    flat = np.frombuffer(raw, dtype)
    return np.lib.stride_tricks.as_strided(
        flat, (rows, cols), (flat.itemsize, ld * flat.itemsize), writeable=True
    )


class FakeCublas:
    """libcublas's gemm entry points on host memory, column-major as the real one.
    Products are queued on the handle's stream (`cublasSetStream_v2`; the legacy
    stream runs them at once), scalars read at the call (host pointer mode);
    `calls` lists the products as they *run* (a graph's included)."""

    def __init__(self, status: int = 0) -> None:
        self.status = status
        self.calls: list[tuple] = []
        self.math_mode: int | None = None
        self.stream: FakeStream | None = None
        self.workspace: tuple[int, int] | None = None

    def cublasCreate_v2(self, ref):
        ref._obj.value = 1234
        return self.status

    def cublasSetStream_v2(self, handle, stream):
        value = getattr(stream, "value", stream)
        self.stream = _STREAMS.get(value) if value else None
        self.workspace = None  # cublasSetStream resets the workspace to cuBLAS's pool
        return 0

    def cublasSetWorkspace_v2(self, handle, ptr, nbytes):
        self.workspace = (ptr.value, nbytes.value)
        return 0

    def cublasSetMathMode(self, handle, mode):
        self.math_mode = mode.value
        return 0

    def cublasDestroy_v2(self, handle):
        return 0

    def cublasGetStatusString(self, status):
        return b"an invalid value was used as an argument"

    def _queue(self, prec, dtype, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, count):
        # Every argument read now, as cuBLAS does; memory read when the product runs.
        args = (dtype, ta.value, tb.value, m.value, n.value, k.value, alpha._obj.value, a.value, lda.value, sa,
                b.value, ldb.value, sb, beta._obj.value, c.value, ldc.value, sc, count)

        def run() -> None:
            self.calls.append((prec, count))
            self._gemm(*args)

        if self.stream is None:
            _flush_all()
            run()
        else:
            self.stream.enqueue(run)
        return 0

    @staticmethod
    def _gemm(dtype, ta, tb, m, n, k, alpha, a, lda, sa, b, ldb, sb, beta, c, ldc, sc, count):
        itemsize = np.dtype(dtype).itemsize
        for i in range(count):
            A = _colmajor(a + i * sa * itemsize, lda, *((k, m) if ta else (m, k)), dtype)
            B = _colmajor(b + i * sb * itemsize, ldb, *((n, k) if tb else (k, n)), dtype)
            C = _colmajor(c + i * sc * itemsize, ldc, m, n, dtype)
            C[...] = alpha * ((A.T if ta else A) @ (B.T if tb else B)) + beta * C

    def cublasSgemm_v2(self, h, ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc):
        return self._queue("S", np.float32, ta, tb, m, n, k, al, a, lda, 0, b, ldb, 0, be, c, ldc, 0, 1)

    def cublasDgemm_v2(self, h, ta, tb, m, n, k, al, a, lda, b, ldb, be, c, ldc):
        return self._queue("D", np.float64, ta, tb, m, n, k, al, a, lda, 0, b, ldb, 0, be, c, ldc, 0, 1)

    def cublasSgemmStridedBatched(self, h, ta, tb, m, n, k, al, a, lda, sa, b, ldb, sb, be, c, ldc, sc, count):
        return self._queue("S", np.float32, ta, tb, m, n, k, al, a, lda, sa.value, b, ldb, sb.value,
                           be, c, ldc, sc.value, count.value)


def matmul_entry() -> Any:
    """The prepared entry of `y = x @ w` (`x` [4, 6], `w` a [6, 3] parameter named
    'w'): a step whose value the fake device computes (its product runs on the fake
    cuBLAS, on host memory)."""
    import pullback as paddle
    from pullback.runtime.executor import prepare

    paddle.enable_static()
    try:
        main, start = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, start):
            x = paddle.static.data("x", [4, 6], "float32")
            w = paddle.static.create_parameter([6, 3], "float32", name="w")
            y = paddle.matmul(x, w)
        return prepare(main, [y.value])
    finally:
        paddle.disable_static()


requires_gpu = pytest.mark.skipif(not cuda.is_available(), reason=f"no usable GPU: {cuda.unavailable_reason(0)}")
"""Skips a test that needs a real GPU, naming why there is none."""


SCALE_ADD_PTX = r"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry scale_add(.param .u64 p, .param .u64 n) {
  .reg .b64 %rd<6>; .reg .b32 %r<4>; .reg .f32 %f<3>; .reg .pred %p<2>;
  ld.param.u64 %rd1, [p]; ld.param.u64 %rd2, [n];
  mov.u32 %r1, %tid.x; cvt.u64.u32 %rd3, %r1;
  setp.ge.u64 %p1, %rd3, %rd2; @%p1 bra DONE;
  cvta.to.global.u64 %rd4, %rd1; shl.b64 %rd5, %rd3, 2; add.s64 %rd4, %rd4, %rd5;
  ld.global.f32 %f1, [%rd4]; fma.rn.f32 %f2, %f1, 0f40000000, 0f3F800000; st.global.f32 [%rd4], %f2;
DONE:
  ret;
}
"""
"""`p[i] = 2 p[i] + 1` for i < n (one block of up to 128 threads): the kernel of the
tests on a real GPU; not idempotent, so how many times it ran shows."""


def fake_backend(blas: bool = False, monkeypatch: Any = None, device: Any = None) -> Any:
    """A GPU backend on a recording fake device (`device`, else a new `FakeDevice`);
    with `blas` (and `monkeypatch`), a cuBLAS handle on the fake library (products
    computed on host memory), else the tiled kernels."""
    from pullback.runtime.gpu import backend as gpu_backend, cublas

    gemm: tuple[Any, str] = (None, "tiled kernel (test)")
    if blas:
        cublas._reset_for_tests()
        monkeypatch.setattr(cublas, "_open_library", lambda name: FakeCublas())
        gemm = (cublas.Cublas(), "cuBLAS (fake)")
        cublas._reset_for_tests()
    return gpu_backend.GpuBackend(None, device=device or FakeDevice(), gemm=gemm)


def canonical_launches(launches: list[tuple[Any, ...]], names: dict[int, str]) -> list[tuple[Any, ...]]:
    """Launches with each buffer replaced by its role (`names`: id -> role) or, for
    any other buffer, by the order it first appeared in (so two runs compare equal
    when they use their feeds, temporaries and outputs in the same places); scalars
    by value."""
    seen: dict[int, str] = {}
    out = []
    for name, grid, block, args in launches:
        canon = [
            (names.get(id(a)) or seen.setdefault(id(a), f"buffer {len(seen)}")) if hasattr(a, "ptr")
            else getattr(a, "value", a)
            for a in args
        ]
        out.append((name, grid, block, tuple(canon)))
    return out


def param_buffer_names(backend: Any, scope: Any) -> dict[int, str]:
    """`param <name>` for each parameter buffer: the backend's own and the scope's
    device-resident entries."""
    names = {id(arr.buffer): f"param {n}" for n, (_, arr) in backend._params.items()}
    for name, entry in scope.items():
        arr = getattr(entry, "array", None)
        if arr is not None:
            names[id(arr.buffer)] = f"param {name}"
    return names


def mlp_feeds(seed: int, batch: int = 5) -> dict[str, np.ndarray]:
    """A batch for the 13-feature, 3-class MLP of the GPU tests."""
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((batch, 13)).astype(np.float32),
            "label": rng.integers(0, 3, (batch, 1)).astype(np.int64)}

