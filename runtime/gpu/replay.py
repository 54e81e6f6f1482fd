"""Replays of a GPU program's host function: its launches and cuBLAS calls for one
set of feed shapes, recorded once and re-issued without interpreting it again.

The host function (`runtime/gpu/backend.py`, `HostRun`) is index arithmetic,
buffer allocation, kernel launches and cuBLAS calls.  Its work depends only on the
feed shapes, unless it reads device memory (`memref.load`: the predicates of
`pd.if`/`pd.while`, stack sizes), so for a function without loads one
interpretation per feed shapes says everything a run does: which kernels, with
which grids, blocks, scalars and buffers, and which products.  Interpreting the
MLP step's ~290 host ops cost ~0.9 ms a run on the development machine, against
PyTorch CUDA's whole step of ~1 ms (docs/gpu.md, "Fewer launches"); replaying the
recorded 35 launches and 8 products costs a fraction of that.

What changes between runs of one replay is only *where* values live, and a replay
names each buffer by its role:

- the feeds: uploaded into buffers the replay owns (one upload each, as before);
- the temporaries: buffers the replay owns (taken from the pool once, given back
  when the replay is dropped), so run after run uses the same addresses;
- the parameters: read from the scope each run (a parameter set from the host is
  uploaded to a new buffer, which the next launch then names);
- the outputs: allocated each run (a new persistable keeps its buffer).

Each launch's argument array is packed once (`Function.pack`); a run rewrites only
the addresses of the parameters and outputs in it.  `PULLBACK_GPU_REPLAY=0` turns
replays off (every run interpreted), for debugging.

With `PULLBACK_GPU_GRAPH` on (the default where the driver has graph capture), a
replay runs on the backend's stream: feeds staged in page-locked memory and
uploaded asynchronously (`Staging`, double-buffered behind events), nothing
waited for but the fetches, and once the parameter buffers have been the same
for `GRAPH_AFTER` runs in a row the launches and products are captured as one CUDA
graph writing outputs it owns; later runs launch the graph.  A re-bound parameter,
an eviction or a recompilation drops it; a capture the driver refuses is warned
about once and the replay stays uncaptured (docs/gpu.md, "CUDA graphs and
asynchronous feed uploads").
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func, memref

from pullback.runtime.gpu.cublas import CublasError
from pullback.runtime.gpu.cuda import CudaError, DevicePointer
from pullback.runtime.native.env import flag_setting

Role = tuple[str, Any]
"""Where a buffer comes from in a run: ('feed', i), ('param', name), ('out', i) or
('temp', i)."""


def enabled() -> bool:
    """Whether runs may be replayed (`PULLBACK_GPU_REPLAY`, on unless `0`)."""
    return flag_setting("PULLBACK_GPU_REPLAY", True)


GRAPH_ENV = "PULLBACK_GPU_GRAPH"
"""Environment variable: `0` keeps replayed steps on the synchronous path (no stream,
no staging, no CUDA graph)."""

GRAPH_AFTER = 2
"""Replayed runs in a row with the same parameter buffers before one is captured as a
CUDA graph: the first replayed run after a startup often still re-binds
parameters (uploaded from the host), which would drop a graph captured at once."""


def graphs_enabled(device: Any) -> bool:
    """Whether replays go through a stream (asynchronous feed uploads) and are
    captured as CUDA graphs: `PULLBACK_GPU_GRAPH` (on unless `0`) and a driver that
    has streams, events, page-locked memory and graph capture
    (`device.supports_graphs`)."""
    return flag_setting(GRAPH_ENV, True) and bool(getattr(device, "supports_graphs", False))


def replayable(host: func.FuncOp) -> bool:
    """True when the host function's work depends on the feed shapes only: it never
    reads device memory (`memref.load`) nor grows a stack (`realloc`)."""
    for op in host.walk():
        if isinstance(op, memref.LoadOp):
            return False
        if isinstance(op, func.CallOp) and op.callee.root_reference.data == "realloc":
            return False
    return True


@dataclass
class Recording:
    """What one interpreted run did, in order: `('launch', kernel, grid, block,
    args)` and `('gemm', call, batch, strides)` (the arguments of `HostRun.call_gemm`)."""

    events: list[tuple[Any, ...]] = field(default_factory=list)


class NotReplayable(Exception):
    """A recorded run used a buffer the replay cannot name (it is not a feed,
    parameter, output or temporary of that run)."""


@dataclass
class _Launch:
    kernel: Any
    grid: tuple[int, ...]
    block: tuple[int, ...]
    packed: Any
    slots: list[tuple[int, Role]]
    """Argument positions holding a parameter's or an output's buffer."""


@dataclass
class _Gemm:
    call: tuple[Any, ...]
    pointers: list[tuple[int, Role, int]]
    """Call positions holding a device pointer: position, buffer role, byte offset."""
    batch: int
    strides: tuple[int, int, int]


@dataclass
class Replay:
    """One recorded run, ready to re-issue (see the module docstring)."""

    feeds: list[Any]
    """The feed buffers this replay owns, by feed position."""
    temps: list[Any]
    """The temporaries this replay owns (given back to the pool by `release`)."""
    steps: list[_Launch | _Gemm]
    launches: int
    gemm_calls: int

    n_outs: int = 0
    """How many output buffers a run writes."""
    graph: _Graph | None = None
    """The captured graph of this replay, once captured (see `run`)."""
    graph_failed: bool = False
    """Capture failed once (the driver refused): this replay is never captured again."""
    staging: Staging | None = None
    """Page-locked staging of the feeds (made on the first asynchronous run)."""
    _signature: tuple[Any, ...] | None = None
    """The parameter buffers of the last run (held, not their ids: a freed buffer's
    id, and its device address, could be reused by the next one)."""
    _stable: int = 0
    """Consecutive runs with the same parameter buffers as the one before."""

    def run(
        self, feeds: Sequence[Any], params: dict[str, Any], new_out: Callable[[int], Any],
        kept: Collection[int], blas: Any, stream: Any = None, graphs: bool = False,
    ) -> tuple[list[Any], bool]:
        """One run: upload `feeds` (host arrays), re-issue every launch and product
        with this run's parameter buffers (DeviceArrays, by name), and return the
        output DeviceArrays and whether a graph ran.

        `new_out(i)` allocates output `i`; the outputs in `kept` (new persistables,
        left in the scope) must be fresh arrays, the others may be buffers the
        replay owns (a graph's, valid until the next run of this replay).

        Without a `stream`, the old synchronous path: feeds uploaded with
        `cuMemcpyHtoD`, launches and products on the default stream.  With one, the
        feeds go through page-locked staging (`Staging`) as asynchronous copies,
        everything is queued on `stream` and nothing here waits for the device;
        with `graphs` too, the `GRAPH_AFTER`-th consecutive run with the same
        parameter buffers is captured as a CUDA graph and later runs launch the
        graph (`_capture`; docs/gpu.md, "CUDA graphs")."""
        if stream is None:
            for buf, host in zip(self.feeds, feeds):
                buf.upload(host)
            outs = [new_out(i) for i in range(self.n_outs)]
            self._issue(params, outs, blas, None)
            return outs, False
        if self.staging is None:
            self.staging = Staging(stream.device, [buf.nbytes for buf in self.feeds])
        self.staging.upload(self.feeds, feeds, stream)
        signature = tuple(params[name].buffer for name in sorted(params))
        if self.graph is not None and not _same(self.graph.signature, signature):
            self.drop_graph()  # a parameter was re-bound to another buffer
        if graphs and self.graph is None and not self.graph_failed:
            self._stable = self._stable + 1 if _same(self._signature, signature) else 0
            self._signature = signature
            if self._stable + 1 >= GRAPH_AFTER:
                self._capture(params, new_out, blas, stream, signature)
        if self.graph is not None and graphs:
            self.graph.exe.launch(stream)
            outs = list(self.graph.outs)
            for i in kept:  # left in the scope: must not be overwritten by the next launch
                fresh = new_out(i)
                fresh.buffer.copy_from_async(outs[i].buffer, stream)
                outs[i] = fresh
            return outs, True
        outs = [new_out(i) for i in range(self.n_outs)]
        self._issue(params, outs, blas, stream)
        return outs, False

    def _issue(self, params: dict[str, Any], outs: Sequence[Any], blas: Any, stream: Any) -> None:
        """Every launch and product, with the parameter and output buffers given."""

        def buffer(role: Role) -> Any:
            kind, ref = role
            return params[ref].buffer if kind == "param" else outs[ref].buffer

        for step in self.steps:
            if isinstance(step, _Launch):
                for pos, role in step.slots:
                    step.packed.set_buffer(pos, buffer(role))
                if stream is None:
                    step.kernel.launch_packed(step.grid, step.block, step.packed)
                else:
                    step.kernel.launch_packed(step.grid, step.block, step.packed, stream=stream)
            else:
                call = list(step.call)
                for pos, role, offset in step.pointers:
                    call[pos] = DevicePointer(buffer(role) if role[0] in ("param", "out") else role[1], offset)
                dtype, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc = call
                blas.gemm(dtype, ta, tb, m, n, k, alpha, a.address, lda, b.address, ldb, beta, c.address, ldc,
                          batch=step.batch, stride_a=step.strides[0], stride_b=step.strides[1],
                          stride_c=step.strides[2])

    def _capture(
        self, params: dict[str, Any], new_out: Callable[[int], Any], blas: Any, stream: Any,
        signature: tuple[Any, ...],
    ) -> None:
        """Capture the launches and products on `stream` into a graph writing
        outputs it owns.  Capture only records (nothing runs until the graph is
        launched).  When the driver refuses (beginning, ending or instantiating
        the capture, or a product cuBLAS cannot capture), warn once, end the
        capture, and leave this replay uncaptured for good (`graph_failed`)."""
        if self.gemm_calls and getattr(blas, "stream", None) is not stream:
            # Products on another stream would not be captured: no graph then.
            self.graph_failed = True
            return
        outs = [new_out(i) for i in range(self.n_outs)]
        error: Exception | None = None
        try:
            stream.begin_capture()
        except CudaError as e:
            error = e
        else:
            try:
                self._issue(params, outs, blas, stream)
            except (CudaError, CublasError) as e:
                error = e
            finally:
                # Always end the capture: a stream left capturing fails every later call.
                try:
                    graph = stream.end_capture()
                except CudaError as e:
                    error = error or e
            if error is None:
                try:
                    self.graph = _Graph(graph.instantiate(), graph, signature, outs)
                except CudaError as e:
                    error = e
        if error is not None:
            self.graph_failed = True
            first_line = str(error).splitlines()[0]
            warnings.warn(
                f"CUDA graph capture failed ({first_line}); this step runs as a replay without a graph "
                "(PULLBACK_GPU_GRAPH=0 turns capture off)",
                RuntimeWarning,
                stacklevel=2,
            )

    def drop_graph(self) -> None:
        """Forget the captured graph (its executable graph is destroyed when
        collected; one still running finishes first, as the driver defines it);
        the next runs are replayed, and captured again once stable."""
        self.graph = None
        self._signature = None
        self._stable = 0

    def release(self, pool: Any) -> None:
        """Give the temporaries back to `pool` (the replay is being dropped; the
        caller has waited for its work), with the graph and the staging."""
        self.drop_graph()
        if self.staging is not None:
            self.staging.wait()
            self.staging = None
        for buf in self.temps:
            pool.give(buf)
        self.temps = []


def _same(a: tuple[Any, ...] | None, b: tuple[Any, ...]) -> bool:
    """The same buffers (identity), in the same order."""
    return a is not None and len(a) == len(b) and all(x is y for x, y in zip(a, b))


@dataclass
class _Graph:
    exe: Any
    """The executable graph (`cuda.GraphExec`)."""
    graph: Any
    """The captured graph it was made from."""
    signature: tuple[Any, ...]
    """The parameter buffers it was captured with (by sorted name; held, so their
    addresses stay theirs while the graph lives)."""
    outs: list[Any]
    """The output DeviceArrays it writes (it owns them)."""


class Staging:
    """Page-locked host memory for a replay's feeds, double-buffered: run k copies
    its feeds into turn `k % 2` and queues asynchronous uploads from it, then
    records that turn's event; before the turn is rewritten (run k + 2) its event
    is waited for, so a staging buffer is never overwritten while a copy from it
    may still be in flight, and the host may prepare one run ahead of the device."""

    ALIGN = 256
    """Byte alignment of each feed in the staging buffer (DMA-friendly)."""

    def __init__(self, device: Any, sizes: Sequence[int]) -> None:
        self.offsets: list[int] = []
        total = 0
        for n in sizes:
            self.offsets.append(total)
            total += -(-n // self.ALIGN) * self.ALIGN
        self.turns = [(device.host_alloc(total), device.create_event()) for _ in range(2)]
        self.recorded = [False, False]
        self.turn = 0

    def upload(self, buffers: Sequence[Any], hosts: Sequence[Any], stream: Any) -> None:
        """Copy `hosts` (C-contiguous arrays, one per buffer) into this turn's staging
        and queue their uploads into `buffers` on `stream`."""
        pinned, event = self.turns[self.turn]
        if self.recorded[self.turn]:
            event.synchronize()  # the copies from this turn two runs ago are done
        view = pinned.array
        for buf, host, off in zip(buffers, hosts, self.offsets):
            if buf.nbytes:
                view[off: off + buf.nbytes] = host.reshape(-1).view(np.uint8)
                buf.upload_async(pinned, off, stream)
        event.record(stream)
        self.recorded[self.turn] = True
        self.turn ^= 1

    def wait(self) -> None:
        """Wait until no copy from the staging is in flight (before freeing it)."""
        for (_, event), recorded in zip(self.turns, self.recorded):
            if recorded:
                event.synchronize()


def build(
    recording: Recording, feeds: Sequence[Any], params: dict[str, Any], outs: Sequence[Any], temps: Sequence[Any],
) -> Replay:
    """A replay of `recording`, made by the run whose feed, parameter and output
    DeviceArrays and temporary buffers are given.  Raises NotReplayable when an
    event names a buffer that is none of them."""
    roles: dict[int, Role] = {}
    for i, buf in enumerate(temps):
        roles[id(buf)] = ("temp", i)
    for i, arr in enumerate(outs):
        roles[id(arr.buffer)] = ("out", i)
    for name, arr in params.items():
        roles[id(arr.buffer)] = ("param", name)
    for i, arr in enumerate(feeds):
        roles[id(arr.buffer)] = ("feed", i)

    def role_of(buf: Any) -> Role:
        role = roles.get(id(buf))
        if role is None:
            raise NotReplayable("a launch reads a buffer that is no feed, parameter, output or temporary")
        return role

    steps: list[_Launch | _Gemm] = []
    launches = gemm_calls = 0
    for event in recording.events:
        if event[0] == "launch":
            _, kernel, grid, block, args = event
            slots = []
            for pos, a in enumerate(args):
                if hasattr(a, "ptr"):  # a device buffer
                    role = role_of(a)
                    if role[0] in ("param", "out"):
                        slots.append((pos, role))
            steps.append(_Launch(kernel, tuple(grid), tuple(block), kernel.pack(args), slots))
            launches += 1
        else:
            _, call, batch, strides = event
            pointers = []
            for pos in (7, 9, 12):  # a, b, c
                p = call[pos]
                role = role_of(p.buffer)
                # Feeds and temporaries keep their buffers: store the buffer itself.
                pointers.append((pos, role if role[0] in ("param", "out") else ("fixed", p.buffer), p.offset))
            steps.append(_Gemm(tuple(call), pointers, batch, strides))
            gemm_calls += 1
    return Replay([a.buffer for a in feeds], list(temps), steps, launches, gemm_calls, len(outs))


__all__ = [
    "GRAPH_AFTER", "GRAPH_ENV", "NotReplayable", "Recording", "Replay", "Staging", "build", "enabled", "graphs_enabled",
    "replayable",
]
