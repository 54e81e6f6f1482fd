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
the addresses of the parameters and outputs in it.  The same fixed addresses are
what capturing a run as a CUDA graph needs (docs/gpu.md).  `PULLBACK_GPU_REPLAY=0`
turns replays off (every run interpreted), for debugging.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from xdsl.dialects import func, memref

from pullback.runtime.gpu.cuda import DevicePointer
from pullback.runtime.native.env import flag_setting

Role = tuple[str, Any]
"""Where a buffer comes from in a run: ('feed', i), ('param', name), ('out', i) or
('temp', i)."""


def enabled() -> bool:
    """Whether runs may be replayed (`PULLBACK_GPU_REPLAY`, on unless `0`)."""
    return flag_setting("PULLBACK_GPU_REPLAY", True)


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

    def run(self, feeds: Sequence[Any], params: dict[str, Any], outs: Sequence[Any], blas: Any) -> None:
        """Upload `feeds` (host arrays) and re-issue every launch and product with
        this run's parameter and output buffers (DeviceArrays)."""
        for buf, host in zip(self.feeds, feeds):
            buf.upload(host)

        def buffer(role: Role) -> Any:
            kind, ref = role
            return params[ref].buffer if kind == "param" else outs[ref].buffer

        for step in self.steps:
            if isinstance(step, _Launch):
                for pos, role in step.slots:
                    step.packed.set_buffer(pos, buffer(role))
                step.kernel.launch_packed(step.grid, step.block, step.packed)
            else:
                call = list(step.call)
                for pos, role, offset in step.pointers:
                    call[pos] = DevicePointer(buffer(role) if role[0] in ("param", "out") else role[1], offset)
                dtype, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc = call
                blas.gemm(dtype, ta, tb, m, n, k, alpha, a.address, lda, b.address, ldb, beta, c.address, ldc,
                          batch=step.batch, stride_a=step.strides[0], stride_b=step.strides[1],
                          stride_c=step.strides[2])

    def release(self, pool: Any) -> None:
        """Give the temporaries back to `pool` (the replay is being dropped)."""
        for buf in self.temps:
            pool.give(buf)
        self.temps = []


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
    return Replay([a.buffer for a in feeds], list(temps), steps, launches, gemm_calls)


__all__ = ["NotReplayable", "Recording", "Replay", "build", "enabled", "replayable"]
