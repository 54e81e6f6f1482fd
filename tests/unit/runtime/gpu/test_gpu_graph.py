"""CUDA graph capture of replayed steps and asynchronous feed uploads
(`runtime/gpu/replay.py`: `Replay.run`, `Staging`), on the fake device of
`gpu_fakes.py`, which emulates streams, events, page-locked memory and capture as the
driver defines them (work runs when waited for, in stream order; a graph launch
runs what was captured, with the arguments of the capture).  The driver bindings
themselves (`runtime/gpu/cuda.py`) are checked against a fake `libcuda` that
records every call with its ctypes arguments."""

from __future__ import annotations

import ctypes
import warnings
from typing import Any

import numpy as np
import pytest

from pullback.benchmarks.programs import mlp_train
from pullback.runtime.gpu import backend as gpu_backend, cublas, cuda, replay
from pullback.runtime.interpreter import run_module
import pullback_gpu_fakes as gpu_fakes


# ------------------------------------------------------------- the backend, end to end


@pytest.mark.parametrize("blas", [True, False])
def test_a_graph_launch_issues_what_the_replay_issued(monkeypatch: pytest.MonkeyPatch, blas: bool) -> None:
    """The MLP step with graphs (default) and without (`PULLBACK_GPU_GRAPH=0`): from
    the `GRAPH_AFTER`-th replayed run on, the step is one graph launch and no launch
    from the host, and the launches the graph runs (names, grids, blocks, scalars,
    buffers by role) and the products it runs are those of the replay without it."""
    built_a, built_b = mlp_train((13, 8, 3), lr=0.1), mlp_train((13, 8, 3), lr=0.1)
    graphed, plain = gpu_fakes.fake_backend(blas, monkeypatch), gpu_fakes.fake_backend(blas, monkeypatch)
    dev_a, dev_b = graphed.device, plain.device
    for step in range(6):
        feeds = gpu_fakes.mlp_feeds(step)
        start_a, start_b = len(dev_a.launches), len(dev_b.launches)
        host_launches, graph_launches = dev_a.host_launches, dev_a.graph_launches
        (loss_a,) = graphed.run(built_a.module, feeds, built_a.scope, built_a.fetch)
        monkeypatch.setenv("PULLBACK_GPU_GRAPH", "0")
        (loss_b,) = plain.run(built_b.module, feeds, built_b.scope, built_b.fetch)
        monkeypatch.delenv("PULLBACK_GPU_GRAPH")
        dev_a.synchronize()
        capture_step = replay.GRAPH_AFTER  # step 0 is interpreted, then GRAPH_AFTER replays in a row
        assert graphed.stats["graph"] == (step >= capture_step), step
        assert plain.stats["graph"] == 0
        if step > capture_step:  # (the capture step issues the launches that are captured)
            assert dev_a.host_launches == host_launches and dev_a.graph_launches == graph_launches + 1
        got = gpu_fakes.canonical_launches(dev_a.launches[start_a:], gpu_fakes.param_buffer_names(graphed, built_a.scope))
        want = gpu_fakes.canonical_launches(dev_b.launches[start_b:], gpu_fakes.param_buffer_names(plain, built_b.scope))
        assert got == want, f"step {step}"
        assert len(got) == graphed.stats["launches"]
        np.testing.assert_array_equal(loss_a, loss_b)
    assert dev_a.graphs_made == 1 and dev_b.graphs_made == 0
    if blas:
        assert graphed.blas.lib.calls == plain.blas.lib.calls  # products as they ran  # type: ignore[union-attr]


def test_graph_steps_compute_the_interpreters_values_and_rebinding_drops_the_graph(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each step's feed goes up asynchronously through staging and the captured
    product reads it at its fixed address: the values are the interpreter's, step
    after step.  Setting the parameter from the host re-binds it to a new buffer:
    that step is replayed without the graph (dropped), and a new graph is captured
    once the new buffer has been used `GRAPH_AFTER` times in a row."""
    entry = gpu_fakes.matmul_entry()
    backend = gpu_fakes.fake_backend(True, monkeypatch)
    device = backend.device
    rng = np.random.default_rng(3)
    scope: dict[str, Any] = {"w": rng.standard_normal((6, 3)).astype(np.float32)}
    graph_runs = []
    for step in range(7):
        if step == 4:
            scope["w"] = rng.standard_normal((6, 3)).astype(np.float32)  # set from the host
        feeds = {"x": rng.standard_normal((4, 6)).astype(np.float32)}
        want = run_module(entry.module, feeds, dict(scope))[entry.fetches[0]]
        (got,) = backend.run(entry.module, feeds, scope, entry.fetches)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        graph_runs.append(backend.stats["graph"] if backend.stats["replayed"] else None)
    assert graph_runs == [None, 0, 1, 1, 0, 1, 1]
    assert device.graphs_made == 2
    assert backend.blas.lib.workspace == (backend.blas.workspace.ptr.value, cublas.WORKSPACE_BYTES)  # type: ignore[union-attr]
    assert backend.blas.lib.stream is backend._stream  # type: ignore[union-attr]


def test_each_feed_shape_has_its_graph_and_eviction_drops_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """Feed shapes select the replay, and each replay its own graph; a replay
    evicted (`MAX_REPLAYS`) loses its graph and its staging (waited for first)."""
    monkeypatch.setattr(gpu_backend, "MAX_REPLAYS", 2)
    built = mlp_train((13, 8, 3), lr=0.1)
    backend = gpu_fakes.fake_backend(True, monkeypatch)
    def run(batch: int) -> tuple[int, int]:
        backend.run(built.module, gpu_fakes.mlp_feeds(batch, batch), built.scope, built.fetch)
        return backend.stats["replayed"], backend.stats.get("graph", 0)

    seen = [run(b) for b in (3, 3, 3, 4, 4, 4, 3)]
    assert seen == [(0, 0), (1, 0), (1, 1), (0, 0), (1, 0), (1, 1), (1, 1)]
    (prog,) = [p for _, p in backend._programs.values()]
    first = prog.replays[((3, 13), (3, 1))]
    assert first.graph is not None and first.staging is not None
    waits = backend.device.event_waits
    assert run(5) == (0, 0)  # a third shape evicts batch 3's replay
    assert ((3, 13), (3, 1)) not in prog.replays
    assert first.graph is None and first.staging is None and first.temps == []
    assert backend.device.event_waits > waits
    assert run(3) == (0, 0)  # recorded again, then captured again
    assert run(3) == (1, 0) and run(3) == (1, 1)


def test_backends_on_one_device_share_its_step_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two backends on one device with the device's one cuBLAS handle: both queue on
    the device's step stream, so the handle never moves to a stream the other's
    kernels are not ordered with; both graph and compute the right products."""
    entry = gpu_fakes.matmul_entry()
    first = gpu_fakes.fake_backend(True, monkeypatch)
    second = gpu_backend.GpuBackend(None, device=first.device, gemm=(first.blas, first.gemm_engine))
    rng = np.random.default_rng(11)
    scopes: list[dict[str, Any]] = [{"w": rng.standard_normal((6, 3)).astype(np.float32)} for _ in range(2)]
    for _ in range(4):
        for backend, scope in zip((first, second), scopes):
            feeds = {"x": rng.standard_normal((4, 6)).astype(np.float32)}
            (got,) = backend.run(entry.module, feeds, scope, entry.fetches)
            np.testing.assert_allclose(got, feeds["x"] @ np.asarray(scope["w"]), rtol=1e-5, atol=1e-6)
    assert first.stats["graph"] == second.stats["graph"] == 1
    stream = first.device.step_stream()
    assert first._stream is stream and second._stream is stream
    assert first.blas.lib.stream is stream  # type: ignore[union-attr]


@pytest.mark.parametrize("how", ["env", "driver"])
def test_switched_off_or_unsupported_the_old_synchronous_path_runs(monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    """`PULLBACK_GPU_GRAPH=0`, or a driver without graph capture: no stream, no
    staging, no graph; feeds uploaded synchronously; the same launches."""
    if how == "env":
        monkeypatch.setenv("PULLBACK_GPU_GRAPH", "0")
    device = gpu_fakes.FakeDevice(supports_graphs=how == "env")  # "driver": the driver lacks capture
    built = mlp_train((13, 8, 3), lr=0.1)
    backend = gpu_fakes.fake_backend(True, monkeypatch, device)
    for step in range(4):
        backend.run(built.module, gpu_fakes.mlp_feeds(step), built.scope, built.fetch)
        assert backend.stats.get("graph", 0) == 0
    assert backend.stats["replayed"] == 1
    assert backend._stream is None and device.graphs_made == 0 and device.pinned == []
    assert backend.blas.stream is None  # type: ignore[union-attr]


def test_the_switch_must_be_0_or_1(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PULLBACK_GPU_GRAPH", "maybe")
    with pytest.raises(ValueError, match="PULLBACK_GPU_GRAPH must be 0 or 1, got 'maybe'"):
        replay.graphs_enabled(gpu_fakes.FakeDevice())


@pytest.mark.parametrize("failure", ["instantiate", "invalidated"])
def test_a_capture_the_driver_refuses_warns_once_and_replays(monkeypatch: pytest.MonkeyPatch, failure: str) -> None:
    """`cuGraphInstantiate` failing, or a capture invalidated by the driver: one
    RuntimeWarning naming the driver's error (no traceback), the capture ended (the
    stream usable), that step and the later ones replayed without a graph, with the
    right values."""
    entry = gpu_fakes.matmul_entry()
    device = gpu_fakes.FakeDevice()
    if failure == "instantiate":
        device.fail_instantiate = True
        message = r"CUDA graph capture failed \(cuGraphInstantiateWithFlags failed: CUDA_ERROR_NOT_SUPPORTED"
    else:
        real_begin = gpu_fakes.FakeStream.begin_capture

        def begin_and_break(self: Any) -> None:
            real_begin(self)
            self.device.invalidated = True  # as after a call the capture does not allow

        monkeypatch.setattr(gpu_fakes.FakeStream, "begin_capture", begin_and_break)
        message = r"CUDA graph capture failed \(cuStreamEndCapture failed: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"
    backend = gpu_fakes.fake_backend(True, monkeypatch, device)
    rng = np.random.default_rng(5)
    scope: dict[str, Any] = {"w": rng.standard_normal((6, 3)).astype(np.float32)}

    def step() -> None:
        feeds = {"x": rng.standard_normal((4, 6)).astype(np.float32)}
        (got,) = backend.run(entry.module, feeds, scope, entry.fetches)
        np.testing.assert_allclose(got, feeds["x"] @ scope["w"], rtol=1e-5, atol=1e-6)
        assert backend.stats.get("graph", 0) == 0

    step()
    step()
    with pytest.warns(RuntimeWarning, match=message) as caught:
        step()  # the capture
    assert len(caught) == 1 and "\n" not in str(caught[0].message)
    assert device.capturing is None and device.graph_launches == 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            step()


# -------------------------------------------------------- the replay, with kernels that compute


def _add_replay(device: Any) -> tuple[Any, Any, dict[str, Any], Any]:
    """A one-launch replay `out = feed + w` (float32[4]) on `device`, with the fake
    kernel computing it; returns (replay, feed array, params, kernel)."""
    f32 = np.dtype(np.float32)

    def add(args: list[Any]) -> None:
        feed, w, out = (a.data[:16].view(np.float32) for a in args[:3])
        out[:] = feed + w

    device.kernel_hooks["add"] = add
    kernel = gpu_fakes.FakeFunction(device.launches, "add", device)
    feed = gpu_backend.DeviceArray(device.alloc(16), (4,), f32)
    params = {"w": gpu_backend.DeviceArray(device.alloc(16), (4,), f32)}
    out = gpu_backend.DeviceArray(device.alloc(16), (4,), f32)
    rec = replay.Recording([("launch", kernel, [1, 1, 1], [4, 1, 1], [feed.buffer, params["w"].buffer, out.buffer])])
    return replay.build(rec, [feed], params, [out], []), feed, params, kernel


@pytest.mark.parametrize("kept", [False, True])
def test_graph_outputs_and_kept_outputs(kept: bool) -> None:
    """A graph writes outputs it owns; an output left in the scope (`kept`) is
    copied into a fresh array after the launch, so the next step does not
    overwrite it.  Values computed by the fake kernel, checked after several
    steps queued without waiting in between."""
    device = gpu_fakes.FakeDevice()
    rec, _, params, _ = _add_replay(device)
    stream = device.create_stream()
    params["w"].buffer.data[:16] = np.arange(4, dtype=np.float32).view(np.uint8)
    f32 = np.dtype(np.float32)

    def new_out(i: int) -> Any:
        return gpu_backend.DeviceArray(device.alloc(16), (4,), f32)

    results = []
    for step in range(5):
        outs, graphed = rec.run([np.full(4, step, np.float32)], params, new_out, [0] if kept else [], None, stream, True)
        assert graphed == (step + 1 >= replay.GRAPH_AFTER)
        results.append(outs[0])
        if not kept:  # a graph's own output: read before the next step (as the backend's fetch does)
            stream.synchronize()
            np.testing.assert_array_equal(outs[0].buffer.data[:16].view(np.float32), np.arange(4) + step)
    stream.synchronize()
    if kept:
        assert len({id(r.buffer) for r in results}) == 5
        for step, r in enumerate(results):
            np.testing.assert_array_equal(r.buffer.data[:16].view(np.float32), np.arange(4) + step)
    assert device.graphs_made == 1


def test_staging_is_never_rewritten_while_its_copy_is_in_flight() -> None:
    """Six uploads queued without the host waiting, each followed by a reader on the
    stream: every reader sees its own step's feed (the host's array may change
    right after the call), and no staging buffer is handed out for writing while
    a copy from it is pending (`FakePinned.array` would raise)."""
    device = gpu_fakes.FakeDevice()
    stream = device.create_stream()
    buf = device.alloc(24)
    staging = replay.Staging(device, [24])
    seen: list[np.ndarray] = []
    for step in range(6):
        host = np.full(6, step, np.float32)
        staging.upload([buf], [host], stream)
        host[:] = -1  # the caller reuses its array at once
        stream.enqueue(lambda: seen.append(buf.data[:24].view(np.float32).copy()))
    # The host ran ahead: waiting for step 3's copies (before step 5's) ran what was
    # queued up to them; the readers of steps 3 to 5 have not run yet.
    assert len(seen) == 3
    stream.synchronize()
    assert [s.tolist() for s in seen] == [[float(k)] * 6 for k in range(6)]
    assert device.event_waits == 4  # turns reused from step 2 on wait for their copies
    assert device.copies["up"] == 6


def test_staging_without_the_event_wait_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """The control of the test above: with the wait removed, the third upload would
    rewrite the first turn's buffer while its copy is queued, and the fake refuses."""
    monkeypatch.setattr(gpu_fakes.FakeEvent, "synchronize", lambda self: None)
    device = gpu_fakes.FakeDevice()
    stream = device.create_stream()
    buf = device.alloc(8)
    staging = replay.Staging(device, [8])
    staging.upload([buf], [np.zeros(2, np.float32)], stream)
    staging.upload([buf], [np.ones(2, np.float32)], stream)
    with pytest.raises(AssertionError, match="in flight"):
        staging.upload([buf], [np.ones(2, np.float32)], stream)


def test_a_capture_issuing_a_legacy_stream_call_is_refused() -> None:
    """The fake device refuses what the driver refuses during a capture (a call on
    the legacy stream, device synchronization), so a replay that issued one would
    fail its capture in the tests as on a GPU."""
    device = gpu_fakes.FakeDevice()
    stream = device.create_stream()
    stream.begin_capture()
    with pytest.raises(cuda.CudaError, match="CUDA_ERROR_STREAM_CAPTURE_IMPLICIT"):
        device.alloc(4).upload(np.zeros(1, np.float32))
    with pytest.raises(cuda.CudaError, match="CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"):
        device.synchronize()
    with pytest.raises(cuda.CudaError, match="CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"):
        stream.end_capture()
    assert device.capturing is None


# ------------------------------------------------------------------ the driver bindings


class RecordingDriver:
    """A fake libcuda: device queries answered, every other call recorded with its
    ctypes arguments; handles written through the pointer arguments."""

    def __init__(self, missing: tuple[str, ...] = ()) -> None:
        self.calls: list[tuple[str, tuple[Any, ...]]] = []
        self.missing = missing
        self.host_memory: list[Any] = []
        self.next_handle = 0x100

    def __getattr__(self, name: str) -> Any:
        if not name.startswith("cu") or name in self.missing:
            raise AttributeError(name)

        def call(*args: Any) -> int:
            self.calls.append((name, args))
            if name == "cuDeviceGetCount":
                args[0]._obj.value = 1
            elif name == "cuMemHostAlloc":
                mem = (ctypes.c_uint8 * args[1].value)()
                self.host_memory.append(mem)
                args[0]._obj.value = ctypes.addressof(mem)
            elif name in ("cuStreamCreate", "cuEventCreate", "cuStreamEndCapture", "cuGraphInstantiateWithFlags",
                          "cuMemAlloc_v2", "cuDevicePrimaryCtxRetain"):
                self.next_handle += 0x10
                out = args[1] if name == "cuStreamEndCapture" else args[0]  # its CUgraph* comes second
                out._obj.value = self.next_handle
            return 0

        return call

    def named(self, name: str) -> list[tuple[Any, ...]]:
        return [args for n, args in self.calls if n == name]


@pytest.fixture
def driver(monkeypatch: pytest.MonkeyPatch) -> Any:
    cuda._reset_for_tests()
    fake = RecordingDriver()
    monkeypatch.setattr(cuda, "_open_library", lambda name: fake)
    yield fake
    cuda._reset_for_tests()


def _value(arg: Any) -> Any:
    return getattr(arg, "value", arg)


def test_stream_capture_and_graph_calls_have_the_driver_signatures(driver: Any) -> None:
    """cuda.h (CUDA 13.0): `cuStreamCreate(CUstream*, unsigned)`,
    `cuStreamBeginCapture_v2(CUstream, CUstreamCaptureMode)`,
    `cuStreamEndCapture(CUstream, CUgraph*)`,
    `cuGraphInstantiateWithFlags(CUgraphExec*, CUgraph, unsigned long long)`,
    `cuGraphLaunch(CUgraphExec, CUstream)`, `cuLaunchKernel(..., CUstream, void**, void**)`."""
    assert cuda.graphs_supported()
    dev = cuda.Device(0)
    stream = dev.create_stream()
    (args,) = driver.named("cuStreamCreate")
    assert isinstance(args[1], ctypes.c_uint) and args[1].value == 0  # blocking: ordered with stream 0
    stream.begin_capture()
    (args,) = driver.named("cuStreamBeginCapture_v2")
    assert args[0] is stream.handle and isinstance(args[1], ctypes.c_int) and args[1].value == 1  # thread-local
    kernel = cuda.Function(type("M", (), {"device": dev})(), "k", ctypes.c_void_p(7))  # type: ignore[arg-type]
    kernel.launch_packed((2, 1, 1), (256, 1, 1), kernel.pack([3]), stream=stream)
    (args,) = driver.named("cuLaunchKernel")
    assert args[:8] == (kernel.handle, 2, 1, 1, 256, 1, 1, 0) and args[8] is stream.handle
    graph = stream.end_capture()
    (args,) = driver.named("cuStreamEndCapture")
    assert args[0] is stream.handle and _value(args[1]._obj) == graph.handle.value
    exe = graph.instantiate()
    (args,) = driver.named("cuGraphInstantiateWithFlags")
    assert args[1] is graph.handle and isinstance(args[2], ctypes.c_ulonglong) and args[2].value == 0
    exe.launch(stream)
    assert driver.named("cuGraphLaunch") == [(exe.handle, stream.handle)]
    stream.synchronize()
    assert driver.named("cuStreamSynchronize") == [(stream.handle,)]
    handles = (exe.handle.value, graph.handle.value, stream.handle.value)
    del exe, graph, stream
    assert [_value(a[0]) for a in driver.named("cuGraphExecDestroy")] == [handles[0]]
    assert [_value(a[0]) for a in driver.named("cuGraphDestroy")] == [handles[1]]
    assert [_value(a[0]) for a in driver.named("cuStreamDestroy_v2")] == [handles[2]]


def test_pinned_memory_async_upload_and_event_calls(driver: Any) -> None:
    """`cuMemHostAlloc(void**, size_t, unsigned)`, `cuMemcpyHtoDAsync_v2(CUdeviceptr,
    const void*, size_t, CUstream)`, `cuEventCreate(CUevent*, unsigned)` (no timing),
    `cuEventRecord(CUevent, CUstream)`, `cuEventSynchronize(CUevent)`, `cuMemFreeHost(void*)`."""
    dev = cuda.Device(0)
    stream = dev.create_stream()
    pinned = dev.host_alloc(64)
    (args,) = driver.named("cuMemHostAlloc")
    assert isinstance(args[1], ctypes.c_size_t) and args[1].value == 64 and args[2].value == 0
    pinned.array[:] = np.arange(64, dtype=np.uint8)  # the view is the page-locked memory
    assert bytes(driver.host_memory[0])[:4] == bytes([0, 1, 2, 3])
    buf = dev.alloc(16)
    buf.upload_async(pinned, 32, stream)
    (args,) = driver.named("cuMemcpyHtoDAsync_v2")
    assert args[0] is buf.ptr and args[1].value == pinned.address + 32
    assert isinstance(args[2], ctypes.c_size_t) and args[2].value == 16 and args[3] is stream.handle
    with pytest.raises(ValueError, match="upload of 16 bytes from byte 56 of a 64-byte staging buffer"):
        buf.upload_async(pinned, 56, stream)
    event = dev.create_event()
    (args,) = driver.named("cuEventCreate")
    assert args[1].value == 2  # CU_EVENT_DISABLE_TIMING
    event.record(stream)
    event.synchronize()
    assert driver.named("cuEventRecord") == [(event.handle, stream.handle)]
    assert driver.named("cuEventSynchronize") == [(event.handle,)]
    address = pinned.address
    del pinned
    assert [_value(a[0]) for a in driver.named("cuMemFreeHost")] == [address]


def test_graphs_unsupported_when_the_driver_lacks_a_function(monkeypatch: pytest.MonkeyPatch) -> None:
    cuda._reset_for_tests()
    monkeypatch.setattr(cuda, "_open_library", lambda name: RecordingDriver(missing=("cuGraphInstantiateWithFlags",)))
    try:
        assert not cuda.graphs_supported()
    finally:
        cuda._reset_for_tests()
    monkeypatch.setenv(cuda.LIBRARY_ENV, "libcuda-does-not-exist.so.1")
    monkeypatch.setattr(cuda, "_open_library", cuda.ctypes.CDLL)
    try:
        assert not cuda.graphs_supported()
    finally:
        cuda._reset_for_tests()


# ------------------------------------------------------------------ on a real GPU

requires_gpu = gpu_fakes.requires_gpu




@requires_gpu
def test_a_captured_kernel_runs_once_per_graph_launch_on_the_gpu() -> None:
    """The driver calls end to end: staging -> asynchronous upload -> captured kernel,
    the graph launched three times on the stream, an event and the stream waited for."""
    dev = cuda.get_device(0)
    kernel = dev.load_module(gpu_fakes.SCALE_ADD_PTX).function("scale_add")
    stream = dev.create_stream()
    x = np.arange(100, dtype=np.float32)
    buf = dev.alloc(x.nbytes)
    staging = replay.Staging(dev, [x.nbytes])
    staging.upload([buf], [x], stream)
    stream.begin_capture()
    kernel.launch_packed((1, 1, 1), (128, 1, 1), kernel.pack([buf, x.size]), stream=stream)
    exe = stream.end_capture().instantiate()
    for _ in range(3):
        exe.launch(stream)
    event = dev.create_event()
    event.record(stream)
    event.synchronize()
    assert event.query()
    stream.synchronize()
    want = x.copy()
    for _ in range(3):
        want = 2 * want + 1
    np.testing.assert_array_equal(buf.download(np.empty_like(x)), want)


@requires_gpu
@pytest.mark.parametrize("engine", ["cuBLAS", "tiled kernel"])
def test_graph_steps_train_as_the_synchronous_replay_and_the_interpreter(
    monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    """The MLP trained 12 steps on new batches: graphs on (captured from step
    `GRAPH_AFTER` on, cuBLAS products inside the graph), graphs off, and the
    interpreter give the same loss curve."""
    place = type("P", (), {"device_id": 0})()
    rng = np.random.default_rng(0)
    batches = [(rng.standard_normal((64, 20)).astype(np.float32), rng.integers(0, 4, (64, 1)).astype(np.int64))
               for _ in range(12)]
    curves = {}
    for mode in ("graph", "no graph", "interpreter"):
        built = mlp_train((20, 32, 32, 4), lr=0.1)
        gemm = None if engine == "cuBLAS" else (None, "tiled kernel (forced)")
        backend = gpu_backend.GpuBackend(place, gemm=gemm) if mode != "interpreter" else None
        if backend is not None and engine == "cuBLAS" and backend.blas is None:
            pytest.skip(f"no cuBLAS: {backend.gemm_engine}")
        monkeypatch.setenv("PULLBACK_GPU_GRAPH", "0" if mode == "no graph" else "1")
        losses = []
        for x, y in batches:
            feeds = {"x": x, "label": y}
            if backend is None:
                env = run_module(built.module, feeds, built.scope)
                for op in built.module.body.block.ops:
                    if op.name == "pd.sgd":
                        built.scope[op.properties["name"].data] = env[op.results[0]]
                losses.append(float(env[built.fetch[0]]))
            else:
                losses.append(float(backend.run(built.module, feeds, built.scope, built.fetch)[0]))
        if backend is not None:
            assert backend.stats["graph"] == (mode == "graph"), backend.stats
        curves[mode] = losses
    np.testing.assert_allclose(curves["graph"], curves["no graph"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(curves["graph"], curves["interpreter"], rtol=1e-4)
